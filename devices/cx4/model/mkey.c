// SPDX-License-Identifier: MIT
/*
 * Memory keys ([PRM] "Memory Region"; [ifc] mkc, create_mkey_in; [dv] MLX5_INVALID_LKEY):
 * CREATE_MKEY, DESTROY_MKEY, QUERY_MKEY and the translation every data access goes through.
 *
 * Three access modes are modelled: PA (addresses are bus addresses, i.e. IOVAs), MTT (the
 * region [start_addr, start_addr + len) is cut in pages of 2^log_page_size bytes, each mapped by
 * one 8-byte MTT entry: address | bit 1 write | bit 0 read, rdma-core mlx5_vfio MLX5_MTT_*),
 * and KLM (an indirect key: [start_addr, start_addr + len) maps through a list of (byte count,
 * mkey, address) entries onto other keys of its PD; memory windows are KLM keys, created free
 * with umr_en and given their entries by UMR WQEs, umr.c). The MTT entries are kept in ICM
 * pages (512 per page) and read from there on every translation. A key is index << 8 |
 * mkey_7_0 ([dv]); index 0 is the reserved lkey (PA, for QPs with rlky only), index 1 the null
 * key 0x100 (= MLX5_INVALID_LKEY, never valid).
 * Checks, in the order the hardware reports them: key exists, is not free and its key byte
 * matches, the PD is the QP's, the QP may use it (mkc.qpn), the access right is granted
 * (lr/lw/rr/rw/a), the range is inside the region; then for KLM keys the same checks of the
 * keys the entries name (local rights standing for the remote ones), and for MTT keys the MTT
 * entries' rights, and finally the IOMMU maps what the MTT points to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define OP(x) CX4_CMD_OP_##x
#define MKEY_BASE 2
#define MTT_PER_PAGE (CX4_ADAPTER_PAGE_SIZE / 8)

int cx4m_mkey_tables_init(struct mdev *d)
{
	uint32_t n = 1u << cx4_get(d->cap_cur[0], CX4_CAP_GEN_LOG_MAX_MKEY);

	return cx4m_idtab_init(&d->mkeys, MKEY_BASE, n - MKEY_BASE);
}

struct mmkey *cx4m_mkey_get(struct mdev *d, uint32_t index)
{
	return cx4m_idtab_get(&d->mkeys, index);
}

static void mkey_free(struct mdev *d, struct mmkey *m)
{
	for (uint32_t i = 0; i < m->nmtt_pages; i++)
		cx4m_icm_free_page(d, m->mtt_page[i]);
	free(m->mtt_page);
	free(m->klm);
	cx4m_idtab_remove(&d->mkeys, m->index);
	cx4m_icm_table_put(d, &d->icm.mkc, m->icm_idx);
	cx4m_icm_balance(d);
	free(m);
}

static int create_mkey(struct mdev *d, struct mcmd *c)
{
	const uint8_t *mkc = c->in + CX4_CREATE_MKEY_IN_MKC;
	uint32_t mode =
	    cx4_get(mkc, CX4_MKC_ACCESS_MODE_1_0) | cx4_get(mkc, CX4_MKC_ACCESS_MODE_4_2) << 2;
	uint32_t lps = cx4_get(mkc, CX4_MKC_LOG_PAGE_SIZE);
	uint64_t start = cx4_get64(mkc, CX4_MKC_START_ADDR), len = cx4_get64(mkc, CX4_MKC_LEN);
	uint32_t pd = cx4_get(mkc, CX4_MKC_PD), octw, need = 0, index;
	struct mmkey *m;

	if (mode != CX4_MKC_ACCESS_MODE_PA && mode != CX4_MKC_ACCESS_MODE_MTT &&
	    mode != CX4_MKC_ACCESS_MODE_KLMS)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_MKEY), 1));
	/*
	 * KLM keys come free and UMR-enabled (memory windows, Linux mlx5_ib_alloc_mw): UMR WQEs
	 * give them their entries, translations_octword_size of them at most. Keys with KLM
	 * entries in the command (indirect regions) are not modelled.
	 */
	if (mode == CX4_MKC_ACCESS_MODE_KLMS &&
	    (!cx4_get(mkc, CX4_MKC_FREE) || !cx4_get(mkc, CX4_MKC_UMR_EN) ||
	     cx4_get(c->in, CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE) ||
	     !cx4_get(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE) ||
	     cx4_get(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE) > 256))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_MKEY), 15));
	if (!cx4m_idtab_get(&d->pds, pd))
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_MKEY), 2));
	if (cx4_get(mkc, CX4_MKC_BSF_EN))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_MKEY), 3));
	if (!cx4_get(mkc, CX4_MKC_LENGTH64) && start + len < start)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_MKEY), 4));
	octw = cx4_get(c->in, CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE);
	if (mode == CX4_MKC_ACCESS_MODE_MTT) {
		uint64_t psz;

		if (lps < 12 || lps > 30 || cx4_get(mkc, CX4_MKC_LENGTH64))
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_MKEY), 5));
		psz = 1ull << lps;
		/* pages the region touches; 2 MTT entries per octword */
		if (len) {
			uint64_t np = ((start & (psz - 1)) + len + psz - 1) >> lps;

			if (np > (1u << 24))
				return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
						MSYND(OP(CREATE_MKEY), 6));
			need = (uint32_t)np;
		}
		if ((uint64_t)octw * 2 < need)
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_MKEY), 7));
		if ((uint64_t)CX4_CREATE_MKEY_IN_KLM_PAS_MTT + 8ull * need > c->ilen)
			return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, MSYND(OP(CREATE_MKEY), 8));
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_MKEY), 9));
	index = cx4m_idtab_alloc(&d->mkeys, m);
	if (index == UINT32_MAX) {
		free(m);
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_MKEY), 10));
	}
	m->index = index;
	m->icm_idx = index - MKEY_BASE;
	if (cx4m_icm_table_get(d, &d->icm.mkc, m->icm_idx)) {
		cx4m_idtab_remove(&d->mkeys, index);
		free(m);
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_MKEY), 11));
	}
	m->key = (uint8_t)cx4_get(mkc, CX4_MKC_MKEY_7_0);
	m->access_mode = (uint8_t)mode;
	m->access = (uint8_t)((cx4_get(mkc, CX4_MKC_LR) ? MKEY_LR : 0) |
			      (cx4_get(mkc, CX4_MKC_LW) ? MKEY_LW : 0) |
			      (cx4_get(mkc, CX4_MKC_RR) ? MKEY_RR : 0) |
			      (cx4_get(mkc, CX4_MKC_RW) ? MKEY_RW : 0) |
			      (cx4_get(mkc, CX4_MKC_A) ? MKEY_A : 0));
	m->length64 = cx4_get(mkc, CX4_MKC_LENGTH64);
	m->pd = pd;
	m->qpn = cx4_get(mkc, CX4_MKC_QPN);
	m->start = start;
	m->len = len;
	m->log_page_size = lps;
	m->nmtt = need;
	m->free_state = cx4_get(mkc, CX4_MKC_FREE);
	m->umr_en = cx4_get(mkc, CX4_MKC_UMR_EN);
	m->en_rinval = cx4_get(mkc, CX4_MKC_EN_RINVAL);
	if (mode == CX4_MKC_ACCESS_MODE_KLMS) {
		m->max_klm = cx4_get(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE);
		m->klm = calloc(m->max_klm, sizeof(*m->klm));
		if (!m->klm) {
			mkey_free(d, m);
			return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_MKEY), 16));
		}
	}
	/* the MTT goes to ICM, 512 entries a page */
	if (need) {
		m->nmtt_pages = (need + MTT_PER_PAGE - 1) / MTT_PER_PAGE;
		m->mtt_page = malloc(m->nmtt_pages * sizeof(*m->mtt_page));
		if (!m->mtt_page) {
			m->nmtt_pages = 0;
			mkey_free(d, m);
			return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_MKEY), 12));
		}
		for (uint32_t i = 0; i < m->nmtt_pages; i++) {
			uint32_t k = need - i * MTT_PER_PAGE;

			m->mtt_page[i] = cx4m_icm_alloc_page(d);
			if (m->mtt_page[i] < 0) {
				m->nmtt_pages = i;
				mkey_free(d, m);
				return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR,
						MSYND(OP(CREATE_MKEY), 13));
			}
			if (k > MTT_PER_PAGE)
				k = MTT_PER_PAGE;
			if (cx4m_icm_page_rw(d, m->mtt_page[i], 0,
					     (void *)(c->in + CX4_CREATE_MKEY_IN_KLM_PAS_MTT +
						      8ull * i * MTT_PER_PAGE),
					     8 * k, true)) {
				m->nmtt_pages = i + 1;
				mkey_free(d, m);
				return mcmd_err(c, CX4_CMD_STAT_INT_ERR,
						MSYND(OP(CREATE_MKEY), 14));
			}
		}
	}
	cx4m_icm_ctx_write(d, &d->icm.mkc, m->icm_idx, mkc, CX4_MKC_SIZE);
	cx4_set(c->out, CX4_CREATE_MKEY_OUT_MKEY_INDEX, index);
	return CX4_CMD_STAT_OK;
}

