// SPDX-License-Identifier: MIT
/*
 * Pair channels: the four rings between this client and one client slot of the peer end
 * (kernel-abi/ntb_verbs_wire.h). Producing is a PIO copy into the peer's window plus one
 * store of the producer index; consuming reads our own window and pushes the consumer index
 * back. Nothing here loads from the peer's window: our view of every index the peer owns is
 * what it stored into ours.
 *
 * Everything the peer wrote is untrusted input: an index or a message that does not make
 * sense ends the exchange with that incarnation of the peer (its slot epoch), never a crash.
 */
#include <string.h>

#include "ntb.h"

static void ring_setup(struct ntb_context *ctx, struct ntb_peer *p)
{
	const typeof(ctx->pg) *h = &ctx->pg;
	uint8_t *rx = (uint8_t *)ctx->slice +
		      ntbv_pair_off(ctx->ring_cells, ctx->resp_cells, p->slot);
	uint8_t *pslice = ctx->peer + h->slices_off + (uint64_t)p->slot * h->slice_len;
	uint8_t *tx = pslice + ntbv_pair_off(h->ring_cells, h->resp_cells, ctx->slot);

	p->rx_hdr = (struct ntbv_pair_hdr *)rx;
	p->tx_hdr = (struct ntbv_pair_hdr *)tx;
	p->tx_slice = (struct ntbv_slice_hdr *)pslice;

	p->req_rx = (struct ntb_rxring){
		.cells = rx + NTBV_PAIR_REQ_RING_OFF, .ncells = ctx->ring_cells,
		.prod = &p->rx_hdr->req_prod, .cons_pub = &p->tx_hdr->req_cons };
	p->resp_rx = (struct ntb_rxring){
		.cells = rx + ntbv_pair_resp_ring_off(ctx->ring_cells), .ncells = ctx->resp_cells,
		.prod = &p->rx_hdr->resp_prod, .cons_pub = &p->tx_hdr->resp_cons };
	p->req_tx = (struct ntb_txring){
		.cells = tx + NTBV_PAIR_REQ_RING_OFF, .ncells = h->ring_cells,
		.prod_pub = &p->tx_hdr->req_prod, .cons = &p->rx_hdr->req_cons };
	p->resp_tx = (struct ntb_txring){
		.cells = tx + ntbv_pair_resp_ring_off(h->ring_cells), .ncells = h->resp_cells,
		.prod_pub = &p->tx_hdr->resp_prod, .cons = &p->rx_hdr->resp_cons };
}

void ntb_chan_setup(struct ntb_context *ctx)
{
	for (unsigned int i = 0; i < NTBV_MAX_SLOTS; i++) {
		struct ntb_peer *p = &ctx->peers[i];

		memset(p, 0, sizeof(*p));
		p->ctx = ctx;
		p->slot = i;
		pthread_mutex_init(&p->rx_lock, NULL);
		pthread_mutex_init(&p->tx_lock, NULL);
		if (i < ctx->pg.max_slots)
			ring_setup(ctx, p);
	}
}

uint32_t ntb_slot_epoch(struct ntb_context *ctx, unsigned int slot)
{
	return atomic_load_explicit(&ctx->pslots[slot].epoch, memory_order_acquire);
}

/*
 * A new incarnation of the slot: both pair blocks start from zero (its ntbd cleared ours when
 * the previous one died, and gave it a fresh slice). The producing and the consuming half are
 * resynchronised separately, each under its own lock, by whoever uses it first.
 */
bool ntb_peer_tx_sync(struct ntb_peer *p)
{
	uint32_t e = ntb_slot_epoch(p->ctx, p->slot);

	if (!(e & 1))
		return false;
	if (e != p->tx_epoch) {
		uint32_t bit = p->ctx->pslots[p->slot].db_bit;

		p->req_tx.prod = p->req_tx.published = 0;
		p->resp_tx.prod = p->resp_tx.published = 0;
		p->bell_wish = 0;
		p->want_credit = false;
		p->db_bits = bit < 64 ? 1ull << bit : 0;
		p->tx_epoch = e;
	}
	return true;
}

