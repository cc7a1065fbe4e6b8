// SPDX-License-Identifier: MIT
/*
 * Connections on the library's side (librdmacm cma.c): connect, accept, reject, disconnect,
 * establish, notify, the QP transitions with the attributes the daemon's CM agreed on
 * (rdma_init_qp_attr), and ECE.
 *
 * As in librdmacm the QP is the application's and is moved here, in the application's
 * thread: INIT when it is created, RTR and RTS before the passive side's REP goes out
 * (rdma_accept) and when the active side gets the REP (CONNECT_RESPONSE, in
 * rdma_get_cm_event), ERR on a reject or a disconnect.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "rcm.h"

static int seterrno(int ret)
{
	return ret ? rcm_err(ret) : 0;
}

RCM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *cm_id, struct ibv_qp_attr *qp_attr,
				 int *qp_attr_mask)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_init_qp_attr_req req = { .qp_state = qp_attr->qp_state };
	struct bv_cm_qp_attr a;
	int err;

	if (!cm_id || !qp_attr || !qp_attr_mask)
		return rcm_err(EINVAL);
	err = rcm_id_call(id, BV_OP_CM_INIT_QP_ATTR, &req, sizeof(req), &a, sizeof(a));
	if (err)
		return rcm_err(err);
	/* what ibv_copy_qp_attr_from_kern() gives librdmacm */
	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = a.qp_state;
	qp_attr->qp_access_flags = a.qp_access_flags;
	qp_attr->qkey = a.qkey;
	qp_attr->rq_psn = a.rq_psn;
	qp_attr->sq_psn = a.sq_psn;
	qp_attr->dest_qp_num = a.dest_qp_num;
	qp_attr->pkey_index = a.pkey_index;
	qp_attr->port_num = a.port_num;
	qp_attr->path_mtu = a.path_mtu;
	qp_attr->max_rd_atomic = a.max_rd_atomic;
	qp_attr->max_dest_rd_atomic = a.max_dest_rd_atomic;
	qp_attr->min_rnr_timer = a.min_rnr_timer;
	qp_attr->timeout = a.timeout;
	qp_attr->retry_cnt = a.retry_cnt;
	qp_attr->rnr_retry = a.rnr_retry;
	memcpy(qp_attr->ah_attr.grh.dgid.raw, a.ah.dgid, 16);
	qp_attr->ah_attr.grh.flow_label = a.ah.flow_label;
	qp_attr->ah_attr.grh.sgid_index = a.ah.sgid_index;
	qp_attr->ah_attr.grh.hop_limit = a.ah.hop_limit;
	qp_attr->ah_attr.grh.traffic_class = a.ah.traffic_class;
	qp_attr->ah_attr.dlid = a.ah.dlid;
	qp_attr->ah_attr.sl = a.ah.sl;
	qp_attr->ah_attr.src_path_bits = a.ah.src_path_bits;
	qp_attr->ah_attr.static_rate = a.ah.static_rate;
	qp_attr->ah_attr.is_global = a.ah.is_global;
	qp_attr->ah_attr.port_num = a.ah.port_num;
	*qp_attr_mask = (int)a.mask;
	return 0;
}

/* librdmacm's ucma_modify_qp_rtr() */
static int modify_qp_rtr(struct rcm_id *id, uint8_t resp_res)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	if (!id->id.qp)
		return 0;
	attr.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(&id->id, &attr, &mask))
		return -1;
	ret = ibv_modify_qp(id->id.qp, &attr, mask);
	if (ret)
		return rcm_err(ret);
	attr.qp_state = IBV_QPS_RTR;
	if (rdma_init_qp_attr(&id->id, &attr, &mask))
		return -1;
	/* librdmacm: the RoCE-only mask bits 21..23 mean nothing to an IB port */
	if (id->dev->link_layer == IBV_LINK_LAYER_INFINIBAND)
		mask &= (int)(UINT_MAX ^ 0xe00000);
	if (resp_res != RDMA_MAX_RESP_RES)
		attr.max_dest_rd_atomic = resp_res;
	return seterrno(ibv_modify_qp(id->id.qp, &attr, mask));
}

/* librdmacm's ucma_modify_qp_rts() */
static int modify_qp_rts(struct rcm_id *id, uint8_t init_depth)
{
	struct ibv_qp_attr attr;
	int mask;

	if (!id->id.qp)
		return 0;
	attr.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(&id->id, &attr, &mask))
		return -1;
	if (init_depth != RDMA_MAX_INIT_DEPTH)
		attr.max_rd_atomic = init_depth;
	return seterrno(ibv_modify_qp(id->id.qp, &attr, mask));
}

int rcm_modify_qp_err(struct rcm_id *id)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	if (!id->id.qp)
		return 0;
	return seterrno(ibv_modify_qp(id->id.qp, &attr, IBV_QP_STATE));
}

