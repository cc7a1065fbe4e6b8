// SPDX-License-Identifier: MIT
/*
 * ConnectX-4 model: memory keys changed by the send queue, and the CQ resize. Two modelled
 * ports on loopback addresses, driven through BAR0 and DMA memory only (tdrv.c, tverbs.c):
 *
 *  - memory windows: KLM keys created free; UMR WQEs (kernel-abi/cx4_prm_umr.h, the segments
 *    rdma-core's set_bind_wr builds) bind them, type 1 for any QP and type 2 to one QP; RDMA
 *    through a window moves every byte of it and nothing around it; after a local
 *    invalidation, a zero-length rebind, a peer's SEND_WITH_INV or a bind error the window
 *    gives REMOTE_ACCESS (the peer's NAK) and every byte of the region stays as it was;
 *  - every bind error a user QP can make fails the UMR with MW_BIND_ERR;
 *  - SEND_WITH_INV: the receive completes with RESP_SEND_INV and the key, or in error
 *    (REMOTE_INVAL_REQ on both sides) for a key that may not be invalidated;
 *  - the driver's REG_UMR QP changes a region's PD and access in place;
 *  - MODIFY_CQ resize: the RESIZE CQE ends the old ring, the CQEs before it are copied, new
 *    ones land in the new ring; a new size below what is outstanding is refused.
 */
#include <arpa/inet.h>
#include <string.h>

#include "tverbs.h"

#define WAIT 5000
#define MW_KEY_BASE 0x60

/* CX4_MODEL_PCAP=prefix: device A of each pair captures the wire (model_pcap_test.sh). */
static void dev_up(struct tside *s, bool pcap)
{
	struct cx4_model_config c = {0};
	const char *p = getenv("CX4_MODEL_PCAP");
	static char path[512];
	static int n;

	memset(s, 0, sizeof(*s));
	if (pcap && p) {
		snprintf(path, sizeof(path), "%s-mkey-%s-%d.pcap", p, t_name, n++);
		c.pcap_path = path;
	}
	T_EQ(tdev_open(&s->t, &c), 0);
	tside_bringup(s, 8);
}

/* An RC QP on each side, connected to the other. */
static void connect_rc(struct tside *a, struct tqp *qa, struct tside *b, struct tqp *qb)
{
	struct tconn ca = {
	    .mtu = CX4_QP_MTU_1024, .sq_psn = 0x100, .rq_psn = 0x800, .retry = 7, .rnr_retry = 7};
	struct tconn cb = {
	    .mtu = CX4_QP_MTU_1024, .sq_psn = 0x800, .rq_psn = 0x100, .retry = 7, .rnr_retry = 7};

	T_EQ(tqp_create(&a->t, qa, CX4_QP_ST_RC, a->pd, &a->scq, &a->rcq, 6, 6, NULL), 0);
	T_EQ(tqp_create(&b->t, qb, CX4_QP_ST_RC, b->pd, &b->scq, &b->rcq, 6, 6, NULL), 0);
	ca.rip = b->t.ip;
	ca.rqpn = qb->qpn;
	cb.rip = a->t.ip;
	cb.rqpn = qa->qpn;
	T_EQ(tqp_connect(&a->t, qa, &ca), 0);
	T_EQ(tqp_connect(&b->t, qb, &cb), 0);
}

/* A memory window (Linux mlx5_ib_alloc_mw): a free, UMR-enabled KLM key of 4 entries. */
static uint32_t mw_alloc(struct tdev *t, uint32_t pd, bool type2)
{
	static uint8_t keybyte = MW_KEY_BASE;
	uint8_t in[0x110] = {0}, out[16], *mkc = in + CX4_CREATE_MKEY_IN_MKC;

	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_CREATE_MKEY);
	cx4_set(mkc, CX4_MKC_FREE, 1);
	cx4_set(mkc, CX4_MKC_UMR_EN, 1);
	cx4_set(mkc, CX4_MKC_LR, 1);
	cx4_set(mkc, CX4_MKC_ACCESS_MODE_1_0, CX4_MKC_ACCESS_MODE_KLMS);
	cx4_set(mkc, CX4_MKC_EN_RINVAL, type2);
	cx4_set(mkc, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	cx4_set(mkc, CX4_MKC_MKEY_7_0, ++keybyte);
	cx4_set(mkc, CX4_MKC_PD, pd);
	cx4_set(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE, 4);
	T_EQ(tdev_cmd(t, in, sizeof(in), out, sizeof(out)), 0);
	return cx4_get(out, CX4_CREATE_MKEY_OUT_MKEY_INDEX) << 8 | keybyte;
}

/* The segments of a UMR WQE after its control segment. */
struct umr {
	uint8_t b[CX4_UMR_CTRL_SIZE + CX4_UMR_MKEY_SEG_SIZE + CX4_KLM_SIZE * CX4_KLM_PER_BLOCK];
	uint32_t len;
};

