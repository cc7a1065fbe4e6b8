// SPDX-License-Identifier: MIT
/*
 * Completion queues (rdma-core providers/mlx5/cq.c, PRM "Completion Queues"):
 *
 *  - a ring of 2^n 64-byte CQEs, initialised to opcode INVALID with owner 0; a CQE at consumer
 *    index ci belongs to software when its opcode is valid and its owner bit equals bit n of
 *    ci (the device flips the bit it writes on every pass round the ring);
 *  - the doorbell record: word 0 the consumer index (how far the device may write), word 1
 *    the last arm command;
 *  - arming: write the arm command (sequence number, solicited or not, consumer index) to
 *    the record and to the UAR's CQ doorbell with the CQN; the next CQE makes the device post
 *    a completion event, which cx4d turns into a record on the completion channel;
 *  - requester CQEs carry the index of the completed WQE (everything before it in the send
 *    queue is complete too); responder CQEs complete the oldest receive WQE, or for an SRQ
 *    the WQE whose index they carry;
 *  - resize: cx4d moves the CQ to a new ring (MODIFY_CQ resize); the device ends the old ring
 *    with a RESIZE CQE and the CQEs before it are copied across (rdma-core mlx5_resize_cq).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cqe_err.h"
#include "cx4.h"

static inline struct mlx5_cqe64 *get_cqe(struct cx4_cq *cq, uint32_t n)
{
	return (struct mlx5_cqe64 *)(cq->cqes + ((size_t)(n & (cq->ncqe - 1)) << 6));
}

static inline struct mlx5_cqe64 *get_sw_cqe(struct cx4_cq *cq, uint32_t n)
{
	struct mlx5_cqe64 *cqe = get_cqe(cq, n);
	uint8_t op_own = *(volatile uint8_t *)&cqe->op_own;

	if ((op_own >> 4) != MLX5_CQE_INVALID && !((op_own & MLX5_CQE_OWNER_MASK) ^ !!(n & cq->ncqe)))
		return cqe;
	return NULL;
}

static inline void update_cons_index(struct cx4_cq *cq)
{
	cq->dbrec[CX4_CQ_SET_CI] = htobe32(cq->cons_index & 0xffffff);
}

/* The send WQE a requester CQE names, and everything before it, is complete. */
static void complete_send(struct cx4_qp *qp, uint16_t wqe_ctr, struct ibv_wc *wc)
{
	unsigned int idx = wqe_ctr & (qp->sq.wqe_cnt - 1);

	wc->wr_id = qp->sq.wrid[idx];
	qp->sq.tail = qp->sq.wqe_head[idx] + 1;
}

static void complete_recv(struct cx4_qp *qp, struct cx4_srq *srq, uint16_t wqe_ctr,
			  struct ibv_wc *wc)
{
	if (srq) {
		wc->wr_id = srq->wrid[wqe_ctr & (srq->wqe_cnt - 1)];
		cx4_free_srq_wqe(srq, wqe_ctr & (srq->wqe_cnt - 1));
	} else {
		wc->wr_id = qp->rq.wrid[qp->rq.tail & (qp->rq.wqe_cnt - 1)];
		qp->rq.tail++;
	}
}

