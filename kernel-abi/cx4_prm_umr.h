/* SPDX-License-Identifier: MIT */
/*
 * The UMR WQE (PRM "User-Mode Memory Registration"): a send-queue operation that changes a
 * memory key. After the control segment (opcode MLX5_OPCODE_UMR, imm = the mkey it changes):
 *
 *   UMR control segment (48 bytes)  flags, translation size/offset, mkey_mask: which fields
 *                                   of the mkey context below take effect
 *   mkey context segment (64 bytes) laid out as the mkc (cx4_prm_ctx.h CX4_MKC_*)
 *   translation (inline)            KLM entries (byte count, mkey, address), in blocks of
 *                                   four (64 bytes), xlt_octowords 16-byte units
 *
 * Binding a memory window (rdma-core providers/mlx5/qp.c set_bind_wr) and the kernel's own
 * changes of a region (Linux drivers/infiniband/hw/mlx5/umr.c mlx5r_umr_rereg_pd_access,
 * mlx5r_umr_revoke_mr) are both UMRs. The segment layouts are in <infiniband/mlx5dv.h>
 * (struct mlx5_wqe_umr_ctrl_seg, mlx5_wqe_mkey_context_seg, mlx5_wqe_umr_klm_seg); this header
 * adds what it lacks as field descriptors: the two-bit free-state check (mlx5dv names only
 * its value 1) and the mask bits of the fields the kernel changes (PD, local read, remote
 * invalidate). Sources: [qp] Linux include/linux/mlx5/qp.h (struct mlx5_wqe_umr_ctrl_seg,
 * MLX5_UMR_*, enum MLX5_MKEY_MASK_*), [dv] mlx5dv.h (MLX5_WQE_UMR_CTRL_*); the layout test
 * checks that the two agree.
 */
#ifndef CX4_PRM_UMR_H
#define CX4_PRM_UMR_H

#include "cx4_prm_fld.h"

/* ---- UMR control segment ([qp] struct mlx5_wqe_umr_ctrl_seg) ---------------------------- */
#define CX4_UMR_CTRL_SIZE			0x30
#define CX4_UMR_CTRL_INLINE			CX4_FLD(0x00, 31, 1)	/* translation in the WQE */
#define CX4_UMR_CTRL_CHECK_FREE_STATE		CX4_FLD(0x00, 29, 2)	/* CX4_UMR_CHECK_* */
#define CX4_UMR_CTRL_TRANSLATION_OFFSET_EN	CX4_FLD(0x00, 28, 1)
#define CX4_UMR_CTRL_CHECK_QPN			CX4_FLD(0x00, 27, 1)	/* mkey's QP must be ours */
#define CX4_UMR_CTRL_XLT_OCTOWORDS		CX4_FLD(0x04, 16, 16)	/* translation, 16 B units */
#define CX4_UMR_CTRL_XLT_OFFSET			CX4_FLD(0x04, 0, 16)
#define CX4_UMR_CTRL_MKEY_MASK			CX4_FLD64(0x08)

/* check_free_state ([qp] MLX5_UMR_CHECK_NOT_FREE "fail if not free", MLX5_UMR_CHECK_FREE) */
#define CX4_UMR_CHECK_NONE			0x0
#define CX4_UMR_CHECK_FAIL_IF_NOT_FREE		0x1	/* [dv] MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE */
#define CX4_UMR_CHECK_FAIL_IF_FREE		0x2

/* mkey_mask: the mkey context fields the UMR writes ([qp] enum MLX5_MKEY_MASK_*) */
#define CX4_UMR_MKEY_MASK_LEN			(1ull << 0)
#define CX4_UMR_MKEY_MASK_PAGE_SIZE		(1ull << 1)
#define CX4_UMR_MKEY_MASK_START_ADDR		(1ull << 6)
#define CX4_UMR_MKEY_MASK_PD			(1ull << 7)
#define CX4_UMR_MKEY_MASK_EN_RINVAL		(1ull << 8)
#define CX4_UMR_MKEY_MASK_KEY			(1ull << 13)	/* mkey_7_0 */
#define CX4_UMR_MKEY_MASK_QPN			(1ull << 14)
#define CX4_UMR_MKEY_MASK_LR			(1ull << 17)
#define CX4_UMR_MKEY_MASK_LW			(1ull << 18)
#define CX4_UMR_MKEY_MASK_RR			(1ull << 19)
#define CX4_UMR_MKEY_MASK_RW			(1ull << 20)
#define CX4_UMR_MKEY_MASK_A			(1ull << 21)
#define CX4_UMR_MKEY_MASK_FREE			(1ull << 29)

/* ---- the mkey context segment: the mkc's first 64 bytes (CX4_MKC_*) ---------------------- */
#define CX4_UMR_MKEY_SEG_SIZE			0x40

/* ---- an inline KLM entry ([qp] struct mlx5_klm; [dv] mlx5_wqe_umr_klm_seg) --------------- */
#define CX4_KLM_SIZE				0x10
#define CX4_KLM_BYTE_COUNT			CX4_FLD32(0x00)	/* up to 2 GB */
#define CX4_KLM_MKEY				CX4_FLD32(0x04)
#define CX4_KLM_ADDRESS				CX4_FLD64(0x08)
#define CX4_KLM_PER_BLOCK			4	/* translations come in 64-byte blocks */

#endif /* CX4_PRM_UMR_H */
