// SPDX-License-Identifier: MIT
/*
 * prm_layout_test: checks the ConnectX-4 PRM layouts of kernel-abi/cx4_prm*.h and the
 * mlx5_core-format command trace printer of devices/cx4/trace/.
 *
 *  1. compile time: every CX4_FLD descriptor is well formed and lies inside its structure;
 *     structure sizes and placements; constants shared with rdma-core's mlx5dv.h agree;
 *  2. every descriptor: no two fields of one structure overlap, command fields stay clear
 *     of the 8-byte command header, and cx4_set/cx4_get round-trip random values while
 *     leaving every other bit alone (checked against a bit-by-bit reference);
 *  3. real commands from the Linux mlx5_core trace of a ConnectX-4 Lx (FW 14.12.1220,
 *     shared/data/mlx5_core-trace-cx4lx.txt.gz; vectors below are its non-zero dwords) are
 *     decoded with the accessors and compared with the values in research/cx4.md;
 *  4. cx4_trace_dump()/cx4_trace_dump_cmd() reproduce trace dumps byte for byte.
 *
 * Standalone build from the repository root:
 *	gcc -std=gnu11 -Wall -Wextra -Werror -I kernel-abi tests/cx4/prm_layout_test.c
 * It includes devices/cx4/trace/cmd_trace.c itself; a build that links the trace library
 * instead defines CX4_TEST_LINK_CMD_TRACE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "cx4_prm.h"
#ifdef CX4_TEST_LINK_CMD_TRACE
#include "../../devices/cx4/trace/cmd_trace.h"
#else
#include "../../devices/cx4/trace/cmd_trace.c"
#endif

static int failures;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			failures++;						\
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);	\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
		}								\
	} while (0)

#define CHECK_EQ(a, b)								\
	do {									\
		unsigned long long a_ = (a), b_ = (b);				\
		CHECK(a_ == b_, "0x%llx != 0x%llx", a_, b_);			\
	} while (0)

/* ---- 1. Compile-time checks ------------------------------------------------------------- */

/*
 * Every CX4_FLD descriptor of kernel-abi/, by structure (first generated from the headers).
 * A new descriptor goes into its structure's list, or it is neither bounds- nor overlap-checked.
 */
#define FLDS_ISEG(X, S) X(CX4_ISEG_FW_REV_MINOR, S) X(CX4_ISEG_FW_REV_MAJOR, S) \
	X(CX4_ISEG_CMDIF_REV, S) X(CX4_ISEG_FW_REV_SUBMINOR, S) X(CX4_ISEG_CMDQ_ADDR_H, S) \
	X(CX4_ISEG_CMDQ_ADDR_L_SZ, S) X(CX4_ISEG_CMDQ_ADDR_L, S) X(CX4_ISEG_NIC_INTERFACE, S) \
	X(CX4_ISEG_LOG_CMDQ_SIZE, S) X(CX4_ISEG_LOG_CMDQ_STRIDE, S) X(CX4_ISEG_CMD_DBELL, S) \
	X(CX4_ISEG_INITIALIZING, S) X(CX4_ISEG_NIC_INTERFACE_SUPPORTED, S) \
	X(CX4_ISEG_ASSERT_EXIT_PTR, S) X(CX4_ISEG_ASSERT_CALLRA, S) X(CX4_ISEG_HEALTH_FW_VER, S) \
	X(CX4_ISEG_HEALTH_HW_ID, S) X(CX4_ISEG_HEALTH_RFR, S) X(CX4_ISEG_HEALTH_IRISC_INDEX, S) \
	X(CX4_ISEG_HEALTH_SYND, S) X(CX4_ISEG_HEALTH_EXT_SYND, S) X(CX4_ISEG_INTERNAL_TIMER_H, S) \
	X(CX4_ISEG_INTERNAL_TIMER_L, S) X(CX4_ISEG_HEALTH_COUNTER, S) X(CX4_ISEG_IEEE1588_CLK, S) \
	X(CX4_ISEG_IEEE1588_CLK_TYPE, S) X(CX4_ISEG_CLR_INTX, S)
#define FLDS_ENTRY(X, S) X(CX4_CMD_TYPE, S) X(CX4_CMD_INPUT_LENGTH, S) \
	X(CX4_CMD_INPUT_MAILBOX_PTR, S) X(CX4_CMD_OUTPUT_MAILBOX_PTR, S) \
	X(CX4_CMD_OUTPUT_LENGTH, S) X(CX4_CMD_TOKEN, S) X(CX4_CMD_SIGNATURE, S) \
	X(CX4_CMD_STATUS, S) X(CX4_CMD_OWNERSHIP, S)
#define FLDS_HDR_IN(X, S) X(CX4_CMD_IN_OPCODE, S) X(CX4_CMD_IN_UID, S) \
	X(CX4_CMD_IN_OP_MOD, S)
#define FLDS_HDR_OUT(X, S) X(CX4_CMD_OUT_STATUS, S) X(CX4_CMD_OUT_SYNDROME, S)
#define FLDS_MAILBOX(X, S) X(CX4_MAILBOX_NEXT_PTR, S) X(CX4_MAILBOX_BLOCK_NUMBER, S) \
	X(CX4_MAILBOX_TOKEN, S) X(CX4_MAILBOX_CTRL_SIGNATURE, S) X(CX4_MAILBOX_SIGNATURE, S)
#define FLDS_ADS(X, S) X(CX4_ADS_FL, S) X(CX4_ADS_FREE_AR, S) X(CX4_ADS_PKEY_INDEX, S) \
	X(CX4_ADS_GRH, S) X(CX4_ADS_MLID, S) X(CX4_ADS_RLID, S) X(CX4_ADS_ACK_TIMEOUT, S) \
	X(CX4_ADS_SRC_ADDR_INDEX, S) X(CX4_ADS_STAT_RATE, S) X(CX4_ADS_HOP_LIMIT, S) \
	X(CX4_ADS_TCLASS, S) X(CX4_ADS_FLOW_LABEL, S) X(CX4_ADS_F_DSCP, S) X(CX4_ADS_F_ECN, S) \
	X(CX4_ADS_F_ETH_PRIO, S) X(CX4_ADS_ECN, S) X(CX4_ADS_DSCP, S) X(CX4_ADS_UDP_SPORT, S) \
	X(CX4_ADS_DEI_CFI, S) X(CX4_ADS_ETH_PRIO, S) X(CX4_ADS_SL, S) X(CX4_ADS_VHCA_PORT_NUM, S) \
	X(CX4_ADS_RMAC_47_32, S) X(CX4_ADS_RMAC_31_0, S)
#define FLDS_QPC(X, S) X(CX4_QPC_STATE, S) X(CX4_QPC_LAG_TX_PORT_AFFINITY, S) \
	X(CX4_QPC_ST, S) X(CX4_QPC_ISOLATE_VL_TC, S) X(CX4_QPC_PM_STATE, S) \
	X(CX4_QPC_OFFLOAD_TYPE, S) X(CX4_QPC_END_PADDING_MODE, S) X(CX4_QPC_WQ_SIGNATURE, S) \
	X(CX4_QPC_BLOCK_LB_MC, S) X(CX4_QPC_ATOMIC_LIKE_WRITE_EN, S) \
	X(CX4_QPC_LATENCY_SENSITIVE, S) X(CX4_QPC_DRAIN_SIGERR, S) X(CX4_QPC_PD, S) \
	X(CX4_QPC_MTU, S) X(CX4_QPC_LOG_MSG_MAX, S) X(CX4_QPC_LOG_RQ_SIZE, S) \
	X(CX4_QPC_LOG_RQ_STRIDE, S) X(CX4_QPC_NO_SQ, S) X(CX4_QPC_LOG_SQ_SIZE, S) \
	X(CX4_QPC_DATA_IN_ORDER, S) X(CX4_QPC_RLKY, S) X(CX4_QPC_ULP_STATELESS_OFFLOAD_MODE, S) X(CX4_QPC_COUNTER_SET_ID, S) \
	X(CX4_QPC_UAR_PAGE, S) X(CX4_QPC_USER_INDEX, S) X(CX4_QPC_LOG_PAGE_SIZE, S) \
	X(CX4_QPC_REMOTE_QPN, S) X(CX4_QPC_LOG_ACK_REQ_FREQ, S) X(CX4_QPC_LOG_SRA_MAX, S) \
	X(CX4_QPC_RETRY_COUNT, S) X(CX4_QPC_RNR_RETRY, S) X(CX4_QPC_FRE, S) \
	X(CX4_QPC_CUR_RNR_RETRY, S) X(CX4_QPC_CUR_RETRY_COUNT, S) X(CX4_QPC_NEXT_SEND_PSN, S) \
	X(CX4_QPC_CQN_SND, S) X(CX4_QPC_DETH_SQPN, S) X(CX4_QPC_LAST_ACKED_PSN, S) \
	X(CX4_QPC_SSN, S) X(CX4_QPC_LOG_RRA_MAX, S) X(CX4_QPC_ATOMIC_MODE, S) X(CX4_QPC_RRE, S) \
	X(CX4_QPC_RWE, S) X(CX4_QPC_RAE, S) X(CX4_QPC_PAGE_OFFSET, S) \
	X(CX4_QPC_CD_SLAVE_RECEIVE, S) X(CX4_QPC_CD_SLAVE_SEND, S) X(CX4_QPC_CD_MASTER, S) \
	X(CX4_QPC_MIN_RNR_NAK, S) X(CX4_QPC_NEXT_RCV_PSN, S) X(CX4_QPC_XRCD, S) \
	X(CX4_QPC_CQN_RCV, S) X(CX4_QPC_DBR_ADDR, S) X(CX4_QPC_Q_KEY, S) X(CX4_QPC_RQ_TYPE, S) \
	X(CX4_QPC_SRQN_RMPN_XRQN, S) X(CX4_QPC_RMSN, S) X(CX4_QPC_HW_SQ_WQEBB_COUNTER, S) \
	X(CX4_QPC_SW_SQ_WQEBB_COUNTER, S) X(CX4_QPC_HW_RQ_COUNTER, S) X(CX4_QPC_SW_RQ_COUNTER, S) \
	X(CX4_QPC_CGS, S) X(CX4_QPC_CS_REQ, S) X(CX4_QPC_CS_RES, S) X(CX4_QPC_DC_ACCESS_KEY, S)
#define FLDS_CQC(X, S) X(CX4_CQC_STATUS, S) X(CX4_CQC_CQE_SZ, S) X(CX4_CQC_CC, S) \
	X(CX4_CQC_SCQE_BREAK_MODERATION_EN, S) X(CX4_CQC_OI, S) X(CX4_CQC_CQ_PERIOD_MODE, S) \
	X(CX4_CQC_CQE_COMP_EN, S) X(CX4_CQC_MINI_CQE_RES_FORMAT, S) X(CX4_CQC_ST, S) \
	X(CX4_CQC_PAGE_OFFSET, S) X(CX4_CQC_LOG_CQ_SIZE, S) X(CX4_CQC_UAR_PAGE, S) \
	X(CX4_CQC_CQ_PERIOD, S) X(CX4_CQC_CQ_MAX_COUNT, S) X(CX4_CQC_C_EQN, S) \
	X(CX4_CQC_LOG_PAGE_SIZE, S) X(CX4_CQC_LAST_NOTIFIED_INDEX, S) \
	X(CX4_CQC_LAST_SOLICIT_INDEX, S) X(CX4_CQC_CONSUMER_COUNTER, S) \
	X(CX4_CQC_PRODUCER_COUNTER, S) X(CX4_CQC_DBR_ADDR, S)
#define FLDS_EQC(X, S) X(CX4_EQC_STATUS, S) X(CX4_EQC_EC, S) X(CX4_EQC_OI, S) \
	X(CX4_EQC_ST, S) X(CX4_EQC_PAGE_OFFSET, S) X(CX4_EQC_LOG_EQ_SIZE, S) \
	X(CX4_EQC_UAR_PAGE, S) X(CX4_EQC_INTR, S) X(CX4_EQC_LOG_PAGE_SIZE, S) \
	X(CX4_EQC_CONSUMER_COUNTER, S) X(CX4_EQC_PRODUCER_COUNTER, S)
#define FLDS_MKC(X, S) X(CX4_MKC_FREE, S) X(CX4_MKC_ACCESS_MODE_4_2, S) \
	X(CX4_MKC_UMR_EN, S) X(CX4_MKC_A, S) X(CX4_MKC_RW, S) X(CX4_MKC_RR, S) X(CX4_MKC_LW, S) \
	X(CX4_MKC_LR, S) X(CX4_MKC_ACCESS_MODE_1_0, S) X(CX4_MKC_QPN, S) X(CX4_MKC_MKEY_7_0, S) \
	X(CX4_MKC_LENGTH64, S) X(CX4_MKC_BSF_EN, S) X(CX4_MKC_SYNC_UMR, S) \
	X(CX4_MKC_EN_RINVAL, S) X(CX4_MKC_PD, S) X(CX4_MKC_START_ADDR, S) X(CX4_MKC_LEN, S) \
	X(CX4_MKC_BSF_OCTWORD_SIZE, S) X(CX4_MKC_TRANSLATIONS_OCTWORD_SIZE, S) \
	X(CX4_MKC_LOG_PAGE_SIZE, S)
#define FLDS_UMR_CTRL(X, S) X(CX4_UMR_CTRL_INLINE, S) X(CX4_UMR_CTRL_CHECK_FREE_STATE, S) \
	X(CX4_UMR_CTRL_TRANSLATION_OFFSET_EN, S) X(CX4_UMR_CTRL_CHECK_QPN, S) \
	X(CX4_UMR_CTRL_XLT_OCTOWORDS, S) X(CX4_UMR_CTRL_XLT_OFFSET, S) \
	X(CX4_UMR_CTRL_MKEY_MASK, S)
#define FLDS_KLM(X, S) X(CX4_KLM_BYTE_COUNT, S) X(CX4_KLM_MKEY, S) X(CX4_KLM_ADDRESS, S)
#define FLDS_SRQC(X, S) X(CX4_SRQC_STATE, S) X(CX4_SRQC_LOG_SRQ_SIZE, S) \
	X(CX4_SRQC_WQ_SIGNATURE, S) X(CX4_SRQC_CONT_SRQ, S) X(CX4_SRQC_RLKY, S) \
	X(CX4_SRQC_LOG_RQ_STRIDE, S) X(CX4_SRQC_XRCD, S) X(CX4_SRQC_PAGE_OFFSET, S) \
	X(CX4_SRQC_CQN, S) X(CX4_SRQC_LOG_PAGE_SIZE, S) X(CX4_SRQC_PD, S) X(CX4_SRQC_LWM, S) \
	X(CX4_SRQC_WQE_CNT, S) X(CX4_SRQC_DBR_ADDR, S)
