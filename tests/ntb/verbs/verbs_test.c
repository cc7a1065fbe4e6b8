// SPDX-License-Identifier: MIT
/*
 * ntb_verbs_test: the ntb provider's data paths and error semantics, through libibverbs.
 *
 * One process opens both ends of the link (two contexts, each attached to its own ntbd) and
 * connects QPs between them, so every byte on both sides can be checked, and the target side
 * can be left alone (never polled) to show that its progress thread answers one-sided
 * operations. Every data test fills buffers with a pattern that depends on the test, the size
 * and the byte offset, and checks every byte moved and the guard bytes around it.
 *
 * Usage: ntb_verbs_test [-a DEV] [-b DEV] [-v] [TEST...]   (default ntb_0 ntb_1, all tests)
 * Exit status 0 when every test selected passed.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include "../../lib/reg_mr_fault.h"

#define GUARD		64
#define MAXWC		64

static int verbose;
static const char *cur_test;
static int failures;

/* In a test: report and clean up (every test ends in "out:"). */
#define FAIL(...)                                                                            \
	do {                                                                                 \
		fprintf(stderr, "FAIL %s:%d [%s] ", __FILE__, __LINE__, cur_test);           \
		fprintf(stderr, __VA_ARGS__);                                                \
		fputc('\n', stderr);                                                         \
		goto out;                                                                    \
	} while (0)

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond))                                                                 \
			FAIL(__VA_ARGS__);                                                   \
	} while (0)

/* In a helper: report and return -1. */
#define ENSURE(cond, ...)                                                                    \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "FAIL %s:%d [%s] ", __FILE__, __LINE__, cur_test);   \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			return -1;                                                           \
		}                                                                            \
	} while (0)

static void note(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "  ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* ---- ends, buffers, QPs --------------------------------------------------------------------- */

struct end {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	union ibv_gid gid;
	int gid_index;
	bool shared;		/* the context is the other end's */
};

struct buf {
	uint8_t *mem;		/* GUARD bytes, len bytes, GUARD bytes */
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
};

static struct end A, B;

/* An end: its own context, or (share) the other end's context with its own PD and CQs. */
static int open_end(struct end *e, const char *name, struct ibv_context *share)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;

	e->name = name;
	e->shared = share != NULL;
	e->ctx = share;
	for (int i = 0; !share && list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			e->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!e->ctx) {
		fprintf(stderr, "cannot open %s\n", name);
		return -1;
	}
	e->pd = ibv_alloc_pd(e->ctx);
	e->ch = ibv_create_comp_channel(e->ctx);
	e->scq = ibv_create_cq(e->ctx, 4096, NULL, e->ch, 0);
	e->rcq = ibv_create_cq(e->ctx, 4096, NULL, e->ch, 0);
	if (!e->pd || !e->ch || !e->scq || !e->rcq || ibv_query_port(e->ctx, 1, &pa)) {
		fprintf(stderr, "%s: setup failed: %s\n", name, strerror(errno));
		return -1;
	}
	/* the RoCE v2 IPv4 GID */
	e->gid_index = 0;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;

		if (!ibv_query_gid(e->ctx, 1, i, &g) && g.raw[10] == 0xff && g.raw[11] == 0xff) {
			e->gid = g;
			e->gid_index = i;
		}
	}
	return 0;
}

static void close_end(struct end *e)
{
	if (!e->ctx)
		return;
	ibv_destroy_cq(e->scq);
	ibv_destroy_cq(e->rcq);
	ibv_destroy_comp_channel(e->ch);
	ibv_dealloc_pd(e->pd);
	if (!e->shared)
		ibv_close_device(e->ctx);
}

static uint8_t pat(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u;

	return (uint8_t)(x ^ (x >> 13) ^ (x >> 7));
}

static void fill(struct buf *b, uint32_t seed)
{
	for (size_t i = 0; i < b->len + 2 * GUARD; i++)
		b->mem[i] = pat(seed, i);
}

static int buf_new(struct end *e, struct buf *b, size_t len, int access)
{
	b->len = len;
	b->mem = malloc(len + 2 * GUARD);
	if (!b->mem)
		return -1;
	b->p = b->mem + GUARD;
	fill(b, 0x5a5a);
	b->mr = ibv_reg_mr(e->pd, b->p, len ? len : 1, access);
	if (!b->mr) {
		fprintf(stderr, "reg_mr %zu on %s: %s\n", len, e->name, strerror(errno));
		free(b->mem);
		return -1;
	}
	return 0;
}

static void buf_free(struct buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->mem);
	memset(b, 0, sizeof(*b));
}

#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)

/* Every byte of b: off..off+n must equal what src held at soff..; the rest is what seed made. */
static int check_bytes(const struct buf *b, uint32_t seed, size_t off, const uint8_t *src,
		       size_t n, const char *what)
{
	for (size_t i = 0; i < b->len + 2 * GUARD; i++) {
		size_t pos = i - GUARD;
		uint8_t want = (src && i >= GUARD && pos >= off && pos < off + n) ?
				       src[pos - off] : pat(seed, i);

		if (b->mem[i] != want) {
			fprintf(stderr, "FAIL [%s] %s: byte %zd is 0x%02x, want 0x%02x\n",
				cur_test, what, (ssize_t)pos, b->mem[i], want);
			return -1;
		}
	}
	return 0;
}

struct qpcfg {
	enum ibv_qp_type type;
	uint32_t max_send_wr, max_recv_wr, max_sge, max_inline;
	struct ibv_srq *srq;
	uint8_t rnr_retry, min_rnr_timer, timeout, retry_cnt;
	int access;
};

static const struct qpcfg RC = { IBV_QPT_RC, 256, 256, 4, 64, NULL, 7, 1, 14, 7, ALL_ACCESS };

static struct ibv_qp *make_qp(struct end *e, const struct qpcfg *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->scq, .recv_cq = e->rcq, .srq = c->srq, .qp_type = c->type,
		.cap = { .max_send_wr = c->max_send_wr, .max_recv_wr = c->max_recv_wr,
			 .max_send_sge = c->max_sge, .max_recv_sge = c->max_sge,
			 .max_inline_data = c->max_inline },
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp)
		fprintf(stderr, "create_qp on %s: %s\n", e->name, strerror(errno));
	return qp;
}

static int to_init(struct ibv_qp *qp, const struct qpcfg *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
				 .qp_access_flags = c->access, .qkey = 0x11111111 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= c->type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

static int to_rtr_rts(struct ibv_qp *qp, const struct qpcfg *c, struct end *peer,
		      uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096,
				 .dest_qp_num = dest, .rq_psn = 0x123, .max_dest_rd_atomic = 4,
				 .min_rnr_timer = c->min_rnr_timer };
	int mask = IBV_QP_STATE;

	if (c->type != IBV_QPT_UD) {
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.sgid_index = 0;
		a.ah_attr.grh.hop_limit = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (c->type == IBV_QPT_RC)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = 4;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (c->type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

struct conn {
	struct ibv_qp *a, *b;
	struct qpcfg cfg;
};

static int connect_pair(struct conn *c, const struct qpcfg *ca, const struct qpcfg *cb)
{
	memset(c, 0, sizeof(*c));
	c->cfg = *ca;
	c->a = make_qp(&A, ca);
	c->b = make_qp(&B, cb);
	if (!c->a || !c->b)
		return -1;
	if (to_init(c->a, ca) || to_init(c->b, cb))
		return -1;
	if (to_rtr_rts(c->a, ca, &B, c->b->qp_num) || to_rtr_rts(c->b, cb, &A, c->a->qp_num)) {
		fprintf(stderr, "connect: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void disconnect(struct conn *c)
{
	if (c->a)
		ibv_destroy_qp(c->a);
	if (c->b)
		ibv_destroy_qp(c->b);
	c->a = c->b = NULL;
}

/* Poll cq until n completions (or timeout_ms; 0: poll once). Returns how many. */
static int wait_wc(struct ibv_cq *cq, int n, struct ibv_wc *wc, int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	int got = 0;

	do {	/* at least once: a timeout of 0 asks what is there now */
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return -1;
		got += r;
	} while (got < n && now_ms() < end);
	return got;
}

/* Drain both CQs of an end (completions a failed test left behind). */
static void drain(struct end *e)
{
	struct ibv_wc wc[MAXWC];

	while (ibv_poll_cq(e->scq, MAXWC, wc) > 0)
		;
	while (ibv_poll_cq(e->rcq, MAXWC, wc) > 0)
		;
}

static int post_recv(struct ibv_qp *qp, struct buf *b, size_t off, size_t len, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)(b->p + off), (uint32_t)len, b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_one(struct ibv_qp *qp, enum ibv_wr_opcode op, struct buf *b, size_t off,
		    size_t len, uint64_t raddr, uint32_t rkey, uint64_t id, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)(b->p + off), (uint32_t)len, b->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = flags | IBV_SEND_SIGNALED,
				  .imm_data = htonl(0xc0de0000u | (uint32_t)len) }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int expect_wc(struct ibv_cq *cq, enum ibv_wc_status st, int opcode, uint64_t id,
		     const char *what)
{
	struct ibv_wc wc;

	if (wait_wc(cq, 1, &wc, 5000) != 1) {
		fprintf(stderr, "FAIL [%s] %s: no completion\n", cur_test, what);
		return -1;
	}
	if (wc.status != st || wc.wr_id != id || (opcode >= 0 && (int)wc.opcode != opcode)) {
		fprintf(stderr, "FAIL [%s] %s: completion %s (%d) opcode %d id %llu, want %s "
			"opcode %d id %llu\n", cur_test, what, ibv_wc_status_str(wc.status),
			wc.status, wc.opcode, (unsigned long long)wc.wr_id,
			ibv_wc_status_str(st), opcode, (unsigned long long)id);
		return -1;
	}
	return 0;
}

/* ---- data tests -------------------------------------------------------------------------------- */

static const size_t sizes[] = { 0, 1, 7, 8, 63, 64, 65, 500, 4095, 4096, 4097, 12000, 65536,
				100003, 1 << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXSZ (1 << 20)

static int t_rc_ops_kind(enum ibv_qp_type type)
{
	struct qpcfg cfg = RC;
	struct buf sa = { 0 }, sb = { 0 }, ra = { 0 }, rb = { 0 };
	struct conn c = { 0 };
	struct ibv_wc wc;
	int ret = -1;

	cfg.type = type;
	if (connect_pair(&c, &cfg, &cfg) || buf_new(&A, &sa, MAXSZ, ALL_ACCESS) ||
	    buf_new(&B, &sb, MAXSZ, ALL_ACCESS) || buf_new(&A, &ra, MAXSZ, ALL_ACCESS) ||
	    buf_new(&B, &rb, MAXSZ, ALL_ACCESS))
		FAIL("setup");
	for (size_t i = 0; i < NSIZES; i++) {
		size_t n = sizes[i];
		uint32_t s1 = 1000 + (uint32_t)i, s2 = 2000 + (uint32_t)i;

		/* SEND and SEND_WITH_IMM: b's receive gets every byte */
		for (int imm = 0; imm < 2; imm++) {
			fill(&sa, s1);
			fill(&rb, s2);
			CHECK(!post_recv(c.b, &rb, 0, MAXSZ, 77), "post_recv");
			CHECK(!post_one(c.a, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, &sa, 0, n, 0,
					0, 5, 0), "post send %zu", n);
			if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_SEND, 5, "send"))
				goto out;
			CHECK(wait_wc(A.rcq, 1, &wc, 0) == 0, "a completion on the sender's receive CQ");
			CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1, "recv completion %zu", n);
			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
				      wc.byte_len == n && wc.wr_id == 77 && wc.qp_num == c.b->qp_num,
			      "recv wc %s len %u", ibv_wc_status_str(wc.status), wc.byte_len);
			if (type == IBV_QPT_RC || type == IBV_QPT_UC)
				CHECK(wc.src_qp == c.a->qp_num, "src_qp");
			CHECK(!!(wc.wc_flags & IBV_WC_WITH_IMM) == imm &&
				      (!imm || wc.imm_data == htonl(0xc0de0000u | (uint32_t)n)),
			      "imm");
			if (check_bytes(&rb, s2, 0, sa.p, n, "send data"))
				goto out;
		}
		/* RDMA WRITE (and WITH_IMM) at an offset of b's region */
		for (int imm = 0; imm < 2; imm++) {
			size_t off = n < MAXSZ - 3 ? 3 : 0;

			fill(&sa, s1 + 7);
			fill(&sb, s2 + 7);
			if (imm)
				CHECK(!post_recv(c.b, &rb, 0, 0, 88), "post_recv");
			CHECK(!post_one(c.a, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
					&sa, 0, n, (uintptr_t)sb.p + off, sb.mr->rkey, 6, 0),
			      "post write");
			if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 6, "write"))
				goto out;
			if (imm) {
				CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1, "write imm recv");
				CHECK(wc.status == IBV_WC_SUCCESS &&
					      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
					      wc.byte_len == n && (wc.wc_flags & IBV_WC_WITH_IMM) &&
					      wc.imm_data == htonl(0xc0de0000u | (uint32_t)n),
				      "write imm wc %s op %d len %u",
				      ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
			} else if (type == IBV_QPT_UC) {
				/* UC completes on sending: wait until b's side placed it */
				uint64_t end = now_ms() + 5000;

				while (n && memcmp(sb.p + off, sa.p, n) && now_ms() < end)
					usleep(100);
			}
			if (check_bytes(&sb, s2 + 7, off, sa.p, n, "write data"))
				goto out;
		}
		if (type != IBV_QPT_RC)
			continue;
		/* RDMA READ of b's region into a's */
		fill(&sb, s1 + 9);
		fill(&ra, s2 + 9);
		CHECK(!post_one(c.a, IBV_WR_RDMA_READ, &ra, n < MAXSZ ? 1 : 0, n, (uintptr_t)sb.p,
				sb.mr->rkey, 7, 0), "post read");
		CHECK(wait_wc(A.scq, 1, &wc, 5000) == 1, "read completion %zu", n);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ &&
			      wc.byte_len == n,
		      "read wc %s len %u", ibv_wc_status_str(wc.status), wc.byte_len);
		if (check_bytes(&ra, s2 + 9, n < MAXSZ ? 1 : 0, sb.p, n, "read data"))
			goto out;
		note("%s size %zu ok", type == IBV_QPT_RC ? "rc" : "uc", n);
	}
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&sb);
	buf_free(&ra);
	buf_free(&rb);
	drain(&A);
	drain(&B);
	return ret;
}

