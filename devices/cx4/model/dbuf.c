// SPDX-License-Identifier: MIT
/*
 * Queue buffers (EQ, CQ, QP, SRQ) described the PRM way: a list of physical address entries
 * (PAS, 8 bytes each, one per page), a page size of 4 KB << log_page_size and a page_offset
 * in 64-byte units for the first page ([ifc] eqc/cqc/qpc/srqc). The
 * physical addresses are IOVAs: every access goes through the IOMMU. When the whole buffer
 * turns out to be one fd-backed run of our memory (the common case: one memfd chunk), the
 * device keeps a direct pointer to it, revalidated when the IOMMU changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

int cx4m_dbuf_init(struct dbuf *b, const uint8_t *pas_be, uint32_t npas, uint32_t log_page_size,
		   uint32_t page_offset_64, uint64_t len)
{
	uint64_t span;

	memset(b, 0, sizeof(*b));
	if (log_page_size > 20 || !npas)
		return -EINVAL;
	b->page_shift = 12 + log_page_size;
	b->offset = page_offset_64 * 64;
	b->len = len;
	if (b->offset >= (1ull << b->page_shift))
		return -EINVAL;
	span = b->offset + len;
	if ((span + (1ull << b->page_shift) - 1) >> b->page_shift > npas)
		return -EINVAL;
	b->npages = npas;
	b->pas = malloc(npas * sizeof(*b->pas));
	if (!b->pas)
		return -ENOMEM;
	for (uint32_t i = 0; i < npas; i++) {
		b->pas[i] = cx4_pas_get(pas_be, 0, i);
		/* PAS entries are page addresses: the low 12 bits are reserved ([ifc] pas). */
		if (b->pas[i] & 0xfff) {
			free(b->pas);
			b->pas = NULL;
			return -EINVAL;
		}
	}
	b->gen = UINT64_MAX;
	return 0;
}

void cx4m_dbuf_free(struct dbuf *b)
{
	free(b->pas);
	memset(b, 0, sizeof(*b));
}

/* Is the whole buffer one run of our memory? Cache the answer per IOMMU generation. */
static bool run_of(struct mdev *d, struct dbuf *b, uint32_t perm)
{
	uint64_t psz = 1ull << b->page_shift, done = 0;
	uint8_t *base = NULL;

	for (uint32_t i = 0; done < b->offset + b->len; i++) {
		uint8_t *p = cx4m_dma_ptr(d, b->pas[i], psz, perm);

		if (!p || (i && p != base + i * psz))
			return false;
		if (!i)
			base = p;
		done += psz;
	}
	if (!base)
		return false;
	b->base = base + b->offset;
	b->base_perm = perm;
	return true;
}

static void refresh(struct mdev *d, struct dbuf *b)
{
	b->gen = d->iommu.gen;
	b->base = NULL;
	if (!run_of(d, b, CX4_DMA_READ | CX4_DMA_WRITE))
		run_of(d, b, CX4_DMA_READ);
}

uint8_t *cx4m_dbuf_ptr(struct mdev *d, struct dbuf *b, uint64_t off, size_t len, uint32_t perm)
{
	uint64_t at, pg;

	if (off + len > b->len)
		return NULL;
	if (b->gen != d->iommu.gen)
		refresh(d, b);
	if (b->base && (b->base_perm & perm) == perm)
		return b->base + off;
	/* Not one run: still direct when the piece stays inside one page. */
	at = b->offset + off;
	pg = at >> b->page_shift;
	if (((at + len - 1) >> b->page_shift) != pg)
		return NULL;
	return cx4m_dma_ptr(d, b->pas[pg] + (at & ((1ull << b->page_shift) - 1)), len, perm);
}

static int rw(struct mdev *d, struct dbuf *b, uint64_t off, uint8_t *p, size_t len, bool write)
{
	if (off + len > b->len)
		return -EINVAL;
	while (len) {
		uint64_t at = b->offset + off, psz = 1ull << b->page_shift;
		uint64_t in = at & (psz - 1), take = psz - in < len ? psz - in : len;
		uint64_t iova = b->pas[at >> b->page_shift] + in;
		int err =
		    write ? cx4m_dma_write(d, iova, p, take) : cx4m_dma_read(d, iova, p, take);

		if (err)
			return err;
		off += take;
		p += take;
		len -= take;
	}
	return 0;
}

int cx4m_dbuf_read(struct mdev *d, struct dbuf *b, uint64_t off, void *dst, size_t len)
{
	uint8_t *p = cx4m_dbuf_ptr(d, b, off, len, CX4_DMA_READ);

	if (p) {
		memcpy(dst, p, len);
		return 0;
	}
	return rw(d, b, off, dst, len, false);
}

int cx4m_dbuf_write(struct mdev *d, struct dbuf *b, uint64_t off, const void *src, size_t len)
{
	uint8_t *p = cx4m_dbuf_ptr(d, b, off, len, CX4_DMA_WRITE);

	if (p) {
		memcpy(p, src, len);
		return 0;
	}
	return rw(d, b, off, (uint8_t *)src, len, true);
}
