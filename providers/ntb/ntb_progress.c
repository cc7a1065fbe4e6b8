// SPDX-License-Identifier: MIT
/*
 * The engine and the progress thread.
 *
 * The engine is one pass over everything this context does: consume every peer's response
 * and request rings, retransmit and time out, transmit what waited for credits. Any thread may
 * run it: poll_cq runs it when the CQ is empty (so an application that polls gets its
 * completions and serves incoming requests itself, with no thread switch), and the progress
 * thread runs it when the application does not call verbs at all (one-sided targets, a thread
 * blocked in ibv_get_cq_event). Rings are claimed with trylock: two threads never wait for each
 * other to do the same work.
 *
 * The progress thread polls for a while after it last found work (spin_us: a blocking wake-up
 * costs ~50 us on the test machines, so a short burst of traffic keeps it hot), then sleeps.
 * While the application itself polls, it naps and leaves the peers QUIET (they never ring: no
 * system call per message anywhere). Otherwise it clears QUIET in every peer's pair block
 * (after which a writer rings our doorbell), looks once more (the reader half of the Dekker
 * handshake in ntb_tx_publish), and blocks on the doorbell, ntbd's relay and its poke fd.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "ntb.h"

#define ENGINE_BUDGET	64	/* messages per ring per pass */
#define NAP_MS		1	/* while the application polls */
#define APP_ACTIVE_NS	2000000ull	/* it polled this recently: it is polling */
#define SERVE_NS	50000000ull	/* ... but left messages waiting: serve them this long */
#define LINK_CHECK_MS	1000	/* a blocked progress thread with QPs looks at the link */

void ntb_timer(struct ntb_context *ctx, uint64_t when)
{
	uint64_t cur = atomic_load_explicit(&ctx->next_sweep, memory_order_relaxed);

	while (when < cur && !atomic_compare_exchange_weak(&ctx->next_sweep, &cur, when))
		;
	/* a blocked progress thread only needs waking if it would sleep past it */
	if (when < atomic_load_explicit(&ctx->wake_at, memory_order_acquire))
		ntb_progress_poke(ctx);
}

static void sweep(struct ntb_context *ctx, uint64_t now, int *work)
{
	if (pthread_mutex_trylock(&ctx->lock))
		return;
	ctx->want_sweep = false;
	/* timers set from here on (other threads) lower it again: ntb_timer */
	atomic_store(&ctx->next_sweep, UINT64_MAX);
	/* a QP waits before it fails for a departed peer (peers_gone): keep its time */
	if (ctx->peers_gen != ctx->peers_defer_gen)
		ntb_timer(ctx, ctx->peers_recheck);
	for (struct ntb_qp *qp = ctx->qp_list; qp; qp = qp->next) {
		/* unlocked hints: nothing queued, nothing unanswered */
		if (qp->sq_tail == qp->sq_head && !qp->cur_active)
			continue;
		if (pthread_mutex_trylock(&qp->sq_lock)) {
			ctx->want_sweep = true;
			continue;
		}
		*work += ntb_qp_timers(qp, now);
		ntb_qp_tx(qp);
		ntb_qp_complete_sq(qp);
		if (qp->deadline)
			ntb_timer(ctx, qp->deadline);
		if (qp->rnr_until)
			ntb_timer(ctx, qp->rnr_until);
		if (qp->sq_tx != qp->sq_head && !qp->rnr_until && qp_state(qp) == IBV_QPS_RTS)
			ctx->want_sweep = true;		/* waiting for credits */
		pthread_mutex_unlock(&qp->sq_lock);
		if (qp_state(qp) == IBV_QPS_ERR && qp->cur_active && qp->peer) {
			pthread_mutex_lock(&qp->peer->rx_lock);
			ntb_qp_flush_cur(qp);
			pthread_mutex_unlock(&qp->peer->rx_lock);
		}
	}
	pthread_mutex_unlock(&ctx->lock);
}

static bool rx_pending(struct ntb_context *ctx)
{
	unsigned int n = atomic_load_explicit(&ctx->nactive, memory_order_acquire);

	for (unsigned int i = 0; i < n; i++)
		if (ntb_rx_pending(ctx->active[i]))
			return true;
	return false;
}

/* Both ends' table generations as one number: it changes when either does. */
static uint64_t tables_gen(struct ntb_context *ctx)
{
	return atomic_load_explicit(&ctx->ends[NTB_END_PEER].ctrl->gen, memory_order_acquire) +
	       atomic_load_explicit(&ctx->ends[NTB_END_LOCAL].ctrl->gen, memory_order_acquire);
}

/*
 * The link session ended (ntb_link_alive): take in what the peer wrote before it did (answers
 * to our requests, its requests), then every QP's outstanding work completes with an error and
 * every receive is flushed - an application blocked on a completion gets one, nothing waits
 * for a peer that is gone. Once per context.
 */
