/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 QP state machine: qpc.state values, service types, MTU codes and the
 * optional-parameter mask carried by the state-transition commands (in 0x10).
 *
 * Sources: Linux include/linux/mlx5/qp.h (enum mlx5_qp_optpar, mlx5_qp_state, MLX5_QP_ST_*,
 * MLX5_QP_PM_*), [ifc] MLX5_QPC_* enums, and the per-transition table opt_mask[][][] of Linux
 * drivers/infiniband/hw/mlx5/qp.c (4.x), which is the driver-side copy of the PRM table
 * "Optional Parameters per QP Transition".  Abbreviations: cx4_prm_iseg.h.
 */
#ifndef CX4_PRM_QP_H
#define CX4_PRM_QP_H

#include "cx4_prm_cmd.h"

/*
 * qpc.state.  qp.h and rdma-core agree on 0-4, 6 and 9; state 5 is "SQ drained" (rdma-core
 * MLX5_QPC_STATE_SQDRAINED, qp.h MLX5_QP_STATE_SQD) and 7 "SQ draining" (qp.h), which the
 * newer [ifc] calls MLX5_QPC_STATE_SQD.  We follow qp.h.
 */
#define CX4_QP_STATE_RST		0
#define CX4_QP_STATE_INIT		1
#define CX4_QP_STATE_RTR		2
#define CX4_QP_STATE_RTS		3
#define CX4_QP_STATE_SQER		4
#define CX4_QP_STATE_SQD		5
#define CX4_QP_STATE_ERR		6
#define CX4_QP_STATE_SQ_DRAINING	7
#define CX4_QP_STATE_SUSPENDED		9

/* qpc.st service types ([ifc] MLX5_QPC_ST_*, qp.h MLX5_QP_ST_*) */
#define CX4_QP_ST_RC			0x0
#define CX4_QP_ST_UC			0x1
#define CX4_QP_ST_UD			0x2
#define CX4_QP_ST_XRC			0x3
#define CX4_QP_ST_MLX			0x4
#define CX4_QP_ST_DCI			0x5
#define CX4_QP_ST_DCT			0x6
#define CX4_QP_ST_QP0			0x7
#define CX4_QP_ST_QP1			0x8
#define CX4_QP_ST_RAW_DATAGRAM		0x9
#define CX4_QP_ST_REG_UMR		0xc

/* qpc.pm_state ([ifc] MLX5_QPC_PM_STATE_*) */
#define CX4_QP_PM_ARMED			0x0
#define CX4_QP_PM_REARM			0x1
#define CX4_QP_PM_MIGRATED		0x3

/* qpc.mtu ([ifc] MLX5_QPC_MTU_*; same codes as IBTA enum ib_mtu) */
#define CX4_QP_MTU_256			0x1
#define CX4_QP_MTU_512			0x2
#define CX4_QP_MTU_1024			0x3
#define CX4_QP_MTU_2048			0x4
#define CX4_QP_MTU_4096			0x5
#define CX4_QP_MTU_RAW_ETH		0x7

/* qpc.rq_type (rdma-core/Linux MLX5_NON_ZERO_RQ, MLX5_SRQ_RQ, MLX5_CRQ_RQ, MLX5_ZERO_LEN_RQ) */
#define CX4_QP_RQ_TYPE_REGULAR		0x0
#define CX4_QP_RQ_TYPE_SRQ		0x1
#define CX4_QP_RQ_TYPE_CRQ		0x2
#define CX4_QP_RQ_TYPE_ZERO_LEN		0x3

/* qpc.atomic_mode ([ifc] MLX5_QPC_ATOMIC_MODE_*) */
#define CX4_QP_ATOMIC_MODE_IB_SPEC	0x1
#define CX4_QP_ATOMIC_MODE_ONLY_8B	0x2
#define CX4_QP_ATOMIC_MODE_UP_TO_8B	0x3

