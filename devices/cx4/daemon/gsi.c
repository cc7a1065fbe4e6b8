// SPDX-License-Identifier: MIT
/*
 * The GSI agent: port 1's QP1, created and driven by cx4d the way Linux's MAD layer drives
 * the GSI QP mlx5_ib creates for it (drivers/infiniband/hw/mlx5/gsi.c, core/mad.c), carrying
 * the connection manager's MADs (devices/common/cm, the bvd_cm_transport "GSI QP1").
 *
 * Like any driver, cx4d talks to the device only through commands, WQEs, doorbells and CQEs:
 *
 *   QUERY_SPECIAL_CONTEXTS  the reserved lkey: buffers addressed by IOVA, for privileged QPs
 *   ALLOC_PD, CREATE_CQ     a PD and one CQ (send and receive) on completion EQ 0
 *   CREATE_QP st=QP1        RQ of 2^7 one-segment WQEs (GRH + MAD each), SQ of 2^7 WQEBBs,
 *                           rlky set; RST2INIT (Q_Key 0x80010000, P_Key index 0), INIT2RTR,
 *                           RTR2RTS, all on the daemon's own UAR page
 *   send                    ctrl + datagram (address vector to QP1 of the destination GID) +
 *                           one data segment of the 256-byte MAD; doorbell record, then the
 *                           UAR doorbell (BlueFlame register 0)
 *   receive                 CQE -> the GRH (for RoCE v2 the IPv4 header in its last 20 bytes)
 *                           tells the sender's GID, the MAD goes to bvd_cm_recv(), the WQE is
 *                           posted again
 *
 * The device delivers every datagram for QPN 1 with Q_Key 0x80010000 here ([IBTA] 13.4.6.1);
 * what it carries is checked by the CM (cm_mad.c), not here.
 */
#include <errno.h>
#include <string.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "bvd_attr.h"
#include "bvd_cm.h"
#include "cx4d.h"
#include "ib_cm_mad.h"

#define GSI_LOG_RQ	7
#define GSI_LOG_SQ	7		/* WQEBBs; a MAD send takes 2 (80 bytes of segments) */
#define GSI_LOG_CQ	9
#define GSI_RQ		(1u << GSI_LOG_RQ)
#define GSI_SQ_BBS	(1u << GSI_LOG_SQ)
#define GSI_SEND_BBS	2
#define GSI_SENDS	(GSI_SQ_BBS / GSI_SEND_BBS)
#define GSI_GRH		40
#define GSI_RECV_SLOT	512		/* GRH + MAD, rounded up */
#define GSI_SEND_SLOT	IB_MAD_SIZE
#define GSI_RQ_STRIDE	16		/* one data segment */

/* flags_rqpn of a RoCE receive CQE (Linux mlx5_ib cq.c): L3 header type */
#define CQE_L3_TYPE(flags)	(((flags) >> 24) & 3)
#define CQE_L3_IPV4		2

static void gsi_down(struct cx4d *d);

static int special_lkey(struct cx4d *d, uint32_t *lkey)
{
	uint8_t in[CX4_QUERY_SPECIAL_CONTEXTS_IN_SIZE] = { 0 };
	uint8_t out[CX4_QUERY_SPECIAL_CONTEXTS_OUT_SIZE];
	int err;

	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_SPECIAL_CONTEXTS, 0);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (!err)
		*lkey = cx4_get(out, CX4_QUERY_SPECIAL_CONTEXTS_OUT_RESD_LKEY);
	return err;
}

