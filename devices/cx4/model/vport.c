// SPDX-License-Identifier: MIT
/*
 * The Ethernet port and its vport ([PRM] "Port Registers", "NIC Vport", "RoCE"):
 * ACCESS_REG (HOST_ENDIANNESS, PAOS, PTYS, PMTU), QUERY_VPORT_STATE, QUERY_VPORT_COUNTER,
 * QUERY/MODIFY_NIC_VPORT_CONTEXT, QUERY/SET_ROCE_ADDRESS, QUERY_HCA_VPORT_GID.
 *
 * The port is up when its admin status is up (PAOS), the cable is in (the model's control,
 * outside the function: cx4_model_ctl.h)
 * and the HCA is initialised; a change raises PORT_CHANGE (sub-type 4 active / 1 down).
 * RoCE traffic flows only while the NIC vport context has roce_en set, as on the card, where
 * mlx5_ib (and rdma-core's VFIO driver) set it with MODIFY_NIC_VPORT_CONTEXT at start.
 * The RoCE address table (the GID table of an Ethernet port, 256 entries) lives in two boot
 * pages of ICM. Each entry's roce_version and l3_type give the network type of the packets
 * that leave from it; an entry no medium of the port can carry is refused (cx4m_net_gid_set).
 */
#include <arpa/inet.h>
#include <string.h>

#include "model.h"

#define OP(x) CX4_CMD_OP_##x
#define REG_SYND(reg, n) MSYND(CX4_CMD_OP_ACCESS_REG, ((reg)&0xff) << 4 | (n))
#define ETH_OVERHEAD 22 /* Linux mlx5e: hw_mtu = sw_mtu + ETH_HLEN + VLAN_HLEN + FCS */

/* Recompute the operational state; post PORT_CHANGE when it changed. */
void cx4m_port_update(struct mdev *d)
{
	uint8_t oper = (d->port_admin == CX4_PORT_STATUS_UP && d->link_cable && d->hca == MHCA_INIT)
			   ? CX4_PORT_STATUS_UP
			   : CX4_PORT_STATUS_DOWN;

	if (oper == d->port_oper)
		return;
	d->port_oper = oper;
	cx4m_eq_post_port_change(d, oper == CX4_PORT_STATUS_UP ? CX4_PORT_CHANGE_SUBTYPE_ACTIVE
							       : CX4_PORT_CHANGE_SUBTYPE_DOWN);
}

static uint32_t eth_proto(const struct mdev *d)
{
	/* CX4: 100GBASE-CR4 (Snabb's card); CX4 Lx: 25GBASE-CR (the [trace] card's class) */
	return 1u << (d->prof->pci_device == CX4_PCI_DEVICE_CX4 ? CX4_LINK_MODE_100GBASE_CR4
								: CX4_LINK_MODE_25GBASE_CR);
}

