// SPDX-License-Identifier: MIT
/*
 * The requester: send WQEs -> request packets ([IBTA] ch. 9.7 "Requester", structured like
 * Linux rxe_req.c: it only sends; acknowledgements, responses, retries and completions are
 * the completer's, comp.c).
 *
 * On a doorbell the QP joins the engine's active list; the requester reads the SQ counter from
 * the doorbell record and turns WQEs into packets while it has transmit slots and window:
 *
 *   RC/UC SEND, WRITE (+IMM): ceil(len / PMTU) packets (one if empty), FIRST/MIDDLE/LAST or
 *     ONLY; RETH on the first WRITE packet; ImmDt on the last; SE on the last when the WQE
 *     asks for a solicited event; RC: AckReq on the last packet and every 64 packets.
 *   RC READ: one request (RETH) that consumes a PSN per expected response packet.
 *   RC ATOMIC_CS / ATOMIC_FA: one request (AtomicETH: VA, R_Key, swap/add, compare).
 *   UD SEND (+IMM): one packet with DETH (Q_Key, source QP) to the address vector.
 *   NOP: no packet; completes in order.
 *   UMR: changes a memory key when it starts (umr.c), no packet; completes in order.
 *   RC SEND_INVAL: a SEND whose last packet carries the key to invalidate (IETH).
 * Fences wait for outstanding READ/atomics (initiator small fence) or for everything before
 * (strong fence). Outstanding READ/atomics are limited to 2^log_sra_max, unacknowledged RC
 * packets to a window of WINDOW PSNs. Payload is gathered through the memory keys (local read
 * access): fd-backed memory by reference, a client's memory read in one process_vm_readv per
 * pass (net.c). Any local error completes the WQE with an error CQE and moves the QP to ERR.
 */
#include <limits.h>
#include <string.h>

#include "model.h"

#define WINDOW 512	/* unacknowledged RC packets per QP */
#define ACKREQ_EVERY 64 /* as rxe RXE_MAX_PKT_PER_ACK */

static uint8_t mkey_synd(int err)
{
	/* local key, PD, access or bounds violations and IOMMU faults: local protection */
	return err == MKEY_ESEGS ? MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR
				 : MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
}

/* Copy [off, off + len) of the WQE's data into packet t. 0 or a CQE syndrome. */
static int gather(struct mdev *d, struct mqp *qp, const struct mwqe *w, uint32_t off, uint32_t len,
		  struct txpkt *t)
{
	struct dseg segs[MQP_MAX_SEGS];
	uint32_t boff = 0;

	for (uint32_t i = 0; i < w->nsge && len; i++) {
		const struct msge *s = &w->sge[i];
		uint32_t take;
		int n;

		if (off >= s->len) {
			off -= s->len;
			continue;
		}
		take = s->len - off < len ? s->len - off : len;
		if (s->inl) {
			cx4m_net_tx_copy(t, s->inl + off, take, boff);
		} else {
			n = cx4m_mkey_xlate(d, s->lkey, qp->pd, qp->qpn, s->addr + off, take,
					    MKEY_LR, qp->rlky, segs, MQP_MAX_SEGS);
			if (n < 0)
				return mkey_synd(n);
			if (cx4m_net_tx_payload(d, t, segs, n, boff))
				return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		}
		boff += take;
		len -= take;
		off = 0;
	}
	return 0;
}

static uint32_t msg_pkts(uint32_t len, uint32_t pmtu)
{
	return len ? (len + pmtu - 1) / pmtu : 1;
}

static bool read_pi(struct mdev *d, struct mqp *qp)
{
	uint8_t rec[4];

	if (cx4m_dma_read(d, qp->dbr + 4, rec, sizeof(rec)))
		return false;
	qp->req.pi = (uint16_t)cx4_be32_load(rec);
	return true;
}

/* Parse the WQE of an swq entry into the requester's cache. 0 or a syndrome. */
static int load_cur(struct mdev *d, struct mqp *qp, uint16_t idx)
{
	int synd;

	if (qp->req.cur_valid && qp->req.cur_idx == idx)
		return 0;
	synd = cx4m_wqe_fetch(d, qp, idx, qp->req.cur);
	qp->req.cur_valid = !synd;
	qp->req.cur_idx = idx;
	return synd;
}

