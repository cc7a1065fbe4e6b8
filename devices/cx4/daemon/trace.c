// SPDX-License-Identifier: MIT
/*
 * --trace: every command the daemon posts, printed by the shared mlx5_core-format formatter
 * (devices/cx4/trace/cmd_trace.c) from the bytes actually in the command queue entry and the
 * mailbox blocks: INPUT just before the doorbell, OUTPUT once ownership came back. Lines carry
 * the dev_dbg prefix Linux adds, so tests/cx4/trace_decode.py reads our trace and the Linux
 * one alike.
 */
#include <stdlib.h>
#include <unistd.h>

#include "cmd_trace.h"
#include "cx4d.h"

void cx4d_trace_cmd(struct cx4d *d, const uint8_t *entry, const struct cx4d_mbox *blocks,
		    unsigned int nblocks, size_t msg_len, bool input)
{
	const void *blk[64], **b = blk;
	char pfx[256];
	struct cx4_trace_opts opts = { .dbg_prefix = pfx };

	(void)msg_len;
	if (nblocks > 64) {
		b = malloc(nblocks * sizeof(*b));
		if (!b)
			return;
	}
	for (unsigned int i = 0; i < nblocks; i++)
		b[i] = blocks[i].va;
	snprintf(pfx, sizeof(pfx), "mlx5_core %s: %s:dump_command:0:(pid %d): ", d->conf->name,
		 d->conf->name, (int)getpid());
	cx4_trace_dump(d->trace, entry, b, nblocks, input, &opts);
	fflush(d->trace);
	if (b != blk)
		free(b);
}
