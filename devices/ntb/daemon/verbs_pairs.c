// SPDX-License-Identifier: MIT
/*
 * Pair blocks (kernel-abi/ntb_verbs_wire.h "Pairs"): the memory one of our clients writes its
 * messages for one reader into. The reader is a client of the peer end (the block is in the
 * peer's window, in the pool the peer's ntbd set aside for us) or of this end (the block is in
 * our loopback memory). A client asks for its block the first time it writes to a reader
 * (NTB_OP_OPEN_PAIR); we allocate it, zero its header and publish it in the reader's
 * directory, where the reader finds it. Memory grows with the pairs that talk.
 *
 * A block is tied to one incarnation of each slot. When either one leaves, the block RETIRES:
 * its directory entry stays (the reader still takes in what a departed writer sent, for up to
 * a couple of seconds), and after NTBV_RETIRE_NS the entry is cleared and the memory goes back
 * to the pool. Nothing can write a retired block for long: a departed writer is gone, and a
 * live one stops at once when it sees its reader's epoch change (docs/ntb-verbs.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

int nv_pairs_init(struct nv_state *s)
{
	s->pairs = calloc(NV_ENDS, sizeof(*s->pairs));
	return s->pairs ? 0 : -ENOMEM;
}

void nv_pairs_fini(struct nv_state *s)
{
	free(s->pairs);
	s->pairs = NULL;
	free(s->quar);
	s->quar = NULL;
	s->nquar = s->quar_cap = 0;
	for (int e = 0; e < NV_ENDS; e++)
		nv_pool_fini(&s->pool[e]);
}

/* The block's memory returns to its pool once nothing can still be reading or writing it. */
static void quarantine(struct nv_state *s, int end, uint64_t off, uint64_t len, uint64_t since)
{
	if (s->nquar == s->quar_cap) {
		unsigned int cap = s->quar_cap ? 2 * s->quar_cap : 64;
		struct nv_quarantine *q = realloc(s->quar, cap * sizeof(*q));

		if (!q)
			return;	/* leaks the range from the pool; nothing else breaks */
		s->quar = q;
		s->quar_cap = cap;
	}
	s->quar[s->nquar++] = (struct nv_quarantine){ .end = (uint8_t)end, .off = off,
						      .len = len,
						      .ready_ns = since + NTBV_RETIRE_NS };
}

static void retire(struct nv_state *s, int end, struct nv_pair *pr)
{
	if (pr->state != NV_PAIR_OPEN)
		return;
	pr->state = NV_PAIR_RETIRED;
	pr->retired_ns = nv_now();
	s->nopen[end]--;
	s->nretired++;
}

void nv_pairs_reclaim(struct nv_state *s)
{
	uint64_t now = nv_now();

	for (unsigned int i = 0; i < s->nquar;) {
		struct nv_quarantine *q = &s->quar[i];

		if (now < q->ready_ns) {
			i++;
			continue;
		}
		nv_pool_free(&s->pool[q->end], q->off, q->len);
		s->quar[i] = s->quar[--s->nquar];
	}
	if (!s->nretired)
		return;
	for (int e = 0; e < NV_ENDS; e++) {
		for (unsigned int w = 0; w < s->max_slots; w++) {
			for (unsigned int r = 0; r < NTBV_MAX_SLOTS; r++) {
				struct nv_pair *pr = &s->pairs[e][w][r];

				if (pr->state != NV_PAIR_RETIRED ||
				    now < pr->retired_ns + NTBV_RETIRE_NS)
					continue;
				/* the reader stops at the changed entry, then the memory goes */
				pr->state = NV_PAIR_FREE;
				nv_publish_pair(s, e, w, r, pr);
				nv_pool_free(&s->pool[e], pr->off, pr->len);
				s->nretired--;
			}
		}
	}
}

void nv_pairs_client_gone(struct nv_state *s, unsigned int slot)
{
	if (!s->pairs)
		return;
	for (unsigned int r = 0; r < NTBV_MAX_SLOTS; r++) {
		retire(s, NV_PEER, &s->pairs[NV_PEER][slot][r]);
		retire(s, NV_LOCAL, &s->pairs[NV_LOCAL][slot][r]);
		/* loopback blocks other clients of ours write for it: nobody reads them now */
		retire(s, NV_LOCAL, &s->pairs[NV_LOCAL][r][slot]);
	}
}

