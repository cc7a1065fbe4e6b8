/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 object contexts: QP (qpc + address path), CQ (cqc), EQ (eqc), memory key (mkc),
 * SRQ (srqc), NIC vport context, HCA vport context and the RoCE address (GID table entry).
 *
 * Offsets are relative to the start of the context; a command embeds the context at the
 * offset given in cx4_prm_cmd.h, so use CX4_AT(CX4_CREATE_CQ_IN_CQC, CX4_CQC_LOG_CQ_SIZE).
 * Source for every layout: [ifc] struct mlx5_ifc_<ctx>_bits (the PRM "<Object> Context Format"
 * tables), checked field by field with a bit-offset calculator; abbreviations in
 * cx4_prm_iseg.h.  Fields that newer devices added (ConnectX-5+) are left out on purpose.
 */
#ifndef CX4_PRM_CTX_H
#define CX4_PRM_CTX_H

#include "cx4_prm_fld.h"

/* ---- Address path, 0x2C bytes ([ifc] ads; the PRM's "Address Path Format") ---------------- */
#define CX4_ADS_SIZE			0x2c
#define CX4_ADS_FL			CX4_FLD(0x00, 31, 1)	/* force loopback */
#define CX4_ADS_FREE_AR			CX4_FLD(0x00, 30, 1)
#define CX4_ADS_PKEY_INDEX		CX4_FLD(0x00, 0, 16)
#define CX4_ADS_GRH			CX4_FLD(0x04, 23, 1)	/* IB only; RoCE always has one */
#define CX4_ADS_MLID			CX4_FLD(0x04, 16, 7)
#define CX4_ADS_RLID			CX4_FLD(0x04, 0, 16)
#define CX4_ADS_ACK_TIMEOUT		CX4_FLD(0x08, 27, 5)	/* 4.096 us << n, 0 = infinite */
#define CX4_ADS_SRC_ADDR_INDEX		CX4_FLD(0x08, 16, 8)	/* RoCE address (GID) index */
#define CX4_ADS_STAT_RATE		CX4_FLD(0x08, 8, 4)
#define CX4_ADS_HOP_LIMIT		CX4_FLD(0x08, 0, 8)
#define CX4_ADS_TCLASS			CX4_FLD(0x0c, 20, 8)
#define CX4_ADS_FLOW_LABEL		CX4_FLD(0x0c, 0, 20)
#define CX4_ADS_RGID_RIP_OFF		0x10	/* 16 B remote GID/IP, v4 mapped */
#define CX4_ADS_RGID_RIP_LEN		0x10
#define CX4_ADS_F_DSCP			CX4_FLD(0x20, 27, 1)
#define CX4_ADS_F_ECN			CX4_FLD(0x20, 26, 1)
#define CX4_ADS_F_ETH_PRIO		CX4_FLD(0x20, 24, 1)
#define CX4_ADS_ECN			CX4_FLD(0x20, 22, 2)
#define CX4_ADS_DSCP			CX4_FLD(0x20, 16, 6)
#define CX4_ADS_UDP_SPORT		CX4_FLD(0x20, 0, 16)	/* RoCE v2 src port, 0: HW */
#define CX4_ADS_DEI_CFI			CX4_FLD(0x24, 31, 1)
#define CX4_ADS_ETH_PRIO		CX4_FLD(0x24, 28, 3)
#define CX4_ADS_SL			CX4_FLD(0x24, 24, 4)
#define CX4_ADS_VHCA_PORT_NUM		CX4_FLD(0x24, 16, 8)
#define CX4_ADS_RMAC_47_32		CX4_FLD(0x24, 0, 16)
#define CX4_ADS_RMAC_31_0		CX4_FLD32(0x28)

