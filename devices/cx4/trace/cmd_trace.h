/* SPDX-License-Identifier: MIT */
/*
 * cx4 command trace: print ConnectX-4 commands exactly as Linux mlx5_core's debug output
 * does (drivers/net/ethernet/mellanox/mlx5/core/cmd.c dump_command()/dump_buf(), Linux 4.4,
 * the kernel of tests/cx4/data/mlx5_core-trace-cx4lx.txt.gz), so a cx4d run can be diffed
 * against that trace line by line.
 *
 * Output, per dump (mlx5_core_dbg lines get opts->dbg_prefix, the kernel's
 * "mlx5_core <bdf>: <bdf>:<func>:<line>:(pid N): " which the dmesg capture also carries):
 *
 *	dump command QUERY_PAGES(0x107) INPUT
 *	000: 07000000 00000010 00000000 00000000	<- the 0x40-byte command queue entry
 *	010: 01070000 00000001 00000000 00000000
 *	020: 00000000 00000000 00000000 00000000
 *	030: 00000000 00000000 00000010 04fa0001
 *	<empty line>
 *	command block:					<- per mailbox block, 0x240 bytes,
 *	040: ...					   offsets keep counting
 *
 * Linux stops printing blocks once its running offset (0x40 for the entry + 0x240 per block)
 * reaches the message length, so messages of 0x11..0x40 bytes show no block at all and long
 * ones are cut short (MANAGE_PAGES of 0x19230 bytes: 179 of 202 blocks); we do the same.
 * tests/cx4/trace_decode.py prints the trace's dumps in this normalised form.
 */
#ifndef CX4_CMD_TRACE_H
#define CX4_CMD_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cx4_trace_flags {
	/* Name opcodes as the PRM does (QUERY_ISSI) instead of Linux 4.4's mlx5_command_str(). */
	CX4_TRACE_MODERN_NAMES	= 1u << 0,
	/* The MLX5_CMD_DATA debug-mask variant: only the inline data and the block data. */
	CX4_TRACE_DATA_ONLY	= 1u << 1,
	/*
	 * cx4_trace_dump_cmd() only: re-sign the OUTPUT entry over the output inline data (with
	 * ownership still 1), as the [trace] FW does after QUERY_PAGES; otherwise the entry keeps
	 * the signature the driver posted, as it does after every other command in the trace.
	 */
	CX4_TRACE_RESIGN_OUTPUT	= 1u << 2,
};

struct cx4_trace_opts {
	unsigned int flags;		/* enum cx4_trace_flags */
	const char *dbg_prefix;		/* mlx5_core_dbg lines' prefix or NULL */
};

/*
 * The opcode name Linux 4.4's mlx5_command_str() returns, including its quirks
 * ("MLX5_CMD_OP_ENABLE_HCA", "MLX5_CMD_OP_ACCESS_REG", and "unknown command opcode" for
 * QUERY_ISSI, SET_ISSI and every opcode the 4.4 table lacks).
 */
const char *cx4_trace_linux_cmd_str(uint16_t opcode);

/*
 * Print one dump_command() call from the bytes actually posted: `entry` is the 64-byte
 * command queue entry as it is in memory at the moment of the dump (before the doorbell for
 * INPUT, after ownership returned for OUTPUT), `blocks` the mailbox blocks (0x240 bytes each)
 * of the chain being dumped (the input chain for INPUT, the output chain for OUTPUT) in
 * chain order.  The message length comes from the entry.  Returns 0, -EINVAL for bad
 * arguments, or -EIO when writing to `f` failed.
 */
int cx4_trace_dump(FILE *f, const void *entry, const void *const *blocks, size_t nblocks,
		   bool input, const struct cx4_trace_opts *opts);

/* One message of a command, for cx4_trace_dump_cmd(). */
struct cx4_trace_msg {
	const void *data;		/* logical message: first byte = first inline byte */
	uint32_t len;			/* entry input_length / output_length */
	/*
	 * Bus addresses of the mailbox blocks in chain order, or NULL (pointers shown as 0).
	 * nmbox may exceed the blocks the message needs: Linux takes messages from a cache of
	 * longer chains, so the last block it uses still points to the next one (the [trace]'s
	 * SET_HCA_CAP input shows this).
	 */
	const uint64_t *mbox_addr;
	uint32_t nmbox;
};

/*
 * Rebuild the command queue entry and mailbox chain the way Linux 4.4 mlx5_core posts a
 * command (type 7, lengths, mailbox pointers, token in the entry and every block, block
 * numbers, next pointers, entry signature = ~xor, block signatures 0) and print its INPUT
 * dump (`input` true: output inline zero, ownership 1) or OUTPUT dump (output inline and
 * output blocks from `out->data`, status_own = delivery_status << 1).  `out->data` may be
 * NULL for an INPUT dump.  Returns as cx4_trace_dump().
 */
int cx4_trace_dump_cmd(FILE *f, const struct cx4_trace_msg *in, const struct cx4_trace_msg *out,
		       uint8_t token, bool input, uint8_t delivery_status,
		       const struct cx4_trace_opts *opts);

#endif /* CX4_CMD_TRACE_H */