/* Take the next posted WQE into the in-flight ring: 1 started, 0 nothing / must wait. */
static int start_new(struct mdev *d, struct mqp *qp)
{
	struct mreq *r = &qp->req;
	struct mwqe *w = r->cur;
	struct mswqe *e;
	uint32_t npkts;
	int synd;

	if (r->next == r->pi || r->swq_head - r->swq_tail == r->swq_size)
		return 0;
	synd = load_cur(d, qp, r->next);
	if (!synd) {
		bool rd = w->opcode == MLX5_OPCODE_RDMA_READ ||
			  w->opcode == MLX5_OPCODE_ATOMIC_CS || w->opcode == MLX5_OPCODE_ATOMIC_FA;
		uint32_t sra = 1u << qp->log_sra_max;

		/* fences ([dv] MLX5_WQE_CTRL_FENCE / INITIATOR_SMALL_FENCE) */
		if ((w->fm_ce_se & MLX5_WQE_CTRL_FENCE) && r->swq_head != r->swq_tail)
			return 0;
		if ((w->fm_ce_se & MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE) && r->reads_out)
			return 0;
		if (rd && r->reads_out >= sra)
			return 0;
		if (mqp_datagram(qp) && w->len > qp->pmtu)
			synd = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	}
	e = &r->swq[r->swq_head % r->swq_size];
	memset(e, 0, sizeof(*e));
	e->idx = r->next;
	e->nbb = synd && !w->nbb ? 1 : w->nbb;
	e->opcode = w->opcode;
	e->fm_ce_se = w->fm_ce_se;
	e->len = w->len;
	r->pos = r->swq_head;
	r->swq_head++;
	r->next = (uint16_t)(r->next + e->nbb);
	r->cur_started = false;
	if (synd) {
		cx4m_comp_error(d, qp, r->pos, (uint8_t)synd);
		return 0;
	}
	switch (w->opcode) {
	case MLX5_OPCODE_UMR:
		synd = cx4m_umr_exec(d, qp, w);
		if (synd) {
			cx4m_comp_error(d, qp, r->pos, (uint8_t)synd);
			return 0;
		}
		/* done, in order, without a packet */
		/* fall through */
	case MLX5_OPCODE_NOP:
		npkts = 0;
		e->done = 1;
		break;
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA:
		npkts = 1;
		break;
	default:
		npkts = mqp_datagram(qp) ? 1 : msg_pkts(w->len, qp->pmtu);
		break;
	}
	e->resid = w->len;
	e->first_psn = r->psn;
	e->last_psn = ib_psn_sub(ib_psn_add(r->psn, npkts), 1);
	r->psn = ib_psn_add(r->psn, npkts);
	return 1;
}

/* Where a WQE's packets go: the UD address vector, or the connected QP's address path. */
static const struct mpath *dest_of(const struct mqp *qp, const struct mwqe *w, uint32_t *dqpn)
{
	if (mqp_datagram(qp)) {
		*dqpn = w->dqpn;
		return &w->av;
	}
	*dqpn = qp->remote_qpn;
	return &qp->path;
}

static uint8_t roce_op(const struct mqp *qp, uint8_t op)
{
	return (uint8_t)((qp->st == CX4_QP_ST_UC   ? ROCE_TRANSPORT_UC
			  : mqp_datagram(qp) ? ROCE_TRANSPORT_UD
						   : ROCE_TRANSPORT_RC) |
			 op);
}

/* The wire opcode of packet k of n of a SEND/WRITE WQE. */
static uint8_t data_opcode(const struct mqp *qp, uint8_t wop, uint32_t k, uint32_t n)
{
	bool first = k == 0, last = k == n - 1;
	bool imm = wop == MLX5_OPCODE_SEND_IMM || wop == MLX5_OPCODE_RDMA_WRITE_IMM;

	if (wop == MLX5_OPCODE_SEND_INVAL) {
		if (first && last)
			return roce_op(qp, ROCE_OP_SEND_ONLY_INV);
		if (last)
			return roce_op(qp, ROCE_OP_SEND_LAST_INV);
		return roce_op(qp, first ? ROCE_OP_SEND_FIRST : ROCE_OP_SEND_MIDDLE);
	}
	if (wop == MLX5_OPCODE_SEND || wop == MLX5_OPCODE_SEND_IMM) {
		if (mqp_datagram(qp))
			return roce_op(qp, imm ? ROCE_OP_SEND_ONLY_IMM : ROCE_OP_SEND_ONLY);
		if (first && last)
			return roce_op(qp, imm ? ROCE_OP_SEND_ONLY_IMM : ROCE_OP_SEND_ONLY);
		if (first)
			return roce_op(qp, ROCE_OP_SEND_FIRST);
		if (last)
			return roce_op(qp, imm ? ROCE_OP_SEND_LAST_IMM : ROCE_OP_SEND_LAST);
		return roce_op(qp, ROCE_OP_SEND_MIDDLE);
	}
	if (first && last)
		return roce_op(qp, imm ? ROCE_OP_RDMA_WRITE_ONLY_IMM : ROCE_OP_RDMA_WRITE_ONLY);
	if (first)
		return roce_op(qp, ROCE_OP_RDMA_WRITE_FIRST);
	if (last)
		return roce_op(qp, imm ? ROCE_OP_RDMA_WRITE_LAST_IMM : ROCE_OP_RDMA_WRITE_LAST);
	return roce_op(qp, ROCE_OP_RDMA_WRITE_MIDDLE);
}

