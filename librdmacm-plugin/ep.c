// SPDX-License-Identifier: MIT
/*
 * The endpoint helpers (librdmacm cma.c): rdma_create_ep() makes a synchronous id bound
 * (passive) or resolved with a route and, if asked, a QP (active); rdma_get_request() waits
 * for a connection request on a synchronous listener and gives the new id its QP.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "rcm.h"

static int passive_ep(struct rdma_cm_id *cm_id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		      struct ibv_qp_init_attr *qp_init_attr)
{
	struct rcm_id *id = rcm_id_of(cm_id);

	if (rdma_bind_addr(cm_id, res->ai_src_addr))
		return -1;
	if (pd)
		cm_id->pd = pd;
	if (qp_init_attr) {
		id->qp_init_attr = malloc(sizeof(*qp_init_attr));
		if (!id->qp_init_attr)
			return rcm_err(ENOMEM);
		*id->qp_init_attr = *qp_init_attr;
		id->qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	}
	return 0;
}

RCM_EXPORT int rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res,
			      struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rcm_id *id;
	int err = rcm_init();

	if (err)
		return rcm_err(err);
	if (!out || !res)
		return rcm_err(EINVAL);
	id = rcm_id_alloc(NULL, NULL, (enum rdma_port_space)res->ai_port_space,
			  (enum ibv_qp_type)res->ai_qp_type);
	if (!id)
		return -1;
	if (res->ai_flags & RAI_PASSIVE) {
		if (passive_ep(&id->id, res, pd, qp_init_attr))
			goto err;
		*out = &id->id;
		return 0;
	}
	if (rdma_resolve_addr(&id->id, res->ai_src_addr, res->ai_dst_addr, 2000))
		goto err;
	if (res->ai_route_len) {
		errno = ENOSYS;	/* routes from ibacm (RDMA_OPTION_IB_PATH): none here */
		goto err;
	}
	if (rdma_resolve_route(&id->id, 2000))
		goto err;
	if (qp_init_attr) {
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		if (rdma_create_qp(&id->id, pd, qp_init_attr))
			goto err;
	}
	if (res->ai_connect_len) {
		id->connect = malloc(res->ai_connect_len);
		if (!id->connect) {
			errno = ENOMEM;
			goto err;
		}
		memcpy(id->connect, res->ai_connect, res->ai_connect_len);
		id->connect_len = res->ai_connect_len;
	}
	*out = &id->id;
	return 0;
err:
	err = errno;
	rdma_destroy_ep(&id->id);
	return rcm_err(err);
}

RCM_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);	/* frees qp_init_attr too */
}

RCM_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rcm_id *l = rcm_id_of(listen);
	struct rdma_cm_event *event;
	int ret;

	if (!listen || !id || !l->sync)
		return rcm_err(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	ret = rdma_get_cm_event(listen->channel, &event);
	if (ret)
		return ret;
	if (event->event == RDMA_CM_EVENT_REJECTED) {
		ret = rcm_err(ECONNREFUSED);
		goto err;
	}
	if (event->status) {
		ret = rcm_err(-event->status);
		goto err;
	}
	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = rcm_err(EINVAL);
		goto err;
	}
	if (l->qp_init_attr) {
		struct ibv_qp_init_attr attr = *l->qp_init_attr;

		ret = rdma_create_qp(event->id, listen->pd, &attr);
		if (ret)
			goto err;
	}
	*id = event->id;
	(*id)->event = event;
	return 0;
err:
	listen->event = event;
	return ret;
}
