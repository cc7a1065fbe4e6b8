// SPDX-License-Identifier: MIT
/*
 * Fences (docs/scif.md "Fences"): ordering markers on the endpoint's RMA numbers (rma.c).
 *
 *   fence_mark(INIT_SELF)   the number of our last RMA; fence_wait waits until it completed.
 *   fence_mark(INIT_PEER)   MARK: the peer answers with the number of its last RMA, which we
 *                           return with bit 31 set; fence_wait on it sends WAIT, which the
 *                           peer answers once its RMAs up to there completed.
 *   fence_signal(INIT_SELF) SIGNAL_LOCAL: an 8-byte store into our window once our RMAs so far
 *                           completed (done by whoever reaps that completion: the progress
 *                           thread if nobody else); SIGNAL_REMOTE: an 8-byte RDMA WRITE into
 *                           the peer's window behind our RMAs (fenced behind RDMA READs; RC
 *                           places it after earlier WRITEs).
 *   fence_signal(INIT_PEER) SIGNAL: the peer does the same for its RMAs and answers when the
 *                           signal is queued. The SCIF driver (MPSS 3 and Linux) exchanges
 *                           SIGNAL_LOCAL and SIGNAL_REMOTE here: SIGNAL_LOCAL writes rval at
 *                           roff in the peer's space, SIGNAL_REMOTE lval at loff in ours. We do
 *                           the same (real programs ran that way); SCIF_FENCE_SIGNAL_DOC=1
 *                           selects the documented meaning.
 *
 * Signals are stored with release order, after the data of the RMAs they follow is visible.
 * Fences order RMAs only, not messages or mapped accesses, as in SCIF.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scif_priv.h"

#define SCIF_REMOTE_FENCE	0x80000000u

/* A local 8-byte store at offset off of our registered space, if a writable window holds it. */
static int store_local(struct scif_ep *ep, uint64_t off, uint64_t val)
{
	struct scif_span s;
	int n = scif_wintab_resolve(&ep->lwin, off, 8, SCIF_PROT_WRITE, &s, 1);
	uint64_t *p;

	if (n != 1)
		return -ENXIO;
	p = (uint64_t *)(uintptr_t)(s.w->addr + (off - s.w->off));
	/* after the RMA data it follows (completions were read with acquire order) */
	__atomic_store_n(p, val, __ATOMIC_RELEASE);
	return 0;
}

static void after_exec(struct scif_ep *ep, const struct scif_after *a)
{
	switch (a->kind) {
	case SCIF_AFTER_STORE:
		store_local(ep, a->off, a->val);
		break;
	case SCIF_AFTER_ACK:
		scif_send_ctrl(ep, SCIF_OP_ACK, a->req, 0, 0, 0, 0, 0);
		break;
	case SCIF_AFTER_UNREG:
		scif_rma_drop_remote(ep, a->off, a->len);
		scif_send_ctrl(ep, SCIF_OP_ACK, a->req, 0, 0, 0, 0, 0);
		break;
	case SCIF_AFTER_COPYOUT:
		memcpy(a->addr, a->src, a->len);
		break;
	case SCIF_AFTER_DEREG:
		ibv_dereg_mr(a->mr);
		break;
	}
}

int scif_after_add(struct scif_ep *ep, const struct scif_after *a)
{
	struct scif_after *n;

	if (!ep->after && scif_seq_ge(__atomic_load_n(&ep->rma_done, __ATOMIC_ACQUIRE), a->seq)) {
		after_exec(ep, a);	/* nothing to wait for */
		return 0;
	}
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *a;
	n->next = NULL;
	if (ep->after)
		ep->after_tail->next = n;
	else
		ep->after = n;
	ep->after_tail = n;
	pthread_mutex_lock(&ep->sq_lock);
	scif_sq_notify(ep);	/* the progress thread runs it if nobody else does */
	pthread_mutex_unlock(&ep->sq_lock);
	return 0;
}

void scif_after_run(struct scif_ep *ep)
{
	uint32_t done = __atomic_load_n(&ep->rma_done, __ATOMIC_ACQUIRE);

	while (ep->after && scif_seq_ge(done, ep->after->seq)) {
		struct scif_after *a = ep->after;

		ep->after = a->next;
		after_exec(ep, a);
		free(a);
	}
}

/* Flags every fence call shares: exactly one of INIT_SELF and INIT_PEER. */
static bool init_flags_ok(int flags)
{
	int init = flags & (SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER);

	return init == SCIF_FENCE_INIT_SELF || init == SCIF_FENCE_INIT_PEER;
}

