// SPDX-License-Identifier: MIT
/*
 * --trace: every command the daemon posts, as Linux mlx5_core's dump_command() prints it with
 * dynamic debug on ([cmd.c] dump_command/dump_buf): "dump command NAME(0xOP) INPUT", the
 * 64-byte entry as "%03x: %08x %08x %08x %08x" lines, then "command block:" and each mailbox
 * block (0x240 bytes) of the message, the same again with OUTPUT after the device answered.
 * Like Linux, blocks are dumped while the running offset (0x40 for the entry, 0x240 per
 * block) stays below the message length. Lines carry the dev_dbg prefix Linux adds, so
 * tests/cx4/trace_decode.py reads our trace and the Linux one alike.
 */
#include <unistd.h>

#include "cx4d.h"

/* The hex lines come from print_hex_dump-style printk()s: no device prefix. */
static void dump_buf(FILE *f, const uint8_t *buf, size_t len, size_t base)
{
	for (size_t i = 0; i < len; i += 16)
		fprintf(f, "%03zx: %08x %08x %08x %08x\n", base + i, cx4_be32_load(buf + i),
			cx4_be32_load(buf + i + 4), cx4_be32_load(buf + i + 8),
			cx4_be32_load(buf + i + 12));
	fputc('\n', f);
}

void cx4d_trace_cmd(struct cx4d *d, const uint8_t *entry, const struct cx4d_mbox *blocks,
		    unsigned int nblocks, size_t msg_len, bool input)
{
	uint16_t op = cx4_get(entry + CX4_CMD_INPUT_INLINE, CX4_CMD_IN_OPCODE);
	const char *name = cx4_cmd_opcode_name(op);
	char pfx[256];
	size_t off = CX4_CMDQ_ENTRY_SIZE;
	FILE *f = d->trace;

	snprintf(pfx, sizeof(pfx), "mlx5_core %s: %s:dump_command:0:(pid %d): ", d->conf->name,
		 d->conf->name, (int)getpid());
	fprintf(f, "%sdump command %s(0x%x) %s\n", pfx, name ? name : "unknown command opcode",
		op, input ? "INPUT" : "OUTPUT");
	dump_buf(f, entry, CX4_CMDQ_ENTRY_SIZE, 0);
	for (unsigned int i = 0; i < nblocks && off < msg_len; i++) {
		fprintf(f, "%scommand block:\n", pfx);
		dump_buf(f, blocks[i].va, CX4_MAILBOX_SIZE, off);
		off += CX4_MAILBOX_SIZE;
	}
	fflush(f);
}
