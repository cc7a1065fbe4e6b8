// SPDX-License-Identifier: MIT
/*
 * ntb_hostile_test: a client that does not play by the rules, over ntbd's real socket. Garbage,
 * short, oversized and malformed messages, requests before HELLO, every ntb request with wrong
 * lengths, unknown ops, descriptors where none belong, bad and foreign handles, memory a
 * peer could not safely map, a client that never reads its answers. Each must get a clear
 * error (an errno in the reply, or the connection dropped when the framing itself is broken)
 * and never take the daemon down: after every case a well-behaved client is served, and at
 * the end the daemon holds no more descriptors than before.
 *
 * Usage: ntb_hostile_test [DEV]   (default ntb_0; run by tests/integration/ntb_hostile.sh in
 * a run directory with the link up)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bv_msg.h"
#include "bv_paths.h"
#include "ntb_proto.h"
#include "ntb_verbs_wire.h"

static const char *dev = "ntb_0";
static int failures;
static const char *cur;

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "FAIL [%s] %s:%d: ", cur, __FILE__, __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			failures++;                                                          \
		}                                                                            \
	} while (0)

static int connect_dev(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (s < 0 || bv_run_path(sa.sun_path, sizeof(sa.sun_path), dev, ".sock") ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "connect to %s: %s\n", dev, strerror(errno));
		exit(2);
	}
	return s;
}

/* One request; returns the daemon's status (>= 0) or a negative errno (connection dropped). */
static int call(int s, uint16_t op, const void *req, size_t len, const int *fds, unsigned int nfds,
		void *rsp, size_t rsp_max, int *rfds, unsigned int nrfds)
{
	static uint32_t seq;
	static char junk[BV_MSG_PAYLOAD_MAX];
	int spare[BV_MSG_MAX_FDS];
	struct bv_call c = { .op = op, .req = req, .req_len = len, .fds = fds, .nfds = nfds,
			     .rsp = rsp ? rsp : junk, .rsp_max = rsp ? rsp_max : sizeof(junk),
			     .rfds = rfds ? rfds : spare, .nrfds = rfds ? nrfds : BV_MSG_MAX_FDS };
	int ret = bv_msg_call(s, &seq, &c);

	if (!rfds)
		for (unsigned int i = 0; i < c.nrfds; i++)
			close(spare[i]);
	return ret;
}

/* HELLO as a verbs provider (or with role/kind/len as given); returns the status. */
static int hello_as(int s, uint32_t role, const char *kind, size_t len)
{
	struct bv_hello_req req = { .role = role, .pid = (uint32_t)getpid() };
	struct bv_hello_rsp rsp;
	int fd[1] = { -1 }, ret;

	snprintf(req.comm, sizeof(req.comm), "hostile");
	snprintf(req.kind, sizeof(req.kind), "%s", kind);
	ret = call(s, BV_OP_HELLO, &req, len, NULL, 0, &rsp, sizeof(rsp), fd, 1);
	if (fd[0] >= 0)
		close(fd[0]);
	return ret;
}

static int hello(int s)
{
	return hello_as(s, BV_ROLE_VERBS, "ntb", sizeof(struct bv_hello_req));
}

/* A well-behaved client is served: HELLO, QUERY_PORT. */
static void daemon_serves(const char *after)
{
	int s = connect_dev();
	struct bv_query_port_req q = { .port_num = 1 };
	int ret = hello(s);

	CHECK(ret == 0, "after %s: HELLO of a good client: %d", after, ret);
	ret = call(s, BV_OP_QUERY_PORT, &q, sizeof(q), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == 0, "after %s: QUERY_PORT of a good client: %d", after, ret);
	close(s);
}

/* The daemon dropped the connection (the framing was broken): the next read sees its end. */
static bool dropped(int s)
{
	struct pollfd p = { .fd = s, .events = POLLIN };
	char b[256];

	if (poll(&p, 1, 10000) != 1)
		return false;
	return recv(s, b, sizeof(b), MSG_DONTWAIT) == 0;
}

static int daemon_pid(void)
{
	char path[BV_PATH_MAX];
	FILE *f;
	int pid = -1;

	if (bv_run_path(path, sizeof(path), dev, ".pid") || !(f = fopen(path, "r")))
		return -1;
	if (fscanf(f, "%d", &pid) != 1)
		pid = -1;
	fclose(f);
	return pid;
}

static int count_fds(int pid)
{
	char path[64];
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int memfd(size_t size, bool seal)
{
	int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)size) ||
	    (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL))) {
		perror("memfd");
		exit(2);
	}
	return fd;
}

