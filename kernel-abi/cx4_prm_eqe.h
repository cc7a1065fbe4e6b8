/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 event queue entries (EQE, 64 bytes) and event types.
 *
 * Source: [dev.h] struct mlx5_eqe and union ev_data (PRM "Event Queue Entry Format" and the
 * per-event "Event Data" tables), [dev.h] enum mlx5_event; Linux eq.c for ownership and the
 * port-number encoding.  All offsets are from the start of the EQE (event data starts at
 * 0x20).  Abbreviations: cx4_prm_iseg.h.
 */
#ifndef CX4_PRM_EQE_H
#define CX4_PRM_EQE_H

#include "cx4_prm_fld.h"

#define CX4_EQE_SIZE			0x40
#define CX4_EQE_TYPE			CX4_FLD(0x00, 16, 8)	/* byte 0x01: CX4_EVENT_TYPE_* */
#define CX4_EQE_SUB_TYPE		CX4_FLD(0x00, 0, 8)	/* byte 0x03 */
#define CX4_EQE_DATA			0x20	/* 28 bytes of event data */
#define CX4_EQE_DATA_LEN		0x1c
#define CX4_EQE_SIGNATURE		CX4_FLD(0x3c, 8, 8)	/* byte 0x3E */
#define CX4_EQE_OWNER			CX4_FLD(0x3c, 0, 1)	/* byte 0x3F bit 0 */
#define CX4_EQE_OWNER_BYTE		0x3f

/*
 * Ownership: software initialises every EQE's owner bit to 1; entry ci (a free-running
 * consumer counter) is valid when owner == (ci >> log_eq_size) & 1, i.e. hardware writes
 * owner 0 on its first pass round the ring, 1 on the second...  (Linux eq.c next_eqe_sw,
 * rdma-core mlx5_vfio.c mlx5_eq_get_eqe).  Software must update the consumer index through
 * the EQ doorbell at least every CX4_EQ_SPARE_EQES entries, or the EQ overruns.
 */
#define CX4_EQ_SPARE_EQES		0x80	/* Linux MLX5_NUM_SPARE_EQE */

static inline bool cx4_eqe_sw_owned(const void *eqe, uint32_t ci, unsigned int log_eq_size)
{
	return cx4_get(eqe, CX4_EQE_OWNER) == ((ci >> log_eq_size) & 1);
}

/* Event types ([dev.h] enum mlx5_event); CREATE_EQ event_bitmask bit n selects type n. */
#define CX4_EVENT_TYPE_COMP			0x00	/* completion on a CQ that has this EQ */
#define CX4_EVENT_TYPE_PATH_MIG			0x01
#define CX4_EVENT_TYPE_COMM_EST			0x02	/* communication established */
#define CX4_EVENT_TYPE_SQ_DRAINED		0x03
#define CX4_EVENT_TYPE_CQ_ERROR			0x04
#define CX4_EVENT_TYPE_WQ_CATAS_ERROR		0x05
#define CX4_EVENT_TYPE_PATH_MIG_FAILED		0x07
#define CX4_EVENT_TYPE_INTERNAL_ERROR		0x08
#define CX4_EVENT_TYPE_PORT_CHANGE		0x09
#define CX4_EVENT_TYPE_CMD			0x0a	/* command completion */
#define CX4_EVENT_TYPE_PAGE_REQUEST		0x0b
#define CX4_EVENT_TYPE_PAGE_FAULT		0x0c
#define CX4_EVENT_TYPE_NIC_VPORT_CHANGE		0x0d
#define CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR	0x10
#define CX4_EVENT_TYPE_WQ_ACCESS_ERROR		0x11
#define CX4_EVENT_TYPE_SRQ_CATAS_ERROR		0x12
#define CX4_EVENT_TYPE_SRQ_LAST_WQE		0x13
#define CX4_EVENT_TYPE_SRQ_RQ_LIMIT		0x14
#define CX4_EVENT_TYPE_GPIO_EVENT		0x15
#define CX4_EVENT_TYPE_REMOTE_CONFIG		0x19
#define CX4_EVENT_TYPE_DB_BF_CONGESTION		0x1a
#define CX4_EVENT_TYPE_STALL_EVENT		0x1b

#define CX4_EVENT_BIT(type)		(UINT64_C(1) << (type))

/*
 * The async-event set Linux 4.4 routes to its async EQ: the [trace]'s second CREATE_EQ has
 * event_bitmask 0x1F02BE = path mig, comm est, SQ drained, CQ error, WQ catas, path mig
 * failed, port change, WQ inval req, WQ access, SRQ catas, SRQ last WQE, SRQ limit.
 */
