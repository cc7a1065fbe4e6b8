// SPDX-License-Identifier: MIT
/*
 * Pair channels: the four rings between this client and one client slot of either end
 * (kernel-abi/ntb_verbs_wire.h "Pairs"): two in the block it writes for us (in our window, or
 * in the loopback memory), two in the block we write for it (in its window, or the loopback
 * memory). Producing is a copy into the reader's block plus one store of the producer index;
 * consuming reads our own memory and pushes the consumer index back. Nothing here loads from
 * the peer's window: our view of every index another client owns is what it stored into ours.
 *
 * The two blocks of a pair come and go separately: ours when ntbd answers NTB_OP_OPEN_PAIR
 * (ntb_pairs.c), its when its ntbd publishes it in our directory. Until both are there, what
 * needs the missing one waits (credits read as zero, bells ring for everything).
 *
 * Everything another client wrote is untrusted input: an index or a message that does not
 * make sense ends the exchange with that block, never a crash.
 */
#include <string.h>
#include <unistd.h>

#include "ntb.h"

/* What a ring reads for credits while the other block does not exist yet: nothing consumed. */
static const _Atomic uint64_t no_credit;

void ntb_chan_setup(struct ntb_context *ctx)
{
	for (unsigned int e = 0; e < 2; e++) {
		for (unsigned int i = 0; i < NTBV_MAX_SLOTS; i++) {
			struct ntb_peer *p = &ctx->peers[e][i];

			memset(p, 0, sizeof(*p));
			p->ctx = ctx;
			p->end = &ctx->ends[e];
			p->endi = (uint8_t)e;
			p->slot = (uint8_t)i;
			p->bell_fd = -1;
			p->req_tx.cons = p->resp_tx.cons = &no_credit;
			pthread_mutex_init(&p->rx_lock, NULL);
			pthread_mutex_init(&p->tx_lock, NULL);
		}
	}
}

uint32_t ntb_slot_epoch(const struct ntb_peer *p)
{
	return atomic_load_explicit(&p->end->slots[p->slot].epoch, memory_order_acquire);
}

struct ntb_peer *ntb_peer_get(struct ntb_context *ctx, unsigned int endi, unsigned int slot)
{
	struct ntb_end *e;

	if (!ctx->attached || endi > NTB_END_LOCAL)
		return NULL;
	e = &ctx->ends[endi];
	if (!e->up || slot >= e->max_slots ||
	    !(atomic_load_explicit(&e->slots[slot].epoch, memory_order_acquire) & 1))
		return NULL;
	return &ctx->peers[endi][slot];
}

/* A copy of our directory entry for p's block under its sequence count (seq 0: none). */
static uint32_t dir_entry(struct ntb_peer *p, struct ntbv_pair_ent *e)
{
	ntb_read_entry(e, &p->end->dir[p->slot], sizeof(*e));
	return e->seq;
}

/*
 * The two blocks of one incarnation of the pair hold each other's credits: its block the
 * credits for our rings, ours for its rings. Until both are there (and of one incarnation),
 * our rings see nothing consumed and our consumption waits to be published. rx_lock and
 * tx_lock held.
 */
static void link_credits(struct ntb_peer *p)
{
	bool both = p->rx_hdr && p->tx_hdr && p->rx_epoch == p->tx_epoch;

	p->req_tx.cons = both ? &p->rx_hdr->req_cons : &no_credit;
	p->resp_tx.cons = both ? &p->rx_hdr->resp_cons : &no_credit;
	p->req_rx.cons_pub = both ? &p->tx_hdr->req_cons : NULL;
	p->resp_rx.cons_pub = both ? &p->tx_hdr->resp_cons : NULL;
	/* what we consumed before our block was there goes out with the next publish */
	p->req_rx.published = p->req_rx.cons - 1;
	p->resp_rx.published = p->resp_rx.cons - 1;
}

/* rx_lock held */
static void rx_unbind(struct ntb_peer *p)
{
	p->rx_hdr = NULL;
	p->rx_epoch = 0;
	p->garbage = false;
	p->req_rx = (struct ntb_rxring){ 0 };
	p->resp_rx = (struct ntb_rxring){ 0 };
	pthread_mutex_lock(&p->tx_lock);
	link_credits(p);
	pthread_mutex_unlock(&p->tx_lock);
}

static bool cells_ok(uint32_t n)
{
	return n >= 4 && n <= (1u << 20) && !(n & (n - 1));
}