/*
 * The PSNs an RC requester may have unacknowledged: WINDOW, or one after a local ACK timeout
 * until the responder answers (comp.c: probe). A timeout on a live link means the responder
 * is slow, not that the window was lost: resending the whole window would queue WINDOW
 * duplicates ahead of the packets it still needs, the next ACK would come later than the
 * timeout again and each timeout would add WINDOW more (a collapse into "transport retries
 * exceeded", docs/reliability.md "Long messages under load"). One packet from the oldest
 * unacknowledged PSN ([IBTA] 9.7.6.1.3: the resend starts there), with AckReq, finds out:
 * its ACK names everything the responder has (a duplicate is answered with the last PSN it
 * took, 9.7.5.1.x), or it was the lost one and goes on from there. TCP does the same after a
 * retransmission timeout (RFC 5681 3.1: the window drops to one segment).
 */
static bool window_full(const struct mqp *qp)
{
	return qp->st == CX4_QP_ST_RC &&
	       ib_psn_sub(qp->req.cur_psn, qp->req.ack_psn) >= (qp->req.probe ? 1 : WINDOW);
}

/*
 * After going back (timeout, NAK), ACKs of the first transmission may still arrive and
 * acknowledge more than has been sent again: what the responder has is not sent a third time
 * ([IBTA] 9.7.5.1.x: the requester resumes from the PSN the ACK implies). Without this the
 * resend position would trail ack_psn and window_full would see a distance of almost 2^24.
 */
static void skip_acked(struct mqp *qp, const struct mswqe *e)
{
	struct mreq *r = &qp->req;
	uint32_t ahead = ib_psn_sub(r->ack_psn, r->cur_psn);

	if (qp->st == CX4_QP_ST_RC && ahead && ahead < (1u << 23) &&
	    ib_psn_sub(r->ack_psn, e->first_psn) <= ib_psn_sub(e->last_psn, e->first_psn))
		r->cur_psn = r->ack_psn;
}

/* sent_psn = max(sent_psn, end), modulo 2^24 */
static void sent_upto(struct mqp *qp, uint32_t end)
{
	if (ib_psn_sub(end, qp->req.sent_psn) - 1 < (1u << 23) - 1)
		qp->req.sent_psn = end;
}

/* Queue one packet; returns 0, 1 when blocked (no slot), or a CQE syndrome (> 1). */
static int emit(struct mdev *d, struct mqp *qp, uint32_t pos, const struct mwqe *w,
		struct roce_tx_hdr *h, uint32_t off, uint32_t plen, bool last, bool payload)
{
	struct txpkt *t = cx4m_net_tx_get(d);
	const struct mpath *dst;
	uint32_t dqpn;
	int synd, sock = qp->sock;

	if (!t)
		return 1;
	dst = dest_of(qp, w, &dqpn);
	h->dqpn = dqpn;
	h->pkey = ROCE_DEFAULT_PKEY;
	/* a UD address vector names its RoCE v2 UDP source port in rlid (rdma-core mlx5
	 * create_ah); ports outside the RoCE range (roce_cap) fall back to the QP's */
	if (mqp_datagram(qp) && w->av.udp_sport >= 0xc000)
		cx4m_net_sport_for(d, qp->qpn, w->av.udp_sport, true, &sock);
	if (cx4m_net_tx_hdr(d, t, h, payload ? plen : 0, dst, (uint16_t)sock))
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (payload && plen) {
		synd = gather(d, qp, w, off, plen, t);
		if (synd)
			return synd;
	}
	t->qp = qp;
	t->swq_pos = (int32_t)pos;
	t->last = last;
	cx4m_net_tx_commit(d, t);
	sent_upto(qp, ib_psn_add(h->psn, 1));
	return 0;
}