static int t_rc_ops(void)
{
	return t_rc_ops_kind(IBV_QPT_RC);
}

static int t_uc_ops(void)
{
	return t_rc_ops_kind(IBV_QPT_UC);
}

static int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op, struct buf *lb, size_t loff,
		       uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)(lb->p + loff), 8, lb->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(qp, &wr, &bad);
}

static int t_atomics(void)
{
	struct buf l = { 0 }, r = { 0 };
	struct conn c = { 0 };
	uint64_t *tgt, got;
	int ret = -1;

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &l, 64, ALL_ACCESS) ||
	    buf_new(&B, &r, 64, ALL_ACCESS))
		FAIL("setup");
	tgt = (uint64_t *)(r.p + 16);
	*tgt = 1000;
	for (int i = 1; i <= 20; i++) {
		CHECK(!post_atomic(c.a, IBV_WR_ATOMIC_FETCH_AND_ADD, &l, 8, (uintptr_t)tgt,
				   r.mr->rkey, (uint64_t)i, 0, i), "post fadd");
		if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, i, "fadd"))
			goto out;
		memcpy(&got, l.p + 8, 8);
		CHECK(got == 1000ull + (uint64_t)(i - 1) * i / 2, "fadd returned %llu",
		      (unsigned long long)got);
	}
	CHECK(*tgt == 1210, "target %llu", (unsigned long long)*tgt);
	/* compare and swap: a miss returns the value and leaves it, a hit swaps */
	CHECK(!post_atomic(c.a, IBV_WR_ATOMIC_CMP_AND_SWP, &l, 0, (uintptr_t)tgt, r.mr->rkey, 5,
			   77, 100), "post cas");
	if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, 100, "cas miss"))
		goto out;
	memcpy(&got, l.p, 8);
	CHECK(got == 1210 && *tgt == 1210, "cas miss: got %llu target %llu",
	      (unsigned long long)got, (unsigned long long)*tgt);
	CHECK(!post_atomic(c.a, IBV_WR_ATOMIC_CMP_AND_SWP, &l, 0, (uintptr_t)tgt, r.mr->rkey,
			   1210, 0xfeedfacecafebeefull, 101), "post cas");
	if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, 101, "cas hit"))
		goto out;
	memcpy(&got, l.p, 8);
	CHECK(got == 1210 && *tgt == 0xfeedfacecafebeefull, "cas hit");
	ret = 0;
out:
	disconnect(&c);
	buf_free(&l);
	buf_free(&r);
	drain(&A);
	drain(&B);
	return ret;
}

/* Scatter/gather: 4 pieces out, 3 pieces in, uneven. */
static int t_sg(void)
{
	struct buf sa = { 0 }, rb = { 0 }, sb = { 0 }, ra = { 0 };
	struct conn c = { 0 };
	struct ibv_wc wc;
	uint8_t expect[9000];
	int ret = -1;
	const uint32_t out[4] = { 1, 4000, 7, 2992 }, in[3] = { 3000, 5, 6995 };

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &sa, 20000, ALL_ACCESS) ||
	    buf_new(&B, &rb, 20000, ALL_ACCESS) || buf_new(&B, &sb, 20000, ALL_ACCESS) ||
	    buf_new(&A, &ra, 20000, ALL_ACCESS))
		FAIL("setup");
	fill(&sa, 31);
	fill(&rb, 32);
	{
		struct ibv_sge s[4], r[3];
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = s, .num_sge = 4,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = r, .num_sge = 3 }, *rbad;
		size_t so = 0, ro = 0, e = 0;

		for (int i = 0; i < 4; i++) {
			s[i] = (struct ibv_sge){ (uintptr_t)(sa.p + so), out[i], sa.mr->lkey };
			memcpy(expect + e, sa.p + so, out[i]);
			e += out[i];
			so += out[i] + 100;
		}
		for (int i = 0; i < 3; i++) {
			r[i] = (struct ibv_sge){ (uintptr_t)(rb.p + ro), in[i], rb.mr->lkey };
			ro += in[i] + 50;
		}
		CHECK(!ibv_post_recv(c.b, &rw, &rbad), "recv");
		CHECK(!ibv_post_send(c.a, &wr, &bad), "send");
		if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_SEND, 1, "sg send"))
			goto out;
		CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1 && wc.status == IBV_WC_SUCCESS &&
			      wc.byte_len == 7000, "sg recv");
		/* the received bytes, in order, spread over the 3 pieces; the gaps untouched */
		{
			static uint8_t want[20000];
			size_t g = 0;

			for (size_t i = 0; i < sizeof(want); i++)
				want[i] = pat(32, GUARD + i);
			ro = 0;
			for (int i = 0; i < 3; i++) {
				size_t k = in[i] < 7000 - g ? in[i] : 7000 - g;

				memcpy(want + ro, expect + g, k);
				g += k;
				ro += in[i] + 50;
			}
			if (check_bytes(&rb, 32, 0, want, sizeof(want), "sg receive and its gaps"))
				goto out;
		}
	}
	/* gather WRITE and scatter READ */
	{
		struct ibv_sge s[3] = {
			{ (uintptr_t)sa.p, 10, sa.mr->lkey },
			{ (uintptr_t)(sa.p + 5000), 5000, sa.mr->lkey },
			{ (uintptr_t)(sa.p + 100), 3, sa.mr->lkey },
		};
		struct ibv_send_wr wr = { .wr_id = 3, .sg_list = s, .num_sge = 3,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		uint8_t e2[5013];

		fill(&sb, 41);
		memcpy(e2, sa.p, 10);
		memcpy(e2 + 10, sa.p + 5000, 5000);
		memcpy(e2 + 5010, sa.p + 100, 3);
		wr.wr.rdma.remote_addr = (uintptr_t)sb.p + 11;
		wr.wr.rdma.rkey = sb.mr->rkey;
		CHECK(!ibv_post_send(c.a, &wr, &bad), "write");
		if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 3, "sg write") ||
		    check_bytes(&sb, 41, 11, e2, 5013, "gather write"))
			goto out;
		/* read those 5013 bytes back, scattered into 2 pieces */
		fill(&ra, 42);
		s[0] = (struct ibv_sge){ (uintptr_t)ra.p, 13, ra.mr->lkey };
		s[1] = (struct ibv_sge){ (uintptr_t)(ra.p + 13), 5000, ra.mr->lkey };
		wr.num_sge = 2;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr_id = 4;
		CHECK(!ibv_post_send(c.a, &wr, &bad), "read");
		if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 4, "sg read") ||
		    check_bytes(&ra, 42, 0, e2, 5013, "scatter read"))
			goto out;
	}
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&rb);
	buf_free(&sb);
	buf_free(&ra);
	drain(&A);
	drain(&B);
	return ret;
}

/* Inline data is taken at post time: the buffer may change right after. */
static int t_inline(void)
{
	struct buf sa = { 0 }, rb = { 0 }, sb = { 0 };
	struct conn c = { 0 };
	struct ibv_wc wc;
	uint8_t copy[64];
	int ret = -1;

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &sa, 64, ALL_ACCESS) ||
	    buf_new(&B, &rb, 64, ALL_ACCESS) || buf_new(&B, &sb, 64, ALL_ACCESS))
		FAIL("setup");
	fill(&sa, 51);
	fill(&rb, 52);
	fill(&sb, 53);
	memcpy(copy, sa.p, 64);
	CHECK(!post_recv(c.b, &rb, 0, 64, 1), "recv");
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 64, 0, 0, 1, IBV_SEND_INLINE), "inline send");
	CHECK(!post_one(c.a, IBV_WR_RDMA_WRITE, &sa, 0, 64, (uintptr_t)sb.p, sb.mr->rkey, 2,
			IBV_SEND_INLINE), "inline write");
	memset(sa.p, 0xee, 64);
	if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_SEND, 1, "inline send") ||
	    expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 2, "inline write"))
		goto out;
	CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1 && wc.byte_len == 64, "recv");
	if (check_bytes(&rb, 52, 0, copy, 64, "inline send") ||
	    check_bytes(&sb, 53, 0, copy, 64, "inline write"))
		goto out;
	/* too long for the QP's inline limit: an immediate error */
	{
		struct ibv_sge sge = { (uintptr_t)sa.p, 65, 0 };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_INLINE }, *bad;

		CHECK(ibv_post_send(c.a, &wr, &bad) == EINVAL && bad == &wr, "inline too long");
	}
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&rb);
	buf_free(&sb);
	drain(&A);
	drain(&B);
	return ret;
}