#define FLDS_NIC_VPORT(X, S) X(CX4_NIC_VPORT_MIN_WQE_INLINE_MODE, S) \
	X(CX4_NIC_VPORT_DISABLE_MC_LOCAL_LB, S) X(CX4_NIC_VPORT_DISABLE_UC_LOCAL_LB, S) \
	X(CX4_NIC_VPORT_ROCE_EN, S) X(CX4_NIC_VPORT_ARM_CHANGE_EVENT, S) \
	X(CX4_NIC_VPORT_EVENT_ON_MTU, S) X(CX4_NIC_VPORT_EVENT_ON_PROMISC_CHANGE, S) \
	X(CX4_NIC_VPORT_EVENT_ON_VLAN_CHANGE, S) X(CX4_NIC_VPORT_EVENT_ON_MC_ADDRESS_CHANGE, S) \
	X(CX4_NIC_VPORT_EVENT_ON_UC_ADDRESS_CHANGE, S) X(CX4_NIC_VPORT_MTU, S) \
	X(CX4_NIC_VPORT_SYSTEM_IMAGE_GUID, S) X(CX4_NIC_VPORT_PORT_GUID, S) \
	X(CX4_NIC_VPORT_NODE_GUID, S) X(CX4_NIC_VPORT_QKEY_VIOLATION_COUNTER, S) \
	X(CX4_NIC_VPORT_PROMISC_UC, S) X(CX4_NIC_VPORT_PROMISC_MC, S) \
	X(CX4_NIC_VPORT_PROMISC_ALL, S) X(CX4_NIC_VPORT_ALLOWED_LIST_TYPE, S) \
	X(CX4_NIC_VPORT_ALLOWED_LIST_SIZE, S) X(CX4_NIC_VPORT_PERM_MAC_47_32, S) \
	X(CX4_NIC_VPORT_PERM_MAC_31_0, S)
#define FLDS_HCA_VPORT(X, S) X(CX4_HCA_VPORT_FIELD_SELECT, S) \
	X(CX4_HCA_VPORT_SM_VIRT_AWARE, S) X(CX4_HCA_VPORT_HAS_SMI, S) X(CX4_HCA_VPORT_HAS_RAW, S) \
	X(CX4_HCA_VPORT_GRH_REQUIRED, S) X(CX4_HCA_VPORT_PORT_PHYSICAL_STATE, S) \
	X(CX4_HCA_VPORT_VPORT_STATE_POLICY, S) X(CX4_HCA_VPORT_PORT_STATE, S) \
	X(CX4_HCA_VPORT_VPORT_STATE, S) X(CX4_HCA_VPORT_SYSTEM_IMAGE_GUID, S) \
	X(CX4_HCA_VPORT_PORT_GUID, S) X(CX4_HCA_VPORT_NODE_GUID, S) X(CX4_HCA_VPORT_CAP_MASK1, S) \
	X(CX4_HCA_VPORT_CAP_MASK2, S) X(CX4_HCA_VPORT_LID, S) X(CX4_HCA_VPORT_INIT_TYPE_REPLY, S) \
	X(CX4_HCA_VPORT_LMC, S) X(CX4_HCA_VPORT_SUBNET_TIMEOUT, S) X(CX4_HCA_VPORT_SM_LID, S) \
	X(CX4_HCA_VPORT_SM_SL, S) X(CX4_HCA_VPORT_QKEY_VIOLATION_COUNTER, S) \
	X(CX4_HCA_VPORT_PKEY_VIOLATION_COUNTER, S)
#define FLDS_ROCE_ADDR(X, S) X(CX4_ROCE_ADDR_VLAN_VALID, S) X(CX4_ROCE_ADDR_VLAN_ID, S) \
	X(CX4_ROCE_ADDR_SOURCE_MAC_47_32, S) X(CX4_ROCE_ADDR_SOURCE_MAC_31_0, S) \
	X(CX4_ROCE_ADDR_ROCE_L3_TYPE, S) X(CX4_ROCE_ADDR_ROCE_VERSION, S)
#define FLDS_CAP_GEN(X, S) X(CX4_CAP_GEN_QP_DATA_IN_ORDER, S) X(CX4_CAP_GEN_LOG_MAX_SRQ_SZ, S) \
	X(CX4_CAP_GEN_LOG_MAX_QP_SZ, S) X(CX4_CAP_GEN_LOG_MAX_QP, S) \
	X(CX4_CAP_GEN_LOG_MAX_SRQ, S) X(CX4_CAP_GEN_LOG_MAX_CQ_SZ, S) \
	X(CX4_CAP_GEN_LOG_MAX_CQ, S) X(CX4_CAP_GEN_LOG_MAX_EQ_SZ, S) \
	X(CX4_CAP_GEN_LOG_MAX_MKEY, S) X(CX4_CAP_GEN_FAST_TEARDOWN, S) \
	X(CX4_CAP_GEN_LOG_MAX_EQ, S) X(CX4_CAP_GEN_MAX_INDIRECTION, S) \
	X(CX4_CAP_GEN_LOG_MAX_MRW_SZ, S) X(CX4_CAP_GEN_FORCE_TEARDOWN, S) \
	X(CX4_CAP_GEN_LOG_MAX_BSF_LIST_SIZE, S) X(CX4_CAP_GEN_LOG_MAX_KLM_LIST_SIZE, S) \
	X(CX4_CAP_GEN_LOG_MAX_RA_REQ_DC, S) X(CX4_CAP_GEN_LOG_MAX_RA_RES_DC, S) \
	X(CX4_CAP_GEN_LOG_MAX_RA_REQ_QP, S) X(CX4_CAP_GEN_LOG_MAX_RA_RES_QP, S) \
	X(CX4_CAP_GEN_END_PAD, S) X(CX4_CAP_GEN_CC_QUERY_ALLOWED, S) \
	X(CX4_CAP_GEN_CC_MODIFY_ALLOWED, S) X(CX4_CAP_GEN_GID_TABLE_SIZE, S) \
	X(CX4_CAP_GEN_OUT_OF_SEQ_CNT, S) X(CX4_CAP_GEN_VPORT_COUNTERS, S) \
	X(CX4_CAP_GEN_RETRANSMISSION_Q_COUNTERS, S) X(CX4_CAP_GEN_MAX_QP_CNT, S) \
	X(CX4_CAP_GEN_PKEY_TABLE_SIZE, S) X(CX4_CAP_GEN_VPORT_GROUP_MANAGER, S) \
	X(CX4_CAP_GEN_VHCA_GROUP_MANAGER, S) X(CX4_CAP_GEN_IB_VIRT, S) X(CX4_CAP_GEN_ETH_VIRT, S) \
	X(CX4_CAP_GEN_ETS, S) X(CX4_CAP_GEN_NIC_FLOW_TABLE, S) X(CX4_CAP_GEN_ESWITCH_MANAGER, S) \
	X(CX4_CAP_GEN_MCAM_REG, S) X(CX4_CAP_GEN_PCAM_REG, S) \
	X(CX4_CAP_GEN_LOCAL_CA_ACK_DELAY, S) X(CX4_CAP_GEN_PORT_MODULE_EVENT, S) \
	X(CX4_CAP_GEN_PORTS_CHECK, S) X(CX4_CAP_GEN_DISABLE_LINK_UP, S) \
	X(CX4_CAP_GEN_BEACON_LED, S) X(CX4_CAP_GEN_PORT_TYPE, S) X(CX4_CAP_GEN_NUM_PORTS, S) \
	X(CX4_CAP_GEN_PPS, S) X(CX4_CAP_GEN_PPS_MODIFY, S) X(CX4_CAP_GEN_LOG_MAX_MSG, S) \
	X(CX4_CAP_GEN_MAX_TC, S) X(CX4_CAP_GEN_TEMP_WARN_EVENT, S) X(CX4_CAP_GEN_DCBX, S) \
	X(CX4_CAP_GEN_GENERAL_NOTIFICATION_EVENT, S) X(CX4_CAP_GEN_ROL_S, S) \
	X(CX4_CAP_GEN_ROL_G, S) X(CX4_CAP_GEN_WOL_S, S) X(CX4_CAP_GEN_WOL_G, S) \
	X(CX4_CAP_GEN_WOL_A, S) X(CX4_CAP_GEN_WOL_B, S) X(CX4_CAP_GEN_WOL_M, S) \
	X(CX4_CAP_GEN_WOL_U, S) X(CX4_CAP_GEN_WOL_P, S) X(CX4_CAP_GEN_STAT_RATE_SUPPORT, S) \
	X(CX4_CAP_GEN_CQE_VERSION, S) X(CX4_CAP_GEN_COMPACT_ADDRESS_VECTOR, S) \
	X(CX4_CAP_GEN_STRIDING_RQ, S) X(CX4_CAP_GEN_IPOIB_ENHANCED_OFFLOADS, S) \
	X(CX4_CAP_GEN_IPOIB_BASIC_OFFLOADS, S) X(CX4_CAP_GEN_DRAIN_SIGERR, S) \
	X(CX4_CAP_GEN_CMDIF_CHECKSUM, S) X(CX4_CAP_GEN_SIGERR_CQE, S) \
	X(CX4_CAP_GEN_WQ_SIGNATURE, S) X(CX4_CAP_GEN_SCTR_DATA_CQE, S) X(CX4_CAP_GEN_SHO, S) \
	X(CX4_CAP_GEN_TPH, S) X(CX4_CAP_GEN_RF, S) X(CX4_CAP_GEN_DCT, S) X(CX4_CAP_GEN_QOS, S) \
	X(CX4_CAP_GEN_ETH_NET_OFFLOADS, S) X(CX4_CAP_GEN_ROCE, S) X(CX4_CAP_GEN_ATOMIC, S) \
	X(CX4_CAP_GEN_CQ_OI, S) X(CX4_CAP_GEN_CQ_RESIZE, S) X(CX4_CAP_GEN_CQ_MODERATION, S) \
	X(CX4_CAP_GEN_CQ_EQ_REMAP, S) X(CX4_CAP_GEN_PG, S) X(CX4_CAP_GEN_BLOCK_LB_MC, S) \
	X(CX4_CAP_GEN_SCQE_BREAK_MODERATION, S) X(CX4_CAP_GEN_CQ_PERIOD_START_FROM_CQE, S) \
	X(CX4_CAP_GEN_CD, S) X(CX4_CAP_GEN_APM, S) X(CX4_CAP_GEN_VECTOR_CALC, S) \
	X(CX4_CAP_GEN_UMR_PTR_RLKY, S) X(CX4_CAP_GEN_IMAICL, S) X(CX4_CAP_GEN_QKV, S) \
	X(CX4_CAP_GEN_PKV, S) X(CX4_CAP_GEN_SET_DETH_SQPN, S) X(CX4_CAP_GEN_XRC, S) \
	X(CX4_CAP_GEN_UD, S) X(CX4_CAP_GEN_UC, S) X(CX4_CAP_GEN_RC, S) X(CX4_CAP_GEN_UAR_4K, S) \
	X(CX4_CAP_GEN_UAR_SZ, S) X(CX4_CAP_GEN_UMEM_UID_0, S) X(CX4_CAP_GEN_LOG_PG_SZ, S) \
	X(CX4_CAP_GEN_BF, S) X(CX4_CAP_GEN_DRIVER_VERSION, S) X(CX4_CAP_GEN_PAD_TX_ETH_PACKET, S) \
	X(CX4_CAP_GEN_LOG_BF_REG_SIZE, S) X(CX4_CAP_GEN_LAG_TX_PORT_AFFINITY, S) \
	X(CX4_CAP_GEN_LAG_MASTER, S) X(CX4_CAP_GEN_NUM_LAG_PORTS, S) \
	X(CX4_CAP_GEN_MAX_WQE_SZ_SQ, S) X(CX4_CAP_GEN_MAX_WQE_SZ_RQ, S) \
	X(CX4_CAP_GEN_MAX_WQE_SZ_SQ_DC, S) X(CX4_CAP_GEN_MAX_QP_MCG, S) \
	X(CX4_CAP_GEN_LOG_MAX_MCG, S) X(CX4_CAP_GEN_LOG_MAX_TRANSPORT_DOMAIN, S) \
	X(CX4_CAP_GEN_LOG_MAX_PD, S) X(CX4_CAP_GEN_LOG_MAX_XRCD, S) X(CX4_CAP_GEN_LOG_MAX_RQ, S) \
	X(CX4_CAP_GEN_LOG_MAX_SQ, S) X(CX4_CAP_GEN_LOG_MAX_TIR, S) X(CX4_CAP_GEN_LOG_MAX_TIS, S) \
	X(CX4_CAP_GEN_BASIC_CYCLIC_RCV_WQE, S) X(CX4_CAP_GEN_LOG_MAX_RMP, S) \
	X(CX4_CAP_GEN_LOG_MAX_RQT, S) X(CX4_CAP_GEN_LOG_MAX_RQT_SIZE, S) \
	X(CX4_CAP_GEN_LOG_MAX_TIS_PER_SQ, S) X(CX4_CAP_GEN_LOG_MAX_STRIDE_SZ_RQ, S) \
	X(CX4_CAP_GEN_LOG_MIN_STRIDE_SZ_RQ, S) X(CX4_CAP_GEN_LOG_MAX_STRIDE_SZ_SQ, S) \
	X(CX4_CAP_GEN_LOG_MIN_STRIDE_SZ_SQ, S) X(CX4_CAP_GEN_LOG_MAX_WQ_SZ, S) \
	X(CX4_CAP_GEN_NIC_VPORT_CHANGE_EVENT, S) X(CX4_CAP_GEN_DISABLE_LOCAL_LB_UC, S) \
	X(CX4_CAP_GEN_DISABLE_LOCAL_LB_MC, S) X(CX4_CAP_GEN_LOG_MAX_VLAN_LIST, S) \
	X(CX4_CAP_GEN_LOG_MAX_CURRENT_MC_LIST, S) X(CX4_CAP_GEN_LOG_MAX_CURRENT_UC_LIST, S) \
	X(CX4_CAP_GEN_LOG_MAX_L2_TABLE, S) X(CX4_CAP_GEN_LOG_UAR_PAGE_SZ, S) \
	X(CX4_CAP_GEN_DEVICE_FREQUENCY_MHZ, S) X(CX4_CAP_GEN_DEVICE_FREQUENCY_KHZ, S) \
	X(CX4_CAP_GEN_CQE_COMPRESSION, S) X(CX4_CAP_GEN_CQE_COMPRESSION_TIMEOUT, S) \
	X(CX4_CAP_GEN_CQE_COMPRESSION_MAX_NUM, S)
#define FLDS_CAP_ROCE(X, S) X(CX4_CAP_ROCE_ROCE_APM, S) \
	X(CX4_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT, S) X(CX4_CAP_ROCE_L3_TYPE, S) \
	X(CX4_CAP_ROCE_ROCE_VERSION, S) X(CX4_CAP_ROCE_R_ROCE_DEST_UDP_PORT, S) \
	X(CX4_CAP_ROCE_R_ROCE_MAX_SRC_UDP_PORT, S) X(CX4_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT, S) \
	X(CX4_CAP_ROCE_ADDRESS_TABLE_SIZE, S)
