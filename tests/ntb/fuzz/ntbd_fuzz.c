// SPDX-License-Identifier: MIT
/*
 * ntbd_fuzz: libFuzzer harness for ntbd's request handling (the verbs module's dispatch,
 * ntbd_verbs_module.request). Everything a client sends after HELLO ends up there, with the
 * payload length and descriptors it chose.
 *
 * Both ends of one emulated link run in this process as two ntbds (link.c and the verbs module,
 * driven by bvd_poll() instead of bvd_main()); the link is brought up once. Each input is the
 * session of two clients of end 0, a sequence of requests:
 *
 *   u8 flags | u8 op | u16 len (little-endian) | payload
 *
 *   len bit 15 clear: len bytes of payload, as they come;
 *   len bit 15 set: the request's own size, and its fields shaped into what a provider
 *                   would send (known access bits, an address in memory of ours, a valid QP
 *                   type...), so that mutations get past validation into the object code
 *
 *   flags bit 0     the request comes from client B (else A)
 *         bit 1     one descriptor travels with it: a 4 MiB memfd sealed against shrinking,
 *                   as the provider's (bit 2 clear) or the read end of a pipe (bit 2 set)
 *         bit 3     four descriptors (small memfds, not sealed) travel with it
 *         bit 4     the first 4 payload bytes are replaced by a handle the daemon gave out
 *                   earlier in this session (bits 5-7 pick which): PD, key or QP number, or
 *                   the key of a region a client of end 1 opened to remote writes
 *   op   < 0xf0: BV_OP_NTB_BASE + op % 16 (every ntb op), else 0xff00 | op (unknown ones,
 *         far outside the range)
 *   an input whose first byte has bit 7 set starts with both clients attached and holding a
 *   PD (ATTACH, ALLOC_PD), so that mutations reach the object code at once; with bit 6 set
 *   the bytes after it first replace the header the peer's ntbd wrote into our control area
 *   (unless bit 5 is set too) and the table entry of end 1's key (a broken or hostile peer),
 *   for the whole input.
 *
 * The handler gets the payload in a buffer of exactly len bytes (bvd's is bigger: reading past
 * len would go unnoticed there). Checked after every request: the status is 0 or an errno, the
 * reply fits a message, returned descriptors are valid; a request naming an object of the
 * other client never succeeds (ntb_proto.h: "a client can never name another client's
 * objects"). At the end of the input both clients go away as a killed client does
 * (client_close: everything they owned is destroyed); no descriptor may have leaked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bv_msg.h"
#include "fuzz_util.h"
#include "ntb_proto.h"
#include "ntb_verbs_wire.h"
#include "ntbd.h"
#include "verbs.h"

struct end {
	struct bvd d;
	struct ntbd n;
};

static struct end ends[2];
static char rundir[64];

#define NHANDLES 64

struct handle {
	uint32_t value;
	int owner;		/* 0: A, 1: B */
	uint16_t kind;		/* the op that named it: NTB_OP_ALLOC_PD, REG_MR, CREATE_QP,
				 * ALLOC_MW */
};

struct session {
	struct bvd_client *c[2];
	int peer_sock[2];	/* the client's end of its control socket */
	int async_rd[2];	/* ... and of its async event socket */
	struct handle h[NHANDLES];
	unsigned int nh;
};

static int memfd(size_t size, bool seal);

static void die(const char *what)
{
	fprintf(stderr, "ntbd_fuzz: %s: %s\n", what, strerror(errno));
	abort();
}

static void pump(int timeout_ms)
{
	for (int i = 0; i < 2; i++)
		bvd_poll(&ends[i].d, timeout_ms);
}

static void cleanup(void)
{
	for (int i = 0; i < 2; i++) {
		struct ntbd *n = &ends[i].n;

		if (!n->d)
			continue;
		ntbd_link_stop(n);
		if (n->mod && n->mod->fini)
			n->mod->fini(n);
		ntbd_link_fini(n);
	}
	fuzz_rundir_remove(rundir, "ntbd_fuzz");
}