static int create_cq(struct cx4d *d, struct cx4d_gsi *g)
{
	uint8_t in[CX4_CREATE_CQ_IN_SIZE + 8] = { 0 }, out[CX4_CREATE_CQ_OUT_SIZE];
	uint8_t *cqc = in + CX4_CREATE_CQ_IN_CQC;
	int err;

	err = cx4d_dma_alloc(d, (size_t)64 << GSI_LOG_CQ, &g->cqbuf);
	if (err)
		return err;
	for (unsigned int i = 0; i < (1u << GSI_LOG_CQ); i++)
		g->cqbuf.va[i * 64 + 63] = MLX5_CQE_INVALID << 4;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_CQ, 0);
	cx4_set(cqc, CX4_CQC_CQE_SZ, CX4_CQC_CQE_SZ_64);
	cx4_set(cqc, CX4_CQC_LOG_CQ_SIZE, GSI_LOG_CQ);
	cx4_set(cqc, CX4_CQC_UAR_PAGE, d->uar);
	cx4_set(cqc, CX4_CQC_C_EQN, d->eq_comp[0].eqn);
	cx4_set(cqc, CX4_CQC_LOG_PAGE_SIZE, cx4d_pas_log_page(g->cqbuf.len));
	cx4_set64(cqc, CX4_CQC_DBR_ADDR, g->dbr.iova);
	cx4_pas_set(in, CX4_CREATE_CQ_IN_PAS, 0, g->cqbuf.iova);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (!err)
		g->cqn = cx4_get(out, CX4_CREATE_CQ_OUT_CQN);
	return err;
}

static int qp_modify(struct cx4d *d, uint16_t opcode, uint32_t qpn, const uint8_t *qpc)
{
	uint8_t in[CX4_MODIFY_QP_IN_SIZE] = { 0 }, out[CX4_MODIFY_QP_OUT_SIZE];

	cx4d_cmd_set_header(in, opcode, 0);
	cx4_set(in, CX4_MODIFY_QP_IN_QPN, qpn);
	memcpy(in + CX4_MODIFY_QP_IN_QPC, qpc, CX4_QPC_SIZE);
	return cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

static int create_qp(struct cx4d *d, struct cx4d_gsi *g)
{
	uint8_t in[CX4_CREATE_QP_IN_SIZE + 8] = { 0 }, out[CX4_CREATE_QP_OUT_SIZE];
	uint8_t *qpc = in + CX4_CREATE_QP_IN_QPC, ctx[CX4_QPC_SIZE];
	size_t rq_bytes = GSI_RQ * GSI_RQ_STRIDE;
	int err;

	err = cx4d_dma_alloc(d, rq_bytes + (size_t)MLX5_SEND_WQE_BB * GSI_SQ_BBS, &g->qbuf);
	if (err)
		return err;
	g->sq = g->qbuf.va + rq_bytes;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_QP, 0);
	cx4_set(qpc, CX4_QPC_ST, CX4_QP_ST_QP1);
	cx4_set(qpc, CX4_QPC_PM_STATE, CX4_QP_PM_MIGRATED);
	cx4_set(qpc, CX4_QPC_PD, g->pdn);
	cx4_set(qpc, CX4_QPC_UAR_PAGE, d->uar);
	cx4_set(qpc, CX4_QPC_RLKY, 1);
	cx4_set(qpc, CX4_QPC_LOG_RQ_SIZE, GSI_LOG_RQ);
	cx4_set(qpc, CX4_QPC_LOG_RQ_STRIDE, 0);	/* 16 << 0 bytes */
	cx4_set(qpc, CX4_QPC_RQ_TYPE, CX4_QP_RQ_TYPE_REGULAR);
	cx4_set(qpc, CX4_QPC_LOG_SQ_SIZE, GSI_LOG_SQ);
	cx4_set(qpc, CX4_QPC_CQN_SND, g->cqn);
	cx4_set(qpc, CX4_QPC_CQN_RCV, g->cqn);
	cx4_set(qpc, CX4_QPC_LOG_PAGE_SIZE, cx4d_pas_log_page(g->qbuf.len));
	cx4_set64(qpc, CX4_QPC_DBR_ADDR, g->dbr.iova + 64);
	cx4_pas_set(in, CX4_CREATE_QP_IN_PAS, 0, g->qbuf.iova);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	g->qpn = cx4_get(out, CX4_CREATE_QP_OUT_QPN);
	g->has_qp = true;

	/* RST -> INIT: QP1's Q_Key and the port (mlx5_ib GSI: IB_QP1_QKEY) */
	memset(ctx, 0, sizeof(ctx));
	cx4_set(ctx, CX4_QPC_ST, CX4_QP_ST_QP1);
	cx4_set(ctx, CX4_QPC_PM_STATE, CX4_QP_PM_MIGRATED);
	cx4_set(ctx, CX4_QPC_Q_KEY, IB_GSI_QKEY);
	cx4_set(ctx, CX4_QPC_CQN_SND, g->cqn);
	cx4_set(ctx, CX4_QPC_CQN_RCV, g->cqn);
	cx4_set(ctx + CX4_QPC_PRIMARY_ADDRESS_PATH, CX4_ADS_VHCA_PORT_NUM, 1);
	cx4_set(ctx + CX4_QPC_PRIMARY_ADDRESS_PATH, CX4_ADS_PKEY_INDEX, 0);
	err = qp_modify(d, CX4_CMD_OP_RST2INIT_QP, g->qpn, ctx);
	if (err)
		return err;
	/* INIT -> RTR -> RTS: a datagram QP needs no path, only its message size and PSN */
	cx4_set(ctx, CX4_QPC_MTU, CX4_QP_MTU_4096);
	cx4_set(ctx, CX4_QPC_LOG_MSG_MAX, 12);
	err = qp_modify(d, CX4_CMD_OP_INIT2RTR_QP, g->qpn, ctx);
	if (!err)
		err = qp_modify(d, CX4_CMD_OP_RTR2RTS_QP, g->qpn, ctx);
	return err;
}

