// SPDX-License-Identifier: MIT
/*
 * cx4 command trace in Linux mlx5_core's dump_command() format.  See cmd_trace.h.
 *
 * The format (Linux 4.4 drivers/net/ethernet/mellanox/mlx5/core/cmd.c):
 *	dump_buf(buf, size, data_only, offset): for each 16 bytes
 *		pr_debug("%03x: %08x %08x %08x %08x\n", offset, 4 x be32)
 *	then, unless data_only, pr_debug("\n").
 *	dump_command(): mlx5_core_dbg("dump command %s(0x%x) %s\n", name, op, INPUT|OUTPUT),
 *	dump_buf(entry, 0x40, 0, 0), then while (next && offset < msg->len):
 *	mlx5_core_dbg("command block:\n"), dump_buf(block, 0x240, 0, offset), offset += 0x240.
 *	With the MLX5_CMD_DATA debug mask: "dump command data ...", dump_buf(inline 16 bytes,
 *	data_only), then min(512, len - offset) bytes of each block's data, offset += 512,
 *	and a final empty line.
 */
#include "cmd_trace.h"

#include <errno.h>
#include <string.h>

#include "cx4_prm.h"

const char *cx4_trace_linux_cmd_str(uint16_t opcode)
{
	/*
	 * Linux 4.4 cmd.c mlx5_command_str(): an explicit switch from the first mlx5 driver,
	 * whose three inconsistent names are visible in the trace.  The old QP opcodes
	 * 0x508/0x509/0x50C/0x50F-0x514 are named as in the 3.x device.h enum that table was
	 * written against (docs/cx4-prm.md: not verified against 4.4 itself).
	 */
	switch (opcode) {
	case 0x100: return "QUERY_HCA_CAP";
	case 0x109: return "SET_HCA_CAP";
	case 0x101: return "QUERY_ADAPTER";
	case 0x102: return "INIT_HCA";
	case 0x103: return "TEARDOWN_HCA";
	case 0x104: return "MLX5_CMD_OP_ENABLE_HCA";
	case 0x105: return "MLX5_CMD_OP_DISABLE_HCA";
	case 0x107: return "QUERY_PAGES";
	case 0x108: return "MANAGE_PAGES";
	case 0x200: return "CREATE_MKEY";
	case 0x201: return "QUERY_MKEY";
	case 0x202: return "DESTROY_MKEY";
	case 0x203: return "QUERY_SPECIAL_CONTEXTS";
	case 0x301: return "CREATE_EQ";
	case 0x302: return "DESTROY_EQ";
	case 0x303: return "QUERY_EQ";
	case 0x400: return "CREATE_CQ";
	case 0x401: return "DESTROY_CQ";
	case 0x402: return "QUERY_CQ";
	case 0x403: return "MODIFY_CQ";
	case 0x500: return "CREATE_QP";
	case 0x501: return "DESTROY_QP";
	case 0x502: return "RST2INIT_QP";
	case 0x503: return "INIT2RTR_QP";
	case 0x504: return "RTR2RTS_QP";
	case 0x505: return "RTS2RTS_QP";
	case 0x506: return "SQERR2RTS_QP";
	case 0x507: return "2ERR_QP";
	case 0x508: return "RTS2SQD_QP";
	case 0x509: return "SQD2RTS_QP";
	case 0x50a: return "2RST_QP";
	case 0x50b: return "QUERY_QP";
	case 0x50c: return "CONF_SQP";
	case 0x50d: return "MAD_IFC";
	case 0x50e: return "INIT2INIT_QP";
	case 0x50f: return "SUSPEND_QP";
	case 0x510: return "UNSUSPEND_QP";
	case 0x511: return "SQD2SQD_QP";
	case 0x512: return "ALLOC_QP_COUNTER_SET";
	case 0x513: return "DEALLOC_QP_COUNTER_SET";
	case 0x514: return "QUERY_QP_COUNTER_SET";
	case 0x600: return "CREATE_PSV";
	case 0x601: return "DESTROY_PSV";
	case 0x602: return "QUERY_PSV";
	case 0x603: return "QUERY_SIG_RULE_TABLE";
	case 0x604: return "QUERY_BLOCK_SIZE_TABLE";
	case 0x700: return "CREATE_SRQ";
	case 0x701: return "DESTROY_SRQ";
	case 0x702: return "QUERY_SRQ";
	case 0x703: return "ARM_RQ";
	case 0x704: return "RESIZE_SRQ";
	case 0x800: return "ALLOC_PD";
	case 0x801: return "DEALLOC_PD";
	case 0x802: return "ALLOC_UAR";
	case 0x803: return "DEALLOC_UAR";
	case 0x806: return "ATTACH_TO_MCG";
	case 0x807: return "DETACH_FROM_MCG";
	case 0x80e: return "ALLOC_XRCD";
	case 0x80f: return "DEALLOC_XRCD";
	case 0x805: return "MLX5_CMD_OP_ACCESS_REG";
	default:    return "unknown command opcode";
	}
}