/* Unsignaled WRs complete silently; a signaled one after them completes them all. */
static int t_unsignaled(void)
{
	struct buf sa = { 0 }, sb = { 0 };
	struct conn c = { 0 };
	struct ibv_wc wc[4];
	int ret = -1;

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &sa, 8192, ALL_ACCESS) ||
	    buf_new(&B, &sb, 8192 * 11, ALL_ACCESS))
		FAIL("setup");
	for (int i = 0; i < 10; i++) {
		struct ibv_sge sge = { (uintptr_t)sa.p, 8192, sa.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE }, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)sb.p + i * 8192;
		wr.wr.rdma.rkey = sb.mr->rkey;
		CHECK(!ibv_post_send(c.a, &wr, &bad), "post %d", i);
	}
	CHECK(!post_one(c.a, IBV_WR_RDMA_WRITE, &sa, 0, 100, (uintptr_t)sb.p + 10 * 8192,
			sb.mr->rkey, 10, 0), "post signaled");
	CHECK(wait_wc(A.scq, 4, wc, 1000) == 1 && wc[0].wr_id == 10 &&
		      wc[0].status == IBV_WC_SUCCESS, "exactly one completion");
	for (int i = 0; i < 10; i++)
		CHECK(!memcmp(sb.p + i * 8192, sa.p, 8192), "write %d", i);
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&sb);
	drain(&A);
	drain(&B);
	return ret;
}

/*
 * What a UD receive buffer starts with for RoCE v2 over IPv4 (IBTA A17.4.5.1; Linux
 * ib_get_rdma_header_version): 20 bytes the verbs leave unspecified (zeros, as Linux rxe and
 * the project's devices write them), then the IPv4 header of the packet that carried the
 * datagram: version 4 without options, not fragmented, UDP, from the sender's address to
 * ours, the packet's length (IPv4, UDP, BTH, DETH, immediate, payload padded to 4 bytes
 * (BTH PadCnt), ICRC) and a right
 * checksum. TTL and TOS are the NTB link's own (there is no IP hop): taken as they are.
 */
static void grh_expected(uint8_t *g, const struct end *from, const struct end *to, size_t n,
			 bool imm, uint8_t tos, uint8_t ttl)
{
	uint8_t *ip = g + 20;
	uint16_t len = (uint16_t)(20 + 8 + 12 + 8 + (imm ? 4 : 0) + ((n + 3) & ~(size_t)3) + 4);
	uint32_t sum = 0;

	memset(g, 0, 20);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[1] = tos;
	ip[2] = len >> 8;
	ip[3] = len & 0xff;
	ip[6] = 0x40;			/* DF */
	ip[8] = ttl;
	ip[9] = 17;
	memcpy(ip + 12, from->gid.raw + 12, 4);
	memcpy(ip + 16, to->gid.raw + 12, 4);
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = ~((sum & 0xffff) + (sum >> 16)) & 0xffff;
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
}

/* UD: datagrams up to the MTU, with the 40-byte GRH in front; a wrong Q_Key is dropped. */
static int t_ud(void)
{
	struct qpcfg cfg = RC;
	struct buf sa = { 0 }, rb = { 0 };
	struct conn c = { 0 };
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	struct ibv_port_attr pa;
	int ret = -1;
	size_t mtu;

	cfg.type = IBV_QPT_UD;
	cfg.max_inline = 0;
	ibv_query_port(A.ctx, 1, &pa);
	mtu = 128u << pa.active_mtu;
	if (connect_pair(&c, &cfg, &cfg) || buf_new(&A, &sa, 4096, ALL_ACCESS) ||
	    buf_new(&B, &rb, 4096 + 40, ALL_ACCESS))
		FAIL("setup");
	{
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = B.gid, .sgid_index = A.gid_index,
						   .hop_limit = 1 } };

		ah = ibv_create_ah(A.pd, &aa);
		CHECK(ah, "create_ah");
	}
	for (size_t k = 0; k < NSIZES + 1; k++) {
		size_t n = k < NSIZES ? sizes[k] : mtu;

		if (n > mtu)
			continue;
		struct ibv_sge sge = { (uintptr_t)sa.p, (uint32_t)n, sa.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = n, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htonl(7),
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		fill(&sa, (uint32_t)n);
		fill(&rb, (uint32_t)n + 1);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = c.b->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
		CHECK(!post_recv(c.b, &rb, 0, 4096 + 40, n), "recv");
		CHECK(!ibv_post_send(c.a, &wr, &bad), "send");
		if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_SEND, n, "ud send"))
			goto out;
		CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1, "ud recv %zu", n);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == sge.length + 40 &&
			      (wc.wc_flags & IBV_WC_GRH) && (wc.wc_flags & IBV_WC_WITH_IMM) &&
			      wc.imm_data == htonl(7) && wc.src_qp == c.a->qp_num,
		      "ud wc %s len %u flags %x", ibv_wc_status_str(wc.status), wc.byte_len,
		      wc.wc_flags);
		{
			uint8_t want[4096 + 40];

			grh_expected(want, &A, &B, n, true, rb.p[21], rb.p[28]);
			memcpy(want + 40, sa.p, sge.length);
			if (check_bytes(&rb, (uint32_t)n + 1, 0, want, sge.length + 40, "ud GRH and data"))
				goto out;
		}
	}
	/* a wrong Q_Key: dropped at the receiver, the sender completes all the same */
	{
		struct ibv_sge sge = { (uintptr_t)sa.p, 16, sa.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = c.b->qp_num;
		wr.wr.ud.remote_qkey = 0x22222222;
		CHECK(!post_recv(c.b, &rb, 0, 4096 + 40, 9), "recv");
		CHECK(!ibv_post_send(c.a, &wr, &bad), "send");
		if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_SEND, 9, "bad qkey send"))
			goto out;
		CHECK(wait_wc(B.rcq, 1, &wc, 300) == 0, "a datagram with a wrong Q_Key arrived");
		/* longer than the MTU: a local length error */
		sge.length = (uint32_t)mtu + 1;
		wr.wr.ud.remote_qkey = 0x11111111;
		if (mtu + 1 <= 4096) {
			CHECK(!ibv_post_send(c.a, &wr, &bad), "send");
			if (expect_wc(A.scq, IBV_WC_LOC_LEN_ERR, -1, 9, "datagram over the MTU"))
				goto out;
		}
	}
	ret = 0;
out:
	if (ah)
		ibv_destroy_ah(ah);
	disconnect(&c);
	buf_free(&sa);
	buf_free(&rb);
	drain(&A);
	drain(&B);
	return ret;
}

/* A shared receive queue fed by two connections; the limit event fires. */
static int t_srq(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1, .srq_limit = 0 } };
	struct ibv_srq *srq = ibv_create_srq(B.pd, &sa);
	struct qpcfg cb = RC;
	struct conn c1 = { 0 }, c2 = { 0 };
	struct buf s = { 0 }, r = { 0 };
	struct ibv_wc wc[16];
	int ret = -1, got;

	CHECK(srq, "create_srq: %s", strerror(errno));
	cb.srq = srq;
	if (connect_pair(&c1, &RC, &cb) || connect_pair(&c2, &RC, &cb) ||
	    buf_new(&A, &s, 8 * 256, ALL_ACCESS) || buf_new(&B, &r, 16 * 256, ALL_ACCESS))
		FAIL("setup");
	for (int i = 0; i < 16; i++) {
		struct ibv_sge sge = { (uintptr_t)(r.p + i * 256), 256, r.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		CHECK(!ibv_post_srq_recv(srq, &wr, &bad), "post_srq_recv");
	}
	{
		struct ibv_srq_attr at = { .srq_limit = 10 };

		CHECK(!ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT), "arm srq limit");
	}
	/* 8 messages of 8 + 16 * i bytes, odd ones on the second connection */
	fill(&s, 111);
	for (int i = 0; i < 8; i++)
		CHECK(!post_one(i & 1 ? c2.a : c1.a, IBV_WR_SEND, &s, i * 256, 8 + 16 * i, 0, 0, i,
				0), "send");
	CHECK(wait_wc(A.scq, 8, wc, 5000) == 8, "sends");
	got = wait_wc(B.rcq, 8, wc, 5000);
	CHECK(got == 8, "srq receives: %d", got);
	/*
	 * Each completion names its connection and its SRQ slot; the order of the two
	 * connections is not defined, each one's own order is. The slot holds every byte of the
	 * message it says, and nothing else of the 16 slots changed.
	 */
	{
		uint8_t want[16 * 256];
		int next[2] = { 0, 1 };
		bool used[16] = { false };

		for (size_t i = 0; i < sizeof(want); i++)
			want[i] = pat(0x5a5a, GUARD + i);
		for (int i = 0; i < 8; i++) {
			int slot = (int)wc[i].wr_id - 100, c = wc[i].qp_num == c2.b->qp_num, m;

			CHECK(wc[i].status == IBV_WC_SUCCESS && slot >= 0 && slot < 16 && !used[slot],
			      "srq wc %d: %s, wr_id %llu", i, ibv_wc_status_str(wc[i].status),
			      (unsigned long long)wc[i].wr_id);
			CHECK(c || wc[i].qp_num == c1.b->qp_num, "qp_num of an srq completion");
			used[slot] = true;
			m = next[c];
			next[c] += 2;
			CHECK(m < 8 && wc[i].byte_len == 8u + 16u * (unsigned int)m,
			      "srq wc %d: %u B, the message of %d is %d B", i, wc[i].byte_len, m,
			      8 + 16 * m);
			memcpy(want + slot * 256, s.p + m * 256, 8 + 16 * (size_t)m);
		}
		if (check_bytes(&r, 0x5a5a, 0, want, sizeof(want), "srq receives"))
			goto out;
	}
	{
		struct ibv_async_event ev;
		struct pollfd pfd = { .fd = B.ctx->async_fd, .events = POLLIN };

		CHECK(poll(&pfd, 1, 3000) == 1, "no SRQ limit event");
		CHECK(!ibv_get_async_event(B.ctx, &ev), "get_async_event");
		CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq,
		      "event %s", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	ret = 0;
out:
	disconnect(&c1);
	disconnect(&c2);
	buf_free(&s);
	buf_free(&r);
	drain(&A);
	drain(&B);
	if (srq)
		ibv_destroy_srq(srq);
	return ret;
}

/* ---- completion channels and cq_ex ------------------------------------------------------------- */