/* A bind (rdma-core set_bind_wr): type 2 to qpn, which it must be free for; type 1 any QP. */
static void umr_bind(struct umr *u, bool type2, uint32_t qpn, uint8_t key, uint64_t addr,
		     uint64_t len, unsigned int rights, uint32_t mr_key)
{
	uint64_t mask = CX4_UMR_MKEY_MASK_FREE | CX4_UMR_MKEY_MASK_KEY | CX4_UMR_MKEY_MASK_LEN |
			CX4_UMR_MKEY_MASK_START_ADDR | CX4_UMR_MKEY_MASK_LW | CX4_UMR_MKEY_MASK_RR |
			CX4_UMR_MKEY_MASK_RW | CX4_UMR_MKEY_MASK_A;
	uint8_t *c, *m, *k;

	memset(u, 0, sizeof(*u));
	c = u->b;
	m = c + CX4_UMR_CTRL_SIZE;
	k = m + CX4_UMR_MKEY_SEG_SIZE;
	cx4_set(c, CX4_UMR_CTRL_INLINE, 1);
	cx4_set(c, CX4_UMR_CTRL_TRANSLATION_OFFSET_EN, 1);
	if (type2) {
		cx4_set(c, CX4_UMR_CTRL_CHECK_FREE_STATE, CX4_UMR_CHECK_FAIL_IF_NOT_FREE);
		mask |= CX4_UMR_MKEY_MASK_QPN;
	}
	cx4_set(c, CX4_UMR_CTRL_XLT_OCTOWORDS, CX4_KLM_PER_BLOCK);
	cx4_set64(c, CX4_UMR_CTRL_MKEY_MASK, mask);
	cx4_set(m, CX4_MKC_QPN, type2 ? qpn : CX4_MKEY_QPN_ANY);
	cx4_set(m, CX4_MKC_MKEY_7_0, key);
	cx4_set(m, CX4_MKC_LW, !!(rights & TA_LW));
	cx4_set(m, CX4_MKC_RR, !!(rights & TA_RR));
	cx4_set(m, CX4_MKC_RW, !!(rights & TA_RW));
	cx4_set(m, CX4_MKC_A, !!(rights & TA_A));
	cx4_set64(m, CX4_MKC_START_ADDR, addr);
	cx4_set64(m, CX4_MKC_LEN, len);
	cx4_set(k, CX4_KLM_BYTE_COUNT, (uint32_t)len);
	cx4_set(k, CX4_KLM_MKEY, mr_key);
	cx4_set64(k, CX4_KLM_ADDRESS, addr);
	u->len = sizeof(u->b);
}

