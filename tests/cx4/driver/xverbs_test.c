// SPDX-License-Identifier: MIT
/*
 * The extended verbs through libibverbs on a cx4 device (cx4_verbs_test xverbs):
 *
 *  - ibv_create_qp_ex with send_ops_flags and the ibv_wr_* calls: every operation of RC and UD
 *    (send, send_imm, rdma_write, write_imm, rdma_read, both atomics), every data setter
 *    (set_sge, set_sge_list, set_inline_data, set_inline_data_list, set_ud_addr), batches,
 *    ibv_wr_abort and a failing batch that posts nothing;
 *  - ibv_create_cq_ex and every reader the device has (opcode, byte_len, imm_data, qp_num,
 *    src_qp, wc_flags, slid, sl, dlid_path_bits, completion_ts);
 *  - memory windows: type 1 (ibv_bind_mw, zero-length unbind), type 2 (post_send BIND_MW,
 *    ibv_wr_bind_mw), LOCAL_INV (post_send, ibv_wr_local_inv), SEND_WITH_INV (post_send,
 *    ibv_wr_send_inv), dealloc; access through an unbound, invalidated or freed window fails
 *    with REM_ACCESS_ERR; a bind error completes with MW_BIND_ERR;
 *  - ibv_rereg_mr of access (keys kept), PD (keys kept), translation (new keys, new memory);
 *  - ibv_resize_cq with completions outstanding, up and down, and below what is outstanding;
 *  - ibv_query_device_ex, ibv_query_gid_ex, ibv_query_gid_table, ibv_query_qp_data_in_order.
 *
 * Every byte a test moves is checked, and the bytes around it are checked untouched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vt.h"

#define SRC 0	       /* where a's messages come from */
#define DST (1u << 20) /* where they go in b (and 64 guard bytes either side) */
#define GUARD 64
#define MAXLEN (1u << 20)

static struct vt_qp_params xparams(enum ibv_qp_type type, uint64_t ops)
{
	struct vt_qp_params p = vt_default_params(type);

	p.send_ops = ops;
	p.cq_ex = true;
	p.max_inline = 128;
	return p;
}

static bool pair(struct vt_end *a, struct vt_end *b, const struct vt_qp_params *p)
{
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	if (vt_open(a, vt_opt.dev_a, p) || vt_open(b, vt_opt.dev_b, p) || vt_connect(a, b, p)) {
		vt_close(a);
		vt_close(b);
		return false;
	}
	return true;
}

static void unpair(struct vt_end *a, struct vt_end *b)
{
	vt_close(a);
	vt_close(b);
}

/* One completion of an extended CQ, every field the CQ was created with. */
struct xwc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, src_qp, slid, inv_rkey;
	unsigned int wc_flags;
	__be32 imm;
	uint8_t sl, path_bits;
	uint64_t ts;
};

static int xpoll(struct vt_end *e, struct xwc *w, int ms)
{
	struct ibv_poll_cq_attr attr = {0};
	uint64_t end = vt_now_ms() + (uint64_t)ms;
	int err;

	/* the clock before the poll: a poller descheduled past its deadline looks once more */
	for (;;) {
		bool late = vt_now_ms() > end;

		err = ibv_start_poll(e->cqx, &attr);
		if (err != ENOENT)
			break;
		if (late)
			return 0;
	}
	if (err)
		return -1;
	w->wr_id = e->cqx->wr_id;
	w->status = e->cqx->status;
	w->opcode = ibv_wc_read_opcode(e->cqx);
	w->byte_len = ibv_wc_read_byte_len(e->cqx);
	w->wc_flags = ibv_wc_read_wc_flags(e->cqx);
	w->imm = (w->wc_flags & IBV_WC_WITH_IMM) ? ibv_wc_read_imm_data(e->cqx) : 0;
	w->inv_rkey = (w->wc_flags & IBV_WC_WITH_INV) ? ibv_wc_read_invalidated_rkey(e->cqx) : 0;
	w->qp_num = ibv_wc_read_qp_num(e->cqx);
	w->src_qp = ibv_wc_read_src_qp(e->cqx);
	w->slid = ibv_wc_read_slid(e->cqx);
	w->sl = ibv_wc_read_sl(e->cqx);
	w->path_bits = ibv_wc_read_dlid_path_bits(e->cqx);
	w->ts = e->cq_ts ? ibv_wc_read_completion_ts(e->cqx) : 0;
	ibv_end_poll(e->cqx);
	return 1;
}

/* The next completion on e must be (opcode, status, wr_id). */
static bool expect(struct vt_end *e, struct xwc *w, enum ibv_wc_opcode op, enum ibv_wc_status st,
		   uint64_t wr_id, const char *what)
{
	int r = xpoll(e, w, VT_TIMEOUT_MS);

	if (r != 1) {
		VT_FAIL("%s: no completion (%d)", what, r);
		return false;
	}
	if (w->status != st || (st == IBV_WC_SUCCESS && w->opcode != op) || w->wr_id != wr_id) {
		VT_FAIL("%s: completion status %s opcode %d wr_id 0x%llx, expected %s %d 0x%llx",
			what, ibv_wc_status_str(w->status), w->opcode, (unsigned long long)w->wr_id,
			ibv_wc_status_str(st), op, (unsigned long long)wr_id);
		return false;
	}
	return true;
}

/* b's DST area holds n bytes of seed, and the guards around it are zero. */
static void check_dst(struct vt_end *b, size_t n, uint32_t seed, const char *what)
{
	vt_check_const(b->buf + DST - GUARD, GUARD, 0, what);
	vt_check(b->buf + DST, n, seed, what);
	vt_check_const(b->buf + DST + n, GUARD, 0, what);
}

