// SPDX-License-Identifier: MIT
/*
 * Waiting for completions (polling, or asleep on the completion channel), with the async
 * events and the control connection watched meanwhile; what an error completion, a fatal
 * event or a vanished peer ends the run with.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "window.h"

#define WR_PROBE (3ull << 48)

static const char *status_name(enum ibv_wc_status s)
{
	static const char *const names[] = {
	    [IBV_WC_SUCCESS] = "SUCCESS",
	    [IBV_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
	    [IBV_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
	    [IBV_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
	    [IBV_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
	    [IBV_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
	    [IBV_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
	    [IBV_WC_REM_OP_ERR] = "REM_OP_ERR",
	    [IBV_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
	    [IBV_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
	    [IBV_WC_REM_ABORT_ERR] = "REM_ABORT_ERR",
	    [IBV_WC_FATAL_ERR] = "FATAL_ERR",
	    [IBV_WC_GENERAL_ERR] = "GENERAL_ERR",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "?";
}

/* Print the async events waiting; with fatal, the first fatal one ends the run. */
static void async_read(struct bvt *t, bool fatal)
{
	struct pollfd p = {.fd = t->ctx->async_fd, .events = POLLIN};
	struct ibv_async_event ev;

	while (poll(&p, 1, 0) == 1) {
		if (ibv_get_async_event(t->ctx, &ev)) {
			if (p.revents & (POLLHUP | POLLERR))
				bvt_die(t, BVT_EXIT_ERROR,
					"the device's async event channel closed "
					"(its driver is gone)");
			return;
		}
		fprintf(stderr, "bvtraffic: async event %s\n", ibv_event_type_str(ev.event_type));
		if (!fatal) {
			ibv_ack_async_event(&ev);
			continue;
		}
		switch (ev.event_type) {
		case IBV_EVENT_DEVICE_FATAL:
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_CQ_ERR:
		case IBV_EVENT_SRQ_ERR:
			ibv_ack_async_event(&ev);
			bvt_die(t, BVT_EXIT_ERROR, "fatal async event %s",
				ibv_event_type_str(ev.event_type));
		default:
			ibv_ack_async_event(&ev);
		}
	}
}

static void async_events(struct bvt *t)
{
	async_read(t, true);
}

static void stall_check(struct bvt *t, const char *what)
{
	if (bvt_now_ms() - t->progress_at_ms > t->loc.stall_s * 1000ull)
		bvt_die(t, BVT_EXIT_STALL, "nothing for %u s while waiting for %s: a hang",
			t->loc.stall_s, what);
}

/* A control line arrived in the middle of a window: only the peer's ABORT (or EOF) may. */
static void unexpected_line(struct bvt *t)
{
	char line[BVT_LINE];

	bvt_ctl_recv(t, line, 1000);
	if (!strncmp(line, "BAD ", 4))
		bvt_die(t, BVT_EXIT_DATA, "DATA ERROR (found by the responder): %s", line + 4);
	bvt_die(t, BVT_EXIT_ERROR, "unexpected from the peer: %s", line);
}

static int got(struct bvt *t, int n)
{
	uint64_t now = bvt_now_ms();

	t->gap_ms = now - t->progress_at_ms;
	t->progress_at_ms = now;
	return n;
}

