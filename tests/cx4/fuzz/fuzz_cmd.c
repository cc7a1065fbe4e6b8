// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the ConnectX-4 model's command interface: arbitrary command entries
 * and mailbox contents, posted the way a driver posts them (tests/cx4/model tdrv: command
 * queue and mailboxes in DMA memory, doorbell through BAR0), to a model that was brought up
 * (ENABLE_HCA ... INIT_HCA, an EQ for command completions and events, RoCE on).
 *
 * What must hold ([PRM] "Command Interface"; docs/cx4-model.md):
 *   - no crash, no sanitizer report, no hang: every command comes back (ownership to
 *     software) while the firmware lives; a command that does not come back is a finding
 *     when the device's health counter still runs (the engine is alive but lost a command)
 *     or when it stopped (the engine is stuck), unless a health syndrome says the firmware
 *     died, which a driver handles by resetting the function;
 *   - the delivery status and the command status are ones the PRM defines;
 *   - the device only reads the input mailboxes and writes only the output blocks the
 *     entry's output length needs.
 * Input: records of [opcode (2, LE), op_mod (2, LE), flags, in length (2, LE), out length
 * (2, LE), n, body (n)], the input message being opcode/op_mod then the body (zero-padded to
 * the input length):
 *   flags bit 0  the opcode as given (else one of the opcodes the model or the PRM knows)
 *   flags bit 1  lengths as given (else the input length is at least 16 and the body's)
 *   flags bit 2  a wrong token in the last input mailbox block
 *   flags bit 3  a wrong block number in the last input mailbox block
 *   flags bit 4  a misaligned or unmapped next pointer in the input chain
 *   flags bit 5  a bad entry: type, reserved bytes
 *   flags bit 6  PAS: big-endian words at 0x110 and after (0x10 for MANAGE_PAGES) below 64
 *                become addresses of pages of a scratch DMA buffer
 * The device state carries over between inputs; the device is rebuilt every 64 inputs, when
 * it left the INIT state or died, and before every input with CX4_FUZZ_FRESH=1 (to replay a
 * finding that depends on nothing before it). CX4_FUZZ_VERBOSE=1 prints each command.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tdrv.h"

#define MAX_REC 8
#define MAX_LEN (16 + TDEV_MBOX_BLOCKS * 512)
#define SCRATCH_PAGES 64
#define REBUILD_EVERY 64

static const uint16_t known_ops[] = {
    0x100, 0x101, 0x102, 0x103, 0x104, 0x105, 0x107, 0x108, 0x109, 0x10a, 0x10b, 0x10d,
    0x200, 0x201, 0x202, 0x203, 0x301, 0x302, 0x303, 0x304, 0x400, 0x401, 0x402, 0x403,
    0x500, 0x501, 0x502, 0x503, 0x504, 0x505, 0x506, 0x507, 0x50a, 0x50b, 0x50c, 0x50e,
    0x700, 0x701, 0x702, 0x703, 0x750, 0x751, 0x754, 0x755, 0x760, 0x761, 0x762, 0x764,
    0x765, 0x800, 0x801, 0x802, 0x803, 0x805, 0x806, 0x80d, 0x816, 0x817, 0x904, 0x908,
};

static struct {
	bool up;
	struct tdev t;
	struct tmem scratch;
	unsigned int inputs;
	bool fresh;
	bool verbose; /* CX4_FUZZ_VERBOSE: each command and its status on stderr */
	/* the mailbox memory as posted, to see what the device wrote */
	uint8_t *in_copy, *out_copy;
	uint32_t out_blocks;
} g;

static void die(const char *what, uint16_t op)
{
	fprintf(stderr, "fuzz_cmd: %s (opcode 0x%x)\n", what, op);
	abort();
}

static void build_dev(void)
{
	if (g.up) {
		tmem_free(&g.t, &g.scratch);
		tdev_close(&g.t);
	}
	memset(&g.t, 0, sizeof(g.t));
	if (tdev_open(&g.t, NULL))
		die("open", 0);
	g.t.quiet = true;
	g.t.cmd_timeout_ms = 3000;
	if (tdev_bringup(&g.t) || tdev_roce_setup(&g.t))
		die("bring-up", 0);
	if (tmem_alloc(&g.t, SCRATCH_PAGES * 4096, &g.scratch))
		die("scratch", 0);
	g.up = true;
}

static bool firmware_dead(struct tdev *t)
{
	/* health buffer: rfr ([PRM] health_buffer 0x238 bit 31) or a syndrome (0x23D) */
	return (cx4_mmio_read32(&t->bar, 0x238) >> 31) ||
	       (cx4_mmio_read32(&t->bar, 0x23c) & 0xff00);
}

static uint32_t heartbeat(struct tdev *t)
{
	return cx4_mmio_read32(&t->bar, 0x1010) & 0xffffff;
}

struct corrupt {
	uint8_t flags;
	uint32_t ilen, olen;
};

/* Just before the doorbell: damage what the flags say, then remember the mailboxes. */
static void hook(struct tdev *t, uint8_t *e, void *ctx)
{
	const struct corrupt *c = ctx;
	uint32_t nin = cx4_cmd_mailbox_count(c->ilen);

	if (nin) {
		uint8_t *last = t->mbox_in.p + (size_t)(nin - 1) * 1024;

		if (c->flags & 4)
			cx4_set(last, CX4_MAILBOX_TOKEN, cx4_get(last, CX4_MAILBOX_TOKEN) ^ 0x5a);
		if (c->flags & 8)
			cx4_set(last, CX4_MAILBOX_BLOCK_NUMBER, nin + 3);
		if (c->flags & 0x10) {
			uint8_t *first = t->mbox_in.p;

			cx4_set64(first, CX4_MAILBOX_NEXT_PTR,
				  nin > 1 ? t->mbox_in.iova + 1024 + 8 : 0x7000000000ull);
			if (nin == 1)
				cx4_set64(e, CX4_CMD_INPUT_MAILBOX_PTR, t->mbox_in.iova + 0x40);
		}
	}
	if (c->flags & 0x20) {
		e[1] ^= 0x10; /* reserved */
		if (c->ilen & 1)
			cx4_set(e, CX4_CMD_TYPE, 3);
	}
	memcpy(g.in_copy, t->mbox_in.p, t->mbox_in.len);
	/* output blocks past the chain must stay as they are */
	g.out_blocks = cx4_cmd_mailbox_count(c->olen);
	for (size_t i = (size_t)g.out_blocks * 1024; i < t->mbox_out.len; i++)
		t->mbox_out.p[i] = (uint8_t)(i * 13 + 1);
	memcpy(g.out_copy, t->mbox_out.p, t->mbox_out.len);
}

static bool status_known(int st)
{
	static const int ok[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08,
				 0x09, 0x0a, 0x0f, 0x10, 0x30, 0x40, 0x50, 0x51};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (st == ok[i])
			return true;
	return false;
}

/* One command; returns false when the device must be rebuilt. */
static bool run_cmd(const uint8_t *rec, const uint8_t *body, size_t n)
{
	static uint8_t in[MAX_LEN], out[MAX_LEN];
	struct corrupt c;
	uint16_t op = (uint16_t)(rec[0] | rec[1] << 8), op_mod = (uint16_t)(rec[2] | rec[3] << 8);
	uint32_t beat;
	int st;

	c.flags = rec[4];
	c.ilen = (uint32_t)(rec[5] | rec[6] << 8);
	c.olen = (uint32_t)(rec[7] | rec[8] << 8);
	if (!(c.flags & 1))
		op = known_ops[op % (sizeof(known_ops) / sizeof(known_ops[0]))];
	if (!(c.flags & 2)) {
		if (c.ilen < 16 + n)
			c.ilen = (uint32_t)(16 + n);
		if (c.olen < 16)
			c.olen = 16;
	}
	if (c.ilen > MAX_LEN)
		c.ilen = MAX_LEN;
	if (c.olen > MAX_LEN)
		c.olen = MAX_LEN;
	memset(in, 0, c.ilen);
	if (c.ilen > 16 && n)
		memcpy(in + 8, body, n < c.ilen - 8 ? n : c.ilen - 8);
	cx4_set(in, CX4_CMD_IN_OPCODE, op);
	cx4_set(in, CX4_CMD_IN_OP_MOD, op_mod);
	if (c.flags & 0x40) {
		uint32_t from = op == CX4_CMD_OP_MANAGE_PAGES ? 0x10 : 0x110;

		for (uint32_t at = from; at + 8 <= c.ilen; at += 8) {
			uint64_t v = cx4_be64_load(in + at);

			if (v < SCRATCH_PAGES)
				cx4_be64_store(in + at, g.scratch.iova + v * 4096);
		}
	}
	beat = heartbeat(&g.t);
	st = tdev_cmd_hook(&g.t, in, c.ilen, out, c.olen, hook, &c);
	if (g.verbose)
		fprintf(stderr, "cmd 0x%x/%u in %u out %u flags 0x%x: %d deliv 0x%x synd 0x%x\n",
			op, op_mod, c.ilen, c.olen, c.flags, st, g.t.deliv, g.t.syndrome);
	if (st == -3)
		return true; /* longer than our mailboxes: not posted */
	if (st == -2) {
		if (firmware_dead(&g.t))
			return false; /* a dead firmware answers nothing: the driver resets */
		die(heartbeat(&g.t) == beat ? "a command hung and the engine stopped"
					    : "a command never came back",
		    op);
	}
	if (st == -1) {
		static const uint8_t deliv[] = {0x01, 0x02, 0x03, 0x04, 0x05,
						0x07, 0x08, 0x09, 0x10};

		if (!memchr(deliv, g.t.deliv, sizeof(deliv)))
			die("unknown delivery status", op);
	} else if (!status_known(st)) {
		die("unknown command status", op);
	}
	if (memcmp(g.in_copy, g.t.mbox_in.p, g.t.mbox_in.len))
		die("the device wrote into an input mailbox", op);
	if (memcmp(g.out_copy + (size_t)g.out_blocks * 1024,
		   g.t.mbox_out.p + (size_t)g.out_blocks * 1024,
		   g.t.mbox_out.len - (size_t)g.out_blocks * 1024))
		die("the device wrote past the output mailbox chain", op);
	if (firmware_dead(&g.t))
		return false;
	/* the HCA left INIT (TEARDOWN_HCA, DISABLE_HCA): start over to keep fuzzing commands */
	if (!st && (op == CX4_CMD_OP_TEARDOWN_HCA || op == CX4_CMD_OP_DISABLE_HCA))
		return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int nrec = 0;

	if (!g.in_copy) {
		g.fresh = getenv("CX4_FUZZ_FRESH") != NULL;
		g.verbose = getenv("CX4_FUZZ_VERBOSE") != NULL;
		g.in_copy = malloc(TDEV_MBOX_BLOCKS * 1024);
		g.out_copy = malloc(TDEV_MBOX_BLOCKS * 1024);
	}
	if (!g.up || g.fresh || ++g.inputs % REBUILD_EVERY == 0)
		build_dev();
	while (size >= 10 && nrec++ < MAX_REC) {
		size_t n = data[9];

		if (n > size - 10)
			n = size - 10;
		if (!run_cmd(data, data + 10, n)) {
			build_dev();
			break;
		}
		data += 10 + n;
		size -= 10 + n;
	}
	return 0;
}
