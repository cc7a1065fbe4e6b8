// SPDX-License-Identifier: MIT
/*
 * Address handles: the 48-byte UD address vector a send WQE carries (rdma-core
 * mlx5_create_ah for an Ethernet port). RoCE always has a GRH; the destination MAC comes from
 * the daemon (the kernel's part); for RoCE v2 the AV's rlid field is the UDP source port,
 * derived from the flow label or picked in 0xC000..0xFFFF.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cx4.h"

struct ibv_ah *cx4_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct cx4_resolve_ah_req req = { .pd_handle = pd->handle };
	struct cx4_resolve_ah_rsp rsp;
	struct cx4_ah *ah;
	uint32_t fl = attr->grh.flow_label & IB_GRH_FLOWLABEL_MASK;
	int err;

	if (!attr->is_global || attr->port_num != 1) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(req.ah.dgid, attr->grh.dgid.raw, 16);
	req.ah.flow_label = fl;
	req.ah.sgid_index = attr->grh.sgid_index;
	req.ah.hop_limit = attr->grh.hop_limit;
	req.ah.traffic_class = attr->grh.traffic_class;
	req.ah.sl = attr->sl;
	req.ah.is_global = 1;
	req.ah.port_num = attr->port_num;
	err = cx4_call(pd->context, CX4_OP_RESOLVE_AH, &req, sizeof(req), NULL, 0, &rsp,
		       sizeof(rsp));
	if (err) {
		errno = err;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	if (rsp.gid_type == 1)
		ah->av.rlid = htobe16(fl ? ibv_flow_label_to_udp_sport(fl) :
				      (uint16_t)(IB_ROCE_UDP_ENCAP_VALID_PORT_MIN +
						 random() % (IB_ROCE_UDP_ENCAP_VALID_PORT_MAX + 1 -
							     IB_ROCE_UDP_ENCAP_VALID_PORT_MIN)));
	ah->av.stat_rate_sl = (uint8_t)((attr->sl & 0x7) << 1);
	ah->av.tclass = attr->grh.traffic_class;
	ah->av.hop_limit = attr->grh.hop_limit;
	/* RoCE: the GRH bit (30) stays clear, packets always carry one */
	ah->av.grh_gid_fl = htobe32(((uint32_t)attr->grh.sgid_index << 20) | fl);
	memcpy(ah->av.rgid, attr->grh.dgid.raw, 16);
	memcpy(ah->av.rmac, rsp.dmac, 6);
	return &ah->ibv_ah;
}

int cx4_destroy_ah(struct ibv_ah *ah)
{
	free(to_cx4_ah(ah));
	return 0;
}
