/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 HCA capabilities: the 4 KB pages returned by QUERY_HCA_CAP at output offset 0x10
 * and written by SET_HCA_CAP at input offset 0x10.  Offsets are relative to the page.
 *
 * Sources: [ifc] struct mlx5_ifc_cmd_hca_cap_bits (general), mlx5_ifc_roce_cap_bits,
 * mlx5_ifc_atomic_caps_bits ("HCA Capabilities" chapter of the PRM); only fields that exist on
 * ConnectX-4 / ConnectX-4 Lx firmware are listed.  The values the [trace] FW (CX4 Lx 14.12.1220)
 * returns are decoded by tests/cx4/prm_layout_test.c and listed in docs/cx4-prm.md.
 * Abbreviations: cx4_prm_iseg.h.
 */
#ifndef CX4_PRM_CAPS_H
#define CX4_PRM_CAPS_H

#include "cx4_prm_fld.h"

/* Capability types: QUERY_HCA_CAP op_mod = type << 1 | cur ([dev.h] enum mlx5_cap_type) */
#define CX4_CAP_GENERAL			0x0
#define CX4_CAP_ETHERNET_OFFLOADS	0x1
#define CX4_CAP_ODP			0x2
#define CX4_CAP_ATOMIC			0x3
#define CX4_CAP_ROCE			0x4
#define CX4_CAP_IPOIB_OFFLOADS		0x5
#define CX4_CAP_EOIB_OFFLOADS		0x6
#define CX4_CAP_FLOW_TABLE		0x7
#define CX4_CAP_ESWITCH_FLOW_TABLE	0x8
#define CX4_CAP_ESWITCH			0x9
#define CX4_CAP_VECTOR_CALC		0xb
#define CX4_CAP_QOS			0xc

