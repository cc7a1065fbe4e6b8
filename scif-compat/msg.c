// SPDX-License-Identifier: MIT
/*
 * scif_send / scif_recv (docs/scif.md "Messaging"): a byte stream through a ring in the
 * receiver's memory. The sender copies the bytes into its staging mirror of the ring, RDMA
 * WRITEs them into the peer's ring and then its producer and consumer counts into the peer's
 * struct scif_ctl (one post, in order on the RC queue pair); the receiver polls its own memory
 * and copies the bytes out. Credits (the receiver's consumer count) come back in the same
 * ctl writes of the reverse direction, or on their own once a quarter of the ring is consumed.
 * A ping-pong thus costs each side one post and no system call, no completion and no thread.
 *
 * Sleeping: a reader that found nothing spins (busy for SCIF_PAUSE_NS, then yielding; in all
 * twice its average recent wait for data that came within SCIF_SPIN_MAX_NS, at least
 * SCIF_SPIN_NS), then arms: it bumps want_data in the writer's memory and, in the same post,
 * RDMA READs the writer's published producer count (struct scif_pub). The writer stores its
 * producer count, fences, and reads want_data after every send: if it changed it sends
 * WAKE_DATA, which the progress thread turns into POLLIN on the descriptor the reader sleeps
 * on. Both sides store before they load, in the writer's memory, so either the writer sees
 * the request or the READ sees the data coming: no wake-up is lost. Writers waiting for
 * credits do the same with want_credit.
 *
 * SCIF semantics kept: a call holds the endpoint's send or receive mutex for its whole
 * duration; a non-blocking call moves what it can (possibly 0, never EAGAIN); a blocking call
 * returns early with the count moved so far on a signal (EINTR if nothing moved) or a
 * disconnect; after the peer is gone, queued bytes can still be received, then ECONNRESET.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "scif_priv.h"

static inline enum scif_state state_of(struct scif_ep *ep)
{
	return __atomic_load_n(&ep->state, __ATOMIC_ACQUIRE);
}

void scif_msg_init(struct scif_ep *ep)
{
	struct scif_conn *c = ep->conn;

	ep->tx.prod = ep->tx.cons = 0;
	ep->tx.size = c->r_ring_size;
	ep->rx.prod = ep->rx.cons = 0;
	ep->rx.size = SCIF_RING_SIZE;
	ep->ctl_prod_sent = ep->ctl_cons_sent = 0;
	atomic_store(&ep->rx_cons_pub, 0);
	atomic_store(&ep->rx_idle_since, scif_now_ns());
	scif_epfd_unblock_out(ep);
	scif_progress_kick();	/* its timers now include this endpoint */
}

/* Scratch in lbuf for small writes when the device has no inline data. */
static uint8_t *scratch(struct scif_conn *c, int i)
{
	return c->lbuf + SCIF_NRECV * SCIF_WIRE_MSG_LEN + 16 + 16 * i;
}

/* One small RDMA WRITE of data (counts: monotonic, so a reused scratch is harmless). */
static void small_write(struct scif_conn *c, struct ibv_send_wr *wr, struct ibv_sge *sge,
			uint64_t raddr, const void *data, uint32_t len, int scr)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = c->r_rkey;
	sge->length = len;
	if (c->max_inline >= len) {
		sge->addr = (uintptr_t)data;
		sge->lkey = 0;
		wr->send_flags = IBV_SEND_INLINE;
	} else {
		memcpy(scratch(c, scr), data, len);
		sge->addr = (uintptr_t)scratch(c, scr);
		sge->lkey = c->lbuf_mr->lkey;
	}
}

/* The ctl counts write: our producer count and our consumer count. Under sq_lock. */
static void ctl_write(struct scif_ep *ep, struct scif_conn *c, struct ibv_send_wr *wr,
		      struct ibv_sge *sge, uint64_t counts[2])
{
	counts[0] = ep->tx.prod;
	counts[1] = atomic_load(&ep->rx_cons_pub);
	small_write(c, wr, sge, c->r_ctl, counts, SCIF_CTL_COUNTS_LEN, 0);
	ep->ctl_prod_sent = counts[0];
	ep->ctl_cons_sent = counts[1];
}