static int destroy_mkey(struct mdev *d, struct mcmd *c)
{
	struct mmkey *m = cx4m_idtab_get(&d->mkeys, cx4_get(c->in, CX4_DESTROY_MKEY_IN_MKEY_INDEX));

	if (!m)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(DESTROY_MKEY), 1));
	mkey_free(d, m);
	return CX4_CMD_STAT_OK;
}

static int query_mkey(struct mdev *d, struct mcmd *c)
{
	struct mmkey *m = cx4m_idtab_get(&d->mkeys, cx4_get(c->in, CX4_QUERY_MKEY_IN_MKEY_INDEX));

	if (!m)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(QUERY_MKEY), 1));
	if (cx4m_icm_ctx_read(d, &d->icm.mkc, m->icm_idx, c->out + CX4_QUERY_MKEY_OUT_MKC,
			      CX4_MKC_SIZE))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(QUERY_MKEY), 2));
	return CX4_CMD_STAT_OK;
}

static void free_one(void *obj, void *ctx)
{
	mkey_free(ctx, obj);
}

void cx4m_mkey_destroy_all(struct mdev *d)
{
	cx4m_idtab_foreach(&d->mkeys, free_one, d);
}

/* ---- translation ----------------------------------------------------------------------------- */

static int add_segs(struct mdev *d, uint64_t iova, uint64_t len, uint32_t perm, struct dseg *segs,
		    int n, int max)
{
	struct dseg tmp[8];
	int k = cx4m_iommu_xlate(&d->iommu, iova, len, perm, tmp, 8);

	if (k < 0)
		return k == -E2BIG ? MKEY_ESEGS : MKEY_EDMA;
	for (int i = 0; i < k; i++) {
		if (n && tmp[i].host && segs[n - 1].host &&
		    segs[n - 1].host + segs[n - 1].len == tmp[i].host) {
			segs[n - 1].len += tmp[i].len;
			continue;
		}
		if (n && !tmp[i].host && !segs[n - 1].host && segs[n - 1].pid == tmp[i].pid &&
		    segs[n - 1].va + segs[n - 1].len == tmp[i].va) {
			segs[n - 1].len += tmp[i].len;
			continue;
		}
		if (n == max)
			return MKEY_ESEGS;
		segs[n++] = tmp[i];
	}
	return n;
}

