// SPDX-License-Identifier: MIT
/*
 * The ibv_wr_* post-send API (ibv_wr_post(3); rdma-core providers/mlx5/qp.c mlx5_send_wr_*):
 * the same WQEs as post_send (send.c), built one call at a time.
 *
 *   ibv_wr_start           takes the send queue lock and remembers where the batch began
 *   ibv_wr_<op>            opens a WQE at the producer counter: control segment and the
 *                          transport segments of the op (remote address, atomic operands, the
 *                          UD address vector's room); bind_mw and local_inv are whole UMR WQEs
 *   ibv_wr_set_ud_addr     UD: the address vector
 *   ibv_wr_set_sge[_list],
 *   ibv_wr_set_inline_data[_list]   the data; the WQE is finished when it has everything
 *                          (RC/UC: the data; UD: the data and the address)
 *   ibv_wr_complete        rings the doorbell for the batch (BlueFlame for one inline WQE),
 *                          or, after any error in the batch, rolls it all back and fails
 *   ibv_wr_abort           rolls the batch back
 *
 * Errors inside the batch (queue full, too many SGEs, an op the QP was not created for, a
 * WQE that outgrows its slot, a WQE left unfinished) are remembered and reported by
 * ibv_wr_complete, which then posts nothing (mlx5's rule).
 */
#include <errno.h>

#include "wqe.h"

static inline struct cx4_qp *qp_of(struct ibv_qp_ex *ex)
{
	return (struct cx4_qp *)ex;
}

static inline void fail(struct cx4_qp *qp, int err)
{
	if (!qp->wr.err)
		qp->wr.err = err;
}

static void wr_start(struct ibv_qp_ex *ex)
{
	struct cx4_qp *qp = qp_of(ex);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr.cur_post_rb = qp->sq.cur_post;
	qp->wr.fm_cache_rb = qp->fm_cache;
	qp->wr.err = 0;
	qp->wr.nreq = 0;
	qp->wr.ctrl = NULL;
	qp->wr.last = NULL;
	qp->wr.inl = false;
}

static void rollback(struct cx4_qp *qp)
{
	qp->sq.cur_post = qp->wr.cur_post_rb;
	qp->fm_cache = qp->wr.fm_cache_rb;
}

static int wr_complete(struct ibv_qp_ex *ex)
{
	struct cx4_qp *qp = qp_of(ex);
	int err = qp->wr.err;

	if (!err && qp->wr.ctrl)
		err = EINVAL; /* a WQE was begun and never given its data */
	if (!err && !qp->sq_ready)
		err = EINVAL; /* not in RTS (rdma-core mlx5_send_wr_complete_error) */
	if (err)
		rollback(qp);
	else if (qp->wr.nreq)
		cx4_sq_doorbell(qp, qp->wr.nreq, qp->wr.inl && qp->wr.nreq == 1, qp->wr.last_ds,
				qp->wr.last);
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}

static void wr_abort(struct ibv_qp_ex *ex)
{
	struct cx4_qp *qp = qp_of(ex);

	rollback(qp);
	pthread_spin_unlock(&qp->sq.lock);
}

/*
 * Open a WQE of verbs op `op` at the producer counter; the caller adds its transport
 * segments. NULL (and the error remembered) when it cannot be posted.
 */
static struct mlx5_wqe_ctrl_seg *begin(struct cx4_qp *qp, enum ibv_wr_opcode op, uint64_t send_op,
				       uint8_t opcode)
{
	struct ibv_qp_ex *ex = &qp->vqp.qp_ex;
	struct mlx5_wqe_ctrl_seg *ctrl;
	uint8_t fence;

	if (qp->wr.ctrl) {
		fail(qp, EINVAL); /* the previous WQE has no data yet */
		qp->wr.ctrl = NULL;
	}
	if (qp->wr.err)
		return NULL;
	if (!(qp->send_ops & send_op) || !cx4_opcode_ok(qp->vqp.qp.qp_type, op)) {
		fail(qp, EINVAL);
		return NULL;
	}
	if (cx4_sq_overflow(qp, qp->wr.nreq)) {
		fail(qp, ENOMEM);
		return NULL;
	}
	fence = (ex->wr_flags & IBV_SEND_FENCE) ? MLX5_WQE_CTRL_FENCE : qp->fm_cache;
	qp->fm_cache = 0;
	ctrl = cx4_wqe_begin(qp, opcode, cx4_fm_ce_se(qp, ex->wr_flags, fence));
	qp->wr.ctrl = ctrl;
	qp->wr.ds = sizeof(*ctrl) / 16;
	qp->wr.setters = 0;
	qp->wr.wc_op = 0;
	qp->wr.atomic = false;
	qp->wr.scatter = op == IBV_WR_RDMA_READ;
	qp->wr.wqe_inl = false;
	qp->wr.data = cx4_sq_next(qp, (uint8_t *)ctrl + sizeof(*ctrl));
	return ctrl;
}