static int reg_access(struct mdev *d, struct mcmd *c, uint16_t reg, uint32_t size,
		      const uint8_t *in, uint8_t *out)
{
	bool write = c->op_mod == CX4_ACCESS_REG_OPMOD_WRITE;

	if (c->ilen < CX4_ACCESS_REG_IN_DATA + size)
		return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, REG_SYND(reg, 1));
	if (c->olen < CX4_ACCESS_REG_OUT_DATA + size)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OUTP_LEN_ERR, REG_SYND(reg, 2));
	switch (reg) {
	case CX4_REG_HOST_ENDIANNESS:
		if (write)
			d->host_endianness = (uint8_t)cx4_get(in, CX4_HOST_ENDIANNESS_HE);
		cx4_set(out, CX4_HOST_ENDIANNESS_HE, d->host_endianness);
		return CX4_CMD_STAT_OK;
	case CX4_REG_PAOS:
		if (cx4_get(in, CX4_PAOS_LOCAL_PORT) != 1)
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, REG_SYND(reg, 3));
		if (write && cx4_get(in, CX4_PAOS_ASE)) {
			uint32_t a = cx4_get(in, CX4_PAOS_ADMIN_STATUS);

			if (a != CX4_PORT_STATUS_UP && a != CX4_PORT_STATUS_DOWN)
				return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, REG_SYND(reg, 4));
			d->port_admin = (uint8_t)a;
			cx4m_port_update(d);
		}
		cx4_set(out, CX4_PAOS_LOCAL_PORT, 1);
		cx4_set(out, CX4_PAOS_ADMIN_STATUS, d->port_admin);
		cx4_set(out, CX4_PAOS_OPER_STATUS, d->port_oper);
		return CX4_CMD_STAT_OK;
	case CX4_REG_PTYS:
		if (cx4_get(in, CX4_PTYS_LOCAL_PORT) != 1 ||
		    !(cx4_get(in, CX4_PTYS_PROTO_MASK) & CX4_PTYS_PROTO_EN))
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, REG_SYND(reg, 5));
		/* One fixed speed: writes of eth_proto_admin are accepted and change nothing. */
		cx4_set(out, CX4_PTYS_LOCAL_PORT, 1);
		cx4_set(out, CX4_PTYS_PROTO_MASK, CX4_PTYS_PROTO_EN);
		cx4_set(out, CX4_PTYS_ETH_PROTO_CAPABILITY, eth_proto(d));
		cx4_set(out, CX4_PTYS_ETH_PROTO_ADMIN, eth_proto(d));
		cx4_set(out, CX4_PTYS_ETH_PROTO_OPER,
			d->port_oper == CX4_PORT_STATUS_UP ? eth_proto(d) : 0);
		return CX4_CMD_STAT_OK;
	case CX4_REG_PMTU: {
		uint32_t max = d->cfg.mtu + ETH_OVERHEAD;

		if (cx4_get(in, CX4_PMTU_LOCAL_PORT) != 1)
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, REG_SYND(reg, 6));
		if (write) {
			uint32_t a = cx4_get(in, CX4_PMTU_ADMIN_MTU);

			if (a > max || (a && a < 256 + ETH_OVERHEAD))
				return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, REG_SYND(reg, 7));
			d->admin_mtu = a;
			d->port_mtu = (a ? a : max) - ETH_OVERHEAD;
		}
		cx4_set(out, CX4_PMTU_LOCAL_PORT, 1);
		cx4_set(out, CX4_PMTU_MAX_MTU, max);
		cx4_set(out, CX4_PMTU_ADMIN_MTU, d->admin_mtu ? d->admin_mtu : max);
		cx4_set(out, CX4_PMTU_OPER_MTU, d->port_mtu + ETH_OVERHEAD);
		return CX4_CMD_STAT_OK;
	}
	default:
		/* PPCNT, PCAM, PFCC... are not modelled */
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, REG_SYND(reg, 0xf));
	}
}

static int access_reg(struct mdev *d, struct mcmd *c)
{
	uint16_t reg = (uint16_t)cx4_get(c->in, CX4_ACCESS_REG_IN_REGISTER_ID);
	uint8_t in[0x40] = {0}, out[0x40] = {0};
	uint32_t size;
	int st;

	if (c->op_mod > CX4_ACCESS_REG_OPMOD_READ)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, REG_SYND(reg, 0));
	switch (reg) {
	case CX4_REG_HOST_ENDIANNESS:
		size = CX4_HOST_ENDIANNESS_SIZE;
		break;
	case CX4_REG_PAOS:
		size = CX4_PAOS_SIZE;
		break;
	case CX4_REG_PTYS:
		size = CX4_PTYS_SIZE;
		break;
	case CX4_REG_PMTU:
		size = CX4_PMTU_SIZE;
		break;
	default:
		size = 0;
		break;
	}
	if (size && c->ilen >= CX4_ACCESS_REG_IN_DATA + size)
		memcpy(in, c->in + CX4_ACCESS_REG_IN_DATA, size);
	st = reg_access(d, c, reg, size, in, out);
	if (st)
		return st;
	memcpy(c->out + CX4_ACCESS_REG_OUT_DATA, out, size);
	return CX4_CMD_STAT_OK;
}

