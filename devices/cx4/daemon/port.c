// SPDX-License-Identifier: MIT
/*
 * Device and port attributes from what the device answers, as mlx5_ib_query_device() and
 * mlx5_query_port_roce() compute them (Linux drivers/infiniband/hw/mlx5/main.c):
 * capabilities from QUERY_HCA_CAP, the port from QUERY_VPORT_STATE, PMTU and PTYS, the
 * RoCE GID table programmed with SET_ROCE_ADDRESS, the port's traffic from
 * QUERY_VPORT_COUNTER (as mlx5_ib reads the counters of a RoCE port). Link changes come as
 * PORT_CHANGE events (eq.c), which make us read the state again.
 *
 * The GID table is the one mlx5 builds for a RoCE port with one IPv4 address (and the one
 * bvctl writes to sysfs): 0 fe80::EUI-64 v1, 1 the same v2, 2 ::ffff:ip v1, 3 the same v2.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "bvd_attr.h"
#include "cx4d.h"

#define CX4D_GIDS	BV_GID_TBL_LEN

/* rdma-core mlx5 / Linux mlx5_ib: the largest data-carrying WQE we let clients build */
#define MAX_INLINE	512

static int access_reg(struct cx4d *d, uint16_t reg, uint16_t op_mod, uint8_t *data, size_t len)
{
	uint8_t in[CX4_ACCESS_REG_IN_SIZE + 0x40] = { 0 }, out[CX4_ACCESS_REG_OUT_SIZE + 0x40];
	uint8_t st;
	int err;

	if (len > 0x40)
		return EINVAL;
	cx4d_cmd_set_header(in, CX4_CMD_OP_ACCESS_REG, op_mod);
	cx4_set(in, CX4_ACCESS_REG_IN_REGISTER_ID, reg);
	memcpy(in + CX4_ACCESS_REG_IN_DATA, data, len);
	err = cx4d_cmd_quiet(d, in, CX4_ACCESS_REG_IN_SIZE + len, out,
			     CX4_ACCESS_REG_OUT_SIZE + len, &st);
	if (!err)
		memcpy(data, out + CX4_ACCESS_REG_OUT_DATA, len);
	return err;
}

/* Linux iboe_get_mtu(): what is left of an Ethernet MTU for the IB payload. */
static uint32_t iboe_mtu(int mtu)
{
	mtu -= 40 + 8 + 12 + 4 + 28 + 4;	/* GRH, UDP, BTH, XRC ext, AtomicETH, ICRC */
	if (mtu >= 4096)
		return IBV_MTU_4096;
	if (mtu >= 2048)
		return IBV_MTU_2048;
	if (mtu >= 1024)
		return IBV_MTU_1024;
	if (mtu >= 512)
		return IBV_MTU_512;
	if (mtu >= 256)
		return IBV_MTU_256;
	return 0;
}

/* Linux mlx5_ib translate_eth_proto_oper(): lane speed and width of the link. */
static void eth_speed(uint32_t oper, uint8_t *speed, uint8_t *width)
{
	static const struct { int bit; uint8_t speed, width; } t[] = {
		{ CX4_LINK_MODE_1000BASE_CX_SGMII, 1, 1 },	/* SDR 1X */
		{ CX4_LINK_MODE_1000BASE_KX, 1, 1 },
		{ CX4_LINK_MODE_10GBASE_CX4, 2, 2 },		/* DDR 4X */
		{ CX4_LINK_MODE_10GBASE_KX4, 2, 2 },
		{ CX4_LINK_MODE_10GBASE_KR, 16, 1 },		/* QDR 1X */
		{ CX4_LINK_MODE_10GBASE_CR, 16, 1 },
		{ CX4_LINK_MODE_10GBASE_SR, 16, 1 },
		{ CX4_LINK_MODE_10GBASE_ER, 16, 1 },
		{ CX4_LINK_MODE_20GBASE_KR2, 4, 2 },		/* QDR 4X */
		{ CX4_LINK_MODE_40GBASE_CR4, 4, 2 },
		{ CX4_LINK_MODE_40GBASE_KR4, 4, 2 },
		{ CX4_LINK_MODE_40GBASE_SR4, 4, 2 },
		{ CX4_LINK_MODE_40GBASE_LR4, 4, 2 },
		{ CX4_LINK_MODE_56GBASE_R4, 8, 2 },		/* FDR10 4X */
		{ CX4_LINK_MODE_25GBASE_CR, 32, 1 },		/* EDR 1X */
		{ CX4_LINK_MODE_25GBASE_KR, 32, 1 },
		{ CX4_LINK_MODE_25GBASE_SR, 32, 1 },
		{ CX4_LINK_MODE_50GBASE_CR2, 32, 4 },		/* EDR 2X... mlx5: HDR 1X */
		{ CX4_LINK_MODE_50GBASE_KR2, 32, 4 },
		{ CX4_LINK_MODE_50GBASE_SR2, 32, 4 },
		{ CX4_LINK_MODE_100GBASE_CR4, 32, 2 },		/* EDR 4X */
		{ CX4_LINK_MODE_100GBASE_SR4, 32, 2 },
		{ CX4_LINK_MODE_100GBASE_KR4, 32, 2 },
		{ CX4_LINK_MODE_100GBASE_LR4, 32, 2 },
	};

	*speed = 1;
	*width = 1;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (oper & (1u << t[i].bit)) {
			*speed = t[i].speed;
			*width = t[i].width;
		}
}

