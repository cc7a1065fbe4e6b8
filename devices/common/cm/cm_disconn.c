// SPDX-License-Identifier: MIT
/*
 * An established connection and its end (Linux cm.c DREQ/DREP/timewait, cma.c
 * rdma_disconnect() and the DISCONNECTED events):
 *
 *   rdma_disconnect: ESTABLISHED --DREQ--> peer: DREQ_RCVD, DISCONNECTED to its application;
 *                    its rdma_disconnect (or destroy) answers DREP --> DISCONNECTED here;
 *                    both ends then wait out timewait (TIMEWAIT_EXIT).
 *   A DREQ that no DREP answers, after the retries: DISCONNECTED with -ETIMEDOUT.
 *
 * Also here: COMM_EST from the application (rdma_notify), LAP refused with an APR (one port:
 * no alternate path), what an id being destroyed tells its peer (Linux cm_destroy_id()), and
 * a port that goes down (docs/rdmacm.md: every connection on it ends at once).
 */
#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm.h"

/* Linux cm_format_dreq() + cm_send_dreq_locked() */
static int send_dreq(struct cm_id *id)
{
	uint8_t *m = id->msg;

	if (id->ib != IBCM_ESTABLISHED)
		return -EINVAL;
	memset(m, 0, IB_MAD_SIZE);
	id->tid = cm_new_tid(id);
	cm_mad_hdr(m, IB_CM_ATTR_DREQ, id->tid, 0);
	cx4_set(m, IB_CM_DREQ_LOCAL_COMM_ID, id->local_id);
	cx4_set(m, IB_CM_DREQ_REMOTE_COMM_ID, id->remote_id);
	cx4_set(m, IB_CM_DREQ_REMOTE_QPN_EECN, id->remote_qpn);
	id->ib = IBCM_DREQ_SENT;
	return cm_send_retried(id, IBCM_DREQ_SENT);
}

/* Linux cm_format_drep(): to the peer of id, answering its DREQ (tid). */
static void send_drep(struct cm_id *id)
{
	uint8_t m[IB_MAD_SIZE] = { 0 };

	cm_mad_hdr(m, IB_CM_ATTR_DREP, id->tid, 0);
	cx4_set(m, IB_CM_DREP_LOCAL_COMM_ID, id->local_id);
	cx4_set(m, IB_CM_DREP_REMOTE_COMM_ID, id->remote_id);
	memcpy(m + IB_CM_DREP_PRIVATE_DATA_OFF, id->priv, id->priv_len);
	cm_mad_send(id->cm, &id->av, m);
}

/* Linux cm_send_drep_locked() */
static int drep_locked(struct cm_id *id)
{
	if (id->ib != IBCM_DREQ_RCVD)
		return -EINVAL;
	id->priv_len = 0;
	cm_enter_timewait(id);
	send_drep(id);
	return 0;
}

/*
 * Linux rdma_disconnect(): initiate (DREQ) or answer (DREP) a disconnect. The QP went to
 * ERR in the library first. Like the kernel, a state with neither to send is not an error.
 */
int cm_disconnect(struct cm_id *id)
{
	if (!id->has_ibcm)
		return -EINVAL;
	if (send_dreq(id))
		drep_locked(id);
	return 0;
}

/* Linux cm_establish() (ib_cm_notify(IB_EVENT_COMM_EST)): data arrived before the RTU. */
int cm_notify(struct cm_id *id, uint32_t event)
{
	if (!id->has_ibcm)
		return -EINVAL;
	if (event != IBV_EVENT_COMM_EST)
		return -EINVAL;	/* IB_EVENT_PATH_MIG: no alternate path to migrate to */
	switch (id->ib) {
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		id->ib = IBCM_ESTABLISHED;
		cm_cancel_msg(id);
		if (id->state == CMA_CONNECT)
			cm_conn_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
		return 0;
	case IBCM_ESTABLISHED:
		return -EISCONN;
	default:
		return -EINVAL;
	}
}

/* Linux cm_issue_drep(): answer a DREQ of a connection we no longer know. */
static void issue_drep(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	uint8_t m[IB_MAD_SIZE] = { 0 };
	struct bvd_cm_av av;

	cm_mad_hdr(m, IB_CM_ATTR_DREP, cx4_get64(rx->mad, IB_MAD_TID), 0);
	cx4_set(m, IB_CM_DREP_REMOTE_COMM_ID, cx4_get(rx->mad, IB_CM_DREQ_LOCAL_COMM_ID));
	cx4_set(m, IB_CM_DREP_LOCAL_COMM_ID, cx4_get(rx->mad, IB_CM_DREQ_REMOTE_COMM_ID));
	cm_av_from_rx(cm, rx, &av);
	cm_mad_send(cm, &av, m);
}

