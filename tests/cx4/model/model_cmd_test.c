// SPDX-License-Identifier: MIT
/*
 * ConnectX-4 model: init segment, command interface and HCA/resource commands, driven
 * through raw BAR0 and DMA memory only (tdrv.c). Every command's success and its PRM error
 * statuses; delivery statuses for malformed entries and mailboxes; firmware pages (the model
 * really needs them); command completion events and MSI-X; the debug trace.
 */
#include <arpa/inet.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tdrv.h"

#define OP(x) CX4_CMD_OP_##x

static void msleep(unsigned int ms)
{
	usleep(ms * 1000);
}

static struct tdev *open_dev(struct tdev *t, const struct cx4_model_config *cfg)
{
	int err = tdev_open(t, cfg);

	if (err)
		T_FAIL("cx4_model_open: %s", strerror(-err));
	return t;
}

static void up(struct tdev *t)
{
	open_dev(t, NULL);
	T_EQ(tdev_bringup(t), 0);
}

/* ---- init segment ---------------------------------------------------------------------- */

static void test_init_segment(void)
{
	struct tdev t;
	uint32_t hc0, l;
	uint64_t tm0, tm1;
	int i;

	open_dev(&t, NULL);
	/* ConnectX-4 profile: FW 12.16.1020, cmdif_rev 5 ([dev.h] fw_rev, cmdif_rev_fw_sub) */
	T_EQ(cx4_mmio_read32(&t.bar, 0x000), 16u << 16 | 12);
	T_EQ(cx4_mmio_read32(&t.bar, 0x004), 5u << 16 | 1020);
	l = cx4_mmio_read32(&t.bar, 0x014);
	T_EQ(l & 0xff, 0x56); /* log_cmdq_size 5, log_cmdq_stride 6 */
	for (i = 0; i < 2000 && cx4_mmio_read32(&t.bar, 0x1fc) >> 31; i++)
		msleep(1);
	T_EQ(cx4_mmio_read32(&t.bar, 0x1fc) >> 31, 0);
	/* the health buffer: no syndrome, fw_ver not all ones (device present) */
	T_EQ(cx4_mmio_read32(&t.bar, 0x23c) >> 16 & 0xff, 0);
	T_ASSERT(cx4_mmio_read32(&t.bar, 0x230) != 0xffffffff);
	T_EQ(cx4_mmio_read32(&t.bar, 0x1010) >> 24, 0); /* Snabb reads a syndrome here */
	/* the heartbeat moves (Linux/rdma-core declare the device dead otherwise) */
	hc0 = cx4_mmio_read32(&t.bar, 0x1010);
	for (i = 0; i < 300 && cx4_mmio_read32(&t.bar, 0x1010) == hc0; i++)
		msleep(10);
	T_ASSERT(cx4_mmio_read32(&t.bar, 0x1010) != hc0);
	/* the internal timer is free running */
	tm0 = (uint64_t)cx4_mmio_read32(&t.bar, 0x1000) << 32 | cx4_mmio_read32(&t.bar, 0x1004);
	for (i = 0; i < 300; i++) {
		msleep(10);
		tm1 = (uint64_t)cx4_mmio_read32(&t.bar, 0x1000) << 32 |
		      cx4_mmio_read32(&t.bar, 0x1004);
		if (tm1 > tm0)
			break;
	}
	T_ASSERT(tm1 > tm0);
	/* cmdq address: high word first, latched by the low word; RO bits stay */
	T_EQ(tdev_cmdif_init(&t), 0);
	T_EQ(cx4_mmio_read32(&t.bar, 0x010), t.cmdq.iova >> 32);
	T_EQ(cx4_mmio_read32(&t.bar, 0x014), (uint32_t)t.cmdq.iova | 0x56);
	T_EQ(tdev_simple(&t, OP(ENABLE_HCA), 0, 0, 0, NULL), 0);
	tdev_close(&t);
}

/* rdma-core order: wait for boot, then program; Linux 4.4: program, then wait. */
static void test_cmdq_before_boot(void)
{
	struct tdev t;

	open_dev(&t, NULL);
	T_EQ(tmem_alloc(&t, 4096, &t.cmdq), 0);
	T_EQ(tmem_alloc(&t, TDEV_MBOX_BLOCKS * 1024, &t.mbox_in), 0);
	T_EQ(tmem_alloc(&t, TDEV_MBOX_BLOCKS * 1024, &t.mbox_out), 0);
	cx4_mmio_write32(&t.bar, 0x10, (uint32_t)(t.cmdq.iova >> 32));
	cx4_mmio_write32(&t.bar, 0x14, (uint32_t)t.cmdq.iova);
	for (int i = 0; i < 2000 && cx4_mmio_read32(&t.bar, 0x1fc) >> 31; i++)
		msleep(1);
	T_EQ(cx4_mmio_read32(&t.bar, 0x1fc) >> 31, 0);
	T_EQ(tdev_simple(&t, OP(ENABLE_HCA), 0, 0, 0, NULL), 0);
	tdev_close(&t);
}

/* ---- bring-up and capabilities ---------------------------------------------------------- */

static int query_cap(struct tdev *t, unsigned int type, bool cur, uint8_t *page)
{
	uint8_t in[16] = {0}, out[0x1010];
	int st;

	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_HCA_CAP));
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_HCA_CAP_OPMOD(type, cur));
	st = tdev_cmd(t, in, 16, out, sizeof(out));
	if (!st)
		memcpy(page, out + 0x10, 0x1000);
	return st;
}

