// SPDX-License-Identifier: MIT
/*
 * The ntb provider: registration and the device context. The data path (windows, doorbells, the DMA
 * engine) is built in the files next to this one, one per object kind; until a verb exists it
 * is left NULL and libibverbs answers EOPNOTSUPP.
 */
#include <stdlib.h>

#include "bv_provider.h"

struct ntb_context {
	struct bv_context bv;
};

static void ntb_free_context(struct ibv_context *ibctx)
{
	bv_close_context(to_bv_context(ibctx));
}

static const struct verbs_context_ops ntb_ctx_ops = {
	.free_context = ntb_free_context,
};

static struct verbs_context *ntb_alloc_context(struct ibv_device *ibdev, int cmd_fd,
					       void *private_data)
{
	struct bv_context *ctx = bv_open_context(ibdev, cmd_fd, sizeof(struct ntb_context));

	if (!ctx)
		return NULL;
	bv_set_ops(ctx, &ntb_ctx_ops);
	return &ctx->vctx;
}

static const struct verbs_match_ent ntb_match_table[] = {
	VERBS_MODALIAS_MATCH(BV_MODALIAS_PREFIX "ntb", NULL),
	{},
};

static const struct verbs_device_ops ntb_dev_ops = {
	.name = BV_PROVIDER_NAME_PREFIX "ntb",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_table = ntb_match_table,
	.alloc_device = bv_alloc_device,
	.uninit_device = bv_uninit_device,
	.alloc_context = ntb_alloc_context,
};

static void __attribute__((constructor)) ntb_register(void)
{
	bv_register_provider(&ntb_dev_ops);
}