static void bring_up(void)
{
	char path[128], err[256];
	FILE *f;

	if (fuzz_rundir_make(rundir, sizeof(rundir), "ntbd_fuzz"))
		die("mkdtemp");
	setenv("BV_RUNDIR", rundir, 1);
	snprintf(path, sizeof(path), "%s/fuzz.conf", rundir);
	f = fopen(path, "w");
	if (!f)
		die("config");
	/* no heartbeat: an input that runs long must not bounce the link under the next one */
	for (int i = 0; i < 2; i++)
		fprintf(f, "[device ntb_%d]\nkind = ntb\nlink = fuzz\nside = %d\n"
			"profile = intel-gen3\nip = 127.0.2.%d\nheartbeat_ms = 0\n\n", i, i, i + 1);
	fclose(f);
	atexit(cleanup);
	for (int i = 0; i < 2; i++) {
		struct bvd *d = &ends[i].d;
		struct ntbd *n = &ends[i].n;
		char name[16];

		if (bv_config_load(&d->cfg, path, err, sizeof(err))) {
			fprintf(stderr, "ntbd_fuzz: %s\n", err);
			abort();
		}
		snprintf(name, sizeof(name), "ntb_%d", i);
		d->conf = bv_config_find(&d->cfg, name);
		d->epfd = epoll_create1(EPOLL_CLOEXEC);
		d->num_comp_vectors = 1;
		if (!d->conf || d->epfd < 0)
			die("bvd");
		/* what bvd_main and ntbd.c's init do */
		d->ops = &ntbd_ops;
		n->d = d;
		d->priv = n;
		n->mod = &ntbd_verbs_module;
		if (ntbd_link_init(n) || n->mod->init(n))
			die("ntbd init");
	}
	for (int t = 0; t < 1000; t++) {
		pump(10);
		if (ntbd_link_ready(&ends[0].n) && ntbd_link_ready(&ends[1].n)) {
			/* the ends found each other: nothing needs the directory any more (and
			 * a crash, which skips atexit, leaves nothing behind) */
			fuzz_rundir_remove(rundir, "ntbd_fuzz");
			return;
		}
	}
	fprintf(stderr, "ntbd_fuzz: the link did not come up\n");
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A request of a client set up by the harness itself: it must work. */
static void must(struct ntbd *n, struct bvd_client *c, uint16_t op, const void *in, size_t len,
		 int *fds, unsigned int nfds, void *out_copy, size_t out_len)
{
	static union {
		char bytes[BV_MSG_PAYLOAD_MAX];
		uint64_t align;
	} out;
	struct bvd_reply r;

	for (int t = 0; t < 100; t++) {
		r = (struct bvd_reply){ .payload = out.bytes };
		n->mod->request(n, c, op, in, len, fds, nfds, &r);
		for (unsigned int i = 0; i < r.nfds; i++)
			close(r.fds[i]);
		/* the peer's half of the plan may still be on its way: as the provider, retry */
		if (r.status != EAGAIN)
			break;
		pump(10);
	}
	if (r.status) {
		fprintf(stderr, "ntbd_fuzz: setup request 0x%x: %s\n", op, strerror(r.status));
		abort();
	}
	if (out_copy)
		memcpy(out_copy, out.bytes, out_len);
}

/*
 * A client of end 1 holding a region open to remote writes (a sealed memfd, as the provider
 * registers them): its key is published to end 0, so MAP_PEER_MR has something to find.
 */
static uint32_t peer_rkey;

static void peer_setup(void)
{
	static uint8_t mem[65536] __attribute__((aligned(4096)));
	struct ntbd *n = &ends[1].n;
	struct bvd_client *c = calloc(1, sizeof(*c));
	struct ntb_attach_req a = { .version = NTB_PROTO_VERSION };
	struct ntb_handle_rsp pd;
	struct ntb_reg_mr_req mr = { .access = 0x3, .addr = (uintptr_t)mem,
				     .length = sizeof(mem) };
	struct ntb_reg_mr_rsp mrsp;
	int sv[2], av[2], fd;

	if (!c || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, av))
		die("peer client");
	c->d = &ends[1].d;
	c->sock = sv[0];
	c->async_fd = av[0];
	c->id = 1;
	c->role = BV_ROLE_VERBS;
	c->pid = getpid();
	if (n->mod->client_open(n, c))
		die("client_open");
	ends[1].d.clients = c;
	must(n, c, NTB_OP_ATTACH, &a, sizeof(a), NULL, 0, NULL, 0);
	must(n, c, NTB_OP_ALLOC_PD, NULL, 0, NULL, 0, &pd, sizeof(pd));
	mr.pd = pd.handle;
	fd = memfd(sizeof(mem), true);
	must(n, c, NTB_OP_REG_MR, &mr, sizeof(mr), &fd, 1, &mrsp, sizeof(mrsp));
	close(fd);
	peer_rkey = mrsp.rkey;
	pump(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	bring_up();
	peer_setup();
	return 0;
}

static struct bvd_client *client_new(struct session *s, int who)
{
	struct bvd *d = &ends[0].d;
	struct bvd_client *c = calloc(1, sizeof(*c));
	int sv[2], av[2];

	if (!c || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, av))
		die("client");
	/* what bvd does for a client that said HELLO as a verbs provider */
	c->d = d;
	c->sock = sv[0];
	c->async_fd = av[0];
	c->id = 1000 + who;
	c->role = BV_ROLE_VERBS;
	c->pid = getpid();
	snprintf(c->comm, sizeof(c->comm), "fuzz%c", 'A' + who);
	if (ends[0].n.mod->client_open(&ends[0].n, c))
		die("client_open");
	c->next = d->clients;
	d->clients = c;
	s->c[who] = c;
	s->peer_sock[who] = sv[1];
	s->async_rd[who] = av[1];
	return c;
}

