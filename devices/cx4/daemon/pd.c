// SPDX-License-Identifier: MIT
/* Protection domains (ALLOC_PD / DEALLOC_PD; Linux mlx5_ib_alloc_pd). */
#include <errno.h>
#include <stdlib.h>

#include "cx4d.h"

int cx4d_pd_alloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	uint8_t in[CX4_ALLOC_PD_IN_SIZE] = { 0 }, out[CX4_ALLOC_PD_OUT_SIZE];
	struct cx4_alloc_pd_rsp *rsp = q->r->payload;
	struct cx4d_pd *pd;
	int err;

	if (q->len)
		return EINVAL;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return ENOMEM;
	cx4d_cmd_set_header(in, CX4_CMD_OP_ALLOC_PD, 0);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err) {
		free(pd);
		return err;
	}
	pd->pdn = cx4_get(out, CX4_ALLOC_PD_OUT_PD);
	err = cx4d_obj_add(cl, &pd->o, CX4D_OBJ_PD);
	if (err) {
		cx4d_pd_destroy(d, pd);
		return err;
	}
	rsp->handle = pd->o.handle;
	rsp->pdn = pd->pdn;
	q->r->len = sizeof(*rsp);
	return 0;
}

void cx4d_pd_destroy(struct cx4d *d, struct cx4d_pd *pd)
{
	uint8_t in[CX4_DEALLOC_PD_IN_SIZE] = { 0 }, out[CX4_DEALLOC_PD_OUT_SIZE];

	if (!d->dead) {
		cx4d_cmd_set_header(in, CX4_CMD_OP_DEALLOC_PD, 0);
		cx4_set(in, CX4_DEALLOC_PD_IN_PD, pd->pdn);
		cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	}
	if (pd->o.owner)
		cx4d_obj_remove(pd->o.owner, &pd->o);
	free(pd);
}

int cx4d_pd_dealloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_handle_req *req = q->in;
	struct cx4d_pd *pd;

	if (q->len != sizeof(*req))
		return EINVAL;
	pd = cx4d_obj_get(cl, req->handle, CX4D_OBJ_PD);
	if (!pd)
		return EINVAL;
	if (pd->o.users)
		return EBUSY;	/* ib_dealloc_pd: MRs, QPs, SRQs still use it */
	cx4d_pd_destroy(d, pd);
	return 0;
}