/* ---- QP context, 0xE8 bytes ([ifc] qpc; PRM "QP Context Format") -------------------------- */
#define CX4_QPC_SIZE			0xe8
#define CX4_QPC_STATE			CX4_FLD(0x00, 28, 4)	/* CX4_QP_STATE_* (cx4_prm_qp.h) */
#define CX4_QPC_LAG_TX_PORT_AFFINITY	CX4_FLD(0x00, 24, 4)
#define CX4_QPC_ST			CX4_FLD(0x00, 16, 8)	/* service type, CX4_QP_ST_* */
#define CX4_QPC_ISOLATE_VL_TC		CX4_FLD(0x00, 13, 1)
#define CX4_QPC_PM_STATE		CX4_FLD(0x00, 11, 2)	/* path migration, 3 = migrated */
#define CX4_QPC_OFFLOAD_TYPE		CX4_FLD(0x00, 4, 4)
#define CX4_QPC_END_PADDING_MODE	CX4_FLD(0x00, 2, 2)
#define CX4_QPC_WQ_SIGNATURE		CX4_FLD(0x04, 31, 1)
#define CX4_QPC_BLOCK_LB_MC		CX4_FLD(0x04, 30, 1)
#define CX4_QPC_ATOMIC_LIKE_WRITE_EN	CX4_FLD(0x04, 29, 1)
#define CX4_QPC_LATENCY_SENSITIVE	CX4_FLD(0x04, 28, 1)
#define CX4_QPC_DRAIN_SIGERR		CX4_FLD(0x04, 26, 1)
#define CX4_QPC_PD			CX4_FLD(0x04, 0, 24)
#define CX4_QPC_MTU			CX4_FLD(0x08, 29, 3)	/* CX4_QP_MTU_* */
#define CX4_QPC_LOG_MSG_MAX		CX4_FLD(0x08, 24, 5)
#define CX4_QPC_LOG_RQ_SIZE		CX4_FLD(0x08, 19, 4)	/* log2 receive WQEs */
#define CX4_QPC_LOG_RQ_STRIDE		CX4_FLD(0x08, 16, 3)	/* RQ WQE = 16 << n bytes */
#define CX4_QPC_NO_SQ			CX4_FLD(0x08, 15, 1)
#define CX4_QPC_LOG_SQ_SIZE		CX4_FLD(0x08, 11, 4)	/* log2 send WQEBBs (64 B) */
#define CX4_QPC_DATA_IN_ORDER		CX4_FLD(0x08, 5, 1)	/* [ifc] data lands in order */
#define CX4_QPC_RLKY			CX4_FLD(0x08, 4, 1)	/* reserved lkey allowed */
#define CX4_QPC_ULP_STATELESS_OFFLOAD_MODE CX4_FLD(0x08, 0, 4)
#define CX4_QPC_COUNTER_SET_ID		CX4_FLD(0x0c, 24, 8)
#define CX4_QPC_UAR_PAGE		CX4_FLD(0x0c, 0, 24)
#define CX4_QPC_USER_INDEX		CX4_FLD(0x10, 0, 24)	/* -> CQE srqn_uidx */
#define CX4_QPC_LOG_PAGE_SIZE		CX4_FLD(0x14, 24, 5)	/* PAS page = 4 KB << n */
#define CX4_QPC_REMOTE_QPN		CX4_FLD(0x14, 0, 24)
#define CX4_QPC_PRIMARY_ADDRESS_PATH	0x18	/* struct ads: CX4_AT(this, CX4_ADS_*) */
#define CX4_QPC_SECONDARY_ADDRESS_PATH	0x44
#define CX4_QPC_LOG_ACK_REQ_FREQ	CX4_FLD(0x70, 28, 4)
#define CX4_QPC_LOG_SRA_MAX		CX4_FLD(0x70, 21, 3)	/* reads/atomics out, log2 */
#define CX4_QPC_RETRY_COUNT		CX4_FLD(0x70, 16, 3)
#define CX4_QPC_RNR_RETRY		CX4_FLD(0x70, 13, 3)	/* 7 = infinite */
#define CX4_QPC_FRE			CX4_FLD(0x70, 11, 1)	/* fast registration enable */
#define CX4_QPC_CUR_RNR_RETRY		CX4_FLD(0x70, 8, 3)
#define CX4_QPC_CUR_RETRY_COUNT		CX4_FLD(0x70, 5, 3)
#define CX4_QPC_NEXT_SEND_PSN		CX4_FLD(0x78, 0, 24)
#define CX4_QPC_CQN_SND			CX4_FLD(0x7c, 0, 24)
#define CX4_QPC_DETH_SQPN		CX4_FLD(0x80, 0, 24)
#define CX4_QPC_LAST_ACKED_PSN		CX4_FLD(0x88, 0, 24)
#define CX4_QPC_SSN			CX4_FLD(0x8c, 0, 24)
#define CX4_QPC_LOG_RRA_MAX		CX4_FLD(0x90, 21, 3)	/* reads/atomics in, log2 */
#define CX4_QPC_ATOMIC_MODE		CX4_FLD(0x90, 16, 4)
#define CX4_QPC_RRE			CX4_FLD(0x90, 15, 1)	/* remote read enable */
#define CX4_QPC_RWE			CX4_FLD(0x90, 14, 1)	/* remote write enable */
#define CX4_QPC_RAE			CX4_FLD(0x90, 13, 1)	/* remote atomic enable */
#define CX4_QPC_PAGE_OFFSET		CX4_FLD(0x90, 6, 6)	/* buffer offset in 64 B units */
#define CX4_QPC_CD_SLAVE_RECEIVE	CX4_FLD(0x90, 2, 1)
#define CX4_QPC_CD_SLAVE_SEND		CX4_FLD(0x90, 1, 1)
#define CX4_QPC_CD_MASTER		CX4_FLD(0x90, 0, 1)
#define CX4_QPC_MIN_RNR_NAK		CX4_FLD(0x94, 24, 5)	/* RNR timer code (IBTA) */
#define CX4_QPC_NEXT_RCV_PSN		CX4_FLD(0x94, 0, 24)
#define CX4_QPC_XRCD			CX4_FLD(0x98, 0, 24)
#define CX4_QPC_CQN_RCV			CX4_FLD(0x9c, 0, 24)
#define CX4_QPC_DBR_ADDR		CX4_FLD64(0xa0)		/* 8-byte doorbell record */
#define CX4_QPC_Q_KEY			CX4_FLD32(0xa8)
#define CX4_QPC_RQ_TYPE			CX4_FLD(0xac, 24, 3)	/* CX4_QP_RQ_TYPE_* */
#define CX4_QPC_SRQN_RMPN_XRQN		CX4_FLD(0xac, 0, 24)
#define CX4_QPC_RMSN			CX4_FLD(0xb0, 0, 24)
#define CX4_QPC_HW_SQ_WQEBB_COUNTER	CX4_FLD(0xb4, 16, 16)
#define CX4_QPC_SW_SQ_WQEBB_COUNTER	CX4_FLD(0xb4, 0, 16)
#define CX4_QPC_HW_RQ_COUNTER		CX4_FLD32(0xb8)
#define CX4_QPC_SW_RQ_COUNTER		CX4_FLD32(0xbc)
#define CX4_QPC_CGS			CX4_FLD(0xc4, 16, 1)
#define CX4_QPC_CS_REQ			CX4_FLD(0xc4, 8, 8)	/* CQE inline scatter, requester */
#define CX4_QPC_CS_RES			CX4_FLD(0xc4, 0, 8)	/* CQE inline scatter, responder */
#define CX4_QPC_DC_ACCESS_KEY		CX4_FLD64(0xc8)

