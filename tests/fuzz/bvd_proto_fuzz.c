// SPDX-License-Identifier: MIT
/*
 * bvd_proto_fuzz: libFuzzer harness for a daemon's socket protocol (kernel-abi/bv_proto.h and
 * the kind's requests): everything a client can send to cx4d or ntbd, down the same path as a
 * real client's bytes - bv_msg_recv() framing and descriptor passing, bvd's dispatch (HELLO,
 * the common queries, STATUS), then the kind's request handlers.
 *
 * The daemon runs in this process with its real kind ops (cx4d_ops over a model, or ntbd_ops
 * with the peer end driven here too: the kind glue, proto_cx4.c / proto_ntb.c); clients are
 * socketpairs handed to bvd_client_add() as if accepted, and the harness pumps bvd_poll().
 *
 * Input: one byte of session flags, then records:
 *
 *   session  bit 0/1: client A/B does not say HELLO first; bit 2: nor open the device
 *            (cx4 ALLOC_UCONTEXT, ntb ATTACH) - so that mutations start from a working client
 *   record   u8 flags | u8 op | u16 len (little-endian) | payload (len bytes)
 *     flags  bit 0  the request comes from client B (else A)
 *            bit 1  a memfd travels with it, as large as the request's own buffer length
 *                   says when the kind knows the request (else 64 KiB), sealed against
 *                   shrinking as a provider's
 *            bit 2  ... but half that size and not sealed (a hostile client)
 *            bit 3  a datagram socket travels with it (a completion channel, as the
 *                   preload shim's)
 *            bit 4  a pipe's read end travels with it (not memory at all)
 *     op     < 0xe0: the kind's range (base + op % 32: every op and some unknown ones);
 *            0xe0..0xef: 1 + op % 16 (HELLO, the queries, STATUS, unknown common ops);
 *            0xf0..0xfe: raw: the payload is the whole datagram, header included
 *            0xff: the op is the first two payload bytes, the rest is the payload
 *
 * Checked: a well-formed request (right magic, version, lengths, descriptor count) gets
 * exactly one reply, with its op and seq, a status that is 0 or an errno, a length that fits
 * and the descriptors it says - never silence (a hang) or a dropped connection; a malformed
 * datagram may cost the client its connection, nothing else. After the input both clients
 * go away as killed clients do; the daemon must free everything they held (no descriptor
 * more than before, kind_idle()), and a new, well-behaved client must then work (HELLO, open,
 * a PD allocated and freed): nothing a client sends may break the device for the next one.
 * BV_FUZZ_VERBOSE=1 prints every request and its status.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bv_msg.h"
#include "bvd_proto_fuzz.h"
#include "fuzz_util.h"

#define REPLY_MS 5000

static struct bvd daemon_bvd;
static char rundir[64];
static bool verbose;

void fuzz_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bvd_proto_fuzz: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void teardown(void)
{
	if (daemon_bvd.ops && daemon_bvd.ops->fini)
		daemon_bvd.ops->fini(&daemon_bvd);
	fuzz_kind_fini();
	fuzz_rundir_remove(rundir, "bvd_proto_fuzz");
}

void fuzz_pump(int timeout_ms)
{
	bvd_poll(&daemon_bvd, timeout_ms);
	fuzz_kind_pump();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct bvd *d = &daemon_bvd;
	char err[256];

	signal(SIGPIPE, SIG_IGN);
	verbose = getenv("BV_FUZZ_VERBOSE") && *getenv("BV_FUZZ_VERBOSE") == '1';
	if (fuzz_rundir_make(rundir, sizeof(rundir), "bvd_proto_fuzz"))
		fuzz_die("mkdtemp: %s", strerror(errno));
	setenv("BV_RUNDIR", rundir, 1);
	atexit(teardown);
	if (bv_config_parse(&d->cfg, fuzz_kind_config(), err, sizeof(err)))
		fuzz_die("config: %s", err);
	d->conf = bv_config_find(&d->cfg, FUZZ_DEVICE);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->num_comp_vectors = 1;
	d->ops = fuzz_kind_ops();
	if (!d->conf || d->epfd < 0)
		fuzz_die("bvd set-up");
	if (fuzz_kind_init(d))
		fuzz_die("the daemon did not come up");
	return 0;
}

static int memfd(size_t size, bool seal)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)size) ||
	    (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL)))
		fuzz_die("memfd: %s", strerror(errno));
	return fd;
}

static void client_open(struct fclient *c)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		fuzz_die("socketpair: %s", strerror(errno));
	if (bvd_client_add(&daemon_bvd, sv[0]))
		fuzz_die("bvd_client_add");
	*c = (struct fclient){ .sock = sv[1], .seq = 1 };
}

static void client_close(struct fclient *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
}

/*
 * Wait for the reply to seq (pumping the daemon). Returns 1 and fills the reply, 0 when the
 * daemon closed the connection, and aborts when nothing came.
 */