/* The checks every use of a key makes; m is the key's mkey (NULL: none). */
static int key_ok(const struct mmkey *m, uint32_t key, uint32_t pd, uint32_t qpn, uint64_t va,
		  uint64_t len, unsigned int access)
{
	if (!m || m->key != (key & 0xff) || m->free_state)
		return MKEY_EKEY;
	if (m->pd != pd)
		return MKEY_EPD;
	if (m->qpn != CX4_MKEY_QPN_ANY && m->qpn != qpn)
		return MKEY_EKEY;
	if ((m->access & access) != access)
		return MKEY_EACCESS;
	if (!m->length64 && (va < m->start || va + len < va || va + len > m->start + m->len))
		return MKEY_EBOUNDS;
	return MKEY_OK;
}

/* Through a window's entry, remote rights are the local rights of the region it names. */
static unsigned int local_rights(unsigned int access)
{
	return ((access & (MKEY_LR | MKEY_RR | MKEY_A)) ? MKEY_LR : 0) |
	       ((access & (MKEY_LW | MKEY_RW | MKEY_A)) ? MKEY_LW : 0);
}

static int xlate(struct mdev *d, struct mmkey *m, uint64_t va, uint64_t len, unsigned int access,
		 struct dseg *segs, int n, int max);

static int xlate_klm(struct mdev *d, struct mmkey *m, uint64_t va, uint64_t len,
		     unsigned int access, struct dseg *segs, int n, int max)
{
	uint64_t off = va - m->start;

	for (uint32_t i = 0; i < m->nklm && len; i++) {
		const struct mklm *k = &m->klm[i];
		struct mmkey *t;
		uint64_t take;
		int err;

		if (off >= k->bcount) {
			off -= k->bcount;
			continue;
		}
		take = k->bcount - off < len ? k->bcount - off : len;
		t = cx4m_idtab_get(&d->mkeys, k->mkey >> 8);
		/* one level of indirection: an entry names a region of the window's PD */
		if (t && t->access_mode == CX4_MKC_ACCESS_MODE_KLMS)
			return MKEY_EKEY;
		err = key_ok(t, k->mkey, m->pd, CX4_MKEY_QPN_ANY, k->va + off, take,
			     local_rights(access));
		if (err)
			return err;
		n = xlate(d, t, k->va + off, take, local_rights(access), segs, n, max);
		if (n < 0)
			return n;
		len -= take;
		off = 0;
	}
	return len ? MKEY_EBOUNDS : n;
}