static void post_recv(struct vt_end *b, size_t off, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sg = {.addr = (uintptr_t)b->buf + off, .length = len, .lkey = b->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sg, .num_sge = 1}, *bad;

	if (ibv_post_recv(b->qp, &wr, &bad))
		VT_FAIL("post_recv: %s", strerror(errno));
}

/* ---- ibv_wr_* on RC ------------------------------------------------------------------------ */

static void rc_send(struct vt_end *a, struct vt_end *b, size_t n, bool imm, int setter)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a->qp);
	uint32_t seed = (uint32_t)(n * 3 + (imm ? 1 : 0) + setter * 7);
	struct xwc w;
	bool ok;
	int err;

	vt_fill(a->buf + SRC, n, seed);
	memset(b->buf + DST - GUARD, 0, n + 2 * GUARD);
	post_recv(b, DST, (uint32_t)n, 0xb0);
	ibv_wr_start(x);
	x->wr_id = 0xa0 + n;
	x->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_send_imm(x, htobe32(0xc0ffee00 | (uint32_t)setter));
	else
		ibv_wr_send(x);
	switch (setter) {
	case 0:
		ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + SRC, (uint32_t)n);
		break;
	case 1: {
		/* three pieces, a zero-length one in the middle */
		struct ibv_sge sg[3] = {
		    {(uintptr_t)a->buf + SRC, (uint32_t)(n / 3), a->mr->lkey},
		    {(uintptr_t)a->buf + SRC, 0, a->mr->lkey},
		    {(uintptr_t)a->buf + SRC + n / 3, (uint32_t)(n - n / 3), a->mr->lkey},
		};

		ibv_wr_set_sge_list(x, 2, (struct ibv_sge[]){sg[0], sg[2]});
		break;
	}
	case 2:
		ibv_wr_set_inline_data(x, a->buf + SRC, n);
		break;
	default: {
		struct ibv_data_buf d[2] = {{a->buf + SRC, n / 2},
					    {a->buf + SRC + n / 2, n - n / 2}};

		ibv_wr_set_inline_data_list(x, 2, d);
		break;
	}
	}
	err = ibv_wr_complete(x);
	if (err) {
		VT_FAIL("wr send %zu setter %d: wr_complete %s", n, setter, strerror(err));
		return;
	}
	ok = expect(b, &w, IBV_WC_RECV, IBV_WC_SUCCESS, 0xb0, "wr_send receive");
	if (ok && (w.byte_len != n || (imm && be32toh(w.imm) != (0xc0ffee00 | (uint32_t)setter))))
		VT_FAIL("wr_send %zu: byte_len %u imm 0x%x", n, w.byte_len, be32toh(w.imm));
	ok &= expect(a, &w, IBV_WC_SEND, IBV_WC_SUCCESS, 0xa0 + n, "wr_send");
	if (!ok)
		return;
	check_dst(b, n, seed, "wr_send");
}

/* The receive side of the last rc_send, read with every reader: checked in rc_readers. */
static void rc_readers(struct vt_end *a, struct vt_end *b)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a->qp);
	struct xwc w, w2;

	vt_fill(a->buf + SRC, 777, 5);
	post_recv(b, DST, 777, 0xb1);
	post_recv(b, DST + 4096, 16, 0xb2);
	ibv_wr_start(x);
	x->wr_id = 0xa1;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	ibv_wr_send_imm(x, htobe32(0x12345678));
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + SRC, 777);
	x->wr_id = 0xa2;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + SRC, 16);
	if (ibv_wr_complete(x))
		VT_FAIL("readers: wr_complete");
	if (!expect(b, &w, IBV_WC_RECV, IBV_WC_SUCCESS, 0xb1, "readers: receive"))
		return;
	if (w.byte_len != 777 || !(w.wc_flags & IBV_WC_WITH_IMM) || be32toh(w.imm) != 0x12345678 ||
	    w.qp_num != b->qp->qp_num || (w.wc_flags & IBV_WC_GRH) || w.sl != 0 ||
	    w.path_bits != 0 || w.slid != 0)
		VT_FAIL("readers: len %u flags 0x%x imm 0x%x qp 0x%x sl %u bits %u slid %u",
			w.byte_len, w.wc_flags, be32toh(w.imm), w.qp_num, w.sl, w.path_bits,
			w.slid);
	vt_check(b->buf + DST, 777, 5, "readers: data");
	if (!expect(b, &w2, IBV_WC_RECV, IBV_WC_SUCCESS, 0xb2, "readers: second receive"))
		return;
	if (w2.byte_len != 16 || (w2.wc_flags & IBV_WC_WITH_IMM))
		VT_FAIL("readers: second len %u flags 0x%x", w2.byte_len, w2.wc_flags);
	/* the device's clock moves forward, where it has one (query_device_ex hca_core_clock) */
	if (b->cq_ts && (!w.ts || w2.ts < w.ts))
		VT_FAIL("readers: completion timestamps %llu then %llu", (unsigned long long)w.ts,
			(unsigned long long)w2.ts);
	if (!expect(a, &w, IBV_WC_SEND, IBV_WC_SUCCESS, 0xa1, "readers: send") ||
	    w.qp_num != a->qp->qp_num)
		VT_FAIL("readers: send qp 0x%x", w.qp_num);
	expect(a, &w, IBV_WC_SEND, IBV_WC_SUCCESS, 0xa2, "readers: send 2");
}