static void link_failed(struct ntb_context *ctx)
{
	unsigned int n = atomic_load_explicit(&ctx->nactive, memory_order_acquire);

	if (atomic_exchange(&ctx->link_failed, true))
		return;
	for (unsigned int i = 0; i < n; i++) {
		struct ntb_peer *p = ctx->active[i];

		pthread_mutex_lock(&p->rx_lock);
		if (ntb_rx_pending(p) && ntb_peer_rx_sync(p)) {
			ntb_comp_process(p, ENGINE_BUDGET * 16);
			ntb_resp_process(p, ENGINE_BUDGET * 16);
		}
		pthread_mutex_unlock(&p->rx_lock);
	}
	pthread_mutex_lock(&ctx->lock);
	for (struct ntb_qp *qp = ctx->qp_list; qp; qp = qp->next) {
		pthread_mutex_lock(&qp->sq_lock);
		ntb_qp_unreachable(qp);
		pthread_mutex_unlock(&qp->sq_lock);
		if (qp->peer) {
			pthread_mutex_lock(&qp->peer->rx_lock);
			ntb_qp_flush_cur(qp);
			pthread_mutex_unlock(&qp->peer->rx_lock);
		}
		ntb_qp_flush_rq(qp);
	}
	pthread_mutex_unlock(&ctx->lock);
}

/*
 * Connected QPs whose peer client left - killed, exited, closed its context: its ntbd
 * released the slot and bumped its table generation - go to ERROR (ntb_qp_unreachable(),
 * receives flushed), so that nothing waits for ever for a peer that is gone:
 *  - not before everything the client sent before it left has been consumed (its ACKs, its
 *    last messages: at most PEER_DRAIN_NS);
 *  - at once when sends are outstanding: nothing can answer them (the transport timer would
 *    say the same after its retries);
 *  - a QP with only receives posted after PEER_GRACE_NS. IB would leave it waiting for ever
 *    (a responder has no timer), but an NTB end knows for certain that its peer is gone. The
 *    grace keeps a peer's ordinary exit invisible: a program that got its last completions
 *    just before the peer left (ibv_rc_pingpong's server) polls them long before any flush
 *    follows them into its CQ.
 * Runs when the generation changed, and again when a QP's wait is over. Returns how many QPs
 * failed.
 */
#define PEER_DRAIN_NS	2000000000ull
#define PEER_GRACE_NS	2000000000ull

static int peers_gone(struct ntb_context *ctx, uint64_t gen)
{
	uint64_t now = ntb_now(), next = UINT64_MAX;
	int failed = 0;

	if (pthread_mutex_trylock(&ctx->lock))
		return 0;		/* the next pass looks again */
	for (struct ntb_qp *qp = ctx->qp_list; qp; qp = qp->next) {
		struct ntb_peer *p;
		uint64_t until = 0;
		uint32_t e;
		int st;

		if (qp->type == IBV_QPT_UD)
			continue;
		pthread_mutex_lock(&qp->sq_lock);
		p = qp->peer;
		st = qp_state(qp);
		e = p ? ntb_slot_epoch(p) : 0;
		if (!p || st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_ERR ||
		    e == qp->peer_epoch) {
			pthread_mutex_unlock(&qp->sq_lock);
			continue;
		}
		if (!qp->peer_gone_ns)
			qp->peer_gone_ns = now;
		/* what it sent before it left is still ours to take in (ntb_peer_rx_sync) */
		if (e == qp->peer_epoch + 1 && ntb_rx_pending(p) && !p->garbage)
			until = qp->peer_gone_ns + PEER_DRAIN_NS;
		else if (qp->sq_tail == qp->sq_head)
			until = qp->peer_gone_ns + PEER_GRACE_NS;
		if (now < until) {
			pthread_mutex_unlock(&qp->sq_lock);
			/* draining: look again soon; receives only: when the grace is over */
			if (until - qp->peer_gone_ns == PEER_DRAIN_NS && until > now + 10000000ull)
				until = now + 10000000ull;
			if (until < next)
				next = until;
			continue;
		}
		ntb_qp_unreachable(qp);
		pthread_mutex_unlock(&qp->sq_lock);
		pthread_mutex_lock(&p->rx_lock);
		ntb_qp_flush_cur(qp);
		pthread_mutex_unlock(&p->rx_lock);
		ntb_qp_flush_rq(qp);
		failed++;
	}
	if (next != UINT64_MAX) {
		/* the generation stays unseen: look again then (or when it changes again) */
		ctx->peers_defer_gen = gen;
		ctx->peers_recheck = next;
		ntb_timer(ctx, next);
	} else {
		ctx->peers_defer_gen = gen;
		ctx->peers_gen = gen;
	}
	pthread_mutex_unlock(&ctx->lock);
	return failed;
}