#define FLDS_CAP_ATOMIC(X, S) X(CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE, S) \
	X(CX4_CAP_ATOMIC_SUPPORTED_8B_ENDIANNESS_MODE_1, S) X(CX4_CAP_ATOMIC_OPERATIONS, S) \
	X(CX4_CAP_ATOMIC_SIZE_QP, S) X(CX4_CAP_ATOMIC_SIZE_DC, S)
#define FLDS_ADAPTER(X, S) X(CX4_ADAPTER_IEEE_VENDOR_ID, S) \
	X(CX4_ADAPTER_VSD_VENDOR_ID, S)
#define FLDS_EQE(X, S) X(CX4_EQE_TYPE, S) X(CX4_EQE_SUB_TYPE, S) X(CX4_EQE_SIGNATURE, S) \
	X(CX4_EQE_OWNER, S) X(CX4_EQE_COMP_CQN, S) X(CX4_EQE_QP_SRQ_TYPE, S) \
	X(CX4_EQE_QP_SRQ_N, S) X(CX4_EQE_CQ_ERR_CQN, S) X(CX4_EQE_CQ_ERR_SYNDROME, S) \
	X(CX4_EQE_PORT_NUM, S) X(CX4_EQE_CMD_VECTOR, S) X(CX4_EQE_PAGE_REQ_FUNC_ID, S) \
	X(CX4_EQE_PAGE_REQ_NUM_PAGES, S) X(CX4_EQE_VPORT_CHANGE_VPORT_NUM, S)
#define FLDS_PAOS(X, S) X(CX4_PAOS_SWID, S) X(CX4_PAOS_LOCAL_PORT, S) \
	X(CX4_PAOS_ADMIN_STATUS, S) X(CX4_PAOS_OPER_STATUS, S) X(CX4_PAOS_ASE, S) \
	X(CX4_PAOS_EE, S) X(CX4_PAOS_E, S)
#define FLDS_PTYS(X, S) X(CX4_PTYS_AN_DISABLE_ADMIN, S) X(CX4_PTYS_AN_DISABLE_CAP, S) \
	X(CX4_PTYS_LOCAL_PORT, S) X(CX4_PTYS_PROTO_MASK, S) X(CX4_PTYS_AN_STATUS, S) \
	X(CX4_PTYS_ETH_PROTO_CAPABILITY, S) X(CX4_PTYS_IB_LINK_WIDTH_CAPABILITY, S) \
	X(CX4_PTYS_IB_PROTO_CAPABILITY, S) X(CX4_PTYS_ETH_PROTO_ADMIN, S) \
	X(CX4_PTYS_IB_LINK_WIDTH_ADMIN, S) X(CX4_PTYS_IB_PROTO_ADMIN, S) \
	X(CX4_PTYS_ETH_PROTO_OPER, S) X(CX4_PTYS_IB_LINK_WIDTH_OPER, S) \
	X(CX4_PTYS_IB_PROTO_OPER, S) X(CX4_PTYS_CONNECTOR_TYPE, S) \
	X(CX4_PTYS_ETH_PROTO_LP_ADVERTISE, S)
#define FLDS_PMTU(X, S) X(CX4_PMTU_LOCAL_PORT, S) X(CX4_PMTU_MAX_MTU, S) \
	X(CX4_PMTU_ADMIN_MTU, S) X(CX4_PMTU_OPER_MTU, S)
#define FLDS_HOST_ENDIANNESS(X, S) X(CX4_HOST_ENDIANNESS_HE, S)
#define FLDS_ENABLE_HCA_IN(X, S) X(CX4_ENABLE_HCA_IN_EMBEDDED_CPU_FUNCTION, S) \
	X(CX4_ENABLE_HCA_IN_FUNCTION_ID, S)
#define FLDS_DISABLE_HCA_IN(X, S) X(CX4_DISABLE_HCA_IN_FUNCTION_ID, S)
#define FLDS_QUERY_ISSI_OUT(X, S) X(CX4_QUERY_ISSI_OUT_CURRENT_ISSI, S) \
	X(CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_DW0, S)
#define FLDS_SET_ISSI_IN(X, S) X(CX4_SET_ISSI_IN_CURRENT_ISSI, S)
#define FLDS_QUERY_PAGES_IN(X, S) X(CX4_QUERY_PAGES_IN_FUNCTION_ID, S)
#define FLDS_QUERY_PAGES_OUT(X, S) X(CX4_QUERY_PAGES_OUT_FUNCTION_ID, S) \
	X(CX4_QUERY_PAGES_OUT_NUM_PAGES, S)
#define FLDS_MANAGE_PAGES_IN(X, S) X(CX4_MANAGE_PAGES_IN_FUNCTION_ID, S) \
	X(CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES, S)
#define FLDS_MANAGE_PAGES_OUT(X, S) X(CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES, S)
#define FLDS_QUERY_HCA_CAP_IN(X, S) X(CX4_QUERY_HCA_CAP_IN_OTHER_FUNCTION, S) \
	X(CX4_QUERY_HCA_CAP_IN_FUNCTION_ID, S)
#define FLDS_SET_HCA_CAP_IN(X, S) X(CX4_SET_HCA_CAP_IN_OTHER_FUNCTION, S) \
	X(CX4_SET_HCA_CAP_IN_FUNCTION_ID, S)
#define FLDS_TEARDOWN_HCA_IN(X, S) X(CX4_TEARDOWN_HCA_IN_PROFILE, S)
#define FLDS_TEARDOWN_HCA_OUT(X, S) X(CX4_TEARDOWN_HCA_OUT_FORCE_STATE, S)
#define FLDS_ALLOC_UAR_OUT(X, S) X(CX4_ALLOC_UAR_OUT_UAR, S)
#define FLDS_DEALLOC_UAR_IN(X, S) X(CX4_DEALLOC_UAR_IN_UAR, S)
#define FLDS_ALLOC_PD_OUT(X, S) X(CX4_ALLOC_PD_OUT_PD, S)
#define FLDS_DEALLOC_PD_IN(X, S) X(CX4_DEALLOC_PD_IN_PD, S)
#define FLDS_ALLOC_TRANSPORT_DOMAIN_OUT(X, S) X(CX4_ALLOC_TRANSPORT_DOMAIN_OUT_TD, S)
#define FLDS_DEALLOC_TRANSPORT_DOMAIN_IN(X, S) X(CX4_DEALLOC_TRANSPORT_DOMAIN_IN_TD, S)
#define FLDS_QUERY_SPECIAL_CONTEXTS_OUT(X, S) \
	X(CX4_QUERY_SPECIAL_CONTEXTS_OUT_DUMP_FILL_MKEY, S) \
	X(CX4_QUERY_SPECIAL_CONTEXTS_OUT_RESD_LKEY, S) \
	X(CX4_QUERY_SPECIAL_CONTEXTS_OUT_NULL_MKEY, S)
#define FLDS_CREATE_EQ_IN(X, S) X(CX4_CREATE_EQ_IN_EVENT_BITMASK, S)
#define FLDS_CREATE_EQ_OUT(X, S) X(CX4_CREATE_EQ_OUT_EQ_NUMBER, S)
#define FLDS_DESTROY_EQ_IN(X, S) X(CX4_DESTROY_EQ_IN_EQ_NUMBER, S)
#define FLDS_QUERY_EQ_IN(X, S) X(CX4_QUERY_EQ_IN_EQ_NUMBER, S)
#define FLDS_QUERY_EQ_OUT(X, S) X(CX4_QUERY_EQ_OUT_EVENT_BITMASK, S)
#define FLDS_CREATE_CQ_OUT(X, S) X(CX4_CREATE_CQ_OUT_CQN, S)
#define FLDS_DESTROY_CQ_IN(X, S) X(CX4_DESTROY_CQ_IN_CQN, S)
#define FLDS_QUERY_CQ_IN(X, S) X(CX4_QUERY_CQ_IN_CQN, S)
#define FLDS_MODIFY_CQ_IN(X, S) X(CX4_MODIFY_CQ_IN_CQN, S) \
	X(CX4_MODIFY_CQ_IN_FIELD_SELECT, S)
#define FLDS_CREATE_MKEY_IN(X, S) X(CX4_CREATE_MKEY_IN_PG_ACCESS, S) \
	X(CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE, S)
#define FLDS_CREATE_MKEY_OUT(X, S) X(CX4_CREATE_MKEY_OUT_MKEY_INDEX, S)
#define FLDS_DESTROY_MKEY_IN(X, S) X(CX4_DESTROY_MKEY_IN_MKEY_INDEX, S)
#define FLDS_QUERY_MKEY_IN(X, S) X(CX4_QUERY_MKEY_IN_MKEY_INDEX, S)
#define FLDS_CREATE_QP_IN(X, S) X(CX4_CREATE_QP_IN_OPT_PARAM_MASK, S)
#define FLDS_CREATE_QP_OUT(X, S) X(CX4_CREATE_QP_OUT_QPN, S)
#define FLDS_MODIFY_QP_IN(X, S) X(CX4_MODIFY_QP_IN_QPN, S) \
	X(CX4_MODIFY_QP_IN_OPT_PARAM_MASK, S)
#define FLDS_QP_NOCTX_IN(X, S) X(CX4_QP_NOCTX_IN_QPN, S)
#define FLDS_QUERY_QP_IN(X, S) X(CX4_QUERY_QP_IN_QPN, S)
#define FLDS_QUERY_QP_OUT(X, S) X(CX4_QUERY_QP_OUT_OPT_PARAM_MASK, S)
#define FLDS_CREATE_SRQ_OUT(X, S) X(CX4_CREATE_SRQ_OUT_SRQN, S)
#define FLDS_DESTROY_SRQ_IN(X, S) X(CX4_DESTROY_SRQ_IN_SRQN, S)
#define FLDS_QUERY_SRQ_IN(X, S) X(CX4_QUERY_SRQ_IN_SRQN, S)
#define FLDS_ARM_RQ_IN(X, S) X(CX4_ARM_RQ_IN_SRQ_NUMBER, S) X(CX4_ARM_RQ_IN_LWM, S)
#define FLDS_MCG_IN(X, S) X(CX4_MCG_IN_QPN, S)
#define FLDS_QUERY_VPORT_STATE_IN(X, S) X(CX4_QUERY_VPORT_STATE_IN_OTHER_VPORT, S) \
	X(CX4_QUERY_VPORT_STATE_IN_VPORT_NUMBER, S)
#define FLDS_QUERY_VPORT_STATE_OUT(X, S) X(CX4_QUERY_VPORT_STATE_OUT_ADMIN_STATE, S) \
	X(CX4_QUERY_VPORT_STATE_OUT_STATE, S)
#define FLDS_QUERY_NIC_VPORT_CONTEXT_IN(X, S) \
	X(CX4_QUERY_NIC_VPORT_CONTEXT_IN_OTHER_VPORT, S) \
	X(CX4_QUERY_NIC_VPORT_CONTEXT_IN_VPORT_NUMBER, S) \
	X(CX4_QUERY_NIC_VPORT_CONTEXT_IN_ALLOWED_LIST_TYPE, S)
#define FLDS_MODIFY_NIC_VPORT_CONTEXT_IN(X, S) \
	X(CX4_MODIFY_NIC_VPORT_CONTEXT_IN_OTHER_VPORT, S) \
	X(CX4_MODIFY_NIC_VPORT_CONTEXT_IN_VPORT_NUMBER, S) \
	X(CX4_MODIFY_NIC_VPORT_CONTEXT_IN_FIELD_SELECT, S)
#define FLDS_QUERY_HCA_VPORT_CONTEXT_IN(X, S) \
	X(CX4_QUERY_HCA_VPORT_CONTEXT_IN_OTHER_VPORT, S) \
	X(CX4_QUERY_HCA_VPORT_CONTEXT_IN_PORT_NUM, S) \
	X(CX4_QUERY_HCA_VPORT_CONTEXT_IN_VPORT_NUMBER, S)
#define FLDS_QUERY_HCA_VPORT_GID_IN(X, S) X(CX4_QUERY_HCA_VPORT_GID_IN_OTHER_VPORT, S) \
	X(CX4_QUERY_HCA_VPORT_GID_IN_PORT_NUM, S) X(CX4_QUERY_HCA_VPORT_GID_IN_VPORT_NUMBER, S) \
	X(CX4_QUERY_HCA_VPORT_GID_IN_GID_INDEX, S)
#define FLDS_QUERY_HCA_VPORT_GID_OUT(X, S) X(CX4_QUERY_HCA_VPORT_GID_OUT_GIDS_NUM, S)
#define FLDS_QUERY_ROCE_ADDRESS_IN(X, S) X(CX4_QUERY_ROCE_ADDRESS_IN_INDEX, S) \
	X(CX4_QUERY_ROCE_ADDRESS_IN_VHCA_PORT_NUM, S)
#define FLDS_SET_ROCE_ADDRESS_IN(X, S) X(CX4_SET_ROCE_ADDRESS_IN_INDEX, S) \
	X(CX4_SET_ROCE_ADDRESS_IN_VHCA_PORT_NUM, S)
#define FLDS_ACCESS_REG_IN(X, S) X(CX4_ACCESS_REG_IN_REGISTER_ID, S) \
	X(CX4_ACCESS_REG_IN_ARGUMENT, S)

