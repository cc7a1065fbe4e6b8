// SPDX-License-Identifier: MIT
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bv_msg.h"

int bv_msg_send(int sock, const struct bv_msg_hdr *hdr, const void *payload, const int *fds,
		unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * BV_MSG_MAX_FDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov[2] = {
		{ .iov_base = (void *)hdr, .iov_len = sizeof(*hdr) },
		{ .iov_base = (void *)payload, .iov_len = hdr->len },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = hdr->len ? 2 : 1 };
	ssize_t n;

	if (nfds > BV_MSG_MAX_FDS || hdr->nfds != nfds || hdr->len > BV_MSG_PAYLOAD_MAX)
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(*hdr) + hdr->len)
		return -EMSGSIZE;
	return 0;
}

static void close_fds(int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		close(fds[i]);
}

int bv_msg_recv(int sock, struct bv_msg_hdr *hdr, void *payload, size_t payload_max, int *fds,
		unsigned int *nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * BV_MSG_MAX_FDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = sizeof(*hdr) },
		{ .iov_base = payload, .iov_len = payload_max },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cbuf.buf,
			      .msg_controllen = sizeof(cbuf.buf) };
	int got[BV_MSG_MAX_FDS];
	unsigned int ngot = 0, room = nfds ? *nfds : 0;
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		unsigned int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *p = (int *)CMSG_DATA(c);

		for (unsigned int i = 0; i < k; i++) {
			if (ngot < BV_MSG_MAX_FDS)
				got[ngot++] = p[i];
			else
				close(p[i]);
		}
	}
	if (nfds)
		*nfds = 0;
	if ((size_t)n < sizeof(*hdr) || hdr->magic != BV_PROTO_MAGIC ||
	    hdr->len != (size_t)n - sizeof(*hdr) || hdr->nfds != ngot ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		close_fds(got, ngot);
		if (msg.msg_flags & MSG_TRUNC)
			return -EMSGSIZE;
		return -EPROTO;
	}
	if (ngot > room) {
		close_fds(got, ngot);
		return -EPROTO;
	}
	if (ngot)
		memcpy(fds, got, ngot * sizeof(int));
	if (nfds)
		*nfds = ngot;
	return 0;
}

int bv_msg_call_send(int sock, uint32_t seq, struct bv_call *call)
{
	struct bv_msg_hdr hdr = {
		.magic = BV_PROTO_MAGIC,
		.version = BV_PROTO_VERSION,
		.op = call->op,
		.seq = seq,
		.len = call->req_len,
		.nfds = call->nfds,
	};

	call->rsp_len = 0;
	return bv_msg_send(sock, &hdr, call->req, call->fds, call->nfds);
}

int bv_msg_call_wait(int sock, uint32_t seq, struct bv_call *call)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct bv_msg_hdr hdr;
	unsigned int nrfds = call->nrfds;
	int ret;

	call->nrfds = 0;
	do
		ret = poll(&pfd, 1, BV_CALL_TIMEOUT_MS);
	while (ret < 0 && errno == EINTR);
	if (ret == 0)
		return -ETIMEDOUT;
	if (ret < 0)
		return -errno;
	ret = bv_msg_recv(sock, &hdr, call->rsp, call->rsp_max, call->rfds, &nrfds);
	if (ret)
		return ret;
	if (hdr.seq != seq || hdr.op != call->op) {
		close_fds(call->rfds, nrfds);
		return -EPROTO;
	}
	call->rsp_len = hdr.len;
	call->nrfds = nrfds;
	return hdr.status;
}

int bv_msg_call(int sock, uint32_t *seq, struct bv_call *call)
{
	int ret = bv_msg_call_send(sock, ++*seq, call);

	return ret ? ret : bv_msg_call_wait(sock, *seq, call);
}
