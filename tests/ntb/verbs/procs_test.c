// SPDX-License-Identifier: MIT
/*
 * ntb_procs_test: many processes on both ends of one NTB link at once, all talking.
 *
 * N processes per end (default 64) each open their end's device, and every one of them, while
 * all are attached:
 *   - an RC QP to its partner on the other end (process i of end 0 <-> process i of end 1),
 *   - an RC QP to the next process of its own end and one from the previous (a loopback ring
 *     through every client of the end),
 *   - a UD QP, to which its partner and its previous neighbour send datagrams;
 * then ITERS rounds of SENDs on all of them and, at the end, a 64 KiB RDMA WRITE into the
 * partner's and the next neighbour's buffer followed by a WRITE_WITH_IMM that says so. Every
 * byte received is checked against what its sender must have sent. Processes meet in shared
 * memory (the QP numbers, buffer addresses and keys; barriers), not over the network.
 *
 * usage: ntb_procs_test [-n PER_END] [-i ITERS] [-a DEV0] [-b DEV1]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PER_END	128
#define MSG		256		/* SEND and datagram payload */
#define BIG		65536		/* the RDMA WRITE at the end */
#define GRH		40
#define QKEY		0x11111111u

/* What one process publishes for the others. */
struct pub {
	uint32_t qpn_x, qpn_out, qpn_in, qpn_ud;
	uint64_t addr;			/* its WRITE target: 2 x BIG (from the partner, the prev) */
	uint32_t rkey;
	uint8_t gid[16];
};

struct shared {
	_Atomic int arrived[4];		/* barriers */
	_Atomic int failed;
	struct pub p[2][MAX_PER_END];
};

static struct shared *sh;
static int per_end = 64, iters = 20;
static const char *devs[2] = { "ntb_0", "ntb_1" };
static int me_end, me;

#define FAIL(...)                                                                           \
	do {                                                                                 \
		fprintf(stderr, "FAIL [%s #%d] ", devs[me_end], me);                          \
		fprintf(stderr, __VA_ARGS__);                                                \
		fprintf(stderr, "\n");                                                       \
		atomic_store(&sh->failed, 1);                                                \
		exit(1);                                                                     \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Everyone of both ends gets here, or the test fails (a process that died never will). */
static void barrier(int b)
{
	uint64_t end = now_ms() + 180000;

	atomic_fetch_add(&sh->arrived[b], 1);
	while (atomic_load(&sh->arrived[b]) < 2 * per_end) {
		if (atomic_load(&sh->failed))
			exit(1);
		if (now_ms() > end)
			FAIL("barrier %d: only %d of %d arrived", b, atomic_load(&sh->arrived[b]),
			     2 * per_end);
		usleep(2000);
	}
}

/* The byte j of what process (end, i) sends in round k on channel ch. */
static uint8_t pat(int end, int i, int k, int ch, size_t j)
{
	uint32_t x = (uint32_t)(end * 1000003 + i * 7919 + k * 104729 + ch * 15485863) +
		     (uint32_t)j * 2654435761u;

	return (uint8_t)(x ^ (x >> 11) ^ (x >> 19));
}

/* A message: the round it belongs to, then the round's pattern. */
static void fill(uint8_t *b, size_t len, int end, int i, int k, int ch)
{
	memcpy(b, &k, sizeof(k));
	for (size_t j = sizeof(k); j < len; j++)
		b[j] = pat(end, i, k, ch, j);
}

static bool same(const uint8_t *b, size_t len, int end, int i, int ch)
{
	int k;

	memcpy(&k, b, sizeof(k));
	if (k < 0 || (k >= iters && k != 1000))
		return false;
	for (size_t j = sizeof(k); j < len; j++)
		if (b[j] != pat(end, i, k, ch, j))
			return false;
	return true;
}

struct res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *x, *out, *in, *ud;
	struct ibv_ah *ah_partner, *ah_next;
	uint8_t *buf;			/* receive slots, send slots, WRITE target and source */
	struct ibv_mr *mr;
	int gid_index;
	union ibv_gid gid;
};

/* Layout of buf */
#define RX_X	0				/* iters slots of MSG */
#define RX_IN	(RX_X + iters * MSG)
#define RX_UD	(RX_IN + iters * MSG)		/* 2 * iters slots of GRH + MSG */
#define TX	(RX_UD + 2 * iters * (GRH + MSG))	/* 4 slots of MSG */
#define WTGT	(((TX + 4 * MSG) + 4095) & ~4095)	/* 2 x BIG: written by partner, prev */
#define WSRC	(WTGT + 2 * BIG)			/* 2 x BIG */
#define BUFLEN	(WSRC + 2 * BIG)

