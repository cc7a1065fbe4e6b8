// SPDX-License-Identifier: MIT
/*
 * Protection domains. ntbd names them for the whole link end, because the peer end checks a
 * remote key's PD against the target QP's PD (both published in its control area).
 */
#include <errno.h>
#include <stdlib.h>

#include "ntb.h"

struct ibv_pd *ntb_alloc_pd(struct ibv_context *context)
{
	struct ntb_context *ctx = to_ntb_ctx(context);
	struct ntb_handle_rsp rsp;
	struct ntb_pd *pd = calloc(1, sizeof(*pd));
	int ret;

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ntb_call(ctx, NTB_OP_ALLOC_PD, NULL, 0, &rsp, sizeof(rsp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->handle = rsp.handle;
	pd->ibv_pd.handle = rsp.handle;
	return &pd->ibv_pd;
}

int ntb_dealloc_pd(struct ibv_pd *ibpd)
{
	struct ntb_pd *pd = to_ntb_pd(ibpd);
	struct ntb_handle_req req = { .handle = pd->handle };
	int ret;

	if (atomic_load(&pd->refs))
		return EBUSY;
	/* EBUSY too while MRs or QPs use it: ntbd knows those */
	ret = ntb_call(to_ntb_ctx(ibpd->context), NTB_OP_DEALLOC_PD, &req, sizeof(req), NULL, 0);
	/* ENODEV: ntbd is gone and every object it kept for us with it */
	if (ret && ret != ENODEV)
		return ret;
	free(pd);
	return 0;
}