#define ALL_GROUPS(G) \
	G(FLDS_ISEG, CX4_ISEG_SIZE) \
	G(FLDS_ENTRY, CX4_CMDQ_ENTRY_SIZE) \
	G(FLDS_HDR_IN, CX4_CMD_HDR_SIZE) \
	G(FLDS_HDR_OUT, CX4_CMD_HDR_SIZE) \
	G(FLDS_MAILBOX, CX4_MAILBOX_SIZE) \
	G(FLDS_ADS, CX4_ADS_SIZE) \
	G(FLDS_QPC, CX4_QPC_SIZE) \
	G(FLDS_CQC, CX4_CQC_SIZE) \
	G(FLDS_EQC, CX4_EQC_SIZE) \
	G(FLDS_MKC, CX4_MKC_SIZE) \
	G(FLDS_UMR_CTRL, CX4_UMR_CTRL_SIZE) \
	G(FLDS_KLM, CX4_KLM_SIZE) \
	G(FLDS_SRQC, CX4_SRQC_SIZE) \
	G(FLDS_NIC_VPORT, CX4_NIC_VPORT_CTX_SIZE) \
	G(FLDS_HCA_VPORT, CX4_HCA_VPORT_CTX_SIZE) \
	G(FLDS_ROCE_ADDR, CX4_ROCE_ADDR_SIZE) \
	G(FLDS_CAP_GEN, 0x100) \
	G(FLDS_CAP_ROCE, 0x100) \
	G(FLDS_CAP_ATOMIC, 0x100) \
	G(FLDS_ADAPTER, 0x100) \
	G(FLDS_EQE, CX4_EQE_SIZE) \
	G(FLDS_PAOS, CX4_PAOS_SIZE) \
	G(FLDS_PTYS, CX4_PTYS_SIZE) \
	G(FLDS_PMTU, CX4_PMTU_SIZE) \
	G(FLDS_HOST_ENDIANNESS, CX4_HOST_ENDIANNESS_SIZE) \
	G(FLDS_ENABLE_HCA_IN, CX4_ENABLE_HCA_IN_SIZE) \
	G(FLDS_DISABLE_HCA_IN, CX4_DISABLE_HCA_IN_SIZE) \
	G(FLDS_QUERY_ISSI_OUT, CX4_QUERY_ISSI_OUT_SIZE) \
	G(FLDS_SET_ISSI_IN, CX4_SET_ISSI_IN_SIZE) \
	G(FLDS_QUERY_PAGES_IN, CX4_QUERY_PAGES_IN_SIZE) \
	G(FLDS_QUERY_PAGES_OUT, CX4_QUERY_PAGES_OUT_SIZE) \
	G(FLDS_MANAGE_PAGES_IN, CX4_MANAGE_PAGES_IN_SIZE) \
	G(FLDS_MANAGE_PAGES_OUT, CX4_MANAGE_PAGES_OUT_SIZE) \
	G(FLDS_QUERY_HCA_CAP_IN, CX4_QUERY_HCA_CAP_IN_SIZE) \
	G(FLDS_SET_HCA_CAP_IN, CX4_SET_HCA_CAP_IN_SIZE) \
	G(FLDS_TEARDOWN_HCA_IN, CX4_TEARDOWN_HCA_IN_SIZE) \
	G(FLDS_TEARDOWN_HCA_OUT, CX4_TEARDOWN_HCA_OUT_SIZE) \
	G(FLDS_ALLOC_UAR_OUT, CX4_ALLOC_UAR_OUT_SIZE) \
	G(FLDS_DEALLOC_UAR_IN, CX4_DEALLOC_UAR_IN_SIZE) \
	G(FLDS_ALLOC_PD_OUT, CX4_ALLOC_PD_OUT_SIZE) \
	G(FLDS_DEALLOC_PD_IN, CX4_DEALLOC_PD_IN_SIZE) \
	G(FLDS_ALLOC_TRANSPORT_DOMAIN_OUT, CX4_ALLOC_TRANSPORT_DOMAIN_OUT_SIZE) \
	G(FLDS_DEALLOC_TRANSPORT_DOMAIN_IN, CX4_DEALLOC_TRANSPORT_DOMAIN_IN_SIZE) \
	G(FLDS_QUERY_SPECIAL_CONTEXTS_OUT, CX4_QUERY_SPECIAL_CONTEXTS_OUT_SIZE) \
	G(FLDS_CREATE_EQ_IN, CX4_CREATE_EQ_IN_SIZE) \
	G(FLDS_CREATE_EQ_OUT, CX4_CREATE_EQ_OUT_SIZE) \
	G(FLDS_DESTROY_EQ_IN, CX4_DESTROY_EQ_IN_SIZE) \
	G(FLDS_QUERY_EQ_IN, CX4_QUERY_EQ_IN_SIZE) \
	G(FLDS_QUERY_EQ_OUT, CX4_QUERY_EQ_OUT_SIZE) \
	G(FLDS_CREATE_CQ_OUT, CX4_CREATE_CQ_OUT_SIZE) \
	G(FLDS_DESTROY_CQ_IN, CX4_DESTROY_CQ_IN_SIZE) \
	G(FLDS_QUERY_CQ_IN, CX4_QUERY_CQ_IN_SIZE) \
	G(FLDS_MODIFY_CQ_IN, CX4_MODIFY_CQ_IN_SIZE) \
	G(FLDS_CREATE_MKEY_IN, CX4_CREATE_MKEY_IN_SIZE) \
	G(FLDS_CREATE_MKEY_OUT, CX4_CREATE_MKEY_OUT_SIZE) \
	G(FLDS_DESTROY_MKEY_IN, CX4_DESTROY_MKEY_IN_SIZE) \
	G(FLDS_QUERY_MKEY_IN, CX4_QUERY_MKEY_IN_SIZE) \
	G(FLDS_CREATE_QP_IN, CX4_CREATE_QP_IN_SIZE) \
	G(FLDS_CREATE_QP_OUT, CX4_CREATE_QP_OUT_SIZE) \
	G(FLDS_MODIFY_QP_IN, CX4_MODIFY_QP_IN_SIZE) \
	G(FLDS_QP_NOCTX_IN, CX4_QP_2ERR_IN_SIZE) \
	G(FLDS_QUERY_QP_IN, CX4_QUERY_QP_IN_SIZE) \
	G(FLDS_QUERY_QP_OUT, CX4_QUERY_QP_OUT_SIZE) \
	G(FLDS_CREATE_SRQ_OUT, CX4_CREATE_SRQ_OUT_SIZE) \
	G(FLDS_DESTROY_SRQ_IN, CX4_DESTROY_SRQ_IN_SIZE) \
	G(FLDS_QUERY_SRQ_IN, CX4_QUERY_SRQ_IN_SIZE) \
	G(FLDS_ARM_RQ_IN, CX4_ARM_RQ_IN_SIZE) \
	G(FLDS_MCG_IN, CX4_MCG_IN_SIZE) \
	G(FLDS_QUERY_VPORT_STATE_IN, CX4_QUERY_VPORT_STATE_IN_SIZE) \
	G(FLDS_QUERY_VPORT_STATE_OUT, CX4_QUERY_VPORT_STATE_OUT_SIZE) \
	G(FLDS_QUERY_NIC_VPORT_CONTEXT_IN, CX4_QUERY_NIC_VPORT_CONTEXT_IN_SIZE) \
	G(FLDS_MODIFY_NIC_VPORT_CONTEXT_IN, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_SIZE) \
	G(FLDS_QUERY_HCA_VPORT_CONTEXT_IN, CX4_QUERY_HCA_VPORT_CONTEXT_IN_SIZE) \
	G(FLDS_QUERY_HCA_VPORT_GID_IN, CX4_QUERY_HCA_VPORT_GID_IN_SIZE) \
	G(FLDS_QUERY_HCA_VPORT_GID_OUT, CX4_QUERY_HCA_VPORT_GID_OUT_SIZE) \
	G(FLDS_QUERY_ROCE_ADDRESS_IN, CX4_QUERY_ROCE_ADDRESS_IN_SIZE) \
	G(FLDS_SET_ROCE_ADDRESS_IN, CX4_SET_ROCE_ADDRESS_IN_SIZE) \
	G(FLDS_ACCESS_REG_IN, CX4_ACCESS_REG_IN_SIZE)
/* end of the descriptor lists */