static int verify(struct scif_ep *ep)
{
	int ret;

	pthread_mutex_lock(&ep->lock);
	ret = scif_verify(ep);
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

int scif_fence_mark_ep(struct scif_ep *ep, int flags, int *mark)
{
	uint64_t v[3] = { 0 };
	int ret = verify(ep);

	if (ret)
		return ret;
	if ((flags & ~(SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER)) || !init_flags_ok(flags))
		return -EINVAL;
	if (flags & SCIF_FENCE_INIT_SELF) {
		pthread_mutex_lock(&ep->lock);
		*mark = (int)ep->rma_issued;
		pthread_mutex_unlock(&ep->lock);
		return 0;
	}
	ret = scif_request(ep, SCIF_OP_MARK, 0, 0, 0, 0, 0, v);
	if (ret == -ENOMEM || ret == -EINVAL)
		ret = -ENOMEM;	/* the peer could not (SCIF: MARK_NACK) */
	if (!ret)
		*mark = (int)(SCIF_REMOTE_FENCE | ((uint32_t)v[0] & 0x7fffffffu));
	return ret;
}

static bool mark_done(struct scif_ep *ep, void *arg)
{
	uint32_t mark = *(uint32_t *)arg;

	return scif_seq_ge(__atomic_load_n(&ep->rma_done, __ATOMIC_ACQUIRE), mark) || ep->sq_err ||
	       ep->state != SCIF_CONNECTED;
}

int scif_fence_wait_ep(struct scif_ep *ep, int mark)
{
	uint32_t m = (uint32_t)mark;
	int ret = verify(ep);

	if (ret)
		return ret;
	if (m & SCIF_REMOTE_FENCE) {
		/* the peer refuses a mark it never gave (EINVAL) or could not queue it (ENOMEM) */
		return scif_request(ep, SCIF_OP_WAIT, m & 0x7fffffffu, 0, 0, 0, 0, NULL);
	}
	pthread_mutex_lock(&ep->lock);
	/* a mark never handed out would wait for ever (Linux: 30 s, then ETIMEDOUT) */
	if (!scif_seq_ge(ep->rma_issued, m))
		ret = -EINVAL;
	pthread_mutex_unlock(&ep->lock);
	if (ret)
		return ret;
	ret = scif_wait(ep, mark_done, &m, SCIF_CONNECT_TIMEOUT_MS * 1000000ull);
	pthread_mutex_lock(&ep->lock);
	scif_after_run(ep);
	if (!ret && !scif_seq_ge(ep->rma_done, m))
		ret = ep->conn_err == ENODEV || ep->sq_err == ENODEV ? -ENODEV : -ECONNRESET;
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

/* An 8-byte RDMA WRITE of val to the peer's offset off behind our RMAs (under ep->lock). */
static int signal_remote(struct scif_ep *ep, uint64_t off, uint64_t val)
{
	struct scif_conn *c = ep->conn;
	struct ibv_send_wr w = { .opcode = IBV_WR_RDMA_WRITE, .num_sge = 1 };
	struct ibv_sge sge = { .length = 8 };
	struct scif_span s;
	uint64_t *slot;
	uint32_t seq;
	int ret;

	if (scif_wintab_resolve(&ep->rwin, off, 8, SCIF_PROT_WRITE, &s, 1) != 1)
		return -ENXIO;
	if (!c || !c->qp)
		return -ENOTCONN;
	seq = (ep->rma_issued + 1) & 0x7fffffffu;
	w.sg_list = &sge;
	w.wr.rdma.remote_addr = s.w->addr + (off - s.w->off);
	w.wr.rdma.rkey = s.w->key;
	w.wr_id = (uint64_t)SCIF_WR_RMA << 56 | seq;
	/* behind earlier RDMA READs too (WRITEs are placed in order anyway) */
	w.send_flags = IBV_SEND_FENCE;
	pthread_mutex_lock(&ep->sq_lock);
	/* the value travels inline, or from a scratch slot free once its last WR completed */
	slot = (uint64_t *)(c->lbuf + SCIF_NRECV * SCIF_WIRE_MSG_LEN + 64 + 8 * (ep->sq_posted % 32));
	while (c->max_inline < 8 && ep->sq_posted - ep->sq_done >= 32 && !ep->sq_err)
		scif_sq_poll(ep);
	*slot = val;
	sge.addr = (uintptr_t)slot;
	if (c->max_inline >= 8)
		w.send_flags |= IBV_SEND_INLINE;
	else
		sge.lkey = c->lbuf_mr->lkey;
	ret = scif_sq_post(ep, &w);
	pthread_mutex_unlock(&ep->sq_lock);
	if (!ret)
		ep->rma_issued = seq;
	return ret ? -ECONNRESET : 0;
}

static int signal_local(struct scif_ep *ep, uint64_t off, uint64_t val)
{
	struct scif_after a = { .kind = SCIF_AFTER_STORE, .off = off, .val = val };
	struct scif_span s;

	if (scif_wintab_resolve(&ep->lwin, off, 8, SCIF_PROT_WRITE, &s, 1) != 1)
		return -ENXIO;
	a.seq = ep->rma_issued;
	return scif_after_add(ep, &a);
}

int scif_fence_signal_ep(struct scif_ep *ep, off_t loff, uint64_t lval, off_t roff,
			 uint64_t rval, int flags)
{
	int ret = verify(ep);

	if (ret)
		return ret;
	if ((flags & ~(SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL |
		       SCIF_SIGNAL_REMOTE)) ||
	    !init_flags_ok(flags) || !(flags & (SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE)))
		return -EINVAL;
	if (((flags & SCIF_SIGNAL_LOCAL) && (loff & 3)) ||
	    ((flags & SCIF_SIGNAL_REMOTE) && (roff & 3)))
		return -EINVAL;
	if (flags & SCIF_FENCE_INIT_PEER) {
		/*
		 * Which flag selects which write: Linux and MPSS 3 (default) exchange them, the
		 * documentation does not. The writes themselves are the same: lval at loff in
		 * our space (the peer's SIGNAL_REMOTE), rval at roff in the peer's (its LOCAL).
		 */
		bool doc = scif_lib.fence_doc;
		bool peers = doc ? flags & SCIF_SIGNAL_REMOTE : flags & SCIF_SIGNAL_LOCAL;
		bool ours = doc ? flags & SCIF_SIGNAL_LOCAL : flags & SCIF_SIGNAL_REMOTE;

		if ((peers && roff < 0) || (ours && loff < 0))
			return -ENXIO;
		if (peers) {
			ret = scif_request(ep, SCIF_OP_SIGNAL, (uint64_t)roff, rval, 0, 0,
					   SCIF_SIGNAL_LOCAL, NULL);
			if (ret)
				return ret == -ENXIO || ret == -EPROTO || ret == -EINVAL ? -ENXIO : ret;
		}
		if (ours)
			ret = scif_request(ep, SCIF_OP_SIGNAL, 0, 0, (uint64_t)loff, lval,
					   SCIF_SIGNAL_REMOTE, NULL);
		return ret == -ENXIO || ret == -EPROTO || ret == -EINVAL ? -ENXIO : ret;
	}
	if (((flags & SCIF_SIGNAL_LOCAL) && loff < 0) || ((flags & SCIF_SIGNAL_REMOTE) && roff < 0))
		return -ENXIO;
	pthread_mutex_lock(&ep->lock);
	ret = scif_verify(ep);
	/* the local signal is queued before the remote one */
	if (!ret && (flags & SCIF_SIGNAL_LOCAL))
		ret = signal_local(ep, (uint64_t)loff, lval);
	if (!ret && (flags & SCIF_SIGNAL_REMOTE))
		ret = signal_remote(ep, (uint64_t)roff, rval);
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

/* Fence requests of the peer (progress thread, under ep->lock). */
void scif_fence_peer(struct scif_ep *ep, const struct scif_wire_msg *m)
{
	struct scif_after a = { .kind = SCIF_AFTER_ACK, .req = m->req };
	int ret = 0;

	switch (m->op) {
	case SCIF_OP_MARK:
		scif_send_ctrl(ep, SCIF_OP_ACK, m->req, 0, ep->rma_issued, 0, 0, 0);
		return;
	case SCIF_OP_WAIT:
		if (!scif_seq_ge(ep->rma_issued, (uint32_t)m->arg[0])) {
			scif_reject_log(ep, SCIF_REJ_STATE, "a wait for a mark never given");
			ret = EINVAL;
			break;
		}
		a.seq = (uint32_t)m->arg[0];
		if (scif_after_add(ep, &a))
			ret = ENOMEM;
		else
			return;
		break;
	case SCIF_OP_SIGNAL:
		if (m->arg[4] & SCIF_SIGNAL_LOCAL)
			ret = -signal_local(ep, m->arg[0], m->arg[1]);
		if (!ret && (m->arg[4] & SCIF_SIGNAL_REMOTE))
			ret = -signal_remote(ep, m->arg[2], m->arg[3]);
		break;
	default:
		return;
	}
	scif_send_ctrl(ep, SCIF_OP_ACK, m->req, (uint64_t)ret, 0, 0, 0, 0);
}