/* librdmacm's ucma_process_conn_resp() (+ the ECE of ucma_process_conn_resp_ece) */
int rcm_process_conn_resp(struct rcm_id *id, const struct bv_cm_ece *ece)
{
	struct bv_cm_accept_req req = { .has_conn = 0 };
	int err;

	if (ece && id->id.qp) {
		struct ibv_ece e = { .vendor_id = ece->vendor_id, .options = ece->options };

		if (!ece->vendor_id) {
			e.vendor_id = id->local_ece.vendor_id;
			e.options = 0;
		} else if (ece->vendor_id != id->local_ece.vendor_id) {
			rcm_modify_qp_err(id);
			return rcm_err(EINVAL);
		}
		id->remote_ece.vendor_id = ece->vendor_id;
		err = ibv_set_ece(id->id.qp, &e);
		if (err && err != EOPNOTSUPP)
			return rcm_err(err);
	}
	if (modify_qp_rtr(id, RDMA_MAX_RESP_RES) || modify_qp_rts(id, RDMA_MAX_INIT_DEPTH))
		goto fail;
	err = rcm_id_call(id, BV_OP_CM_ACCEPT, &req, sizeof(req), NULL, 0);
	if (err) {
		errno = err;
		goto fail;
	}
	return 0;
fail:
	err = errno;
	rcm_modify_qp_err(id);
	return rcm_err(err);
}

/* librdmacm's ucma_valid_param() */
static int valid_param(struct rcm_id *id, const struct rdma_conn_param *p)
{
	if (id->id.ps != RDMA_PS_TCP)
		return 0;
	if (!id->id.qp && !p)
		return rcm_err(EINVAL);
	if (!p)
		return 0;
	if (!id->dev)
		return rcm_err(EINVAL);
	if ((p->responder_resources != RDMA_MAX_RESP_RES &&
	     p->responder_resources > id->dev->max_responder_resources) ||
	    (p->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	     p->initiator_depth > id->dev->max_initiator_depth))
		return rcm_err(EINVAL);
	return 0;
}

/* librdmacm's ucma_copy_conn_param_to_kern() */
static int copy_conn(struct rcm_id *id, struct bv_cm_conn *dst, const struct rdma_conn_param *src,
		     uint32_t qp_num, uint8_t srq)
{
	memset(dst, 0, sizeof(*dst));
	dst->qp_num = qp_num;
	dst->srq = srq;
	dst->responder_resources = id->responder_resources;
	dst->initiator_depth = id->initiator_depth;
	if (id->connect_len) {
		if (id->connect_len > sizeof(dst->private_data))
			return EINVAL;
		memcpy(dst->private_data, id->connect, id->connect_len);
		dst->private_data_len = (uint16_t)id->connect_len;
	}
	if (src) {
		dst->flow_control = src->flow_control;
		dst->retry_count = src->retry_count;
		dst->rnr_retry_count = src->rnr_retry_count;
		if (src->private_data && src->private_data_len) {
			if (dst->private_data_len + src->private_data_len >
			    sizeof(dst->private_data))
				return EINVAL;
			memcpy(dst->private_data + dst->private_data_len, src->private_data,
			       src->private_data_len);
			dst->private_data_len += src->private_data_len;
		}
	} else {
		dst->retry_count = 7;
		dst->rnr_retry_count = 7;
	}
	return 0;
}

RCM_EXPORT int rdma_connect(struct rdma_cm_id *cm_id, struct rdma_conn_param *conn_param)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_connect_req req;
	uint32_t qp_num = conn_param ? conn_param->qp_num : 0;
	uint8_t srq = conn_param ? conn_param->srq : 0;
	int err;

	if (!cm_id)
		return rcm_err(EINVAL);
	if (valid_param(id, conn_param))
		return -1;
	if (!id->dev)
		return rcm_err(EINVAL);
	id->initiator_depth = conn_param && conn_param->initiator_depth != RDMA_MAX_INIT_DEPTH ?
				      conn_param->initiator_depth :
				      id->dev->max_initiator_depth;
	id->responder_resources =
		conn_param && conn_param->responder_resources != RDMA_MAX_RESP_RES ?
			conn_param->responder_resources :
			id->dev->max_responder_resources;
	if (cm_id->qp) {
		qp_num = cm_id->qp->qp_num;
		srq = !!cm_id->qp->srq;
	}
	memset(&req, 0, sizeof(req));
	err = copy_conn(id, &req.conn, conn_param, qp_num, srq);
	if (err)
		return rcm_err(err);
	req.ece.vendor_id = id->local_ece.vendor_id;
	req.ece.options = id->local_ece.options;
	err = rcm_id_call(id, BV_OP_CM_CONNECT, &req, sizeof(req), NULL, 0);
	if (err)
		return rcm_err(err);
	if (id->connect_len) {
		free(id->connect);
		id->connect = NULL;
		id->connect_len = 0;
	}
	return rcm_complete(id);
}

