// SPDX-License-Identifier: MIT
/*
 * ICM: the host pages a driver gives the firmware with MANAGE_PAGES, and what the model keeps
 * in them. Like the card, the model cannot work without them:
 *
 *   boot pages (QUERY_PAGES op_mod 1): the current capability pages (general, atomic, RoCE),
 *     the RoCE address table and the NIC vport context. QUERY_HCA_CAP/SET_HCA_CAP read and
 *     write the capability pages there; without them they answer BAD_SYS_STATE.
 *   init pages (op_mod 2): INIT_HCA takes them (it touches each one: an unmapped page is an
 *     ICM fetch error, health syndrome 0xA) and puts the first chunk of every context table
 *     there (QP, CQ, EQ, MKey, SRQ contexts); the rest is the pool the tables grow from.
 *   regular pages: when the pool runs low the model asks for more with a PAGE_REQUEST event
 *     (positive num_pages) and answers QUERY_PAGES op_mod 3 with the same number; when it
 *     holds many free pages it offers them back (negative num_pages) and MANAGE_PAGES take
 *     returns them. Object contexts are written to their ICM slot on create/modify and read
 *     back from it by QUERY_*; MTT entries are read from ICM on every translation.
 *
 * Real firmware asks for far more (6 boot and 12868 init pages on the [trace] CX4 Lx); the
 * model's needs are smaller and documented in docs/cx4-model.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define LOW_WATER 8    /* ask for pages when fewer are free */
#define REQ_CHUNK 32   /* how many to ask for */
#define HIGH_WATER 256 /* offer pages back when more are free ... */
#define KEEP_FREE 64   /* ... keeping this many */

static uint32_t hkey(uint64_t iova, uint32_t size)
{
	return (uint32_t)(((iova >> 12) * 0x9e3779b97f4a7c15ull) >> 32) & (size - 1);
}

static int hash_find(const struct icm *m, uint64_t iova)
{
	if (!m->hash_size)
		return -1;
	for (uint32_t h = hkey(iova, m->hash_size), n = 0; n < m->hash_size;
	     h = (h + 1) & (m->hash_size - 1), n++) {
		uint32_t v = m->hash[h];

		if (!v)
			return -1;
		if (v != UINT32_MAX && m->page[v - 1].iova == iova &&
		    m->page[v - 1].state != ICM_EMPTY)
			return (int)(v - 1);
	}
	return -1;
}

static int hash_rebuild(struct icm *m, uint32_t size)
{
	uint32_t *h = calloc(size, sizeof(*h));

	if (!h)
		return -ENOMEM;
	free(m->hash);
	m->hash = h;
	m->hash_size = size;
	for (uint32_t i = 0; i < m->npages; i++) {
		uint32_t k;

		if (m->page[i].state == ICM_EMPTY)
			continue;
		for (k = hkey(m->page[i].iova, size); h[k]; k = (k + 1) & (size - 1))
			;
		h[k] = i + 1;
	}
	return 0;
}

static void hash_del(struct icm *m, uint32_t idx)
{
	for (uint32_t h = hkey(m->page[idx].iova, m->hash_size);;
	     h = (h + 1) & (m->hash_size - 1)) {
		if (m->hash[h] == idx + 1) {
			m->hash[h] = UINT32_MAX; /* tombstone */
			return;
		}
		if (!m->hash[h])
			return;
	}
}

