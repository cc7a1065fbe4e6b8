// SPDX-License-Identifier: MIT
/*
 * Service ID resolution for UD (Linux cm.c SIDR, cma.c cma_resolve_ib_udp() and
 * cma_sidr_rep_handler()): rdma_connect on a UD id sends SIDR_REQ with rdma_cm's IP header;
 * the passive side's CONNECT_REQUEST is answered by rdma_accept with its QP number and Q_Key
 * in a SIDR_REP, which makes the active side ESTABLISHED with the address vector, QPN and
 * Q_Key in the event (struct rdma_ud_param). No connection follows: both ids go back to
 * idle, the passive one without an event of its own.
 */
#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm.h"

/* SIDR requests are known by the requester's GID and request id (Linux keys them by
 * SLID; on RoCE every LID is the same). */
static uint64_t gid_key(const uint8_t *gid)
{
	return cx4_be64_load(gid) ^ cx4_be64_load(gid + 8);
}

int cm_sidr_connect(struct cm_id *id, const struct bv_cm_conn *p)
{
	unsigned int off = cm_user_data_offset(id), len = off + p->private_data_len;
	uint8_t *m = id->msg;

	if (id->state != CMA_ROUTE_RESOLVED || id->ib != IBCM_IDLE)
		return -EINVAL;
	if (len > IB_CM_SIDR_REQ_PRIVATE_DATA_LEN || p->private_data_len > BV_CM_PRIVATE_DATA_MAX)
		return -EINVAL;
	if (!cm_refresh_port(id->cm))
		return -ENETUNREACH;
	memset(&id->av, 0, sizeof(id->av));
	memcpy(id->av.dgid, id->path.dgid, 16);
	id->av.sgid_index = id->sgid_index;
	id->av.hop_limit = id->path.hop_limit;
	id->av.traffic_class = id->path.traffic_class;
	id->av.flow_label = id->path.flow_label;
	id->av_timeout = id->path.packet_life_time + 1;
	id->service_id = cm_service_id(id, (struct sockaddr *)&id->dst);
	id->timeout_ms = cm_convert_to_ms(id->cm->response_timeout);
	id->max_cm_retries = id->cm->max_cm_retries;
	memset(m, 0, IB_MAD_SIZE);
	id->tid = cm_new_tid(id);
	cm_mad_hdr(m, IB_CM_ATTR_SIDR_REQ, id->tid, 0);
	cx4_set(m, IB_CM_SIDR_REQ_REQUEST_ID, id->local_id);
	cx4_set(m, IB_CM_SIDR_REQ_PARTITION_KEY, id->path.pkey);
	cx4_set64(m, IB_CM_SIDR_REQ_SERVICE_ID, id->service_id);
	if (off)
		cm_format_ip_hdr(id, m + IB_CM_SIDR_REQ_PRIVATE_DATA_OFF);
	memcpy(m + IB_CM_SIDR_REQ_PRIVATE_DATA_OFF + off, p->private_data, p->private_data_len);
	id->state = CMA_CONNECT;
	id->ib = IBCM_SIDR_REQ_SENT;
	id->has_ibcm = true;
	return cm_send_retried(id, IBCM_SIDR_REQ_SENT);
}

/* Linux cm_format_sidr_rep(), sent once; the passive id is done with SIDR after it. */
static int send_sidr_rep(struct cm_id *id, uint8_t status, uint32_t qpn, uint32_t qkey,
			 const uint8_t *priv, uint8_t priv_len)
{
	uint8_t m[IB_MAD_SIZE] = { 0 };

	if (priv_len > IB_CM_SIDR_REP_PRIVATE_DATA_LEN)
		return -EINVAL;
	if (id->ib != IBCM_SIDR_REQ_RCVD)
		return -EINVAL;
	cm_mad_hdr(m, IB_CM_ATTR_SIDR_REP, id->tid, status ? 0 : id->ece.options);
	cx4_set(m, IB_CM_SIDR_REP_REQUEST_ID, id->remote_id);
	cx4_set(m, IB_CM_SIDR_REP_STATUS, status);
	cx4_set(m, IB_CM_SIDR_REP_QPN, qpn & 0xffffff);
	cx4_set64(m, IB_CM_SIDR_REP_SERVICE_ID, id->service_id);
	cx4_set(m, IB_CM_SIDR_REP_Q_KEY, qkey);
	if (!status) {
		cx4_set(m, IB_CM_SIDR_REP_VENDOR_ID_L, id->ece.vendor_id & 0xff);
		cx4_set(m, IB_CM_SIDR_REP_VENDOR_ID_H, (id->ece.vendor_id >> 8) & 0xffff);
	}
	if (priv && priv_len)
		memcpy(m + IB_CM_SIDR_REP_PRIVATE_DATA_OFF, priv, priv_len);
	cm_mad_send(id->cm, &id->av, m);
	id->ib = IBCM_IDLE;
	cm_remote_remove(id);
	if (id->listen) {
		id->listen->backlog++;
		id->listen = NULL;
	}
	return 0;
}

