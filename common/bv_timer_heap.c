// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "bv_timer_heap.h"

static void swap(struct bv_theap *hp, int a, int b)
{
	struct bv_theap_node *x = hp->h[a];

	hp->h[a] = hp->h[b];
	hp->h[b] = x;
	hp->h[a]->idx = a;
	hp->h[b]->idx = b;
}

static void sift_up(struct bv_theap *hp, int i)
{
	while (i > 0 && hp->h[(i - 1) / 2]->when > hp->h[i]->when) {
		swap(hp, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct bv_theap *hp, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < hp->n && hp->h[l]->when < hp->h[m]->when)
			m = l;
		if (r < hp->n && hp->h[r]->when < hp->h[m]->when)
			m = r;
		if (m == i)
			return;
		swap(hp, i, m);
		i = m;
	}
}

int bv_theap_add(struct bv_theap *hp, struct bv_theap_node *t, uint64_t when)
{
	bv_theap_del(hp, t);
	if (hp->n == hp->cap) {
		int cap = hp->cap ? 2 * hp->cap : 64;
		struct bv_theap_node **h = realloc(hp->h, (size_t)cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		hp->h = h;
		hp->cap = cap;
	}
	t->when = when;
	t->idx = hp->n;
	hp->h[hp->n++] = t;
	sift_up(hp, t->idx);
	return 0;
}

void bv_theap_del(struct bv_theap *hp, struct bv_theap_node *t)
{
	int i = t->idx;

	if (i < 0)
		return;
	t->idx = -1;
	if (i != --hp->n) {
		struct bv_theap_node *moved = hp->h[hp->n];

		hp->h[i] = moved;
		moved->idx = i;
		sift_down(hp, i);
		sift_up(hp, moved->idx);
	}
}

void bv_theap_fini(struct bv_theap *hp)
{
	for (int i = 0; i < hp->n; i++)
		hp->h[i]->idx = -1;
	free(hp->h);
	hp->h = NULL;
	hp->n = hp->cap = 0;
}