static int query_vport_state(struct mdev *d, struct mcmd *c)
{
	if (c->op_mod != CX4_VPORT_STATE_OPMOD_VNIC_VPORT)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(OP(QUERY_VPORT_STATE), 1));
	if (cx4_get(c->in, CX4_QUERY_VPORT_STATE_IN_OTHER_VPORT) ||
	    cx4_get(c->in, CX4_QUERY_VPORT_STATE_IN_VPORT_NUMBER))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(QUERY_VPORT_STATE), 2));
	cx4_set(c->out, CX4_QUERY_VPORT_STATE_OUT_ADMIN_STATE,
		d->port_admin == CX4_PORT_STATUS_UP ? CX4_VPORT_STATE_UP : CX4_VPORT_STATE_DOWN);
	cx4_set(c->out, CX4_QUERY_VPORT_STATE_OUT_STATE,
		d->port_oper == CX4_PORT_STATUS_UP ? CX4_VPORT_STATE_UP : CX4_VPORT_STATE_DOWN);
	return CX4_CMD_STAT_OK;
}

/*
 * The vport's traffic counters. Every RoCE packet is an IB unicast one (no multicast QPs, no
 * raw Ethernet traffic: those counters stay 0, as on a card carrying only RoCE): sent =
 * packets that left the port, received = datagrams the port took (those dropped later for a
 * QP or PSN reason included), octets = the RoCE packet, BTH through ICRC (the UDP payload).
 * received_errors = datagrams dropped as malformed (bad ICRC, truncated, bad framing),
 * transmit_errors = packets not sent (port down, RoCE disabled); their octets are not counted
 * (0). docs/cx4-model.md, "Counters".
 */
static int query_vport_counter(struct mdev *d, struct mcmd *c)
{
	const struct cx4_model_stats *s = &d->stats, *b = &d->vport_cnt_base;
	uint8_t *o = c->out;

	if (c->op_mod)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(OP(QUERY_VPORT_COUNTER), 1));
	if (cx4_get(c->in, CX4_QUERY_VPORT_COUNTER_IN_OTHER_VPORT) ||
	    cx4_get(c->in, CX4_QUERY_VPORT_COUNTER_IN_VPORT_NUMBER) ||
	    cx4_get(c->in, CX4_QUERY_VPORT_COUNTER_IN_PORT_NUM) > 1)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(QUERY_VPORT_COUNTER), 2));
	cx4_set64(o, CX4_VPORT_CNT_PACKETS(CX4_VPORT_CNT_RECEIVED_ERRORS),
		  s->rx_drop_icrc - b->rx_drop_icrc);
	cx4_set64(o, CX4_VPORT_CNT_PACKETS(CX4_VPORT_CNT_TRANSMIT_ERRORS),
		  s->tx_dropped - b->tx_dropped);
	cx4_set64(o, CX4_VPORT_CNT_PACKETS(CX4_VPORT_CNT_RECEIVED_IB_UNICAST),
		  s->rx_pkts - b->rx_pkts);
	cx4_set64(o, CX4_VPORT_CNT_OCTETS(CX4_VPORT_CNT_RECEIVED_IB_UNICAST),
		  s->rx_bytes - b->rx_bytes);
	cx4_set64(o, CX4_VPORT_CNT_PACKETS(CX4_VPORT_CNT_TRANSMITTED_IB_UNICAST),
		  s->tx_pkts - b->tx_pkts);
	cx4_set64(o, CX4_VPORT_CNT_OCTETS(CX4_VPORT_CNT_TRANSMITTED_IB_UNICAST),
		  s->tx_bytes - b->tx_bytes);
	if (cx4_get(c->in, CX4_QUERY_VPORT_COUNTER_IN_CLEAR))
		d->vport_cnt_base = d->stats;
	return CX4_CMD_STAT_OK;
}

