// SPDX-License-Identifier: MIT
/*
 * Address handles (UD). An NTB link has exactly two ends, so an address names one of them: a
 * GID of this end (the datagram loops back) or the peer end's. The port is RoCE (link layer
 * Ethernet): an address needs a GRH (EINVAL without, as libmlx5's mlx5_create_ah says), and a
 * GID that belongs to neither end is not reachable: creating the handle fails, as it does on
 * RoCE when the address does not resolve - a datagram that could never be delivered does not
 * vanish silently.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntb.h"

static bool reachable(struct ntb_context *ctx, const uint8_t *gid)
{
	const struct ntb_end *peer = &ctx->ends[NTB_END_PEER];

	if (ntb_gid_is_own(ctx, gid))
		return true;
	/* before the link session: its addresses are not known yet, the sends will fail */
	if (!ctx->attached || !peer->up)
		return true;
	return !memcmp(gid, peer->gid, 16) || !memcmp(gid, peer->gid_ll, 16);
}

struct ibv_ah *ntb_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct ntb_context *ctx = to_ntb_ctx(ibpd->context);
	struct ntb_ah *ah;

	if (attr->port_num != 1 || !attr->is_global || !ntb_gid(ctx, attr->grh.sgid_index)) {
		errno = EINVAL;
		return NULL;
	}
	if (!reachable(ctx, attr->grh.dgid.raw)) {
		errno = EHOSTUNREACH;
		return NULL;
	}
	if (atomic_fetch_add(&ctx->nah, 1) >= NTB_MAX_AH) {
		atomic_fetch_sub(&ctx->nah, 1);
		errno = ENOMEM;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		atomic_fetch_sub(&ctx->nah, 1);
		errno = ENOMEM;
		return NULL;
	}
	ah->attr = *attr;
	atomic_fetch_add(&to_ntb_pd(ibpd)->refs, 1);
	return &ah->ibv_ah;
}

int ntb_destroy_ah(struct ibv_ah *ibah)
{
	atomic_fetch_sub(&to_ntb_ctx(ibah->context)->nah, 1);
	atomic_fetch_sub(&to_ntb_pd(ibah->pd)->refs, 1);
	free(ibah);
	return 0;
}
