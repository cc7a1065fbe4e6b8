// SPDX-License-Identifier: MIT
/*
 * Test verbs for the ConnectX-4 model (see tverbs.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tverbs.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int tdev_alloc_pd(struct tdev *t, uint32_t *pd)
{
	uint8_t o[16];
	int st = tdev_simple(t, CX4_CMD_OP_ALLOC_PD, 0, 0, 0, o);

	*pd = cx4_get(o, CX4_ALLOC_PD_OUT_PD);
	return st;
}

void tside_bringup(struct tside *s, uint32_t log_cq)
{
	T_EQ(tdev_bringup(&s->t), 0);
	T_EQ(tdev_roce_setup(&s->t), 0);
	T_EQ(tdev_alloc_pd(&s->t, &s->pd), 0);
	T_EQ(tcq_create(&s->t, &s->scq, log_cq), 0);
	T_EQ(tcq_create(&s->t, &s->rcq, log_cq), 0);
}

uint8_t tpattern(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 131 + seed * 7 + (i >> 8));
}

void tfill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = tpattern(i, seed);
}

void tcheck_pattern(const uint8_t *got, size_t n, unsigned int seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != tpattern(i, seed))
			T_FAIL("%s: byte %zu is 0x%02x, want 0x%02x", what, i, got[i],
			       tpattern(i, seed));
}

void tcheck_value(const uint8_t *got, size_t n, uint8_t v, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != v)
			T_FAIL("%s: byte %zu is 0x%02x, want 0x%02x", what, i, got[i], v);
}

/* ---- CQ ---------------------------------------------------------------------------------- */

int tcq_create(struct tdev *t, struct tcq *cq, uint32_t log)
{
	memset(cq, 0, sizeof(*cq));
	cq->log = log;
	cq->stride = 64;
	return tdev_create_cq(t, &cq->buf, &cq->dbr, log, t->eqn, &cq->cqn);
}

int tcq_create_128(struct tdev *t, struct tcq *cq, uint32_t log)
{
	memset(cq, 0, sizeof(*cq));
	cq->log = log;
	cq->stride = 128;
	return tdev_create_cq_ex(t, &cq->buf, &cq->dbr, log, t->eqn, 1, 0, &cq->cqn);
}

int tcq_poll(struct tdev *t, struct tcq *cq, uint8_t *cqe64, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	(void)t;
	for (;;) {
		volatile uint8_t *c = cq->buf.p +
				      (size_t)(cq->ci & ((1u << cq->log) - 1)) * cq->stride +
				      cq->stride - 64;
		uint8_t own = c[63];

		if ((own >> 4) != MLX5_CQE_INVALID && (own & 1) == ((cq->ci >> cq->log) & 1)) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			memcpy(cqe64, (const void *)c, 64);
			cq->ci++;
			cx4_be32_store(cq->dbr.p, cq->ci & 0xffffff);
			return 1;
		}
		if (now_ms() > end)
			return 0;
		usleep(20);
	}
}

void tcq_arm(struct tdev *t, struct tcq *cq, bool sol)
{
	uint32_t hi =
	    (cq->arm_sn & 3) << 28 | (sol ? MLX5_CQ_DB_REQ_NOT_SOL : 0) | (cq->ci & 0xffffff);
	uint8_t db[8];
	uint64_t v;

	cx4_be32_store(cq->dbr.p + 4, hi);
	cx4_be32_store(db, hi);
	cx4_be32_store(db + 4, cq->cqn);
	memcpy(&v, db, 8);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cx4_mmio_write64_be(&t->bar, t->uar * 4096u + MLX5_CQ_DOORBELL, v);
	cq->arm_sn++;
}

void tcqe_decode(const uint8_t *c, struct tcqe *e)
{
	struct mlx5_cqe64 q;
	struct mlx5_err_cqe err;

	memcpy(&q, c, sizeof(q));
	memcpy(&err, c, sizeof(err));
	e->opcode = q.op_own >> 4;
	e->se = (q.op_own >> 1) & 1;
	e->syndrome = err.syndrome;
	e->byte_cnt = be32toh(q.byte_cnt);
	e->qpn = be32toh(q.sop_drop_qpn) & 0xffffff;
	e->wqe_opcode = (uint8_t)(be32toh(q.sop_drop_qpn) >> 24);
	e->imm = q.imm_inval_pkey;
	e->flags_rqpn = be32toh(q.flags_rqpn);
	e->uidx = be32toh(q.srqn_uidx) & 0xffffff;
	e->wqe_counter = be16toh(q.wqe_counter);
}