int cx4m_icm_give(struct mdev *d, uint64_t iova)
{
	struct icm *m = &d->icm;
	uint32_t idx, k;

	if (iova & 0xfff)
		return -EINVAL;
	if (hash_find(m, iova) >= 0)
		return -EEXIST;
	/* keep the hash at most half full (tombstones count) */
	if ((m->ngiven + 1) * 2 > m->hash_size &&
	    hash_rebuild(m, m->hash_size ? m->hash_size * 4 : 1024))
		return -ENOMEM;
	if (m->nempty) {
		idx = m->empty[--m->nempty];
	} else {
		if (m->npages == m->cap) {
			uint32_t cap = m->cap ? m->cap * 2 : 256;
			struct icm_page *p = realloc(m->page, cap * sizeof(*p));
			uint32_t *f = p ? realloc(m->free, cap * sizeof(*f)) : NULL;
			uint32_t *e = f ? realloc(m->empty, cap * sizeof(*e)) : NULL;

			if (p)
				m->page = p;
			if (f)
				m->free = f;
			if (!e)
				return -ENOMEM;
			m->empty = e;
			m->cap = cap;
		}
		idx = m->npages++;
	}
	m->page[idx] = (struct icm_page){.iova = iova, .state = ICM_FREE};
	for (k = hkey(iova, m->hash_size); m->hash[k] && m->hash[k] != UINT32_MAX;
	     k = (k + 1) & (m->hash_size - 1))
		;
	m->hash[k] = idx + 1;
	m->free[m->nfree++] = idx;
	m->ngiven++;
	return 0;
}

uint32_t cx4m_icm_take(struct mdev *d, uint64_t *iova, uint32_t n)
{
	struct icm *m = &d->icm;
	uint32_t got = 0;

	while (got < n && m->nfree) {
		uint32_t idx = m->free[--m->nfree];

		iova[got++] = m->page[idx].iova;
		hash_del(m, idx);
		m->page[idx].state = ICM_EMPTY;
		m->empty[m->nempty++] = idx;
		m->ngiven--;
	}
	return got;
}

uint8_t *cx4m_icm_page_ptr(struct mdev *d, int32_t pg)
{
	return cx4m_dma_ptr(d, d->icm.page[pg].iova, CX4_ADAPTER_PAGE_SIZE,
			    CX4_DMA_READ | CX4_DMA_WRITE);
}

int cx4m_icm_page_rw(struct mdev *d, int32_t pg, uint32_t off, void *buf, size_t len, bool write)
{
	uint64_t iova = d->icm.page[pg].iova + off;
	int err = write ? cx4m_dma_write(d, iova, buf, len) : cx4m_dma_read(d, iova, buf, len);

	/* Firmware memory that faults: "ICM fetch PCI error" ([vfio.c] health syndromes). */
	if (err)
		cx4m_bar0_health_fatal(d, CX4_HEALTH_SYND_FETCH_PCI_ERR);
	return err;
}

int32_t cx4m_icm_alloc_page(struct mdev *d)
{
	static const uint8_t zero[CX4_ADAPTER_PAGE_SIZE];
	struct icm *m = &d->icm;
	uint32_t idx;

	if (!m->nfree) {
		cx4m_icm_balance(d);
		return -1;
	}
	idx = m->free[--m->nfree];
	m->page[idx].state = ICM_USED;
	if (cx4m_icm_page_rw(d, (int32_t)idx, 0, (void *)zero, sizeof(zero), true)) {
		m->page[idx].state = ICM_FREE;
		m->free[m->nfree++] = idx;
		return -1;
	}
	cx4m_icm_balance(d);
	return (int32_t)idx;
}

void cx4m_icm_free_page(struct mdev *d, int32_t pg)
{
	struct icm *m = &d->icm;

	if (pg < 0 || m->page[pg].state != ICM_USED)
		return;
	m->page[pg].state = ICM_FREE;
	m->free[m->nfree++] = (uint32_t)pg;
}

/* ---- context tables ------------------------------------------------------------------------ */

static void table_init(struct icm_table *t, const char *name, uint32_t obj_size)
{
	free(t->chunk);
	free(t->ref);
	*t = (struct icm_table){.name = name, .obj_size = obj_size};
}