/* A descriptor is valid, inside its structure, and a 64-bit field is 8-byte aligned. */
#define CHECK_FLD(f, size)							\
	_Static_assert(CX4_FLD_VALID(f) && CX4_FLD_END(f) <= (size) &&		\
		       (CX4_FLD_WIDTH(f) != 64 || CX4_FLD_OFF(f) % 8 == 0), #f);
#define CHECK_GROUP(list, size) list(CHECK_FLD, size)
ALL_GROUPS(CHECK_GROUP)

/* Structure sizes ([dev.h] struct sizes, [ifc] *_bits sizes) */
_Static_assert(CX4_CMDQ_ENTRY_SIZE == 0x40, "command queue entry");
_Static_assert(CX4_MAILBOX_SIZE == 0x240 && CX4_MAILBOX_DATA_SIZE == 0x200, "mailbox");
_Static_assert(CX4_FLD_OFF(CX4_MAILBOX_NEXT_PTR) == CX4_MAILBOX_DATA_SIZE + 0x30, "mailbox ctl");
_Static_assert(CX4_ISEG_SIZE == 0x2010 && CX4_ISEG_HEALTH + CX4_ISEG_HEALTH_SIZE == 0x240,
	       "init segment");
_Static_assert(CX4_EQE_SIZE == 0x40 && CX4_EQE_DATA + CX4_EQE_DATA_LEN == 0x3c, "EQE");
_Static_assert(CX4_QPC_SIZE == 0xe8 && CX4_ADS_SIZE == 0x2c, "qpc");
_Static_assert(CX4_QPC_PRIMARY_ADDRESS_PATH + CX4_ADS_SIZE == CX4_QPC_SECONDARY_ADDRESS_PATH &&
	       CX4_QPC_SECONDARY_ADDRESS_PATH + CX4_ADS_SIZE == 0x70, "address paths");
_Static_assert(CX4_CQC_SIZE == 0x40 && CX4_EQC_SIZE == 0x40 && CX4_MKC_SIZE == 0x40 &&
	       CX4_SRQC_SIZE == 0x40, "contexts");
_Static_assert(CX4_NIC_VPORT_CTX_SIZE == 0x100 && CX4_HCA_VPORT_CTX_SIZE == 0x200 &&
	       CX4_ROCE_ADDR_SIZE == 0x20, "vport/roce contexts");
/* Contexts fit between the command header and the PAS list. */
_Static_assert(CX4_CREATE_QP_IN_QPC + CX4_QPC_SIZE <= CX4_CREATE_QP_IN_PAS, "create_qp");
_Static_assert(CX4_MODIFY_QP_IN_QPC + CX4_QPC_SIZE <= CX4_MODIFY_QP_IN_SIZE, "modify_qp");
_Static_assert(CX4_QUERY_QP_OUT_QPC + CX4_QPC_SIZE <= CX4_QUERY_QP_OUT_PAS, "query_qp");
_Static_assert(CX4_CREATE_CQ_IN_CQC + CX4_CQC_SIZE <= CX4_CREATE_CQ_IN_PAS, "create_cq");
_Static_assert(CX4_CREATE_EQ_IN_EQC + CX4_EQC_SIZE <= CX4_FLD_OFF(CX4_CREATE_EQ_IN_EVENT_BITMASK),
	       "create_eq");
_Static_assert(CX4_CREATE_MKEY_IN_MKC + CX4_MKC_SIZE <=
	       CX4_FLD_OFF(CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE), "create_mkey");
_Static_assert(CX4_CREATE_SRQ_IN_SRQC + CX4_SRQC_SIZE <= CX4_CREATE_SRQ_IN_PAS, "create_srq");
_Static_assert(CX4_QUERY_NIC_VPORT_CONTEXT_OUT_CTX + CX4_NIC_VPORT_CTX_SIZE ==
	       CX4_QUERY_NIC_VPORT_CONTEXT_OUT_SIZE, "query_nic_vport_context");
_Static_assert(CX4_MODIFY_NIC_VPORT_CONTEXT_IN_CTX + CX4_NIC_VPORT_CTX_SIZE ==
	       CX4_MODIFY_NIC_VPORT_CONTEXT_IN_SIZE, "modify_nic_vport_context");
_Static_assert(CX4_QUERY_HCA_VPORT_CONTEXT_OUT_CTX + CX4_HCA_VPORT_CTX_SIZE ==
	       CX4_QUERY_HCA_VPORT_CONTEXT_OUT_SIZE, "query_hca_vport_context");
_Static_assert(CX4_SET_ROCE_ADDRESS_IN_ADDR + CX4_ROCE_ADDR_SIZE == CX4_SET_ROCE_ADDRESS_IN_SIZE &&
	       CX4_QUERY_ROCE_ADDRESS_OUT_ADDR + CX4_ROCE_ADDR_SIZE ==
	       CX4_QUERY_ROCE_ADDRESS_OUT_SIZE, "roce address");
_Static_assert(CX4_QUERY_HCA_CAP_OUT_CAPABILITY + CX4_HCA_CAP_SIZE == CX4_QUERY_HCA_CAP_OUT_SIZE &&
	       CX4_SET_HCA_CAP_IN_CAPABILITY + CX4_HCA_CAP_SIZE == CX4_SET_HCA_CAP_IN_SIZE, "caps");
_Static_assert(CX4_ADAPTER_PSID_OFF + CX4_ADAPTER_PSID_LEN == 0x100 &&
	       CX4_QUERY_ADAPTER_OUT_STRUCT + 0x100 == CX4_QUERY_ADAPTER_OUT_SIZE, "query_adapter");
_Static_assert(CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_OFF + CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_LEN ==
	       CX4_QUERY_ISSI_OUT_SIZE &&
	       CX4_FLD_OFF(CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_DW0) + 4 == CX4_QUERY_ISSI_OUT_SIZE,
	       "query_issi");
/* Byte positions the PRM/Linux give as bytes (health.synd at 0x23D, token 0x3C, owner 0x3F). */
_Static_assert(CX4_FLD_OFF(CX4_ISEG_HEALTH_SYND) + 3 - CX4_FLD_SHIFT(CX4_ISEG_HEALTH_SYND) / 8 ==
	       0x23d, "health syndrome byte");
_Static_assert(CX4_FLD_OFF(CX4_CMD_TOKEN) + 3 - CX4_FLD_SHIFT(CX4_CMD_TOKEN) / 8 == 0x3c, "token");
_Static_assert(CX4_FLD_OFF(CX4_MAILBOX_TOKEN) + 3 - CX4_FLD_SHIFT(CX4_MAILBOX_TOKEN) / 8 == 0x23d,
	       "mailbox token");
_Static_assert(CX4_FLD_OFF(CX4_EQE_OWNER) + 3 == CX4_EQE_OWNER_BYTE, "EQE owner");
_Static_assert(CX4_FLD_OFF(CX4_ISEG_HEALTH_COUNTER) == 0x1010 && CX4_FLD_OFF(CX4_ISEG_CLR_INTX) ==
	       0x200c && CX4_FLD_OFF(CX4_ISEG_INITIALIZING) == 0x1fc, "init segment offsets");

/* Constants that also exist in rdma-core's mlx5dv.h (Debian libibverbs-dev 44). */
_Static_assert(CX4_UAR_CQ_DOORBELL == MLX5_CQ_DOORBELL, "CQ doorbell offset");
_Static_assert(CX4_CQ_DB_REQ_NOT_SOL == MLX5_CQ_DB_REQ_NOT_SOL &&
	       CX4_CQ_DB_REQ_NOT == MLX5_CQ_DB_REQ_NOT, "CQ arm commands");
_Static_assert(CX4_EQE_SIZE == sizeof(struct mlx5_cqe64), "64-byte queue entries");
/* The UMR WQE: [qp] descriptors against [dv] structures and flags (byte 0 of the control
 * segment is bits 31..24 of its first big-endian dword). */
_Static_assert(CX4_UMR_CTRL_SIZE == sizeof(struct mlx5_wqe_umr_ctrl_seg) &&
	       CX4_UMR_MKEY_SEG_SIZE == sizeof(struct mlx5_wqe_mkey_context_seg) &&
	       CX4_KLM_SIZE == sizeof(struct mlx5_wqe_umr_klm_seg), "UMR segment sizes");
_Static_assert(1u << (CX4_FLD_SHIFT(CX4_UMR_CTRL_INLINE) - 24) == MLX5_WQE_UMR_CTRL_FLAG_INLINE &&
	       CX4_UMR_CHECK_FAIL_IF_NOT_FREE << (CX4_FLD_SHIFT(CX4_UMR_CTRL_CHECK_FREE_STATE) - 24) ==
		       MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE &&
	       1u << (CX4_FLD_SHIFT(CX4_UMR_CTRL_TRANSLATION_OFFSET_EN) - 24) ==
		       MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET &&
	       1u << (CX4_FLD_SHIFT(CX4_UMR_CTRL_CHECK_QPN) - 24) == MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN,
	       "UMR control flags");
_Static_assert(CX4_FLD_OFF(CX4_UMR_CTRL_XLT_OCTOWORDS) ==
		       offsetof(struct mlx5_wqe_umr_ctrl_seg, klm_octowords) &&
	       CX4_FLD_OFF(CX4_UMR_CTRL_MKEY_MASK) == offsetof(struct mlx5_wqe_umr_ctrl_seg, mkey_mask) &&
	       CX4_FLD_OFF(CX4_KLM_MKEY) == offsetof(struct mlx5_wqe_umr_klm_seg, mkey) &&
	       CX4_FLD_OFF(CX4_KLM_ADDRESS) == offsetof(struct mlx5_wqe_umr_klm_seg, address),
	       "UMR segment fields");
_Static_assert(CX4_UMR_MKEY_MASK_LEN == MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN &&
	       CX4_UMR_MKEY_MASK_START_ADDR == MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR &&
	       CX4_UMR_MKEY_MASK_KEY == MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY &&
	       CX4_UMR_MKEY_MASK_QPN == MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN &&
	       CX4_UMR_MKEY_MASK_LW == MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE &&
	       CX4_UMR_MKEY_MASK_RR == MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ &&
	       CX4_UMR_MKEY_MASK_RW == MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE &&
	       CX4_UMR_MKEY_MASK_A == MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC &&
	       CX4_UMR_MKEY_MASK_FREE == MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE, "UMR mkey mask");
/* The mkey context segment is the mkc: the [dv] bytes the provider writes are mkc fields. */
_Static_assert(CX4_FLD_OFF(CX4_MKC_FREE) == offsetof(struct mlx5_wqe_mkey_context_seg, free) &&
	       CX4_FLD_SHIFT(CX4_MKC_FREE) - 24 == 6 /* MLX5_WQE_MKEY_CONTEXT_FREE */ &&
	       CX4_FLD_SHIFT(CX4_MKC_A) - 8 == 6 && CX4_FLD_SHIFT(CX4_MKC_RW) - 8 == 5 &&
	       CX4_FLD_SHIFT(CX4_MKC_RR) - 8 == 4 && CX4_FLD_SHIFT(CX4_MKC_LW) - 8 == 3 &&
	       CX4_FLD_SHIFT(CX4_MKC_LR) - 8 == 2 /* access_flags is byte 2 */ &&
	       CX4_FLD_OFF(CX4_MKC_QPN) == offsetof(struct mlx5_wqe_mkey_context_seg, qpn_mkey) &&
	       CX4_FLD_OFF(CX4_MKC_PD) == offsetof(struct mlx5_wqe_mkey_context_seg, flags_pd) &&
	       CX4_FLD_OFF(CX4_MKC_START_ADDR) ==
		       offsetof(struct mlx5_wqe_mkey_context_seg, start_addr) &&
	       CX4_FLD_OFF(CX4_MKC_LEN) == offsetof(struct mlx5_wqe_mkey_context_seg, len),
	       "mkey context segment = mkc");
_Static_assert(offsetof(struct mlx5_cqe64, op_own) == 0x3f && MLX5_SEND_WQE_BB == 64,
	       "data-path layouts come from mlx5dv.h");

/* Values the [trace] shows directly. */
_Static_assert(CX4_ASYNC_EVENT_MASK_LINUX44 == 0x1f02be, "async EQ mask of the trace");
_Static_assert(CX4_HCA_CAP_OPMOD(CX4_CAP_ROCE, CX4_HCA_CAP_OPMOD_CUR) == 9 &&
	       CX4_HCA_CAP_OPMOD(CX4_CAP_FLOW_TABLE, CX4_HCA_CAP_OPMOD_MAX) == 0xe, "cap op_mod");

/* ---- 2. Every descriptor ------------------------------------------------------------------ */

struct fld_info {
	const char *name;
	cx4_fld_t f;
};

struct fld_group {
	const char *name;
	size_t size;
	const struct fld_info *flds;
	size_t n;
};

#define FLD_ENTRY(f, S) { #f, f },
#define DEFINE_GROUP(list, size) static const struct fld_info list##_tbl[] = { list(FLD_ENTRY, 0) };
ALL_GROUPS(DEFINE_GROUP)
#define GROUP_ENTRY(list, size)						\
	{ #list, size, list##_tbl, sizeof(list##_tbl) / sizeof(list##_tbl[0]) },
static const struct fld_group groups[] = { ALL_GROUPS(GROUP_ENTRY) };

/* A descriptor that names a whole dword whose parts have descriptors of their own. */
static bool is_alias(cx4_fld_t f)
{
	return f == CX4_ISEG_CMDQ_ADDR_L_SZ;
}

/* EQE event data is a union: fields of different event types share bytes 0x20..0x3B. */
static bool in_eqe_union(const char *group, cx4_fld_t f)
{
	return !strcmp(group, "FLDS_EQE") && CX4_FLD_OFF(f) >= CX4_EQE_DATA &&
	       CX4_FLD_OFF(f) < CX4_EQE_DATA + CX4_EQE_DATA_LEN;
}

/* Bit range of a field counted from the start of the structure, PRM style (bit 0 = MSB). */
static void bit_range(cx4_fld_t f, size_t *first, size_t *last)
{
	size_t w = CX4_FLD_WIDTH(f);

	if (w == 64) {
		*first = CX4_FLD_OFF(f) * 8;
		*last = *first + 63;
		return;
	}
	*first = CX4_FLD_OFF(f) * 8 + (32 - CX4_FLD_SHIFT(f) - w);
	*last = *first + w - 1;
}

static void check_group_shapes(void)
{
	size_t g, i, j, total = 0;

	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		const struct fld_group *gr = &groups[g];
		size_t nl = strlen(gr->name);
		bool cmd = nl > 3 && (!strcmp(gr->name + nl - 3, "_IN") ||
				      !strcmp(gr->name + nl - 4, "_OUT"));

		for (i = 0; i < gr->n; i++) {
			size_t a0, a1;

			total++;
			bit_range(gr->flds[i].f, &a0, &a1);
			/* command-specific fields leave the opcode/op_mod/status header alone */
			if (cmd && strcmp(gr->name, "FLDS_HDR_IN") &&
			    strcmp(gr->name, "FLDS_HDR_OUT"))
				CHECK(CX4_FLD_OFF(gr->flds[i].f) >= 8, "%s", gr->flds[i].name);
			for (j = i + 1; j < gr->n; j++) {
				size_t b0, b1;

				if (is_alias(gr->flds[i].f) || is_alias(gr->flds[j].f))
					continue;
				if (in_eqe_union(gr->name, gr->flds[i].f) &&
				    in_eqe_union(gr->name, gr->flds[j].f))
					continue;
				bit_range(gr->flds[j].f, &b0, &b1);
				CHECK(a1 < b0 || b1 < a0, "%s overlaps %s", gr->flds[i].name,
				      gr->flds[j].name);
			}
		}
	}
	CHECK(total > 500, "only %zu descriptors enumerated", total);
}

/* Reference accessors: one bit at a time, no word loads (independent of cx4_get/cx4_set). */
static uint64_t ref_get(const uint8_t *buf, cx4_fld_t f)
{
	size_t first, last, b;
	uint64_t v = 0;

	bit_range(f, &first, &last);
	for (b = first; b <= last; b++)
		v = v << 1 | ((buf[b / 8] >> (7 - b % 8)) & 1);
	return v;
}

static void ref_set(uint8_t *buf, cx4_fld_t f, uint64_t v)
{
	size_t first, last, b;

	bit_range(f, &first, &last);
	for (b = last + 1; b-- > first; v >>= 1) {
		if (v & 1)
			buf[b / 8] |= (uint8_t)(1u << (7 - b % 8));
		else
			buf[b / 8] &= (uint8_t)~(1u << (7 - b % 8));
	}
}

static uint64_t rnd64(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	static uint64_t s = 0x9e3779b97f4a7c15ull;

	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return s * 0x2545f4914f6cdd1dull;
}

static void check_round_trips(void)
{
	enum { BUF = 0x2100 };
	static uint8_t buf[BUF], want[BUF];
	size_t g, i, k, n = 0;

	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		for (i = 0; i < groups[g].n; i++) {
			cx4_fld_t f = groups[g].flds[i].f;
			const char *name = groups[g].flds[i].name;
			uint64_t max = CX4_FLD_MAX(f);

			for (k = 0; k < 6; k++) {
				uint64_t v = k == 0 ? 0 : k == 1 ? max : rnd64() & max;
				size_t j;

				for (j = 0; j < BUF; j++)
					buf[j] = (uint8_t)rnd64();
				memcpy(want, buf, BUF);
				ref_set(want, f, v);
				if (CX4_FLD_WIDTH(f) == 64) {
					cx4_set64(buf, f, v);
					CHECK(cx4_get64(buf, f) == v, "%s get64", name);
				} else {
					cx4_set(buf, f, (uint32_t)v);
					CHECK(cx4_get(buf, f) == v, "%s get", name);
				}
				CHECK(ref_get(buf, f) == v, "%s ref_get", name);
				CHECK(!memcmp(buf, want, BUF), "%s disturbed other bits", name);
				n++;
			}
			/* values wider than the field are cut (as MLX5_SET) and cx4_fits says no */
			if (CX4_FLD_WIDTH(f) < 32) {
				memset(buf, 0, 16 + CX4_FLD_END(f));
				cx4_set(buf, f, 0xffffffffu);
				CHECK(cx4_get(buf, f) == max, "%s truncation", name);
				CHECK(!cx4_fits(f, max + 1) && cx4_fits(f, max), "%s fits", name);
				CHECK(ref_get(buf, f) == max, "%s truncation ref", name);
			}
		}
	}
	CHECK(n > 3000, "only %zu round trips", n);
}

/* Descriptors re-based into commands land where the commands' tables say. */
static void check_rebasing(void)
{
	CHECK_EQ(CX4_FLD_OFF(CX4_AT(CX4_CREATE_QP_IN_QPC, CX4_QPC_STATE)), 0x18);
	CHECK_EQ(CX4_FLD_OFF(CX4_AT(CX4_CREATE_QP_IN_QPC, CX4_QPC_DBR_ADDR)), 0xb8);
	CHECK_EQ(CX4_FLD_OFF(CX4_AT(CX4_MODIFY_QP_IN_QPC, CX4_QPC_PRI(CX4_ADS_UDP_SPORT))), 0x50);
	CHECK_EQ(CX4_FLD_OFF(CX4_AT(CX4_CREATE_CQ_IN_CQC, CX4_CQC_DBR_ADDR)), 0x48);
	CHECK_EQ(CX4_FLD_OFF(CX4_AT(CX4_CREATE_EQ_IN_EQC, CX4_EQC_INTR)), 0x24);
	CHECK_EQ(CX4_FLD_OFF(CX4_AT(CX4_MODIFY_NIC_VPORT_CONTEXT_IN_CTX, CX4_NIC_VPORT_MTU)),
		 0x124);
	CHECK_EQ(CX4_FLD_SHIFT(CX4_AT(0x100, CX4_QPC_MTU)), 29);
	CHECK_EQ(CX4_FLD_WIDTH(CX4_AT(0x100, CX4_MKC_LEN)), 64);
	CHECK_EQ(cx4_cmd_mailbox_count(0x10), 0);
	CHECK_EQ(cx4_cmd_mailbox_count(0x11), 1);
	CHECK_EQ(cx4_cmd_mailbox_count(0x210), 1);
	CHECK_EQ(cx4_cmd_mailbox_count(0x211), 2);
	CHECK_EQ(cx4_cmd_mailbox_count(0x1010), 8);
	/* the trace's 12868-page MANAGE_PAGES: 202 blocks (research/cx4.md 1.8 says 201) */
	CHECK_EQ(cx4_cmd_mailbox_count(0x19230), 202);
}

/* ---- 3. Real commands from the Linux trace ----------------------------------------------- */