void cx4d_port_refresh(struct cx4d *d)
{
	uint8_t in[CX4_QUERY_VPORT_STATE_IN_SIZE] = { 0 }, out[CX4_QUERY_VPORT_STATE_OUT_SIZE];
	uint8_t reg[0x40];
	uint8_t st;

	if (d->dead) {
		d->port_state = IBV_PORT_DOWN;
		return;
	}
	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_VPORT_STATE, CX4_VPORT_STATE_OPMOD_VNIC_VPORT);
	if (!cx4d_cmd_quiet(d, in, sizeof(in), out, sizeof(out), &st))
		d->port_state = cx4_get(out, CX4_QUERY_VPORT_STATE_OUT_STATE) == CX4_VPORT_STATE_UP ?
				IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	memset(reg, 0, sizeof(reg));
	cx4_set(reg, CX4_PMTU_LOCAL_PORT, 1);
	if (!access_reg(d, CX4_REG_PMTU, CX4_ACCESS_REG_OPMOD_READ, reg, CX4_PMTU_SIZE)) {
		d->max_mtu_bytes = cx4_get(reg, CX4_PMTU_MAX_MTU);
		d->oper_mtu_bytes = cx4_get(reg, CX4_PMTU_OPER_MTU);
	}
	memset(reg, 0, sizeof(reg));
	cx4_set(reg, CX4_PTYS_LOCAL_PORT, 1);
	cx4_set(reg, CX4_PTYS_PROTO_MASK, CX4_PTYS_PROTO_EN);
	if (!access_reg(d, CX4_REG_PTYS, CX4_ACCESS_REG_OPMOD_READ, reg, CX4_PTYS_SIZE))
		d->eth_proto_oper = cx4_get(reg, CX4_PTYS_ETH_PROTO_OPER);
}

size_t cx4d_port_status(struct cx4d *d, char *buf, size_t len)
{
	uint8_t in[CX4_QUERY_VPORT_COUNTER_IN_SIZE] = { 0 };
	uint8_t *out;
	uint8_t st;
	int n;

	if (d->dead || !cx4_get(d->cap_gen, CX4_CAP_GEN_VPORT_COUNTERS))
		return 0;
	out = calloc(1, CX4_QUERY_VPORT_COUNTER_OUT_SIZE);
	if (!out)
		return 0;
	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_VPORT_COUNTER, 0);
	if (cx4d_cmd_quiet(d, in, sizeof(in), out, CX4_QUERY_VPORT_COUNTER_OUT_SIZE, &st)) {
		free(out);
		return 0;
	}
#define CNT(c, what) (unsigned long long)cx4_get64(out, CX4_VPORT_CNT_##what(CX4_VPORT_CNT_##c))
	n = snprintf(buf, len,
		     "  port 1 counters (QUERY_VPORT_COUNTER): tx %llu packets %llu bytes, rx %llu "
		     "packets %llu bytes, rx errors %llu, tx errors %llu\n",
		     CNT(TRANSMITTED_IB_UNICAST, PACKETS), CNT(TRANSMITTED_IB_UNICAST, OCTETS),
		     CNT(RECEIVED_IB_UNICAST, PACKETS), CNT(RECEIVED_IB_UNICAST, OCTETS),
		     CNT(RECEIVED_ERRORS, PACKETS), CNT(TRANSMIT_ERRORS, PACKETS));
#undef CNT
	free(out);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