/* ---- framing ----------------------------------------------------------------------------- */

static void t_framing(void)
{
	struct bv_msg_hdr h = { .magic = BV_PROTO_MAGIC, .version = BV_PROTO_VERSION,
				.op = BV_OP_HELLO };
	static char big[BV_MSG_MAX + 4096];
	int s;

	cur = "garbage";
	s = connect_dev();
	for (size_t i = 0; i < 200; i++)
		big[i] = (char)(i * 37 + 11);
	CHECK(send(s, big, 200, 0) == 200, "send");
	CHECK(dropped(s), "garbage did not end the connection");
	close(s);
	daemon_serves(cur);

	cur = "short";
	s = connect_dev();
	CHECK(send(s, &h, 10, 0) == 10, "send");
	CHECK(dropped(s), "a 10-byte message did not end the connection");
	close(s);
	daemon_serves(cur);

	cur = "empty";
	s = connect_dev();
	CHECK(send(s, big, 0, 0) == 0, "send");
	CHECK(dropped(s), "an empty message did not end the connection");
	close(s);
	daemon_serves(cur);

	cur = "length lies";
	s = connect_dev();
	h.len = 1000;		/* but nothing follows */
	CHECK(send(s, &h, sizeof(h), 0) == sizeof(h), "send");
	CHECK(dropped(s), "a header promising 1000 bytes did not end the connection");
	close(s);
	daemon_serves(cur);

	cur = "oversized";
	s = connect_dev();
	memset(big, 0, sizeof(big));
	h.len = sizeof(big) - sizeof(h);
	memcpy(big, &h, sizeof(h));
	CHECK(send(s, big, sizeof(big), 0) == (ssize_t)sizeof(big), "send: %s", strerror(errno));
	CHECK(dropped(s), "a message over BV_MSG_MAX did not end the connection");
	close(s);
	daemon_serves(cur);

	cur = "bad magic";
	s = connect_dev();
	h.len = 0;
	h.magic = 0xdeadbeef;
	CHECK(send(s, &h, sizeof(h), 0) == sizeof(h), "send");
	CHECK(dropped(s), "a bad magic did not end the connection");
	close(s);
	daemon_serves(cur);

	cur = "fd count lies";
	s = connect_dev();
	h.magic = BV_PROTO_MAGIC;
	h.nfds = 3;		/* none attached */
	CHECK(send(s, &h, sizeof(h), 0) == sizeof(h), "send");
	CHECK(dropped(s), "a header announcing descriptors that did not come was taken");
	close(s);
	daemon_serves(cur);
}

/* ---- HELLO -------------------------------------------------------------------------------- */

static void t_hello(void)
{
	struct bv_query_port_req q = { .port_num = 1 };
	struct bv_msg_hdr h = { .magic = BV_PROTO_MAGIC, .version = 99, .op = BV_OP_HELLO,
				.len = sizeof(struct bv_hello_req) };
	struct {
		struct bv_msg_hdr h;
		struct bv_hello_req r;
	} m = { .h = h, .r = { .role = BV_ROLE_VERBS } };
	char buf[512];
	int s, ret;

	cur = "before hello";
	s = connect_dev();
	ret = call(s, BV_OP_QUERY_PORT, &q, sizeof(q), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EPERM, "QUERY_PORT before HELLO: %d", ret);
	ret = call(s, NTB_OP_ALLOC_PD, NULL, 0, NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EPERM, "ALLOC_PD before HELLO: %d", ret);
	CHECK(hello(s) == 0, "HELLO after refused requests");
	close(s);

	cur = "hello version";
	s = connect_dev();
	memcpy(m.r.kind, "ntb", 4);
	CHECK(send(s, &m, sizeof(m), 0) == sizeof(m), "send");
	ret = (int)recv(s, buf, sizeof(buf), 0);
	CHECK(ret >= (int)sizeof(struct bv_msg_hdr) &&
	      ((struct bv_msg_hdr *)buf)->status == EPROTO, "HELLO of version 99: %d bytes, "
	      "status %d", ret, ret > 0 ? ((struct bv_msg_hdr *)buf)->status : 0);
	close(s);

	cur = "hello";
	s = connect_dev();
	ret = hello_as(s, BV_ROLE_VERBS, "ntb", 5);
	CHECK(ret == EINVAL, "HELLO of 5 bytes: %d", ret);
	ret = hello_as(s, 77, "ntb", sizeof(struct bv_hello_req));
	CHECK(ret == EINVAL, "HELLO with role 77: %d", ret);
	ret = hello_as(s, BV_ROLE_VERBS, "cx4", sizeof(struct bv_hello_req));
	CHECK(ret == ENODEV, "HELLO for a cx4 device: %d", ret);
	CHECK(hello(s) == 0, "HELLO");
	ret = hello(s);
	CHECK(ret == EINVAL, "a second HELLO: %d", ret);
	close(s);

	cur = "admin";
	s = connect_dev();
	CHECK(hello_as(s, BV_ROLE_ADMIN, "", sizeof(struct bv_hello_req)) == 0, "admin HELLO");
	ret = call(s, NTB_OP_ALLOC_PD, NULL, 0, NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EPERM, "ALLOC_PD from an admin client: %d", ret);
	close(s);
	daemon_serves(cur);
}