static void rc_write(struct vt_end *a, struct vt_end *b, size_t n, bool imm)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a->qp);
	uint32_t seed = (uint32_t)(n * 5 + imm);
	struct xwc w;

	vt_fill(a->buf + SRC, n, seed);
	memset(b->buf + DST - GUARD, 0, n + 2 * GUARD);
	if (imm)
		post_recv(b, 0, 0, 0xb3);
	ibv_wr_start(x);
	x->wr_id = 0xa3;
	x->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_rdma_write_imm(x, b->mr->rkey, (uintptr_t)b->buf + DST, htobe32(0xabcd));
	else
		ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf + DST);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + SRC, (uint32_t)n);
	if (ibv_wr_complete(x)) {
		VT_FAIL("wr_rdma_write %zu: wr_complete", n);
		return;
	}
	if (!expect(a, &w, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, 0xa3, "wr_rdma_write"))
		return;
	if (imm &&
	    expect(b, &w, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS, 0xb3, "write_imm receive") &&
	    (w.byte_len != n || be32toh(w.imm) != 0xabcd))
		VT_FAIL("write_imm: len %u imm 0x%x", w.byte_len, be32toh(w.imm));
	check_dst(b, n, seed, imm ? "wr_rdma_write_imm" : "wr_rdma_write");
}

static void rc_read(struct vt_end *a, struct vt_end *b, size_t n)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a->qp);
	struct xwc w;

	vt_fill(b->buf + SRC, n, (uint32_t)n + 11);
	memset(a->buf + DST - GUARD, 0, n + 2 * GUARD);
	ibv_wr_start(x);
	x->wr_id = 0xa4;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, b->mr->rkey, (uintptr_t)b->buf + SRC);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + DST, (uint32_t)n);
	if (ibv_wr_complete(x)) {
		VT_FAIL("wr_rdma_read %zu: wr_complete", n);
		return;
	}
	if (!expect(a, &w, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, 0xa4, "wr_rdma_read"))
		return;
	if (w.byte_len != n)
		VT_FAIL("wr_rdma_read %zu: byte_len %u", n, w.byte_len);
	check_dst(a, n, (uint32_t)n + 11, "wr_rdma_read");
}

static void rc_atomics(struct vt_end *a, struct vt_end *b)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a->qp);
	uint64_t *target = (uint64_t *)(b->buf + DST), *result = (uint64_t *)(a->buf + DST);
	struct xwc w;

	memset(b->buf + DST - GUARD, 0, 8 + 2 * GUARD);
	memset(a->buf + DST - GUARD, 0, 16 + 2 * GUARD);
	*target = 0x1111222233334444ull;
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 1; /* hit */
	ibv_wr_atomic_cmp_swp(x, b->mr->rkey, (uintptr_t)target, 0x1111222233334444ull, 77);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)result, 8);
	if (ibv_wr_complete(x) || !expect(a, &w, IBV_WC_COMP_SWAP, IBV_WC_SUCCESS, 1, "cmp_swp"))
		return;
	if (*result != 0x1111222233334444ull || *target != 77)
		VT_FAIL("cmp_swp hit: result 0x%llx target 0x%llx", (unsigned long long)*result,
			(unsigned long long)*target);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 2; /* miss */
	ibv_wr_atomic_cmp_swp(x, b->mr->rkey, (uintptr_t)target, 78, 99);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)result, 8);
	x->wr_id = 3; /* fetch & add with a carry across 32 bits */
	ibv_wr_atomic_fetch_add(x, b->mr->rkey, (uintptr_t)target, 0xffffffffull);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)result + 8, 8);
	if (ibv_wr_complete(x) ||
	    !expect(a, &w, IBV_WC_COMP_SWAP, IBV_WC_SUCCESS, 2, "cmp_swp miss") ||
	    !expect(a, &w, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS, 3, "fetch_add"))
		return;
	if (result[0] != 77 || result[1] != 77 || *target != 77 + 0xffffffffull)
		VT_FAIL("cmp_swp miss / fetch_add: results 0x%llx 0x%llx target 0x%llx",
			(unsigned long long)result[0], (unsigned long long)result[1],
			(unsigned long long)*target);
	vt_check_const(b->buf + DST - GUARD, GUARD, 0, "atomic guard");
	vt_check_const(b->buf + DST + 8, GUARD, 0, "atomic guard");
	vt_check_const(a->buf + DST + 16, GUARD, 0, "atomic result guard");
}

/* A batch that fails (too many SGEs) or is aborted posts nothing at all. */
static void rc_rollback(struct vt_end *a, struct vt_end *b)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a->qp);
	struct ibv_sge sg[64];
	int err;

	for (int i = 0; i < 64; i++)
		sg[i] = (struct ibv_sge){(uintptr_t)a->buf + i, 1, a->mr->lkey};
	memset(b->buf + DST - GUARD, 0, 4096);
	vt_fill(a->buf, 4096, 99);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 7;
	ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf + DST);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 100);
	ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf + DST + 200);
	ibv_wr_set_sge_list(x, 64, sg);
	err = ibv_wr_complete(x);
	if (err != ENOMEM)
		VT_FAIL("a batch with a WR of 64 SGEs: wr_complete %d, expected ENOMEM", err);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf + DST);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 100);
	ibv_wr_abort(x);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x); /* no data: never finished */
	if (ibv_wr_complete(x) != EINVAL)
		VT_FAIL("a WQE left without its data: wr_complete did not fail");
	if (!vt_cq_quiet(a->cq, 200))
		VT_FAIL("a rolled-back batch completed something");
	vt_check_const(b->buf + DST - GUARD, 4096, 0, "after rolled-back batches");
	/* and the queue still works, from where the batch began */
	rc_write(a, b, 100, false);
}

