// SPDX-License-Identifier: MIT
/*
 * The responder: request packets -> memory, receive completions, ACK/NAK and READ/atomic
 * responses ([IBTA] ch. 9.7.4 "Responder"; structured like Linux rxe_resp.c).
 *
 * RC: a packet with the expected PSN is executed; an older one is a duplicate (SEND/WRITE:
 * acknowledged again; READ: answered again from its responder resource, from the PSN asked
 * for; atomic: the saved result is sent again, never re-executed; a duplicate without its
 * resource is dropped, as rxe's find_resource); a newer one gets one NAK "PSN sequence error"
 * carrying the expected PSN, and the responder drops packets until the gap closes
 * (go-back-N). Responses leave in PSN order: READ responses and atomic ACKs from one queue
 * of responder resources, ACKs and NAKs never ahead of them. A SEND (or WRITE with
 * immediate) that finds no receive WQE gets an RNR NAK with the QP's min_rnr_nak timer and
 * does not advance the PSN. Invalid requests (bad opcode sequence, bad length), access
 * violations (R_Key, QP access flags) and local errors get a NAK and move the QP to ERR with
 * the matching affiliated event. ACKs are coalesced: one per QP per receive batch (a pass, or
 * one UDP GRO buffer of at most 64 packets: cx4m_resp_ack_now), for the last PSN of the batch
 * that asked for one (AckReq), sent after the data is in memory, and never ahead of READ
 * responses still to be sent.
 * UC: no acknowledgements; a PSN gap drops the message in progress; errors drop the message.
 * SEND_WITH_INV: the key its last packet names is invalidated before the receive completes.
 * UD: Q_Key check; the receive buffer gets the 40-byte GRH (the GRH or IPv6 header as received;
 * for IPv4 the header in its last 20 bytes, the verbs convention that rxe also follows) then
 * the payload; no receive WQE = dropped.
 */
#include <string.h>

#include "model.h"

#define GRH_LEN 40

/* ---- packets the responder sends ------------------------------------------------------------ */

static struct txpkt *ctl_pkt(struct mdev *d, struct mqp *qp, struct roce_tx_hdr *h)
{
	struct txpkt *t = cx4m_net_tx_get(d);

	if (!t)
		return NULL;
	h->dqpn = qp->remote_qpn;
	h->pkey = ROCE_DEFAULT_PKEY;
	if (cx4m_net_tx_hdr(d, t, h, 0, &qp->path, (uint16_t)qp->sock))
		return NULL;
	t->swq_pos = -1;
	return t;
}

/* ACK/NAK now (NAKs are not coalesced). */
static void send_aeth(struct mdev *d, struct mqp *qp, uint8_t syn, uint32_t psn)
{
	struct roce_tx_hdr h = {.opcode = ROCE_OPCODE(RC, ACKNOWLEDGE), .psn = psn};
	struct txpkt *t;

	h.aeth.syndrome = syn;
	h.aeth.msn = qp->resp.msn;
	t = ctl_pkt(d, qp, &h);
	if (!t)
		return; /* no slot: the requester will time out and retry */
	cx4m_net_tx_commit(d, t);
	if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK)
		d->stats.naks_sent++;
	else if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
		d->stats.rnr_naks_sent++;
}

static bool responses_pending(const struct mresp *s)
{
	return s->rd_head != s->rd_tail;
}

static void owe(struct mdev *d, struct mqp *qp, uint8_t syn, uint32_t psn)
{
	qp->resp.ack_owed = true;
	qp->resp.ack_syn = syn;
	qp->resp.ack_psn = psn;
	if (!qp->on_ack) {
		qp->on_ack = true;
		qp->ack_next = d->ack_head;
		d->ack_head = qp;
	}
}