void tcq_expect(struct tdev *t, struct tcq *cq, struct tcqe *e, int ms)
{
	uint8_t c[64];

	if (!tcq_poll(t, cq, c, ms))
		T_FAIL("no CQE on CQ 0x%x within %d ms", cq->cqn, ms);
	tcqe_decode(c, e);
}

/* ---- memory keys -------------------------------------------------------------------------- */

int tmr_reg(struct tdev *t, struct tmr *mr, size_t len, unsigned int access, int kind, uint32_t pd)
{
	size_t npages = (len + 4095) / 4096;
	uint32_t ilen = 0x110 + 8 * (uint32_t)((npages + 1) & ~1ul);
	uint8_t *in = calloc(1, ilen), out[16];
	uint8_t *mkc = in + 0x10;
	static uint8_t keybyte = 0x40;
	int st;

	memset(mr, 0, sizeof(*mr));
	mr->kind = kind;
	mr->len = npages * 4096;
	if (kind == TMR_FD) {
		if (tmem_alloc(t, mr->len, &mr->mem))
			return -ENOMEM;
		mr->buf = mr->mem.p;
		mr->iova = mr->mem.iova;
	} else {
		mr->buf =
		    mmap(NULL, mr->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mr->buf == MAP_FAILED)
			return -ENOMEM;
		mr->iova = tmem_map_va(t, mr->buf, mr->len);
		if (!mr->iova)
			return -EFAULT;
	}
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_CREATE_MKEY);
	cx4_set(mkc, CX4_MKC_ACCESS_MODE_1_0, CX4_MKC_ACCESS_MODE_MTT);
	cx4_set(mkc, CX4_MKC_UMR_EN, 1); /* the driver's UMR QP may change it (Linux reg_create) */
	cx4_set(mkc, CX4_MKC_LR, !!(access & TA_LR));
	cx4_set(mkc, CX4_MKC_LW, !!(access & TA_LW));
	cx4_set(mkc, CX4_MKC_RR, !!(access & TA_RR));
	cx4_set(mkc, CX4_MKC_RW, !!(access & TA_RW));
	cx4_set(mkc, CX4_MKC_A, !!(access & TA_A));
	cx4_set(mkc, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	cx4_set(mkc, CX4_MKC_MKEY_7_0, ++keybyte);
	cx4_set(mkc, CX4_MKC_PD, pd);
	/* verbs addresses: the region starts at the buffer's virtual address */
	cx4_set64(mkc, CX4_MKC_START_ADDR, (uint64_t)(uintptr_t)mr->buf);
	cx4_set64(mkc, CX4_MKC_LEN, mr->len);
	cx4_set(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE, (uint32_t)((npages + 1) / 2));
	cx4_set(mkc, CX4_MKC_LOG_PAGE_SIZE, 12);
	cx4_set(in, CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE,
		(uint32_t)((npages + 1) / 2));
	for (size_t i = 0; i < npages; i++)
		cx4_pas_set(
		    in, 0x110, i,
		    (mr->kind == TMR_FD ? tmem_iova(&mr->mem, 4096 * i) : mr->iova + 4096 * i) |
			CX4_MTT_READ | CX4_MTT_WRITE);
	st = tdev_cmd(t, in, ilen, out, 16);
	free(in);
	if (st)
		return st;
	mr->index = cx4_get(out, CX4_CREATE_MKEY_OUT_MKEY_INDEX);
	mr->key = mr->index << 8 | keybyte;
	return 0;
}

int tmr_dereg(struct tdev *t, struct tmr *mr)
{
	return tdev_simple(t, CX4_CMD_OP_DESTROY_MKEY, 0, mr->index, 0, NULL);
}

/* ---- SRQ ---------------------------------------------------------------------------------- */

#define SRQ_STRIDE 64 /* next segment + 3 data segments */

