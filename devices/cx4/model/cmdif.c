// SPDX-License-Identifier: MIT
/*
 * The command interface ([PRM] "Command Interface"; [dev.h] mlx5_cmd_layout and
 * mlx5_cmd_prot_block; [cmd.c] delivery status and signatures).
 *
 * A driver fills a 64-byte entry of the command queue (type 7, input/output lengths, 16
 * inline bytes each way, mailbox pointers, token, ownership = 1) and rings 0x18 with
 * 1 << slot. The device reads the entry and the input mailbox chain (0x240-byte blocks: 512
 * data bytes, next pointer, block number, token), checks what the PRM says it checks and
 * answers a delivery status in status_own[7:1] when the message itself is malformed, or runs
 * the command and writes the output message (status, syndrome, data) to the output inline
 * bytes and the output chain. Ownership returns to software last; then, if an EQ asked for
 * command completions, a CMD EQE carries the slot bitmap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "../trace/cmd_trace.h"

/* Largest message the firmware accepts (an MTT list for a 16 GB region of 4 KB pages). */
#define MAX_MSG_LEN (64u << 20)

static const struct mcmd_desc *const tables[] = {
    cx4m_mcmd_hca,  cx4m_mcmd_res, cx4m_mcmd_eq,  cx4m_mcmd_cq,
    cx4m_mcmd_mkey, cx4m_mcmd_qp,  cx4m_mcmd_srq, cx4m_mcmd_vport,
};

static const struct mcmd_desc *find_cmd(uint16_t opcode)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct mcmd_desc *c = tables[t]; c->opcode; c++)
			if (c->opcode == opcode)
				return c;
	return NULL;
}

void cx4m_cmdif_reset(struct mdev *d)
{
	d->cmd_pending = 0;
}

/* A mailbox chain as the device walked it. */
struct chain {
	uint64_t *addr; /* bus address of each block */
	uint8_t *blk;	/* nblk * CX4_MAILBOX_SIZE bytes as read */
	uint32_t nblk;
};

static void chain_free(struct chain *c)
{
	free(c->addr);
	free(c->blk);
	memset(c, 0, sizeof(*c));
}

/*
 * Read the chain that carries a `len`-byte message; returns a delivery status. Checks: the
 * pointers are block aligned and readable (bad pointer), block numbers count 0, 1, 2...
 * (bad block number), every block carries the entry's token (token error).
 */
static int chain_read(struct mdev *d, uint64_t ptr, uint32_t len, uint8_t token, bool input,
		      struct chain *c)
{
	uint8_t bad_ptr =
	    input ? CX4_CMD_DELIVERY_IN_PTR_ALIGN_ERR : CX4_CMD_DELIVERY_OUT_PTR_ALIGN_ERR;
	uint32_t n = cx4_cmd_mailbox_count(len);

	memset(c, 0, sizeof(*c));
	if (!n)
		return CX4_CMD_DELIVERY_OK;
	c->addr = calloc(n, sizeof(*c->addr));
	c->blk = malloc((size_t)n * CX4_MAILBOX_SIZE);
	if (!c->addr || !c->blk)
		return CX4_CMD_DELIVERY_FW_ERR;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *b = c->blk + (size_t)i * CX4_MAILBOX_SIZE;

		if (!ptr || (ptr & (CX4_MAILBOX_ALIGN - 1)) ||
		    cx4m_dma_read(d, ptr, b, CX4_MAILBOX_SIZE))
			return bad_ptr;
		c->addr[i] = ptr;
		c->nblk = i + 1;
		if (cx4_get(b, CX4_MAILBOX_BLOCK_NUMBER) != i)
			return CX4_CMD_DELIVERY_BAD_BLK_NUM_ERR;
		if (cx4_get(b, CX4_MAILBOX_TOKEN) != token)
			return CX4_CMD_DELIVERY_TOK_ERR;
		ptr = cx4_get64(b, CX4_MAILBOX_NEXT_PTR);
	}
	return CX4_CMD_DELIVERY_OK;
}

/* Signatures are checked only when the driver enabled cmdif_checksum (3) in SET_HCA_CAP. */
static bool checksum_on(const struct mdev *d)
{
	return d->icm.boot_done &&
	       cx4_get(d->cap_cur[CX4_CAP_GENERAL], CX4_CAP_GEN_CMDIF_CHECKSUM) == 3;
}