static void owe_ack(struct mdev *d, struct mqp *qp, uint32_t psn)
{
	struct mresp *s = &qp->resp;

	/* a NAK still owed for PSN n acknowledges n - 1 itself; only a later ACK replaces it */
	if (s->ack_owed && (s->ack_syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK &&
	    ib_psn_cmp(psn, s->ack_psn) < 0)
		return;
	owe(d, qp, ROCE_AETH_ACK | ROCE_AETH_NO_CREDIT, psn);
}

/*
 * A PSN-sequence or RNR NAK: now, unless READ responses or atomic ACKs for earlier requests
 * are still to be sent; then right after them (a NAK must not overtake them: the requester
 * would take it as an implied NAK of those requests and send them again).
 */
static void send_nak(struct mdev *d, struct mqp *qp, uint8_t syn, uint32_t psn)
{
	if (responses_pending(&qp->resp))
		owe(d, qp, syn, psn);
	else
		send_aeth(d, qp, syn, psn);
}

/* A fatal responder error: NAK, then the QP to ERR with its affiliated event. */
static void fatal_nak(struct mdev *d, struct mqp *qp, uint8_t nak, uint32_t psn, uint8_t event)
{
	if (qp->st == CX4_QP_ST_RC)
		send_aeth(d, qp, ROCE_AETH_NAK | nak, psn);
	qp->resp.ack_owed = false;
	cx4m_mdev_log(d, "QP 0x%x: responder NAK %u at PSN 0x%06x", qp->qpn, nak, psn);
	cx4m_qp_to_error(d, qp, event);
}

int cx4m_resp_send_acks(struct mdev *d)
{
	struct mqp **pp = &d->ack_head;
	int n = 0;

	while (*pp) {
		struct mqp *qp = *pp;

		/* an ACK must not overtake READ responses still to be sent */
		if (qp->resp.ack_owed && responses_pending(&qp->resp)) {
			pp = &qp->ack_next;
			continue;
		}
		if (qp->resp.ack_owed && qp->state != CX4_QP_STATE_ERR) {
			uint8_t syn = qp->resp.ack_syn;
			struct roce_tx_hdr h = {.opcode = ROCE_OPCODE(RC, ACKNOWLEDGE),
						.psn = qp->resp.ack_psn};
			struct txpkt *t;

			h.aeth.syndrome = syn;
			h.aeth.msn = qp->resp.msn;
			t = ctl_pkt(d, qp, &h);
			if (!t)
				break;
			cx4m_net_tx_commit(d, t);
			if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK)
				d->stats.naks_sent++;
			else if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
				d->stats.rnr_naks_sent++;
			n++;
		}
		qp->resp.ack_owed = false;
		qp->on_ack = false;
		*pp = qp->ack_next;
	}
	return n;
}

/*
 * What the packets received so far asked for leaves now rather than at the end of the pass:
 * their data in memory, their CQEs, then the ACKs owed. A requester asks for an ACK every
 * ACKREQ_EVERY packets and restarts its local ACK timer on each one that acknowledges
 * something new; rxe's responder sends the ACK as it handles the AckReq packet (Linux
 * rxe_resp.c, acknowledge()). A pass over a full receive batch (32 GRO buffers, ~2000
 * packets) can outlast the requester's ACK timeout on a loaded host or a slow build: the
 * requester then resends its window while the responder is still busy with it, and those
 * duplicates delay the next ACK again (docs/reliability.md, "Long messages under load").
 */
void cx4m_resp_ack_now(struct mdev *d)
{
	if (!d->ack_head)
		return;
	cx4m_mdev_flush_rx_dma(d);
	cx4m_cq_flush(d);
	if (cx4m_resp_send_acks(d))
		cx4m_net_tx_flush(d);
}

/* ---- receive WQEs ---------------------------------------------------------------------------- */

/* Take the next receive WQE (RQ or SRQ) and parse its scatter list; false if there is none. */
static bool get_recv_wqe(struct mdev *d, struct mqp *qp)
{
	struct mresp *s = &qp->resp;
	uint8_t wqe[512];
	const uint8_t *seg;
	uint32_t stride, nseg;

	if (s->have_wqe)
		return true;
	if (qp->srq) {
		int idx;

		stride = 1u << qp->srq->stride_shift;
		idx = cx4m_srq_pop(d, qp->srq, wqe, sizeof(wqe));
		if (idx < 0)
			return false;
		s->wqe_idx = (uint16_t)idx;
		seg = wqe + 16; /* after mlx5_wqe_srq_next_seg */
		nseg = (stride - 16) / 16;
	} else if (qp->rq_wqe_cnt) {
		uint8_t rec[4];
		uint16_t ctr;

		stride = 1u << qp->rq_stride_shift;
		if (cx4m_dma_read(d, qp->dbr, rec, sizeof(rec))) {
			cx4m_qp_to_error(d, qp, CX4_EVENT_TYPE_WQ_CATAS_ERROR);
			return false;
		}
		ctr = (uint16_t)cx4_be32_load(rec);
		if (ctr == s->rq_ci || (uint16_t)(ctr - s->rq_ci) > qp->rq_wqe_cnt)
			return false;
		if (stride > sizeof(wqe) ||
		    cx4m_dbuf_read(d, &qp->buf,
				   (uint64_t)(s->rq_ci & (qp->rq_wqe_cnt - 1)) * stride, wqe,
				   stride)) {
			cx4m_qp_to_error(d, qp, CX4_EVENT_TYPE_WQ_CATAS_ERROR);
			return false;
		}
		s->wqe_idx = s->rq_ci++;
		seg = wqe;
		nseg = stride / 16;
	} else {
		return false; /* zero-length RQ */
	}
	s->nrsge = 0;
	s->wqe_len = 0;
	for (uint32_t i = 0; i < nseg && s->nrsge < 32; i++, seg += 16) {
		uint32_t bc = cx4_be32_load(seg), lkey = cx4_be32_load(seg + 4);

		/* [dv] MLX5_INVALID_LKEY ends a short scatter list */
		if (lkey == MLX5_INVALID_LKEY)
			break;
		if (!bc)
			continue;
		s->rsge[s->nrsge++] =
		    (struct msge){.len = bc, .lkey = lkey, .addr = cx4_be64_load(seg + 8)};
		s->wqe_len += bc;
	}
	s->have_wqe = true;
	s->msg_off = 0;
	return true;
}