int tsrq_create(struct tdev *t, struct tsrq *s, uint32_t log, uint32_t pd)
{
	uint8_t in[0x110 + 8 * 16] = {0}, out[16];
	uint8_t *srqc = in + 0x10;
	size_t bytes = (size_t)SRQ_STRIDE << log;
	uint32_t npas = (uint32_t)((bytes + 4095) / 4096);
	int st;

	memset(s, 0, sizeof(*s));
	s->log = log;
	if (npas > 16 || tmem_alloc(t, bytes, &s->buf) || tmem_alloc(t, 4096, &s->dbr))
		return -ENOMEM;
	/* the free list: WQE i points to i + 1 (rdma-core mlx5 create_srq) */
	for (uint32_t i = 0; i < (1u << log); i++) {
		uint8_t *w = s->buf.p + (size_t)i * SRQ_STRIDE;

		w[2] = (uint8_t)(((i + 1) & ((1u << log) - 1)) >> 8);
		w[3] = (uint8_t)((i + 1) & ((1u << log) - 1));
	}
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_CREATE_SRQ);
	cx4_set(srqc, CX4_SRQC_LOG_SRQ_SIZE, log);
	cx4_set(srqc, CX4_SRQC_LOG_RQ_STRIDE, 6 - 4);
	cx4_set(srqc, CX4_SRQC_PD, pd);
	cx4_set64(srqc, CX4_SRQC_DBR_ADDR, s->dbr.iova);
	for (uint32_t i = 0; i < npas; i++)
		cx4_pas_set(in, 0x110, i, tmem_iova(&s->buf, 4096ull * i));
	st = tdev_cmd(t, in, 0x110 + 8 * npas, out, 16);
	if (!st)
		s->srqn = cx4_get(out, CX4_CREATE_SRQ_OUT_SRQN);
	return st;
}

int tsrq_post_recv(struct tdev *t, struct tsrq *s, const struct tsge *sg, int nsg)
{
	uint16_t idx = s->head;
	uint8_t *w = s->buf.p + (size_t)(idx & ((1u << s->log) - 1)) * SRQ_STRIDE;
	int i;

	(void)t;
	for (i = 0; i < nsg && i < 3; i++) {
		uint8_t *seg = w + 16 + 16 * i;

		cx4_be32_store(seg, sg[i].len);
		cx4_be32_store(seg + 4, sg[i].lkey);
		cx4_be64_store(seg + 8, sg[i].addr);
	}
	if (i < 3) {
		cx4_be32_store(w + 16 + 16 * i, 0);
		cx4_be32_store(w + 16 + 16 * i + 4, MLX5_INVALID_LKEY);
	}
	s->head = (uint16_t)(w[2] << 8 | w[3]);
	s->counter++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cx4_be32_store(s->dbr.p, s->counter);
	return idx;
}

/* ---- QP ---------------------------------------------------------------------------------- */

#define RQ_STRIDE_LOG 2 /* 64-byte receive WQEs: 4 data segments */

int tqp_create(struct tdev *t, struct tqp *qp, uint8_t st, uint32_t pd, struct tcq *scq,
	       struct tcq *rcq, uint32_t log_sq, uint32_t log_rq, struct tsrq *srq)
{
	uint8_t in[0x110 + 8 * 64] = {0}, out[16];
	uint8_t *qpc = in + 0x18;
	bool no_rq = srq || st == CX4_QP_ST_REG_UMR; /* the driver's UMR QP: send queue only */
	size_t rq_bytes = no_rq ? 0 : ((size_t)16 << RQ_STRIDE_LOG) << log_rq;
	size_t bytes = rq_bytes + ((size_t)64 << log_sq);
	uint32_t npas = (uint32_t)((bytes + 4095) / 4096);
	static uint32_t uidx = 0x1000;
	int s;