static void client_gone(struct session *s, int who)
{
	struct bvd *d = &ends[0].d;
	struct bvd_client *c = s->c[who];

	ends[0].n.mod->client_close(&ends[0].n, c);
	for (struct bvd_client **p = &d->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	close(c->sock);
	close(c->async_fd);
	close(s->peer_sock[who]);
	close(s->async_rd[who]);
	free(c);
}

static int memfd(size_t size, bool seal)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)size) ||
	    (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL)))
		die("memfd");
	return fd;
}

/* Memory of ours that shaped REG_MR requests register (the daemon maps pid + address). */
#define ARENA (4u << 20)
static uint8_t arena[ARENA] __attribute__((aligned(4096)));

static size_t shaped_len(uint16_t op)
{
	switch (op) {
	case NTB_OP_ATTACH:
		return sizeof(struct ntb_attach_req);
	case NTB_OP_DEALLOC_PD:
	case NTB_OP_DEREG_MR:
	case NTB_OP_DESTROY_QP:
	case NTB_OP_MAP_PEER_MR:
	case NTB_OP_ALLOC_MW:
	case NTB_OP_DEALLOC_MW:
		return sizeof(struct ntb_handle_req);
	case NTB_OP_REG_MR:
		return sizeof(struct ntb_reg_mr_req);
	case NTB_OP_CREATE_QP:
		return sizeof(struct ntb_create_qp_req);
	case NTB_OP_MODIFY_QP:
		return sizeof(struct ntb_modify_qp_req);
	case NTB_OP_ASYNC_EVENT:
		return sizeof(struct ntb_async_event_req);
	case NTB_OP_OPEN_PAIR:
		return sizeof(struct ntb_open_pair_req);
	case NTB_OP_REREG_MR:
		return sizeof(struct ntb_rereg_mr_req);
	default:
		return 0;
	}
}

