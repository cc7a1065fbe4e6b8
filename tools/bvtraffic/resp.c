// SPDX-License-Identifier: MIT
/*
 * The responder's side of a window: memory made ready for what the PREP announced (receives
 * posted into guard-filled slots, WRITE targets filled with guard bytes, READ sources with
 * their message, atomic counters with their first value), READY, every receive checked as it
 * completes (QP, order, opcode, length, immediate, UD source and GRH, data, guards), and at
 * DONE what only memory shows: WRITE targets, READ sources left alone, the atomic counters.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "window.h"

#define LOST_MS 5000 /* receives still missing this long after DONE were lost */

struct resp {
	uint32_t next[BVT_MAX_QP]; /* the next message each QP must deliver */
	uint32_t marks[BVT_MAX_QP];
	uint32_t want, got;
};

static void post_recv(struct bvt *t, uint32_t qp, uint64_t id, uint8_t *buf, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)buf, len, t->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = buf ? 1 : 0}, *bad;
	int r = t->srq ? ibv_post_srq_recv(t->srq, &wr, &bad) : ibv_post_recv(t->qp[qp], &wr, &bad);

	if (r)
		bvt_die(t, BVT_EXIT_ERROR, "post_recv: %s", strerror(r));
}

static void prepare(struct bvt *t, const struct win *w, struct resp *r)
{
	memset(r, 0, sizeof(*r));
	for (uint32_t qp = 0; qp < t->cfg.nqp; qp++) {
		for (uint32_t k = 0; k < w->n; k++) {
			uint64_t key = bvt_win_key(t, w, qp, w->seq0 + k);
			uint32_t n = bvt_win_size(t, w, key), idx = qp * t->cfg.depth + k;
			uint8_t *p = bvt_slot(t, idx);

			switch (w->op) {
			case BVT_SEND:
			case BVT_SEND_IMM:
				/* whichever message lands here: the whole slot is guard */
				memset(p - BVT_GUARD, BVT_FILL, t->slot_stride);
				post_recv(t, qp, RECV_SLOT | idx, p, (uint32_t)t->slot_bytes);
				r->want++;
				break;
			case BVT_WRITE_IMM:
				post_recv(t, qp, RECV_NOBUF | idx, NULL, 0);
				r->want++;
				/* fall through */
			case BVT_WRITE:
				memset(p - BVT_GUARD, BVT_FILL, 2 * BVT_GUARD + n);
				break;
			case BVT_READ:
				memset(p - BVT_GUARD, BVT_FILL, BVT_GUARD);
				bvt_fill(p, n, key);
				memset(p + n, BVT_FILL, BVT_GUARD);
				break;
			default:
				break;
			}
		}
		if (bvt_needs_mark(t, w->op)) {
			post_recv(t, qp, RECV_NOBUF | WR_MARK, NULL, 0);
			r->want++;
		}
		if (w->op == BVT_FADD || w->op == BVT_CSWAP) {
			uint64_t v = bvt_chain_init(t, w, qp);

			memset(bvt_counter(t, qp) - BVT_GUARD, BVT_FILL, 2 * BVT_GUARD + 8);
			memcpy(bvt_counter(t, qp), &v, 8);
		}
	}
}

static void check_mark(struct bvt *t, const struct win *w, struct resp *r, uint32_t qp,
		       const struct ibv_wc *wc)
{
	char why[256];

	if (w->op == BVT_WRITE && !r->marks[qp]++ && r->next[qp] == 0 &&
	    wc->opcode == IBV_WC_RECV && !wc->byte_len && (wc->wc_flags & IBV_WC_WITH_IMM) &&
	    be32toh(wc->imm_data) == bvt_mark_imm(t, w, qp))
		return;
	snprintf(why, sizeof(why), "QP %u: a wrong end-of-window SEND (opcode %d, %u B, imm 0x%x)",
		 qp, wc->opcode, wc->byte_len, be32toh(wc->imm_data));
	bvt_data_error(t, false, why);
}