#define CX4_ASYNC_EVENT_MASK_LINUX44						\
	(CX4_EVENT_BIT(CX4_EVENT_TYPE_PATH_MIG) | CX4_EVENT_BIT(CX4_EVENT_TYPE_COMM_EST) |	\
	 CX4_EVENT_BIT(CX4_EVENT_TYPE_SQ_DRAINED) | CX4_EVENT_BIT(CX4_EVENT_TYPE_CQ_ERROR) |	\
	 CX4_EVENT_BIT(CX4_EVENT_TYPE_WQ_CATAS_ERROR) |					\
	 CX4_EVENT_BIT(CX4_EVENT_TYPE_PATH_MIG_FAILED) |				\
	 CX4_EVENT_BIT(CX4_EVENT_TYPE_PORT_CHANGE) |					\
	 CX4_EVENT_BIT(CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR) |				\
	 CX4_EVENT_BIT(CX4_EVENT_TYPE_WQ_ACCESS_ERROR) |				\
	 CX4_EVENT_BIT(CX4_EVENT_TYPE_SRQ_CATAS_ERROR) |				\
	 CX4_EVENT_BIT(CX4_EVENT_TYPE_SRQ_LAST_WQE) | CX4_EVENT_BIT(CX4_EVENT_TYPE_SRQ_RQ_LIMIT))

/* ---- Event data (offsets from the EQE start) ---------------------------------------------- */
/* COMP: [dev.h] mlx5_eqe_comp { be32 reserved[6]; be32 cqn; } */
#define CX4_EQE_COMP_CQN		CX4_FLD(0x38, 0, 24)

/*
 * QP/SRQ affiliated events (PATH_MIG, COMM_EST, SQ_DRAINED, WQ_*, SRQ_*):
 * [dev.h] mlx5_eqe_qp_srq { be32 reserved1[5]; u8 type; u8 reserved2[3]; be32 qp_srq_n; }
 */
#define CX4_EQE_QP_SRQ_TYPE		CX4_FLD(0x34, 24, 8)	/* CX4_EVENT_QUEUE_TYPE_* */
#define CX4_EQE_QP_SRQ_N		CX4_FLD(0x38, 0, 24)
#define CX4_EVENT_QUEUE_TYPE_QP		0	/* [dev.h] MLX5_EVENT_QUEUE_TYPE_* */
#define CX4_EVENT_QUEUE_TYPE_RQ		1
#define CX4_EVENT_QUEUE_TYPE_SQ		2

/* CQ_ERROR: [dev.h] mlx5_eqe_cq_err { be32 cqn; u8 reserved1[7]; u8 syndrome; } */
#define CX4_EQE_CQ_ERR_CQN		CX4_FLD(0x20, 0, 24)
#define CX4_EQE_CQ_ERR_SYNDROME		CX4_FLD(0x28, 0, 8)	/* byte 0x2B */
#define CX4_CQ_ERR_SYND_OVERRUN		0x01	/* [snabb] connectx.lua */
#define CX4_CQ_ERR_SYND_ACCESS_VIOLATION 0x02

/*
 * PORT_CHANGE: [dev.h] mlx5_eqe_port_state { u8 reserved0[8]; u8 port; } with the port
 * number in the upper nibble (Linux eq.c: port = (eqe->data.port.port >> 4) & 0xf).
 */
#define CX4_EQE_PORT_NUM		CX4_FLD(0x28, 28, 4)
#define CX4_PORT_CHANGE_SUBTYPE_DOWN		1	/* [dev.h] MLX5_PORT_CHANGE_SUBTYPE_* */
#define CX4_PORT_CHANGE_SUBTYPE_ACTIVE		4
#define CX4_PORT_CHANGE_SUBTYPE_INITIALIZED	5
#define CX4_PORT_CHANGE_SUBTYPE_LID		6
#define CX4_PORT_CHANGE_SUBTYPE_PKEY		7
#define CX4_PORT_CHANGE_SUBTYPE_GUID		8
#define CX4_PORT_CHANGE_SUBTYPE_CLIENT_REREG	9

/* CMD: [dev.h] mlx5_eqe_cmd { be32 vector; ... }: bit n = command slot n completed */
#define CX4_EQE_CMD_VECTOR		CX4_FLD32(0x20)

/* PAGE_REQUEST: [dev.h] mlx5_eqe_page_req { u8 rsvd0[2]; be16 func_id; be32 num_pages; } */
#define CX4_EQE_PAGE_REQ_FUNC_ID	CX4_FLD(0x20, 0, 16)
#define CX4_EQE_PAGE_REQ_NUM_PAGES	CX4_FLD32(0x24)	/* signed: < 0 = FW gives pages back */

/* NIC_VPORT_CHANGE: [dev.h] mlx5_eqe_vport_change { u8 rsvd0[2]; be16 vport_num; } */
#define CX4_EQE_VPORT_CHANGE_VPORT_NUM	CX4_FLD(0x20, 0, 16)

#endif /* CX4_PRM_EQE_H */
