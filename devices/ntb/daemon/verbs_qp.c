// SPDX-License-Identifier: MIT
/*
 * QP numbers and the QP table the peer end reads. A QP number names its end (NTBV_QPN_SIDE),
 * its table index and how often the index was reused, so the peer can check any number it is
 * given (a stale one no longer matches). The QP itself (queues, state machine) lives in the
 * provider; ntbd mirrors what the peer's requesters must check: type, state, owner, PD, the
 * connected QP, the Q_Key and the remote access rights.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs.h"

static struct nv_qp *owned(struct nv_state *s, struct nv_client *cl, uint32_t qpn)
{
	uint32_t idx = NTBV_QPN_INDEX(qpn);

	if (idx < 2 || s->qps[idx].owner != cl || s->qps[idx].ent.qpn != qpn)
		return NULL;
	return &s->qps[idx];
}

void nv_create_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		  struct bvd_reply *r)
{
	const struct ntb_create_qp_req *req = in;
	struct ntb_create_qp_rsp *rsp = r->payload;
	static uint32_t cursor = 2;
	uint32_t side = s->n->d->conf->side ? NTBV_QPN_SIDE : 0;

	if (len != sizeof(*req) || (req->qp_type != IBV_QPT_RC && req->qp_type != IBV_QPT_UC &&
				    req->qp_type != IBV_QPT_UD)) {
		r->status = EINVAL;
		return;
	}
	if (!cl->attached || !s->ready) {
		r->status = ENOLINK;
		return;
	}
	if (!nv_pd_owned(s, cl, req->pd)) {
		r->status = ENOENT;
		return;
	}
	for (uint32_t n = 0; n < NTBV_MAX_QP - 2; n++) {
		uint32_t idx = 2 + (cursor - 2 + n) % (NTBV_MAX_QP - 2);
		struct nv_qp *q = &s->qps[idx];

		if (q->owner)
			continue;
		cursor = idx + 1;
		q->gen = (q->gen + 1) & 0x7ff;
		q->owner = cl;
		cl->nqps++;
		q->pd = req->pd;
		q->ent.qpn = side | (uint32_t)q->gen << NTBV_QPN_INDEX_BITS | idx;
		q->ent.type = req->qp_type;
		q->ent.state = IBV_QPS_RESET;
		q->ent.slot = cl->slot;
		q->ent.slot_epoch = s->slots[cl->slot].epoch;
		q->ent.pd = req->pd;
		q->ent.dest_qpn = 0;
		q->ent.qkey = 0;
		q->ent.access = 0;
		s->pds[req->pd].users++;
		/* before the number reaches the application, so before the peer can be told it */
		nv_publish_qp(s, idx);
		memset(rsp, 0, sizeof(*rsp));
		rsp->qpn = q->ent.qpn;
		r->len = sizeof(*rsp);
		return;
	}
	r->status = ENOMEM;
}

void nv_modify_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		  struct bvd_reply *r)
{
	const struct ntb_modify_qp_req *req = in;
	struct nv_qp *q;

	if (len != sizeof(*req) || req->state > IBV_QPS_ERR) {
		r->status = EINVAL;
		return;
	}
	q = owned(s, cl, req->qpn);
	if (!q) {
		r->status = ENOENT;
		return;
	}
	q->ent.state = req->state;
	q->ent.dest_qpn = req->dest_qpn;
	q->ent.qkey = req->qkey;
	q->ent.access = req->access;
	if (s->ready)
		nv_publish_qp(s, NTBV_QPN_INDEX(req->qpn));
}

static void release(struct nv_state *s, struct nv_qp *q)
{
	uint32_t idx = NTBV_QPN_INDEX(q->ent.qpn);

	if (q->pd < NV_MAX_PD && s->pds && s->pds[q->pd].users)
		s->pds[q->pd].users--;
	q->owner->nqps--;
	q->owner = NULL;
	q->ent.qpn = 0;
	q->ent.state = IBV_QPS_RESET;
	if (s->ready)
		nv_publish_qp(s, idx);
}

void nv_destroy_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		   struct bvd_reply *r)
{
	const struct ntb_handle_req *req = in;
	struct nv_qp *q;

	if (len != sizeof(*req)) {
		r->status = EINVAL;
		return;
	}
	q = owned(s, cl, req->handle);
	if (!q) {
		r->status = ENOENT;
		return;
	}
	release(s, q);
}

void nv_free_client_qps(struct nv_state *s, struct nv_client *cl)
{
	for (uint32_t i = 2; cl->nqps && i < NTBV_MAX_QP; i++)
		if (s->qps[i].owner == cl)
			release(s, &s->qps[i]);
}
