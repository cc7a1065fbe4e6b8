// SPDX-License-Identifier: MIT
/*
 * Error CQE syndromes, as a table: for each error a ConnectX-4 reports in a CQE, the PRM's
 * number ([PRM] "CQE Error Syndrome": the values below are typed from that table, not taken
 * from a header), the name Debian's infiniband/mlx5dv.h gives it, the ibv_wc_status the cx4
 * provider turns it into (providers/cx4/cqe_err.h, as rdma-core mlx5_handle_error_cqe()), and
 * a condition that makes the model report it, run on the model (two modelled ports, or one
 * and a fake peer on the wire for responses a model would not send), with the CQE's opcode
 * (requester 0xD / responder 0xE), syndrome, WQE counter, WQE opcode and QP checked.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqe_err.h"
#include "roce_pkt.h"
#include "tverbs.h"
#include "udp_port.h"

#define WAIT 5000

/* [PRM] CQE error syndromes */
enum {
	PRM_LOCAL_LENGTH = 0x01,
	PRM_LOCAL_QP_OP = 0x02,
	PRM_LOCAL_PROTECTION = 0x04,
	PRM_WR_FLUSHED = 0x05,
	PRM_MW_BIND = 0x06,
	PRM_BAD_RESPONSE = 0x10,
	PRM_LOCAL_ACCESS = 0x11,
	PRM_REMOTE_INVALID_REQUEST = 0x12,
	PRM_REMOTE_ACCESS = 0x13,
	PRM_REMOTE_OPERATION = 0x14,
	PRM_TRANSPORT_RETRY_EXCEEDED = 0x15,
	PRM_RNR_RETRY_EXCEEDED = 0x16,
	PRM_ABORTED = 0x22,
};

/* The name table: PRM number, mlx5dv.h name, ibv_wc_status. */
static const struct {
	const char *name;
	uint8_t prm, dv;
	enum ibv_wc_status status;
} names[] = {
    {"local length", PRM_LOCAL_LENGTH, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, IBV_WC_LOC_LEN_ERR},
    {"local QP operation", PRM_LOCAL_QP_OP, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
     IBV_WC_LOC_QP_OP_ERR},
    {"local protection", PRM_LOCAL_PROTECTION, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR,
     IBV_WC_LOC_PROT_ERR},
    {"WR flushed", PRM_WR_FLUSHED, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR},
    {"MW bind", PRM_MW_BIND, MLX5_CQE_SYNDROME_MW_BIND_ERR, IBV_WC_MW_BIND_ERR},
    {"bad response", PRM_BAD_RESPONSE, MLX5_CQE_SYNDROME_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR},
    {"local access", PRM_LOCAL_ACCESS, MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR},
    {"remote invalid request", PRM_REMOTE_INVALID_REQUEST, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
     IBV_WC_REM_INV_REQ_ERR},
    {"remote access", PRM_REMOTE_ACCESS, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
     IBV_WC_REM_ACCESS_ERR},
    {"remote operation", PRM_REMOTE_OPERATION, MLX5_CQE_SYNDROME_REMOTE_OP_ERR, IBV_WC_REM_OP_ERR},
    {"transport retry exceeded", PRM_TRANSPORT_RETRY_EXCEEDED,
     MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR},
    {"RNR retry exceeded", PRM_RNR_RETRY_EXCEEDED, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR,
     IBV_WC_RNR_RETRY_EXC_ERR},
    {"aborted", PRM_ABORTED, MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, IBV_WC_REM_ABORT_ERR},
};

static enum ibv_wc_status status_of(uint8_t prm)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].prm == prm)
			return names[i].status;
	return IBV_WC_GENERAL_ERR;
}