static struct ibv_qp *qp_new(struct res *r, enum ibv_qp_type t, int depth)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = r->cq, .recv_cq = r->cq, .qp_type = t,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(r->pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };

	if (!qp)
		FAIL("create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS)))
		FAIL("to INIT: %s", strerror(errno));
	return qp;
}

static void rc_connect(struct res *r, struct ibv_qp *qp, uint32_t dest, const uint8_t *dgid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = dest, .rq_psn = 7, .max_dest_rd_atomic = 1,
				 .min_rnr_timer = 1 };

	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = r->gid_index;
	a.ah_attr.grh.hop_limit = 1;
	memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER))
		FAIL("RC to RTR (dest 0x%x): %s", dest, strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 7;
	a.timeout = 16;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MAX_QP_RD_ATOMIC))
		FAIL("RC to RTS: %s", strerror(errno));
}

static void ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		FAIL("UD to RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		FAIL("UD to RTS: %s", strerror(errno));
}

static struct ibv_ah *ah_to(struct res *r, const uint8_t *dgid)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;

	a.grh.sgid_index = r->gid_index;
	a.grh.hop_limit = 1;
	memcpy(a.grh.dgid.raw, dgid, 16);
	ah = ibv_create_ah(r->pd, &a);
	if (!ah)
		FAIL("create_ah: %s", strerror(errno));
	return ah;
}

static void post_recv(struct res *r, struct ibv_qp *qp, size_t off, size_t len, uint64_t id)
{
	struct ibv_sge s = { (uintptr_t)(r->buf + off), (uint32_t)len, r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		FAIL("post_recv: %s", strerror(errno));
}

static void post_send(struct res *r, struct ibv_qp *qp, enum ibv_wr_opcode op, size_t off,
		      size_t len, uint64_t id, struct ibv_ah *ah, uint32_t rqpn, uint64_t raddr,
		      uint32_t rkey, uint32_t imm)
{
	struct ibv_sge s = { (uintptr_t)(r->buf + off), (uint32_t)len, r->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(imm) }, *bad;

	if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = rqpn;
		wr.wr.ud.remote_qkey = QKEY;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(qp, &wr, &bad))
		FAIL("post_send: %s", strerror(errno));
}

static int recvs_seen;

/*
 * Completions until this many sends completed and this many receives (all of the run so far)
 * arrived; each receive is checked by check(). Messages of a later round may come early: a
 * message says which round it is.
 */
static void reap(struct res *r, int sends, int recvs, void (*check)(struct res *, struct ibv_wc *))
{
	uint64_t end = now_ms() + 60000;
	struct ibv_wc wc[16];

	while (sends > 0 || recvs_seen < recvs) {
		int n = ibv_poll_cq(r->cq, 16, wc);

		if (n < 0)
			FAIL("poll_cq");
		for (int k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS)
				FAIL("completion %s (id 0x%llx)", ibv_wc_status_str(wc[k].status),
				     (unsigned long long)wc[k].wr_id);
			if (wc[k].opcode & IBV_WC_RECV) {
				check(r, &wc[k]);
				recvs_seen++;
			} else {
				sends--;
			}
		}
		if (!n && now_ms() > end)
			FAIL("%d sends and %d receives did not complete", sends,
			     recvs - recvs_seen);
	}
}

/* Receive ids: channel << 16 | slot. Channels: 0 x, 1 in, 2 UD. */
static void check_msg(struct res *r, struct ibv_wc *wc)
{
	int ch = (int)(wc->wr_id >> 16), slot = (int)(wc->wr_id & 0xffff);
	int prev = (me + per_end - 1) % per_end;
	const uint8_t *b;

	if (ch == 0) {
		b = r->buf + RX_X + (size_t)slot * MSG;
		if (wc->byte_len != MSG || !same(b, MSG, !me_end, me, 0))
			FAIL("the partner's SEND %d is wrong", slot);
	} else if (ch == 1) {
		b = r->buf + RX_IN + (size_t)slot * MSG;
		if (wc->byte_len != MSG || !same(b, MSG, me_end, prev, 1))
			FAIL("the previous neighbour's SEND %d is wrong", slot);
	} else {
		b = r->buf + RX_UD + (size_t)slot * (GRH + MSG) + GRH;
		if (wc->byte_len != GRH + MSG ||
		    (!same(b, MSG, !me_end, me, 2) && !same(b, MSG, me_end, prev, 3)))
			FAIL("datagram %d is wrong (%u bytes from QP 0x%x)", slot, wc->byte_len,
			     wc->src_qp);
	}
}