static const char *trace_name(uint16_t opcode, unsigned int flags)
{
	const char *n;

	if (flags & CX4_TRACE_MODERN_NAMES) {
		n = cx4_cmd_opcode_name(opcode);
		return n ? n : "unknown command opcode";
	}
	return cx4_trace_linux_cmd_str(opcode);
}

/* dump_buf(): `size` bytes as BE words, 16 per line, then an empty line unless data_only. */
static void dump_buf(FILE *f, const uint8_t *buf, uint32_t size, bool data_only, uint32_t offset)
{
	uint32_t i;

	for (i = 0; i < size; i += 16, offset += 16)
		fprintf(f, "%03x: %08x %08x %08x %08x\n", offset,
			cx4_be32_load(buf + i), cx4_be32_load(buf + i + 4),
			cx4_be32_load(buf + i + 8), cx4_be32_load(buf + i + 12));
	if (!data_only)
		fputc('\n', f);
}

/*
 * The common body of both entry points.  `block_at(i, ctx)` returns block i of the chain
 * (or NULL past its end), so cx4_trace_dump_cmd() can build blocks one at a time instead of
 * materialising a 200-block chain.
 */
typedef const uint8_t *(*block_fn)(size_t i, void *ctx);

static int dump_command(FILE *f, const uint8_t *entry, block_fn block_at, void *ctx,
			bool input, const struct cx4_trace_opts *opts)
{
	unsigned int flags = opts ? opts->flags : 0;
	const char *pfx = opts && opts->dbg_prefix ? opts->dbg_prefix : "";
	uint16_t op = cx4_get(entry + CX4_CMD_INPUT_INLINE, CX4_CMD_IN_OPCODE);
	uint32_t len = cx4_get(entry, input ? CX4_CMD_INPUT_LENGTH : CX4_CMD_OUTPUT_LENGTH);
	bool data_only = flags & CX4_TRACE_DATA_ONLY;
	const uint8_t *blk;
	uint32_t offset = 0;
	size_t i;

	fprintf(f, "%sdump command %s%s(0x%x) %s\n", pfx, data_only ? "data " : "",
		trace_name(op, flags), op, input ? "INPUT" : "OUTPUT");
	if (data_only) {
		dump_buf(f, entry + (input ? CX4_CMD_INPUT_INLINE : CX4_CMD_OUTPUT_INLINE),
			 CX4_CMD_INLINE_SIZE, true, 0);
		offset = CX4_CMD_INLINE_SIZE;
	} else {
		dump_buf(f, entry, CX4_CMDQ_ENTRY_SIZE, false, 0);
		offset = CX4_CMDQ_ENTRY_SIZE;
	}
	for (i = 0; offset < len && (blk = block_at(i, ctx)) != NULL; i++) {
		if (data_only) {
			uint32_t n = len - offset < CX4_MAILBOX_DATA_SIZE ?
				     len - offset : CX4_MAILBOX_DATA_SIZE;

			dump_buf(f, blk, n, true, offset);
			offset += CX4_MAILBOX_DATA_SIZE;
		} else {
			fprintf(f, "%scommand block:\n", pfx);
			dump_buf(f, blk, CX4_MAILBOX_SIZE, false, offset);
			offset += CX4_MAILBOX_SIZE;
		}
	}
	if (data_only)
		fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

struct raw_chain {
	const void *const *blocks;
	size_t n;
};

static const uint8_t *raw_block(size_t i, void *ctx)
{
	struct raw_chain *c = ctx;

	return i < c->n ? c->blocks[i] : NULL;
}

int cx4_trace_dump(FILE *f, const void *entry, const void *const *blocks, size_t nblocks,
		   bool input, const struct cx4_trace_opts *opts)
{
	struct raw_chain c = { blocks, nblocks };
	size_t i;

	if (!f || !entry || (nblocks && !blocks))
		return -EINVAL;
	for (i = 0; i < nblocks; i++)
		if (!blocks[i])
			return -EINVAL;
	return dump_command(f, entry, raw_block, &c, input, opts);
}

/* Builds mailbox block i of one message as Linux would have it in memory. */
struct built_chain {
	const struct cx4_trace_msg *msg;
	uint32_t nblocks;
	uint8_t token;
	uint8_t buf[CX4_MAILBOX_SIZE];
};

static uint64_t mbox_addr(const struct cx4_trace_msg *m, size_t i)
{
	return m->mbox_addr && i < m->nmbox ? m->mbox_addr[i] : 0;
}

static const uint8_t *built_block(size_t i, void *ctx)
{
	struct built_chain *c = ctx;
	const struct cx4_trace_msg *m = c->msg;
	size_t start = CX4_CMD_INLINE_SIZE + i * CX4_MAILBOX_DATA_SIZE;

	if (i >= c->nblocks)
		return NULL;
	memset(c->buf, 0, sizeof(c->buf));
	if (m->data && start < m->len) {
		size_t n = m->len - start;

		memcpy(c->buf, (const uint8_t *)m->data + start,
		       n < CX4_MAILBOX_DATA_SIZE ? n : CX4_MAILBOX_DATA_SIZE);
	}
	cx4_set64(c->buf, CX4_MAILBOX_NEXT_PTR, mbox_addr(m, i + 1));
	cx4_set(c->buf, CX4_MAILBOX_BLOCK_NUMBER, (uint32_t)i);
	cx4_set(c->buf, CX4_MAILBOX_TOKEN, c->token);
	return c->buf;
}

int cx4_trace_dump_cmd(FILE *f, const struct cx4_trace_msg *in, const struct cx4_trace_msg *out,
		       uint8_t token, bool input, uint8_t delivery_status,
		       const struct cx4_trace_opts *opts)
{
	uint8_t entry[CX4_CMDQ_ENTRY_SIZE] = { 0 };
	struct built_chain chain;
	uint32_t n_in, n_out;

	if (!f || !in || !out || !in->data || in->len < 8 || out->len < 8 ||
	    (!input && !out->data) || delivery_status > 0x7f)
		return -EINVAL;
	n_in = cx4_cmd_mailbox_count(in->len);
	n_out = cx4_cmd_mailbox_count(out->len);
	if ((in->mbox_addr && in->nmbox < n_in) || (out->mbox_addr && out->nmbox < n_out))
		return -EINVAL;

	/* cmd_work_handler(): memset, copy 16 inline bytes, pointers, lengths, type, token. */
	memcpy(entry + CX4_CMD_INPUT_INLINE, in->data,
	       in->len < CX4_CMD_INLINE_SIZE ? in->len : CX4_CMD_INLINE_SIZE);
	cx4_set(entry, CX4_CMD_TYPE, CX4_CMD_TYPE_PCIE);
	cx4_set(entry, CX4_CMD_INPUT_LENGTH, in->len);
	cx4_set(entry, CX4_CMD_OUTPUT_LENGTH, out->len);
	cx4_set64(entry, CX4_CMD_INPUT_MAILBOX_PTR, mbox_addr(in, 0));
	cx4_set64(entry, CX4_CMD_OUTPUT_MAILBOX_PTR, mbox_addr(out, 0));
	cx4_set(entry, CX4_CMD_TOKEN, token);
	cx4_set(entry, CX4_CMD_OWNERSHIP, CX4_CMD_OWNER_HW);
	/* set_signature(): the entry signature is always computed, over the posted entry. */
	cx4_set(entry, CX4_CMD_SIGNATURE, (uint8_t)~cx4_xor8(entry, sizeof(entry)));

	if (!input) {
		/*
		 * What the device leaves behind: output inline bytes and status_own.  The [trace]
		 * FW (CX4 Lx 14.12) leaves the signature alone except after QUERY_PAGES, where it
		 * re-signs over the output as if ownership were still 1 (token 4: 0xFA -> 0xFC);
		 * CX4_TRACE_RESIGN_OUTPUT reproduces that.
		 */
		memcpy(entry + CX4_CMD_OUTPUT_INLINE, out->data,
		       out->len < CX4_CMD_INLINE_SIZE ? out->len : CX4_CMD_INLINE_SIZE);
		if (opts && (opts->flags & CX4_TRACE_RESIGN_OUTPUT)) {
			cx4_set(entry, CX4_CMD_SIGNATURE, 0);
			cx4_set(entry, CX4_CMD_SIGNATURE, (uint8_t)~cx4_xor8(entry, sizeof(entry)));
		}
		entry[CX4_CMD_STATUS_OWN_BYTE] = (uint8_t)(delivery_status << 1);
	}

	chain.msg = input ? in : out;
	chain.nblocks = input ? n_in : n_out;
	chain.token = token;
	return dump_command(f, entry, built_block, &chain, input, opts);
}