/*
 * Post an arm (which: 0 waits for data, 1 for credits) unless one is in flight: bump the want
 * count in the peer's memory and read where the peer is. Without want, only read: a peek at
 * the peer's consumer count, for a non-blocking send that finds the ring full by our count.
 * Under sq_lock. Returns the arm generation to wait for.
 */
static int arm_post(struct scif_ep *ep, int which, bool want, bool async, uint64_t *gen)
{
	struct scif_conn *c = ep->conn;
	struct ibv_send_wr w[2];
	struct ibv_sge s[2];
	uint32_t seq;

	*gen = ep->arm_gen[which] + 1;
	if (ep->arm_state[which] == SCIF_ARM_POSTED) {
		ep->arm_async[which] &= async;	/* a thread waits for this one now */
		return 0;
	}
	ep->arm_async[which] = async;
	if (want) {
		seq = which ? ++ep->my_want_credit : ++ep->my_want_data;
		small_write(c, &w[0], &s[0],
			    c->r_ctl + (which ? SCIF_CTL_WANT_CREDIT_OFF : SCIF_CTL_WANT_DATA_OFF),
			    &seq, 4, 1 + which);
	}
	memset(&w[1], 0, sizeof(w[1]));
	w[1].opcode = IBV_WR_RDMA_READ;
	w[1].sg_list = &s[1];
	w[1].num_sge = 1;
	w[1].wr.rdma.remote_addr = c->r_ctl + sizeof(struct scif_ctl) +
				   (which ? offsetof(struct scif_pub, rx_cons) :
					    offsetof(struct scif_pub, tx_prod));
	w[1].wr.rdma.rkey = c->r_rkey;
	w[1].wr_id = (uint64_t)(which ? SCIF_WR_ARM_TX : SCIF_WR_ARM_RX) << 56;
	s[1].addr = (uintptr_t)&c->arm_slot[which];
	s[1].length = 8;
	s[1].lkey = c->lbuf_mr->lkey;
	w[0].next = &w[1];
	if (scif_sq_post(ep, want ? w : &w[1]))
		return -ECONNRESET;
	ep->arm_state[which] = SCIF_ARM_POSTED;
	ibv_req_notify_cq(c->scq, 0);	/* the progress thread looks at the result too */
	return 0;
}

void scif_msg_arm_done(struct scif_ep *ep, int which)
{
	uint64_t v = __atomic_load_n(&ep->conn->arm_slot[which], __ATOMIC_ACQUIRE);

	ep->arm_seen[which] = v;
	/* the peer's published consumer count is a credit as good as the one it writes us */
	if (which && v > ep->tx_cons_read)
		ep->tx_cons_read = v;
	ep->arm_state[which] = SCIF_ARM_DONE;
	ep->arm_gen[which]++;
}

/* Poll our own completions until the arm of generation gen is done. Under sq_lock. */
static int arm_wait(struct scif_ep *ep, int which, uint64_t gen)
{
	uint64_t start = scif_now_ns();

	while (ep->arm_gen[which] < gen) {
		if (ep->sq_err)
			return -ep->sq_err;
		if (!scif_sq_poll(ep)) {
			if (scif_now_ns() - start > 10 * SCIF_SPIN_NS) {
				/* the READ waits for the peer's engine: let it run */
				pthread_mutex_unlock(&ep->sq_lock);
				sched_yield();
				pthread_mutex_lock(&ep->sq_lock);
			}
		}
		if (state_of(ep) != SCIF_CONNECTED)
			return -ECONNRESET;
	}
	return 0;
}

/* Post an arm and wait for its result (in ep->arm_seen[which]); without want, a peek only. */
static int arm_sync(struct scif_ep *ep, int which, bool want)
{
	uint64_t gen;
	int ret;

	pthread_mutex_lock(&ep->sq_lock);
	ret = arm_post(ep, which, want, false, &gen);
	if (!ret)
		ret = arm_wait(ep, which, gen);
	ep->arm_state[which] = SCIF_ARM_IDLE;
	pthread_mutex_unlock(&ep->sq_lock);
	return ret;
}