static void check_write(struct res *r, struct ibv_wc *wc)
{
	int ch = (int)(wc->wr_id >> 16);
	int prev = (me + per_end - 1) % per_end;

	if (!(wc->wc_flags & IBV_WC_WITH_IMM) || ntohl(wc->imm_data) != 0xbeef0000u + (uint32_t)ch)
		FAIL("WRITE_WITH_IMM: immediate 0x%x", ntohl(wc->imm_data));
	if (ch == 0 && !same(r->buf + WTGT, BIG, !me_end, me, 4))
		FAIL("the partner's 64 KiB WRITE is wrong");
	if (ch == 1 && !same(r->buf + WTGT + BIG, BIG, me_end, prev, 5))
		FAIL("the previous neighbour's 64 KiB WRITE is wrong");
}

static int child(int end, int i)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct res r = { 0 };
	int next = (i + 1) % per_end, prev = (i + per_end - 1) % per_end;
	const struct pub *pp, *pn, *pv;
	struct pub *mine = &sh->p[end][i];

	me_end = end;
	me = i;
	for (int k = 0; list && list[k]; k++)
		if (!strcmp(ibv_get_device_name(list[k]), devs[end]))
			r.ctx = ibv_open_device(list[k]);
	ibv_free_device_list(list);
	if (!r.ctx)
		FAIL("cannot open the device");
	r.pd = ibv_alloc_pd(r.ctx);
	r.cq = ibv_create_cq(r.ctx, 8 * iters + 64, NULL, NULL, 0);
	r.buf = aligned_alloc(4096, BUFLEN);
	if (!r.pd || !r.cq || !r.buf || ibv_query_port(r.ctx, 1, &pa))
		FAIL("setup: %s", strerror(errno));
	memset(r.buf, 0, BUFLEN);
	r.mr = ibv_reg_mr(r.pd, r.buf, BUFLEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						      IBV_ACCESS_REMOTE_READ);
	if (!r.mr)
		FAIL("reg_mr: %s", strerror(errno));
	for (int g = 0; g < pa.gid_tbl_len; g++) {
		union ibv_gid gid;

		if (!ibv_query_gid(r.ctx, 1, g, &gid) && gid.raw[10] == 0xff && gid.raw[11] == 0xff) {
			r.gid = gid;
			r.gid_index = g;
		}
	}
	r.x = qp_new(&r, IBV_QPT_RC, iters + 4);
	r.out = qp_new(&r, IBV_QPT_RC, iters + 4);
	r.in = qp_new(&r, IBV_QPT_RC, iters + 4);
	r.ud = qp_new(&r, IBV_QPT_UD, 2 * iters + 4);
	mine->qpn_x = r.x->qp_num;
	mine->qpn_out = r.out->qp_num;
	mine->qpn_in = r.in->qp_num;
	mine->qpn_ud = r.ud->qp_num;
	mine->addr = (uintptr_t)(r.buf + WTGT);
	mine->rkey = r.mr->rkey;
	memcpy(mine->gid, r.gid.raw, 16);
	/* every receive of the whole run, before anyone sends */
	for (int k = 0; k < iters; k++) {
		post_recv(&r, r.x, RX_X + (size_t)k * MSG, MSG, 0u << 16 | k);
		post_recv(&r, r.in, RX_IN + (size_t)k * MSG, MSG, 1u << 16 | k);
	}
	for (int k = 0; k < 2 * iters; k++)
		post_recv(&r, r.ud, RX_UD + (size_t)k * (GRH + MSG), GRH + MSG, 2u << 16 | k);
	barrier(0);	/* all 2 * per_end clients are attached at once now */

	pp = &sh->p[!end][i];
	pn = &sh->p[end][next];
	pv = &sh->p[end][prev];
	rc_connect(&r, r.x, pp->qpn_x, pp->gid);
	rc_connect(&r, r.out, pn->qpn_in, pn->gid);
	rc_connect(&r, r.in, pv->qpn_out, pv->gid);
	ud_ready(r.ud);
	r.ah_partner = ah_to(&r, pp->gid);
	r.ah_next = ah_to(&r, pn->gid);
	barrier(1);

	for (int k = 0; k < iters; k++) {
		fill(r.buf + TX, MSG, end, i, k, 0);
		fill(r.buf + TX + MSG, MSG, end, i, k, 1);
		fill(r.buf + TX + 2 * MSG, MSG, end, i, k, 2);
		fill(r.buf + TX + 3 * MSG, MSG, end, i, k, 3);
		post_send(&r, r.x, IBV_WR_SEND, TX, MSG, 1, NULL, 0, 0, 0, 0);
		post_send(&r, r.out, IBV_WR_SEND, TX + MSG, MSG, 2, NULL, 0, 0, 0, 0);
		post_send(&r, r.ud, IBV_WR_SEND, TX + 2 * MSG, MSG, 3, r.ah_partner, pp->qpn_ud, 0,
			  0, 0);
		post_send(&r, r.ud, IBV_WR_SEND, TX + 3 * MSG, MSG, 4, r.ah_next, pn->qpn_ud, 0, 0,
			  0);
		/* its own four sends (the buffers are reused next round) */
		reap(&r, 4, 0, check_msg);
	}
	/* and every message of every round for it */
	reap(&r, 0, 4 * iters, check_msg);
	/* the WRITE targets' receives: one each on x and in */
	post_recv(&r, r.x, RX_X, MSG, 0u << 16 | 0);
	post_recv(&r, r.in, RX_IN, MSG, 1u << 16 | 0);
	barrier(2);
	fill(r.buf + WSRC, BIG, end, i, 1000, 4);
	fill(r.buf + WSRC + BIG, BIG, end, i, 1000, 5);
	post_send(&r, r.x, IBV_WR_RDMA_WRITE, WSRC, BIG, 5, NULL, 0, pp->addr, pp->rkey, 0);
	post_send(&r, r.x, IBV_WR_RDMA_WRITE_WITH_IMM, TX, 0, 6, NULL, 0, pp->addr, pp->rkey,
		  0xbeef0000u);
	post_send(&r, r.out, IBV_WR_RDMA_WRITE, WSRC + BIG, BIG, 7, NULL, 0, pn->addr + BIG,
		  pn->rkey, 0);
	post_send(&r, r.out, IBV_WR_RDMA_WRITE_WITH_IMM, TX, 0, 8, NULL, 0, pn->addr + BIG,
		  pn->rkey, 0xbeef0001u);
	recvs_seen = 0;
	reap(&r, 4, 2, check_write);
	/* nobody leaves before everybody got everything (a departure fails its peers' QPs) */
	barrier(3);
	ibv_destroy_ah(r.ah_partner);
	ibv_destroy_ah(r.ah_next);
	ibv_destroy_qp(r.x);
	ibv_destroy_qp(r.out);
	ibv_destroy_qp(r.in);
	ibv_destroy_qp(r.ud);
	ibv_dereg_mr(r.mr);
	ibv_destroy_cq(r.cq);
	ibv_dealloc_pd(r.pd);
	ibv_close_device(r.ctx);
	free(r.buf);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pids[2][MAX_PER_END];
	uint64_t t0 = now_ms();
	int opt, bad = 0;

	while ((opt = getopt(argc, argv, "n:i:a:b:")) != -1) {
		switch (opt) {
		case 'n':
			per_end = atoi(optarg);
			break;
		case 'i':
			iters = atoi(optarg);
			break;
		case 'a':
			devs[0] = optarg;
			break;
		case 'b':
			devs[1] = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-n PER_END] [-i ITERS] [-a DEV0] [-b DEV1]\n",
				argv[0]);
			return 2;
		}
	}
	if (per_end < 2 || per_end > MAX_PER_END || iters < 1 || iters > 1000) {
		fprintf(stderr, "-n 2..%d, -i 1..1000\n", MAX_PER_END);
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < per_end; i++) {
			pids[e][i] = fork();
			if (pids[e][i] < 0) {
				perror("fork");
				atomic_store(&sh->failed, 1);
				return 1;
			}
			if (!pids[e][i]) {
				alarm(600);
				_exit(child(e, i));
			}
		}
	}
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < per_end; i++) {
			int st;

			if (waitpid(pids[e][i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
				if (!bad)
					fprintf(stderr, "FAIL: process %d of %s: %s %d\n", i, devs[e],
						WIFSIGNALED(st) ? "signal" : "status",
						WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
				bad++;
				atomic_store(&sh->failed, 1);
			}
		}
	}
	printf("%s: %d processes per end, %d rounds: RC across, RC loopback ring, UD both ways, "
	       "64 KiB WRITEs (%llu ms)\n", bad ? "FAIL" : "ok", per_end, iters,
	       (unsigned long long)(now_ms() - t0));
	return bad ? 1 : 0;
}