static void shape(uint16_t op, void *buf)
{
	if (op == NTB_OP_ATTACH) {
		((struct ntb_attach_req *)buf)->version = NTB_PROTO_VERSION;
	} else if (op == NTB_OP_REG_MR || op == NTB_OP_REREG_MR) {
		struct ntb_reg_mr_req *m = op == NTB_OP_REG_MR ? buf :
						&((struct ntb_rereg_mr_req *)buf)->mr;

		m->access &= 0x1f | 0x100;	/* LOCAL_WRITE, REMOTE_*, MW_BIND, RELAXED */
		m->length = 1 + m->length % (ARENA / 2);
		m->addr = (uintptr_t)arena + m->addr % (ARENA - m->length);
		m->fd_off = (m->fd_off % 16) * 4096;
	} else if (op == NTB_OP_CREATE_QP) {
		struct ntb_create_qp_req *q = buf;

		q->qp_type = 2 + q->qp_type % 3;	/* RC, UC, UD */
	} else if (op == NTB_OP_ALLOC_MW) {
		((struct ntb_handle_req *)buf)->reserved %= 4;	/* types 1 and 2, and two bad */
	} else if (op == NTB_OP_DEALLOC_MW) {
		((struct ntb_handle_req *)buf)->reserved = 0;
	} else if (op == NTB_OP_MODIFY_QP) {
		((struct ntb_modify_qp_req *)buf)->state %= 7;
	} else if (op == NTB_OP_ASYNC_EVENT) {
		((struct ntb_async_event_req *)buf)->event_type %= 20;
	} else if (op == NTB_OP_OPEN_PAIR) {
		struct ntb_open_pair_req *o = buf;

		/* a slot of either end, in the incarnation that holds it now (or any other) */
		o->end %= 2;
		o->slot %= NTBV_MAX_SLOTS;
		if (o->epoch & 0x80000000u) {
			const struct nv_state *st = ends[o->end ? 0 : 1].n.mod_priv;

			o->epoch = st->slots[o->slot].epoch;
		}
	}
}

static void remember(struct session *s, int who, uint16_t kind, uint32_t value)
{
	if (s->nh < NHANDLES)
		s->h[s->nh++] = (struct handle){ value, who, kind };
}

static void forget(struct session *s, uint32_t value)
{
	for (unsigned int i = 0; i < s->nh; i++)
		if (s->h[i].value == value) {
			s->h[i] = s->h[--s->nh];
			return;
		}
}

