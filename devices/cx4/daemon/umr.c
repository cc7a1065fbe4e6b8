// SPDX-License-Identifier: MIT
/*
 * The driver's UMR QP (Linux drivers/infiniband/hw/mlx5/umr.c: mlx5r_umr_resource_init,
 * mlx5r_umr_post_send_wait, mlx5r_umr_rereg_pd_access): a QP of service type REG_UMR with
 * its own PD and CQ in the daemon's DMA memory, through which cx4d changes a memory key in
 * place. The only user is ibv_rereg_mr of a new PD or new access flags, so lkey and rkey stay
 * the same, as on Linux.
 *
 * One UMR at a time, synchronously: the WQE (control segment, UMR control segment with the
 * PD and access mask bits and "fail if free", the mkey context segment with the new values)
 * goes into the send queue, the counter into the doorbell record, the first 8 bytes to the
 * daemon's UAR (BlueFlame register 0, which nothing else of the daemon uses), and the daemon
 * polls the CQ for its completion (the CQ is never armed). A failed UMR leaves the QP in
 * error; it is taken back to RTS before the next one (Linux mlx5r_umr_recover).
 *
 * The resources are created on first use, not at bring-up as Linux does (where mlx5_ib loads):
 * the bring-up stays command for command the Linux trace's (docs/cx4-driver.md).
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cx4d.h"

#define UMR_LOG_SQ 4 /* 16 basic blocks: a UMR WQE takes two */
#define UMR_LOG_CQ 4
#define UMR_DBR 1024 /* the doorbell records after the ring, in the same page */
#define UMR_TIMEOUT_MS 5000

static int simple(struct cx4d *d, uint16_t op, cx4_fld_t f, uint32_t v)
{
	uint8_t in[0x10] = {0}, out[0x10];

	cx4d_cmd_set_header(in, op, 0);
	cx4_set(in, f, v);
	return cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

static int transition(struct cx4d *d, uint16_t op, uint32_t qpn)
{
	uint8_t in[CX4_MODIFY_QP_IN_SIZE] = {0}, out[CX4_MODIFY_QP_OUT_SIZE];
	uint8_t *qpc = in + CX4_MODIFY_QP_IN_QPC;

	cx4d_cmd_set_header(in, op, 0);
	cx4_set(in, CX4_MODIFY_QP_IN_QPN, qpn);
	cx4_set(qpc, CX4_QPC_PM_STATE, CX4_QP_PM_MIGRATED);
	if (op == CX4_CMD_OP_RST2INIT_QP)
		cx4_set(qpc, CX4_QPC_PRI(CX4_ADS_VHCA_PORT_NUM), 1);
	if (op == CX4_CMD_OP_2RST_QP)
		return cx4d_cmd(d, in, CX4_QP_2ERR_IN_SIZE, out, sizeof(out));
	return cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

/* RESET -> INIT -> RTR -> RTS, the send queue empty again (mlx5r_umr_qp_rst2rts). */
static int to_rts(struct cx4d *d, struct cx4d_umr *u)
{
	int err = transition(d, CX4_CMD_OP_RST2INIT_QP, u->qpn);

	if (!err)
		err = transition(d, CX4_CMD_OP_INIT2RTR_QP, u->qpn);
	if (!err)
		err = transition(d, CX4_CMD_OP_RTR2RTS_QP, u->qpn);
	u->sq_pi = 0;
	((volatile __be32 *)(u->qp_buf.va + UMR_DBR))[1] = 0;
	return err;
}

static int create_cq(struct cx4d *d, struct cx4d_umr *u)
{
	uint8_t in[CX4_CREATE_CQ_IN_SIZE + 8] = {0}, out[CX4_CREATE_CQ_OUT_SIZE];
	uint8_t *cqc = in + CX4_CREATE_CQ_IN_CQC;
	int err = cx4d_dma_alloc(d, CX4D_PAGE, &u->cq_buf);

	if (err)
		return err;
	for (unsigned int i = 0; i < 1u << UMR_LOG_CQ; i++)
		u->cq_buf.va[i * 64 + 63] = MLX5_CQE_INVALID << 4;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_CQ, 0);
	cx4_set(cqc, CX4_CQC_CQE_SZ, CX4_CQC_CQE_SZ_64);
	cx4_set(cqc, CX4_CQC_LOG_CQ_SIZE, UMR_LOG_CQ);
	cx4_set(cqc, CX4_CQC_UAR_PAGE, d->uar);
	cx4_set(cqc, CX4_CQC_C_EQN, d->eq_comp[0].eqn);
	cx4_set64(cqc, CX4_CQC_DBR_ADDR, u->cq_buf.iova + UMR_DBR);
	cx4_pas_set(in, CX4_CREATE_CQ_IN_PAS, 0, u->cq_buf.iova);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err) {
		cx4d_dma_free(d, &u->cq_buf);
		return err;
	}
	u->cqn = cx4_get(out, CX4_CREATE_CQ_OUT_CQN);
	u->cq_ci = 0;
	return 0;
}