static int check_signatures(const struct mdev *d, const uint8_t *entry, const struct chain *in)
{
	if (!checksum_on(d))
		return CX4_CMD_DELIVERY_OK;
	/*
	 * [cmd.c] set_signature/calc_block_sig: entry sig = ~xor of the entry, block ctrl_sig =
	 * ~xor of 0x200..0x23E (itself as 0), block sig = ~xor of 0x000..0x23E. So a correctly
	 * signed entry XORs to 0xFF, and so do a block's 0x200..0x23E and 0x000..0x23F.
	 */
	if (cx4_xor8(entry, CX4_CMDQ_ENTRY_SIZE) != 0xff)
		return CX4_CMD_DELIVERY_SIGNAT_ERR;
	for (uint32_t i = 0; i < in->nblk; i++) {
		const uint8_t *b = in->blk + (size_t)i * CX4_MAILBOX_SIZE;

		if (cx4_xor8(b + 0x200, 0x3f) != 0xff || cx4_xor8(b, CX4_MAILBOX_SIZE) != 0xff)
			return CX4_CMD_DELIVERY_SIGNAT_ERR;
	}
	return CX4_CMD_DELIVERY_OK;
}

static void trace_dump(struct mdev *d, const uint8_t *entry, const struct chain *c, bool input)
{
	const void *blocks_stack[64] = {0};
	const void **blocks = blocks_stack;
	struct cx4_trace_opts opts = {.flags = d->cfg.trace_flags & ~CX4_TRACE_RESIGN_OUTPUT};

	if (!d->cfg.cmd_trace)
		return;
	if (c->nblk > 64) {
		blocks = malloc(c->nblk * sizeof(*blocks));
		if (!blocks)
			return;
	}
	for (uint32_t i = 0; i < c->nblk; i++)
		blocks[i] = c->blk + (size_t)i * CX4_MAILBOX_SIZE;
	cx4_trace_dump(d->cfg.cmd_trace, entry, blocks, c->nblk, input, &opts);
	fflush(d->cfg.cmd_trace);
	if (blocks != blocks_stack)
		free(blocks);
}

static int state_ok(const struct mdev *d, uint8_t need)
{
	switch (need) {
	case MCMD_ANY:
		return 1;
	case MCMD_ENABLED:
		return d->hca != MHCA_DISABLED;
	case MCMD_BOOTED:
		return d->hca != MHCA_DISABLED && d->icm.boot_done;
	default:
		return d->hca == MHCA_INIT;
	}
}

/* Run one command message; fills out (status, syndrome, data). */
static void execute(struct mdev *d, struct mcmd *c)
{
	const struct mcmd_desc *desc;
	int status;

	c->opcode = (uint16_t)cx4_get(c->in, CX4_CMD_IN_OPCODE);
	c->op_mod = (uint16_t)cx4_get(c->in, CX4_CMD_IN_OP_MOD);
	desc = find_cmd(c->opcode);
	if (!desc)
		status = mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(c->opcode, 0xfff));
	else if (c->ilen < desc->in_min)
		status = mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, MSYND(c->opcode, 0xff0));
	else if (c->olen < desc->out_min)
		status = mcmd_err(c, CX4_CMD_STAT_BAD_OUTP_LEN_ERR, MSYND(c->opcode, 0xff1));
	else if (!state_ok(d, desc->state))
		status = mcmd_err(c, CX4_CMD_STAT_BAD_SYS_STATE_ERR, MSYND(c->opcode, 0xff2));
	else
		status = desc->fn(d, c);
	if (status != CX4_CMD_STAT_OK) {
		/* An error answer carries nothing but status and syndrome ([cmd.c]). */
		memset(c->out, 0, c->olen);
		cx4_set(c->out, CX4_CMD_OUT_SYNDROME, c->syndrome);
		if (d->cfg.log)
			cx4m_mdev_log(
			    d, "command %s(0x%x) op_mod 0x%x: status 0x%02x (%s), syndrome 0x%08x",
			    cx4_cmd_opcode_name(c->opcode) ? cx4_cmd_opcode_name(c->opcode) : "?",
			    c->opcode, c->op_mod, status, cx4_cmd_status_str((uint8_t)status),
			    c->syndrome);
	}
	cx4_set(c->out, CX4_CMD_OUT_STATUS, (uint32_t)status);
	d->stats.cmds++;
}