	memset(qp, 0, sizeof(*qp));
	if (npas > 64 || tmem_alloc(t, bytes, &qp->buf) || tmem_alloc(t, 4096, &qp->dbr))
		return -ENOMEM;
	qp->st = st;
	qp->sq_wqebbs = 1u << log_sq;
	qp->rq_wqes = no_rq ? 0 : 1u << log_rq;
	qp->rq_stride = 16u << RQ_STRIDE_LOG;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->srq = srq;
	qp->pd = pd;
	qp->user_index = ++uidx;
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_CREATE_QP);
	cx4_set(qpc, CX4_QPC_ST, st);
	cx4_set(qpc, CX4_QPC_PM_STATE, CX4_QP_PM_MIGRATED);
	cx4_set(qpc, CX4_QPC_PD, pd);
	cx4_set(qpc, CX4_QPC_LOG_SQ_SIZE, log_sq);
	if (srq) {
		cx4_set(qpc, CX4_QPC_RQ_TYPE, CX4_QP_RQ_TYPE_SRQ);
		cx4_set(qpc, CX4_QPC_SRQN_RMPN_XRQN, srq->srqn);
	} else if (no_rq) {
		cx4_set(qpc, CX4_QPC_RQ_TYPE, CX4_QP_RQ_TYPE_ZERO_LEN);
	} else {
		cx4_set(qpc, CX4_QPC_LOG_RQ_SIZE, log_rq);
		cx4_set(qpc, CX4_QPC_LOG_RQ_STRIDE, RQ_STRIDE_LOG);
	}
	cx4_set(qpc, CX4_QPC_UAR_PAGE, t->uar);
	cx4_set(qpc, CX4_QPC_USER_INDEX, qp->user_index);
	cx4_set(qpc, CX4_QPC_CQN_SND, scq->cqn);
	cx4_set(qpc, CX4_QPC_CQN_RCV, rcq->cqn);
	cx4_set64(qpc, CX4_QPC_DBR_ADDR, qp->dbr.iova);
	for (uint32_t i = 0; i < npas; i++)
		cx4_pas_set(in, 0x110, i, tmem_iova(&qp->buf, 4096ull * i));
	s = tdev_cmd(t, in, 0x110 + 8 * npas, out, 16);
	if (!s)
		qp->qpn = cx4_get(out, CX4_CREATE_QP_OUT_QPN);
	return s;
}

int tqp_modify(struct tdev *t, struct tqp *qp, uint16_t op, uint32_t mask, const uint8_t *qpc)
{
	uint8_t in[0x110] = {0}, out[16];

	cx4_set(in, CX4_CMD_IN_OPCODE, op);
	cx4_set(in, CX4_MODIFY_QP_IN_QPN, qp->qpn);
	cx4_set(in, CX4_MODIFY_QP_IN_OPT_PARAM_MASK, mask);
	if (qpc)
		memcpy(in + 0x18, qpc, CX4_QPC_SIZE);
	if (op == CX4_CMD_OP_2ERR_QP || op == CX4_CMD_OP_2RST_QP)
		return tdev_cmd(t, in, 0x10, out, 16);
	return tdev_cmd(t, in, 0x110, out, 16);
}

int tqp_connect(struct tdev *t, struct tqp *qp, const struct tconn *c)
{
	uint8_t qpc[CX4_QPC_SIZE];
	int st;

	memset(qpc, 0, sizeof(qpc));
	cx4_set(qpc, CX4_QPC_PRI(CX4_ADS_VHCA_PORT_NUM), 1);
	if (qp->st == CX4_QP_ST_UD) {
		cx4_set(qpc, CX4_QPC_Q_KEY, c->qkey);
	} else {
		cx4_set(qpc, CX4_QPC_RWE, 1);
		if (qp->st == CX4_QP_ST_RC) {
			cx4_set(qpc, CX4_QPC_RRE, 1);
			cx4_set(qpc, CX4_QPC_RAE, 1);
		}
	}
	st = tqp_modify(t, qp, CX4_CMD_OP_RST2INIT_QP, 0, qpc);
	if (st)
		return st;
	memset(qpc, 0, sizeof(qpc));
	cx4_set(qpc, CX4_QPC_MTU, c->mtu ? c->mtu : CX4_QP_MTU_1024);
	if (qp->st != CX4_QP_ST_UD) {
		uint8_t *ads = qpc + CX4_QPC_PRIMARY_ADDRESS_PATH;

		cx4_set(qpc, CX4_QPC_LOG_MSG_MAX, 30);
		cx4_set(qpc, CX4_QPC_REMOTE_QPN, c->rqpn);
		cx4_set(qpc, CX4_QPC_NEXT_RCV_PSN, c->rq_psn);
		cx4_set(qpc, CX4_QPC_MIN_RNR_NAK, c->min_rnr ? c->min_rnr : 1);
		cx4_set(qpc, CX4_QPC_LOG_RRA_MAX, c->rd_set ? c->log_rd : 4);
		uint8_t mac[6];

		tverbs_gid_mac(c->rip, c->rgid, c->rmac, ads + CX4_ADS_RGID_RIP_OFF, mac);
		cx4_set(ads, CX4_ADS_RMAC_47_32, (uint32_t)mac[0] << 8 | mac[1]);
		cx4_set(ads, CX4_ADS_RMAC_31_0, cx4_be32_load(mac + 2));
		cx4_set(ads, CX4_ADS_SRC_ADDR_INDEX, c->sgid_index);
		cx4_set(ads, CX4_ADS_HOP_LIMIT, 64);
		cx4_set(ads, CX4_ADS_VHCA_PORT_NUM, 1);
	}
	st = tqp_modify(t, qp, CX4_CMD_OP_INIT2RTR_QP, 0, qpc);
	if (st)
		return st;
	memset(qpc, 0, sizeof(qpc));
	cx4_set(qpc, CX4_QPC_NEXT_SEND_PSN, c->sq_psn);
	if (qp->st == CX4_QP_ST_RC) {
		cx4_set(qpc, CX4_QPC_RETRY_COUNT, c->retry);
		cx4_set(qpc, CX4_QPC_RNR_RETRY, c->rnr_retry);
		cx4_set(qpc, CX4_QPC_LOG_SRA_MAX, c->rd_set ? c->log_rd : 4);
		cx4_set(qpc, CX4_QPC_PRI(CX4_ADS_ACK_TIMEOUT),
			c->ack_timeout || c->ack_timeout_set ? c->ack_timeout : 14);
	}
	return tqp_modify(t, qp, CX4_CMD_OP_RTR2RTS_QP, 0, qpc);
}

