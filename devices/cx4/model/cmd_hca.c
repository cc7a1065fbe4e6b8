// SPDX-License-Identifier: MIT
/*
 * HCA life-cycle commands ([PRM] "HCA Configuration"; layouts in kernel-abi/cx4_prm_cmd.h):
 * ENABLE_HCA, DISABLE_HCA, QUERY_ISSI, SET_ISSI, QUERY_PAGES, MANAGE_PAGES, QUERY_HCA_CAP,
 * SET_HCA_CAP, INIT_HCA, TEARDOWN_HCA, QUERY_ADAPTER, NOP.
 *
 * The states: after reset the function is disabled; ENABLE_HCA enables it; the boot pages
 * make the capability pages exist (QUERY/SET_HCA_CAP); INIT_HCA, given the init pages, makes
 * the resource commands available; TEARDOWN_HCA returns to "enabled", every object gone and
 * every page returnable. The Linux order ([trace]) and the rdma-core VFIO order
 * (providers/mlx5/mlx5_vfio.c mlx5_vfio_setup_function) both work.
 */
#include <errno.h>
#include <string.h>

#include "model.h"

#define OP(x) CX4_CMD_OP_##x

static int enable_hca(struct mdev *d, struct mcmd *c)
{
	if (cx4_get(c->in, CX4_ENABLE_HCA_IN_FUNCTION_ID) ||
	    cx4_get(c->in, CX4_ENABLE_HCA_IN_EMBEDDED_CPU_FUNCTION))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(ENABLE_HCA), 1));
	if (d->hca == MHCA_DISABLED)
		d->hca = MHCA_ENABLED;
	return CX4_CMD_STAT_OK;
}

static int disable_hca(struct mdev *d, struct mcmd *c)
{
	if (cx4_get(c->in, CX4_DISABLE_HCA_IN_FUNCTION_ID))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(DISABLE_HCA), 1));
	cx4m_mdev_destroy_objects(d);
	cx4m_icm_teardown(d);
	d->hca = MHCA_DISABLED;
	d->issi = 0;
	return CX4_CMD_STAT_OK;
}

/*
 * ISSI: the model implements the ISSI 1 layouts and also accepts ISSI 0 (iPXE golan never
 * negotiates); supported_issi_dw0 = 0x3. The [trace] FW answers 0x2 with current 0.
 */
static int query_issi(struct mdev *d, struct mcmd *c)
{
	cx4_set(c->out, CX4_QUERY_ISSI_OUT_CURRENT_ISSI, d->issi);
	cx4_set(c->out, CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_DW0, 0x3);
	return CX4_CMD_STAT_OK;
}

static int set_issi(struct mdev *d, struct mcmd *c)
{
	uint32_t issi = cx4_get(c->in, CX4_SET_ISSI_IN_CURRENT_ISSI);

	if (d->hca == MHCA_INIT)
		return mcmd_err(c, CX4_CMD_STAT_BAD_SYS_STATE_ERR, MSYND(OP(SET_ISSI), 1));
	if (issi > 1)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(SET_ISSI), 2));
	d->issi = (uint16_t)issi;
	return CX4_CMD_STAT_OK;
}

static int query_pages(struct mdev *d, struct mcmd *c)
{
	if (c->op_mod < CX4_QUERY_PAGES_OPMOD_BOOT || c->op_mod > CX4_QUERY_PAGES_OPMOD_REGULAR)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(OP(QUERY_PAGES), 1));
	if (cx4_get(c->in, CX4_QUERY_PAGES_IN_FUNCTION_ID))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(QUERY_PAGES), 2));
	cx4_set(c->out, CX4_QUERY_PAGES_OUT_FUNCTION_ID, 0);
	cx4_set(c->out, CX4_QUERY_PAGES_OUT_NUM_PAGES, (uint32_t)cx4m_icm_query(d, c->op_mod));
	return CX4_CMD_STAT_OK;
}