/* The epoch the peer's ntbd publishes for its slot r (our window: a local load). */
static uint32_t peer_epoch(struct nv_state *s, unsigned int r)
{
	const struct ntbv_slot *sl = (const struct ntbv_slot *)((const uint8_t *)s->n->link.ctl +
								 s->ctrl_off + NTBV_CTRL_SLOTS_OFF);

	return atomic_load_explicit(&sl[r].epoch, memory_order_acquire);
}

void nv_pairs_peer_changed(struct nv_state *s)
{
	if (!s->pairs || !s->ready)
		return;
	for (unsigned int r = 0; r < NTBV_MAX_SLOTS; r++) {
		uint32_t e = peer_epoch(s, r);

		if (e == s->peer_epoch_seen[r])
			continue;
		s->peer_epoch_seen[r] = e;
		for (unsigned int w = 0; w < s->max_slots; w++) {
			struct nv_pair *pr = &s->pairs[NV_PEER][w][r];

			if (pr->state == NV_PAIR_OPEN && pr->r_epoch != e)
				retire(s, NV_PEER, pr);
		}
	}
}

void nv_pairs_link_lost(struct nv_state *s)
{
	if (!s->pairs)
		return;
	/* the peer's window belongs to the next session: forget every block in it */
	for (unsigned int w = 0; w < NTBV_MAX_SLOTS; w++) {
		for (unsigned int r = 0; r < NTBV_MAX_SLOTS; r++) {
			struct nv_pair *pr = &s->pairs[NV_PEER][w][r];

			if (pr->state == NV_PAIR_RETIRED)
				s->nretired--;
			*pr = (struct nv_pair){ .seq = pr->seq };
		}
	}
	for (unsigned int i = 0; i < s->nquar;) {
		if (s->quar[i].end == NV_PEER)
			s->quar[i] = s->quar[--s->nquar];
		else
			i++;
	}
	s->nopen[NV_PEER] = 0;
	nv_pool_fini(&s->pool[NV_PEER]);
	s->peer_pool_ready = false;
	memset(s->peer_epoch_seen, 0, sizeof(s->peer_epoch_seen));
	memset(s->dgen[NV_PEER], 0, sizeof(s->dgen[NV_PEER]));
}

/* The peer's pool and directory, as its ntbd laid them out in its window (checked). */
static int peer_pool(struct nv_state *s)
{
	struct ntbv_ctrl_hdr h;
	int ret;

	if (s->peer_pool_ready)
		return 0;
	ret = nv_peer_hdr(s, &h);
	if (ret)
		return ret;
	ret = nv_pool_init(&s->pool[NV_PEER], h.pool_off, h.pool_len);
	if (ret)
		return ret;
	s->peer_dir_slots = h.max_slots;
	s->peer_dir_off = h.dir_off;
	s->peer_dgen_off = h.dgen_off;
	s->peer_pool_ready = true;
	return 0;
}

static uint64_t live_slots(struct nv_state *s, int end)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < NTBV_MAX_SLOTS; i++)
		n += end == NV_PEER ? (peer_epoch(s, i) & 1) : (i < s->max_slots &&
								(s->slots[i].epoch & 1));
	return n;
}

/*
 * The largest rings while the pool keeps room for the smallest block of every pair the live
 * clients could still open; the smallest rings otherwise.
 */
