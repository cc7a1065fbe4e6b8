// SPDX-License-Identifier: MIT
/*
 * The responder: consumes the request ring a peer client writes for us and does what IB's
 * responder does (IBTA 9.7.5): checks the target QP and the PSN, places SEND data into the next
 * receive WQE and WRITE data into the registered region the rkey names (after checking key,
 * PD, range and rights: a bad request leaves our memory untouched), answers READs by pushing
 * the data back and executes atomics on our own memory (NTRDMA executes READ as a push by the
 * responder; atomics here are CPU atomics of the responder: IBV_ATOMIC_HCA), then ACKs, or
 * NAKs (RNR when no receive WQE is posted, access and invalid-request errors).
 *
 * A request is consumed only once everything it needs to write back fits in the response
 * ring, together with every coalesced ACK the batch already owes; otherwise processing stops at
 * it and resumes when credits return. So when the requester sees a request's credit, the answer
 * is in its response ring already (the answers go out before the credits): the transport timer
 * counts a retry only for a request that truly went unanswered (ntb_qp_timers). Messages keep
 * their order per pair, hence per QP.
 */
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <string.h>

#include "ntb.h"

enum { R_NEXT, R_STALL };

static uint32_t msg_mtu(struct ntb_qp *qp)
{
	uint32_t m = ntb_mtu_bytes(qp->path_mtu);

	return qp->ctx->mtu && qp->ctx->mtu < m ? qp->ctx->mtu : m;
}

static void dirty(struct ntb_peer *p, struct ntb_qp *qp)
{
	if (qp->dirty)
		return;
	qp->dirty = true;
	qp->next_dirty = p->dirty;
	p->dirty = qp;
}

/* The QP owes its requester a coalesced ACK, sent at the end of the batch. */
static void owe_ack(struct ntb_peer *p, struct ntb_qp *qp)
{
	if (!qp->need_ack) {
		qp->need_ack = true;
		p->acks_owed++;
	}
	dirty(p, qp);
}

/* ... or no longer: an ACK or a response that acknowledges everything before it went out. */
static void ack_settled(struct ntb_peer *p, struct ntb_qp *qp)
{
	if (qp->need_ack) {
		qp->need_ack = false;
		p->acks_owed--;
	}
}

/*
 * Room for ncells of answers by qp and, after them, for the ACK every other QP of the batch
 * still owes (qp's own is settled by the answer, or counted in ncells by the caller).
 */
static bool answer_room(struct ntb_peer *p, struct ntb_qp *qp, uint32_t ncells)
{
	return ntb_tx_room(p, &p->resp_tx, ncells + p->acks_owed - qp->need_ack);
}

/* A response of one cell (ACK, NAK, atomic result); the caller made sure it fits. */
static void respond(struct ntb_peer *p, struct ntb_qp *qp, uint8_t op, uint32_t psn,
		    uint32_t syndrome, uint64_t arg0)
{
	struct ntbv_msg h = { .op = op, .flags = NTBV_F_FIRST | NTBV_F_LAST, .ncells = 1,
			      .dst_qpn = qp->dest_qpn, .src_qpn = qp->qpn, .psn = psn,
			      .total = syndrome, .arg0 = arg0, .msn = qp->msn };
	struct ntbv_msg *m = ntb_tx_reserve(p, &p->resp_tx, 1);

	if (!m)
		return;		/* cannot happen: checked by the caller */
	memcpy(m, &h, sizeof(h));
	ntb_tx_commit(&p->resp_tx, 1);
}

/* A responder-side error (IBTA 9.9.3.1.2): NAK, and this QP enters the error state too. */
static void fail(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h,
		 enum ntbv_nak syndrome, enum ibv_event_type ev)
{
	if (qp->type == IBV_QPT_RC)
		respond(p, qp, NTBV_OP_NAK, h->psn, syndrome, 0);
	if (ntb_qp_mark_error(qp))
		ntb_raise_event(qp->ctx, (uintptr_t)&qp->vqp.qp, ev);
	qp->want_error = true;
	dirty(p, qp);
}

/* The receive WQE a message fills completes with an error of its own. */
static void recv_error(struct ntb_qp *qp, enum ibv_wc_status st)
{
	struct ibv_wc wc = { .wr_id = qp->cur_recv.wr_id, .status = st, .opcode = IBV_WC_RECV,
			     .qp_num = qp->qpn };

	ntb_cq_push(qp->rcq, &wc, false);
	qp->cur_has_recv = false;
	qp->cur_active = false;
}