/* A UD receive: the GRH, then the payload, guards around the two. */
static void check_ud(struct bvt *t, const struct win *w, uint32_t qp, uint32_t k, uint8_t *g,
		     uint32_t n, uint64_t key)
{
	char why[512];

	if (bvt_check_grh(t, g, why, sizeof(why)) ||
	    bvt_check_message(t, w, qp, w->seq0 + k, g + BVT_GRH, n, key, g - BVT_GUARD, why,
			      sizeof(why)))
		bvt_data_error(t, false, why);
}

static void completion(struct bvt *t, const struct win *w, struct resp *r, const struct ibv_wc *wc)
{
	int qpi = bvt_qp_index(t, wc->qp_num);
	uint32_t qp = (uint32_t)qpi, idx = (uint32_t)wc->wr_id, k, n, extra;
	bool ud = t->cfg.type == IBV_QPT_UD;
	bool imm = w->op == BVT_SEND_IMM || w->op == BVT_WRITE_IMM;
	enum ibv_wc_opcode op = w->op == BVT_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	uint64_t key;
	uint8_t *p;
	char why[512];

	if (wc->status != IBV_WC_SUCCESS)
		bvt_wc_error(t, wc, "responder");
	if (qpi < 0) {
		snprintf(why, sizeof(why), "a receive completion for QP 0x%x, not one of ours",
			 wc->qp_num);
		bvt_data_error(t, false, why);
	}
	r->got++;
	if (RECV_KIND(wc->wr_id) == RECV_NOBUF && idx == WR_MARK) {
		check_mark(t, w, r, qp, wc);
		return;
	}
	k = r->next[qp]++;
	if (k >= w->n || (w->op != BVT_SEND && w->op != BVT_SEND_IMM && w->op != BVT_WRITE_IMM)) {
		snprintf(why, sizeof(why),
			 "QP %u: an unexpected receive completion (message %u of "
			 "a %s window of %u)",
			 qp, k, bvt_op_name(w->op), w->n);
		bvt_data_error(t, false, why);
	}
	key = bvt_win_key(t, w, qp, w->seq0 + k);
	n = bvt_win_size(t, w, key);
	extra = ud ? BVT_GRH : 0;
	if (wc->opcode != op || wc->byte_len != n + extra ||
	    !!(wc->wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && be32toh(wc->imm_data) != bvt_imm(key))) {
		snprintf(why, sizeof(why),
			 "%s %s QP %u seq %" PRIu64 ": receive opcode %d, %u B, "
			 "immediate %s0x%x; expected opcode %d, %u B, %s 0x%x",
			 bvt_dir_name(w->dir), bvt_op_name(w->op), qp, w->seq0 + k, wc->opcode,
			 wc->byte_len, wc->wc_flags & IBV_WC_WITH_IMM ? "" : "(none) ",
			 be32toh(wc->imm_data), op, n + extra, imm ? "immediate" : "no immediate",
			 imm ? bvt_imm(key) : 0);
		bvt_data_error(t, false, why);
	}
	if (ud && (wc->src_qp != t->peer.qpn[qp] || !(wc->wc_flags & IBV_WC_GRH))) {
		snprintf(why, sizeof(why),
			 "UD QP %u seq %" PRIu64 ": source QP 0x%x (not 0x%x), %s", qp, w->seq0 + k,
			 wc->src_qp, t->peer.qpn[qp],
			 wc->wc_flags & IBV_WC_GRH ? "GRH" : "no GRH flag");
		bvt_data_error(t, false, why);
	}
	if (w->op == BVT_WRITE_IMM) {
		p = bvt_qp_slot(t, qp, k);
	} else {
		/* without an SRQ a QP's receives complete in the order they were posted */
		if (RECV_KIND(wc->wr_id) != RECV_SLOT || idx >= t->cfg.nqp * t->cfg.depth ||
		    (!t->srq && idx != qp * t->cfg.depth + k)) {
			snprintf(why, sizeof(why), "QP %u message %u completed receive 0x%" PRIx64,
				 qp, k, (uint64_t)wc->wr_id);
			bvt_data_error(t, false, why);
		}
		p = bvt_slot(t, idx);
		if (ud) {
			check_ud(t, w, qp, k, p, n, key);
			return;
		}
	}
	if (bvt_check_target(t, w, qp, w->seq0 + k, p, n, key, why, sizeof(why)))
		bvt_data_error(t, false, why);
}