static int manage_pages(struct mdev *d, struct mcmd *c)
{
	uint32_t n = cx4_get(c->in, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES);
	struct icm *m = &d->icm;

	if (cx4_get(c->in, CX4_MANAGE_PAGES_IN_FUNCTION_ID))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(MANAGE_PAGES), 1));
	switch (c->op_mod) {
	case CX4_MANAGE_PAGES_OPMOD_ALLOC_FAIL:
		/* The driver could not satisfy the request: forget it. */
		if (m->request > 0)
			m->request = 0;
		return CX4_CMD_STAT_OK;
	case CX4_MANAGE_PAGES_OPMOD_ALLOC_SUCCESS:
		if ((uint64_t)CX4_MANAGE_PAGES_IN_PAS + 8ull * n > c->ilen)
			return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR,
					MSYND(OP(MANAGE_PAGES), 2));
		/* All or nothing: check every entry before taking any. */
		for (uint32_t i = 0; i < n; i++) {
			uint64_t a = cx4_pas_get(c->in, CX4_MANAGE_PAGES_IN_PAS, i);

			if ((a & 0xfff) || !a)
				return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
						MSYND(OP(MANAGE_PAGES), 3));
		}
		for (uint32_t i = 0; i < n; i++) {
			int err = cx4m_icm_give(d, cx4_pas_get(c->in, CX4_MANAGE_PAGES_IN_PAS, i));

			if (err) {
				/* undo: the pages given by this command go back */
				uint64_t tmp;

				for (uint32_t j = 0; j < i; j++)
					cx4m_icm_take(d, &tmp, 1);
				return mcmd_err(c,
						err == -EEXIST ? CX4_CMD_STAT_BAD_PARAM_ERR
							       : CX4_CMD_STAT_NO_RES_ERR,
						MSYND(OP(MANAGE_PAGES), 4));
			}
		}
		if (m->request > 0)
			m->request = (int32_t)n >= m->request ? 0 : m->request - (int32_t)n;
		if (!m->boot_done && m->ngiven >= m->boot_need && cx4m_icm_boot(d) && d->fatal)
			return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(MANAGE_PAGES), 5));
		cx4m_icm_balance(d);
		return CX4_CMD_STAT_OK;
	case CX4_MANAGE_PAGES_OPMOD_HCA_RETURN_PAGES: {
		uint64_t iova[512];
		uint32_t got = 0;

		if ((uint64_t)CX4_MANAGE_PAGES_OUT_PAS + 8ull * n > c->olen)
			return mcmd_err(c, CX4_CMD_STAT_BAD_OUTP_LEN_ERR,
					MSYND(OP(MANAGE_PAGES), 6));
		while (got < n) {
			uint32_t want = n - got > 512 ? 512 : n - got;
			uint32_t k = cx4m_icm_take(d, iova, want);

			for (uint32_t i = 0; i < k; i++)
				cx4_pas_set(c->out, CX4_MANAGE_PAGES_OUT_PAS, got + i, iova[i]);
			got += k;
			if (k < want)
				break;
		}
		cx4_set(c->out, CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES, got);
		if (m->request < 0)
			m->request = (int32_t)got >= -m->request ? 0 : m->request + (int32_t)got;
		cx4m_icm_balance(d);
		return CX4_CMD_STAT_OK;
	}
	default:
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(OP(MANAGE_PAGES), 7));
	}
}

static int query_hca_cap(struct mdev *d, struct mcmd *c)
{
	unsigned int type = c->op_mod >> 1;
	int slot = cx4m_caps_boot_slot(type);
	uint8_t *page = c->out + CX4_QUERY_HCA_CAP_OUT_CAPABILITY;

	if (cx4_get(c->in, CX4_QUERY_HCA_CAP_IN_OTHER_FUNCTION))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(QUERY_HCA_CAP), 1));
	if (slot < 0)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(OP(QUERY_HCA_CAP), 2));
	if (!(c->op_mod & CX4_HCA_CAP_OPMOD_CUR)) {
		cx4m_caps_max(d, type, page);
		return CX4_CMD_STAT_OK;
	}
	/* The current page lives in ICM (a boot page). */
	if (cx4m_icm_page_rw(d, d->icm.boot_page[ICM_BOOT_CAP_GEN + slot], 0, page,
			     CX4_HCA_CAP_SIZE, false))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(QUERY_HCA_CAP), 3));
	return CX4_CMD_STAT_OK;
}

static int set_hca_cap(struct mdev *d, struct mcmd *c)
{
	unsigned int type = c->op_mod >> 1;
	int slot = cx4m_caps_boot_slot(type);
	uint8_t cur[CX4_HCA_CAP_SIZE], nw[CX4_HCA_CAP_SIZE];
	int st;

	if (cx4_get(c->in, CX4_SET_HCA_CAP_IN_OTHER_FUNCTION))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(SET_HCA_CAP), 1));
	if (slot < 0 || (c->op_mod & 1))
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(OP(SET_HCA_CAP), 2));
	/* Capabilities are fixed once the HCA is initialised. */
	if (d->hca == MHCA_INIT)
		return mcmd_err(c, CX4_CMD_STAT_BAD_SYS_STATE_ERR, MSYND(OP(SET_HCA_CAP), 3));
	if (cx4m_icm_page_rw(d, d->icm.boot_page[ICM_BOOT_CAP_GEN + slot], 0, cur, sizeof(cur),
			     false))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(SET_HCA_CAP), 4));
	st = cx4m_caps_set_check(d, type, cur, c->in + CX4_SET_HCA_CAP_IN_CAPABILITY, nw,
				 &c->syndrome);
	if (st)
		return st;
	if (cx4m_icm_page_rw(d, d->icm.boot_page[ICM_BOOT_CAP_GEN + slot], 0, nw, sizeof(nw), true))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(SET_HCA_CAP), 5));
	memcpy(d->cap_cur[slot], nw, sizeof(nw));
	return CX4_CMD_STAT_OK;
}