/* ---- the ntb requests ----------------------------------------------------------------------- */

static const struct {
	uint16_t op;
	size_t len;		/* the right length */
} ops[] = {
	{ NTB_OP_ATTACH, sizeof(struct ntb_attach_req) },
	{ NTB_OP_DEALLOC_PD, sizeof(struct ntb_handle_req) },
	{ NTB_OP_REG_MR, sizeof(struct ntb_reg_mr_req) },
	{ NTB_OP_DEREG_MR, sizeof(struct ntb_handle_req) },
	{ NTB_OP_CREATE_QP, sizeof(struct ntb_create_qp_req) },
	{ NTB_OP_MODIFY_QP, sizeof(struct ntb_modify_qp_req) },
	{ NTB_OP_DESTROY_QP, sizeof(struct ntb_handle_req) },
	{ NTB_OP_ASYNC_EVENT, sizeof(struct ntb_async_event_req) },
	{ NTB_OP_MAP_PEER_MR, sizeof(struct ntb_handle_req) },
	{ NTB_OP_OPEN_PAIR, sizeof(struct ntb_open_pair_req) },
	{ NTB_OP_REREG_MR, sizeof(struct ntb_rereg_mr_req) },
	{ NTB_OP_ALLOC_MW, sizeof(struct ntb_handle_req) },
	{ NTB_OP_DEALLOC_MW, sizeof(struct ntb_handle_req) },
};

static int attach(int s)
{
	struct ntb_attach_req a = { .version = NTB_PROTO_VERSION };
	struct ntb_attach_rsp rsp;
	int fds[4] = { -1, -1, -1, -1 }, ret;

	for (int t = 0; t < 200; t++) {
		ret = call(s, NTB_OP_ATTACH, &a, sizeof(a), NULL, 0, &rsp, sizeof(rsp), fds, 4);
		for (int i = 0; i < 4; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (ret != EAGAIN)
			return ret;
		usleep(10000);
	}
	return ret;
}

static uint32_t alloc_pd(int s)
{
	struct ntb_handle_rsp rsp = { 0 };
	int ret = call(s, NTB_OP_ALLOC_PD, NULL, 0, NULL, 0, &rsp, sizeof(rsp), NULL, 0);

	CHECK(ret == 0 && rsp.handle, "ALLOC_PD: %d", ret);
	return rsp.handle;
}

static void t_lengths(void)
{
	static char zero[BV_MSG_PAYLOAD_MAX];
	int s = connect_dev(), ret;

	cur = "lengths";
	CHECK(hello(s) == 0, "HELLO");
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0 before ATTACH, pass 1 after */
		if (pass == 1)
			CHECK(attach(s) == 0, "ATTACH");
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			size_t bad[] = { 0, ops[i].len - 1, ops[i].len + 1, ops[i].len * 2,
					 sizeof(zero) };

			for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
				ret = call(s, ops[i].op, zero, bad[k], NULL, 0, NULL, 0, NULL, 0);
				CHECK(ret > 0, "op 0x%x with %zu bytes (pass %d): %d", ops[i].op,
				      bad[k], pass, ret);
			}
		}
		/* ALLOC_PD takes no payload: it must not care */
		alloc_pd(s);
	}
	for (uint16_t op = NTB_OP_MAX; op < NTB_OP_MAX + 4; op++) {
		ret = call(s, op, zero, 8, NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == EOPNOTSUPP, "op 0x%x: %d", op, ret);
	}
	ret = call(s, 0x0fff, zero, 8, NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EOPNOTSUPP, "op 0x0fff: %d", ret);
	ret = call(s, 0x0050, zero, 8, NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EOPNOTSUPP, "op 0x0050: %d", ret);
	close(s);
	daemon_serves(cur);
}

