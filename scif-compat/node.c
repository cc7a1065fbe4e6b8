// SPDX-License-Identifier: MIT
/* SCIF nodes from the configuration (node.h). Pure code: unit-tested in tests/scif. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

static int parse_node_id(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > SCIF_MAX_NODE)
		return -1;
	*out = v;
	return 0;
}

int scif_dev_node(const struct bv_config *cfg, int idx, char *err, size_t errlen)
{
	const struct bv_dev_conf *d = &cfg->dev[idx];
	const char *v = bv_conf_get(d, "scif_node", NULL);
	long node;
	int k = 0;

	if (v) {
		if (parse_node_id(v, &node)) {
			snprintf(err, errlen, "device %s: scif_node '%s' is not a node id 0..%d",
				 d->name, v, SCIF_MAX_NODE);
			return -1;
		}
		return (int)node;
	}
	if (!strcmp(d->kind, "ntb"))
		return d->side;
	for (int i = 0; i < idx; i++)
		k += !strcmp(cfg->dev[i].kind, d->kind);
	return k;
}

/*
 * Position of a device in the preference list: its name first, then its kind; -1: not listed,
 * not used (so a program told to use ntb never runs over cx4 without knowing).
 */
static int fabric_rank(const char *fabric, const struct bv_dev_conf *d)
{
	char list[256], *save = NULL, *tok;
	int rank = 0, kind_rank = -1;

	snprintf(list, sizeof(list), "%s", fabric);
	for (tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save), rank++) {
		if (!strcmp(tok, d->name))
			return rank;
		if (kind_rank < 0 && !strcmp(tok, d->kind))
			kind_rank = rank;
	}
	return kind_rank;
}

static int add_route(struct scif_nodes *nv, int node, int dev, int rank, struct in_addr src,
		     struct in_addr dst, char *err, size_t errlen)
{
	struct scif_route *r;

	for (int i = 0; i < nv->nroutes; i++)
		if (nv->routes[i].node == node && nv->routes[i].dev == dev &&
		    nv->routes[i].dst.s_addr == dst.s_addr)
			return 0;
	if (nv->nroutes == SCIF_MAX_ROUTES) {
		snprintf(err, errlen, "more than %d routes to SCIF nodes", SCIF_MAX_ROUTES);
		return -1;
	}
	r = &nv->routes[nv->nroutes++];
	r->node = (uint16_t)node;
	r->dev = dev;
	r->rank = rank;
	r->src = src;
	r->dst = dst;
	return 0;
}

/* scif_peers = N=IP[,N=IP...] */
static int add_peers(struct scif_nodes *nv, const struct bv_config *cfg, int dev, int rank,
		     char *err, size_t errlen)
{
	const struct bv_dev_conf *d = &cfg->dev[dev];
	const char *v = bv_conf_get(d, "scif_peers", NULL);
	char list[160], *save = NULL, *tok;
	int n = 0;

	if (!v)
		return 0;
	snprintf(list, sizeof(list), "%s", v);
	for (tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		char *eq = strchr(tok, '=');
		struct in_addr ip;
		long node;

		if (!eq || (*eq = 0, parse_node_id(tok, &node)) || inet_pton(AF_INET, eq + 1, &ip) != 1 ||
		    ++n > SCIF_MAX_PEERS) {
			snprintf(err, errlen, "device %s: scif_peers wants up to %d NODE=IPV4 entries",
				 d->name, SCIF_MAX_PEERS);
			return -1;
		}
		if (node == nv->self) {
			snprintf(err, errlen, "device %s: scif_peers names this node (%ld)", d->name,
				 node);
			return -1;
		}
		if (add_route(nv, (int)node, dev, rank, d->ip, ip, err, errlen))
			return -1;
	}
	return 0;
}

static int route_cmp(const void *a, const void *b)
{
	const struct scif_route *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->dev - y->dev;
}

int scif_nodes_build(struct scif_nodes *nv, const struct bv_config *cfg, uint16_t self,
		     const char *fabric, char *err, size_t errlen)
{
	int node[BV_MAX_DEVICES];

	memset(nv, 0, sizeof(*nv));
	nv->self = self;
	if (!fabric || !*fabric)
		fabric = "ntb,cx4";
	for (int i = 0; i < cfg->ndev; i++) {
		node[i] = scif_dev_node(cfg, i, err, errlen);
		if (node[i] < 0)
			return -1;
		if (node[i] == self)
			nv->local[nv->nlocal++] = i;
	}
	for (int l = 0; l < nv->nlocal; l++) {
		int i = nv->local[l];
		const struct bv_dev_conf *d = &cfg->dev[i];
		int rank = fabric_rank(fabric, d);

		if (rank < 0)
			continue;
		/* ourselves, through this device */
		if (add_route(nv, self, i, rank, d->ip, d->ip, err, errlen))
			return -1;
		for (int j = 0; j < cfg->ndev; j++) {
			const struct bv_dev_conf *e = &cfg->dev[j];

			if (j == i || strcmp(e->kind, d->kind) || node[j] == self)
				continue;
			/* an ntb end reaches the other end of its link; a cx4 port every cx4 port */
			if (!strcmp(d->kind, "ntb") &&
			    (strcmp(e->link, d->link) || e->side == d->side))
				continue;
			if (add_route(nv, node[j], i, rank, d->ip, e->ip, err, errlen))
				return -1;
		}
		if (add_peers(nv, cfg, i, rank, err, errlen))
			return -1;
	}
	qsort(nv->routes, nv->nroutes, sizeof(nv->routes[0]), route_cmp);
	return 0;
}

int scif_nodes_list(const struct scif_nodes *nv, uint16_t *ids, int max)
{
	int n = 0;

	for (int i = 0; i < nv->nroutes; i++) {
		if (i && nv->routes[i].node == nv->routes[i - 1].node)
			continue;
		if (n < max)
			ids[n] = nv->routes[i].node;
		n++;
	}
	return n;
}

const struct scif_route *scif_nodes_route(const struct scif_nodes *nv, uint16_t node)
{
	for (int i = 0; i < nv->nroutes; i++)
		if (nv->routes[i].node == node)
			return &nv->routes[i];
	return NULL;
}

const struct scif_route *scif_nodes_next_route(const struct scif_nodes *nv,
					       const struct scif_route *r)
{
	if (!r || r < nv->routes || r + 1 >= nv->routes + nv->nroutes || r[1].node != r->node)
		return NULL;
	return r + 1;
}
