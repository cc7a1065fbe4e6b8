// SPDX-License-Identifier: MIT
/*
 * Building CQE64s ([dv] struct mlx5_cqe64 / mlx5_err_cqe). The owner bit
 * and the timestamp are filled when the CQE is written (cq.c).
 *
 *   requester:  op_own opcode 0 (REQ), sop_drop_qpn = WQE opcode << 24 | qpn, wqe_counter =
 *               the WQE's index, byte_cnt = message length (read/atomic: bytes returned)
 *   responder:  opcode RESP_SEND / RESP_SEND_IMM / RESP_WR_IMM, byte_cnt = bytes received
 *               (UD: + 40 bytes of GRH), imm_inval_pkey = immediate, flags_rqpn = source QP and
 *               for UD the "GRH present" and L3 type (GRH, IPv6, IPv4) bits, op_own SE =
 *               solicited
 *   errors:     opcode REQ_ERR / RESP_ERR, syndrome (byte 0x37), s_wqe_opcode_qpn, wqe_counter
 *   srqn_uidx:  the QP's user_index (cmd_hca_cap.cqe_version = 1)
 */
#include <string.h>

#include "model.h"

/* flags_rqpn for RoCE ([dev] mlx5_ib cq.c: g bits [29:28], L3 header type [25:24]:
 * 0 GRH (RoCE v1), 1 IPv6, 2 IPv4, as rdma-core's MLX5_CQE_L3_HDR_TYPE_*) */
#define CQE_FLAGS_GRH (1u << 28)
#define CQE_ROCE_L3_SHIFT 24

/* cx4m_cq_push takes 64 bytes: both [dv] structures are a whole CQE64 */
_Static_assert(sizeof(struct mlx5_cqe64) == 64 && sizeof(struct mlx5_err_cqe) == 64, "CQE64");

static uint8_t op_own(uint8_t opcode, bool se)
{
	return (uint8_t)(opcode << 4 | (se ? 2 : 0));
}

void cx4m_cqe_req(struct mdev *d, struct mqp *qp, const struct mswqe *w, uint32_t byte_cnt)
{
	struct mlx5_cqe64 c = {0};

	c.srqn_uidx = htobe32(qp->user_index & 0xffffff);
	c.byte_cnt = htobe32(byte_cnt);
	c.sop_drop_qpn = htobe32((uint32_t)w->opcode << 24 | qp->qpn);
	c.wqe_counter = htobe16(w->idx);
	c.op_own = op_own(MLX5_CQE_REQ, false);
	cx4m_cq_push(d, qp->scq, (const uint8_t *)&c);
}

/* [dv] struct mlx5_err_cqe: its fields are in wire order too, but declared host-typed. */
static void err_cqe(struct mlx5_err_cqe *e, struct mqp *qp, uint16_t idx, uint8_t wqe_opcode,
		    uint8_t syndrome, uint8_t cqe_opcode)
{
	memset(e, 0, sizeof(*e));
	e->srqn = htobe32(qp->user_index & 0xffffff);
	e->syndrome = syndrome;
	e->s_wqe_opcode_qpn = htobe32((uint32_t)wqe_opcode << 24 | qp->qpn);
	e->wqe_counter = htobe16(idx);
	e->op_own = op_own(cqe_opcode, false);
}

void cx4m_cqe_req_err(struct mdev *d, struct mqp *qp, uint16_t idx, uint8_t opcode,
		      uint8_t syndrome)
{
	struct mlx5_err_cqe e;

	err_cqe(&e, qp, idx, opcode, syndrome, MLX5_CQE_REQ_ERR);
	if (syndrome != MLX5_CQE_SYNDROME_WR_FLUSH_ERR)
		cx4m_mdev_log(d, "QP 0x%x: requester error CQE, WQE %u, syndrome 0x%02x", qp->qpn,
			      idx, syndrome);
	cx4m_cq_push(d, qp->scq, (const uint8_t *)&e);
}

void cx4m_cqe_resp(struct mdev *d, struct mqp *qp, const struct mrecv *r)
{
	struct mlx5_cqe64 c = {0};
	uint32_t flags = 0;

	if (mqp_datagram(qp))
		flags = CQE_FLAGS_GRH |
			(uint32_t)(r->net == ROCE_NET_IPV4   ? MLX5_CQE_L3_HDR_TYPE_IPV4
				   : r->net == ROCE_NET_IPV6 ? MLX5_CQE_L3_HDR_TYPE_IPV6
							     : MLX5_CQE_L3_HDR_TYPE_NONE)
			    << CQE_ROCE_L3_SHIFT |
			(r->src_qp & 0xffffff);
	c.flags_rqpn = htobe32(flags);
	c.srqn_uidx = htobe32(qp->user_index & 0xffffff);
	c.imm_inval_pkey = r->imm; /* as it came: big-endian */
	c.byte_cnt = htobe32(r->byte_cnt);
	c.sop_drop_qpn = htobe32(qp->qpn);
	c.wqe_counter = htobe16(r->wqe_counter);
	c.op_own = op_own(r->opcode, r->solicited);
	cx4m_cq_push(d, qp->rcq, (const uint8_t *)&c);
}

void cx4m_cqe_resp_err(struct mdev *d, struct mqp *qp, uint16_t wqe_counter, uint8_t syndrome)
{
	struct mlx5_err_cqe e;

	err_cqe(&e, qp, wqe_counter, 0, syndrome, MLX5_CQE_RESP_ERR);
	if (syndrome != MLX5_CQE_SYNDROME_WR_FLUSH_ERR)
		cx4m_mdev_log(d, "QP 0x%x: responder error CQE, syndrome 0x%02x", qp->qpn,
			      syndrome);
	cx4m_cq_push(d, qp->rcq, (const uint8_t *)&e);
}
