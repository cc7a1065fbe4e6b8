// SPDX-License-Identifier: MIT
/*
 * Establishing a connection (ib_cm, Linux cm.c, with what rdma_cm adds in cma.c):
 *
 *   active                                    passive
 *   connect:      REQ ---------------------->  REQ_RCVD -> CONNECT_REQUEST to the listener
 *                                              (rdma_cm's delayed MRA: MRA_REQ_SENT)
 *   REQ_SENT      <---------------------- MRA  only when our REQ came twice: longer timeout
 *                 <---------------------- REP  accept: REP_SENT
 *   REP_RCVD -> CONNECT_RESPONSE (the library moves the QP to RTR/RTS, then accepts)
 *   accept:       RTU ---------------------->  ESTABLISHED -> ESTABLISHED
 *   ESTABLISHED
 *
 *   any side, before ESTABLISHED: REJ -> REJECTED (status: the reason)
 *
 * A message that waits for an answer (REQ, REP, and DREQ and SIDR_REQ elsewhere) is resent
 * every timeout_ms, max_cm_retries times, as Linux's MAD layer resends it (ib_post_send_mad
 * with timeout_ms and retries); then the wait failed: UNREACHABLE / DISCONNECTED with
 * -ETIMEDOUT. Answers to duplicates (MRA, RTU, REJ STALE_CONN) are sent as cm.c sends them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm.h"

static struct cm_id *id_of_timer(struct bvd_timer *t, size_t off)
{
	return (struct cm_id *)((char *)t - off);
}

/* Linux cm_ack_timeout() */
static uint8_t ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time)
{
	int t = packet_life_time + 1;

	if (t >= ca_ack_delay)
		t += ca_ack_delay >= t - 1;
	else
		t = ca_ack_delay + (t >= ca_ack_delay - 1);
	return (uint8_t)(t < 31 ? t : 31);
}

/* ---- the MAD that waits for an answer -------------------------------------------------------- */

int cm_send_retried(struct cm_id *id, enum ibcm_state state)
{
	struct cm_dev *cm = id->cm;

	id->msg_live = true;
	id->msg_state = state;
	id->msg_retries = id->max_cm_retries;
	/* a send that fails is a lost MAD: the retries cover it, as on a lossy fabric */
	cm_mad_send(cm, &id->av, id->msg);
	return bvd_timer_arm(cm->d, &id->msg_timer, id->timeout_ms);
}

void cm_cancel_msg(struct cm_id *id)
{
	id->msg_live = false;
	bvd_timer_cancel(id->cm->d, &id->msg_timer);
}

void cm_conn_event(struct cm_id *id, uint32_t event, int status)
{
	struct bv_cm_event ev;

	cm_event_init(&ev, event, status);
	cm_event(id, &ev);
}

void cm_reset_to_idle(struct cm_id *id)
{
	id->ib = IBCM_IDLE;
	cm_remote_remove(id);
}

/* Linux cm_enter_timewait(): wait for stray packets of the connection to die out. */
void cm_enter_timewait(struct cm_id *id)
{
	cm_remote_remove(id);
	id->ib = IBCM_TIMEWAIT;
	bvd_timer_arm(id->cm->d, &id->tw_timer, cm_convert_to_ms(id->av_timeout));
}

void cm_timewait_expired(struct bvd *d, struct bvd_timer *t)
{
	struct cm_id *id = id_of_timer(t, offsetof(struct cm_id, tw_timer));

	if (id->ib != IBCM_TIMEWAIT)
		return;
	id->ib = IBCM_IDLE;
	if (id->state == CMA_DISCONNECT)
		cm_conn_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
}

/* A new connection stops counting against its listener's backlog (accepted, rejected...). */
static void release_backlog(struct cm_id *id)
{
	if (id->listen) {
		id->listen->backlog++;
		id->listen = NULL;
	}
}

