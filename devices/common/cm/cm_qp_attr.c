// SPDX-License-Identifier: MIT
/*
 * The QP attributes of each transition, as rdma_init_qp_attr() gives them (Linux cma.c
 * rdma_init_qp_attr() over cm.c cm_init_qp_{init,rtr,rts}_attr()): the library moves the
 * application's QP with exactly these, so the QP's PSNs, MTU, path and limits are the ones
 * the handshake agreed on.
 */
#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm.h"

/* Linux cma_ib_init_qp_attr(): before a handshake, and for UD QPs */
static int cma_init(struct cm_id *id, struct bv_cm_qp_attr *a)
{
	a->pkey_index = 0;	/* the port's one P_Key, 0xffff on RoCE */
	a->port_num = 1;
	a->mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (id->qp_type == IBV_QPT_UD) {
		/* Linux cma_set_default_qkey(): RDMA_UDP_QKEY for PS_UDP and PS_IB */
		if (!id->qkey && (id->ps == RDMA_PS_UDP || id->ps == RDMA_PS_IB))
			id->qkey = RDMA_UDP_QKEY;
		if (!id->qkey)
			return -EINVAL;	/* PS_IPOIB takes a multicast group's Q_Key: none here */
		a->qkey = id->qkey;
		a->mask |= IBV_QP_QKEY;
	} else {
		a->qp_access_flags = 0;
		a->mask |= IBV_QP_ACCESS_FLAGS;
	}
	return 0;
}

static bool in(enum ibcm_state s, const enum ibcm_state *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == s)
			return true;
	return false;
}

static void ah_of(const struct cm_id *id, struct bv_cm_ah *ah)
{
	memset(ah, 0, sizeof(*ah));
	memcpy(ah->dgid, id->av.dgid, 16);
	ah->flow_label = id->av.flow_label;
	ah->sgid_index = id->av.sgid_index;
	ah->hop_limit = id->av.hop_limit;
	ah->traffic_class = id->av.traffic_class;
	ah->sl = id->path.sl;
	ah->static_rate = id->path.rate;
	ah->is_global = 1;	/* RoCE addresses always carry a GRH */
	ah->port_num = 1;
}

int cm_init_qp_attr(struct cm_id *id, uint32_t state, struct bv_cm_qp_attr *a)
{
	static const enum ibcm_state init_ok[] = {
		IBCM_REQ_SENT, IBCM_MRA_REQ_RCVD, IBCM_REQ_RCVD, IBCM_MRA_REQ_SENT, IBCM_REP_RCVD,
		IBCM_MRA_REP_SENT, IBCM_REP_SENT, IBCM_MRA_REP_RCVD, IBCM_ESTABLISHED,
	};
	static const enum ibcm_state rtx_ok[] = {
		IBCM_REQ_RCVD, IBCM_MRA_REQ_SENT, IBCM_REP_RCVD, IBCM_MRA_REP_SENT,
		IBCM_REP_SENT, IBCM_MRA_REP_RCVD, IBCM_ESTABLISHED,
	};
	int ret = 0;

	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	if (!id->src.ss_family)
		return -EINVAL;	/* not bound to this port */
	if (!id->has_ibcm || id->qp_type == IBV_QPT_UD) {
		if (state != IBV_QPS_INIT && state != IBV_QPS_RTR && state != IBV_QPS_RTS)
			return -EINVAL;
		ret = cma_init(id, a);
	} else if (state == IBV_QPS_INIT) {
		if (!in(id->ib, init_ok, sizeof(init_ok) / sizeof(init_ok[0])))
			return -EINVAL;
		a->mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (id->responder_resources)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		a->pkey_index = 0;
		a->port_num = 1;
	} else if (state == IBV_QPS_RTR) {
		if (!in(id->ib, rtx_ok, sizeof(rtx_ok) / sizeof(rtx_ok[0])))
			return -EINVAL;
		a->mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		ah_of(id, &a->ah);
		a->path_mtu = id->path_mtu;
		a->dest_qp_num = id->remote_qpn;
		a->max_dest_rd_atomic = id->responder_resources;
		a->min_rnr_timer = 0;
	} else if (state == IBV_QPS_RTS) {
		if (!in(id->ib, rtx_ok, sizeof(rtx_ok) / sizeof(rtx_ok[0])))
			return -EINVAL;
		a->mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT;
		a->sq_psn = id->sq_psn;
		a->retry_cnt = id->retry_count;
		a->rnr_retry = id->rnr_retry_count;
		a->max_rd_atomic = id->initiator_depth;
		a->timeout = id->av_timeout;
	} else {
		return -EINVAL;
	}
	if (ret)
		return ret;
	/* rdma_cm's own starting PSN for our receive side */
	if (state == IBV_QPS_RTR)
		a->rq_psn = id->seq_num;
	if ((a->mask & IBV_QP_TIMEOUT) && id->timeout_set)
		a->timeout = id->timeout;
	return 0;
}