bool ntb_peer_rx_sync(struct ntb_peer *p)
{
	uint32_t e = ntb_slot_epoch(p->ctx, p->slot);

	/*
	 * The client we read from just went away: what it sent before is still ours to read
	 * (its ntbd clears the rings only when the slot gets a new client, a new epoch).
	 */
	if (!(e & 1))
		return p->rx_epoch && e == p->rx_epoch + 1 && !p->garbage;
	if (e != p->rx_epoch) {
		p->req_rx.cons = p->req_rx.published = 0;
		p->resp_rx.cons = p->resp_rx.published = 0;
		p->rx_epoch = e;
		p->garbage = false;
	}
	return !p->garbage;
}

struct ntb_peer *ntb_peer_get(struct ntb_context *ctx, unsigned int slot)
{
	if (!ctx->attached || slot >= ctx->pg.max_slots ||
	    !(ntb_slot_epoch(ctx, slot) & 1))
		return NULL;
	return &ctx->peers[slot];
}

/* ---- producing ----------------------------------------------------------------------------- */

/*
 * A writer found a ring full. The reader will ring us when it consumes (WANT_CREDIT) once our
 * progress thread asks it to, which it does before it blocks; if it is blocked already (with an
 * older wish) it must ask now, or the rest of the message waits for ever.
 */
static void want_credit(struct ntb_peer *p)
{
	struct ntb_context *ctx = p->ctx;

	p->want_credit = true;
	/* Dekker with block(): our flag, then its state; it stores its state, then reads ours */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&ctx->wake_at, memory_order_relaxed) == UINT64_MAX)
		ntb_progress_poke(ctx);
}

bool ntb_tx_room(struct ntb_peer *p, struct ntb_txring *r, uint32_t ncells)
{
	uint64_t used = r->prod - atomic_load_explicit(r->cons, memory_order_acquire);
	uint32_t pos = r->prod & (r->ncells - 1), pad = 0;

	if (pos + ncells > r->ncells)
		pad = r->ncells - pos;
	if (used > r->ncells || used + pad + ncells > r->ncells) {
		want_credit(p);
		return false;
	}
	return true;
}

struct ntbv_msg *ntb_tx_reserve(struct ntb_peer *p, struct ntb_txring *r, uint32_t ncells)
{
	uint64_t cons = atomic_load_explicit(r->cons, memory_order_acquire);
	uint64_t used = r->prod - cons;
	uint32_t pos = r->prod & (r->ncells - 1), pad = 0;
	struct ntbv_msg *m;

	if (used > r->ncells || ncells > r->ncells / 2) {
		/* the peer's credit makes no sense: treat the ring as full until it resets */
		want_credit(p);
		return NULL;
	}
	if (pos + ncells > r->ncells)
		pad = r->ncells - pos;
	if (used + pad + ncells > r->ncells) {
		want_credit(p);
		return NULL;
	}
	if (pad) {
		struct ntbv_msg h = { .op = NTBV_OP_PAD, .ncells = pad };

		memcpy(r->cells + (uint64_t)pos * NTBV_CELL, &h, sizeof(h));
		r->prod += pad;
		pos = 0;
	}
	m = (struct ntbv_msg *)(r->cells + (uint64_t)pos * NTBV_CELL);
	return m;
}

void ntb_tx_commit(struct ntb_txring *r, uint32_t ncells)
{
	r->prod += ncells;
}

static void ring_peer(struct ntb_peer *p)
{
	/* vbell first, then the doorbell: the reader clears vbell before it looks */
	atomic_store_explicit(&p->tx_slice->vbell, 1, memory_order_relaxed);
	ntb_pio_wmb();
	if (p->db_bits)
		ntb_peer_db_set(p->ctx->hal, p->db_bits);
}