/* Linux cm_process_send_error() + cma_ib_handler(): the answer never came. */
void cm_msg_timeout(struct bvd *d, struct bvd_timer *t)
{
	struct cm_id *id = id_of_timer(t, offsetof(struct cm_id, msg_timer));
	struct cm_dev *cm = id->cm;

	if (!id->msg_live)
		return;
	if (id->msg_retries) {
		id->msg_retries--;
		cm->st.tx_retries++;
		cm_mad_send(cm, &id->av, id->msg);
		bvd_timer_arm(d, &id->msg_timer, id->timeout_ms);
		return;
	}
	id->msg_live = false;
	if (id->msg_state != id->ib)
		return;
	switch (id->ib) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		cm_reset_to_idle(id);
		if (id->state == CMA_CONNECT)
			cm_conn_event(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case IBCM_DREQ_SENT:
		cm_enter_timewait(id);
		if (id->state == CMA_CONNECT) {
			id->state = CMA_DISCONNECT;
			cm_conn_event(id, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
		}
		break;
	case IBCM_SIDR_REQ_SENT:
		cm_sidr_send_error(id);
		break;
	default:
		break;
	}
}

/* ---- active side: REQ ------------------------------------------------------------------------ */

static void av_from_path(struct cm_id *id)
{
	memset(&id->av, 0, sizeof(id->av));
	memcpy(id->av.dgid, id->path.dgid, 16);
	id->av.sgid_index = id->sgid_index;
	id->av.hop_limit = id->path.hop_limit;
	id->av.traffic_class = id->path.traffic_class;
	id->av.flow_label = id->path.flow_label;
	id->av_timeout = id->path.packet_life_time + 1;
}

/* Linux cm_format_req() */
static void format_req(struct cm_id *id, const struct bv_cm_conn *p, const uint8_t *priv,
		       unsigned int priv_len)
{
	uint8_t *m = id->msg;
	const struct bv_cm_path *path = &id->path;

	memset(m, 0, IB_MAD_SIZE);
	id->tid = cm_new_tid(id);
	cm_mad_hdr(m, IB_CM_ATTR_REQ, id->tid, id->ece.options);
	cx4_set(m, IB_CM_REQ_LOCAL_COMM_ID, id->local_id);
	cx4_set(m, IB_CM_REQ_VENDOR_ID, id->ece.vendor_id & 0xffffff);
	cx4_set64(m, IB_CM_REQ_SERVICE_ID, id->service_id);
	cx4_set64(m, IB_CM_REQ_LOCAL_CA_GUID, id->cm->port.ca_guid);
	cx4_set(m, IB_CM_REQ_LOCAL_QPN, id->local_qpn);
	cx4_set(m, IB_CM_REQ_RESPONDER_RESOURCES, id->responder_resources);
	cx4_set(m, IB_CM_REQ_INITIATOR_DEPTH, id->initiator_depth);
	cx4_set(m, IB_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, id->cm->response_timeout);
	cx4_set(m, IB_CM_REQ_TRANSPORT_SERVICE_TYPE, 0);	/* RC */
	cx4_set(m, IB_CM_REQ_END_TO_END_FLOW_CONTROL, p->flow_control & 1);
	cx4_set(m, IB_CM_REQ_STARTING_PSN, id->seq_num);
	cx4_set(m, IB_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, id->cm->response_timeout);
	cx4_set(m, IB_CM_REQ_RETRY_COUNT, id->retry_count);
	cx4_set(m, IB_CM_REQ_PARTITION_KEY, path->pkey);
	cx4_set(m, IB_CM_REQ_PATH_PACKET_PAYLOAD_MTU, path->mtu);
	cx4_set(m, IB_CM_REQ_RNR_RETRY_COUNT, id->rnr_retry_count);
	cx4_set(m, IB_CM_REQ_MAX_CM_RETRIES, id->max_cm_retries);
	cx4_set(m, IB_CM_REQ_SRQ, id->srq);
	memcpy(m + IB_CM_REQ_PRIMARY_LOCAL_PORT_GID_OFF, path->sgid, 16);
	memcpy(m + IB_CM_REQ_PRIMARY_REMOTE_PORT_GID_OFF, path->dgid, 16);
	if (path->hop_limit <= 1) {
		cx4_set(m, IB_CM_REQ_PRIMARY_LOCAL_PORT_LID, path->slid);
		cx4_set(m, IB_CM_REQ_PRIMARY_REMOTE_PORT_LID, path->dlid);
	} else {
		/* routed (RoCE): permissive LIDs, as Linux sends them */
		cx4_set(m, IB_CM_REQ_PRIMARY_LOCAL_PORT_LID, 0xffff);
		cx4_set(m, IB_CM_REQ_PRIMARY_REMOTE_PORT_LID, 0xffff);
	}
	cx4_set(m, IB_CM_REQ_PRIMARY_FLOW_LABEL, path->flow_label);
	cx4_set(m, IB_CM_REQ_PRIMARY_PACKET_RATE, path->rate);
	cx4_set(m, IB_CM_REQ_PRIMARY_TRAFFIC_CLASS, path->traffic_class);
	cx4_set(m, IB_CM_REQ_PRIMARY_HOP_LIMIT, path->hop_limit);
	cx4_set(m, IB_CM_REQ_PRIMARY_SL, path->sl);
	cx4_set(m, IB_CM_REQ_PRIMARY_SUBNET_LOCAL, path->hop_limit <= 1);
	cx4_set(m, IB_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT,
		ack_timeout(id->cm->port.ack_delay, path->packet_life_time));
	memcpy(m + IB_CM_REQ_PRIVATE_DATA_OFF, priv, priv_len);
}

/* Linux rdma_connect() -> cma_connect_ib() -> ib_send_cm_req() */
int cm_connect(struct cm_id *id, const struct bv_cm_conn *p, const struct bv_cm_ece *ece)
{
	unsigned int off = cm_user_data_offset(id), len = off + p->private_data_len;
	uint8_t priv[IB_CM_REQ_PRIVATE_DATA_LEN];

	if (id->state != CMA_ROUTE_RESOLVED || id->ib != IBCM_IDLE)
		return -EINVAL;
	if (len > IB_CM_REQ_PRIVATE_DATA_LEN || p->private_data_len > BV_CM_PRIVATE_DATA_MAX)
		return -EINVAL;
	if (!cm_refresh_port(id->cm))
		return -ENETUNREACH;
	memset(priv, 0, sizeof(priv));
	if (off)
		cm_format_ip_hdr(id, priv);
	memcpy(priv + off, p->private_data, p->private_data_len);
	id->service_id = cm_service_id(id, (struct sockaddr *)&id->dst);
	id->local_qpn = p->qp_num & 0xffffff;
	id->srq = p->srq ? 1 : 0;
	id->responder_resources = p->responder_resources;
	id->initiator_depth = p->initiator_depth;
	id->flow_control = p->flow_control;
	id->retry_count = p->retry_count < 7 ? p->retry_count : 7;
	id->rnr_retry_count = p->rnr_retry_count < 7 ? p->rnr_retry_count : 7;
	id->rq_psn = id->seq_num;
	id->path_mtu = id->path.mtu;
	id->max_cm_retries = id->cm->max_cm_retries;
	id->ece = *ece;
	av_from_path(id);
	id->timeout_ms = cm_convert_to_ms(id->path.packet_life_time) * 2 +
			 cm_convert_to_ms(id->cm->response_timeout);
	format_req(id, p, priv, len);
	id->state = CMA_CONNECT;
	id->ib = IBCM_REQ_SENT;
	id->has_ibcm = true;
	return cm_send_retried(id, IBCM_REQ_SENT);
}

/* ---- answers to a MAD that names no id of ours ---------------------------------------------- */

/* Linux cm_issue_rej() */
void cm_issue_rej(struct cm_dev *cm, const struct bvd_cm_rx *rx, uint16_t reason,
		      enum ib_cm_msg_response rejected, const void *ari, uint8_t ari_len)
{
	uint8_t m[IB_MAD_SIZE] = { 0 };
	struct bvd_cm_av av;

	cm_mad_hdr(m, IB_CM_ATTR_REJ, cx4_get64(rx->mad, IB_MAD_TID), 0);
	/* the received message's ids, swapped: any CM message has them in the same place */
	cx4_set(m, IB_CM_REJ_REMOTE_COMM_ID, cx4_get(rx->mad, IB_CM_REJ_LOCAL_COMM_ID));
	cx4_set(m, IB_CM_REJ_LOCAL_COMM_ID, cx4_get(rx->mad, IB_CM_REJ_REMOTE_COMM_ID));
	cx4_set(m, IB_CM_REJ_MESSAGE_REJECTED, rejected);
	cx4_set(m, IB_CM_REJ_REASON, reason);
	if (ari && ari_len) {
		cx4_set(m, IB_CM_REJ_REJECTED_INFO_LENGTH, ari_len);
		memcpy(m + IB_CM_REJ_ARI_OFF, ari, ari_len);
	}
	cm_av_from_rx(cm, rx, &av);
	cm_mad_send(cm, &av, m);
}

/* Linux cm_format_mra() */
static void send_mra(struct cm_id *id, enum ib_cm_msg_response mraed)
{
	uint8_t m[IB_MAD_SIZE] = { 0 };

	cm_mad_hdr(m, IB_CM_ATTR_MRA, id->tid, 0);
	cx4_set(m, IB_CM_MRA_MESSAGE_MRAED, mraed);
	cx4_set(m, IB_CM_MRA_LOCAL_COMM_ID, id->local_id);
	cx4_set(m, IB_CM_MRA_REMOTE_COMM_ID, id->remote_id);
	cx4_set(m, IB_CM_MRA_SERVICE_TIMEOUT, id->service_timeout & 0x1f);
	memcpy(m + IB_CM_MRA_PRIVATE_DATA_OFF, id->priv,
	       id->priv_len < IB_CM_MRA_PRIVATE_DATA_LEN ? id->priv_len : IB_CM_MRA_PRIVATE_DATA_LEN);
	cm_mad_send(id->cm, &id->av, m);
}

/* Linux cm_format_rej() */
static void send_rej(struct cm_id *id, enum ibcm_state state, uint16_t reason, const void *ari,
		     uint8_t ari_len, const uint8_t *priv, uint8_t priv_len)
{
	uint8_t m[IB_MAD_SIZE] = { 0 };
	enum ib_cm_msg_response rejected = IB_CM_MSG_RESPONSE_OTHER;

	cm_mad_hdr(m, IB_CM_ATTR_REJ, id->tid, 0);
	cx4_set(m, IB_CM_REJ_REMOTE_COMM_ID, id->remote_id);
	cx4_set(m, IB_CM_REJ_LOCAL_COMM_ID, state == IBCM_REQ_RCVD ? 0 : id->local_id);
	if (state == IBCM_REQ_RCVD || state == IBCM_MRA_REQ_SENT)
		rejected = IB_CM_MSG_RESPONSE_REQ;
	else if (state == IBCM_REP_RCVD || state == IBCM_MRA_REP_SENT)
		rejected = IB_CM_MSG_RESPONSE_REP;
	cx4_set(m, IB_CM_REJ_MESSAGE_REJECTED, rejected);
	cx4_set(m, IB_CM_REJ_REASON, reason);
	if (ari && ari_len) {
		cx4_set(m, IB_CM_REJ_REJECTED_INFO_LENGTH, ari_len);
		memcpy(m + IB_CM_REJ_ARI_OFF, ari, ari_len);
	}
	if (priv && priv_len)
		memcpy(m + IB_CM_REJ_PRIVATE_DATA_OFF, priv, priv_len);
	cm_mad_send(id->cm, &id->av, m);
}

/* Linux cm_send_rej_locked(): 0, or -EINVAL when the state has nothing to reject. */
static int rej_locked(struct cm_id *id, uint16_t reason, const void *ari, uint8_t ari_len,
		      const uint8_t *priv, uint8_t priv_len)
{
	enum ibcm_state state = id->ib;

	if (priv_len > IB_CM_REJ_PRIVATE_DATA_LEN || ari_len > IB_CM_REJ_ARI_LEN)
		return -EINVAL;
	switch (state) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
	case IBCM_REQ_RCVD:
	case IBCM_MRA_REQ_SENT:
	case IBCM_REP_RCVD:
	case IBCM_MRA_REP_SENT:
		cm_cancel_msg(id);
		cm_reset_to_idle(id);
		break;
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		cm_cancel_msg(id);
		cm_enter_timewait(id);
		break;
	default:
		return -EINVAL;
	}
	send_rej(id, state, reason, ari, ari_len, priv, priv_len);
	return 0;
}