void ntb_peer_rx_bind(struct ntb_peer *p)
{
	struct ntb_context *ctx = p->ctx;
	struct ntb_end *end = p->end;
	struct ntbv_pair_ent e;
	uint32_t seq = dir_entry(p, &e);
	uint8_t *b;

	if (seq == p->rx_seq && p->rx_hdr)
		return;
	rx_unbind(p);
	p->rx_seq = seq;
	/* ours to read only if it is in our pool, for this incarnation of us, and whole */
	if (!seq || !e.off || !(e.w_epoch & 1) || e.r_epoch != ctx->slot_epoch ||
	    !cells_ok(e.req_cells) || !cells_ok(e.resp_cells) || e.off % NTBV_PAGE ||
	    e.off < end->pool_off || e.off - end->pool_off > end->pool_len ||
	    ntbv_block_len(e.req_cells, e.resp_cells) > end->pool_len - (e.off - end->pool_off))
		return;
	b = end->rx_mem + e.off;
	p->rx_hdr = (struct ntbv_pair_hdr *)b;
	p->rx_epoch = e.w_epoch;
	p->req_rx.cells = b + NTBV_BLOCK_REQ_OFF;
	p->req_rx.ncells = e.req_cells;
	p->req_rx.prod = &p->rx_hdr->req_prod;
	p->resp_rx.cells = b + ntbv_block_resp_off(e.req_cells);
	p->resp_rx.ncells = e.resp_cells;
	p->resp_rx.prod = &p->rx_hdr->resp_prod;
	/* its credit returns for our rings, and its bell wishes, are in its block */
	pthread_mutex_lock(&p->tx_lock);
	link_credits(p);
	pthread_mutex_unlock(&p->tx_lock);
	/* it writes to us: we need our block for it too (credits, answers) */
	if (!p->tx_hdr || p->tx_epoch != e.w_epoch)
		ntb_pair_want(p, e.w_epoch);
}

bool ntb_peer_rx_sync(struct ntb_peer *p)
{
	uint32_t e = ntb_slot_epoch(p);

	/* a new block (or its entry cleared): look again */
	if (atomic_load_explicit(&p->end->dir[p->slot].seq, memory_order_acquire) != p->rx_seq)
		ntb_peer_rx_bind(p);
	if (!p->rx_hdr || p->garbage)
		return false;
	/*
	 * The client we read from just went away: what it sent before is still ours to read,
	 * while its directory entry stands (its ntbd retires the block after a grace).
	 */
	return e == p->rx_epoch || e == p->rx_epoch + 1;
}

void ntb_peer_tx_bind(struct ntb_peer *p, const struct ntb_open_pair_rsp *rsp, int bell_fd)
{
	struct ntb_end *end = p->end;
	uint8_t *b;

	if (p->bell_fd >= 0 && p->bell_fd != bell_fd)
		close(p->bell_fd);
	p->bell_fd = bell_fd;
	if (!cells_ok(rsp->req_cells) || !cells_ok(rsp->resp_cells) || rsp->off % NTBV_PAGE ||
	    rsp->off > end->tx_len ||
	    ntbv_block_len(rsp->req_cells, rsp->resp_cells) > end->tx_len - rsp->off)
		return;		/* cannot be: ntbd checked the reader's layout */
	b = end->tx_mem + rsp->off;
	p->tx_hdr = (struct ntbv_pair_hdr *)b;
	p->tx_epoch = rsp->r_epoch;
	p->req_tx = (struct ntb_txring){
		.cells = b + NTBV_BLOCK_REQ_OFF, .ncells = rsp->req_cells,
		.max_payload = ntbv_ring_max_payload(rsp->req_cells),
		.prod_pub = &p->tx_hdr->req_prod };
	p->resp_tx = (struct ntb_txring){
		.cells = b + ntbv_block_resp_off(rsp->req_cells), .ncells = rsp->resp_cells,
		.max_payload = ntbv_ring_max_payload(rsp->resp_cells),
		.prod_pub = &p->tx_hdr->resp_prod };
	/* our credits for its block and our bell wish go into ours: publish them afresh */
	link_credits(p);
	p->bell_wish = 0;
	p->bell_epoch = 0;
	p->want_credit = false;
	if (p->endi == NTB_END_PEER) {
		uint32_t bit = end->slots[p->slot].db_bit;

		p->db_bits = bit < 64 ? 1ull << bit : 0;
		p->vbell = &end->vbells[p->slot].vbell;
	}
}

/*
 * tx_lock held (not rx_lock): the consumer may still publish a credit into the old block until
 * the next bind, which is harmless (it is retired, and nobody reads it any more).
 */
static void tx_unbind(struct ntb_peer *p)
{
	p->tx_hdr = NULL;
	p->tx_epoch = 0;
	p->req_tx = (struct ntb_txring){ .cons = &no_credit };
	p->resp_tx = (struct ntb_txring){ .cons = &no_credit };
	p->bell_wish = 0;
}