static void wr_rc_suite(void)
{
	static const size_t lens[] = {0, 1, 63, 4096, 65537, MAXLEN};
	const uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			     IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			     IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	struct vt_qp_params p = xparams(IBV_QPT_RC, ops);
	struct vt_end a, b;

	vt_log("ibv_wr_* RC: send/send_imm with every setter, write/write_imm, read, atomics");
	if (!pair(&a, &b, &p))
		return;
	if (!ibv_qp_to_qp_ex(a.qp)) {
		VT_FAIL("ibv_qp_to_qp_ex: NULL for a QP created with send_ops_flags");
		unpair(&a, &b);
		return;
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		rc_send(&a, &b, lens[i], i & 1, 0);
		rc_write(&a, &b, lens[i], i & 1);
		rc_read(&a, &b, lens[i]);
	}
	rc_send(&a, &b, 9000, false, 1);
	rc_send(&a, &b, 100, true, 2);
	rc_send(&a, &b, 120, false, 3);
	rc_readers(&a, &b);
	rc_atomics(&a, &b);
	rc_rollback(&a, &b);
	unpair(&a, &b);
}

/* UD: the address vector and the data both given, in either order; the GRH first. */
static void wr_ud_suite(void)
{
	struct vt_qp_params p =
	    xparams(IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	struct vt_end a, b;
	struct ibv_ah *ah;

	vt_log("ibv_wr_* UD: send, send_imm, set_ud_addr before and after the data");
	if (!pair(&a, &b, &p))
		return;
	ah = vt_ah(&a, &b);
	if (!ah) {
		VT_FAIL("create_ah: %s", strerror(errno));
		unpair(&a, &b);
		return;
	}
	for (int k = 0; k < 3; k++) {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a.qp);
		size_t n = k == 0			       ? 0
			   : k == 1			       ? 1000
			   : a.port.active_mtu == IBV_MTU_4096 ? 4096
							       : 1024;
		struct xwc w;

		vt_fill(a.buf + SRC, n, 40 + k);
		memset(b.buf + DST - GUARD, 0, n + 40 + 2 * GUARD);
		post_recv(&b, DST, (uint32_t)(n + 40), 0xc0 + k);
		ibv_wr_start(x);
		x->wr_id = 0xd0 + k;
		x->wr_flags = IBV_SEND_SIGNALED;
		if (k == 1)
			ibv_wr_send_imm(x, htobe32(0x55));
		else
			ibv_wr_send(x);
		if (k == 2) {
			ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + SRC, (uint32_t)n);
			ibv_wr_set_ud_addr(x, ah, b.qp->qp_num, 0x11111111);
		} else {
			ibv_wr_set_ud_addr(x, ah, b.qp->qp_num, 0x11111111);
			ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + SRC, (uint32_t)n);
		}
		if (ibv_wr_complete(x)) {
			VT_FAIL("UD wr_complete");
			break;
		}
		if (!expect(&b, &w, IBV_WC_RECV, IBV_WC_SUCCESS, 0xc0 + k, "UD receive"))
			break;
		if (w.byte_len != n + 40 || !(w.wc_flags & IBV_WC_GRH) ||
		    w.src_qp != a.qp->qp_num || (k == 1) != !!(w.wc_flags & IBV_WC_WITH_IMM))
			VT_FAIL("UD %zu: len %u flags 0x%x src_qp 0x%x", n, w.byte_len, w.wc_flags,
				w.src_qp);
		vt_check(b.buf + DST + 40, n, 40 + k, "UD wr_send");
		vt_check_const(b.buf + DST + 40 + n, GUARD, 0, "past the UD message");
		expect(&a, &w, IBV_WC_SEND, IBV_WC_SUCCESS, 0xd0 + k, "UD send");
	}
	ibv_destroy_ah(ah);
	unpair(&a, &b);
}

/* What the device does not have is refused at create, not at use. */
static void wr_create_suite(void)
{
	struct vt_qp_params p = xparams(IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE);
	struct vt_end a;

	vt_log("ibv_create_qp_ex: unsupported send_ops_flags refused");
	p.expect_create_errno = EOPNOTSUPP;
	vt_open(&a, vt_opt.dev_a, &p);
	vt_close(&a);
	p = xparams(IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE);
	p.expect_create_errno = EOPNOTSUPP;
	vt_open(&a, vt_opt.dev_a, &p);
	vt_close(&a);
	p = xparams(IBV_QPT_RC, IBV_QP_EX_WITH_TSO);
	p.expect_create_errno = EOPNOTSUPP;
	vt_open(&a, vt_opt.dev_a, &p);
	vt_close(&a);
}

/* ---- memory windows ------------------------------------------------------------------------- */

#define MW_OFF (2u << 20)
#define MW_LEN 50000u

