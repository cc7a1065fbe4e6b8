// SPDX-License-Identifier: MIT
/*
 * The cx4 provider: registration and the device context. The data path (WQEs, doorbells,
 * CQEs) is built in the files next to this one, one per object kind; until a verb exists it
 * is left NULL and libibverbs answers EOPNOTSUPP.
 */
#include <stdlib.h>

#include "bv_provider.h"

struct cx4_context {
	struct bv_context bv;
};

static void cx4_free_context(struct ibv_context *ibctx)
{
	bv_close_context(to_bv_context(ibctx));
}

static const struct verbs_context_ops cx4_ctx_ops = {
	.free_context = cx4_free_context,
};

static struct verbs_context *cx4_alloc_context(struct ibv_device *ibdev, int cmd_fd,
					       void *private_data)
{
	struct bv_context *ctx = bv_open_context(ibdev, cmd_fd, sizeof(struct cx4_context));

	if (!ctx)
		return NULL;
	bv_set_ops(ctx, &cx4_ctx_ops);
	return &ctx->vctx;
}

static const struct verbs_match_ent cx4_match_table[] = {
	VERBS_MODALIAS_MATCH(BV_MODALIAS_PREFIX "cx4", NULL),
	{},
};

static const struct verbs_device_ops cx4_dev_ops = {
	.name = BV_PROVIDER_NAME_PREFIX "cx4",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_table = cx4_match_table,
	.alloc_device = bv_alloc_device,
	.uninit_device = bv_uninit_device,
	.alloc_context = cx4_alloc_context,
};

static void __attribute__((constructor)) cx4_register(void)
{
	bv_register_provider(&cx4_dev_ops);
}
