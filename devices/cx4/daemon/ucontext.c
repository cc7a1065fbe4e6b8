// SPDX-License-Identifier: MIT
/*
 * A client's device context (mlx5_ib_alloc_ucontext): its own UAR page (ALLOC_UAR), which
 * the provider maps to ring its doorbells and arm its CQs, and what it must know of the
 * device to build WQEs (BlueFlame register size, CQE version, queue limits).
 *
 * The UAR page is reached through the bus's BAR0 window fd at bar0_fd_offset + uar * 4 KB
 * (a VFIO device fd region, or the model's memfd), plus, for the model, the kick page and
 * eventfd that wake it on doorbells.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cx4d.h"

int cx4d_ucontext_alloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	uint8_t in[CX4_ALLOC_UAR_IN_SIZE] = { 0 }, out[CX4_ALLOC_UAR_OUT_SIZE];
	struct cx4_alloc_ucontext_rsp *rsp = q->r->payload;
	struct bvd_reply *r = q->r;
	int err;

	if (q->len)
		return EINVAL;
	if (cl->has_uar)
		return EEXIST;
	cx4d_cmd_set_header(in, CX4_CMD_OP_ALLOC_UAR, 0);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	cl->uar = cx4_get(out, CX4_ALLOC_UAR_OUT_UAR);
	cl->has_uar = true;

	memset(rsp, 0, sizeof(*rsp));
	rsp->uar_index = cl->uar;
	rsp->uar_mmap_offset = d->bus->bar0_fd_offset + (uint64_t)cl->uar * CX4_UAR_PAGE_SIZE;
	if (cx4_get(d->cap_gen, CX4_CAP_GEN_BF))
		rsp->flags |= CX4_UCTX_BF;
	if (cx4_get(d->cap_atomic, CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE) == 1)
		rsp->flags |= CX4_UCTX_ATOMIC_HOST_ORDER;
	if (cx4_get(d->cap_gen, CX4_CAP_GEN_QP_DATA_IN_ORDER))
		rsp->flags |= CX4_UCTX_QP_DATA_IN_ORDER;
	rsp->log_bf_reg_size = cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_BF_REG_SIZE);
	rsp->num_bf_regs = CX4_UAR_BF_REGS_PER_PAGE;
	rsp->cqe_version = cx4_get(d->cap_gen, CX4_CAP_GEN_CQE_VERSION);
	rsp->max_sq_wqebbs = 1u << cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_QP_SZ);
	rsp->max_rq_wqes = 1u << cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_QP_SZ);
	rsp->max_srq_wqes = 1u << cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_SRQ_SZ);
	rsp->max_cqes = 1u << cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_CQ_SZ);
	rsp->max_send_wqe_bytes = cx4_get(d->cap_gen, CX4_CAP_GEN_MAX_WQE_SZ_SQ);
	rsp->max_recv_wqe_bytes = cx4_get(d->cap_gen, CX4_CAP_GEN_MAX_WQE_SZ_RQ);
	rsp->max_user_index = 0xffffff;
	rsp->page_size = CX4D_PAGE;
	r->len = sizeof(*rsp);

	r->fds[0] = dup(d->bus->bar0_fd);
	r->nfds = 1;
	if (d->bus->kick.page && d->bus->kick_page_fd >= 0) {
		r->fds[1] = dup(d->bus->kick_page_fd);
		r->fds[2] = dup(d->bus->kick.efd);
		r->nfds = 3;
		rsp->flags |= CX4_UCTX_KICK;
	}
	for (unsigned int i = 0; i < r->nfds; i++)
		if (r->fds[i] < 0) {
			err = errno;
			for (unsigned int k = 0; k < r->nfds; k++)
				if (r->fds[k] >= 0)
					close(r->fds[k]);
			r->nfds = 0;
			r->len = 0;
			cx4d_ucontext_free(d, cl);
			return err;
		}
	return 0;
}

void cx4d_ucontext_free(struct cx4d *d, struct cx4d_client *cl)
{
	uint8_t in[CX4_DEALLOC_UAR_IN_SIZE] = { 0 }, out[CX4_DEALLOC_UAR_OUT_SIZE];

	if (!cl->has_uar)
		return;
	cl->has_uar = false;
	if (d->dead)
		return;
	cx4d_cmd_set_header(in, CX4_CMD_OP_DEALLOC_UAR, 0);
	cx4_set(in, CX4_DEALLOC_UAR_IN_UAR, cl->uar);
	cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}