/* A WRITE of n bytes to raddr/rkey through the old post_send API; its completion status. */
static enum ibv_wc_status write_status(struct vt_end *a, uint32_t rkey, uint64_t raddr, size_t n,
				       uint32_t seed)
{
	struct ibv_sge sg = {(uintptr_t)a->buf + SRC, (uint32_t)n, a->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 0x77,
				 .sg_list = &sg,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct xwc w;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	vt_fill(a->buf + SRC, n, seed);
	if (ibv_post_send(a->qp, &wr, &bad)) {
		VT_FAIL("post_send WRITE: %s", strerror(errno));
		return IBV_WC_GENERAL_ERR;
	}
	if (xpoll(a, &w, VT_TIMEOUT_MS) != 1) {
		VT_FAIL("WRITE through a window: no completion");
		return IBV_WC_GENERAL_ERR;
	}
	return w.status;
}

/* b's region after a WRITE of n bytes of seed at MW_OFF (+ off): there, and zero around it. */
static void check_mw_area(struct vt_end *b, size_t off, size_t n, uint32_t seed, const char *what)
{
	vt_check_const(b->buf + MW_OFF - GUARD, GUARD + off, 0, what);
	vt_check(b->buf + MW_OFF + off, n, seed, what);
	vt_check_const(b->buf + MW_OFF + off + n, MW_LEN - off - n + GUARD, 0, what);
}

static void mw_bind_info(struct ibv_mw_bind_info *bi, struct vt_end *b, int access)
{
	bi->mr = b->mr;
	bi->addr = (uintptr_t)b->buf + MW_OFF;
	bi->length = MW_LEN;
	bi->mw_access_flags = access;
}

/* b's windows: b's region (local write and MW bind only) is reached through them alone. */
static struct vt_qp_params mw_params(void)
{
	struct vt_qp_params p =
	    xparams(IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW |
				    IBV_QP_EX_WITH_LOCAL_INV);

	p.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	return p;
}

static void mw_type1(void)
{
	struct vt_qp_params p = mw_params();
	struct ibv_mw_bind mb = {.wr_id = 0x61, .send_flags = IBV_SEND_SIGNALED};
	struct vt_end a, b;
	struct ibv_mw *mw;
	uint32_t rkey0;
	struct xwc w;

	vt_log("type 1 window: ibv_bind_mw, WRITE through it, zero-length unbind, refused");
	if (!pair(&a, &b, &p))
		return;
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_1);
	if (!mw) {
		VT_FAIL("alloc_mw type 1: %s", strerror(errno));
		unpair(&a, &b);
		return;
	}
	rkey0 = mw->rkey;
	mw_bind_info(&mb.bind_info, &b, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	if (ibv_bind_mw(b.qp, mw, &mb))
		VT_FAIL("bind_mw: %s", strerror(errno));
	if (expect(&b, &w, IBV_WC_BIND_MW, IBV_WC_SUCCESS, 0x61, "bind_mw completion") &&
	    mw->rkey == rkey0)
		VT_FAIL("bind_mw: the window kept its key 0x%x", mw->rkey);
	if (write_status(&a, mw->rkey, (uintptr_t)b.buf + MW_OFF + 1000, 30000, 61) !=
	    IBV_WC_SUCCESS)
		VT_FAIL("WRITE through a bound type 1 window failed");
	check_mw_area(&b, 1000, 30000, 61, "WRITE through a type 1 window");
	/* unbind: a zero-length bind, the key moves on again */
	mb.bind_info = (struct ibv_mw_bind_info){.mr = b.mr};
	mb.wr_id = 0x62;
	if (ibv_bind_mw(b.qp, mw, &mb))
		VT_FAIL("zero-length bind_mw: %s", strerror(errno));
	expect(&b, &w, IBV_WC_BIND_MW, IBV_WC_SUCCESS, 0x62, "unbind completion");
	memset(b.buf + MW_OFF - GUARD, 0, MW_LEN + 2 * GUARD);
	if (write_status(&a, mw->rkey, (uintptr_t)b.buf + MW_OFF, 100, 62) != IBV_WC_REM_ACCESS_ERR)
		VT_FAIL("WRITE through an unbound type 1 window was not REM_ACCESS_ERR");
	vt_check_const(b.buf + MW_OFF - GUARD, MW_LEN + 2 * GUARD, 0, "unbound type 1 window");
	if (ibv_dealloc_mw(mw))
		VT_FAIL("dealloc_mw: %s", strerror(errno));
	unpair(&a, &b);
}

/* Type 2, bound and invalidated by `how`: 0 post_send + LOCAL_INV, 1 ibv_wr_* + wr_local_inv,
 * 2 the peer's SEND_WITH_INV (post_send), 3 the peer's ibv_wr_send_inv, 4 dealloc. */
static void mw_type2(int how)
{
	static const char *const name[] = {"post_send LOCAL_INV", "wr_local_inv", "SEND_WITH_INV",
					   "wr_send_inv", "dealloc"};
	struct vt_qp_params p = mw_params();
	struct ibv_mw_bind_info bi;
	struct vt_end a, b;
	struct ibv_mw *mw;
	uint32_t rkey;
	struct xwc w;

	vt_log("type 2 window: bound, used, then %s", name[how]);
	if (!pair(&a, &b, &p))
		return;
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	if (!mw) {
		VT_FAIL("alloc_mw type 2: %s", strerror(errno));
		unpair(&a, &b);
		return;
	}
	rkey = ibv_inc_rkey(mw->rkey);
	mw_bind_info(&bi, &b, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	if (how & 1) {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(b.qp);

		ibv_wr_start(x);
		x->wr_id = 0x63;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(x, mw, rkey, &bi);
		if (ibv_wr_complete(x))
			VT_FAIL("wr_bind_mw: wr_complete");
	} else {
		struct ibv_send_wr wr = {.wr_id = 0x63,
					 .opcode = IBV_WR_BIND_MW,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;

		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info = bi;
		if (ibv_post_send(b.qp, &wr, &bad))
			VT_FAIL("post_send BIND_MW: %s", strerror(errno));
	}
	expect(&b, &w, IBV_WC_BIND_MW, IBV_WC_SUCCESS, 0x63, "type 2 bind completion");
	if (write_status(&a, rkey, (uintptr_t)b.buf + MW_OFF, MW_LEN, 63) != IBV_WC_SUCCESS)
		VT_FAIL("WRITE through a bound type 2 window failed");
	check_mw_area(&b, 0, MW_LEN, 63, "WRITE through a type 2 window");
	switch (how) {
	case 0: {
		struct ibv_send_wr wr = {.wr_id = 0x64,
					 .opcode = IBV_WR_LOCAL_INV,
					 .send_flags = IBV_SEND_SIGNALED,
					 .invalidate_rkey = rkey},
				   *bad;

		if (ibv_post_send(b.qp, &wr, &bad))
			VT_FAIL("post_send LOCAL_INV: %s", strerror(errno));
		expect(&b, &w, IBV_WC_LOCAL_INV, IBV_WC_SUCCESS, 0x64, "LOCAL_INV completion");
		break;
	}
	case 1: {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(b.qp);

		ibv_wr_start(x);
		x->wr_id = 0x64;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(x, rkey);
		if (ibv_wr_complete(x))
			VT_FAIL("wr_local_inv: wr_complete");
		expect(&b, &w, IBV_WC_LOCAL_INV, IBV_WC_SUCCESS, 0x64, "wr_local_inv completion");
		break;
	}
	case 2:
	case 3:
		vt_fill(a.buf + 8192, 1500, 64);
		memset(b.buf + DST - GUARD, 0, 1500 + 2 * GUARD);
		post_recv(&b, DST, 2000, 0x65);
		if (how == 2) {
			struct ibv_sge sg = {(uintptr_t)a.buf + 8192, 1500, a.mr->lkey};
			struct ibv_send_wr wr = {.wr_id = 0x66,
						 .sg_list = &sg,
						 .num_sge = 1,
						 .opcode = IBV_WR_SEND_WITH_INV,
						 .send_flags = IBV_SEND_SIGNALED,
						 .invalidate_rkey = rkey},
					   *bad;

			if (ibv_post_send(a.qp, &wr, &bad))
				VT_FAIL("post_send SEND_WITH_INV: %s", strerror(errno));
		} else {
			struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a.qp);

			ibv_wr_start(x);
			x->wr_id = 0x66;
			x->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_send_inv(x, rkey);
			ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 8192, 1500);
			if (ibv_wr_complete(x))
				VT_FAIL("wr_send_inv: wr_complete");
		}
		if (expect(&b, &w, IBV_WC_RECV, IBV_WC_SUCCESS, 0x65, "SEND_WITH_INV receive") &&
		    (!(w.wc_flags & IBV_WC_WITH_INV) || w.byte_len != 1500 || w.inv_rkey != rkey))
			VT_FAIL("SEND_WITH_INV receive: flags 0x%x len %u key 0x%x (0x%x)",
				w.wc_flags, w.byte_len, w.inv_rkey, rkey);
		vt_check(b.buf + DST, 1500, 64, "SEND_WITH_INV data");
		vt_check_const(b.buf + DST + 1500, GUARD, 0, "past SEND_WITH_INV");
		expect(&a, &w, IBV_WC_SEND, IBV_WC_SUCCESS, 0x66, "SEND_WITH_INV");
		break;
	default:
		if (ibv_dealloc_mw(mw))
			VT_FAIL("dealloc_mw: %s", strerror(errno));
		mw = NULL;
		break;
	}
	memset(b.buf + MW_OFF - GUARD, 0, MW_LEN + 2 * GUARD);
	if (write_status(&a, rkey, (uintptr_t)b.buf + MW_OFF, 4096, 65) != IBV_WC_REM_ACCESS_ERR)
		VT_FAIL("WRITE through a type 2 window after %s was not REM_ACCESS_ERR", name[how]);
	vt_check_const(b.buf + MW_OFF - GUARD, MW_LEN + 2 * GUARD, 0, name[how]);
	if (mw && ibv_dealloc_mw(mw))
		VT_FAIL("dealloc_mw: %s", strerror(errno));
	unpair(&a, &b);
}

/* Binding a bound type 2 window again: MW_BIND_ERR, and the QP is in error. */
static void mw_bind_error(void)
{
	struct vt_qp_params p = mw_params();
	struct ibv_send_wr wr = {.opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED}, *bad;
	struct vt_end a, b;
	struct ibv_mw *mw;
	struct xwc w;

	vt_log("type 2 window bound twice: MW_BIND_ERR");
	if (!pair(&a, &b, &p))
		return;
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	if (!mw) {
		VT_FAIL("alloc_mw: %s", strerror(errno));
		unpair(&a, &b);
		return;
	}
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	mw_bind_info(&wr.bind_mw.bind_info, &b, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	wr.wr_id = 1;
	ibv_post_send(b.qp, &wr, &bad);
	expect(&b, &w, IBV_WC_BIND_MW, IBV_WC_SUCCESS, 1, "first bind");
	wr.wr_id = 2;
	wr.bind_mw.rkey = ibv_inc_rkey(wr.bind_mw.rkey);
	ibv_post_send(b.qp, &wr, &bad);
	expect(&b, &w, IBV_WC_BIND_MW, IBV_WC_MW_BIND_ERR, 2, "second bind");
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;

		if (ibv_query_qp(b.qp, &qa, IBV_QP_STATE, &qi) || qa.qp_state != IBV_QPS_ERR)
			VT_FAIL("a QP whose bind failed is not in ERR");
	}
	wr.wr_id = 3;
	ibv_post_send(b.qp, &wr, &bad);
	expect(&b, &w, IBV_WC_BIND_MW, IBV_WC_WR_FLUSH_ERR, 3, "bind after the error");
	vt_check_const(b.buf + MW_OFF - GUARD, MW_LEN + 2 * GUARD, 0, "after the binds");
	ibv_dealloc_mw(mw);
	unpair(&a, &b);
}

static void mw_suite(void)
{
	mw_type1();
	for (int how = 0; how < 5; how++)
		mw_type2(how);
	mw_bind_error();
}

/* ---- ibv_rereg_mr ------------------------------------------------------------------------------
 */

static void rereg_suite(void)
{
	struct vt_qp_params p =
	    xparams(IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND);
	struct vt_end a, b;
	uint32_t lkey, rkey;
	struct ibv_pd *pd2;
	uint8_t *nbuf;
	struct xwc w;

	vt_log("rereg_mr: access and PD in place (keys kept), translation (new keys)");
	p.mr_access = IBV_ACCESS_LOCAL_WRITE;
	if (!pair(&a, &b, &p))
		return;
	lkey = b.mr->lkey;
	rkey = b.mr->rkey;
	if (ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))
		VT_FAIL("rereg_mr access: %s", strerror(errno));
	if (b.mr->lkey != lkey || b.mr->rkey != rkey)
		VT_FAIL("rereg_mr access changed the keys 0x%x/0x%x -> 0x%x/0x%x", lkey, rkey,
			b.mr->lkey, b.mr->rkey);
	memset(b.buf + MW_OFF - GUARD, 0, 9000 + 2 * GUARD);
	if (write_status(&a, rkey, (uintptr_t)b.buf + MW_OFF, 9000, 80) != IBV_WC_SUCCESS)
		VT_FAIL("WRITE after granting remote write failed");
	vt_check_const(b.buf + MW_OFF - GUARD, GUARD, 0, "before the WRITE");
	vt_check(b.buf + MW_OFF, 9000, 80, "WRITE after rereg access");
	vt_check_const(b.buf + MW_OFF + 9000, GUARD, 0, "after the WRITE");
	/* back to local only: refused, and nothing written */
	if (ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE))
		VT_FAIL("rereg_mr access back: %s", strerror(errno));
	memset(b.buf + MW_OFF, 0, 9000);
	if (write_status(&a, rkey, (uintptr_t)b.buf + MW_OFF, 9000, 81) != IBV_WC_REM_ACCESS_ERR)
		VT_FAIL("WRITE after taking remote write away was not REM_ACCESS_ERR");
	vt_check_const(b.buf + MW_OFF - GUARD, 9000 + 2 * GUARD, 0, "refused WRITE");
	unpair(&a, &b);

	/* PD: the region leaves the QP's PD (a receive into it fails), and comes back */
	p.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (!pair(&a, &b, &p))
		return;
	pd2 = ibv_alloc_pd(b.ctx);
	lkey = b.mr->lkey;
	if (!pd2 || ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0))
		VT_FAIL("rereg_mr pd: %s", strerror(errno));
	if (b.mr->lkey != lkey || b.mr->pd != pd2)
		VT_FAIL("rereg_mr pd: key 0x%x -> 0x%x", lkey, b.mr->lkey);
	if (write_status(&a, b.mr->rkey, (uintptr_t)b.buf + MW_OFF, 100, 82) !=
	    IBV_WC_REM_ACCESS_ERR)
		VT_FAIL("WRITE into a region of another PD was not REM_ACCESS_ERR");
	if (ibv_dealloc_pd(pd2) != EBUSY)
		VT_FAIL("dealloc of the PD a region moved to: not EBUSY");
	if (ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, b.pd, NULL, 0, 0) || ibv_dealloc_pd(pd2))
		VT_FAIL("rereg_mr pd back / dealloc_pd: %s", strerror(errno));
	/* a read-only region cannot become writable in place (Linux: EPERM) */
	unpair(&a, &b);

	/* translation: a new buffer, new keys; the old buffer is no longer the region */
	p.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (!pair(&a, &b, &p))
		return;
	nbuf = aligned_alloc(4096, 1 << 20);
	if (!nbuf) {
		unpair(&a, &b);
		return;
	}
	memset(nbuf, 0, 1 << 20);
	lkey = b.mr->lkey;
	if (ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, nbuf, 1 << 20, 0)) {
		VT_FAIL("rereg_mr translation: %s", strerror(errno));
	} else {
		if (b.mr->addr != nbuf || b.mr->length != 1 << 20)
			VT_FAIL("rereg_mr translation: addr/length not updated");
		memset(b.buf, 0, 8192);
		if (write_status(&a, b.mr->rkey, (uintptr_t)nbuf + 4096, 12000, 83) !=
		    IBV_WC_SUCCESS)
			VT_FAIL("WRITE into the re-registered buffer failed");
		vt_check_const(nbuf, 4096, 0, "before the WRITE in the new buffer");
		vt_check(nbuf + 4096, 12000, 83, "WRITE into the re-registered buffer");
		vt_check_const(nbuf + 16096, (1 << 20) - 16096, 0, "after it");
		vt_check_const(b.buf, 8192, 0, "the old buffer");
		/* the old range is not the region any more */
		post_recv(&b, 0, 64, 0x90);
		{
			struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a.qp);

			ibv_wr_start(x);
			x->wr_id = 0x91;
			x->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_send(x);
			ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 64);
			ibv_wr_complete(x);
			expect(&a, &w, IBV_WC_SEND, IBV_WC_REM_OP_ERR, 0x91,
			       "SEND into the old range of a re-registered region");
		}
		vt_check_const(b.buf, 8192, 0, "the old buffer after a refused SEND");
		(void)lkey;
	}
	/* the region must be deregistered before its new buffer goes */
	ibv_dereg_mr(b.mr);
	b.mr = NULL;
	free(nbuf);
	unpair(&a, &b);

	/* read-only -> writable in place: EPERM (a region mapped without write) */
	p.mr_access = 0;
	if (!pair(&a, &b, &p))
		return;
	if (ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE) !=
		IBV_REREG_MR_ERR_CMD ||
	    errno != EPERM)
		VT_FAIL("rereg_mr read-only -> writable: not EPERM (%s)", strerror(errno));
	unpair(&a, &b);
}