/* A non-zero big-endian dword of a trace message: byte offset, value. */
struct dw {
	uint16_t off;
	uint32_t val;
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void load(uint8_t *buf, size_t len, const struct dw *v, size_t n)
{
	size_t i;

	memset(buf, 0, len);
	for (i = 0; i < n; i++)
		cx4_be32_store(buf + v[i].off, v[i].val);
}

/* Trace command 6 (token 0x07): QUERY_HCA_CAP general, op_mod 0 = maximum; capability page. */
static const struct dw cap_gen_max[] = {
	{ 0x010, 0x0f0f0017 }, { 0x014, 0x00170000 }, { 0x018, 0x00160018 }, { 0x01c, 0x16180008 },
	{ 0x020, 0x04401010 }, { 0x024, 0x00040004 }, { 0x028, 0x00040004 }, { 0x02c, 0xe0000004 },
	{ 0x030, 0x40ff0005 }, { 0x034, 0xc7100101 }, { 0x038, 0x1e000000 }, { 0x03c, 0x00010001 },
	{ 0x040, 0xc006cc0e }, { 0x044, 0xe2fa030f }, { 0x048, 0x0005000c }, { 0x04c, 0xa0090000 },
	{ 0x050, 0x00000400 }, { 0x054, 0x00000200 }, { 0x058, 0x00000100 }, { 0x05c, 0x00000030 },
	{ 0x060, 0x00000015 }, { 0x064, 0x10180018 }, { 0x06c, 0x17171717 }, { 0x070, 0x97100900 },
	{ 0x074, 0x09040606 }, { 0x078, 0x0000000f }, { 0x07c, 0x800c0e0a }, { 0x090, 0x10000008 },
	{ 0x098, 0x00000113 }, { 0x0b4, 0x00000001 }, { 0x0b8, 0x00080010 },
};

/* Trace command 7 (token 0x08): QUERY_HCA_CAP general, op_mod 1 = current. */
static const struct dw cap_gen_cur[] = {
	{ 0x010, 0x0f0f000e }, { 0x014, 0x00170000 }, { 0x018, 0x00160018 }, { 0x01c, 0x16180008 },
	{ 0x020, 0x04401010 }, { 0x024, 0x00040004 }, { 0x028, 0x00040004 }, { 0x02c, 0xe0000000 },
	{ 0x030, 0x40ff0000 }, { 0x034, 0xc7100101 }, { 0x038, 0x1e000000 }, { 0x03c, 0x00010001 },
	{ 0x040, 0xc0060c0e }, { 0x044, 0xe2fa030f }, { 0x048, 0x0005000c }, { 0x04c, 0xa0090000 },
	{ 0x050, 0x00000400 }, { 0x054, 0x00000200 }, { 0x058, 0x00000100 }, { 0x05c, 0x00000030 },
	{ 0x060, 0x00000015 }, { 0x064, 0x10180018 }, { 0x06c, 0x17171717 }, { 0x070, 0x97100900 },
	{ 0x074, 0x09040606 }, { 0x078, 0x0000000f }, { 0x07c, 0x800c0e0a }, { 0x090, 0x10000000 },
	{ 0x098, 0x00000113 }, { 0x0b4, 0x00000001 }, { 0x0b8, 0x00080010 },
};

/* Trace command 8 (token 0x09): SET_HCA_CAP general, the capability page written. */
static const struct dw cap_gen_set[] = {
	{ 0x010, 0x0f0f0011 }, { 0x014, 0x00170000 }, { 0x018, 0x00160018 }, { 0x01c, 0x16180008 },
	{ 0x020, 0x04401010 }, { 0x024, 0x00040004 }, { 0x028, 0x00040004 }, { 0x02c, 0xe0000000 },
	{ 0x030, 0x40ff0000 }, { 0x034, 0xc7100101 }, { 0x038, 0x1e000000 }, { 0x03c, 0x00010001 },
	{ 0x040, 0xc0060c0e }, { 0x044, 0xe2fa030f }, { 0x048, 0x0005000c }, { 0x04c, 0xa0090000 },
	{ 0x050, 0x00000400 }, { 0x054, 0x00000200 }, { 0x058, 0x00000100 }, { 0x05c, 0x00000030 },
	{ 0x060, 0x00000015 }, { 0x064, 0x10180018 }, { 0x06c, 0x17171717 }, { 0x070, 0x97100900 },
	{ 0x074, 0x09040606 }, { 0x078, 0x0000000f }, { 0x07c, 0x800c0e0a }, { 0x090, 0x10000000 },
	{ 0x098, 0x00000113 }, { 0x0b4, 0x00000001 }, { 0x0b8, 0x00080010 },
};

/* Trace command 16 (token 0x11): QUERY_HCA_CAP op_mod 7 = atomic, current. */
static const struct dw cap_atomic_cur[] = {
	{ 0x010, 0x0000000f }, { 0x014, 0x0000003c }, { 0x018, 0x0000003c },
};

/* Trace command 18 (token 0x13): QUERY_HCA_CAP op_mod 9 = RoCE, current. */
static const struct dw cap_roce_cur[] = {
	{ 0x000, 0x40000000 }, { 0x010, 0x00070007 }, { 0x014, 0x000012b7 }, { 0x018, 0xffffc000 },
	{ 0x01c, 0x00000100 },
};

/* Trace commands 27-30: CREATE_EQ input messages (0x118 bytes: 0x110 + one PAS). */
static const struct dw create_eq_cmd[] = {	/* the command EQ */
	{ 0x000, 0x03010000 }, { 0x01c, 0x08000010 }, { 0x024, 0x00000001 }, { 0x028, 0x02000000 },
	{ 0x05c, 0x00000400 }, { 0x110, 0x00000007 }, { 0x114, 0xac80c000 },
};
static const struct dw create_eq_async[] = {
	{ 0x000, 0x03010000 }, { 0x01c, 0x09000010 }, { 0x024, 0x00000002 }, { 0x028, 0x03000000 },
	{ 0x05c, 0x001f02be }, { 0x110, 0x00000007 }, { 0x114, 0xa8318000 },
};
static const struct dw create_eq_pages[] = {
	{ 0x000, 0x03010000 }, { 0x01c, 0x08000010 }, { 0x028, 0x02000000 }, { 0x05c, 0x00000800 },
	{ 0x110, 0x00000007 }, { 0x114, 0xaf3fc000 },
};
static const struct dw create_eq_comp0[] = {	/* first of the 12 completion EQs */
	{ 0x000, 0x03010000 }, { 0x01c, 0x0b000010 }, { 0x024, 0x00000003 }, { 0x028, 0x05000000 },
	{ 0x110, 0x00000007 }, { 0x114, 0xa8340000 },
};

/* Trace command 22 (token 0x17): QUERY_ADAPTER output (0x110 bytes). */
static const struct dw query_adapter_out[] = {
	{ 0x028, 0x000002c9 }, { 0x02c, 0x000015b3 }, { 0x100, 0x4d545f32 }, { 0x104, 0x34333031 },
	{ 0x108, 0x31303032 }, { 0x10c, 0x37000000 },
};

/* Trace command 1 (token 0x02): QUERY_ISSI output (0x70 bytes). */
static const struct dw query_issi_out[] = {
	{ 0x06c, 0x00000002 },
};

/* Trace command 10 (token 0x0B): MANAGE_PAGES input, first 0x40 bytes of 0x19230. */
static const struct dw manage_pages_in_head[] = {
	{ 0x000, 0x01080000 }, { 0x004, 0x00000001 }, { 0x00c, 0x00003244 },
	{ 0x010, 0x00000007 }, { 0x014, 0xab122000 }, { 0x018, 0x00000007 }, { 0x01c, 0xab123000 },
	{ 0x020, 0x00000007 }, { 0x024, 0xab124000 }, { 0x028, 0x00000007 }, { 0x02c, 0xab125000 },
	{ 0x030, 0x00000007 }, { 0x034, 0xab126000 }, { 0x038, 0x00000007 }, { 0x03c, 0xab127000 },
};

/* Command queue entries as dumped: trace command 0 (ENABLE_HCA), before and after. */
static const struct dw enable_hca_entry_in[] = {
	{ 0x00, 0x07000000 }, { 0x04, 0x00000010 }, { 0x10, 0x01040000 }, { 0x38, 0x00000010 },
	{ 0x3c, 0x01fd0001 },
};
static const struct dw enable_hca_entry_out[] = {
	{ 0x00, 0x07000000 }, { 0x04, 0x00000010 }, { 0x10, 0x01040000 }, { 0x38, 0x00000010 },
	{ 0x3c, 0x01fd0000 },
};
/* Trace command 9 (token 0x0A): QUERY_PAGES(init) entry after completion. */
static const struct dw query_pages_init_entry_out[] = {
	{ 0x00, 0x07000000 }, { 0x04, 0x00000010 }, { 0x10, 0x01070000 }, { 0x14, 0x00000002 },
	{ 0x2c, 0x00003244 }, { 0x38, 0x00000010 }, { 0x3c, 0x0a810000 },
};

static void check_general_caps(void)
{
	uint8_t max[CX4_HCA_CAP_SIZE], cur[CX4_HCA_CAP_SIZE], set[CX4_HCA_CAP_SIZE];
	size_t i, diff = 0;

	load(max, sizeof(max), cap_gen_max, N(cap_gen_max));
	load(cur, sizeof(cur), cap_gen_cur, N(cap_gen_cur));
	load(set, sizeof(set), cap_gen_set, N(cap_gen_set));

	/* research/cx4.md 2.11, "cur unless noted" */
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_SRQ_SZ), 0xf);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_QP_SZ), 0xf);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_QP), 0xe);
	CHECK_EQ(cx4_get(max, CX4_CAP_GEN_LOG_MAX_QP), 0x17);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_SRQ), 0x17);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_CQ_SZ), 0x16);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_CQ), 0x18);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_EQ_SZ), 0x16);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_MKEY), 0x18);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_EQ), 8);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_MAX_INDIRECTION), 4);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_MRW_SZ), 0x40);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_KLM_LIST_SIZE), 0x10);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_RA_REQ_QP), 4);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_RA_RES_QP), 4);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_END_PAD), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_GID_TABLE_SIZE), 0);
	CHECK_EQ(cx4_get(max, CX4_CAP_GEN_GID_TABLE_SIZE), 4);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_PKEY_TABLE_SIZE), 0);
	CHECK_EQ(cx4_get(max, CX4_CAP_GEN_PKEY_TABLE_SIZE), 5);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_VPORT_COUNTERS), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOCAL_CA_ACK_DELAY), 0x10);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_PORT_TYPE), CX4_CAP_PORT_TYPE_ETH);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_NUM_PORTS), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_MSG), 0x1e);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_CQE_VERSION), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_CMDIF_CHECKSUM), 0);
	CHECK_EQ(cx4_get(max, CX4_CAP_GEN_CMDIF_CHECKSUM), 3);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_WQ_SIGNATURE), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_ROCE), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_ATOMIC), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_ETH_NET_OFFLOADS), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_CQ_OI), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_CQ_RESIZE), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_CQ_MODERATION), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_CQ_EQ_REMAP), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_RC), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_UC), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_UD), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_XRC), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_UAR_SZ), 5);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_PG_SZ), 0xc);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_BF), 1);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_BF_REG_SIZE), 9);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_MAX_WQE_SZ_SQ), 0x400);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_MAX_WQE_SZ_RQ), 0x200);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_MAX_QP_MCG), 0x30);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_PD), 0x18);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_TRANSPORT_DOMAIN), 0x10);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_RQ), 0x17);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_SQ), 0x17);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_TIR), 0x17);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_TIS), 0x17);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_RMP), 0x17);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_MAX_WQ_SZ), 0xf);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_LOG_UAR_PAGE_SZ), 0);
	CHECK_EQ(cx4_get(max, CX4_CAP_GEN_LOG_UAR_PAGE_SZ), 8);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_DEVICE_FREQUENCY_MHZ), 0x113);
	CHECK_EQ(cx4_get(cur, CX4_CAP_GEN_CQE_COMPRESSION), 1);

	/* SET_HCA_CAP wrote back "cur" with one change: log_max_qp 0xE -> 0x11 (trace, note 1.8) */
	CHECK_EQ(cx4_get(set, CX4_CAP_GEN_LOG_MAX_QP), 0x11);
	cx4_set(set, CX4_CAP_GEN_LOG_MAX_QP, cx4_get(cur, CX4_CAP_GEN_LOG_MAX_QP));
	for (i = 0; i < sizeof(set); i++)
		diff += set[i] != cur[i];
	CHECK(diff == 0, "SET_HCA_CAP differs from cur in %zu more bytes", diff);
}

static void check_other_caps(void)
{
	uint8_t roce[CX4_HCA_CAP_SIZE], atomic[CX4_HCA_CAP_SIZE];

	load(roce, sizeof(roce), cap_roce_cur, N(cap_roce_cur));
	load(atomic, sizeof(atomic), cap_atomic_cur, N(cap_atomic_cur));

	CHECK_EQ(cx4_get(roce, CX4_CAP_ROCE_L3_TYPE), 7);
	CHECK_EQ(cx4_get(roce, CX4_CAP_ROCE_ROCE_VERSION), 7);	/* v1 | v1.5 | v2 */
	CHECK_EQ(cx4_get(roce, CX4_CAP_ROCE_R_ROCE_DEST_UDP_PORT), 4791);
	CHECK_EQ(cx4_get(roce, CX4_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT), 0xc000);
	CHECK_EQ(cx4_get(roce, CX4_CAP_ROCE_R_ROCE_MAX_SRC_UDP_PORT), 0xffff);
	CHECK_EQ(cx4_get(roce, CX4_CAP_ROCE_ADDRESS_TABLE_SIZE), 256);
	CHECK_EQ(cx4_get(roce, CX4_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT), 0);
	CHECK_EQ(cx4_get(roce, CX4_CAP_ROCE_ROCE_APM), 0);

	CHECK_EQ(cx4_get(atomic, CX4_CAP_ATOMIC_OPERATIONS),
		 CX4_ATOMIC_OPS_CMP_SWAP | CX4_ATOMIC_OPS_FETCH_ADD |
		 CX4_ATOMIC_OPS_MASKED_CMP_SWAP | CX4_ATOMIC_OPS_MASKED_FETCH_ADD);
	CHECK_EQ(cx4_get(atomic, CX4_CAP_ATOMIC_SIZE_QP), 0x3c);
	CHECK_EQ(cx4_get(atomic, CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE), 0);
	CHECK_EQ(cx4_get(atomic, CX4_CAP_ATOMIC_SUPPORTED_8B_ENDIANNESS_MODE_1), 0);
}

static void check_create_eq(void)
{
	uint8_t in[0x118];
	const cx4_fld_t log_sz = CX4_AT(CX4_CREATE_EQ_IN_EQC, CX4_EQC_LOG_EQ_SIZE);
	const cx4_fld_t uar = CX4_AT(CX4_CREATE_EQ_IN_EQC, CX4_EQC_UAR_PAGE);
	const cx4_fld_t intr = CX4_AT(CX4_CREATE_EQ_IN_EQC, CX4_EQC_INTR);
	const cx4_fld_t log_pg = CX4_AT(CX4_CREATE_EQ_IN_EQC, CX4_EQC_LOG_PAGE_SIZE);

	load(in, sizeof(in), create_eq_cmd, N(create_eq_cmd));
	CHECK_EQ(cx4_get(in, CX4_CMD_IN_OPCODE), CX4_CMD_OP_CREATE_EQ);
	CHECK_EQ(cx4_get(in, CX4_CMD_IN_OP_MOD), 0);
	CHECK_EQ(cx4_get(in, log_sz), 8);
	CHECK_EQ(cx4_get(in, uar), 0x10);
	CHECK_EQ(cx4_get(in, intr), 1);		/* Linux MLX5_EQ_VEC_CMD */
	CHECK_EQ(cx4_get(in, log_pg), 2);	/* 256 EQEs x 64 B = 16 KB = 4 KB << 2 */
	CHECK_EQ(cx4_get64(in, CX4_CREATE_EQ_IN_EVENT_BITMASK), CX4_EVENT_BIT(CX4_EVENT_TYPE_CMD));
	CHECK_EQ(cx4_pas_get(in, CX4_CREATE_EQ_IN_PAS, 0), 0x7ac80c000ull);
	CHECK_EQ(cx4_get(in, CX4_AT(CX4_CREATE_EQ_IN_EQC, CX4_EQC_OI)), 0);
	CHECK_EQ(cx4_get(in, CX4_AT(CX4_CREATE_EQ_IN_EQC, CX4_EQC_PAGE_OFFSET)), 0);

	load(in, sizeof(in), create_eq_async, N(create_eq_async));
	CHECK_EQ(cx4_get(in, log_sz), 9);
	CHECK_EQ(cx4_get(in, intr), 2);		/* MLX5_EQ_VEC_ASYNC */
	CHECK_EQ(cx4_get(in, log_pg), 3);
	CHECK_EQ(cx4_get64(in, CX4_CREATE_EQ_IN_EVENT_BITMASK), CX4_ASYNC_EVENT_MASK_LINUX44);
	CHECK(cx4_get64(in, CX4_CREATE_EQ_IN_EVENT_BITMASK) &
	      CX4_EVENT_BIT(CX4_EVENT_TYPE_PORT_CHANGE), "async EQ gets port events");

	load(in, sizeof(in), create_eq_pages, N(create_eq_pages));
	CHECK_EQ(cx4_get(in, intr), 0);		/* MLX5_EQ_VEC_PAGES */
	CHECK_EQ(cx4_get64(in, CX4_CREATE_EQ_IN_EVENT_BITMASK),
		 CX4_EVENT_BIT(CX4_EVENT_TYPE_PAGE_REQUEST));

	load(in, sizeof(in), create_eq_comp0, N(create_eq_comp0));
	CHECK_EQ(cx4_get(in, log_sz), 11);
	CHECK_EQ(cx4_get(in, log_pg), 5);	/* 2048 x 64 B = 128 KB */
	CHECK_EQ(cx4_get(in, intr), 3);
	/* completion EQs: no async events; completions reach them through cqc.c_eqn */
	CHECK_EQ(cx4_get64(in, CX4_CREATE_EQ_IN_EVENT_BITMASK), 0);
	CHECK_EQ(cx4_pas_get(in, CX4_CREATE_EQ_IN_PAS, 0), 0x7a8340000ull);
}

