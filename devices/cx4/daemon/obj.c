// SPDX-License-Identifier: MIT
/*
 * Object bookkeeping, the part of the kernel's uverbs idr that keeps clients apart:
 *
 *  - per client, handles: a client names its objects by small integers that index its own
 *    table, so it cannot reach another client's PD, CQ, QP... (uverbs uobject idr);
 *  - per device, number -> object maps (QPN, CQN, SRQN; firmware page IOVAs), so an event
 *    the device reports for a number goes to the object's owner and nobody else.
 */
#include <errno.h>
#include <stdlib.h>

#include "cx4d.h"

struct cx4d_idmap_ent {
	struct cx4d_idmap_ent *next;
	uint64_t id;
	void *p;
};

static unsigned int bucket(const struct cx4d_idmap *m, uint64_t id)
{
	id ^= id >> 29;
	id *= 0xbf58476d1ce4e5b9ull;
	id ^= id >> 32;
	return (unsigned int)(id & (m->nbuckets - 1));
}

int cx4d_idmap_init(struct cx4d_idmap *m)
{
	m->nbuckets = 1024;
	m->b = calloc(m->nbuckets, sizeof(*m->b));
	return m->b ? 0 : ENOMEM;
}

void cx4d_idmap_fini(struct cx4d_idmap *m)
{
	for (unsigned int i = 0; m->b && i < m->nbuckets; i++)
		while (m->b[i]) {
			struct cx4d_idmap_ent *e = m->b[i];

			m->b[i] = e->next;
			free(e);
		}
	free(m->b);
	m->b = NULL;
}

int cx4d_idmap_put(struct cx4d_idmap *m, uint64_t id, void *p)
{
	struct cx4d_idmap_ent *e;
	unsigned int b = bucket(m, id);

	for (e = m->b[b]; e; e = e->next)
		if (e->id == id) {
			e->p = p;	/* a number the device reused: the newest object owns it */
			return 0;
		}
	e = malloc(sizeof(*e));
	if (!e)
		return ENOMEM;
	e->id = id;
	e->p = p;
	e->next = m->b[b];
	m->b[b] = e;
	return 0;
}

void *cx4d_idmap_get(struct cx4d_idmap *m, uint64_t id)
{
	for (struct cx4d_idmap_ent *e = m->b[bucket(m, id)]; e; e = e->next)
		if (e->id == id)
			return e->p;
	return NULL;
}

void cx4d_idmap_del(struct cx4d_idmap *m, uint64_t id)
{
	for (struct cx4d_idmap_ent **pe = &m->b[bucket(m, id)]; *pe; pe = &(*pe)->next)
		if ((*pe)->id == id) {
			struct cx4d_idmap_ent *e = *pe;

			*pe = e->next;
			free(e);
			return;
		}
}

/* Per-client limit on live objects: a runaway client cannot exhaust the daemon. */
#define CX4D_MAX_CLIENT_OBJS	(1u << 20)

int cx4d_obj_add(struct cx4d_client *cl, struct cx4d_obj *o, enum cx4d_obj_type type)
{
	uint32_t h;

	for (h = 0; h < cl->nobjs; h++)
		if (!cl->objs[h])
			break;
	if (h == cl->nobjs) {
		uint32_t n = cl->nobjs ? cl->nobjs * 2 : 64;
		struct cx4d_obj **t;

		if (cl->live >= CX4D_MAX_CLIENT_OBJS)
			return ENOSPC;
		t = realloc(cl->objs, n * sizeof(*t));
		if (!t)
			return ENOMEM;
		for (uint32_t i = cl->nobjs; i < n; i++)
			t[i] = NULL;
		cl->objs = t;
		cl->nobjs = n;
	}
	o->type = type;
	o->handle = h;
	o->owner = cl;
	o->users = 0;
	cl->objs[h] = o;
	cl->live++;
	if (cl->bc)
		cx4d_of(cl->bc->d)->nobj[type]++;
	return 0;
}

void *cx4d_obj_get(struct cx4d_client *cl, uint32_t handle, enum cx4d_obj_type type)
{
	if (handle >= cl->nobjs || !cl->objs[handle] || cl->objs[handle]->type != type)
		return NULL;
	return cl->objs[handle];
}

void cx4d_obj_remove(struct cx4d_client *cl, struct cx4d_obj *o)
{
	if (o->handle < cl->nobjs && cl->objs[o->handle] == o) {
		cl->objs[o->handle] = NULL;
		cl->live--;
		if (cl->bc)
			cx4d_of(cl->bc->d)->nobj[o->type]--;
	}
}