/* Primary/secondary path fields in QP-context coordinates. */
#define CX4_QPC_PRI(f)			CX4_AT(CX4_QPC_PRIMARY_ADDRESS_PATH, f)
#define CX4_QPC_ALT(f)			CX4_AT(CX4_QPC_SECONDARY_ADDRESS_PATH, f)

/* ---- CQ context, 0x40 bytes ([ifc] cqc; PRM "Completion Queue Context Format") ------------ */
#define CX4_CQC_SIZE			0x40
#define CX4_CQC_STATUS			CX4_FLD(0x00, 28, 4)	/* CX4_CQC_STATUS_* */
#define CX4_CQC_CQE_SZ			CX4_FLD(0x00, 21, 3)	/* 0 = 64 B, 1 = 128 B */
#define CX4_CQC_CC			CX4_FLD(0x00, 20, 1)	/* collapsed: all in entry 0 */
#define CX4_CQC_SCQE_BREAK_MODERATION_EN CX4_FLD(0x00, 18, 1)
#define CX4_CQC_OI			CX4_FLD(0x00, 17, 1)	/* overrun ignore */
#define CX4_CQC_CQ_PERIOD_MODE		CX4_FLD(0x00, 15, 2)
#define CX4_CQC_CQE_COMP_EN		CX4_FLD(0x00, 14, 1)
#define CX4_CQC_MINI_CQE_RES_FORMAT	CX4_FLD(0x00, 12, 2)
#define CX4_CQC_ST			CX4_FLD(0x00, 8, 4)	/* arm state, CX4_CQC_ST_* */
#define CX4_CQC_PAGE_OFFSET		CX4_FLD(0x08, 6, 6)
#define CX4_CQC_LOG_CQ_SIZE		CX4_FLD(0x0c, 24, 5)
#define CX4_CQC_UAR_PAGE		CX4_FLD(0x0c, 0, 24)
#define CX4_CQC_CQ_PERIOD		CX4_FLD(0x10, 16, 12)	/* moderation, usec */
#define CX4_CQC_CQ_MAX_COUNT		CX4_FLD(0x10, 0, 16)	/* moderation, CQEs */
/* c_eqn: CX4-era [ifc]/[rc-ifc] have c_eqn[0x8] at 0x14[7:0]; newer ones widen it to 32 bits. */
#define CX4_CQC_C_EQN			CX4_FLD(0x14, 0, 8)
#define CX4_CQC_LOG_PAGE_SIZE		CX4_FLD(0x18, 24, 5)
#define CX4_CQC_LAST_NOTIFIED_INDEX	CX4_FLD(0x20, 0, 24)
#define CX4_CQC_LAST_SOLICIT_INDEX	CX4_FLD(0x24, 0, 24)
#define CX4_CQC_CONSUMER_COUNTER	CX4_FLD(0x28, 0, 24)
#define CX4_CQC_PRODUCER_COUNTER	CX4_FLD(0x2c, 0, 24)
#define CX4_CQC_DBR_ADDR		CX4_FLD64(0x38)		/* 8-byte CQ doorbell record */