/*
 * The local region an rkey names, checked for the range and rights (IBTA 10.6.3.2 / 9.7.5.1.3:
 * key valid, same PD as the QP, inside the region, access allowed by both region and QP).
 */
static bool remote_range(struct ntb_qp *qp, uint32_t rkey, uint64_t raddr, uint64_t len,
			 uint32_t access, uint64_t *local)
{
	struct ntb_mr_slot m;

	if (!len) {
		*local = 0;
		return (qp->access & access) == access;
	}
	if (!ntb_rkey_lookup(qp, rkey, &m) || (m.access & access) != access || (qp->access & access) != access ||
	    raddr < m.hca_va || raddr + len > m.hca_va + m.length || raddr + len < raddr)
		return false;
	*local = m.addr + (raddr - m.hca_va);
	return true;
}

static void recv_done(struct ntb_qp *qp, const struct ntbv_msg *h, enum ibv_wc_opcode op,
		      uint32_t byte_len)
{
	struct ibv_wc wc = { .wr_id = qp->cur_recv.wr_id, .status = IBV_WC_SUCCESS,
			     .opcode = op, .byte_len = byte_len, .qp_num = qp->qpn,
			     .src_qp = qp->dest_qpn };

	if (h->flags & NTBV_F_IMM) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = h->imm;
	} else if (h->flags & NTBV_F_INV) {
		wc.wc_flags |= IBV_WC_WITH_INV;
		wc.invalidated_rkey = h->imm;
	}
	ntb_cq_push(qp->rcq, &wc, h->flags & NTBV_F_SOLICITED);
	qp->cur_has_recv = false;
}

/* The message is done: RC acknowledges it (coalesced: one ACK per QP per batch). */
static void msg_done(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h)
{
	qp->cur_active = false;
	qp->epsn = ib_psn_add(h->psn, 1);
	qp->msn++;
	if (qp->type == IBV_QPT_RC)
		owe_ack(p, qp);
}

static int take_recv(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h)
{
	if (ntb_rq_take(qp->ctx, qp, &qp->cur_recv, qp->cur_sge)) {
		qp->cur_has_recv = true;
		return 0;
	}
	if (qp->type == IBV_QPT_RC) {
		/* IBTA 9.7.5.2.8: RNR NAK with our timer; the requester comes back with it */
		respond(p, qp, NTBV_OP_NAK, h->psn, NTBV_NAK_RNR, qp->min_rnr_timer);
		NTB_TRACE(NTB_TR_R_NAK, qp->qpn, h->psn, NTBV_NAK_RNR, p->resp_tx.prod, 0);
		qp->nak_sent = true;
		qp->nak_psn = h->psn;
	} else {
		qp->cur_drop = true;	/* UC: the message is lost */
	}
	return -1;
}

/*
 * The first segment of the message in progress, again: the requester went back to it (its
 * transport timer fired while the rest was still on its way, and a rewind restarts a
 * partly transmitted message from its start). Same PSN, same WQE, same bytes: the message
 * goes on where its segments say, into the receive it already fills. (IB sends every packet
 * with its own PSN, so there the retransmitted packets are duplicates the responder
 * ignores; here the segments share the message's PSN.)
 */
static bool restarted(const struct ntb_qp *qp, const struct ntbv_msg *h, uint8_t op)
{
	return qp->type == IBV_QPT_RC && qp->cur_active && qp->cur_op == op &&
	       qp->cur_psn == h->psn && qp->cur_total == h->total;
}