static const struct handle *owned_by_other(struct session *s, int who, uint16_t op,
					   uint32_t value)
{
	static const uint16_t names[][2] = {
		{ NTB_OP_DEALLOC_PD, NTB_OP_ALLOC_PD },
		{ NTB_OP_DEREG_MR, NTB_OP_REG_MR },
		{ NTB_OP_REREG_MR, NTB_OP_REG_MR },
		{ NTB_OP_DESTROY_QP, NTB_OP_CREATE_QP },
		{ NTB_OP_MODIFY_QP, NTB_OP_CREATE_QP },
		{ NTB_OP_REG_MR, NTB_OP_ALLOC_PD },
		{ NTB_OP_CREATE_QP, NTB_OP_ALLOC_PD },
		{ NTB_OP_ALLOC_MW, NTB_OP_ALLOC_PD },
		{ NTB_OP_DEALLOC_MW, NTB_OP_ALLOC_MW },
		{ NTB_OP_DEALLOC_MW, NTB_OP_REG_MR },
		{ NTB_OP_DEREG_MR, NTB_OP_ALLOC_MW },
		{ NTB_OP_REREG_MR, NTB_OP_ALLOC_MW },
	};

	/* handles are per end and per kind: the asker may hold the same value itself */
	for (unsigned int k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		for (unsigned int i = 0; i < s->nh; i++)
			if (names[k][0] == op && s->h[i].value == value &&
			    s->h[i].kind == names[k][1] && s->h[i].owner == who)
				return NULL;
	for (unsigned int k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		if (names[k][0] != op)
			continue;
		for (unsigned int i = 0; i < s->nh; i++)
			if (s->h[i].value == value && s->h[i].kind == names[k][1] &&
			    s->h[i].owner != who)
				return &s->h[i];
	}
	return NULL;
}

/* One request as bvd hands it to the device kind, and the checks on what comes back. */
static void request(struct session *s, int who, uint16_t op, const void *in, size_t len,
		    unsigned int flags, bool shaped)
{
	static union {
		char bytes[BV_MSG_PAYLOAD_MAX];
		uint64_t align;
	} out;
	struct bvd_reply r = { .payload = out.bytes };
	int fds[BV_MSG_MAX_FDS];
	unsigned int nfds = 0;
	void *buf = malloc(len ? len : 1);
	const struct handle *other = NULL;
	char drain[64];

	if (!buf)
		die("malloc");
	if (len)
		memcpy(buf, in, len);
	if (shaped)
		shape(op, buf);
	if ((flags & 0x10) && s->nh && len >= 4) {
		const struct handle *h = &s->h[(flags >> 5) % s->nh];

		memcpy(buf, &h->value, 4);
	}
	if (len >= 4) {
		uint32_t v;

		memcpy(&v, buf, 4);
		other = owned_by_other(s, who, op, v);
	}
	if (flags & 0x08) {
		for (int i = 0; i < BV_MSG_MAX_FDS; i++)
			fds[nfds++] = memfd(65536, false);
	} else if (flags & 0x02) {
		if (flags & 0x04) {
			int p[2];

			if (pipe2(p, O_CLOEXEC))
				die("pipe");
			close(p[1]);
			fds[nfds++] = p[0];
		} else {
			fds[nfds++] = memfd(ARENA, true);
		}
	}

	ends[0].n.mod->request(&ends[0].n, s->c[who], op, buf, len, fds, nfds, &r);

	if (r.status < 0 || r.status > 4095) {
		fprintf(stderr, "op 0x%x: status %d is not an errno\n", op, r.status);
		abort();
	}
	if (r.len > BV_MSG_PAYLOAD_MAX || r.nfds > BV_MSG_MAX_FDS) {
		fprintf(stderr, "op 0x%x: reply of %zu bytes, %u fds\n", op, r.len, r.nfds);
		abort();
	}
	if (other && !r.status) {
		fprintf(stderr, "op 0x%x: client %c named client %c's object 0x%x and it "
			"worked\n", op, 'A' + who, 'A' + other->owner, other->value);
		abort();
	}
	for (unsigned int i = 0; i < r.nfds; i++) {
		if (fcntl(r.fds[i], F_GETFD) < 0) {
			fprintf(stderr, "op 0x%x: reply fd %d is not open\n", op, r.fds[i]);
			abort();
		}
		close(r.fds[i]);
	}
	/* bvd closes the descriptors the handler did not keep */
	for (unsigned int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (!r.status) {
		uint32_t v;

		memcpy(&v, out.bytes, sizeof(v));
		if (op == NTB_OP_ALLOC_PD || op == NTB_OP_REG_MR || op == NTB_OP_CREATE_QP ||
		    op == NTB_OP_ALLOC_MW)
			remember(s, who, op, v);
		if (op == NTB_OP_REG_MR) {
			const struct ntb_reg_mr_rsp *m = (const void *)out.bytes;

			if (m->rkey && m->rkey != m->lkey)
				remember(s, who, op, m->rkey);
		}
		if ((op == NTB_OP_DEALLOC_PD || op == NTB_OP_DEREG_MR ||
		     op == NTB_OP_DESTROY_QP || op == NTB_OP_DEALLOC_MW) && len >= 4) {
			memcpy(&v, buf, 4);
			forget(s, v);
		}
	}
	free(buf);
	while (read(s->async_rd[who], drain, sizeof(drain)) > 0)
		;
	pump(0);
}

/*
 * The peer's ntbd writes the control area in our window (kernel-abi/ntb_verbs_wire.h): the
 * header with its geometry, table offsets and generation, and the tables. A broken or hostile
 * peer can write anything there, at any time. With bytes, the fuzzer's replace the header
 * (all of it but the magic) and the table entry of end 1's published key; with NULL, what the
 * peer really wrote comes back.
 */
#define HDR_BYTES 256
#define ENT_BYTES ((unsigned int)sizeof(struct ntbv_mr_ent))
#define HDR_FUZZ (HDR_BYTES + ENT_BYTES)

static void hostile_peer(const uint8_t *bytes, bool header)
{
	static uint8_t saved[HDR_FUZZ];
	static bool have;
	struct ntbd *n = &ends[0].n;
	uint8_t *ph = (uint8_t *)n->link.ctl + NTBD_CTL_MODULE_OFF, *pe;

	_Static_assert(HDR_BYTES >= sizeof(struct ntbv_ctrl_hdr), "the whole header");
	if (!have)
		memcpy(saved, ph, HDR_BYTES);	/* what the peer really wrote */
	pe = ph + ((const struct ntbv_ctrl_hdr *)saved)->mr_tbl_off +
	     NTBV_KEY_INDEX(peer_rkey) * sizeof(struct ntbv_mr_ent);
	if (!have)
		memcpy(saved + HDR_BYTES, pe, ENT_BYTES);
	if (!bytes) {
		if (have) {
			memcpy(ph, saved, HDR_BYTES);
			memcpy(pe, saved + HDR_BYTES, ENT_BYTES);
		}
		have = false;
		return;
	}
	have = true;
	if (header)
		memcpy(ph + 4, bytes + 4, HDR_BYTES - 4);
	memcpy(pe, bytes + HDR_BYTES, ENT_BYTES);
}

static void setup_objects(struct session *s)
{
	struct ntb_attach_req a = { .version = NTB_PROTO_VERSION };

	for (int who = 0; who < 2; who++) {
		/* the peer's half of the plan may still be on its way: as the provider, retry */
		for (int t = 0; t < 100; t++) {
			struct bvd_reply r;
			static union {
				char bytes[BV_MSG_PAYLOAD_MAX];
				uint64_t align;
			} out;

			r = (struct bvd_reply){ .payload = out.bytes };
			ends[0].n.mod->request(&ends[0].n, s->c[who], NTB_OP_ATTACH, &a, sizeof(a),
					       NULL, 0, &r);
			for (unsigned int i = 0; i < r.nfds; i++)
				close(r.fds[i]);
			if (r.status != EAGAIN)
				break;
			pump(10);
		}
		request(s, who, NTB_OP_ALLOC_PD, NULL, 0, 0, false);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session s = { 0 };
	int before = fuzz_count_fds(), after;
	bool peer_lied = false;
	uint8_t first;

	client_new(&s, 0);
	client_new(&s, 1);
	/* end 1's key, for MAP_PEER_MR (no client of end 0 owns it) */
	remember(&s, 2, NTB_OP_MAP_PEER_MR, peer_rkey);
	first = size ? data[0] : 0;
	if ((first & 0x40) && size >= 1 + HDR_FUZZ) {
		hostile_peer(data + 1, !(first & 0x20));
		data += 1 + HDR_FUZZ;
		size -= 1 + HDR_FUZZ;
		peer_lied = true;
	}
	if (first & 0x80)
		setup_objects(&s);
	while (size >= 4) {
		static uint8_t pad[BV_MSG_PAYLOAD_MAX];
		unsigned int flags = data[0];
		uint16_t op = data[1] < 0xf0 ? BV_OP_NTB_BASE + data[1] % 16 : 0xff00 | data[1];
		bool shaped = data[3] & 0x80;
		size_t len = shaped ? shaped_len(op) : (data[2] | (size_t)data[3] << 8);
		size_t take = len < size - 4 ? len : size - 4;

		data += 4;
		size -= 4;
		if (shaped) {
			/* the request's own size, zero-filled where the input ends */
			memset(pad, 0, len);
			memcpy(pad, data, take);
			request(&s, flags & 1, op, pad, len, flags, true);
		} else {
			request(&s, flags & 1, op, data, take, flags, false);
		}
		data += take;
		size -= take;
	}
	client_gone(&s, 0);
	client_gone(&s, 1);
	if (peer_lied)
		hostile_peer(NULL, false);
	pump(0);
	after = fuzz_count_fds();
	if (after > before) {
		fprintf(stderr, "ntbd_fuzz: %d descriptors leaked by one session\n", after - before);
		abort();
	}
	return 0;
}