static void eui64_gid(const uint8_t mac[6], uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 0x02;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

/* Entry `index` of the port's GID table (see the top of this file). */
static void gid_of(struct cx4d *d, unsigned int index, uint8_t gid[16])
{
	if (index < 2) {
		eui64_gid(d->mac, gid);
	} else {
		memset(gid, 0, 16);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &d->conf->ip.s_addr, 4);
	}
}

int cx4d_gid_get(struct cx4d *d, unsigned int index, uint8_t gid[16], int *roce_v2)
{
	if (index >= d->gid_tbl_len || !(d->gid_valid & (1u << index)))
		return EINVAL;
	gid_of(d, index, gid);
	if (roce_v2)
		*roce_v2 = index & 1;
	return 0;
}

/* Linux mlx5_core_roce_gid_set(): one SET_ROCE_ADDRESS per GID table entry. */
static int set_roce_address(struct cx4d *d, unsigned int index)
{
	uint8_t in[CX4_SET_ROCE_ADDRESS_IN_SIZE] = { 0 }, out[CX4_SET_ROCE_ADDRESS_OUT_SIZE];
	uint8_t *a = in + CX4_SET_ROCE_ADDRESS_IN_ADDR;
	uint8_t gid[16];
	int v2 = index & 1;

	gid_of(d, index, gid);
	cx4d_cmd_set_header(in, CX4_CMD_OP_SET_ROCE_ADDRESS, 0);
	cx4_set(in, CX4_SET_ROCE_ADDRESS_IN_INDEX, index);
	cx4_set(in, CX4_SET_ROCE_ADDRESS_IN_VHCA_PORT_NUM, 1);
	cx4_set_bytes(a, CX4_ROCE_ADDR_SOURCE_L3_OFF, gid, 16);
	cx4_set(a, CX4_ROCE_ADDR_SOURCE_MAC_47_32, d->mac[0] << 8 | d->mac[1]);
	cx4_set(a, CX4_ROCE_ADDR_SOURCE_MAC_31_0, (uint32_t)d->mac[2] << 24 | d->mac[3] << 16 |
						  d->mac[4] << 8 | d->mac[5]);
	cx4_set(a, CX4_ROCE_ADDR_ROCE_L3_TYPE, index < 2 ? CX4_ROCE_L3_TYPE_IPV6 :
							   CX4_ROCE_L3_TYPE_IPV4);
	cx4_set(a, CX4_ROCE_ADDR_ROCE_VERSION, v2 ? CX4_ROCE_VERSION_2 : CX4_ROCE_VERSION_1);
	return cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

/*
 * The port as mlx5_ib brings up a RoCE port: the MAC from the NIC vport context, RoCE
 * enabled in it (mlx5_nic_vport_enable_roce), the GID table programmed, state read.
 */
int cx4d_port_init(struct cx4d *d)
{
	uint8_t *in, out[CX4_MODIFY_NIC_VPORT_CONTEXT_OUT_SIZE];
	uint8_t qin[CX4_QUERY_NIC_VPORT_CONTEXT_IN_SIZE] = { 0 };
	uint8_t qout[CX4_QUERY_NIC_VPORT_CONTEXT_OUT_SIZE];
	const uint8_t *ctx = qout + CX4_QUERY_NIC_VPORT_CONTEXT_OUT_CTX;
	static const uint8_t zero[6];
	uint32_t hi, lo;
	unsigned int tbl;
	int err;

	if (cx4_get(d->cap_gen, CX4_CAP_GEN_PORT_TYPE) != CX4_CAP_PORT_TYPE_ETH ||
	    !cx4_get(d->cap_gen, CX4_CAP_GEN_ROCE) || !d->have_roce_cap) {
		cx4d_log(d, "port 1 is not a RoCE port (port_type %u, roce %u)",
			 cx4_get(d->cap_gen, CX4_CAP_GEN_PORT_TYPE),
			 cx4_get(d->cap_gen, CX4_CAP_GEN_ROCE));
		return EOPNOTSUPP;
	}
	cx4d_cmd_set_header(qin, CX4_CMD_OP_QUERY_NIC_VPORT_CONTEXT, 0);
	err = cx4d_cmd(d, qin, sizeof(qin), qout, sizeof(qout));
	if (err)
		return err;
	hi = cx4_get(ctx, CX4_NIC_VPORT_PERM_MAC_47_32);
	lo = cx4_get(ctx, CX4_NIC_VPORT_PERM_MAC_31_0);
	d->mac[0] = hi >> 8;
	d->mac[1] = hi;
	d->mac[2] = lo >> 24;
	d->mac[3] = lo >> 16;
	d->mac[4] = lo >> 8;
	d->mac[5] = lo;
	if (!memcmp(d->mac, zero, 6))
		memcpy(d->mac, d->conf->mac, 6);	/* no burnt-in address: the configured one */

	if (!cx4_get(ctx, CX4_NIC_VPORT_ROCE_EN)) {
		in = calloc(1, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_SIZE);
		if (!in)
			return ENOMEM;
		cx4d_cmd_set_header(in, CX4_CMD_OP_MODIFY_NIC_VPORT_CONTEXT, 0);
		cx4_set(in, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_FIELD_SELECT, CX4_NIC_VPORT_SEL_ROCE_EN);
		cx4_set(in + CX4_MODIFY_NIC_VPORT_CONTEXT_IN_CTX, CX4_NIC_VPORT_ROCE_EN, 1);
		err = cx4d_cmd(d, in, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_SIZE, out, sizeof(out));
		free(in);
		if (err)
			return err;
	}
	tbl = cx4_get(d->cap_roce, CX4_CAP_ROCE_ADDRESS_TABLE_SIZE);
	d->gid_tbl_len = tbl < CX4D_GIDS ? tbl : CX4D_GIDS;
	if (d->gid_tbl_len < CX4D_GIDS)
		cx4d_log(d, "RoCE address table has %u entries, sysfs lists %u", tbl, CX4D_GIDS);
	/*
	 * Like the kernel's GID cache, program only the entries whose RoCE version and L3 type
	 * the device supports (roce_cap.roce_version: bit 0 v1, bit 2 v2; l3_type: bit 1 IPv4,
	 * bit 2 IPv6; Linux MLX5_ROCE_VERSION_*_CAP, MLX5_ROCE_L3_TYPE_*_CAP). The others stay
	 * invalid in the device; a QP naming one is refused.
	 */
	for (unsigned int i = 0; i < d->gid_tbl_len; i++) {
		unsigned int ver = cx4_get(d->cap_roce, CX4_CAP_ROCE_ROCE_VERSION);
		unsigned int l3 = cx4_get(d->cap_roce, CX4_CAP_ROCE_L3_TYPE);
		bool v2 = i & 1, ipv4 = i >= 2;

		if (!(ver & (v2 ? 4 : 1)) || !(l3 & (ipv4 ? 2 : 4)))
			continue;
		err = set_roce_address(d, i);
		if (err)
			return err;
		d->gid_valid |= 1u << i;
	}
	if (!d->gid_valid) {
		cx4d_log(d, "the device supports none of the GID types of the port");
		return EOPNOTSUPP;
	}
	d->port_state = IBV_PORT_DOWN;
	cx4d_port_refresh(d);
	return 0;
}

static int log_cap(struct cx4d *d, cx4_fld_t f)
{
	return cx4_get(d->cap_gen, f);
}

int cx4d_query_device(struct bvd *b, struct bv_device_attr *a)
{
	struct cx4d *d = cx4d_of(b);
	int max_rq_sg, max_sq_sg;
	uint32_t ops, sizes;

	bvd_default_device_attr(b->conf, a);
	if (!d || !d->hca_state)
		return EIO;
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%u.%u.%04u", d->fw_major, d->fw_minor, d->fw_sub);
	a->vendor_part_id = BV_PART_CX4;
	a->hw_ver = 0;
	a->max_mr_size = ~0ull;
	a->page_size_cap = ~((1ull << (log_cap(d, CX4_CAP_GEN_LOG_PG_SZ) ?: 12)) - 1) & 0xfffff000u;
	a->max_qp = 1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_QP);
	a->max_qp_wr = 1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_QP_SZ);
	a->device_cap_flags = IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_RC_RNR_NAK_GEN;
	if (log_cap(d, CX4_CAP_GEN_PKV))
		a->device_cap_flags |= IBV_DEVICE_BAD_PKEY_CNTR;
	if (log_cap(d, CX4_CAP_GEN_QKV))
		a->device_cap_flags |= IBV_DEVICE_BAD_QKEY_CNTR;
	/* mlx5_ib: data segments that fit the largest receive / send WQE */
	max_rq_sg = log_cap(d, CX4_CAP_GEN_MAX_WQE_SZ_RQ) / 16;
	max_sq_sg = (log_cap(d, CX4_CAP_GEN_MAX_WQE_SZ_SQ) - 16 - 16) / 16;
	a->max_sge = max_rq_sg < max_sq_sg ? max_rq_sg : max_sq_sg;
	a->max_sge_rd = a->max_sge;
	a->max_cq = 1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_CQ);
	a->max_cqe = (1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_CQ_SZ)) - 1;
	a->max_mr = 1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_MKEY);
	a->max_pd = 1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_PD);
	a->max_qp_rd_atom = 1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_RA_RES_QP);
	a->max_qp_init_rd_atom = 1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_RA_REQ_QP);
	a->max_res_rd_atom = (int32_t)((int64_t)a->max_qp_rd_atom * a->max_qp > INT_MAX ?
				       INT_MAX : a->max_qp_rd_atom * a->max_qp);
	a->max_srq = 1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_SRQ);
	a->max_srq_wr = (1 << log_cap(d, CX4_CAP_GEN_LOG_MAX_SRQ_SZ)) - 1;
	a->max_srq_sge = max_rq_sg - 1;	/* the first 16 bytes are the next-WQE segment */
	a->max_ah = INT_MAX;
	a->max_pkeys = 1;		/* RoCE: the default pkey (sysfs pkeys/0) */
	a->local_ca_ack_delay = log_cap(d, CX4_CAP_GEN_LOCAL_CA_ACK_DELAY);
	a->phys_port_cnt = log_cap(d, CX4_CAP_GEN_NUM_PORTS);
	/*
	 * Upstream mlx5_ib get_atomic_caps(): IB_ATOMIC_HCA when the device does 8-byte compare
	 * & swap and fetch & add and replies in host order (we asked for it at bring-up).
	 */
	ops = cx4_get(d->cap_atomic, CX4_CAP_ATOMIC_OPERATIONS);
	sizes = cx4_get(d->cap_atomic, CX4_CAP_ATOMIC_SIZE_QP);
	if (log_cap(d, CX4_CAP_GEN_ATOMIC) && d->have_atomic_cap &&
	    (ops & (CX4_ATOMIC_OPS_CMP_SWAP | CX4_ATOMIC_OPS_FETCH_ADD)) ==
		    (CX4_ATOMIC_OPS_CMP_SWAP | CX4_ATOMIC_OPS_FETCH_ADD) &&
	    (sizes & 8) &&
	    cx4_get(d->cap_atomic, CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE) == 1)
		a->atomic_cap = IBV_ATOMIC_HCA;
	else
		a->atomic_cap = IBV_ATOMIC_NONE;
	a->device_cap_flags_ex = a->device_cap_flags;
	if (cx4_get(d->cap_gen, CX4_CAP_GEN_DEVICE_FREQUENCY_KHZ)) {
		a->hca_core_clock = cx4_get(d->cap_gen, CX4_CAP_GEN_DEVICE_FREQUENCY_KHZ);
		a->completion_timestamp_mask = 0x7fffffffffffffffull;
	}
	a->max_inline_data = MAX_INLINE;
	return 0;
}