#define CX4_CQC_STATUS_OK		0x0
#define CX4_CQC_STATUS_CQ_OVERFLOW	0x9
#define CX4_CQC_STATUS_CQ_WRITE_FAIL	0xa
#define CX4_CQC_CQE_SZ_64		0x0
#define CX4_CQC_CQE_SZ_128		0x1
#define CX4_CQC_ST_SOLICITED_ARMED	0x6
#define CX4_CQC_ST_ARMED		0x9
#define CX4_CQC_ST_FIRED		0xa
#define CX4_CQC_ST_ALWAYS_ARMED		0xb	/* [dev.h] MLX5_CQ_STATE_ALWAYS_ARMED */

/* ---- EQ context, 0x40 bytes ([ifc] eqc; PRM "Event Queue Context Format") ----------------- */
#define CX4_EQC_SIZE			0x40
#define CX4_EQC_STATUS			CX4_FLD(0x00, 28, 4)
#define CX4_EQC_EC			CX4_FLD(0x00, 18, 1)
#define CX4_EQC_OI			CX4_FLD(0x00, 17, 1)	/* overrun ignore */
#define CX4_EQC_ST			CX4_FLD(0x00, 8, 4)	/* 0x9 armed, 0xA fired */
#define CX4_EQC_PAGE_OFFSET		CX4_FLD(0x08, 6, 6)
#define CX4_EQC_LOG_EQ_SIZE		CX4_FLD(0x0c, 24, 5)	/* log2 of 64-byte EQEs */
#define CX4_EQC_UAR_PAGE		CX4_FLD(0x0c, 0, 24)
/* intr: MSI-X vector. CX4-era headers: intr[0x8] at 0x14[7:0]; newer: 12 bits. */
#define CX4_EQC_INTR			CX4_FLD(0x14, 0, 8)
#define CX4_EQC_LOG_PAGE_SIZE		CX4_FLD(0x18, 24, 5)
#define CX4_EQC_CONSUMER_COUNTER	CX4_FLD(0x28, 0, 24)
#define CX4_EQC_PRODUCER_COUNTER	CX4_FLD(0x2c, 0, 24)