static int create_qp(struct cx4d *d, struct cx4d_umr *u)
{
	uint8_t in[CX4_CREATE_QP_IN_SIZE + 8] = {0}, out[CX4_CREATE_QP_OUT_SIZE];
	uint8_t *qpc = in + CX4_CREATE_QP_IN_QPC;
	int err = cx4d_dma_alloc(d, CX4D_PAGE, &u->qp_buf);

	if (err)
		return err;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_QP, 0);
	cx4_set(qpc, CX4_QPC_ST, CX4_QP_ST_REG_UMR);
	cx4_set(qpc, CX4_QPC_PM_STATE, CX4_QP_PM_MIGRATED);
	cx4_set(qpc, CX4_QPC_PD, u->pdn);
	cx4_set(qpc, CX4_QPC_UAR_PAGE, d->uar);
	cx4_set(qpc, CX4_QPC_RQ_TYPE, CX4_QP_RQ_TYPE_ZERO_LEN);
	cx4_set(qpc, CX4_QPC_LOG_SQ_SIZE, UMR_LOG_SQ);
	cx4_set(qpc, CX4_QPC_CQN_SND, u->cqn);
	cx4_set(qpc, CX4_QPC_CQN_RCV, u->cqn);
	cx4_set64(qpc, CX4_QPC_DBR_ADDR, u->qp_buf.iova + UMR_DBR);
	cx4_pas_set(in, CX4_CREATE_QP_IN_PAS, 0, u->qp_buf.iova);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err) {
		cx4d_dma_free(d, &u->qp_buf);
		return err;
	}
	u->qpn = cx4_get(out, CX4_CREATE_QP_OUT_QPN);
	return 0;
}

static int umr_init(struct cx4d *d)
{
	struct cx4d_umr *u = &d->umr;
	uint8_t in[0x10] = {0}, out[0x10];
	int err;

	cx4d_cmd_set_header(in, CX4_CMD_OP_ALLOC_PD, 0);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	u->pdn = cx4_get(out, CX4_ALLOC_PD_OUT_PD);
	err = create_cq(d, u);
	if (err)
		goto no_cq;
	err = create_qp(d, u);
	if (err)
		goto no_qp;
	err = to_rts(d, u);
	if (err)
		goto no_rts;
	u->live = true;
	return 0;
no_rts:
	simple(d, CX4_CMD_OP_DESTROY_QP, CX4_QP_NOCTX_IN_QPN, u->qpn);
	cx4d_dma_free(d, &u->qp_buf);
no_qp:
	simple(d, CX4_CMD_OP_DESTROY_CQ, CX4_DESTROY_CQ_IN_CQN, u->cqn);
	cx4d_dma_free(d, &u->cq_buf);
no_cq:
	simple(d, CX4_CMD_OP_DEALLOC_PD, CX4_DEALLOC_PD_IN_PD, u->pdn);
	return err;
}

