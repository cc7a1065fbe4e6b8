/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 commands: opcodes, op_mod values, command status codes and the input/output
 * layout of every command bridgeverbs uses.  Offsets are byte offsets into the logical
 * command message (input or output), which starts with the 16 bytes inline in the command
 * queue entry and continues in the mailbox data blocks.
 *
 * Source abbreviations: see cx4_prm_iseg.h.  Unless a line says otherwise, a layout is
 * [ifc] struct mlx5_ifc_<command>_in_bits / _out_bits (the PRM's "<COMMAND> Input/Output
 * Structure Layout" tables) and was checked with a bit-offset calculator over that header;
 * the layouts that occur in the Linux [trace] are also checked against it by
 * tests/cx4/prm_layout_test.c.
 */
#ifndef CX4_PRM_CMD_H
#define CX4_PRM_CMD_H

#include "cx4_prm_fld.h"

/* ---- Opcodes ([ifc] enum MLX5_CMD_OP_*) ------------------------------------------------- */
#define CX4_CMD_OP_QUERY_HCA_CAP		0x100
#define CX4_CMD_OP_QUERY_ADAPTER		0x101
#define CX4_CMD_OP_INIT_HCA			0x102
#define CX4_CMD_OP_TEARDOWN_HCA			0x103
#define CX4_CMD_OP_ENABLE_HCA			0x104
#define CX4_CMD_OP_DISABLE_HCA			0x105
#define CX4_CMD_OP_QUERY_PAGES			0x107
#define CX4_CMD_OP_MANAGE_PAGES			0x108
#define CX4_CMD_OP_SET_HCA_CAP			0x109
#define CX4_CMD_OP_QUERY_ISSI			0x10a
#define CX4_CMD_OP_SET_ISSI			0x10b
#define CX4_CMD_OP_SET_DRIVER_VERSION		0x10d
#define CX4_CMD_OP_CREATE_MKEY			0x200
#define CX4_CMD_OP_QUERY_MKEY			0x201
#define CX4_CMD_OP_DESTROY_MKEY			0x202
#define CX4_CMD_OP_QUERY_SPECIAL_CONTEXTS	0x203
#define CX4_CMD_OP_PAGE_FAULT_RESUME		0x204
#define CX4_CMD_OP_CREATE_EQ			0x301
#define CX4_CMD_OP_DESTROY_EQ			0x302
#define CX4_CMD_OP_QUERY_EQ			0x303
#define CX4_CMD_OP_GEN_EQE			0x304
#define CX4_CMD_OP_CREATE_CQ			0x400
#define CX4_CMD_OP_DESTROY_CQ			0x401
#define CX4_CMD_OP_QUERY_CQ			0x402
#define CX4_CMD_OP_MODIFY_CQ			0x403
#define CX4_CMD_OP_CREATE_QP			0x500
#define CX4_CMD_OP_DESTROY_QP			0x501
#define CX4_CMD_OP_RST2INIT_QP			0x502
#define CX4_CMD_OP_INIT2RTR_QP			0x503
#define CX4_CMD_OP_RTR2RTS_QP			0x504
#define CX4_CMD_OP_RTS2RTS_QP			0x505
#define CX4_CMD_OP_SQERR2RTS_QP			0x506
#define CX4_CMD_OP_2ERR_QP			0x507
#define CX4_CMD_OP_2RST_QP			0x50a
#define CX4_CMD_OP_QUERY_QP			0x50b
#define CX4_CMD_OP_SQD_RTS_QP			0x50c
#define CX4_CMD_OP_MAD_IFC			0x50d
#define CX4_CMD_OP_INIT2INIT_QP			0x50e
#define CX4_CMD_OP_CREATE_PSV			0x600
#define CX4_CMD_OP_DESTROY_PSV			0x601
#define CX4_CMD_OP_CREATE_SRQ			0x700
#define CX4_CMD_OP_DESTROY_SRQ			0x701
#define CX4_CMD_OP_QUERY_SRQ			0x702
#define CX4_CMD_OP_ARM_RQ			0x703
#define CX4_CMD_OP_CREATE_XRC_SRQ		0x705
#define CX4_CMD_OP_DESTROY_XRC_SRQ		0x706
#define CX4_CMD_OP_QUERY_XRC_SRQ		0x707
#define CX4_CMD_OP_ARM_XRC_SRQ			0x708
#define CX4_CMD_OP_CREATE_DCT			0x710
#define CX4_CMD_OP_DESTROY_DCT			0x711
#define CX4_CMD_OP_DRAIN_DCT			0x712
#define CX4_CMD_OP_QUERY_DCT			0x713
#define CX4_CMD_OP_ARM_DCT_FOR_KEY_VIOLATION	0x714
#define CX4_CMD_OP_QUERY_VPORT_STATE		0x750
#define CX4_CMD_OP_MODIFY_VPORT_STATE		0x751
#define CX4_CMD_OP_QUERY_ESW_VPORT_CONTEXT	0x752
#define CX4_CMD_OP_MODIFY_ESW_VPORT_CONTEXT	0x753
#define CX4_CMD_OP_QUERY_NIC_VPORT_CONTEXT	0x754
#define CX4_CMD_OP_MODIFY_NIC_VPORT_CONTEXT	0x755
#define CX4_CMD_OP_QUERY_ROCE_ADDRESS		0x760
#define CX4_CMD_OP_SET_ROCE_ADDRESS		0x761
#define CX4_CMD_OP_QUERY_HCA_VPORT_CONTEXT	0x762
#define CX4_CMD_OP_MODIFY_HCA_VPORT_CONTEXT	0x763
#define CX4_CMD_OP_QUERY_HCA_VPORT_GID		0x764
#define CX4_CMD_OP_QUERY_HCA_VPORT_PKEY		0x765
#define CX4_CMD_OP_QUERY_VPORT_COUNTER		0x770
#define CX4_CMD_OP_ALLOC_Q_COUNTER		0x771
#define CX4_CMD_OP_DEALLOC_Q_COUNTER		0x772
#define CX4_CMD_OP_QUERY_Q_COUNTER		0x773
#define CX4_CMD_OP_ALLOC_PD			0x800
#define CX4_CMD_OP_DEALLOC_PD			0x801
#define CX4_CMD_OP_ALLOC_UAR			0x802
#define CX4_CMD_OP_DEALLOC_UAR			0x803
#define CX4_CMD_OP_CONFIG_INT_MODERATION	0x804
#define CX4_CMD_OP_ACCESS_REG			0x805
#define CX4_CMD_OP_ATTACH_TO_MCG		0x806
#define CX4_CMD_OP_DETACH_FROM_MCG		0x807
#define CX4_CMD_OP_GET_DROPPED_PACKET_LOG	0x80a
#define CX4_CMD_OP_QUERY_MAD_DEMUX		0x80b
#define CX4_CMD_OP_SET_MAD_DEMUX		0x80c
#define CX4_CMD_OP_NOP				0x80d
#define CX4_CMD_OP_ALLOC_XRCD			0x80e
#define CX4_CMD_OP_DEALLOC_XRCD			0x80f
#define CX4_CMD_OP_ALLOC_TRANSPORT_DOMAIN	0x816
#define CX4_CMD_OP_DEALLOC_TRANSPORT_DOMAIN	0x817
#define CX4_CMD_OP_QUERY_CONG_STATUS		0x822
#define CX4_CMD_OP_MODIFY_CONG_STATUS		0x823
#define CX4_CMD_OP_QUERY_CONG_PARAMS		0x824
#define CX4_CMD_OP_MODIFY_CONG_PARAMS		0x825
#define CX4_CMD_OP_QUERY_CONG_STATISTICS	0x826
#define CX4_CMD_OP_ADD_VXLAN_UDP_DPORT		0x827
#define CX4_CMD_OP_DELETE_VXLAN_UDP_DPORT	0x828
#define CX4_CMD_OP_SET_L2_TABLE_ENTRY		0x829
#define CX4_CMD_OP_QUERY_L2_TABLE_ENTRY		0x82a
#define CX4_CMD_OP_DELETE_L2_TABLE_ENTRY	0x82b
#define CX4_CMD_OP_SET_WOL_ROL			0x830
#define CX4_CMD_OP_QUERY_WOL_ROL		0x831
#define CX4_CMD_OP_CREATE_TIR			0x900
#define CX4_CMD_OP_MODIFY_TIR			0x901
#define CX4_CMD_OP_DESTROY_TIR			0x902
#define CX4_CMD_OP_QUERY_TIR			0x903
#define CX4_CMD_OP_CREATE_SQ			0x904
#define CX4_CMD_OP_MODIFY_SQ			0x905
#define CX4_CMD_OP_DESTROY_SQ			0x906
#define CX4_CMD_OP_QUERY_SQ			0x907
#define CX4_CMD_OP_CREATE_RQ			0x908
#define CX4_CMD_OP_MODIFY_RQ			0x909
#define CX4_CMD_OP_DESTROY_RQ			0x90a
#define CX4_CMD_OP_QUERY_RQ			0x90b
#define CX4_CMD_OP_CREATE_RMP			0x90c
#define CX4_CMD_OP_MODIFY_RMP			0x90d
#define CX4_CMD_OP_DESTROY_RMP			0x90e
#define CX4_CMD_OP_QUERY_RMP			0x90f
#define CX4_CMD_OP_CREATE_TIS			0x912
#define CX4_CMD_OP_MODIFY_TIS			0x913
#define CX4_CMD_OP_DESTROY_TIS			0x914
#define CX4_CMD_OP_QUERY_TIS			0x915
#define CX4_CMD_OP_CREATE_RQT			0x916
#define CX4_CMD_OP_MODIFY_RQT			0x917
#define CX4_CMD_OP_DESTROY_RQT			0x918
#define CX4_CMD_OP_QUERY_RQT			0x919
#define CX4_CMD_OP_SET_FLOW_TABLE_ROOT		0x92f
#define CX4_CMD_OP_CREATE_FLOW_TABLE		0x930
#define CX4_CMD_OP_DESTROY_FLOW_TABLE		0x931
#define CX4_CMD_OP_QUERY_FLOW_TABLE		0x932
#define CX4_CMD_OP_CREATE_FLOW_GROUP		0x933
#define CX4_CMD_OP_DESTROY_FLOW_GROUP		0x934
#define CX4_CMD_OP_QUERY_FLOW_GROUP		0x935
#define CX4_CMD_OP_SET_FLOW_TABLE_ENTRY		0x936
#define CX4_CMD_OP_QUERY_FLOW_TABLE_ENTRY	0x937
#define CX4_CMD_OP_DELETE_FLOW_TABLE_ENTRY	0x938
#define CX4_CMD_OP_ALLOC_FLOW_COUNTER		0x939
#define CX4_CMD_OP_DEALLOC_FLOW_COUNTER		0x93a
#define CX4_CMD_OP_QUERY_FLOW_COUNTER		0x93b
#define CX4_CMD_OP_MODIFY_FLOW_TABLE		0x93c

/* ---- Command status, output byte 0 ([dev.h] MLX5_CMD_STAT_*, [cmd.c] cmd_status_str) ---- */
#define CX4_CMD_STAT_OK				0x00
#define CX4_CMD_STAT_INT_ERR			0x01	/* internal error */
#define CX4_CMD_STAT_BAD_OP_ERR			0x02	/* opcode or op_mod not supported */
#define CX4_CMD_STAT_BAD_PARAM_ERR		0x03	/* parameter not supported / out of range */
#define CX4_CMD_STAT_BAD_SYS_STATE_ERR		0x04	/* HCA state does not allow the command */
#define CX4_CMD_STAT_BAD_RES_ERR		0x05	/* object does not exist */
#define CX4_CMD_STAT_RES_BUSY			0x06	/* resource busy */
#define CX4_CMD_STAT_LIM_ERR			0x08	/* limits exceeded */
#define CX4_CMD_STAT_BAD_RES_STATE_ERR		0x09	/* resource not in the right state */
#define CX4_CMD_STAT_IX_ERR			0x0a	/* bad index */
#define CX4_CMD_STAT_NO_RES_ERR			0x0f	/* no resources */
#define CX4_CMD_STAT_BAD_QP_STATE_ERR		0x10	/* QP not in the presumed source state */
#define CX4_CMD_STAT_BAD_PKT_ERR		0x30	/* bad packet (MAD_IFC) */
#define CX4_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR	0x40	/* more outstanding CQEs than new CQ size */
#define CX4_CMD_STAT_BAD_INP_LEN_ERR		0x50	/* input length too short */
#define CX4_CMD_STAT_BAD_OUTP_LEN_ERR		0x51	/* output length too short */

/* ---- Generic header of every command ([ifc] mbox_in / mbox_out) ------------------------- */
#define CX4_CMD_HDR_SIZE		0x10	/* minimum input and output length */
#define CX4_CMD_IN_OPCODE		CX4_FLD(0x00, 16, 16)
#define CX4_CMD_IN_UID			CX4_FLD(0x00, 0, 16)	/* 0 unless DevX */
#define CX4_CMD_IN_OP_MOD		CX4_FLD(0x04, 0, 16)
#define CX4_CMD_OUT_STATUS		CX4_FLD(0x00, 24, 8)
#define CX4_CMD_OUT_SYNDROME		CX4_FLD32(0x04)		/* FW-specific detail of status */

/* ---- HCA life cycle ----------------------------------------------------------------------- */
/* ENABLE_HCA / DISABLE_HCA */
#define CX4_ENABLE_HCA_IN_SIZE			0x10
#define CX4_ENABLE_HCA_OUT_SIZE			0x10
#define CX4_ENABLE_HCA_IN_EMBEDDED_CPU_FUNCTION	CX4_FLD(0x08, 31, 1)
#define CX4_ENABLE_HCA_IN_FUNCTION_ID		CX4_FLD(0x08, 0, 16)
#define CX4_DISABLE_HCA_IN_SIZE			0x10
#define CX4_DISABLE_HCA_OUT_SIZE		0x10
#define CX4_DISABLE_HCA_IN_FUNCTION_ID		CX4_FLD(0x08, 0, 16)

/* QUERY_ISSI / SET_ISSI ("interface step sequence ID": command-set revision) */
#define CX4_QUERY_ISSI_IN_SIZE			0x10
#define CX4_QUERY_ISSI_OUT_SIZE			0x70
#define CX4_QUERY_ISSI_OUT_CURRENT_ISSI		CX4_FLD(0x08, 0, 16)
/* supported_issi: 80-byte bitmap at 0x20..0x6F, bit n counted from the end (dw0 = 0x6C). */
#define CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_OFF	0x20
#define CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_LEN	0x50
#define CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_DW0	CX4_FLD32(0x6c)
#define CX4_SET_ISSI_IN_SIZE			0x10
#define CX4_SET_ISSI_OUT_SIZE			0x10
#define CX4_SET_ISSI_IN_CURRENT_ISSI		CX4_FLD(0x08, 0, 16)

/* QUERY_PAGES: how many 4 KB pages FW wants (op_mod selects the stage) */
#define CX4_QUERY_PAGES_OPMOD_BOOT		0x1
#define CX4_QUERY_PAGES_OPMOD_INIT		0x2
#define CX4_QUERY_PAGES_OPMOD_REGULAR		0x3
#define CX4_QUERY_PAGES_IN_SIZE			0x10
#define CX4_QUERY_PAGES_OUT_SIZE		0x10
#define CX4_QUERY_PAGES_IN_FUNCTION_ID		CX4_FLD(0x08, 0, 16)
#define CX4_QUERY_PAGES_OUT_FUNCTION_ID		CX4_FLD(0x08, 0, 16)
#define CX4_QUERY_PAGES_OUT_NUM_PAGES		CX4_FLD32(0x0c)	/* signed: < 0 = FW returns pages */

/* MANAGE_PAGES: give pages (PAS list in the input) or take them back (PAS list in output) */
#define CX4_MANAGE_PAGES_OPMOD_ALLOC_FAIL	0x0	/* driver could not allocate */
#define CX4_MANAGE_PAGES_OPMOD_ALLOC_SUCCESS	0x1	/* give pages */
#define CX4_MANAGE_PAGES_OPMOD_HCA_RETURN_PAGES	0x2	/* take pages */
#define CX4_MANAGE_PAGES_IN_SIZE		0x10	/* + 8 per PAS entry */
#define CX4_MANAGE_PAGES_OUT_SIZE		0x10	/* + 8 per returned entry */
#define CX4_MANAGE_PAGES_IN_FUNCTION_ID		CX4_FLD(0x08, 0, 16)
#define CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES	CX4_FLD32(0x0c)
#define CX4_MANAGE_PAGES_IN_PAS			0x10
#define CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES	CX4_FLD32(0x08)
#define CX4_MANAGE_PAGES_OUT_PAS		0x10

/* QUERY_HCA_CAP / SET_HCA_CAP: a 4 KB capability page (layouts in cx4_prm_caps.h) */
#define CX4_HCA_CAP_OPMOD_MAX			0	/* op_mod bit 0 of QUERY_HCA_CAP */
#define CX4_HCA_CAP_OPMOD_CUR			1
#define CX4_HCA_CAP_OPMOD(type, cur)		(((type) << 1) | (cur))	/* QUERY_HCA_CAP */
#define CX4_QUERY_HCA_CAP_IN_SIZE		0x10
#define CX4_QUERY_HCA_CAP_OUT_SIZE		0x1010
#define CX4_QUERY_HCA_CAP_IN_OTHER_FUNCTION	CX4_FLD(0x08, 31, 1)
#define CX4_QUERY_HCA_CAP_IN_FUNCTION_ID	CX4_FLD(0x08, 0, 16)
#define CX4_QUERY_HCA_CAP_OUT_CAPABILITY	0x10
#define CX4_HCA_CAP_SIZE			0x1000
/* SET_HCA_CAP op_mod is the capability type alone (Linux set_caps: op_mod = type << 1). */
#define CX4_SET_HCA_CAP_OPMOD(type)		((type) << 1)
#define CX4_SET_HCA_CAP_IN_SIZE			0x1010
#define CX4_SET_HCA_CAP_OUT_SIZE		0x10
#define CX4_SET_HCA_CAP_IN_OTHER_FUNCTION	CX4_FLD(0x08, 31, 1)
#define CX4_SET_HCA_CAP_IN_FUNCTION_ID		CX4_FLD(0x08, 0, 16)
#define CX4_SET_HCA_CAP_IN_CAPABILITY		0x10

/* INIT_HCA / TEARDOWN_HCA */
#define CX4_INIT_HCA_IN_SIZE			0x10	/* newer FW: 0x20 with sw_owner_id */
#define CX4_INIT_HCA_OUT_SIZE			0x10
#define CX4_TEARDOWN_HCA_IN_SIZE		0x10
#define CX4_TEARDOWN_HCA_OUT_SIZE		0x10
#define CX4_TEARDOWN_HCA_IN_PROFILE		CX4_FLD(0x08, 0, 16)
#define CX4_TEARDOWN_HCA_OUT_FORCE_STATE	CX4_FLD(0x0c, 0, 1)
#define CX4_TEARDOWN_PROFILE_GRACEFUL_CLOSE	0x0
#define CX4_TEARDOWN_PROFILE_FORCE_CLOSE	0x1
#define CX4_TEARDOWN_PROFILE_PREPARE_FAST	0x2

/* QUERY_ADAPTER ([ifc] query_adapter_out + query_adapter_param_block) */
#define CX4_QUERY_ADAPTER_IN_SIZE		0x10
#define CX4_QUERY_ADAPTER_OUT_SIZE		0x110
#define CX4_QUERY_ADAPTER_OUT_STRUCT		0x10	/* 0x100-byte parameter block */
#define CX4_ADAPTER_IEEE_VENDOR_ID		CX4_FLD(0x18, 0, 24)	/* 0x0002C9 [trace] */
#define CX4_ADAPTER_VSD_VENDOR_ID		CX4_FLD(0x1c, 0, 16)	/* 0x15B3 */
#define CX4_ADAPTER_VSD_OFF			0x20	/* vendor specific data, 208 bytes */
#define CX4_ADAPTER_VSD_LEN			0xd0
#define CX4_ADAPTER_PSID_OFF			0xf0	/* board PSID, NUL-padded ASCII */
#define CX4_ADAPTER_PSID_LEN			0x10

/* NOP: does nothing; handy to probe the command interface */
#define CX4_NOP_IN_SIZE				0x10
#define CX4_NOP_OUT_SIZE			0x10

/* ---- Resource allocation ------------------------------------------------------------------- */
#define CX4_ALLOC_UAR_IN_SIZE			0x10
#define CX4_ALLOC_UAR_OUT_SIZE			0x10
#define CX4_ALLOC_UAR_OUT_UAR			CX4_FLD(0x08, 0, 24)	/* UAR page index */
#define CX4_DEALLOC_UAR_IN_SIZE			0x10
#define CX4_DEALLOC_UAR_OUT_SIZE		0x10
#define CX4_DEALLOC_UAR_IN_UAR			CX4_FLD(0x08, 0, 24)

#define CX4_ALLOC_PD_IN_SIZE			0x10
#define CX4_ALLOC_PD_OUT_SIZE			0x10
#define CX4_ALLOC_PD_OUT_PD			CX4_FLD(0x08, 0, 24)
#define CX4_DEALLOC_PD_IN_SIZE			0x10
#define CX4_DEALLOC_PD_OUT_SIZE			0x10
#define CX4_DEALLOC_PD_IN_PD			CX4_FLD(0x08, 0, 24)

#define CX4_ALLOC_TRANSPORT_DOMAIN_IN_SIZE	0x10
#define CX4_ALLOC_TRANSPORT_DOMAIN_OUT_SIZE	0x10
#define CX4_ALLOC_TRANSPORT_DOMAIN_OUT_TD	CX4_FLD(0x08, 0, 24)
#define CX4_DEALLOC_TRANSPORT_DOMAIN_IN_SIZE	0x10
#define CX4_DEALLOC_TRANSPORT_DOMAIN_OUT_SIZE	0x10
#define CX4_DEALLOC_TRANSPORT_DOMAIN_IN_TD	CX4_FLD(0x08, 0, 24)

/* QUERY_SPECIAL_CONTEXTS ([ifc]; 4.4-era Linux read only the first 0x10 bytes) */
#define CX4_QUERY_SPECIAL_CONTEXTS_IN_SIZE	0x10
#define CX4_QUERY_SPECIAL_CONTEXTS_OUT_SIZE	0x20
#define CX4_QUERY_SPECIAL_CONTEXTS_OUT_DUMP_FILL_MKEY	CX4_FLD32(0x08)
#define CX4_QUERY_SPECIAL_CONTEXTS_OUT_RESD_LKEY	CX4_FLD32(0x0c)	/* reserved lkey: PA */
#define CX4_QUERY_SPECIAL_CONTEXTS_OUT_NULL_MKEY	CX4_FLD32(0x10)

/* ---- Event queues (eqc in cx4_prm_ctx.h) ---------------------------------------------------- */
#define CX4_CREATE_EQ_IN_SIZE			0x110	/* + 8 per PAS entry */
#define CX4_CREATE_EQ_OUT_SIZE			0x10
#define CX4_CREATE_EQ_IN_EQC			0x10
/*
 * event_bitmask: bit n set = events of type n go to this EQ (types in cx4_prm_eqe.h).  CX4-era
 * headers have one 64-bit mask at 0x58; newer ones extend it to 4 x 64 bits at 0x58..0x77.
 */
#define CX4_CREATE_EQ_IN_EVENT_BITMASK		CX4_FLD64(0x58)
#define CX4_CREATE_EQ_IN_PAS			0x110
#define CX4_CREATE_EQ_OUT_EQ_NUMBER		CX4_FLD(0x08, 0, 8)
#define CX4_DESTROY_EQ_IN_SIZE			0x10
#define CX4_DESTROY_EQ_OUT_SIZE			0x10
#define CX4_DESTROY_EQ_IN_EQ_NUMBER		CX4_FLD(0x08, 0, 8)
#define CX4_QUERY_EQ_IN_SIZE			0x10
#define CX4_QUERY_EQ_OUT_SIZE			0x110	/* + PAS */
#define CX4_QUERY_EQ_IN_EQ_NUMBER		CX4_FLD(0x08, 0, 8)
#define CX4_QUERY_EQ_OUT_EQC			0x10
#define CX4_QUERY_EQ_OUT_EVENT_BITMASK		CX4_FLD64(0x58)
#define CX4_QUERY_EQ_OUT_PAS			0x110

/* ---- Completion queues (cqc in cx4_prm_ctx.h) ----------------------------------------------- */
#define CX4_CREATE_CQ_IN_SIZE			0x110	/* + 8 per PAS entry */
#define CX4_CREATE_CQ_OUT_SIZE			0x10
#define CX4_CREATE_CQ_IN_CQC			0x10
#define CX4_CREATE_CQ_IN_PAS			0x110
#define CX4_CREATE_CQ_OUT_CQN			CX4_FLD(0x08, 0, 24)
#define CX4_DESTROY_CQ_IN_SIZE			0x10
#define CX4_DESTROY_CQ_OUT_SIZE			0x10
#define CX4_DESTROY_CQ_IN_CQN			CX4_FLD(0x08, 0, 24)
#define CX4_QUERY_CQ_IN_SIZE			0x10
#define CX4_QUERY_CQ_OUT_SIZE			0x110	/* + PAS */
#define CX4_QUERY_CQ_IN_CQN			CX4_FLD(0x08, 0, 24)
#define CX4_QUERY_CQ_OUT_CQC			0x10
#define CX4_QUERY_CQ_OUT_PAS			0x110
/* MODIFY_CQ: op_mod 0 modifies moderation/EQ fields, 1 resizes ([ifc] modify_cq_in) */
#define CX4_MODIFY_CQ_OPMOD_MODIFY		0x0
#define CX4_MODIFY_CQ_OPMOD_RESIZE		0x1
#define CX4_MODIFY_CQ_IN_SIZE			0x110	/* + PAS when resizing */
#define CX4_MODIFY_CQ_OUT_SIZE			0x10
#define CX4_MODIFY_CQ_IN_CQN			CX4_FLD(0x08, 0, 24)
#define CX4_MODIFY_CQ_IN_FIELD_SELECT		CX4_FLD32(0x0c)
#define CX4_MODIFY_CQ_IN_CQC			0x10
#define CX4_MODIFY_CQ_IN_PAS			0x110
/* field_select for op_mod 0 (rdma-core tests/mlx5_prm_structs.py; Linux cq.h MLX5_CQ_MODIFY_*) */
#define CX4_MODIFY_CQ_SEL_CQ_PERIOD		(1u << 0)
#define CX4_MODIFY_CQ_SEL_CQ_MAX_COUNT		(1u << 1)
#define CX4_MODIFY_CQ_SEL_OI			(1u << 2)
#define CX4_MODIFY_CQ_SEL_C_EQN			(1u << 3)
#define CX4_MODIFY_CQ_SEL_CQ_PERIOD_MODE	(1u << 4)
#define CX4_MODIFY_CQ_SEL_STATUS		(1u << 5)
/* field_select for op_mod 1 (Linux cq.h MLX5_MODIFY_CQ_MASK_*) */
#define CX4_RESIZE_CQ_SEL_LOG_CQ_SIZE		(1u << 0)
#define CX4_RESIZE_CQ_SEL_PAGE_OFFSET		(1u << 1)
#define CX4_RESIZE_CQ_SEL_LOG_PAGE_SIZE		(1u << 2)

/* ---- Memory keys (mkc in cx4_prm_ctx.h) ----------------------------------------------------- */
#define CX4_CREATE_MKEY_IN_SIZE			0x110	/* + 8 per MTT entry */
#define CX4_CREATE_MKEY_OUT_SIZE		0x10
#define CX4_CREATE_MKEY_IN_PG_ACCESS		CX4_FLD(0x0c, 31, 1)
#define CX4_CREATE_MKEY_IN_MKC			0x10
#define CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE CX4_FLD32(0x60)
#define CX4_CREATE_MKEY_IN_KLM_PAS_MTT		0x110
#define CX4_CREATE_MKEY_OUT_MKEY_INDEX		CX4_FLD(0x08, 0, 24)	/* key: index << 8 | 7_0 */
#define CX4_DESTROY_MKEY_IN_SIZE		0x10
#define CX4_DESTROY_MKEY_OUT_SIZE		0x10
#define CX4_DESTROY_MKEY_IN_MKEY_INDEX		CX4_FLD(0x08, 0, 24)
#define CX4_QUERY_MKEY_IN_SIZE			0x10
#define CX4_QUERY_MKEY_OUT_SIZE			0x130
#define CX4_QUERY_MKEY_IN_MKEY_INDEX		CX4_FLD(0x08, 0, 24)
#define CX4_QUERY_MKEY_OUT_MKC			0x10

/* ---- Queue pairs (qpc in cx4_prm_ctx.h, opt_param_mask and states in cx4_prm_qp.h) ---------- */
#define CX4_CREATE_QP_IN_SIZE			0x110	/* + 8 per PAS entry */
#define CX4_CREATE_QP_OUT_SIZE			0x10
#define CX4_CREATE_QP_IN_OPT_PARAM_MASK		CX4_FLD32(0x10)
#define CX4_CREATE_QP_IN_QPC			0x18
#define CX4_CREATE_QP_IN_PAS			0x110
#define CX4_CREATE_QP_OUT_QPN			CX4_FLD(0x08, 0, 24)
/*
 * The state transitions RST2INIT, INIT2INIT, INIT2RTR, RTR2RTS, RTS2RTS, SQERR2RTS and
 * SQD_RTS share one input layout ([ifc] rst2init_qp_in ... rts2rts_qp_in).
 */
#define CX4_MODIFY_QP_IN_SIZE			0x110
#define CX4_MODIFY_QP_OUT_SIZE			0x10
#define CX4_MODIFY_QP_IN_QPN			CX4_FLD(0x08, 0, 24)
#define CX4_MODIFY_QP_IN_OPT_PARAM_MASK		CX4_FLD32(0x10)
#define CX4_MODIFY_QP_IN_QPC			0x18
/* 2ERR_QP, 2RST_QP and DESTROY_QP carry only the QP number ([ifc] qp_2err_in, qp_2rst_in). */
#define CX4_QP_2ERR_IN_SIZE			0x10
#define CX4_QP_2RST_IN_SIZE			0x10
#define CX4_DESTROY_QP_IN_SIZE			0x10
#define CX4_QP_NOCTX_OUT_SIZE			0x10
#define CX4_QP_NOCTX_IN_QPN			CX4_FLD(0x08, 0, 24)
#define CX4_QUERY_QP_IN_SIZE			0x10
#define CX4_QUERY_QP_OUT_SIZE			0x110	/* + PAS */
#define CX4_QUERY_QP_IN_QPN			CX4_FLD(0x08, 0, 24)
#define CX4_QUERY_QP_OUT_OPT_PARAM_MASK		CX4_FLD32(0x10)
#define CX4_QUERY_QP_OUT_QPC			0x18
#define CX4_QUERY_QP_OUT_PAS			0x110

/* ---- Shared receive queues (srqc in cx4_prm_ctx.h) ------------------------------------------ */
#define CX4_CREATE_SRQ_IN_SIZE			0x110	/* + 8 per PAS entry */
#define CX4_CREATE_SRQ_OUT_SIZE			0x10
#define CX4_CREATE_SRQ_IN_SRQC			0x10
#define CX4_CREATE_SRQ_IN_PAS			0x110
#define CX4_CREATE_SRQ_OUT_SRQN			CX4_FLD(0x08, 0, 24)
#define CX4_DESTROY_SRQ_IN_SIZE			0x10
#define CX4_DESTROY_SRQ_OUT_SIZE		0x10
#define CX4_DESTROY_SRQ_IN_SRQN			CX4_FLD(0x08, 0, 24)
#define CX4_QUERY_SRQ_IN_SIZE			0x10
#define CX4_QUERY_SRQ_OUT_SIZE			0x110	/* + PAS */
#define CX4_QUERY_SRQ_IN_SRQN			CX4_FLD(0x08, 0, 24)
#define CX4_QUERY_SRQ_OUT_SRQC			0x10
#define CX4_QUERY_SRQ_OUT_PAS			0x110
/* ARM_RQ: set the SRQ limit watermark; an SRQ_LIMIT event fires when WQEs drop below it */
#define CX4_ARM_RQ_OPMOD_SRQ			0x1
#define CX4_ARM_RQ_OPMOD_XRQ			0x2
#define CX4_ARM_RQ_IN_SIZE			0x10
#define CX4_ARM_RQ_OUT_SIZE			0x10
#define CX4_ARM_RQ_IN_SRQ_NUMBER		CX4_FLD(0x08, 0, 24)
#define CX4_ARM_RQ_IN_LWM			CX4_FLD(0x0c, 0, 16)

/* ---- Multicast ([ifc] attach_to_mcg_in / detach_from_mcg_in) -------------------------------- */
#define CX4_MCG_IN_SIZE				0x20
#define CX4_MCG_OUT_SIZE			0x10
#define CX4_MCG_IN_QPN				CX4_FLD(0x08, 0, 24)
#define CX4_MCG_IN_MGID_OFF			0x10	/* 16-byte multicast GID */

/* ---- Vports and RoCE addresses (contexts in cx4_prm_ctx.h) ---------------------------------- */
#define CX4_VPORT_STATE_OPMOD_VNIC_VPORT	0x0
#define CX4_VPORT_STATE_OPMOD_ESW_VPORT		0x1
#define CX4_VPORT_STATE_OPMOD_UPLINK		0x2
#define CX4_VPORT_STATE_DOWN			0x0	/* Linux device.h VPORT_STATE_DOWN */
#define CX4_VPORT_STATE_UP			0x1
#define CX4_QUERY_VPORT_STATE_IN_SIZE		0x10
#define CX4_QUERY_VPORT_STATE_OUT_SIZE		0x10
#define CX4_QUERY_VPORT_STATE_IN_OTHER_VPORT	CX4_FLD(0x08, 31, 1)
#define CX4_QUERY_VPORT_STATE_IN_VPORT_NUMBER	CX4_FLD(0x08, 0, 16)
#define CX4_QUERY_VPORT_STATE_OUT_ADMIN_STATE	CX4_FLD(0x0c, 4, 4)
#define CX4_QUERY_VPORT_STATE_OUT_STATE		CX4_FLD(0x0c, 0, 4)

/*
 * QUERY_VPORT_COUNTER (0x770): the vport's traffic counters ([PRM] "QUERY_VPORT_COUNTER";
 * Linux mlx5_ifc.h query_vport_counter_in/out, struct mlx5_ifc_traffic_counter_bits: 64-bit
 * packets then 64-bit octets). RoCE traffic is counted as IB unicast/multicast, as mlx5_ib
 * reads it for the port counters of an Ethernet port (Linux mlx5_ib mad.c,
 * query_ib_ppcnt/mlx5_core_query_vport_counter). op_mod 0; clear resets after reading.
 */
#define CX4_QUERY_VPORT_COUNTER_IN_SIZE		0x20
#define CX4_QUERY_VPORT_COUNTER_OUT_SIZE	0x210
#define CX4_QUERY_VPORT_COUNTER_IN_OTHER_VPORT	CX4_FLD(0x08, 31, 1)
#define CX4_QUERY_VPORT_COUNTER_IN_PORT_NUM	CX4_FLD(0x08, 16, 4)
#define CX4_QUERY_VPORT_COUNTER_IN_VPORT_NUMBER	CX4_FLD(0x08, 0, 16)
#define CX4_QUERY_VPORT_COUNTER_IN_CLEAR	CX4_FLD(0x18, 31, 1)
/* traffic counters: .packets at the offset, .octets 8 bytes later */
#define CX4_VPORT_CNT_PACKETS(off)		CX4_FLD64(off)
#define CX4_VPORT_CNT_OCTETS(off)		CX4_FLD64((off) + 8)
#define CX4_VPORT_CNT_RECEIVED_ERRORS		0x10
#define CX4_VPORT_CNT_TRANSMIT_ERRORS		0x20
#define CX4_VPORT_CNT_RECEIVED_IB_UNICAST	0x30
#define CX4_VPORT_CNT_TRANSMITTED_IB_UNICAST	0x40
#define CX4_VPORT_CNT_RECEIVED_IB_MULTICAST	0x50
#define CX4_VPORT_CNT_TRANSMITTED_IB_MULTICAST	0x60
#define CX4_VPORT_CNT_RECEIVED_ETH_BROADCAST	0x70
#define CX4_VPORT_CNT_TRANSMITTED_ETH_BROADCAST	0x80
#define CX4_VPORT_CNT_RECEIVED_ETH_UNICAST	0x90
#define CX4_VPORT_CNT_TRANSMITTED_ETH_UNICAST	0xa0
#define CX4_VPORT_CNT_RECEIVED_ETH_MULTICAST	0xb0
#define CX4_VPORT_CNT_TRANSMITTED_ETH_MULTICAST	0xc0
#define CX4_VPORT_CNT_END			0xd0	/* reserved up to OUT_SIZE */

#define CX4_QUERY_NIC_VPORT_CONTEXT_IN_SIZE	0x10
#define CX4_QUERY_NIC_VPORT_CONTEXT_OUT_SIZE	0x110
#define CX4_QUERY_NIC_VPORT_CONTEXT_IN_OTHER_VPORT	CX4_FLD(0x08, 31, 1)
#define CX4_QUERY_NIC_VPORT_CONTEXT_IN_VPORT_NUMBER	CX4_FLD(0x08, 0, 16)
#define CX4_QUERY_NIC_VPORT_CONTEXT_IN_ALLOWED_LIST_TYPE CX4_FLD(0x0c, 24, 3)
#define CX4_QUERY_NIC_VPORT_CONTEXT_OUT_CTX	0x10

#define CX4_MODIFY_NIC_VPORT_CONTEXT_IN_SIZE	0x200
#define CX4_MODIFY_NIC_VPORT_CONTEXT_OUT_SIZE	0x10
#define CX4_MODIFY_NIC_VPORT_CONTEXT_IN_OTHER_VPORT	CX4_FLD(0x08, 31, 1)
#define CX4_MODIFY_NIC_VPORT_CONTEXT_IN_VPORT_NUMBER	CX4_FLD(0x08, 0, 16)
#define CX4_MODIFY_NIC_VPORT_CONTEXT_IN_FIELD_SELECT	CX4_FLD32(0x0c)
#define CX4_MODIFY_NIC_VPORT_CONTEXT_IN_CTX	0x100
/* field_select bits ([ifc] modify_nic_vport_field_select) */
#define CX4_NIC_VPORT_SEL_ROCE_EN		(1u << 1)
#define CX4_NIC_VPORT_SEL_ADDRESSES_LIST	(1u << 2)
#define CX4_NIC_VPORT_SEL_PERMANENT_ADDRESS	(1u << 3)
#define CX4_NIC_VPORT_SEL_PROMISC		(1u << 4)
#define CX4_NIC_VPORT_SEL_CHANGE_EVENT		(1u << 5)
#define CX4_NIC_VPORT_SEL_MTU			(1u << 6)
#define CX4_NIC_VPORT_SEL_MIN_INLINE		(1u << 7)
#define CX4_NIC_VPORT_SEL_PORT_GUID		(1u << 8)
#define CX4_NIC_VPORT_SEL_NODE_GUID		(1u << 9)
#define CX4_NIC_VPORT_SEL_DISABLE_MC_LOCAL_LB	(1u << 10)
#define CX4_NIC_VPORT_SEL_DISABLE_UC_LOCAL_LB	(1u << 11)

#define CX4_QUERY_HCA_VPORT_CONTEXT_IN_SIZE	0x10
#define CX4_QUERY_HCA_VPORT_CONTEXT_OUT_SIZE	0x210
#define CX4_QUERY_HCA_VPORT_CONTEXT_IN_OTHER_VPORT	CX4_FLD(0x08, 31, 1)
#define CX4_QUERY_HCA_VPORT_CONTEXT_IN_PORT_NUM		CX4_FLD(0x08, 16, 4)
#define CX4_QUERY_HCA_VPORT_CONTEXT_IN_VPORT_NUMBER	CX4_FLD(0x08, 0, 16)
#define CX4_QUERY_HCA_VPORT_CONTEXT_OUT_CTX	0x10

/* QUERY_HCA_VPORT_GID (IB link layer; Ethernet ports use QUERY_ROCE_ADDRESS instead) */
#define CX4_QUERY_HCA_VPORT_GID_IN_SIZE		0x10
#define CX4_QUERY_HCA_VPORT_GID_OUT_SIZE	0x20	/* one GID; 0x10 + 16 * gids_num for all */
#define CX4_QUERY_HCA_VPORT_GID_IN_OTHER_VPORT	CX4_FLD(0x08, 31, 1)
#define CX4_QUERY_HCA_VPORT_GID_IN_PORT_NUM	CX4_FLD(0x08, 16, 4)
#define CX4_QUERY_HCA_VPORT_GID_IN_VPORT_NUMBER	CX4_FLD(0x08, 0, 16)
#define CX4_QUERY_HCA_VPORT_GID_IN_GID_INDEX	CX4_FLD(0x0c, 0, 16)	/* 0xFFFF: all */
#define CX4_QUERY_HCA_VPORT_GID_OUT_GIDS_NUM	CX4_FLD(0x0c, 16, 16)
#define CX4_QUERY_HCA_VPORT_GID_OUT_GID_OFF	0x10	/* 16 bytes per GID */

/* QUERY_ROCE_ADDRESS / SET_ROCE_ADDRESS: the RoCE GID table (roce_addr layout in ctx.h) */
#define CX4_QUERY_ROCE_ADDRESS_IN_SIZE		0x10
#define CX4_QUERY_ROCE_ADDRESS_OUT_SIZE		0x30
#define CX4_QUERY_ROCE_ADDRESS_IN_INDEX		CX4_FLD(0x08, 16, 16)
#define CX4_QUERY_ROCE_ADDRESS_IN_VHCA_PORT_NUM	CX4_FLD(0x08, 0, 4)
#define CX4_QUERY_ROCE_ADDRESS_OUT_ADDR		0x10
#define CX4_SET_ROCE_ADDRESS_IN_SIZE		0x30
#define CX4_SET_ROCE_ADDRESS_OUT_SIZE		0x10
#define CX4_SET_ROCE_ADDRESS_IN_INDEX		CX4_FLD(0x08, 16, 16)
#define CX4_SET_ROCE_ADDRESS_IN_VHCA_PORT_NUM	CX4_FLD(0x08, 0, 4)
#define CX4_SET_ROCE_ADDRESS_IN_ADDR		0x10

/* ---- ACCESS_REGISTER (register layouts in cx4_prm_reg.h) ------------------------------------ */
#define CX4_ACCESS_REG_OPMOD_WRITE		0x0
#define CX4_ACCESS_REG_OPMOD_READ		0x1
#define CX4_ACCESS_REG_IN_SIZE			0x10	/* + register size */
#define CX4_ACCESS_REG_OUT_SIZE			0x10	/* + register size */
#define CX4_ACCESS_REG_IN_REGISTER_ID		CX4_FLD(0x08, 0, 16)
#define CX4_ACCESS_REG_IN_ARGUMENT		CX4_FLD32(0x0c)
#define CX4_ACCESS_REG_IN_DATA			0x10
#define CX4_ACCESS_REG_OUT_DATA			0x10

/* ---- Names ------------------------------------------------------------------------------- */
/* The opcode's name as in the PRM / [ifc] (without the MLX5_CMD_OP_ prefix), or NULL. */
static inline const char *cx4_cmd_opcode_name(uint16_t op)
{
	switch (op) {
#define CX4_OPNAME(x) case CX4_CMD_OP_##x: return #x
	CX4_OPNAME(QUERY_HCA_CAP); CX4_OPNAME(QUERY_ADAPTER); CX4_OPNAME(INIT_HCA);
	CX4_OPNAME(TEARDOWN_HCA); CX4_OPNAME(ENABLE_HCA); CX4_OPNAME(DISABLE_HCA);
	CX4_OPNAME(QUERY_PAGES); CX4_OPNAME(MANAGE_PAGES); CX4_OPNAME(SET_HCA_CAP);
	CX4_OPNAME(QUERY_ISSI); CX4_OPNAME(SET_ISSI); CX4_OPNAME(SET_DRIVER_VERSION);
	CX4_OPNAME(CREATE_MKEY); CX4_OPNAME(QUERY_MKEY); CX4_OPNAME(DESTROY_MKEY);
	CX4_OPNAME(QUERY_SPECIAL_CONTEXTS); CX4_OPNAME(PAGE_FAULT_RESUME);
	CX4_OPNAME(CREATE_EQ); CX4_OPNAME(DESTROY_EQ); CX4_OPNAME(QUERY_EQ);
	CX4_OPNAME(GEN_EQE); CX4_OPNAME(CREATE_CQ); CX4_OPNAME(DESTROY_CQ);
	CX4_OPNAME(QUERY_CQ); CX4_OPNAME(MODIFY_CQ); CX4_OPNAME(CREATE_QP);
	CX4_OPNAME(DESTROY_QP); CX4_OPNAME(RST2INIT_QP); CX4_OPNAME(INIT2RTR_QP);
	CX4_OPNAME(RTR2RTS_QP); CX4_OPNAME(RTS2RTS_QP); CX4_OPNAME(SQERR2RTS_QP);
	CX4_OPNAME(2ERR_QP); CX4_OPNAME(2RST_QP); CX4_OPNAME(QUERY_QP); CX4_OPNAME(SQD_RTS_QP);
	CX4_OPNAME(MAD_IFC); CX4_OPNAME(INIT2INIT_QP); CX4_OPNAME(CREATE_PSV);
	CX4_OPNAME(DESTROY_PSV); CX4_OPNAME(CREATE_SRQ); CX4_OPNAME(DESTROY_SRQ);
	CX4_OPNAME(QUERY_SRQ); CX4_OPNAME(ARM_RQ); CX4_OPNAME(CREATE_XRC_SRQ);
	CX4_OPNAME(DESTROY_XRC_SRQ); CX4_OPNAME(QUERY_XRC_SRQ); CX4_OPNAME(ARM_XRC_SRQ);
	CX4_OPNAME(CREATE_DCT); CX4_OPNAME(DESTROY_DCT); CX4_OPNAME(DRAIN_DCT);
	CX4_OPNAME(QUERY_DCT); CX4_OPNAME(ARM_DCT_FOR_KEY_VIOLATION);
	CX4_OPNAME(QUERY_VPORT_STATE); CX4_OPNAME(MODIFY_VPORT_STATE);
	CX4_OPNAME(QUERY_ESW_VPORT_CONTEXT); CX4_OPNAME(MODIFY_ESW_VPORT_CONTEXT);
	CX4_OPNAME(QUERY_NIC_VPORT_CONTEXT); CX4_OPNAME(MODIFY_NIC_VPORT_CONTEXT);
	CX4_OPNAME(QUERY_ROCE_ADDRESS); CX4_OPNAME(SET_ROCE_ADDRESS);
	CX4_OPNAME(QUERY_HCA_VPORT_CONTEXT); CX4_OPNAME(MODIFY_HCA_VPORT_CONTEXT);
	CX4_OPNAME(QUERY_HCA_VPORT_GID); CX4_OPNAME(QUERY_HCA_VPORT_PKEY);
	CX4_OPNAME(QUERY_VPORT_COUNTER); CX4_OPNAME(ALLOC_Q_COUNTER);
	CX4_OPNAME(DEALLOC_Q_COUNTER); CX4_OPNAME(QUERY_Q_COUNTER); CX4_OPNAME(ALLOC_PD);
	CX4_OPNAME(DEALLOC_PD); CX4_OPNAME(ALLOC_UAR); CX4_OPNAME(DEALLOC_UAR);
	CX4_OPNAME(CONFIG_INT_MODERATION); CX4_OPNAME(ACCESS_REG); CX4_OPNAME(ATTACH_TO_MCG);
	CX4_OPNAME(DETACH_FROM_MCG); CX4_OPNAME(GET_DROPPED_PACKET_LOG);
	CX4_OPNAME(QUERY_MAD_DEMUX); CX4_OPNAME(SET_MAD_DEMUX); CX4_OPNAME(NOP);
	CX4_OPNAME(ALLOC_XRCD); CX4_OPNAME(DEALLOC_XRCD); CX4_OPNAME(ALLOC_TRANSPORT_DOMAIN);
	CX4_OPNAME(DEALLOC_TRANSPORT_DOMAIN); CX4_OPNAME(QUERY_CONG_STATUS);
	CX4_OPNAME(MODIFY_CONG_STATUS); CX4_OPNAME(QUERY_CONG_PARAMS);
	CX4_OPNAME(MODIFY_CONG_PARAMS); CX4_OPNAME(QUERY_CONG_STATISTICS);
	CX4_OPNAME(ADD_VXLAN_UDP_DPORT); CX4_OPNAME(DELETE_VXLAN_UDP_DPORT);
	CX4_OPNAME(SET_L2_TABLE_ENTRY); CX4_OPNAME(QUERY_L2_TABLE_ENTRY);
	CX4_OPNAME(DELETE_L2_TABLE_ENTRY); CX4_OPNAME(SET_WOL_ROL); CX4_OPNAME(QUERY_WOL_ROL);
	CX4_OPNAME(CREATE_TIR); CX4_OPNAME(MODIFY_TIR); CX4_OPNAME(DESTROY_TIR);
	CX4_OPNAME(QUERY_TIR); CX4_OPNAME(CREATE_SQ); CX4_OPNAME(MODIFY_SQ);
	CX4_OPNAME(DESTROY_SQ); CX4_OPNAME(QUERY_SQ); CX4_OPNAME(CREATE_RQ);
	CX4_OPNAME(MODIFY_RQ); CX4_OPNAME(DESTROY_RQ); CX4_OPNAME(QUERY_RQ);
	CX4_OPNAME(CREATE_RMP); CX4_OPNAME(MODIFY_RMP); CX4_OPNAME(DESTROY_RMP);
	CX4_OPNAME(QUERY_RMP); CX4_OPNAME(CREATE_TIS); CX4_OPNAME(MODIFY_TIS);
	CX4_OPNAME(DESTROY_TIS); CX4_OPNAME(QUERY_TIS); CX4_OPNAME(CREATE_RQT);
	CX4_OPNAME(MODIFY_RQT); CX4_OPNAME(DESTROY_RQT); CX4_OPNAME(QUERY_RQT);
	CX4_OPNAME(SET_FLOW_TABLE_ROOT); CX4_OPNAME(CREATE_FLOW_TABLE);
	CX4_OPNAME(DESTROY_FLOW_TABLE); CX4_OPNAME(QUERY_FLOW_TABLE);
	CX4_OPNAME(CREATE_FLOW_GROUP); CX4_OPNAME(DESTROY_FLOW_GROUP);
	CX4_OPNAME(QUERY_FLOW_GROUP); CX4_OPNAME(SET_FLOW_TABLE_ENTRY);
	CX4_OPNAME(QUERY_FLOW_TABLE_ENTRY); CX4_OPNAME(DELETE_FLOW_TABLE_ENTRY);
	CX4_OPNAME(ALLOC_FLOW_COUNTER); CX4_OPNAME(DEALLOC_FLOW_COUNTER);
	CX4_OPNAME(QUERY_FLOW_COUNTER); CX4_OPNAME(MODIFY_FLOW_TABLE);
#undef CX4_OPNAME
	default:
		return NULL;
	}
}

/* Command status text as Linux cmd_status_str() prints it. */
static inline const char *cx4_cmd_status_str(uint8_t status)
{
	switch (status) {
	case CX4_CMD_STAT_OK:			return "OK";
	case CX4_CMD_STAT_INT_ERR:		return "internal error";
	case CX4_CMD_STAT_BAD_OP_ERR:		return "bad operation";
	case CX4_CMD_STAT_BAD_PARAM_ERR:	return "bad parameter";
	case CX4_CMD_STAT_BAD_SYS_STATE_ERR:	return "bad system state";
	case CX4_CMD_STAT_BAD_RES_ERR:		return "bad resource";
	case CX4_CMD_STAT_RES_BUSY:		return "resource busy";
	case CX4_CMD_STAT_LIM_ERR:		return "limits exceeded";
	case CX4_CMD_STAT_BAD_RES_STATE_ERR:	return "bad resource state";
	case CX4_CMD_STAT_IX_ERR:		return "bad index";
	case CX4_CMD_STAT_NO_RES_ERR:		return "no resources";
	case CX4_CMD_STAT_BAD_INP_LEN_ERR:	return "bad input length";
	case CX4_CMD_STAT_BAD_OUTP_LEN_ERR:	return "bad output length";
	case CX4_CMD_STAT_BAD_QP_STATE_ERR:	return "bad QP state";
	case CX4_CMD_STAT_BAD_PKT_ERR:		return "bad packet (discarded)";
	case CX4_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR: return "bad size too many outstanding CQEs";
	default:				return "unknown status";
	}
}

/* Delivery status text as Linux deliv_status_to_str() prints it (typo included). */
static inline const char *cx4_cmd_delivery_str(uint8_t status)
{
	switch (status) {
	case 0x00: return "no errors";
	case 0x01: return "signature error";
	case 0x02: return "token error";
	case 0x03: return "bad block number";
	case 0x04: return "output pointer not aligned to block size";
	case 0x05: return "input pointer not aligned to block size";
	case 0x06: return "firmware internal error";
	case 0x07: return "command input length error";
	case 0x08: return "command ouput length error";
	case 0x09: return "reserved fields not cleared";
	case 0x10: return "bad command descriptor type";
	default:   return "unknown status code";
	}
}

#endif /* CX4_PRM_CMD_H */