static int wait_event(struct end *e, struct ibv_cq *want, int timeout_ms)
{
	struct pollfd pfd = { .fd = e->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cqctx;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	if (ibv_get_cq_event(e->ch, &cq, &cqctx) || cq != want)
		return -2;
	ibv_ack_cq_events(cq, 1);
	return 0;
}

static int t_events(void)
{
	struct buf sa = { 0 }, rb = { 0 };
	struct conn c = { 0 };
	struct ibv_wc wc;
	int ret = -1;

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &sa, 64, ALL_ACCESS) ||
	    buf_new(&B, &rb, 4096, ALL_ACCESS))
		FAIL("setup");
	/* armed for any completion: the send wakes b's channel */
	CHECK(!ibv_req_notify_cq(B.rcq, 0), "arm");
	CHECK(!post_recv(c.b, &rb, 0, 64, 1), "recv");
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 16, 0, 0, 1, 0), "send");
	CHECK(wait_event(&B, B.rcq, 5000) == 0, "no completion event");
	CHECK(wait_wc(B.rcq, 1, &wc, 1000) == 1, "recv");
	CHECK(wait_wc(A.scq, 1, &wc, 5000) == 1, "send");
	/* solicited only: an ordinary send does not wake it, a solicited one does */
	CHECK(!ibv_req_notify_cq(B.rcq, 1), "arm solicited");
	CHECK(!post_recv(c.b, &rb, 0, 64, 2) && !post_recv(c.b, &rb, 64, 64, 3), "recv");
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 16, 0, 0, 2, 0), "send");
	CHECK(wait_wc(A.scq, 1, &wc, 5000) == 1, "send");
	CHECK(wait_event(&B, B.rcq, 300) == -1, "an unsolicited send woke a solicited-only CQ");
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 16, 0, 0, 3, IBV_SEND_SOLICITED), "send");
	CHECK(wait_event(&B, B.rcq, 5000) == 0, "the solicited send did not wake it");
	{
		struct ibv_wc two[2];

		CHECK(wait_wc(B.rcq, 2, two, 1000) == 2, "recvs");
	}
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&rb);
	drain(&A);
	drain(&B);
	return ret;
}

static int t_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
			    IBV_WC_EX_WITH_SRC_QP,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(B.ctx, &ca);
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { 16, 16, 1, 1, 0 } };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_qp *qb;
	struct conn c = { 0 };
	struct buf sa = { 0 }, rb = { 0 };
	int ret = -1, r;
	uint64_t end;

	CHECK(cq, "create_cq_ex: %s", strerror(errno));
	ia.send_cq = B.scq;
	ia.recv_cq = ibv_cq_ex_to_cq(cq);
	qb = ibv_create_qp(B.pd, &ia);
	c.a = make_qp(&A, &RC);
	CHECK(qb && c.a, "qps");
	c.b = qb;
	if (to_init(c.a, &RC) || to_init(qb, &RC) || to_rtr_rts(c.a, &RC, &B, qb->qp_num) ||
	    to_rtr_rts(qb, &RC, &A, c.a->qp_num) || buf_new(&A, &sa, 64, ALL_ACCESS) ||
	    buf_new(&B, &rb, 64, ALL_ACCESS))
		FAIL("setup");
	CHECK(!post_recv(qb, &rb, 0, 64, 9), "recv");
	CHECK(!post_one(c.a, IBV_WR_SEND_WITH_IMM, &sa, 0, 33, 0, 0, 1, 0), "send");
	end = now_ms() + 5000;
	while ((r = ibv_start_poll(cq, &pa)) == ENOENT && now_ms() < end)
		;
	CHECK(!r, "start_poll %d", r);
	CHECK(cq->status == IBV_WC_SUCCESS && cq->wr_id == 9 &&
		      ibv_wc_read_opcode(cq) == IBV_WC_RECV && ibv_wc_read_byte_len(cq) == 33 &&
		      ibv_wc_read_imm_data(cq) == htonl(0xc0de0000u | 33) &&
		      ibv_wc_read_qp_num(cq) == qb->qp_num &&
		      ibv_wc_read_src_qp(cq) == c.a->qp_num &&
		      (ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_IMM),
	      "cq_ex fields");
	CHECK(ibv_next_poll(cq) == ENOENT, "one completion only");
	ibv_end_poll(cq);
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&rb);
	drain(&A);
	drain(&B);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	return ret;
}

/* ---- error semantics ----------------------------------------------------------------------- */

static int qp_state_of(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* After an error completion: everything else posted flushes, and the QP is in ERROR. */
static int after_error(struct ibv_qp *qp, struct ibv_cq *cq, struct buf *b)
{
	ENSURE(qp_state_of(qp) == IBV_QPS_ERR, "QP not in ERROR: %d", qp_state_of(qp));
	ENSURE(!post_one(qp, IBV_WR_SEND, b, 0, 1, 0, 0, 999, 0), "post to a QP in error");
	if (expect_wc(cq, IBV_WC_WR_FLUSH_ERR, -1, 999, "flush"))
		return -1;
	return 0;
}

/* One request with a bad remote key, range or right: the requester gets the error, the
 * target memory is untouched, both QPs end in error, later work flushes. */
static int remote_error(enum ibv_wr_opcode op, size_t len, int target_access, int qp_access,
			int key_delta, long range_delta, enum ibv_wc_status want, const char *what)
{
	struct qpcfg cb = RC;
	struct buf sa = { 0 }, tb = { 0 }, rb = { 0 };
	struct conn c = { 0 };
	int ret = -1;
	uint64_t raddr;

	cb.access = qp_access;
	if (connect_pair(&c, &RC, &cb) || buf_new(&A, &sa, len, ALL_ACCESS) ||
	    buf_new(&B, &tb, len, target_access) || buf_new(&B, &rb, 4096, ALL_ACCESS))
		FAIL("setup");
	fill(&sa, 61);
	fill(&tb, 62);
	CHECK(!post_recv(c.b, &rb, 0, 4096, 5), "recv");
	raddr = (uintptr_t)tb.p + range_delta;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		CHECK(!post_atomic(c.a, op, &sa, 0, raddr, tb.mr->rkey + key_delta, 1, 0, 1),
		      "post");
	else
		CHECK(!post_one(c.a, op, &sa, 0, len, raddr, tb.mr->rkey + key_delta, 1, 0),
		      "post");
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 1, 0, 0, 2, 0), "post after");
	if (expect_wc(A.scq, want, -1, 1, what) ||
	    expect_wc(A.scq, IBV_WC_WR_FLUSH_ERR, -1, 2, "the next WR flushes"))
		goto out;
	if (check_bytes(&tb, 62, 0, NULL, 0, "target memory must be untouched"))
		goto out;
	if (after_error(c.a, A.scq, &sa))
		goto out;
	/* the responder QP went to error too: its posted receive flushes */
	{
		struct ibv_wc wc;
		uint64_t end = now_ms() + 5000;

		while (qp_state_of(c.b) != IBV_QPS_ERR && now_ms() < end)
			ibv_poll_cq(B.rcq, 1, &wc);
		CHECK(qp_state_of(c.b) == IBV_QPS_ERR, "responder QP not in ERROR");
	}
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&tb);
	buf_free(&rb);
	drain(&A);
	drain(&B);
	return ret;
}

static int t_err_rkey(void)
{
	/* short (ring) and long (direct placement) writes, reads, atomics */
	return remote_error(IBV_WR_RDMA_WRITE, 100, ALL_ACCESS, ALL_ACCESS, 0x100, 0,
			    IBV_WC_REM_ACCESS_ERR, "write, bad rkey") ||
	       remote_error(IBV_WR_RDMA_WRITE, 1 << 16, ALL_ACCESS, ALL_ACCESS, 1, 0,
			    IBV_WC_REM_ACCESS_ERR, "long write, bad rkey") ||
	       remote_error(IBV_WR_RDMA_READ, 100, ALL_ACCESS, ALL_ACCESS, 0x300, 0,
			    IBV_WC_REM_ACCESS_ERR, "read, bad rkey") ||
	       remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, 8, ALL_ACCESS, ALL_ACCESS, 0x100, 0,
			    IBV_WC_REM_ACCESS_ERR, "atomic, bad rkey");
}

static int t_err_range(void)
{
	return remote_error(IBV_WR_RDMA_WRITE, 100, ALL_ACCESS, ALL_ACCESS, 0, 1,
			    IBV_WC_REM_ACCESS_ERR, "write past the end") ||
	       remote_error(IBV_WR_RDMA_WRITE, 1 << 16, ALL_ACCESS, ALL_ACCESS, 0, 4096,
			    IBV_WC_REM_ACCESS_ERR, "long write past the end") ||
	       remote_error(IBV_WR_RDMA_WRITE, 100, ALL_ACCESS, ALL_ACCESS, 0, -1,
			    IBV_WC_REM_ACCESS_ERR, "write before the start") ||
	       remote_error(IBV_WR_RDMA_READ, 100, ALL_ACCESS, ALL_ACCESS, 0, 8,
			    IBV_WC_REM_ACCESS_ERR, "read past the end") ||
	       remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, 8, ALL_ACCESS, ALL_ACCESS, 0, 8,
			    IBV_WC_REM_ACCESS_ERR, "atomic past the end") ||
	       remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, 16, ALL_ACCESS, ALL_ACCESS, 0, 4,
			    IBV_WC_REM_INV_REQ_ERR, "misaligned atomic");
}

static int t_err_access(void)
{
	const int lw = IBV_ACCESS_LOCAL_WRITE;

	return remote_error(IBV_WR_RDMA_WRITE, 100, lw | IBV_ACCESS_REMOTE_READ, ALL_ACCESS, 0, 0,
			    IBV_WC_REM_ACCESS_ERR, "write to a read-only region") ||
	       remote_error(IBV_WR_RDMA_WRITE, 1 << 16, lw | IBV_ACCESS_REMOTE_READ, ALL_ACCESS, 0,
			    0, IBV_WC_REM_ACCESS_ERR, "long write to a read-only region") ||
	       remote_error(IBV_WR_RDMA_READ, 100, lw | IBV_ACCESS_REMOTE_WRITE, ALL_ACCESS, 0, 0,
			    IBV_WC_REM_ACCESS_ERR, "read of a write-only region") ||
	       remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, 8, lw | IBV_ACCESS_REMOTE_WRITE,
			    ALL_ACCESS, 0, 0, IBV_WC_REM_ACCESS_ERR, "atomic without the right") ||
	       remote_error(IBV_WR_RDMA_WRITE, 100, ALL_ACCESS, lw | IBV_ACCESS_REMOTE_READ, 0, 0,
			    IBV_WC_REM_ACCESS_ERR, "write to a QP that does not allow it") ||
	       remote_error(IBV_WR_RDMA_WRITE, 1 << 16, ALL_ACCESS, lw | IBV_ACCESS_REMOTE_READ, 0,
			    0, IBV_WC_REM_ACCESS_ERR, "long write to a QP that does not allow it");
}

static int t_err_lkey(void)
{
	struct buf sa = { 0 }, sb = { 0 };
	struct conn c = { 0 };
	int ret = -1;

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &sa, 256, ALL_ACCESS) ||
	    buf_new(&B, &sb, 256, ALL_ACCESS))
		FAIL("setup");
	fill(&sb, 71);
	{
		struct ibv_sge sge = { (uintptr_t)sa.p, 100, sa.mr->lkey + 0x100 };
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)sb.p;
		wr.wr.rdma.rkey = sb.mr->rkey;
		CHECK(!ibv_post_send(c.a, &wr, &bad), "post");
		CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 1, 0, 0, 2, 0), "post after");
		if (expect_wc(A.scq, IBV_WC_LOC_PROT_ERR, -1, 1, "bad lkey") ||
		    expect_wc(A.scq, IBV_WC_WR_FLUSH_ERR, -1, 2, "flush") ||
		    check_bytes(&sb, 71, 0, NULL, 0, "target untouched") ||
		    after_error(c.a, A.scq, &sa))
			goto out;
	}
	disconnect(&c);
	/* out of the region's range, and a READ into a region without local write */
	if (connect_pair(&c, &RC, &RC))
		FAIL("setup");
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 200, 100, 0, 0, 3, 0), "post");
	if (expect_wc(A.scq, IBV_WC_LOC_PROT_ERR, -1, 3, "sge past the region"))
		goto out;
	disconnect(&c);
	{
		struct buf ro = { 0 };

		if (connect_pair(&c, &RC, &RC) || buf_new(&A, &ro, 256, IBV_ACCESS_REMOTE_READ))
			FAIL("setup");
		CHECK(!post_one(c.a, IBV_WR_RDMA_READ, &ro, 0, 64, (uintptr_t)sb.p, sb.mr->rkey, 4, 0),
		      "post");
		ret = expect_wc(A.scq, IBV_WC_LOC_PROT_ERR, -1, 4, "read into a read-only region");
		buf_free(&ro);
	}
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&sb);
	drain(&A);
	drain(&B);
	return ret;
}

