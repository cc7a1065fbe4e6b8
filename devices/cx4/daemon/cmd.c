// SPDX-License-Identifier: MIT
/*
 * The ConnectX-4 command interface (PRM "Command Interface"; Linux mlx5/core/cmd.c):
 *
 *  - the command queue is one 4 KB page of 2^log_cmdq_size entries of 2^log_cmdq_stride
 *    bytes, its address written to init segment 0x10 (high) then 0x14 (low, latches);
 *  - a command fills an entry (type 7, lengths, the first 16 input bytes inline), chains
 *    512-byte mailbox blocks for the rest of the input and for the output (next pointer,
 *    block number, token in every block), sets the ownership bit, signs the entry and rings
 *    the doorbell (init segment 0x18, bit = slot);
 *  - the device executes it, writes the output and clears ownership; delivery status is in
 *    the entry's status byte, command status and syndrome in the first 8 output bytes.
 *
 * Slot 0 carries the daemon's commands; slot N-1 the MANAGE_PAGES answers to page requests
 * that arrive while slot 0 waits (firmware may need pages to finish a command), as rdma-core
 * mlx5_vfio does with its dedicated page-request slot.
 *
 * Waiting: a short spin on the ownership bit, then sleep on the command EQ's interrupt (after
 * the command EQ exists) or in growing naps. A command that does not complete within 60 s
 * (Linux MLX5_CMD_TIMEOUT_MSEC) marks the device dead: nothing waits forever.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cx4d.h"

#define CMD_TIMEOUT_MS	60000
#define CMD_SPINS	2000

static inline uint8_t *slot_entry(struct cx4d *d, unsigned int slot)
{
	return d->cmdq.va + ((size_t)slot << d->log_cmdq_stride);
}

static unsigned int page_slot(struct cx4d *d)
{
	return (1u << d->log_cmdq_size) - 1;
}

void cx4d_cmd_set_header(void *in, uint16_t opcode, uint16_t op_mod)
{
	cx4_set(in, CX4_CMD_IN_OPCODE, opcode);
	cx4_set(in, CX4_CMD_IN_OP_MOD, op_mod);
}

int cx4d_cmd_init(struct cx4d *d)
{
	uint32_t l_sz = cx4_mmio_read32(&d->bus->bar0, CX4_FLD_OFF(CX4_ISEG_CMDQ_ADDR_L_SZ));
	int err;

	/* [iseg] 0x14: log_cmdq_size [7:4], log_cmdq_stride [3:0] */
	d->log_cmdq_size = (l_sz >> CX4_FLD_SHIFT(CX4_ISEG_LOG_CMDQ_SIZE)) &
			   cx4_fld_mask(CX4_ISEG_LOG_CMDQ_SIZE);
	d->log_cmdq_stride = (l_sz >> CX4_FLD_SHIFT(CX4_ISEG_LOG_CMDQ_STRIDE)) &
			     cx4_fld_mask(CX4_ISEG_LOG_CMDQ_STRIDE);
	/* Linux mlx5_cmd_init / rdma-core mlx5_vfio_init_cmd refuse the same */
	if ((1u << d->log_cmdq_size) > CX4_CMDQ_MAX_ENTRIES ||
	    d->log_cmdq_size + d->log_cmdq_stride > 12 || d->log_cmdq_stride < 6) {
		cx4d_log(d, "command queue of 2^%u entries of 2^%u bytes is not supported",
			 d->log_cmdq_size, d->log_cmdq_stride);
		return EIO;
	}
	err = cx4d_dma_alloc(d, CX4D_PAGE, &d->cmdq);
	if (err)
		return err;
	/* high word first, the low word latches the address ([iseg] CX4_ISEG_CMDQ_ADDR_L_SZ) */
	cx4_mmio_write32(&d->bus->bar0, CX4_FLD_OFF(CX4_ISEG_CMDQ_ADDR_H), d->cmdq.iova >> 32);
	cx4_mmio_write32(&d->bus->bar0, CX4_FLD_OFF(CX4_ISEG_CMDQ_ADDR_L_SZ),
			 (uint32_t)d->cmdq.iova & 0xfffff000u);
	d->token = 0;
	return 0;
}

void cx4d_cmd_fini(struct cx4d *d)
{
	for (unsigned int s = 0; s < CX4_CMDQ_MAX_ENTRIES; s++) {
		/* the mailbox memory itself goes with cx4d_dma_fini() */
		free(d->slot[s].in);
		free(d->slot[s].out);
		d->slot[s].in = d->slot[s].out = NULL;
		d->slot[s].nin = d->slot[s].nout = 0;
	}
	memset(&d->cmdq, 0, sizeof(d->cmdq));
}

/*
 * Make sure a chain has n mailboxes. Linux allocates blocks from a dma_pool of 1 KB-aligned
 * 0x240-byte blocks ([cmd.c] mlx5_cmd_init); we do the same, four to a page.
 */