void ntb_tx_publish(struct ntb_peer *p, uint32_t quiet_kind)
{
	bool moved = false;
	uint32_t bell;

	if (p->req_tx.prod != p->req_tx.published) {
		atomic_store_explicit(p->req_tx.prod_pub, p->req_tx.prod, memory_order_release);
		p->req_tx.published = p->req_tx.prod;
		moved |= quiet_kind == NTBV_QUIET_REQ;
	}
	if (p->resp_tx.prod != p->resp_tx.published) {
		atomic_store_explicit(p->resp_tx.prod_pub, p->resp_tx.prod, memory_order_release);
		p->resp_tx.published = p->resp_tx.prod;
		moved |= quiet_kind == NTBV_QUIET_RESP;
	}
	if (!moved)
		return;
	/* Dekker with the reader going to sleep: our index store, then its flag */
	atomic_thread_fence(memory_order_seq_cst);
	bell = atomic_load_explicit(&p->rx_hdr->bell, memory_order_relaxed);
	if (!(bell & quiet_kind))
		ring_peer(p);
}

/* ---- consuming ----------------------------------------------------------------------------- */

bool ntb_rx_peek(struct ntb_peer *p, struct ntb_rxring *r, struct ntbv_msg *h,
		 const uint8_t **payload)
{
	uint64_t prod = atomic_load_explicit(r->prod, memory_order_acquire);
	uint32_t pos;

	if (prod == r->cons)
		return false;
	pos = r->cons & (r->ncells - 1);
	/* one snapshot of the header, checked and then used: the peer could rewrite it */
	memcpy(h, r->cells + (uint64_t)pos * NTBV_CELL, sizeof(*h));
	if (prod - r->cons > r->ncells || !h->ncells || pos + h->ncells > r->ncells ||
	    h->ncells > prod - r->cons || h->len > (uint32_t)(h->ncells - 1) * NTBV_CELL) {
		/* garbage from the peer (or its slot being torn down): stop listening to it */
		p->garbage = true;
		return false;
	}
	*payload = r->cells + (uint64_t)pos * NTBV_CELL + NTBV_CELL;
	return true;
}

void ntb_rx_advance(struct ntb_rxring *r, const struct ntbv_msg *h)
{
	r->cons += h->ncells;
}

void ntb_rx_publish(struct ntb_peer *p)
{
	bool moved = false;

	if (p->req_rx.cons != p->req_rx.published) {
		atomic_store_explicit(p->req_rx.cons_pub, p->req_rx.cons, memory_order_release);
		p->req_rx.published = p->req_rx.cons;
		moved = true;
	}
	if (p->resp_rx.cons != p->resp_rx.published) {
		atomic_store_explicit(p->resp_rx.cons_pub, p->resp_rx.cons, memory_order_release);
		p->resp_rx.published = p->resp_rx.cons;
		moved = true;
	}
	if (!moved)
		return;
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&p->rx_hdr->bell, memory_order_relaxed) & NTBV_WANT_CREDIT)
		ring_peer(p);
}

bool ntb_rx_pending(struct ntb_peer *p)
{
	return atomic_load_explicit(p->req_rx.prod, memory_order_acquire) != p->req_rx.cons ||
	       atomic_load_explicit(p->resp_rx.prod, memory_order_acquire) != p->resp_rx.cons;
}

/* ---- bells ----------------------------------------------------------------------------------- */

bool ntb_bells_stale(struct ntb_context *ctx)
{
	for (unsigned int i = 0; i < ctx->pg.max_slots; i++) {
		struct ntb_peer *p = &ctx->peers[i];

		if (p->want_credit && !(p->bell_wish & NTBV_WANT_CREDIT))
			return true;
	}
	return false;
}

void ntb_bells_arm(struct ntb_context *ctx, bool arm)
{
	for (unsigned int i = 0; i < ctx->pg.max_slots; i++) {
		struct ntb_peer *p = &ctx->peers[i];
		uint32_t wish;

		uint32_t e = ntb_slot_epoch(ctx, i);

		if (!(e & 1))
			continue;
		/* nothing waits for room any more: stop asking for credit bells */
		if (!ctx->want_sweep && !p->resp_stalled)
			p->want_credit = false;
		wish = arm ? (p->want_credit ? NTBV_WANT_CREDIT : 0) :
			     NTBV_QUIET_REQ | NTBV_QUIET_RESP;
		if (wish == p->bell_wish && p->bell_epoch == e)
			continue;
		p->bell_epoch = e;
		atomic_store_explicit(&p->tx_hdr->bell, wish, memory_order_relaxed);
		p->bell_wish = wish;
	}
	atomic_thread_fence(memory_order_seq_cst);
}