/* A receive too short for the message: the sender sees an invalid request, the receiver a
 * local length error, both QPs go to error. */
static int t_err_len(void)
{
	struct buf sa = { 0 }, rb = { 0 };
	struct conn c = { 0 };
	struct ibv_wc wc;
	int ret = -1;

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &sa, 200, ALL_ACCESS) ||
	    buf_new(&B, &rb, 200, ALL_ACCESS))
		FAIL("setup");
	fill(&rb, 81);
	CHECK(!post_recv(c.b, &rb, 0, 50, 7), "recv");
	CHECK(!post_recv(c.b, &rb, 100, 100, 8), "recv");
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 100, 0, 0, 1, 0), "send");
	if (expect_wc(A.scq, IBV_WC_REM_INV_REQ_ERR, -1, 1, "too long for the receive"))
		goto out;
	CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1 && wc.wr_id == 7 &&
		      wc.status == IBV_WC_LOC_LEN_ERR, "receiver: %s", ibv_wc_status_str(wc.status));
	CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1 && wc.wr_id == 8 &&
		      wc.status == IBV_WC_WR_FLUSH_ERR, "the next receive flushes");
	CHECK(qp_state_of(c.b) == IBV_QPS_ERR && qp_state_of(c.a) == IBV_QPS_ERR, "states");
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&rb);
	drain(&A);
	drain(&B);
	return ret;
}

/* No receive posted: rnr_retry < 7 gives up, 7 waits for one. */
static int t_rnr(void)
{
	struct qpcfg ca = RC;
	struct buf sa = { 0 }, rb = { 0 };
	struct conn c = { 0 };
	struct ibv_wc wc;
	int ret = -1;
	uint64_t t0;

	ca.rnr_retry = 2;
	ca.min_rnr_timer = 1;	/* 0.01 ms */
	if (connect_pair(&c, &ca, &ca) || buf_new(&A, &sa, 64, ALL_ACCESS) ||
	    buf_new(&B, &rb, 64, ALL_ACCESS))
		FAIL("setup");
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 8, 0, 0, 1, 0), "send");
	if (expect_wc(A.scq, IBV_WC_RNR_RETRY_EXC_ERR, -1, 1, "rnr retries exceeded"))
		goto out;
	CHECK(qp_state_of(c.a) == IBV_QPS_ERR, "requester in ERROR");
	disconnect(&c);

	ca.rnr_retry = 7;
	ca.min_rnr_timer = 12;	/* 0.64 ms */
	if (connect_pair(&c, &ca, &ca))
		FAIL("setup");
	fill(&sa, 91);
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 64, 0, 0, 2, 0), "send");
	t0 = now_ms();
	CHECK(wait_wc(A.scq, 1, &wc, 200) == 0, "completed without a receive");
	CHECK(!post_recv(c.b, &rb, 0, 64, 3), "recv");
	if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_SEND, 2, "rnr_retry 7 waits"))
		goto out;
	CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1 && wc.status == IBV_WC_SUCCESS, "recv");
	CHECK(!memcmp(rb.p, sa.p, 64), "data after RNR");
	note("waited %llu ms for the receive", (unsigned long long)(now_ms() - t0));
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	buf_free(&rb);
	drain(&A);
	drain(&B);
	return ret;
}

/* The peer QP is gone: requests go unanswered, the transport timer retries and gives up. */
static int t_retry(void)
{
	struct qpcfg ca = RC;
	struct buf sa = { 0 };
	struct conn c = { 0 };
	int ret = -1;

	ca.timeout = 8;		/* ~1 ms */
	ca.retry_cnt = 2;
	if (connect_pair(&c, &ca, &ca) || buf_new(&A, &sa, 64, ALL_ACCESS))
		FAIL("setup");
	ibv_destroy_qp(c.b);
	c.b = NULL;
	CHECK(!post_one(c.a, IBV_WR_SEND, &sa, 0, 8, 0, 0, 1, 0), "send");
	if (expect_wc(A.scq, IBV_WC_RETRY_EXC_ERR, -1, 1, "transport retries exceeded"))
		goto out;
	ret = after_error(c.a, A.scq, &sa);
out:
	disconnect(&c);
	buf_free(&sa);
	drain(&A);
	drain(&B);
	return ret;
}

/* IB's QP state machine: invalid transitions and missing attributes are EINVAL. */
static int t_states(void)
{
	struct ibv_qp *qp = make_qp(&A, &RC);
	struct ibv_qp_attr a = { 0 };
	struct buf b = { 0 };
	int ret = -1;

	CHECK(qp, "qp");
	if (buf_new(&A, &b, 64, ALL_ACCESS))
		FAIL("setup");
	CHECK(qp_state_of(qp) == IBV_QPS_RESET, "starts in RESET");
	CHECK(post_one(qp, IBV_WR_SEND, &b, 0, 1, 0, 0, 1, 0) == EINVAL, "send in RESET");
	a.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RESET -> RTS");
	a.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "INIT without its attributes");
	CHECK(!to_init(qp, &RC), "RESET -> INIT");
	a.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RTR without its attributes");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 2;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT) == EINVAL, "port 2");
	a.qp_state = IBV_QPS_ERR;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "-> ERR");
	CHECK(qp_state_of(qp) == IBV_QPS_ERR, "in ERR");
	a.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "ERR -> RTS");
	a.qp_state = IBV_QPS_RESET;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "ERR -> RESET");
	CHECK(qp_state_of(qp) == IBV_QPS_RESET, "back in RESET");
	ret = 0;
out:
	buf_free(&b);
	ibv_destroy_qp(qp);
	return ret;
}

/* A fenced WR waits for the READ before it: the READ sees the data from before. */
static int t_fence(void)
{
	struct buf la = { 0 }, tb = { 0 };
	struct conn c = { 0 };
	int ret = -1;
	uint8_t before[64];

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &la, 128, ALL_ACCESS) ||
	    buf_new(&B, &tb, 64, ALL_ACCESS))
		FAIL("setup");
	fill(&tb, 101);
	fill(&la, 102);
	memcpy(before, tb.p, 64);
	CHECK(!post_one(c.a, IBV_WR_RDMA_READ, &la, 64, 64, (uintptr_t)tb.p, tb.mr->rkey, 1, 0),
	      "read");
	CHECK(!post_one(c.a, IBV_WR_RDMA_WRITE, &la, 0, 64, (uintptr_t)tb.p, tb.mr->rkey, 2,
			IBV_SEND_FENCE), "fenced write");
	if (expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 1, "read") ||
	    expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 2, "write"))
		goto out;
	CHECK(!memcmp(la.p + 64, before, 64), "the read saw the later write");
	CHECK(!memcmp(tb.p, la.p, 64), "write");
	ret = 0;
out:
	disconnect(&c);
	buf_free(&la);
	buf_free(&tb);
	drain(&A);
	drain(&B);
	return ret;
}

/* ---- registration against concurrent stores ----------------------------------------------- */

struct hammer {
	volatile uint64_t *words;	/* one per page */
	size_t n;
	atomic_bool stop;
	uint64_t lost, stores;
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;
	uint64_t seq = 0;

	while (!atomic_load_explicit(&h->stop, memory_order_relaxed)) {
		seq++;
		for (size_t i = 0; i < h->n; i++) {
			volatile uint64_t *w = h->words + i * 512;

			/* the word must still hold what this thread stored there last */
			if (*w != seq - 1)
				h->lost++;
			*w = seq;
			h->stores++;
		}
	}
	for (size_t i = 0; i < h->n; i++)
		h->lost += h->words[i * 512] != seq;
	return NULL;
}

/*
 * ibv_reg_mr with remote write moves the region's pages into a memfd for the PIO path, and
 * ibv_dereg_mr moves them back: a thread storing into the buffer meanwhile must lose nothing.
 */
static int t_reg_race(void)
{
	size_t len = 4 << 20;
	uint8_t *mem = aligned_alloc(4096, len);
	struct hammer h = { .words = (volatile uint64_t *)mem, .n = len / 4096 };
	pthread_t t;
	int ret = -1;
	bool running = false;

	CHECK(mem, "alloc");
	memset(mem, 0, len);
	CHECK(!pthread_create(&t, NULL, hammer_main, &h), "thread");
	running = true;
	for (int r = 0; r < 40; r++) {
		struct ibv_mr *mr = ibv_reg_mr(A.pd, mem + 8, len - 16, ALL_ACCESS);

		CHECK(mr, "reg_mr: %s", strerror(errno));
		CHECK(!ibv_dereg_mr(mr), "dereg_mr");
	}
	atomic_store(&h.stop, true);
	pthread_join(t, NULL);
	running = false;
	note("%llu stores, %llu lost", (unsigned long long)h.stores, (unsigned long long)h.lost);
	CHECK(!h.lost, "%llu of %llu stores lost while the region was (de)registered",
	      (unsigned long long)h.lost, (unsigned long long)h.stores);
	ret = 0;
out:
	if (running) {
		atomic_store(&h.stop, true);
		pthread_join(t, NULL);
	}
	free(mem);
	return ret;
}

/* ---- the link goes down under running work ------------------------------------------------ */

struct writer {
	struct ibv_qp *qp;
	struct buf *src;
	uint64_t raddr;
	uint32_t rkey;
	size_t span, chunk;
	atomic_uint done;		/* successful WRITE completions */
	enum ibv_wc_status status;	/* the first error completion */
	int err;			/* post_send failed with it */
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t end = now_ms() + 60000;

	for (uint64_t i = 0; now_ms() < end; i++) {
		size_t off = (i * w->chunk) % w->span;
		struct ibv_wc wc;
		int r;

		/* a different pattern each round: every write changes the target */
		for (size_t k = 0; k < 8; k++)
			w->src->p[k] = (uint8_t)(i + k);
		r = post_one(w->qp, IBV_WR_RDMA_WRITE, w->src, 0, w->chunk, w->raddr + off,
			     w->rkey, i, 0);
		if (r) {
			w->err = r;
			return NULL;
		}
		if (wait_wc(w->qp->send_cq, 1, &wc, 30000) != 1) {
			w->err = ETIMEDOUT;	/* no completion at all: a hang */
			return NULL;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			w->status = wc.status;
			return NULL;
		}
		atomic_fetch_add(&w->done, 1);
	}
	w->err = ETIMEDOUT;
	return NULL;
}

/*
 * Not in the default run (tests/integration/ntb_peerdeath.sh runs it): the ntbd whose pid is
 * in NTB_KILL_PID (either end's) is killed with SIGKILL while A streams RDMA WRITEs into B's
 * memory and B waits for receives. Both ends must get error completions (never a hang, never
 * a success after the link is gone), new QPs must be refused, and once both ends have seen
 * the link go, B's memory must not change any more: nobody writes into it.
 */