static int parse_cqe(struct cx4_cq *cq, struct mlx5_cqe64 *cqe, struct ibv_wc *wc)
{
	struct cx4_context *ctx = to_cx4_ctx(cq->vcq.cq.context);
	uint32_t qpn = be32toh(cqe->sop_drop_qpn) & 0xffffff;
	uint8_t opcode = cqe->op_own >> 4;
	uint16_t wqe_ctr = be16toh(cqe->wqe_counter);
	struct cx4_qp *qp = cx4_find_qp(ctx, qpn);
	struct cx4_srq *srq;
	uint32_t flags_rqpn;

	memset(wc, 0, sizeof(*wc));
	wc->qp_num = qpn;
	cq->cur_ts = be64toh(cqe->timestamp);
	if (!qp)
		return -1;	/* a CQE for a QP this context does not have */
	srq = qp->vqp.qp.srq ? to_cx4_srq(qp->vqp.qp.srq) : NULL;

	switch (opcode) {
	case MLX5_CQE_REQ:
		wc->status = IBV_WC_SUCCESS;
		switch (be32toh(cqe->sop_drop_qpn) >> 24) {
		case MLX5_OPCODE_RDMA_WRITE_IMM:
			wc->wc_flags |= IBV_WC_WITH_IMM;
			/* fall through */
		case MLX5_OPCODE_RDMA_WRITE:
			wc->opcode = IBV_WC_RDMA_WRITE;
			break;
		case MLX5_OPCODE_SEND_IMM:
			wc->wc_flags |= IBV_WC_WITH_IMM;
			/* fall through */
		case MLX5_OPCODE_SEND:
		case MLX5_OPCODE_SEND_INVAL:
			wc->opcode = IBV_WC_SEND;
			break;
		case MLX5_OPCODE_RDMA_READ:
			wc->opcode = IBV_WC_RDMA_READ;
			wc->byte_len = be32toh(cqe->byte_cnt);
			break;
		case MLX5_OPCODE_ATOMIC_CS:
			wc->opcode = IBV_WC_COMP_SWAP;
			wc->byte_len = 8;
			break;
		case MLX5_OPCODE_ATOMIC_FA:
			wc->opcode = IBV_WC_FETCH_ADD;
			wc->byte_len = 8;
			break;
		case MLX5_OPCODE_UMR:
			/* bind or local invalidate: what the WQE was (rdma-core wr_data) */
			wc->opcode = qp->sq.wr_data[wqe_ctr & (qp->sq.wqe_cnt - 1)];
			break;
		}
		complete_send(qp, wqe_ctr, wc);
		return 0;
	case MLX5_CQE_RESP_WR_IMM:
	case MLX5_CQE_RESP_SEND:
	case MLX5_CQE_RESP_SEND_IMM:
	case MLX5_CQE_RESP_SEND_INV:
		wc->status = IBV_WC_SUCCESS;
		wc->byte_len = be32toh(cqe->byte_cnt);
		complete_recv(qp, srq, wqe_ctr, wc);
		switch (opcode) {
		case MLX5_CQE_RESP_WR_IMM:
			wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
			wc->wc_flags |= IBV_WC_WITH_IMM;
			wc->imm_data = cqe->imm_inval_pkey;
			break;
		case MLX5_CQE_RESP_SEND:
			wc->opcode = IBV_WC_RECV;
			break;
		case MLX5_CQE_RESP_SEND_IMM:
			wc->opcode = IBV_WC_RECV;
			wc->wc_flags |= IBV_WC_WITH_IMM;
			wc->imm_data = cqe->imm_inval_pkey;
			break;
		case MLX5_CQE_RESP_SEND_INV:
			wc->opcode = IBV_WC_RECV;
			wc->wc_flags |= IBV_WC_WITH_INV;
			wc->invalidated_rkey = be32toh(cqe->imm_inval_pkey);
			break;
		}
		flags_rqpn = be32toh(cqe->flags_rqpn);
		wc->src_qp = flags_rqpn & 0xffffff;
		wc->sl = (flags_rqpn >> 24) & 0xf;
		if ((flags_rqpn >> 28) & 3)
			wc->wc_flags |= IBV_WC_GRH;
		wc->slid = be16toh(cqe->slid);
		wc->dlid_path_bits = cqe->ml_path & 0x7f;
		return 0;
	case MLX5_CQE_REQ_ERR:
	case MLX5_CQE_RESP_ERR: {
		struct mlx5_err_cqe *ecqe = (struct mlx5_err_cqe *)cqe;

		wc->status = cx4_cqe_error_status(ecqe->syndrome);
		wc->vendor_err = ecqe->vendor_err_synd;
		if (opcode == MLX5_CQE_REQ_ERR)
			complete_send(qp, wqe_ctr, wc);
		else
			complete_recv(qp, srq, wqe_ctr, wc);
		return 0;
	}
	default:
		/* RESIZE_CQ, NO_PACKET, SIG_ERR: never asked for */
		wc->status = IBV_WC_GENERAL_ERR;
		return -1;
	}
}

/* Take the next software-owned CQE, if any (cq->lock held). 1: got one, 0: empty, <0 bad. */
static int poll_one(struct cx4_cq *cq, struct ibv_wc *wc)
{
	struct mlx5_cqe64 *cqe = get_sw_cqe(cq, cq->cons_index);

	if (!cqe)
		return 0;
	/* read the CQE only after its owner bit (rdma-core: udma_from_device_barrier) */
	udma_from_device_barrier();
	cq->cons_index++;
	return parse_cqe(cq, cqe, wc) ? -1 : 1;
}