/* Everything of the open WQE is there: give it its size and count it. */
static void finish(struct cx4_qp *qp)
{
	struct mlx5_wqe_ctrl_seg *ctrl = qp->wr.ctrl;

	qp->wr.ctrl = NULL;
	if (qp->wr.ds * 16 > qp->sq_wqe_size) {
		fail(qp, EINVAL); /* it would outgrow the slot the queue was sized for */
		return;
	}
	cx4_wqe_finish(qp, ctrl, qp->wr.ds, qp->vqp.qp_ex.wr_id, qp->sq.head + qp->wr.nreq,
		       qp->wr.wc_op);
	qp->wr.nreq++;
	qp->wr.last = ctrl;
	qp->wr.last_ds = qp->wr.ds;
	qp->wr.inl = qp->wr.wqe_inl;
}

/* A data setter or the UD address was given: the WQE is finished when it has both. */
static void setter_done(struct cx4_qp *qp)
{
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && ++qp->wr.setters < 2)
		return;
	finish(qp);
}

/* ---- operations ------------------------------------------------------------------------------ */

static void send_op(struct cx4_qp *qp, enum ibv_wr_opcode op, uint64_t flag, uint8_t opcode,
		    __be32 imm)
{
	struct mlx5_wqe_ctrl_seg *ctrl = begin(qp, op, flag, opcode);

	if (!ctrl)
		return;
	ctrl->imm = imm;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		/* the address vector's room; ibv_wr_set_ud_addr fills it */
		qp->wr.ud_av = qp->wr.data;
		qp->wr.data = cx4_sq_next(qp, qp->wr.data + sizeof(struct mlx5_wqe_datagram_seg));
		qp->wr.ds += sizeof(struct mlx5_wqe_datagram_seg) / 16;
	}
}

static void wr_send(struct ibv_qp_ex *ex)
{
	send_op(qp_of(ex), IBV_WR_SEND, IBV_QP_EX_WITH_SEND, MLX5_OPCODE_SEND, 0);
}

static void wr_send_imm(struct ibv_qp_ex *ex, __be32 imm)
{
	send_op(qp_of(ex), IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM, MLX5_OPCODE_SEND_IMM,
		imm);
}

static void wr_send_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	send_op(qp_of(ex), IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV,
		MLX5_OPCODE_SEND_INVAL, htobe32(rkey));
}

static void rdma_op(struct cx4_qp *qp, enum ibv_wr_opcode op, uint64_t flag, uint8_t opcode,
		    uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct mlx5_wqe_ctrl_seg *ctrl = begin(qp, op, flag, opcode);

	if (!ctrl)
		return;
	ctrl->imm = imm;
	cx4_set_raddr_seg(qp->wr.data, raddr, rkey);
	qp->wr.data = cx4_sq_next(qp, qp->wr.data + sizeof(struct mlx5_wqe_raddr_seg));
	qp->wr.ds += sizeof(struct mlx5_wqe_raddr_seg) / 16;
}