static void test_bringup_caps(void)
{
	struct tdev t;
	uint8_t cap[0x1000], out[0x110], in[16] = {0}, o16[16];

	open_dev(&t, NULL);
	T_EQ(tdev_cmdif_init(&t), 0);
	T_EQ(tdev_simple(&t, OP(ENABLE_HCA), 0, 0, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), CX4_QUERY_PAGES_OPMOD_BOOT, 0, 0, o16), 0);
	T_EQ(cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES), 6);
	tdev_close(&t);

	up(&t);
	T_EQ(query_cap(&t, CX4_CAP_GENERAL, false, cap), 0);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_LOG_MAX_QP), 0x17);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_CMDIF_CHECKSUM), 3);
	T_EQ(query_cap(&t, CX4_CAP_GENERAL, true, cap), 0);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_LOG_MAX_QP), 0x11); /* set by tdev_bringup */
	T_EQ(cx4_get(cap, CX4_CAP_GEN_PORT_TYPE), CX4_CAP_PORT_TYPE_ETH);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_NUM_PORTS), 1);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_CQE_VERSION), 1);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_ROCE), 1);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_RC), 1);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_UD), 1);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_BF), 1);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_LOG_BF_REG_SIZE), 9);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_UAR_SZ), 5);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_CMDIF_CHECKSUM), 0);
	T_EQ(cx4_get(cap, CX4_CAP_GEN_MAX_WQE_SZ_SQ), 0x400);
	T_EQ(query_cap(&t, CX4_CAP_ROCE, true, cap), 0);
	T_EQ(cx4_get(cap, CX4_CAP_ROCE_R_ROCE_DEST_UDP_PORT), 4791);
	T_EQ(cx4_get(cap, CX4_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT), 0xc000);
	T_EQ(cx4_get(cap, CX4_CAP_ROCE_ROCE_VERSION) & 4, 4);
	T_EQ(query_cap(&t, CX4_CAP_ATOMIC, false, cap), 0);
	T_EQ(cx4_get(cap, CX4_CAP_ATOMIC_SUPPORTED_8B_ENDIANNESS_MODE_1), 1);
	T_EQ(cx4_get(cap, CX4_CAP_ATOMIC_OPERATIONS) & 3, 3);
	/* unsupported capability types: bad operation (op_mod) */
	T_EQ(query_cap(&t, CX4_CAP_ODP, true, cap), CX4_CMD_STAT_BAD_OP_ERR);
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_ADAPTER));
	T_EQ(tdev_cmd(&t, in, 16, out, sizeof(out)), 0);
	T_EQ(cx4_get(out + 0x10, CX4_ADAPTER_VSD_VENDOR_ID), 0x15b3);
	T_EQ(memcmp(out + 0x10 + CX4_ADAPTER_PSID_OFF, "MT_2180110032", 13), 0);
	T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), 0);
	tdev_close(&t);

	/* the CX4 Lx profile answers like the trace card */
	{
		struct cx4_model_config c = {.profile = CX4_MODEL_CX4LX};

		open_dev(&t, &c);
		T_EQ(cx4_mmio_read32(&t.bar, 0x000), 12u << 16 | 14);
		T_EQ(cx4_mmio_read32(&t.bar, 0x004), 5u << 16 | 1220);
		tdev_close(&t);
	}
}

/* ---- command statuses -------------------------------------------------------------------- */

