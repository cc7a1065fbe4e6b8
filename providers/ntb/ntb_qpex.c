// SPDX-License-Identifier: MIT
/*
 * The ibv_wr_* post API (ibv_qp_ex, man ibv_wr_post): a QP created with send_ops_flags
 * builds its work requests one call at a time between ibv_wr_start() and ibv_wr_complete().
 * They are staged here, in the QP's own buffers (inline data is copied when it is set, as
 * the API allows the buffers to be reused at once), and ibv_wr_complete() posts them through
 * the same path as ibv_post_send(): all of them, or - the first error the building or the
 * posting finds - none (its errno is returned). The application serializes the calls on one
 * QP, as it must for ibv_post_send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntb.h"

static struct ntb_qp *ex_to_qp(struct ibv_qp_ex *ex)
{
	return (struct ntb_qp *)ex;
}

/* The next work request, of opcode op (NULL when the building already failed). */
static struct ibv_send_wr *next_wr(struct ibv_qp_ex *ex, enum ibv_wr_opcode op,
				   uint64_t ops_flag)
{
	struct ntb_qp *qp = ex_to_qp(ex);
	struct ntb_qp_stage *st = qp->stage;
	struct ibv_send_wr *wr;

	if (st->err)
		return NULL;
	if (!(qp->send_ops & ops_flag)) {
		st->err = EOPNOTSUPP;	/* not among the QP's send_ops_flags */
		return NULL;
	}
	if (st->n == qp->cap.max_send_wr) {
		st->err = ENOMEM;
		return NULL;
	}
	wr = &st->wr[st->n];
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = ex->wr_id;
	wr->send_flags = ex->wr_flags;
	wr->opcode = op;
	wr->sg_list = st->sge + (size_t)st->n * qp->cap.max_send_sge;
	if (st->n)
		st->wr[st->n - 1].next = wr;
	st->n++;
	return wr;
}

/* The work request the set_* calls refer to (NULL when there is none, or building failed). */
static struct ibv_send_wr *cur_wr(struct ibv_qp_ex *ex)
{
	struct ntb_qp_stage *st = ex_to_qp(ex)->stage;

	if (st->err)
		return NULL;
	if (!st->n) {
		st->err = EINVAL;
		return NULL;
	}
	return &st->wr[st->n - 1];
}

static void wr_start(struct ibv_qp_ex *ex)
{
	struct ntb_qp_stage *st = ex_to_qp(ex)->stage;

	st->n = 0;
	st->err = 0;
}

static int wr_complete(struct ibv_qp_ex *ex)
{
	struct ntb_qp *qp = ex_to_qp(ex);
	struct ntb_qp_stage *st = qp->stage;
	struct ibv_send_wr *bad;
	int ret = st->err;

	if (!ret && st->n)
		ret = ntb_post_chain(qp, st->wr, &bad, true);
	st->n = 0;
	st->err = 0;
	return ret;
}

static void wr_abort(struct ibv_qp_ex *ex)
{
	wr_start(ex);
}

static void wr_send(struct ibv_qp_ex *ex)
{
	next_wr(ex, IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *ex, __be32 imm)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM);

	if (wr)
		wr->imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE);

	if (wr) {
		wr->wr.rdma.rkey = rkey;
		wr->wr.rdma.remote_addr = raddr;
	}
}

static void wr_rdma_write_imm(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_RDMA_WRITE_WITH_IMM,
					 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);

	if (wr) {
		wr->wr.rdma.rkey = rkey;
		wr->wr.rdma.remote_addr = raddr;
		wr->imm_data = imm;
	}
}

static void wr_rdma_read(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ);

	if (wr) {
		wr->wr.rdma.rkey = rkey;
		wr->wr.rdma.remote_addr = raddr;
	}
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr,
			      uint64_t compare, uint64_t swap)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_ATOMIC_CMP_AND_SWP,
					 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);

	if (wr) {
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.remote_addr = raddr;
		wr->wr.atomic.compare_add = compare;
		wr->wr.atomic.swap = swap;
	}
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr,
				uint64_t add)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_ATOMIC_FETCH_AND_ADD,
					 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);

	if (wr) {
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.remote_addr = raddr;
		wr->wr.atomic.compare_add = add;
	}
}

static void wr_atomic_write(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr,
			    const void *data)
{
	struct ibv_send_wr *wr = next_wr(ex, (enum ibv_wr_opcode)NTB_WR_ATOMIC_WRITE,
					 IBV_QP_EX_WITH_ATOMIC_WRITE);

	if (wr) {
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.remote_addr = raddr;
		memcpy(&wr->wr.atomic.compare_add, data, 8);	/* copied now, as inline data */
	}
}

static void wr_send_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV);

	if (wr)
		wr->invalidate_rkey = rkey;
}

static void wr_local_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV);

	if (wr)
		wr->invalidate_rkey = rkey;
}

static void wr_bind_mw(struct ibv_qp_ex *ex, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *wr = next_wr(ex, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW);

	if (wr) {
		wr->bind_mw.mw = mw;
		wr->bind_mw.rkey = rkey;
		wr->bind_mw.bind_info = *info;
	}
}

static void wr_set_ud_addr(struct ibv_qp_ex *ex, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct ibv_send_wr *wr = cur_wr(ex);

	if (wr) {
		wr->wr.ud.ah = ah;
		wr->wr.ud.remote_qpn = remote_qpn;
		wr->wr.ud.remote_qkey = remote_qkey;
	}
}

