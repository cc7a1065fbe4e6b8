// SPDX-License-Identifier: MIT
/*
 * QPs and SRQs made for an id (librdmacm cma.c rdma_create_qp_ex() and friends): the CQs
 * and completion channels when the caller gives none, the QP on the id's PD, and its first
 * transitions — INIT for a connected QP, all the way to RTS (SQ PSN 0) for a UD QP — with
 * the attributes rdma_init_qp_attr() gives.
 */
#include <string.h>
#include <rdma/rdma_verbs.h>

#include "rcm.h"

static int seterrno(int ret)
{
	return ret ? rcm_err(ret) : 0;
}

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (id->qp_type == IBV_QPT_XRC_RECV && id->srq)
		return;
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq && id->send_cq != id->recv_cq) {
			ibv_destroy_cq(id->send_cq);
			id->send_cq = NULL;
		}
		id->recv_cq = NULL;
	}
	if (id->recv_cq_channel) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel) {
			ibv_destroy_comp_channel(id->send_cq_channel);
			id->send_cq_channel = NULL;
		}
		id->recv_cq_channel = NULL;
	}
}

/* librdmacm's ucma_create_cqs(): each CQ with a completion channel of its own */
static int create_cqs(struct rdma_cm_id *id, uint32_t send_size, uint32_t recv_size)
{
	if (recv_size) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->recv_cq_channel)
			goto err;
		id->recv_cq = ibv_create_cq(id->verbs, (int)recv_size, id, id->recv_cq_channel, 0);
		if (!id->recv_cq)
			goto err;
	}
	if (send_size) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->send_cq_channel)
			goto err;
		id->send_cq = ibv_create_cq(id->verbs, (int)send_size, id, id->send_cq_channel, 0);
		if (!id->send_cq)
			goto err;
	}
	return 0;
err:
	destroy_cqs(id);
	return -1;
}

static int init_conn_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT };
	int mask;

	if (rdma_init_qp_attr(id, &attr, &mask))
		return -1;
	return seterrno(ibv_modify_qp(qp, &attr, mask));
}

static int init_ud_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT };
	int mask, ret;

	if (rdma_init_qp_attr(id, &attr, &mask))
		return -1;
	ret = ibv_modify_qp(qp, &attr, mask);
	if (ret)
		return rcm_err(ret);
	attr.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (ret)
		return rcm_err(ret);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return seterrno(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN));
}

/* librdmacm's init_ece(): learn our options; a provider without ECE is fine */
static int init_ece(struct rcm_id *id, struct ibv_qp *qp)
{
	struct ibv_ece ece = { 0 };
	int ret = ibv_query_ece(qp, &ece);

	if (ret && ret != EOPNOTSUPP)
		return rcm_err(ret);
	id->local_ece.vendor_id = ece.vendor_id;
	id->local_ece.options = ece.options;
	if (!id->remote_ece.vendor_id)
		return 0;
	if (id->remote_ece.vendor_id != id->local_ece.vendor_id) {
		ece.vendor_id = id->local_ece.vendor_id;
		ece.options = 0;
	} else {
		ece.vendor_id = id->remote_ece.vendor_id;
		ece.options = id->remote_ece.options;
	}
	ret = ibv_set_ece(qp, &ece);
	return ret && ret != EOPNOTSUPP ? rcm_err(ret) : 0;
}

RCM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *cm_id, struct ibv_qp_init_attr_ex *attr)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct ibv_qp *qp;
	int ret;

	if (!cm_id || !attr || cm_id->qp || !cm_id->verbs)
		return rcm_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = cm_id->pd;
	} else if (cm_id->verbs != attr->pd->context) {
		return rcm_err(EINVAL);
	}
	if ((cm_id->recv_cq && attr->recv_cq && cm_id->recv_cq != attr->recv_cq) ||
	    (cm_id->send_cq && attr->send_cq && cm_id->send_cq != attr->send_cq))
		return rcm_err(EINVAL);
	if (cm_id->qp_type == IBV_QPT_XRC_RECV)
		return rcm_err(ENOSYS);	/* XRC: not offered by our devices */
	ret = create_cqs(cm_id, attr->send_cq || cm_id->send_cq ? 0 : attr->cap.max_send_wr,
			 attr->recv_cq || cm_id->recv_cq ? 0 : attr->cap.max_recv_wr);
	if (ret)
		return ret;
	if (!attr->send_cq)
		attr->send_cq = cm_id->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = cm_id->recv_cq;
	if (cm_id->srq && !attr->srq)
		attr->srq = cm_id->srq;
	qp = ibv_create_qp_ex(cm_id->verbs, attr);
	if (!qp) {
		ret = -1;
		goto err1;
	}
	ret = init_ece(id, qp);
	if (!ret)
		ret = cm_id->qp_type == IBV_QPT_UD ? init_ud_qp(cm_id, qp) : init_conn_qp(cm_id, qp);
	if (ret)
		goto err2;
	if (id->remote_ece.vendor_id) {
		struct ibv_ece ece = { 0 };
		int r = ibv_query_ece(qp, &ece);

		if (r && r != EOPNOTSUPP) {
			ret = rcm_err(r);
			goto err2;
		}
		id->local_ece.options = ece.options;
	}
	cm_id->pd = qp->pd;
	cm_id->qp = qp;
	return 0;
err2:
	ret = errno;
	ibv_destroy_qp(qp);
	errno = ret;
	ret = -1;
err1:
	destroy_cqs(cm_id);
	return ret;
}

RCM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex attr;
	int ret;

	if (!id || !qp_init_attr)
		return rcm_err(EINVAL);
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, qp_init_attr, sizeof(*qp_init_attr));
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr.pd = pd ? pd : id->pd;
	ret = rdma_create_qp_ex(id, &attr);
	memcpy(qp_init_attr, &attr, sizeof(*qp_init_attr));
	return ret;
}

RCM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_cqs(id);
}

RCM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;
	int ret;

	if (!id || !attr || !id->verbs)
		return rcm_err(EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) {
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_TYPE;
		attr->srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
	}
	if (attr->srq_type == IBV_SRQT_XRC)
		return rcm_err(ENOSYS);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	ret = create_cqs(id, 0, attr->attr.max_wr);
	if (ret)
		return ret;
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (!srq) {
		ret = errno;
		destroy_cqs(id);
		return rcm_err(ret);
	}
	id->pd = attr->pd;
	id->srq = srq;
	return 0;
}

RCM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex attr_ex;
	int ret;

	if (!id || !attr)
		return rcm_err(EINVAL);
	memset(&attr_ex, 0, sizeof(attr_ex));
	memcpy(&attr_ex, attr, sizeof(*attr));
	attr_ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	attr_ex.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
	attr_ex.pd = pd;
	ret = rdma_create_srq_ex(id, &attr_ex);
	memcpy(attr, &attr_ex, sizeof(*attr));
	return ret;
}

RCM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->srq)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
	destroy_cqs(id);
}