static int do_send(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h,
		   const uint8_t *data)
{
	if ((h->flags & NTBV_F_FIRST) && !restarted(qp, h, NTBV_OP_SEND)) {
		if (qp->cur_active && qp->cur_has_recv)
			recv_error(qp, IBV_WC_WR_FLUSH_ERR);
		qp->cur_active = false;
		if (take_recv(p, qp, h))
			return R_NEXT;
		qp->cur_active = true;
		qp->cur_op = NTBV_OP_SEND;
		qp->cur_psn = h->psn;
		qp->cur_total = h->total;
		if (ntb_check_sges(qp->ctx, qp->pd, qp->cur_recv.sg, qp->cur_recv.num_sge,
				   IBV_ACCESS_LOCAL_WRITE, NULL) != IBV_WC_SUCCESS) {
			recv_error(qp, IBV_WC_LOC_PROT_ERR);
			fail(p, qp, h, NTBV_NAK_OP, IBV_EVENT_QP_ACCESS_ERR);
			return R_NEXT;
		}
		if (h->total > ntb_sg_total(qp->cur_recv.sg, qp->cur_recv.num_sge)) {
			/* IBTA 9.7.5.2.5: too long for the receive buffer */
			recv_error(qp, IBV_WC_LOC_LEN_ERR);
			fail(p, qp, h, NTBV_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR);
			return R_NEXT;
		}
	} else if (!qp->cur_active || qp->cur_op != NTBV_OP_SEND) {
		return R_NEXT;
	}
	if (h->raddr + h->len > qp->cur_total || h->total != qp->cur_total) {
		recv_error(qp, IBV_WC_REM_INV_REQ_ERR);
		fail(p, qp, h, NTBV_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR);
		return R_NEXT;
	}
	ntb_sg_copy_in(qp->cur_recv.sg, qp->cur_recv.num_sge, (uint32_t)h->raddr, data, h->len);
	if (h->flags & NTBV_F_LAST) {
		/*
		 * SEND_WITH_INV: the window goes when the message is complete (IBTA 9.4.1.1.2);
		 * a key that names no type 2 window of ours bound to this QP is an invalid
		 * request (the receive completes in error, as rxe's does).
		 */
		if ((h->flags & NTBV_F_INV) && !(h->flags & NTBV_F_IMM) &&
		    !ntb_mw_remote_inv(qp, h->imm)) {
			recv_error(qp, IBV_WC_REM_INV_REQ_ERR);
			fail(p, qp, h, NTBV_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR);
			return R_NEXT;
		}
		recv_done(qp, h, IBV_WC_RECV, qp->cur_total);
		msg_done(p, qp, h);
	}
	return R_NEXT;
}

static int do_write(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h,
		    const uint8_t *data)
{
	uint64_t off;

	if ((h->flags & NTBV_F_FIRST) && !restarted(qp, h, NTBV_OP_WRITE)) {
		uint64_t local;

		if (qp->cur_active && qp->cur_has_recv)
			recv_error(qp, IBV_WC_WR_FLUSH_ERR);
		qp->cur_active = false;
		if (!remote_range(qp, h->rkey, h->raddr, h->total, IBV_ACCESS_REMOTE_WRITE,
				  &local)) {
			if (qp->type == IBV_QPT_RC)
				fail(p, qp, h, NTBV_NAK_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
			else
				qp->cur_drop = true;	/* UC: silently dropped */
			return R_NEXT;
		}
		if ((h->flags & NTBV_F_IMM) && take_recv(p, qp, h))
			return R_NEXT;
		qp->cur_active = true;
		qp->cur_op = NTBV_OP_WRITE;
		qp->cur_psn = h->psn;
		qp->cur_local = local;
		qp->cur_raddr = h->raddr;
		qp->cur_total = h->total;
	} else if (!qp->cur_active || qp->cur_op != NTBV_OP_WRITE) {
		return R_NEXT;
	}
	off = h->raddr - qp->cur_raddr;
	if (h->raddr < qp->cur_raddr || off + h->len > qp->cur_total) {
		fail(p, qp, h, NTBV_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR);
		return R_NEXT;
	}
	if (h->len)
		memcpy((void *)(uintptr_t)(qp->cur_local + off), data, h->len);
	if (h->flags & NTBV_F_LAST) {
		if (qp->cur_has_recv)
			recv_done(qp, h, IBV_WC_RECV_RDMA_WITH_IMM, qp->cur_total);
		msg_done(p, qp, h);
	}
	return R_NEXT;
}

/*
 * Put READ data straight into the requester's buffer, which it named by its own key (a sink
 * its ntbd published): stores when the peer's region is CPU-mappable, else one DMA copy.
 */
static bool read_place(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h)
{
	struct ntb_context *ctx = qp->ctx;
	uint32_t key = (uint32_t)h->arg1, mi = NTBV_KEY_INDEX(key);
	struct ntbv_mr_ent e;
	uint8_t *base;
	uint64_t off;

	if (!mi || mi >= p->end->max_mr)
		return false;
	ntb_read_entry(&e, &p->end->mrs[mi], sizeof(e));
	if (e.rkey != key || !(e.access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)) ||
	    e.slot != p->slot || e.slot_epoch != p->rx_epoch || e.win_off == NTBV_NO_WINDOW ||
	    h->arg0 < e.hca_va || h->arg0 + h->total > e.hca_va + e.length ||
	    h->arg0 + h->total < h->arg0 || e.win_off + e.length < e.win_off ||
	    (p->endi == NTB_END_PEER && e.win_off + e.length > ctx->peer_len))
		return false;
	off = h->arg0 - e.hca_va;
	base = ntb_pio_region(ctx, p->endi, &e);
	if (base) {
		ntb_pio_copy(base + off, (const void *)(uintptr_t)qp->cur_local, h->total);
		return true;
	}
	/* the DMA engine writes into the peer only: a loopback sink gets the data in messages */
	return p->endi == NTB_END_PEER &&
	       ntb_dma_copy(ctx, e.win_off + off, (const void *)(uintptr_t)qp->cur_local,
			    h->total);
}