static int t_linkdown(void)
{
	const char *pids = getenv("NTB_KILL_PID");
	struct writer w = { 0 };
	struct buf sa = { 0 }, tb = { 0 }, rb = { 0 };
	struct conn c = { 0 };
	struct ibv_wc wc[4];
	struct ibv_qp *qp = NULL;
	uint8_t *snap = NULL;
	pthread_t t;
	bool running = false;
	uint64_t t0;
	int ret = -1, got = 0;

	CHECK(pids && atoi(pids) > 0, "NTB_KILL_PID: the ntbd to kill");
	CHECK(!connect_pair(&c, &RC, &RC), "connect");
	CHECK(!buf_new(&A, &sa, 65536, ALL_ACCESS) && !buf_new(&B, &tb, 1 << 20, ALL_ACCESS) &&
	      !buf_new(&B, &rb, 4096, ALL_ACCESS), "buffers");
	snap = malloc(tb.len + 2 * GUARD);
	CHECK(snap, "alloc");
	for (int i = 0; i < 4; i++)
		CHECK(!post_recv(c.b, &rb, (size_t)i * 64, 64, 100 + i), "post_recv");
	w = (struct writer){ .qp = c.a, .src = &sa, .raddr = (uintptr_t)tb.p,
			     .rkey = tb.mr->rkey, .span = tb.len, .chunk = 65536 };
	CHECK(!pthread_create(&t, NULL, writer_main, &w), "thread");
	running = true;
	for (t0 = now_ms(); atomic_load(&w.done) < 50 && !w.err && w.status == IBV_WC_SUCCESS &&
			    now_ms() - t0 < 20000;)
		usleep(1000);
	CHECK(atomic_load(&w.done) >= 50, "the writes did not run (%u done, %s, %s)",
	      atomic_load(&w.done), strerror(w.err), ibv_wc_status_str(w.status));
	note("%u writes before the kill", atomic_load(&w.done));
	CHECK(!kill(atoi(pids), SIGKILL), "kill %s: %s", pids, strerror(errno));

	/* B: every receive flushed (its QP is in ERROR), within a generous bound */
	got = wait_wc(B.rcq, 4, wc, 20000);
	CHECK(got == 4, "B: %d of 4 receives completed after the link went down", got);
	for (int i = 0; i < 4; i++)
		CHECK(wc[i].status == IBV_WC_WR_FLUSH_ERR, "B: receive %llu: %s",
		      (unsigned long long)wc[i].wr_id, ibv_wc_status_str(wc[i].status));
	/* A: the stream ends with an error completion */
	pthread_join(t, NULL);
	running = false;
	CHECK(!w.err, "A: writer: %s", strerror(w.err));
	CHECK(w.status == IBV_WC_RETRY_EXC_ERR || w.status == IBV_WC_WR_FLUSH_ERR,
	      "A: the stream ended with %s", ibv_wc_status_str(w.status));
	note("A: %u writes, then %s", atomic_load(&w.done), ibv_wc_status_str(w.status));
	CHECK(qp_state_of(c.a) == IBV_QPS_ERR && qp_state_of(c.b) == IBV_QPS_ERR,
	      "QP states %d %d", qp_state_of(c.a), qp_state_of(c.b));
	/* work posted now fails too: nothing pretends to reach a peer that is gone */
	CHECK(!post_one(c.b, IBV_WR_SEND, &rb, 0, 8, 0, 0, 7, 0), "post_send on B");
	if (expect_wc(B.scq, IBV_WC_WR_FLUSH_ERR, -1, 7, "B: send after the link went down"))
		goto out;
	qp = make_qp(&B, &RC);
	CHECK(!qp, "B: a QP was created on a context whose link session ended");
	qp = make_qp(&A, &RC);
	CHECK(!qp, "A: a QP was created on a context whose link session ended");

	/*
	 * B's memory: a write that checked the link just before it went could still be
	 * finishing (generous grace), after that nothing may store into it.
	 */
	usleep(300000);
	memcpy(snap, tb.mem, tb.len + 2 * GUARD);
	usleep(700000);
	CHECK(!memcmp(snap, tb.mem, tb.len + 2 * GUARD),
	      "B's memory changed after both ends saw the link go down");
	for (size_t i = 0; i < GUARD; i++)
		CHECK(tb.mem[i] == pat(0x5a5a, i) && tb.mem[GUARD + tb.len + i] ==
		      pat(0x5a5a, GUARD + tb.len + i), "B: guard byte %zu written", i);
	ret = 0;
out:
	if (running) {
		pthread_join(t, NULL);
	}
	if (qp)
		ibv_destroy_qp(qp);
	disconnect(&c);
	buf_free(&sa);
	buf_free(&tb);
	buf_free(&rb);
	free(snap);
	drain(&A);
	drain(&B);
	return ret;
}

/*
 * Not a test: die by SIGKILL with both contexts attached (each holds a DMA channel, whose
 * engine slot in the peer's IOMMU only ntbd can give back). For tests/integration scripts.
 */
static int t_die(void)
{
	fflush(NULL);
	kill(getpid(), SIGKILL);
	return -1;
}

/* ---- the extended API: ibv_wr_*, ibv_rereg_mr ---------------------------------------------- */

static struct ibv_qp *make_qp_ex(struct end *e, const struct qpcfg *c, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = e->scq, .recv_cq = e->rcq, .qp_type = c->type, .pd = e->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
		.cap = { .max_send_wr = c->max_send_wr, .max_recv_wr = c->max_recv_wr,
			 .max_send_sge = c->max_sge, .max_recv_sge = c->max_sge,
			 .max_inline_data = c->max_inline },
	};
	struct ibv_qp *qp = ibv_create_qp_ex(e->ctx, &ia);

	if (!qp && errno != EOPNOTSUPP)
		fprintf(stderr, "create_qp_ex on %s: %s\n", e->name, strerror(errno));
	return qp;
}

/*
 * Every ibv_wr_* operation of an RC QP, several in one ibv_wr_start .. complete, every byte
 * checked (ATOMIC WRITE too, and misaligned); a chain with a bad work request posts nothing
 * and says why; ibv_wr_abort posts nothing; a UD QP with ibv_wr_set_ud_addr.
 */
static int t_qpex(void)
{
	const uint64_t rc_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE;
	struct qpcfg cfg = RC;
	struct buf sa = { 0 }, sb = { 0 }, ra = { 0 };
	struct ibv_qp *a = NULL, *b = NULL, *ua = NULL, *ub = NULL;
	struct ibv_qp_ex *x;
	struct ibv_sge sl[3];
	struct ibv_data_buf db[2];
	struct ibv_wc wc[8];
	uint8_t inl[40];
	uint64_t *word;
	int ret = -1, n;

	CHECK(!make_qp_ex(&A, &cfg, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO) &&
		      errno == EOPNOTSUPP, "TSO on an RC QP: EOPNOTSUPP");
	a = make_qp_ex(&A, &cfg, rc_ops);
	b = make_qp(&B, &cfg);
	CHECK(a && b && !to_init(a, &cfg) && !to_init(b, &cfg) &&
		      !to_rtr_rts(a, &cfg, &B, b->qp_num) && !to_rtr_rts(b, &cfg, &A, a->qp_num),
	      "connect");
	x = ibv_qp_to_qp_ex(a);
	CHECK(x, "ibv_qp_to_qp_ex");
	CHECK(!buf_new(&A, &sa, 65536, ALL_ACCESS) && !buf_new(&B, &sb, 65536, ALL_ACCESS) &&
		      !buf_new(&A, &ra, 65536, ALL_ACCESS), "buffers");
	fill(&sa, 31);
	fill(&sb, 32);
	fill(&ra, 33);
	CHECK(!post_recv(b, &sb, 0, 1000, 1) && !post_recv(b, &sb, 1000, 1000, 2) &&
		      !post_recv(b, &sb, 2000, 100, 3) && !post_recv(b, &sb, 3000, 100, 4), "recv");
	/* one chain: SEND of 3 pieces, SEND_WITH_IMM inline of 2 pieces, WRITE, WRITE_WITH_IMM */
	ibv_wr_start(x);
	x->wr_id = 10;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	sl[0] = (struct ibv_sge){ (uintptr_t)sa.p, 100, sa.mr->lkey };
	sl[1] = (struct ibv_sge){ (uintptr_t)sa.p + 500, 1, sa.mr->lkey };
	sl[2] = (struct ibv_sge){ (uintptr_t)sa.p + 4096, 700, sa.mr->lkey };
	ibv_wr_set_sge_list(x, 3, sl);
	x->wr_id = 11;
	ibv_wr_send_imm(x, htonl(0x1234));
	memcpy(inl, sa.p + 10000, sizeof(inl));
	db[0] = (struct ibv_data_buf){ inl, 30 };
	db[1] = (struct ibv_data_buf){ inl + 30, 10 };
	ibv_wr_set_inline_data_list(x, 2, db);
	x->wr_id = 12;
	ibv_wr_rdma_write(x, sb.mr->rkey, (uintptr_t)sb.p + 20000);
	ibv_wr_set_sge(x, sa.mr->lkey, (uintptr_t)sa.p + 30000, 5000);
	x->wr_id = 13;
	ibv_wr_rdma_write_imm(x, sb.mr->rkey, (uintptr_t)sb.p + 40000, htonl(0x5678));
	ibv_wr_set_inline_data(x, inl, 8);
	CHECK(!ibv_wr_complete(x), "wr_complete: %s", strerror(errno));
	memset(inl, 0, sizeof(inl));	/* inline: copied when set */
	CHECK(wait_wc(A.scq, 4, wc, 5000) == 4, "4 send completions");
	for (int i = 0; i < 4; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == (uint64_t)(10 + i),
		      "completion %d: %s id %llu", i, ibv_wc_status_str(wc[i].status),
		      (unsigned long long)wc[i].wr_id);
	CHECK(wait_wc(B.rcq, 3, wc, 5000) == 3, "3 receive completions");
	CHECK(wc[0].wr_id == 1 && wc[0].byte_len == 801 && wc[1].wr_id == 2 &&
		      wc[1].byte_len == 40 && (wc[1].wc_flags & IBV_WC_WITH_IMM) &&
		      wc[1].imm_data == htonl(0x1234) && wc[2].wr_id == 3 &&
		      wc[2].opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc[2].imm_data == htonl(0x5678),
	      "receives");
	{
		/* what b's buffer must hold now, byte by byte */
		uint8_t *want = malloc(65536);

		CHECK(want, "malloc");
		memcpy(want, sb.p, 65536);
		for (size_t k = 0; k < 65536; k++)
			want[k] = pat(32, k + GUARD);
		memcpy(want, sa.p, 100);
		memcpy(want + 100, sa.p + 500, 1);
		memcpy(want + 101, sa.p + 4096, 700);
		memcpy(want + 1000, sa.p + 10000, 40);
		memcpy(want + 20000, sa.p + 30000, 5000);
		memcpy(want + 40000, sa.p + 10000, 8);
		n = check_bytes(&sb, 32, 0, want, 65536, "ibv_wr_* data");
		free(want);
		if (n)
			goto out;
	}
	/* READ and both atomics in one chain */
	word = (uint64_t *)(sb.p + 60000);
	*word = 100;
	ibv_wr_start(x);
	x->wr_id = 20;
	ibv_wr_rdma_read(x, sb.mr->rkey, (uintptr_t)sb.p + 50000);
	ibv_wr_set_sge(x, ra.mr->lkey, (uintptr_t)ra.p + 3, 4000);
	x->wr_id = 21;
	ibv_wr_atomic_fetch_add(x, sb.mr->rkey, (uintptr_t)word, 5);
	ibv_wr_set_sge(x, ra.mr->lkey, (uintptr_t)ra.p + 8000, 8);
	x->wr_id = 22;
	ibv_wr_atomic_cmp_swp(x, sb.mr->rkey, (uintptr_t)word, 105, 7);
	ibv_wr_set_sge(x, ra.mr->lkey, (uintptr_t)ra.p + 8008, 8);
	CHECK(!ibv_wr_complete(x), "wr_complete");
	CHECK(wait_wc(A.scq, 3, wc, 5000) == 3, "3 completions");
	for (int i = 0; i < 3; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS, "completion %d", i);
	CHECK(*word == 7 && !memcmp(ra.p + 3, sb.p + 50000, 4000) &&
		      *(uint64_t *)(ra.p + 8000) == 100 && *(uint64_t *)(ra.p + 8008) == 105,
	      "read and atomics");
	/* ATOMIC WRITE: 8 bytes, copied when set; then one misaligned (invalid request) */
	{
		uint64_t v = 0x0123456789abcdefull;

		ibv_wr_start(x);
		x->wr_id = 25;
		ibv_wr_atomic_write(x, sb.mr->rkey, (uintptr_t)word, &v);
		v = 0;
		CHECK(!ibv_wr_complete(x), "atomic write");
		CHECK(!expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, 25, "atomic write"),
		      "-");
		CHECK(*word == 0x0123456789abcdefull, "atomic write data");
	}
	/* a bad work request (too many pieces) in the chain: nothing of it is posted */
	ibv_wr_start(x);
	x->wr_id = 30;
	ibv_wr_rdma_write(x, sb.mr->rkey, (uintptr_t)sb.p);
	ibv_wr_set_sge(x, sa.mr->lkey, (uintptr_t)sa.p, 10);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, cfg.max_sge + 1, sl);
	CHECK(ibv_wr_complete(x) == EINVAL, "a chain with too many pieces");
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, sa.mr->lkey, (uintptr_t)sa.p, 10);
	ibv_wr_abort(x);
	usleep(20000);
	CHECK(wait_wc(A.scq, 1, wc, 200) == 0 && wait_wc(B.rcq, 1, wc, 0) == 0,
	      "a refused or aborted chain posted something");
	{
		uint64_t v = 1;

		ibv_wr_start(x);
		x->wr_id = 31;
		ibv_wr_atomic_write(x, sb.mr->rkey, (uintptr_t)word + 4, &v);
		CHECK(!ibv_wr_complete(x), "atomic write");
		CHECK(!expect_wc(A.scq, IBV_WC_REM_INV_REQ_ERR, IBV_WC_ATOMIC_WRITE, 31,
				 "a misaligned atomic write"), "-");
		CHECK(*word == 0x0123456789abcdefull, "the misaligned atomic write wrote");
		/* b went to error with it: its last receive is flushed */
		CHECK(!expect_wc(B.rcq, IBV_WC_WR_FLUSH_ERR, -1, 4, "b's receive flushed"), "-");
	}
	/* UD: the address set on the work request */
	{
		struct qpcfg ud = cfg;
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 1 } };
		struct ibv_ah *ah;
		struct ibv_qp_ex *ux;

		ud.type = IBV_QPT_UD;
		ua = make_qp_ex(&A, &ud, IBV_QP_EX_WITH_SEND);
		ub = make_qp(&B, &ud);
		CHECK(ua && ub && !to_init(ua, &ud) && !to_init(ub, &ud) &&
			      !to_rtr_rts(ua, &ud, &B, 0) && !to_rtr_rts(ub, &ud, &A, 0), "UD QPs");
		aa.grh.dgid = B.gid;
		aa.grh.sgid_index = A.gid_index;
		ah = ibv_create_ah(A.pd, &aa);
		CHECK(ah, "create_ah");
		fill(&sb, 34);
		CHECK(!post_recv(ub, &sb, 0, 4096, 5), "ud recv");
		ux = ibv_qp_to_qp_ex(ua);
		ibv_wr_start(ux);
		ux->wr_id = 40;
		ux->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(ux);
		ibv_wr_set_ud_addr(ux, ah, ub->qp_num, 0x11111111);
		ibv_wr_set_sge(ux, sa.mr->lkey, (uintptr_t)sa.p + 777, 2000);
		n = ibv_wr_complete(ux);
		CHECK(!n, "ud wr_complete");
		CHECK(expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_SEND, 40, "ud send") == 0, "-");
		CHECK(wait_wc(B.rcq, 1, wc, 5000) == 1 && wc[0].status == IBV_WC_SUCCESS &&
			      wc[0].byte_len == 40 + 2000 && wc[0].src_qp == ua->qp_num,
		      "ud receive");
		{
			uint8_t want[40 + 2000];

			memcpy(want, sb.p, 40);	/* the GRH */
			memcpy(want + 40, sa.p + 777, 2000);
			n = check_bytes(&sb, 34, 0, want, sizeof(want), "ud data");
		}
		ibv_destroy_ah(ah);
		if (n)
			goto out;
	}
	ret = 0;