/* A local invalidation (rdma-core LOCAL_INV): free, and only by the QP a type 2 is bound to. */
static void umr_invalidate(struct umr *u, bool check_qpn)
{
	uint8_t *c, *m;

	memset(u, 0, sizeof(*u));
	c = u->b;
	m = c + CX4_UMR_CTRL_SIZE;
	cx4_set(c, CX4_UMR_CTRL_INLINE, 1);
	cx4_set(c, CX4_UMR_CTRL_TRANSLATION_OFFSET_EN, 1);
	cx4_set(c, CX4_UMR_CTRL_CHECK_QPN, check_qpn);
	cx4_set64(c, CX4_UMR_CTRL_MKEY_MASK,
		  CX4_UMR_MKEY_MASK_FREE | CX4_UMR_MKEY_MASK_KEY | CX4_UMR_MKEY_MASK_QPN);
	cx4_set(m, CX4_MKC_FREE, 1);
	cx4_set(m, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	u->len = CX4_UMR_CTRL_SIZE + CX4_UMR_MKEY_SEG_SIZE;
}

/* Post a UMR on key `mkey` and expect its completion: 0 good, else the error syndrome. */
static int umr_post(struct tside *s, struct tqp *qp, uint32_t mkey, const struct umr *u)
{
	struct tcqe e;
	int idx = tqp_post_segs(&s->t, qp, MLX5_OPCODE_UMR, htonl(mkey), MLX5_WQE_CTRL_CQ_UPDATE,
				u->b, u->len);

	tcq_expect(&s->t, qp->scq, &e, WAIT);
	T_EQ(e.qpn, qp->qpn);
	T_EQ(e.wqe_counter, idx);
	T_EQ(e.wqe_opcode, MLX5_OPCODE_UMR);
	if (e.opcode == MLX5_CQE_REQ)
		return 0;
	T_EQ(e.opcode, MLX5_CQE_REQ_ERR);
	return e.syndrome;
}

/* RDMA WRITE of len bytes from a's region at src_off to raddr/rkey: the completion's status. */
static int write_to(struct tside *a, struct tqp *qa, size_t src_off, uint32_t len, uint64_t raddr,
		    uint32_t rkey)
{
	struct tsge sg = {.len = len, .lkey = a->mr.key, .addr = (uintptr_t)a->mr.buf + src_off};
	struct tsend s = {
	    .opcode = MLX5_OPCODE_RDMA_WRITE, .sg = &sg, .nsg = 1, .raddr = raddr, .rkey = rkey};
	struct tcqe e;

	tqp_post_send(&a->t, qa, &s);
	tcq_expect(&a->t, qa->scq, &e, WAIT);
	T_EQ(e.qpn, qa->qpn);
	return e.opcode == MLX5_CQE_REQ ? 0 : e.syndrome;
}

/* RDMA READ of len bytes at raddr/rkey into a's region at dst_off. */
static int read_from(struct tside *a, struct tqp *qa, size_t dst_off, uint32_t len, uint64_t raddr,
		     uint32_t rkey)
{
	struct tsge sg = {.len = len, .lkey = a->mr.key, .addr = (uintptr_t)a->mr.buf + dst_off};
	struct tsend s = {
	    .opcode = MLX5_OPCODE_RDMA_READ, .sg = &sg, .nsg = 1, .raddr = raddr, .rkey = rkey};
	struct tcqe e;

	tqp_post_send(&a->t, qa, &s);
	tcq_expect(&a->t, qa->scq, &e, WAIT);
	return e.opcode == MLX5_CQE_REQ ? 0 : e.syndrome;
}

#define REGION (64 << 10)
#define WIN_OFF 8192
#define WIN_LEN 20000

/* Sides a and b, a's region full of pattern 1, b's region (LR|LW only: no remote rights of
 * its own) zero; an RC pair qa <-> qb. */
static void setup(struct tside *a, struct tside *b, struct tqp *qa, struct tqp *qb)
{
	dev_up(a, true);
	dev_up(b, false);
	T_EQ(tmr_reg(&a->t, &a->mr, REGION, TA_ALL, TMR_FD, a->pd), 0);
	T_EQ(tmr_reg(&b->t, &b->mr, REGION, TA_LR | TA_LW, TMR_PID, b->pd), 0);
	tfill(a->mr.buf, REGION, 1);
	connect_rc(a, qa, b, qb);
}

/* b's region after writes of `len` bytes at WIN_OFF: a's pattern there, zero everywhere else. */
static void check_window_write(const struct tside *b, uint32_t len, const char *what)
{
	tcheck_value(b->mr.buf, WIN_OFF, 0, what);
	for (uint32_t i = 0; i < len; i++)
		if (b->mr.buf[WIN_OFF + i] != tpattern(i, 1))
			T_FAIL("%s: window byte %u is 0x%02x", what, i, b->mr.buf[WIN_OFF + i]);
	tcheck_value(b->mr.buf + WIN_OFF + len, REGION - WIN_OFF - len, 0, what);
}

static void down(struct tside *a, struct tside *b)
{
	tdev_close(&a->t);
	tdev_close(&b->t);
}

/* Type 2: bound to qb, written and read through, invalidated locally, then refused. */
static void test_mw_type2(void)
{
	struct tside a, b;
	struct tqp qa, qb;
	struct umr u;
	uint64_t win = (uintptr_t)0;
	uint32_t mw, rkey;

	setup(&a, &b, &qa, &qb);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, true);
	/* unbound: nothing reaches memory through it */
	T_EQ(write_to(&a, &qa, 0, 100, win, mw), MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	tcheck_value(b.mr.buf, REGION, 0, "write through an unbound window");
	tdev_close(&a.t);
	tdev_close(&b.t);

	setup(&a, &b, &qa, &qb);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, true);
	rkey = (mw & ~0xffu) | 0x3c; /* the key byte the application picks */
	umr_bind(&u, true, qb.qpn, 0x3c, win, WIN_LEN, TA_LW | TA_RR | TA_RW, b.mr.key);
	T_EQ(umr_post(&b, &qb, mw, &u), 0);
	/* the whole window, in two WRITEs of a multi-packet and a short message */
	T_EQ(write_to(&a, &qa, 0, WIN_LEN - 1000, win, rkey), 0);
	T_EQ(write_to(&a, &qa, WIN_LEN - 1000, 1000, win + WIN_LEN - 1000, rkey), 0);
	check_window_write(&b, WIN_LEN, "write through a type 2 window");
	/* and back: READ through the window */
	memset(a.mr.buf + 32768, 0xee, WIN_LEN + 64);
	T_EQ(read_from(&a, &qa, 32768, WIN_LEN, win, rkey), 0);
	tcheck_pattern(a.mr.buf + 32768, WIN_LEN, 1, "read through a type 2 window");
	tcheck_value(a.mr.buf + 32768 + WIN_LEN, 64, 0xee, "past the read");
	/* the old key byte names nothing, one byte past the window is out of bounds */
	T_EQ(write_to(&a, &qa, 0, 1, win, mw), MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	down(&a, &b);

	setup(&a, &b, &qa, &qb);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, true);
	rkey = (mw & ~0xffu) | 0x3d;
	umr_bind(&u, true, qb.qpn, 0x3d, win, WIN_LEN, TA_LW | TA_RW, b.mr.key);
	T_EQ(umr_post(&b, &qb, mw, &u), 0);
	T_EQ(write_to(&a, &qa, 0, 2, win + WIN_LEN - 1, rkey), MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	tcheck_value(b.mr.buf, REGION, 0, "write past the window");
	down(&a, &b);

	/* a window without remote read: READ refused */
	setup(&a, &b, &qa, &qb);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, true);
	rkey = (mw & ~0xffu) | 0x3e;
	umr_bind(&u, true, qb.qpn, 0x3e, win, WIN_LEN, TA_LW | TA_RW, b.mr.key);
	T_EQ(umr_post(&b, &qb, mw, &u), 0);
	memset(a.mr.buf + 32768, 0xee, 100);
	T_EQ(read_from(&a, &qa, 32768, 100, win, rkey), MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	tcheck_value(a.mr.buf + 32768, 100, 0xee, "READ through a write-only window");
	down(&a, &b);

	/* local invalidation, then the window refuses the peer; the region is untouched */
	setup(&a, &b, &qa, &qb);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, true);
	rkey = (mw & ~0xffu) | 0x3f;
	umr_bind(&u, true, qb.qpn, 0x3f, win, WIN_LEN, TA_LW | TA_RW, b.mr.key);
	T_EQ(umr_post(&b, &qb, mw, &u), 0);
	T_EQ(write_to(&a, &qa, 0, 4096, win, rkey), 0);
	check_window_write(&b, 4096, "before the invalidation");
	umr_invalidate(&u, true);
	T_EQ(umr_post(&b, &qb, rkey, &u), 0);
	memset(b.mr.buf, 0, REGION);
	T_EQ(write_to(&a, &qa, 0, 4096, win, rkey), MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	tcheck_value(b.mr.buf, REGION, 0, "write through an invalidated window");
	down(&a, &b);
}

/*
 * A type 2 window bound to qb: another QP of b (same PD) may not invalidate it, and the peer
 * of another QP of b gets no access through it. (A QP whose peer was refused is in error, as
 * the refused peer: every check gets its own pair.)
 */
static void test_mw_type2_other_qp(void)
{
	struct tside a, b;
	struct tqp qa, qb, qa2, qb2, qa3, qb3;
	struct umr u;
	uint64_t win;
	uint32_t mw, rkey;

	setup(&a, &b, &qa, &qb);
	connect_rc(&a, &qa2, &b, &qb2);
	connect_rc(&a, &qa3, &b, &qb3);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, true);
	rkey = (mw & ~0xffu) | 0x41;
	umr_bind(&u, true, qb.qpn, 0x41, win, WIN_LEN, TA_LW | TA_RW, b.mr.key);
	T_EQ(umr_post(&b, &qb, mw, &u), 0);
	umr_invalidate(&u, true);
	T_EQ(umr_post(&b, &qb2, rkey, &u), MLX5_CQE_SYNDROME_MW_BIND_ERR);
	T_EQ(write_to(&a, &qa, 0, 512, win, rkey), 0);
	check_window_write(&b, 512, "write through its own QP");
	memset(b.mr.buf, 0, REGION);
	T_EQ(write_to(&a, &qa3, 0, 512, win, rkey), MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	tcheck_value(b.mr.buf, REGION, 0, "write through a window bound to another QP");
	down(&a, &b);
}

/* Type 1: any QP of the PD; a zero-length bind takes it away; rebinding moves it. */
static void test_mw_type1(void)
{
	struct tside a, b;
	struct tqp qa, qb, qa2, qb2;
	struct umr u;
	uint64_t win;
	uint32_t mw, rkey;

	setup(&a, &b, &qa, &qb);
	connect_rc(&a, &qa2, &b, &qb2);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, false);
	rkey = (mw & ~0xffu) | 0x51;
	umr_bind(&u, false, 0, 0x51, win, WIN_LEN, TA_LW | TA_RW | TA_RR, b.mr.key);
	T_EQ(umr_post(&b, &qb, mw, &u), 0);
	T_EQ(write_to(&a, &qa, 0, WIN_LEN / 2, win, rkey), 0);
	T_EQ(write_to(&a, &qa2, WIN_LEN / 2, WIN_LEN / 2, win + WIN_LEN / 2, rkey), 0);
	check_window_write(&b, WIN_LEN, "writes through a type 1 window from two QPs");
	/* rebound (type 1 needs no free window) elsewhere with a new key byte */
	umr_bind(&u, false, 0, 0x52, win + 4096, 4096, TA_LW | TA_RW, b.mr.key);
	T_EQ(umr_post(&b, &qb2, mw, &u), 0);
	T_EQ(write_to(&a, &qa, 0, 1, win, (mw & ~0xffu) | 0x52),
	     MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	down(&a, &b);

	setup(&a, &b, &qa, &qb);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, false);
	rkey = (mw & ~0xffu) | 0x53;
	umr_bind(&u, false, 0, 0x53, win, WIN_LEN, TA_LW | TA_RW, b.mr.key);
	T_EQ(umr_post(&b, &qb, mw, &u), 0);
	T_EQ(write_to(&a, &qa, 0, 300, win, rkey), 0);
	check_window_write(&b, 300, "type 1 before unbinding");
	/* the zero-length bind of ibv_bind_mw: free, the next key byte */
	umr_bind(&u, false, 0, 0x54, 0, 0, 0, 0);
	{
		uint8_t *c = u.b, *m = u.b + CX4_UMR_CTRL_SIZE;

		cx4_set(c, CX4_UMR_CTRL_XLT_OCTOWORDS, 0);
		cx4_set64(c, CX4_UMR_CTRL_MKEY_MASK,
			  CX4_UMR_MKEY_MASK_FREE | CX4_UMR_MKEY_MASK_KEY);
		cx4_set(m, CX4_MKC_FREE, 1);
		u.len = CX4_UMR_CTRL_SIZE + CX4_UMR_MKEY_SEG_SIZE;
	}
	T_EQ(umr_post(&b, &qb, mw, &u), 0);
	memset(b.mr.buf, 0, REGION);
	T_EQ(write_to(&a, &qa, 0, 300, win, (mw & ~0xffu) | 0x54),
	     MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	tcheck_value(b.mr.buf, REGION, 0, "write through an unbound type 1 window");
	down(&a, &b);
}

/* Each bind a user QP may not make fails with MW_BIND_ERR, and the QP goes to error. */
static void test_mw_bind_errors(void)
{
	enum { NOT_FREE, OTHER_PD_MW, OTHER_PD_MR, PAST_MR, RW_NO_LW, MR_KEY, PD_MASK, NONE };

	for (int c = NOT_FREE; c < NONE; c++) {
		struct tside a, b;
		struct tqp qa, qb, qa2, qb2;
		struct tmr ro;
		struct umr u;
		uint32_t mw, pd2, target;
		uint64_t win;

		setup(&a, &b, &qa, &qb);
		connect_rc(&a, &qa2, &b, &qb2);
		T_EQ(tdev_alloc_pd(&b.t, &pd2), 0);
		win = (uintptr_t)b.mr.buf + WIN_OFF;
		mw = mw_alloc(&b.t, c == OTHER_PD_MW ? pd2 : b.pd, true);
		target = mw;
		umr_bind(&u, true, qb.qpn, 0x70, win, WIN_LEN, TA_LW | TA_RW, b.mr.key);
		switch (c) {
		case NOT_FREE:
			/* a type 2 window must be free to be bound */
			T_EQ(umr_post(&b, &qb, mw, &u), 0);
			break;
		case OTHER_PD_MR:
			T_EQ(tmr_reg(&b.t, &ro, 4096, TA_LR | TA_LW, TMR_FD, pd2), 0);
			umr_bind(&u, true, qb.qpn, 0x70, (uintptr_t)ro.buf, 4096, TA_LW | TA_RW,
				 ro.key);
			break;
		case PAST_MR:
			umr_bind(&u, true, qb.qpn, 0x70, (uintptr_t)b.mr.buf + REGION - 100, 200,
				 TA_LW | TA_RW, b.mr.key);
			break;
		case RW_NO_LW:
			T_EQ(tmr_reg(&b.t, &ro, 4096, TA_LR, TMR_FD, b.pd), 0);
			umr_bind(&u, true, qb.qpn, 0x70, (uintptr_t)ro.buf, 4096, TA_RW, ro.key);
			break;
		case MR_KEY:
			/* a user QP changes windows only, not regions */
			target = b.mr.key;
			break;
		case PD_MASK: {
			uint8_t *ctl = u.b;

			cx4_set64(ctl, CX4_UMR_CTRL_MKEY_MASK,
				  cx4_get64(ctl, CX4_UMR_CTRL_MKEY_MASK) | CX4_UMR_MKEY_MASK_PD);
			break;
		}
		default:
			break;
		}
		T_EQ(umr_post(&b, &qb, target, &u), MLX5_CQE_SYNDROME_MW_BIND_ERR);
		/* the QP is in error: what comes next is flushed */
		T_EQ(umr_post(&b, &qb, target, &u), MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		/* the window did not become valid (through another pair: qb is in error) */
		if (c != NOT_FREE)
			T_EQ(write_to(&a, &qa2, 0, 64, win, (mw & ~0xffu) | 0x70),
			     MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
		tcheck_value(b.mr.buf, REGION, 0, "after a failed bind");
		down(&a, &b);
	}
}

/*
 * SEND_WITH_INV of a window: a type 2 window bound to the receiving QP is invalidated and the
 * receive completes with its key; a type 1 window (no remote invalidation) or one bound to
 * another QP fails the request on both sides and stays valid.
 */
static void send_inv_case(bool type2, bool bound_elsewhere)
{
	struct tside a, b;
	struct tqp qa, qb, qa2, qb2;
	struct umr u;
	struct tcqe re, se;
	struct tsge rs, ss;
	struct tsend s = {.opcode = MLX5_OPCODE_SEND_INVAL, .nsg = 1};
	uint64_t win;
	uint32_t mw, rkey;
	bool ok = type2 && !bound_elsewhere;

	setup(&a, &b, &qa, &qb);
	connect_rc(&a, &qa2, &b, &qb2);
	win = (uintptr_t)b.mr.buf + WIN_OFF;
	mw = mw_alloc(&b.t, b.pd, type2);
	rkey = (mw & ~0xffu) | 0x22;
	umr_bind(&u, type2, bound_elsewhere ? qb2.qpn : qb.qpn, 0x22, win, WIN_LEN, TA_LW | TA_RW,
		 b.mr.key);
	T_EQ(umr_post(&b, bound_elsewhere ? &qb2 : &qb, mw, &u), 0);
	rs = (struct tsge){.len = 4000, .lkey = b.mr.key, .addr = (uintptr_t)b.mr.buf + 40000};
	/* the good case in three packets (SEND_LAST_INV last), the others in one (SEND_ONLY_INV) */
	ss = (struct tsge){.len = ok ? 3000 : 100, .lkey = a.mr.key, .addr = (uintptr_t)a.mr.buf};
	s.sg = &ss;
	s.imm = htonl(rkey);
	tqp_post_recv(&b.t, &qb, &rs, 1);
	tqp_post_send(&a.t, &qa, &s);
	tcq_expect(&b.t, &b.rcq, &re, WAIT);
	tcq_expect(&a.t, &a.scq, &se, WAIT);
	T_EQ(re.qpn, qb.qpn);
	T_EQ(se.wqe_opcode, MLX5_OPCODE_SEND_INVAL);
	if (ok) {
		if (re.opcode != MLX5_CQE_RESP_SEND_INV)
			T_FAIL("receive CQE opcode 0x%x syndrome 0x%x", re.opcode, re.syndrome);
		T_EQ(re.byte_cnt, 3000);
		T_EQ(re.imm, htonl(rkey));
		T_EQ(se.opcode, MLX5_CQE_REQ);
		for (int i = 0; i < 3000; i++)
			T_EQ(b.mr.buf[40000 + i], tpattern((size_t)i, 1));
		tcheck_value(b.mr.buf + 43000, REGION - 43000, 0, "past the SEND");
		tcheck_value(b.mr.buf, 40000, 0, "before the SEND");
		/* the window is gone */
		T_EQ(write_to(&a, &qa, 0, 64, win, rkey), MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
		tcheck_value(b.mr.buf, 40000, 0, "write through a window the peer invalidated");
	} else {
		/* type 1 windows (no remote invalidation), windows of another QP: invalid
		 * request on both sides, and the window stays valid for its QP */
		T_EQ(re.opcode, MLX5_CQE_RESP_ERR);
		T_EQ(re.syndrome, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
		T_EQ(se.opcode, MLX5_CQE_REQ_ERR);
		T_EQ(se.syndrome, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
		T_EQ(write_to(&a, &qa2, 0, 64, win, rkey), 0);
		/* (the SEND's bytes reached its receive buffer before it failed: an error
		 * completion leaves the buffer undefined) */
		memset(b.mr.buf + 40000, 0, 100);
		check_window_write(&b, 64, "the window after a refused invalidation");
	}
	down(&a, &b);
}

static void test_send_inv_cases(void)
{
	send_inv_case(true, false);
	send_inv_case(false, false);
	send_inv_case(true, true);
}

/* The driver's UMR QP changes a region's access and PD in place (the keys stay). */
static void test_priv_umr(void)
{
	struct tside a, b;
	struct tqp qa, qb, qa2, qb2, umrq;
	struct tcq ucq;
	uint8_t umr[CX4_UMR_CTRL_SIZE + CX4_UMR_MKEY_SEG_SIZE] = {0};
	uint8_t *c = umr, *m = umr + CX4_UMR_CTRL_SIZE;
	struct tconn none = {0};
	struct tcqe e;
	uint32_t pd2;
	int idx;

	setup(&a, &b, &qa, &qb);
	connect_rc(&a, &qa2, &b, &qb2);
	T_EQ(tcq_create(&b.t, &ucq, 4), 0);
	T_EQ(tqp_create(&b.t, &umrq, CX4_QP_ST_REG_UMR, b.pd, &ucq, &ucq, 4, 0, NULL), 0);
	T_EQ(tqp_connect(&b.t, &umrq, &none), 0);
	/* b's region has no remote write: refused */
	T_EQ(write_to(&a, &qa, 0, 4096, (uintptr_t)b.mr.buf + 4096, b.mr.key),
	     MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	tcheck_value(b.mr.buf, REGION, 0, "before the access change");
	/* Linux mlx5r_umr_rereg_pd_access: the key in use, new access, same PD */
	cx4_set(c, CX4_UMR_CTRL_INLINE, 1);
	cx4_set(c, CX4_UMR_CTRL_CHECK_FREE_STATE, CX4_UMR_CHECK_FAIL_IF_FREE);
	cx4_set64(c, CX4_UMR_CTRL_MKEY_MASK,
		  CX4_UMR_MKEY_MASK_PD | CX4_UMR_MKEY_MASK_LR | CX4_UMR_MKEY_MASK_LW |
		      CX4_UMR_MKEY_MASK_RR | CX4_UMR_MKEY_MASK_RW | CX4_UMR_MKEY_MASK_A);
	cx4_set(m, CX4_MKC_LR, 1);
	cx4_set(m, CX4_MKC_LW, 1);
	cx4_set(m, CX4_MKC_RW, 1);
	cx4_set(m, CX4_MKC_PD, b.pd);
	cx4_set(m, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	cx4_set(m, CX4_MKC_MKEY_7_0, b.mr.key & 0xff);
	idx = tqp_post_segs(&b.t, &umrq, MLX5_OPCODE_UMR, htonl(b.mr.key), MLX5_WQE_CTRL_CQ_UPDATE,
			    umr, sizeof(umr));
	tcq_expect(&b.t, &ucq, &e, WAIT);
	T_EQ(e.opcode, MLX5_CQE_REQ);
	T_EQ(e.wqe_counter, idx);
	T_EQ(e.wqe_opcode, MLX5_OPCODE_UMR);
	/* the same key now takes remote writes */
	T_EQ(write_to(&a, &qa2, 0, 4096, (uintptr_t)b.mr.buf + 4096, b.mr.key), 0);
	tcheck_value(b.mr.buf, 4096, 0, "before the write");
	tcheck_pattern(b.mr.buf + 4096, 4096, 1, "write after the access change");
	tcheck_value(b.mr.buf + 8192, REGION - 8192, 0, "after the write");
	/* another PD: a QP of the old PD cannot use it */
	T_EQ(tdev_alloc_pd(&b.t, &pd2), 0);
	cx4_set(m, CX4_MKC_PD, pd2);
	tqp_post_segs(&b.t, &umrq, MLX5_OPCODE_UMR, htonl(b.mr.key), MLX5_WQE_CTRL_CQ_UPDATE, umr,
		      sizeof(umr));
	tcq_expect(&b.t, &ucq, &e, WAIT);
	T_EQ(e.opcode, MLX5_CQE_REQ);
	T_EQ(write_to(&a, &qa2, 8192, 64, (uintptr_t)b.mr.buf, b.mr.key),
	     MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	tcheck_value(b.mr.buf, 4096, 0, "write after the PD change");
	/* a key that is free fails "fail if free" */
	{
		uint32_t mw = mw_alloc(&b.t, b.pd, true);

		tqp_post_segs(&b.t, &umrq, MLX5_OPCODE_UMR, htonl(mw), MLX5_WQE_CTRL_CQ_UPDATE, umr,
			      sizeof(umr));
		tcq_expect(&b.t, &ucq, &e, WAIT);
		T_EQ(e.opcode, MLX5_CQE_REQ_ERR);
		T_EQ(e.syndrome, MLX5_CQE_SYNDROME_MW_BIND_ERR);
	}
	/* a REG_UMR QP sends nothing else */
	{
		struct tsge sg = {.len = 8, .lkey = b.mr.key, .addr = (uintptr_t)b.mr.buf};
		struct tsend s = {.opcode = MLX5_OPCODE_SEND, .sg = &sg, .nsg = 1};

		T_EQ(tqp_modify(&b.t, &umrq, CX4_CMD_OP_2RST_QP, 0, NULL), 0);
		umrq.sq_pi = 0;
		cx4_be32_store(umrq.dbr.p + 4, 0);
		T_EQ(tqp_connect(&b.t, &umrq, &none), 0);
		tqp_post_send(&b.t, &umrq, &s);
		tcq_expect(&b.t, &ucq, &e, WAIT);
		T_EQ(e.opcode, MLX5_CQE_REQ_ERR);
		T_EQ(e.syndrome, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	}
	down(&a, &b);
}

/* ---- CQ resize ----------------------------------------------------------------------------------
 */

static int resize(struct tdev *t, struct tcq *cq, uint32_t log, struct tmem *nbuf)
{
	uint8_t in[CX4_MODIFY_CQ_IN_SIZE + 8 * 4] = {0}, out[16];
	uint8_t *cqc = in + CX4_MODIFY_CQ_IN_CQC;
	size_t bytes = (size_t)64 << log;
	uint32_t npas = (uint32_t)((bytes + 4095) / 4096);

	memset(nbuf, 0, sizeof(*nbuf));
	T_EQ(tmem_alloc(t, bytes < 4096 ? 4096 : bytes, nbuf), 0);
	for (size_t i = 0; i < (size_t)1 << log; i++)
		nbuf->p[i * 64 + 63] = MLX5_CQE_INVALID << 4 | 1;
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_MODIFY_CQ);
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_MODIFY_CQ_OPMOD_RESIZE);
	cx4_set(in, CX4_MODIFY_CQ_IN_CQN, cq->cqn);
	cx4_set(in, CX4_MODIFY_CQ_IN_FIELD_SELECT,
		CX4_RESIZE_CQ_SEL_LOG_CQ_SIZE | CX4_RESIZE_CQ_SEL_PAGE_OFFSET |
		    CX4_RESIZE_CQ_SEL_LOG_PAGE_SIZE);
	cx4_set(cqc, CX4_CQC_LOG_CQ_SIZE, log);
	cx4_set(cqc, CX4_CQC_LOG_PAGE_SIZE, 0);
	for (uint32_t i = 0; i < npas && i < 4; i++)
		cx4_pas_set(in, CX4_MODIFY_CQ_IN_PAS, i, tmem_iova(nbuf, 4096ull * i));
	return tdev_cmd(t, in, CX4_MODIFY_CQ_IN_SIZE + 8 * npas, out, sizeof(out));
}

/* n signalled WRITEs of 8 bytes each on qa (their CQEs on a.scq, not polled). */
static void writes(struct tside *a, struct tqp *qa, struct tside *b, int n)
{
	struct tsge sg = {.len = 8, .lkey = a->mr.key, .addr = (uintptr_t)a->mr.buf};
	struct tsend s = {.opcode = MLX5_OPCODE_RDMA_WRITE,
			  .sg = &sg,
			  .nsg = 1,
			  .raddr = (uintptr_t)b->mr.buf,
			  .rkey = b->mr.key};

	for (int i = 0; i < n; i++)
		tqp_post_send(&a->t, qa, &s);
}

/* Wait until the device wrote `count` CQEs past ci (the producer is ahead by that much). */
static void wait_written(struct tcq *cq, uint32_t count)
{
	for (int ms = 0; ms < WAIT; ms++) {
		uint32_t i = cq->ci + count - 1;
		volatile uint8_t *c = cq->buf.p + (size_t)(i & ((1u << cq->log) - 1)) * 64;

		if ((c[63] >> 4) != MLX5_CQE_INVALID && (c[63] & 1) == ((i >> cq->log) & 1))
			return;
		usleep(1000);
	}
	T_FAIL("CQ 0x%x: %u CQEs not written", cq->cqn, count);
}

static void test_cq_resize(void)
{
	struct tside a, b;
	struct tqp qa, qb;
	struct tmem nbuf, old;
	struct tcqe e;
	uint32_t r;

	dev_up(&a, true);
	dev_up(&b, false);
	T_EQ(tmr_reg(&a.t, &a.mr, 4096, TA_ALL, TMR_FD, a.pd), 0);
	T_EQ(tmr_reg(&b.t, &b.mr, 4096, TA_ALL, TMR_FD, b.pd), 0);
	/* a send CQ of 8 entries: 5 CQEs outstanding after 2 polled */
	T_EQ(tcq_create(&a.t, &a.scq, 3), 0);
	connect_rc(&a, &qa, &b, &qb);
	writes(&a, &qa, &b, 7);
	wait_written(&a.scq, 7);
	tcq_expect(&a.t, &a.scq, &e, WAIT);
	T_EQ(e.wqe_counter, 0);
	tcq_expect(&a.t, &a.scq, &e, WAIT);
	T_EQ(e.wqe_counter, 1);
	/* a new size that cannot hold the 5 outstanding: refused, nothing changes */
	T_EQ(resize(&a.t, &a.scq, 2, &nbuf), CX4_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR);
	tmem_free(&a.t, &nbuf);
	/* to 32 entries: the RESIZE CQE is at producer index 7 of the old ring */
	T_EQ(resize(&a.t, &a.scq, 5, &nbuf), 0);
	r = 7;
	{
		uint8_t *c = a.scq.buf.p + (size_t)(r & 7) * 64;

		T_EQ(c[63] >> 4, MLX5_CQE_RESIZE_CQ);
		T_EQ(c[63] & 1, (r >> 3) & 1);
	}
	/* software copies ci..r-1 to ci+1..r of the new ring (rdma-core's rule) */
	for (uint32_t i = a.scq.ci; i < r; i++) {
		uint8_t *s = a.scq.buf.p + (size_t)(i & 7) * 64,
			*d = nbuf.p + (size_t)((i + 1) & 31) * 64;

		memcpy(d, s, 64);
		d[63] = (uint8_t)((s[63] & ~1u) | (((i + 1) >> 5) & 1));
	}
	old = a.scq.buf;
	a.scq.buf = nbuf;
	a.scq.log = 5;
	a.scq.ci++;
	cx4_be32_store(a.scq.dbr.p, a.scq.ci & 0xffffff);
	for (uint16_t w = 2; w < 7; w++) {
		tcq_expect(&a.t, &a.scq, &e, WAIT);
		T_EQ(e.opcode, MLX5_CQE_REQ);
		T_EQ(e.wqe_counter, w);
	}
	/* new completions land in the new ring, after the copies */
	writes(&a, &qa, &b, 20);
	for (uint16_t w = 7; w < 27; w++) {
		tcq_expect(&a.t, &a.scq, &e, WAIT);
		T_EQ(e.opcode, MLX5_CQE_REQ);
		T_EQ(e.wqe_counter, w);
	}
	T_EQ(tcq_poll(&a.t, &a.scq, (uint8_t[64]){0}, 50), 0);
	/* the old ring got nothing more than its RESIZE CQE */
	T_EQ(old.p[(7 & 7) * 64 + 63] >> 4, MLX5_CQE_RESIZE_CQ);
	down(&a, &b);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
	    {"mw_type2", test_mw_type2},       {"mw_type2_other_qp", test_mw_type2_other_qp},
	    {"mw_type1", test_mw_type1},       {"mw_bind_errors", test_mw_bind_errors},
	    {"send_inv", test_send_inv_cases}, {"priv_umr", test_priv_umr},
	    {"cq_resize", test_cq_resize},
	};

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (argc > 1 && strcmp(argv[1], tests[i].name))
			continue;
		t_name = tests[i].name;
		tests[i].fn();
		printf("ok %s\n", tests[i].name);
	}
	return 0;
}