/* Answer a READ, possibly over several calls when the response ring fills up. */
static int do_read(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h, bool dup)
{
	uint32_t mtu = msg_mtu(qp);

	/* segments of at most half the ring (a small block holds less than a path MTU) */
	if (mtu > p->resp_tx.max_payload)
		mtu = p->resp_tx.max_payload;

	if (!qp->cur_active || qp->cur_op != NTBV_OP_READ || qp->cur_psn != h->psn) {
		uint64_t local;

		if (!remote_range(qp, h->rkey, h->raddr, h->total, IBV_ACCESS_REMOTE_READ,
				  &local)) {
			fail(p, qp, h, NTBV_NAK_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
			return R_NEXT;
		}
		qp->cur_active = true;
		qp->cur_op = NTBV_OP_READ;
		qp->cur_local = local;
		qp->cur_total = h->total;
		qp->cur_read_off = 0;
		qp->cur_dup = dup;
		qp->cur_psn = h->psn;
		if ((h->flags & NTBV_F_PLACE) && h->total && read_place(p, qp, h)) {
			/* in place: one answer without data (the room for it was checked) */
			struct ntbv_msg r = { .op = NTBV_OP_READ_RESP, .ncells = 1,
					      .flags = NTBV_F_FIRST | NTBV_F_LAST | NTBV_F_PLACE,
					      .dst_qpn = qp->dest_qpn, .src_qpn = qp->qpn,
					      .psn = h->psn, .total = h->total, .msn = qp->msn };
			struct ntbv_msg *m = answer_room(p, qp, 1) ?
						     ntb_tx_reserve(p, &p->resp_tx, 1) : NULL;

			if (m) {
				memcpy(m, &r, sizeof(r));
				ntb_tx_commit(&p->resp_tx, 1);
				qp->cur_read_off = qp->cur_total;
			}
		}
	}
	while (qp->cur_read_off < qp->cur_total || !qp->cur_total) {
		uint32_t left = qp->cur_total - qp->cur_read_off;
		uint32_t chunk = left < mtu ? left : mtu, ncells = ntbv_msg_cells(chunk);
		struct ntbv_msg r = { .op = NTBV_OP_READ_RESP, .ncells = ncells,
				      .dst_qpn = qp->dest_qpn, .src_qpn = qp->qpn,
				      .psn = h->psn, .len = chunk, .raddr = qp->cur_read_off,
				      .total = qp->cur_total, .msn = qp->msn };
		struct ntbv_msg *m = answer_room(p, qp, ncells) ?
					     ntb_tx_reserve(p, &p->resp_tx, ncells) : NULL;

		if (!m)
			return R_STALL;
		if (!qp->cur_read_off)
			r.flags |= NTBV_F_FIRST;
		if (chunk == left)
			r.flags |= NTBV_F_LAST;
		if (chunk)
			memcpy((uint8_t *)m + NTBV_CELL,
			       (const void *)(uintptr_t)(qp->cur_local + qp->cur_read_off), chunk);
		memcpy(m, &r, sizeof(r));
		ntb_tx_commit(&p->resp_tx, ncells);
		qp->cur_read_off += chunk;
		if (!qp->cur_total)
			break;
	}
	qp->cur_active = false;
	if (!qp->cur_dup) {
		qp->epsn = ib_psn_add(h->psn, 1);
		qp->msn++;
	}
	ack_settled(p, qp);	/* the response acknowledges everything before it */
	return R_NEXT;
}

static int do_atomic(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h)
{
	uint64_t local, orig;

	if (h->raddr & 7) {
		/* IBTA 9.4.5: atomics need a naturally aligned 64-bit target */
		fail(p, qp, h, NTBV_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR);
		return R_NEXT;
	}
	if (!remote_range(qp, h->rkey, h->raddr, 8, IBV_ACCESS_REMOTE_ATOMIC, &local)) {
		fail(p, qp, h, NTBV_NAK_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
		return R_NEXT;
	}
	if (h->op == NTBV_OP_CMP_SWP) {
		orig = h->arg0;
		__atomic_compare_exchange_n((uint64_t *)(uintptr_t)local, &orig, h->arg1, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add((uint64_t *)(uintptr_t)local, h->arg0, __ATOMIC_SEQ_CST);
	}
	/* kept for a retransmitted duplicate: an atomic must not execute twice */
	qp->atomic_cache[qp->atomic_next] = (typeof(qp->atomic_cache[0])){ h->psn, orig, true };
	qp->atomic_next = (qp->atomic_next + 1) % NTB_MAX_RD_ATOMIC;
	respond(p, qp, NTBV_OP_ATOMIC_RESP, h->psn, 0, orig);
	qp->epsn = ib_psn_add(h->psn, 1);
	qp->msn++;
	ack_settled(p, qp);
	return R_NEXT;
}

/*
 * ATOMIC WRITE (IBTA 1.5 9.4.7): eight bytes stored at once into a naturally aligned target
 * the rkey allows remote writes to; acknowledged like a WRITE, a duplicate only again.
 */
static int do_atomic_write(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h)
{
	uint64_t local;

	if (h->raddr & 7 || h->total != 8) {
		fail(p, qp, h, NTBV_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR);
		return R_NEXT;
	}
	if (!remote_range(qp, h->rkey, h->raddr, 8, IBV_ACCESS_REMOTE_WRITE, &local)) {
		fail(p, qp, h, NTBV_NAK_ACCESS, IBV_EVENT_QP_ACCESS_ERR);
		return R_NEXT;
	}
	__atomic_store_n((uint64_t *)(uintptr_t)local, h->arg0, __ATOMIC_RELEASE);
	msg_done(p, qp, h);
	return R_NEXT;
}

/* A request the QP has already executed (the requester retransmitted it). */
static int duplicate(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h)
{
	switch (h->op) {
	case NTBV_OP_READ:
		return do_read(p, qp, h, true);
	case NTBV_OP_CMP_SWP:
	case NTBV_OP_FETCH_ADD:
		for (unsigned int i = 0; i < NTB_MAX_RD_ATOMIC; i++) {
			if (qp->atomic_cache[i].valid && qp->atomic_cache[i].psn == h->psn) {
				respond(p, qp, NTBV_OP_ATOMIC_RESP, h->psn, 0,
					qp->atomic_cache[i].orig);
				return R_NEXT;
			}
		}
		break;
	default:
		if (!(h->flags & NTBV_F_LAST))
			return R_NEXT;
		break;
	}
	owe_ack(p, qp);
	return R_NEXT;
}

static int rc_request(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h,
		      const uint8_t *data)
{
	int32_t d = ib_psn_cmp(h->psn, qp->epsn);

	/*
	 * A duplicate is answered whatever else is going on, as by Linux rxe (rxe_resp.c,
	 * check_psn()): its requester went back to it because it has not seen the answer,
	 * and it may never transmit past it again before it does (a small ring full of the
	 * retransmitted messages). Discarding it - as this did while an RNR NAK was
	 * outstanding - left the requester retrying until it gave up: the "retry exceeded"
	 * flake of docs/ntb-verbs.md ("Retries").
	 */
	if (d < 0)
		return duplicate(p, qp, h);
	if (qp->nak_sent) {
		/* after a NAK the rest is discarded until the NAK'ed message comes again */
		if (d || !(h->flags & NTBV_F_FIRST))
			return R_NEXT;
		qp->nak_sent = false;
	}
	if (d > 0)
		return R_NEXT;	/* out of sequence: cannot happen on a FIFO; discard */
	switch (h->op) {
	case NTBV_OP_SEND:
		return do_send(p, qp, h, data);
	case NTBV_OP_WRITE:
		return do_write(p, qp, h, data);
	case NTBV_OP_READ:
		return do_read(p, qp, h, false);
	case NTBV_OP_CMP_SWP:
	case NTBV_OP_FETCH_ADD:
		return do_atomic(p, qp, h);
	case NTBV_OP_ATOMIC_WRITE:
		return do_atomic_write(p, qp, h);
	default:
		fail(p, qp, h, NTBV_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR);
		return R_NEXT;
	}
}

static int uc_request(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h,
		      const uint8_t *data)
{
	if (qp->cur_drop) {
		if (!(h->flags & NTBV_F_FIRST))
			return R_NEXT;
		qp->cur_drop = false;
	}
	switch (h->op) {
	case NTBV_OP_SEND:
		return do_send(p, qp, h, data);
	case NTBV_OP_WRITE:
		return do_write(p, qp, h, data);
	default:
		return R_NEXT;	/* UC has no READ or atomics: dropped */
	}
}

/* ---- UD ------------------------------------------------------------------------------------ */

static uint16_t ip_csum(const void *hdr, size_t len)
{
	const uint16_t *w = hdr;
	uint32_t sum = 0;

	for (size_t i = 0; i < len / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * The 40 bytes a UD receive buffer starts with. For RoCE v2 over IPv4 the verbs report the
 * IPv4 header in the last 20 of them and leave the first 20 unspecified (Linux
 * ib_get_rdma_header_version / libibverbs ibv_init_ah_from_wc read it that way).
 */
static void build_grh(struct ntb_peer *p, uint32_t len, bool imm, uint8_t grh[NTB_GRH_LEN])
{
	struct ntb_context *ctx = p->ctx;
	struct iphdr ip = {
		.version = 4,
		.ihl = 5,
		/*
		 * IPv4 + UDP + BTH + DETH (+ ImmDt) + payload padded to 4 bytes (BTH PadCnt) +
		 * ICRC, as the packet would have been
		 */
		.tot_len = htons((uint16_t)(20 + 8 + 12 + 8 + (imm ? 4 : 0) + ((len + 3) & ~3u) +
					    4)),
		.frag_off = htons(IP_DF),
		.ttl = 64,
		.protocol = IPPROTO_UDP,
		.saddr = p->end->ipv4,
		.daddr = ctx->ipv4,
	};

	ip.check = ip_csum(&ip, sizeof(ip));
	memset(grh, 0, 20);
	memcpy(grh + 20, &ip, sizeof(ip));
}

static int ud_request(struct ntb_peer *p, struct ntb_qp *qp, const struct ntbv_msg *h,
		      const uint8_t *data)
{
	struct ntb_context *ctx = qp->ctx;
	uint8_t grh[NTB_GRH_LEN];
	struct ibv_wc wc;
	int st = qp_state(qp);

	if (qp->type != IBV_QPT_UD || h->op != NTBV_OP_SEND ||
	    (h->flags & (NTBV_F_FIRST | NTBV_F_LAST)) != (NTBV_F_FIRST | NTBV_F_LAST) ||
	    (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD && st != IBV_QPS_SQE))
		return R_NEXT;
	/* IBTA 10.2.5: a datagram whose Q_Key differs from the QP's is dropped */
	if (h->rkey != qp->qkey)
		return R_NEXT;
	if (!ntb_rq_take(ctx, qp, &qp->cur_recv, qp->cur_sge))
		return R_NEXT;	/* UD: no receive posted, the datagram is dropped */
	wc = (struct ibv_wc){ .wr_id = qp->cur_recv.wr_id, .opcode = IBV_WC_RECV,
			      .qp_num = qp->qpn, .src_qp = h->src_qpn };
	if (ntb_check_sges(ctx, qp->pd, qp->cur_recv.sg, qp->cur_recv.num_sge,
			   IBV_ACCESS_LOCAL_WRITE, NULL) != IBV_WC_SUCCESS) {
		wc.status = IBV_WC_LOC_PROT_ERR;
		ntb_cq_push(qp->rcq, &wc, false);
		if (ntb_qp_mark_error(qp))
			ntb_raise_event(ctx, (uintptr_t)&qp->vqp.qp, IBV_EVENT_QP_ACCESS_ERR);
		qp->want_error = true;
		dirty(p, qp);
		return R_NEXT;
	}
	if (NTB_GRH_LEN + (uint64_t)h->len >
	    ntb_sg_total(qp->cur_recv.sg, qp->cur_recv.num_sge)) {
		wc.status = IBV_WC_LOC_LEN_ERR;
		ntb_cq_push(qp->rcq, &wc, false);
		return R_NEXT;
	}
	build_grh(p, h->len, h->flags & NTBV_F_IMM, grh);
	ntb_sg_copy_in(qp->cur_recv.sg, qp->cur_recv.num_sge, 0, grh, NTB_GRH_LEN);
	ntb_sg_copy_in(qp->cur_recv.sg, qp->cur_recv.num_sge, NTB_GRH_LEN, data, h->len);
	wc.status = IBV_WC_SUCCESS;
	wc.byte_len = NTB_GRH_LEN + h->len;
	wc.wc_flags = IBV_WC_GRH;
	/*
	 * What a ConnectX reports in the SL of a RoCE UD receive: the packet's L3 type (PRM
	 * "Completion Queue Entry": sl, for responder UD over RoCE; 2 = IPv4). UCX's ud_verbs
	 * reads it to know which part of the 40 bytes holds the destination address.
	 */
	wc.sl = NTB_ROCE_L3_IPV4;
	if (h->flags & NTBV_F_IMM) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = h->imm;
	} else if (h->flags & NTBV_F_INV) {
		wc.wc_flags |= IBV_WC_WITH_INV;
		wc.invalidated_rkey = h->imm;
	}
	ntb_cq_push(qp->rcq, &wc, h->flags & NTBV_F_SOLICITED);
	return R_NEXT;
}

/* ---- the loop --------------------------------------------------------------------------------- */

/* Can the batch answer RC requests: our block for the peer's incarnation is there. */
enum { REPLY_OK, REPLY_WAIT, REPLY_NONE };

static int handle(struct ntb_peer *p, const struct ntbv_msg *h, const uint8_t *data,
		  int reply)
{
	struct ntb_qp *qp;
	int st;

	if (h->op == NTBV_OP_PAD)
		return R_NEXT;
	qp = ntb_qp_lookup(p->ctx, h->dst_qpn);
	if (!qp)
		return R_NEXT;	/* no such QP: dropped, the requester times out */
	if (h->flags & NTBV_F_UD)
		return ud_request(p, qp, h, data);
	if (qp->type == IBV_QPT_UD || qp->peer != p || qp->peer_epoch != p->rx_epoch ||
	    h->src_qpn != qp->dest_qpn)
		return R_NEXT;
	/* RC answers every request: nobody to answer (its client is gone), nothing to do */
	if (qp->type == IBV_QPT_RC && reply == REPLY_NONE)
		return R_NEXT;
	/* ... or not yet: our block for it is being opened (the progress thread) */
	if (qp->type == IBV_QPT_RC && reply == REPLY_WAIT)
		return R_STALL;
	st = qp_state(qp);
	if (st == IBV_QPS_ERR) {
		ntb_qp_flush_cur(qp);
		return R_NEXT;
	}
	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT)
		return R_NEXT;	/* IBTA 10.3.1: not ready to receive, silently dropped */
	/*
	 * Room for the one-cell answer any RC request may need (NAK, atomic result), its ACK
	 * and the ACK every QP of the batch owes: consumed, it is answered before its credit
	 * goes back (READ data asks for its own room, do_read).
	 */
	if (qp->type == IBV_QPT_RC && !ntb_tx_room(p, &p->resp_tx, 2 + p->acks_owed))
		return R_STALL;
	return qp->type == IBV_QPT_RC ? rc_request(p, qp, h, data) : uc_request(p, qp, h, data);
}

/* A request consumed: the QP's state after it (the trace ring, ntb_trace.h). */
static void trace_req(struct ntb_peer *p, const struct ntbv_msg *h)
{
	struct ntb_qp *qp;

	if (!ntb_trace_on || !(qp = ntb_qp_lookup(p->ctx, h->dst_qpn)))
		return;
	ntb_trace_log(NTB_TR_R_REQ, h->dst_qpn, h->psn, h->flags | (uint32_t)h->op << 8,
		      p->req_rx.cons, qp->epsn | (uint64_t)qp->nak_sent << 32 |
					      (uint64_t)qp->cur_active << 33);
}

/* Answers can go to the peer: our block is for the incarnation that wrote (tx_lock). */
static int can_reply_now(struct ntb_peer *p)
{
	switch (ntb_peer_tx_sync(p)) {
	case NTB_TX_READY:
		return p->tx_epoch == p->rx_epoch ? REPLY_OK : REPLY_NONE;
	case NTB_TX_WAIT:
		return REPLY_WAIT;
	default:
		return REPLY_NONE;
	}
}

/* The coalesced ACK a QP owes, if the response ring has room for it (tx_lock). */
static bool send_ack(struct ntb_peer *p, struct ntb_qp *qp)
{
	if (!ntb_tx_room(p, &p->resp_tx, 1))
		return false;
	respond(p, qp, NTBV_OP_ACK, ib_psn_sub(qp->epsn, 1), 0, 0);
	NTB_TRACE(NTB_TR_R_ACK, qp->qpn, ib_psn_sub(qp->epsn, 1), 0, p->resp_tx.prod, 0);
	ack_settled(p, qp);
	return true;
}

/*
 * An ACK the QP still owes goes out now, before the QP disappears from the peer's view
 * (ntb_destroy_qp): its requester may be waiting for it. Under rx_lock.
 */
void ntb_resp_ack_now(struct ntb_peer *p, struct ntb_qp *qp)
{
	if (!qp->need_ack)
		return;
	pthread_mutex_lock(&p->tx_lock);
	if (can_reply_now(p) == REPLY_OK && send_ack(p, qp))
		ntb_tx_publish(p, NTBV_QUIET_RESP);
	pthread_mutex_unlock(&p->tx_lock);
}

int ntb_resp_process(struct ntb_peer *p, int budget)
{
	const uint8_t *data;
	struct ntbv_msg h;
	bool can_reply;
	int n = 0, reply;
	uint64_t produced;

	pthread_mutex_lock(&p->tx_lock);
	reply = can_reply_now(p);
	can_reply = reply == REPLY_OK;
	produced = p->resp_tx.prod;
	p->resp_stalled = false;
	/* what the last batch could not send (no block to answer into yet), and QP resets */
	p->acks_owed = 0;
	for (struct ntb_qp *qp = p->dirty; qp; qp = qp->next_dirty)
		p->acks_owed += qp->need_ack;
	ntb_cq_stage_begin();
	/* a message completes at most one receive: the staged ones never overflow */
	while (n < budget && ntb_cq_staged() < NTB_STAGED_MAX &&
	       ntb_rx_peek(p, &p->req_rx, &h, &data)) {
		if (handle(p, &h, data, reply) == R_STALL) {
			NTB_TRACE(NTB_TR_R_STALL, h.dst_qpn, h.psn, h.flags, p->req_rx.cons,
				  p->resp_tx.prod);
			/* a READ answered in part is progress too: keep the thread hot */
			n += p->resp_tx.prod != produced;
			p->resp_stalled = true;
			break;
		}
		ntb_rx_advance(&p->req_rx, &h);
		trace_req(p, &h);
		n++;
	}
	/*
	 * Coalesced ACKs: one per QP per batch. Every request consumed left room for them
	 * (handle, do_read), so they fit: the credits published below never run ahead of the
	 * answers, which the requester's transport timer relies on. The check stays, treated
	 * as a stalled request (our bell wish asks for credits).
	 */
	for (struct ntb_qp *qp = p->dirty; qp; qp = qp->next_dirty) {
		if (qp->need_ack && can_reply && !send_ack(p, qp)) {
			NTB_TRACE(NTB_TR_R_ACK_FULL, qp->qpn, qp->epsn, 0, p->req_rx.cons,
				  p->resp_tx.prod);
			p->resp_stalled = true;
			break;
		}
	}
	if (can_reply)
		ntb_tx_publish(p, NTBV_QUIET_RESP);
	pthread_mutex_unlock(&p->tx_lock);
	/* the receive completions after the ACKs that acknowledge their messages */
	ntb_cq_stage_end();

	/* errors found above: flush now that the producing lock is released */
	for (struct ntb_qp **pp = &p->dirty; *pp;) {
		struct ntb_qp *qp = *pp;

		if (qp->want_error) {
			qp->want_error = false;
			ntb_qp_to_error(qp, false);
			ntb_qp_flush_cur(qp);
			ntb_qp_flush_rq(qp);
		}
		if (!qp->need_ack) {
			*pp = qp->next_dirty;
			qp->dirty = false;
		} else {
			pp = &qp->next_dirty;
		}
	}
	ntb_rx_publish(p);
	NTB_TRACE(NTB_TR_R_PUB, 0, p->slot, p->endi, p->req_rx.cons, p->resp_rx.cons);
	return n;
}
