// SPDX-License-Identifier: MIT
/*
 * The requester: turns send WQEs into request messages in the peer's request ring, or places
 * an RDMA WRITE directly into the target memory with the DMA engine.
 *
 * Direct placement (NTRDMA's zero-copy path, docs/ntb-verbs.md "Data paths") is used for an RDMA
 * WRITE without immediate of at least NTB_DIRECT_MIN bytes when the key, range and rights
 * check out against the peer's published tables and nothing of this QP is still travelling in
 * the ring (an earlier message could be NAK'ed and retransmitted: a later write must not
 * overtake it). The WRITE then completes locally once the engine has issued it: on a PCIe link
 * posted writes arrive in order and are not lost, so "issued" is "delivered" (the IOMMU of the
 * target end is the backstop for a key deregistered meanwhile). Everything else is a message:
 * SENDs (the receiver chooses the buffer), short WRITEs, READ and atomic requests (the
 * responder answers them: no reads across the link).
 *
 * RC reliability without loss: PSNs order the messages; the responder ACKs, NAKs (RNR, errors)
 * and answers READ/atomics in order; after an RNR NAK the requester waits the responder's timer
 * and retransmits from the NAK'ed PSN (go-back-N, as IBTA 9.7.5.2.8); a message the responder
 * consumed without answering (its QP was not ready, or gone) is retransmitted when the
 * transport timer (4.096 us * 2^timeout) expires, retry_cnt times.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ntb.h"

static uint32_t msg_mtu(struct ntb_qp *qp)
{
	uint32_t m = ntb_mtu_bytes(qp->path_mtu);

	return qp->ctx->mtu && qp->ctx->mtu < m ? qp->ctx->mtu : m;
}

/*
 * Where a region of an end may lie: in the peer's window (we store into it or DMA there), or
 * anywhere in our own (loopback: ntbd gives us its memory object, it checks the range).
 */
static uint64_t win_len(struct ntb_context *ctx, unsigned int endi)
{
	return endi == NTB_END_PEER ? ctx->peer_len : UINT64_MAX;
}

static bool is_rd_atomic(uint8_t op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* ---- direct placement ----------------------------------------------------------------------- */

/*
 * The target end's tables say the write may land: the target QP exists, is ready and
 * connected to us, and the key covers the range with write rights in the QP's PD. Otherwise
 * the write goes as messages and the responder reports the precise error.
 */
static bool direct_target(struct ntb_qp *qp, const struct ntb_swqe *w, struct ntbv_mr_ent *m)
{
	struct ntb_context *ctx = qp->ctx;
	struct ntb_end *end = qp->peer->end;
	uint32_t qi = NTBV_QPN_INDEX(qp->dest_qpn), mi = NTBV_KEY_INDEX(w->rkey);
	struct ntbv_qp_ent q;

	if (qi >= end->max_qp || mi >= end->max_mr || !mi)
		return false;
	ntb_read_entry(&q, &end->qps[qi], sizeof(q));
	if (q.qpn != qp->dest_qpn || q.dest_qpn != qp->qpn || q.slot != qp->peer->slot ||
	    q.slot_epoch != qp->peer_epoch || !(q.access & IBV_ACCESS_REMOTE_WRITE) ||
	    (q.state != IBV_QPS_RTR && q.state != IBV_QPS_RTS && q.state != IBV_QPS_SQD))
		return false;
	ntb_read_entry(m, &end->mrs[mi], sizeof(*m));
	return m->rkey == w->rkey && m->pd == q.pd && m->slot == q.slot &&
	       m->slot_epoch == q.slot_epoch && (m->access & IBV_ACCESS_REMOTE_WRITE) &&
	       w->raddr >= m->hca_va && w->raddr + w->length <= m->hca_va + m->length &&
	       w->raddr + w->length >= w->raddr && m->win_off != NTBV_NO_WINDOW &&
	       m->win_off + m->length >= m->win_off &&
	       m->win_off + m->length <= win_len(ctx, qp->peer->endi);
}

/* Ask ntbd for the memory object of a region of an end, to store into (PIO). */
static void map_peer(struct ntb_context *ctx, unsigned int endi, struct ntb_pmap *pm)
{
	struct ntb_handle_req req = { .handle = pm->rkey, .reserved = endi };
	struct ntb_map_peer_mr_rsp rsp = { 0 };
	int fd = -1;
	struct bv_call call = { .op = NTB_OP_MAP_PEER_MR, .req = &req, .req_len = sizeof(req),
				.rsp = &rsp, .rsp_max = sizeof(rsp), .rfds = &fd, .nrfds = 1 };
	void *map;

	if (bv_call(&ctx->bv, &call) || call.rsp_len != sizeof(rsp) || call.nrfds != 1) {
		if (fd >= 0)
			close(fd);
		return;		/* DMA only */
	}
	if (rsp.delta + pm->length > rsp.len) {
		close(fd);
		return;
	}
	map = mmap(NULL, rsp.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)rsp.fd_off);
	close(fd);
	if (map == MAP_FAILED)
		return;
	pm->map = map;
	pm->map_len = rsp.len;
	pm->base = (uint8_t *)map + rsp.delta;
}

