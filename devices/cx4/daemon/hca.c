// SPDX-License-Identifier: MIT
/*
 * Bringing a ConnectX-4 up and down, in the order Linux 4.4 mlx5_core does it (the [trace],
 * mlx5_load_one/mlx5_dev_init in drivers/net/ethernet/mellanox/mlx5/core/main.c):
 *
 *   PCI function reset (the bus: a fresh device, as Snabb and rdma-core VFIO start)
 *   command queue address -> wait for the initializing bit to clear
 *   ENABLE_HCA -> QUERY_ISSI / SET_ISSI 1
 *   QUERY_PAGES(boot) -> MANAGE_PAGES(give)
 *   ACCESS_REG(HOST_ENDIANNESS)
 *   QUERY_HCA_CAP(general, max and cur) -> SET_HCA_CAP(general)
 *   [QUERY_HCA_CAP(atomic) -> SET_HCA_CAP(atomic): 8-byte replies in host order, newer Linux]
 *   QUERY_PAGES(init) -> MANAGE_PAGES(give) -> INIT_HCA
 *   QUERY_HCA_CAP of every type the device has (cur and max), QUERY_ADAPTER
 *   QUERY_PAGES(regular) -> MANAGE_PAGES(give)   [Snabb; Linux waits for page requests]
 *   ALLOC_UAR -> CREATE_EQ (commands, async, pages, one per completion vector)
 *
 * and down again: DESTROY_EQ, DEALLOC_UAR, TEARDOWN_HCA, reclaim every page, DISABLE_HCA.
 * docs/cx4-driver.md lists every difference from the Linux trace and why.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cx4d.h"

enum {
	HCA_NONE,
	HCA_CMDQ,
	HCA_ENABLED,
	HCA_INITED,
};

#define FW_INIT_TIMEOUT_MS	120000	/* rdma-core mlx5_vfio wait_fw_init; Linux FW_PRE_INIT */

static int simple_cmd(struct cx4d *d, uint16_t opcode, uint16_t op_mod, uint32_t dw2)
{
	uint8_t in[CX4_CMD_HDR_SIZE] = { 0 }, out[CX4_CMD_HDR_SIZE];

	cx4d_cmd_set_header(in, opcode, op_mod);
	cx4_be32_store(in + 8, dw2);
	return cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

static int wait_fw_init(struct cx4d *d)
{
	for (unsigned int ms = 0; ms < FW_INIT_TIMEOUT_MS; ms++) {
		uint32_t v = cx4_mmio_read32(&d->bus->bar0, CX4_FLD_OFF(CX4_ISEG_INITIALIZING));

		if (!(v >> 31))
			return 0;
		usleep(1000);
	}
	cx4d_log(d, "firmware did not finish initializing in %d s", FW_INIT_TIMEOUT_MS / 1000);
	return ETIMEDOUT;
}

/* ISSI: use 1 when the device supports it, as Linux mlx5_core_set_issi() does. */
static int set_issi(struct cx4d *d)
{
	uint8_t in[CX4_QUERY_ISSI_IN_SIZE] = { 0 }, out[CX4_QUERY_ISSI_OUT_SIZE] = { 0 };
	uint8_t st = 0;
	uint32_t sup;
	int err;

	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_ISSI, 0);
	err = cx4d_cmd_quiet(d, in, sizeof(in), out, sizeof(out), &st);
	if (err) {
		if (st == CX4_CMD_STAT_BAD_OP_ERR) {
			/* pre-ISSI firmware: stay at ISSI 0 (Linux: "Only ISSI 0 is supported") */
			d->issi = 0;
			return 0;
		}
		cx4d_log(d, "QUERY_ISSI failed (%d)", err);
		return err;
	}
	sup = cx4_get(out, CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_DW0);
	if (sup & (1u << 1)) {
		err = simple_cmd(d, CX4_CMD_OP_SET_ISSI, 0, 1);
		if (err)
			return err;
		d->issi = 1;
		return 0;
	}
	if (sup & 1) {
		d->issi = 0;
		return 0;
	}
	cx4d_log(d, "device supports neither ISSI 0 nor 1 (0x%x)", sup);
	return EOPNOTSUPP;
}

