// SPDX-License-Identifier: MIT
/*
 * HCA capabilities (QUERY_HCA_CAP / SET_HCA_CAP; [ifc] cmd_hca_cap, atomic_caps, roce_cap).
 *
 * The values start from the real ConnectX-4 Lx FW 14.12.1220 answers in the Linux trace
 * (its QUERY_HCA_CAP outputs: tests/cx4/trace_decode.py show 6/7/16/18) and differ where the model
 * does not implement a feature: a capability bit is set only if the model does what it
 * promises. docs/cx4-model.md lists every difference from the trace. One table per type:
 * field, maximum, current default, and whether SET_HCA_CAP may change it.
 */
#include <string.h>

#include "model.h"

struct capf {
	cx4_fld_t f;
	uint32_t max, cur;
	uint8_t set; /* 0 read-only, 1 settable up to max, 2 settable to 0 or max */
};

/* General device capabilities (type 0). [trace] value in the comment when we differ. */
static const struct capf gen[] = {
    {CX4_CAP_GEN_LOG_MAX_SRQ_SZ, 0x0f, 0x0f, 0},
    {CX4_CAP_GEN_LOG_MAX_QP_SZ, 0x0f, 0x0f, 0},
    {CX4_CAP_GEN_LOG_MAX_QP, 0x17, 0x0e, 1}, /* Linux sets 0x11 */
    {CX4_CAP_GEN_LOG_MAX_SRQ, 0x17, 0x17, 0},
    {CX4_CAP_GEN_LOG_MAX_CQ_SZ, 0x16, 0x16, 0},
    {CX4_CAP_GEN_LOG_MAX_CQ, 0x18, 0x18, 0},
    {CX4_CAP_GEN_LOG_MAX_EQ_SZ, 0x16, 0x16, 0},
    {CX4_CAP_GEN_LOG_MAX_MKEY, 0x18, 0x18, 0},
    {CX4_CAP_GEN_LOG_MAX_EQ, 8, 8, 0},
    {CX4_CAP_GEN_MAX_INDIRECTION, 4, 4, 0},
    {CX4_CAP_GEN_LOG_MAX_MRW_SZ, 0x40, 0x40, 0},
    /* KLM/BSF lists [trace 0x10/0x10], DC [4/4]: not modelled */
    {CX4_CAP_GEN_LOG_MAX_RA_REQ_QP, 4, 4, 0},
    {CX4_CAP_GEN_LOG_MAX_RA_RES_QP, 4, 4, 0},
    /* end_pad, cc_query/modify [trace 1]: not modelled; gid_table_size [4/0]: Ethernet */
    {CX4_CAP_GEN_VPORT_COUNTERS, 1, 1, 0}, /* QUERY_VPORT_COUNTER (vport.c) */
    /* max_qp_cnt [0xff] (Q counters), pkey_table_size [5/0]: not modelled */
    {CX4_CAP_GEN_LOCAL_CA_ACK_DELAY, 0x10, 0x10, 0},
    {CX4_CAP_GEN_PORT_TYPE, CX4_CAP_PORT_TYPE_ETH, CX4_CAP_PORT_TYPE_ETH, 0},
    {CX4_CAP_GEN_NUM_PORTS, 1, 1, 0},
    {CX4_CAP_GEN_LOG_MAX_MSG, 0x1e, 0x1e, 0},
    {CX4_CAP_GEN_STAT_RATE_SUPPORT, 1, 1, 0},
    {CX4_CAP_GEN_CQE_VERSION, 1, 1, 0},
    {CX4_CAP_GEN_CMDIF_CHECKSUM, 3, 0, 2},
    /* wq_signature, sctr_data_cqe, eth_net_offloads, striding_rq, compact AV [1]: no */
    {CX4_CAP_GEN_ROCE, 1, 1, 0},
    {CX4_CAP_GEN_ATOMIC, 1, 1, 0},
    {CX4_CAP_GEN_CQ_OI, 1, 1, 0},
    {CX4_CAP_GEN_CQ_MODERATION, 1, 1, 0},
    {CX4_CAP_GEN_CQ_EQ_REMAP, 1, 1, 0},
    {CX4_CAP_GEN_CQ_RESIZE, 1, 1, 0},
    /* [trace 0]: memory windows (UMR binds) are modelled; newer firmware reports it */
    {CX4_CAP_GEN_IMAICL, 1, 1, 0},
    /* block_lb_mc, scqe_break, cq_period_start_from_cqe, cd, apm, qkv, pkv,
     * xrc [trace 1]: not modelled */
    {CX4_CAP_GEN_UD, 1, 1, 0},
    {CX4_CAP_GEN_UC, 1, 1, 0},
    {CX4_CAP_GEN_RC, 1, 1, 0},
    {CX4_CAP_GEN_UAR_SZ, 5, 5, 0},
    {CX4_CAP_GEN_LOG_PG_SZ, 0x0c, 0x0c, 0},
    {CX4_CAP_GEN_BF, 1, 1, 0},
    {CX4_CAP_GEN_LOG_BF_REG_SIZE, 9, 9, 0},
    {CX4_CAP_GEN_MAX_WQE_SZ_SQ, 0x400, 0x400, 0},
    {CX4_CAP_GEN_MAX_WQE_SZ_RQ, 0x200, 0x200, 0},
    /* max_wqe_sz_sq_dc [0x100], max_qp_mcg [0x30], log_max_mcg [0x15]: not modelled */
    {CX4_CAP_GEN_LOG_MAX_TRANSPORT_DOMAIN, 0x10, 0x10, 0},
    {CX4_CAP_GEN_LOG_MAX_PD, 0x18, 0x18, 0},
    /* xrcd, Ethernet RQ/SQ/TIR/TIS/RMP/RQT, vport lists, l2 table [trace]: not modelled */
    {CX4_CAP_GEN_LOG_UAR_PAGE_SZ, 0, 0, 1}, /* [trace max 8]: 4 KB UARs only */
    {CX4_CAP_GEN_DEVICE_FREQUENCY_MHZ, 0x113, 0x113, 0},
    /* cqe_compression [1]: not modelled */
};

