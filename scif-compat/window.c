// SPDX-License-Identifier: MIT
/*
 * Window tables (window.h): a sorted array, binary search, first-fit offsets. Programs hold a
 * handful to a few thousand windows per endpoint; an array keeps lookups cache-friendly and
 * the code short.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"

void scif_wintab_init(struct scif_wintab *t)
{
	memset(t, 0, sizeof(*t));
}

void scif_wintab_free(struct scif_wintab *t)
{
	free(t->w);
	scif_wintab_init(t);
}

/* Index of the first window whose end is above off (n if none). */
static size_t lower(const struct scif_wintab *t, uint64_t off)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->w[mid].off + t->w[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long scif_wintab_find(const struct scif_wintab *t, uint64_t off)
{
	size_t i = lower(t, off);

	return i < t->n && t->w[i].off <= off ? (long)i : -1;
}

int scif_wintab_check(const struct scif_wintab *t, uint64_t off, uint64_t len)
{
	size_t i;

	if (!len || off % SCIF_PAGE_SIZE || len % SCIF_PAGE_SIZE || off >= SCIF_AUTO_END ||
	    len > SCIF_AUTO_END - off)
		return -EINVAL;
	i = lower(t, off);
	if (i < t->n && t->w[i].off < off + len)
		return -EADDRINUSE;
	return 0;
}

int scif_wintab_insert(struct scif_wintab *t, const struct scif_win *w)
{
	int ret = scif_wintab_check(t, w->off, w->len);
	size_t i;

	if (ret)
		return ret;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct scif_win *nw = realloc(t->w, cap * sizeof(*nw));

		if (!nw)
			return -ENOMEM;
		t->w = nw;
		t->cap = cap;
	}
	i = lower(t, w->off);
	memmove(&t->w[i + 1], &t->w[i], (t->n - i) * sizeof(*t->w));
	t->w[i] = *w;
	t->n++;
	return 0;
}

int scif_wintab_alloc(const struct scif_wintab *t, uint64_t len, uint64_t *off)
{
	uint64_t at = SCIF_FIXED_END;

	if (!len || len % SCIF_PAGE_SIZE || len > SCIF_AUTO_END - SCIF_FIXED_END)
		return -EINVAL;
	for (size_t i = lower(t, at); i < t->n; i++) {
		if (t->w[i].off >= at + len)
			break;
		at = t->w[i].off + t->w[i].len;
		if (at > SCIF_AUTO_END - len)
			return -ENOMEM;
	}
	if (at > SCIF_AUTO_END - len)
		return -ENOMEM;
	*off = at;
	return 0;
}

int scif_wintab_resolve(const struct scif_wintab *t, uint64_t off, uint64_t len, uint32_t prot,
			struct scif_span *spans, int max)
{
	uint64_t end = off + len;
	size_t i;
	int n = 0;

	if (!len || end < off)
		return -ENXIO;
	i = lower(t, off);
	while (off < end) {
		const struct scif_win *w;
		uint64_t wend, take;

		/* the next byte must be in window i: present, live, contiguous */
		if (i >= t->n)
			return -ENXIO;
		w = &t->w[i];
		if (w->off > off || w->state != SCIF_WIN_LIVE)
			return -ENXIO;
		if ((w->prot & prot) != prot)
			return -EPERM;
		if (n == max)
			return -E2BIG;
		wend = w->off + w->len;
		take = (end < wend ? end : wend) - off;
		spans[n].w = w;
		spans[n].off = off;
		spans[n].len = take;
		n++;
		off += take;
		i++;
	}
	return n;
}

int scif_wintab_whole(const struct scif_wintab *t, uint64_t off, uint64_t len, size_t *first,
		      size_t *count)
{
	uint64_t end = off + len, at = off;
	size_t i, j;

	if (!len || end < off)
		return -EINVAL;
	i = lower(t, off);
	/* a window holding the first byte but starting before it straddles the start */
	if (i < t->n && t->w[i].off < off)
		return -EINVAL;
	for (j = i; j < t->n && t->w[j].off < end; j++) {
		if (t->w[j].off + t->w[j].len > end)
			return -EINVAL;	/* straddles the end */
	}
	/* MPSS 3: the range must be exactly the union of contiguous live windows */
	for (size_t k = i; k < j; k++) {
		if (t->w[k].off != at || t->w[k].state != SCIF_WIN_LIVE)
			return -ENXIO;
		at += t->w[k].len;
	}
	if (at != end)
		return -ENXIO;
	*first = i;
	*count = j - i;
	return 0;
}

void scif_wintab_remove(struct scif_wintab *t, size_t first, size_t count)
{
	if (first >= t->n || !count)
		return;
	if (count > t->n - first)
		count = t->n - first;
	memmove(&t->w[first], &t->w[first + count], (t->n - first - count) * sizeof(*t->w));
	t->n -= count;
}
