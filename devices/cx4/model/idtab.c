// SPDX-License-Identifier: MIT
/*
 * Object number tables: QPN, CQN, EQN, SRQN, PD, TD and MKey index to the model's object.
 * Two levels of 1024 pointers so that a 24-bit space costs memory only where numbers are
 * used. Numbers are handed out round-robin from `next`, as firmware does (a freshly freed
 * number is not reused at once, which catches drivers that use stale numbers).
 */
#include <errno.h>
#include <stdlib.h>

#include "model.h"

#define L2_BITS 10
#define L2_SIZE (1u << L2_BITS)

int cx4m_idtab_init(struct idtab *t, uint32_t base, uint32_t max)
{
	t->base = base;
	t->max = max;
	t->next = 0;
	t->count = 0;
	t->l1 = calloc((max + L2_SIZE - 1) / L2_SIZE, sizeof(*t->l1));
	return t->l1 ? 0 : -ENOMEM;
}

void cx4m_idtab_free(struct idtab *t)
{
	if (!t->l1)
		return;
	for (uint32_t i = 0; i < (t->max + L2_SIZE - 1) / L2_SIZE; i++)
		free(t->l1[i]);
	free(t->l1);
	t->l1 = NULL;
}

static void **slot(const struct idtab *t, uint32_t i, bool create)
{
	void ***l1 = &t->l1[i >> L2_BITS];

	if (!*l1) {
		if (!create)
			return NULL;
		*l1 = calloc(L2_SIZE, sizeof(void *));
		if (!*l1)
			return NULL;
	}
	return &(*l1)[i & (L2_SIZE - 1)];
}

uint32_t cx4m_idtab_alloc(struct idtab *t, void *p)
{
	if (t->count >= t->max)
		return UINT32_MAX;
	for (uint32_t n = 0; n < t->max; n++) {
		uint32_t i = (t->next + n) % t->max;
		void **s = slot(t, i, true);

		if (!s)
			return UINT32_MAX;
		if (!*s) {
			*s = p;
			t->next = (i + 1) % t->max;
			t->count++;
			return t->base + i;
		}
	}
	return UINT32_MAX;
}

void *cx4m_idtab_get(const struct idtab *t, uint32_t id)
{
	void **s;

	if (id < t->base || id - t->base >= t->max || !t->l1)
		return NULL;
	s = slot(t, id - t->base, false);
	return s ? *s : NULL;
}

void cx4m_idtab_remove(struct idtab *t, uint32_t id)
{
	void **s;

	if (id < t->base || id - t->base >= t->max)
		return;
	s = slot(t, id - t->base, false);
	if (s && *s) {
		*s = NULL;
		t->count--;
	}
}

void cx4m_idtab_foreach(struct idtab *t, void (*fn)(void *obj, void *ctx), void *ctx)
{
	if (!t->l1)
		return;
	for (uint32_t c = 0; c < (t->max + L2_SIZE - 1) / L2_SIZE; c++) {
		if (!t->l1[c])
			continue;
		for (uint32_t i = 0; i < L2_SIZE; i++)
			if (t->l1[c][i])
				fn(t->l1[c][i], ctx);
	}
}