/* Post an arm that no thread waits for: the progress thread reads its result (arm_results). */
static void arm_nowait(struct scif_ep *ep, int which)
{
	uint64_t gen;

	pthread_mutex_lock(&ep->sq_lock);
	arm_post(ep, which, true, true, &gen);
	pthread_mutex_unlock(&ep->sq_lock);
}

/* The peer's producer count, checked (torn reads settle, lies do not). */
static int read_prod(struct scif_ep *ep, uint64_t *prod)
{
	struct scif_conn *c = ep->conn;

	for (int i = 0; i < 100; i++) {
		uint64_t p = atomic_load_explicit(&c->ctl->prod, memory_order_acquire);

		if (scif_ring_prod_ok(&ep->rx, p)) {
			*prod = p;
			return 0;
		}
		sched_yield();
	}
	return -EPROTO;
}

static int read_cons(struct scif_ep *ep, uint64_t *cons)
{
	struct scif_conn *c = ep->conn;
	uint64_t r;

	pthread_mutex_lock(&ep->sq_lock);
	r = ep->tx_cons_read;
	pthread_mutex_unlock(&ep->sq_lock);
	for (int i = 0; i < 100; i++) {
		uint64_t v = atomic_load_explicit(&c->ctl->cons, memory_order_acquire);

		if (v < r)
			v = r;
		if (scif_ring_cons_ok(&ep->tx, v)) {
			*cons = v;
			return 0;
		}
		sched_yield();
	}
	return -EPROTO;
}

static void hostile(struct scif_ep *ep, const char *what)
{
	pthread_mutex_lock(&ep->lock);
	if (ep->state == SCIF_CONNECTED) {
		scif_reject_log(ep, SCIF_REJ_RING, what);
		scif_conn_lost(ep, ECONNRESET);
	}
	pthread_mutex_unlock(&ep->lock);
}