/* RoCE capabilities (type 4). */
#define ROCE_CAP_L3_ALL 0x7 /* GRH, IPv4, IPv6 */
#define ROCE_CAP_L3_IP 0x6  /* IPv4, IPv6: no medium for the GRH of RoCE v1 */
#define ROCE_CAP_V1_V2 0x5
#define ROCE_CAP_V2 0x4
static const struct capf roce[] = {
    /* ads.udp_sport honoured when set (Linux/rdma-core set it when max says so) */
    {CX4_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT, 1, 0, 1},
    /*
     * [trace 7/7]: l3_type bit 0 GRH, 1 IPv4, 2 IPv6; roce_version bit 0 v1, 1 v1.5, 2 v2.
     * The model: IPv4 and IPv6, v2 and (with an Ethernet medium, fill()) v1; no v1.5.
     */
    {CX4_CAP_ROCE_L3_TYPE, ROCE_CAP_L3_ALL, ROCE_CAP_L3_ALL, 0},
    {CX4_CAP_ROCE_ROCE_VERSION, ROCE_CAP_V1_V2, ROCE_CAP_V1_V2, 0},
    {CX4_CAP_ROCE_R_ROCE_DEST_UDP_PORT, ROCE_V2_UDP_PORT, ROCE_V2_UDP_PORT, 0},
    {CX4_CAP_ROCE_R_ROCE_MAX_SRC_UDP_PORT, 0xffff, 0xffff, 0},
    {CX4_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT, 0xc000, 0xc000, 0},
    {CX4_CAP_ROCE_ADDRESS_TABLE_SIZE, 256, 256, 0},
};

