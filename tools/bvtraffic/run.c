// SPDX-License-Identifier: MIT
/*
 * The schedule: for each direction asked for, the requester runs every opcode's windows
 * (until the message count, the byte count or the duration is reached) and says END; the
 * other end serves what it is asked. BYE closes the run.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "window.h"

void bvt_account(struct bvt *t, const struct win *w, int role)
{
	for (uint32_t qp = 0; qp < t->cfg.nqp; qp++)
		for (uint32_t k = 0; k < w->n; k++) {
			uint32_t n = bvt_win_size(t, w, bvt_win_key(t, w, qp, w->seq0 + k));

			t->st[role].msgs[w->op]++;
			t->st[role].bytes[w->op] += n;
			t->total_msgs++;
			t->total_bytes += n;
		}
	bvt_progress(t);
}

/* Bytes an opcode counts towards -B: atomics count a page per operation (8 B move). */
static uint64_t counted(const struct bvt *t, int op)
{
	if (op == BVT_FADD || op == BVT_CSWAP)
		return t->st[0].msgs[op] * 4096;
	return t->st[0].bytes[op];
}

static void request_direction(struct bvt *t, int dir)
{
	const struct bvt_cfg *c = &t->cfg;
	uint64_t seq[BVT_NOPS] = {0}, end = bvt_now_ms() + c->duration_s * 1000ull;
	bool more = true;

	while (more) {
		more = false;
		for (int op = 0; op < BVT_NOPS; op++) {
			struct win w = {(enum bvt_op)op, dir, seq[op], c->depth};
			uint64_t base = counted(t, op);

			if (!(c->ops & (1u << op)))
				continue;
			for (;;) {
				if (c->duration_s ? bvt_now_ms() >= end
				    : c->bytes	  ? counted(t, op) - base >= c->bytes
						  : w.seq0 >= c->iters)
					break;
				if (!c->duration_s && !c->bytes && c->iters - w.seq0 < w.n)
					w.n = (uint32_t)(c->iters - w.seq0);
				bvt_run_window(t, &w);
				w.seq0 += w.n;
				if (c->duration_s)
					break; /* round robin over the opcodes */
			}
			seq[op] = w.seq0;
			more |= c->duration_s && bvt_now_ms() < end;
		}
	}
	bvt_ctl_send(t, "END");
}

static void serve_direction(struct bvt *t, int dir)
{
	char line[BVT_LINE];

	for (;;) {
		struct win w = {.dir = dir};
		int op;

		bvt_ctl_recv(t, line, (int)t->loc.stall_s * 1000);
		if (!strcmp(line, "END"))
			return;
		if (sscanf(line, "PREP op=%d seq=%" SCNu64 " n=%u", &op, &w.seq0, &w.n) != 3 ||
		    op < 0 || op >= BVT_NOPS || !(t->cfg.ops & (1u << op)) || !w.n ||
		    w.n > t->cfg.depth)
			bvt_die(t, BVT_EXIT_ERROR, "a bad window from the peer: %s", line);
		w.op = (enum bvt_op)op;
		bvt_serve_window(t, &w);
	}
}

static void summary(struct bvt *t)
{
	static const char *const role[2] = {"requester", "responder"};
	const char *type = t->cfg.type == IBV_QPT_RC   ? "RC"
			   : t->cfg.type == IBV_QPT_UC ? "UC"
						       : "UD";

	for (int r = 0; r < 2; r++)
		for (int op = 0; op < BVT_NOPS; op++)
			if (t->st[r].msgs[op])
				printf("bvtraffic: ok %s%s %s as %s: %" PRIu64 " messages, %" PRIu64
				       " bytes, %u QPs\n",
				       type, t->srq ? " SRQ" : "", bvt_op_name((enum bvt_op)op),
				       role[r], t->st[r].msgs[op], t->st[r].bytes[op], t->cfg.nqp);
}

int bvt_run(struct bvt *t)
{
	char line[BVT_LINE];
	int stall = (int)t->loc.stall_s * 1000;

	fcntl(t->ctx->async_fd, F_SETFL, fcntl(t->ctx->async_fd, F_GETFL) | O_NONBLOCK);
	t->armed = t->ch != NULL;
	t->progress_at_ms = bvt_now_ms();
	for (int dir = 0; dir < 2; dir++) {
		if (!(t->cfg.dirs & (1u << dir)))
			continue;
		if ((dir == 0) != t->is_server)
			request_direction(t, dir);
		else
			serve_direction(t, dir);
	}
	if (!t->is_server)
		bvt_ctl_send(t, "BYE");
	bvt_ctl_recv(t, line, stall);
	if (strcmp(line, "BYE"))
		bvt_die(t, BVT_EXIT_ERROR, "expected BYE, got: %s", line);
	if (t->is_server)
		bvt_ctl_send(t, "BYE");
	summary(t);
	printf("bvtraffic: PASS: %" PRIu64 " messages, %" PRIu64 " bytes, every byte checked\n",
	       t->total_msgs, t->total_bytes);
	return BVT_EXIT_OK;
}