#define CX4_EQC_STATUS_OK		0x0
#define CX4_EQC_STATUS_EQ_WRITE_FAILURE	0xa
#define CX4_EQC_ST_ARMED		0x9
#define CX4_EQC_ST_FIRED		0xa

/* ---- Memory key context, 0x40 bytes ([ifc] mkc; PRM "Memory Key Context Format") ---------- */
#define CX4_MKC_SIZE			0x40
#define CX4_MKC_FREE			CX4_FLD(0x00, 30, 1)
#define CX4_MKC_ACCESS_MODE_4_2		CX4_FLD(0x00, 26, 3)
#define CX4_MKC_UMR_EN			CX4_FLD(0x00, 15, 1)
#define CX4_MKC_A			CX4_FLD(0x00, 14, 1)	/* remote atomic */
#define CX4_MKC_RW			CX4_FLD(0x00, 13, 1)	/* remote write */
#define CX4_MKC_RR			CX4_FLD(0x00, 12, 1)	/* remote read */
#define CX4_MKC_LW			CX4_FLD(0x00, 11, 1)	/* local write */
#define CX4_MKC_LR			CX4_FLD(0x00, 10, 1)	/* local read */
#define CX4_MKC_ACCESS_MODE_1_0		CX4_FLD(0x00, 8, 2)	/* CX4_MKC_ACCESS_MODE_* */
#define CX4_MKC_QPN			CX4_FLD(0x04, 8, 24)	/* 0xFFFFFF = any QP */
#define CX4_MKC_MKEY_7_0		CX4_FLD(0x04, 0, 8)	/* lkey = index << 8 | this */
#define CX4_MKC_LENGTH64		CX4_FLD(0x0c, 31, 1)	/* whole 2^64 space (PA keys) */
#define CX4_MKC_BSF_EN			CX4_FLD(0x0c, 30, 1)
#define CX4_MKC_SYNC_UMR		CX4_FLD(0x0c, 29, 1)
#define CX4_MKC_EN_RINVAL		CX4_FLD(0x0c, 24, 1)	/* remote invalidate allowed */
#define CX4_MKC_PD			CX4_FLD(0x0c, 0, 24)
#define CX4_MKC_START_ADDR		CX4_FLD64(0x10)
#define CX4_MKC_LEN			CX4_FLD64(0x18)
#define CX4_MKC_BSF_OCTWORD_SIZE	CX4_FLD32(0x20)
#define CX4_MKC_TRANSLATIONS_OCTWORD_SIZE CX4_FLD32(0x34)	/* MTT: (entries + 1) / 2 */
#define CX4_MKC_LOG_PAGE_SIZE		CX4_FLD(0x38, 0, 5)

#define CX4_MKC_ACCESS_MODE_PA		0x0
#define CX4_MKC_ACCESS_MODE_MTT		0x1
#define CX4_MKC_ACCESS_MODE_KLMS	0x2
#define CX4_MKC_ACCESS_MODE_KSM		0x3
#define CX4_MKEY_QPN_ANY		0xffffff
/* MTT entry = 8-byte big-endian address | these bits ([vfio.h] MLX5_MTT_READ/WRITE). */
#define CX4_MTT_READ			(1u << 0)
#define CX4_MTT_WRITE			(1u << 1)