/* Byte 0 of region m of an end as we can store into it, or NULL (DMA or messages only). */
uint8_t *ntb_pio_region(struct ntb_context *ctx, unsigned int endi, const struct ntbv_mr_ent *m)
{
	uint32_t idx = NTBV_KEY_INDEX(m->rkey);
	struct ntb_pmap *pm, **slot;
	uint8_t *base = NULL;

	if (!ntb_pio_enabled() || !(m->access & IBV_ACCESS_REMOTE_WRITE) ||
	    m->win_off == NTBV_NO_WINDOW || idx >= NTBV_MAX_MR)
		return NULL;
	pthread_mutex_lock(&ctx->pmap_lock);
	slot = &ctx->pmaps[endi][idx];
	pm = *slot;
	if (pm && (pm->rkey != m->rkey || pm->win_off != m->win_off || pm->length != m->length)) {
		/* the key index was reused: that region is gone */
		if (pm->map)
			munmap(pm->map, pm->map_len);
		free(pm);
		*slot = pm = NULL;
	}
	if (!pm) {
		pm = calloc(1, sizeof(*pm));
		if (pm) {
			pm->rkey = m->rkey;
			pm->win_off = m->win_off;
			pm->length = m->length;
			map_peer(ctx, endi, pm);
			*slot = pm;
		}
	}
	if (pm)
		base = pm->base;
	pthread_mutex_unlock(&ctx->pmap_lock);
	return base;
}

void ntb_pmaps_free(struct ntb_context *ctx)
{
	for (unsigned int e = 0; e < 2; e++) {
		for (uint32_t i = 0; ctx->pmaps[e] && i < NTBV_MAX_MR; i++) {
			struct ntb_pmap *pm = ctx->pmaps[e][i];

			if (!pm)
				continue;
			if (pm->map)
				munmap(pm->map, pm->map_len);
			free(pm);
			ctx->pmaps[e][i] = NULL;
		}
	}
}

/*
 * Stores through the window. The last bytes go last, after a store fence: a peer polling the
 * end of the buffer (as ib_write_lat does) sees the rest of the message first, as with an
 * HCA's in-order DMA.
 */
void ntb_pio_copy(uint8_t *dst, const void *src, size_t len)
{
	size_t tail = len < 8 ? len : 8;

	memcpy(dst, src, len - tail);
	__builtin_ia32_sfence();
	memcpy(dst + len - tail, (const uint8_t *)src + len - tail, tail);
	__builtin_ia32_sfence();
}

bool ntb_dma_copy(struct ntb_context *ctx, uint64_t off, const void *src, size_t len)
{
	ntb_dma_cookie_t cookie = 0;
	bool ok;

	if (!ctx->dma)
		return false;
	pthread_mutex_lock(&ctx->dma_lock);
	ok = !ntb_dma_memcpy(ctx->dma, 0, off, src, len, 0, &cookie);
	ntb_dma_submit(ctx->dma);
	ntb_dma_run(ctx->dma, 0);
	if (ok && ntb_dma_completed(ctx->dma) < cookie)
		ok = false;
	pthread_mutex_unlock(&ctx->dma_lock);
	return ok;
}

static void place_pio(uint8_t *dst, const struct ntb_swqe *w)
{
	uint32_t tail = w->length < 8 ? w->length : 8, head = w->length - tail;

	ntb_sg_copy_out(dst, w->sg, w->num_sge, 0, head);
	__builtin_ia32_sfence();
	ntb_sg_copy_out(dst + head, w->sg, w->num_sge, head, tail);
	__builtin_ia32_sfence();
}

