// SPDX-License-Identifier: MIT
/*
 * Address handles. On mlx5 an AH is no device object: the provider builds the address vector
 * itself, and for RoCE asks the kernel only for what it cannot know, the destination MAC
 * (ibv_cmd_create_ah -> the kernel's neighbour resolution, ib_resolve_eth_dmac). This is that
 * half: check the source GID index and resolve the destination GID to a MAC. The same
 * resolution gives a connected QP's path its MAC (qp.c).
 *
 * Resolution, in the order the kernel would find an answer:
 *   multicast GIDs map to multicast MACs (ip_eth_mc_map / ipv6_eth_mc_map);
 *   link-local GIDs carry the MAC in their EUI-64 (rdma_get_ll_mac);
 *   our own GIDs: our MAC (the device loops the packets back);
 *   IP GIDs (IPv4-mapped, global IPv6), on a port whose net device is Ethernet, where frames
 *   leave on a real link: the host's neighbour table (neigh.c, libnl);
 *   otherwise (the loopback device and its UDP sockets, a cable): a port of our configuration
 *   with that IPv4 address (the cable's other end, another modelled port), else a locally
 *   administered MAC derived from the address: on the UDP wire no Ethernet header is sent.
 */
#include <errno.h>
#include <string.h>

#include "bv_netdev.h"
#include "cx4d.h"

int cx4d_resolve_dmac(struct cx4d *d, const uint8_t gid[16], uint8_t dmac[6])
{
	static const uint8_t v4prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	bool v4 = !memcmp(gid, v4prefix, 12);
	struct bv_netdev nd;

	if (v4 && (gid[12] & 0xf0) == 0xe0) {
		const uint8_t mc[6] = { 0x01, 0x00, 0x5e, gid[13] & 0x7f, gid[14], gid[15] };

		memcpy(dmac, mc, 6);
		return 0;
	}
	if (gid[0] == 0xff) {
		const uint8_t mc[6] = { 0x33, 0x33, gid[12], gid[13], gid[14], gid[15] };

		memcpy(dmac, mc, 6);
		return 0;
	}
	if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80 && gid[11] == 0xff && gid[12] == 0xfe) {
		dmac[0] = gid[8] ^ 0x02;
		dmac[1] = gid[9];
		dmac[2] = gid[10];
		dmac[3] = gid[13];
		dmac[4] = gid[14];
		dmac[5] = gid[15];
		return 0;
	}
	if (cx4d_gid_is_own(d, gid)) {
		memcpy(dmac, d->mac, 6);
		return 0;
	}
	if (!bv_netdev_get(d->conf->netdev, &nd) && nd.ethernet)
		return cx4d_neigh_resolve(d, gid, dmac);
	if (v4) {
		for (int i = 0; i < d->bvd->cfg.ndev; i++)
			if (!memcmp(&d->bvd->cfg.dev[i].ip.s_addr, gid + 12, 4)) {
				memcpy(dmac, d->bvd->cfg.dev[i].mac, 6);
				return 0;
			}
	}
	if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80)
		return EHOSTUNREACH; /* a link-local address that is no EUI-64: no neighbours here */
	dmac[0] = 0x02;
	dmac[1] = 0x00;
	memcpy(dmac + 2, gid + 12, 4);
	return 0;
}

int cx4d_ah_resolve(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_resolve_ah_req *req = q->in;
	struct cx4_resolve_ah_rsp *rsp = q->r->payload;
	int v2, err;
	uint8_t sgid[16];

	if (q->len != sizeof(*req))
		return EINVAL;
	if (!cx4d_obj_get(cl, req->pd_handle, CX4D_OBJ_PD))
		return EINVAL;
	if (!req->ah.is_global || (req->ah.port_num && req->ah.port_num != 1))
		return EINVAL;	/* RoCE: a GRH is mandatory (mlx5_ib_create_ah) */
	err = cx4d_gid_get(d, req->ah.sgid_index, sgid, &v2);
	if (err)
		return err;
	memset(rsp, 0, sizeof(*rsp));
	err = cx4d_resolve_dmac(d, req->ah.dgid, rsp->dmac);
	if (err)
		return err;
	rsp->gid_type = v2;
	q->r->len = sizeof(*rsp);
	return 0;
}