static int wait_reply(struct fclient *c, uint16_t op, uint32_t seq, struct bv_msg_hdr *h,
		      void *payload, size_t max)
{
	uint64_t end = fuzz_now_ms() + REPLY_MS;

	for (;;) {
		int fds[BV_MSG_MAX_FDS];
		unsigned int nfds = BV_MSG_MAX_FDS;
		int ret;

		fuzz_pump(0);
		ret = bv_msg_recv(c->sock, h, payload, max, fds, &nfds);
		if (ret == -EAGAIN) {
			if (fuzz_now_ms() > end)
				fuzz_die("op 0x%x seq %u: no reply in %d ms", op, seq, REPLY_MS);
			fuzz_pump(1);
			continue;
		}
		if (ret == -EPIPE || ret == -ECONNRESET)
			return 0;
		if (ret)
			fuzz_die("op 0x%x: the daemon's reply is malformed (%s)", op, strerror(-ret));
		for (unsigned int i = 0; i < nfds; i++) {
			if (fcntl(fds[i], F_GETFD) < 0)
				fuzz_die("op 0x%x: reply descriptor %d not open", op, fds[i]);
			close(fds[i]);
		}
		if (h->op != op || h->seq != seq || h->version != BV_PROTO_VERSION)
			fuzz_die("op 0x%x seq %u: reply for op 0x%x seq %u version %u", op, seq,
				 h->op, h->seq, h->version);
		if (h->status < 0 || h->status > 4095)
			fuzz_die("op 0x%x: status %d is not an errno", op, h->status);
		if (h->nfds != nfds)
			fuzz_die("op 0x%x: reply says %u descriptors, %u came", op, h->nfds, nfds);
		return 1;
	}
}

/* A well-formed request; returns the reply's status, or -1 if the daemon dropped us. */
int fuzz_call(struct fclient *c, uint16_t op, const void *in, size_t len, const int *fds,
	      unsigned int nfds, void *out, size_t out_max, size_t *out_len)
{
	static union {
		char bytes[BV_MSG_PAYLOAD_MAX];
		uint64_t align;
	} rsp;
	struct bv_msg_hdr h = { .magic = BV_PROTO_MAGIC, .version = BV_PROTO_VERSION, .op = op,
				.seq = c->seq++, .len = (uint32_t)len, .nfds = nfds };
	struct bv_msg_hdr r;
	int ret;

	if (c->sock < 0)
		return -1;
	ret = bv_msg_send(c->sock, &h, in, fds, nfds);
	if (ret == -EPIPE || ret == -ECONNRESET) {
		client_close(c);
		return -1;
	}
	if (ret)
		fuzz_die("send op 0x%x: %s", op, strerror(-ret));
	if (!wait_reply(c, op, h.seq, &r, rsp.bytes, sizeof(rsp.bytes)))
		fuzz_die("op 0x%x (%zu bytes, %u fds): the daemon dropped a well-formed request's "
			 "client", op, len, nfds);
	if (verbose)
		fprintf(stderr, "bvd_proto_fuzz: op 0x%x, %zu bytes, %u fds: status %d, %u bytes\n",
			op, len, nfds, r.status, r.len);
	if (out) {
		size_t n = r.len < out_max ? r.len : out_max;

		memcpy(out, rsp.bytes, n);
		if (out_len)
			*out_len = n;
	}
	return r.status;
}

