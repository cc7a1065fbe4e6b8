// SPDX-License-Identifier: MIT
/*
 * Receive queues: a QP's own, or a shared receive queue (SRQ) several QPs take from. Receive
 * WQEs never leave this process: the responder (the engine, in whichever thread) takes the
 * next one when a message arrives and scatters the payload itself. This is why the data of a
 * SEND travels in the ring and is copied once here rather than placed by the sender (see
 * ntb_verbs_wire.h): with an SRQ the sender cannot know which buffer a message will land in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntb.h"

int ntb_rq_init(struct ntb_rq *rq, uint32_t max_wr, uint32_t max_sge)
{
	uint32_t size = 1;

	while (size < max_wr)
		size <<= 1;
	memset(rq, 0, sizeof(*rq));
	rq->wqe = calloc(size, sizeof(*rq->wqe));
	rq->sge = calloc((size_t)size * (max_sge ? max_sge : 1), sizeof(*rq->sge));
	if (!rq->wqe || !rq->sge) {
		free(rq->wqe);
		free(rq->sge);
		return ENOMEM;
	}
	for (uint32_t i = 0; i < size; i++)
		rq->wqe[i].sg = rq->sge + (size_t)i * (max_sge ? max_sge : 1);
	rq->size = size;
	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	pthread_mutex_init(&rq->lock, NULL);
	return 0;
}

void ntb_rq_fini(struct ntb_rq *rq)
{
	if (!rq->wqe)
		return;
	pthread_mutex_destroy(&rq->lock);
	free(rq->wqe);
	free(rq->sge);
	rq->wqe = NULL;
	rq->sge = NULL;
}

int ntb_post_recv_common(struct ntb_context *ctx, struct ntb_rq *rq, uint32_t pd,
			 struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int ret = 0;

	pthread_mutex_lock(&rq->lock);
	for (; wr; wr = wr->next) {
		struct ntb_rwqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge ||
		    (wr->num_sge && !wr->sg_list)) {
			ret = EINVAL;
			break;
		}
		if (rq->tail - rq->head >= rq->max_wr) {
			ret = ENOMEM;
			break;
		}
		w = &rq->wqe[rq->tail & (rq->size - 1)];
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		if (wr->num_sge)
			memcpy(w->sg, wr->sg_list, sizeof(*w->sg) * wr->num_sge);
		rq->tail++;
	}
	pthread_mutex_unlock(&rq->lock);
	if (ret)
		*bad = wr;
	return ret;
}

bool ntb_rq_take(struct ntb_context *ctx, struct ntb_qp *qp, struct ntb_rwqe *out,
		 struct ibv_sge *sge)
{
	struct ntb_srq *srq = qp->srq;
	struct ntb_rq *rq = srq ? &srq->rq : &qp->rq;
	bool limit = false;
	struct ntb_rwqe *w;

	pthread_mutex_lock(&rq->lock);
	if (rq->head == rq->tail) {
		pthread_mutex_unlock(&rq->lock);
		return false;
	}
	w = &rq->wqe[rq->head & (rq->size - 1)];
	out->wr_id = w->wr_id;
	out->num_sge = w->num_sge;
	out->sg = sge;
	memcpy(sge, w->sg, sizeof(*sge) * w->num_sge);
	rq->head++;
	/* IBTA 10.2.9.2: the limit event fires once when fewer than limit WQEs remain */
	if (srq && srq->limit && rq->tail - rq->head < srq->limit) {
		srq->limit = 0;
		limit = true;
	}
	pthread_mutex_unlock(&rq->lock);
	if (limit)
		ntb_raise_event(ctx, (uintptr_t)&srq->vsrq.srq, IBV_EVENT_SRQ_LIMIT_REACHED);
	return true;
}

struct ibv_srq *ntb_create_srq(struct ibv_pd *ibpd, struct ibv_srq_init_attr *attr)
{
	struct ntb_context *ctx = to_ntb_ctx(ibpd->context);
	struct ntb_srq *srq;
	int ret;