/* Atomic capabilities (type 3). */
static const struct capf atomic[] = {
    /*
     * Mode 0: 8-byte atomic responses are written big-endian; mode 1: in host order
     * ([ifc] atomic_caps). The [trace] FW supports only 0; the model also offers 1, which
     * upstream mlx5_ib needs to report IB_ATOMIC_HCA.
     */
    {CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE, 1, 0, 1},
    {CX4_CAP_ATOMIC_SUPPORTED_8B_ENDIANNESS_MODE_1, 1, 1, 0},
    /* [trace 0xf / 0x3c]: CAS and FA on 8 bytes; masked and multi-size not modelled */
    {CX4_CAP_ATOMIC_OPERATIONS, CX4_ATOMIC_OPS_CMP_SWAP | CX4_ATOMIC_OPS_FETCH_ADD,
     CX4_ATOMIC_OPS_CMP_SWAP | CX4_ATOMIC_OPS_FETCH_ADD, 0},
    {CX4_CAP_ATOMIC_SIZE_QP, 1u << 3, 1u << 3, 0},
};

static const struct capf *table(unsigned int type, size_t *n)
{
	switch (type) {
	case CX4_CAP_GENERAL:
		*n = sizeof(gen) / sizeof(gen[0]);
		return gen;
	case CX4_CAP_ATOMIC:
		*n = sizeof(atomic) / sizeof(atomic[0]);
		return atomic;
	case CX4_CAP_ROCE:
		*n = sizeof(roce) / sizeof(roce[0]);
		return roce;
	default:
		*n = 0;
		return NULL;
	}
}

int cx4m_caps_boot_slot(unsigned int type)
{
	switch (type) {
	case CX4_CAP_GENERAL:
		return 0;
	case CX4_CAP_ATOMIC:
		return 1;
	case CX4_CAP_ROCE:
		return 2;
	default:
		return -1;
	}
}

static int fill(const struct mdev *d, unsigned int type, uint8_t *page, bool max)
{
	size_t n;
	const struct capf *t = table(type, &n);

	if (!t)
		return -1;
	memset(page, 0, CX4_HCA_CAP_SIZE);
	for (size_t i = 0; i < n; i++)
		cx4_set(page, t[i].f, max ? t[i].max : t[i].cur);
	/*
	 * RoCE v1 frames need an Ethernet medium (a cable, or an Ethernet net device); a port
	 * whose only medium is UDP over the loopback says so, and its driver lists no such GID.
	 */
	if (type == CX4_CAP_ROCE && !cx4m_net_has_ethernet(d)) {
		cx4_set(page, CX4_CAP_ROCE_L3_TYPE, ROCE_CAP_L3_IP);
		cx4_set(page, CX4_CAP_ROCE_ROCE_VERSION, ROCE_CAP_V2);
	}
	return 0;
}

int cx4m_caps_max(const struct mdev *d, unsigned int type, uint8_t *page)
{
	return fill(d, type, page, true);
}

int cx4m_caps_cur_default(const struct mdev *d, unsigned int type, uint8_t *page)
{
	return fill(d, type, page, false);
}

/*
 * SET_HCA_CAP: the driver sends a whole page, normally the current one with a few fields
 * changed (Linux handle_hca_cap: log_max_qp, pkey_table_size, cmdif_checksum,
 * log_uar_page_sz; rdma-core also sets fields newer FW has). Settable fields are checked
 * against the maximum; the firmware ignores the rest of the page, keeping its values.
 */
int cx4m_caps_set_check(const struct mdev *d, unsigned int type, const uint8_t *cur,
			const uint8_t *in, uint8_t *out_new, uint32_t *synd)
{
	size_t n;
	const struct capf *t = table(type, &n);

	(void)d;
	memcpy(out_new, cur, CX4_HCA_CAP_SIZE);
	for (size_t i = 0; i < n; i++) {
		uint32_t v = cx4_get(in, t[i].f);

		if (!t[i].set || v == cx4_get(cur, t[i].f))
			continue;
		if ((t[i].set == 1 && v > t[i].max) || (t[i].set == 2 && v != 0 && v != t[i].max)) {
			*synd = MSYND(CX4_CMD_OP_SET_HCA_CAP, 0x100 + i);
			return CX4_CMD_STAT_BAD_PARAM_ERR;
		}
		cx4_set(out_new, t[i].f, v);
	}
	return CX4_CMD_STAT_OK;
}