/* The names: mlx5dv.h agrees with the PRM, the provider maps each as mlx5 does. */
static void test_names(void)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].dv != names[i].prm)
			T_FAIL("%s: mlx5dv.h 0x%x, PRM 0x%x", names[i].name, names[i].dv,
			       names[i].prm);
		if (cx4_cqe_error_status(names[i].prm) != names[i].status)
			T_FAIL("%s: provider status %d, want %d (%s)", names[i].name,
			       cx4_cqe_error_status(names[i].prm), names[i].status,
			       ibv_wc_status_str(names[i].status));
	}
	/* numbers the PRM does not define: a general error, never success */
	for (unsigned int s = 0; s < 256; s++)
		if (status_of((uint8_t)s) == IBV_WC_GENERAL_ERR &&
		    cx4_cqe_error_status((uint8_t)s) != IBV_WC_GENERAL_ERR)
			T_FAIL("syndrome 0x%x: provider status %d", s,
			       cx4_cqe_error_status((uint8_t)s));
	T_EQ(MLX5_CQE_REQ_ERR, 0x0d);
	T_EQ(MLX5_CQE_RESP_ERR, 0x0e);
}

/* ---- provoking each error on the model --------------------------------------------------------
 */

struct ctx {
	struct tside a, b;
	bool have_b;
	struct roce_udp_port peer; /* fake peer instead of b */
	bool have_peer;
};

/* Device k of this process: 127.x addresses of its own (tdev_addr); the fake peer is 3. */
static void dev_up(struct tside *s, unsigned int k)
{
	struct cx4_model_config c = {.ipv4 = tdev_addr(k)};

	T_EQ(tdev_open(&s->t, &c), 0);
	tside_bringup(s, 8);
	T_EQ(tmr_reg(&s->t, &s->mr, 65536, TA_ALL, TMR_FD, s->pd), 0);
}

static struct tconn conn(void)
{
	return (struct tconn){.mtu = CX4_QP_MTU_1024,
			      .sq_psn = 0x10,
			      .rq_psn = 0x10,
			      .retry = 7,
			      .rnr_retry = 7,
			      .ack_timeout = 14};
}

/* Two devices, one QP each of type st, connected. */
static void two(struct ctx *c, uint8_t st, struct tconn ca)
{
	struct tconn cb = conn();

	memset(c, 0, sizeof(*c));
	dev_up(&c->a, 0);
	dev_up(&c->b, 1);
	c->have_b = true;
	T_EQ(tqp_create(&c->a.t, &c->a.qp, st, c->a.pd, &c->a.scq, &c->a.rcq, 6, 6, NULL), 0);
	T_EQ(tqp_create(&c->b.t, &c->b.qp, st, c->b.pd, &c->b.scq, &c->b.rcq, 6, 6, NULL), 0);
	ca.rip = c->b.t.ip;
	ca.rqpn = c->b.qp.qpn;
	cb.rip = c->a.t.ip;
	cb.rqpn = c->a.qp.qpn;
	ca.qkey = cb.qkey = 0x1111;
	T_EQ(tqp_connect(&c->a.t, &c->a.qp, &ca), 0);
	T_EQ(tqp_connect(&c->b.t, &c->b.qp, &cb), 0);
}

/* One device whose RC QP talks to a fake peer: this process, on the wire. */
static void with_peer(struct ctx *c)
{
	struct tconn ca = conn();

	memset(c, 0, sizeof(*c));
	dev_up(&c->a, 0);
	T_EQ(roce_udp_port_open(&c->peer, tdev_addr(3), ROCE_V2_UDP_PORT, NULL), 0);
	c->have_peer = true;
	T_EQ(tqp_create(&c->a.t, &c->a.qp, CX4_QP_ST_RC, c->a.pd, &c->a.scq, &c->a.rcq, 6, 6, NULL),
	     0);
	ca.rip = c->peer.addr;
	ca.rqpn = 0x4321;
	T_EQ(tqp_connect(&c->a.t, &c->a.qp, &ca), 0);
}

static void done(struct ctx *c)
{
	tdev_close(&c->a.t);
	if (c->have_b)
		tdev_close(&c->b.t);
	if (c->have_peer)
		roce_udp_port_close(&c->peer);
}

static struct tsge sge(const struct tmr *mr, size_t off, uint32_t len)
{
	return (struct tsge){.len = len, .lkey = mr->key, .addr = (uintptr_t)mr->buf + off};
}

