// SPDX-License-Identifier: MIT
/*
 * A first-fit allocator of page extents over one range (the IOMMU aperture of window 0, the
 * pair pool in the peer's window, the pair pool in our loopback memory). Free extents are kept
 * sorted by offset and merged with their neighbours when freed; a handful of extents is the
 * common case, so a linear search is the whole algorithm.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

int nv_pool_init(struct nv_pool *p, uint64_t base, uint64_t len)
{
	free(p->ext);
	memset(p, 0, sizeof(*p));
	p->cap = 64;
	p->ext = calloc(p->cap, sizeof(*p->ext));
	if (!p->ext)
		return -ENOMEM;
	p->base = base;
	p->len = len;
	if (len)
		p->ext[p->n++] = (struct nv_extent){ base, len };
	return 0;
}

void nv_pool_fini(struct nv_pool *p)
{
	free(p->ext);
	memset(p, 0, sizeof(*p));
}

int nv_pool_alloc(struct nv_pool *p, uint64_t len, uint64_t *off)
{
	for (unsigned int i = 0; i < p->n; i++) {
		struct nv_extent *e = &p->ext[i];

		if (e->len < len)
			continue;
		*off = e->off;
		e->off += len;
		e->len -= len;
		if (!e->len) {
			memmove(e, e + 1, (p->n - i - 1) * sizeof(*e));
			p->n--;
		}
		p->used += len;
		return 0;
	}
	return -ENOSPC;
}

void nv_pool_free(struct nv_pool *p, uint64_t off, uint64_t len)
{
	unsigned int i = 0;

	if (!p->ext || !len)
		return;
	p->used -= len;
	while (i < p->n && p->ext[i].off < off)
		i++;
	/* merge with the extent before and/or after */
	if (i > 0 && p->ext[i - 1].off + p->ext[i - 1].len == off) {
		p->ext[i - 1].len += len;
		if (i < p->n && off + len == p->ext[i].off) {
			p->ext[i - 1].len += p->ext[i].len;
			memmove(&p->ext[i], &p->ext[i + 1], (p->n - i - 1) * sizeof(*p->ext));
			p->n--;
		}
		return;
	}
	if (i < p->n && off + len == p->ext[i].off) {
		p->ext[i].off = off;
		p->ext[i].len += len;
		return;
	}
	if (p->n == p->cap) {
		struct nv_extent *n = realloc(p->ext, 2 * p->cap * sizeof(*n));

		if (!n) {
			p->used += len;	/* the range leaks from the pool; nothing else breaks */
			return;
		}
		p->ext = n;
		p->cap *= 2;
	}
	memmove(&p->ext[i + 1], &p->ext[i], (p->n - i) * sizeof(*p->ext));
	p->ext[i] = (struct nv_extent){ off, len };
	p->n++;
}