static void test_cmd_status(void)
{
	struct tdev t;
	uint8_t in[0x1010] = {0}, out[0x1010], o16[16];

	open_dev(&t, NULL);
	T_EQ(tdev_cmdif_init(&t), 0);
	/* before ENABLE_HCA: bad system state */
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_ISSI));
	T_EQ(tdev_cmd(&t, in, 16, out, 0x70), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	T_ASSERT(t.syndrome != 0);
	/* unknown opcode: bad operation, in any state */
	T_EQ(tdev_simple(&t, 0x7ff, 0, 0, 0, NULL), CX4_CMD_STAT_BAD_OP_ERR);
	T_EQ(tdev_simple(&t, OP(ENABLE_HCA), 0, 1, 0, NULL), CX4_CMD_STAT_BAD_PARAM_ERR);
	T_EQ(tdev_simple(&t, OP(ENABLE_HCA), 0, 0, 0, NULL), 0);
	/* output/input too short for the command */
	T_EQ(tdev_cmd(&t, in, 16, out, 0x10), CX4_CMD_STAT_BAD_OUTP_LEN_ERR);
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(SET_HCA_CAP));
	T_EQ(tdev_cmd(&t, in, 16, out, 16), CX4_CMD_STAT_BAD_INP_LEN_ERR);
	/* op_mod out of range */
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), 0, 0, 0, NULL), CX4_CMD_STAT_BAD_OP_ERR);
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), 4, 0, 0, NULL), CX4_CMD_STAT_BAD_OP_ERR);
	T_EQ(tdev_simple(&t, OP(MANAGE_PAGES), 3, 0, 0, NULL), CX4_CMD_STAT_BAD_OP_ERR);
	T_EQ(tdev_simple(&t, OP(SET_ISSI), 0, 7, 0, NULL), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* no boot pages yet: the capability pages do not exist */
	T_EQ(query_cap(&t, CX4_CAP_GENERAL, true, out), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	T_EQ(tdev_simple(&t, OP(INIT_HCA), 0, 0, 0, NULL), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	T_EQ(tdev_give_pages(&t, 6), 0);
	T_EQ(query_cap(&t, CX4_CAP_GENERAL, true, out), 0);
	/* SET_HCA_CAP beyond the maximum */
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(SET_HCA_CAP));
	memcpy(in + 0x10, out, 0x1000);
	cx4_set(in + 0x10, CX4_CAP_GEN_LOG_MAX_QP, 0x18);
	T_EQ(tdev_cmd(&t, in, 0x1010, o16, 16), CX4_CMD_STAT_BAD_PARAM_ERR);
	cx4_set(in, CX4_CMD_IN_OP_MOD, 1); /* SET_HCA_CAP op_mod is type << 1 */
	T_EQ(tdev_cmd(&t, in, 0x1010, o16, 16), CX4_CMD_STAT_BAD_OP_ERR);
	/* a page given twice, an unaligned page */
	{
		uint8_t mp[0x20] = {0};

		cx4_set(mp, CX4_CMD_IN_OPCODE, OP(MANAGE_PAGES));
		cx4_set(mp, CX4_CMD_IN_OP_MOD, 1);
		cx4_set(mp, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES, 1);
		cx4_pas_set(mp, 0x10, 0, t.pages[0].iova);
		T_EQ(tdev_cmd(&t, mp, 0x18, o16, 16), CX4_CMD_STAT_BAD_PARAM_ERR);
		cx4_pas_set(mp, 0x10, 0, t.pages[0].iova + 0x800);
		T_EQ(tdev_cmd(&t, mp, 0x18, o16, 16), CX4_CMD_STAT_BAD_PARAM_ERR);
		cx4_set(mp, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES, 2);
		T_EQ(tdev_cmd(&t, mp, 0x18, o16, 16), CX4_CMD_STAT_BAD_INP_LEN_ERR);
	}
	/* INIT_HCA without the init pages: no resources */
	T_EQ(tdev_simple(&t, OP(INIT_HCA), 0, 0, 0, NULL), CX4_CMD_STAT_NO_RES_ERR);
	T_EQ(tdev_simple(&t, OP(ALLOC_PD), 0, 0, 0, NULL), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), CX4_QUERY_PAGES_OPMOD_INIT, 0, 0, o16), 0);
	T_EQ(cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES), 48);
	T_EQ(tdev_give_pages(&t, 48), 0);
	T_EQ(tdev_simple(&t, OP(INIT_HCA), 0, 0, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(INIT_HCA), 0, 0, 0, NULL), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	/* capabilities are fixed after INIT_HCA */
	cx4_set(in, CX4_CMD_IN_OP_MOD, 0);
	cx4_set(in + 0x10, CX4_CAP_GEN_LOG_MAX_QP, 0x10);
	T_EQ(tdev_cmd(&t, in, 0x1010, o16, 16), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	T_EQ(tdev_simple(&t, OP(SET_ISSI), 0, 1, 0, NULL), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	/* only the graceful teardown profile */
	T_EQ(tdev_simple(&t, OP(TEARDOWN_HCA), 0, 1, 0, NULL), CX4_CMD_STAT_BAD_PARAM_ERR);
	T_EQ(tdev_simple(&t, OP(TEARDOWN_HCA), 0, 0, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(TEARDOWN_HCA), 0, 0, 0, NULL), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	T_EQ(tdev_simple(&t, OP(DISABLE_HCA), 0, 0, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), 1, 0, 0, NULL), CX4_CMD_STAT_BAD_SYS_STATE_ERR);
	tdev_close(&t);
}

/* ---- delivery statuses -------------------------------------------------------------------- */

struct corrupt {
	int what;
	uint64_t arg;
};

static void corrupt_hook(struct tdev *t, uint8_t *e, void *ctx)
{
	struct corrupt *c = ctx;

	switch (c->what) {
	case 0:
		cx4_set(e, CX4_CMD_TYPE, 0);
		break;
	case 1:
		cx4_set(t->mbox_in.p + 1024, CX4_MAILBOX_TOKEN, 0x5a);
		break;
	case 2:
		cx4_set(t->mbox_in.p + 1024, CX4_MAILBOX_BLOCK_NUMBER, 7);
		break;
	case 3:
		cx4_set64(e, CX4_CMD_INPUT_MAILBOX_PTR, t->mbox_in.iova + 0x40);
		break;
	case 4:
		cx4_set64(e, CX4_CMD_OUTPUT_MAILBOX_PTR, 0x7fff0000000ull);
		break;
	case 5:
		cx4_set(e, CX4_CMD_INPUT_LENGTH, 4);
		break;
	case 6:
		cx4_set(e, CX4_CMD_OUTPUT_LENGTH, 4);
		break;
	case 7:
		e[0x3e] = 1;
		break;
	case 8:
		cx4_set64(t->mbox_in.p, CX4_MAILBOX_NEXT_PTR, 0x7fff0000000ull);
		break;
	case 9: /* sign entry and blocks like Linux with cmdif_checksum on */
		for (uint32_t i = 0; i < cx4_cmd_mailbox_count(cx4_get(e, CX4_CMD_INPUT_LENGTH));
		     i++) {
			uint8_t *b = t->mbox_in.p + i * 1024;

			b[0x23e] = (uint8_t)~cx4_xor8(b + 0x200, 0x3f);
			b[0x23f] = (uint8_t)~cx4_xor8(b, 0x23f);
		}
		e[0x3d] = 0;
		e[0x3d] = (uint8_t)~cx4_xor8(e, 64);
		break;
	}
}

static void test_delivery_status(void)
{
	static const uint8_t want[] = {
	    CX4_CMD_DELIVERY_CMD_DESCR_ERR,	CX4_CMD_DELIVERY_TOK_ERR,
	    CX4_CMD_DELIVERY_BAD_BLK_NUM_ERR,	CX4_CMD_DELIVERY_IN_PTR_ALIGN_ERR,
	    CX4_CMD_DELIVERY_OUT_PTR_ALIGN_ERR, CX4_CMD_DELIVERY_IN_LENGTH_ERR,
	    CX4_CMD_DELIVERY_OUT_LENGTH_ERR,	CX4_CMD_DELIVERY_RES_FLD_NOT_CLR_ERR,
	    CX4_CMD_DELIVERY_IN_PTR_ALIGN_ERR,
	};
	uint8_t in[0x1010] = {0}, out[0x1010];
	struct tdev t;

	up(&t);
	/* SET_HCA_CAP is long enough for a chain of 9 input blocks */
	T_EQ(query_cap(&t, CX4_CAP_GENERAL, true, in + 0x10), 0);
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_HCA_CAP));
	cx4_set(in, CX4_CMD_IN_OP_MOD, 1);
	for (int w = 0; w < (int)sizeof(want); w++) {
		struct corrupt c = {.what = w};

		T_EQ(tdev_cmd_hook(&t, in, 0x1010, out, 0x1010, corrupt_hook, &c), -1);
		if (t.deliv != want[w])
			T_FAIL("corruption %d: delivery status 0x%x, want 0x%x", w, t.deliv,
			       want[w]);
	}
	/* the device still works after malformed commands */
	T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), 0);
	tdev_close(&t);

	/* with cmdif_checksum on, unsigned commands fail with a signature error */
	open_dev(&t, NULL);
	T_EQ(tdev_cmdif_init(&t), 0);
	T_EQ(tdev_simple(&t, OP(ENABLE_HCA), 0, 0, 0, NULL), 0);
	T_EQ(tdev_give_pages(&t, 6), 0);
	T_EQ(query_cap(&t, CX4_CAP_GENERAL, true, out), 0);
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(SET_HCA_CAP));
	memcpy(in + 0x10, out, 0x1000);
	cx4_set(in + 0x10, CX4_CAP_GEN_CMDIF_CHECKSUM, 3);
	T_EQ(tdev_cmd(&t, in, 0x1010, out, 16), 0);
	T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), -1);
	T_EQ(t.deliv, CX4_CMD_DELIVERY_SIGNAT_ERR);
	{
		struct corrupt c = {.what = 9};
		uint8_t nop[16] = {0};

		cx4_set(nop, CX4_CMD_IN_OPCODE, OP(NOP));
		T_EQ(tdev_cmd_hook(&t, nop, 16, out, 16, corrupt_hook, &c), 0);
		cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_HCA_CAP));
		cx4_set(in, CX4_CMD_IN_OP_MOD, 1);
		T_EQ(tdev_cmd_hook(&t, in, 0x1010, out, 0x1010, corrupt_hook, &c), 0);
	}
	tdev_close(&t);
}

