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

static void set_own(uint8_t *cqe, uint8_t opcode, bool se)
{
	cqe[63] = (uint8_t)(opcode << 4 | (se ? 2 : 0));
}

void cx4m_cqe_req(struct mdev *d, struct mqp *qp, const struct mswqe *w, uint32_t byte_cnt)
{
	uint8_t c[64] = {0};

	cx4_be32_store(c + 0x20, qp->user_index & 0xffffff);
	cx4_be32_store(c + 0x2c, byte_cnt);
	cx4_be32_store(c + 0x38, (uint32_t)w->opcode << 24 | qp->qpn);
	c[0x3c] = (uint8_t)(w->idx >> 8);
	c[0x3d] = (uint8_t)w->idx;
	set_own(c, MLX5_CQE_REQ, false);
	cx4m_cq_push(d, qp->scq, c);
}

void cx4m_cqe_req_err(struct mdev *d, struct mqp *qp, uint16_t idx, uint8_t opcode,
		      uint8_t syndrome)
{
	uint8_t c[64] = {0};

	cx4_be32_store(c + 0x20, qp->user_index & 0xffffff);
	c[0x37] = syndrome;
	cx4_be32_store(c + 0x38, (uint32_t)opcode << 24 | qp->qpn);
	c[0x3c] = (uint8_t)(idx >> 8);
	c[0x3d] = (uint8_t)idx;
	set_own(c, MLX5_CQE_REQ_ERR, false);
	if (syndrome != MLX5_CQE_SYNDROME_WR_FLUSH_ERR)
		cx4m_mdev_log(d, "QP 0x%x: requester error CQE, WQE %u, syndrome 0x%02x", qp->qpn,
			      idx, syndrome);
	cx4m_cq_push(d, qp->scq, c);
}

void cx4m_cqe_resp(struct mdev *d, struct mqp *qp, const struct mrecv *r)
{
	uint8_t c[64] = {0};
	uint32_t flags = 0;

	if (mqp_datagram(qp))
		flags = CQE_FLAGS_GRH |
			(uint32_t)(r->net == ROCE_NET_IPV4   ? 2
				   : r->net == ROCE_NET_IPV6 ? 1
							     : 0)
			    << CQE_ROCE_L3_SHIFT |
			(r->src_qp & 0xffffff);
	cx4_be32_store(c + 0x18, flags);
	cx4_be32_store(c + 0x20, qp->user_index & 0xffffff);
	memcpy(c + 0x24, &r->imm, 4);
	cx4_be32_store(c + 0x2c, r->byte_cnt);
	cx4_be32_store(c + 0x38, qp->qpn);
	c[0x3c] = (uint8_t)(r->wqe_counter >> 8);
	c[0x3d] = (uint8_t)r->wqe_counter;
	set_own(c, r->opcode, r->solicited);
	cx4m_cq_push(d, qp->rcq, c);
}

void cx4m_cqe_resp_err(struct mdev *d, struct mqp *qp, uint16_t wqe_counter, uint8_t syndrome)
{
	uint8_t c[64] = {0};

	cx4_be32_store(c + 0x20, qp->user_index & 0xffffff);
	c[0x37] = syndrome;
	cx4_be32_store(c + 0x38, qp->qpn);
	c[0x3c] = (uint8_t)(wqe_counter >> 8);
	c[0x3d] = (uint8_t)wqe_counter;
	set_own(c, MLX5_CQE_RESP_ERR, false);
	if (syndrome != MLX5_CQE_SYNDROME_WR_FLUSH_ERR)
		cx4m_mdev_log(d, "QP 0x%x: responder error CQE, syndrome 0x%02x", qp->qpn,
			      syndrome);
	cx4m_cq_push(d, qp->rcq, c);
}