/* Linux cm_dreq_handler() + cma_ib_handler(IB_CM_DREQ_RECEIVED) */
void cm_recv_dreq(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	const uint8_t *m = rx->mad;
	struct cm_id *id = cm_id_by_local_id(cm, cx4_get(m, IB_CM_DREQ_REMOTE_COMM_ID));

	if (!id || id->remote_id != cx4_get(m, IB_CM_DREQ_LOCAL_COMM_ID)) {
		cm->st.rx_duplicates++;
		issue_drep(cm, rx);
		return;
	}
	if (id->local_qpn != cx4_get(m, IB_CM_DREQ_REMOTE_QPN_EECN)) {
		cm->st.rx_unmatched++;
		return;
	}
	switch (id->ib) {
	case IBCM_REP_SENT:
	case IBCM_DREQ_SENT:
	case IBCM_MRA_REP_RCVD:
		cm_cancel_msg(id);
		break;
	case IBCM_ESTABLISHED:
		break;
	case IBCM_TIMEWAIT:
		cm->st.rx_duplicates++;
		id->tid = cx4_get64(m, IB_MAD_TID);
		send_drep(id);
		return;
	case IBCM_DREQ_RCVD:
		cm->st.rx_duplicates++;
		return;
	default:
		cm->st.rx_unmatched++;
		return;
	}
	id->ib = IBCM_DREQ_RCVD;
	id->tid = cx4_get64(m, IB_MAD_TID);
	if (id->state == CMA_CONNECT) {
		id->state = CMA_DISCONNECT;
		cm_conn_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	}
}

/* Linux cm_drep_handler() */
void cm_recv_drep(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	struct cm_id *id = cm_id_by_local_id(cm, cx4_get(rx->mad, IB_CM_DREP_REMOTE_COMM_ID));

	if (!id || id->remote_id != cx4_get(rx->mad, IB_CM_DREP_LOCAL_COMM_ID) ||
	    (id->ib != IBCM_DREQ_SENT && id->ib != IBCM_DREQ_RCVD)) {
		cm->st.rx_unmatched++;
		return;
	}
	cm_enter_timewait(id);
	cm_cancel_msg(id);
	if (id->state == CMA_CONNECT) {
		id->state = CMA_DISCONNECT;
		cm_conn_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	}
}

/*
 * A LAP asks us to load an alternate path. Our port has none to offer: the connection stays
 * as it is and the peer is told so with an APR "unsupported" ([IBTA] 12.8.2, table 117).
 */
void cm_recv_lap(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	struct cm_id *id = cm_id_by_local_id(cm, cx4_get(rx->mad, IB_CM_LAP_REMOTE_COMM_ID));
	uint8_t m[IB_MAD_SIZE] = { 0 };

	if (!id || id->remote_id != cx4_get(rx->mad, IB_CM_LAP_LOCAL_COMM_ID) ||
	    id->ib != IBCM_ESTABLISHED) {
		cm->st.rx_unmatched++;
		return;
	}
	cm_mad_hdr(m, IB_CM_ATTR_APR, cx4_get64(rx->mad, IB_MAD_TID), 0);
	cx4_set(m, IB_CM_APR_LOCAL_COMM_ID, id->local_id);
	cx4_set(m, IB_CM_APR_REMOTE_COMM_ID, id->remote_id);
	cx4_set(m, IB_CM_APR_AR_STATUS, IB_CM_APR_UNSUPPORTED);
	cm_mad_send(cm, &id->av, m);
}

/* Linux cm_destroy_id(): what the peer hears of an id that goes away. */
void cm_conn_destroy(struct cm_id *id)
{
	if (id->qp_type == IBV_QPT_UD) {
		if (id->ib == IBCM_SIDR_REQ_RCVD)
			cm_sidr_reject(id, NULL, 0);
		cm_cancel_msg(id);
		id->ib = IBCM_IDLE;
		return;
	}
	if (cm_conn_destroy_handshake(id))
		goto idle;
	switch (id->ib) {
	case IBCM_ESTABLISHED:
		/* one DREQ, not waited for: the id is gone when the DREP comes */
		send_dreq(id);
		break;
	case IBCM_DREQ_RCVD:
		drep_locked(id);
		break;
	default:
		break;
	}
idle:
	cm_cancel_msg(id);
	cm_reset_to_idle(id);
}

/*
 * The port went down (a cable pulled, the ntb link lost): MADs cannot pass, so every
 * connection on it is over now rather than after minutes of retries. Connections in the
 * making get UNREACHABLE, established ones DISCONNECTED, both with -ETIMEDOUT as if their
 * REQ or DREQ had gone unanswered (docs/rdmacm.md; the kernel leaves RoCE connections to
 * their QP's timeouts).
 */
void cm_conn_port_down(struct cm_id *id)
{
	switch (id->ib) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
	case IBCM_REQ_RCVD:
	case IBCM_MRA_REQ_SENT:
	case IBCM_REP_RCVD:
	case IBCM_MRA_REP_SENT:
	case IBCM_SIDR_REQ_SENT:
		cm_cancel_msg(id);
		cm_reset_to_idle(id);
		if (id->state == CMA_CONNECT)
			cm_conn_event(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case IBCM_ESTABLISHED:
	case IBCM_DREQ_SENT:
	case IBCM_DREQ_RCVD:
		cm_cancel_msg(id);
		cm_reset_to_idle(id);
		if (id->state == CMA_CONNECT) {
			id->state = CMA_DISCONNECT;
			cm_conn_event(id, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
		}
		break;
	default:
		break;
	}
}