/* ---- firmware pages ------------------------------------------------------------------------ */

static int take_pages(struct tdev *t, uint32_t n, uint8_t *out)
{
	uint8_t in[16] = {0};

	cx4_set(in, CX4_CMD_IN_OPCODE, OP(MANAGE_PAGES));
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_MANAGE_PAGES_OPMOD_HCA_RETURN_PAGES);
	cx4_set(in, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES, n);
	return tdev_cmd(t, in, 16, out, 0x10 + 8 * n);
}

static int32_t next_page_request(struct tdev *t)
{
	uint8_t eqe[64];

	for (int i = 0; i < 1000; i++) {
		int type = tdev_eq_poll(t, eqe);

		if (type == CX4_EVENT_TYPE_PAGE_REQUEST)
			return (int32_t)cx4_get(eqe, CX4_EQE_PAGE_REQ_NUM_PAGES);
		if (type < 0)
			msleep(1);
	}
	return 0;
}

static bool page_is_ours(struct tdev *t, uint64_t a)
{
	for (unsigned int c = 0; c < 64; c++)
		if (t->pages[c].p && a >= t->pages[c].iova && a < t->pages[c].iova + 64 * 4096)
			return true;
	return false;
}

static void test_pages(void)
{
	struct tdev t;
	uint8_t o16[16], *out = malloc(0x10 + 8 * 4096);
	uint32_t cqn[80];
	struct tmem cqm[80], dbr[80];
	int32_t np;

	up(&t);
	memset(cqm, 0, sizeof(cqm));
	memset(dbr, 0, sizeof(dbr));
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), CX4_QUERY_PAGES_OPMOD_REGULAR, 0, 0, o16), 0);
	T_EQ(cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES), 0);
	/* MANAGE_PAGES take: only free pages come back, each one a page we gave */
	T_EQ(take_pages(&t, 4, out), 0);
	T_EQ(cx4_get(out, CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES), 4);
	T_EQ(take_pages(&t, 4096, out), 0);
	np = (int32_t)cx4_get(out, CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES);
	/* 48 init pages less the 5 table chunks INIT_HCA took, less the 4 above */
	T_EQ(np, 48 - 5 - 4);
	for (int k = 0; k < np; k++)
		T_ASSERT(page_is_ours(&t, cx4_pas_get(out, 0x10, (size_t)k)));
	/* the pool is now low: the device asks for pages (PAGE_REQUEST, QUERY_PAGES regular) */
	np = next_page_request(&t);
	T_ASSERT(np > 0);
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), CX4_QUERY_PAGES_OPMOD_REGULAR, 0, 0, o16), 0);
	T_EQ((int32_t)cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES), np);
	T_EQ(tdev_give_pages(&t, (uint32_t)np), 0);
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), CX4_QUERY_PAGES_OPMOD_REGULAR, 0, 0, o16), 0);
	T_EQ(cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES), 0);
	/* objects live in ICM: each CQ context is read back from there by QUERY_CQ */
	for (int i = 0; i < 80; i++) {
		uint8_t q[16] = {0}, qo[0x110];

		T_EQ(tdev_create_cq(&t, &cqm[i], &dbr[i], 0, t.eqn, &cqn[i]), 0);
		cx4_set(q, CX4_CMD_IN_OPCODE, OP(QUERY_CQ));
		cx4_set(q, CX4_QUERY_CQ_IN_CQN, cqn[i]);
		T_EQ(tdev_cmd(&t, q, 16, qo, sizeof(qo)), 0);
		T_EQ(cx4_get(qo + 0x10, CX4_CQC_UAR_PAGE), t.uar);
		T_EQ(cx4_get64(qo + 0x10, CX4_CQC_DBR_ADDR), dbr[i].iova);
	}
	for (int i = 0; i < 80; i++)
		T_EQ(tdev_simple(&t, OP(DESTROY_CQ), 0, cqn[i], 0, NULL), 0);
	/* too many free pages: the device offers some back (negative num_pages) */
	T_EQ(tdev_give_pages(&t, 300), 0);
	np = next_page_request(&t);
	T_ASSERT(np < 0);
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), CX4_QUERY_PAGES_OPMOD_REGULAR, 0, 0, o16), 0);
	T_EQ((int32_t)cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES), np);
	T_EQ(take_pages(&t, (uint32_t)-np, out), 0);
	T_EQ(cx4_get(out, CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES), (uint32_t)-np);
	T_EQ(tdev_simple(&t, OP(QUERY_PAGES), CX4_QUERY_PAGES_OPMOD_REGULAR, 0, 0, o16), 0);
	T_EQ(cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES), 0);
	/* after teardown every page we still left with the device comes back */
	T_EQ(tdev_simple(&t, OP(TEARDOWN_HCA), 0, 0, 0, NULL), 0);
	T_EQ(take_pages(&t, 4096, out), 0);
	T_ASSERT(cx4_get(out, CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES) > 40);
	T_EQ(take_pages(&t, 4096, out), 0);
	T_EQ(cx4_get(out, CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES), 0);
	free(out);
	tdev_close(&t);
}

/* The model really needs its pages: ICM it cannot reach is a firmware fatal error. */
static void test_pages_unmapped(void)
{
	struct tdev t;
	uint8_t mp[0x10 + 8 * 48] = {0}, o16[16];

	open_dev(&t, NULL);
	T_EQ(tdev_cmdif_init(&t), 0);
	T_EQ(tdev_simple(&t, OP(ENABLE_HCA), 0, 0, 0, NULL), 0);
	T_EQ(tdev_give_pages(&t, 6), 0);
	cx4_set(mp, CX4_CMD_IN_OPCODE, OP(MANAGE_PAGES));
	cx4_set(mp, CX4_CMD_IN_OP_MOD, 1);
	cx4_set(mp, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES, 48);
	for (int i = 0; i < 48; i++) /* IOVAs nobody mapped */
		cx4_pas_set(mp, 0x10, (size_t)i, 0x7f0000000000ull + 4096ull * (uint64_t)i);
	T_EQ(tdev_cmd(&t, mp, sizeof(mp), o16, 16), 0);
	T_EQ(tdev_simple(&t, OP(INIT_HCA), 0, 0, 0, NULL), CX4_CMD_STAT_INT_ERR);
	/* health syndrome "ICM fetch PCI error" at 0x23D, rfr set */
	T_EQ(cx4_mmio_read32(&t.bar, 0x23c) >> 16 & 0xff, CX4_HEALTH_SYND_FETCH_PCI_ERR);
	T_EQ(cx4_mmio_read32(&t.bar, 0x238) >> 31, 1);
	/* the firmware is dead: commands are not answered any more */
	t.quiet = true;
	T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), -2);
	/* a function level reset brings it back */
	T_EQ(t.bus->ops->reset(t.bus), 0);
	T_EQ(cx4_mmio_read32(&t.bar, 0x23c) >> 16 & 0xff, 0);
	tmem_free(&t, &t.cmdq);
	tmem_free(&t, &t.mbox_in);
	tmem_free(&t, &t.mbox_out);
	memset(t.pages, 0, sizeof(t.pages));
	t.pages_given = 0;
	T_EQ(tdev_bringup(&t), 0);
	tdev_close(&t);
}