static void sq_write(struct tqp *qp, uint32_t off_bytes, const uint8_t *src, uint32_t n)
{
	uint8_t *sq = qp->buf.p + (size_t)qp->rq_wqes * qp->rq_stride;
	uint32_t sq_len = qp->sq_wqebbs * 64;

	for (uint32_t i = 0; i < n; i++)
		sq[(off_bytes + i) % sq_len] = src[i];
}

void tverbs_gid_mac(uint32_t ip, const uint8_t gid[16], const uint8_t mac[6], uint8_t gid_out[16],
		    uint8_t mac_out[6])
{
	static const uint8_t zero[16];

	if (memcmp(gid, zero, 16)) {
		memcpy(gid_out, gid, 16);
	} else {
		memset(gid_out, 0, 16);
		gid_out[10] = gid_out[11] = 0xff;
		memcpy(gid_out + 12, &ip, 4);
	}
	if (memcmp(mac, zero, 6)) {
		memcpy(mac_out, mac, 6);
	} else {
		/* the model's default MAC for its IPv4 address (cx4_model_config.mac) */
		mac_out[0] = 0x02;
		mac_out[1] = 0x00;
		memcpy(mac_out + 2, gid_out + 12, 4);
	}
}

int tqp_post_send(struct tdev *t, struct tqp *qp, const struct tsend *s)
{
	uint8_t w[1024] = {0};
	uint32_t at = 16, ds, nbb;
	uint16_t idx = qp->sq_pi;

	if (qp->st == CX4_QP_ST_UD) {
		uint8_t *av = w + at;

		cx4_be32_store(av, s->qkey);
		cx4_be32_store(av + 8, MLX5_EXTENDED_UD_AV | s->dqpn);
		av[0x1b] = 64; /* hop limit */
		tverbs_gid_mac(s->dip, s->dgid, s->dmac, av + 0x20, av + 0x14);
		cx4_be32_store(av + 0x1c, (s->sgid_index & 0xff) << 20);
		at += 48;
	}
	if (s->opcode == MLX5_OPCODE_RDMA_WRITE || s->opcode == MLX5_OPCODE_RDMA_WRITE_IMM ||
	    s->opcode == MLX5_OPCODE_RDMA_READ || s->opcode == MLX5_OPCODE_ATOMIC_CS ||
	    s->opcode == MLX5_OPCODE_ATOMIC_FA) {
		cx4_be64_store(w + at, s->raddr);
		cx4_be32_store(w + at + 8, s->rkey);
		at += 16;
	}
	if (s->opcode == MLX5_OPCODE_ATOMIC_CS || s->opcode == MLX5_OPCODE_ATOMIC_FA) {
		cx4_be64_store(w + at, s->swap_add);
		cx4_be64_store(w + at + 8, s->compare);
		at += 16;
	}
	if (s->inl) {
		cx4_be32_store(w + at, s->inl_len | MLX5_INLINE_SEG);
		memcpy(w + at + 4, s->inl, s->inl_len);
		at += (4 + s->inl_len + 15) & ~15u;
	}
	for (int i = 0; i < s->nsg; i++, at += 16) {
		cx4_be32_store(w + at, s->sg[i].len);
		cx4_be32_store(w + at + 4, s->sg[i].lkey);
		cx4_be64_store(w + at + 8, s->sg[i].addr);
	}
	ds = at / 16;
	nbb = (ds * 16 + 63) / 64;
	cx4_be32_store(w, (uint32_t)idx << 8 | s->opcode);
	cx4_be32_store(w + 4, qp->qpn << 8 | ds);
	w[11] = s->fm_ce_se ? s->fm_ce_se : (s->unsignaled ? 0 : MLX5_WQE_CTRL_CQ_UPDATE);
	memcpy(w + 12, &s->imm, 4);
	sq_write(qp, (idx & (qp->sq_wqebbs - 1)) * 64u, w, nbb * 64);
	qp->sq_pi = (uint16_t)(qp->sq_pi + nbb);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cx4_be32_store(qp->dbr.p + 4, qp->sq_pi);
	if (s->no_doorbell)
		return idx;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (s->bf) {
		cx4_mmio_bf_copy(&t->bar, t->uar * 4096u + 0x800 + qp->bf_off, w, nbb * 64);
	} else {
		uint64_t v;

		memcpy(&v, w, 8);
		cx4_mmio_write64_be(&t->bar, t->uar * 4096u + 0x800 + qp->bf_off, v);
	}
	qp->bf_off ^= 0x100; /* alternate BlueFlame halves, as rdma-core */
	return idx;
}