out:
	if (ua)
		ibv_destroy_qp(ua);
	if (ub)
		ibv_destroy_qp(ub);
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	buf_free(&sa);
	buf_free(&sb);
	buf_free(&ra);
	drain(&A);
	drain(&B);
	return ret;
}

/*
 * ibv_rereg_mr: the same keys over another buffer (a remote WRITE lands in the new one, the old
 * one stays as it was), without remote write access (the WRITE fails, nothing moves), and
 * back.
 */
static int t_rereg(void)
{
	struct conn c = { 0 };
	struct buf sa = { 0 }, tb = { 0 };
	uint8_t *other = NULL;
	uint32_t lkey, rkey;
	int ret = -1;

	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &sa, 8192, ALL_ACCESS) ||
	    buf_new(&B, &tb, 8192, ALL_ACCESS))
		FAIL("setup");
	/* aligned_alloc's size must be a multiple of the alignment (C11 7.22.3.1; ASan checks) */
	other = aligned_alloc(4096, (8192 + 2 * GUARD + 4095) & ~(size_t)4095);
	CHECK(other, "malloc");
	for (size_t i = 0; i < 8192 + 2 * GUARD; i++)
		other[i] = pat(41, i);
	fill(&sa, 40);
	fill(&tb, 42);
	lkey = tb.mr->lkey;
	rkey = tb.mr->rkey;
	CHECK(!ibv_rereg_mr(tb.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, other + GUARD, 8192, 0),
	      "rereg to another buffer: %s", strerror(errno));
	CHECK(tb.mr->lkey == lkey && tb.mr->rkey == rkey, "the keys changed");
	CHECK(!post_one(c.a, IBV_WR_RDMA_WRITE, &sa, 0, 6000, (uintptr_t)other + GUARD + 100, rkey,
			1, 0), "write");
	CHECK(!expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 1, "write to the new buffer"),
	      "-");
	for (size_t i = 0; i < 8192 + 2 * GUARD; i++) {
		uint8_t want = i >= GUARD + 100 && i < GUARD + 6100 ? sa.p[i - GUARD - 100] :
								       pat(41, i);

		CHECK(other[i] == want, "new buffer byte %zd", (ssize_t)i - GUARD);
	}
	if (check_bytes(&tb, 42, 0, NULL, 0, "the old buffer"))
		goto out;
	/* local write only: a remote write is refused and changes nothing */
	CHECK(!ibv_rereg_mr(tb.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			    IBV_ACCESS_LOCAL_WRITE), "rereg access");
	CHECK(!post_one(c.a, IBV_WR_RDMA_WRITE, &sa, 0, 100, (uintptr_t)other + GUARD, rkey, 2, 0),
	      "write");
	CHECK(!expect_wc(A.scq, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 2, "write refused"),
	      "-");
	CHECK(!memcmp(other + GUARD + 100, sa.p, 6000), "the refused write changed the buffer");
	CHECK(ibv_rereg_mr(tb.mr, 1 << 10, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT,
	      "rereg with an unknown flag");
	ret = 0;
out:
	disconnect(&c);
	buf_free(&sa);
	if (tb.mr)
		ibv_dereg_mr(tb.mr);
	tb.mr = NULL;
	buf_free(&tb);
	free(other);
	drain(&A);
	drain(&B);
	return ret;
}

/* ---- memory windows ------------------------------------------------------------------------ */

static int post_bind(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey, struct ibv_mr *mr,
		     uint64_t addr, uint64_t len, unsigned int access, uint64_t id)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = addr, .length = len,
							  .mw_access_flags = access };
	return ibv_post_send(qp, &wr, &bad);
}