/* The port's active MTU (enum ibv_mtu) from the last refresh, limited by the configuration. */
uint32_t cx4d_active_mtu(struct cx4d *d)
{
	struct bv_port_attr a;
	uint32_t mtu = d->oper_mtu_bytes ? iboe_mtu((int)d->oper_mtu_bytes - 22) : 0;

	bvd_default_port_attr(d->conf, &a);
	return mtu && mtu < a.active_mtu ? mtu : a.active_mtu;
}

int cx4d_query_port(struct bvd *b, unsigned int port, struct bv_port_attr *a)
{
	struct cx4d *d = cx4d_of(b);
	uint8_t speed, width;

	if (!d || port < 1 || port > (unsigned int)log_cap(d, CX4_CAP_GEN_NUM_PORTS))
		return EINVAL;
	bvd_default_port_attr(b->conf, a);
	cx4d_port_refresh(d);
	a->state = d->port_state;
	a->phys_state = d->port_state == IBV_PORT_ACTIVE ? 5 : 3;	/* LinkUp / Disabled */
	a->max_mtu = IBV_MTU_4096;
	/* the Ethernet MTU the port runs (PMTU, frame bytes incl. 22 of L2) less RoCE headers */
	a->active_mtu = cx4d_active_mtu(d);
	a->gid_tbl_len = d->gid_tbl_len;
	a->max_msg_sz = 1u << log_cap(d, CX4_CAP_GEN_LOG_MAX_MSG);
	a->pkey_tbl_len = 1;
	if (d->eth_proto_oper) {
		eth_speed(d->eth_proto_oper, &speed, &width);
		a->active_speed = speed;
		a->active_width = width;
	}
	return 0;
}