/* Write len bytes at off of the receive WQE's scatter list. 0 or a CQE syndrome. */
static int put_recv(struct mdev *d, struct mqp *qp, uint32_t off, const uint8_t *data, uint32_t len)
{
	struct mresp *s = &qp->resp;
	struct dseg segs[MQP_MAX_SEGS];

	if ((uint64_t)off + len > s->wqe_len)
		return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	for (uint32_t i = 0; i < s->nrsge && len; i++) {
		const struct msge *g = &s->rsge[i];
		uint32_t take;
		int n;

		if (off >= g->len) {
			off -= g->len;
			continue;
		}
		take = g->len - off < len ? g->len - off : len;
		n = cx4m_mkey_xlate(d, g->lkey, qp->pd, qp->qpn, g->addr + off, take, MKEY_LW,
				    qp->rlky, segs, MQP_MAX_SEGS);
		if (n < 0)
			return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		cx4m_dseg_copy_batched(&d->rx_dma, segs, n, (uint8_t *)data, qp->qpn);
		data += take;
		len -= take;
		off = 0;
	}
	return 0;
}

static void complete_recv(struct mdev *d, struct mqp *qp, uint8_t opcode, uint32_t byte_cnt,
			  uint32_t imm, bool se, uint32_t src_qp, uint8_t net)
{
	struct mrecv r = {.opcode = opcode,
			  .byte_cnt = byte_cnt,
			  .imm = imm,
			  .solicited = se,
			  .src_qp = src_qp,
			  .net = net,
			  .wqe_counter = qp->resp.wqe_idx};

	cx4m_cqe_resp(d, qp, &r);
	qp->resp.have_wqe = false;
}