static int vport_store(struct mdev *d)
{
	return cx4m_icm_page_rw(d, d->icm.boot_page[ICM_BOOT_VPORT], 0, d->nic_vport_ctx,
				CX4_NIC_VPORT_CTX_SIZE, true);
}

/* The vport context as after INIT_HCA: MTU of the port, the permanent MAC, RoCE off. */
void cx4m_vport_init(struct mdev *d)
{
	uint8_t *v = d->nic_vport_ctx;

	memset(v, 0, CX4_NIC_VPORT_CTX_SIZE);
	cx4_set(v, CX4_NIC_VPORT_MTU, d->port_mtu + ETH_OVERHEAD);
	cx4_set(v, CX4_NIC_VPORT_PERM_MAC_47_32, (uint32_t)d->mac[0] << 8 | d->mac[1]);
	cx4_set(v, CX4_NIC_VPORT_PERM_MAC_31_0,
		(uint32_t)d->mac[2] << 24 | (uint32_t)d->mac[3] << 16 | (uint32_t)d->mac[4] << 8 |
		    d->mac[5]);
	/* node/port GUID: EUI-64 of the MAC, as mlx5 firmware derives them */
	cx4_set64(v, CX4_NIC_VPORT_NODE_GUID,
		  (uint64_t)d->mac[0] << 56 | (uint64_t)d->mac[1] << 48 |
		      (uint64_t)d->mac[2] << 40 | 0xfffeull << 24 | (uint64_t)d->mac[3] << 16 |
		      (uint64_t)d->mac[4] << 8 | d->mac[5]);
	cx4_set64(v, CX4_NIC_VPORT_PORT_GUID, cx4_get64(v, CX4_NIC_VPORT_NODE_GUID));
	cx4_set64(v, CX4_NIC_VPORT_SYSTEM_IMAGE_GUID, cx4_get64(v, CX4_NIC_VPORT_NODE_GUID));
	vport_store(d);
}

static int query_nic_vport_context(struct mdev *d, struct mcmd *c)
{
	if (cx4_get(c->in, CX4_QUERY_NIC_VPORT_CONTEXT_IN_OTHER_VPORT) ||
	    cx4_get(c->in, CX4_QUERY_NIC_VPORT_CONTEXT_IN_VPORT_NUMBER))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
				MSYND(OP(QUERY_NIC_VPORT_CONTEXT), 1));
	if (cx4m_icm_page_rw(d, d->icm.boot_page[ICM_BOOT_VPORT], 0,
			     c->out + CX4_QUERY_NIC_VPORT_CONTEXT_OUT_CTX, CX4_NIC_VPORT_CTX_SIZE,
			     false))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(QUERY_NIC_VPORT_CONTEXT), 2));
	return CX4_CMD_STAT_OK;
}

