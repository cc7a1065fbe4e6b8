/* SPDX-License-Identifier: MIT */
/*
 * Test "verbs" over tdrv: CQs, memory keys, QPs, SRQs, WQE posting and CQE polling done the
 * way a mlx5 provider does it (rdma-core providers/mlx5 qp.c/cq.c; [dv] mlx5dv.h layouts),
 * through DMA memory and UAR doorbells only.
 */
#ifndef CX4_TVERBS_H
#define CX4_TVERBS_H

#include <infiniband/mlx5dv.h>

#include "tdrv.h"

struct tcq {
	struct tmem buf, dbr;
	uint32_t cqn, log;
	uint32_t stride; /* 64 or 128 */
	uint32_t ci;
	uint32_t arm_sn;
};

int tcq_create(struct tdev *t, struct tcq *cq, uint32_t log);
int tcq_create_128(struct tdev *t, struct tcq *cq, uint32_t log);
/* Next CQE within ms (copied to cqe64): 1, or 0 on timeout. */
int tcq_poll(struct tdev *t, struct tcq *cq, uint8_t *cqe64, int ms);
/* Arm for the next (sol = false) or next solicited completion. */
void tcq_arm(struct tdev *t, struct tcq *cq, bool sol);

enum { TMR_FD, TMR_PID };

struct tmr {
	uint8_t *buf;
	size_t len;
	uint64_t iova;
	uint32_t key;
	uint32_t index;
	struct tmem mem; /* TMR_FD */
	int kind;
};

/* Register len bytes (page multiple) of new memory with the mkc access bits (MKEY_*-like). */
#define TA_LR (1u << 0)
#define TA_LW (1u << 1)
#define TA_RR (1u << 2)
#define TA_RW (1u << 3)
#define TA_A (1u << 4)
#define TA_ALL (TA_LR | TA_LW | TA_RR | TA_RW | TA_A)
int tmr_reg(struct tdev *t, struct tmr *mr, size_t len, unsigned int access, int kind, uint32_t pd);
int tmr_dereg(struct tdev *t, struct tmr *mr);

struct tsrq {
	struct tmem buf, dbr;
	uint32_t srqn;
	uint32_t log;
	uint16_t head, counter;
};

int tsrq_create(struct tdev *t, struct tsrq *s, uint32_t log, uint32_t pd);

struct tqp {
	uint32_t qpn;
	uint8_t st;
	struct tmem buf, dbr;
	uint32_t sq_wqebbs, rq_wqes, rq_stride;
	uint16_t sq_pi, rq_pi;
	unsigned int bf_off;
	struct tcq *scq, *rcq;
	struct tsrq *srq;
	uint32_t pd;
	uint32_t user_index;
};

int tqp_create(struct tdev *t, struct tqp *qp, uint8_t st, uint32_t pd, struct tcq *scq,
	       struct tcq *rcq, uint32_t log_sq, uint32_t log_rq, struct tsrq *srq);

struct tconn {
	uint32_t rip; /* peer's IPv4 (network order) */
	/* or its GID (when not all zero) from RoCE address sgid_index; rmac zero = 02:00:<rip> */
	uint8_t rgid[16];
	uint32_t sgid_index;
	uint8_t rmac[6];
	uint32_t rqpn;
	uint32_t mtu; /* CX4_QP_MTU_* */
	uint32_t sq_psn, rq_psn;
	uint32_t retry, rnr_retry, min_rnr, ack_timeout;
	uint32_t qkey; /* UD */
	/* ack_timeout as given, 0 included (no local ACK timeout), else 0 means 14 */
	bool ack_timeout_set;
	/* log_sra_max / log_rra_max (outstanding READ/atomics) when rd_set, else 4 */
	bool rd_set;
	uint32_t log_rd;
};

/* RST2INIT, INIT2RTR, RTR2RTS with the usual fields (defaults for zero members). */
int tqp_connect(struct tdev *t, struct tqp *qp, const struct tconn *c);
int tqp_modify(struct tdev *t, struct tqp *qp, uint16_t op, uint32_t mask, const uint8_t *qpc);

struct tsge {
	uint32_t len, lkey;
	uint64_t addr;
};

struct tsend {
	uint8_t opcode;	  /* MLX5_OPCODE_* */
	uint8_t fm_ce_se; /* default MLX5_WQE_CTRL_CQ_UPDATE when zero and !unsignaled */
	bool unsignaled;
	const struct tsge *sg;
	int nsg;
	const void *inl; /* inline data instead of sg */
	uint32_t inl_len;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;
	uint32_t imm; /* big-endian image */
	/* UD: to dip, or to dgid (when not all zero) from RoCE address sgid_index; dmac zero =
	 * 02:00:<dip> (the model's MAC for an address, cx4_model.h) */
	uint32_t dqpn, qkey, dip;
	uint8_t dgid[16];
	uint32_t sgid_index;
	uint8_t dmac[6];
	bool bf;	  /* BlueFlame copy instead of an 8-byte doorbell */
	bool no_doorbell; /* only write the WQE and the doorbell record */
};

/* The GID and MAC a path or AV names: gid, or ::ffff:ip when all zero; mac, or 02:00:<IPv4>. */
void tverbs_gid_mac(uint32_t ip, const uint8_t gid[16], const uint8_t mac[6], uint8_t gid_out[16],
		    uint8_t mac_out[6]);

/* Post one send WQE; returns its WQE index. */
int tqp_post_send(struct tdev *t, struct tqp *qp, const struct tsend *s);
void tqp_ring(struct tdev *t, struct tqp *qp);
/* Post a WQE of any opcode: the control segment, then len bytes of segments (a UMR's). */
int tqp_post_segs(struct tdev *t, struct tqp *qp, uint8_t opcode, uint32_t imm_be, uint8_t fm_ce_se,
		  const void *segs, uint32_t len);
int tqp_post_recv(struct tdev *t, struct tqp *qp, const struct tsge *sg, int nsg);
int tsrq_post_recv(struct tdev *t, struct tsrq *s, const struct tsge *sg, int nsg);

/* Decoded CQE */
struct tcqe {
	uint8_t opcode, syndrome;
	uint32_t byte_cnt, qpn, imm, flags_rqpn, uidx;
	uint16_t wqe_counter;
	uint8_t wqe_opcode;
	bool se;
};

void tcqe_decode(const uint8_t *c, struct tcqe *e);
/* Poll one CQE and decode it; fails the test on timeout. */
void tcq_expect(struct tdev *t, struct tcq *cq, struct tcqe *e, int ms);
int tdev_alloc_pd(struct tdev *t, uint32_t *pd);

/* One end of a test's connection: a device, its PD, send and receive CQs, a QP and a region. */
struct tside {
	struct tdev t;
	uint32_t pd;
	struct tcq scq, rcq;
	struct tqp qp;
	struct tmr mr;
};

/* An opened device brought up with RoCE, a PD and two CQs of 2^log_cq entries. */
void tside_bringup(struct tside *s, uint32_t log_cq);

/* ---- test data: byte i of the sequence seed (not periodic in 256 bytes) ---------------- */
uint8_t tpattern(size_t i, unsigned int seed);
void tfill(uint8_t *p, size_t n, unsigned int seed);
/* Fail the test at the first byte of got that is not the sequence seed, or not v. */
void tcheck_pattern(const uint8_t *got, size_t n, unsigned int seed, const char *what);
void tcheck_value(const uint8_t *got, size_t n, uint8_t v, const char *what);

#endif /* CX4_TVERBS_H */