/* opt_param_mask bits (qp.h enum mlx5_qp_optpar) */
#define CX4_QP_OPTPAR_ALT_ADDR_PATH	(1u << 0)
#define CX4_QP_OPTPAR_RRE		(1u << 1)
#define CX4_QP_OPTPAR_RAE		(1u << 2)
#define CX4_QP_OPTPAR_RWE		(1u << 3)
#define CX4_QP_OPTPAR_PKEY_INDEX	(1u << 4)
#define CX4_QP_OPTPAR_Q_KEY		(1u << 5)
#define CX4_QP_OPTPAR_RNR_TIMEOUT	(1u << 6)
#define CX4_QP_OPTPAR_PRIMARY_ADDR_PATH	(1u << 7)
#define CX4_QP_OPTPAR_SRA_MAX		(1u << 8)
#define CX4_QP_OPTPAR_RRA_MAX		(1u << 9)
#define CX4_QP_OPTPAR_PM_STATE		(1u << 10)
#define CX4_QP_OPTPAR_RETRY_COUNT	(1u << 12)
#define CX4_QP_OPTPAR_RNR_RETRY		(1u << 13)
#define CX4_QP_OPTPAR_ACK_TIMEOUT	(1u << 14)
#define CX4_QP_OPTPAR_LAG_TX_AFF	(1u << 15)
#define CX4_QP_OPTPAR_PRI_PORT		(1u << 16)
#define CX4_QP_OPTPAR_SRQN		(1u << 18)
#define CX4_QP_OPTPAR_CQN_RCV		(1u << 19)
#define CX4_QP_OPTPAR_DC_HS		(1u << 20)
#define CX4_QP_OPTPAR_DC_KEY		(1u << 21)
#define CX4_QP_OPTPAR_COUNTER_SET_ID	(1u << 25)

/*
 * Optional parameters each transition accepts, per service type: Linux mlx5_ib opt_mask[]
 * (the driver ANDs the verbs attr_mask translation with this before sending the command).
 * Transitions absent from that table (RST2INIT, 2ERR, 2RST, SQD_RTS) take no optional
 * parameters: every field they read is mandatory.  A model rejects a mask with other bits
 * set (BAD_PARAM) and applies only the optional fields whose bits are set.
 */
#define CX4_QP_OPTMASK_INIT2INIT_RC	(CX4_QP_OPTPAR_RRE | CX4_QP_OPTPAR_RAE |		\
					 CX4_QP_OPTPAR_RWE | CX4_QP_OPTPAR_PKEY_INDEX |	\
					 CX4_QP_OPTPAR_PRI_PORT)
#define CX4_QP_OPTMASK_INIT2INIT_UC	(CX4_QP_OPTPAR_RWE | CX4_QP_OPTPAR_PKEY_INDEX |	\
					 CX4_QP_OPTPAR_PRI_PORT)
#define CX4_QP_OPTMASK_INIT2INIT_UD	(CX4_QP_OPTPAR_PKEY_INDEX | CX4_QP_OPTPAR_Q_KEY |	\
					 CX4_QP_OPTPAR_PRI_PORT)
#define CX4_QP_OPTMASK_INIT2RTR_RC	(CX4_QP_OPTPAR_ALT_ADDR_PATH | CX4_QP_OPTPAR_RRE |	\
					 CX4_QP_OPTPAR_RAE | CX4_QP_OPTPAR_RWE |		\
					 CX4_QP_OPTPAR_PKEY_INDEX)
#define CX4_QP_OPTMASK_INIT2RTR_UC	(CX4_QP_OPTPAR_ALT_ADDR_PATH | CX4_QP_OPTPAR_RWE |	\
					 CX4_QP_OPTPAR_PKEY_INDEX)
#define CX4_QP_OPTMASK_INIT2RTR_UD	(CX4_QP_OPTPAR_PKEY_INDEX | CX4_QP_OPTPAR_Q_KEY)
#define CX4_QP_OPTMASK_RTR2RTS_RC	(CX4_QP_OPTPAR_ALT_ADDR_PATH | CX4_QP_OPTPAR_RRE |	\
					 CX4_QP_OPTPAR_RAE | CX4_QP_OPTPAR_RWE |		\
					 CX4_QP_OPTPAR_PM_STATE | CX4_QP_OPTPAR_RNR_TIMEOUT)
