// SPDX-License-Identifier: MIT
/*
 * The completer: consumes the response ring a peer client writes for us (ACKs, NAKs, READ
 * data, atomic results) and completes the RC send WQEs they answer, in order. Responses are
 * consumed unconditionally (a response never waits for anything), which is what keeps the
 * request/response rings free of deadlock.
 */
#include <string.h>

#include "ntb.h"

static bool is_rd_atomic(uint8_t op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * The WQE carrying psn: transmitted, or being transmitted (the first segments of a long
 * message are out while the ring has no room for the rest, and the responder may answer
 * them already: a NAK for the first segment). NULL if none.
 */
static struct ntb_swqe *find_psn(struct ntb_qp *qp, uint32_t psn, uint32_t *index)
{
	uint32_t end = qp->sq_tx != qp->sq_head ? qp->sq_tx + 1 : qp->sq_tx;

	for (uint32_t i = qp->sq_tail; i != end; i++) {
		struct ntb_swqe *w = &qp->sq[i & (qp->sq_size - 1)];

		if (w->psn == psn && (w->state == NTB_SWQE_SENT ||
				      (w->state == NTB_SWQE_POSTED && w->sent && i == qp->sq_tx))) {
			*index = i;
			return w;
		}
	}
	return NULL;
}

static void done(struct ntb_qp *qp, struct ntb_swqe *w, enum ibv_wc_status st)
{
	if (w->state == NTB_SWQE_SENT) {
		qp->inflight--;
		if (is_rd_atomic(w->opcode))
			qp->rd_atomic--;
	}
	w->state = NTB_SWQE_DONE;
	w->status = st;
}

/* Everything transmitted up to psn (inclusive) that needs no data back is done. */
static bool ack_upto(struct ntb_qp *qp, uint32_t psn)
{
	bool moved = false;

	for (uint32_t i = qp->sq_tail; i != qp->sq_tx; i++) {
		struct ntb_swqe *w = &qp->sq[i & (qp->sq_size - 1)];

		if (w->state != NTB_SWQE_SENT)
			continue;
		if (ib_psn_cmp(w->psn, psn) > 0)
			break;
		if (is_rd_atomic(w->opcode))
			continue;	/* its response carries the completion */
		done(qp, w, IBV_WC_SUCCESS);
		moved = true;
	}
	return moved;
}

/*
 * Forward progress: the retry counters restart (IBTA; Linux rxe_comp.c,
 * reset_retry_counters()). The transport timer's look at the response ring (retry_wait)
 * ends with the answer it waited for.
 */
static void reset_retries(struct ntb_qp *qp)
{
	qp->retry_left = qp->retry_cnt;
	qp->retry_wait = 0;
	qp->rnr_left = qp->rnr_retry;
}

static void progress(struct ntb_qp *qp)
{
	reset_retries(qp);
	qp->deadline = qp->inflight && ib_ack_timeout_ns(qp->timeout) ?
			       ntb_now() + ib_ack_timeout_ns(qp->timeout) : 0;
	if (qp->deadline)
		ntb_timer(qp->ctx, qp->deadline);
}

static void nak(struct ntb_qp *qp, const struct ntbv_msg *h)
{
	uint32_t i;
	struct ntb_swqe *w;

	/*
	 * A NAK acknowledges everything before it: forward progress, as an ACK's (rxe_comp.c,
	 * check_psn()). Not counting it so let the timer's retries add up over a whole run of
	 * RNR NAKs, each message completed by the NAK of the next one, until retry_cnt was
	 * exhausted by retries hundreds of messages apart (docs/ntb-verbs.md "Retries").
	 */
	if (ack_upto(qp, ib_psn_sub(h->psn, 1)))
		reset_retries(qp);
	w = find_psn(qp, h->psn, &i);
	if (!w)
		return;		/* stale: already retransmitted past it */
	if (h->total == NTBV_NAK_RNR) {
		if (qp->rnr_retry != 7) {
			/* rnr_retry 7 means retry forever (IBTA 9.7.5.2.8) */
			if (!qp->rnr_left) {
				done(qp, w, IBV_WC_RNR_RETRY_EXC_ERR);
				ntb_qp_to_error(qp, true);
				return;
			}
			qp->rnr_left--;
		}
		ntb_qp_rewind(qp, i);
		qp->rnr_until = ntb_now() + 1000ull * ib_rnr_timer_usec((uint8_t)h->arg0);
		ntb_timer(qp->ctx, qp->rnr_until);
		/*
		 * The request was answered: the timer starts afresh with the retransmission,
		 * and so does its look at the response ring. A retry_wait left from before
		 * would let the next expiry count at once, with this QP's next answer (the
		 * next RNR NAK) unread in the ring.
		 */
		qp->deadline = 0;
		qp->retry_wait = 0;
		return;
	}
	switch (h->total) {
	case NTBV_NAK_ACCESS:
		done(qp, w, IBV_WC_REM_ACCESS_ERR);
		break;
	case NTBV_NAK_INV_REQ:
		done(qp, w, IBV_WC_REM_INV_REQ_ERR);
		break;
	default:
		done(qp, w, IBV_WC_REM_OP_ERR);
		break;
	}
	ntb_qp_to_error(qp, true);
}

static void read_resp(struct ntb_qp *qp, const struct ntbv_msg *h, const uint8_t *data)
{
	uint32_t i;
	struct ntb_swqe *w;

	w = find_psn(qp, h->psn, &i);
	if (!w || w->opcode != IBV_WR_RDMA_READ)
		return;
	ack_upto(qp, ib_psn_sub(h->psn, 1));
	if (h->flags & NTBV_F_PLACE) {
		/* the responder put the data into our buffer itself, before this answer */
		if (h->total == w->length && !w->got) {
			w->got = w->length;
			done(qp, w, IBV_WC_SUCCESS);
		}
		return;
	}
	/* the responder sends the data in order: anything else is a stale duplicate */
	if (h->raddr != w->got || h->len > w->length - w->got)
		return;
	ntb_sg_copy_in(w->sg, w->num_sge, w->got, data, h->len);
	w->got += h->len;
	if ((h->flags & NTBV_F_LAST) && w->got == w->length)
		done(qp, w, IBV_WC_SUCCESS);
}

static void atomic_resp(struct ntb_qp *qp, const struct ntbv_msg *h)
{
	uint32_t i;
	struct ntb_swqe *w;

	w = find_psn(qp, h->psn, &i);
	if (!w || (w->opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
		   w->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD))
		return;
	ack_upto(qp, ib_psn_sub(h->psn, 1));
	ntb_sg_copy_in(w->sg, w->num_sge, 0, &h->arg0, sizeof(h->arg0));
	done(qp, w, IBV_WC_SUCCESS);
}

int ntb_comp_process(struct ntb_peer *p, int budget)
{
	struct ntb_context *ctx = p->ctx;
	const uint8_t *data;
	struct ntbv_msg h;
	int n = 0;

	while (n < budget && ntb_rx_peek(p, &p->resp_rx, &h, &data)) {
		struct ntb_qp *qp;

		n++;
		if (h.op == NTBV_OP_PAD)
			goto next;
		qp = ntb_qp_lookup(ctx, h.dst_qpn);
		if (!qp || qp->type != IBV_QPT_RC || qp->peer != p ||
		    qp->peer_epoch != p->rx_epoch || h.src_qpn != qp->dest_qpn)
			goto next;
		pthread_mutex_lock(&qp->sq_lock);
		if (qp_state(qp) != IBV_QPS_RTS && qp_state(qp) != IBV_QPS_SQD) {
			pthread_mutex_unlock(&qp->sq_lock);
			goto next;
		}
		switch (h.op) {
		case NTBV_OP_ACK: {
			bool moved = ack_upto(qp, h.psn);

			NTB_TRACE(NTB_TR_C_ACK, qp->qpn, h.psn, moved, p->resp_rx.cons,
				  qp->retry_wait);
			if (moved)
				progress(qp);
			break;
		}
		case NTBV_OP_NAK:
			NTB_TRACE(NTB_TR_C_NAK, qp->qpn, h.psn, h.total, p->resp_rx.cons,
				  qp->retry_wait);
			nak(qp, &h);
			break;
		case NTBV_OP_READ_RESP:
			read_resp(qp, &h, data);
			progress(qp);
			break;
		case NTBV_OP_ATOMIC_RESP:
			atomic_resp(qp, &h);
			progress(qp);
			break;
		default:
			break;
		}
		ntb_qp_complete_sq(qp);
		/* answers free READ/atomic credits and fences: transmit what waited */
		ntb_qp_tx(qp);
		ntb_qp_complete_sq(qp);
		pthread_mutex_unlock(&qp->sq_lock);
next:
		ntb_rx_advance(&p->resp_rx, &h);
	}
	return n;
}
