// SPDX-License-Identifier: MIT
/*
 * Send WQE fetch and parse ([dv] mlx5_wqe_ctrl_seg, mlx5_wqe_raddr_seg, mlx5_wqe_atomic_seg,
 * mlx5_wqe_datagram_seg/av, mlx5_wqe_data_seg, mlx5_wqe_inl_data_seg; rdma-core mlx5
 * _mlx5_post_send for the segment order).
 *
 * A WQE is ds 16-byte units starting at its WQEBB (64 bytes) in the SQ; it may wrap around the
 * end of the SQ. Segment order: ctrl; UD: datagram (48 B); RDMA: raddr; atomics: raddr +
 * atomic; then data segments, each either a pointer (byte_count, lkey, addr) or inline data
 * (byte_count | 0x80000000, then the bytes, padded to 16).
 * The device checks that the control segment names this QP and this WQE index, that the
 * opcode is one the QP's transport has, and that the segments fit the WQE; anything else is a
 * local QP operation error (CQE syndrome 0x02).
 */
#include <string.h>

#include "model.h"

/* Copy n bytes of the SQ at WQEBB counter idx, byte offset off, with wrap-around. */
static int sq_read(struct mdev *d, struct mqp *qp, uint16_t idx, uint32_t off, void *dst,
		   uint32_t n)
{
	uint64_t sq_len = (uint64_t)qp->sq_wqebbs * MLX5_SEND_WQE_BB;
	uint64_t at = ((uint64_t)(idx & (qp->sq_wqebbs - 1)) * MLX5_SEND_WQE_BB + off) % sq_len;
	uint64_t first = sq_len - at < n ? sq_len - at : n;

	if (cx4m_dbuf_read(d, &qp->buf, qp->sq_off + at, dst, first))
		return -1;
	if (first < n && cx4m_dbuf_read(d, &qp->buf, qp->sq_off, (uint8_t *)dst + first, n - first))
		return -1;
	return 0;
}

/* The WQE opcode in the control segment at idx (for flush CQEs of WQEs never started). */
int cx4m_wqe_opcode(struct mdev *d, struct mqp *qp, uint16_t idx, uint8_t *nbb);
int cx4m_wqe_opcode(struct mdev *d, struct mqp *qp, uint16_t idx, uint8_t *nbb)
{
	uint8_t ctrl[16];
	uint32_t ds;

	if (sq_read(d, qp, idx, 0, ctrl, sizeof(ctrl)))
		return -1;
	ds = ctrl[7] & 0x3f;
	*nbb = (uint8_t)(ds ? (ds * 16 + 63) / 64 : 1);
	return ctrl[3];
}

/* The driver's UMR QP (st REG_UMR) posts UMRs only; the transports what IBTA gives them. */
static bool opcode_ok(uint8_t st, uint8_t op)
{
	if (st == CX4_QP_ST_REG_UMR)
		return op == MLX5_OPCODE_NOP || op == MLX5_OPCODE_UMR;
	switch (op) {
	case MLX5_OPCODE_NOP:
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_IMM:
		return true;
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
	case MLX5_OPCODE_UMR:
		return st == CX4_QP_ST_RC || st == CX4_QP_ST_UC;
	case MLX5_OPCODE_RDMA_READ:
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA:
	case MLX5_OPCODE_SEND_INVAL:
		return st == CX4_QP_ST_RC;
	default:
		return false;
	}
}

/* The UMR control segment, the mkey context segment and the inline translation. */
static int parse_umr(struct mwqe *w, uint32_t at)
{
	uint32_t end = (uint32_t)w->ds * 16, oct;

	w->umr_key = cx4_be32_load(w->raw + 12);
	if (end < at + CX4_UMR_CTRL_SIZE + CX4_UMR_MKEY_SEG_SIZE)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	w->umr_ctrl = w->raw + at;
	w->umr_mkey = w->raw + at + CX4_UMR_CTRL_SIZE;
	at += CX4_UMR_CTRL_SIZE + CX4_UMR_MKEY_SEG_SIZE;
	oct = cx4_get(w->umr_ctrl, CX4_UMR_CTRL_XLT_OCTOWORDS);
	w->umr_klm = NULL;
	w->umr_nklm = 0;
	if (!oct)
		return 0;
	/* translations by pointer (not inline) are not modelled */
	if (!cx4_get(w->umr_ctrl, CX4_UMR_CTRL_INLINE) || at + oct * 16 > end)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	w->umr_klm = w->raw + at;
	w->umr_nklm = oct * 16 / CX4_KLM_SIZE;
	return 0;
}