	if (!attr->attr.max_wr || attr->attr.max_wr > NTB_MAX_SRQ_WR ||
	    attr->attr.max_sge > NTB_MAX_SGE || attr->attr.srq_limit > attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	/* max_srq, as query_device reports it */
	if (atomic_fetch_add(&ctx->nsrq, 1) >= NTB_MAX_SRQ) {
		atomic_fetch_sub(&ctx->nsrq, 1);
		errno = ENOMEM;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		atomic_fetch_sub(&ctx->nsrq, 1);
		errno = ENOMEM;
		return NULL;
	}
	ret = ntb_rq_init(&srq->rq, attr->attr.max_wr, attr->attr.max_sge ? attr->attr.max_sge : 1);
	if (ret) {
		atomic_fetch_sub(&ctx->nsrq, 1);
		free(srq);
		errno = ret;
		return NULL;
	}
	srq->ctx = ctx;
	srq->pd = to_ntb_pd(ibpd)->handle;
	srq->limit = attr->attr.srq_limit;
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	srq->vsrq.srq.handle = 0;
	attr->attr.max_wr = srq->rq.max_wr;
	attr->attr.max_sge = srq->rq.max_sge;
	atomic_fetch_add(&to_ntb_pd(ibpd)->refs, 1);
	return &srq->vsrq.srq;
}

int ntb_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct ntb_srq *srq = to_ntb_srq(ibsrq);
	struct ntb_rq *rq = &srq->rq;
	int ret = 0;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	pthread_mutex_lock(&rq->lock);
	if (mask & IBV_SRQ_MAX_WR) {
		uint32_t n = rq->tail - rq->head, size = 1;
		struct ntb_rwqe *wqe;
		struct ibv_sge *sge;

		if (!attr->max_wr || attr->max_wr > NTB_MAX_SRQ_WR || attr->max_wr < n) {
			ret = EINVAL;
			goto out;
		}
		while (size < attr->max_wr)
			size <<= 1;
		wqe = calloc(size, sizeof(*wqe));
		sge = calloc((size_t)size * rq->max_sge, sizeof(*sge));
		if (!wqe || !sge) {
			free(wqe);
			free(sge);
			ret = ENOMEM;
			goto out;
		}
		for (uint32_t i = 0; i < size; i++)
			wqe[i].sg = sge + (size_t)i * rq->max_sge;
		for (uint32_t i = 0; i < n; i++) {
			struct ntb_rwqe *o = &rq->wqe[(rq->head + i) & (rq->size - 1)];

			wqe[i].wr_id = o->wr_id;
			wqe[i].num_sge = o->num_sge;
			memcpy(wqe[i].sg, o->sg, sizeof(*sge) * o->num_sge);
		}
		free(rq->wqe);
		free(rq->sge);
		rq->wqe = wqe;
		rq->sge = sge;
		rq->size = size;
		rq->max_wr = attr->max_wr;
		rq->head = 0;
		rq->tail = n;
	}
	if (mask & IBV_SRQ_LIMIT) {
		if (attr->srq_limit > rq->max_wr) {
			ret = EINVAL;
			goto out;
		}
		srq->limit = attr->srq_limit;
	}
out:
	pthread_mutex_unlock(&rq->lock);
	return ret;
}

int ntb_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ntb_srq *srq = to_ntb_srq(ibsrq);

	pthread_mutex_lock(&srq->rq.lock);
	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	pthread_mutex_unlock(&srq->rq.lock);
	return 0;
}

int ntb_destroy_srq(struct ibv_srq *ibsrq)
{
	struct ntb_srq *srq = to_ntb_srq(ibsrq);
	struct ntb_context *ctx = srq->ctx;

	pthread_mutex_lock(&ctx->lock);
	for (uint32_t i = 0; i < NTBV_MAX_QP; i++) {
		if (ctx->qps[i] && ctx->qps[i]->srq == srq) {
			pthread_mutex_unlock(&ctx->lock);
			return EBUSY;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	atomic_fetch_sub(&to_ntb_pd(ibsrq->pd)->refs, 1);
	atomic_fetch_sub(&ctx->nsrq, 1);
	ntb_rq_fini(&srq->rq);
	free(srq);
	return 0;
}

int ntb_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct ntb_srq *srq = to_ntb_srq(ibsrq);

	return ntb_post_recv_common(srq->ctx, &srq->rq, srq->pd, wr, bad);
}