/* Linux cma_send_sidr_rep(IB_SIDR_SUCCESS) */
int cm_sidr_accept(struct cm_id *id, const struct bv_cm_conn *p, const struct bv_cm_ece *ece)
{
	uint32_t qkey = p->qkey ? p->qkey : RDMA_UDP_QKEY;

	if (id->state != CMA_CONNECT || id->ib != IBCM_SIDR_REQ_RCVD)
		return -EINVAL;
	/* Linux cma_set_qkey(): one Q_Key per id */
	if (id->qkey && id->qkey != qkey)
		return -EINVAL;
	id->qkey = qkey;
	if (ece->vendor_id)
		id->ece = *ece;
	return send_sidr_rep(id, IB_SIDR_SUCCESS, p->qp_num, qkey, p->private_data,
			     (uint8_t)(p->private_data_len > 255 ? 255 : p->private_data_len));
}

int cm_sidr_reject(struct cm_id *id, const uint8_t *priv, uint8_t len)
{
	if (!id->has_ibcm)
		return -EINVAL;
	return send_sidr_rep(id, IB_SIDR_REJECT, 0, 0, priv, len);
}

void cm_sidr_send_error(struct cm_id *id)
{
	id->ib = IBCM_IDLE;
	if (id->state == CMA_CONNECT)
		cm_conn_event(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
}

/* Linux cm_sidr_req_handler() + cma_ib_req_handler() for SIDR */
void cm_recv_sidr_req(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	const uint8_t *m = rx->mad;
	const uint8_t *priv = m + IB_CM_SIDR_REQ_PRIVATE_DATA_OFF;
	uint64_t sid = cx4_get64(m, IB_CM_SIDR_REQ_SERVICE_ID);
	uint32_t remote_id = cx4_get(m, IB_CM_SIDR_REQ_REQUEST_ID);
	struct cm_id *listen, *conn;
	struct bv_cm_event ev;
	unsigned int off;

	if (cm_remote_find(cm, gid_key(rx->sgid), remote_id)) {
		cm->st.rx_duplicates++;	/* the answer is coming */
		return;
	}
	if (!cm_refresh_port(cm)) {
		cm->st.rx_unmatched++;
		return;
	}
	listen = cm_find_listener(cm, sid, priv, IB_CM_SIDR_REQ_PRIVATE_DATA_LEN, IBV_QPT_UD);
	if (!listen || listen->backlog <= 0)
		conn = NULL;
	else
		conn = cm_id_alloc(cm, listen->owner, listen->chan, 0, listen->ps, IBV_QPT_UD);
	if (!conn) {
		/* a throwaway id to answer through: no listener (ib_cm: "unsupported"), or one
		 * that refused the request (rdma_cm destroys the new id: REJECT) */
		struct cm_id tmp = { .cm = cm, .ib = IBCM_SIDR_REQ_RCVD, .remote_id = remote_id,
				     .tid = cx4_get64(m, IB_MAD_TID), .service_id = sid };

		cm_av_from_rx(cm, rx, &tmp.av);
		send_sidr_rep(&tmp, cm_listener_on_port(cm, sid) ? IB_SIDR_REJECT :
								   IB_SIDR_UNSUPPORTED,
			      0, 0, NULL, 0);
		return;
	}
	conn->remote_id = remote_id;
	conn->remote_ca_guid = gid_key(rx->sgid);
	conn->service_id = sid;
	conn->tid = cx4_get64(m, IB_MAD_TID);
	conn->has_ibcm = true;
	cm_av_from_rx(cm, rx, &conn->av);
	if (cm_conn_addrs(conn, listen, sid, priv, IB_CM_SIDR_REQ_PRIVATE_DATA_LEN, rx->sgid)) {
		conn->ib = IBCM_SIDR_REQ_RCVD;
		send_sidr_rep(conn, IB_SIDR_REJECT, 0, 0, NULL, 0);
		cm_id_destroy(conn);
		return;
	}
	memcpy(conn->sgid, rx->dgid, 16);
	memcpy(conn->dgid, rx->sgid, 16);
	conn->sgid_index = !memcmp(conn->sgid, cm->port.gid6, 16) ? cm->port.gid6_index :
								  cm->port.gid_index;
	conn->state = CMA_CONNECT;
	conn->ib = IBCM_SIDR_REQ_RCVD;
	conn->tos = listen->tos;
	conn->tos_set = listen->tos_set;
	cm_remote_insert(conn);
	conn->listen = listen;
	listen->backlog--;

	off = cm_user_data_offset(listen);
	cm_event_init(&ev, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ev.flags = BV_CM_EVENT_UD | BV_CM_EVENT_ROUTE;
	memcpy(ev.conn.private_data, priv + off, IB_CM_SIDR_REQ_PRIVATE_DATA_LEN - off);
	ev.conn.private_data_len = (uint16_t)(IB_CM_SIDR_REQ_PRIVATE_DATA_LEN - off);
	cm_route_of(conn, &ev.route);
	cm_event_conn_req(listen, conn, &ev);
}

/* Linux cm_sidr_rep_handler() + cma_sidr_rep_handler() */
void cm_recv_sidr_rep(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	const uint8_t *m = rx->mad;
	struct cm_id *id = cm_id_by_local_id(cm, cx4_get(m, IB_CM_SIDR_REP_REQUEST_ID));
	uint8_t status = (uint8_t)cx4_get(m, IB_CM_SIDR_REP_STATUS);
	uint32_t qkey = cx4_get(m, IB_CM_SIDR_REP_Q_KEY);
	struct bv_cm_event ev;

	if (!id || id->ib != IBCM_SIDR_REQ_SENT) {
		cm->st.rx_unmatched++;
		return;
	}
	id->ib = IBCM_IDLE;
	cm_cancel_msg(id);
	if (id->state != CMA_CONNECT)
		return;
	cm_event_init(&ev, RDMA_CM_EVENT_UNREACHABLE, status);
	ev.flags = BV_CM_EVENT_UD;
	memcpy(ev.conn.private_data, m + IB_CM_SIDR_REP_PRIVATE_DATA_OFF,
	       IB_CM_SIDR_REP_PRIVATE_DATA_LEN);
	ev.conn.private_data_len = IB_CM_SIDR_REP_PRIVATE_DATA_LEN;
	if (status == IB_SIDR_SUCCESS) {
		if (!qkey || (id->qkey && id->qkey != qkey)) {
			/* Linux: "failed to set qkey" */
			ev.event = RDMA_CM_EVENT_ADDR_ERROR;
			ev.status = -EINVAL;
		} else {
			id->qkey = qkey;
			ev.event = RDMA_CM_EVENT_ESTABLISHED;
			ev.status = 0;
			memcpy(ev.ah.dgid, id->path.dgid, 16);
			ev.ah.flow_label = id->path.flow_label;
			ev.ah.sgid_index = id->sgid_index;
			ev.ah.hop_limit = id->path.hop_limit;
			ev.ah.traffic_class = id->path.traffic_class;
			ev.ah.sl = id->path.sl;
			ev.ah.static_rate = id->path.rate;
			ev.ah.is_global = 1;
			ev.ah.port_num = 1;
			ev.conn.qp_num = cx4_get(m, IB_CM_SIDR_REP_QPN);
			ev.conn.qkey = qkey;
			ev.ece.vendor_id = cx4_get(m, IB_CM_SIDR_REP_VENDOR_ID_H) << 8 |
					   cx4_get(m, IB_CM_SIDR_REP_VENDOR_ID_L);
			ev.ece.options = cx4_get(m, IB_MAD_ATTR_MOD);
		}
	}
	cm_event(id, &ev);
}