/* LOCAL_INV (b NULL) or SEND_WITH_INV of len bytes of b. */
static int post_inv(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t rkey, struct buf *b,
		    size_t len, uint64_t id)
{
	struct ibv_sge sge = { b ? (uintptr_t)b->p : 0, (uint32_t)len, b ? b->mr->lkey : 0 };
	struct ibv_send_wr wr = { .wr_id = id, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = b ? &sge : NULL, .num_sge = b ? 1 : 0 }, *bad;

	wr.invalidate_rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* A write of len bytes at raddr under rkey from c's A side, completing with st. */
static int mw_write(struct conn *c, struct buf *sa, uint64_t raddr, uint32_t rkey, size_t len,
		    enum ibv_wc_status st, uint64_t id, const char *what)
{
	if (post_one(c->a, IBV_WR_RDMA_WRITE, sa, 0, len, raddr, rkey, id, 0)) {
		fprintf(stderr, "FAIL [%s] %s: post\n", cur_test, what);
		return -1;
	}
	return expect_wc(A.scq, st, IBV_WC_RDMA_WRITE, id, what);
}

/* Again after an error took the QPs down. */
static int reconnect(struct conn *c)
{
	disconnect(c);
	drain(&A);
	drain(&B);
	return connect_pair(c, &RC, &RC);
}

/*
 * Memory windows on B's memory, used by A: type 1 (ibv_bind_mw: writes and reads inside
 * the window, not past it; a rebind retires the old key), type 2 (bound by a work request to
 * one QP: another QP cannot use it; SEND_WITH_INV and LOCAL_INV invalidate it), the bind's
 * errors, a bad remote invalidation, and a region deregistered under a bound window.
 */
static int t_mw(void)
{
	const int mwacc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	struct conn c = { 0 }, c2 = { 0 };
	struct buf sa = { 0 }, tb = { 0 }, nb = { 0 };
	struct ibv_mw *m1 = NULL, *m2 = NULL;
	struct ibv_device_attr da;
	struct ibv_wc wc;
	uint32_t k, k2;
	int ret = -1;

	CHECK(!ibv_query_device(B.ctx, &da) && da.max_mw > 0 &&
		      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
		      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B), "windows reported");
	CHECK(!ibv_alloc_mw(B.pd, (enum ibv_mw_type)3) && errno == EINVAL, "a window of type 3");
	if (connect_pair(&c, &RC, &RC) || buf_new(&A, &sa, 65536, ALL_ACCESS) ||
	    buf_new(&B, &tb, 65536, mwacc) || buf_new(&B, &nb, 4096, IBV_ACCESS_LOCAL_WRITE))
		FAIL("setup");
	fill(&sa, 50);
	fill(&tb, 51);
	m1 = ibv_alloc_mw(B.pd, IBV_MW_TYPE_1);
	m2 = ibv_alloc_mw(B.pd, IBV_MW_TYPE_2);
	CHECK(m1 && m2 && m1->type == IBV_MW_TYPE_1 && m2->type == IBV_MW_TYPE_2,
	      "alloc_mw: %s", strerror(errno));
	/* type 1 */
	{
		struct ibv_mw_bind bind = {
			.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = tb.mr, .addr = (uintptr_t)tb.p + 4096, .length = 32768,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
							  IBV_ACCESS_REMOTE_READ } };

		k = m1->rkey;
		CHECK(!ibv_bind_mw(c.b, m1, &bind), "bind_mw: %s", strerror(errno));
		CHECK(m1->rkey != k && (m1->rkey >> 8) == (k >> 8), "the window's next key");
		CHECK(!expect_wc(B.scq, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 1, "bind type 1"), "-");
	}
	CHECK(!mw_write(&c, &sa, (uintptr_t)tb.p + 4196, m1->rkey, 20000, IBV_WC_SUCCESS, 2,
			"write through a type 1 window"), "-");
	if (check_bytes(&tb, 51, 4196, sa.p, 20000, "type 1 window"))
		goto out;
	CHECK(!post_one(c.a, IBV_WR_RDMA_READ, &sa, 30000, 32768, (uintptr_t)tb.p + 4096,
			m1->rkey, 3, 0), "read");
	CHECK(!expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 3,
			 "read through a type 1 window"), "-");
	CHECK(!memcmp(sa.p + 30000, tb.p + 4096, 32768), "read data");
	fill(&sa, 50);
	CHECK(!mw_write(&c, &sa, (uintptr_t)tb.p + 4096 + 32768 - 100, m1->rkey, 200,
			IBV_WC_REM_ACCESS_ERR, 4, "past the window's end"), "-");
	if (check_bytes(&tb, 51, 4196, sa.p, 20000, "after the refused write"))
		goto out;
	CHECK(!reconnect(&c), "reconnect");
	/* rebound: the old key names nothing */
	{
		struct ibv_mw_bind bind = {
			.wr_id = 5, .send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = tb.mr, .addr = (uintptr_t)tb.p, .length = 4096,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE } };

		k = m1->rkey;
		CHECK(!ibv_bind_mw(c.b, m1, &bind), "rebind");
		CHECK(!expect_wc(B.scq, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 5, "rebind"), "-");
		CHECK(!mw_write(&c, &sa, (uintptr_t)tb.p, k, 8, IBV_WC_REM_ACCESS_ERR, 6,
				"the old key after a rebind"), "-");
	}
	CHECK(!reconnect(&c), "reconnect");
	/* type 2, bound to c.b */
	k2 = ibv_inc_rkey(m2->rkey);
	CHECK(!post_bind(c.b, m2, k2, tb.mr, (uintptr_t)tb.p, 65536, IBV_ACCESS_REMOTE_WRITE, 10),
	      "post bind");
	CHECK(!expect_wc(B.scq, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 10, "bind type 2"), "-");
	CHECK(!mw_write(&c, &sa, (uintptr_t)tb.p, k2, 65536, IBV_WC_SUCCESS, 11,
			"64 KiB through a type 2 window"), "-");
	if (check_bytes(&tb, 51, 0, sa.p, 65536, "type 2 window"))
		goto out;
	CHECK(!connect_pair(&c2, &RC, &RC), "a second pair");
	if (post_one(c2.a, IBV_WR_RDMA_WRITE, &sa, 0, 8, (uintptr_t)tb.p, k2, 12, 0) ||
	    expect_wc(A.scq, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 12,
		      "a type 2 window from a QP it is not bound to"))
		FAIL("-");
	disconnect(&c2);
	drain(&B);
	/* SEND_WITH_INV */
	CHECK(!post_recv(c.b, &nb, 0, 4096, 13), "recv");
	CHECK(!post_inv(c.a, IBV_WR_SEND_WITH_INV, k2, &sa, 100, 14), "send with invalidate");
	CHECK(!expect_wc(A.scq, IBV_WC_SUCCESS, IBV_WC_SEND, 14, "send with invalidate"), "-");
	CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.wr_id == 13 && wc.opcode == IBV_WC_RECV && wc.byte_len == 100 &&
		      (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == k2,
	      "the receive of a send with invalidate");
	CHECK(!mw_write(&c, &sa, (uintptr_t)tb.p, k2, 8, IBV_WC_REM_ACCESS_ERR, 15,
			"a window invalidated by the sender"), "-");
	CHECK(!reconnect(&c), "reconnect");
	/* bound again under its next key, then LOCAL_INV */
	k2 = ibv_inc_rkey(k2);
	CHECK(!post_bind(c.b, m2, k2, tb.mr, (uintptr_t)tb.p + 8, 8, IBV_ACCESS_REMOTE_WRITE, 16) &&
		      !expect_wc(B.scq, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 16, "bind again"), "-");
	CHECK(!mw_write(&c, &sa, (uintptr_t)tb.p + 8, k2, 8, IBV_WC_SUCCESS, 17, "write"), "-");
	CHECK(!post_inv(c.b, IBV_WR_LOCAL_INV, k2, NULL, 0, 18) &&
		      !expect_wc(B.scq, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 18, "local invalidate"),
	      "-");
	CHECK(!mw_write(&c, &sa, (uintptr_t)tb.p + 8, k2, 8, IBV_WC_REM_ACCESS_ERR, 19,
			"a window invalidated locally"), "-");
	CHECK(!reconnect(&c), "reconnect");
	/* a remote invalidation of what is no type 2 window bound to the QP */
	CHECK(!post_recv(c.b, &nb, 0, 4096, 20) &&
		      !post_inv(c.a, IBV_WR_SEND_WITH_INV, m1->rkey, &sa, 10, 21), "post");
	CHECK(!expect_wc(A.scq, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND, 21,
			 "invalidating a type 1 window"), "-");
	CHECK(wait_wc(B.rcq, 1, &wc, 5000) == 1 && wc.wr_id == 20 &&
		      wc.status == IBV_WC_REM_INV_REQ_ERR, "its receive");
	CHECK(!reconnect(&c), "reconnect");
	/* bind errors: the region without MW_BIND, a type 1 window by a work request */
	CHECK(!post_bind(c.b, m2, ibv_inc_rkey(k2), nb.mr, (uintptr_t)nb.p, 8,
			 IBV_ACCESS_REMOTE_WRITE, 22) &&
		      !expect_wc(B.scq, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW, 22,
				 "a region without MW_BIND"), "-");
	CHECK(!reconnect(&c), "reconnect");
	CHECK(!post_bind(c.b, m1, ibv_inc_rkey(m1->rkey), tb.mr, (uintptr_t)tb.p, 8,
			 IBV_ACCESS_REMOTE_WRITE, 23) &&
		      !expect_wc(B.scq, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW, 23,
				 "a type 1 window bound by a work request"), "-");
	CHECK(!reconnect(&c), "reconnect");
	/* the region deregistered under a bound window: the window grants nothing */
	k2 = ibv_inc_rkey(k2);
	CHECK(!post_bind(c.b, m2, k2, tb.mr, (uintptr_t)tb.p, 4096, IBV_ACCESS_REMOTE_WRITE, 24) &&
		      !expect_wc(B.scq, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 24, "bind"), "-");
	CHECK(!ibv_dereg_mr(tb.mr), "dereg_mr under a bound window");
	tb.mr = NULL;
	CHECK(!mw_write(&c, &sa, (uintptr_t)tb.p, k2, 8, IBV_WC_REM_ACCESS_ERR, 25,
			"a window whose region is gone"), "-");
	CHECK(!ibv_dealloc_mw(m1) && !ibv_dealloc_mw(m2), "dealloc_mw");
	m1 = m2 = NULL;
	ret = 0;
out:
	disconnect(&c);
	disconnect(&c2);
	if (m1)
		ibv_dealloc_mw(m1);
	if (m2)
		ibv_dealloc_mw(m2);
	buf_free(&sa);
	buf_free(&tb);
	buf_free(&nb);
	drain(&A);
	drain(&B);
	return ret;
}

/* registrations the kernel could not pin fail with EFAULT (tests/lib/reg_mr_fault.h) */
static int t_reg_fault(void)
{
	int bad = bv_reg_mr_fault_test(A.pd);

	if (!B.shared)
		bad += bv_reg_mr_fault_test(B.pd);
	return bad ? -1 : 0;
}

/* ---- main --------------------------------------------------------------------------------------- */

static const struct test {
	const char *name;
	int (*fn)(void);
} tests[] = {
	{ "rc_ops", t_rc_ops },
	{ "uc_ops", t_uc_ops },
	{ "atomics", t_atomics },
	{ "sg", t_sg },
	{ "inline", t_inline },
	{ "unsignaled", t_unsignaled },
	{ "ud", t_ud },
	{ "srq", t_srq },
	{ "events", t_events },
	{ "cq_ex", t_cq_ex },
	{ "fence", t_fence },
	{ "states", t_states },
	{ "err_lkey", t_err_lkey },
	{ "err_rkey", t_err_rkey },
	{ "err_range", t_err_range },
	{ "err_access", t_err_access },
	{ "err_len", t_err_len },
	{ "rnr", t_rnr },
	{ "retry", t_retry },
	{ "reg_race", t_reg_race },
	{ "qpex", t_qpex },
	{ "rereg", t_rereg },
	{ "mw", t_mw },
	{ "reg_fault", t_reg_fault },
	{ "die", t_die },	/* only when named */
	{ "linkdown", t_linkdown },	/* only when named */
};

int main(int argc, char **argv)
{
	const char *da = "ntb_0", *db = "ntb_1";
	int opt, ran = 0;
	bool one = false;

	while ((opt = getopt(argc, argv, "a:b:1v")) != -1) {
		switch (opt) {
		case 'a':
			da = optarg;
			break;
		case 'b':
			db = optarg;
			break;
		case '1':
			one = true;	/* both ends in one context: loopback within it */
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-a DEV] [-b DEV] [-1] [-v] [TEST...]\n"
				"  -1: one context for both ends (B's device is A's)\n", argv[0]);
			return 2;
		}
	}
	for (int j = optind; j < argc; j++) {
		size_t i = 0;

		while (i < sizeof(tests) / sizeof(tests[0]) && strcmp(argv[j], tests[i].name))
			i++;
		if (i == sizeof(tests) / sizeof(tests[0])) {
			fprintf(stderr, "no test '%s'\n", argv[j]);
			return 2;
		}
	}
	if (open_end(&A, da, NULL) || open_end(&B, one ? da : db, one ? A.ctx : NULL))
		return 1;
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool sel = optind == argc && tests[i].fn != t_die && tests[i].fn != t_linkdown;
		uint64_t t0;
		int r;

		for (int j = optind; j < argc; j++)
			sel |= !strcmp(argv[j], tests[i].name);
		if (!sel)
			continue;
		cur_test = tests[i].name;
		t0 = now_ms();
		r = tests[i].fn();
		printf("%s %s (%llu ms)\n", r ? "FAIL" : "ok  ", tests[i].name,
		       (unsigned long long)(now_ms() - t0));
		fflush(stdout);
		failures += r != 0;
		ran++;
	}
	close_end(&B);
	close_end(&A);
	if (!ran) {
		fprintf(stderr, "no such test\n");
		return 2;
	}
	printf("%d of %d tests failed\n", failures, ran);
	return failures ? 1 : 0;
}