int tqp_post_segs(struct tdev *t, struct tqp *qp, uint8_t opcode, uint32_t imm_be, uint8_t fm_ce_se,
		  const void *segs, uint32_t len)
{
	uint8_t w[1024] = {0};
	uint32_t ds = (16 + len + 15) / 16, nbb = (ds * 16 + 63) / 64;
	uint16_t idx = qp->sq_pi;
	uint64_t v;

	memcpy(w + 16, segs, len);
	cx4_be32_store(w, (uint32_t)idx << 8 | opcode);
	cx4_be32_store(w + 4, qp->qpn << 8 | ds);
	w[11] = fm_ce_se;
	memcpy(w + 12, &imm_be, 4);
	sq_write(qp, (idx & (qp->sq_wqebbs - 1)) * 64u, w, nbb * 64);
	qp->sq_pi = (uint16_t)(qp->sq_pi + nbb);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cx4_be32_store(qp->dbr.p + 4, qp->sq_pi);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(&v, w, 8);
	cx4_mmio_write64_be(&t->bar, t->uar * 4096u + 0x800 + qp->bf_off, v);
	qp->bf_off ^= 0x100;
	return idx;
}

void tqp_ring(struct tdev *t, struct tqp *qp)
{
	uint8_t w[8];
	uint64_t v;

	cx4_be32_store(w, (uint32_t)qp->sq_pi << 8);
	cx4_be32_store(w + 4, qp->qpn << 8 | 1);
	memcpy(&v, w, 8);
	cx4_mmio_write64_be(&t->bar, t->uar * 4096u + 0x800 + qp->bf_off, v);
}

int tqp_post_recv(struct tdev *t, struct tqp *qp, const struct tsge *sg, int nsg)
{
	uint16_t idx = qp->rq_pi;
	uint8_t *w = qp->buf.p + (size_t)(idx & (qp->rq_wqes - 1)) * qp->rq_stride;
	int i, max = (int)(qp->rq_stride / 16);

	(void)t;
	for (i = 0; i < nsg && i < max; i++) {
		cx4_be32_store(w + 16 * i, sg[i].len);
		cx4_be32_store(w + 16 * i + 4, sg[i].lkey);
		cx4_be64_store(w + 16 * i + 8, sg[i].addr);
	}
	if (i < max) {
		cx4_be32_store(w + 16 * i, 0);
		cx4_be32_store(w + 16 * i + 4, MLX5_INVALID_LKEY);
		cx4_be64_store(w + 16 * i + 8, 0);
	}
	qp->rq_pi++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cx4_be32_store(qp->dbr.p, qp->rq_pi);
	return idx;
}