int cx4d_query_cap(struct cx4d *d, unsigned int type, unsigned int cur, uint8_t *cap)
{
	uint8_t in[CX4_QUERY_HCA_CAP_IN_SIZE] = { 0 };
	uint8_t *out = calloc(1, CX4_QUERY_HCA_CAP_OUT_SIZE);
	int err;

	if (!out)
		return ENOMEM;
	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_HCA_CAP, CX4_HCA_CAP_OPMOD(type, cur));
	err = cx4d_cmd(d, in, sizeof(in), out, CX4_QUERY_HCA_CAP_OUT_SIZE);
	if (!err)
		memcpy(cap, out + CX4_QUERY_HCA_CAP_OUT_CAPABILITY, CX4_HCA_CAP_SIZE);
	free(out);
	return err;
}

static int set_cap(struct cx4d *d, unsigned int type, const uint8_t *cap)
{
	uint8_t *in = calloc(1, CX4_SET_HCA_CAP_IN_SIZE);
	uint8_t out[CX4_SET_HCA_CAP_OUT_SIZE];
	int err;

	if (!in)
		return ENOMEM;
	cx4d_cmd_set_header(in, CX4_CMD_OP_SET_HCA_CAP, CX4_SET_HCA_CAP_OPMOD(type));
	memcpy(in + CX4_SET_HCA_CAP_IN_CAPABILITY, cap, CX4_HCA_CAP_SIZE);
	err = cx4d_cmd(d, in, CX4_SET_HCA_CAP_IN_SIZE, out, sizeof(out));
	free(in);
	return err;
}

/*
 * Linux 4.4 handle_hca_cap(): start from the current capabilities and change what the
 * driver's profile wants: pkey table of 128 entries (encoded 0), log_max_qp from profile 2
 * (17) — we take the device's maximum when that is smaller —, command checksums off and
 * 4 KB UAR pages.
 */
static int handle_hca_cap(struct cx4d *d)
{
	uint8_t *set = malloc(CX4_HCA_CAP_SIZE);
	unsigned int max_qp;
	int err;

	if (!set)
		return ENOMEM;
	err = cx4d_query_cap(d, CX4_CAP_GENERAL, CX4_HCA_CAP_OPMOD_MAX, d->cap_gen_max);
	if (!err)
		err = cx4d_query_cap(d, CX4_CAP_GENERAL, CX4_HCA_CAP_OPMOD_CUR, d->cap_gen);
	if (err)
		goto out;
	memcpy(set, d->cap_gen, CX4_HCA_CAP_SIZE);
	cx4_set(set, CX4_CAP_GEN_PKEY_TABLE_SIZE, 0);
	max_qp = cx4_get(d->cap_gen_max, CX4_CAP_GEN_LOG_MAX_QP);
	cx4_set(set, CX4_CAP_GEN_LOG_MAX_QP, max_qp < 17 ? max_qp : 17);
	cx4_set(set, CX4_CAP_GEN_CMDIF_CHECKSUM, 0);
	cx4_set(set, CX4_CAP_GEN_LOG_UAR_PAGE_SZ, 0);
	err = set_cap(d, CX4_CAP_GENERAL, set);
out:
	free(set);
	return err;
}

/*
 * Newer Linux handle_hca_cap_atomic(): when the device can answer 8-byte atomics in host
 * order, ask for it. Upstream mlx5_ib reports IB_ATOMIC_HCA only in that mode (research
 * cx4.md §2.11), and IBV_ATOMIC_HCA is what perftest and UCX look for.
 */
static int handle_hca_cap_atomic(struct cx4d *d)
{
	uint8_t *set;
	int err;

	if (!cx4_get(d->cap_gen, CX4_CAP_GEN_ATOMIC))
		return 0;
	err = cx4d_query_cap(d, CX4_CAP_ATOMIC, CX4_HCA_CAP_OPMOD_CUR, d->cap_atomic);
	if (err)
		return err;
	if (!cx4_get(d->cap_atomic, CX4_CAP_ATOMIC_SUPPORTED_8B_ENDIANNESS_MODE_1))
		return 0;
	set = calloc(1, CX4_HCA_CAP_SIZE);
	if (!set)
		return ENOMEM;
	cx4_set(set, CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE, 1);
	err = set_cap(d, CX4_CAP_ATOMIC, set);
	free(set);
	return err;
}

