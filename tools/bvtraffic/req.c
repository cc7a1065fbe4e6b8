// SPDX-License-Identifier: MIT
/*
 * The requester's side of a window: PREP, the responder's READY, every WR of the window
 * posted on every QP (sources filled with their message, READ and atomic targets with guard
 * bytes), every completion checked (status, order, opcode; READ data and atomic results as
 * they land), DONE, and the responder's verdict.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "window.h"

static enum ibv_wr_opcode wr_opcode(enum bvt_op op)
{
	static const enum ibv_wr_opcode map[BVT_NOPS] = {
	    [BVT_SEND] = IBV_WR_SEND,
	    [BVT_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
	    [BVT_WRITE] = IBV_WR_RDMA_WRITE,
	    [BVT_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
	    [BVT_READ] = IBV_WR_RDMA_READ,
	    [BVT_FADD] = IBV_WR_ATOMIC_FETCH_AND_ADD,
	    [BVT_CSWAP] = IBV_WR_ATOMIC_CMP_AND_SWP,
	};

	return map[op];
}

static enum ibv_wc_opcode wc_opcode(enum bvt_op op)
{
	static const enum ibv_wc_opcode map[BVT_NOPS] = {
	    [BVT_SEND] = IBV_WC_SEND,	     [BVT_SEND_IMM] = IBV_WC_SEND,
	    [BVT_WRITE] = IBV_WC_RDMA_WRITE, [BVT_WRITE_IMM] = IBV_WC_RDMA_WRITE,
	    [BVT_READ] = IBV_WC_RDMA_READ,   [BVT_FADD] = IBV_WC_FETCH_ADD,
	    [BVT_CSWAP] = IBV_WC_COMP_SWAP,
	};

	return map[op];
}

static uint64_t remote(struct bvt *t, const uint8_t *local)
{
	return t->peer.addr + (uint64_t)(local - t->buf);
}

/* What comes back: the next completion per QP, the value each atomic must return. */
static uint32_t next_wc[BVT_MAX_QP];
static uint64_t atom_ret[BVT_MAX_QP][4096];

static void build_wr(struct bvt *t, const struct win *w, uint32_t qp, uint32_t k, struct chain *c,
		     struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	uint64_t key = bvt_win_key(t, w, qp, w->seq0 + k);
	uint32_t n = bvt_win_size(t, w, key);
	uint8_t *l = bvt_qp_slot(t, qp, k);

	memset(wr, 0, sizeof(*wr));
	*sge = (struct ibv_sge){(uintptr_t)l, n, t->mr->lkey};
	wr->wr_id = (uint64_t)qp << 32 | k;
	wr->sg_list = sge;
	wr->num_sge = n ? 1 : 0;
	wr->opcode = wr_opcode(w->op);
	wr->send_flags = IBV_SEND_SIGNALED;
	switch (w->op) {
	case BVT_READ:
		memset(l - BVT_GUARD, BVT_FILL, 2 * BVT_GUARD + n);
		wr->wr.rdma.remote_addr = remote(t, l);
		wr->wr.rdma.rkey = t->peer.rkey;
		break;
	case BVT_FADD:
	case BVT_CSWAP:
		memset(l - BVT_GUARD, BVT_FILL, 2 * BVT_GUARD + 8);
		bvt_chain_step(c, w->op, key, &wr->wr.atomic.compare_add, &wr->wr.atomic.swap,
			       &atom_ret[qp][k]);
		wr->wr.atomic.remote_addr = remote(t, bvt_counter(t, qp));
		wr->wr.atomic.rkey = t->peer.rkey;
		break;
	default: /* SEND, WRITE and their _IMM: the source holds the message */
		bvt_fill(l, n, key);
		wr->imm_data = htobe32(bvt_imm(key));
		wr->wr.rdma.remote_addr = remote(t, l);
		wr->wr.rdma.rkey = t->peer.rkey;
		break;
	}
	if (t->cfg.type == IBV_QPT_UD) {
		wr->wr.ud.ah = t->ah;
		wr->wr.ud.remote_qpn = t->peer.qpn[qp];
		wr->wr.ud.remote_qkey = BVT_QKEY;
	}
}

