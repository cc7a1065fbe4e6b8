// SPDX-License-Identifier: MIT
/*
 * The send queue of a connection: everything this side posts (ring writes, RMA, arm reads,
 * control messages) goes through scif_sq_post under ep->sq_lock, and completions are reaped
 * by whoever holds that lock (scif_sq_poll): an application thread that waits for its own
 * work polls for it without a thread switch, the progress thread polls when it is woken.
 *
 * Most work requests are unsignaled; one in SCIF_SIGNAL_EVERY is signaled so the queue can be
 * reaped, and so is every one whose completion somebody waits for (the last of an RMA call,
 * an arm READ). wr_id is the request's position in the queue; sq_meta says what each position
 * was for. RC completions come in order, so one completion completes every position before it.
 *
 * Control messages are SENDs of one struct scif_wire_msg into one of the SCIF_NRECV receives
 * the peer keeps posted (RNR retry is infinite: the progress thread reposts at once).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scif_priv.h"

/* A completion error: how the connection ended. */
static int wc_errno(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return ENODEV;	/* the peer node stopped answering */
	default:
		return ECONNRESET;
	}
}

/* Positions (sq_done, upto] completed: what they were for. Under sq_lock. */
static void sq_complete(struct scif_ep *ep, uint64_t upto)
{
	while (ep->sq_done < upto) {
		struct scif_sq_meta *m = &ep->sq_meta[++ep->sq_done % SCIF_SQ_DEPTH];

		switch (m->kind) {
		case SCIF_WR_RMA:
			__atomic_store_n(&ep->rma_done, m->seq, __ATOMIC_RELEASE);
			break;
		case SCIF_WR_ARM_RX:
			scif_msg_arm_done(ep, 0);
			break;
		case SCIF_WR_ARM_TX:
			scif_msg_arm_done(ep, 1);
			break;
		default:
			break;
		}
		m->kind = SCIF_WR_PLAIN;
	}
}

int scif_sq_poll(struct scif_ep *ep)
{
	struct scif_conn *c = ep->conn;
	struct ibv_wc wc[16];
	int n, total = 0;

	if (!c || !c->scq)
		return 0;
	while ((n = ibv_poll_cq(c->scq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				scif_debug("send completion %llu of %llu: %s (opcode %d)",
					   (unsigned long long)wc[i].wr_id,
					   (unsigned long long)ep->sq_posted,
					   ibv_wc_status_str(wc[i].status), wc[i].opcode);
				if (!ep->sq_err) {
					ep->sq_err = wc_errno(wc[i].status);
				}
				/* a failed queue completes nothing more: count it all done */
				sq_complete(ep, ep->sq_posted);
				continue;
			}
			sq_complete(ep, wc[i].wr_id);
		}
		total += n;
	}
	return total;
}

int scif_sq_post(struct scif_ep *ep, struct ibv_send_wr *wr)
{
	struct scif_conn *c = ep->conn;
	struct ibv_send_wr *bad, *w;
	uint64_t pos;
	int n = 0;

	if (!c || !c->qp)
		return -ENOTCONN;
	if (ep->sq_err)
		return -ep->sq_err;
	for (w = wr; w; w = w->next)
		n++;
	/* room: reap what completed; a full queue drains within the transport's timeouts */
	while (ep->sq_posted - ep->sq_done + (uint64_t)n > SCIF_SQ_DEPTH) {
		if (!scif_sq_poll(ep))
			sched_yield();
		if (ep->sq_err)
			return -ep->sq_err;
	}
	pos = ep->sq_posted;
	for (w = wr; w; w = w->next) {
		struct scif_sq_meta *m = &ep->sq_meta[++pos % SCIF_SQ_DEPTH];

		/* callers put the kind in wr_id's place until here */
		m->kind = (uint8_t)(w->wr_id >> 56);
		m->seq = (uint32_t)w->wr_id;
		w->wr_id = pos;
		if (m->kind != SCIF_WR_PLAIN)
			w->send_flags |= IBV_SEND_SIGNALED;
		if (w->send_flags & IBV_SEND_SIGNALED)
			ep->sq_unsignaled = 0;
		else if (++ep->sq_unsignaled >= SCIF_SIGNAL_EVERY) {
			w->send_flags |= IBV_SEND_SIGNALED;
			ep->sq_unsignaled = 0;
		}
	}
	if (ibv_post_send(c->qp, wr, &bad)) {
		int err = errno ? errno : EIO;

		/* nothing from bad on was posted: forget it */
		for (w = bad; w; w = w->next)
			ep->sq_meta[w->wr_id % SCIF_SQ_DEPTH].kind = SCIF_WR_PLAIN;
		if (bad != wr) {
			for (w = wr; w->next != bad; w = w->next)
				;
			ep->sq_posted = w->wr_id;
		}
		return err == ENOMEM ? -ENOMEM : -ECONNRESET;
	}
	ep->sq_posted = pos;
	ep->last_tx_ns = scif_now_ns();
	return 0;
}