/* Send what is left of the swq entry at pos: 1 sent completely, 0 blocked. */
static int send_entry(struct mdev *d, struct mqp *qp, uint32_t pos)
{
	struct mreq *r = &qp->req;
	struct mswqe *e = &r->swq[pos % r->swq_size];
	struct mwqe *w = r->cur;
	int synd;

	if (wqe_local(e->opcode))
		return 1;
	synd = load_cur(d, qp, e->idx);
	if (synd) {
		cx4m_comp_error(d, qp, pos, (uint8_t)synd);
		return 0;
	}
	if (!r->cur_started) {
		r->cur_psn = e->first_psn;
		r->cur_started = true;
	}
	skip_acked(qp, e);
	switch (e->opcode) {
	case MLX5_OPCODE_RDMA_READ: {
		struct roce_tx_hdr h = {.opcode = roce_op(qp, ROCE_OP_RDMA_READ_REQUEST)};
		uint32_t off = ib_psn_sub(r->cur_psn, e->first_psn) * qp->pmtu;

		if (window_full(qp))
			return 0;
		h.psn = r->cur_psn;
		h.ackreq = true;
		h.reth.va = w->raddr + off;
		h.reth.rkey = w->rkey;
		h.reth.len = e->len - off;
		synd = emit(d, qp, pos, w, &h, 0, 0, true, false);
		if (synd == 1)
			return 0;
		if (synd) {
			cx4m_comp_error(d, qp, pos, (uint8_t)synd);
			return 0;
		}
		if (!e->read_issued) {
			e->read_issued = true;
			r->reads_out++;
		}
		r->cur_psn = ib_psn_add(e->last_psn, 1);
		/*
		 * Its responses take the READ's whole PSN range: all of it is outstanding, not
		 * just the request's PSN (rxe: req.psn = first_psn + num_pkts). Else the first
		 * response would acknowledge "everything sent" and stop the timer while the rest
		 * is still to come: their loss would never be noticed; and an ACK of a PSN in
		 * that range would not count as about something sent (ack_upto, on_nak).
		 */
		sent_upto(qp, r->cur_psn);
		cx4m_req_arm_retry(d, qp);
		return 1;
	}
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA: {
		struct roce_tx_hdr h = {.psn = r->cur_psn, .ackreq = true};

		if (window_full(qp))
			return 0;
		h.opcode = roce_op(qp, e->opcode == MLX5_OPCODE_ATOMIC_CS ? ROCE_OP_COMPARE_SWAP
									  : ROCE_OP_FETCH_ADD);
		h.atomic.va = w->raddr;
		h.atomic.rkey = w->rkey;
		h.atomic.swap_add = w->swap_add;
		h.atomic.compare = e->opcode == MLX5_OPCODE_ATOMIC_CS ? w->compare : 0;
		synd = emit(d, qp, pos, w, &h, 0, 0, true, false);
		if (synd == 1)
			return 0;
		if (synd) {
			cx4m_comp_error(d, qp, pos, (uint8_t)synd);
			return 0;
		}
		if (!e->read_issued) {
			e->read_issued = true;
			r->reads_out++;
		}
		r->cur_psn = ib_psn_add(e->last_psn, 1);
		cx4m_req_arm_retry(d, qp);
		return 1;
	}
	default:
		break;
	}
	/* SEND / WRITE (+IMM): one packet per PMTU */
	while (ib_psn_sub(r->cur_psn, e->first_psn) <= ib_psn_sub(e->last_psn, e->first_psn)) {
		uint32_t n = ib_psn_sub(e->last_psn, e->first_psn) + 1;
		uint32_t k = ib_psn_sub(r->cur_psn, e->first_psn);
		uint32_t off = k * qp->pmtu;
		uint32_t plen = e->len - off < qp->pmtu ? e->len - off : qp->pmtu;
		bool last = k == n - 1;
		struct roce_tx_hdr h = {.psn = r->cur_psn};

		if (window_full(qp))
			return 0;
		h.opcode = data_opcode(qp, e->opcode, k, n);
		if (qp->st == CX4_QP_ST_RC) {
			h.ackreq = last || ++r->since_ackreq >= ACKREQ_EVERY || r->probe;
			if (h.ackreq)
				r->since_ackreq = 0;
		}
		h.se = last && (e->fm_ce_se & MLX5_WQE_CTRL_SOLICITED);
		h.imm_raw = w->imm;
		h.ieth_rkey = be32toh(w->imm); /* SEND_INVAL: the key, in the immediate's place */
		if (!k) {
			h.reth.va = w->raddr;
			h.reth.rkey = w->rkey;
			h.reth.len = e->len;
		}
		if (mqp_datagram(qp)) {
			h.deth.qkey = w->qkey;
			h.deth.sqpn = mqp_wire_qpn(qp);
		}
		synd = emit(d, qp, pos, w, &h, off, plen, last, true);
		if (synd == 1)
			return 0;
		if (synd) {
			cx4m_comp_error(d, qp, pos, (uint8_t)synd);
			return 0;
		}
		r->cur_psn = ib_psn_add(r->cur_psn, 1);
		if (qp->st == CX4_QP_ST_RC)
			cx4m_req_arm_retry(d, qp);
	}
	return 1;
}

