// SPDX-License-Identifier: MIT
/*
 * The completer: acknowledgements and responses -> completions, retries ([IBTA] ch. 9.7.5
 * "Responses", 9.7.6 "Error handling"; structured like Linux rxe_comp.c).
 *
 *   ACK (AETH 0x00-0x1F): cumulative; every SEND/WRITE whose last PSN it covers is done. An ACK
 *     beyond an unanswered READ/atomic means its responses were lost (implied NAK): resend it.
 *   RNR NAK (0x20 | timer): wait the RNR timer, then resend from its PSN; rnr_retry times
 *     (7 = forever), then RNR_RETRY_EXC (0x16).
 *   NAK PSN sequence error (0x60): go back to its PSN (go-back-N), counting a retry.
 *   Going back (NAK, implied NAK, timeout) counts one retry per time the requests are sent
 *   again, not per packet that shows the loss: until something new is acknowledged or the
 *   timer fires, another NAK, implied NAK or out-of-sequence response for the same PSN is the
 *   same loss (rxe's comp.started_retry). retry_count such times without progress, then
 *   TRANSPORT_RETRY_EXC (0x15).
 *   NAK invalid request / remote access / remote operational (0x61-0x63): the WQE completes
 *     with REMOTE_INVAL_REQ / REMOTE_ACCESS / REMOTE_OP (0x12-0x14), the QP goes to ERR.
 *   READ response: implicit ACK of everything before; the data goes to the WQE's scatter list
 *     (local write access) in order; a gap (a later response than expected: the expected one
 *     was lost) sends the READ again from the missing PSN, once for that PSN.
 *   ATOMIC ACK: the original value goes to the WQE's 8-byte buffer, in host order if
 *     atomic_req_8B_endianness_mode is 1, big-endian otherwise.
 *   Local ACK timeout (4.096 us << ack_timeout without progress): go back to the oldest
 *     unacknowledged PSN, retry_count times, then TRANSPORT_RETRY_EXC (0x15); until an ACK
 *     or NAK answers, only that one packet is outstanding (req.c, window_full).
 * Completions are delivered in WQE order; unsignalled WQEs (no CQ_UPDATE) produce no CQE.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

static inline bool in_flight(const struct mreq *r, uint32_t pos)
{
	return pos - r->swq_tail < r->swq_head - r->swq_tail;
}

void cx4m_comp_retire(struct mdev *d, struct mqp *qp)
{
	struct mreq *r = &qp->req;

	while (r->swq_tail != r->swq_head) {
		struct mswqe *e = &r->swq[r->swq_tail % r->swq_size];

		if (!e->done)
			break;
		if (e->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE)
			cx4m_cqe_req(d, qp, e,
				     e->opcode == MLX5_OPCODE_ATOMIC_CS ||
					     e->opcode == MLX5_OPCODE_ATOMIC_FA
					 ? 8
					 : e->len);
		r->ci = (uint16_t)(e->idx + e->nbb);
		r->swq_tail++;
	}
	if (r->pos - r->swq_tail > r->swq_head - r->swq_tail) {
		r->pos = r->swq_tail;
		r->cur_started = false;
	}
	if (r->swq_tail == r->swq_head)
		cx4m_mtimer_cancel(&d->timers, &r->retry_timer);
}

void cx4m_comp_sent(struct mdev *d, struct mqp *qp, uint32_t pos)
{
	struct mreq *r = &qp->req;

	if (!r->swq || !in_flight(r, pos))
		return;
	r->swq[pos % r->swq_size].done = 1;
	cx4m_comp_retire(d, qp);
}

static void flush_entry(struct mdev *d, struct mqp *qp, struct mswqe *e)
{
	cx4m_cqe_req_err(d, qp, e->idx, e->opcode, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
}

void cx4m_comp_error(struct mdev *d, struct mqp *qp, uint32_t pos, uint8_t syndrome)
{
	struct mreq *r = &qp->req;

	cx4m_comp_retire(d, qp);
	if (!in_flight(r, pos))
		return;
	/* older WQEs still outstanding are flushed first: completions stay in order */
	while (r->swq_tail != pos) {
		struct mswqe *e = &r->swq[r->swq_tail % r->swq_size];

		if (e->done && (e->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE))
			cx4m_cqe_req(d, qp, e, e->len);
		else if (!e->done)
			flush_entry(d, qp, e);
		r->swq_tail++;
	}
	cx4m_cqe_req_err(d, qp, r->swq[pos % r->swq_size].idx, r->swq[pos % r->swq_size].opcode,
			 syndrome);
	r->swq_tail++;
	cx4m_qp_to_error(d, qp, 0xff);
}