int ntb_peer_tx_sync(struct ntb_peer *p)
{
	uint32_t e = ntb_slot_epoch(p);

	if (!(e & 1))
		return NTB_TX_GONE;
	if (p->tx_hdr && p->tx_epoch == e)
		return NTB_TX_READY;
	/* a new incarnation of the slot (or none yet): its block is ours to ask for */
	if (p->tx_hdr)
		tx_unbind(p);
	if (p->open_failed == e)
		return NTB_TX_GONE;
	ntb_pair_want(p, e);
	return NTB_TX_WAIT;
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
	if (!r->cells || used > r->ncells || used + pad + ncells > r->ncells) {
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

	if (!r->cells || used > r->ncells || ncells > r->ncells / 2) {
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
	if (p->endi == NTB_END_LOCAL) {
		/* the loopback's interrupt: the reader slot's bell */
		static const uint64_t one = 1;

		if (p->bell_fd >= 0 && write(p->bell_fd, &one, sizeof(one)) < 0)
			return;
		return;
	}
	/* vbell first, then the doorbell: the reader clears vbell before it looks */
	atomic_store_explicit(p->vbell, 1, memory_order_relaxed);
	ntb_pio_wmb();
	if (p->db_bits)
		ntb_peer_db_set(p->ctx->hal, p->db_bits);
}

/* The reader's wish about our writes: in its block for us (none yet: ring for everything). */
static uint32_t bell_of(const struct ntb_peer *p)
{
	return p->rx_hdr && p->rx_epoch == p->tx_epoch ?
		       atomic_load_explicit(&p->rx_hdr->bell, memory_order_relaxed) : 0;
}

void ntb_tx_publish(struct ntb_peer *p, uint32_t quiet_kind)
{
	bool moved = false;

	if (!p->tx_hdr)
		return;
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
	if (!(bell_of(p) & quiet_kind))
		ring_peer(p);
}

/* ---- consuming ----------------------------------------------------------------------------- */

bool ntb_rx_peek(struct ntb_peer *p, struct ntb_rxring *r, struct ntbv_msg *h,
		 const uint8_t **payload)
{
	uint64_t prod;
	uint32_t pos;

	if (!r->cells)
		return false;
	prod = atomic_load_explicit(r->prod, memory_order_acquire);
	if (prod == r->cons)
		return false;
	pos = r->cons & (r->ncells - 1);
	/* one snapshot of the header, checked and then used: the peer could rewrite it */
	memcpy(h, r->cells + (uint64_t)pos * NTBV_CELL, sizeof(*h));
	if (prod - r->cons > r->ncells || !h->ncells || pos + h->ncells > r->ncells ||
	    h->ncells > prod - r->cons || h->len > (uint32_t)(h->ncells - 1) * NTBV_CELL) {
		/* garbage from the peer (or its block being torn down): stop listening to it */
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

	if (!p->req_rx.cons_pub)
		return;		/* no block of ours yet: the credits wait for it */
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
	if (p->rx_hdr && (atomic_load_explicit(&p->rx_hdr->bell, memory_order_relaxed) &
			  NTBV_WANT_CREDIT))
		ring_peer(p);
}

bool ntb_rx_pending(struct ntb_peer *p)
{
	return p->rx_hdr &&
	       (atomic_load_explicit(p->req_rx.prod, memory_order_acquire) != p->req_rx.cons ||
		atomic_load_explicit(p->resp_rx.prod, memory_order_acquire) != p->resp_rx.cons);
}

/* ---- bells ----------------------------------------------------------------------------------- */

bool ntb_bells_stale(struct ntb_context *ctx)
{
	unsigned int n = atomic_load_explicit(&ctx->nactive, memory_order_acquire);

	for (unsigned int i = 0; i < n; i++) {
		struct ntb_peer *p = ctx->active[i];

		if (p->want_credit && !(p->bell_wish & NTBV_WANT_CREDIT))
			return true;
	}
	return false;
}

void ntb_bells_arm(struct ntb_context *ctx, bool arm)
{
	unsigned int n = atomic_load_explicit(&ctx->nactive, memory_order_acquire);

	for (unsigned int i = 0; i < n; i++) {
		struct ntb_peer *p = ctx->active[i];
		uint32_t wish;

		/* the wish travels in our block for it: none yet, none to make */
		pthread_mutex_lock(&p->tx_lock);
		if (!p->tx_hdr || p->tx_epoch != ntb_slot_epoch(p)) {
			pthread_mutex_unlock(&p->tx_lock);
			continue;
		}
		/* nothing waits for room any more: stop asking for credit bells */
		if (!ctx->want_sweep && !p->resp_stalled)
			p->want_credit = false;
		wish = arm ? (p->want_credit ? NTBV_WANT_CREDIT : 0) :
			     NTBV_QUIET_REQ | NTBV_QUIET_RESP;
		if (wish != p->bell_wish || p->bell_epoch != p->tx_epoch) {
			p->bell_epoch = p->tx_epoch;
			atomic_store_explicit(&p->tx_hdr->bell, wish, memory_order_relaxed);
			p->bell_wish = wish;
		}
		pthread_mutex_unlock(&p->tx_lock);
	}
	atomic_thread_fence(memory_order_seq_cst);
}