static volatile uint32_t *dbrec(struct cx4d_gsi *g, unsigned int word)
{
	return (volatile uint32_t *)(g->dbr.va + word * 4);
}

/* Hand receive WQE `slot` to the device again (the doorbell record says how many are). */
static void post_recv(struct cx4d_gsi *g, unsigned int slot)
{
	struct mlx5_wqe_data_seg *seg =
		(struct mlx5_wqe_data_seg *)(g->qbuf.va + (size_t)slot * GSI_RQ_STRIDE);
	uint64_t addr = g->mem.iova + (size_t)slot * GSI_RECV_SLOT;

	seg->byte_count = htobe32(GSI_RECV_SLOT);
	seg->lkey = htobe32(g->lkey);
	seg->addr = htobe64(addr);
	g->rq_head++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/* QP doorbell record: word 0 receive counter (dbr page offset 64) */
	dbrec(g, 16)[0] = htobe32(g->rq_head & 0xffff);
}

static void arm_cq(struct cx4d *d, struct cx4d_gsi *g)
{
	uint32_t sn = g->arm_sn & 3, ci = g->cq_ci & 0xffffff;
	uint32_t db[2] = { htobe32(sn << 28 | CX4_CQ_DB_REQ_NOT | ci), htobe32(g->cqn) };
	uint64_t v;

	dbrec(g, 1)[0] = db[0];
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(&v, db, sizeof(v));
	cx4_mmio_write64_be(&d->uar_mmio, CX4_UAR_CQ_DOORBELL, v);
}

int cx4d_gsi_up(struct cx4d *d)
{
	struct cx4d_gsi *g = &d->gsi;
	uint8_t in[CX4_ALLOC_PD_IN_SIZE] = { 0 }, out[CX4_ALLOC_PD_OUT_SIZE];
	int err;

	memset(g, 0, sizeof(*g));
	err = special_lkey(d, &g->lkey);
	if (err)
		goto fail;
	cx4d_cmd_set_header(in, CX4_CMD_OP_ALLOC_PD, 0);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		goto fail;
	g->pdn = cx4_get(out, CX4_ALLOC_PD_OUT_PD);
	g->has_pd = true;
	err = cx4d_dma_alloc(d, CX4D_PAGE, &g->dbr);
	if (!err)
		err = cx4d_dma_alloc(d, (size_t)GSI_RECV_SLOT * GSI_RQ +
				     (size_t)GSI_SEND_SLOT * GSI_SENDS, &g->mem);
	if (!err)
		err = create_cq(d, g);
	if (err)
		goto fail;
	g->has_cq = true;
	err = create_qp(d, g);
	if (err)
		goto fail;
	for (unsigned int i = 0; i < GSI_RQ; i++)
		post_recv(g, i);
	arm_cq(d, g);
	g->up = true;
	cx4d_log(d, "GSI: QP1 is QP 0x%x (PD 0x%x, CQ 0x%x), reserved lkey 0x%x", g->qpn, g->pdn,
		 g->cqn, g->lkey);
	return 0;
fail:
	cx4d_log(d, "GSI: cannot create QP1: %s", strerror(err));
	gsi_down(d);
	return err;
}