void cx4m_comp_flush_sq(struct mdev *d, struct mqp *qp)
{
	struct mreq *r = &qp->req;
	uint8_t rec[4];

	if (qp->no_sq || !r->swq)
		return;
	cx4m_comp_retire(d, qp);
	while (r->swq_tail != r->swq_head) {
		struct mswqe *e = &r->swq[r->swq_tail % r->swq_size];

		if (e->done && (e->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE))
			cx4m_cqe_req(d, qp, e, e->len);
		else if (!e->done)
			flush_entry(d, qp, e);
		r->swq_tail++;
	}
	r->pos = r->swq_head;
	r->cur_started = false;
	r->reads_out = 0;
	r->rnr_wait = false;
	cx4m_mtimer_cancel(&d->timers, &r->retry_timer);
	cx4m_mtimer_cancel(&d->timers, &r->rnr_timer);
	/* WQEs posted but never started */
	if (cx4m_dma_read(d, qp->dbr + 4, rec, sizeof(rec)) == 0) {
		r->pi = (uint16_t)cx4_be32_load(rec);
		while (r->next != r->pi) {
			uint8_t nbb;
			int op = cx4m_wqe_opcode(d, qp, r->next, &nbb);

			if (op < 0)
				break;
			cx4m_cqe_req_err(d, qp, r->next, (uint8_t)op,
					 MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
			r->next = (uint16_t)(r->next + nbb);
		}
	}
	r->ci = r->next;
}

/*
 * The first ACK after a local ACK timeout acknowledges more than the one packet resent: the
 * first transmission is still arriving at a slow responder, nothing was lost, and what is
 * behind it is in flight too. Sending resumes where it stood when the timer fired instead of
 * going back over all of it (TCP's F-RTO, RFC 5682, for the same spurious timeout); a loss
 * among the rest still shows as a NAK or another timeout.
 */
static void undo_spurious_timeout(struct mreq *r)
{
	if (ib_psn_sub(r->ack_psn, r->probe_psn) <= 1 ||
	    ib_psn_sub(r->ack_psn, r->probe_psn) >= (1u << 23))
		return;
	r->pos = r->resume_pos;
	r->cur_psn = r->resume_cur_psn;
	r->cur_started = r->resume_started;
}

/* Progress: the retry counter starts over, the timer restarts (or stops). */
static void progress(struct mdev *d, struct mqp *qp)
{
	struct mreq *r = &qp->req;

	r->retry_left = qp->retry_count;
	r->rnr_left = qp->rnr_retry;
	r->reissued = false;
	if (r->probe)
		undo_spurious_timeout(r);
	r->probe = false;
	cx4m_mtimer_cancel(&d->timers, &r->retry_timer);
	cx4m_comp_retire(d, qp);
	if (r->swq_tail != r->swq_head && ib_psn_sub(r->sent_psn, r->ack_psn))
		cx4m_req_arm_retry(d, qp);
	cx4m_qp_activate(d, qp);
}

/* The oldest outstanding entry that still waits for something. */
static uint32_t oldest_open(const struct mreq *r)
{
	uint32_t p = r->swq_tail;

	while (p != r->swq_head && r->swq[p % r->swq_size].done)
		p++;
	return p;
}

/*
 * Go back to psn and send again from there, because the responder said (NAK sequence error)
 * or showed (implied NAK: a later response or ACK) that what was sent from psn on was lost
 * ([IBTA] 9.7.5.1.x). Once per PSN until progress or a timeout: the responses or NAKs still
 * arriving from before the resend show the same loss again. pos: the WQE that fails when
 * the retries are exhausted. Returns false when they were (the QP is in ERR).
 */
static bool go_back(struct mdev *d, struct mqp *qp, uint32_t psn, uint32_t pos)
{
	struct mreq *r = &qp->req;

	if (r->reissued && r->reissue_psn == psn)
		return true;
	if (!r->retry_left) {
		if (pos != r->swq_head)
			cx4m_comp_error(d, qp, pos, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
		return false;
	}
	r->retry_left--;
	r->reissued = true;
	r->reissue_psn = psn;
	r->probe = false; /* the responder answered: the whole window again */
	cx4m_req_rewind(d, qp, psn);
	return true;
}

/*
 * Everything up to and including psn is acknowledged. Returns false when an unanswered
 * READ/atomic stands in the way (it is then resent).
 */
static bool ack_upto(struct mdev *d, struct mqp *qp, uint32_t psn)
{
	struct mreq *r = &qp->req;

	/* only PSNs in [ack_psn, sent_psn) mean anything; older ones are duplicates */
	if (ib_psn_sub(psn, r->ack_psn) >= ib_psn_sub(r->sent_psn, r->ack_psn))
		return true;
	for (uint32_t p = r->swq_tail; p != r->swq_head; p++) {
		struct mswqe *e = &r->swq[p % r->swq_size];

		if (e->done || wqe_local(e->opcode))
			continue;
		if (ib_psn_sub(psn, e->first_psn) >= (1u << 23))
			break; /* e starts after psn */
		if (e->opcode == MLX5_OPCODE_RDMA_READ || e->opcode == MLX5_OPCODE_ATOMIC_CS ||
		    e->opcode == MLX5_OPCODE_ATOMIC_FA) {
			/* implied NAK: its responses were lost; ask again from what is missing */
			uint32_t at = ib_psn_add(e->first_psn, (e->len - e->resid) / qp->pmtu);

			if (e->opcode != MLX5_OPCODE_RDMA_READ)
				at = e->first_psn;
			if (at != r->ack_psn) {
				/* what came before it is acknowledged: progress */
				r->ack_psn = at;
				progress(d, qp);
			}
			go_back(d, qp, at, p);
			return false;
		}
		if (ib_psn_sub(e->last_psn, e->first_psn) <= ib_psn_sub(psn, e->first_psn))
			e->done = 1;
		else
			break;
	}
	r->ack_psn = ib_psn_add(psn, 1);
	progress(d, qp);
	return true;
}

void cx4m_comp_retry_timeout(struct mdev *d, struct mtimer *t)
{
	struct mqp *qp = (struct mqp *)((uint8_t *)t - offsetof(struct mqp, req.retry_timer));
	struct mreq *r = &qp->req;
	uint32_t p;

	if (qp->state != CX4_QP_STATE_RTS && qp->state != CX4_QP_STATE_SQD)
		return;
	p = oldest_open(r);
	if (p == r->swq_head)
		return;
	if (!r->retry_left) {
		cx4m_comp_error(d, qp, p, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
		return;
	}
	r->retry_left--;
	d->stats.retry_timeouts++;
	/* a new resend: whatever shows a loss from here on is a new one */
	r->reissued = true;
	r->reissue_psn = r->ack_psn;
	/* one packet until the responder answers (req.c, window_full) */
	if (!r->probe) {
		r->resume_pos = r->pos;
		r->resume_cur_psn = r->cur_psn;
		r->resume_started = r->cur_started;
	}
	r->probe = true;
	r->probe_psn = r->ack_psn;
	cx4m_req_rewind(d, qp, r->ack_psn);
	cx4m_req_arm_retry(d, qp);
}

void cx4m_comp_rnr_timeout(struct mdev *d, struct mtimer *t)
{
	struct mqp *qp = (struct mqp *)((uint8_t *)t - offsetof(struct mqp, req.rnr_timer));

	if (!qp->req.rnr_wait || qp->state != CX4_QP_STATE_RTS)
		return;
	qp->req.rnr_wait = false;
	cx4m_req_rewind(d, qp, qp->req.rnr_psn);
	cx4m_req_arm_retry(d, qp);
}

/* The swq entry whose PSN range holds psn, or swq_head. */
static uint32_t entry_of(const struct mreq *r, uint32_t psn)
{
	for (uint32_t p = r->swq_tail; p != r->swq_head; p++) {
		const struct mswqe *e = &r->swq[p % r->swq_size];

		if (!wqe_local(e->opcode) &&
		    ib_psn_sub(psn, e->first_psn) <= ib_psn_sub(e->last_psn, e->first_psn))
			return p;
	}
	return r->swq_head;
}

static void on_nak(struct mdev *d, struct mqp *qp, const struct roce_pkt *p, uint8_t syn)
{
	struct mreq *r = &qp->req;
	uint32_t pos;

	if (ib_psn_sub(p->psn, r->ack_psn) >= ib_psn_sub(r->sent_psn, r->ack_psn) + 1)
		return; /* not about anything outstanding */
	if (r->rnr_wait)
		return; /* waiting out an RNR NAK: resending anyway */
	if (ib_psn_sub(p->psn, r->ack_psn) && !ack_upto(d, qp, ib_psn_sub(p->psn, 1)))
		return;
	pos = entry_of(r, p->psn);
	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_RNR_NAK:
		if (pos == r->swq_head)
			return;
		if (qp->rnr_retry != 7) {
			if (!r->rnr_left) {
				cx4m_comp_error(d, qp, pos, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
				return;
			}
			r->rnr_left--;
		}
		r->rnr_wait = true;
		r->rnr_psn = p->psn;
		r->probe = false;
		cx4m_mtimer_cancel(&d->timers, &r->retry_timer);
		cx4m_mtimer_arm(&d->timers, &r->rnr_timer,
				d->now + 1000ull * ib_rnr_timer_usec(syn & ROCE_AETH_VALUE_MASK));
		return;
	case ROCE_AETH_NAK:
		switch (syn & ROCE_AETH_VALUE_MASK) {
		case ROCE_NAK_PSN_SEQ_ERR:
			go_back(d, qp, p->psn, pos);
			return;
		case ROCE_NAK_INV_REQ:
			if (pos != r->swq_head)
				cx4m_comp_error(d, qp, pos, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
			return;
		case ROCE_NAK_REM_ACC_ERR:
			if (pos != r->swq_head)
				cx4m_comp_error(d, qp, pos, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
			return;
		default:
			if (pos != r->swq_head)
				cx4m_comp_error(d, qp, pos, MLX5_CQE_SYNDROME_REMOTE_OP_ERR);
			return;
		}
	default:
		return; /* reserved AETH type: ignored */
	}
}

/* The completer's view of a WQE's scatter list (for READ data and atomic results). */
static struct mwqe *comp_wqe(struct mdev *d, struct mqp *qp, uint16_t idx)
{
	struct mreq *r = &qp->req;

	if (!r->cwqe) {
		r->cwqe = malloc(sizeof(*r->cwqe));
		if (!r->cwqe)
			return NULL;
	}
	if (!r->cwqe_valid || r->cwqe_idx != idx) {
		r->cwqe_valid = cx4m_wqe_fetch(d, qp, idx, r->cwqe) == 0;
		r->cwqe_idx = idx;
	}
	return r->cwqe_valid ? r->cwqe : NULL;
}

/* Write data received for a READ/atomic into the WQE's scatter list at off. */
static int scatter(struct mdev *d, struct mqp *qp, const struct mwqe *w, uint32_t off,
		   const uint8_t *data, uint32_t len, bool sync)
{
	struct dseg segs[MQP_MAX_SEGS];

	for (uint32_t i = 0; i < w->nsge && len; i++) {
		const struct msge *s = &w->sge[i];
		uint32_t take;
		int n;

		if (off >= s->len) {
			off -= s->len;
			continue;
		}
		take = s->len - off < len ? s->len - off : len;
		n = cx4m_mkey_xlate(d, s->lkey, qp->pd, qp->qpn, s->addr + off, take, MKEY_LW,
				    qp->rlky, segs, MQP_MAX_SEGS);
		if (n < 0)
			return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		if (sync) {
			if (cx4m_dseg_write(segs, n, data))
				return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		} else {
			cx4m_dseg_copy_batched(&d->rx_dma, segs, n, (uint8_t *)data, qp->qpn);
		}
		data += take;
		len -= take;
		off = 0;
	}
	return len ? MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR : 0;
}

static void on_read_resp(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mreq *r = &qp->req;
	uint32_t pos = entry_of(r, p->psn), expect, off;
	struct mswqe *e;
	struct mwqe *w;
	int synd;

	if (pos == r->swq_head)
		return;
	e = &r->swq[pos % r->swq_size];
	if (e->opcode != MLX5_OPCODE_RDMA_READ || e->done)
		return;
	off = e->len - e->resid;
	expect = ib_psn_add(e->first_psn, off / qp->pmtu);
	if (ib_psn_sub(p->psn, expect) >= (1u << 23))
		return; /* a duplicate of what we have */
	/* the response acknowledges everything before the READ (unless an earlier READ or
	 * atomic is still unanswered: then it is the one to ask again first) */
	if (ib_psn_sub(e->first_psn, r->ack_psn) && ib_psn_sub(e->first_psn, r->ack_psn) < (1u << 23)) {
		if (!ack_upto(d, qp, ib_psn_sub(e->first_psn, 1)))
			return;
		if (e->done || !in_flight(r, pos))
			return;
	}
	if (p->psn != expect) {
		/* a response packet went missing (implied NAK): ask again from there, once */
		r->ack_psn = expect;
		go_back(d, qp, expect, pos);
		return;
	}
	if ((p->psn != e->last_psn && p->payload_len != qp->pmtu) ||
	    (p->psn == e->last_psn && p->payload_len != e->resid) || p->payload_len > e->resid) {
		cx4m_comp_error(d, qp, pos, MLX5_CQE_SYNDROME_BAD_RESP_ERR);
		return;
	}
	w = comp_wqe(d, qp, e->idx);
	if (!w) {
		cx4m_comp_error(d, qp, pos, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
		return;
	}
	synd = scatter(d, qp, w, off, p->payload, p->payload_len, false);
	if (synd) {
		cx4m_comp_error(d, qp, pos, (uint8_t)synd);
		return;
	}
	e->resid -= p->payload_len;
	r->ack_psn = ib_psn_add(p->psn, 1);
	if (!e->resid) {
		e->done = 1;
		if (e->read_issued && r->reads_out)
			r->reads_out--;
	}
	progress(d, qp);
}

static void on_atomic_ack(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mreq *r = &qp->req;
	uint32_t pos = entry_of(r, p->psn);
	const uint8_t *ack = roce_pkt_hdr(p, ROCE_HDR_ATMACK);
	struct mswqe *e;
	struct mwqe *w;
	uint64_t orig;
	uint8_t buf[8];
	int synd;

	if (pos == r->swq_head || !ack)
		return;
	e = &r->swq[pos % r->swq_size];
	if ((e->opcode != MLX5_OPCODE_ATOMIC_CS && e->opcode != MLX5_OPCODE_ATOMIC_FA) || e->done)
		return;
	if (ib_psn_sub(e->first_psn, r->ack_psn) && ib_psn_sub(e->first_psn, r->ack_psn) < (1u << 23)) {
		if (!ack_upto(d, qp, ib_psn_sub(e->first_psn, 1)))
			return;
		if (e->done || !in_flight(r, pos))
			return;
	}
	orig = roce_atmack_orig(ack);
	/* atomic_req_8B_endianness_mode: 1 = host order, 0 = big-endian ([ifc] atomic_caps) */
	if (cx4_get(d->cap_cur[1], CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE) == 1 &&
	    d->host_endianness == CX4_HOST_ENDIANNESS_LE)
		memcpy(buf, &orig, 8);
	else
		cx4_be64_store(buf, orig);
	w = comp_wqe(d, qp, e->idx);
	synd = w ? scatter(d, qp, w, 0, buf, 8, true) : MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (synd) {
		cx4m_comp_error(d, qp, pos, (uint8_t)synd);
		return;
	}
	e->atomic_orig = orig;
	e->done = 1;
	if (e->read_issued && r->reads_out)
		r->reads_out--;
	r->ack_psn = ib_psn_add(p->psn, 1);
	progress(d, qp);
}

void cx4m_comp_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	const uint8_t *aeth = roce_pkt_hdr(p, ROCE_HDR_AETH);

	if (qp->st != CX4_QP_ST_RC || !qp->req.swq || !cx4m_net_pkt_on_path(d, p, &qp->path) ||
	    (qp->state != CX4_QP_STATE_RTS && qp->state != CX4_QP_STATE_SQD)) {
		d->stats.rx_drop_qp++;
		return;
	}
	switch (p->opcode & ~ROCE_TRANSPORT_MASK) {
	case ROCE_OP_ACKNOWLEDGE: {
		uint8_t syn = roce_aeth_syndrome(aeth);

		if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK)
			ack_upto(d, qp, p->psn);
		else
			on_nak(d, qp, p, syn);
		return;
	}
	case ROCE_OP_RDMA_READ_RESPONSE_FIRST:
	case ROCE_OP_RDMA_READ_RESPONSE_MIDDLE:
	case ROCE_OP_RDMA_READ_RESPONSE_LAST:
	case ROCE_OP_RDMA_READ_RESPONSE_ONLY:
		on_read_resp(d, qp, p);
		return;
	case ROCE_OP_ATOMIC_ACKNOWLEDGE:
		on_atomic_ack(d, qp, p);
		return;
	default:
		d->stats.rx_drop_qp++;
		return;
	}
}
