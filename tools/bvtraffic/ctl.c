// SPDX-License-Identifier: MIT
/*
 * The control connection: TCP, one text line per message (endian-free, readable in a
 * capture), as the ibverbs pingpongs exchange their QP numbers. The server listens, takes
 * one client and the client's configuration.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bvtraffic.h"

static char rbuf[BVT_LINE * 2];
static size_t rlen;

/*
 * Resolve HOST:PORT. A static build (for the rxe guest, which has no bridgeverbs) takes
 * numeric addresses and "localhost" only: glibc's name service needs its shared modules.
 */
static int resolve(const char *host, const char *port, bool passive, struct addrinfo **res)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = passive ? AI_PASSIVE : 0};
#ifdef BVT_STATIC
	hints.ai_flags |= AI_NUMERICHOST | AI_NUMERICSERV;
	if (host && !strcmp(host, "localhost"))
		host = "127.0.0.1";
#endif
	return getaddrinfo(host, port, &hints, res);
}

int bvt_ctl_listen(const char *port)
{
	struct addrinfo *res, *ai;
	int s = -1, one = 1, err;

	err = resolve(NULL, port, true, &res);
	if (err) {
		fprintf(stderr, "bvtraffic: port %s: %s\n", port, gai_strerror(err));
		return -1;
	}
	/* IPv6 first where there is one: it takes IPv4 clients too */
	for (int pass = 0; pass < 2 && s < 0; pass++)
		for (ai = res; ai && s < 0; ai = ai->ai_next) {
			if ((ai->ai_family == AF_INET6) != (pass == 0))
				continue;
			s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
			if (s < 0)
				continue;
			setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, 1)) {
				close(s);
				s = -1;
			}
		}
	freeaddrinfo(res);
	if (s < 0)
		fprintf(stderr, "bvtraffic: cannot listen on port %s: %s\n", port, strerror(errno));
	return s;
}

static void tune(int s)
{
	int one = 1;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int bvt_ctl_accept(int lsock, unsigned int timeout_s)
{
	struct pollfd p = {.fd = lsock, .events = POLLIN};
	int s;

	if (poll(&p, 1, (int)timeout_s * 1000) != 1) {
		fprintf(stderr, "bvtraffic: no client within %u s\n", timeout_s);
		return -1;
	}
	s = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0)
		fprintf(stderr, "bvtraffic: accept: %s\n", strerror(errno));
	else
		tune(s);
	return s;
}

/* Connect, retrying while nobody listens yet (the server may still be starting). */
int bvt_ctl_connect(const char *host, const char *port, unsigned int timeout_s)
{
	uint64_t end = bvt_now_ms() + timeout_s * 1000ull;
	struct addrinfo *res, *ai;
	int err, s;

	err = resolve(host, port, false, &res);
	if (err) {
		fprintf(stderr, "bvtraffic: %s:%s: %s\n", host, port, gai_strerror(err));
		return -1;
	}
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
			if (s < 0)
				continue;
			if (!connect(s, ai->ai_addr, ai->ai_addrlen)) {
				freeaddrinfo(res);
				tune(s);
				return s;
			}
			err = errno;
			close(s);
		}
		if (bvt_now_ms() > end || (err != ECONNREFUSED && err != ENETUNREACH &&
					   err != EHOSTUNREACH && err != ETIMEDOUT))
			break;
		usleep(200000);
	}
	freeaddrinfo(res);
	fprintf(stderr, "bvtraffic: cannot connect to %s:%s: %s\n", host, port, strerror(err));
	return -1;
}

