/* SPDX-License-Identifier: MIT */
/*
 * A window: n messages of one opcode on every QP, in one direction. Where each message lives
 * (slots, counters), what it is (key, size, immediate, atomic chain), and the functions that
 * run one as requester (req.c) or responder (resp.c).
 */
#ifndef BVT_WINDOW_H
#define BVT_WINDOW_H

#include "bvtraffic.h"

#define WR_MARK 0xffffffffu	/* wr_id low half of a WRITE window's closing SEND */
#define RECV_SLOT (1ull << 48)	/* receive wr_id: a receive into a slot */
#define RECV_NOBUF (2ull << 48) /* receive wr_id: no buffer (WRITE_IMM, marker) */
#define RECV_KIND(id) ((id) & (3ull << 48))

struct win {
	enum bvt_op op;
	int dir; /* 0: the client requests, 1: the server does */
	uint64_t seq0;
	uint32_t n; /* messages per QP */
};

static inline uint8_t *bvt_slot(struct bvt *t, uint32_t idx)
{
	return t->buf + (size_t)idx * t->slot_stride + BVT_GUARD;
}

static inline uint8_t *bvt_qp_slot(struct bvt *t, uint32_t qp, uint32_t k)
{
	return bvt_slot(t, qp * t->cfg.depth + k);
}

static inline uint8_t *bvt_counter(struct bvt *t, uint32_t qp)
{
	return t->buf + t->atom_off + (size_t)qp * 3 * BVT_GUARD + BVT_GUARD;
}

static inline uint64_t bvt_win_key(struct bvt *t, const struct win *w, uint32_t qp, uint64_t seq)
{
	return bvt_key(&t->cfg, w->op, w->dir, qp, seq);
}

static inline uint32_t bvt_ud_max(struct bvt *t)
{
	uint32_t m = t->port.active_mtu < t->peer.mtu ? t->port.active_mtu : t->peer.mtu;

	if (t->cfg.mtu && t->cfg.mtu < m)
		m = t->cfg.mtu;
	return 128u << m;
}

static inline uint32_t bvt_win_size(struct bvt *t, const struct win *w, uint64_t key)
{
	return bvt_size(&t->cfg, w->op, key,
			t->cfg.type == IBV_QPT_UD ? bvt_ud_max(t) : UINT32_MAX);
}

/* The immediate of the SEND that closes a WRITE window on a QP. */
static inline uint32_t bvt_mark_imm(struct bvt *t, const struct win *w, uint32_t qp)
{
	return bvt_imm(bvt_win_key(t, w, qp, w->seq0 + w->n) ^ 0x3a3a3a3aull);
}

/* WRITEs carry no completion at the responder: a SEND behind them says they landed. */
static inline bool bvt_needs_mark(struct bvt *t, enum bvt_op op)
{
	return op == BVT_WRITE && t->cfg.type != IBV_QPT_UD;
}

/* Atomics: the chain of values a QP's counter takes in a window. */
struct chain {
	uint64_t v;
};

static inline uint64_t bvt_chain_init(struct bvt *t, const struct win *w, uint32_t qp)
{
	return bvt_mix(bvt_win_key(t, w, qp, w->seq0) ^ 0x1717171717ull);
}

/* One operation: its operands and the value it must return; the counter moves on. */
static inline void bvt_chain_step(struct chain *c, enum bvt_op op, uint64_t key, uint64_t *cmp_add,
				  uint64_t *swap, uint64_t *ret)
{
	*ret = c->v;
	if (op == BVT_FADD) {
		*cmp_add = bvt_mix(key ^ 0xadd);
		*swap = 0;
		c->v += *cmp_add;
	} else if ((key & 3) == 3) {
		/* a compare that misses by one bit: the counter stays */
		*cmp_add = c->v ^ (1ull << (key >> 58));
		*swap = bvt_mix(key ^ 0x5a1);
	} else {
		*cmp_add = c->v;
		*swap = bvt_mix(key ^ 0x5a2);
		c->v = *swap;
	}
}

/* check.c */
const char *bvt_dir_name(int dir);
int bvt_qp_index(struct bvt *t, uint32_t qpn);
/* The n bytes of a target and the guards around it; 0, or -1 and why. */
int bvt_check_target(struct bvt *t, const struct win *w, uint32_t qp, uint64_t seq,
		     const uint8_t *p, uint32_t n, uint64_t key, char *why, size_t len);
/* The same with the guard before it elsewhere (a UD receive: before the GRH). */
int bvt_check_message(struct bvt *t, const struct win *w, uint32_t qp, uint64_t seq,
		      const uint8_t *p, uint32_t n, uint64_t key, const uint8_t *before, char *why,
		      size_t len);
int bvt_check_grh(struct bvt *t, const uint8_t *g, char *why, size_t len);
_Noreturn void bvt_data_error(struct bvt *t, bool requester, const char *why);

/* wait.c */
/*
 * Up to max completions within timeout_ms. Returns 0 on timeout, or with peek when a control
 * line arrived (the caller reads it); without peek a line ends the run (only ABORT may come).
 */
int bvt_wait_wc(struct bvt *t, struct ibv_wc *wc, int max, bool peek, int timeout_ms,
		const char *what);
_Noreturn void bvt_wc_error(struct bvt *t, const struct ibv_wc *wc, const char *role);

/* req.c, resp.c */
void bvt_run_window(struct bvt *t, const struct win *w);
void bvt_serve_window(struct bvt *t, const struct win *w);

/* run.c */
void bvt_account(struct bvt *t, const struct win *w, int role);

#endif