/* Translate a checked range of m into segs[n..]; returns the new count or an mkey_err. */
static int xlate(struct mdev *d, struct mmkey *m, uint64_t va, uint64_t len, unsigned int access,
		 struct dseg *segs, int n, int max)
{
	uint32_t perm = ((access & (MKEY_LR | MKEY_RR | MKEY_A)) ? CX4_DMA_READ : 0) |
			((access & (MKEY_LW | MKEY_RW | MKEY_A)) ? CX4_DMA_WRITE : 0);
	uint64_t psz, base, off;

	if (m->access_mode == CX4_MKC_ACCESS_MODE_PA)
		return add_segs(d, va, len, perm, segs, n, max);
	if (m->access_mode == CX4_MKC_ACCESS_MODE_KLMS)
		return xlate_klm(d, m, va, len, access, segs, n, max);
	psz = 1ull << m->log_page_size;
	base = m->start & ~(psz - 1);
	off = va - base;
	while (len) {
		uint64_t pg = off >> m->log_page_size, in = off & (psz - 1);
		uint64_t take = psz - in < len ? psz - in : len;
		uint8_t e[8];
		uint64_t ent;

		if (pg >= m->nmtt)
			return MKEY_EBOUNDS;
		if (cx4m_icm_page_rw(d, m->mtt_page[pg / MTT_PER_PAGE],
				     (uint32_t)(pg % MTT_PER_PAGE) * 8, e, 8, false))
			return MKEY_EDMA;
		ent = cx4_be64_load(e);
		if (((perm & CX4_DMA_READ) && !(ent & CX4_MTT_READ)) ||
		    ((perm & CX4_DMA_WRITE) && !(ent & CX4_MTT_WRITE)))
			return MKEY_EACCESS;
		n = add_segs(d, (ent & ~0xfffull) + in, take, perm, segs, n, max);
		if (n < 0)
			return n;
		off += take;
		len -= take;
	}
	return n;
}