static int post(struct tside *s, uint8_t op, struct tsge *sg, uint64_t raddr, uint32_t rkey)
{
	struct tsend w = {.opcode = op,
			  .sg = sg,
			  .nsg = 1,
			  .raddr = raddr,
			  .rkey = rkey,
			  .swap_add = 1,
			  .qkey = 0x1111,
			  .dqpn = 0x4444,
			  .dip = tdev_addr(3)};

	return tqp_post_send(&s->t, &s->qp, &w);
}

/* The fake peer takes A's next request and answers it with h (PSN and QPN filled in). */
static void peer_answer(struct ctx *c, struct roce_tx_hdr h, const void *payload, size_t plen)
{
	static uint8_t buf[65536 + 256], out[4608];
	struct roce_udp_rx rx = {.buf = buf, .size = sizeof(buf)};
	struct roce_pkt req;
	struct roce_udp_tx tx;
	struct iovec iov;
	struct roce_addr a;
	ssize_t n;

	for (int i = 0; i < 500 && roce_udp_recv(&c->peer, &rx, 1) <= 0; i++)
		roce_udp_wait(&c->peer, 10);
	T_ASSERT(rx.len > 0);
	T_EQ(roce_parse_udp(buf, rx.seg_size ? rx.seg_size : rx.len, &rx.addr, ROCE_PARSE_SOLVE_ID,
			    &req),
	     0);
	a = (struct roce_addr){.saddr = c->peer.addr,
			       .daddr = c->a.t.ip,
			       .sport = c->peer.port,
			       .dport = ROCE_V2_UDP_PORT,
			       .ttl = 64};
	h.pkey = ROCE_DEFAULT_PKEY;
	h.dqpn = c->a.qp.qpn;
	h.psn = req.psn;
	n = roce_build_udp(out, sizeof(out), &h, payload, plen, &a);
	T_ASSERT(n > 0);
	iov = (struct iovec){.iov_base = out, .iov_len = (size_t)n};
	tx = (struct roce_udp_tx){
	    .iov = &iov, .iovcnt = 1, .daddr = c->a.t.ip, .dport = ROCE_V2_UDP_PORT};
	T_EQ(roce_udp_send(&c->peer, &tx, 1), 1);
}

static void peer_nak(struct ctx *c, uint8_t syndrome)
{
	struct roce_tx_hdr h = {.opcode = ROCE_OPCODE(RC, ACKNOWLEDGE)};

	h.aeth.syndrome = syndrome;
	peer_answer(c, h, NULL, 0);
}

/* What a case expects to find: an error CQE on a side's send or receive CQ. */
struct want {
	char side;   /* 'a' or 'b'; 0 ends the list */
	bool recv;   /* the receive CQ */
	uint8_t prm; /* PRM syndrome */
	int wqe;     /* WQE counter */
	uint8_t wop; /* requester: the WQE's opcode */
};

struct row {
	const char *name;
	void (*provoke)(struct ctx *c);
	struct want want[3];
};

static void bad_lkey(struct ctx *c)
{
	struct tsge s;

	two(c, CX4_QP_ST_RC, conn());
	s = sge(&c->a.mr, 0, 10);
	s.lkey ^= 1;
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0);
	s = sge(&c->a.mr, 0, 10);
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0); /* flushed */
}

static void bad_wqe(struct ctx *c)
{
	struct tsge s;
	struct tsend w = {.opcode = MLX5_OPCODE_SEND, .nsg = 1, .no_doorbell = true};
	uint8_t *sq;

	two(c, CX4_QP_ST_RC, conn());
	s = sge(&c->a.mr, 0, 10);
	w.sg = &s;
	tqp_post_send(&c->a.t, &c->a.qp, &w);
	sq = c->a.qp.buf.p + (size_t)c->a.qp.rq_wqes * c->a.qp.rq_stride;
	sq[4] ^= 0x01; /* the control segment names another QP */
	tqp_ring(&c->a.t, &c->a.qp);
}