static void wr_set_sge(struct ibv_qp_ex *ex, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_send_wr *wr = cur_wr(ex);

	if (wr) {
		wr->sg_list[0] = (struct ibv_sge){ .addr = addr, .length = length, .lkey = lkey };
		wr->num_sge = 1;
	}
}

static void wr_set_sge_list(struct ibv_qp_ex *ex, size_t num, const struct ibv_sge *sg)
{
	struct ntb_qp *qp = ex_to_qp(ex);
	struct ibv_send_wr *wr = cur_wr(ex);

	if (!wr)
		return;
	if (num > qp->cap.max_send_sge) {
		qp->stage->err = EINVAL;
		return;
	}
	memcpy(wr->sg_list, sg, num * sizeof(*sg));
	wr->num_sge = (int)num;
}

/* Inline data is copied now: the application may reuse its buffers when the call returns. */
static void wr_set_inline_data_list(struct ibv_qp_ex *ex, size_t num,
				    const struct ibv_data_buf *buf)
{
	struct ntb_qp *qp = ex_to_qp(ex);
	struct ntb_qp_stage *st = qp->stage;
	struct ibv_send_wr *wr = cur_wr(ex);
	uint8_t *dst;
	size_t len = 0;

	if (!wr)
		return;
	for (size_t i = 0; i < num; i++)
		len += buf[i].length;
	if (len > qp->cap.max_inline_data) {
		st->err = EINVAL;
		return;
	}
	dst = st->inl + (size_t)(st->n - 1) * qp->cap.max_inline_data;
	for (size_t i = 0, off = 0; i < num; off += buf[i].length, i++)
		memcpy(dst + off, buf[i].addr, buf[i].length);
	wr->sg_list[0] = (struct ibv_sge){ .addr = (uintptr_t)dst, .length = (uint32_t)len };
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *ex, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	wr_set_inline_data_list(ex, 1, &b);
}

#define NTB_SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                 \
			 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |     \
			 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |       \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE |    \
			 NTB_MW_OPS)
#define NTB_MW_OPS	(IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |                  \
			 IBV_QP_EX_WITH_SEND_WITH_INV)

int ntb_qpex_check(enum ibv_qp_type type, uint64_t ops)
{
	uint64_t allowed = NTB_SEND_OPS;

	if (type == IBV_QPT_UC)
		allowed = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			  IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			  NTB_MW_OPS;
	else if (type == IBV_QPT_UD)
		allowed = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	/* TSO: not on this device */
	return ops & ~allowed ? EOPNOTSUPP : 0;
}

int ntb_qpex_init(struct ntb_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *ex = &qp->vqp.qp_ex;
	struct ntb_qp_stage *st = calloc(1, sizeof(*st));
	size_t n = qp->cap.max_send_wr ? qp->cap.max_send_wr : 1;

	if (!st)
		return ENOMEM;
	st->wr = calloc(n, sizeof(*st->wr));
	st->sge = calloc(n * qp->cap.max_send_sge, sizeof(*st->sge));
	if (qp->cap.max_inline_data)
		st->inl = malloc(n * qp->cap.max_inline_data);
	if (!st->wr || !st->sge || (qp->cap.max_inline_data && !st->inl)) {
		qp->stage = st;
		ntb_qpex_fini(qp);
		return ENOMEM;
	}
	qp->stage = st;
	qp->send_ops = ops;
	ex->wr_start = wr_start;
	ex->wr_complete = wr_complete;
	ex->wr_abort = wr_abort;
	ex->wr_send = wr_send;
	ex->wr_send_imm = wr_send_imm;
	ex->wr_rdma_write = wr_rdma_write;
	ex->wr_rdma_write_imm = wr_rdma_write_imm;
	ex->wr_rdma_read = wr_rdma_read;
	ex->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	ex->wr_atomic_fetch_add = wr_atomic_fetch_add;
	ex->wr_atomic_write = wr_atomic_write;
	ex->wr_send_inv = wr_send_inv;
	ex->wr_local_inv = wr_local_inv;
	ex->wr_bind_mw = wr_bind_mw;
	ex->wr_set_ud_addr = wr_set_ud_addr;
	ex->wr_set_sge = wr_set_sge;
	ex->wr_set_sge_list = wr_set_sge_list;
	ex->wr_set_inline_data = wr_set_inline_data;
	ex->wr_set_inline_data_list = wr_set_inline_data_list;
	qp->vqp.comp_mask |= VERBS_QP_EX;
	return 0;
}

void ntb_qpex_fini(struct ntb_qp *qp)
{
	if (!qp->stage)
		return;
	free(qp->stage->wr);
	free(qp->stage->sge);
	free(qp->stage->inl);
	free(qp->stage);
	qp->stage = NULL;
}

int ntb_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	/*
	 * No order is promised within a message: long placements are CPU copies (memcpy may
	 * use non-temporal stores, which other CPUs see in any order) or process_vm_writev. What
	 * is promised is less and is all perftest needs: a message's last 8 bytes are stored
	 * after the rest (ntb_pio_copy), and a completion follows the whole message.
	 */
	(void)qp;
	(void)op;
	(void)flags;
	return 0;
}