void cx4d_umr_fini(struct cx4d *d)
{
	struct cx4d_umr *u = &d->umr;

	if (!u->live)
		return;
	if (!d->dead) {
		transition(d, CX4_CMD_OP_2RST_QP, u->qpn);
		simple(d, CX4_CMD_OP_DESTROY_QP, CX4_QP_NOCTX_IN_QPN, u->qpn);
		simple(d, CX4_CMD_OP_DESTROY_CQ, CX4_DESTROY_CQ_IN_CQN, u->cqn);
		simple(d, CX4_CMD_OP_DEALLOC_PD, CX4_DEALLOC_PD_IN_PD, u->pdn);
	}
	cx4d_dma_free(d, &u->qp_buf);
	cx4d_dma_free(d, &u->cq_buf);
	u->live = false;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The next CQE, when the device wrote it (owner bit = bit log_size of the index). */
static struct mlx5_cqe64 *poll_cqe(struct cx4d_umr *u)
{
	struct mlx5_cqe64 *cqe =
	    (struct mlx5_cqe64 *)(u->cq_buf.va +
				  (size_t)(u->cq_ci & ((1u << UMR_LOG_CQ) - 1)) * 64);
	uint8_t op_own = *(volatile uint8_t *)&cqe->op_own;

	if ((op_own >> 4) == MLX5_CQE_INVALID ||
	    (op_own & MLX5_CQE_OWNER_MASK) != !!(u->cq_ci & (1u << UMR_LOG_CQ)))
		return NULL;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return cqe;
}

/* Post one UMR WQE (umr_seg, mkey_seg: the UMR control and mkey context segments) and wait. */
static int post_wait(struct cx4d *d, uint32_t mkey, const uint8_t *umr_seg, const uint8_t *mkey_seg)
{
	struct cx4d_umr *u = &d->umr;
	unsigned int idx = u->sq_pi & ((1u << UMR_LOG_SQ) - 1);
	uint8_t *wqe = u->qp_buf.va + (size_t)idx * MLX5_SEND_WQE_BB;
	struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *)wqe;
	unsigned int ds = (sizeof(*ctrl) + CX4_UMR_CTRL_SIZE + CX4_UMR_MKEY_SEG_SIZE) / 16;
	uint64_t deadline = now_ms() + UMR_TIMEOUT_MS;
	struct mlx5_cqe64 *cqe;
	uint8_t op;

	/* two basic blocks from idx: the queue holds 16, a WQE never wraps here */
	memset(wqe, 0, 2 * MLX5_SEND_WQE_BB);
	ctrl->opmod_idx_opcode = htobe32((u->sq_pi & 0xffff) << 8 | MLX5_OPCODE_UMR);
	ctrl->qpn_ds = htobe32(u->qpn << 8 | ds);
	ctrl->fm_ce_se = MLX5_WQE_CTRL_CQ_UPDATE;
	ctrl->imm = htobe32(mkey);
	memcpy(wqe + sizeof(*ctrl), umr_seg, CX4_UMR_CTRL_SIZE);
	memcpy(wqe + sizeof(*ctrl) + CX4_UMR_CTRL_SIZE, mkey_seg, CX4_UMR_MKEY_SEG_SIZE);
	u->sq_pi += 2;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	((volatile __be32 *)(u->qp_buf.va + UMR_DBR))[1] = htobe32(u->sq_pi & 0xffff);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cx4_mmio_write64_be(&d->uar_mmio, CX4_UAR_BF_OFFSET, *(uint64_t *)wqe);

	while (!(cqe = poll_cqe(u))) {
		struct timespec ts = {0, 20000};

		if (now_ms() > deadline) {
			cx4d_log(d, "UMR on mkey 0x%x: no completion in %d ms", mkey,
				 UMR_TIMEOUT_MS);
			u->broken = true;
			return ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
	}
	op = cqe->op_own >> 4;
	u->cq_ci++;
	((volatile __be32 *)(u->cq_buf.va + UMR_DBR))[0] = htobe32(u->cq_ci & 0xffffff);
	if (op != MLX5_CQE_REQ) {
		struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)cqe;

		cx4d_log(d, "UMR on mkey 0x%x failed: CQE syndrome 0x%02x", mkey, e->syndrome);
		u->broken = true;
		return e->syndrome == MLX5_CQE_SYNDROME_MW_BIND_ERR ? EINVAL : EIO;
	}
	return 0;
}

/* The resources, and the QP back from an error (mlx5r_umr_recover). */
static int ready(struct cx4d *d)
{
	struct cx4d_umr *u = &d->umr;
	int err;

	if (!u->live)
		return umr_init(d);
	if (!u->broken)
		return 0;
	err = transition(d, CX4_CMD_OP_2RST_QP, u->qpn);
	if (!err)
		err = to_rts(d, u);
	/* CQEs the error left (flushes) are stale now */
	while (!err && poll_cqe(u))
		u->cq_ci++;
	((volatile __be32 *)(u->cq_buf.va + UMR_DBR))[0] = htobe32(u->cq_ci & 0xffffff);
	if (!err)
		u->broken = false;
	return err;
}

int cx4d_umr_rereg_pd_access(struct cx4d *d, uint32_t key, uint32_t pdn, uint32_t access)
{
	uint8_t umr[CX4_UMR_CTRL_SIZE] = {0}, mkc[CX4_UMR_MKEY_SEG_SIZE] = {0};
	int err = ready(d);

	if (err)
		return err;
	/* the key must be in use (fail if free); PD and access change, inline, no translation */
	cx4_set(umr, CX4_UMR_CTRL_INLINE, 1);
	cx4_set(umr, CX4_UMR_CTRL_CHECK_FREE_STATE, CX4_UMR_CHECK_FAIL_IF_FREE);
	cx4_set64(umr, CX4_UMR_CTRL_MKEY_MASK,
		  CX4_UMR_MKEY_MASK_PD | CX4_UMR_MKEY_MASK_LR | CX4_UMR_MKEY_MASK_LW |
		      CX4_UMR_MKEY_MASK_RR | CX4_UMR_MKEY_MASK_RW | CX4_UMR_MKEY_MASK_A);
	cx4_set(mkc, CX4_MKC_LR, 1);
	cx4_set(mkc, CX4_MKC_LW, !!(access & IBV_ACCESS_LOCAL_WRITE));
	cx4_set(mkc, CX4_MKC_RR, !!(access & IBV_ACCESS_REMOTE_READ));
	cx4_set(mkc, CX4_MKC_RW, !!(access & IBV_ACCESS_REMOTE_WRITE));
	cx4_set(mkc, CX4_MKC_A, !!(access & IBV_ACCESS_REMOTE_ATOMIC));
	cx4_set(mkc, CX4_MKC_PD, pdn);
	cx4_set(mkc, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	cx4_set(mkc, CX4_MKC_MKEY_7_0, key & 0xff);
	return post_wait(d, key, umr, mkc);
}