static int grow_chain(struct cx4d *d, struct cx4d_mbox **chain, unsigned int *have,
		      unsigned int n)
{
	struct cx4d_mbox *m;

	if (n <= *have)
		return 0;
	m = realloc(*chain, sizeof(*m) * ((n + 3) & ~3u));
	if (!m)
		return ENOMEM;
	*chain = m;
	while (*have < n) {
		struct cx4d_dma page;
		int err = cx4d_dma_alloc(d, CX4D_PAGE, &page);

		if (err)
			return err;
		for (unsigned int k = 0; k < 4; k++) {
			m[*have + k].va = page.va + k * CX4_MAILBOX_ALIGN;
			m[*have + k].iova = page.iova + k * CX4_MAILBOX_ALIGN;
		}
		*have += 4;
	}
	return 0;
}

/* Chain blocks 0..n-1: next pointers, block numbers and the token ([iseg] mailbox). */
static void link_chain(struct cx4d_mbox *m, unsigned int n, uint8_t token)
{
	for (unsigned int i = 0; i < n; i++) {
		memset(m[i].va, 0, CX4_MAILBOX_SIZE);
		cx4_set64(m[i].va, CX4_MAILBOX_NEXT_PTR, i + 1 < n ? m[i + 1].iova : 0);
		cx4_set(m[i].va, CX4_MAILBOX_BLOCK_NUMBER, i);
		cx4_set(m[i].va, CX4_MAILBOX_TOKEN, token);
	}
}

static const char *status_text(uint8_t st)
{
	return cx4_cmd_status_str(st);
}

