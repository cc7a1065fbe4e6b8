// SPDX-License-Identifier: MIT
/*
 * post_send and post_recv: what IB reports as an immediate error (a malformed work request,
 * a full queue, the wrong QP state) is checked here; what IB reports as an error completion
 * (keys, lengths, remote rights) is found when the work request executes.
 */
#include <errno.h>
#include <string.h>

#include "ntb.h"

/* The opcodes of memory windows (ntb_mw.c): RC and UC, as IB has them. */
static bool mw_opcode(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	return (op == IBV_WR_BIND_MW || op == (enum ibv_wr_opcode)NTB_WR_BIND_MW1 ||
		op == IBV_WR_LOCAL_INV || op == IBV_WR_SEND_WITH_INV) &&
	       (t == IBV_QPT_RC || t == IBV_QPT_UC);
}

static bool ntb_opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	return bv_opcode_ok(t, op) || mw_opcode(t, op) ||
	       (op == (enum ibv_wr_opcode)NTB_WR_ATOMIC_WRITE && t == IBV_QPT_RC);
}

/* What IB refuses at post time; the payload length in *total. */
static int check_send(struct ntb_qp *qp, const struct ibv_send_wr *wr, uint64_t *total)
{
	const unsigned int known = IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
				   IBV_SEND_INLINE;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge ||
	    (wr->num_sge && !wr->sg_list) ||
	    !ntb_opcode_ok(qp->type, wr->opcode) ||
	    (wr->send_flags & ~known))
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW || wr->opcode == (enum ibv_wr_opcode)NTB_WR_BIND_MW1) {
		const struct ibv_mw *mw = wr->bind_mw.mw;

		/* a window of this context; nothing is sent, no data */
		if (!mw || mw->context != qp->vqp.qp.context ||
		    (wr->bind_mw.bind_info.mr &&
		     wr->bind_mw.bind_info.mr->context != qp->vqp.qp.context) ||
		    (wr->send_flags & IBV_SEND_INLINE))
			return EINVAL;
		*total = 0;
		return 0;
	}
	if (wr->opcode == IBV_WR_LOCAL_INV) {
		*total = 0;
		return wr->send_flags & IBV_SEND_INLINE ? EINVAL : 0;
	}
	if (wr->opcode == (enum ibv_wr_opcode)NTB_WR_ATOMIC_WRITE) {
		*total = 8;	/* the data travels in the work request */
		return 0;
	}
	if (qp->type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	*total = 0;
	for (int i = 0; i < wr->num_sge; i++)
		*total += wr->sg_list[i].length;
	if (wr->send_flags & IBV_SEND_INLINE) {
		/* inline: the data is copied now, the buffers may be reused on return */
		if (*total > qp->cap.max_inline_data || wr->opcode == IBV_WR_RDMA_READ ||
		    wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
			return EINVAL;
	}
	return 0;
}

static void queue_send(struct ntb_qp *qp, const struct ibv_send_wr *wr, int state,
		       uint64_t total)
{
	uint32_t idx = qp->sq_head & (qp->sq_size - 1);
	struct ntb_swqe *w = &qp->sq[idx];

	memset(w, 0, offsetof(struct ntb_swqe, sg));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->length = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	w->imm = wr->imm_data;
	switch ((int)wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->raddr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->raddr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	case NTB_WR_BIND_MW1:
		w->bind_type1 = true;
		w->opcode = IBV_WR_BIND_MW;
		/* fall through */
	case IBV_WR_BIND_MW:
		w->mw_key = ((const struct ntb_mw *)wr->bind_mw.mw)->key;
		w->rkey = wr->bind_mw.rkey;
		w->raddr = wr->bind_mw.bind_info.addr;
		w->mw_len = wr->bind_mw.bind_info.length;
		w->bind_lkey = wr->bind_mw.bind_info.mr ? wr->bind_mw.bind_info.mr->lkey : 0;
		w->bind_access = wr->bind_mw.bind_info.mw_access_flags;
		break;
	case IBV_WR_LOCAL_INV:
		w->rkey = wr->invalidate_rkey;
		break;
	case NTB_WR_ATOMIC_WRITE:
		w->opcode = IBV_WR_ATOMIC_WRITE;
		w->raddr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->send_flags &= ~IBV_SEND_INLINE;
		break;
	default:
		break;
	}
	if (w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV ||
	    w->opcode == IBV_WR_ATOMIC_WRITE) {
		/* local operations, or the data is in the work request */
		w->num_sge = 0;
		goto posted;
	}
	if (qp->type == IBV_QPT_UD) {
		struct ntb_ah *ah = (struct ntb_ah *)wr->wr.ud.ah;

		w->remote_qpn = wr->wr.ud.remote_qpn & 0xffffff;
		/* IBTA 10.2.5: a Q_Key with the high bit set means "use the QP's own" */
		w->remote_qkey = (wr->wr.ud.remote_qkey & 0x80000000u) ? qp->qkey :
									    wr->wr.ud.remote_qkey;
		memcpy(w->ud_gid, ah->attr.grh.dgid.raw, 16);
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *buf = qp->sq_inline + (size_t)idx * qp->cap.max_inline_data;
		uint32_t off = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(buf + off, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w->num_sge = 1;
		w->sg[0] = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = off, .lkey = 0 };
	} else {
		w->num_sge = wr->num_sge;
		if (wr->num_sge)	/* a WR without SGEs may have no sg_list at all */
			memcpy(w->sg, wr->sg_list, sizeof(*w->sg) * wr->num_sge);
	}
posted:
	w->state = NTB_SWQE_POSTED;
	if (state == IBV_QPS_ERR || state == IBV_QPS_SQE) {
		/* IBTA 10.8.3.3: work posted to a QP in error completes with a flush error */
		w->state = NTB_SWQE_DONE;
		w->status = IBV_WC_WR_FLUSH_ERR;
	}
	qp->sq_head++;
}

int ntb_post_chain(struct ntb_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad,
		   bool whole)
{
	int state, ret = 0;
	uint64_t total;

	/*
	 * A datagram for a client we have no block for yet: open it now, before the send lock
	 * (opening takes the peer's locks, which nest outside it), so the datagram leaves in this
	 * call as on a NIC rather than when the progress thread has opened the block.
	 */
	if (qp->type == IBV_QPT_UD && qp_state(qp) == IBV_QPS_RTS)
		ntb_ud_open(qp, wr);
	pthread_mutex_lock(&qp->sq_lock);
	state = qp_state(qp);
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR) {
		ret = EINVAL;
		*bad = wr;
		goto out;
	}
	if (whole) {
		/* all of the chain or nothing of it (ibv_wr_complete) */
		uint32_t n = 0;

		for (struct ibv_send_wr *w = wr; w; w = w->next, n++) {
			ret = check_send(qp, w, &total);
			if (ret) {
				*bad = w;
				goto out;
			}
		}
		if (qp->sq_head - qp->sq_tail + n > qp->cap.max_send_wr) {
			ret = ENOMEM;
			*bad = wr;
			goto out;
		}
	}
	for (; wr; wr = wr->next) {
		ret = check_send(qp, wr, &total);
		if (!ret && qp->sq_head - qp->sq_tail >= qp->cap.max_send_wr)
			ret = ENOMEM;
		if (ret) {
			*bad = wr;
			break;
		}
		queue_send(qp, wr, state, total);
	}
	if (state == IBV_QPS_ERR || state == IBV_QPS_SQE) {
		/* flushed work is transmitted by nobody: complete it in order now */
		if (qp->sq_tx != qp->sq_head) {
			for (uint32_t i = qp->sq_tx; i != qp->sq_head; i++) {
				struct ntb_swqe *w = &qp->sq[i & (qp->sq_size - 1)];

				w->state = NTB_SWQE_DONE;
				w->status = IBV_WC_WR_FLUSH_ERR;
			}
			qp->sq_tx = qp->sq_head;
		}
	} else {
		ntb_qp_tx(qp);
	}
	ntb_qp_complete_sq(qp);
out:
	pthread_mutex_unlock(&qp->sq_lock);
	return ret;
}

int ntb_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	return ntb_post_chain(to_ntb_qp(ibqp), wr, bad, false);
}

int ntb_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct ntb_qp *qp = to_ntb_qp(ibqp);
	int state = qp_state(qp), ret;

	if (qp->srq || state == IBV_QPS_RESET) {
		*bad = wr;
		return EINVAL;
	}
	ret = ntb_post_recv_common(qp->ctx, &qp->rq, qp->pd, wr, bad);
	if (qp_state(qp) == IBV_QPS_ERR) {
		/* flushed at once: no message will ever consume them */
		ntb_qp_flush_rq(qp);
	}
	return ret;
}