/* ---- command completion events, interrupts, slots -----------------------------------------------
 */

static void test_cmd_events(void)
{
	struct tdev t;
	uint8_t eqe[64];
	int type;

	up(&t);
	t.autodrain = false;
	/*
	 * CREATE_EQ, the last command of the bring-up, completes on the EQ it creates: its EQE
	 * (slot 0) comes after its ownership bit, so wait for it rather than race it.
	 */
	for (int i = 0; i < 5000; i++) {
		type = tdev_eq_poll(&t, eqe);
		if (type == CX4_EVENT_TYPE_CMD && cx4_get(eqe, CX4_EQE_CMD_VECTOR) == 1)
			break;
		if (type < 0)
			msleep(1);
	}
	T_EQ(type, CX4_EVENT_TYPE_CMD);
	while (tdev_eq_poll(&t, NULL) >= 0)
		;
	while (tdev_wait_irq(&t, 0, 0))
		;
	t.slot = 5;
	T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), 0);
	T_ASSERT(tdev_wait_irq(&t, 0, 5000));
	type = tdev_eq_poll(&t, eqe);
	T_EQ(type, CX4_EVENT_TYPE_CMD);
	T_EQ(cx4_get(eqe, CX4_EQE_CMD_VECTOR), 1u << 5);
	T_EQ(eqe[63] & 1, (t.eq_ci - 1) >> 7 & 1);
	/* the EQ was re-armed by tdev_eq_poll: the next command interrupts again */
	t.slot = 31;
	T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), 0);
	T_ASSERT(tdev_wait_irq(&t, 0, 5000));
	T_EQ(tdev_eq_poll(&t, eqe), CX4_EVENT_TYPE_CMD);
	T_EQ(cx4_get(eqe, CX4_EQE_CMD_VECTOR), 1u << 31);
	/* without re-arming, events are written but do not interrupt */
	t.slot = 0;
	while (tdev_wait_irq(&t, 0, 0))
		;
	{
		uint8_t *e;

		T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), 0);
		T_ASSERT(tdev_wait_irq(&t, 0, 5000)); /* armed by the last poll */
		/* consume without re-arming (no doorbell) */
		e = t.eq_mem.p + (t.eq_ci & 127) * 64;
		T_EQ(e[1], CX4_EVENT_TYPE_CMD);
		t.eq_ci++;
		cx4_mmio_write32(&t.bar, t.uar * 4096u + 0x48, t.eqn << 24 | t.eq_ci);
		T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), 0);
		T_ASSERT(!tdev_wait_irq(&t, 0, 50));
		/* arming with an unconsumed EQE interrupts at once */
		cx4_mmio_write32(&t.bar, t.uar * 4096u + 0x40, t.eqn << 24 | t.eq_ci);
		T_ASSERT(tdev_wait_irq(&t, 0, 5000));
	}
	tdev_close(&t);
}

/* ---- the debug trace --------------------------------------------------------------------- */

static void test_trace(void)
{
	struct cx4_model_config c = {0};
	struct tdev t;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	c.cmd_trace = f;
	open_dev(&t, &c);
	T_EQ(tdev_cmdif_init(&t), 0);
	T_EQ(tdev_simple(&t, OP(ENABLE_HCA), 0, 0, 0, NULL), 0);
	tdev_close(&t);
	fclose(f);
	/* Linux 4.4 mlx5_core dump_command() text ([trace] command 0) */
	T_ASSERT(strstr(buf,
			"dump command MLX5_CMD_OP_ENABLE_HCA(0x104) INPUT\n000: 07000000 "
			"00000010 00000000 00000000\n010: 01040000 00000000 00000000 00000000\n"));
	T_ASSERT(strstr(buf, "dump command MLX5_CMD_OP_ENABLE_HCA(0x104) OUTPUT\n"));
	free(buf);
}

/* ---- small resources ------------------------------------------------------------------------ */