/* Linux 4.4 mlx5_query_hca_caps(): cur and max of every capability type the device has. */
static int query_caps_after_init(struct cx4d *d)
{
	uint8_t *scratch = malloc(CX4_HCA_CAP_SIZE);
	int err;

	if (!scratch)
		return ENOMEM;
	err = cx4d_query_cap(d, CX4_CAP_GENERAL, CX4_HCA_CAP_OPMOD_CUR, d->cap_gen);
	if (!err)
		err = cx4d_query_cap(d, CX4_CAP_GENERAL, CX4_HCA_CAP_OPMOD_MAX, d->cap_gen_max);
	if (!err && cx4_get(d->cap_gen, CX4_CAP_GEN_ETH_NET_OFFLOADS)) {
		err = cx4d_query_cap(d, CX4_CAP_ETHERNET_OFFLOADS, CX4_HCA_CAP_OPMOD_CUR, scratch);
		if (!err)
			err = cx4d_query_cap(d, CX4_CAP_ETHERNET_OFFLOADS, CX4_HCA_CAP_OPMOD_MAX,
					     scratch);
	}
	if (!err && cx4_get(d->cap_gen, CX4_CAP_GEN_ATOMIC)) {
		err = cx4d_query_cap(d, CX4_CAP_ATOMIC, CX4_HCA_CAP_OPMOD_CUR, d->cap_atomic);
		if (!err)
			err = cx4d_query_cap(d, CX4_CAP_ATOMIC, CX4_HCA_CAP_OPMOD_MAX, scratch);
		d->have_atomic_cap = !err;
	}
	if (!err && cx4_get(d->cap_gen, CX4_CAP_GEN_ROCE)) {
		err = cx4d_query_cap(d, CX4_CAP_ROCE, CX4_HCA_CAP_OPMOD_CUR, d->cap_roce);
		if (!err)
			err = cx4d_query_cap(d, CX4_CAP_ROCE, CX4_HCA_CAP_OPMOD_MAX, scratch);
		d->have_roce_cap = !err;
	}
	if (!err && cx4_get(d->cap_gen, CX4_CAP_GEN_NIC_FLOW_TABLE)) {
		err = cx4d_query_cap(d, CX4_CAP_FLOW_TABLE, CX4_HCA_CAP_OPMOD_CUR, scratch);
		if (!err)
			err = cx4d_query_cap(d, CX4_CAP_FLOW_TABLE, CX4_HCA_CAP_OPMOD_MAX, scratch);
	}
	free(scratch);
	return err;
}

static int query_adapter(struct cx4d *d)
{
	uint8_t in[CX4_QUERY_ADAPTER_IN_SIZE] = { 0 }, out[CX4_QUERY_ADAPTER_OUT_SIZE];
	const uint8_t *blk = out + CX4_QUERY_ADAPTER_OUT_STRUCT;
	int err;

	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_ADAPTER, 0);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	memcpy(d->psid, blk + CX4_ADAPTER_PSID_OFF, CX4_ADAPTER_PSID_LEN);
	d->psid[CX4_ADAPTER_PSID_LEN] = 0;
	return 0;
}