static void t_handles(void)
{
	int a = connect_dev(), b = connect_dev(), ret;
	struct ntb_attach_req av = { .version = 42 };
	static char mem[3 * 4096] __attribute__((aligned(4096)));
	struct ntb_reg_mr_req mr = { .access = 0x7, .addr = (uintptr_t)mem, .length = 4096 };
	struct ntb_reg_mr_rsp mrsp = { 0 };
	struct ntb_create_qp_req qr = { .qp_type = 2 /* IBV_QPT_RC */ };
	struct ntb_create_qp_rsp qrsp = { 0 };
	struct ntb_modify_qp_req mq = { .state = 1 };
	struct ntb_handle_req h;
	struct ntb_async_event_req ev = { .event_type = 1000 };
	uint32_t pd;

	cur = "handles";
	CHECK(hello(a) == 0 && hello(b) == 0, "HELLO");
	/* objects before ATTACH: no link session yet */
	pd = alloc_pd(a);
	mr.pd = pd;
	ret = call(a, NTB_OP_REG_MR, &mr, sizeof(mr), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOLINK, "REG_MR before ATTACH: %d", ret);
	qr.pd = pd;
	ret = call(a, NTB_OP_CREATE_QP, &qr, sizeof(qr), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOLINK, "CREATE_QP before ATTACH: %d", ret);
	ret = call(a, NTB_OP_ATTACH, &av, sizeof(av), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EPROTO, "ATTACH of version 42: %d", ret);
	CHECK(attach(a) == 0 && attach(b) == 0, "ATTACH");
	ret = attach(a);
	CHECK(ret == EALREADY, "a second ATTACH: %d", ret);

	/* A's objects */
	ret = call(a, NTB_OP_REG_MR, &mr, sizeof(mr), NULL, 0, &mrsp, sizeof(mrsp), NULL, 0);
	CHECK(ret == 0 && mrsp.lkey, "REG_MR: %d", ret);
	ret = call(a, NTB_OP_CREATE_QP, &qr, sizeof(qr), NULL, 0, &qrsp, sizeof(qrsp), NULL, 0);
	CHECK(ret == 0 && qrsp.qpn, "CREATE_QP: %d", ret);

	/* B names them: not found, whatever it asks */
	h = (struct ntb_handle_req){ .handle = pd };
	ret = call(b, NTB_OP_DEALLOC_PD, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOENT, "B deallocates A's PD: %d", ret);
	ret = call(b, NTB_OP_REG_MR, &mr, sizeof(mr), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOENT, "B registers memory in A's PD: %d", ret);
	ret = call(b, NTB_OP_CREATE_QP, &qr, sizeof(qr), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOENT, "B creates a QP in A's PD: %d", ret);
	h.handle = mrsp.lkey;
	ret = call(b, NTB_OP_DEREG_MR, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOENT, "B deregisters A's MR: %d", ret);
	h.handle = qrsp.qpn;
	ret = call(b, NTB_OP_DESTROY_QP, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOENT, "B destroys A's QP: %d", ret);
	mq.qpn = qrsp.qpn;
	ret = call(b, NTB_OP_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOENT, "B modifies A's QP: %d", ret);

	/* handles nobody has */
	for (uint32_t v = 0; v < 8; v++) {
		uint32_t vals[] = { 0, 1, 0xffff, 0x10000, 0xffffffff, 0x80000000, 0x7fffffff,
				    0x00fff0ff };

		h.handle = vals[v];
		if (h.handle == pd || h.handle == mrsp.lkey || h.handle == qrsp.qpn)
			continue;
		ret = call(a, NTB_OP_DEALLOC_PD, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == ENOENT, "DEALLOC_PD 0x%x: %d", h.handle, ret);
		ret = call(a, NTB_OP_DEREG_MR, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == ENOENT, "DEREG_MR 0x%x: %d", h.handle, ret);
		ret = call(a, NTB_OP_DESTROY_QP, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == ENOENT, "DESTROY_QP 0x%x: %d", h.handle, ret);
		ret = call(a, NTB_OP_MAP_PEER_MR, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == ENOENT, "MAP_PEER_MR 0x%x: %d", h.handle, ret);
		mq.qpn = h.handle;
		ret = call(a, NTB_OP_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == ENOENT, "MODIFY_QP 0x%x: %d", h.handle, ret);
	}
	/* values out of range */
	mq.qpn = qrsp.qpn;
	mq.state = 99;
	ret = call(a, NTB_OP_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EINVAL, "MODIFY_QP to state 99: %d", ret);
	qr.qp_type = 77;
	ret = call(a, NTB_OP_CREATE_QP, &qr, sizeof(qr), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EINVAL, "CREATE_QP of type 77: %d", ret);
	ret = call(a, NTB_OP_ASYNC_EVENT, &ev, sizeof(ev), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EINVAL, "ASYNC_EVENT of type 1000: %d", ret);
	{
		/* pair blocks: only towards a slot of either end that holds that incarnation */
		struct ntb_open_pair_req op = { .end = 2 };

		ret = call(a, NTB_OP_OPEN_PAIR, &op, sizeof(op), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "OPEN_PAIR to end 2: %d", ret);
		op = (struct ntb_open_pair_req){ .end = NTB_END_LOCAL, .slot = 4096 };
		ret = call(a, NTB_OP_OPEN_PAIR, &op, sizeof(op), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "OPEN_PAIR to slot 4096: %d", ret);
		for (uint32_t e = 0; e < 2; e++) {
			op = (struct ntb_open_pair_req){ .end = e, .slot = NTBV_MAX_SLOTS - 1,
							 .epoch = 0x7ffffff1 };
			ret = call(a, NTB_OP_OPEN_PAIR, &op, sizeof(op), NULL, 0, NULL, 0, NULL,
				   0);
			CHECK(ret == ESTALE, "OPEN_PAIR to a stale incarnation (end %u): %d", e,
			      ret);
		}
	}
	{
		struct ntb_reg_mr_req bad = mr;

		bad.access = 0x80000000;
		ret = call(a, NTB_OP_REG_MR, &bad, sizeof(bad), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "REG_MR with unknown access bits: %d", ret);
		bad = mr;
		bad.length = 0;
		ret = call(a, NTB_OP_REG_MR, &bad, sizeof(bad), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "REG_MR of 0 bytes: %d", ret);
		bad = mr;
		bad.addr = ~0ull - 100;
		ret = call(a, NTB_OP_REG_MR, &bad, sizeof(bad), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "REG_MR wrapping around: %d", ret);
		bad = mr;
		bad.length = 1ull << 41;
		ret = call(a, NTB_OP_REG_MR, &bad, sizeof(bad), NULL, 0, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "REG_MR of 2 TiB: %d", ret);
	}

	/* A's objects still work for A; in use, the PD cannot go */
	h.handle = pd;
	ret = call(a, NTB_OP_DEALLOC_PD, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == EBUSY, "DEALLOC_PD in use: %d", ret);
	mq = (struct ntb_modify_qp_req){ .qpn = qrsp.qpn, .state = 1 };
	ret = call(a, NTB_OP_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == 0, "A modifies its QP: %d", ret);
	h.handle = qrsp.qpn;
	ret = call(a, NTB_OP_DESTROY_QP, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == 0, "A destroys its QP: %d", ret);
	ret = call(a, NTB_OP_DESTROY_QP, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == ENOENT, "A destroys its QP again: %d", ret);
	h.handle = mrsp.lkey;
	ret = call(a, NTB_OP_DEREG_MR, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == 0, "A deregisters its MR: %d", ret);
	h.handle = pd;
	ret = call(a, NTB_OP_DEALLOC_PD, &h, sizeof(h), NULL, 0, NULL, 0, NULL, 0);
	CHECK(ret == 0, "A deallocates its PD: %d", ret);
	close(a);
	close(b);
	daemon_serves(cur);
}

