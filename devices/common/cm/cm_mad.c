// SPDX-License-Identifier: MIT
/*
 * CM MADs: the common header of what we send, the checks on what arrives, the counters, and
 * the dispatch of received messages to their handlers.
 *
 * What arrives from the wire is untrusted: a MAD is taken only if it is a whole 256-byte MAD
 * of the CM class in the version we speak, with the SEND method and a CM attribute; anything
 * else is dropped and counted (rx_malformed), never answered: the kernel's MAD layer has no
 * agent for it either (Linux mad.c find_mad_agent()). The handlers then check the fields they
 * use against the state of the id the message names; what names no id in a state that takes
 * it is dropped (rx_unmatched) or answered as Linux cm.c answers it (REJ for an unknown REQ's
 * service, DREP for a stale DREQ).
 */
#include <string.h>

#include "cm.h"

void cm_mad_hdr(uint8_t *mad, uint16_t attr_id, uint64_t tid, uint32_t attr_mod)
{
	memset(mad, 0, IB_MAD_HDR_LEN);
	cx4_set(mad, IB_MAD_BASE_VERSION, IB_MGMT_BASE_VERSION);
	cx4_set(mad, IB_MAD_MGMT_CLASS, IB_MGMT_CLASS_CM);
	cx4_set(mad, IB_MAD_CLASS_VERSION, IB_CM_CLASS_VERSION);
	cx4_set(mad, IB_MAD_METHOD, IB_MGMT_METHOD_SEND);
	cx4_set64(mad, IB_MAD_TID, tid);
	cx4_set(mad, IB_MAD_ATTR_ID, attr_id);
	cx4_set(mad, IB_MAD_ATTR_MOD, attr_mod);
}

/* Linux cm_form_tid(): the agent's high half, our local id in the low half. */
uint64_t cm_new_tid(struct cm_id *id)
{
	return (uint64_t)id->cm->tid_hi << 32 | id->local_id;
}

int cm_mad_send(struct cm_dev *cm, const struct bvd_cm_av *av, const uint8_t *mad)
{
	unsigned int attr = cx4_get(mad, IB_MAD_ATTR_ID) - CM_ATTR_FIRST;
	int err = cm->tp->send(cm->d, av, mad, IB_MAD_SIZE);

	if (attr < CM_NATTR)
		cm->st.tx[attr]++;
	if (err)
		cm->st.tx_failed++;
	return err;
}

/* Linux cm_init_av_for_response(): back to where the MAD came from. */
void cm_av_from_rx(struct cm_dev *cm, const struct bvd_cm_rx *rx, struct bvd_cm_av *av)
{
	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, rx->sgid, 16);
	av->sgid_index = cm->port.gid_index;
	av->hop_limit = rx->hop_limit ? rx->hop_limit : 0xff;
	av->traffic_class = rx->traffic_class;
	av->flow_label = rx->flow_label;
}

uint16_t cm_mad_check(struct cm_dev *cm, const uint8_t *mad, size_t len)
{
	uint16_t attr;

	if (!mad || len < IB_MAD_SIZE ||
	    cx4_get(mad, IB_MAD_BASE_VERSION) != IB_MGMT_BASE_VERSION ||
	    cx4_get(mad, IB_MAD_MGMT_CLASS) != IB_MGMT_CLASS_CM ||
	    cx4_get(mad, IB_MAD_CLASS_VERSION) != IB_CM_CLASS_VERSION ||
	    cx4_get(mad, IB_MAD_METHOD) != IB_MGMT_METHOD_SEND)
		goto bad;
	attr = (uint16_t)cx4_get(mad, IB_MAD_ATTR_ID);
	if (attr < IB_CM_ATTR_REQ || attr > IB_CM_ATTR_APR)
		goto bad;
	cm->st.rx[attr - CM_ATTR_FIRST]++;
	return attr;
bad:
	cm->st.rx_malformed++;
	return 0;
}

void bvd_cm_recv(struct bvd *d, const struct bvd_cm_rx *rx)
{
	struct cm_dev *cm = cm_of(d);

	if (!cm)
		return;
	switch (cm_mad_check(cm, rx->mad, rx->len)) {
	case IB_CM_ATTR_REQ:
		cm_recv_req(cm, rx);
		break;
	case IB_CM_ATTR_MRA:
		cm_recv_mra(cm, rx);
		break;
	case IB_CM_ATTR_REJ:
		cm_recv_rej(cm, rx);
		break;
	case IB_CM_ATTR_REP:
		cm_recv_rep(cm, rx);
		break;
	case IB_CM_ATTR_RTU:
		cm_recv_rtu(cm, rx);
		break;
	case IB_CM_ATTR_DREQ:
		cm_recv_dreq(cm, rx);
		break;
	case IB_CM_ATTR_DREP:
		cm_recv_drep(cm, rx);
		break;
	case IB_CM_ATTR_SIDR_REQ:
		cm_recv_sidr_req(cm, rx);
		break;
	case IB_CM_ATTR_SIDR_REP:
		cm_recv_sidr_rep(cm, rx);
		break;
	case IB_CM_ATTR_LAP:
		cm_recv_lap(cm, rx);
		break;
	case IB_CM_ATTR_APR:
		/* we never send a LAP, so no APR answers one of ours */
		cm->st.rx_unmatched++;
		break;
	default:
		break;
	}
}