/* Asleep on the channel: arm, poll once more (a completion may precede the arm), sleep. */
static int wait_event(struct bvt *t, bool peek, uint64_t end, const char *what)
{
	struct pollfd p[3] = {{.fd = t->ch->fd, .events = POLLIN},
			      {.fd = t->sock, .events = POLLIN},
			      {.fd = t->ctx->async_fd, .events = POLLIN}};
	struct ibv_cq *cq;
	void *cq_ctx;
	int64_t left = (int64_t)(end - bvt_now_ms());

	if (!t->armed) {
		if (ibv_req_notify_cq(t->cq, 0))
			bvt_die(t, BVT_EXIT_ERROR, "req_notify_cq: %s", strerror(errno));
		t->armed = true;
		return 1; /* poll again before sleeping */
	}
	if (left <= 0)
		return 0;
	if (poll(p, 3, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
		bvt_die(t, BVT_EXIT_ERROR, "poll: %s", strerror(errno));
	if (p[0].revents & POLLIN) {
		if (ibv_get_cq_event(t->ch, &cq, &cq_ctx) || cq != t->cq)
			bvt_die(t, BVT_EXIT_ERROR, "get_cq_event: an event for another CQ");
		ibv_ack_cq_events(cq, 1);
		t->armed = false;
	}
	if (p[2].revents)
		async_events(t);
	if (p[1].revents) {
		if (peek)
			return 0;
		unexpected_line(t);
	}
	stall_check(t, what);
	return 1;
}

int bvt_wait_wc(struct bvt *t, struct ibv_wc *wc, int max, bool peek, int timeout_ms,
		const char *what)
{
	uint64_t start = bvt_now_ms(), end = start + (uint64_t)timeout_ms;
	unsigned int spins = 0;

	/* completions may keep coming after a fatal event: look at least every millisecond */
	if (start != t->async_checked_ms) {
		t->async_checked_ms = start;
		async_events(t);
	}
	for (;;) {
		int n = ibv_poll_cq(t->cq, max, wc);

		if (n < 0)
			bvt_die(t, BVT_EXIT_ERROR, "poll_cq failed: %d", n);
		if (n)
			return got(t, n);
		if (t->ch) {
			if (!wait_event(t, peek, end, what))
				return 0;
			continue;
		}
		if (++spins % 128)
			continue;
		async_events(t);
		if (bvt_ctl_pending(t)) {
			if (peek)
				return 0;
			unexpected_line(t);
		}
		stall_check(t, what);
		if (bvt_now_ms() >= end)
			return 0;
		/* two CPUs shared with the daemons: spin briefly, then let others run */
		if (bvt_now_ms() - start > 2)
			usleep(50);
		else
			sched_yield();
	}
}

_Noreturn void bvt_data_error(struct bvt *t, bool requester, const char *why)
{
	if (!requester)
		bvt_ctl_send(t, "BAD %s", why);
	bvt_die(t, BVT_EXIT_DATA, "DATA ERROR: %s", why);
}

_Noreturn void bvt_wc_error(struct bvt *t, const struct ibv_wc *wc, const char *role)
{
	struct ibv_wc more[16];
	unsigned int flushed = 0, other = 0;
	uint64_t end = bvt_now_ms() + 1000;
	char msg[320];

	snprintf(msg, sizeof(msg),
		 "error completion %s (%s), vendor error 0x%x, %s QP %d (0x%x), "
		 "wr_id 0x%" PRIx64 ", %" PRIu64 " ms after the completion before it",
		 status_name(wc->status), ibv_wc_status_str(wc->status), wc->vendor_err, role,
		 bvt_qp_index(t, wc->qp_num), wc->qp_num, (uint64_t)wc->wr_id, t->gap_ms);
	while (bvt_now_ms() < end) {
		int n = ibv_poll_cq(t->cq, 16, more);

		for (int i = 0; i < n; i++)
			*(more[i].status == IBV_WC_WR_FLUSH_ERR ? &flushed : &other) += 1;
		if (n <= 0)
			usleep(1000);
	}
	async_read(t, false); /* what the device said meanwhile (a fatal event?) */
	bvt_die(t, BVT_EXIT_ERROR, "%s; then %u flushed, %u other completions", msg, flushed,
		other);
}

/*
 * The control connection died: the peer process is gone, or its host. What do our QPs say?
 * Each RC QP gets one more signaled WRITE (into the peer's atomic area, which no window
 * uses then); it and what was still outstanding end as the fabric ends them: retries
 * exceeded, or flushed behind that.
 */
_Noreturn void bvt_peer_gone(struct bvt *t, const char *why)
{
	bool done[BVT_MAX_QP] = {false};
	enum ibv_wc_status first[BVT_MAX_QP];
	unsigned int flushed[BVT_MAX_QP] = {0}, left = t->cfg.nqp;
	uint64_t t0 = bvt_now_ms(), end = t0 + t->loc.stall_s * 1000ull, at[BVT_MAX_QP];

	t->sock_dead = true;
	if (!t->qps_up || t->cfg.type != IBV_QPT_RC || t->probing)
		bvt_die(t, BVT_EXIT_ERROR, "the peer is gone (%s)", why);
	t->probing = true;
	fprintf(stderr, "bvtraffic: the peer is gone (%s); probing the QPs\n", why);
	for (uint32_t qp = 0; qp < t->cfg.nqp; qp++) {
		struct ibv_sge sge = {(uintptr_t)bvt_counter(t, qp), 8, t->mr->lkey};
		struct ibv_send_wr wr = {.wr_id = WR_PROBE | qp,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;

		first[qp] = IBV_WC_SUCCESS;
		wr.wr.rdma.remote_addr = t->peer.addr + (uint64_t)(bvt_counter(t, qp) - t->buf);
		wr.wr.rdma.rkey = t->peer.rkey;
		if (ibv_post_send(t->qp[qp], &wr, &bad)) {
			fprintf(stderr, "bvtraffic: QP %u: the probe cannot be posted: %s\n", qp,
				strerror(errno));
			done[qp] = true;
			left--;
		}
	}
	while (left && bvt_now_ms() < end) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(t->cq, 16, wc);

		if (n <= 0) {
			usleep(200);
			continue;
		}
		for (int i = 0; i < n; i++) {
			int qp = bvt_qp_index(t, wc[i].qp_num);

			if (qp < 0 || done[qp])
				continue;
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				flushed[qp]++;
			else if (wc[i].status != IBV_WC_SUCCESS && first[qp] == IBV_WC_SUCCESS) {
				first[qp] = wc[i].status;
				at[qp] = bvt_now_ms() - t0;
			}
			if (wc[i].wr_id == (WR_PROBE | (uint64_t)qp)) {
				done[qp] = true;
				left--;
			}
		}
	}
	for (uint32_t qp = 0; qp < t->cfg.nqp; qp++) {
		if (!done[qp])
			fprintf(stderr, "bvtraffic: QP %u: no completion for the probe in %u s\n",
				qp, t->loc.stall_s);
		else if (first[qp] != IBV_WC_SUCCESS)
			fprintf(stderr,
				"bvtraffic: QP %u: error completion %s (%s) %" PRIu64
				" ms after the peer went, then %u flushed\n",
				qp, status_name(first[qp]), ibv_wc_status_str(first[qp]), at[qp],
				flushed[qp]);
		else if (flushed[qp])
			fprintf(stderr, "bvtraffic: QP %u: %u flushed (WR_FLUSH_ERR)\n", qp,
				flushed[qp]);
		else
			fprintf(stderr,
				"bvtraffic: QP %u: the probe WRITE succeeded: the peer's QP "
				"still answers\n",
				qp);
	}
	bvt_die(t, left ? BVT_EXIT_STALL : BVT_EXIT_ERROR, "the peer is gone (%s)", why);
}