int cx4m_wqe_fetch(struct mdev *d, struct mqp *qp, uint16_t idx, struct mwqe *w)
{
	struct mlx5_wqe_ctrl_seg ctrl;
	uint32_t dw0, dw1, ds, at;
	uint8_t *p = w->raw;

	if (sq_read(d, qp, idx, 0, p, sizeof(ctrl)))
		return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
	memcpy(&ctrl, p, sizeof(ctrl));
	dw0 = be32toh(ctrl.opmod_idx_opcode);
	dw1 = be32toh(ctrl.qpn_ds);
	ds = dw1 & 0x3f;
	w->idx = idx;
	w->opcode = (uint8_t)dw0;
	w->opmod = (uint8_t)(dw0 >> 24);
	w->fm_ce_se = ctrl.fm_ce_se;
	w->imm = ctrl.imm; /* as it stands: big-endian */
	w->ds = (uint8_t)ds;
	w->nbb = (uint8_t)((ds * 16 + 63) / 64);
	w->len = 0;
	w->nsge = 0;
	if (!ds || ds * 16 > MLX5_SEND_WQE_BB * 16 || (dw1 >> 8) != qp->qpn ||
	    ((dw0 >> 8) & 0xffff) != idx || !opcode_ok(qp->st, w->opcode) || w->opmod)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	at = sizeof(ctrl);
	if (ds > 1 && sq_read(d, qp, idx, at, p + at, (ds - 1) * 16))
		return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
	w->umr_ctrl = NULL;
	if (w->opcode == MLX5_OPCODE_NOP)
		return 0;
	if (w->opcode == MLX5_OPCODE_UMR)
		return parse_umr(w, at);
	if (mqp_datagram(qp)) {
		struct mlx5_wqe_av av;
		uint32_t qkey;

		if (ds * 16 < at + sizeof(av))
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		memcpy(&av, p + at, sizeof(av));
		qkey = be32toh(av.key.qkey.qkey);
		/* IBTA: a Q_Key with the high bit set means "use the QP's Q_Key" */
		w->qkey = (qkey & 0x80000000u) ? qp->qkey : qkey;
		w->dqpn = be32toh(av.dqp_dct) & 0xffffff;
		w->av.udp_sport = be16toh(av.rlid); /* RoCE: rlid carries the UDP source port */
		memcpy(w->av.rmac, av.rmac, 6);
		w->av.tclass = av.tclass;
		w->av.hop_limit = av.hop_limit;
		w->av.sgid_index = (uint8_t)(be32toh(av.grh_gid_fl) >> 20);
		w->av.flow_label = be32toh(av.grh_gid_fl) & 0xfffff;
		/* the network type is the source GID entry's, checked when the packet leaves */
		memcpy(w->av.rgid, av.rgid, 16);
		at += sizeof(av);
	}
	if (w->opcode == MLX5_OPCODE_RDMA_WRITE || w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM ||
	    w->opcode == MLX5_OPCODE_RDMA_READ || w->opcode == MLX5_OPCODE_ATOMIC_CS ||
	    w->opcode == MLX5_OPCODE_ATOMIC_FA) {
		if (ds * 16 < at + 16)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		w->raddr = cx4_be64_load(p + at);
		w->rkey = cx4_be32_load(p + at + 8);
		at += 16;
	}
	if (w->opcode == MLX5_OPCODE_ATOMIC_CS || w->opcode == MLX5_OPCODE_ATOMIC_FA) {
		if (ds * 16 < at + 16)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		w->swap_add = cx4_be64_load(p + at);
		w->compare = cx4_be64_load(p + at + 8);
		at += 16;
	}
	while (at < ds * 16) {
		uint32_t bc = cx4_be32_load(p + at);

		if (w->nsge == MQP_MAX_SGE)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		if (bc & MLX5_INLINE_SEG) {
			uint32_t n = bc & ~MLX5_INLINE_SEG;

			if (at + 4 + n > ds * 16)
				return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
			w->sge[w->nsge++] = (struct msge){.len = n, .inl = p + at + 4};
			w->len += n;
			at += (4 + n + 15) & ~15u;
		} else {
			struct msge *s = &w->sge[w->nsge];

			s->len = bc;
			s->lkey = cx4_be32_load(p + at + 4);
			s->addr = cx4_be64_load(p + at + 8);
			s->inl = NULL;
			at += 16;
			if (!bc)
				continue; /* zero-length entries carry nothing */
			if ((uint64_t)w->len + bc > (1ull << 31))
				return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
			w->len += bc;
			w->nsge++;
		}
	}
	if ((w->opcode == MLX5_OPCODE_ATOMIC_CS || w->opcode == MLX5_OPCODE_ATOMIC_FA) &&
	    (w->nsge != 1 || w->len != 8 || w->sge[0].inl))
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (w->opcode == MLX5_OPCODE_RDMA_READ)
		for (uint32_t i = 0; i < w->nsge; i++)
			if (w->sge[i].inl)
				return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (qp->log_msg_max && !mqp_datagram(qp) && w->len > (1ull << qp->log_msg_max))
		return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	return 0;
}