int fuzz_hello(struct fclient *c)
{
	struct bv_hello_req req = { .role = BV_ROLE_VERBS, .pid = (uint32_t)getpid() };

	snprintf(req.comm, sizeof(req.comm), "fuzz");
	snprintf(req.kind, sizeof(req.kind), "%s", daemon_bvd.ops->kind);
	return fuzz_call(c, BV_OP_HELLO, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
}

/* A datagram as it comes: the daemon may drop the client for it, nothing else. */
static void send_raw(struct fclient *c, const uint8_t *p, size_t len)
{
	static union {
		char bytes[BV_MSG_PAYLOAD_MAX];
		uint64_t align;
	} rsp;
	struct bv_msg_hdr h, r;
	ssize_t n;

	if (c->sock < 0)
		return;
	n = send(c->sock, p, len, MSG_NOSIGNAL);
	if (n < 0) {
		client_close(c);
		return;
	}
	if (len < sizeof(h))
		memset(&h, 0, sizeof(h));
	else
		memcpy(&h, p, sizeof(h));
	/* a header bvd takes (the rest of the checks are its business) gets its reply */
	if (len >= sizeof(h) && h.magic == BV_PROTO_MAGIC && h.len == len - sizeof(h) &&
	    !h.nfds) {
		if (!wait_reply(c, h.op, h.seq, &r, rsp.bytes, sizeof(rsp.bytes)))
			fuzz_die("raw op 0x%x: a well-formed datagram cost the client its "
				 "connection", h.op);
		return;
	}
	/* anything else: a reply, or the connection dropped; pump until one of them */
	for (int t = 0; t < 200; t++) {
		struct pollfd pf = { .fd = c->sock, .events = POLLIN };

		fuzz_pump(0);
		if (poll(&pf, 1, 0) == 1) {
			char buf[64];

			n = recv(c->sock, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
			if (n <= 0)
				client_close(c);
			return;
		}
		fuzz_pump(1);
	}
	fuzz_die("a malformed datagram of %zu bytes got neither a reply nor a hang-up", len);
}

static void record(struct fclient *cl, uint8_t flags, uint8_t opb, const uint8_t *p, size_t len)
{
	struct fclient *c = &cl[flags & 1];
	int fds[BV_MSG_MAX_FDS], chan_peer = -1;
	unsigned int nfds = 0;
	uint16_t op;

	if (opb >= 0xf0 && opb != 0xff) {
		send_raw(c, p, len);
		return;
	}
	if (opb == 0xff) {
		op = len >= 2 ? (uint16_t)(p[0] | p[1] << 8) : 0;
		p += len >= 2 ? 2 : len;
		len -= len >= 2 ? 2 : len;
	} else if (opb >= 0xe0) {
		op = 1 + opb % 16;
	} else {
		op = (uint16_t)(fuzz_kind_base() + opb % 32);
	}
	if (flags & 2) {
		size_t size = fuzz_kind_buf_len(op, p, len);

		fds[nfds++] = (flags & 4) ? memfd(size / 2, false) : memfd(size, true);
	}
	if (flags & 8) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
			fuzz_die("socketpair: %s", strerror(errno));
		fds[nfds++] = sv[0];
		chan_peer = sv[1];	/* open while the request runs, then the client "dies" */
	}
	if (flags & 0x10) {
		int pp[2];

		if (pipe2(pp, O_CLOEXEC))
			fuzz_die("pipe: %s", strerror(errno));
		close(pp[1]);
		fds[nfds++] = pp[0];
	}
	fuzz_call(c, op, p, len, fds, nfds, NULL, 0, NULL);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	if (chan_peer >= 0)
		close(chan_peer);
}

/* A client that does what a provider does at start must work after anything. */
static void canary(void)
{
	struct fclient c;
	int st;

	client_open(&c);
	st = fuzz_hello(&c);
	if (st)
		fuzz_die("canary: HELLO failed (%d)", st);
	fuzz_kind_canary(&c);
	client_close(&c);
}

/* Wait until the daemon let every client go (it does when it reads the hang-up). */
static void drain_clients(void)
{
	uint64_t end = fuzz_now_ms() + REPLY_MS;

	while (daemon_bvd.clients) {
		if (fuzz_now_ms() > end)
			fuzz_die("a closed client was not freed in %d ms", REPLY_MS);
		fuzz_pump(1);
	}
	fuzz_pump(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fclient cl[2];
	uint8_t session = size ? data[0] : 0;
	int before;

	drain_clients();
	before = fuzz_count_fds();
	for (int i = 0; i < 2; i++) {
		client_open(&cl[i]);
		if (!(session & (1u << i))) {
			int st = fuzz_hello(&cl[i]);

			if (st)
				fuzz_die("HELLO failed (%d)", st);
			if (!(session & 4))
				fuzz_kind_open(&cl[i]);
		}
	}
	if (size) {
		data++;
		size--;
	}
	while (size >= 4) {
		uint8_t flags = data[0], op = data[1];
		size_t len = (size_t)(data[2] | data[3] << 8);

		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		record(cl, flags, op, data, len);
		data += len;
		size -= len;
	}
	client_close(&cl[0]);
	client_close(&cl[1]);
	drain_clients();
	fuzz_kind_check_idle();
	if (fuzz_count_fds() > before)
		fuzz_die("%d descriptors more after the clients left", fuzz_count_fds() - before);
	canary();
	drain_clients();
	return 0;
}