void bvt_ctl_send(struct bvt *t, const char *fmt, ...)
{
	char line[BVT_LINE];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		bvt_die(t, BVT_EXIT_USAGE, "control message too long");
	if (t->sock_dead)
		return;
	if (t->loc.verbose > 1)
		fprintf(stderr, "bvtraffic: > %s\n", line);
	line[n++] = '\n';
	for (int off = 0; off < n;) {
		ssize_t w = send(t->sock, line + off, (size_t)(n - off), MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			bvt_peer_gone(t, strerror(errno));
		off += (int)w;
	}
}

static bool have_line(void)
{
	return memchr(rbuf, '\n', rlen) != NULL;
}

bool bvt_ctl_pending(struct bvt *t)
{
	struct pollfd p = {.fd = t->sock, .events = POLLIN};

	return have_line() || poll(&p, 1, 0) == 1;
}

void bvt_ctl_recv(struct bvt *t, char *line, int timeout_ms)
{
	uint64_t end = bvt_now_ms() + (uint64_t)timeout_ms;
	char *nl;

	while (!have_line()) {
		struct pollfd p = {.fd = t->sock, .events = POLLIN};
		int64_t left = (int64_t)(end - bvt_now_ms());
		ssize_t r;

		if (left <= 0)
			bvt_die(t, BVT_EXIT_STALL, "no word from the peer for %d s",
				timeout_ms / 1000);
		if (poll(&p, 1, (int)left) != 1)
			continue;
		if (rlen == sizeof(rbuf))
			bvt_die(t, BVT_EXIT_ERROR, "the peer sent a line too long");
		r = recv(t->sock, rbuf + rlen, sizeof(rbuf) - rlen, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			bvt_peer_gone(t, r ? strerror(errno) : "the control connection closed");
		rlen += (size_t)r;
	}
	nl = memchr(rbuf, '\n', rlen);
	*nl = 0;
	if (nl - rbuf >= BVT_LINE)
		bvt_die(t, BVT_EXIT_ERROR, "the peer sent a line too long");
	memcpy(line, rbuf, (size_t)(nl - rbuf) + 1);
	rlen -= (size_t)(nl + 1 - rbuf);
	memmove(rbuf, nl + 1, rlen);
	if (t->loc.verbose > 1)
		fprintf(stderr, "bvtraffic: < %s\n", line);
	if (!strncmp(line, "ABORT", 5))
		bvt_die(t, BVT_EXIT_ERROR, "the peer gave up: %s", line + (line[5] ? 6 : 5));
}

void bvt_cfg_format(const struct bvt_cfg *c, char *buf, size_t len)
{
	snprintf(buf, len,
		 "HELLO bvtraffic 1 type=%d ops=%u nqp=%u min=%u max=%u depth=%u iters=%" PRIu64
		 " bytes=%" PRIu64 " duration=%u seed=%u srq=%d dirs=%u timeout=%u retry=%u "
		 "rnr=%u mtu=%u",
		 (int)c->type, c->ops, c->nqp, c->min_size, c->max_size, c->depth, c->iters,
		 c->bytes, c->duration_s, c->seed, c->srq, c->dirs, c->timeout, c->retry_cnt,
		 c->rnr_retry, c->mtu);
}

int bvt_cfg_parse(struct bvt_cfg *c, const char *line)
{
	int type, srq;
	unsigned int to, rc, rnr;

	if (sscanf(line,
		   "HELLO bvtraffic 1 type=%d ops=%u nqp=%u min=%u max=%u depth=%u iters=%" SCNu64
		   " bytes=%" SCNu64 " duration=%u seed=%u srq=%d dirs=%u timeout=%u retry=%u "
		   "rnr=%u mtu=%u",
		   &type, &c->ops, &c->nqp, &c->min_size, &c->max_size, &c->depth, &c->iters,
		   &c->bytes, &c->duration_s, &c->seed, &srq, &c->dirs, &to, &rc, &rnr,
		   &c->mtu) != 16)
		return -1;
	c->type = (enum ibv_qp_type)type;
	c->srq = srq;
	c->timeout = (uint8_t)to;
	c->retry_cnt = (uint8_t)rc;
	c->rnr_retry = (uint8_t)rnr;
	if ((c->type != IBV_QPT_RC && c->type != IBV_QPT_UC && c->type != IBV_QPT_UD) || !c->nqp ||
	    c->nqp > BVT_MAX_QP || !c->depth || c->depth > 4096 || c->min_size > c->max_size ||
	    !c->ops || c->ops >> BVT_NOPS || !c->dirs || c->dirs > 3)
		return -1;
	return 0;
}