void cx4m_resp_flush_rq(struct mdev *d, struct mqp *qp)
{
	struct mresp *s = &qp->resp;
	uint8_t rec[4];

	if (s->have_wqe) {
		cx4m_cqe_resp_err(d, qp, s->wqe_idx, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		s->have_wqe = false;
	}
	memset(s->rd, 0, sizeof(s->rd));
	s->rd_head = s->rd_tail = s->rd_kept = 0;
	if (qp->srq || !qp->rq_wqe_cnt || cx4m_dma_read(d, qp->dbr, rec, sizeof(rec)))
		return;
	while (s->rq_ci != (uint16_t)cx4_be32_load(rec) &&
	       (uint16_t)((uint16_t)cx4_be32_load(rec) - s->rq_ci) <= qp->rq_wqe_cnt)
		cx4m_cqe_resp_err(d, qp, s->rq_ci++, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
}

/* ---- RC/UC operations --------------------------------------------------------------------------
 */

static bool is_imm(uint8_t op)
{
	op &= ~ROCE_TRANSPORT_MASK;
	return op == ROCE_OP_SEND_LAST_IMM || op == ROCE_OP_SEND_ONLY_IMM ||
	       op == ROCE_OP_RDMA_WRITE_LAST_IMM || op == ROCE_OP_RDMA_WRITE_ONLY_IMM;
}

/*
 * The last packet of a SEND_WITH_INV is in ([IBTA] 9.4.x, 10.6.7.2.x): the key its IETH names
 * becomes free, then the receive completes with it. A key that is not there, not remotely
 * invalidatable, of another PD, or a window bound to another QP is an invalid request (rxe:
 * RESPST_ERR_INVALIDATE_RKEY): the receive completes in error, NAK, the QP to ERR.
 */
static bool send_inv_done(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mresp *s = &qp->resp;
	uint32_t rkey = roce_ieth_rkey(roce_pkt_hdr(p, ROCE_HDR_IETH));

	if (cx4m_mkey_remote_invalidate(d, rkey, qp->pd, qp->qpn)) {
		cx4m_mdev_log(d, "QP 0x%x: SEND_WITH_INV of key 0x%x refused", qp->qpn, rkey);
		cx4m_cqe_resp_err(d, qp, s->wqe_idx, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
		s->have_wqe = false;
		fatal_nak(d, qp, ROCE_NAK_INV_REQ, p->psn, CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR);
		return false;
	}
	complete_recv(d, qp, MLX5_CQE_RESP_SEND_INV, s->msg_off, htobe32(rkey), p->se, 0,
		      p->addr.net);
	s->msn = ib_psn_add(s->msn, 1);
	return true;
}

/* Returns false when the packet could not be taken (RNR or an error). */
static bool do_send(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mresp *s = &qp->resp;
	uint32_t f = p->info->flags;
	int synd;

	if (f & ROCE_F_FIRST) {
		if (!get_recv_wqe(d, qp)) {
			if (qp->state == CX4_QP_STATE_ERR)
				return false;
			if (qp->st == CX4_QP_ST_RC) {
				send_nak(d, qp, ROCE_AETH_RNR_NAK | qp->min_rnr_nak, p->psn);
				/* the rest of the message is dropped silently until it comes again
				 */
				s->nak_sent = true;
			} else {
				s->drop_msg = !(f & ROCE_F_LAST);
			}
			return false;
		}
		s->msg_off = 0;
	}
	synd = put_recv(d, qp, s->msg_off, p->payload, p->payload_len);
	if (synd) {
		cx4m_cqe_resp_err(d, qp, s->wqe_idx, (uint8_t)synd);
		s->have_wqe = false;
		fatal_nak(d, qp,
			  synd == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR ? ROCE_NAK_INV_REQ
								     : ROCE_NAK_REM_OP_ERR,
			  p->psn,
			  synd == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR
			      ? CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR
			      : CX4_EVENT_TYPE_WQ_CATAS_ERROR);
		return false;
	}
	s->msg_off += p->payload_len;
	if ((f & ROCE_F_LAST) && (f & ROCE_F_INV))
		return send_inv_done(d, qp, p);
	if (f & ROCE_F_LAST) {
		complete_recv(
		    d, qp, is_imm(p->opcode) ? MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND,
		    s->msg_off,
		    is_imm(p->opcode) ? roce_immdt_raw(roce_pkt_hdr(p, ROCE_HDR_IMMDT)) : 0, p->se,
		    0, p->addr.net);
		s->msn = ib_psn_add(s->msn, 1);
	}
	return true;
}

static bool do_write(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mresp *s = &qp->resp;
	uint32_t f = p->info->flags;
	struct dseg segs[MQP_MAX_SEGS];
	int n;

	if (f & ROCE_F_FIRST) {
		const uint8_t *reth = roce_pkt_hdr(p, ROCE_HDR_RETH);
		int err;

		s->va = roce_reth_va(reth);
		s->rkey = roce_reth_rkey(reth);
		s->resid = s->msg_len = roce_reth_len(reth);
		err = qp->rwe
			  ? cx4m_mkey_check(d, s->rkey, qp->pd, qp->qpn, s->va, s->resid, MKEY_RW)
			  : MKEY_EACCESS;
		if (err) {
			if (qp->st == CX4_QP_ST_RC)
				fatal_nak(d, qp, ROCE_NAK_REM_ACC_ERR, p->psn,
					  CX4_EVENT_TYPE_WQ_ACCESS_ERROR);
			else
				s->drop_msg = !(f & ROCE_F_LAST);
			return false;
		}
	}
	if (p->payload_len > s->resid || ((f & ROCE_F_LAST) && p->payload_len != s->resid)) {
		if (qp->st == CX4_QP_ST_RC)
			fatal_nak(d, qp, ROCE_NAK_INV_REQ, p->psn,
				  CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR);
		else
			s->drop_msg = !(f & ROCE_F_LAST);
		return false;
	}
	/* WRITE with immediate consumes a receive WQE: none is an RNR before any data moves */
	if (is_imm(p->opcode) && !get_recv_wqe(d, qp)) {
		if (qp->st == CX4_QP_ST_RC && qp->state != CX4_QP_STATE_ERR) {
			send_nak(d, qp, ROCE_AETH_RNR_NAK | qp->min_rnr_nak, p->psn);
			s->nak_sent = true;
		}
		return false;
	}
	n = cx4m_mkey_xlate(d, s->rkey, qp->pd, qp->qpn, s->va, p->payload_len, MKEY_RW, false,
			    segs, MQP_MAX_SEGS);
	if (n < 0) {
		if (qp->st == CX4_QP_ST_RC)
			fatal_nak(d, qp, ROCE_NAK_REM_ACC_ERR, p->psn,
				  CX4_EVENT_TYPE_WQ_ACCESS_ERROR);
		return false;
	}
	cx4m_dseg_copy_batched(&d->rx_dma, segs, n, (uint8_t *)p->payload, qp->qpn);
	s->va += p->payload_len;
	s->resid -= p->payload_len;
	if (f & ROCE_F_LAST) {
		if (is_imm(p->opcode))
			complete_recv(d, qp, MLX5_CQE_RESP_WR_IMM, s->msg_len,
				      roce_immdt_raw(roce_pkt_hdr(p, ROCE_HDR_IMMDT)), p->se, 0,
				      p->addr.net);
		s->msn = ib_psn_add(s->msn, 1);
	}
	return true;
}

static uint32_t read_pkts(uint32_t len, uint32_t pmtu)
{
	return len ? (len + pmtu - 1) / pmtu : 1;
}

/*
 * Responder resources whose responses have not all been sent once: requests the requester
 * must still count as outstanding. A replay (a duplicate request sent the responses again)
 * is not one: the requester may have had the first ones meanwhile, completed the READ and
 * sent a new request in its place (a go-back that only jitter caused), and counting it would
 * refuse that legal request.
 */
static uint32_t res_active(const struct mresp *s)
{
	uint32_t n = 0;

	for (uint32_t i = s->rd_head; i != s->rd_tail; i++)
		n += !s->rd[i % MRES_KEPT].sent &&
		     s->rd[i % MRES_KEPT].next < s->rd[i % MRES_KEPT].npkts;
	return n;
}

/*
 * A resource for a new READ/atomic request, or NULL (invalid request NAK sent, QP to ERR) when
 * the requester exceeds the responder resources it was given (log_rra_max).
 */
static struct mres *res_new(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mresp *s = &qp->resp;
	uint32_t max = 1u << qp->log_rra_max;
	struct mres *res;

	if (max > MRES_KEPT)
		max = MRES_KEPT;
	if (res_active(s) >= max) {
		fatal_nak(d, qp, ROCE_NAK_INV_REQ, p->psn, CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR);
		return NULL;
	}
	/*
	 * An ACK owed for what came before this request leaves now, ahead of its responses:
	 * responses go in PSN order ([IBTA] 9.7.5.1.1), and an ACK sent after them would name an
	 * older PSN than they did (the requester is past it by then). Behind responses of
	 * earlier requests still to be sent it is dropped instead: the first response of this one
	 * acknowledges everything before it.
	 */
	if (s->ack_owed && (s->ack_syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK) {
		if (!responses_pending(s))
			send_aeth(d, qp, s->ack_syn, s->ack_psn);
		s->ack_owed = false;
	}
	/*
	 * The slot of the oldest kept resource: if a duplicate request had set it going again,
	 * that request is long answered for the requester (it cannot have more than max
	 * outstanding), so the rest of its replay is dropped.
	 */
	while (s->rd_head != s->rd_tail &&
	       (s->rd_tail - s->rd_head >= MRES_KEPT ||
		s->rd[s->rd_head % MRES_KEPT].next >= s->rd[s->rd_head % MRES_KEPT].npkts))
		s->rd_head++;
	res = &s->rd[s->rd_tail % MRES_KEPT];
	memset(res, 0, sizeof(*res));
	res->psn = p->psn;
	s->rd_tail++;
	if (s->rd_kept < MRES_KEPT)
		s->rd_kept++;
	return res;
}

/* The kept resource whose PSNs hold psn, with its ring index; NULL if none. */
static struct mres *res_find(struct mresp *s, uint32_t psn, uint32_t *idx)
{
	for (uint32_t n = 0; n < s->rd_kept; n++) {
		uint32_t i = s->rd_tail - 1 - n;
		struct mres *res = &s->rd[i % MRES_KEPT];

		if (res->kind && ib_psn_sub(psn, res->psn) < res->npkts) {
			*idx = i;
			return res;
		}
	}
	return NULL;
}

/* Send the responses of resource idx again from response k (and those after it in order). */
static void res_replay(struct mdev *d, struct mqp *qp, struct mres *res, uint32_t idx, uint32_t k)
{
	struct mresp *s = &qp->resp;

	if (k < res->next)
		res->next = k;
	if ((int32_t)(idx - s->rd_head) < 0)
		s->rd_head = idx;
	cx4m_qp_activate(d, qp);
}

/* A new READ request: a responder resource answers it. false when refused (NAK sent). */
static bool do_read(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mresp *s = &qp->resp;
	const uint8_t *reth = roce_pkt_hdr(p, ROCE_HDR_RETH);
	uint64_t va = roce_reth_va(reth);
	uint32_t rkey = roce_reth_rkey(reth), len = roce_reth_len(reth);
	struct mres *res;

	if (!qp->rre || cx4m_mkey_check(d, rkey, qp->pd, qp->qpn, va, len, MKEY_RR)) {
		fatal_nak(d, qp, ROCE_NAK_REM_ACC_ERR, p->psn, CX4_EVENT_TYPE_WQ_ACCESS_ERROR);
		return false;
	}
	res = res_new(d, qp, p);
	if (!res)
		return false;
	res->kind = MRES_READ;
	res->va = va;
	res->rkey = rkey;
	res->len = len;
	res->npkts = read_pkts(len, qp->pmtu);
	s->msn = ib_psn_add(s->msn, 1);
	cx4m_qp_activate(d, qp);
	return true;
}

/*
 * A duplicate READ request ([IBTA] 9.9.x; rxe duplicate_request): the requester lost responses
 * and asks again from its PSN. Its resource answers again from there, after checking the
 * request is the remainder of the original one (same R_Key, the address and length advanced
 * by the responses before that PSN); anything else, or no resource, is dropped silently.
 */
static void dup_read(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	const uint8_t *reth = roce_pkt_hdr(p, ROCE_HDR_RETH);
	uint32_t idx, k;
	uint64_t off;
	struct mres *res = res_find(&qp->resp, p->psn, &idx);

	if (!res || res->kind != MRES_READ) {
		d->stats.rx_drop_qp++;
		return;
	}
	k = ib_psn_sub(p->psn, res->psn);
	off = (uint64_t)k * qp->pmtu;
	if (roce_reth_rkey(reth) != res->rkey || roce_reth_va(reth) != res->va + off ||
	    (uint64_t)roce_reth_len(reth) + off != res->len) {
		d->stats.rx_drop_qp++;
		return;
	}
	res_replay(d, qp, res, idx, k);
}

static bool do_atomic(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mresp *s = &qp->resp;
	const uint8_t *a = roce_pkt_hdr(p, ROCE_HDR_ATMETH);
	uint64_t va = roce_atmeth_va(a), cur, nw;
	uint8_t mem[8];
	struct dseg segs[2];
	struct mres *res;
	int n;

	if (va & 7) {
		fatal_nak(d, qp, ROCE_NAK_INV_REQ, p->psn, CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR);
		return false;
	}
	n = qp->rae ? cx4m_mkey_xlate(d, roce_atmeth_rkey(a), qp->pd, qp->qpn, va, 8, MKEY_A, false,
				      segs, 2)
		    : MKEY_EACCESS;
	if (n < 0) {
		fatal_nak(d, qp, ROCE_NAK_REM_ACC_ERR, p->psn, CX4_EVENT_TYPE_WQ_ACCESS_ERROR);
		return false;
	}
	res = res_new(d, qp, p);
	if (!res)
		return false;
	/*
	 * Atomic with respect to every other access of this device: the engine is one thread,
	 * and the writes queued earlier in this pass land first ([IBTA] ATOMIC_HCA).
	 */
	cx4m_dmab_flush(&d->rx_dma, NULL, NULL);
	if (cx4m_dseg_read(segs, n, mem)) {
		fatal_nak(d, qp, ROCE_NAK_REM_OP_ERR, p->psn, CX4_EVENT_TYPE_WQ_CATAS_ERROR);
		return false;
	}
	/* the target is in host byte order (ACCESS_REG HOST_ENDIANNESS) */
	if (d->host_endianness == CX4_HOST_ENDIANNESS_LE)
		memcpy(&cur, mem, 8);
	else
		cur = cx4_be64_load(mem);
	if ((p->opcode & ~ROCE_TRANSPORT_MASK) == ROCE_OP_COMPARE_SWAP)
		nw = cur == roce_atmeth_compare(a) ? roce_atmeth_swap_add(a) : cur;
	else
		nw = cur + roce_atmeth_swap_add(a);
	if (d->host_endianness == CX4_HOST_ENDIANNESS_LE)
		memcpy(mem, &nw, 8);
	else
		cx4_be64_store(mem, nw);
	if (cx4m_dseg_write(segs, n, mem)) {
		fatal_nak(d, qp, ROCE_NAK_REM_OP_ERR, p->psn, CX4_EVENT_TYPE_WQ_CATAS_ERROR);
		return false;
	}
	s->msn = ib_psn_add(s->msn, 1);
	res->kind = MRES_ATOMIC;
	res->npkts = 1;
	res->orig = cur;
	s->ack_owed = false; /* the atomic ACK acknowledges everything before it */
	cx4m_qp_activate(d, qp);
	return true;
}

static void duplicate(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	uint32_t f = p->info->flags;

	if (f & (ROCE_F_SEND | ROCE_F_WRITE)) {
		owe_ack(d, qp, ib_psn_sub(qp->resp.epsn, 1));
	} else if (f & ROCE_F_READ) {
		dup_read(d, qp, p);
	} else if (f & ROCE_F_ATOMIC) {
		uint32_t idx;
		struct mres *res = res_find(&qp->resp, p->psn, &idx);

		/* the saved result again, never a second execution */
		if (res && res->kind == MRES_ATOMIC && res->psn == p->psn)
			res_replay(d, qp, res, idx, 0);
		else
			d->stats.rx_drop_qp++;
	}
}

/* A MIDDLE or LAST continues a message of its kind (SEND, SEND_WITH_INV included, or WRITE). */
static bool opcode_in_sequence(struct mresp *s, uint32_t f)
{
	if (s->in_msg)
		return !(f & ROCE_F_FIRST) && ((f & ROCE_F_SEND) ? s->msg_op == 0 : s->msg_op == 1);
	return (f & ROCE_F_FIRST) != 0;
}

static void rc_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mresp *s = &qp->resp;
	uint32_t f = p->info->flags;
	int32_t cmp = ib_psn_cmp(p->psn, s->epsn);
	bool ok;

	if (cmp > 0) {
		/* a gap: one NAK per gap, then silence until the expected PSN comes */
		if (!s->nak_sent) {
			s->nak_sent = true;
			send_nak(d, qp, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR, s->epsn);
		}
		d->stats.rx_drop_qp++;
		return;
	}
	if (cmp < 0) {
		duplicate(d, qp, p);
		return;
	}
	s->nak_sent = false;
	if (!opcode_in_sequence(s, f) ||
	    roce_check_payload_len(p->opcode, p->payload_len, qp->pmtu)) {
		fatal_nak(d, qp, ROCE_NAK_INV_REQ, p->psn, CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR);
		return;
	}
	if (f & ROCE_F_SEND)
		ok = do_send(d, qp, p);
	else if (f & ROCE_F_WRITE)
		ok = do_write(d, qp, p);
	else if (f & ROCE_F_READ)
		ok = do_read(d, qp, p);
	else if (f & ROCE_F_ATOMIC)
		ok = do_atomic(d, qp, p);
	else
		ok = false;
	if (!ok)
		return;
	if (f & ROCE_F_READ)
		s->epsn = ib_psn_add(s->epsn, s->rd[(s->rd_tail - 1) % MRES_KEPT].npkts);
	else
		s->epsn = ib_psn_add(s->epsn, 1);
	s->in_msg = !(f & ROCE_F_LAST) && (f & (ROCE_F_SEND | ROCE_F_WRITE));
	s->msg_op = (f & ROCE_F_SEND) ? 0 : 1;
	if (p->ackreq && (f & (ROCE_F_SEND | ROCE_F_WRITE)))
		owe_ack(d, qp, p->psn);
}

static void uc_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	struct mresp *s = &qp->resp;
	uint32_t f = p->info->flags;

	if (p->psn != s->epsn) {
		/* a lost packet: the message in progress is dropped ([IBTA] 9.7.4.2) */
		s->in_msg = false;
		s->drop_msg = false;
		if (!(f & ROCE_F_FIRST)) {
			d->stats.rx_drop_qp++;
			return;
		}
	}
	s->epsn = ib_psn_add(p->psn, 1);
	if (s->drop_msg) {
		s->drop_msg = !(f & ROCE_F_LAST);
		return;
	}
	if (!opcode_in_sequence(s, f) ||
	    roce_check_payload_len(p->opcode, p->payload_len, qp->pmtu)) {
		s->in_msg = false;
		s->drop_msg = !(f & ROCE_F_LAST) && !(f & ROCE_F_FIRST);
		return;
	}
	if (!((f & ROCE_F_SEND) ? do_send(d, qp, p) : do_write(d, qp, p))) {
		s->in_msg = false;
		return;
	}
	s->in_msg = !(f & ROCE_F_LAST);
	s->msg_op = (f & ROCE_F_SEND) ? 0 : 1;
}

static void ud_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	const uint8_t *deth = roce_pkt_hdr(p, ROCE_HDR_DETH);
	uint32_t sqpn = roce_deth_sqpn(deth), imm = 0;
	uint8_t nh[ROCE_IP6UDP_LEN], *grh;
	bool imm_op = is_imm(p->opcode), se = p->se;
	int synd;

	if (roce_deth_qkey(deth) != qp->qkey || p->payload_len > qp->pmtu) {
		d->stats.rx_drop_qp++; /* Q_Key violation / too long: silently dropped */
		return;
	}
	if (imm_op)
		imm = roce_immdt_raw(roce_pkt_hdr(p, ROCE_HDR_IMMDT));
	if (!get_recv_wqe(d, qp)) {
		d->stats.rx_drop_qp++;
		return;
	}
	/*
	 * The GRH: 40 bytes before the payload: the packet's GRH (RoCE v1) or IPv6 header, or
	 * the IPv4 header in the last 20 ([IBTA] A17.4.5.1 "union rdma_network_hdr"); header and
	 * payload go to the buffer in one DMA from memory that lives until the end of the pass.
	 */
	grh = cx4m_net_scratch(d, GRH_LEN + p->payload_len);
	if (!grh) {
		d->stats.rx_drop_qp++;
		return;
	}
	memcpy(grh + GRH_LEN, p->payload, p->payload_len);
	roce_net_hdr(nh, &p->addr, p->tlen);
	if (p->addr.net == ROCE_NET_IPV4) {
		memset(grh, 0, GRH_LEN - ROCE_IPV4_HDR_LEN);
		memcpy(grh + GRH_LEN - ROCE_IPV4_HDR_LEN, nh, ROCE_IPV4_HDR_LEN);
	} else {
		memcpy(grh, nh, GRH_LEN); /* the IPv6 header and the GRH are both 40 bytes */
	}
	synd = put_recv(d, qp, 0, grh, GRH_LEN + p->payload_len);
	if (synd) {
		/* UD errors complete the WQE in error; the QP stays usable */
		cx4m_cqe_resp_err(d, qp, qp->resp.wqe_idx, (uint8_t)synd);
		qp->resp.have_wqe = false;
		return;
	}
	complete_recv(d, qp, imm_op ? MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND,
		      GRH_LEN + p->payload_len, imm, se, sqpn, p->addr.net);
}

void cx4m_resp_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p)
{
	if (qp->state != CX4_QP_STATE_RTR && qp->state != CX4_QP_STATE_RTS &&
	    qp->state != CX4_QP_STATE_SQD && qp->state != CX4_QP_STATE_SQER) {
		d->stats.rx_drop_qp++;
		return;
	}
	if (!mqp_datagram(qp) && !cx4m_net_pkt_on_path(d, p, &qp->path)) {
		d->stats.rx_drop_qp++;
		return;
	}
	if (qp->state == CX4_QP_STATE_RTR && !qp->resp.comm_est && !mqp_datagram(qp)) {
		qp->resp.comm_est = true;
		cx4m_eq_post_qp_event(d, CX4_EVENT_TYPE_COMM_EST, qp->qpn, CX4_EVENT_QUEUE_TYPE_QP);
	}
	switch (qp->st) {
	case CX4_QP_ST_RC:
		rc_rx(d, qp, p);
		break;
	case CX4_QP_ST_UC:
		uc_rx(d, qp, p);
		break;
	default:
		ud_rx(d, qp, p);
		break;
	}
}