/* ---- descriptors ---------------------------------------------------------------------------- */

static void t_fds(void)
{
	static char mem[16 * 4096] __attribute__((aligned(4096)));
	int s = connect_dev(), ret, fds[BV_MSG_MAX_FDS], p[2];
	struct ntb_reg_mr_req mr = { .access = 0x3, .addr = (uintptr_t)mem, .length = 4096 };
	struct ntb_reg_mr_rsp rsp;
	struct ntb_handle_rsp pr = { 0 };

	cur = "descriptors";
	CHECK(hello(s) == 0 && attach(s) == 0, "HELLO, ATTACH");
	for (int i = 0; i < BV_MSG_MAX_FDS; i++)
		fds[i] = memfd(4096, true);
	/* descriptors where none belong are dropped, the request answered */
	ret = call(s, NTB_OP_ALLOC_PD, NULL, 0, fds, BV_MSG_MAX_FDS, &pr, sizeof(pr), NULL, 0);
	CHECK(ret == 0 && pr.handle, "ALLOC_PD with 4 descriptors: %d", ret);
	mr.pd = pr.handle;
	ret = call(s, NTB_OP_REG_MR, &mr, sizeof(mr), fds, 2, NULL, 0, NULL, 0);
	CHECK(ret == EINVAL, "REG_MR with 2 descriptors: %d", ret);
	mr.fd_off = 100;
	ret = call(s, NTB_OP_REG_MR, &mr, sizeof(mr), fds, 1, NULL, 0, NULL, 0);
	CHECK(ret == EINVAL, "REG_MR with an unaligned descriptor offset: %d", ret);
	mr.fd_off = 0;

	/*
	 * Memory the peer could not safely map: a memfd smaller than the region, or one that can
	 * shrink later (the peer's stores into a page past its end would die of SIGBUS). The
	 * provider seals its memfds against shrinking (providers/common/bv_shadow.c); anything else is refused.
	 */
	{
		int small = memfd(0, true), unsealed = memfd(4096, false);

		ret = call(s, NTB_OP_REG_MR, &mr, sizeof(mr), &small, 1, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "REG_MR over an empty memfd: %d", ret);
		ret = call(s, NTB_OP_REG_MR, &mr, sizeof(mr), &unsealed, 1, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "REG_MR over a memfd that can shrink: %d", ret);
		mr.fd_off = 4096;
		ret = call(s, NTB_OP_REG_MR, &mr, sizeof(mr), &fds[0], 1, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "REG_MR past the end of a memfd: %d", ret);
		mr.fd_off = 0;
		close(small);
		close(unsealed);
	}
	/* not memory at all */
	if (!pipe2(p, O_CLOEXEC)) {
		ret = call(s, NTB_OP_REG_MR, &mr, sizeof(mr), &p[0], 1, NULL, 0, NULL, 0);
		CHECK(ret == EINVAL, "REG_MR over a pipe: %d", ret);
		close(p[0]);
		close(p[1]);
	}
	/* the right thing works */
	ret = call(s, NTB_OP_REG_MR, &mr, sizeof(mr), &fds[0], 1, &rsp, sizeof(rsp), NULL, 0);
	CHECK(ret == 0, "REG_MR over a sealed memfd: %d", ret);
	for (int i = 0; i < BV_MSG_MAX_FDS; i++)
		close(fds[i]);
	close(s);		/* the daemon cleans up what it owned */
	daemon_serves(cur);
}