static void gsi_down(struct cx4d *d)
{
	struct cx4d_gsi *g = &d->gsi;

	g->up = false;
	if (!d->dead) {
		if (g->has_qp) {
			uint8_t in[CX4_DESTROY_QP_IN_SIZE] = { 0 }, out[CX4_QP_NOCTX_OUT_SIZE];

			cx4d_cmd_set_header(in, CX4_CMD_OP_2RST_QP, 0);
			cx4_set(in, CX4_QP_NOCTX_IN_QPN, g->qpn);
			cx4d_cmd(d, in, CX4_QP_2RST_IN_SIZE, out, sizeof(out));
			cx4d_cmd_set_header(in, CX4_CMD_OP_DESTROY_QP, 0);
			cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
		}
		if (g->has_cq) {
			uint8_t in[CX4_DESTROY_CQ_IN_SIZE] = { 0 }, out[CX4_DESTROY_CQ_OUT_SIZE];

			cx4d_cmd_set_header(in, CX4_CMD_OP_DESTROY_CQ, 0);
			cx4_set(in, CX4_DESTROY_CQ_IN_CQN, g->cqn);
			cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
		}
		if (g->has_pd) {
			uint8_t in[CX4_DEALLOC_PD_IN_SIZE] = { 0 }, out[CX4_DEALLOC_PD_OUT_SIZE];

			cx4d_cmd_set_header(in, CX4_CMD_OP_DEALLOC_PD, 0);
			cx4_set(in, CX4_DEALLOC_PD_IN_PD, g->pdn);
			cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
		}
	}
	cx4d_dma_free(d, &g->qbuf);
	cx4d_dma_free(d, &g->cqbuf);
	cx4d_dma_free(d, &g->mem);
	cx4d_dma_free(d, &g->dbr);
	g->has_qp = g->has_cq = g->has_pd = false;
}

void cx4d_gsi_down(struct cx4d *d)
{
	if (d->gsi.up || d->gsi.has_pd)
		gsi_down(d);
}

/* The sender of a received datagram, from the GRH the device wrote in front of it. */
static void parse_grh(const uint8_t *grh, uint32_t flags, struct bvd_cm_rx *rx)
{
	memset(rx->sgid, 0, 16);
	memset(rx->dgid, 0, 16);
	if (CQE_L3_TYPE(flags) == CQE_L3_IPV4) {
		/* RoCE v2 over IPv4: the IPv4 header fills the last 20 bytes ([IBTA] A17.4.5.1) */
		const uint8_t *ip = grh + GSI_GRH - 20;

		rx->sgid[10] = rx->sgid[11] = 0xff;
		memcpy(rx->sgid + 12, ip + 12, 4);
		rx->dgid[10] = rx->dgid[11] = 0xff;
		memcpy(rx->dgid + 12, ip + 16, 4);
		rx->traffic_class = ip[1];
		rx->hop_limit = ip[8];
		rx->flow_label = 0;
	} else {
		uint32_t w0 = cx4_be32_load(grh);

		rx->traffic_class = (uint8_t)(w0 >> 20);
		rx->flow_label = w0 & 0xfffff;
		rx->hop_limit = grh[7];
		memcpy(rx->sgid, grh + 8, 16);
		memcpy(rx->dgid, grh + 24, 16);
	}
}