/* ---- passive side: REQ, accept, reject ------------------------------------------------------ */

static void dup_req(struct cm_dev *cm, struct cm_id *cur, const struct bvd_cm_rx *rx)
{
	cm->st.rx_duplicates++;
	switch (cur->ib) {
	case IBCM_MRA_REQ_SENT:
		send_mra(cur, IB_CM_MSG_RESPONSE_REQ);
		break;
	case IBCM_TIMEWAIT:
		cm_issue_rej(cm, rx, IB_CM_REJ_STALE_CONN, IB_CM_MSG_RESPONSE_REQ, NULL, 0);
		break;
	default:
		break;	/* REQ_RCVD: the answer is coming */
	}
}

/* Linux cm_format_paths_from_req(): the path back, from the REQ and its datagram. */
static void path_from_req(const uint8_t *m, const struct bvd_cm_rx *rx, struct bv_cm_path *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dgid, m + IB_CM_REQ_PRIMARY_LOCAL_PORT_GID_OFF, 16);
	memcpy(p->sgid, m + IB_CM_REQ_PRIMARY_REMOTE_PORT_GID_OFF, 16);
	p->flow_label = cx4_get(m, IB_CM_REQ_PRIMARY_FLOW_LABEL);
	p->hop_limit = rx->hop_limit ? rx->hop_limit : cx4_get(m, IB_CM_REQ_PRIMARY_HOP_LIMIT);
	p->traffic_class = cx4_get(m, IB_CM_REQ_PRIMARY_TRAFFIC_CLASS);
	p->reversible = 1;
	p->pkey = cx4_get(m, IB_CM_REQ_PARTITION_KEY);
	p->sl = cx4_get(m, IB_CM_REQ_PRIMARY_SL);
	p->mtu = cx4_get(m, IB_CM_REQ_PATH_PACKET_PAYLOAD_MTU);
	p->rate = cx4_get(m, IB_CM_REQ_PRIMARY_PACKET_RATE);
	p->packet_life_time = cx4_get(m, IB_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT);
	p->packet_life_time -= p->packet_life_time > 0;
	p->numb_path = 1;
}