int ntb_engine(struct ntb_context *ctx, bool from_app)
{
	uint64_t gen;
	int work = 0;
	uint64_t now;
	unsigned int n;

	if (!ctx->attached)
		return 0;
	if (!ntb_link_alive(ctx)) {
		if (!atomic_load_explicit(&ctx->link_failed, memory_order_relaxed)) {
			link_failed(ctx);
			work = 1;
		}
		if (!from_app && ctx->nev)
			ntb_flush_events(ctx);
		return work;
	}
	/* blocks written for us that appeared (or went) */
	if (atomic_load_explicit(ctx->ends[NTB_END_PEER].dgen, memory_order_relaxed) !=
		    ctx->ends[NTB_END_PEER].dgen_seen ||
	    atomic_load_explicit(ctx->ends[NTB_END_LOCAL].dgen, memory_order_relaxed) !=
		    ctx->ends[NTB_END_LOCAL].dgen_seen)
		work += ntb_pairs_scan(ctx);
	n = atomic_load_explicit(&ctx->nactive, memory_order_acquire);
	for (unsigned int i = 0; i < n; i++) {
		struct ntb_peer *p = ctx->active[i];

		if (!p->dirty && !ntb_rx_pending(p) &&
		    atomic_load_explicit(&p->end->dir[p->slot].seq, memory_order_relaxed) ==
			    p->rx_seq)
			continue;
		if (pthread_mutex_trylock(&p->rx_lock))
			continue;
		if (ntb_peer_rx_sync(p)) {
			/* responses first: they free credits and never wait */
			work += ntb_comp_process(p, ENGINE_BUDGET);
			work += ntb_resp_process(p, ENGINE_BUDGET);
		}
		pthread_mutex_unlock(&p->rx_lock);
	}
	if (work)
		atomic_fetch_add_explicit(&ctx->consumed, work, memory_order_relaxed);
	/* local loads: the peer's ntbd writes its table generation into our window, ours
	 * into the loopback memory */
	gen = tables_gen(ctx);
	now = ntb_now();
	if (gen != ctx->peers_gen && (gen != ctx->peers_defer_gen || now >= ctx->peers_recheck))
		work += peers_gone(ctx, gen);
	if (ctx->want_sweep || now >= atomic_load_explicit(&ctx->next_sweep, memory_order_relaxed))
		sweep(ctx, now, &work);
	/*
	 * Async events go through ntbd (a request and its answer): not from an application
	 * thread in poll_cq, which must never wait for a daemon (a stopped one would hang it).
	 */
	if (!from_app && ctx->nev)
		ntb_flush_events(ctx);
	/* blocks to open: a call into ntbd, as the events */
	if (!from_app && atomic_load_explicit(&ctx->want_open, memory_order_relaxed))
		ntb_pairs_open_pending(ctx);
	return work;
}

void ntb_progress_poke(struct ntb_context *ctx)
{
	static const uint64_t one = 1;

	if (atomic_load_explicit(&ctx->sleeping, memory_order_acquire) && ctx->poke_fd >= 0) {
		ssize_t r = write(ctx->poke_fd, &one, sizeof(one));
		(void)r;
	}
}

static void drain(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof(v));

	(void)r;
}