static void test_resources(void)
{
	struct tdev t;
	uint8_t o16[16];
	uint32_t uar2, pd, td;
	struct tmem eqm = {0};
	uint32_t eqn;

	up(&t);
	T_EQ(tdev_simple(&t, OP(ALLOC_UAR), 0, 0, 0, o16), 0);
	uar2 = cx4_get(o16, CX4_ALLOC_UAR_OUT_UAR);
	T_ASSERT(uar2 >= 16 && uar2 != t.uar);
	T_EQ(tdev_simple(&t, OP(DEALLOC_UAR), 0, uar2, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(DEALLOC_UAR), 0, uar2, 0, NULL), CX4_CMD_STAT_BAD_RES_ERR);
	T_EQ(tdev_simple(&t, OP(DEALLOC_UAR), 0, t.uar, 0, NULL), CX4_CMD_STAT_RES_BUSY);
	T_EQ(tdev_simple(&t, OP(ALLOC_PD), 0, 0, 0, o16), 0);
	pd = cx4_get(o16, CX4_ALLOC_PD_OUT_PD);
	T_EQ(tdev_simple(&t, OP(DEALLOC_PD), 0, pd, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(DEALLOC_PD), 0, pd, 0, NULL), CX4_CMD_STAT_BAD_RES_ERR);
	T_EQ(tdev_simple(&t, OP(ALLOC_TRANSPORT_DOMAIN), 0, 0, 0, o16), 0);
	td = cx4_get(o16, CX4_ALLOC_TRANSPORT_DOMAIN_OUT_TD);
	T_EQ(tdev_simple(&t, OP(DEALLOC_TRANSPORT_DOMAIN), 0, td, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(DEALLOC_TRANSPORT_DOMAIN), 0, td, 0, NULL),
	     CX4_CMD_STAT_BAD_RES_ERR);
	{
		uint8_t in[16] = {0}, out[0x20];

		cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_SPECIAL_CONTEXTS));
		T_EQ(tdev_cmd(&t, in, 16, out, 0x20), 0);
		T_EQ(cx4_get(out, CX4_QUERY_SPECIAL_CONTEXTS_OUT_NULL_MKEY), 0x100);
	}
	/* EQ errors */
	T_EQ(tdev_create_eq(&t, &eqm, 30, 1, 0, &eqn), CX4_CMD_STAT_BAD_PARAM_ERR);
	T_EQ(tdev_create_eq(&t, &eqm, 4, 99, 0, &eqn), CX4_CMD_STAT_BAD_PARAM_ERR);
	T_EQ(tdev_create_eq(&t, &eqm, 4, 1, 0, &eqn), 0);
	{
		uint8_t in[16] = {0}, out[0x118];

		cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_EQ));
		cx4_set(in, CX4_QUERY_EQ_IN_EQ_NUMBER, eqn);
		T_EQ(tdev_cmd(&t, in, 16, out, sizeof(out)), 0);
		T_EQ(cx4_get(out + 0x10, CX4_EQC_LOG_EQ_SIZE), 4);
		T_EQ(cx4_get(out + 0x10, CX4_EQC_INTR), 1);
		T_EQ(cx4_pas_get(out, 0x110, 0), eqm.iova);
		cx4_set(in, CX4_QUERY_EQ_IN_EQ_NUMBER, 0xff);
		T_EQ(tdev_cmd(&t, in, 16, out, sizeof(out)), CX4_CMD_STAT_BAD_RES_ERR);
	}
	T_EQ(tdev_simple(&t, OP(DESTROY_EQ), 0, eqn, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(DESTROY_EQ), 0, eqn, 0, NULL), CX4_CMD_STAT_BAD_RES_ERR);
	/* exhausted resources: EQ numbers are 8 bits, the first is 0x10 (log_max_eq 8) */
	{
		uint32_t eqns[256];
		int n = 0, st;

		while ((st = tdev_create_eq(&t, &eqm, 4, 1, 0, &eqns[n])) == 0)
			n++;
		T_EQ(st, CX4_CMD_STAT_NO_RES_ERR);
		T_EQ(n, 256 - 0x10 - 1); /* the bring-up EQ is one of them */
		for (int i = 0; i < n; i++)
			T_EQ(tdev_simple(&t, OP(DESTROY_EQ), 0, eqns[i], 0, NULL), 0);
	}
	tdev_close(&t);
}

static void test_cq_commands(void)
{
	struct tdev t;
	struct tmem m = {0}, dbr = {0};
	uint8_t in[0x110] = {0}, out[0x118];
	uint32_t cqn;

	up(&t);
	T_EQ(tdev_create_cq(&t, &m, &dbr, 4, 0x99, &cqn), CX4_CMD_STAT_BAD_RES_ERR);
	T_EQ(tdev_create_cq(&t, &m, &dbr, 23, t.eqn, &cqn), CX4_CMD_STAT_BAD_PARAM_ERR);
	T_EQ(tdev_create_cq(&t, &m, &dbr, 4, t.eqn, &cqn), 0);
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_CQ));
	cx4_set(in, CX4_QUERY_CQ_IN_CQN, cqn);
	T_EQ(tdev_cmd(&t, in, 16, out, sizeof(out)), 0);
	T_EQ(cx4_get(out + 0x10, CX4_CQC_LOG_CQ_SIZE), 4);
	T_EQ(cx4_get(out + 0x10, CX4_CQC_C_EQN), t.eqn);
	T_EQ(cx4_get64(out + 0x10, CX4_CQC_DBR_ADDR), dbr.iova);
	T_EQ(cx4_pas_get(out, 0x110, 0), m.iova);
	/* MODIFY_CQ moderation; a resize needs its own field selects and a PAS list (the
	 * resize itself: cx4_model_mkey) */
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(MODIFY_CQ));
	cx4_set(in, CX4_MODIFY_CQ_IN_CQN, cqn);
	cx4_set(in, CX4_MODIFY_CQ_IN_FIELD_SELECT,
		CX4_MODIFY_CQ_SEL_CQ_PERIOD | CX4_MODIFY_CQ_SEL_CQ_MAX_COUNT);
	cx4_set(in + 0x10, CX4_CQC_CQ_PERIOD, 16);
	cx4_set(in + 0x10, CX4_CQC_CQ_MAX_COUNT, 8);
	T_EQ(tdev_cmd(&t, in, 0x110, out, 16), 0);
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_MODIFY_CQ_OPMOD_RESIZE);
	cx4_set(in, CX4_MODIFY_CQ_IN_FIELD_SELECT, CX4_MODIFY_CQ_SEL_STATUS);
	T_EQ(tdev_cmd(&t, in, 0x110, out, 16), CX4_CMD_STAT_BAD_PARAM_ERR);
	cx4_set(in, CX4_MODIFY_CQ_IN_FIELD_SELECT, CX4_RESIZE_CQ_SEL_LOG_CQ_SIZE);
	T_EQ(tdev_cmd(&t, in, 0x110, out, 16), CX4_CMD_STAT_BAD_INP_LEN_ERR);
	cx4_set(in, CX4_CMD_IN_OP_MOD, 2);
	T_EQ(tdev_cmd(&t, in, 0x110, out, 16), CX4_CMD_STAT_BAD_OP_ERR);
	memset(in, 0, 16);
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_CQ));
	cx4_set(in, CX4_QUERY_CQ_IN_CQN, cqn);
	T_EQ(tdev_cmd(&t, in, 16, out, sizeof(out)), 0);
	T_EQ(cx4_get(out + 0x10, CX4_CQC_CQ_PERIOD), 16);
	T_EQ(cx4_get(out + 0x10, CX4_CQC_CQ_MAX_COUNT), 8);
	/* an EQ with CQs cannot go */
	T_EQ(tdev_simple(&t, OP(DESTROY_EQ), 0, t.eqn, 0, NULL), CX4_CMD_STAT_RES_BUSY);
	T_EQ(tdev_simple(&t, OP(DESTROY_CQ), 0, cqn, 0, NULL), 0);
	T_EQ(tdev_simple(&t, OP(DESTROY_CQ), 0, cqn, 0, NULL), CX4_CMD_STAT_BAD_RES_ERR);
	tdev_close(&t);
}

/* ---- port, vport, RoCE addresses, registers ----------------------------------------------------
 */