/*
 * An empty poll. The model's engine shares the CPUs with us, so a driver that polls an empty CQ
 * for long takes the CPU the device needs to produce the CQE: after poll_spin_ns of empty polls,
 * sleep until the device's next pass that wrote CQEs, at most WAIT_NS (cx4_bus.h, the emulated
 * UMWAIT). Every completion on the device ends the wait, so an application polling several CQs
 * of the device loses only a wake-up. Called with cq->lock held; returns with it released.
 */
#define IDLE_CLOCK_EVERY	16	/* empty polls between clock reads */
#define WAIT_NS			200000

static void idle_wait_unlock(struct cx4_cq *cq)
{
	struct cx4_context *ctx = to_cx4_ctx(cq->vcq.cq.context);
	struct timespec ts;
	uint64_t now;
	uint32_t snap;

	if (!ctx->poll_spin_ns || ++cq->idle_polls % IDLE_CLOCK_EVERY) {
		pthread_spin_unlock(&cq->lock);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!cq->idle_since)
		cq->idle_since = now;
	if (now - cq->idle_since < ctx->poll_spin_ns) {
		pthread_spin_unlock(&cq->lock);
		return;
	}
	snap = cx4_wait_begin(&ctx->kick);
	if (get_sw_cqe(cq, cq->cons_index)) {
		cx4_wait_cancel(&ctx->kick);
		pthread_spin_unlock(&cq->lock);
		return;
	}
	pthread_spin_unlock(&cq->lock);
	cx4_wait_end(&ctx->kick, snap, WAIT_NS);
}

static void got_cqes(struct cx4_cq *cq)
{
	cq->idle_polls = 0;
	cq->idle_since = 0;
}

int cx4_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct cx4_cq *cq = to_cx4_cq(ibcq);
	int n = 0, r = 0;

	pthread_spin_lock(&cq->lock);
	while (n < ne && (r = poll_one(cq, wc + n)) > 0)
		n++;
	if (!n && !r && ne > 0) {
		idle_wait_unlock(cq);
		return 0;
	}
	got_cqes(cq);
	if (n || r < 0) {
		udma_to_device_barrier();
		update_cons_index(cq);
	}
	pthread_spin_unlock(&cq->lock);
	return r < 0 && !n ? -1 : n;
}

int cx4_arm_cq(struct ibv_cq *ibcq, int solicited)
{
	struct cx4_cq *cq = to_cx4_cq(ibcq);
	struct cx4_context *ctx = to_cx4_ctx(ibcq->context);
	uint32_t sn = cq->arm_sn & 3, ci = cq->cons_index & 0xffffff;
	uint32_t cmd = solicited ? CX4_CQ_DB_REQ_NOT_SOL : CX4_CQ_DB_REQ_NOT;
	__be32 db[2];

	db[0] = htobe32(sn << 28 | cmd | ci);
	db[1] = htobe32(cq->cqn);
	cq->dbrec[CX4_CQ_ARM_DB] = db[0];
	/* the record before the doorbell: the device may read it when the doorbell lands */
	udma_to_device_barrier();
	cx4_mmio_write64_be(&ctx->uar, CX4_UAR_CQ_DOORBELL, *(uint64_t *)db);
	return 0;
}

void cx4_cq_event(struct ibv_cq *ibcq)
{
	to_cx4_cq(ibcq)->arm_sn++;
}

/*
 * Remove the CQEs of a QP that is being destroyed or reset, compacting the rest toward the
 * producer end (rdma-core __mlx5_cq_clean); receive WQEs such CQEs consumed from an SRQ go
 * back to its free list.
 */
void cx4_cq_clean(struct cx4_cq *cq, uint32_t qpn, struct cx4_srq *srq)
{
	uint32_t prod, nfreed = 0;

	if (!cq)
		return;
	pthread_spin_lock(&cq->lock);
	for (prod = cq->cons_index; get_sw_cqe(cq, prod); prod++)
		if (prod == cq->cons_index + cq->ncqe - 1)
			break;
	udma_from_device_barrier();
	while ((int32_t)(--prod - cq->cons_index) >= 0) {
		struct mlx5_cqe64 *cqe = get_cqe(cq, prod);
		uint8_t op = cqe->op_own >> 4;

		if ((be32toh(cqe->sop_drop_qpn) & 0xffffff) == qpn) {
			if (srq && (op == MLX5_CQE_RESP_WR_IMM || op == MLX5_CQE_RESP_SEND ||
				    op == MLX5_CQE_RESP_SEND_IMM || op == MLX5_CQE_RESP_SEND_INV ||
				    op == MLX5_CQE_RESP_ERR))
				cx4_free_srq_wqe(srq, be16toh(cqe->wqe_counter) & (srq->wqe_cnt - 1));
			nfreed++;
		} else if (nfreed) {
			struct mlx5_cqe64 *dest = get_cqe(cq, prod + nfreed);
			uint8_t owner = dest->op_own & MLX5_CQE_OWNER_MASK;

			memcpy(dest, cqe, sizeof(*cqe));
			dest->op_own = owner | (dest->op_own & ~MLX5_CQE_OWNER_MASK);
		}
	}
	if (nfreed) {
		cq->cons_index += nfreed;
		udma_to_device_barrier();
		update_cons_index(cq);
	}
	pthread_spin_unlock(&cq->lock);
}