static void post_window(struct bvt *t, const struct win *w)
{
	static struct ibv_send_wr wrs[4096 + 1];
	static struct ibv_sge sges[4096 + 1];
	struct ibv_send_wr *bad;

	for (uint32_t qp = 0; qp < t->cfg.nqp; qp++) {
		struct chain c = {bvt_chain_init(t, w, qp)};
		uint32_t nwr = 0;

		for (uint32_t k = 0; k < w->n; k++, nwr++) {
			build_wr(t, w, qp, k, &c, &wrs[nwr], &sges[nwr]);
			wrs[nwr].next = &wrs[nwr + 1];
		}
		if (bvt_needs_mark(t, w->op)) {
			struct ibv_send_wr *wr = &wrs[nwr++];

			memset(wr, 0, sizeof(*wr));
			wr->wr_id = (uint64_t)qp << 32 | WR_MARK;
			wr->opcode = IBV_WR_SEND_WITH_IMM;
			wr->send_flags = IBV_SEND_SIGNALED;
			wr->imm_data = htobe32(bvt_mark_imm(t, w, qp));
		}
		wrs[nwr - 1].next = NULL;
		next_wc[qp] = 0;
		if (ibv_post_send(t->qp[qp], wrs, &bad))
			bvt_die(t, BVT_EXIT_ERROR, "post_send on QP %u: %s (WR %td of %u)", qp,
				strerror(errno), bad - wrs, nwr);
	}
}

static void completion(struct bvt *t, const struct win *w, const struct ibv_wc *wc)
{
	uint32_t qp = (uint32_t)(wc->wr_id >> 32), k = (uint32_t)wc->wr_id;
	bool mark = k == WR_MARK;
	enum ibv_wc_opcode op = mark ? IBV_WC_SEND : wc_opcode(w->op);
	char why[512];
	uint64_t key, v;
	uint8_t *l;

	if (wc->status != IBV_WC_SUCCESS)
		bvt_wc_error(t, wc, "requester");
	if (qp >= t->cfg.nqp || t->qp[qp]->qp_num != wc->qp_num) {
		snprintf(why, sizeof(why), "a send completion with wr_id 0x%" PRIx64 " on QP 0x%x",
			 (uint64_t)wc->wr_id, wc->qp_num);
		bvt_data_error(t, true, why);
	}
	if (mark ? next_wc[qp] != w->n : k != next_wc[qp]) {
		snprintf(why, sizeof(why),
			 "QP %u: the completion of WR %u came when WR %u's was due", qp, k,
			 next_wc[qp]);
		bvt_data_error(t, true, why);
	}
	next_wc[qp]++;
	if (wc->opcode != op) {
		snprintf(why, sizeof(why), "QP %u WR %u: completion opcode %d, expected %d", qp, k,
			 wc->opcode, op);
		bvt_data_error(t, true, why);
	}
	if (mark || (w->op != BVT_READ && w->op != BVT_FADD && w->op != BVT_CSWAP))
		return;
	key = bvt_win_key(t, w, qp, w->seq0 + k);
	l = bvt_qp_slot(t, qp, k);
	if (w->op == BVT_READ) {
		if (bvt_check_target(t, w, qp, w->seq0 + k, l, bvt_win_size(t, w, key), key, why,
				     sizeof(why)))
			bvt_data_error(t, true, why);
		return;
	}
	memcpy(&v, l, 8);
	if (v != atom_ret[qp][k] || bvt_check_fill(l - BVT_GUARD, BVT_GUARD) < BVT_GUARD ||
	    bvt_check_fill(l + 8, BVT_GUARD) < BVT_GUARD) {
		snprintf(why, sizeof(why),
			 "%s %s QP %u seq %" PRIu64 ": returned 0x%016" PRIx64
			 ", expected 0x%016" PRIx64 "%s",
			 bvt_dir_name(w->dir), bvt_op_name(w->op), qp, w->seq0 + k, v,
			 atom_ret[qp][k],
			 v == atom_ret[qp][k] ? " (a guard byte was written)" : "");
		bvt_data_error(t, true, why);
	}
}

void bvt_run_window(struct bvt *t, const struct win *w)
{
	static struct ibv_wc wc[64];
	char line[BVT_LINE];
	uint32_t want = t->cfg.nqp * (w->n + (bvt_needs_mark(t, w->op) ? 1 : 0)), have = 0;
	int stall = (int)t->loc.stall_s * 1000;

	bvt_ctl_send(t, "PREP op=%d seq=%" PRIu64 " n=%u", w->op, w->seq0, w->n);
	bvt_ctl_recv(t, line, stall);
	if (strcmp(line, "READY"))
		bvt_die(t, BVT_EXIT_ERROR, "expected READY, got: %s", line);
	t->progress_at_ms = bvt_now_ms();
	post_window(t, w);
	while (have < want) {
		int n = bvt_wait_wc(t, wc, 64, false, stall + 1000, "send completions");

		for (int i = 0; i < n; i++)
			completion(t, w, &wc[i]);
		have += (uint32_t)n;
	}
	bvt_ctl_send(t, "DONE");
	bvt_ctl_recv(t, line, stall);
	if (!strncmp(line, "BAD ", 4))
		bvt_die(t, BVT_EXIT_DATA, "DATA ERROR (found by the responder): %s", line + 4);
	if (strcmp(line, "OK"))
		bvt_die(t, BVT_EXIT_ERROR, "expected OK, got: %s", line);
	bvt_account(t, w, 0);
}