/* ---- SRQ context, 0x40 bytes ([ifc] srqc, used by CREATE/QUERY_SRQ) ----------------------- */
#define CX4_SRQC_SIZE			0x40
#define CX4_SRQC_STATE			CX4_FLD(0x00, 28, 4)	/* 0 good, 1 error */
#define CX4_SRQC_LOG_SRQ_SIZE		CX4_FLD(0x00, 24, 4)
#define CX4_SRQC_WQ_SIGNATURE		CX4_FLD(0x04, 31, 1)
#define CX4_SRQC_CONT_SRQ		CX4_FLD(0x04, 30, 1)
#define CX4_SRQC_RLKY			CX4_FLD(0x04, 28, 1)
#define CX4_SRQC_LOG_RQ_STRIDE		CX4_FLD(0x04, 24, 3)	/* WQE = 16 << n bytes */
#define CX4_SRQC_XRCD			CX4_FLD(0x04, 0, 24)
#define CX4_SRQC_PAGE_OFFSET		CX4_FLD(0x08, 26, 6)
#define CX4_SRQC_CQN			CX4_FLD(0x08, 0, 24)	/* XRC SRQ only */
#define CX4_SRQC_LOG_PAGE_SIZE		CX4_FLD(0x10, 24, 6)
#define CX4_SRQC_PD			CX4_FLD(0x18, 0, 24)
#define CX4_SRQC_LWM			CX4_FLD(0x1c, 16, 16)	/* limit watermark */
#define CX4_SRQC_WQE_CNT		CX4_FLD(0x1c, 0, 16)
#define CX4_SRQC_DBR_ADDR		CX4_FLD64(0x28)
#define CX4_SRQC_STATE_GOOD		0x0
#define CX4_SRQC_STATE_ERROR		0x1

/* ---- NIC vport context, 0x100 bytes ([ifc] nic_vport_context) ----------------------------- */
#define CX4_NIC_VPORT_CTX_SIZE		0x100
#define CX4_NIC_VPORT_MIN_WQE_INLINE_MODE CX4_FLD(0x00, 24, 3)
#define CX4_NIC_VPORT_DISABLE_MC_LOCAL_LB CX4_FLD(0x00, 2, 1)
#define CX4_NIC_VPORT_DISABLE_UC_LOCAL_LB CX4_FLD(0x00, 1, 1)
#define CX4_NIC_VPORT_ROCE_EN		CX4_FLD(0x00, 0, 1)
#define CX4_NIC_VPORT_ARM_CHANGE_EVENT	CX4_FLD(0x04, 31, 1)
#define CX4_NIC_VPORT_EVENT_ON_MTU	CX4_FLD(0x04, 4, 1)
#define CX4_NIC_VPORT_EVENT_ON_PROMISC_CHANGE CX4_FLD(0x04, 3, 1)
#define CX4_NIC_VPORT_EVENT_ON_VLAN_CHANGE CX4_FLD(0x04, 2, 1)
#define CX4_NIC_VPORT_EVENT_ON_MC_ADDRESS_CHANGE CX4_FLD(0x04, 1, 1)
#define CX4_NIC_VPORT_EVENT_ON_UC_ADDRESS_CHANGE CX4_FLD(0x04, 0, 1)
/* mtu: bytes incl. the L2 header (Linux mlx5e: hw_mtu = sw_mtu + 14 + 4 + 4) */
#define CX4_NIC_VPORT_MTU		CX4_FLD(0x24, 0, 16)
#define CX4_NIC_VPORT_SYSTEM_IMAGE_GUID	CX4_FLD64(0x28)
#define CX4_NIC_VPORT_PORT_GUID		CX4_FLD64(0x30)
#define CX4_NIC_VPORT_NODE_GUID		CX4_FLD64(0x38)
#define CX4_NIC_VPORT_QKEY_VIOLATION_COUNTER CX4_FLD(0x68, 16, 16)
#define CX4_NIC_VPORT_PROMISC_UC	CX4_FLD(0xf0, 31, 1)
#define CX4_NIC_VPORT_PROMISC_MC	CX4_FLD(0xf0, 30, 1)
#define CX4_NIC_VPORT_PROMISC_ALL	CX4_FLD(0xf0, 29, 1)
#define CX4_NIC_VPORT_ALLOWED_LIST_TYPE	CX4_FLD(0xf0, 24, 3)
#define CX4_NIC_VPORT_ALLOWED_LIST_SIZE	CX4_FLD(0xf0, 0, 12)
#define CX4_NIC_VPORT_PERM_MAC_47_32	CX4_FLD(0xf4, 0, 16)	/* permanent_address */
#define CX4_NIC_VPORT_PERM_MAC_31_0	CX4_FLD32(0xf8)
#define CX4_NIC_VPORT_CURRENT_UC_MAC_ADDRESS 0x100	/* list follows the context */