#define CX4_QP_OPTMASK_RTR2RTS_UC	(CX4_QP_OPTPAR_ALT_ADDR_PATH | CX4_QP_OPTPAR_RWE |	\
					 CX4_QP_OPTPAR_PM_STATE)
#define CX4_QP_OPTMASK_RTR2RTS_UD	(CX4_QP_OPTPAR_Q_KEY)
#define CX4_QP_OPTMASK_RTS2RTS_RC	(CX4_QP_OPTPAR_RRE | CX4_QP_OPTPAR_RAE |		\
					 CX4_QP_OPTPAR_RWE | CX4_QP_OPTPAR_RNR_TIMEOUT |	\
					 CX4_QP_OPTPAR_PM_STATE | CX4_QP_OPTPAR_ALT_ADDR_PATH)
#define CX4_QP_OPTMASK_RTS2RTS_UC	(CX4_QP_OPTPAR_RWE | CX4_QP_OPTPAR_PM_STATE |		\
					 CX4_QP_OPTPAR_ALT_ADDR_PATH)
#define CX4_QP_OPTMASK_RTS2RTS_UD	(CX4_QP_OPTPAR_Q_KEY | CX4_QP_OPTPAR_SRQN |		\
					 CX4_QP_OPTPAR_CQN_RCV)
#define CX4_QP_OPTMASK_SQERR2RTS_RC	(CX4_QP_OPTPAR_RNR_TIMEOUT | CX4_QP_OPTPAR_RWE |	\
					 CX4_QP_OPTPAR_RAE | CX4_QP_OPTPAR_RRE)
#define CX4_QP_OPTMASK_SQERR2RTS_UC	(CX4_QP_OPTPAR_RWE)
#define CX4_QP_OPTMASK_SQERR2RTS_UD	(CX4_QP_OPTPAR_Q_KEY)

/*
 * Allowed optional-parameter mask for a transition command and service type; 0 for
 * transitions or types without optional parameters (RST2INIT, SQD_RTS, XRC/raw/...).
 */
static inline uint32_t cx4_qp_optmask_allowed(uint16_t opcode, unsigned int st)
{
	static const uint32_t tbl[5][3] = {	/* RC, UC, UD */
		{ CX4_QP_OPTMASK_INIT2INIT_RC, CX4_QP_OPTMASK_INIT2INIT_UC,
		  CX4_QP_OPTMASK_INIT2INIT_UD },
		{ CX4_QP_OPTMASK_INIT2RTR_RC, CX4_QP_OPTMASK_INIT2RTR_UC,
		  CX4_QP_OPTMASK_INIT2RTR_UD },
		{ CX4_QP_OPTMASK_RTR2RTS_RC, CX4_QP_OPTMASK_RTR2RTS_UC,
		  CX4_QP_OPTMASK_RTR2RTS_UD },
		{ CX4_QP_OPTMASK_RTS2RTS_RC, CX4_QP_OPTMASK_RTS2RTS_UC,
		  CX4_QP_OPTMASK_RTS2RTS_UD },
		{ CX4_QP_OPTMASK_SQERR2RTS_RC, CX4_QP_OPTMASK_SQERR2RTS_UC,
		  CX4_QP_OPTMASK_SQERR2RTS_UD },
	};
	int row;

	switch (opcode) {
	case CX4_CMD_OP_INIT2INIT_QP: row = 0; break;
	case CX4_CMD_OP_INIT2RTR_QP: row = 1; break;
	case CX4_CMD_OP_RTR2RTS_QP: row = 2; break;
	case CX4_CMD_OP_RTS2RTS_QP: row = 3; break;
	case CX4_CMD_OP_SQERR2RTS_QP: row = 4; break;
	default: return 0;
	}
	if (st == CX4_QP_ST_QP1)
		st = CX4_QP_ST_UD;	/* the GSI QP takes UD's (Linux mlx5 qp.c opt_mask) */
	if (st > CX4_QP_ST_UD)
		return 0;
	return tbl[row][st];
}

#endif /* CX4_PRM_QP_H */