void cm_req_no_listener(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	/*
	 * No rdma_cm listener on the port: the service ID is unknown. A listener on the port that
	 * does not take this request (another address, another QP type): rdma_cm refuses the new
	 * id and ib_cm rejects it as the consumer's (Linux cm_destroy_id() in REQ_RCVD).
	 */
	cm_issue_rej(cm, rx,
		     cm_listener_on_port(cm, cx4_get64(rx->mad, IB_CM_REQ_SERVICE_ID)) ?
			     IB_CM_REJ_CONSUMER_DEFINED :
			     IB_CM_REJ_INVALID_SERVICE_ID,
		     IB_CM_MSG_RESPONSE_REQ, NULL, 0);
}

/* Linux cm_req_handler() + cma_ib_req_handler() */
void cm_recv_req(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	const uint8_t *m = rx->mad;
	const uint8_t *priv = m + IB_CM_REQ_PRIVATE_DATA_OFF;
	uint64_t guid = cx4_get64(m, IB_CM_REQ_LOCAL_CA_GUID);
	uint32_t remote_id = cx4_get(m, IB_CM_REQ_LOCAL_COMM_ID);
	uint64_t sid = cx4_get64(m, IB_CM_REQ_SERVICE_ID);
	struct cm_id *cur, *listen, *conn;
	struct bv_cm_event ev;
	unsigned int off;

	cur = cm_remote_find(cm, guid, remote_id);
	if (cur) {
		dup_req(cm, cur, rx);
		return;
	}
	if (!cm_refresh_port(cm)) {
		cm->st.rx_unmatched++;
		return;
	}
	listen = cm_find_listener(cm, sid, priv, IB_CM_REQ_PRIVATE_DATA_LEN,
				  cm_req_qp_type(m));
	if (!listen) {
		if (!cm_req_wait(cm, rx))
			cm_req_no_listener(cm, rx);
		return;
	}
	if (memcmp(m + IB_CM_REQ_PRIMARY_REMOTE_PORT_GID_OFF, cm->port.gid, 16) &&
	    memcmp(m + IB_CM_REQ_PRIMARY_REMOTE_PORT_GID_OFF, cm->port.gid6, 16)) {
		/* not addressed to a GID of ours: Linux rejects with our GID as ARI */
		cm_issue_rej(cm, rx, IB_CM_REJ_INVALID_GID, IB_CM_MSG_RESPONSE_REQ, cm->port.gid, 16);
		return;
	}
	if (listen->backlog <= 0) {
		/* ucma's backlog is full: no reject, the REQ comes again (Linux -ENOMEM path) */
		cm->st.rx_unmatched++;
		return;
	}
	conn = cm_id_alloc(cm, listen->owner, listen->chan, 0, listen->ps, IBV_QPT_RC);
	if (!conn)
		return;		/* no memory: no reject either, the REQ comes again */
	if (cm_conn_addrs(conn, listen, sid, priv, IB_CM_REQ_PRIVATE_DATA_LEN,
			  m + IB_CM_REQ_PRIMARY_LOCAL_PORT_GID_OFF)) {
		cm_id_destroy(conn);
		cm_issue_rej(cm, rx, IB_CM_REJ_CONSUMER_DEFINED, IB_CM_MSG_RESPONSE_REQ, NULL, 0);
		return;
	}
	conn->remote_id = remote_id;
	conn->remote_ca_guid = guid;
	conn->service_id = sid;
	conn->tid = cx4_get64(m, IB_MAD_TID);
	conn->timeout_ms = cm_convert_to_ms(cx4_get(m, IB_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT));
	conn->max_cm_retries = cx4_get(m, IB_CM_REQ_MAX_CM_RETRIES);
	conn->remote_qpn = cx4_get(m, IB_CM_REQ_LOCAL_QPN);
	conn->initiator_depth = cx4_get(m, IB_CM_REQ_RESPONDER_RESOURCES);
	conn->responder_resources = cx4_get(m, IB_CM_REQ_INITIATOR_DEPTH);
	conn->path_mtu = cx4_get(m, IB_CM_REQ_PATH_PACKET_PAYLOAD_MTU);
	conn->sq_psn = cx4_get(m, IB_CM_REQ_STARTING_PSN);
	conn->retry_count = cx4_get(m, IB_CM_REQ_RETRY_COUNT);
	conn->rnr_retry_count = cx4_get(m, IB_CM_REQ_RNR_RETRY_COUNT);
	conn->flow_control = cx4_get(m, IB_CM_REQ_END_TO_END_FLOW_CONTROL);
	conn->srq = cx4_get(m, IB_CM_REQ_SRQ);
	conn->ece.vendor_id = cx4_get(m, IB_CM_REQ_VENDOR_ID);
	conn->ece.options = cx4_get(m, IB_MAD_ATTR_MOD);
	conn->tos = listen->tos;
	conn->tos_set = listen->tos_set;
	conn->timeout = listen->timeout;
	conn->timeout_set = listen->timeout_set;
	path_from_req(m, rx, &conn->path);
	conn->has_route = true;
	memcpy(conn->sgid, conn->path.sgid, 16);
	memcpy(conn->dgid, conn->path.dgid, 16);
	conn->sgid_index = !memcmp(conn->sgid, cm->port.gid6, 16) ? cm->port.gid6_index :
								  cm->port.gid_index;
	av_from_path(conn);
	conn->state = CMA_CONNECT;
	conn->ib = IBCM_REQ_RCVD;
	conn->has_ibcm = true;
	cm_remote_insert(conn);
	conn->listen = listen;
	listen->backlog--;

	/* Linux cma_set_req_event_data(): the kernel reports the transport's length */
	off = cm_user_data_offset(listen);
	cm_event_init(&ev, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	memcpy(ev.conn.private_data, priv + off, IB_CM_REQ_PRIVATE_DATA_LEN - off);
	ev.conn.private_data_len = (uint16_t)(IB_CM_REQ_PRIVATE_DATA_LEN - off);
	ev.conn.responder_resources = conn->responder_resources;
	ev.conn.initiator_depth = conn->initiator_depth;
	ev.conn.flow_control = conn->flow_control;
	ev.conn.retry_count = conn->retry_count;
	ev.conn.rnr_retry_count = conn->rnr_retry_count;
	ev.conn.srq = conn->srq;
	ev.conn.qp_num = conn->remote_qpn;
	ev.ece = conn->ece;
	ev.flags = BV_CM_EVENT_ROUTE;
	cm_route_of(conn, &ev.route);
	cm_event_conn_req(listen, conn, &ev);

	/* rdma_cm: an MRA goes out if the REQ comes again before we answer it */
	conn->service_timeout = CMA_CM_MRA_SETTING;
	conn->priv_len = 0;
	conn->ib = IBCM_MRA_REQ_SENT;
}

/* Linux cm_format_rep() + ib_send_cm_rep() */
int cm_accept(struct cm_id *id, const struct bv_cm_conn *p, const struct bv_cm_ece *ece)
{
	uint8_t *m = id->msg;

	if (id->state != CMA_CONNECT ||
	    (id->ib != IBCM_REQ_RCVD && id->ib != IBCM_MRA_REQ_SENT))
		return -EINVAL;
	if (p->private_data_len > IB_CM_REP_PRIVATE_DATA_LEN)
		return -EINVAL;
	release_backlog(id);
	id->local_qpn = p->qp_num & 0xffffff;
	id->srq = p->srq ? 1 : 0;
	id->initiator_depth = p->initiator_depth;
	id->responder_resources = p->responder_resources;
	id->rq_psn = id->seq_num;
	if (ece->vendor_id)
		id->ece = *ece;
	memset(m, 0, IB_MAD_SIZE);
	cm_mad_hdr(m, IB_CM_ATTR_REP, id->tid, id->ece.options);
	cx4_set(m, IB_CM_REP_LOCAL_COMM_ID, id->local_id);
	cx4_set(m, IB_CM_REP_REMOTE_COMM_ID, id->remote_id);
	cx4_set(m, IB_CM_REP_STARTING_PSN, id->seq_num);
	cx4_set(m, IB_CM_REP_RESPONDER_RESOURCES, p->responder_resources);
	cx4_set(m, IB_CM_REP_TARGET_ACK_DELAY, id->cm->port.ack_delay & 0x1f);
	cx4_set(m, IB_CM_REP_FAILOVER_ACCEPTED, 0);
	cx4_set(m, IB_CM_REP_RNR_RETRY_COUNT, p->rnr_retry_count < 7 ? p->rnr_retry_count : 7);
	cx4_set64(m, IB_CM_REP_LOCAL_CA_GUID, id->cm->port.ca_guid);
	cx4_set(m, IB_CM_REP_INITIATOR_DEPTH, p->initiator_depth);
	cx4_set(m, IB_CM_REP_END_TO_END_FLOW_CONTROL, p->flow_control & 1);
	cx4_set(m, IB_CM_REP_SRQ, id->srq);
	cx4_set(m, IB_CM_REP_LOCAL_QPN, id->local_qpn);
	cx4_set(m, IB_CM_REP_VENDOR_ID_L, id->ece.vendor_id & 0xff);
	cx4_set(m, IB_CM_REP_VENDOR_ID_M, (id->ece.vendor_id >> 8) & 0xff);
	cx4_set(m, IB_CM_REP_VENDOR_ID_H, (id->ece.vendor_id >> 16) & 0xff);
	memcpy(m + IB_CM_REP_PRIVATE_DATA_OFF, p->private_data, p->private_data_len);
	id->ib = IBCM_REP_SENT;
	return cm_send_retried(id, IBCM_REP_SENT);
}

/* rdma_reject(): a REJ with the consumer's reason and private data. */
int cm_reject(struct cm_id *id, uint8_t reason, const uint8_t *priv, uint8_t len)
{
	if (!id->has_ibcm)
		return -EINVAL;
	release_backlog(id);
	return rej_locked(id, reason, NULL, 0, priv, len);
}

/* ---- REP, RTU, MRA, REJ received -------------------------------------------------------------- */

static void dup_rep(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	struct cm_id *id = cm_id_by_local_id(cm, cx4_get(rx->mad, IB_CM_REP_REMOTE_COMM_ID));

	if (!id || id->remote_id != cx4_get(rx->mad, IB_CM_REP_LOCAL_COMM_ID)) {
		cm->st.rx_unmatched++;
		return;
	}
	cm->st.rx_duplicates++;
	if (id->ib == IBCM_ESTABLISHED) {
		uint8_t m[IB_MAD_SIZE] = { 0 };

		cm_mad_hdr(m, IB_CM_ATTR_RTU, id->tid, 0);
		cx4_set(m, IB_CM_RTU_LOCAL_COMM_ID, id->local_id);
		cx4_set(m, IB_CM_RTU_REMOTE_COMM_ID, id->remote_id);
		memcpy(m + IB_CM_RTU_PRIVATE_DATA_OFF, id->priv, id->priv_len);
		cm_mad_send(cm, &id->av, m);
	} else if (id->ib == IBCM_MRA_REP_SENT) {
		send_mra(id, IB_CM_MSG_RESPONSE_REP);
	}
}

/* Linux cm_rep_handler() + cma_ib_handler(IB_CM_REP_RECEIVED) */
void cm_recv_rep(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	const uint8_t *m = rx->mad;
	struct cm_id *id = cm_id_by_local_id(cm, cx4_get(m, IB_CM_REP_REMOTE_COMM_ID));
	struct bv_cm_event ev;

	if (!id || (id->ib != IBCM_REQ_SENT && id->ib != IBCM_MRA_REQ_RCVD)) {
		dup_rep(cm, rx);
		return;
	}
	id->remote_id = cx4_get(m, IB_CM_REP_LOCAL_COMM_ID);
	id->remote_ca_guid = cx4_get64(m, IB_CM_REP_LOCAL_CA_GUID);
	if (cm_remote_find(cm, id->remote_ca_guid, id->remote_id)) {
		cm->st.rx_duplicates++;	/* a REP of this peer's id connected elsewhere */
		return;
	}
	cm_remote_insert(id);
	id->ib = IBCM_REP_RCVD;
	id->remote_qpn = cx4_get(m, IB_CM_REP_LOCAL_QPN);
	id->initiator_depth = cx4_get(m, IB_CM_REP_RESPONDER_RESOURCES);
	id->responder_resources = cx4_get(m, IB_CM_REP_INITIATOR_DEPTH);
	id->sq_psn = cx4_get(m, IB_CM_REP_STARTING_PSN);
	id->rnr_retry_count = cx4_get(m, IB_CM_REP_RNR_RETRY_COUNT);
	id->target_ack_delay = cx4_get(m, IB_CM_REP_TARGET_ACK_DELAY);
	id->av_timeout = ack_timeout(id->target_ack_delay, id->av_timeout - 1);
	cm_cancel_msg(id);

	if (id->state != CMA_CONNECT)
		return;
	/* rdma_cm: an MRA goes out if the REP comes again before the library answers */
	id->service_timeout = CMA_CM_MRA_SETTING;
	id->priv_len = 0;
	id->ib = IBCM_MRA_REP_SENT;

	/* Linux cma_set_rep_event_data(): the library makes it ESTABLISHED */
	cm_event_init(&ev, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	memcpy(ev.conn.private_data, m + IB_CM_REP_PRIVATE_DATA_OFF, IB_CM_REP_PRIVATE_DATA_LEN);
	ev.conn.private_data_len = IB_CM_REP_PRIVATE_DATA_LEN;
	ev.conn.responder_resources = id->responder_resources;
	ev.conn.initiator_depth = id->initiator_depth;
	ev.conn.flow_control = cx4_get(m, IB_CM_REP_END_TO_END_FLOW_CONTROL);
	ev.conn.rnr_retry_count = id->rnr_retry_count;
	ev.conn.srq = cx4_get(m, IB_CM_REP_SRQ);
	ev.conn.qp_num = id->remote_qpn;
	ev.ece.vendor_id = cx4_get(m, IB_CM_REP_VENDOR_ID_H) << 16 |
			   cx4_get(m, IB_CM_REP_VENDOR_ID_M) << 8 |
			   cx4_get(m, IB_CM_REP_VENDOR_ID_L);
	ev.ece.options = cx4_get(m, IB_MAD_ATTR_MOD);
	cm_event(id, &ev);
}

/* Linux ib_send_cm_rtu(): the active side after it moved its QP (rdma_accept(id, NULL)). */
int cm_establish_rtu(struct cm_id *id)
{
	uint8_t m[IB_MAD_SIZE] = { 0 };

	if (id->state != CMA_CONNECT || (id->ib != IBCM_REP_RCVD && id->ib != IBCM_MRA_REP_SENT))
		return -EINVAL;
	cm_mad_hdr(m, IB_CM_ATTR_RTU, id->tid, 0);
	cx4_set(m, IB_CM_RTU_LOCAL_COMM_ID, id->local_id);
	cx4_set(m, IB_CM_RTU_REMOTE_COMM_ID, id->remote_id);
	cm_mad_send(id->cm, &id->av, m);
	id->priv_len = 0;
	id->ib = IBCM_ESTABLISHED;
	return 0;
}

/* Linux cm_rtu_handler() */
void cm_recv_rtu(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	struct cm_id *id = cm_id_by_local_id(cm, cx4_get(rx->mad, IB_CM_RTU_REMOTE_COMM_ID));

	if (!id || id->remote_id != cx4_get(rx->mad, IB_CM_RTU_LOCAL_COMM_ID)) {
		cm->st.rx_unmatched++;
		return;
	}
	if (id->ib != IBCM_REP_SENT && id->ib != IBCM_MRA_REP_RCVD) {
		cm->st.rx_duplicates++;
		return;
	}
	id->ib = IBCM_ESTABLISHED;
	cm_cancel_msg(id);
	if (id->state == CMA_CONNECT)
		cm_conn_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
}

/* Linux cm_mra_handler(): the peer needs longer, our wait grows (ib_modify_mad). */
void cm_recv_mra(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	const uint8_t *m = rx->mad;
	unsigned int mraed = cx4_get(m, IB_CM_MRA_MESSAGE_MRAED);
	struct cm_id *id = cm_id_by_local_id(cm, cx4_get(m, IB_CM_MRA_REMOTE_COMM_ID));
	uint32_t timeout;

	if (!id || (mraed != IB_CM_MSG_RESPONSE_REQ &&
		    id->remote_id != cx4_get(m, IB_CM_MRA_LOCAL_COMM_ID)) || !id->msg_live) {
		cm->st.rx_unmatched++;
		return;
	}
	timeout = cm_convert_to_ms(cx4_get(m, IB_CM_MRA_SERVICE_TIMEOUT)) +
		  cm_convert_to_ms(id->av_timeout);
	if (id->ib == IBCM_REQ_SENT && mraed == IB_CM_MSG_RESPONSE_REQ) {
		id->ib = IBCM_MRA_REQ_RCVD;
	} else if (id->ib == IBCM_REP_SENT && mraed == IB_CM_MSG_RESPONSE_REP) {
		id->ib = IBCM_MRA_REP_RCVD;
	} else {
		if (id->ib == IBCM_MRA_REQ_RCVD || id->ib == IBCM_MRA_REP_RCVD)
			cm->st.rx_duplicates++;
		else
			cm->st.rx_unmatched++;
		return;
	}
	id->msg_state = id->ib;
	id->timeout_ms = timeout;
	bvd_timer_arm(cm->d, &id->msg_timer, timeout);
}

/* Linux cm_acquire_rejected_id() */
static struct cm_id *rejected_id(struct cm_dev *cm, const uint8_t *m)
{
	uint32_t remote_id = cx4_get(m, IB_CM_REJ_LOCAL_COMM_ID);
	struct cm_id *id;

	if (cx4_get(m, IB_CM_REJ_REASON) == IB_CM_REJ_TIMEOUT)
		return cm_remote_find(cm, cx4_be64_load(m + IB_CM_REJ_ARI_OFF), remote_id);
	id = cm_id_by_local_id(cm, cx4_get(m, IB_CM_REJ_REMOTE_COMM_ID));
	if (id && cx4_get(m, IB_CM_REJ_MESSAGE_REJECTED) != IB_CM_MSG_RESPONSE_REQ &&
	    id->remote_id != remote_id)
		return NULL;
	return id;
}

/* Linux cm_rej_handler() + cma_ib_handler(IB_CM_REJ_RECEIVED) */
void cm_recv_rej(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	const uint8_t *m = rx->mad;
	uint16_t reason = (uint16_t)cx4_get(m, IB_CM_REJ_REASON);
	struct cm_id *id = rejected_id(cm, m);
	struct bv_cm_event ev;

	if (!id) {
		cm->st.rx_unmatched++;
		return;
	}
	switch (id->ib) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		cm_cancel_msg(id);
		/* fallthrough */
	case IBCM_REQ_RCVD:
	case IBCM_MRA_REQ_SENT:
		if (reason == IB_CM_REJ_STALE_CONN)
			cm_enter_timewait(id);
		else
			cm_reset_to_idle(id);
		break;
	case IBCM_DREQ_SENT:
		cm_cancel_msg(id);
		/* fallthrough */
	case IBCM_REP_RCVD:
	case IBCM_MRA_REP_SENT:
	case IBCM_ESTABLISHED:
		cm_enter_timewait(id);
		break;
	default:
		cm->st.rx_unmatched++;
		return;
	}
	if (id->state != CMA_CONNECT)
		return;
	cm_event_init(&ev, RDMA_CM_EVENT_REJECTED, reason);
	memcpy(ev.conn.private_data, m + IB_CM_REJ_PRIVATE_DATA_OFF, IB_CM_REJ_PRIVATE_DATA_LEN);
	ev.conn.private_data_len = IB_CM_REJ_PRIVATE_DATA_LEN;
	cm_event(id, &ev);
}

/* ---- destroying an id mid-handshake ----------------------------------------------------------- */

/* The handshake half of Linux cm_destroy_id(); cm_disconn.c does the rest. */
bool cm_conn_destroy_handshake(struct cm_id *id)
{
	uint64_t guid = id->cm->port.ca_guid;
	uint8_t ari[8];

	switch (id->ib) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
		cx4_be64_store(ari, guid);
		rej_locked(id, IB_CM_REJ_TIMEOUT, ari, sizeof(ari), NULL, 0);
		return true;
	case IBCM_REQ_RCVD:
	case IBCM_MRA_REQ_SENT:
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
	case IBCM_REP_RCVD:
	case IBCM_MRA_REP_SENT:
		rej_locked(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		return true;
	default:
		return false;
	}
}