static void check_small_commands(void)
{
	uint8_t m[0x200];
	unsigned int i;

	/* QUERY_ISSI: current 0, ISSI 0 and 1 supported (dw0 = 0x2: bit 1) */
	load(m, CX4_QUERY_ISSI_OUT_SIZE, query_issi_out, N(query_issi_out));
	CHECK_EQ(cx4_get(m, CX4_CMD_OUT_STATUS), CX4_CMD_STAT_OK);
	CHECK_EQ(cx4_get(m, CX4_QUERY_ISSI_OUT_CURRENT_ISSI), 0);
	CHECK(cx4_get(m, CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_DW0) & (1u << 1), "ISSI 1 supported");

	/* SET_ISSI 1 (trace command 2 input: 010b0000 00000000 00000001 00000000) */
	memset(m, 0, 16);
	cx4_set(m, CX4_CMD_IN_OPCODE, CX4_CMD_OP_SET_ISSI);
	cx4_set(m, CX4_SET_ISSI_IN_CURRENT_ISSI, 1);
	CHECK_EQ(cx4_be32_load(m), 0x010b0000);
	CHECK_EQ(cx4_be32_load(m + 8), 0x00000001);

	/* QUERY_PAGES: boot (op_mod 1) -> 6 pages, init (op_mod 2) -> 0x3244 (12868) pages */
	memset(m, 0, 16);
	cx4_be32_store(m + 0, 0x01070000);
	cx4_be32_store(m + 4, 0x00000001);
	CHECK_EQ(cx4_get(m, CX4_CMD_IN_OPCODE), CX4_CMD_OP_QUERY_PAGES);
	CHECK_EQ(cx4_get(m, CX4_CMD_IN_OP_MOD), CX4_QUERY_PAGES_OPMOD_BOOT);
	CHECK_EQ(cx4_get(m, CX4_QUERY_PAGES_IN_FUNCTION_ID), 0);
	memset(m, 0, 16);
	cx4_be32_store(m + 0xc, 0x00000006);
	CHECK_EQ((int32_t)cx4_get(m, CX4_QUERY_PAGES_OUT_NUM_PAGES), 6);
	cx4_be32_store(m + 0xc, 0x00003244);
	CHECK_EQ((int32_t)cx4_get(m, CX4_QUERY_PAGES_OUT_NUM_PAGES), 12868);
	cx4_set(m, CX4_QUERY_PAGES_OUT_NUM_PAGES, (uint32_t)-5);	/* FW may hand pages back */
	CHECK((int32_t)cx4_get(m, CX4_QUERY_PAGES_OUT_NUM_PAGES) == -5, "signed num_pages");

	/* MANAGE_PAGES give 12868 pages: 0x10 + 8 * 12868 = 0x19230 input bytes (entry inlen) */
	load(m, 0x40, manage_pages_in_head, N(manage_pages_in_head));
	CHECK_EQ(cx4_get(m, CX4_CMD_IN_OPCODE), CX4_CMD_OP_MANAGE_PAGES);
	CHECK_EQ(cx4_get(m, CX4_CMD_IN_OP_MOD), CX4_MANAGE_PAGES_OPMOD_ALLOC_SUCCESS);
	CHECK_EQ(cx4_get(m, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES), 12868);
	CHECK_EQ(CX4_MANAGE_PAGES_IN_SIZE + 8 * cx4_get(m, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES),
		 0x19230);
	for (i = 0; i < 6; i++)
		CHECK_EQ(cx4_pas_get(m, CX4_MANAGE_PAGES_IN_PAS, i), 0x7ab122000ull + 0x1000 * i);

	/* ALLOC_UAR x4 -> UAR pages 0x10..0x13 (first allocatable UAR on this FW is 16) */
	for (i = 0; i < 4; i++) {
		memset(m, 0, 16);
		cx4_be32_store(m + 8, 0x10 + i);
		CHECK_EQ(cx4_get(m, CX4_ALLOC_UAR_OUT_UAR), 0x10 + i);
	}

	/* ACCESS_REG write of HOST_ENDIANNESS: 08050000 00000000 00007004 00000000 */
	memset(m, 0, 16);
	cx4_be32_store(m + 0, 0x08050000);
	cx4_be32_store(m + 8, 0x00007004);
	CHECK_EQ(cx4_get(m, CX4_CMD_IN_OPCODE), CX4_CMD_OP_ACCESS_REG);
	CHECK_EQ(cx4_get(m, CX4_CMD_IN_OP_MOD), CX4_ACCESS_REG_OPMOD_WRITE);
	CHECK_EQ(cx4_get(m, CX4_ACCESS_REG_IN_REGISTER_ID), CX4_REG_HOST_ENDIANNESS);

	/* QUERY_ADAPTER: vendor IDs and the board PSID */
	load(m, CX4_QUERY_ADAPTER_OUT_SIZE, query_adapter_out, N(query_adapter_out));
	{
		const uint8_t *qa = m + CX4_QUERY_ADAPTER_OUT_STRUCT;
		char psid[CX4_ADAPTER_PSID_LEN + 1] = { 0 };

		CHECK_EQ(cx4_get(qa, CX4_ADAPTER_IEEE_VENDOR_ID), 0x0002c9);
		CHECK_EQ(cx4_get(qa, CX4_ADAPTER_VSD_VENDOR_ID), CX4_PCI_VENDOR_MELLANOX);
		cx4_get_bytes(qa, CX4_ADAPTER_PSID_OFF, psid, CX4_ADAPTER_PSID_LEN);
		CHECK(!strcmp(psid, "MT_2430110027"), "PSID '%s'", psid);
	}
}

static void check_entries(void)
{
	uint8_t e[CX4_CMDQ_ENTRY_SIZE], o[CX4_CMDQ_ENTRY_SIZE];

	load(e, sizeof(e), enable_hca_entry_in, N(enable_hca_entry_in));
	load(o, sizeof(o), enable_hca_entry_out, N(enable_hca_entry_out));
	CHECK_EQ(cx4_get(e, CX4_CMD_TYPE), CX4_CMD_TYPE_PCIE);
	CHECK_EQ(cx4_get(e, CX4_CMD_INPUT_LENGTH), 0x10);
	CHECK_EQ(cx4_get(e, CX4_CMD_OUTPUT_LENGTH), 0x10);
	CHECK_EQ(cx4_get64(e, CX4_CMD_INPUT_MAILBOX_PTR), 0);
	CHECK_EQ(cx4_get(e + CX4_CMD_INPUT_INLINE, CX4_CMD_IN_OPCODE), CX4_CMD_OP_ENABLE_HCA);
	CHECK_EQ(cx4_get(e, CX4_CMD_TOKEN), 1);
	CHECK_EQ(cx4_get(e, CX4_CMD_SIGNATURE), 0xfd);
	CHECK_EQ(cx4_get(e, CX4_CMD_OWNERSHIP), CX4_CMD_OWNER_HW);
	CHECK_EQ(cx4_xor8(e, sizeof(e)), 0xff);		/* a signed entry XORs to 0xFF */
	CHECK_EQ(cx4_get(o, CX4_CMD_OWNERSHIP), CX4_CMD_OWNER_SW);
	CHECK_EQ(cx4_get(o, CX4_CMD_STATUS), CX4_CMD_DELIVERY_OK);
	CHECK_EQ(cx4_get(o + CX4_CMD_OUTPUT_INLINE, CX4_CMD_OUT_STATUS), CX4_CMD_STAT_OK);

	/* the FW re-signed this output: XOR over it is 0xFF with ownership counted as 1 */
	load(o, sizeof(o), query_pages_init_entry_out, N(query_pages_init_entry_out));
	CHECK_EQ((int32_t)cx4_get(o + CX4_CMD_OUTPUT_INLINE, CX4_QUERY_PAGES_OUT_NUM_PAGES), 12868);
	CHECK_EQ(cx4_get(o, CX4_CMD_SIGNATURE), 0x81);
	CHECK_EQ(cx4_xor8(o, sizeof(o)) ^ CX4_CMD_OWNER_HW, 0xff);
}

static void check_eqe_and_qp_helpers(void)
{
	uint8_t eqe[CX4_EQE_SIZE] = { 0 };

	/* software initialises owner = 1; HW's first pass writes 0 */
	cx4_set(eqe, CX4_EQE_OWNER, 1);
	CHECK(!cx4_eqe_sw_owned(eqe, 0, 8), "fresh EQE not valid");
	cx4_set(eqe, CX4_EQE_OWNER, 0);
	CHECK(cx4_eqe_sw_owned(eqe, 5, 8), "first pass");
	CHECK(!cx4_eqe_sw_owned(eqe, 256 + 5, 8), "second pass expects owner 1");
	cx4_set(eqe, CX4_EQE_TYPE, CX4_EVENT_TYPE_PAGE_REQUEST);
	cx4_set(eqe, CX4_EQE_PAGE_REQ_NUM_PAGES, (uint32_t)-3);
	CHECK_EQ(eqe[1], CX4_EVENT_TYPE_PAGE_REQUEST);
	CHECK((int32_t)cx4_get(eqe, CX4_EQE_PAGE_REQ_NUM_PAGES) == -3, "page request");
	cx4_set(eqe, CX4_EQE_PORT_NUM, 1);
	CHECK_EQ(eqe[0x28], 0x10);	/* Linux: port = data.port.port >> 4 */

	CHECK_EQ(cx4_qp_optmask_allowed(CX4_CMD_OP_RTR2RTS_QP, CX4_QP_ST_RC) &
		 CX4_QP_OPTPAR_RNR_TIMEOUT, CX4_QP_OPTPAR_RNR_TIMEOUT);
	CHECK_EQ(cx4_qp_optmask_allowed(CX4_CMD_OP_INIT2RTR_QP, CX4_QP_ST_UD),
		 CX4_QP_OPTPAR_PKEY_INDEX | CX4_QP_OPTPAR_Q_KEY);
	CHECK_EQ(cx4_qp_optmask_allowed(CX4_CMD_OP_RST2INIT_QP, CX4_QP_ST_RC), 0);
	CHECK_EQ(cx4_qp_optmask_allowed(CX4_CMD_OP_RTS2RTS_QP, CX4_QP_ST_XRC), 0);
}

static void check_names(void)
{
	static const uint16_t required[] = {
		CX4_CMD_OP_ENABLE_HCA, CX4_CMD_OP_DISABLE_HCA, CX4_CMD_OP_QUERY_ISSI,
		CX4_CMD_OP_SET_ISSI, CX4_CMD_OP_QUERY_PAGES, CX4_CMD_OP_MANAGE_PAGES,
		CX4_CMD_OP_QUERY_HCA_CAP, CX4_CMD_OP_SET_HCA_CAP, CX4_CMD_OP_INIT_HCA,
		CX4_CMD_OP_TEARDOWN_HCA, CX4_CMD_OP_ALLOC_UAR, CX4_CMD_OP_DEALLOC_UAR,
		CX4_CMD_OP_CREATE_EQ, CX4_CMD_OP_DESTROY_EQ, CX4_CMD_OP_ALLOC_PD,
		CX4_CMD_OP_DEALLOC_PD, CX4_CMD_OP_CREATE_MKEY, CX4_CMD_OP_DESTROY_MKEY,
		CX4_CMD_OP_CREATE_CQ, CX4_CMD_OP_DESTROY_CQ, CX4_CMD_OP_MODIFY_CQ,
		CX4_CMD_OP_QUERY_CQ,
		CX4_CMD_OP_CREATE_QP, CX4_CMD_OP_RST2INIT_QP, CX4_CMD_OP_INIT2RTR_QP,
		CX4_CMD_OP_RTR2RTS_QP, CX4_CMD_OP_RTS2RTS_QP, CX4_CMD_OP_2ERR_QP,
		CX4_CMD_OP_2RST_QP,
		CX4_CMD_OP_QUERY_QP, CX4_CMD_OP_DESTROY_QP, CX4_CMD_OP_CREATE_SRQ,
		CX4_CMD_OP_DESTROY_SRQ, CX4_CMD_OP_QUERY_SRQ, CX4_CMD_OP_ARM_RQ,
		CX4_CMD_OP_QUERY_VPORT_STATE, CX4_CMD_OP_QUERY_NIC_VPORT_CONTEXT,
		CX4_CMD_OP_MODIFY_NIC_VPORT_CONTEXT, CX4_CMD_OP_QUERY_HCA_VPORT_GID,
		CX4_CMD_OP_QUERY_ROCE_ADDRESS, CX4_CMD_OP_SET_ROCE_ADDRESS, CX4_CMD_OP_ACCESS_REG,
		CX4_CMD_OP_QUERY_SPECIAL_CONTEXTS, CX4_CMD_OP_QUERY_ADAPTER,
	};
	size_t i;

	for (i = 0; i < N(required); i++)
		CHECK(cx4_cmd_opcode_name(required[i]) != NULL, "no name for 0x%x", required[i]);
	CHECK(!strcmp(cx4_cmd_opcode_name(0x10a), "QUERY_ISSI"), "QUERY_ISSI");
	CHECK(!strcmp(cx4_cmd_opcode_name(0x507), "2ERR_QP"), "2ERR_QP");
	CHECK(cx4_cmd_opcode_name(0x106) == NULL, "0x106 is no command");

	/* the names every command of the trace was printed with */
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x104), "MLX5_CMD_OP_ENABLE_HCA"), "0x104");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x10a), "unknown command opcode"), "0x10a");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x10b), "unknown command opcode"), "0x10b");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x107), "QUERY_PAGES"), "0x107");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x108), "MANAGE_PAGES"), "0x108");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x805), "MLX5_CMD_OP_ACCESS_REG"), "0x805");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x100), "QUERY_HCA_CAP"), "0x100");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x109), "SET_HCA_CAP"), "0x109");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x102), "INIT_HCA"), "0x102");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x101), "QUERY_ADAPTER"), "0x101");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x802), "ALLOC_UAR"), "0x802");
	CHECK(!strcmp(cx4_trace_linux_cmd_str(0x301), "CREATE_EQ"), "0x301");

	CHECK(!strcmp(cx4_cmd_status_str(CX4_CMD_STAT_BAD_QP_STATE_ERR), "bad QP state"), "status");
	CHECK(!strcmp(cx4_cmd_delivery_str(CX4_CMD_DELIVERY_TOK_ERR), "token error"), "delivery");
}

