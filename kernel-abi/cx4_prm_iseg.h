/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 BAR0: initialization segment, command queue entry, command mailbox, delivery
 * status, health syndromes and the UAR page doorbell offsets.
 *
 * Sources (abbreviations used in every comment of the cx4_prm_*.h headers):
 *   [PRM]      Mellanox Adapters PRM for ConnectX-4/ConnectX-4 Lx, Rev 0.40 (MLNX-15-4845),
 *              chapters "Initialization Segment", "Command Interface", "HCA Health".  The PDF
 *              could not be read here; the field names below are the PRM names as carried by
 *              the Linux/rdma-core headers.
 *   [dev.h]    Linux include/linux/mlx5/device.h: struct mlx5_init_seg, struct health_buffer,
 *              struct mlx5_cmd_layout, struct mlx5_cmd_prot_block, struct mlx5_eqe.
 *   [vfio.h]   rdma-core providers/mlx5/mlx5_vfio.h (same structs incl. health.rfr) and
 *              mlx5_vfio.c (cmdif_rev check, nic_interface, health sensors).
 *   [cmd.c]    Linux drivers/net/ethernet/mellanox/mlx5/core/cmd.c (delivery status names,
 *              token/signature handling, 1 KB mailbox pool alignment).
 *   [ifc]      Linux include/linux/mlx5/mlx5_ifc.h, struct mlx5_ifc_<name>_bits.
 *   [rc-ifc]   rdma-core providers/mlx5/mlx5_ifc.h.
 *   [dv]       rdma-core /usr/include/infiniband/mlx5dv.h (Debian libibverbs-dev 44.0).
 *   [snabb]    Snabb src/apps/mellanox/connectx.lua (and the seed connectx4.lua).
 *   [trace]    tests/cx4/data/mlx5_core-trace-cx4lx.txt.gz: Linux 4.4 mlx5_core,
 *              CX4 Lx FW 14.12.1220 (Snabb's src/apps/mellanox/trace-mlx5_core.txt.gz).
 * docs/cx4-prm.md lists each layout with its source and every guess.
 */
#ifndef CX4_PRM_ISEG_H
#define CX4_PRM_ISEG_H

#include "cx4_prm_fld.h"

/* ---- PCI identity (rdma-core providers/mlx5/mlx5.c hca_table; [snabb] mlx_types) ---------- */
#define CX4_PCI_VENDOR_MELLANOX		0x15b3
#define CX4_PCI_DEVICE_CX4		0x1013	/* ConnectX-4 "MT27700", FW major 12 */
#define CX4_PCI_DEVICE_CX4_VF		0x1014
#define CX4_PCI_DEVICE_CX4LX		0x1015	/* ConnectX-4 Lx, FW 14.x ([trace]) */
#define CX4_PCI_DEVICE_CX4LX_VF		0x1016

/* ---- Initialization segment: BAR0 offset 0 ([dev.h]/[vfio.h] struct mlx5_init_seg) ------- */
#define CX4_ISEG_SIZE			0x2010	/* 0x0000..0x200F, spans BAR0 pages 0-2 */

#define CX4_ISEG_FW_REV_MINOR		CX4_FLD(0x000, 16, 16)	/* fw_rev[31:16] */
#define CX4_ISEG_FW_REV_MAJOR		CX4_FLD(0x000, 0, 16)	/* fw_rev[15:0] */
#define CX4_ISEG_CMDIF_REV		CX4_FLD(0x004, 16, 16)	/* cmdif_rev_fw_sub[31:16] */
#define CX4_ISEG_FW_REV_SUBMINOR	CX4_FLD(0x004, 0, 16)	/* cmdif_rev_fw_sub[15:0] */
#define CX4_ISEG_CMDQ_ADDR_H		CX4_FLD32(0x010)	/* cmdq_addr_h: address[63:32] */
/*
 * cmdq_addr_l_sz: address[31:12] (the queue is 4 KB aligned), nic_interface [10:8],
 * log_cmdq_size [7:4] and log_cmdq_stride [3:0] (both read-only).  The device latches the
 * queue address on the write to 0x14, so drivers write 0x10 first ([vfio.h] mlx5_vfio_init_cmd,
 * [snabb]).  Linux/rdma-core refuse 1 << log_cmdq_size > 32 and size + stride > 12 (4 KB).
 */
#define CX4_ISEG_CMDQ_ADDR_L_SZ		CX4_FLD32(0x014)
#define CX4_ISEG_CMDQ_ADDR_L		CX4_FLD(0x014, 12, 20)	/* address[31:12] */
#define CX4_ISEG_NIC_INTERFACE		CX4_FLD(0x014, 8, 3)
#define CX4_ISEG_LOG_CMDQ_SIZE		CX4_FLD(0x014, 4, 4)
#define CX4_ISEG_LOG_CMDQ_STRIDE	CX4_FLD(0x014, 0, 4)
#define CX4_ISEG_CMD_DBELL		CX4_FLD32(0x018)	/* write 1 << slot */
#define CX4_ISEG_INITIALIZING		CX4_FLD(0x1fc, 31, 1)	/* 1 while FW boots: poll to 0 */
/* [snabb] reads 0x1FC[26:24] as "nic_interface_supported"; Linux/rdma-core do not use it. */
#define CX4_ISEG_NIC_INTERFACE_SUPPORTED CX4_FLD(0x1fc, 24, 3)

/* nic_interface values ([vfio.h] MLX5_NIC_IFC_*, Linux health.c) */
#define CX4_NIC_IFC_FULL_DRIVER		0
#define CX4_NIC_IFC_DISABLED		1
#define CX4_NIC_IFC_NO_DRAM_NIC		2
#define CX4_NIC_IFC_SW_RESET		7

/* Health buffer, 0x200..0x23F ([vfio.h] struct health_buffer) */
#define CX4_ISEG_HEALTH			0x200
#define CX4_ISEG_HEALTH_SIZE		0x40
#define CX4_ISEG_ASSERT_VAR(i)		CX4_FLD32(0x200 + 4 * (i))	/* i = 0..4 */
#define CX4_ISEG_ASSERT_EXIT_PTR	CX4_FLD32(0x220)
#define CX4_ISEG_ASSERT_CALLRA		CX4_FLD32(0x224)
#define CX4_ISEG_HEALTH_FW_VER		CX4_FLD32(0x230)	/* 0xFFFFFFFF: device gone */
#define CX4_ISEG_HEALTH_HW_ID		CX4_FLD32(0x234)
#define CX4_ISEG_HEALTH_RFR		CX4_FLD(0x238, 31, 1)	/* "recovery flow required" */
#define CX4_ISEG_HEALTH_IRISC_INDEX	CX4_FLD(0x23c, 24, 8)	/* byte 0x23C */
#define CX4_ISEG_HEALTH_SYND		CX4_FLD(0x23c, 16, 8)	/* byte 0x23D */
#define CX4_ISEG_HEALTH_EXT_SYND	CX4_FLD(0x23c, 0, 16)	/* bytes 0x23E..0x23F */

#define CX4_ISEG_INTERNAL_TIMER_H	CX4_FLD32(0x1000)	/* free-running, CQE timestamps */
#define CX4_ISEG_INTERNAL_TIMER_L	CX4_FLD32(0x1004)
/*
 * health_counter: a heartbeat in [23:0] that FW increments; Linux/rdma-core declare the
 * device dead when it stops moving.  [snabb] (and mlx5cmd) read 0x1010[31:24] as the health
 * syndrome, which is wrong: the syndrome is byte 0x23D.  A model keeps [31:24] at 0.
 */
#define CX4_ISEG_HEALTH_COUNTER		CX4_FLD(0x1010, 0, 24)
#define CX4_ISEG_IEEE1588_CLK		CX4_FLD64(0x2000)
#define CX4_ISEG_IEEE1588_CLK_TYPE	CX4_FLD32(0x2008)
#define CX4_ISEG_CLR_INTX		CX4_FLD32(0x200c)	/* INTx clear (not 0x100C) */

#define CX4_CMDIF_REV			5	/* the only revision Linux/rdma-core accept */

/* Health syndromes in CX4_ISEG_HEALTH_SYND ([vfio.c] MLX5_HEALTH_SYNDR_*, Linux health.c) */
#define CX4_HEALTH_SYND_FW_ERR			0x01
#define CX4_HEALTH_SYND_IRISC_ERR		0x07
#define CX4_HEALTH_SYND_HW_UNRECOVERABLE_ERR	0x08
#define CX4_HEALTH_SYND_CRC_ERR			0x09
#define CX4_HEALTH_SYND_FETCH_PCI_ERR		0x0a
#define CX4_HEALTH_SYND_HW_FTL_ERR		0x0b
#define CX4_HEALTH_SYND_ASYNC_EQ_OVERRUN_ERR	0x0c
#define CX4_HEALTH_SYND_EQ_ERR			0x0d
#define CX4_HEALTH_SYND_EQ_INV			0x0e
#define CX4_HEALTH_SYND_FFSER_ERR		0x0f
#define CX4_HEALTH_SYND_HIGH_TEMP		0x10

/* ---- Command queue entry, 0x40 bytes ([dev.h] struct mlx5_cmd_layout) ----------------------- */
#define CX4_CMDQ_ENTRY_SIZE		0x40
#define CX4_CMDQ_MAX_ENTRIES		32	/* Linux MLX5_MAX_COMMANDS: one doorbell bit each */
#define CX4_CMD_INLINE_SIZE		16	/* input/output bytes carried in the entry itself */

#define CX4_CMD_TYPE			CX4_FLD(0x00, 24, 8)	/* must be CX4_CMD_TYPE_PCIE */
#define CX4_CMD_INPUT_LENGTH		CX4_FLD32(0x04)	/* bytes, the 16 inline ones included */
/* Mailbox pointers: 64-bit bus address of the first block of the chain, 0 when none. */
#define CX4_CMD_INPUT_MAILBOX_PTR	CX4_FLD64(0x08)
#define CX4_CMD_INPUT_INLINE		0x10	/* 16 bytes: input bytes 0x00..0x0F */
#define CX4_CMD_OUTPUT_INLINE		0x20	/* 16 bytes: output bytes 0x00..0x0F */
#define CX4_CMD_OUTPUT_MAILBOX_PTR	CX4_FLD64(0x30)
#define CX4_CMD_OUTPUT_LENGTH		CX4_FLD32(0x38)
#define CX4_CMD_TOKEN			CX4_FLD(0x3c, 24, 8)	/* byte 0x3C, also in blocks */
#define CX4_CMD_SIGNATURE		CX4_FLD(0x3c, 16, 8)	/* byte 0x3D */
#define CX4_CMD_STATUS			CX4_FLD(0x3c, 1, 7)	/* 0x3F [7:1]: delivery status */
#define CX4_CMD_OWNERSHIP		CX4_FLD(0x3c, 0, 1)	/* byte 0x3F [0]: 1 = owned by HW */
#define CX4_CMD_STATUS_OWN_BYTE		0x3f

#define CX4_CMD_TYPE_PCIE		0x07	/* MLX5_PCI_CMD_XPORT */
#define CX4_CMD_OWNER_SW		0
#define CX4_CMD_OWNER_HW		1

/*
 * Delivery status (entry byte 0x3F [7:1]) as [cmd.c] lists it (MLX5_CMD_DELIVERY_STAT_*,
 * deliv_status_to_str).  0x0A..0x0F are unused.
 */
#define CX4_CMD_DELIVERY_OK			0x00
#define CX4_CMD_DELIVERY_SIGNAT_ERR		0x01	/* "signature error" */
#define CX4_CMD_DELIVERY_TOK_ERR		0x02	/* "token error" */
#define CX4_CMD_DELIVERY_BAD_BLK_NUM_ERR	0x03	/* "bad block number" */
#define CX4_CMD_DELIVERY_OUT_PTR_ALIGN_ERR	0x04	/* output pointer not aligned */
#define CX4_CMD_DELIVERY_IN_PTR_ALIGN_ERR	0x05	/* input pointer not aligned */
#define CX4_CMD_DELIVERY_FW_ERR			0x06	/* "firmware internal error" */
#define CX4_CMD_DELIVERY_IN_LENGTH_ERR		0x07	/* "command input length error" */
#define CX4_CMD_DELIVERY_OUT_LENGTH_ERR		0x08	/* "command ouput length error" (sic) */
#define CX4_CMD_DELIVERY_RES_FLD_NOT_CLR_ERR	0x09	/* "reserved fields not cleared" */
#define CX4_CMD_DELIVERY_CMD_DESCR_ERR		0x10	/* "bad command descriptor type" */

/* ---- Command mailbox block, 0x240 bytes ([dev.h] struct mlx5_cmd_prot_block) --------------- */
#define CX4_MAILBOX_SIZE		0x240
#define CX4_MAILBOX_DATA_SIZE		0x200	/* data bytes per block */
/*
 * Alignment of a mailbox (and of every pointer to one).  Linux allocates blocks from a
 * dma_pool aligned to roundup_pow_of_two(0x240) = 1 KB ([cmd.c] mlx5_cmd_init) and the
 * [trace] pointers end in 0x000/0x400/0x800/0xC00; rdma-core and Snabb use 4 KB.  The PRM
 * text on the exact requirement was not available: 1 KB is our inference (docs/cx4-prm.md).
 */
#define CX4_MAILBOX_ALIGN		0x400
#define CX4_MAILBOX_DATA		0x000	/* 512 bytes of message data */
#define CX4_MAILBOX_NEXT_PTR		CX4_FLD64(0x230)	/* next block, 0 in the last */
#define CX4_MAILBOX_BLOCK_NUMBER	CX4_FLD32(0x238)	/* 0, 1, 2... in chain order */
#define CX4_MAILBOX_TOKEN		CX4_FLD(0x23c, 16, 8)	/* byte 0x23D: = entry token */
#define CX4_MAILBOX_CTRL_SIGNATURE	CX4_FLD(0x23c, 8, 8)	/* byte 0x23E */
#define CX4_MAILBOX_SIGNATURE		CX4_FLD(0x23c, 0, 8)	/* byte 0x23F */

/* Mailbox blocks a message of `len` bytes needs (the first 16 bytes ride in the entry). */
static inline uint32_t cx4_cmd_mailbox_count(uint32_t len)
{
	return len <= CX4_CMD_INLINE_SIZE ? 0 :
	       (len - CX4_CMD_INLINE_SIZE + CX4_MAILBOX_DATA_SIZE - 1) / CX4_MAILBOX_DATA_SIZE;
}

/*
 * Signatures are 8-bit XORs, inverted ([cmd.c] xor8_buf/set_signature/calc_block_sig):
 *   entry sig        = ~xor(all 64 entry bytes, sig byte taken as 0, status_own as posted)
 *   block ctrl_sig   = ~xor(block bytes 0x200..0x23D)   (ctrl_sig and sig taken as 0)
 *   block sig        = ~xor(block bytes 0x000..0x23E)
 * A correct entry/block XORs to 0xFF over all its bytes.  Linux always signs the entry (the
 * [trace] shows it: ENABLE_HCA token 1 -> sig 0xFD) but leaves block signatures 0 unless
 * cmdif_checksum is enabled, which both Linux and rdma-core switch off.
 */
static inline uint8_t cx4_xor8(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint8_t x = 0;

	while (len--)
		x ^= *p++;
	return x;
}

/* ---- UAR pages ([dv] mlx5dv.h, rdma-core mlx5.h/cq.c/mlx5_vfio.c, Linux eq.c) ----------- */
/*
 * UAR page n is BAR0 + n * 4 KB (log_uar_page_sz = 0); the [trace] FW hands out UAR 0x10
 * first (pages 0..15 hold the init segment and are never allocated).
 */
#define CX4_UAR_PAGE_SIZE		0x1000
/* 64-bit CQ arm doorbell: hi = sn << 28 | cmd | ci[23:0], lo = cqn ([dv] MLX5_CQ_DOORBELL). */
#define CX4_UAR_CQ_DOORBELL		0x020
#define CX4_CQ_DB_REQ_NOT		(0u << 24)	/* [dv]: next completion */
#define CX4_CQ_DB_REQ_NOT_SOL		(1u << 24)	/* [dv]: solicited only */
/*
 * EQ doorbells, 32-bit value eqn << 24 | ci[23:0] ([rc-ifc] MLX5_EQ_DOORBEL_OFFSET = 0x40;
 * mlx5_vfio.c/Linux eq_update_ci write doorbell + (arm ? 0 : 2 dwords)).
 */
#define CX4_UAR_EQ_DOORBELL_ARM		0x040	/* update CI and re-arm */
#define CX4_UAR_EQ_DOORBELL_NOARM	0x048	/* update CI only */
/*
 * Send doorbell / BlueFlame registers: 0x800 + k * bf_reg_size, k = 0..3; bf_reg_size =
 * 1 << log_bf_reg_size (9 on the [trace] FW: 512 B, used as two 256 B halves alternately,
 * rdma-core bf->offset ^= 256).  An 8-byte doorbell carries WQE bytes 0..7 (ctrl seg dw0/dw1).
 */
#define CX4_UAR_BF_OFFSET		0x800	/* rdma-core MLX5_BF_OFFSET */
#define CX4_UAR_BF_REGS_PER_PAGE	4	/* Linux MLX5_BF_REGS_PER_PAGE */
#define CX4_UAR_NON_FP_BF_REGS_PER_PAGE	2	/* Linux MLX5_NON_FP_BF_REGS_PER_PAGE */

#define CX4_ADAPTER_PAGE_SHIFT		12	/* FW pages and PAS: 4 KB */
#define CX4_ADAPTER_PAGE_SIZE		(1u << CX4_ADAPTER_PAGE_SHIFT)

#endif /* CX4_PRM_ISEG_H */