/* ---- a client that never reads ------------------------------------------------------------- */

static void t_flood(void)
{
	struct bv_msg_hdr h = { .magic = BV_PROTO_MAGIC, .version = BV_PROTO_VERSION,
				.op = BV_OP_STATUS };
	int s = connect_dev(), sent = 0;

	cur = "flood";
	CHECK(hello_as(s, BV_ROLE_ADMIN, "", sizeof(struct bv_hello_req)) == 0, "HELLO");
	/* status answers are long: the socket fills up, the daemon must not wait for us */
	for (int i = 0; i < 20000; i++) {
		h.seq = (uint32_t)i;
		if (send(s, &h, sizeof(h), MSG_DONTWAIT) != sizeof(h))
			break;
		sent++;
	}
	CHECK(sent > 0, "nothing sent");
	daemon_serves(cur);
	close(s);
	daemon_serves(cur);

	/* many idle connections */
	cur = "many";
	{
		int many[200];

		for (int i = 0; i < 200; i++)
			many[i] = connect_dev();
		daemon_serves(cur);
		for (int i = 0; i < 200; i++)
			close(many[i]);
	}
	daemon_serves(cur);
}

int main(int argc, char **argv)
{
	int pid, before, after = -1;

	if (argc > 1)
		dev = argv[1];
	pid = daemon_pid();
	before = count_fds(pid);
	if (pid <= 0 || before < 0) {
		fprintf(stderr, "no daemon for %s\n", dev);
		return 2;
	}
	t_framing();
	t_hello();
	t_lengths();
	t_handles();
	t_fds();
	t_flood();
	cur = "descriptors of the daemon";
	/* everything above is closed: the daemon gives it all back (it notices within ms) */
	for (int t = 0; t < 100; t++) {
		after = count_fds(pid);
		if (after <= before)
			break;
		usleep(50000);
	}
	CHECK(after <= before, "the daemon holds %d descriptors, %d before", after, before);
	CHECK(!kill(pid, 0), "the daemon is gone");
	printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