/* rdma-core mlx5_vfio / Linux mlx5_set_driver_endianness: he = 0 on a little-endian host. */
static int set_host_endianness(struct cx4d *d)
{
	uint8_t in[CX4_ACCESS_REG_IN_SIZE + CX4_HOST_ENDIANNESS_SIZE] = { 0 };
	uint8_t out[CX4_ACCESS_REG_OUT_SIZE + CX4_HOST_ENDIANNESS_SIZE];

	cx4d_cmd_set_header(in, CX4_CMD_OP_ACCESS_REG, CX4_ACCESS_REG_OPMOD_WRITE);
	cx4_set(in, CX4_ACCESS_REG_IN_REGISTER_ID, CX4_REG_HOST_ENDIANNESS);
	cx4_set(in + CX4_ACCESS_REG_IN_DATA, CX4_HOST_ENDIANNESS_HE,
		__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? CX4_HOST_ENDIANNESS_LE :
							    CX4_HOST_ENDIANNESS_BE);
	return cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

static int alloc_uar(struct cx4d *d, uint32_t *uar)
{
	uint8_t in[CX4_ALLOC_UAR_IN_SIZE] = { 0 }, out[CX4_ALLOC_UAR_OUT_SIZE];
	int err;

	cx4d_cmd_set_header(in, CX4_CMD_OP_ALLOC_UAR, 0);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (!err)
		*uar = cx4_get(out, CX4_ALLOC_UAR_OUT_UAR);
	return err;
}

int cx4d_hca_up(struct cx4d *d)
{
	struct cx4_mmio *bar = &d->bus->bar0;
	uint32_t v;
	int err;

	/* PCI function level reset: whatever a previous owner left is gone */
	err = d->bus->ops->reset(d->bus);
	if (err) {
		cx4d_log(d, "function reset failed (%d)", err);
		return EIO;
	}
	v = cx4_mmio_read32(bar, CX4_FLD_OFF(CX4_ISEG_FW_REV_MAJOR));
	d->fw_major = v & 0xffff;
	d->fw_minor = v >> 16;
	v = cx4_mmio_read32(bar, CX4_FLD_OFF(CX4_ISEG_CMDIF_REV));
	d->cmdif_rev = v >> 16;
	d->fw_sub = v & 0xffff;
	cx4d_log(d, "firmware version: %u.%u.%u", d->fw_major, d->fw_minor, d->fw_sub);
	if (d->cmdif_rev != CX4_CMDIF_REV) {
		cx4d_log(d, "command interface revision %u, driver speaks %u", d->cmdif_rev,
			 CX4_CMDIF_REV);
		return EIO;
	}
	err = cx4d_cmd_init(d);
	if (err)
		return err;
	d->hca_state = HCA_CMDQ;
	err = wait_fw_init(d);
	if (err)
		return err;

	err = simple_cmd(d, CX4_CMD_OP_ENABLE_HCA, 0, 0);
	if (err)
		return err;
	d->hca_state = HCA_ENABLED;
	err = set_issi(d);
	if (!err)
		err = cx4d_pages_satisfy(d, CX4_QUERY_PAGES_OPMOD_BOOT);
	if (!err)
		err = set_host_endianness(d);
	if (!err)
		err = handle_hca_cap(d);
	if (!err)
		err = handle_hca_cap_atomic(d);
	if (!err)
		err = cx4d_pages_satisfy(d, CX4_QUERY_PAGES_OPMOD_INIT);
	if (!err)
		err = simple_cmd(d, CX4_CMD_OP_INIT_HCA, 0, 0);
	if (err)
		return err;
	d->hca_state = HCA_INITED;
	err = query_caps_after_init(d);
	if (!err)
		err = query_adapter(d);
	if (!err)
		err = cx4d_pages_satisfy(d, CX4_QUERY_PAGES_OPMOD_REGULAR);
	if (!err)
		err = alloc_uar(d, &d->uar);
	if (err)
		return err;
	d->have_uar = true;
	d->uar_mmio = (struct cx4_mmio){ .base = bar->base + (size_t)d->uar * CX4_UAR_PAGE_SIZE,
					 .len = CX4_UAR_PAGE_SIZE, .kick = bar->kick };
	err = cx4d_eqs_create(d);
	if (err)
		return err;
	return cx4d_port_init(d);
}

/* Linux mlx5_cmd_teardown_hca + mlx5_reclaim_startup_pages + mlx5_core_disable_hca. */
void cx4d_hca_down(struct cx4d *d)
{
	cx4d_eqs_destroy(d);
	if (d->have_uar && !d->dead)
		simple_cmd(d, CX4_CMD_OP_DEALLOC_UAR, 0, d->uar);
	d->have_uar = false;
	if (d->hca_state >= HCA_INITED && !d->dead)
		simple_cmd(d, CX4_CMD_OP_TEARDOWN_HCA, 0, CX4_TEARDOWN_PROFILE_GRACEFUL_CLOSE);
	if (d->hca_state >= HCA_ENABLED && !d->dead) {
		cx4d_pages_reclaim_all(d);
		simple_cmd(d, CX4_CMD_OP_DISABLE_HCA, 0, 0);
	}
	d->hca_state = HCA_NONE;
	cx4d_pages_free_all(d);
	cx4d_cmd_fini(d);
}