static int modify_nic_vport_context(struct mdev *d, struct mcmd *c)
{
	const uint8_t *in = c->in + CX4_MODIFY_NIC_VPORT_CONTEXT_IN_CTX;
	uint32_t sel = cx4_get(c->in, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_FIELD_SELECT);
	uint8_t *v = d->nic_vport_ctx;
	const uint32_t known = CX4_NIC_VPORT_SEL_ROCE_EN | CX4_NIC_VPORT_SEL_PERMANENT_ADDRESS |
			       CX4_NIC_VPORT_SEL_PROMISC | CX4_NIC_VPORT_SEL_MTU |
			       CX4_NIC_VPORT_SEL_MIN_INLINE | CX4_NIC_VPORT_SEL_PORT_GUID |
			       CX4_NIC_VPORT_SEL_NODE_GUID | CX4_NIC_VPORT_SEL_DISABLE_MC_LOCAL_LB |
			       CX4_NIC_VPORT_SEL_DISABLE_UC_LOCAL_LB;

	if (cx4_get(c->in, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_OTHER_VPORT) ||
	    cx4_get(c->in, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_VPORT_NUMBER))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
				MSYND(OP(MODIFY_NIC_VPORT_CONTEXT), 1));
	/* address lists and change events are Ethernet steering, not modelled */
	if (sel & ~known)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
				MSYND(OP(MODIFY_NIC_VPORT_CONTEXT), 2));
	if (sel & CX4_NIC_VPORT_SEL_MTU) {
		uint32_t m = cx4_get(in, CX4_NIC_VPORT_MTU);

		if (m > d->cfg.mtu + ETH_OVERHEAD || m < 256)
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
					MSYND(OP(MODIFY_NIC_VPORT_CONTEXT), 3));
		cx4_set(v, CX4_NIC_VPORT_MTU, m);
	}
	if (sel & CX4_NIC_VPORT_SEL_ROCE_EN)
		cx4_set(v, CX4_NIC_VPORT_ROCE_EN, cx4_get(in, CX4_NIC_VPORT_ROCE_EN));
	if (sel & CX4_NIC_VPORT_SEL_MIN_INLINE)
		cx4_set(v, CX4_NIC_VPORT_MIN_WQE_INLINE_MODE,
			cx4_get(in, CX4_NIC_VPORT_MIN_WQE_INLINE_MODE));
	if (sel & CX4_NIC_VPORT_SEL_DISABLE_MC_LOCAL_LB)
		cx4_set(v, CX4_NIC_VPORT_DISABLE_MC_LOCAL_LB,
			cx4_get(in, CX4_NIC_VPORT_DISABLE_MC_LOCAL_LB));
	if (sel & CX4_NIC_VPORT_SEL_DISABLE_UC_LOCAL_LB)
		cx4_set(v, CX4_NIC_VPORT_DISABLE_UC_LOCAL_LB,
			cx4_get(in, CX4_NIC_VPORT_DISABLE_UC_LOCAL_LB));
	if (sel & CX4_NIC_VPORT_SEL_PROMISC) {
		cx4_set(v, CX4_NIC_VPORT_PROMISC_UC, cx4_get(in, CX4_NIC_VPORT_PROMISC_UC));
		cx4_set(v, CX4_NIC_VPORT_PROMISC_MC, cx4_get(in, CX4_NIC_VPORT_PROMISC_MC));
		cx4_set(v, CX4_NIC_VPORT_PROMISC_ALL, cx4_get(in, CX4_NIC_VPORT_PROMISC_ALL));
	}
	if (sel & CX4_NIC_VPORT_SEL_PERMANENT_ADDRESS) {
		cx4_set(v, CX4_NIC_VPORT_PERM_MAC_47_32, cx4_get(in, CX4_NIC_VPORT_PERM_MAC_47_32));
		cx4_set(v, CX4_NIC_VPORT_PERM_MAC_31_0, cx4_get(in, CX4_NIC_VPORT_PERM_MAC_31_0));
	}
	if (sel & CX4_NIC_VPORT_SEL_PORT_GUID)
		cx4_set64(v, CX4_NIC_VPORT_PORT_GUID, cx4_get64(in, CX4_NIC_VPORT_PORT_GUID));
	if (sel & CX4_NIC_VPORT_SEL_NODE_GUID)
		cx4_set64(v, CX4_NIC_VPORT_NODE_GUID, cx4_get64(in, CX4_NIC_VPORT_NODE_GUID));
	if (vport_store(d))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(MODIFY_NIC_VPORT_CONTEXT), 4));
	return CX4_CMD_STAT_OK;
}

bool cx4m_vport_roce_enabled(const struct mdev *d)
{
	return d->hca == MHCA_INIT && cx4_get(d->nic_vport_ctx, CX4_NIC_VPORT_ROCE_EN);
}

/* ---- RoCE address table ---------------------------------------------------------------------- */