static void ud_too_long(struct ctx *c)
{
	struct tsge s;

	two(c, CX4_QP_ST_UD, conn());
	s = sge(&c->a.mr, 0, 2000); /* path MTU 1024 */
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0);
}

static void short_recv(struct ctx *c)
{
	struct tsge s, r;

	two(c, CX4_QP_ST_RC, conn());
	r = sge(&c->b.mr, 0, 1000);
	tqp_post_recv(&c->b.t, &c->b.qp, &r, 1);
	tqp_post_recv(&c->b.t, &c->b.qp, &r, 1); /* flushed */
	s = sge(&c->a.mr, 0, 3000);
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0);
}

static void bad_recv_lkey(struct ctx *c)
{
	struct tsge s, r;

	two(c, CX4_QP_ST_RC, conn());
	r = sge(&c->b.mr, 0, 1000);
	r.lkey ^= 0x80;
	tqp_post_recv(&c->b.t, &c->b.qp, &r, 1);
	s = sge(&c->a.mr, 0, 100);
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0);
}

static void bad_rkey(struct ctx *c)
{
	struct tsge s;

	two(c, CX4_QP_ST_RC, conn());
	s = sge(&c->a.mr, 0, 10);
	post(&c->a, MLX5_OPCODE_RDMA_WRITE, &s, (uintptr_t)c->b.mr.buf, c->b.mr.key ^ 0x55);
}

static void misaligned_atomic(struct ctx *c)
{
	struct tsge s;

	two(c, CX4_QP_ST_RC, conn());
	s = sge(&c->a.mr, 0, 8);
	post(&c->a, MLX5_OPCODE_ATOMIC_FA, &s, (uintptr_t)c->b.mr.buf + 4, c->b.mr.key);
}

static void rnr(struct ctx *c)
{
	struct tconn ca = conn();
	struct tsge s;

	ca.rnr_retry = 0;
	two(c, CX4_QP_ST_RC, ca);
	s = sge(&c->a.mr, 0, 10);
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0);
}

static void peer_gone(struct ctx *c)
{
	struct tconn ca = conn();
	struct tsge s;

	ca.retry = 1;
	ca.ack_timeout = 10; /* 4.2 ms */
	two(c, CX4_QP_ST_RC, ca);
	T_EQ(tdev_simple(&c->b.t, CX4_CMD_OP_DESTROY_QP, 0, c->b.qp.qpn, 0, NULL), 0);
	s = sge(&c->a.mr, 0, 10);
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0);
}

static void short_read_response(struct ctx *c)
{
	struct roce_tx_hdr h = {.opcode = ROCE_OPCODE(RC, RDMA_READ_RESPONSE_ONLY)};
	static uint8_t half[50];
	struct tsge s;

	with_peer(c);
	s = sge(&c->a.mr, 0, 100);
	post(&c->a, MLX5_OPCODE_RDMA_READ, &s, 0x1000, 7);
	/* 50 bytes for a 100-byte READ ([IBTA] 9.7.5.2.x: a response that does not fit) */
	peer_answer(c, h, half, sizeof(half));
}

static void nak_invalid(struct ctx *c)
{
	struct tsge s;

	with_peer(c);
	s = sge(&c->a.mr, 0, 10);
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0);
	peer_nak(c, ROCE_AETH_NAK | ROCE_NAK_INV_REQ);
}

static void nak_access(struct ctx *c)
{
	struct tsge s;

	with_peer(c);
	s = sge(&c->a.mr, 0, 10);
	post(&c->a, MLX5_OPCODE_RDMA_WRITE, &s, 0x1000, 7);
	peer_nak(c, ROCE_AETH_NAK | ROCE_NAK_REM_ACC_ERR);
}

static void nak_operational(struct ctx *c)
{
	struct tsge s;

	with_peer(c);
	s = sge(&c->a.mr, 0, 10);
	post(&c->a, MLX5_OPCODE_SEND, &s, 0, 0);
	peer_nak(c, ROCE_AETH_NAK | ROCE_NAK_REM_OP_ERR);
}