static int alloc_block(struct nv_state *s, int end, struct nv_pair *pr)
{
	uint64_t big = ntbv_block_len(s->req_cells_max, s->resp_cells_max);
	uint64_t small = ntbv_block_len(NTBV_REQ_CELLS_MIN, NTBV_RESP_CELLS_MIN);
	uint64_t could = live_slots(s, NV_LOCAL) * live_slots(s, end);
	uint64_t reserve = could > s->nopen[end] + 1 ? (could - s->nopen[end] - 1) * small : 0;
	struct nv_pool *p = &s->pool[end];

	nv_pairs_reclaim(s);
	if (nv_pool_avail(p) >= big + reserve && !nv_pool_alloc(p, big, &pr->off)) {
		pr->len = big;
		pr->req_cells = s->req_cells_max;
		pr->resp_cells = s->resp_cells_max;
		return 0;
	}
	if (!nv_pool_alloc(p, small, &pr->off)) {
		pr->len = small;
		pr->req_cells = NTBV_REQ_CELLS_MIN;
		pr->resp_cells = NTBV_RESP_CELLS_MIN;
		return 0;
	}
	return -ENOSPC;
}

void nv_open_pair(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		  struct bvd_reply *r)
{
	const struct ntb_open_pair_req *req = in;
	struct ntb_open_pair_rsp *rsp = r->payload;
	uint32_t my_epoch, epoch;
	struct nv_pair *pr;
	int end, ret;

	if (len != sizeof(*req) || req->end > NTB_END_LOCAL || req->slot >= NTBV_MAX_SLOTS) {
		r->status = EINVAL;
		return;
	}
	if (!cl->attached || !s->ready) {
		r->status = ENOLINK;
		return;
	}
	end = req->end == NTB_END_LOCAL ? NV_LOCAL : NV_PEER;
	if (end == NV_PEER) {
		ret = peer_pool(s);
		if (ret) {
			r->status = -ret;
			return;
		}
		if (req->slot >= s->peer_dir_slots) {
			r->status = EINVAL;
			return;
		}
		epoch = peer_epoch(s, req->slot);
	} else {
		epoch = req->slot < s->max_slots ? s->slots[req->slot].epoch : 0;
	}
	/* the reader must be the incarnation the client means, and alive */
	if (!(epoch & 1) || epoch != req->epoch) {
		r->status = ESTALE;
		return;
	}
	my_epoch = s->slots[cl->slot].epoch;
	pr = &s->pairs[end][cl->slot][req->slot];
	if (pr->state == NV_PAIR_OPEN && (pr->w_epoch != my_epoch || pr->r_epoch != epoch))
		retire(s, end, pr);
	if (pr->state == NV_PAIR_RETIRED) {
		/* the new incarnations take the directory entry; the old memory waits its grace */
		quarantine(s, end, pr->off, pr->len, pr->retired_ns);
		pr->state = NV_PAIR_FREE;
		s->nretired--;
	}
	if (pr->state == NV_PAIR_FREE) {
		uint8_t *mem = end == NV_PEER ? (uint8_t *)s->n->link.peer_ctl : s->lo;

		ret = alloc_block(s, end, pr);
		if (ret) {
			bvd_log(s->n->d, "client %u: no room for a pair block towards %s slot %u",
				cl->c->id, end == NV_PEER ? "peer" : "local", req->slot);
			r->status = -ret;
			return;
		}
		pr->w_epoch = my_epoch;
		pr->r_epoch = epoch;
		/* a fresh header: indices from zero, no bell wishes (ring for everything) */
		memset(mem + pr->off, 0, sizeof(struct ntbv_pair_hdr));
		((struct ntbv_pair_hdr *)(mem + pr->off))->epoch = my_epoch;
		pr->state = NV_PAIR_OPEN;
		s->nopen[end]++;
		nv_publish_pair(s, end, cl->slot, req->slot, pr);
	}
	memset(rsp, 0, sizeof(*rsp));
	rsp->off = pr->off;
	rsp->req_cells = pr->req_cells;
	rsp->resp_cells = pr->resp_cells;
	rsp->w_epoch = pr->w_epoch;
	rsp->r_epoch = pr->r_epoch;
	r->len = sizeof(*rsp);
	if (end == NV_LOCAL) {
		/* the loopback "interrupt": the reader slot's bell */
		r->fds[0] = fcntl(s->slots[req->slot].bell_fd, F_DUPFD_CLOEXEC, 0);
		if (r->fds[0] < 0) {
			r->status = EMFILE;
			r->len = 0;
			return;
		}
		r->nfds = 1;
	}
}
