// SPDX-License-Identifier: MIT
/*
 * Address handles (UD). An NTB link has exactly two ends, so an address resolves to "the peer
 * end" when its GID is the peer's (or when no GRH is given) and the destination QP number,
 * which names its end (NTBV_QPN_SIDE), does the rest. A GID that belongs to neither end is
 * not reachable: datagrams to it are dropped, as a fabric drops unroutable packets.
 */
#include <errno.h>
#include <stdlib.h>

#include "ntb.h"

struct ibv_ah *ntb_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct ntb_context *ctx = to_ntb_ctx(ibpd->context);
	struct ntb_ah *ah;

	if (attr->port_num != 1 ||
	    (attr->is_global && attr->grh.sgid_index >= ctx->gid_tbl_len)) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->attr = *attr;
	atomic_fetch_add(&to_ntb_pd(ibpd)->refs, 1);
	return &ah->ibv_ah;
}

int ntb_destroy_ah(struct ibv_ah *ibah)
{
	atomic_fetch_sub(&to_ntb_pd(ibah->pd)->refs, 1);
	free(ibah);
	return 0;
}