int scif_post_recvs(struct scif_conn *c, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(c->lbuf + i * SCIF_WIRE_MSG_LEN),
				       .length = SCIF_WIRE_MSG_LEN, .lkey = c->lbuf_mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_recv(c->qp, &wr, &bad))
			return -errno;
	}
	c->recvs_posted = true;
	return 0;
}

static int repost(struct scif_conn *c, uint64_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->lbuf + i * SCIF_WIRE_MSG_LEN),
			       .length = SCIF_WIRE_MSG_LEN, .lkey = c->lbuf_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->qp, &wr, &bad) ? -errno : 0;
}

int scif_send_ctrl(struct scif_ep *ep, enum scif_op op, uint32_t req, uint64_t a0,
		   uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	struct scif_wire_msg m;
	struct ibv_sge sge;
	/* signaled: one completion says it and everything before it arrived */
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct scif_conn *c;
	int ret;

	scif_wire_build(&m, op, req, a0, a1, a2, a3, a4);
	pthread_mutex_lock(&ep->sq_lock);
	c = ep->conn;
	if (!c || !c->qp) {
		pthread_mutex_unlock(&ep->sq_lock);
		return -ENOTCONN;
	}
	sge.length = sizeof(m);
	if (c->max_inline >= sizeof(m)) {
		sge.addr = (uintptr_t)&m;
		sge.lkey = 0;
		wr.send_flags |= IBV_SEND_INLINE;
	} else {
		uint32_t s = ep->ctrl_slot++ % SCIF_NCTRL_SLOTS;
		uint8_t *slot = c->lbuf + SCIF_NRECV * SCIF_WIRE_MSG_LEN + SCIF_PAGE_SIZE +
				s * SCIF_WIRE_MSG_LEN;

		/* the slot is free once the WR that last sent from it completed */
		while (ep->sq_done < ep->slot_pos[s] && !ep->sq_err)
			if (!scif_sq_poll(ep))
				sched_yield();
		memcpy(slot, &m, sizeof(m));
		sge.addr = (uintptr_t)slot;
		sge.lkey = c->lbuf_mr->lkey;
		ep->slot_pos[s] = ep->sq_posted + 1;
	}
	ret = scif_sq_post(ep, &wr);
	pthread_mutex_unlock(&ep->sq_lock);
	return ret;
}

/* Wake the progress thread on the next completion of the send queue. */
void scif_sq_notify(struct scif_ep *ep)
{
	struct scif_conn *c = ep->conn;

	if (c && c->scq)
		ibv_req_notify_cq(c->scq, 0);
}