static int reg(struct tdev *t, uint16_t id, bool write, uint8_t *data, uint32_t size)
{
	uint8_t in[0x50] = {0}, out[0x50];
	int st;

	cx4_set(in, CX4_CMD_IN_OPCODE, OP(ACCESS_REG));
	cx4_set(in, CX4_CMD_IN_OP_MOD, write ? 0 : 1);
	cx4_set(in, CX4_ACCESS_REG_IN_REGISTER_ID, id);
	memcpy(in + 0x10, data, size);
	st = tdev_cmd(t, in, 0x10 + size, out, 0x10 + size);
	if (!st)
		memcpy(data, out + 0x10, size);
	return st;
}

static int wait_event(struct tdev *t, int type, uint8_t *eqe)
{
	for (int i = 0; i < 500; i++) {
		int ty = tdev_eq_poll(t, eqe);

		if (ty == type)
			return 0;
		if (ty < 0)
			msleep(2);
	}
	return -1;
}

static void test_port(void)
{
	struct tdev t;
	uint8_t r[0x40] = {0}, o16[16], eqe[64];

	up(&t);
	T_EQ(tdev_simple(&t, OP(QUERY_VPORT_STATE), 0, 0, 0, o16), 0);
	T_EQ(cx4_get(o16, CX4_QUERY_VPORT_STATE_OUT_STATE), CX4_VPORT_STATE_UP);
	T_EQ(tdev_simple(&t, OP(QUERY_VPORT_STATE), 2, 0, 0, o16), CX4_CMD_STAT_BAD_OP_ERR);
	/* PAOS admin down -> PORT_CHANGE down, vport down; up -> active */
	cx4_set(r, CX4_PAOS_LOCAL_PORT, 1);
	T_EQ(reg(&t, CX4_REG_PAOS, false, r, CX4_PAOS_SIZE), 0);
	T_EQ(cx4_get(r, CX4_PAOS_OPER_STATUS), CX4_PORT_STATUS_UP);
	memset(r, 0, sizeof(r));
	cx4_set(r, CX4_PAOS_LOCAL_PORT, 1);
	cx4_set(r, CX4_PAOS_ASE, 1);
	cx4_set(r, CX4_PAOS_ADMIN_STATUS, CX4_PORT_STATUS_DOWN);
	T_EQ(reg(&t, CX4_REG_PAOS, true, r, CX4_PAOS_SIZE), 0);
	T_EQ(wait_event(&t, CX4_EVENT_TYPE_PORT_CHANGE, eqe), 0);
	T_EQ(cx4_get(eqe, CX4_EQE_SUB_TYPE), CX4_PORT_CHANGE_SUBTYPE_DOWN);
	T_EQ(cx4_get(eqe, CX4_EQE_PORT_NUM), 1);
	T_EQ(tdev_simple(&t, OP(QUERY_VPORT_STATE), 0, 0, 0, o16), 0);
	T_EQ(cx4_get(o16, CX4_QUERY_VPORT_STATE_OUT_STATE), CX4_VPORT_STATE_DOWN);
	cx4_set(r, CX4_PAOS_ASE, 1);
	cx4_set(r, CX4_PAOS_ADMIN_STATUS, CX4_PORT_STATUS_UP);
	T_EQ(reg(&t, CX4_REG_PAOS, true, r, CX4_PAOS_SIZE), 0);
	T_EQ(wait_event(&t, CX4_EVENT_TYPE_PORT_CHANGE, eqe), 0);
	T_EQ(cx4_get(eqe, CX4_EQE_SUB_TYPE), CX4_PORT_CHANGE_SUBTYPE_ACTIVE);
	/* the cable */
	T_EQ(cx4_model_set_link(t.bus, false), 0);
	T_EQ(wait_event(&t, CX4_EVENT_TYPE_PORT_CHANGE, eqe), 0);
	T_EQ(cx4_get(eqe, CX4_EQE_SUB_TYPE), CX4_PORT_CHANGE_SUBTYPE_DOWN);
	T_EQ(cx4_model_set_link(t.bus, true), 0);
	T_EQ(wait_event(&t, CX4_EVENT_TYPE_PORT_CHANGE, eqe), 0);
	T_EQ(cx4_get(eqe, CX4_EQE_SUB_TYPE), CX4_PORT_CHANGE_SUBTYPE_ACTIVE);
	cx4_set(r, CX4_PAOS_LOCAL_PORT, 2);
	T_EQ(reg(&t, CX4_REG_PAOS, false, r, CX4_PAOS_SIZE), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* PTYS: Ethernet, 100GBASE-CR4 on the CX4 profile */
	memset(r, 0, sizeof(r));
	cx4_set(r, CX4_PTYS_LOCAL_PORT, 1);
	cx4_set(r, CX4_PTYS_PROTO_MASK, CX4_PTYS_PROTO_EN);
	T_EQ(reg(&t, CX4_REG_PTYS, false, r, CX4_PTYS_SIZE), 0);
	T_EQ(cx4_get(r, CX4_PTYS_ETH_PROTO_OPER), 1u << CX4_LINK_MODE_100GBASE_CR4);
	cx4_set(r, CX4_PTYS_PROTO_MASK, CX4_PTYS_PROTO_IB);
	T_EQ(reg(&t, CX4_REG_PTYS, false, r, CX4_PTYS_SIZE), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* PMTU: default port MTU 4200 (+22 frame bytes); admin MTU settable below the max */
	memset(r, 0, sizeof(r));
	cx4_set(r, CX4_PMTU_LOCAL_PORT, 1);
	T_EQ(reg(&t, CX4_REG_PMTU, false, r, CX4_PMTU_SIZE), 0);
	T_EQ(cx4_get(r, CX4_PMTU_MAX_MTU), 4222);
	T_EQ(cx4_get(r, CX4_PMTU_OPER_MTU), 4222);
	cx4_set(r, CX4_PMTU_ADMIN_MTU, 1522);
	T_EQ(reg(&t, CX4_REG_PMTU, true, r, CX4_PMTU_SIZE), 0);
	T_EQ(cx4_get(r, CX4_PMTU_OPER_MTU), 1522);
	cx4_set(r, CX4_PMTU_ADMIN_MTU, 9000);
	T_EQ(reg(&t, CX4_REG_PMTU, true, r, CX4_PMTU_SIZE), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* registers the model does not have */
	T_EQ(reg(&t, CX4_REG_PPCNT, false, r, 0x40), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* HOST_ENDIANNESS reads back */
	memset(r, 0, sizeof(r));
	cx4_set(r, CX4_HOST_ENDIANNESS_HE, CX4_HOST_ENDIANNESS_BE);
	T_EQ(reg(&t, CX4_REG_HOST_ENDIANNESS, true, r, 0x10), 0);
	memset(r, 0, sizeof(r));
	T_EQ(reg(&t, CX4_REG_HOST_ENDIANNESS, false, r, 0x10), 0);
	T_EQ(cx4_get(r, CX4_HOST_ENDIANNESS_HE), CX4_HOST_ENDIANNESS_BE);
	tdev_close(&t);
}

static void test_vport_roce(void)
{
	struct tdev t;
	uint8_t in[0x200] = {0}, out[0x210];
	uint8_t *a = in + 0x10;
	uint32_t ip;

	up(&t);
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_NIC_VPORT_CONTEXT));
	T_EQ(tdev_cmd(&t, in, 16, out, 0x110), 0);
	T_EQ(cx4_get(out + 0x10, CX4_NIC_VPORT_ROCE_EN), 0);
	T_EQ(cx4_get(out + 0x10, CX4_NIC_VPORT_PERM_MAC_47_32), 0x0200);
	cx4_set(in, CX4_QUERY_NIC_VPORT_CONTEXT_IN_OTHER_VPORT, 1);
	T_EQ(tdev_cmd(&t, in, 16, out, 0x110), CX4_CMD_STAT_BAD_PARAM_ERR);
	T_EQ(tdev_roce_setup(&t), 0);
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_NIC_VPORT_CONTEXT));
	T_EQ(tdev_cmd(&t, in, 16, out, 0x110), 0);
	T_EQ(cx4_get(out + 0x10, CX4_NIC_VPORT_ROCE_EN), 1);
	/* address lists are not modelled */
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(MODIFY_NIC_VPORT_CONTEXT));
	cx4_set(in, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_FIELD_SELECT, CX4_NIC_VPORT_SEL_ADDRESSES_LIST);
	T_EQ(tdev_cmd(&t, in, 0x200, out, 16), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* RoCE address 0 was set by tdev_roce_setup */
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_ROCE_ADDRESS));
	T_EQ(tdev_cmd(&t, in, 16, out, 0x30), 0);
	memcpy(&ip, out + 0x10 + 12, 4);
	T_EQ(ip, t.ip);
	T_EQ(cx4_get(out + 0x10, CX4_ROCE_ADDR_ROCE_VERSION), CX4_ROCE_VERSION_2);
	cx4_set(in, CX4_QUERY_ROCE_ADDRESS_IN_INDEX, 256);
	T_EQ(tdev_cmd(&t, in, 16, out, 0x30), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* GIDs through QUERY_HCA_VPORT_GID */
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(QUERY_HCA_VPORT_GID));
	T_EQ(tdev_cmd(&t, in, 16, out, 0x20), 0);
	T_EQ(out[0x10 + 10], 0xff);
	T_EQ(memcmp(out + 0x10 + 12, &t.ip, 4), 0);
	/* RoCE v1 and IPv6 entries are refused (roce_cap: v2 over IPv4) */
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, OP(SET_ROCE_ADDRESS));
	cx4_set(in, CX4_SET_ROCE_ADDRESS_IN_INDEX, 1);
	a[10] = a[11] = 0xff;
	a[12] = 10;
	cx4_set(a, CX4_ROCE_ADDR_ROCE_VERSION, CX4_ROCE_VERSION_1);
	T_EQ(tdev_cmd(&t, in, 0x30, out, 16), CX4_CMD_STAT_BAD_PARAM_ERR);
	cx4_set(a, CX4_ROCE_ADDR_ROCE_VERSION, CX4_ROCE_VERSION_2);
	cx4_set(a, CX4_ROCE_ADDR_ROCE_L3_TYPE, CX4_ROCE_L3_TYPE_IPV6);
	T_EQ(tdev_cmd(&t, in, 0x30, out, 16), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* an all-zero entry deletes */
	memset(a, 0, 0x20);
	T_EQ(tdev_cmd(&t, in, 0x30, out, 16), 0);
	tdev_close(&t);
}

