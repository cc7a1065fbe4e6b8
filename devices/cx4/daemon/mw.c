// SPDX-License-Identifier: MIT
/*
 * Memory windows (Linux mlx5_ib_alloc_mw / mlx5_ib_dealloc_mw): a memory key in KLM mode,
 * created free (nothing reaches memory through it until a UMR WQE on one of the client's QPs
 * binds it), UMR-enabled, with local read, any QP (a type 2 bind names its QP), and remote
 * invalidation allowed for type 2. Four KLM entries of room, as Linux gives (num_klms 0 ->
 * roundup(1, 4)). rkey = mkey_index << 8 | a per-device key byte; the bind gives it the key
 * byte the application chose.
 */
#include <errno.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "cx4d.h"

#define MW_KLMS 4

int cx4d_mw_alloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_alloc_mw_req *req = q->in;
	struct cx4_alloc_mw_rsp *rsp = q->r->payload;
	uint8_t in[CX4_CREATE_MKEY_IN_SIZE] = {0}, out[CX4_CREATE_MKEY_OUT_SIZE];
	uint8_t *mkc = in + CX4_CREATE_MKEY_IN_MKC;
	struct cx4d_pd *pd;
	struct cx4d_mw *mw;
	int err;

	if (q->len != sizeof(*req))
		return EINVAL;
	pd = cx4d_obj_get(cl, req->pd_handle, CX4D_OBJ_PD);
	if (!pd)
		return EINVAL;
	if (req->type != IBV_MW_TYPE_1 && req->type != IBV_MW_TYPE_2)
		return EOPNOTSUPP;
	/* mlx5_ib_query_device: windows where the device invalidates memory access late */
	if (!cx4_get(d->cap_gen, CX4_CAP_GEN_IMAICL))
		return EOPNOTSUPP;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return ENOMEM;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_MKEY, 0);
	cx4_set(mkc, CX4_MKC_FREE, 1);
	cx4_set(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE, MW_KLMS);
	cx4_set(mkc, CX4_MKC_PD, pd->pdn);
	cx4_set(mkc, CX4_MKC_UMR_EN, 1);
	cx4_set(mkc, CX4_MKC_LR, 1);
	cx4_set(mkc, CX4_MKC_ACCESS_MODE_1_0, CX4_MKC_ACCESS_MODE_KLMS);
	cx4_set(mkc, CX4_MKC_EN_RINVAL, req->type == IBV_MW_TYPE_2);
	cx4_set(mkc, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	if (!++d->mkey_key)
		d->mkey_key = 1;
	cx4_set(mkc, CX4_MKC_MKEY_7_0, d->mkey_key);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err) {
		free(mw);
		return err;
	}
	mw->mkey_index = cx4_get(out, CX4_CREATE_MKEY_OUT_MKEY_INDEX);
	mw->pd = pd;
	err = cx4d_obj_add(cl, &mw->o, CX4D_OBJ_MW);
	if (err) {
		cx4d_mkey_destroy(d, mw->mkey_index);
		free(mw);
		return err;
	}
	pd->o.users++;
	rsp->handle = mw->o.handle;
	rsp->rkey = mw->mkey_index << 8 | d->mkey_key;
	q->r->len = sizeof(*rsp);
	return 0;
}

void cx4d_mw_destroy(struct cx4d *d, struct cx4d_mw *mw)
{
	cx4d_mkey_destroy(d, mw->mkey_index);
	mw->pd->o.users--;
	cx4d_obj_remove(mw->o.owner, &mw->o);
	free(mw);
}

int cx4d_mw_dealloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_handle_req *req = q->in;
	struct cx4d_mw *mw;

	if (q->len != sizeof(*req))
		return EINVAL;
	mw = cx4d_obj_get(cl, req->handle, CX4D_OBJ_MW);
	if (!mw)
		return EINVAL;
	cx4d_mw_destroy(d, mw);
	return 0;
}