static int table_grow(struct icm_table *t, uint32_t need)
{
	uint32_t n = t->nchunks ? t->nchunks : 16;
	int32_t *c;
	uint16_t *r;

	while (n < need)
		n *= 2;
	c = realloc(t->chunk, n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	t->chunk = c;
	r = realloc(t->ref, n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	t->ref = r;
	for (uint32_t i = t->nchunks; i < n; i++) {
		c[i] = -1;
		r[i] = 0;
	}
	t->nchunks = n;
	return 0;
}

int cx4m_icm_table_get(struct mdev *d, struct icm_table *t, uint32_t idx)
{
	uint32_t ch = (uint32_t)(((uint64_t)idx * t->obj_size) >> CX4_ADAPTER_PAGE_SHIFT);

	if (ch >= t->nchunks && table_grow(t, ch + 1))
		return -ENOMEM;
	if (t->chunk[ch] < 0) {
		int32_t pg = cx4m_icm_alloc_page(d);

		if (pg < 0)
			return -ENOMEM;
		t->chunk[ch] = pg;
	}
	t->ref[ch]++;
	return 0;
}

void cx4m_icm_table_put(struct mdev *d, struct icm_table *t, uint32_t idx)
{
	uint32_t ch = (uint32_t)(((uint64_t)idx * t->obj_size) >> CX4_ADAPTER_PAGE_SHIFT);

	if (ch >= t->nchunks || t->chunk[ch] < 0 || !t->ref[ch])
		return;
	/* Chunk 0 of each table is an init page: it stays until teardown. */
	if (--t->ref[ch] == 0 && ch) {
		cx4m_icm_free_page(d, t->chunk[ch]);
		t->chunk[ch] = -1;
		cx4m_icm_balance(d);
	}
}

static int ctx_rw(struct mdev *d, struct icm_table *t, uint32_t idx, void *ctx, size_t len,
		  bool write)
{
	uint64_t at = (uint64_t)idx * t->obj_size;
	uint32_t ch = (uint32_t)(at >> CX4_ADAPTER_PAGE_SHIFT);

	if (len > t->obj_size || ch >= t->nchunks || t->chunk[ch] < 0)
		return -EINVAL;
	return cx4m_icm_page_rw(d, t->chunk[ch], (uint32_t)(at & (CX4_ADAPTER_PAGE_SIZE - 1)), ctx,
				len, write);
}

int cx4m_icm_ctx_write(struct mdev *d, struct icm_table *t, uint32_t idx, const void *ctx,
		       size_t len)
{
	return ctx_rw(d, t, idx, (void *)ctx, len, true);
}

int cx4m_icm_ctx_read(struct mdev *d, struct icm_table *t, uint32_t idx, void *ctx, size_t len)
{
	return ctx_rw(d, t, idx, ctx, len, false);
}

/* ---- stages -------------------------------------------------------------------------------- */

int cx4m_icm_boot(struct mdev *d)
{
	struct icm *m = &d->icm;

	if (m->boot_done)
		return 0;
	if (m->nfree < m->boot_need)
		return -ENOMEM;
	for (int i = 0; i < ICM_BOOT_NUM; i++) {
		m->boot_page[i] = cx4m_icm_alloc_page(d);
		if (m->boot_page[i] < 0) {
			for (int j = 0; j < i; j++)
				cx4m_icm_free_page(d, m->boot_page[j]);
			return -EFAULT;
		}
	}
	/* The current capabilities start as the firmware defaults. */
	for (unsigned int type = 0; type < 16; type++) {
		int slot = cx4m_caps_boot_slot(type);

		if (slot < 0)
			continue;
		cx4m_caps_cur_default(d, type, d->cap_cur[slot]);
		if (cx4m_icm_page_rw(d, m->boot_page[ICM_BOOT_CAP_GEN + slot], 0, d->cap_cur[slot],
				     CX4_HCA_CAP_SIZE, true))
			return -EFAULT;
	}
	m->boot_done = true;
	return 0;
}

int cx4m_icm_init_hca(struct mdev *d)
{
	struct icm *m = &d->icm;
	struct icm_table *t[] = {&m->qpc, &m->cqc, &m->eqc, &m->mkc, &m->srqc};
	uint32_t reserved = 0;

	if (m->init_done)
		return 0;
	if (m->nfree < m->init_need)
		return -ENOMEM;
	/* Touch every init page, as firmware initialising its ICM does. */
	for (uint32_t i = 0; i < m->nfree && !d->fatal; i++) {
		static const uint8_t z[64];

		cx4m_icm_page_rw(d, (int32_t)m->free[i], 0, (void *)z, sizeof(z), true);
	}
	if (d->fatal)
		return -EFAULT;
	table_init(&m->qpc, "qpc", 256);
	table_init(&m->cqc, "cqc", 64);
	table_init(&m->eqc, "eqc", 64);
	table_init(&m->mkc, "mkc", 64);
	table_init(&m->srqc, "srqc", 64);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (table_grow(t[i], 16))
			return -ENOMEM;
		t[i]->chunk[0] = cx4m_icm_alloc_page(d);
		if (t[i]->chunk[0] < 0)
			return -EFAULT;
		reserved++;
	}
	(void)reserved;
	m->init_done = true;
	m->request = 0;
	return 0;
}

static void table_drop(struct icm_table *t)
{
	free(t->chunk);
	free(t->ref);
	t->chunk = NULL;
	t->ref = NULL;
	t->nchunks = 0;
}

void cx4m_icm_teardown(struct mdev *d)
{
	struct icm *m = &d->icm;

	table_drop(&m->qpc);
	table_drop(&m->cqc);
	table_drop(&m->eqc);
	table_drop(&m->mkc);
	table_drop(&m->srqc);
	m->nfree = 0;
	for (uint32_t i = 0; i < m->npages; i++) {
		if (m->page[i].state == ICM_EMPTY)
			continue;
		m->page[i].state = ICM_FREE;
		m->free[m->nfree++] = i;
	}
	for (int i = 0; i < ICM_BOOT_NUM; i++)
		m->boot_page[i] = -1;
	m->boot_done = false;
	m->init_done = false;
	m->request = 0;
}

void cx4m_icm_free(struct mdev *d)
{
	struct icm *m = &d->icm;

	cx4m_icm_teardown(d);
	free(m->page);
	free(m->free);
	free(m->empty);
	free(m->hash);
	m->page = NULL;
	m->free = m->empty = m->hash = NULL;
	m->npages = m->cap = m->nfree = m->nempty = m->hash_size = m->ngiven = 0;
}

void cx4m_icm_reset(struct mdev *d)
{
	uint32_t boot = d->icm.boot_need, init = d->icm.init_need;

	cx4m_icm_free(d);
	d->icm.boot_need = boot;
	d->icm.init_need = init;
}

int32_t cx4m_icm_query(struct mdev *d, unsigned int op_mod)
{
	struct icm *m = &d->icm;

	switch (op_mod) {
	case CX4_QUERY_PAGES_OPMOD_BOOT:
		return m->boot_done || m->ngiven >= m->boot_need
			   ? 0
			   : (int32_t)(m->boot_need - m->ngiven);
	case CX4_QUERY_PAGES_OPMOD_INIT:
		return m->init_done || m->nfree >= m->init_need
			   ? 0
			   : (int32_t)(m->init_need - m->nfree);
	default:
		return m->init_done ? m->request : 0;
	}
}

void cx4m_icm_balance(struct mdev *d)
{
	struct icm *m = &d->icm;

	if (!m->init_done)
		return;
	if (m->nfree < LOW_WATER && m->request <= 0) {
		m->request = REQ_CHUNK;
		cx4m_eq_post_page_request(d, REQ_CHUNK);
	} else if (m->nfree > HIGH_WATER && m->request == 0) {
		m->request = -(int32_t)(m->nfree - KEEP_FREE);
		cx4m_eq_post_page_request(d, m->request);
	}
}