/* In ERR: every WQE posted since completes with a flush error. */
static int flush_new(struct mdev *d, struct mqp *qp)
{
	struct mreq *r = &qp->req;
	int n = 0;

	if (qp->no_sq || !read_pi(d, qp))
		return 0;
	while (r->next != r->pi) {
		uint8_t nbb;
		int op = cx4m_wqe_opcode(d, qp, r->next, &nbb);

		if (op < 0)
			break;
		cx4m_cqe_req_err(d, qp, r->next, (uint8_t)op, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		r->next = (uint16_t)(r->next + nbb);
		n++;
	}
	r->ci = r->next;
	return n;
}

int cx4m_req_run(struct mdev *d, struct mqp *qp, unsigned int budget)
{
	struct mreq *r = &qp->req;
	int work = 0;

	if (qp->state == CX4_QP_STATE_ERR) {
		/* receives posted since the error are flushed too (no doorbell for those) */
		cx4m_resp_flush_rq(d, qp);
		return flush_new(d, qp);
	}
	if (qp->state != CX4_QP_STATE_RTS || qp->no_sq || r->rnr_wait)
		return 0;
	if (!read_pi(d, qp)) {
		/* the doorbell record is gone: a work queue catastrophic error */
		cx4m_qp_to_error(d, qp, CX4_EVENT_TYPE_WQ_CATAS_ERROR);
		return 1;
	}
	while (budget-- && qp->state == CX4_QP_STATE_RTS) {
		if (r->pos == r->swq_head && start_new(d, qp) <= 0)
			break;
		if (qp->state != CX4_QP_STATE_RTS || !send_entry(d, qp, r->pos))
			break;
		r->pos++;
		r->cur_started = false;
		work++;
	}
	cx4m_comp_retire(d, qp);
	/* out of budget or transmit slots with work left: again next pass (a window or a fence
	 * that holds it back reactivates it when the ACK comes) */
	if (qp->state == CX4_QP_STATE_RTS && (budget == UINT_MAX || !cx4m_net_tx_free_slots(d)) &&
	    (r->pos != r->swq_head || r->next != r->pi))
		cx4m_qp_activate(d, qp);
	return work;
}

void cx4m_req_arm_retry(struct mdev *d, struct mqp *qp)
{
	/* local ACK timeout 0 means infinite ([IBTA] 9.7.6.1.3) */
	if (!qp->ack_timeout || mtimer_armed(&qp->req.retry_timer))
		return;
	cx4m_mtimer_arm(&d->timers, &qp->req.retry_timer,
			d->now + ib_ack_timeout_ns(qp->ack_timeout));
}

void cx4m_req_rewind(struct mdev *d, struct mqp *qp, uint32_t psn)
{
	struct mreq *r = &qp->req;

	for (uint32_t p = r->swq_tail; p != r->swq_head; p++) {
		struct mswqe *e = &r->swq[p % r->swq_size];

		if (e->done || wqe_local(e->opcode))
			continue;
		/* the first entry not entirely before psn */
		if (ib_psn_sub(psn, e->first_psn) <= ib_psn_sub(e->last_psn, e->first_psn) ||
		    ib_psn_sub(e->first_psn, psn) < (1u << 23)) {
			r->pos = p;
			r->cur_started = true;
			r->cur_psn =
			    ib_psn_sub(psn, e->first_psn) <= ib_psn_sub(e->last_psn, e->first_psn)
				? psn
				: e->first_psn;
			if (e->opcode == MLX5_OPCODE_RDMA_READ)
				e->resid = e->len - ib_psn_sub(r->cur_psn, e->first_psn) * qp->pmtu;
			d->stats.retransmits++;
			cx4m_qp_activate(d, qp);
			return;
		}
	}
}
