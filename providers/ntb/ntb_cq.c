// SPDX-License-Identifier: MIT
/*
 * Completion queues. A CQ is this process's own memory: the engine (in whichever thread runs
 * it) appends completions; poll_cq takes them, and when it finds none it runs the engine
 * itself, so an application that polls gets its completions without waiting for the progress
 * thread. Completion events go into the channel fd the preload shim made (a self-connected
 * datagram socket): one 8-byte record, the ibv_cq pointer, per armed event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ntb.h"

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static int cq_init(struct ntb_context *ctx, struct ntb_cq *cq, int cqe,
		   struct ibv_comp_channel *ch)
{
	int err;

	if (cqe < 1 || cqe >= NTB_MAX_CQE)
		return EINVAL;
	/* max_cq, as query_device reports it */
	if (atomic_fetch_add(&ctx->ncq, 1) >= NTB_MAX_CQ) {
		atomic_fetch_sub(&ctx->ncq, 1);
		return ENOMEM;
	}
	cq->ctx = ctx;
	cq->cqe = cqe;
	cq->size = roundup_pow2((uint32_t)cqe + 1);
	cq->ring = calloc(cq->size, sizeof(*cq->ring));
	if (!cq->ring) {
		atomic_fetch_sub(&ctx->ncq, 1);
		return ENOMEM;
	}
	/* ntbd's death wakes the channel (providers/common/bv_chan.c) */
	err = ch ? bv_chan_hold(&ctx->bv, ch->fd) : 0;
	if (err) {
		free(cq->ring);
		atomic_fetch_sub(&ctx->ncq, 1);
		return err;
	}
	pthread_mutex_init(&cq->lock, NULL);
	/* what the application sees: at least what it asked for */
	cq->vcq.cq.cqe = (int)cq->size - 1;
	return 0;
}