static bool place_dma(struct ntb_qp *qp, struct ntb_swqe *w, uint64_t off)
{
	struct ntb_context *ctx = qp->ctx;
	ntb_dma_cookie_t cookie = 0;
	bool ok = true;

	if (!ctx->dma)
		return false;
	pthread_mutex_lock(&ctx->dma_lock);
	for (uint32_t i = 0; i < w->num_sge && ok; i++) {
		if (!w->sg[i].length)
			continue;
		ok = !ntb_dma_memcpy(ctx->dma, 0, off, (const void *)(uintptr_t)w->sg[i].addr,
				     w->sg[i].length, 0, &cookie);
		off += w->sg[i].length;
	}
	ntb_dma_submit(ctx->dma);
	/* the channel is ours to run: the copy happens here, in this thread */
	ntb_dma_run(ctx->dma, 0);
	if (cookie && ntb_dma_completed(ctx->dma) < cookie)
		ok = false;
	pthread_mutex_unlock(&ctx->dma_lock);
	return ok;
}

/* Place an RDMA WRITE directly if the target allows: true when it is done. */
static bool place_direct(struct ntb_qp *qp, struct ntb_swqe *w)
{
	struct ntb_context *ctx = qp->ctx;
	struct ntb_end *end = qp->peer->end;
	uint32_t qi = NTBV_QPN_INDEX(qp->dest_qpn), mi = NTBV_KEY_INDEX(w->rkey), qseq, mseq;
	struct ntb_direct_cache *dc = &qp->dc;
	struct ntbv_mr_ent m;
	uint8_t *base;

	if (qi >= end->max_qp || !mi || mi >= end->max_mr)
		return false;
	qseq = atomic_load_explicit(&end->qps[qi].seq, memory_order_acquire);
	mseq = atomic_load_explicit(&end->mrs[mi].seq, memory_order_acquire);
	if (dc->rkey == w->rkey && dc->dest_qpn == qp->dest_qpn && dc->qseq == qseq &&
	    dc->mseq == mseq && !(qseq & 1) &&
	    !(mseq & 1) && w->raddr >= dc->m.hca_va &&
	    w->raddr + w->length <= dc->m.hca_va + dc->m.length &&
	    w->raddr + w->length >= w->raddr) {
		/* the same target as last time, its entries unchanged since they were checked */
		m = dc->m;
		base = dc->base;
	} else {
		if (!direct_target(qp, w, &m))
			return false;
		base = ntb_pio_region(ctx, qp->peer->endi, &m);
		*dc = (struct ntb_direct_cache){ .rkey = w->rkey, .dest_qpn = qp->dest_qpn,
						 .qseq = qseq, .mseq = mseq, .m = m,
						 .base = base };
	}
	if (base) {
		place_pio(base + (w->raddr - m.hca_va), w);
		return true;
	}
	/* the DMA engine writes into the peer only: loopback writes of process memory travel */
	return qp->peer->endi == NTB_END_PEER && w->length >= NTB_DIRECT_MIN &&
	       place_dma(qp, w, m.win_off + (w->raddr - m.hca_va));
}

/* ---- messages ----------------------------------------------------------------------------------- */