int scif_wait(struct scif_ep *ep, bool (*done)(struct scif_ep *, void *), void *arg,
	      uint64_t timeout_ns)
{
	uint64_t start = scif_now_ns(), now;
	int ret = 0;

	pthread_mutex_lock(&ep->lock);
	while (!done(ep, arg)) {
		bool progressed = false;

		if (!pthread_mutex_trylock(&ep->sq_lock)) {
			progressed = scif_sq_poll(ep) > 0;
			pthread_mutex_unlock(&ep->sq_lock);
		}
		if (progressed)
			continue;
		now = scif_now_ns();
		if (timeout_ns && now - start >= timeout_ns) {
			ret = -ETIMEDOUT;
			break;
		}
		if (now - start < SCIF_SPIN_NS) {
			pthread_mutex_unlock(&ep->lock);
			sched_yield();
			pthread_mutex_lock(&ep->lock);
			continue;
		}
		/* long waits sleep: the progress thread polls and broadcasts */
		{
			struct timespec ts;
			uint64_t until = now + 50000000ull;

			if (timeout_ns && start + timeout_ns < until)
				until = start + timeout_ns;
			atomic_fetch_add(&ep->cq_waiters, 1);
			pthread_mutex_lock(&ep->sq_lock);
			scif_sq_notify(ep);
			progressed = scif_sq_poll(ep) > 0;
			pthread_mutex_unlock(&ep->sq_lock);
			if (!progressed && !done(ep, arg)) {
				ts.tv_sec = (time_t)(until / 1000000000ull);
				ts.tv_nsec = (long)(until % 1000000000ull);
				pthread_cond_timedwait(&ep->cond, &ep->lock, &ts);
			}
			atomic_fetch_sub(&ep->cq_waiters, 1);
		}
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

static bool answered(struct scif_ep *ep, void *arg)
{
	const struct scif_req *r = arg;

	return r->done || ep->state != SCIF_CONNECTED || ep->sq_err;
}

/* A request to the peer and its ACK. *value: what the ACK carries. */
int scif_request(struct scif_ep *ep, enum scif_op op, uint64_t a0, uint64_t a1, uint64_t a2,
		 uint64_t a3, uint64_t a4, uint64_t value[3])
{
	struct scif_req r = { 0 };
	int ret;

	pthread_mutex_lock(&ep->lock);
	ret = scif_verify(ep);
	if (ret) {
		pthread_mutex_unlock(&ep->lock);
		return ret;
	}
	do
		r.id = ++ep->next_req;
	while (!r.id);
	r.next = ep->reqs;
	// cppcheck-suppress autoVariables ; unlinked below, under the lock, before we return
	ep->reqs = &r;
	pthread_mutex_unlock(&ep->lock);
	ret = scif_send_ctrl(ep, op, r.id, a0, a1, a2, a3, a4);
	if (!ret) {
		/* SCIF waits for a live peer as long as it takes; a lost one ends the wait */
		ret = scif_wait(ep, answered, &r, 0);
	}
	pthread_mutex_lock(&ep->lock);
	for (struct scif_req **pp = &ep->reqs; *pp; pp = &(*pp)->next)
		if (*pp == &r) {
			*pp = r.next;
			break;
		}
	if (!ret && r.done) {
		ret = -r.status;
		if (value)
			memcpy(value, r.value, sizeof(r.value));
	} else if (!ret) {
		ret = ep->state == SCIF_DISCONNECTED && ep->conn_err == ENODEV ? -ENODEV : -ECONNRESET;
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

void scif_ack_req(struct scif_ep *ep, uint32_t req, int status, const uint64_t value[3])
{
	for (struct scif_req *r = ep->reqs; r; r = r->next) {
		if (r->id == req && !r->done) {
			r->done = true;
			r->status = status;
			memcpy(r->value, value, sizeof(r->value));
			pthread_cond_broadcast(&ep->cond);
			return;
		}
	}
	scif_reject_log(ep, SCIF_REJ_STATE, "an answer to no request");
}

/* Events on a connection's completion channel (progress thread). */
void scif_chan_event(struct scif_conn *c)
{
	struct scif_ep *ep = c->ep;
	struct ibv_cq *cq;
	void *ctx;
	bool rcq = false, scq = false;

	while (!ibv_get_cq_event(c->chan, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		rcq |= cq == c->rcq;
		scq |= cq == c->scq;
	}
	if (rcq) {
		struct ibv_wc wc[16];
		int n;

		ibv_req_notify_cq(c->rcq, 0);
		while ((n = ibv_poll_cq(c->rcq, 16, wc)) > 0) {
			for (int i = 0; i < n; i++) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					scif_debug("receive completion: %s",
						   ibv_wc_status_str(wc[i].status));
					pthread_mutex_lock(&ep->lock);
					if (ep->conn == c)
						scif_conn_lost(ep, wc_errno(wc[i].status));
					pthread_mutex_unlock(&ep->lock);
					continue;
				}
				if (wc[i].wr_id >= SCIF_NRECV)
					continue;
				scif_ctrl_recv(ep, c->lbuf + wc[i].wr_id * SCIF_WIRE_MSG_LEN,
					       wc[i].byte_len);
				if (repost(c, wc[i].wr_id)) {
					pthread_mutex_lock(&ep->lock);
					if (ep->conn == c)
						scif_conn_lost(ep, ECONNRESET);
					pthread_mutex_unlock(&ep->lock);
				}
			}
		}
	}
	/* completions somebody waits for, and work waiting for them */
	pthread_mutex_lock(&ep->lock);
	if (ep->conn == c) {
		bool again;

		pthread_mutex_lock(&ep->sq_lock);
		scif_sq_poll(ep);
		again = atomic_load(&ep->cq_waiters) || ep->after || ep->arm_state[0] == SCIF_ARM_POSTED ||
			ep->arm_state[1] == SCIF_ARM_POSTED;
		if (again)
			scif_sq_notify(ep);
		scif_sq_poll(ep);	/* what completed before the arming */
		pthread_mutex_unlock(&ep->sq_lock);
		scif_after_run(ep);
		if (ep->sq_err && ep->state == SCIF_CONNECTED)
			scif_conn_lost(ep, ep->sq_err);
		pthread_cond_broadcast(&ep->cond);
	}
	pthread_mutex_unlock(&ep->lock);
	(void)scq;
	(void)ctx;
}