static void recv_done(struct cx4d *d, struct cx4d_gsi *g, const struct mlx5_cqe64 *cqe)
{
	unsigned int slot = be16toh(cqe->wqe_counter) & (GSI_RQ - 1);
	uint32_t len = be32toh(cqe->byte_cnt);
	const uint8_t *buf = g->mem.va + (size_t)slot * GSI_RECV_SLOT;
	struct bvd_cm_rx rx = { 0 };

	g->rx++;
	if (len >= GSI_GRH) {
		parse_grh(buf, be32toh(cqe->flags_rqpn), &rx);
		rx.src_qpn = be32toh(cqe->flags_rqpn) & 0xffffff;
		rx.pkey = IB_DEFAULT_PKEY;
		rx.mad = buf + GSI_GRH;
		rx.len = len - GSI_GRH;
		/* the CM checks what it got: a short or foreign datagram is dropped and counted */
		bvd_cm_recv(d->bvd, &rx);
	}
	post_recv(g, slot);
}

static struct mlx5_cqe64 *next_cqe(struct cx4d_gsi *g)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(g->cqbuf.va +
						       (size_t)(g->cq_ci & ((1u << GSI_LOG_CQ) - 1)) * 64);
	uint8_t op_own = *(volatile uint8_t *)&cqe->op_own;

	if ((op_own >> 4) == MLX5_CQE_INVALID ||
	    (op_own & MLX5_CQE_OWNER_MASK) != !!(g->cq_ci & (1u << GSI_LOG_CQ)))
		return NULL;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return cqe;
}

/* A completion event for the GSI CQ: take every CQE, then arm again. */
void cx4d_gsi_cq_event(struct cx4d *d)
{
	struct cx4d_gsi *g = &d->gsi;
	struct mlx5_cqe64 *cqe;

	if (!g->up)
		return;
	g->arm_sn++;
	while ((cqe = next_cqe(g))) {
		uint8_t op = cqe->op_own >> 4;

		if (op == MLX5_CQE_REQ) {
			/* everything up to the WQE this names has gone out */
			g->sq_ci = (uint16_t)(be16toh(cqe->wqe_counter) + GSI_SEND_BBS);
		} else if (op == MLX5_CQE_RESP_SEND) {
			recv_done(d, g, cqe);
		} else if (op == MLX5_CQE_REQ_ERR) {
			g->tx_err++;
			g->sq_ci = (uint16_t)(be16toh(cqe->wqe_counter) + GSI_SEND_BBS);
		} else {
			/* a receive in error (MLX5_CQE_RESP_ERR): the WQE is consumed, repost it */
			g->rx_err++;
			post_recv(g, be16toh(cqe->wqe_counter) & (GSI_RQ - 1));
		}
		g->cq_ci++;
	}
	dbrec(g, 0)[0] = htobe32(g->cq_ci & 0xffffff);
	arm_cq(d, g);
}

/* ---- the CM's transport ----------------------------------------------------------------------- */

static int gsi_port(struct bvd *b, struct bvd_cm_port *p)
{
	struct cx4d *d = cx4d_of(b);
	struct bv_device_attr a;
	int v2;

	memset(p, 0, sizeof(*p));
	/* port events keep the state; ask the device only while it looks down */
	if (d->port_state != IBV_PORT_ACTIVE)
		cx4d_port_refresh(d);
	p->active = d->gsi.up && d->port_state == IBV_PORT_ACTIVE && !d->dead;
	/* the RoCE v2 GIDs of the table bvctl writes (port.c: 1 link-local, 3 IPv4); the CM
	 * needs the IPv4 one, the link-local one only for IPv6 link-local addresses */
	if (cx4d_gid_get(d, 3, p->gid, &v2))
		p->active = false;
	if (cx4d_gid_get(d, 1, p->gid6, &v2))
		memset(p->gid6, 0, 16);
	p->gid_index = 3;
	p->gid6_index = 1;
	p->mtu = (uint8_t)cx4d_active_mtu(d);
	if (!cx4d_query_device(b, &a)) {
		p->ack_delay = a.local_ca_ack_delay;
		p->max_rd_atomic = (uint8_t)(a.max_qp_rd_atom < 255 ? a.max_qp_rd_atom : 255);
		p->ca_guid = a.node_guid;
	}
	return 0;
}