/* Linux cmd_status_to_err() */
static int status_to_errno(uint8_t st)
{
	switch (st) {
	case CX4_CMD_STAT_OK: return 0;
	case CX4_CMD_STAT_INT_ERR: return EIO;
	case CX4_CMD_STAT_BAD_OP_ERR: return EINVAL;
	case CX4_CMD_STAT_BAD_PARAM_ERR: return EINVAL;
	case CX4_CMD_STAT_BAD_SYS_STATE_ERR: return EIO;
	case CX4_CMD_STAT_BAD_RES_ERR: return EINVAL;
	case CX4_CMD_STAT_RES_BUSY: return EBUSY;
	case CX4_CMD_STAT_LIM_ERR: return ENOMEM;
	case CX4_CMD_STAT_BAD_RES_STATE_ERR: return EINVAL;
	case CX4_CMD_STAT_IX_ERR: return EINVAL;
	case CX4_CMD_STAT_NO_RES_ERR: return EAGAIN;
	case CX4_CMD_STAT_BAD_INP_LEN_ERR: return EIO;
	case CX4_CMD_STAT_BAD_OUTP_LEN_ERR: return EIO;
	case CX4_CMD_STAT_BAD_QP_STATE_ERR: return EINVAL;
	case CX4_CMD_STAT_BAD_PKT_ERR: return EINVAL;
	case CX4_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR: return EINVAL;
	default: return EIO;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until the device hands the entry back (ownership bit 0). */
static int wait_done(struct cx4d *d, uint8_t *entry)
{
	volatile uint8_t *own = entry + CX4_CMD_STATUS_OWN_BYTE;
	uint64_t start = 0;
	unsigned int nap_us = 10;

	for (unsigned int spins = 0;; spins++) {
		if (!(*own & 1)) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			return 0;
		}
		if (spins < CMD_SPINS) {
			__builtin_ia32_pause();
			continue;
		}
		if (!start)
			start = now_ms();
		else if (now_ms() - start > CMD_TIMEOUT_MS)
			return ETIMEDOUT;
		if (d->cmd_events && d->cmd_depth == 1) {
			/* sleep on the command EQ; serve page requests meanwhile */
			cx4d_eq_poll_while_waiting(d, 10);
		} else {
			usleep(nap_us);
			if (nap_us < 1000)
				nap_us *= 2;
		}
	}
}

static int exec(struct cx4d *d, const void *in, size_t inlen, void *out, size_t outlen,
		uint8_t *status_out, bool quiet)
{
	unsigned int slot = d->cmd_depth ? page_slot(d) : 0;
	struct cx4d_cmd_slot *s = &d->slot[slot];
	uint8_t *e = slot_entry(d, slot);
	unsigned int nin = cx4_cmd_mailbox_count(inlen), nout = cx4_cmd_mailbox_count(outlen);
	uint16_t opcode = cx4_get(in, CX4_CMD_IN_OPCODE);
	uint8_t token, deliv, st;
	uint32_t synd;
	int err;

	if (d->dead)
		return EIO;
	if (inlen < CX4_CMD_HDR_SIZE || outlen < CX4_CMD_HDR_SIZE || s->busy)
		return EINVAL;
	if (d->cmd_depth && slot == 0)
		return EBUSY;
	err = grow_chain(d, &s->in, &s->nin, nin);
	if (!err)
		err = grow_chain(d, &s->out, &s->nout, nout);
	if (err)
		return err;

	/* Linux alloc_token(): 1..255, never 0 */
	token = ++d->token;
	if (!token)
		token = d->token = 1;

	link_chain(s->in, nin, token);
	for (unsigned int i = 0; i < nin; i++) {
		size_t off = CX4_CMD_INLINE_SIZE + (size_t)i * CX4_MAILBOX_DATA_SIZE;
		size_t n = inlen - off < CX4_MAILBOX_DATA_SIZE ? inlen - off : CX4_MAILBOX_DATA_SIZE;

		memcpy(s->in[i].va, (const uint8_t *)in + off, n);
	}
	link_chain(s->out, nout, token);

	memset(e, 0, CX4_CMDQ_ENTRY_SIZE);
	cx4_set(e, CX4_CMD_TYPE, CX4_CMD_TYPE_PCIE);
	cx4_set(e, CX4_CMD_INPUT_LENGTH, inlen);
	cx4_set(e, CX4_CMD_OUTPUT_LENGTH, outlen);
	cx4_set64(e, CX4_CMD_INPUT_MAILBOX_PTR, nin ? s->in[0].iova : 0);
	cx4_set64(e, CX4_CMD_OUTPUT_MAILBOX_PTR, nout ? s->out[0].iova : 0);
	memcpy(e + CX4_CMD_INPUT_INLINE, in, inlen < 16 ? inlen : 16);
	cx4_set(e, CX4_CMD_TOKEN, token);
	cx4_set(e, CX4_CMD_OWNERSHIP, CX4_CMD_OWNER_HW);
	/* the entry signature: ~xor of the 64 bytes incl. ownership ([cmd.c] set_signature) */
	cx4_set(e, CX4_CMD_SIGNATURE, (uint8_t)~cx4_xor8(e, CX4_CMDQ_ENTRY_SIZE));

	if (d->trace)
		cx4d_trace_cmd(d, e, s->in, nin, inlen, true);
	s->busy = true;
	d->cmd_depth++;
	d->ncmds++;
	/* entry and mailboxes are in memory before the doorbell ([cmd.c] wmb()) */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cx4_mmio_write32(&d->bus->bar0, CX4_FLD_OFF(CX4_ISEG_CMD_DBELL), 1u << slot);

	err = wait_done(d, e);
	d->cmd_depth--;
	s->busy = false;
	if (err) {
		cx4d_log(d, "command %s (0x%x) timed out after %d s", cx4_cmd_opcode_name(opcode) ?
			 cx4_cmd_opcode_name(opcode) : "?", opcode, CMD_TIMEOUT_MS / 1000);
		cx4d_device_fatal(d, "command timeout");
		s->busy = true;	/* the device still owns the entry: never reuse it */
		return err;
	}
	if (d->trace)
		cx4d_trace_cmd(d, e, s->out, nout, outlen, false);

	deliv = cx4_get(e, CX4_CMD_STATUS);
	if (deliv != CX4_CMD_DELIVERY_OK) {
		cx4d_log(d, "command 0x%x: delivery status %s (0x%x)", opcode,
			 cx4_cmd_delivery_str(deliv), deliv);
		return EIO;
	}
	memcpy(out, e + CX4_CMD_OUTPUT_INLINE, outlen < 16 ? outlen : 16);
	for (unsigned int i = 0; i < nout; i++) {
		size_t off = CX4_CMD_INLINE_SIZE + (size_t)i * CX4_MAILBOX_DATA_SIZE;
		size_t n = outlen - off < CX4_MAILBOX_DATA_SIZE ? outlen - off :
								  CX4_MAILBOX_DATA_SIZE;

		memcpy((uint8_t *)out + off, s->out[i].va, n);
	}
	st = cx4_get(out, CX4_CMD_OUT_STATUS);
	synd = cx4_get(out, CX4_CMD_OUT_SYNDROME);
	if (status_out)
		*status_out = st;
	if (st != CX4_CMD_STAT_OK && !quiet)
		cx4d_log(d, "%s(0x%x) op_mod 0x%x failed, status %s(0x%x), syndrome 0x%x",
			 cx4_cmd_opcode_name(opcode) ? cx4_cmd_opcode_name(opcode) : "command",
			 opcode, cx4_get(in, CX4_CMD_IN_OP_MOD), status_text(st), st, synd);
	return status_to_errno(st);
}

int cx4d_cmd(struct cx4d *d, const void *in, size_t inlen, void *out, size_t outlen)
{
	return exec(d, in, inlen, out, outlen, NULL, false);
}

int cx4d_cmd_quiet(struct cx4d *d, const void *in, size_t inlen, void *out, size_t outlen,
		   uint8_t *status)
{
	return exec(d, in, inlen, out, outlen, status, true);
}