static void wr_rdma_write(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr)
{
	rdma_op(qp_of(ex), IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE,
		rkey, raddr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	rdma_op(qp_of(ex), IBV_WR_RDMA_WRITE_WITH_IMM, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		MLX5_OPCODE_RDMA_WRITE_IMM, rkey, raddr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr)
{
	rdma_op(qp_of(ex), IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ, MLX5_OPCODE_RDMA_READ, rkey,
		raddr, 0);
}

static void atomic_op(struct cx4_qp *qp, bool cmp_swap, uint32_t rkey, uint64_t raddr,
		      uint64_t swap_add, uint64_t compare)
{
	struct mlx5_wqe_ctrl_seg *ctrl =
	    cmp_swap ? begin(qp, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
			     MLX5_OPCODE_ATOMIC_CS)
		     : begin(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
			     MLX5_OPCODE_ATOMIC_FA);

	if (!ctrl)
		return;
	cx4_set_raddr_seg(qp->wr.data, raddr, rkey);
	cx4_set_atomic_seg(qp->wr.data + sizeof(struct mlx5_wqe_raddr_seg), cmp_swap, swap_add,
			   compare);
	qp->wr.data = cx4_sq_next(qp, qp->wr.data + sizeof(struct mlx5_wqe_raddr_seg) +
					  sizeof(struct mlx5_wqe_atomic_seg));
	qp->wr.ds += (sizeof(struct mlx5_wqe_raddr_seg) + sizeof(struct mlx5_wqe_atomic_seg)) / 16;
	qp->wr.atomic = true;
	qp->wr.scatter = true;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr, uint64_t compare,
			      uint64_t swap)
{
	atomic_op(qp_of(ex), true, rkey, raddr, swap, compare);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	atomic_op(qp_of(ex), false, rkey, raddr, add, 0);
}

/* bind_mw and local_inv: a whole UMR WQE at once (mw.c builds its segments). */
static void umr_op(struct cx4_qp *qp, enum ibv_wr_opcode op, uint64_t flag, uint32_t key,
		   enum ibv_mw_type type, uint32_t new_rkey, const struct ibv_mw_bind_info *bi)
{
	struct mlx5_wqe_ctrl_seg *ctrl = begin(qp, op, flag, MLX5_OPCODE_UMR);
	uint8_t *seg;
	int err;

	if (!ctrl)
		return;
	ctrl->imm = htobe32(key);
	seg = qp->wr.data;
	err = cx4_umr_bind_segs(qp, type, new_rkey, bi, &seg, &qp->wr.ds);
	if (err) {
		fail(qp, err);
		qp->wr.ctrl = NULL;
		return;
	}
	qp->wr.wc_op = op == IBV_WR_BIND_MW ? IBV_WC_BIND_MW : IBV_WC_LOCAL_INV;
	finish(qp);
	/* what follows waits for the window change (rdma-core _build_umr_wqe) */
	qp->fm_cache = MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE;
}

static void wr_bind_mw(struct ibv_qp_ex *ex, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *bi)
{
	struct cx4_qp *qp = qp_of(ex);

	if (!mw || mw->type != IBV_MW_TYPE_2 || mw->context != qp->vqp.qp.context ||
	    (bi->mr && bi->mr->context != qp->vqp.qp.context)) {
		fail(qp, EINVAL);
		return;
	}
	umr_op(qp, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW, mw->rkey, IBV_MW_TYPE_2, rkey, bi);
}

static void wr_local_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	static const struct ibv_mw_bind_info none;

	umr_op(qp_of(ex), IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV, rkey, IBV_MW_TYPE_2, 0,
	       &none);
}

/* ---- setters -----------------------------------------------------------------------------------
 */

/* The open WQE, or NULL (error remembered) when there is none to give data to. */
static bool open_wqe(struct cx4_qp *qp)
{
	if (qp->wr.ctrl)
		return true;
	fail(qp, EINVAL);
	return false;
}

static void wr_set_ud_addr(struct ibv_qp_ex *ex, struct ibv_ah *ah, uint32_t rqpn, uint32_t qkey)
{
	struct cx4_qp *qp = qp_of(ex);

	if (!open_wqe(qp))
		return;
	if (!ah || ah->context != qp->vqp.qp.context) {
		fail(qp, EINVAL);
		qp->wr.ctrl = NULL;
		return;
	}
	cx4_set_datagram_seg(qp->wr.ud_av, to_cx4_ah(ah), rqpn, qkey);
	setter_done(qp);
}

static void add_sge(struct cx4_qp *qp, uint32_t lkey, uint64_t addr, uint32_t len)
{
	if (!len)
		return; /* zero-length entries carry nothing (rdma-core skips them too) */
	if (qp->wr.atomic) {
		if (len < 8) {
			fail(qp, EINVAL);
			return;
		}
		len = 8; /* the 8-byte result of the atomic */
	}
	cx4_set_data_seg(qp->wr.data, len, lkey, addr);
	qp->wr.data = cx4_sq_next(qp, qp->wr.data + sizeof(struct mlx5_wqe_data_seg));
	qp->wr.ds++;
}

static void wr_set_sge(struct ibv_qp_ex *ex, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct cx4_qp *qp = qp_of(ex);

	if (!open_wqe(qp))
		return;
	if (qp->wr.atomic && !len) {
		fail(qp, EINVAL);
		qp->wr.ctrl = NULL;
		return;
	}
	add_sge(qp, lkey, addr, len);
	setter_done(qp);
}

static void wr_set_sge_list(struct ibv_qp_ex *ex, size_t n, const struct ibv_sge *sg)
{
	struct cx4_qp *qp = qp_of(ex);

	if (!open_wqe(qp))
		return;
	if (n > (size_t)qp->sq.max_gs || (qp->wr.atomic && n != 1)) {
		fail(qp, qp->wr.atomic ? EINVAL : ENOMEM);
		qp->wr.ctrl = NULL;
		return;
	}
	for (size_t i = 0; i < n; i++)
		add_sge(qp, sg[i].lkey, sg[i].addr, sg[i].length);
	setter_done(qp);
}

static void set_inline(struct cx4_qp *qp, size_t n, const struct ibv_data_buf *buf)
{
	struct mlx5_wqe_inl_data_seg *inl;
	uint8_t *p;
	size_t total = 0;

	if (!open_wqe(qp))
		return;
	/* READs and atomics receive into their data segments: no inline data (post_send's rule) */
	if (qp->wr.scatter) {
		fail(qp, EINVAL);
		qp->wr.ctrl = NULL;
		return;
	}
	inl = (struct mlx5_wqe_inl_data_seg *)qp->wr.data;
	p = qp->wr.data + sizeof(*inl);
	for (size_t i = 0; i < n; i++) {
		total += buf[i].length;
		if (total > (size_t)qp->max_inline) {
			fail(qp, ENOMEM);
			qp->wr.ctrl = NULL;
			return;
		}
		p = cx4_sq_copy(qp, p, buf[i].addr, buf[i].length);
	}
	qp->wr.wqe_inl = true; /* a candidate for BlueFlame */
	if (total) {
		inl->byte_count = htobe32((uint32_t)total | MLX5_INLINE_SEG);
		qp->wr.ds += (unsigned int)(cx4_align(total + sizeof(*inl), 16) / 16);
	}
	setter_done(qp);
}

static void wr_set_inline_data(struct ibv_qp_ex *ex, void *addr, size_t len)
{
	struct ibv_data_buf b = {.addr = addr, .length = len};

	set_inline(qp_of(ex), 1, &b);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *ex, size_t n, const struct ibv_data_buf *b)
{
	set_inline(qp_of(ex), n, b);
}

/* ---- setup -------------------------------------------------------------------------------------
 */

/* What each transport carries (cx4_opcode_ok) as send_ops_flags; TSO, atomic write: no. */
#define OPS_UD (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define OPS_UC                                                                     \
	(OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define OPS_RC                                                                   \
	(OPS_UC | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV)

uint64_t cx4_send_ops_supported(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return OPS_RC;
	case IBV_QPT_UC:
		return OPS_UC;
	case IBV_QPT_UD:
		return OPS_UD;
	default:
		return 0;
	}
}

void cx4_qp_init_wr_ops(struct cx4_qp *qp)
{
	struct ibv_qp_ex *ex = &qp->vqp.qp_ex;
	enum ibv_qp_type type = qp->vqp.qp.qp_type;

	ex->wr_start = wr_start;
	ex->wr_complete = wr_complete;
	ex->wr_abort = wr_abort;
	ex->wr_send = wr_send;
	ex->wr_send_imm = wr_send_imm;
	ex->wr_set_sge = wr_set_sge;
	ex->wr_set_sge_list = wr_set_sge_list;
	ex->wr_set_inline_data = wr_set_inline_data;
	ex->wr_set_inline_data_list = wr_set_inline_data_list;
	if (type == IBV_QPT_UD) {
		ex->wr_set_ud_addr = wr_set_ud_addr;
		return;
	}
	ex->wr_rdma_write = wr_rdma_write;
	ex->wr_rdma_write_imm = wr_rdma_write_imm;
	ex->wr_bind_mw = wr_bind_mw;
	ex->wr_local_inv = wr_local_inv;
	if (type != IBV_QPT_RC)
		return;
	ex->wr_send_inv = wr_send_inv;
	ex->wr_rdma_read = wr_rdma_read;
	ex->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	ex->wr_atomic_fetch_add = wr_atomic_fetch_add;
}