static int gsi_send(struct bvd *b, const struct bvd_cm_av *av, const void *mad, size_t len)
{
	struct cx4d *d = cx4d_of(b);
	struct cx4d_gsi *g = &d->gsi;
	unsigned int idx = g->sq_pi & (GSI_SQ_BBS - 1), slot = idx / GSI_SEND_BBS;
	uint8_t *wqe = g->sq + (size_t)idx * MLX5_SEND_WQE_BB, dmac[6];
	struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *)wqe;
	struct mlx5_wqe_datagram_seg *dg = (struct mlx5_wqe_datagram_seg *)(wqe + 16);
	struct mlx5_wqe_data_seg *data = (struct mlx5_wqe_data_seg *)(wqe + 64);
	uint8_t *buf = g->mem.va + (size_t)GSI_RECV_SLOT * GSI_RQ + (size_t)slot * GSI_SEND_SLOT;
	uint64_t db;
	int err;

	if (!g->up || len > GSI_SEND_SLOT)
		return EINVAL;
	if ((uint16_t)(g->sq_pi - g->sq_ci) > GSI_SQ_BBS - GSI_SEND_BBS) {
		g->tx_full++;
		return ENOBUFS;		/* lost, as a MAD is lost on a full send queue */
	}
	err = cx4d_resolve_dmac(d, av->dgid, dmac);
	if (err)
		return err;
	memcpy(buf, mad, len);
	memset(wqe, 0, (size_t)MLX5_SEND_WQE_BB * GSI_SEND_BBS);
	ctrl->opmod_idx_opcode = htobe32(((uint32_t)(g->sq_pi & 0xffff) << 8) | MLX5_OPCODE_SEND);
	ctrl->qpn_ds = htobe32(g->qpn << 8 | 5);	/* 16 ctrl + 48 datagram + 16 data */
	ctrl->fm_ce_se = MLX5_WQE_CTRL_CQ_UPDATE;
	/* the address vector of QP1 behind the destination GID (rdma-core mlx5 create_ah) */
	dg->av.key.qkey.qkey = htobe32(IB_GSI_QKEY);
	dg->av.dqp_dct = htobe32(IB_GSI_QPN | MLX5_EXTENDED_UD_AV);
	dg->av.rlid = htobe16((uint16_t)(0xc000 | (g->qpn & 0x3fff)));	/* RoCE v2 UDP sport */
	memcpy(dg->av.rmac, dmac, 6);
	dg->av.tclass = av->traffic_class;
	dg->av.hop_limit = av->hop_limit ? av->hop_limit : 64;
	dg->av.grh_gid_fl = htobe32((uint32_t)av->sgid_index << 20 | (av->flow_label & 0xfffff));
	memcpy(dg->av.rgid, av->dgid, 16);
	data->byte_count = htobe32((uint32_t)len);
	data->lkey = htobe32(g->lkey);
	data->addr = htobe64(g->mem.iova + (uint64_t)(buf - g->mem.va));
	g->sq_pi = (uint16_t)(g->sq_pi + GSI_SEND_BBS);
	/* WQE, then the doorbell record, then the doorbell (rdma-core mlx5 post_send) */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	dbrec(g, 16)[1] = htobe32(g->sq_pi);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(&db, ctrl, sizeof(db));
	cx4_mmio_write64_be(&d->uar_mmio, CX4_UAR_BF_OFFSET, db);
	g->tx++;
	return 0;
}

const struct bvd_cm_transport cx4d_gsi_transport = {
	.name = "GSI QP1",
	.port = gsi_port,
	.send = gsi_send,
};

size_t cx4d_gsi_status(struct cx4d *d, char *buf, size_t len)
{
	struct cx4d_gsi *g = &d->gsi;

	if (!g->up)
		return (size_t)snprintf(buf, len, "  GSI: QP1 not up\n");
	return (size_t)snprintf(buf, len,
				"  GSI: QP1 = QP 0x%x: %llu MADs in, %llu out; %llu send errors, "
				"%llu receive errors, %llu lost on a full send queue\n",
				g->qpn, (unsigned long long)g->rx, (unsigned long long)g->tx,
				(unsigned long long)g->tx_err, (unsigned long long)g->rx_err,
				(unsigned long long)g->tx_full);
}