int cx4m_mkey_xlate(struct mdev *d, uint32_t key, uint32_t pd, uint32_t qpn, uint64_t va,
		    uint64_t len, unsigned int access, bool rlky, struct dseg *segs, int max)
{
	uint32_t perm = ((access & (MKEY_LR | MKEY_RR | MKEY_A)) ? CX4_DMA_READ : 0) |
			((access & (MKEY_LW | MKEY_RW | MKEY_A)) ? CX4_DMA_WRITE : 0);
	struct mmkey *m;
	int err;

	if (!len)
		return 0;
	if (key == 0) {
		/* the reserved lkey: bus addresses, for privileged QPs only (qpc.rlky) */
		if (!rlky || (access & (MKEY_RR | MKEY_RW | MKEY_A)))
			return MKEY_EKEY;
		return add_segs(d, va, len, perm, segs, 0, max);
	}
	m = cx4m_idtab_get(&d->mkeys, key >> 8);
	err = key_ok(m, key, pd, qpn, va, len, access);
	if (err)
		return err;
	return xlate(d, m, va, len, access, segs, 0, max);
}

int cx4m_mkey_check(struct mdev *d, uint32_t key, uint32_t pd, uint32_t qpn, uint64_t va,
		    uint64_t len, unsigned int access)
{
	if (!len)
		return MKEY_OK;
	if (key == 0)
		return MKEY_EKEY;
	return key_ok(cx4m_idtab_get(&d->mkeys, key >> 8), key, pd, qpn, va, len, access);
}

/*
 * SEND_WITH_INV ([IBTA] 10.6.7.2.x, o10-37): the key names a valid window (or key) that allows
 * remote invalidation, of the QP's PD, and a type 2 window must be bound to this QP.
 */
int cx4m_mkey_remote_invalidate(struct mdev *d, uint32_t key, uint32_t pd, uint32_t qpn)
{
	struct mmkey *m = cx4m_idtab_get(&d->mkeys, key >> 8);

	if (!m || m->key != (key & 0xff) || m->free_state || !m->en_rinval || key == 0)
		return MKEY_EKEY;
	if (m->pd != pd)
		return MKEY_EPD;
	if (m->qpn != CX4_MKEY_QPN_ANY && m->qpn != qpn)
		return MKEY_EKEY;
	m->free_state = true;
	cx4m_mkey_sync_icm(d, m);
	return MKEY_OK;
}

void cx4m_mkey_sync_icm(struct mdev *d, struct mmkey *m)
{
	uint8_t mkc[CX4_MKC_SIZE];

	if (cx4m_icm_ctx_read(d, &d->icm.mkc, m->icm_idx, mkc, sizeof(mkc)))
		return;
	cx4_set(mkc, CX4_MKC_FREE, m->free_state);
	cx4_set(mkc, CX4_MKC_MKEY_7_0, m->key);
	cx4_set(mkc, CX4_MKC_QPN, m->qpn);
	cx4_set(mkc, CX4_MKC_PD, m->pd);
	cx4_set(mkc, CX4_MKC_LR, !!(m->access & MKEY_LR));
	cx4_set(mkc, CX4_MKC_LW, !!(m->access & MKEY_LW));
	cx4_set(mkc, CX4_MKC_RR, !!(m->access & MKEY_RR));
	cx4_set(mkc, CX4_MKC_RW, !!(m->access & MKEY_RW));
	cx4_set(mkc, CX4_MKC_A, !!(m->access & MKEY_A));
	cx4_set(mkc, CX4_MKC_EN_RINVAL, m->en_rinval);
	cx4_set64(mkc, CX4_MKC_START_ADDR, m->start);
	cx4_set64(mkc, CX4_MKC_LEN, m->len);
	cx4m_icm_ctx_write(d, &d->icm.mkc, m->icm_idx, mkc, sizeof(mkc));
}

const struct mcmd_desc cx4m_mcmd_mkey[] = {
    {OP(CREATE_MKEY), MCMD_INIT, CX4_CREATE_MKEY_IN_SIZE, CX4_CREATE_MKEY_OUT_SIZE, create_mkey},
    {OP(DESTROY_MKEY), MCMD_INIT, CX4_DESTROY_MKEY_IN_SIZE, CX4_DESTROY_MKEY_OUT_SIZE,
     destroy_mkey},
    {OP(QUERY_MKEY), MCMD_INIT, CX4_QUERY_MKEY_IN_SIZE, CX4_QUERY_MKEY_OUT_MKC + CX4_MKC_SIZE,
     query_mkey},
    {0},
};
