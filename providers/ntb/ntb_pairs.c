// SPDX-License-Identifier: MIT
/*
 * Finding and opening the blocks of our pairs (kernel-abi/ntb_verbs_wire.h "Pairs").
 *
 * The block we write for a client of either end is ours to ask for: the first time we write to
 * it (modify_qp to RTR for a connected QP, the first datagram for it, the first answer or
 * credit it needs) we ask ntbd (NTB_OP_OPEN_PAIR), which allocates it in the reader's memory.
 * That is a call into the daemon, so it happens in modify_qp or in the progress thread, never
 * in poll_cq: a writer that finds no block asks the progress thread (ntb_pair_want) and waits
 * as it would for credits.
 *
 * The blocks written for us appear in our two directories (our window's, the loopback
 * memory's); a changed generation word says which rows to read again (ntb_pairs_scan, from
 * the engine).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ntb.h"

static void activate(struct ntb_context *ctx, struct ntb_peer *p)
{
	unsigned int n;

	if (p->active)
		return;
	/* under open_lock: one writer of the list; readers see a whole entry, then the count */
	n = atomic_load_explicit(&ctx->nactive, memory_order_relaxed);
	ctx->active[n] = p;
	p->active = true;
	atomic_store_explicit(&ctx->nactive, n + 1, memory_order_release);
}

int ntb_pair_open(struct ntb_peer *p, uint32_t epoch)
{
	struct ntb_context *ctx = p->ctx;
	struct ntb_open_pair_req req = { .end = p->endi, .slot = p->slot, .epoch = epoch };
	struct ntb_open_pair_rsp rsp;
	int fd = -1;
	struct bv_call call = { .op = NTB_OP_OPEN_PAIR, .req = &req, .req_len = sizeof(req),
				.rsp = &rsp, .rsp_max = sizeof(rsp), .rfds = &fd, .nrfds = 1 };
	int ret;

	pthread_mutex_lock(&ctx->open_lock);
	pthread_mutex_lock(&p->tx_lock);
	ret = p->tx_hdr && p->tx_epoch == epoch ? 0 : -1;
	pthread_mutex_unlock(&p->tx_lock);
	if (!ret)
		goto out;
	ret = bv_call(&ctx->bv, &call);
	if (!ret && (call.rsp_len != sizeof(rsp) || rsp.r_epoch != epoch ||
		     rsp.w_epoch != ctx->slot_epoch ||
		     (p->endi == NTB_END_LOCAL) != (call.nrfds == 1)))
		ret = EPROTO;
	if (ret) {
		if (fd >= 0)
			close(fd);
		if (ret == ENOSPC) {
			/* the reader's pool is full: what waits for this block fails */
			p->open_failed = epoch;
			fprintf(stderr, "bridgeverbs: %s: no room for a pair block towards %s "
				"slot %u\n", ctx->bv.vctx.context.device->name,
				p->endi == NTB_END_LOCAL ? "this end's" : "the peer's", p->slot);
		}
		goto out;
	}
	pthread_mutex_lock(&p->rx_lock);
	pthread_mutex_lock(&p->tx_lock);
	ntb_peer_tx_bind(p, &rsp, fd);
	pthread_mutex_unlock(&p->tx_lock);
	/*
	 * What we consumed of its block before ours was there: the credits go out now (it may
	 * wait for nothing else, and we may have nothing else to consume).
	 */
	ntb_rx_publish(p);
	pthread_mutex_unlock(&p->rx_lock);
	activate(ctx, p);
out:
	pthread_mutex_unlock(&ctx->open_lock);
	/* what waited for the block (or for its failure) goes now */
	ctx->want_sweep = true;
	ntb_progress_poke(ctx);
	return ret;
}

void ntb_pair_want(struct ntb_peer *p, uint32_t epoch)
{
	struct ntb_context *ctx = p->ctx;

	if (atomic_exchange_explicit(&p->want_open, epoch, memory_order_acq_rel) == epoch)
		return;
	atomic_store(&ctx->want_open, 1);
	/* Dekker with block(): our flag, then its sleeping state */
	atomic_thread_fence(memory_order_seq_cst);
	ntb_progress_poke(ctx);
}

void ntb_pairs_open_pending(struct ntb_context *ctx)
{
	if (!atomic_exchange_explicit(&ctx->want_open, 0, memory_order_acq_rel))
		return;
	for (unsigned int e = 0; e < 2; e++) {
		for (unsigned int i = 0; i < ctx->ends[e].max_slots; i++) {
			struct ntb_peer *p = &ctx->peers[e][i];
			uint32_t epoch = atomic_exchange_explicit(&p->want_open, 0,
								  memory_order_acq_rel);

			/* ESTALE: that incarnation left meanwhile; the next one asks anew */
			if (epoch && ntb_slot_epoch(p) == epoch)
				ntb_pair_open(p, epoch);
		}
	}
}

/* One end's directory row: bind what is new. False if a peer was busy (look again). */
static bool scan_end(struct ntb_context *ctx, unsigned int endi)
{
	struct ntb_end *end = &ctx->ends[endi];
	bool done = true;

	for (unsigned int w = 0; w < end->max_slots; w++) {
		struct ntb_peer *p = &ctx->peers[endi][w];
		uint32_t seq = atomic_load_explicit(&end->dir[w].seq, memory_order_acquire);

		if (seq == p->rx_seq)
			continue;
		if (pthread_mutex_trylock(&p->rx_lock)) {
			done = false;
			continue;
		}
		ntb_peer_rx_bind(p);
		pthread_mutex_unlock(&p->rx_lock);
		if (p->rx_hdr)
			activate(ctx, p);
	}
	return done;
}

bool ntb_pairs_scan(struct ntb_context *ctx)
{
	bool moved = false;

	if (pthread_mutex_trylock(&ctx->open_lock))
		return false;
	for (unsigned int e = 0; e < 2; e++) {
		struct ntb_end *end = &ctx->ends[e];
		uint64_t g = atomic_load_explicit(end->dgen, memory_order_acquire);

		if (g == end->dgen_seen)
			continue;
		/* the generation first: a change during the scan makes us look again */
		if (scan_end(ctx, e))
			end->dgen_seen = g;
		moved = true;
	}
	pthread_mutex_unlock(&ctx->open_lock);
	return moved;
}

bool ntb_qp_entry(struct ntb_context *ctx, uint32_t qpn, unsigned int *endi,
		  struct ntbv_qp_ent *e)
{
	unsigned int ei = ((qpn & NTBV_QPN_SIDE) != 0) == (ctx->side != 0) ? NTB_END_LOCAL :
									       NTB_END_PEER;
	struct ntb_end *end = &ctx->ends[ei];

	if (!ctx->attached || !end->up || NTBV_QPN_INDEX(qpn) >= end->max_qp)
		return false;
	ntb_read_entry(e, &end->qps[NTBV_QPN_INDEX(qpn)], sizeof(*e));
	if (e->qpn != qpn || e->slot >= end->max_slots)
		return false;
	*endi = ei;
	return true;
}