RCM_EXPORT int rdma_accept(struct rdma_cm_id *cm_id, struct rdma_conn_param *conn_param)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_accept_req req;
	uint32_t qp_num;
	uint8_t srq;
	int err;

	if (!cm_id || !id->dev || (!cm_id->qp && !conn_param))
		return rcm_err(EINVAL);
	qp_num = cm_id->qp ? cm_id->qp->qp_num : conn_param->qp_num;
	srq = cm_id->qp ? !!cm_id->qp->srq : conn_param->srq;
	if (valid_param(id, conn_param))
		return -1;
	if (!conn_param || conn_param->initiator_depth == RDMA_MAX_INIT_DEPTH) {
		if (id->initiator_depth > id->dev->max_initiator_depth)
			id->initiator_depth = id->dev->max_initiator_depth;
	} else {
		id->initiator_depth = conn_param->initiator_depth;
	}
	if (!conn_param || conn_param->responder_resources == RDMA_MAX_RESP_RES) {
		if (id->responder_resources > id->dev->max_responder_resources)
			id->responder_resources = id->dev->max_responder_resources;
	} else {
		id->responder_resources = conn_param->responder_resources;
	}
	if (cm_id->qp_type != IBV_QPT_UD) {
		if (modify_qp_rtr(id, id->responder_resources) ||
		    modify_qp_rts(id, id->initiator_depth))
			return -1;
	}
	memset(&req, 0, sizeof(req));
	req.uid = id->uid;
	req.has_conn = 1;
	err = copy_conn(id, &req.conn, conn_param, qp_num, srq);
	if (err)
		return rcm_err(err);
	/* UD: rdma_conn_param has no Q_Key, the SIDR_REP carries the default (RDMA_UDP_QKEY) */
	/* the answer carries the same vendor as the request (ucma_copy_ece_param_to_kern_rep) */
	req.ece.vendor_id = id->remote_ece.vendor_id;
	req.ece.options = id->local_ece.options;
	err = rcm_id_call(id, BV_OP_CM_ACCEPT, &req, sizeof(req), NULL, 0);
	if (err) {
		rcm_modify_qp_err(id);
		return rcm_err(err);
	}
	if (cm_id->qp_type == IBV_QPT_UD)
		return 0;
	return rcm_complete(id);
}

static int reject_with_reason(struct rdma_cm_id *cm_id, const void *private_data,
			      uint8_t private_data_len, uint8_t reason)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_reject_req req = { .reason = reason };
	int err;

	if (!cm_id)
		return rcm_err(EINVAL);
	if (private_data && private_data_len) {
		memcpy(req.private_data, private_data, private_data_len);
		req.private_data_len = private_data_len;
	}
	err = rcm_id_call(id, BV_OP_CM_REJECT, &req, sizeof(req), NULL, 0);
	return seterrno(err);
}

RCM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			   uint8_t private_data_len)
{
	return reject_with_reason(id, private_data, private_data_len, 0);
}

RCM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
			       uint8_t private_data_len)
{
	/* IBTA: CM_REJ_VENDOR_OPTION_NOT_SUPPORTED */
	return reject_with_reason(id, private_data, private_data_len, 35);
}

RCM_EXPORT int rdma_notify(struct rdma_cm_id *cm_id, enum ibv_event_type event)
{
	struct bv_cm_notify_req req = { .event = event };

	if (!cm_id)
		return rcm_err(EINVAL);
	return seterrno(rcm_id_call(rcm_id_of(cm_id), BV_OP_CM_NOTIFY, &req, sizeof(req), NULL,
				    0));
}

RCM_EXPORT int rdma_disconnect(struct rdma_cm_id *cm_id)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_id_req req = { 0 };
	int err;

	/* librdmacm's ucma_shutdown(): an IB transport's QP goes to ERR first */
	if (!cm_id || !cm_id->verbs || !cm_id->verbs->device)
		return rcm_err(EINVAL);
	if (rcm_modify_qp_err(id))
		return -1;
	err = rcm_id_call(id, BV_OP_CM_DISCONNECT, &req, sizeof(req), NULL, 0);
	return err ? rcm_err(err) : rcm_complete(id);
}

RCM_EXPORT int rdma_establish(struct rdma_cm_id *cm_id)
{
	if (!cm_id || cm_id->qp)
		return rcm_err(EINVAL);
	/* no QP to move: only the RTU goes to the passive side */
	return rcm_process_conn_resp(rcm_id_of(cm_id), NULL);
}

RCM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *cm_id, struct ibv_ece *ece)
{
	struct rcm_id *id = rcm_id_of(cm_id);

	if (!cm_id || cm_id->qp || !ece || !ece->vendor_id || ece->comp_mask)
		return rcm_err(EINVAL);
	id->local_ece.vendor_id = ece->vendor_id;
	id->local_ece.options = ece->options;
	return 0;
}

RCM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *cm_id, struct ibv_ece *ece)
{
	struct rcm_id *id = rcm_id_of(cm_id);

	if (!cm_id || cm_id->qp || !ece)
		return rcm_err(EINVAL);
	ece->vendor_id = id->remote_ece.vendor_id;
	ece->options = id->remote_ece.options;
	ece->comp_mask = 0;
	return 0;
}
