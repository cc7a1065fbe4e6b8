// SPDX-License-Identifier: MIT
/*
 * Completion queues (CREATE_CQ / DESTROY_CQ; Linux mlx5_ib_create_cq, user CQ path). The
 * provider owns the CQE ring and the doorbell record in its memfd; the daemon maps it and
 * tells the device where it is: cqc with cqe_sz 64 B, log_cq_size, the client's UAR page
 * (the arm doorbell rings there), the completion EQ of the requested vector, one PAS for the
 * whole ring and dbr_addr.
 *
 * Completion events: when an armed CQ gets a CQE the device writes a completion EQE with the
 * CQN to the CQ's EQ; the daemon sends the 8-byte cq_handle record (the ibv_cq pointer the
 * provider gave) to the completion channel fd the provider passed, which is exactly what
 * ibv_get_cq_event() reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "cx4d.h"

static void destroy_hw(struct cx4d *d, uint32_t cqn)
{
	uint8_t in[CX4_DESTROY_CQ_IN_SIZE] = { 0 }, out[CX4_DESTROY_CQ_OUT_SIZE];

	if (d->dead)
		return;
	cx4d_cmd_set_header(in, CX4_CMD_OP_DESTROY_CQ, 0);
	cx4_set(in, CX4_DESTROY_CQ_IN_CQN, cqn);
	cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

int cx4d_cq_create(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_create_cq_req *req = q->in;
	struct cx4_create_cq_rsp *rsp = q->r->payload;
	uint8_t in[CX4_CREATE_CQ_IN_SIZE + 8] = { 0 }, out[CX4_CREATE_CQ_OUT_SIZE];
	uint8_t *cqc = in + CX4_CREATE_CQ_IN_CQC;
	uint64_t ring;
	struct cx4d_cq *cq;
	int err;

	if (q->len != sizeof(*req) || q->nfds < 1 || !cl->has_uar)
		return EINVAL;
	if ((req->flags & ~CX4_CQ_CHANNEL) || ((req->flags & CX4_CQ_CHANNEL) && q->nfds < 2))
		return EINVAL;
	if (req->cqe_size != 64 || req->comp_vector >= d->ncomp || req->log_cq_size < 1 ||
	    req->log_cq_size > cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_CQ_SZ))
		return EINVAL;
	ring = 64ull << req->log_cq_size;
	if (req->buf_len % CX4D_PAGE || req->dbr_offset % 64 || req->dbr_offset < ring ||
	    req->dbr_offset + 8 > req->buf_len)
		return EINVAL;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return ENOMEM;
	cq->channel_fd = -1;
	err = cx4d_umem_map_fd(d, q->fds[0], req->buf_len, &cq->umem);
	if (err)
		goto fail;
	cq->eqn = d->eq_comp[req->comp_vector].eqn;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_CQ, 0);
	cx4_set(cqc, CX4_CQC_CQE_SZ, CX4_CQC_CQE_SZ_64);
	cx4_set(cqc, CX4_CQC_LOG_CQ_SIZE, req->log_cq_size);
	cx4_set(cqc, CX4_CQC_UAR_PAGE, cl->uar);
	cx4_set(cqc, CX4_CQC_C_EQN, cq->eqn);
	cx4_set(cqc, CX4_CQC_LOG_PAGE_SIZE, cx4d_pas_log_page(ring));
	cx4_set64(cqc, CX4_CQC_DBR_ADDR, cq->umem.iova + req->dbr_offset);
	cx4_pas_set(in, CX4_CREATE_CQ_IN_PAS, 0, cq->umem.iova);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		goto fail;
	cq->cqn = cx4_get(out, CX4_CREATE_CQ_OUT_CQN);
	cq->user_handle = req->user_handle;
	err = cx4d_obj_add(cl, &cq->o, CX4D_OBJ_CQ);
	if (!err)
		err = cx4d_idmap_put(&d->cqs, cq->cqn, cq);
	if (err) {
		cx4d_obj_remove(cl, &cq->o);
		destroy_hw(d, cq->cqn);
		goto fail;
	}
	if (req->flags & CX4_CQ_CHANNEL) {
		cq->channel_fd = q->fds[1];
		q->fds[1] = -1;		/* ours now */
	}
	rsp->handle = cq->o.handle;
	rsp->cqn = cq->cqn;
	q->r->len = sizeof(*rsp);
	return 0;
fail:
	cx4d_umem_unmap(d, &cq->umem);
	free(cq);
	return err;
}

void cx4d_cq_destroy(struct cx4d *d, struct cx4d_cq *cq)
{
	destroy_hw(d, cq->cqn);
	cx4d_idmap_del(&d->cqs, cq->cqn);
	cx4d_umem_unmap(d, &cq->umem);
	if (cq->channel_fd >= 0)
		close(cq->channel_fd);
	cx4d_obj_remove(cq->o.owner, &cq->o);
	free(cq);
}

int cx4d_cq_destroy_req(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_handle_req *req = q->in;
	struct cx4_destroy_rsp *rsp = q->r->payload;
	struct cx4d_cq *cq;

	if (q->len != sizeof(*req))
		return EINVAL;
	cq = cx4d_obj_get(cl, req->handle, CX4D_OBJ_CQ);
	if (!cq)
		return EINVAL;
	if (cq->o.users)
		return EBUSY;
	rsp->comp_events = cq->events;
	rsp->async_events = cq->async_events;
	rsp->reserved = 0;
	q->r->len = sizeof(*rsp);
	cx4d_cq_destroy(d, cq);
	return 0;
}

void cx4d_cq_event(struct cx4d *d, uint32_t cqn)
{
	struct cx4d_cq *cq;

	if (d->gsi.up && cqn == d->gsi.cqn) {
		cx4d_gsi_cq_event(d);	/* ours, not a client's */
		return;
	}
	cq = cx4d_idmap_get(&d->cqs, cqn);

	if (!cq) {
		cx4d_log(d, "completion event for unknown CQ 0x%x", cqn);
		return;
	}
	if (cq->channel_fd < 0)
		return;
	/* one record per event; a full or closed channel loses it, like a full kernel queue */
	if (send(cq->channel_fd, &cq->user_handle, sizeof(cq->user_handle),
		 MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(cq->user_handle))
		cq->events++;
}

void cx4d_cq_error(struct cx4d *d, uint32_t cqn, uint8_t syndrome)
{
	struct cx4d_cq *cq = cx4d_idmap_get(&d->cqs, cqn);

	cx4d_log(d, "CQ 0x%x error, syndrome %u (%s)", cqn, syndrome,
		 syndrome == CX4_CQ_ERR_SYND_OVERRUN ? "overrun" : "access violation");
	if (cq && !bvd_async_event(cq->o.owner->bc, cq->user_handle, IBV_EVENT_CQ_ERR))
		cq->async_events++;
}