/* ---- General device capabilities ([ifc] cmd_hca_cap) ------------------------------------- */
#define CX4_CAP_GEN_QP_DATA_IN_ORDER		CX4_FLD(0x0c, 29, 1)	/* newer devices */
#define CX4_CAP_GEN_LOG_MAX_SRQ_SZ		CX4_FLD(0x10, 24, 8)
#define CX4_CAP_GEN_LOG_MAX_QP_SZ		CX4_FLD(0x10, 16, 8)
#define CX4_CAP_GEN_LOG_MAX_QP			CX4_FLD(0x10, 0, 5)
#define CX4_CAP_GEN_LOG_MAX_SRQ			CX4_FLD(0x14, 16, 5)
#define CX4_CAP_GEN_LOG_MAX_CQ_SZ		CX4_FLD(0x18, 16, 8)
#define CX4_CAP_GEN_LOG_MAX_CQ			CX4_FLD(0x18, 0, 5)
#define CX4_CAP_GEN_LOG_MAX_EQ_SZ		CX4_FLD(0x1c, 24, 8)
#define CX4_CAP_GEN_LOG_MAX_MKEY		CX4_FLD(0x1c, 16, 6)
#define CX4_CAP_GEN_FAST_TEARDOWN		CX4_FLD(0x1c, 4, 1)
#define CX4_CAP_GEN_LOG_MAX_EQ			CX4_FLD(0x1c, 0, 4)
#define CX4_CAP_GEN_MAX_INDIRECTION		CX4_FLD(0x20, 24, 8)
#define CX4_CAP_GEN_LOG_MAX_MRW_SZ		CX4_FLD(0x20, 16, 7)
#define CX4_CAP_GEN_FORCE_TEARDOWN		CX4_FLD(0x20, 15, 1)
#define CX4_CAP_GEN_LOG_MAX_BSF_LIST_SIZE	CX4_FLD(0x20, 8, 6)
#define CX4_CAP_GEN_LOG_MAX_KLM_LIST_SIZE	CX4_FLD(0x20, 0, 6)
#define CX4_CAP_GEN_LOG_MAX_RA_REQ_DC		CX4_FLD(0x24, 16, 6)
#define CX4_CAP_GEN_LOG_MAX_RA_RES_DC		CX4_FLD(0x24, 0, 6)
#define CX4_CAP_GEN_LOG_MAX_RA_REQ_QP		CX4_FLD(0x28, 16, 6)
#define CX4_CAP_GEN_LOG_MAX_RA_RES_QP		CX4_FLD(0x28, 0, 6)
#define CX4_CAP_GEN_END_PAD			CX4_FLD(0x2c, 31, 1)
#define CX4_CAP_GEN_CC_QUERY_ALLOWED		CX4_FLD(0x2c, 30, 1)
#define CX4_CAP_GEN_CC_MODIFY_ALLOWED		CX4_FLD(0x2c, 29, 1)
#define CX4_CAP_GEN_GID_TABLE_SIZE		CX4_FLD(0x2c, 0, 16)
#define CX4_CAP_GEN_OUT_OF_SEQ_CNT		CX4_FLD(0x30, 31, 1)
#define CX4_CAP_GEN_VPORT_COUNTERS		CX4_FLD(0x30, 30, 1)
#define CX4_CAP_GEN_RETRANSMISSION_Q_COUNTERS	CX4_FLD(0x30, 29, 1)
#define CX4_CAP_GEN_MAX_QP_CNT			CX4_FLD(0x30, 16, 10)
#define CX4_CAP_GEN_PKEY_TABLE_SIZE		CX4_FLD(0x30, 0, 16)	/* 128 << n entries */
#define CX4_CAP_GEN_VPORT_GROUP_MANAGER		CX4_FLD(0x34, 31, 1)
#define CX4_CAP_GEN_VHCA_GROUP_MANAGER		CX4_FLD(0x34, 30, 1)
#define CX4_CAP_GEN_IB_VIRT			CX4_FLD(0x34, 29, 1)
#define CX4_CAP_GEN_ETH_VIRT			CX4_FLD(0x34, 28, 1)
#define CX4_CAP_GEN_ETS				CX4_FLD(0x34, 26, 1)
#define CX4_CAP_GEN_NIC_FLOW_TABLE		CX4_FLD(0x34, 25, 1)
#define CX4_CAP_GEN_ESWITCH_MANAGER		CX4_FLD(0x34, 24, 1)
#define CX4_CAP_GEN_MCAM_REG			CX4_FLD(0x34, 22, 1)
#define CX4_CAP_GEN_PCAM_REG			CX4_FLD(0x34, 21, 1)
#define CX4_CAP_GEN_LOCAL_CA_ACK_DELAY		CX4_FLD(0x34, 16, 5)
#define CX4_CAP_GEN_PORT_MODULE_EVENT		CX4_FLD(0x34, 15, 1)
#define CX4_CAP_GEN_PORTS_CHECK			CX4_FLD(0x34, 13, 1)
#define CX4_CAP_GEN_DISABLE_LINK_UP		CX4_FLD(0x34, 11, 1)
#define CX4_CAP_GEN_BEACON_LED			CX4_FLD(0x34, 10, 1)
#define CX4_CAP_GEN_PORT_TYPE			CX4_FLD(0x34, 8, 2)	/* CX4_CAP_PORT_TYPE_* */
#define CX4_CAP_GEN_NUM_PORTS			CX4_FLD(0x34, 0, 8)
#define CX4_CAP_GEN_PPS				CX4_FLD(0x38, 30, 1)
#define CX4_CAP_GEN_PPS_MODIFY			CX4_FLD(0x38, 29, 1)
#define CX4_CAP_GEN_LOG_MAX_MSG			CX4_FLD(0x38, 24, 5)
#define CX4_CAP_GEN_MAX_TC			CX4_FLD(0x38, 16, 4)
#define CX4_CAP_GEN_TEMP_WARN_EVENT		CX4_FLD(0x38, 15, 1)
#define CX4_CAP_GEN_DCBX			CX4_FLD(0x38, 14, 1)
#define CX4_CAP_GEN_GENERAL_NOTIFICATION_EVENT	CX4_FLD(0x38, 13, 1)
#define CX4_CAP_GEN_ROL_S			CX4_FLD(0x38, 9, 1)
#define CX4_CAP_GEN_ROL_G			CX4_FLD(0x38, 8, 1)
#define CX4_CAP_GEN_WOL_S			CX4_FLD(0x38, 6, 1)
#define CX4_CAP_GEN_WOL_G			CX4_FLD(0x38, 5, 1)
#define CX4_CAP_GEN_WOL_A			CX4_FLD(0x38, 4, 1)
#define CX4_CAP_GEN_WOL_B			CX4_FLD(0x38, 3, 1)
#define CX4_CAP_GEN_WOL_M			CX4_FLD(0x38, 2, 1)
#define CX4_CAP_GEN_WOL_U			CX4_FLD(0x38, 1, 1)
#define CX4_CAP_GEN_WOL_P			CX4_FLD(0x38, 0, 1)
#define CX4_CAP_GEN_STAT_RATE_SUPPORT		CX4_FLD(0x3c, 16, 16)
#define CX4_CAP_GEN_CQE_VERSION			CX4_FLD(0x3c, 0, 4)	/* 1: CQE has user_index */
#define CX4_CAP_GEN_COMPACT_ADDRESS_VECTOR	CX4_FLD(0x40, 31, 1)
#define CX4_CAP_GEN_STRIDING_RQ			CX4_FLD(0x40, 30, 1)
#define CX4_CAP_GEN_IPOIB_ENHANCED_OFFLOADS	CX4_FLD(0x40, 28, 1)
#define CX4_CAP_GEN_IPOIB_BASIC_OFFLOADS	CX4_FLD(0x40, 27, 1)
#define CX4_CAP_GEN_DRAIN_SIGERR		CX4_FLD(0x40, 16, 1)
#define CX4_CAP_GEN_CMDIF_CHECKSUM		CX4_FLD(0x40, 14, 2)	/* 0 off, 3 on */
#define CX4_CAP_GEN_SIGERR_CQE			CX4_FLD(0x40, 13, 1)
#define CX4_CAP_GEN_WQ_SIGNATURE		CX4_FLD(0x40, 11, 1)
#define CX4_CAP_GEN_SCTR_DATA_CQE		CX4_FLD(0x40, 10, 1)
#define CX4_CAP_GEN_SHO				CX4_FLD(0x40, 8, 1)
#define CX4_CAP_GEN_TPH				CX4_FLD(0x40, 7, 1)
#define CX4_CAP_GEN_RF				CX4_FLD(0x40, 6, 1)
#define CX4_CAP_GEN_DCT				CX4_FLD(0x40, 5, 1)
#define CX4_CAP_GEN_QOS				CX4_FLD(0x40, 4, 1)
#define CX4_CAP_GEN_ETH_NET_OFFLOADS		CX4_FLD(0x40, 3, 1)
#define CX4_CAP_GEN_ROCE			CX4_FLD(0x40, 2, 1)
#define CX4_CAP_GEN_ATOMIC			CX4_FLD(0x40, 1, 1)
#define CX4_CAP_GEN_CQ_OI			CX4_FLD(0x44, 31, 1)
#define CX4_CAP_GEN_CQ_RESIZE			CX4_FLD(0x44, 30, 1)
#define CX4_CAP_GEN_CQ_MODERATION		CX4_FLD(0x44, 29, 1)
#define CX4_CAP_GEN_CQ_EQ_REMAP			CX4_FLD(0x44, 25, 1)
#define CX4_CAP_GEN_PG				CX4_FLD(0x44, 24, 1)	/* on-demand paging */
#define CX4_CAP_GEN_BLOCK_LB_MC			CX4_FLD(0x44, 23, 1)
#define CX4_CAP_GEN_SCQE_BREAK_MODERATION	CX4_FLD(0x44, 21, 1)
#define CX4_CAP_GEN_CQ_PERIOD_START_FROM_CQE	CX4_FLD(0x44, 20, 1)
#define CX4_CAP_GEN_CD				CX4_FLD(0x44, 19, 1)
#define CX4_CAP_GEN_APM				CX4_FLD(0x44, 17, 1)
#define CX4_CAP_GEN_VECTOR_CALC			CX4_FLD(0x44, 16, 1)
#define CX4_CAP_GEN_UMR_PTR_RLKY		CX4_FLD(0x44, 15, 1)
#define CX4_CAP_GEN_IMAICL			CX4_FLD(0x44, 14, 1)
#define CX4_CAP_GEN_QKV				CX4_FLD(0x44, 9, 1)	/* Q_Key viol. counter */
#define CX4_CAP_GEN_PKV				CX4_FLD(0x44, 8, 1)	/* P_Key viol. counter */
#define CX4_CAP_GEN_SET_DETH_SQPN		CX4_FLD(0x44, 7, 1)
#define CX4_CAP_GEN_XRC				CX4_FLD(0x44, 3, 1)
#define CX4_CAP_GEN_UD				CX4_FLD(0x44, 2, 1)
#define CX4_CAP_GEN_UC				CX4_FLD(0x44, 1, 1)
#define CX4_CAP_GEN_RC				CX4_FLD(0x44, 0, 1)
#define CX4_CAP_GEN_UAR_4K			CX4_FLD(0x48, 31, 1)
#define CX4_CAP_GEN_UAR_SZ			CX4_FLD(0x48, 16, 6)	/* log2 of UAR area in MB */
#define CX4_CAP_GEN_UMEM_UID_0			CX4_FLD(0x48, 13, 1)	/* DevX (rdma-core VFIO) */
#define CX4_CAP_GEN_LOG_PG_SZ			CX4_FLD(0x48, 0, 8)	/* minimum page shift */
#define CX4_CAP_GEN_BF				CX4_FLD(0x4c, 31, 1)	/* BlueFlame supported */
#define CX4_CAP_GEN_DRIVER_VERSION		CX4_FLD(0x4c, 30, 1)
#define CX4_CAP_GEN_PAD_TX_ETH_PACKET		CX4_FLD(0x4c, 29, 1)
#define CX4_CAP_GEN_LOG_BF_REG_SIZE		CX4_FLD(0x4c, 16, 5)
#define CX4_CAP_GEN_LAG_TX_PORT_AFFINITY	CX4_FLD(0x4c, 7, 1)
#define CX4_CAP_GEN_LAG_MASTER			CX4_FLD(0x4c, 4, 1)
#define CX4_CAP_GEN_NUM_LAG_PORTS		CX4_FLD(0x4c, 0, 4)
#define CX4_CAP_GEN_MAX_WQE_SZ_SQ		CX4_FLD(0x50, 0, 16)	/* bytes */
#define CX4_CAP_GEN_MAX_WQE_SZ_RQ		CX4_FLD(0x54, 0, 16)
#define CX4_CAP_GEN_MAX_WQE_SZ_SQ_DC		CX4_FLD(0x58, 0, 16)
#define CX4_CAP_GEN_MAX_QP_MCG			CX4_FLD(0x5c, 0, 25)
#define CX4_CAP_GEN_LOG_MAX_MCG			CX4_FLD(0x60, 0, 8)
#define CX4_CAP_GEN_LOG_MAX_TRANSPORT_DOMAIN	CX4_FLD(0x64, 24, 5)
#define CX4_CAP_GEN_LOG_MAX_PD			CX4_FLD(0x64, 16, 5)
#define CX4_CAP_GEN_LOG_MAX_XRCD		CX4_FLD(0x64, 0, 5)
#define CX4_CAP_GEN_LOG_MAX_RQ			CX4_FLD(0x6c, 24, 5)
#define CX4_CAP_GEN_LOG_MAX_SQ			CX4_FLD(0x6c, 16, 5)
#define CX4_CAP_GEN_LOG_MAX_TIR			CX4_FLD(0x6c, 8, 5)
#define CX4_CAP_GEN_LOG_MAX_TIS			CX4_FLD(0x6c, 0, 5)
#define CX4_CAP_GEN_BASIC_CYCLIC_RCV_WQE	CX4_FLD(0x70, 31, 1)
#define CX4_CAP_GEN_LOG_MAX_RMP			CX4_FLD(0x70, 24, 5)
#define CX4_CAP_GEN_LOG_MAX_RQT			CX4_FLD(0x70, 16, 5)
#define CX4_CAP_GEN_LOG_MAX_RQT_SIZE		CX4_FLD(0x70, 8, 5)
#define CX4_CAP_GEN_LOG_MAX_TIS_PER_SQ		CX4_FLD(0x70, 0, 5)
#define CX4_CAP_GEN_LOG_MAX_STRIDE_SZ_RQ	CX4_FLD(0x74, 24, 5)
#define CX4_CAP_GEN_LOG_MIN_STRIDE_SZ_RQ	CX4_FLD(0x74, 16, 5)
#define CX4_CAP_GEN_LOG_MAX_STRIDE_SZ_SQ	CX4_FLD(0x74, 8, 5)
#define CX4_CAP_GEN_LOG_MIN_STRIDE_SZ_SQ	CX4_FLD(0x74, 0, 5)
#define CX4_CAP_GEN_LOG_MAX_WQ_SZ		CX4_FLD(0x78, 0, 5)
#define CX4_CAP_GEN_NIC_VPORT_CHANGE_EVENT	CX4_FLD(0x7c, 31, 1)
#define CX4_CAP_GEN_DISABLE_LOCAL_LB_UC		CX4_FLD(0x7c, 30, 1)
#define CX4_CAP_GEN_DISABLE_LOCAL_LB_MC		CX4_FLD(0x7c, 29, 1)
#define CX4_CAP_GEN_LOG_MAX_VLAN_LIST		CX4_FLD(0x7c, 16, 5)
#define CX4_CAP_GEN_LOG_MAX_CURRENT_MC_LIST	CX4_FLD(0x7c, 8, 5)
#define CX4_CAP_GEN_LOG_MAX_CURRENT_UC_LIST	CX4_FLD(0x7c, 0, 5)
#define CX4_CAP_GEN_LOG_MAX_L2_TABLE		CX4_FLD(0x90, 24, 5)
#define CX4_CAP_GEN_LOG_UAR_PAGE_SZ		CX4_FLD(0x90, 0, 16)	/* UAR page = 4 KB << n */
#define CX4_CAP_GEN_DEVICE_FREQUENCY_MHZ	CX4_FLD32(0x98)		/* internal timer rate */
#define CX4_CAP_GEN_DEVICE_FREQUENCY_KHZ	CX4_FLD32(0x9c)
#define CX4_CAP_GEN_CQE_COMPRESSION		CX4_FLD(0xb4, 0, 1)
#define CX4_CAP_GEN_CQE_COMPRESSION_TIMEOUT	CX4_FLD(0xb8, 16, 16)
#define CX4_CAP_GEN_CQE_COMPRESSION_MAX_NUM	CX4_FLD(0xb8, 0, 16)