/* ---- HCA vport context, 0x200 bytes ([ifc] hca_vport_context; IB ports) ------------------ */
#define CX4_HCA_VPORT_CTX_SIZE		0x200
#define CX4_HCA_VPORT_FIELD_SELECT	CX4_FLD32(0x00)
#define CX4_HCA_VPORT_SM_VIRT_AWARE	CX4_FLD(0x20, 31, 1)
#define CX4_HCA_VPORT_HAS_SMI		CX4_FLD(0x20, 30, 1)
#define CX4_HCA_VPORT_HAS_RAW		CX4_FLD(0x20, 29, 1)
#define CX4_HCA_VPORT_GRH_REQUIRED	CX4_FLD(0x20, 28, 1)
#define CX4_HCA_VPORT_PORT_PHYSICAL_STATE CX4_FLD(0x20, 12, 4)
#define CX4_HCA_VPORT_VPORT_STATE_POLICY CX4_FLD(0x20, 8, 4)
#define CX4_HCA_VPORT_PORT_STATE	CX4_FLD(0x20, 4, 4)
#define CX4_HCA_VPORT_VPORT_STATE	CX4_FLD(0x20, 0, 4)
#define CX4_HCA_VPORT_SYSTEM_IMAGE_GUID	CX4_FLD64(0x28)
#define CX4_HCA_VPORT_PORT_GUID		CX4_FLD64(0x30)
#define CX4_HCA_VPORT_NODE_GUID		CX4_FLD64(0x38)
#define CX4_HCA_VPORT_CAP_MASK1		CX4_FLD32(0x40)
#define CX4_HCA_VPORT_CAP_MASK2		CX4_FLD32(0x48)
#define CX4_HCA_VPORT_LID		CX4_FLD(0x60, 16, 16)
#define CX4_HCA_VPORT_INIT_TYPE_REPLY	CX4_FLD(0x60, 8, 4)
#define CX4_HCA_VPORT_LMC		CX4_FLD(0x60, 5, 3)
#define CX4_HCA_VPORT_SUBNET_TIMEOUT	CX4_FLD(0x60, 0, 5)
#define CX4_HCA_VPORT_SM_LID		CX4_FLD(0x64, 16, 16)
#define CX4_HCA_VPORT_SM_SL		CX4_FLD(0x64, 12, 4)
#define CX4_HCA_VPORT_QKEY_VIOLATION_COUNTER CX4_FLD(0x68, 16, 16)
#define CX4_HCA_VPORT_PKEY_VIOLATION_COUNTER CX4_FLD(0x68, 0, 16)

/* ---- RoCE address (GID table entry), 0x20 bytes ([ifc] roce_addr_layout) ------------------- */
#define CX4_ROCE_ADDR_SIZE		0x20
#define CX4_ROCE_ADDR_SOURCE_L3_OFF	0x00	/* 16 bytes; IPv4 as ::ffff:a.b.c.d */
#define CX4_ROCE_ADDR_SOURCE_L3_LEN	0x10
#define CX4_ROCE_ADDR_VLAN_VALID	CX4_FLD(0x10, 28, 1)
#define CX4_ROCE_ADDR_VLAN_ID		CX4_FLD(0x10, 16, 12)
#define CX4_ROCE_ADDR_SOURCE_MAC_47_32	CX4_FLD(0x10, 0, 16)
#define CX4_ROCE_ADDR_SOURCE_MAC_31_0	CX4_FLD32(0x14)
#define CX4_ROCE_ADDR_ROCE_L3_TYPE	CX4_FLD(0x18, 8, 4)	/* 0 IPv4, 1 IPv6 */
#define CX4_ROCE_ADDR_ROCE_VERSION	CX4_FLD(0x18, 0, 8)	/* 0 v1, 2 v2 */

#define CX4_ROCE_L3_TYPE_IPV4		0	/* [dev.h] MLX5_ROCE_L3_TYPE_IPV4 */
#define CX4_ROCE_L3_TYPE_IPV6		1
#define CX4_ROCE_VERSION_1		0	/* [dev.h] MLX5_ROCE_VERSION_1 */
#define CX4_ROCE_VERSION_2		2	/* [dev.h] MLX5_ROCE_VERSION_2 */

#endif /* CX4_PRM_CTX_H */