/* ---- resets ------------------------------------------------------------------------------- */

static void test_reset(void)
{
	struct tdev t;

	up(&t);
	/* nic_interface = disabled (after a fast teardown): the function stops answering */
	cx4_mmio_write32(&t.bar, 0x14, (uint32_t)t.cmdq.iova | CX4_NIC_IFC_DISABLED << 8);
	for (int i = 0;
	     i < 1000 && (cx4_mmio_read32(&t.bar, 0x14) >> 8 & 7) != CX4_NIC_IFC_DISABLED; i++)
		msleep(1);
	T_EQ(cx4_mmio_read32(&t.bar, 0x14) >> 8 & 7, CX4_NIC_IFC_DISABLED);
	t.quiet = true;
	T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), -2);
	/* FLR: everything as after power-on */
	T_EQ(t.bus->ops->reset(t.bus), 0);
	T_EQ(cx4_mmio_read32(&t.bar, 0x14), 0x56);
	tmem_free(&t, &t.cmdq);
	tmem_free(&t, &t.mbox_in);
	tmem_free(&t, &t.mbox_out);
	tmem_free(&t, &t.eq_mem);
	memset(t.pages, 0, sizeof(t.pages));
	t.pages_given = 0;
	t.quiet = false;
	T_EQ(tdev_bringup(&t), 0);
	T_EQ(tdev_simple(&t, OP(NOP), 0, 0, 0, NULL), 0);
	tdev_close(&t);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
    {"init_segment", test_init_segment},
    {"cmdq_before_boot", test_cmdq_before_boot},
    {"bringup_caps", test_bringup_caps},
    {"cmd_status", test_cmd_status},
    {"delivery_status", test_delivery_status},
    {"pages", test_pages},
    {"pages_unmapped", test_pages_unmapped},
    {"cmd_events", test_cmd_events},
    {"trace", test_trace},
    {"resources", test_resources},
    {"cq_commands", test_cq_commands},
    {"port", test_port},
    {"vport_roce", test_vport_roce},
    {"reset", test_reset},
};

int main(int argc, char **argv)
{
	int ran = 0;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (argc > 1 && strcmp(argv[1], tests[i].name))
			continue;
		t_name = tests[i].name;
		tests[i].fn();
		printf("ok %s\n", tests[i].name);
		ran++;
	}
	return ran ? 0 : 1;
}