static int roce_rw(struct mdev *d, uint32_t idx, uint8_t *e, bool write)
{
	int32_t pg = d->icm.boot_page[ICM_BOOT_ROCE_TBL0 + idx / 128];

	return cx4m_icm_page_rw(d, pg, (idx % 128) * CX4_ROCE_ADDR_SIZE, e, CX4_ROCE_ADDR_SIZE,
				write);
}

static int query_roce_address(struct mdev *d, struct mcmd *c)
{
	uint32_t idx = cx4_get(c->in, CX4_QUERY_ROCE_ADDRESS_IN_INDEX);

	if (idx >= d->roce_tbl_size || cx4_get(c->in, CX4_QUERY_ROCE_ADDRESS_IN_VHCA_PORT_NUM) > 1)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(QUERY_ROCE_ADDRESS), 1));
	if (roce_rw(d, idx, c->out + CX4_QUERY_ROCE_ADDRESS_OUT_ADDR, false))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(QUERY_ROCE_ADDRESS), 2));
	return CX4_CMD_STAT_OK;
}

static int set_roce_address(struct mdev *d, struct mcmd *c)
{
	uint32_t idx = cx4_get(c->in, CX4_SET_ROCE_ADDRESS_IN_INDEX);
	const uint8_t *e = c->in + CX4_SET_ROCE_ADDRESS_IN_ADDR;
	static const uint8_t zero[16];
	struct mroce_addr a = {0};
	uint32_t mh, ml;

	if (idx >= d->roce_tbl_size || cx4_get(c->in, CX4_SET_ROCE_ADDRESS_IN_VHCA_PORT_NUM) > 1)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(SET_ROCE_ADDRESS), 1));
	memcpy(a.gid, e + CX4_ROCE_ADDR_SOURCE_L3_OFF, 16);
	a.valid = memcmp(a.gid, zero, 16) != 0;
	a.version = (uint8_t)cx4_get(e, CX4_ROCE_ADDR_ROCE_VERSION);
	a.l3_type = (uint8_t)cx4_get(e, CX4_ROCE_ADDR_ROCE_L3_TYPE);
	a.vlan_valid = cx4_get(e, CX4_ROCE_ADDR_VLAN_VALID);
	a.vlan = (uint16_t)cx4_get(e, CX4_ROCE_ADDR_VLAN_ID);
	mh = cx4_get(e, CX4_ROCE_ADDR_SOURCE_MAC_47_32);
	ml = cx4_get(e, CX4_ROCE_ADDR_SOURCE_MAC_31_0);
	a.mac[0] = (uint8_t)(mh >> 8);
	a.mac[1] = (uint8_t)mh;
	a.mac[2] = (uint8_t)(ml >> 24);
	a.mac[3] = (uint8_t)(ml >> 16);
	a.mac[4] = (uint8_t)(ml >> 8);
	a.mac[5] = (uint8_t)ml;
	if (a.valid) {
		int err;

		/* versions and L3 types of roce_cap: v1 and v2 (no v1.5), IPv4 and IPv6 */
		if ((a.version != CX4_ROCE_VERSION_1 && a.version != CX4_ROCE_VERSION_2) ||
		    (a.l3_type != CX4_ROCE_L3_TYPE_IPV4 && a.l3_type != CX4_ROCE_L3_TYPE_IPV6))
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
					MSYND(OP(SET_ROCE_ADDRESS), 2));
		a.net = cx4m_net_type_of(&a);
		err = cx4m_net_gid_set(d, idx, &a);
		if (err) {
			char g[INET6_ADDRSTRLEN];

			inet_ntop(AF_INET6, a.gid, g, sizeof(g));
			cx4m_mdev_log(
			    d, "RoCE address %u (%s, %s): no medium of the port carries it: %s",
			    idx, g,
			    a.net == ROCE_NET_GRH    ? "RoCE v1"
			    : a.net == ROCE_NET_IPV4 ? "RoCE v2 / IPv4"
						     : "RoCE v2 / IPv6",
			    strerror(-err));
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
					MSYND(OP(SET_ROCE_ADDRESS), 4));
		}
	} else {
		cx4m_net_gid_set(d, idx, &a);
	}
	if (roce_rw(d, idx, (uint8_t *)e, true))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(SET_ROCE_ADDRESS), 3));
	return CX4_CMD_STAT_OK;
}