/* ---- ibv_cq_ex: the same CQEs read one field at a time -------------------------------------- */
static int cq_next(struct cx4_cq *cq)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;
	int r = poll_one(cq, &cq->cur);

	if (r <= 0)
		return r < 0 ? EINVAL : ENOENT;
	ex->status = cq->cur.status;
	ex->wr_id = cq->cur.wr_id;
	return 0;
}

static int cx4_start_poll(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *attr)
{
	struct cx4_cq *cq = (struct cx4_cq *)ex;
	int err;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	err = cq_next(cq);
	if (err == ENOENT) {
		idle_wait_unlock(cq);
		return err;
	}
	got_cqes(cq);
	if (err) {
		udma_to_device_barrier();
		update_cons_index(cq);
		pthread_spin_unlock(&cq->lock);
	}
	return err;
}

static int cx4_next_poll(struct ibv_cq_ex *ex)
{
	return cq_next((struct cx4_cq *)ex);
}

static void cx4_end_poll(struct ibv_cq_ex *ex)
{
	struct cx4_cq *cq = (struct cx4_cq *)ex;

	udma_to_device_barrier();
	update_cons_index(cq);
	pthread_spin_unlock(&cq->lock);
}

#define CQ_OF(ex) ((struct cx4_cq *)(ex))
static enum ibv_wc_opcode rd_opcode(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.opcode; }
static uint32_t rd_vendor_err(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.vendor_err; }
static uint32_t rd_byte_len(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.byte_len; }
static __be32 rd_imm_data(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.imm_data; }
static uint32_t rd_qp_num(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.qp_num; }
static uint32_t rd_src_qp(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.src_qp; }
static unsigned int rd_wc_flags(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.wc_flags; }
static uint32_t rd_slid(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.slid; }
static uint8_t rd_sl(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.sl; }
static uint8_t rd_dlid_path_bits(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur.dlid_path_bits; }
static uint64_t rd_completion_ts(struct ibv_cq_ex *ex) { return CQ_OF(ex)->cur_ts; }

#define CX4_WC_EX_SUPPORTED (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
			     IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
			     IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
			     IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)