static int init_hca(struct mdev *d, struct mcmd *c)
{
	int err;

	if (d->hca == MHCA_INIT)
		return mcmd_err(c, CX4_CMD_STAT_BAD_SYS_STATE_ERR, MSYND(OP(INIT_HCA), 1));
	err = cx4m_icm_init_hca(d);
	if (err == -ENOMEM)
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(INIT_HCA), 2));
	if (err)
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(INIT_HCA), 3));
	if (cx4m_mdev_init_hca(d))
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(INIT_HCA), 4));
	d->hca = MHCA_INIT;
	return CX4_CMD_STAT_OK;
}

static int teardown_hca(struct mdev *d, struct mcmd *c)
{
	/*
	 * Graceful close (profile 0) only: force_teardown and fast_teardown are not advertised
	 * (cmd_hca_cap), so drivers fall back to profile 0 (Linux, rdma-core).
	 */
	if (cx4_get(c->in, CX4_TEARDOWN_HCA_IN_PROFILE) != CX4_TEARDOWN_PROFILE_GRACEFUL_CLOSE)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(TEARDOWN_HCA), 1));
	cx4m_mdev_destroy_objects(d);
	cx4m_icm_teardown(d);
	d->hca = MHCA_ENABLED;
	return CX4_CMD_STAT_OK;
}

static int query_adapter(struct mdev *d, struct mcmd *c)
{
	uint8_t *p = c->out + CX4_QUERY_ADAPTER_OUT_STRUCT;

	/* [trace]: ieee_vendor_id 0x0002C9 (Mellanox OUI), vsd_vendor_id 0x15B3, PSID */
	cx4_set(p, CX4_ADAPTER_IEEE_VENDOR_ID, 0x0002c9);
	cx4_set(p, CX4_ADAPTER_VSD_VENDOR_ID, CX4_PCI_VENDOR_MELLANOX);
	memcpy(p + CX4_ADAPTER_PSID_OFF, d->prof->psid,
	       strnlen(d->prof->psid, CX4_ADAPTER_PSID_LEN));
	return CX4_CMD_STAT_OK;
}

static int nop(struct mdev *d, struct mcmd *c)
{
	(void)d;
	(void)c;
	return CX4_CMD_STAT_OK;
}

const struct mcmd_desc cx4m_mcmd_hca[] = {
    {OP(ENABLE_HCA), MCMD_ANY, CX4_ENABLE_HCA_IN_SIZE, CX4_ENABLE_HCA_OUT_SIZE, enable_hca},
    {OP(DISABLE_HCA), MCMD_ENABLED, CX4_DISABLE_HCA_IN_SIZE, CX4_DISABLE_HCA_OUT_SIZE, disable_hca},
    {OP(QUERY_ISSI), MCMD_ENABLED, CX4_QUERY_ISSI_IN_SIZE, CX4_QUERY_ISSI_OUT_SIZE, query_issi},
    {OP(SET_ISSI), MCMD_ENABLED, CX4_SET_ISSI_IN_SIZE, CX4_SET_ISSI_OUT_SIZE, set_issi},
    {OP(QUERY_PAGES), MCMD_ENABLED, CX4_QUERY_PAGES_IN_SIZE, CX4_QUERY_PAGES_OUT_SIZE, query_pages},
    {OP(MANAGE_PAGES), MCMD_ENABLED, CX4_MANAGE_PAGES_IN_SIZE, CX4_MANAGE_PAGES_OUT_SIZE,
     manage_pages},
    {OP(QUERY_HCA_CAP), MCMD_BOOTED, CX4_QUERY_HCA_CAP_IN_SIZE, CX4_QUERY_HCA_CAP_OUT_SIZE,
     query_hca_cap},
    {OP(SET_HCA_CAP), MCMD_BOOTED, CX4_SET_HCA_CAP_IN_SIZE, CX4_SET_HCA_CAP_OUT_SIZE, set_hca_cap},
    {OP(INIT_HCA), MCMD_BOOTED, CX4_INIT_HCA_IN_SIZE, CX4_INIT_HCA_OUT_SIZE, init_hca},
    {OP(TEARDOWN_HCA), MCMD_INIT, CX4_TEARDOWN_HCA_IN_SIZE, CX4_TEARDOWN_HCA_OUT_SIZE,
     teardown_hca},
    {OP(QUERY_ADAPTER), MCMD_ENABLED, CX4_QUERY_ADAPTER_IN_SIZE, CX4_QUERY_ADAPTER_OUT_SIZE,
     query_adapter},
    {OP(NOP), MCMD_ENABLED, CX4_NOP_IN_SIZE, CX4_NOP_OUT_SIZE, nop},
    {0},
};