/* After DONE: what the requester wrote, and what the atomics left, must be there. */
static void finish(struct bvt *t, const struct win *w)
{
	char why[512];

	for (uint32_t qp = 0; qp < t->cfg.nqp; qp++) {
		struct chain c = {bvt_chain_init(t, w, qp)};
		uint64_t a, b, ret, v;
		uint8_t *p = bvt_counter(t, qp);

		for (uint32_t k = 0; k < w->n; k++) {
			uint64_t key = bvt_win_key(t, w, qp, w->seq0 + k);

			if (w->op == BVT_FADD || w->op == BVT_CSWAP)
				bvt_chain_step(&c, w->op, key, &a, &b, &ret);
			else if ((w->op == BVT_WRITE || w->op == BVT_READ) &&
				 bvt_check_target(t, w, qp, w->seq0 + k, bvt_qp_slot(t, qp, k),
						  bvt_win_size(t, w, key), key, why, sizeof(why)))
				bvt_data_error(t, false, why); /* a READ leaves its source */
		}
		if (w->op != BVT_FADD && w->op != BVT_CSWAP)
			continue;
		memcpy(&v, p, 8);
		if (v != c.v || bvt_check_fill(p - BVT_GUARD, BVT_GUARD) < BVT_GUARD ||
		    bvt_check_fill(p + 8, BVT_GUARD) < BVT_GUARD) {
			snprintf(why, sizeof(why),
				 "%s %s QP %u: the counter is 0x%016" PRIx64
				 " after %u operations, expected 0x%016" PRIx64 "%s",
				 bvt_dir_name(w->dir), bvt_op_name(w->op), qp, v, w->n, c.v,
				 v == c.v ? " (a guard byte was written)" : "");
			bvt_data_error(t, false, why);
		}
	}
}

void bvt_serve_window(struct bvt *t, const struct win *w)
{
	static struct ibv_wc wc[64];
	struct resp r;
	char line[BVT_LINE];
	uint64_t done_at = 0;
	int stall = (int)t->loc.stall_s * 1000;

	prepare(t, w, &r);
	bvt_ctl_send(t, "READY");
	t->progress_at_ms = bvt_now_ms();
	while (r.got < r.want || !done_at) {
		int left = done_at ? LOST_MS - (int)(bvt_now_ms() - done_at) : stall + 1000;
		int n = left > 0 ? bvt_wait_wc(t, wc, 64, true, left, "receive completions") : 0;

		for (int i = 0; i < n; i++)
			completion(t, w, &r, &wc[i]);
		if (n)
			continue;
		if (bvt_ctl_pending(t)) {
			bvt_ctl_recv(t, line, 1000);
			if (done_at || strcmp(line, "DONE"))
				bvt_die(t, BVT_EXIT_ERROR, "expected DONE, got: %s", line);
			done_at = bvt_now_ms();
		} else if (done_at) {
			snprintf(line, sizeof(line),
				 "%s %s: %u of %u receives completed, %d s after "
				 "the requester's last completion",
				 bvt_dir_name(w->dir), bvt_op_name(w->op), r.got, r.want,
				 LOST_MS / 1000);
			bvt_data_error(t, false, line);
		}
	}
	finish(t, w);
	bvt_ctl_send(t, "OK");
	bvt_account(t, w, 1);
}