/* ---- 4. The mlx5_core dump format ---------------------------------------------------------- */

/* Trace lines 23-28 and 30-35 without the dmesg timestamp and dev_dbg prefix. */
static const char enable_hca_dump[] =
	"dump command MLX5_CMD_OP_ENABLE_HCA(0x104) INPUT\n"
	"000: 07000000 00000010 00000000 00000000\n"
	"010: 01040000 00000000 00000000 00000000\n"
	"020: 00000000 00000000 00000000 00000000\n"
	"030: 00000000 00000000 00000010 01fd0001\n"
	"\n"
	"dump command MLX5_CMD_OP_ENABLE_HCA(0x104) OUTPUT\n"
	"000: 07000000 00000010 00000000 00000000\n"
	"010: 01040000 00000000 00000000 00000000\n"
	"020: 00000000 00000000 00000000 00000000\n"
	"030: 00000000 00000000 00000010 01fd0000\n"
	"\n";

/* Trace lines 46-88: QUERY_ISSI OUTPUT with its output mailbox. */
static const char query_issi_out_dump[] =
	"dump command unknown command opcode(0x10a) OUTPUT\n"
	"000: 07000000 00000010 00000000 00000000\n"
	"010: 010a0000 00000000 00000000 00000000\n"
	"020: 00000000 00000000 00000000 00000000\n"
	"030: 00000007 ab0fe400 00000070 02d70000\n"
	"\n"
	"command block:\n"
	"040: 00000000 00000000 00000000 00000000\n"
	"050: 00000000 00000000 00000000 00000000\n"
	"060: 00000000 00000000 00000000 00000000\n"
	"070: 00000000 00000000 00000000 00000000\n"
	"080: 00000000 00000000 00000000 00000000\n"
	"090: 00000000 00000000 00000000 00000002\n"
	"0a0: 00000000 00000000 00000000 00000000\n"
	"0b0: 00000000 00000000 00000000 00000000\n"
	"0c0: 00000000 00000000 00000000 00000000\n"
	"0d0: 00000000 00000000 00000000 00000000\n"
	"0e0: 00000000 00000000 00000000 00000000\n"
	"0f0: 00000000 00000000 00000000 00000000\n"
	"100: 00000000 00000000 00000000 00000000\n"
	"110: 00000000 00000000 00000000 00000000\n"
	"120: 00000000 00000000 00000000 00000000\n"
	"130: 00000000 00000000 00000000 00000000\n"
	"140: 00000000 00000000 00000000 00000000\n"
	"150: 00000000 00000000 00000000 00000000\n"
	"160: 00000000 00000000 00000000 00000000\n"
	"170: 00000000 00000000 00000000 00000000\n"
	"180: 00000000 00000000 00000000 00000000\n"
	"190: 00000000 00000000 00000000 00000000\n"
	"1a0: 00000000 00000000 00000000 00000000\n"
	"1b0: 00000000 00000000 00000000 00000000\n"
	"1c0: 00000000 00000000 00000000 00000000\n"
	"1d0: 00000000 00000000 00000000 00000000\n"
	"1e0: 00000000 00000000 00000000 00000000\n"
	"1f0: 00000000 00000000 00000000 00000000\n"
	"200: 00000000 00000000 00000000 00000000\n"
	"210: 00000000 00000000 00000000 00000000\n"
	"220: 00000000 00000000 00000000 00000000\n"
	"230: 00000000 00000000 00000000 00000000\n"
	"240: 00000000 00000000 00000000 00000000\n"
	"250: 00000000 00000000 00000000 00000000\n"
	"260: 00000000 00000000 00000000 00000000\n"
	"270: 00000000 00000000 00000000 00020000\n"
	"\n";

/* Trace lines 119-124: QUERY_PAGES(boot) OUTPUT; this FW re-signed the entry. */
static const char query_pages_out_dump[] =
	"dump command QUERY_PAGES(0x107) OUTPUT\n"
	"000: 07000000 00000010 00000000 00000000\n"
	"010: 01070000 00000001 00000000 00000000\n"
	"020: 00000000 00000000 00000000 00000006\n"
	"030: 00000000 00000000 00000010 04fc0000\n"
	"\n";

struct memout {
	FILE *f;
	char *buf;
	size_t len;
};

static void mo_open(struct memout *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f) {
		perror("open_memstream");
		exit(2);
	}
}

static char *mo_close(struct memout *m)
{
	fclose(m->f);
	return m->buf;
}

static size_t count_lines(const char *s, const char *prefix)
{
	size_t n = 0, pl = strlen(prefix);

	for (; *s; s = strchr(s, '\n') + 1) {
		if (!strncmp(s, prefix, pl))
			n++;
		if (!strchr(s, '\n'))
			break;
	}
	return n;
}

static void check_formatter(void)
{
	uint8_t in[16] = { 0 }, out[CX4_QUERY_ISSI_OUT_SIZE];
	uint8_t entry[CX4_CMDQ_ENTRY_SIZE], block[CX4_MAILBOX_SIZE];
	const uint64_t issi_out_mbox[] = { 0x7ab0fe400ull };
	const void *blocks[1] = { block };
	struct cx4_trace_msg mi = { in, 0x10, NULL, 0 }, mo = { out, 0x10, NULL, 0 };
	struct cx4_trace_opts resign = { CX4_TRACE_RESIGN_OUTPUT, NULL };
	struct cx4_trace_opts data_only = { CX4_TRACE_DATA_ONLY, NULL };
	struct memout m;
	char *s;

	/* ENABLE_HCA rebuilt from its logical messages, token 1 */
	memset(out, 0, sizeof(out));
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_ENABLE_HCA);
	mo_open(&m);
	CHECK_EQ(cx4_trace_dump_cmd(m.f, &mi, &mo, 1, true, 0, NULL), 0);
	CHECK_EQ(cx4_trace_dump_cmd(m.f, &mi, &mo, 1, false, CX4_CMD_DELIVERY_OK, NULL), 0);
	s = mo_close(&m);
	CHECK(!strcmp(s, enable_hca_dump), "ENABLE_HCA dump:\n%s", s);
	free(s);

	/* the same from the raw entries as a driver holds them */
	mo_open(&m);
	load(entry, sizeof(entry), enable_hca_entry_in, N(enable_hca_entry_in));
	CHECK_EQ(cx4_trace_dump(m.f, entry, NULL, 0, true, NULL), 0);
	load(entry, sizeof(entry), enable_hca_entry_out, N(enable_hca_entry_out));
	CHECK_EQ(cx4_trace_dump(m.f, entry, NULL, 0, false, NULL), 0);
	s = mo_close(&m);
	CHECK(!strcmp(s, enable_hca_dump), "ENABLE_HCA raw dump:\n%s", s);
	free(s);

	/* QUERY_ISSI: 0x70-byte output in one mailbox at 0x7ab0fe400, token 2 */
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_QUERY_ISSI);
	load(out, sizeof(out), query_issi_out, N(query_issi_out));
	mo = (struct cx4_trace_msg){ out, CX4_QUERY_ISSI_OUT_SIZE, issi_out_mbox, 1 };
	mo_open(&m);
	CHECK_EQ(cx4_trace_dump_cmd(m.f, &mi, &mo, 2, false, 0, NULL), 0);
	s = mo_close(&m);
	CHECK(!strcmp(s, query_issi_out_dump), "QUERY_ISSI dump:\n%s", s);
	free(s);

	/* ... and raw: entry + the output block with its control words */
	memset(entry, 0, sizeof(entry));
	cx4_set(entry, CX4_CMD_TYPE, CX4_CMD_TYPE_PCIE);
	cx4_set(entry, CX4_CMD_INPUT_LENGTH, 0x10);
	memcpy(entry + CX4_CMD_INPUT_INLINE, in, 16);
	cx4_set64(entry, CX4_CMD_OUTPUT_MAILBOX_PTR, issi_out_mbox[0]);
	cx4_set(entry, CX4_CMD_OUTPUT_LENGTH, CX4_QUERY_ISSI_OUT_SIZE);
	cx4_set(entry, CX4_CMD_TOKEN, 2);
	cx4_set(entry, CX4_CMD_SIGNATURE, 0xd7);
	memset(block, 0, sizeof(block));
	memcpy(block, out + CX4_CMD_INLINE_SIZE, CX4_QUERY_ISSI_OUT_SIZE - CX4_CMD_INLINE_SIZE);
	cx4_set(block, CX4_MAILBOX_TOKEN, 2);
	mo_open(&m);
	CHECK_EQ(cx4_trace_dump(m.f, entry, blocks, 1, false, NULL), 0);
	s = mo_close(&m);
	CHECK(!strcmp(s, query_issi_out_dump), "QUERY_ISSI raw dump:\n%s", s);
	free(s);

	/* the MLX5_CMD_DATA variant prints only message bytes: 16 inline + 0x60 from the block */
	mo_open(&m);
	CHECK_EQ(cx4_trace_dump_cmd(m.f, &mi, &mo, 2, false, 0, &data_only), 0);
	s = mo_close(&m);
	CHECK(!strcmp(s, "dump command data unknown command opcode(0x10a) OUTPUT\n"
		      "000: 00000000 00000000 00000000 00000000\n"
		      "010: 00000000 00000000 00000000 00000000\n"
		      "020: 00000000 00000000 00000000 00000000\n"
		      "030: 00000000 00000000 00000000 00000000\n"
		      "040: 00000000 00000000 00000000 00000000\n"
		      "050: 00000000 00000000 00000000 00000000\n"
		      "060: 00000000 00000000 00000000 00000002\n"
		      "\n"), "data-only dump:\n%s", s);
	free(s);

	/* QUERY_PAGES(boot) output: 6 pages, token 4, entry re-signed as the trace FW does */
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_QUERY_PAGES);
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_QUERY_PAGES_OPMOD_BOOT);
	memset(out, 0, sizeof(out));
	cx4_set(out, CX4_QUERY_PAGES_OUT_NUM_PAGES, 6);
	mo = (struct cx4_trace_msg){ out, 0x10, NULL, 0 };
	mo_open(&m);
	CHECK_EQ(cx4_trace_dump_cmd(m.f, &mi, &mo, 4, false, 0, &resign), 0);
	s = mo_close(&m);
	CHECK(!strcmp(s, query_pages_out_dump), "QUERY_PAGES dump:\n%s", s);
	free(s);

	/* a modern name on request */
	mo_open(&m);
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_SET_ISSI);
	{
		struct cx4_trace_opts modern = { CX4_TRACE_MODERN_NAMES,
						 "mlx5_core 0000:02:00.0: " };

		CHECK_EQ(cx4_trace_dump_cmd(m.f, &mi, &mo, 3, true, 0, &modern), 0);
	}
	s = mo_close(&m);
	{
		static const char want[] =
			"mlx5_core 0000:02:00.0: dump command SET_ISSI(0x10b) INPUT\n";

		CHECK(!strncmp(s, want, sizeof(want) - 1), "modern name: %s", s);
	}
	free(s);
}

/* Linux cuts long dumps: 0x19230 bytes of MANAGE_PAGES show 179 of 202 blocks. */
static void check_formatter_truncation(void)
{
	const uint32_t len = 0x19230, npas = (len - CX4_MANAGE_PAGES_IN_SIZE) / 8;
	uint8_t *in = calloc(1, len), out[16] = { 0 };
	uint64_t *mbox = calloc(202, sizeof(*mbox));
	struct cx4_trace_msg mi = { in, len, mbox, 202 }, mo = { out, 0x10, NULL, 0 };
	struct memout m;
	uint32_t i;
	char *s;

	if (!in || !mbox) {
		perror("calloc");
		exit(2);
	}
	load(in, 0x40, manage_pages_in_head, N(manage_pages_in_head));
	for (i = 0; i < npas; i++)
		cx4_pas_set(in, CX4_MANAGE_PAGES_IN_PAS, i, 0x7ab122000ull + 0x1000ull * i);
	for (i = 0; i < 202; i++)
		mbox[i] = 0x7ab0e7800ull + 0x400ull * i;
	mo_open(&m);
	CHECK_EQ(cx4_trace_dump_cmd(m.f, &mi, &mo, 0x0b, true, 0, NULL), 0);
	s = mo_close(&m);
	CHECK_EQ(count_lines(s, "command block:"), 179);
	CHECK(strstr(s, "\n040: 00000007 ab122000 00000007 ab123000\n") != NULL, "first PAS line");
	/* block 178 starts at dump offset 0x40 + 178 * 0x240; its control words follow */
	CHECK(strstr(s, "\n190c0: ") != NULL, "last block offset");
	CHECK(strstr(s, "\n192f0: 00000007 ab114400 000000b2 000b0000\n") != NULL,
	      "last block: next pointer, block number 0xb2, token 0x0b");
	CHECK(strstr(s, "\n19300: ") == NULL, "dump stops at 179 blocks");
	free(s);

	/*
	 * 0x11..0x40-byte messages print no block at all (the trace's ACCESS_REG, 0x20 bytes,
	 * and 6-page MANAGE_PAGES, 0x40 bytes); 0x41 prints one.
	 */
	for (i = 0; i < 3; i++) {
		static const uint32_t lens[] = { 0x20, 0x40, 0x41 };

		mi.len = lens[i];
		mo_open(&m);
		CHECK_EQ(cx4_trace_dump_cmd(m.f, &mi, &mo, 6, true, 0, NULL), 0);
		s = mo_close(&m);
		CHECK_EQ(count_lines(s, "command block:"), mi.len > 0x40);
		free(s);
	}

	/* bad arguments are refused, not dereferenced */
	mi.len = len;
	mi.nmbox = 10;
	CHECK_EQ(cx4_trace_dump_cmd(stdout, &mi, &mo, 1, true, 0, NULL), -EINVAL);
	CHECK_EQ(cx4_trace_dump(stdout, NULL, NULL, 0, true, NULL), -EINVAL);
	free(mbox);
	free(in);
}

int main(void)
{
	check_group_shapes();
	check_round_trips();
	check_rebasing();
	check_general_caps();
	check_other_caps();
	check_create_eq();
	check_small_commands();
	check_entries();
	check_eqe_and_qp_helpers();
	check_names();
	check_formatter();
	check_formatter_truncation();
	if (failures) {
		fprintf(stderr, "prm_layout_test: %d check(s) failed\n", failures);
		return 1;
	}
	printf("prm_layout_test: all checks passed\n");
	return 0;
}