/* Until the next timer is due, at most cap ms (cap < 0: no limit; -1 returned: no timer). */
static int sleep_ms(struct ntb_context *ctx, uint64_t now, int cap)
{
	uint64_t next = atomic_load(&ctx->next_sweep);
	uint64_t ms;

	if (next <= now)
		return 0;
	if (next == UINT64_MAX)
		return cap;
	ms = (next - now + 999999) / 1000000;
	if (cap >= 0 && ms > (uint64_t)cap)
		ms = cap;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

static void block(struct ntb_context *ctx, int timeout)
{
	struct pollfd pfd[3];
	int nfd = 0;

	atomic_store_explicit(&ctx->wake_at, timeout < 0 ? UINT64_MAX :
					     ntb_now() + (uint64_t)timeout * 1000000ull,
			      memory_order_seq_cst);
	pfd[nfd++] = (struct pollfd){ .fd = ctx->poke_fd, .events = POLLIN };
	if (ctx->relay_fd >= 0)
		pfd[nfd++] = (struct pollfd){ .fd = ctx->relay_fd, .events = POLLIN };
	if (ctx->db_bits)
		pfd[nfd++] = (struct pollfd){ .fd = ntb_event_fd(ctx->hal), .events = POLLIN };
	atomic_store_explicit(&ctx->sleeping, 1, memory_order_seq_cst);
	/*
	 * A writer blocked on credits after the bells were armed: re-arm instead of sleeping;
	 * a block to open (Dekker with ntb_pair_want: its flag, then our sleeping state).
	 */
	if (!atomic_load(&ctx->stop) && !(timeout < 0 && ntb_bells_stale(ctx)) &&
	    !atomic_load(&ctx->want_open))
		poll(pfd, nfd, timeout);
	atomic_store_explicit(&ctx->sleeping, 0, memory_order_relaxed);
	atomic_store_explicit(&ctx->wake_at, 0, memory_order_relaxed);
	drain(ctx->poke_fd);
	if (ctx->relay_fd >= 0)
		drain(ctx->relay_fd);
	if (ctx->db_bits) {
		uint64_t bits;

		ntb_events(ctx->hal);
		bits = ntb_db_read(ctx->hal) & ctx->db_bits;
		if (bits)
			ntb_db_clear(ctx->hal, bits);
	}
	atomic_store_explicit(ctx->my_vbell, 0, memory_order_relaxed);
}

static void *progress_main(void *arg)
{
	struct ntb_context *ctx = arg;
	uint64_t last_work = ntb_now(), last_polls = atomic_load(&ctx->polls), polled = 0;
	uint64_t serve_until = 0;	/* the application polls, but not for what arrives */
	uint64_t spin_ns = (uint64_t)ctx->spin_us * 1000;
	bool quiet = false;

	while (!atomic_load_explicit(&ctx->stop, memory_order_acquire)) {
		uint64_t now = ntb_now(), polls = atomic_load_explicit(&ctx->polls,
								       memory_order_relaxed);

		if (polls != last_polls) {
			last_polls = polls;
			polled = now;
		}
		if (now - polled < APP_ACTIVE_NS && !atomic_load(&ctx->armed_cqs) &&
		    now >= serve_until) {
			uint64_t consumed = atomic_load_explicit(&ctx->consumed,
								 memory_order_relaxed);

			/*
			 * The application polls, and runs the engine from poll_cq: compete with
			 * it for neither the rings nor the CPU (2 cores, 2 spinning applications).
			 * Look again in a millisecond; the peers need not ring meanwhile.
			 */
			if (!quiet) {
				ntb_bells_arm(ctx, false);
				quiet = true;
			}
			/*
			 * No engine pass here: it would take the locks the application's
			 * poll_cq needs, and on a loaded machine a preempted lock holder
			 * stalls the application for a time slice.
			 */
			block(ctx, NAP_MS);
			/*
			 * Events the application's poll_cq raised (it never calls ntbd: a
			 * stopped daemon must not hang it); a lost link it notices itself.
			 */
			if (ctx->nev)
				ntb_flush_events(ctx);
			if (atomic_load_explicit(&ctx->want_open, memory_order_relaxed))
				ntb_pairs_open_pending(ctx);
			/*
			 * Messages waited a whole nap and nobody consumed anything: the
			 * application polls a CQ now and then but waits elsewhere (on memory a
			 * one-sided operation writes). Serve them ourselves for a while.
			 */
			if (rx_pending(ctx) &&
			    atomic_load_explicit(&ctx->consumed, memory_order_relaxed) == consumed)
				serve_until = ntb_now() + SERVE_NS;
			last_work = 0;
			continue;
		}
		if (ntb_engine(ctx, false)) {
			last_work = ntb_now();
			if (!quiet) {
				/* awake and polling: writers need not ring */
				ntb_bells_arm(ctx, false);
				quiet = true;
			}
			continue;
		}
		if (now - last_work < spin_ns) {
			ntb_cpu_relax();
			continue;
		}
		ntb_bells_arm(ctx, true);
		quiet = false;
		/* a writer that saw us QUIET before the store above did not ring: look */
		if (ntb_engine(ctx, false) || ntb_bells_stale(ctx)) {
			last_work = ntb_now();
			continue;
		}
		/*
		 * With QPs, look at the link now and then even when nothing is due: a peer that
		 * dies or hangs may never ring us again, and work waiting on it must fail.
		 */
		block(ctx, sleep_ms(ctx, ntb_now(), ctx->qp_list ? LINK_CHECK_MS : -1));
		last_work = ntb_now();
	}
	return NULL;
}

int ntb_progress_start(struct ntb_context *ctx)
{
	int ret;

	if (ctx->thread_running)
		return 0;
	atomic_store(&ctx->stop, false);
	atomic_store(&ctx->next_sweep, ntb_now());
	ret = pthread_create(&ctx->thread, NULL, progress_main, ctx);
	if (ret)
		return ret;
	ctx->thread_running = true;
	return 0;
}

void ntb_progress_stop(struct ntb_context *ctx)
{
	static const uint64_t one = 1;
	ssize_t r;

	if (!ctx->thread_running)
		return;
	atomic_store(&ctx->stop, true);
	r = write(ctx->poke_fd, &one, sizeof(one));
	(void)r;
	pthread_join(ctx->thread, NULL);
	ctx->thread_running = false;
}
