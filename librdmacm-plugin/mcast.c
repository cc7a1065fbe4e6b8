// SPDX-License-Identifier: MIT
/*
 * Multicast. The ports of bridgeverbs devices carry no multicast (max_mcast_grp 0, no
 * multicast forwarding on the wire model), so a join is refused at once with
 * EOPNOTSUPP — a clear error, where a kernel would fail the join later with
 * RDMA_CM_EVENT_MULTICAST_ERROR — and there is never a group to leave (EADDRNOTAVAIL, as
 * librdmacm answers for an address it did not join).
 */
#include "rcm.h"

RCM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	if (!id || !addr || !bv_cm_addrlen(addr))
		return rcm_err(EINVAL);
	return rcm_err(EOPNOTSUPP);
}

RCM_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *mc_join_attr,
				      void *context)
{
	if (!id || !mc_join_attr)
		return rcm_err(EINVAL);
	if (!(mc_join_attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !(mc_join_attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    mc_join_attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return rcm_err(EINVAL);
	if (mc_join_attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED)
		return rcm_err(ENOTSUP);
	return rcm_err(EOPNOTSUPP);
}

RCM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	if (!id || !addr)
		return rcm_err(EINVAL);
	return rcm_err(EADDRNOTAVAIL);
}
