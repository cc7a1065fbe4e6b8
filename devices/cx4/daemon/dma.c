// SPDX-License-Identifier: MIT
/*
 * The daemon's own DMA memory: the command queue, mailboxes, EQ buffers and the pages it gives
 * the firmware. Like dma_alloc_coherent() on top of an IOMMU: memory comes in memfd chunks the
 * device maps through the bus (bus->ops->dma_map with the fd), each chunk at an IOVA of its
 * own, and buffers are carved out of chunks in 4 KB pages.
 *
 * A buffer of n pages starts at an IOVA aligned to the next power of two of its size, so the
 * device can be given the whole buffer as one PAS entry with log_page_size = log2(size/4 KB),
 * which is how Linux describes its contiguous EQ buffers (the [trace]'s CREATE_EQ has one PAS
 * and log_page_size 2 for a 16 KB EQ) and what Snabb does for every queue.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cx4d.h"

#define CHUNK_PAGES	1024u		/* 4 MB */

struct cx4d_dma_chunk {
	struct cx4d_dma_chunk *next;
	int fd;
	uint8_t *va;
	uint64_t iova;
	size_t npages;
	size_t hint;			/* no free page below this one */
	uint8_t *used;			/* one byte per page */
};

static struct cx4d_dma_chunk *chunks;

uint64_t cx4d_iova_alloc(struct cx4d *d, uint64_t len, uint64_t align)
{
	uint64_t a;

	if (align < CX4D_PAGE)
		align = CX4D_PAGE;
	if (!d->iova_next)
		d->iova_next = 1ull << 32;	/* IOVA 0 and low addresses never valid */
	a = (d->iova_next + align - 1) & ~(align - 1);
	if (a < d->iova_next || a + len < a || a + len > (1ull << 62))
		return 0;
	d->iova_next = a + ((len + CX4D_PAGE - 1) & ~(uint64_t)(CX4D_PAGE - 1));
	return a;
}

static struct cx4d_dma_chunk *chunk_new(struct cx4d *d, size_t npages)
{
	struct cx4d_dma_chunk *c = calloc(1, sizeof(*c));
	size_t len = (size_t)npages * CX4D_PAGE;
	struct cx4_dma_map map;

	if (!c)
		return NULL;
	c->used = calloc(npages, 1);
	c->fd = memfd_create("cx4d-dma", MFD_CLOEXEC);
	if (!c->used || c->fd < 0 || ftruncate(c->fd, len))
		goto fail;
	c->va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->va == MAP_FAILED) {
		c->va = NULL;
		goto fail;
	}
	c->npages = npages;
	c->iova = cx4d_iova_alloc(d, len, 1ull << cx4d_log2_up(len));
	if (!c->iova)
		goto fail;
	map = (struct cx4_dma_map){ .iova = c->iova, .len = len,
				    .perm = CX4_DMA_READ | CX4_DMA_WRITE, .fd = c->fd };
	if (d->bus->ops->dma_map(d->bus, &map)) {
		cx4d_log(d, "dma_map of %zu bytes at 0x%llx failed", len,
			 (unsigned long long)c->iova);
		goto fail;
	}
	c->next = chunks;
	chunks = c;
	return c;
fail:
	if (c->va)
		munmap(c->va, len);
	if (c->fd >= 0)
		close(c->fd);
	free(c->used);
	free(c);
	return NULL;
}

static bool chunk_take(struct cx4d_dma_chunk *c, size_t n, size_t align, size_t *first)
{
	for (size_t i = c->hint / align * align; i + n <= c->npages; i += align) {
		size_t k = 0;

		while (k < n && !c->used[i + k])
			k++;
		if (k == n) {
			memset(c->used + i, 1, n);
			*first = i;
			if (i == c->hint)
				c->hint = i + n;
			return true;
		}
	}
	return false;
}

int cx4d_dma_alloc(struct cx4d *d, size_t len, struct cx4d_dma *m)
{
	size_t n = (len + CX4D_PAGE - 1) / CX4D_PAGE;
	size_t align = (size_t)1 << cx4d_log2_up(n);
	struct cx4d_dma_chunk *c;
	size_t first;

	if (!n)
		return EINVAL;
	for (c = chunks; c; c = c->next)
		if (c->npages >= n && chunk_take(c, n, align, &first))
			goto found;
	c = chunk_new(d, n > CHUNK_PAGES ? align : CHUNK_PAGES);
	if (!c || !chunk_take(c, n, align, &first))
		return ENOMEM;
found:
	m->chunk = c;
	m->first = first;
	m->len = n * CX4D_PAGE;
	m->va = c->va + first * CX4D_PAGE;
	m->iova = c->iova + first * CX4D_PAGE;
	memset(m->va, 0, m->len);
	return 0;
}

void cx4d_dma_free(struct cx4d *d, struct cx4d_dma *m)
{
	(void)d;
	if (!m->chunk)
		return;
	memset(m->chunk->used + m->first, 0, m->len / CX4D_PAGE);
	if (m->first < m->chunk->hint)
		m->chunk->hint = m->first;
	memset(m, 0, sizeof(*m));
}

void cx4d_dma_fini(struct cx4d *d)
{
	while (chunks) {
		struct cx4d_dma_chunk *c = chunks;
		size_t len = c->npages * CX4D_PAGE;

		chunks = c->next;
		if (d->bus)
			d->bus->ops->dma_unmap(d->bus, c->iova, len);
		munmap(c->va, len);
		close(c->fd);
		free(c->used);
		free(c);
	}
}