/* ---- ibv_resize_cq ------------------------------------------------------------------------------
 */

static void resize_suite(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_UD);
	struct vt_end a, b;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	int n = 0, err;

	/* UD sends complete when they leave: the CQEs are there when the resize comes (a card
	 * writes them microseconds after the doorbell; the model before the next command) */
	vt_log("resize_cq: up and down with completions outstanding, below them refused");
	p.max_send_wr = 128;
	p.max_recv_wr = 128;
	if (!pair(&a, &b, &p))
		return;
	ah = vt_ah(&a, &b);
	if (!ah) {
		unpair(&a, &b);
		return;
	}
	for (int i = 0; i < 40; i++) {
		struct ibv_sge sg = {(uintptr_t)a.buf, 8, a.mr->lkey};
		struct ibv_send_wr wr = {.wr_id = (uint64_t)i,
					 .sg_list = &sg,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;

		post_recv(&b, 64u * (unsigned int)i, 64, 1000 + (uint64_t)i);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = b.qp->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
		if (ibv_post_send(a.qp, &wr, &bad))
			VT_FAIL("post SEND %d", i);
	}
	/* two polled: 38 outstanding */
	for (int i = 0; i < 2; i++, n++)
		if (vt_poll(a.cq, &wc, VT_TIMEOUT_MS) != 1 || wc.wr_id != (uint64_t)n)
			VT_FAIL("completion %d before the resize", i);
	err = ibv_resize_cq(a.cq, 20);
	if (err != EINVAL)
		VT_FAIL("resize below the outstanding completions: %d, expected EINVAL", err);
	if (ibv_resize_cq(a.cq, 1000) || a.cq->cqe < 1000)
		VT_FAIL("resize to 1000: %s (cqe %d)", strerror(errno), a.cq->cqe);
	for (int i = 0; i < 10; i++, n++)
		if (vt_poll(a.cq, &wc, VT_TIMEOUT_MS) != 1 || wc.wr_id != (uint64_t)n ||
		    wc.status != IBV_WC_SUCCESS) {
			VT_FAIL("completion %d after growing (wr_id %llu)", n,
				(unsigned long long)wc.wr_id);
			break;
		}
	if (ibv_resize_cq(a.cq, 40) || a.cq->cqe < 40)
		VT_FAIL("resize to 40 with 28 outstanding: %s", strerror(errno));
	for (; n < 40; n++)
		if (vt_poll(a.cq, &wc, VT_TIMEOUT_MS) != 1 || wc.wr_id != (uint64_t)n ||
		    wc.status != IBV_WC_SUCCESS) {
			VT_FAIL("completion %d after shrinking", n);
			break;
		}
	if (!vt_cq_quiet(a.cq, 100))
		VT_FAIL("a completion more than was posted");
	/* the receiver got every message */
	for (int i = 0; i < 40; i++)
		if (vt_poll(b.cq, &wc, VT_TIMEOUT_MS) != 1 || wc.wr_id != 1000 + (uint64_t)i ||
		    wc.byte_len != 48)
			VT_FAIL("receive %d", i);
	/* and the resized CQ keeps working */
	{
		struct ibv_sge sg = {(uintptr_t)a.buf, 8, a.mr->lkey};
		struct ibv_send_wr wr = {.wr_id = 99,
					 .sg_list = &sg,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;

		post_recv(&b, 0, 64, 99);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = b.qp->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
		ibv_post_send(a.qp, &wr, &bad);
		if (vt_poll(a.cq, &wc, VT_TIMEOUT_MS) != 1 || wc.wr_id != 99)
			VT_FAIL("a completion after the resizes");
	}
	ibv_destroy_ah(ah);
	unpair(&a, &b);
}

/* ---- queries
 * -------------------------------------------------------------------------------------- */

static void query_suite(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);
	struct ibv_device_attr_ex ax;
	struct ibv_gid_entry tbl[16];
	struct vt_end a, b;
	ssize_t n;

	vt_log("query_device_ex, query_gid_ex, query_gid_table, query_qp_data_in_order");
	if (!pair(&a, &b, &p))
		return;
	if (ibv_query_device_ex(a.ctx, NULL, &ax))
		VT_FAIL("query_device_ex: %s", strerror(errno));
	if (!(ax.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) ||
	    !(ax.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) ||
	    ax.orig_attr.max_mw <= 0 || !ax.hca_core_clock != !ax.completion_timestamp_mask ||
	    ax.phys_port_cnt_ex != ax.orig_attr.phys_port_cnt)
		VT_FAIL("query_device_ex: cap flags 0x%x max_mw %d clock %llu ts mask 0x%llx",
			ax.orig_attr.device_cap_flags, ax.orig_attr.max_mw,
			(unsigned long long)ax.hca_core_clock,
			(unsigned long long)ax.completion_timestamp_mask);
	n = ibv_query_gid_table(a.ctx, tbl, 16, 0);
	if (n <= 0)
		VT_FAIL("query_gid_table: %zd", n);
	for (ssize_t i = 0; i < n; i++) {
		struct ibv_gid_entry g;
		union ibv_gid gid;

		if (ibv_query_gid_ex(a.ctx, tbl[i].port_num, tbl[i].gid_index, &g, 0) ||
		    ibv_query_gid(a.ctx, (uint8_t)tbl[i].port_num, (int)tbl[i].gid_index, &gid) ||
		    memcmp(&g.gid, &tbl[i].gid, 16) || memcmp(&gid, &tbl[i].gid, 16) ||
		    g.gid_type != tbl[i].gid_type)
			VT_FAIL("GID %u: query_gid_ex / query_gid disagree with the table",
				tbl[i].gid_index);
	}
	/* ConnectX-4 has no qp_data_in_order capability: no promise */
	if (ibv_query_qp_data_in_order(a.qp, IBV_WR_RDMA_WRITE, 0) != 0 ||
	    ibv_query_qp_data_in_order(a.qp, IBV_WR_SEND, 1))
		VT_FAIL("query_qp_data_in_order: not 0");
	unpair(&a, &b);
}

void vt_xverbs_tests(void)
{
	wr_create_suite();
	wr_rc_suite();
	wr_ud_suite();
	mw_suite();
	rereg_suite();
	resize_suite();
	query_suite();
}