/* ---- responses: READ responses and atomic ACKs, in PSN order --------------------------------- */

int cx4m_resp_read_run(struct mdev *d, struct mqp *qp, unsigned int budget)
{
	struct mresp *s = &qp->resp;
	int work = 0;

	while (s->rd_head != s->rd_tail && budget) {
		struct mres *res = &s->rd[s->rd_head % MRES_KEPT];
		uint32_t i = res->next, off = i * qp->pmtu, plen;
		struct roce_tx_hdr h = {.psn = ib_psn_add(res->psn, i)};
		struct dseg segs[MQP_MAX_SEGS];
		struct txpkt *t;
		int n = 0;

		if (qp->state == CX4_QP_STATE_ERR) {
			s->rd_head = s->rd_tail;
			break;
		}
		if (res->next >= res->npkts) {
			s->rd_head++; /* all sent (a resource kept for duplicates) */
			continue;
		}
		budget--;
		if (res->kind == MRES_ATOMIC) {
			h.opcode = ROCE_OPCODE(RC, ATOMIC_ACKNOWLEDGE);
			h.aeth.syndrome = ROCE_AETH_ACK | ROCE_AETH_NO_CREDIT;
			h.aeth.msn = s->msn;
			h.atomic_ack_orig = res->orig;
			t = ctl_pkt(d, qp, &h);
			if (!t) {
				cx4m_qp_activate(d, qp);
				break;
			}
			cx4m_net_tx_commit(d, t);
			res->next = 1;
			res->sent = true;
			s->rd_head++;
			work++;
			continue;
		}
		plen = res->len - off < qp->pmtu ? res->len - off : qp->pmtu;
		if (res->npkts == 1)
			h.opcode = ROCE_OPCODE(RC, RDMA_READ_RESPONSE_ONLY);
		else if (!i)
			h.opcode = ROCE_OPCODE(RC, RDMA_READ_RESPONSE_FIRST);
		else if (i == res->npkts - 1)
			h.opcode = ROCE_OPCODE(RC, RDMA_READ_RESPONSE_LAST);
		else
			h.opcode = ROCE_OPCODE(RC, RDMA_READ_RESPONSE_MIDDLE);
		h.aeth.syndrome = ROCE_AETH_ACK | ROCE_AETH_NO_CREDIT;
		h.aeth.msn = s->msn;
		if (plen) {
			n = cx4m_mkey_xlate(d, res->rkey, qp->pd, qp->qpn, res->va + off, plen,
					    MKEY_RR, false, segs, MQP_MAX_SEGS);
			if (n < 0) {
				/* the key was checked at the request: it went away meanwhile */
				fatal_nak(d, qp, ROCE_NAK_REM_ACC_ERR, h.psn,
					  CX4_EVENT_TYPE_WQ_ACCESS_ERROR);
				break;
			}
		}
		t = cx4m_net_tx_get(d);
		if (!t) {
			cx4m_qp_activate(d, qp);
			break;
		}
		h.dqpn = qp->remote_qpn;
		h.pkey = ROCE_DEFAULT_PKEY;
		if (cx4m_net_tx_hdr(d, t, &h, plen, &qp->path, (uint16_t)qp->sock) ||
		    cx4m_net_tx_payload(d, t, segs, n, 0))
			break;
		t->qp = qp;
		t->swq_pos = -1;
		cx4m_net_tx_commit(d, t);
		res->next++;
		work++;
		if (res->next == res->npkts) {
			res->sent = true;
			s->rd_head++;
		}
	}
	/* out of budget with responses left: the rest next pass */
	if (s->rd_head != s->rd_tail && qp->state != CX4_QP_STATE_ERR)
		cx4m_qp_activate(d, qp);
	if (s->rd_head == s->rd_tail && s->ack_owed && !qp->on_ack) {
		qp->on_ack = true;
		qp->ack_next = d->ack_head;
		d->ack_head = qp;
	}
	return work;
}