static bool emit_data(struct ntb_qp *qp, struct ntb_peer *p, struct ntb_swqe *w, uint8_t op)
{
	uint32_t mtu = msg_mtu(qp);

	/* segments of at most half the ring (a small block holds less than a path MTU) */
	if (mtu > p->req_tx.max_payload)
		mtu = p->req_tx.max_payload;

	do {
		uint32_t chunk = w->length - w->sent < mtu ? w->length - w->sent : mtu;
		uint32_t ncells = ntbv_msg_cells(chunk);
		struct ntbv_msg h = { 0 }, *m = ntb_tx_reserve(p, &p->req_tx, ncells);

		if (!m)
			return false;
		if (!w->sent)
			w->psn = qp->next_psn;
		h.op = op;
		h.ncells = ncells;
		h.dst_qpn = qp->dest_qpn;
		h.src_qpn = qp->qpn;
		h.psn = w->psn;
		h.len = chunk;
		h.imm = w->imm;
		h.rkey = w->rkey;
		h.total = w->length;
		h.raddr = op == NTBV_OP_WRITE ? w->raddr + w->sent : w->sent;
		if (!w->sent)
			h.flags |= NTBV_F_FIRST;
		if (w->sent + chunk == w->length) {
			h.flags |= NTBV_F_LAST;
			if (w->send_flags & IBV_SEND_SOLICITED)
				h.flags |= NTBV_F_SOLICITED;
		}
		if (w->opcode == IBV_WR_SEND_WITH_IMM || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
			h.flags |= NTBV_F_IMM;
		else if (w->opcode == IBV_WR_SEND_WITH_INV)
			h.flags |= NTBV_F_INV;	/* imm: the rkey to invalidate */
		ntb_sg_copy_out((uint8_t *)m + NTBV_CELL, w->sg, w->num_sge, w->sent, chunk);
		memcpy(m, &h, sizeof(h));
		ntb_tx_commit(&p->req_tx, ncells);
		if (!w->sent)
			qp->next_psn = ib_psn_add(qp->next_psn, 1);
		w->sent += chunk;
	} while (w->sent < w->length);
	return true;
}

static bool emit_one(struct ntb_qp *qp, struct ntb_peer *p, struct ntb_swqe *w)
{
	struct ntbv_msg h = { 0 }, *m = ntb_tx_reserve(p, &p->req_tx, 1);

	if (!m)
		return false;
	w->psn = qp->next_psn;
	h.ncells = 1;
	h.flags = NTBV_F_FIRST | NTBV_F_LAST;
	h.dst_qpn = qp->dest_qpn;
	h.src_qpn = qp->qpn;
	h.psn = w->psn;
	h.rkey = w->rkey;
	h.raddr = w->raddr;
	h.total = w->length;
	switch (w->opcode) {
	case IBV_WR_RDMA_READ:
		h.op = NTBV_OP_READ;
		/*
		 * A long READ into one registered buffer: the responder may put the data there
		 * itself (the buffer's key is published to it as a sink) instead of sending it.
		 */
		if (w->num_sge == 1 && w->length >= NTB_DIRECT_MIN &&
		    !(w->send_flags & IBV_SEND_INLINE)) {
			struct ntb_mr_slot ms;

			if (ntb_mr_lookup(qp->ctx, w->sg[0].lkey, false, &ms) &&
			    (ms.access & IBV_ACCESS_LOCAL_WRITE)) {
				h.flags |= NTBV_F_PLACE;
				h.arg0 = ms.hca_va + (w->sg[0].addr - ms.addr);
				h.arg1 = ms.lkey;
			}
		}
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		h.op = NTBV_OP_CMP_SWP;
		h.arg0 = w->compare_add;
		h.arg1 = w->swap;
		break;
	case IBV_WR_ATOMIC_WRITE:
		h.op = NTBV_OP_ATOMIC_WRITE;
		h.arg0 = w->compare_add;
		break;
	default:
		h.op = NTBV_OP_FETCH_ADD;
		h.arg0 = w->compare_add;
		break;
	}
	memcpy(m, &h, sizeof(h));
	ntb_tx_commit(&p->req_tx, 1);
	qp->next_psn = ib_psn_add(qp->next_psn, 1);
	w->sent = w->length;
	return true;
}

static void finish(struct ntb_qp *qp, struct ntb_swqe *w, enum ibv_wc_status st)
{
	w->state = NTB_SWQE_DONE;
	w->status = st;
}

/* An error the requester finds itself: the WQE completes with it and the QP goes to error. */
static void local_error(struct ntb_qp *qp, struct ntb_swqe *w, enum ibv_wc_status st)
{
	finish(qp, w, st);
	qp->sq_tx++;
	ntb_qp_to_error(qp, true);
}

/* ---- RC / UC -------------------------------------------------------------------------------- */

static void tx_connected(struct ntb_qp *qp)
{
	struct ntb_context *ctx = qp->ctx;
	struct ntb_peer *p = qp->peer;
	bool rc = qp->type == IBV_QPT_RC, locked = false, sent_any = false;
	/* its end of the connection is gone (or never was): nothing is delivered */
	bool gone = !p || ntb_slot_epoch(p) != qp->peer_epoch;

	while (qp->sq_tx != qp->sq_head && qp_state(qp) == IBV_QPS_RTS) {
		struct ntb_swqe *w = &qp->sq[qp->sq_tx & (qp->sq_size - 1)];
		uint32_t sent0;
		bool ok;

		if (w->state == NTB_SWQE_DONE) {
			qp->sq_tx++;
			continue;
		}
		if (rc && is_rd_atomic(w->opcode) && !w->sent &&
		    qp->rd_atomic >= (qp->max_rd_atomic ? qp->max_rd_atomic : 1))
			break;
		/* IBTA 10.8.3.3: a fenced WQE waits for every earlier READ and atomic */
		if (rc && (w->send_flags & IBV_SEND_FENCE) && !w->sent && qp->rd_atomic)
			break;
		if (w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV) {
			/* local work, in order: nothing goes on the link (ntb_mw.c) */
			enum ibv_wc_status st = w->opcode == IBV_WR_BIND_MW ?
							ntb_mw_bind_exec(qp, w) :
							ntb_mw_local_inv(qp, w->rkey);

			if (st != IBV_WC_SUCCESS) {
				local_error(qp, w, st);
				break;
			}
			finish(qp, w, IBV_WC_SUCCESS);
			qp->sq_tx++;
			continue;
		}
		if (!w->sent && !w->ring) {
			uint32_t need = is_rd_atomic(w->opcode) ? IBV_ACCESS_LOCAL_WRITE : 0;
			enum ibv_wc_status st = IBV_WC_SUCCESS;

			if (!(w->send_flags & IBV_SEND_INLINE))
				st = ntb_check_sges(ctx, qp->pd, w->sg, w->num_sge, need,
						    &qp->lkc);
			if (st == IBV_WC_SUCCESS && w->length > NTB_MAX_MSG)
				st = IBV_WC_LOC_LEN_ERR;
			if (st == IBV_WC_SUCCESS && (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
						     w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) &&
			    w->length != 8)
				st = IBV_WC_LOC_LEN_ERR;
			if (st != IBV_WC_SUCCESS) {
				local_error(qp, w, st);
				break;
			}
		}
		if (gone) {
			/* nobody to deliver to: RC requests time out, UC messages are lost */
			if (rc) {
				w->state = NTB_SWQE_SENT;
				w->psn = qp->next_psn;
				qp->next_psn = ib_psn_add(qp->next_psn, 1);
				qp->inflight++;
				if (is_rd_atomic(w->opcode))
					qp->rd_atomic++;
				if (!qp->deadline && ib_ack_timeout_ns(qp->timeout)) {
					qp->deadline = ntb_now() + ib_ack_timeout_ns(qp->timeout);
					ntb_timer(qp->ctx, qp->deadline);
				}
			} else {
				finish(qp, w, IBV_WC_SUCCESS);
			}
			qp->sq_tx++;
			continue;
		}
		/* an RDMA WRITE nothing of ours can still overtake: straight into the target */
		if (w->opcode == IBV_WR_RDMA_WRITE && !w->sent && !w->ring &&
		    (rc ? !qp->inflight :
			  atomic_load_explicit(p->req_tx.cons, memory_order_acquire) >=
				  qp->ring_last) &&
		    place_direct(qp, w)) {
			finish(qp, w, IBV_WC_SUCCESS);
			qp->sq_tx++;
			continue;
		}
		if (!locked) {
			int st;

			pthread_mutex_lock(&p->tx_lock);
			locked = true;
			st = ntb_peer_tx_sync(p);
			if (st == NTB_TX_WAIT) {
				/* our block is being opened: the rest waits for it */
				ctx->want_sweep = true;
				break;
			}
			if (st == NTB_TX_GONE || p->tx_epoch != qp->peer_epoch) {
				gone = true;
				continue;
			}
		}
		w->ring = 1;
		sent0 = w->sent;
		switch (w->opcode) {
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM:
		case IBV_WR_SEND_WITH_INV:
			ok = emit_data(qp, p, w, NTBV_OP_SEND);
			break;
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			ok = emit_data(qp, p, w, NTBV_OP_WRITE);
			break;
		default:
			ok = emit_one(qp, p, w);
			break;
		}
		sent_any = true;
		if (ok || w->sent != sent0)
			NTB_TRACE(NTB_TR_TX, qp->qpn, w->psn, qp->sq_tx,
				  w->sent | (uint64_t)ok << 32, p->req_tx.prod);
		if (!ok) {
			ctx->want_sweep = true;	/* the ring is full: the rest waits for credits */
			break;
		}
		w->ring_end = p->req_tx.prod;
		qp->ring_last = p->req_tx.prod;
		if (rc) {
			w->state = NTB_SWQE_SENT;
			qp->inflight++;
			if (is_rd_atomic(w->opcode))
				qp->rd_atomic++;
			if (!qp->deadline && ib_ack_timeout_ns(qp->timeout)) {
				qp->deadline = ntb_now() + ib_ack_timeout_ns(qp->timeout);
				ntb_timer(qp->ctx, qp->deadline);
			}
		} else {
			finish(qp, w, IBV_WC_SUCCESS);
		}
		qp->sq_tx++;
	}
	if (locked) {
		if (sent_any && !gone)
			ntb_tx_publish(p, NTBV_QUIET_REQ);
		pthread_mutex_unlock(&p->tx_lock);
	}
}

/* ---- UD --------------------------------------------------------------------------------------- */

/* Is gid one of an end's addresses (zero: a datagram without GRH follows the QP number)? */
static bool gid_of(struct ntb_context *ctx, unsigned int endi, const uint8_t *gid)
{
	static const uint8_t zero[16];
	const struct ntb_end *end = &ctx->ends[endi];

	if (!memcmp(gid, zero, 16))
		return true;
	if (endi == NTB_END_PEER)
		return !memcmp(gid, end->gid, 16) || !memcmp(gid, end->gid_ll, 16);
	return ntb_gid_is_own(ctx, gid);
}

/*
 * Where a datagram goes: the client owning the destination QP, on the end its GID names (this
 * end: the loopback). NULL: dropped, as a fabric drops a datagram for a QP that is not there.
 */
static struct ntb_peer *ud_route(struct ntb_qp *qp, struct ntb_swqe *w)
{
	struct ntb_context *ctx = qp->ctx;
	struct ntbv_qp_ent e;
	unsigned int endi;
	struct ntb_peer *p;

	if (!ntb_qp_entry(ctx, w->remote_qpn, &endi, &e) || !gid_of(ctx, endi, w->ud_gid) ||
	    e.type != IBV_QPT_UD)
		return NULL;
	p = ntb_peer_get(ctx, endi, e.slot);
	return p && ntb_slot_epoch(p) == e.slot_epoch ? p : NULL;
}

void ntb_ud_open(struct ntb_qp *qp, const struct ibv_send_wr *wr)
{
	struct ntb_swqe w;
	struct ntb_peer *p;
	uint32_t e;

	for (; wr; wr = wr->next) {
		const struct ntb_ah *ah = (const struct ntb_ah *)wr->wr.ud.ah;

		if (!ah)
			continue;
		w.remote_qpn = wr->wr.ud.remote_qpn & 0xffffff;
		memcpy(w.ud_gid, ah->attr.grh.dgid.raw, 16);
		p = ud_route(qp, &w);
		if (!p)
			continue;
		e = ntb_slot_epoch(p);
		/* hints without tx_lock: ntb_pair_open looks again under it */
		if ((!p->tx_hdr || p->tx_epoch != e) && p->open_failed != e)
			ntb_pair_open(p, e);
	}
}

static void tx_ud(struct ntb_qp *qp)
{
	struct ntb_context *ctx = qp->ctx;

	while (qp->sq_tx != qp->sq_head && qp_state(qp) == IBV_QPS_RTS) {
		struct ntb_swqe *w = &qp->sq[qp->sq_tx & (qp->sq_size - 1)];
		struct ntbv_msg h = { 0 }, *m;
		struct ntb_peer *p;
		enum ibv_wc_status st = IBV_WC_SUCCESS;
		uint32_t ncells;

		if (w->state == NTB_SWQE_DONE) {
			qp->sq_tx++;
			continue;
		}
		if (!(w->send_flags & IBV_SEND_INLINE))
			st = ntb_check_sges(ctx, qp->pd, w->sg, w->num_sge, 0, &qp->lkc);
		if (st != IBV_WC_SUCCESS) {
			local_error(qp, w, st);
			break;
		}
		if (w->length > ctx->mtu) {
			/* a datagram is one packet: at most the path MTU */
			finish(qp, w, IBV_WC_LOC_LEN_ERR);
			qp->sq_tx++;
			continue;
		}
		p = ud_route(qp, w);
		if (!p) {
			finish(qp, w, IBV_WC_SUCCESS);	/* unreachable: dropped silently */
			qp->sq_tx++;
			continue;
		}
		pthread_mutex_lock(&p->tx_lock);
		switch (ntb_peer_tx_sync(p)) {
		case NTB_TX_WAIT:
			/* the first datagram for it: our block is being opened */
			pthread_mutex_unlock(&p->tx_lock);
			ctx->want_sweep = true;
			return;
		case NTB_TX_GONE:
			pthread_mutex_unlock(&p->tx_lock);
			/* no room for a block (ntbd said so, once): the datagram cannot go */
			finish(qp, w, p->open_failed == ntb_slot_epoch(p) ? IBV_WC_GENERAL_ERR :
									    IBV_WC_SUCCESS);
			qp->sq_tx++;
			continue;
		default:
			break;
		}
		ncells = ntbv_msg_cells(w->length);
		if (w->length > p->req_tx.max_payload) {
			/* more than the reader's ring takes in one message: never deliverable */
			pthread_mutex_unlock(&p->tx_lock);
			finish(qp, w, IBV_WC_LOC_LEN_ERR);
			qp->sq_tx++;
			continue;
		}
		m = ntb_tx_reserve(p, &p->req_tx, ncells);
		if (!m) {
			/* a lossless link pushes back: wait for credits */
			pthread_mutex_unlock(&p->tx_lock);
			ctx->want_sweep = true;
			break;
		}
		h.op = NTBV_OP_SEND;
		h.flags = NTBV_F_FIRST | NTBV_F_LAST | NTBV_F_UD;
		if (w->opcode == IBV_WR_SEND_WITH_IMM)
			h.flags |= NTBV_F_IMM;
		if (w->send_flags & IBV_SEND_SOLICITED)
			h.flags |= NTBV_F_SOLICITED;
		h.ncells = ncells;
		h.dst_qpn = w->remote_qpn;
		h.src_qpn = qp->qpn;
		h.psn = qp->next_psn;
		h.len = w->length;
		h.total = w->length;
		h.imm = w->imm;
		h.rkey = w->remote_qkey;
		ntb_sg_copy_out((uint8_t *)m + NTBV_CELL, w->sg, w->num_sge, 0, w->length);
		memcpy(m, &h, sizeof(h));
		ntb_tx_commit(&p->req_tx, ncells);
		ntb_tx_publish(p, NTBV_QUIET_REQ);
		pthread_mutex_unlock(&p->tx_lock);
		qp->next_psn = ib_psn_add(qp->next_psn, 1);
		finish(qp, w, IBV_WC_SUCCESS);
		qp->sq_tx++;
	}
}

void ntb_qp_tx(struct ntb_qp *qp)
{
	if (qp->sq_tx == qp->sq_head || qp_state(qp) != IBV_QPS_RTS)
		return;
	if (!ntb_link_alive(qp->ctx)) {
		/* nothing placed or sent from here on reaches anyone: fail, never pretend */
		ntb_qp_unreachable(qp);
		ntb_progress_poke(qp->ctx);	/* the other QPs, the receive side */
		return;
	}
	if (qp->rnr_until) {
		if (ntb_now() < qp->rnr_until)
			return;
		qp->rnr_until = 0;
	}
	if (qp->type == IBV_QPT_UD)
		tx_ud(qp);
	else
		tx_connected(qp);
}

/* ---- retransmission --------------------------------------------------------------------------- */

/* Go back to WQE index i: it and everything after it that was transmitted is sent again. */
void ntb_qp_rewind(struct ntb_qp *qp, uint32_t i)
{
	uint32_t first = i, end = qp->sq_tx != qp->sq_head ? qp->sq_tx + 1 : qp->sq_tx;

	/* up to and including a WQE whose first segments are out */
	for (; i != end; i++) {
		struct ntb_swqe *w = &qp->sq[i & (qp->sq_size - 1)];

		if (w->state == NTB_SWQE_DONE)
			continue;
		if (w->state == NTB_SWQE_SENT) {
			qp->inflight--;
			if (is_rd_atomic(w->opcode))
				qp->rd_atomic--;
		} else if (w->sent && is_rd_atomic(w->opcode)) {
			qp->rd_atomic--;
		}
		w->state = NTB_SWQE_POSTED;
		w->sent = 0;
		w->got = 0;
	}
	qp->next_psn = qp->sq[first & (qp->sq_size - 1)].psn;
	NTB_TRACE(NTB_TR_REWIND, qp->qpn, qp->next_psn, first, qp->sq_tx, qp->retry_wait);
	qp->sq_tx = first;
}

bool ntb_qp_timers(struct ntb_qp *qp, uint64_t now)
{
	struct ntb_swqe *w = NULL;
	uint32_t i;

	if (qp->type != IBV_QPT_RC || qp_state(qp) != IBV_QPS_RTS)
		return false;
	if (qp->rnr_until && now >= qp->rnr_until) {
		qp->rnr_until = 0;
		return true;	/* ntb_qp_tx retransmits */
	}
	if (!qp->deadline || now < qp->deadline)
		return false;
	for (i = qp->sq_tail; i != qp->sq_tx; i++) {
		w = &qp->sq[i & (qp->sq_size - 1)];
		if (w->state == NTB_SWQE_SENT)
			break;
		w = NULL;
	}
	if (!w) {
		qp->deadline = 0;
		return false;
	}
	/*
	 * Lossless link: a request the responder has not consumed yet is merely queued (a slow
	 * or sleeping peer), not lost. Only one it took without answering counts as a retry.
	 */
	if (qp->peer && ntb_slot_epoch(qp->peer) == qp->peer_epoch &&
	    atomic_load_explicit(qp->peer->req_tx.cons, memory_order_acquire) < w->ring_end) {
		NTB_TRACE(NTB_TR_TMO_QUEUED, qp->qpn, w->psn, i,
			  atomic_load_explicit(qp->peer->req_tx.cons, memory_order_acquire),
			  w->ring_end);
		qp->deadline = now + ib_ack_timeout_ns(qp->timeout);
		ntb_timer(qp->ctx, qp->deadline);
		return false;
	}
	/*
	 * Nor is one whose answer may wait in our response ring: the responder publishes its
	 * answers before its credits, but the completer may have looked at the ring just
	 * before they came, or another thread holds it (the completer runs before the timers
	 * in an engine pass, with a trylock). The retry waits until the completer has read
	 * what the ring held at the first expiry: if the answer was not there, it counts.
	 * Hints read without the peer's rx_lock; the block they name stays mapped.
	 */
	if (qp->peer) {
		const _Atomic uint64_t *rp = __atomic_load_n(&qp->peer->resp_rx.prod,
							     __ATOMIC_ACQUIRE);
		uint64_t cons = __atomic_load_n(&qp->peer->resp_rx.cons, __ATOMIC_RELAXED);
		uint64_t prod = rp ? atomic_load_explicit(rp, memory_order_acquire) : cons;

		if (!qp->retry_wait && prod != cons)
			qp->retry_wait = prod;
		if (qp->retry_wait && (int64_t)(cons - qp->retry_wait) < 0) {
			NTB_TRACE(NTB_TR_TMO_RESP, qp->qpn, w->psn, i, cons, qp->retry_wait);
			qp->deadline = now + ib_ack_timeout_ns(qp->timeout);
			ntb_timer(qp->ctx, qp->deadline);
			return false;
		}
		qp->retry_wait = 0;
	}
	NTB_TRACE(qp->retry_left ? NTB_TR_TMO_RETRY : NTB_TR_TMO_EXC, qp->qpn, w->psn,
		  qp->retry_left, qp->peer ? __atomic_load_n(&qp->peer->resp_rx.cons,
							   __ATOMIC_RELAXED) : 0,
		  qp->peer ? atomic_load(qp->peer->req_tx.cons) : 0);
	if (!qp->retry_left) {
		ntb_trace_dump("retry exceeded");
		finish(qp, w, IBV_WC_RETRY_EXC_ERR);
		qp->inflight--;
		ntb_qp_to_error(qp, true);
		return true;
	}
	qp->retry_left--;
	ntb_qp_rewind(qp, i);
	qp->deadline = now + ib_ack_timeout_ns(qp->timeout);
	ntb_timer(qp->ctx, qp->deadline);
	return true;
}