/* Serve one rung slot. */
static void run_slot(struct mdev *d, unsigned int slot)
{
	uint64_t eaddr = d->cmdq_iova + ((uint64_t)slot << MDEV_LOG_CMDQ_STRIDE);
	uint8_t entry[CX4_CMDQ_ENTRY_SIZE];
	struct chain cin = {0}, cout = {0};
	struct mcmd c = {0};
	uint8_t token, deliv;
	uint8_t *in = NULL, *out = NULL;

	if (cx4m_dma_read(d, eaddr, entry, sizeof(entry))) {
		/* The queue itself is not reachable: nothing can be answered. */
		cx4m_mdev_log(d, "command slot %u: entry at IOVA 0x%llx unreadable", slot,
			      (unsigned long long)eaddr);
		return;
	}
	if (!cx4_get(entry, CX4_CMD_OWNERSHIP))
		return; /* rung for an entry software still owns: nothing to do */
	token = (uint8_t)cx4_get(entry, CX4_CMD_TOKEN);
	c.ilen = cx4_get(entry, CX4_CMD_INPUT_LENGTH);
	c.olen = cx4_get(entry, CX4_CMD_OUTPUT_LENGTH);

	if (cx4_get(entry, CX4_CMD_TYPE) != CX4_CMD_TYPE_PCIE) {
		deliv = CX4_CMD_DELIVERY_CMD_DESCR_ERR;
	} else if (c.ilen < 8 || c.ilen > MAX_MSG_LEN) {
		deliv = CX4_CMD_DELIVERY_IN_LENGTH_ERR;
	} else if (c.olen < 8 || c.olen > MAX_MSG_LEN) {
		deliv = CX4_CMD_DELIVERY_OUT_LENGTH_ERR;
	} else if (entry[1] || entry[2] || entry[3] || entry[0x3e]) {
		deliv = CX4_CMD_DELIVERY_RES_FLD_NOT_CLR_ERR;
	} else {
		deliv = chain_read(d, cx4_get64(entry, CX4_CMD_INPUT_MAILBOX_PTR), c.ilen, token,
				   true, &cin);
		if (deliv == CX4_CMD_DELIVERY_OK)
			deliv = chain_read(d, cx4_get64(entry, CX4_CMD_OUTPUT_MAILBOX_PTR), c.olen,
					   token, false, &cout);
		if (deliv == CX4_CMD_DELIVERY_OK)
			deliv = check_signatures(d, entry, &cin);
	}
	trace_dump(d, entry, &cin, true);

	if (deliv == CX4_CMD_DELIVERY_OK) {
		in = calloc(1, c.ilen > 16 ? c.ilen : 16);
		out = calloc(1, c.olen > 16 ? c.olen : 16);
		if (!in || !out) {
			deliv = CX4_CMD_DELIVERY_FW_ERR;
		} else {
			memcpy(in, entry + CX4_CMD_INPUT_INLINE, c.ilen < 16 ? c.ilen : 16);
			for (uint32_t i = 0, at = 16; at < c.ilen; i++, at += CX4_MAILBOX_DATA_SIZE)
				memcpy(in + at, cin.blk + (size_t)i * CX4_MAILBOX_SIZE,
				       c.ilen - at < CX4_MAILBOX_DATA_SIZE ? c.ilen - at
									   : CX4_MAILBOX_DATA_SIZE);
			c.in = in;
			c.out = out;
			execute(d, &c);
			/* Output: 16 bytes inline, the rest to the data part of each block. */
			memcpy(entry + CX4_CMD_OUTPUT_INLINE, out, c.olen < 16 ? c.olen : 16);
			for (uint32_t i = 0, at = 16; at < c.olen;
			     i++, at += CX4_MAILBOX_DATA_SIZE) {
				uint32_t k = c.olen - at < CX4_MAILBOX_DATA_SIZE
						 ? c.olen - at
						 : CX4_MAILBOX_DATA_SIZE;
				uint8_t *b = cout.blk + (size_t)i * CX4_MAILBOX_SIZE;

				memcpy(b, out + at, k);
				if (cx4m_dma_write(d, cout.addr[i], b, k)) {
					deliv = CX4_CMD_DELIVERY_OUT_PTR_ALIGN_ERR;
					break;
				}
			}
		}
	}
	/* Output inline first, then status and ownership in one byte, last ([cmd.c]). */
	entry[CX4_CMD_STATUS_OWN_BYTE] = (uint8_t)(deliv << 1);
	if (cx4m_dma_write(d, eaddr + CX4_CMD_OUTPUT_INLINE, entry + CX4_CMD_OUTPUT_INLINE, 16) ==
	    0) {
		atomic_thread_fence(memory_order_release);
		cx4m_dma_write(d, eaddr + CX4_CMD_STATUS_OWN_BYTE, &entry[CX4_CMD_STATUS_OWN_BYTE],
			       1);
	}
	trace_dump(d, entry, &cout, false);
	if (deliv != CX4_CMD_DELIVERY_OK)
		cx4m_mdev_log(d, "command slot %u: delivery status 0x%02x (%s)", slot, deliv,
			      cx4_cmd_delivery_str(deliv));
	chain_free(&cin);
	chain_free(&cout);
	free(in);
	free(out);
	/* A command that reset the device has no completion event to give. */
	if (d->cmdq_valid)
		cx4m_eq_post_cmd(d, 1u << slot);
}

int cx4m_cmdif_run(struct mdev *d)
{
	uint32_t pend;
	int n = 0;

	if (!d->cmdq_valid || d->initializing || d->fatal ||
	    d->nic_interface != CX4_NIC_IFC_FULL_DRIVER || !d->cmd_pending)
		return 0;
	pend = d->cmd_pending;
	d->cmd_pending = 0;
	for (unsigned int slot = 0; slot < (1u << MDEV_LOG_CMDQ_SIZE); slot++) {
		if (!(pend & (1u << slot)))
			continue;
		run_slot(d, slot);
		n++;
		if (!d->cmdq_valid || d->fatal)
			break;
	}
	return n;
}