/* After producing: a reader that sleeps on our data gets its wake-up. */
static void wake_reader(struct scif_ep *ep)
{
	struct scif_conn *c = ep->conn;
	uint32_t w;

	atomic_store_explicit(&c->pub->tx_prod, ep->tx.prod, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	w = atomic_load_explicit(&c->ctl->want_data, memory_order_acquire);
	if (w != ep->want_data_seen) {
		ep->want_data_seen = w;
		scif_send_ctrl(ep, SCIF_OP_WAKE_DATA, 0, w, 0, 0, 0, 0);
	}
}

/* Copy n bytes into the staging mirror at tx.prod and post them with the counts. */
static int produce(struct scif_ep *ep, const uint8_t *src, uint32_t n)
{
	struct scif_conn *c = ep->conn;
	struct ibv_send_wr w[3];
	struct ibv_sge s[3];
	uint32_t off[2], len[2];
	uint64_t counts[2];
	int k, ret;

	k = scif_ring_split(&ep->tx, ep->tx.prod, n, off, len);
	for (int i = 0; i < k; i++) {
		memcpy(c->stage + off[i], src, len[i]);
		src += len[i];
		memset(&w[i], 0, sizeof(w[i]));
		w[i].opcode = IBV_WR_RDMA_WRITE;
		w[i].sg_list = &s[i];
		w[i].num_sge = 1;
		w[i].wr.rdma.remote_addr = c->r_ring + off[i];
		w[i].wr.rdma.rkey = c->r_rkey;
		s[i].addr = (uintptr_t)(c->stage + off[i]);
		s[i].length = len[i];
		s[i].lkey = c->stage_mr->lkey;
		if (len[i] <= c->max_inline)
			w[i].send_flags = IBV_SEND_INLINE;
		w[i].next = &w[i + 1];
	}
	pthread_mutex_lock(&ep->sq_lock);
	ep->tx.prod += n;
	ctl_write(ep, c, &w[k], &s[k], counts);
	w[k].next = NULL;
	ret = scif_sq_post(ep, w);
	if (ret)
		ep->tx.prod -= n;
	pthread_mutex_unlock(&ep->sq_lock);
	return ret;
}

int scif_msg_send(struct scif_ep *ep, void *msg, int len, int flags)
{
	const uint8_t *p = msg;
	int done = 0, ret = 0;
	uint64_t spin_start = 0;
	bool peeked = false;

	pthread_mutex_lock(&ep->send_mutex);
	while (done < len) {
		enum scif_state st = state_of(ep);
		uint64_t cons, space;

		if (st != SCIF_CONNECTED) {
			/* SCIF: EINTR when scif_close in another thread ended the wait */
			ret = st == SCIF_DISCONNECTED ? -ECONNRESET :
			      st == SCIF_CLOSING ? -EINTR : -ENOTCONN;
			break;
		}
		if (read_cons(ep, &cons)) {
			hostile(ep, "a consumer count");
			ret = -ECONNRESET;
			break;
		}
		ep->tx.cons = cons;
		space = scif_ring_space(&ep->tx);
		if (space) {
			uint32_t n = (uint32_t)((uint64_t)(len - done) < space ? (uint64_t)(len - done) : space);

			ret = produce(ep, p + done, n);
			if (ret)
				break;
			done += (int)n;
			wake_reader(ep);
			spin_start = 0;
			continue;
		}
		/* the ring is full by our count: the reader may have made room we do not know of */
		if (!(flags & SCIF_SEND_BLOCK) && !peeked) {
			peeked = true;
			ret = arm_sync(ep, 1, false);
			if (ret)
				continue;	/* the state says why */
			if (ep->arm_seen[1] > ep->tx.cons)
				continue;
		}
		if (!(flags & SCIF_SEND_BLOCK)) {
			/* no POLLOUT until credits come back */
			pthread_mutex_lock(&ep->lock);
			scif_epfd_block_out(ep);
			pthread_mutex_unlock(&ep->lock);
			arm_nowait(ep, 1);
			break;
		}
		if (!spin_start)
			spin_start = scif_now_ns();
		if (scif_now_ns() - spin_start < SCIF_SPIN_NS) {
			sched_yield();
			continue;
		}
		{
			int w;

			pthread_mutex_lock(&ep->lock);
			scif_epfd_block_out(ep);
			pthread_mutex_unlock(&ep->lock);
			ret = arm_sync(ep, 1, true);
			if (ret)
				continue;	/* the state says why */
			if (ep->arm_seen[1] > ep->tx.cons) {
				/* the reader consumed meanwhile: that is our credit */
				spin_start = 0;
				continue;
			}
			w = scif_epfd_wait(ep, POLLOUT, 1000);
			if (w == -EINTR) {
				ret = -EINTR;
				break;
			}
			spin_start = 0;
		}
	}
	pthread_mutex_unlock(&ep->send_mutex);
	return done ? done : ret;
}

/* Give credits back now: a quarter of the ring consumed, or the sender waits for them. */
static void return_credits(struct scif_ep *ep)
{
	struct scif_conn *c = ep->conn;
	struct ibv_send_wr w;
	struct ibv_sge s;
	uint64_t counts[2];
	uint32_t want;

	atomic_store_explicit(&c->pub->rx_cons, ep->rx.cons, memory_order_release);
	atomic_store_explicit(&ep->rx_cons_pub, ep->rx.cons, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	want = atomic_load_explicit(&c->ctl->want_credit, memory_order_acquire);
	if (want == ep->want_credit_seen && ep->rx.cons - ep->ctl_cons_sent < ep->rx.size / 4)
		return;
	if (state_of(ep) != SCIF_CONNECTED)
		return;
	pthread_mutex_lock(&ep->sq_lock);
	ctl_write(ep, c, &w, &s, counts);
	scif_sq_post(ep, &w);
	pthread_mutex_unlock(&ep->sq_lock);
	if (want != ep->want_credit_seen) {
		ep->want_credit_seen = want;
		scif_send_ctrl(ep, SCIF_OP_WAKE_CREDIT, 0, want, 0, 0, 0, 0);
	}
}

/* Copy out what the ring holds, up to n bytes. */
static uint32_t consume(struct scif_ep *ep, uint8_t *dst, uint32_t n)
{
	struct scif_conn *c = ep->conn;
	uint32_t off[2], len[2];
	int k;

	k = scif_ring_split(&ep->rx, ep->rx.cons, n, off, len);
	for (int i = 0; i < k; i++) {
		memcpy(dst, c->rxring + off[i], len[i]);
		dst += len[i];
	}
	ep->rx.cons += n;
	return n;
}


void scif_msg_arm_rx(struct scif_ep *ep)
{
	pthread_mutex_lock(&ep->lock);
	if (ep->state == SCIF_CONNECTED && !ep->rx_armed && !ep->pollin)
		arm_nowait(ep, 0);
	pthread_mutex_unlock(&ep->lock);
}

/*
 * How long a blocking scif_recv spins before it sleeps: twice the average wait of recent
 * receives whose data came within SCIF_SPIN_MAX_NS (waits longer than that pull the average
 * down: spinning would not have caught them), so a ping-pong over a slow link (cx4 through
 * its bridge) spins through its round trip instead of paying a wake-up for every message.
 */
static uint64_t recv_spin_ns(const struct scif_ep *ep)
{
	uint64_t s = 2 * ep->rx_wait_est;

	return s < SCIF_SPIN_NS ? SCIF_SPIN_NS : s > SCIF_SPIN_MAX_NS ? SCIF_SPIN_MAX_NS : s;
}

static void recv_waited(struct scif_ep *ep, uint64_t waited)
{
	uint64_t sample = waited <= SCIF_SPIN_MAX_NS ? waited : 0;

	ep->rx_wait_est = ep->rx_wait_est - ep->rx_wait_est / 8 + sample / 8;
}

int scif_msg_recv(struct scif_ep *ep, void *msg, int len, int flags)
{
	uint8_t *p = msg;
	int done = 0, ret = 0;
	uint64_t spin_start = 0, wait_start = 0, spin_ns = recv_spin_ns(ep);
	bool empty;

	pthread_mutex_lock(&ep->recv_mutex);
	atomic_fetch_add(&ep->rx_busy, 1);
	while (done < len) {
		enum scif_state st = state_of(ep);
		uint64_t prod;

		if (st != SCIF_CONNECTED && st != SCIF_DISCONNECTED) {
			ret = st == SCIF_CLOSING ? -EINTR : -ENOTCONN;
			break;
		}
		if (read_prod(ep, &prod)) {
			hostile(ep, "a producer count");
			st = SCIF_DISCONNECTED;
		} else {
			ep->rx.prod = prod;
		}
		if (scif_ring_used(&ep->rx)) {
			uint64_t used = scif_ring_used(&ep->rx);
			uint32_t n = (uint32_t)((uint64_t)(len - done) < used ? (uint64_t)(len - done) : used);

			done += (int)consume(ep, p + done, n);
			if (st == SCIF_CONNECTED)
				return_credits(ep);
			if (wait_start) {
				recv_waited(ep, scif_now_ns() - wait_start);
				wait_start = 0;
			}
			spin_start = 0;
			continue;
		}
		if (st == SCIF_DISCONNECTED) {
			ret = -ECONNRESET;
			break;
		}
		if (!(flags & SCIF_RECV_BLOCK))
			break;
		if (!spin_start)
			spin_start = scif_now_ns();
		if (!wait_start)
			wait_start = spin_start;
		if (scif_now_ns() - spin_start < spin_ns) {
			scif_spin_step(scif_now_ns() - spin_start);
			continue;
		}
		if (ep->rx_armed && ep->arm_state[0] != SCIF_ARM_POSTED) {
			/* armed already: the peer wakes us (a hang-up does too) */
			if (scif_epfd_wait(ep, POLLIN, 1000) == -EINTR) {
				ret = -EINTR;
				break;
			}
			pthread_mutex_lock(&ep->lock);
			if (ep->pollin)
				scif_epfd_clear_in(ep);
			pthread_mutex_unlock(&ep->lock);
			continue;
		}
		{
			int w;

			ret = arm_sync(ep, 0, true);
			if (ret) {
				ret = 0;
				continue;	/* the state says why */
			}
			if (ep->arm_seen[0] > ep->rx.cons) {
				/* data is on its way: it lands shortly */
				spin_start = scif_now_ns() - spin_ns / 2;
				continue;
			}
			pthread_mutex_lock(&ep->lock);
			ep->rx_armed = ep->my_want_data != ep->rx_woken;
			if (ep->pollin)
				scif_epfd_clear_in(ep);	/* a stale token: wait for a new one */
			pthread_mutex_unlock(&ep->lock);
			/* data may have landed after the check: look once more before sleeping */
			if (!read_prod(ep, &prod) && prod != ep->rx.cons)
				continue;
			w = scif_epfd_wait(ep, POLLIN, 1000);
			if (w == -EINTR) {
				ret = -EINTR;
				break;
			}
		}
	}
	empty = scif_ring_used(&ep->rx) == 0;
	if (empty) {
		uint64_t now = scif_now_ns();

		/* the progress thread arms POLLIN if we stay away (a reader in poll(2)) */
		atomic_store(&ep->rx_idle_since, now);
		if (atomic_load(&scif_lib.wake_at) > now + 2 * SCIF_ARM_DELAY_NS)
			scif_progress_kick();
		/*
		 * POLLIN follows the ring, decided under ep->lock as the progress thread decides
		 * it: a WAKE_DATA or an arm's result handled meanwhile may be writing a token
		 * for the bytes we just took (it marks pollin only once the byte is sent, and
		 * the poller that byte woke may get here first), and bytes may have landed
		 * since we looked. Leaving under the lock too: a wake-up for a reader that
		 * sleeps (rx_busy) then either comes before our decision or finds us gone.
		 */
		pthread_mutex_lock(&ep->lock);
		atomic_fetch_sub(&ep->rx_busy, 1);
		if (ep->conn && atomic_load(&ep->conn->ctl->prod) != ep->rx.cons)
			scif_epfd_set_in(ep);
		else
			scif_epfd_clear_in(ep);
		pthread_mutex_unlock(&ep->lock);
		/* a reader that polls wants a wake-up from now on */
		if (!(flags & SCIF_RECV_BLOCK))
			scif_msg_arm_rx(ep);
	} else {
		atomic_fetch_sub(&ep->rx_busy, 1);
	}
	pthread_mutex_unlock(&ep->recv_mutex);
	return done ? done : ret;
}

void scif_msg_wake(struct scif_ep *ep, enum scif_op op, uint32_t seq)
{
	uint32_t mine = op == SCIF_OP_WAKE_DATA ? ep->my_want_data : ep->my_want_credit;

	/* an answer to a request we made, not one from the future */
	if ((int32_t)(mine - seq) < 0) {
		scif_reject_log(ep, SCIF_REJ_STATE, "a wake-up");
		return;
	}
	if (op == SCIF_OP_WAKE_DATA) {
		ep->rx_woken = seq;
		if (seq == mine)
			ep->rx_armed = false;	/* the latest arm is answered */
		/*
		 * The data it announces was written before it on the same queue pair, so it is
		 * in the ring now, unless a reader took it already: then no POLLIN, except for a
		 * reader that sleeps on this arm: it wakes up to arm again (the peer owes it
		 * nothing more).
		 */
		if (atomic_load(&ep->conn->ctl->prod) != atomic_load(&ep->rx_cons_pub) ||
		    (seq == mine && atomic_load(&ep->rx_busy)))
			scif_epfd_set_in(ep);
	} else {
		scif_epfd_unblock_out(ep);
	}
}

/*
 * What an arm posted without a thread waiting for it found (under ep->lock): data already
 * there (POLLIN now) or credits back (POLLOUT now); otherwise the peer wakes us later.
 */
static void arm_results(struct scif_ep *ep)
{
	bool data = false, credit = false;

	pthread_mutex_lock(&ep->sq_lock);
	scif_sq_poll(ep);
	if (ep->arm_state[0] == SCIF_ARM_DONE && ep->arm_async[0]) {
		ep->arm_state[0] = SCIF_ARM_IDLE;
		data = ep->arm_seen[0] > atomic_load(&ep->rx_cons_pub);
		/* armed unless the answer to this arm came already */
		ep->rx_armed = !data && ep->my_want_data != ep->rx_woken;
	}
	if (ep->arm_state[1] == SCIF_ARM_DONE && ep->arm_async[1]) {
		ep->arm_state[1] = SCIF_ARM_IDLE;
		credit = ep->arm_seen[1] > __atomic_load_n(&ep->tx.cons, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ep->sq_lock);
	if (data)
		scif_epfd_set_in(ep);
	if (credit)
		scif_epfd_unblock_out(ep);
}

/*
 * The progress thread's pass over connected endpoints: finished arms, POLLIN arming for a
 * reader that went quiet (it may be in poll(2)), keepalive probes of an idle connection,
 * connections whose send queue failed.
 */
void scif_msg_timers(uint64_t now, uint64_t *next)
{
	struct scif_ep *list[256];
	int n = 0;

	pthread_mutex_lock(&scif_lib.lock);
	for (struct scif_ep *ep = scif_lib.eps; ep && n < 256; ep = ep->next) {
		if (__atomic_load_n(&ep->state, __ATOMIC_RELAXED) != SCIF_CONNECTED)
			continue;
		scif_ep_hold(ep);
		list[n++] = ep;
	}
	pthread_mutex_unlock(&scif_lib.lock);
	for (int i = 0; i < n; i++) {
		struct scif_ep *ep = list[i];
		struct scif_conn *c;

		pthread_mutex_lock(&ep->lock);
		c = ep->conn;
		if (ep->state != SCIF_CONNECTED || !c) {
			pthread_mutex_unlock(&ep->lock);
			scif_ep_put(ep);
			continue;
		}
		if (ep->sq_err) {
			scif_conn_lost(ep, ep->sq_err);
			pthread_mutex_unlock(&ep->lock);
			scif_ep_put(ep);
			continue;
		}
		arm_results(ep);
		if (!ep->rx_armed && !ep->pollin && ep->arm_state[0] == SCIF_ARM_IDLE &&
		    atomic_load(&c->ctl->prod) == atomic_load(&ep->rx_cons_pub)) {
			uint64_t idle = atomic_load(&ep->rx_idle_since);
			uint64_t at = idle + SCIF_ARM_DELAY_NS;

			if (atomic_load(&ep->rx_busy)) {
				/*
				 * A reader is in scif_recv: it arms for itself. If it left one
				 * lately (a ping-pong), look again in a while rather than have
				 * each of its returns kick us (a wake-up per message).
				 */
				uint64_t again = now + SCIF_ARM_DELAY_NS;

				if (now - idle < 2 * SCIF_ARM_DELAY_NS && again < *next)
					*next = again;
			} else if (now >= at) {
				arm_nowait(ep, 0);
			} else if (at < *next) {
				*next = at;
			}
		}
		if (now - __atomic_load_n(&ep->last_tx_ns, __ATOMIC_RELAXED) >= SCIF_KEEPALIVE_NS) {
			struct ibv_send_wr w;
			struct ibv_sge s;
			uint64_t counts[2];

			/* rewrite the counts: a dead peer shows as a failed completion */
			pthread_mutex_lock(&ep->sq_lock);
			ctl_write(ep, c, &w, &s, counts);
			w.send_flags |= IBV_SEND_SIGNALED;
			scif_sq_post(ep, &w);
			ibv_req_notify_cq(c->scq, 0);
			pthread_mutex_unlock(&ep->sq_lock);
		}
		if (__atomic_load_n(&ep->last_tx_ns, __ATOMIC_RELAXED) + SCIF_KEEPALIVE_NS < *next)
			*next = __atomic_load_n(&ep->last_tx_ns, __ATOMIC_RELAXED) + SCIF_KEEPALIVE_NS;
		pthread_mutex_unlock(&ep->lock);
		scif_ep_put(ep);
	}
}