#define SEND MLX5_OPCODE_SEND
static const struct row rows[] = {
    {"bad lkey, then a WQE behind it",
     bad_lkey,
     {{'a', false, PRM_LOCAL_PROTECTION, 0, SEND}, {'a', false, PRM_WR_FLUSHED, 1, SEND}}},
    {"WQE naming another QP", bad_wqe, {{'a', false, PRM_LOCAL_QP_OP, 0, SEND}}},
    {"UD SEND over the path MTU", ud_too_long, {{'a', false, PRM_LOCAL_LENGTH, 0, SEND}}},
    {"SEND longer than the receive buffer",
     short_recv,
     {{'b', true, PRM_LOCAL_LENGTH, 0, 0},
      {'b', true, PRM_WR_FLUSHED, 1, 0},
      {'a', false, PRM_REMOTE_INVALID_REQUEST, 0, SEND}}},
    {"receive buffer with a bad lkey",
     bad_recv_lkey,
     {{'b', true, PRM_LOCAL_PROTECTION, 0, 0}, {'a', false, PRM_REMOTE_OPERATION, 0, SEND}}},
    {"WRITE with a bad rkey",
     bad_rkey,
     {{'a', false, PRM_REMOTE_ACCESS, 0, MLX5_OPCODE_RDMA_WRITE}}},
    {"misaligned atomic",
     misaligned_atomic,
     {{'a', false, PRM_REMOTE_INVALID_REQUEST, 0, MLX5_OPCODE_ATOMIC_FA}}},
    {"no receive WQE, rnr_retry 0", rnr, {{'a', false, PRM_RNR_RETRY_EXCEEDED, 0, SEND}}},
    {"peer QP gone, retry_count 1",
     peer_gone,
     {{'a', false, PRM_TRANSPORT_RETRY_EXCEEDED, 0, SEND}}},
    {"READ response shorter than the READ",
     short_read_response,
     {{'a', false, PRM_BAD_RESPONSE, 0, MLX5_OPCODE_RDMA_READ}}},
    {"NAK invalid request", nak_invalid, {{'a', false, PRM_REMOTE_INVALID_REQUEST, 0, SEND}}},
    {"NAK remote access", nak_access, {{'a', false, PRM_REMOTE_ACCESS, 0, MLX5_OPCODE_RDMA_WRITE}}},
    {"NAK remote operational error",
     nak_operational,
     {{'a', false, PRM_REMOTE_OPERATION, 0, SEND}}},
};

static void test_model(void)
{
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct ctx c;

		t_name = rows[r].name;
		rows[r].provoke(&c);
		for (const struct want *w = rows[r].want; w < rows[r].want + 3 && w->side; w++) {
			struct tside *s = w->side == 'a' ? &c.a : &c.b;
			struct tcqe e;

			tcq_expect(&s->t, w->recv ? &s->rcq : &s->scq, &e, WAIT);
			if (e.opcode != (w->recv ? MLX5_CQE_RESP_ERR : MLX5_CQE_REQ_ERR) ||
			    e.syndrome != w->prm)
				T_FAIL("side %c: CQE opcode 0x%x syndrome 0x%x, want 0x%x / 0x%x",
				       w->side, e.opcode, e.syndrome,
				       w->recv ? MLX5_CQE_RESP_ERR : MLX5_CQE_REQ_ERR, w->prm);
			T_EQ(e.qpn, s->qp.qpn);
			T_EQ(e.wqe_counter, w->wqe);
			if (!w->recv)
				T_EQ(e.wqe_opcode, w->wop);
			/* what an application sees through the provider */
			T_EQ(cx4_cqe_error_status(e.syndrome), status_of(w->prm));
			printf("  %-40s %c %s 0x%02x -> %s\n", rows[r].name, w->side,
			       w->recv ? "recv" : "send", e.syndrome,
			       ibv_wc_status_str(cx4_cqe_error_status(e.syndrome)));
		}
		done(&c);
	}
}

int main(void)
{
	t_name = "names";
	test_names();
	printf("ok names\n");
	test_model();
	printf("ok model\n");
	return 0;
}