struct ibv_cq *ntb_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *ch,
			     int comp_vector)
{
	struct ntb_cq *cq;
	int ret;

	if (comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = cq_init(to_ntb_ctx(context), cq, cqe, ch);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	cq->wc_flags = IBV_WC_STANDARD_FLAGS;
	return &cq->vcq.cq;
}

int ntb_destroy_cq(struct ibv_cq *ibcq)
{
	struct ntb_cq *cq = to_ntb_cq(ibcq);
	struct ntb_context *ctx = cq->ctx;

	pthread_mutex_lock(&ctx->lock);
	for (uint32_t i = 0; i < NTBV_MAX_QP; i++) {
		struct ntb_qp *qp = ctx->qps[i];

		if (qp && (qp->scq == cq || qp->rcq == cq)) {
			pthread_mutex_unlock(&ctx->lock);
			return EBUSY;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	if (atomic_exchange(&cq->armed, 0))
		atomic_fetch_sub(&ctx->armed_cqs, 1);
	atomic_fetch_sub(&ctx->ncq, 1);
	if (ibcq->channel)
		bv_chan_release(&ctx->bv, ibcq->channel->fd);
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

int ntb_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct ntb_cq *cq = to_ntb_cq(ibcq);
	struct ibv_wc *ring;
	uint32_t size, n;

	if (cqe < 1 || cqe >= NTB_MAX_CQE)
		return EINVAL;
	size = roundup_pow2((uint32_t)cqe + 1);
	pthread_mutex_lock(&cq->lock);
	n = cq->head - cq->tail;
	if (n >= size) {
		pthread_mutex_unlock(&cq->lock);
		return EINVAL;	/* fewer entries than it holds now */
	}
	ring = calloc(size, sizeof(*ring));
	if (!ring) {
		pthread_mutex_unlock(&cq->lock);
		return ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		ring[i] = cq->ring[(cq->tail + i) & (cq->size - 1)];
	free(cq->ring);
	cq->ring = ring;
	cq->size = size;
	cq->tail = 0;
	cq->head = n;
	cq->cqe = cqe;
	ibcq->cqe = (int)size - 1;
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

void ntb_cq_clean(struct ntb_cq *cq, uint32_t qpn)
{
	uint32_t out;

	pthread_mutex_lock(&cq->lock);
	out = cq->tail;
	for (uint32_t i = cq->tail; i != cq->head; i++) {
		const struct ibv_wc *wc = &cq->ring[i & (cq->size - 1)];

		if (wc->qp_num != qpn)
			cq->ring[out++ & (cq->size - 1)] = *wc;
	}
	cq->head = out;
	pthread_mutex_unlock(&cq->lock);
}

static void cq_event(struct ntb_cq *cq)
{
	struct ibv_comp_channel *ch = cq->vcq.cq.channel;
	uint64_t handle = (uintptr_t)&cq->vcq.cq;

	if (ch && ch->fd >= 0)
		send(ch->fd, &handle, sizeof(handle), MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void cq_push_now(struct ntb_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	bool overflow = false;
	int armed;

	pthread_mutex_lock(&cq->lock);
	if (cq->head - cq->tail >= cq->size - 1) {
		/* IB CQ overrun: the completion is lost and the CQ reports an error */
		overflow = !cq->overflowed;
		cq->overflowed = true;
	} else {
		cq->ring[cq->head & (cq->size - 1)] = *wc;
		cq->head++;
	}
	pthread_mutex_unlock(&cq->lock);
	if (overflow)
		ntb_raise_event(cq->ctx, (uintptr_t)&cq->vcq.cq, IBV_EVENT_CQ_ERR);

	/* solicited-only arming fires on solicited and on unsuccessful completions */
	armed = atomic_load_explicit(&cq->armed, memory_order_acquire);
	if (!armed || (armed == 2 && !solicited && wc->status == IBV_WC_SUCCESS))
		return;
	if (atomic_compare_exchange_strong(&cq->armed, &armed, 0)) {
		atomic_fetch_sub(&cq->ctx->armed_cqs, 1);
		cq_event(cq);
	}
}

/*
 * The responder batch this thread is running (ntb_resp_process): the completions it makes
 * wait in the peer until the batch's coalesced ACKs are published. A program that sees its
 * last receive completion may exit at once, and with it the engine that would have sent the
 * ACK: its peer's send would then fail for want of it (ibv_srq_pingpong's server did, once
 * in a while, under load). On a card the ACK leaves with the placement, whatever the process
 * does next.
 */
static __thread bool cq_staging;
static __thread struct ntb_staged_wc cq_staged[NTB_STAGED_MAX];
static __thread unsigned int cq_nstaged;

void ntb_cq_stage_begin(void)
{
	cq_nstaged = 0;
	cq_staging = true;
}

unsigned int ntb_cq_staged(void)
{
	return cq_nstaged;
}

static void stage_drain(void)
{
	for (unsigned int i = 0; i < cq_nstaged; i++)
		cq_push_now(cq_staged[i].cq, &cq_staged[i].wc, cq_staged[i].solicited);
	cq_nstaged = 0;
}

void ntb_cq_stage_end(void)
{
	cq_staging = false;
	stage_drain();
}

void ntb_cq_push(struct ntb_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	if (cq_staging) {
		if (cq_nstaged < NTB_STAGED_MAX) {
			cq_staged[cq_nstaged++] = (struct ntb_staged_wc){ cq, *wc, solicited };
			return;
		}
		stage_drain();	/* full (a flush of many): in order, at once */
	}
	cq_push_now(cq, wc, solicited);
}

int ntb_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct ntb_cq *cq = to_ntb_cq(ibcq);
	int want = solicited_only ? 2 : 1, cur = atomic_load(&cq->armed);

	/* armed for every completion stays so when asked for solicited ones only */
	while (cur != 1 && !atomic_compare_exchange_weak(&cq->armed, &cur, want))
		;
	if (!cur)
		atomic_fetch_add(&cq->ctx->armed_cqs, 1);
	/* the application may block now: make sure the progress thread watches for it */
	ntb_progress_poke(cq->ctx);
	return 0;
}

static int cq_take(struct ntb_cq *cq, int n, struct ibv_wc *wc)
{
	int got = 0;

	pthread_mutex_lock(&cq->lock);
	while (got < n && cq->tail != cq->head) {
		wc[got++] = cq->ring[cq->tail & (cq->size - 1)];
		cq->tail++;
	}
	pthread_mutex_unlock(&cq->lock);
	return got;
}

int ntb_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct ntb_cq *cq = to_ntb_cq(ibcq);
	int got;

	if (n <= 0)
		return 0;
	atomic_fetch_add_explicit(&cq->ctx->polls, 1, memory_order_relaxed);
	got = cq_take(cq, n, wc);
	if (got < n && ntb_engine(cq->ctx, true))
		got += cq_take(cq, n - got, wc + got);
	return got;
}

/* ---- ibv_cq_ex --------------------------------------------------------------------------- */

static inline struct ntb_cq *ex_to_cq(struct ibv_cq_ex *ex)
{
	return (struct ntb_cq *)ex;
}

static int ex_next(struct ibv_cq_ex *ex)
{
	struct ntb_cq *cq = ex_to_cq(ex);

	if (!cq_take(cq, 1, &cq->cur))
		return ENOENT;
	ex->wr_id = cq->cur.wr_id;
	ex->status = cq->cur.status;
	return 0;
}

static int ex_start_poll(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *attr)
{
	struct ntb_cq *cq = ex_to_cq(ex);

	if (attr->comp_mask)
		return EINVAL;
	atomic_fetch_add_explicit(&cq->ctx->polls, 1, memory_order_relaxed);
	if (!ex_next(ex))
		return 0;
	ntb_engine(cq->ctx, true);
	return ex_next(ex);
}

static int ex_next_poll(struct ibv_cq_ex *ex)
{
	return ex_next(ex);
}

static void ex_end_poll(struct ibv_cq_ex *ex)
{
}

static enum ibv_wc_opcode ex_read_opcode(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.opcode;
}

static uint32_t ex_read_vendor_err(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.vendor_err;
}

static uint32_t ex_read_byte_len(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.byte_len;
}

static __be32 ex_read_imm_data(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.imm_data;
}

static uint32_t ex_read_qp_num(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.qp_num;
}

static uint32_t ex_read_src_qp(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.src_qp;
}

static unsigned int ex_read_wc_flags(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.wc_flags;
}

static uint32_t ex_read_slid(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.slid;
}

static uint8_t ex_read_sl(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.sl;
}

static uint8_t ex_read_dlid_path_bits(struct ibv_cq_ex *ex)
{
	return ex_to_cq(ex)->cur.dlid_path_bits;
}

struct ibv_cq_ex *ntb_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	const uint64_t supported = IBV_WC_STANDARD_FLAGS;
	struct ibv_cq_ex *ex;
	struct ntb_cq *cq;
	int ret;

	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		errno = EOPNOTSUPP;	/* parent domains */
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->wc_flags & ~supported) {
		errno = EOPNOTSUPP;	/* completion timestamps, flow tags, CVLAN, TM */
		return NULL;
	}
	if (attr->comp_vector >= (uint32_t)context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = cq_init(to_ntb_ctx(context), cq, (int)attr->cqe, attr->channel);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	cq->wc_flags = attr->wc_flags;
	ex = &cq->vcq.cq_ex;
	ex->start_poll = ex_start_poll;
	ex->next_poll = ex_next_poll;
	ex->end_poll = ex_end_poll;
	ex->read_opcode = ex_read_opcode;
	ex->read_vendor_err = ex_read_vendor_err;
	ex->read_wc_flags = ex_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = ex_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = ex_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = ex_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = ex_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = ex_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = ex_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = ex_read_dlid_path_bits;
	return ex;
}
