// SPDX-License-Identifier: MIT
/*
 * Control messages from the peer (progress thread): checked by scif_wire_parse, then handed to
 * the module they concern. A message that does not fit the connection's state is counted and
 * dropped (SCIF_REJ_STATE); the connection goes on.
 */
#include "scif_priv.h"

void scif_ctrl_recv(struct scif_ep *ep, const void *buf, size_t len)
{
	struct scif_wire_msg m;

	if (scif_wire_parse(buf, len, &m)) {
		scif_log("rejected a control message from node %u port %u (op %u, %zu bytes)",
			 ep->peer.node, ep->peer.port, len ? ((const uint8_t *)buf)[0] : 0, len);
		return;
	}
	pthread_mutex_lock(&ep->lock);
	if (ep->state != SCIF_CONNECTED && ep->state != SCIF_CONNECTING) {
		pthread_mutex_unlock(&ep->lock);
		return;		/* closing or disconnected: nothing is owed any more */
	}
	switch (m.op) {
	case SCIF_OP_GRANT:
	case SCIF_OP_REJECT:
		if (ep->state != SCIF_CONNECTING || ep->listener)
			scif_reject_log(ep, SCIF_REJ_STATE, "a grant");
		else
			scif_conn_granted(ep, m.op == SCIF_OP_GRANT);
		break;
	case SCIF_OP_DISCONNECT:
		scif_debug("node %u port %u closed the connection", ep->peer.node, ep->peer.port);
		scif_conn_lost(ep, ECONNRESET);
		break;
	case SCIF_OP_WAKE_DATA:
	case SCIF_OP_WAKE_CREDIT:
		scif_msg_wake(ep, m.op, (uint32_t)m.arg[0]);
		break;
	case SCIF_OP_REGISTER:
		scif_rma_peer_register(ep, &m);
		break;
	case SCIF_OP_UNREGISTER:
		scif_rma_peer_unregister(ep, &m);
		break;
	case SCIF_OP_MARK:
	case SCIF_OP_WAIT:
	case SCIF_OP_SIGNAL:
		scif_fence_peer(ep, &m);
		break;
	case SCIF_OP_MAP:
	case SCIF_OP_UNMAP:
		scif_mmap_peer(ep, &m);
		break;
	case SCIF_OP_ACK:
		scif_ack_req(ep, m.req, (int)m.arg[0], &m.arg[1]);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&ep->lock);
}