/* Ethernet ports keep their GIDs in the RoCE address table; answer from it. */
static int query_hca_vport_gid(struct mdev *d, struct mcmd *c)
{
	uint32_t idx = cx4_get(c->in, CX4_QUERY_HCA_VPORT_GID_IN_GID_INDEX);
	uint32_t first = idx == 0xffff ? 0 : idx, n = idx == 0xffff ? d->roce_tbl_size : 1;

	if (cx4_get(c->in, CX4_QUERY_HCA_VPORT_GID_IN_OTHER_VPORT) ||
	    cx4_get(c->in, CX4_QUERY_HCA_VPORT_GID_IN_PORT_NUM) > 1 ||
	    (idx != 0xffff && idx >= d->roce_tbl_size))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(QUERY_HCA_VPORT_GID), 1));
	if (c->olen < CX4_QUERY_HCA_VPORT_GID_OUT_GID_OFF + 16 * n)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OUTP_LEN_ERR,
				MSYND(OP(QUERY_HCA_VPORT_GID), 2));
	cx4_set(c->out, CX4_QUERY_HCA_VPORT_GID_OUT_GIDS_NUM, n);
	for (uint32_t i = 0; i < n; i++)
		memcpy(c->out + CX4_QUERY_HCA_VPORT_GID_OUT_GID_OFF + 16 * i,
		       d->roce[first + i].gid, 16);
	return CX4_CMD_STAT_OK;
}

const struct mcmd_desc cx4m_mcmd_vport[] = {
    {OP(ACCESS_REG), MCMD_ENABLED, CX4_ACCESS_REG_IN_SIZE, CX4_ACCESS_REG_OUT_SIZE, access_reg},
    {OP(QUERY_VPORT_STATE), MCMD_INIT, CX4_QUERY_VPORT_STATE_IN_SIZE,
     CX4_QUERY_VPORT_STATE_OUT_SIZE, query_vport_state},
    {OP(QUERY_VPORT_COUNTER), MCMD_INIT, CX4_QUERY_VPORT_COUNTER_IN_SIZE,
     CX4_QUERY_VPORT_COUNTER_OUT_SIZE, query_vport_counter},
    {OP(QUERY_NIC_VPORT_CONTEXT), MCMD_INIT, CX4_QUERY_NIC_VPORT_CONTEXT_IN_SIZE,
     CX4_QUERY_NIC_VPORT_CONTEXT_OUT_SIZE, query_nic_vport_context},
    {OP(MODIFY_NIC_VPORT_CONTEXT), MCMD_INIT,
     CX4_MODIFY_NIC_VPORT_CONTEXT_IN_CTX + CX4_NIC_VPORT_CTX_SIZE,
     CX4_MODIFY_NIC_VPORT_CONTEXT_OUT_SIZE, modify_nic_vport_context},
    {OP(QUERY_ROCE_ADDRESS), MCMD_INIT, CX4_QUERY_ROCE_ADDRESS_IN_SIZE,
     CX4_QUERY_ROCE_ADDRESS_OUT_SIZE, query_roce_address},
    {OP(SET_ROCE_ADDRESS), MCMD_INIT, CX4_SET_ROCE_ADDRESS_IN_SIZE, CX4_SET_ROCE_ADDRESS_OUT_SIZE,
     set_roce_address},
    {OP(QUERY_HCA_VPORT_GID), MCMD_INIT, CX4_QUERY_HCA_VPORT_GID_IN_SIZE,
     CX4_QUERY_HCA_VPORT_GID_OUT_SIZE, query_hca_vport_gid},
    {0},
};