#define CX4_CAP_PORT_TYPE_IB		0x0	/* [ifc] MLX5_CAP_PORT_TYPE_IB */
#define CX4_CAP_PORT_TYPE_ETH		0x1

/* ---- RoCE capabilities, type 4 ([ifc] roce_cap) ------------------------------------------ */
#define CX4_CAP_ROCE_ROCE_APM			CX4_FLD(0x00, 31, 1)
#define CX4_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT	CX4_FLD(0x00, 27, 1)	/* ads.udp_sport honoured */
#define CX4_CAP_ROCE_L3_TYPE			CX4_FLD(0x10, 16, 4)	/* bit per L3 type */
#define CX4_CAP_ROCE_ROCE_VERSION		CX4_FLD(0x10, 0, 8)	/* bit n = RoCE version n */
#define CX4_CAP_ROCE_R_ROCE_DEST_UDP_PORT	CX4_FLD(0x14, 0, 16)	/* 4791 */
#define CX4_CAP_ROCE_R_ROCE_MAX_SRC_UDP_PORT	CX4_FLD(0x18, 16, 16)
#define CX4_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT	CX4_FLD(0x18, 0, 16)
#define CX4_CAP_ROCE_ADDRESS_TABLE_SIZE		CX4_FLD(0x1c, 0, 16)

