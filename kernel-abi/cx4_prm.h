/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 Programmer's Reference Manual layouts for bridgeverbs: the one header the cx4
 * device model and the cx4d driver include.  Split by topic:
 *
 *   cx4_prm_fld.h   field descriptors CX4_FLD(off, shift, width) + cx4_get/cx4_set accessors
 *   cx4_prm_iseg.h  BAR0 init segment, command queue entry, mailbox, delivery status, UAR
 *   cx4_prm_cmd.h   opcodes, command status, input/output layout of every command used
 *   cx4_prm_ctx.h   contexts: qpc + address path, cqc, eqc, mkc, srqc, vport, RoCE address
 *   cx4_prm_caps.h  HCA capabilities: general, RoCE, atomic
 *   cx4_prm_eqe.h   event queue entry and event types
 *   cx4_prm_reg.h   ACCESS_REGISTER registers: PAOS, PTYS, PMTU, HOST_ENDIANNESS
 *   cx4_prm_qp.h    QP states, service types, transition optional-parameter masks
 *   cx4_prm_umr.h   the UMR WQE's control segment and mkey mask (memory windows, rereg)
 *
 * Data-path structures (WQE segments, CQE64, doorbell records, WQE/CQE opcodes) are not
 * redefined here: use rdma-core's <infiniband/mlx5dv.h> (struct mlx5_wqe_ctrl_seg,
 * mlx5_wqe_data_seg, mlx5_wqe_raddr_seg, mlx5_wqe_atomic_seg, mlx5_wqe_av, mlx5_cqe64,
 * mlx5_err_cqe, MLX5_OPCODE_*, MLX5_CQE_*).  docs/cx4-prm.md documents sources and guesses.
 */
#ifndef CX4_PRM_H
#define CX4_PRM_H

#include "cx4_prm_fld.h"
#include "cx4_prm_iseg.h"
#include "cx4_prm_cmd.h"
#include "cx4_prm_ctx.h"
#include "cx4_prm_caps.h"
#include "cx4_prm_eqe.h"
#include "cx4_prm_reg.h"
#include "cx4_prm_qp.h"
#include "cx4_prm_umr.h"

#endif /* CX4_PRM_H */
