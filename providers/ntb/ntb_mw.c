// SPDX-License-Identifier: MIT
/*
 * Memory windows (IBTA 10.6.7), type 1 and type 2B. ntbd allocates a window's key from the
 * end's key space, as it does a region's (no rkey names two things), and keeps nothing else:
 * a window grants access to its owner's own memory, and only the owner's responders check
 * the rkeys that name it. So binding and invalidating are the provider's, as they are an
 * HCA's: a bind is a work request its QP executes in order (ibv_bind_mw posts one for a type 1
 * window), and the window's state lives in the context's key table next to the regions.
 *
 * A window's key is never published to the peer end: the peer's requesters find no entry for
 * it and send what names it as messages (no direct placement), which our responder checks
 * (ntb_rkey_lookup): bound, in range, with the rights, in the QP's PD, bound to that QP
 * (type 2), and its region unchanged since the bind - a region deregistered or reregistered
 * takes the windows bound to it down with it (their accesses fail from then on, nothing
 * reaches pages the region no longer covers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntb.h"

#define MW_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct ntb_mw *to_ntb_mw(struct ibv_mw *mw)
{
	return (struct ntb_mw *)mw;
}

/* The slot of a window's key as it is now (under mw_lock, the only writer of window slots). */
static struct ntb_mr_slot *mw_slot(struct ntb_context *ctx, uint32_t key)
{
	uint32_t idx = NTBV_KEY_INDEX(key);

	if (!idx || idx >= NTBV_MAX_MR || ctx->mrs[idx].lkey != key || !ctx->mrs[idx].mw_type)
		return NULL;
	return &ctx->mrs[idx];
}

struct ibv_mw *ntb_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ntb_context *ctx = to_ntb_ctx(pd->context);
	struct ntb_handle_req req = { .handle = to_ntb_pd(pd)->handle, .reserved = type };
	struct ntb_handle_rsp rsp = { 0 };
	struct ntb_mr_slot v = { 0 };
	struct ntb_mw *mw;
	uint32_t idx;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	ret = ntb_ensure_attached(ctx);
	if (ret) {
		errno = ret;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ntb_call(ctx, NTB_OP_ALLOC_MW, &req, sizeof(req), &rsp, sizeof(rsp));
	idx = NTBV_KEY_INDEX(rsp.handle);
	if (!ret && (!idx || idx >= NTBV_MAX_MR))
		ret = EPROTO;
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	mw->key = rsp.handle;
	mw->ibv_mw.context = pd->context;
	mw->ibv_mw.pd = pd;
	mw->ibv_mw.rkey = rsp.handle;
	mw->ibv_mw.handle = rsp.handle;
	mw->ibv_mw.type = type;
	v.lkey = rsp.handle;
	v.pd = req.handle;
	v.mw_type = type;
	pthread_mutex_lock(&ctx->mw_lock);
	ntb_slot_write(&ctx->mrs[idx], &v);
	pthread_mutex_unlock(&ctx->mw_lock);
	return &mw->ibv_mw;
}

int ntb_dealloc_mw(struct ibv_mw *ibmw)
{
	struct ntb_context *ctx = to_ntb_ctx(ibmw->context);
	struct ntb_mw *mw = to_ntb_mw(ibmw);
	struct ntb_handle_req req = { .handle = mw->key };
	struct ntb_mr_slot none = { 0 }, *s;
	int ret;

	/* IBTA 10.6.7.1.3: a bound window is invalidated first, its key names nothing */
	pthread_mutex_lock(&ctx->mw_lock);
	s = mw_slot(ctx, mw->key);
	if (s)
		ntb_slot_write(s, &none);
	pthread_mutex_unlock(&ctx->mw_lock);
	ret = ntb_call(ctx, NTB_OP_DEALLOC_MW, &req, sizeof(req), NULL, 0);
	/* ENODEV: ntbd is gone, and every key it kept for us with it */
	if (ret && ret != ENOENT && ret != ENODEV)
		return ret;
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw (type 1): a BIND_MW work request on qp with the window's next key, which the
 * window shows from now on (its accesses use it once the bind has executed).
 */
int ntb_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *ibmw, struct ibv_mw_bind *bind)
{
	struct ntb_qp *qp = to_ntb_qp(ibqp);
	struct ibv_send_wr wr = { 0 }, *bad;
	uint32_t rkey;
	int ret;

	if (!ibmw || ibmw->type != IBV_MW_TYPE_1 || ibmw->context != ibqp->context || !bind ||
	    (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC))
		return EINVAL;
	if (bind->bind_info.length && (!bind->bind_info.mr ||
				       bind->bind_info.mr->context != ibqp->context))
		return EINVAL;
	rkey = ibv_inc_rkey(ibmw->rkey);
	wr.wr_id = bind->wr_id;
	wr.opcode = (enum ibv_wr_opcode)NTB_WR_BIND_MW1;
	wr.send_flags = bind->send_flags;
	wr.bind_mw.mw = ibmw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = bind->bind_info;
	ret = ntb_post_chain(qp, &wr, &bad, true);
	if (!ret)
		ibmw->rkey = rkey;
	return ret;
}

/*
 * Execute a bind (IBTA 10.6.7.2.x, C10-72 .. C10-75, o10-36.2.x, o10-37.2.x): the window and
 * the region exist, share the PD (a type 2 window that of the QP too), the region allows
 * binding (MW_BIND) and, for remote write or atomic rights, local write; the range lies in
 * the region; the new key keeps the window's index. A type 1 window is bound by ibv_bind_mw
 * only, any number of times (length 0: unbound); a type 2 window only while it is free, to a
 * non-empty range, and then to the QP.
 */