/* ---- create / destroy ------------------------------------------------------------------------- */
static struct cx4_cq *create(struct ibv_context *ibctx, int cqe, struct ibv_comp_channel *ch,
			     int comp_vector, uint64_t wc_flags, struct ibv_pd *pdom)
{
	struct cx4_context *ctx = to_cx4_ctx(ibctx);
	struct cx4_create_cq_req req = { 0 };
	struct cx4_create_cq_rsp rsp;
	struct cx4_cq *cq;
	size_t ring, dbr;
	int fds[2], err;

	if (cqe < 1 || (uint32_t)cqe >= ctx->caps.max_cqes || comp_vector < 0 ||
	    comp_vector >= ibctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->buf.fd = -1;
	cq->ring.fd = -1;
	cq->ncqe = 1u << cx4_ilog2_up((uint64_t)cqe + 1);
	ring = (size_t)cq->ncqe * 64;
	dbr = cx4_align(ring, 64);
	err = cx4_buf_alloc_pd(&cq->buf, pdom, dbr + 64, CX4_RES_TYPE_CQ, "cx4-cq");
	if (err)
		goto fail;
	cq->cqes = cq->buf.va;
	for (unsigned int i = 0; i < cq->ncqe; i++)
		get_cqe(cq, i)->op_own = MLX5_CQE_INVALID << 4;
	cq->dbrec = (volatile __be32 *)((uint8_t *)cq->buf.va + dbr);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->wc_flags = wc_flags;

	req.user_handle = (uintptr_t)&cq->vcq.cq;
	req.buf_len = cq->buf.len;
	req.buf_offset = cq->buf.off;
	req.dbr_offset = dbr;
	req.log_cq_size = cx4_ilog2_up(cq->ncqe);
	req.cqe_size = 64;
	req.comp_vector = (uint32_t)comp_vector;
	fds[0] = cq->buf.fd;
	if (ch) {
		/* cx4d's death wakes the channel (providers/common/bv_chan.c) */
		err = bv_chan_hold(&ctx->bv, ch->fd);
		if (err)
			goto fail;
		req.flags |= CX4_CQ_CHANNEL;
		fds[1] = ch->fd;
		cq->has_channel = true;
	}
	err = cx4_call(ibctx, CX4_OP_CREATE_CQ, &req, sizeof(req), fds, ch ? 2 : 1, &rsp,
		       sizeof(rsp));
	if (err) {
		if (ch)
			bv_chan_release(&ctx->bv, ch->fd);
		goto fail;
	}
	close(cq->buf.fd);	/* the mapping stays; the daemon holds its own */
	cq->buf.fd = -1;
	cq->cqn = rsp.cqn;
	cq->handle = rsp.handle;
	cq->vcq.cq.handle = rsp.handle;
	cq->vcq.cq.cqe = (int)cq->ncqe - 1;
	return cq;
fail:
	cx4_buf_free(&cq->buf);
	free(cq);
	errno = err;
	return NULL;
}

struct ibv_cq *cx4_create_cq(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *channel,
			     int comp_vector)
{
	struct cx4_cq *cq = create(ctx, cqe, channel, comp_vector, 0, NULL);

	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *cx4_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_pd *pdom = NULL;
	struct ibv_cq_ex *ex;
	struct cx4_cq *cq;

	if ((attr->comp_mask &
	     ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)CX4_WC_EX_SUPPORTED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) &&
	    !to_bv_context(ctx)->attr.hca_core_clock) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* the PD a CQ may name is a parent domain: its allocators give the ring (mlx5 too) */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		pdom = attr->parent_domain;
		if (!pdom || pdom->context != ctx || !to_cx4_pd(pdom)->protection) {
			errno = EINVAL;
			return NULL;
		}
	}
	cq = create(ctx, (int)attr->cqe, attr->channel, (int)attr->comp_vector, attr->wc_flags,
		    pdom);
	if (!cq)
		return NULL;
	ex = &cq->vcq.cq_ex;
	ex->start_poll = cx4_start_poll;
	ex->next_poll = cx4_next_poll;
	ex->end_poll = cx4_end_poll;
	ex->read_opcode = rd_opcode;
	ex->read_vendor_err = rd_vendor_err;
	ex->read_wc_flags = rd_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = rd_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = rd_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = rd_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = rd_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = rd_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = rd_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = rd_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ex->read_completion_ts = rd_completion_ts;
	return ex;
}

/* ---- resize ------------------------------------------------------------------------------------ */

/*
 * Copy the CQEs between the consumer index and the device's RESIZE CQE from the old ring to
 * the same indexes + 1 of the new one, with the new ring's owner bits; the RESIZE CQE took an
 * index, so the consumer index moves past it (rdma-core mlx5_cq_resize_copy_cqes).
 */
static int copy_cqes(struct cx4_cq *cq, uint8_t *nring, unsigned int n)
{
	uint32_t i = cq->cons_index;

	for (unsigned int k = 0; k <= cq->ncqe; k++, i++) {
		struct mlx5_cqe64 *s = get_sw_cqe(cq, i), *d;

		if (!s)
			return EIO;	/* the device did not finish the old ring */
		udma_from_device_barrier();
		if ((s->op_own >> 4) == MLX5_CQE_RESIZE_CQ) {
			/* the copies start one index on: so does the consumer */
			cq->cons_index++;
			return 0;
		}
		d = (struct mlx5_cqe64 *)(nring + (size_t)((i + 1) & (n - 1)) * 64);
		memcpy(d, s, sizeof(*d));
		d->op_own = (uint8_t)((s->op_own & ~MLX5_CQE_OWNER_MASK) | !!((i + 1) & n));
	}
	return EIO;
}