/* ---- Atomic capabilities, type 3 ([ifc] atomic_caps) ------------------------------------- */
/*
 * atomic_req_8B_endianness_mode: 0 = 8-byte atomic responses big-endian, 1 = host order
 * (settable through SET_HCA_CAP when supported_atomic_req_8B_endianness_mode_1 is 1).
 */
#define CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE	CX4_FLD(0x08, 30, 2)
#define CX4_CAP_ATOMIC_SUPPORTED_8B_ENDIANNESS_MODE_1 CX4_FLD(0x08, 25, 1)
#define CX4_CAP_ATOMIC_OPERATIONS		CX4_FLD(0x10, 0, 16)	/* CX4_ATOMIC_OPS_* */
#define CX4_CAP_ATOMIC_SIZE_QP			CX4_FLD(0x14, 0, 16)	/* bit n: 2^n bytes */
#define CX4_CAP_ATOMIC_SIZE_DC			CX4_FLD(0x18, 0, 16)

/* atomic_operations bits (Linux main.c MLX5_ATOMIC_OPS_*) */
#define CX4_ATOMIC_OPS_CMP_SWAP			(1u << 0)
#define CX4_ATOMIC_OPS_FETCH_ADD		(1u << 1)
#define CX4_ATOMIC_OPS_MASKED_CMP_SWAP		(1u << 2)
#define CX4_ATOMIC_OPS_MASKED_FETCH_ADD		(1u << 3)

#endif /* CX4_PRM_CAPS_H */