enum ibv_wc_status ntb_mw_bind_exec(struct ntb_qp *qp, const struct ntb_swqe *w)
{
	struct ntb_context *ctx = qp->ctx;
	enum ibv_wc_status st = IBV_WC_MW_BIND_ERR;
	bool zero_based = w->bind_access & IBV_ACCESS_ZERO_BASED;
	struct ntb_mr_slot *s, v, m;
	uint32_t mseq;

	pthread_mutex_lock(&ctx->mw_lock);
	s = mw_slot(ctx, w->mw_key);
	if (!s || NTBV_KEY_INDEX(w->rkey) != NTBV_KEY_INDEX(w->mw_key) ||
	    (s->mw_type == IBV_MW_TYPE_1) != w->bind_type1 ||
	    (w->bind_access & ~(MW_REMOTE | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE)))
		goto out;
	v = (struct ntb_mr_slot){ .lkey = s->lkey, .pd = s->pd, .mw_type = s->mw_type };
	if (s->mw_type == IBV_MW_TYPE_1) {
		if (zero_based)
			goto out;	/* o10-36.2.2 */
	} else if (s->rkey || s->pd != qp->pd || !w->mw_len || !w->bind_lkey) {
		goto out;		/* o10-37.2.30, C10-72, o10-37.2.40 */
	}
	if (!w->mw_len) {
		/* type 1, length 0: the window is unbound, its new key grants nothing */
		v.rkey = w->rkey;
		ntb_slot_write(s, &v);
		st = IBV_WC_SUCCESS;
		goto out;
	}
	if (!ntb_mr_lookup_seq(ctx, w->bind_lkey, false, &m, &mseq) || m.pd != s->pd ||
	    !(m.access & IBV_ACCESS_MW_BIND) ||
	    ((w->bind_access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(m.access & IBV_ACCESS_LOCAL_WRITE)) ||
	    w->raddr < m.hca_va || w->raddr + w->mw_len > m.hca_va + m.length ||
	    w->raddr + w->mw_len < w->raddr)
		goto out;		/* C10-73, C10-74, C10-75 */
	v.rkey = w->rkey;
	v.access = w->bind_access & MW_REMOTE;
	v.addr = m.addr + (w->raddr - m.hca_va);
	v.hca_va = zero_based ? 0 : w->raddr;
	v.length = w->mw_len;
	v.mw_qpn = s->mw_type == IBV_MW_TYPE_2 ? qp->qpn : 0;
	v.parent = NTBV_KEY_INDEX(w->bind_lkey);
	v.parent_seq = mseq;
	ntb_slot_write(s, &v);
	st = IBV_WC_SUCCESS;
out:
	pthread_mutex_unlock(&ctx->mw_lock);
	return st;
}

/* Invalidate the type 2 window rkey names (bound to qp when remote): true when done. */
static bool invalidate(struct ntb_qp *qp, uint32_t rkey, bool remote)
{
	struct ntb_context *ctx = qp->ctx;
	uint32_t idx = NTBV_KEY_INDEX(rkey);
	struct ntb_mr_slot *s, v;
	bool ok = false;

	if (!idx || idx >= NTBV_MAX_MR)
		return false;
	pthread_mutex_lock(&ctx->mw_lock);
	s = &ctx->mrs[idx];
	/* IBTA 10.6.7.2.6 / 9.4.1.1.2: a bound type 2 window of the QP's PD (and QP, remotely) */
	if (s->lkey && s->mw_type == IBV_MW_TYPE_2 && s->rkey == rkey && s->pd == qp->pd &&
	    (!remote || s->mw_qpn == qp->qpn)) {
		v = (struct ntb_mr_slot){ .lkey = s->lkey, .pd = s->pd, .mw_type = s->mw_type };
		ntb_slot_write(s, &v);
		ok = true;
	}
	pthread_mutex_unlock(&ctx->mw_lock);
	return ok;
}

enum ibv_wc_status ntb_mw_local_inv(struct ntb_qp *qp, uint32_t rkey)
{
	/* no fast-registration regions here: only windows are invalidated */
	return invalidate(qp, rkey, false) ? IBV_WC_SUCCESS : IBV_WC_LOC_QP_OP_ERR;
}

bool ntb_mw_remote_inv(struct ntb_qp *qp, uint32_t rkey)
{
	return invalidate(qp, rkey, true);
}

bool ntb_rkey_lookup(struct ntb_qp *qp, uint32_t rkey, struct ntb_mr_slot *out)
{
	struct ntb_context *ctx = qp->ctx;

	if (!ntb_mr_lookup(ctx, rkey, true, out) || out->pd != qp->pd)
		return false;
	if (!out->mw_type)
		return true;
	if (out->mw_type == IBV_MW_TYPE_2 && out->mw_qpn != qp->qpn)
		return false;	/* IBTA 10.6.7.2.1: a type 2B window serves its QP only */
	/* its region as it was at the bind: not deregistered, not reregistered since */
	return out->parent && out->parent < NTBV_MAX_MR &&
	       atomic_load_explicit(&ctx->mrs[out->parent].seq, memory_order_acquire) ==
		       out->parent_seq;
}