int cx4_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct cx4_cq *cq = to_cx4_cq(ibcq);
	struct cx4_context *ctx = to_cx4_ctx(ibcq->context);
	struct cx4_resize_cq_req req = { .handle = cq->handle };
	struct cx4_buf nb = { .fd = -1 };
	unsigned int n;
	int err;

	if (cqe < 1 || (uint32_t)cqe >= ctx->caps.max_cqes)
		return EINVAL;
	n = 1u << cx4_ilog2_up((uint64_t)cqe + 1);
	/* pollers wait while the CQ moves (rdma-core holds the CQ lock across the command) */
	pthread_spin_lock(&cq->lock);
	if (n == cq->ncqe) {
		pthread_spin_unlock(&cq->lock);
		return 0;
	}
	err = cx4_buf_alloc_pd(&nb, cq->buf.pdom ? &cq->buf.pdom->ibv_pd : NULL, (size_t)n * 64,
			       CX4_RES_TYPE_CQ, "cx4-cq");
	if (err)
		goto out;
	for (unsigned int i = 0; i < n; i++)
		((struct mlx5_cqe64 *)((uint8_t *)nb.va + (size_t)i * 64))->op_own =
		    MLX5_CQE_INVALID << 4;
	req.log_cq_size = cx4_ilog2_up(n);
	req.buf_len = nb.len;
	req.buf_offset = nb.off;
	err = cx4_call(ibcq->context, CX4_OP_RESIZE_CQ, &req, sizeof(req), &nb.fd, 1, NULL, 0);
	if (err) {
		cx4_buf_free(&nb);
		goto out;
	}
	close(nb.fd);
	nb.fd = -1;
	/* from here on the device writes the new ring: whatever happens, it is the one */
	err = copy_cqes(cq, nb.va, n);
	if (err)
		fprintf(stderr, "bridgeverbs: cx4 CQ 0x%x resize: no RESIZE CQE in the old ring\n",
			cq->cqn);
	if (cq->ring.va) {
		cx4_buf_free(&cq->ring);
	} else if (!cq->buf.ext) {
		/* the first buffer keeps the doorbell record: give back the pages of its ring
		 * (an allocator's memory stays as the application gave it) */
		size_t ring = cx4_align((size_t)cq->ncqe * 64, 64) & ~(size_t)(CX4_ADAPTER_PAGE_SIZE - 1);

		if (ring)
			madvise(cq->buf.va, ring, MADV_REMOVE);
	}
	cq->ring = nb;
	cq->cqes = nb.va;
	cq->ncqe = n;
	ibcq->cqe = (int)n - 1;
	udma_to_device_barrier();
	update_cons_index(cq);
out:
	pthread_spin_unlock(&cq->lock);
	return err;
}

/*
 * Completion records the daemon sent for this CQ that the application has not read yet:
 * take them out of the channel (the kernel drops a destroyed CQ's queued events too), put
 * the other CQs' records back, and say how many were ours.
 */
static uint32_t drop_pending_events(struct ibv_cq *ibcq)
{
	uint64_t mine = (uintptr_t)ibcq, rec, *keep = NULL;
	size_t nkeep = 0, cap = 0;
	uint32_t dropped = 0;
	int fd;

	if (!ibcq->channel)
		return 0;
	fd = ibcq->channel->fd;
	while (recv(fd, &rec, sizeof(rec), MSG_DONTWAIT) == sizeof(rec)) {
		if (rec == mine) {
			dropped++;
			continue;
		}
		if (nkeep == cap) {
			uint64_t *k = realloc(keep, (cap ? cap * 2 : 16) * sizeof(*k));

			if (!k)
				break;
			keep = k;
			cap = cap ? cap * 2 : 16;
		}
		keep[nkeep++] = rec;
	}
	for (size_t i = 0; i < nkeep; i++)
		send(fd, &keep[i], sizeof(keep[i]), MSG_DONTWAIT | MSG_NOSIGNAL);
	free(keep);
	return dropped;
}

int cx4_destroy_cq(struct ibv_cq *ibcq)
{
	struct cx4_cq *cq = to_cx4_cq(ibcq);
	struct cx4_handle_req req = { .handle = cq->handle };
	struct cx4_destroy_rsp rsp;
	uint32_t sent;
	int err;

	err = cx4_call(ibcq->context, CX4_OP_DESTROY_CQ, &req, sizeof(req), NULL, 0, &rsp,
		       sizeof(rsp));
	if (err)
		return err;
	sent = (uint32_t)rsp.comp_events - drop_pending_events(ibcq);
	/* ibv_cmd_destroy_cq(): wait until every delivered event was acknowledged */
	cx4_wait_events(&ibcq->mutex, &ibcq->cond, &ibcq->comp_events_completed, sent);
	if (ibcq->channel)
		bv_chan_release(to_bv_context(ibcq->context), ibcq->channel->fd);
	cx4_buf_free(&cq->ring);
	cx4_buf_free(&cq->buf);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}
