// SPDX-License-Identifier: MIT
/*
 * ntb_stress_test: drives the ntb engine harder than perftest does, to find what a loaded
 * machine finds once in a thousand runs (the "retry exceeded" flake of docs/ntb-verbs.md:
 * a transport-timer rewind restarted a half-received SEND and its receive was flushed).
 *
 * Two processes: a sender on device A and a receiver on device B (the same device: loopback).
 * Q RC QPs between them, all on one pair of rings. The sender keeps a window of W messages in
 * flight per QP: SENDs, SENDs with immediate and RDMA WRITEs with immediate of 0 .. S bytes
 * (many segments, more than a small ring holds), every one signaled. The receiver has only R
 * receives posted (per QP, or in one SRQ with -S) and posts each one again after it checked
 * what arrived, so RNR NAKs, go-back-N and ring-full waits happen all the time; with -H, as
 * many busy processes compete for the CPUs. Every byte of every message is checked, the
 * order of each QP's messages too, and every completion must succeed. The whole exchange is
 * repeated L times with fresh QPs (-l).
 *
 * usage: ntb_stress_test [-a DEV] [-b DEV] [-q QPS] [-n MSGS] [-s MAXLEN] [-w WINDOW]
 *                        [-r RECVS] [-t TIMEOUT] [-S] [-H HOGS] [-l LOOPS] [-x SEED]
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

#define MAX_QPS		32
#define SLOTS		64		/* WRITE targets per QP, reused once checked */
#define HDR		12		/* qp, seq, len at the start of every message of >= 12 B */

static const char *dev_a = "ntb_0", *dev_b = "ntb_1";
static int nqp = 4, nmsg = 400, maxlen = 100000, window = 16, nrecv = 4, timeout = 14;
static int hogs, loops = 1;
static bool use_srq;
static unsigned int seed = 1;

/* What the two processes share: addresses, and how far the receiver has checked. */
struct shared {
	_Atomic int stage[2];		/* per side: 1 QPs made, 2 connected, 3 done, -1 failed */
	uint32_t qpn[2][MAX_QPS];
	uint8_t gid[2][16];
	uint64_t wbase;			/* receiver: WRITE targets, SLOTS x maxlen per QP */
	uint32_t wrkey;
	_Atomic int checked[MAX_QPS];	/* receiver: messages of each QP checked */
};

static struct shared *sh;
static int side;			/* 0 sender, 1 receiver */

#define FAIL(...)                                                                           \
	do {                                                                                 \
		fprintf(stderr, "FAIL [%s] ", side ? "receiver" : "sender");                 \
		fprintf(stderr, __VA_ARGS__);                                                \
		fprintf(stderr, "\n");                                                       \
		atomic_store(&sh->stage[side], -1);                                          \
		exit(1);                                                                     \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wait_stage(int who, int want)
{
	uint64_t end = now_ms() + 120000;

	while (atomic_load(&sh->stage[who]) < want) {
		if (atomic_load(&sh->stage[who]) < 0 || atomic_load(&sh->stage[!who]) < 0)
			exit(1);
		if (now_ms() > end)
			FAIL("the other side did not reach stage %d", want);
		usleep(1000);
	}
}

/* The length and opcode of message seq of QP q: the same on both sides. */
static uint32_t msg_len(int q, int seq)
{
	uint32_t x = (uint32_t)(q * 2654435761u) ^ (uint32_t)(seq * 40503u) ^ seed * 97u;

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	/* mostly multi-segment, sometimes empty or tiny */
	switch (x % 8) {
	case 0:
		return x % 16;
	case 1:
		return 16 + x % 200;
	default:
		return (x >> 3) % (uint32_t)(maxlen + 1);
	}
}

static enum ibv_wr_opcode msg_op(int q, int seq)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
						   IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND };

	return ops[(q + seq) % 4];
}

static uint8_t pat(int q, int seq, uint32_t i)
{
	uint32_t x = (uint32_t)q * 7919u + (uint32_t)seq * 104729u + i * 2654435761u + seed;

	return (uint8_t)(x ^ (x >> 11) ^ (x >> 21));
}

static void fill(uint8_t *b, int q, int seq, uint32_t len)
{
	uint32_t h[3] = { (uint32_t)q, (uint32_t)seq, len };

	for (uint32_t i = 0; i < len; i++)
		b[i] = pat(q, seq, i);
	if (len >= HDR)
		memcpy(b, h, HDR);
}

static bool good(const uint8_t *b, int q, int seq, uint32_t len)
{
	uint32_t h[3] = { (uint32_t)q, (uint32_t)seq, len };

	if (len >= HDR && memcmp(b, h, HDR))
		return false;
	for (uint32_t i = len >= HDR ? HDR : 0; i < len; i++)
		if (b[i] != pat(q, seq, i))
			return false;
	return true;
}

struct res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp[MAX_QPS];
	uint8_t *buf;
	size_t len;
	struct ibv_mr *mr;
	int gid_index;
	union ibv_gid gid;
};

static void open_dev(struct res *r, const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			r->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!r->ctx)
		FAIL("cannot open %s", name);
	r->pd = ibv_alloc_pd(r->ctx);
	r->cq = ibv_create_cq(r->ctx, 4096, NULL, NULL, 0);
	if (!r->pd || !r->cq || ibv_query_port(r->ctx, 1, &pa))
		FAIL("setup: %s", strerror(errno));
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;

		if (!ibv_query_gid(r->ctx, 1, i, &g) && g.raw[10] == 0xff && g.raw[11] == 0xff) {
			r->gid = g;
			r->gid_index = i;
		}
	}
}

static void make_qps(struct res *r)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = r->cq, .recv_cq = r->cq, .srq = r->srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = window, .max_recv_wr = nrecv, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	for (int q = 0; q < nqp; q++) {
		r->qp[q] = ibv_create_qp(r->pd, &ia);
		if (!r->qp[q])
			FAIL("create_qp: %s", strerror(errno));
		if (ibv_modify_qp(r->qp[q], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						    IBV_QP_ACCESS_FLAGS))
			FAIL("to INIT: %s", strerror(errno));
		sh->qpn[side][q] = r->qp[q]->qp_num;
	}
	memcpy(sh->gid[side], r->gid.raw, 16);
}

static void connect_qps(struct res *r)
{
	for (int q = 0; q < nqp; q++) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096,
					 .dest_qp_num = sh->qpn[!side][q], .rq_psn = 0xfffff0,
					 .max_dest_rd_atomic = 1, .min_rnr_timer = 1 };

		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.sgid_index = r->gid_index;
		a.ah_attr.grh.hop_limit = 1;
		memcpy(a.ah_attr.grh.dgid.raw, sh->gid[!side], 16);
		if (ibv_modify_qp(r->qp[q], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						    IBV_QP_MAX_DEST_RD_ATOMIC |
						    IBV_QP_MIN_RNR_TIMER))
			FAIL("to RTR: %s", strerror(errno));
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0xfffff0;	/* the PSNs wrap during the run */
		a.timeout = (uint8_t)timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 1;
		if (ibv_modify_qp(r->qp[q], &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
						    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						    IBV_QP_MAX_QP_RD_ATOMIC))
			FAIL("to RTS: %s", strerror(errno));
	}
}

static void close_res(struct res *r)
{
	for (int q = 0; q < nqp; q++)
		if (r->qp[q] && ibv_destroy_qp(r->qp[q]))
			FAIL("destroy_qp");
	if (r->srq)
		ibv_destroy_srq(r->srq);
	ibv_dereg_mr(r->mr);
	ibv_destroy_cq(r->cq);
	ibv_dealloc_pd(r->pd);
	ibv_close_device(r->ctx);
	free(r->buf);
}

/* ---- the receiver ------------------------------------------------------------------------- */

static int rx_next[MAX_QPS];		/* the next message of each QP */

static void post_one_recv(struct res *r, int q, int k)
{
	/* receive k of QP q (or of the SRQ: q is -1), at its own place in buf */
	size_t slot = (size_t)(q < 0 ? k : q * nrecv + k) * (size_t)maxlen;
	struct ibv_sge s = { (uintptr_t)(r->buf + slot), (uint32_t)maxlen, r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &s, .num_sge = 1 }, *bad;

	if (maxlen == 0)
		s.length = 0;
	if (q < 0 ? ibv_post_srq_recv(r->srq, &wr, &bad) : ibv_post_recv(r->qp[q], &wr, &bad))
		FAIL("post_recv: %s", strerror(errno));
}

static int receiver(void)
{
	struct res r = { 0 };
	size_t rx_len = (size_t)(use_srq ? nrecv : nqp * nrecv) * maxlen;
	size_t w_len = (size_t)nqp * SLOTS * maxlen;
	int total = 0, want = nqp * nmsg;
	uint64_t end;

	open_dev(&r, dev_b);
	r.len = rx_len + w_len + 64;
	r.buf = aligned_alloc(4096, (r.len + 4095) & ~(size_t)4095);
	if (!r.buf)
		FAIL("malloc");
	r.mr = ibv_reg_mr(r.pd, r.buf, r.len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!r.mr)
		FAIL("reg_mr: %s", strerror(errno));
	if (use_srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = nrecv, .max_sge = 1 } };

		r.srq = ibv_create_srq(r.pd, &sa);
		if (!r.srq)
			FAIL("create_srq: %s", strerror(errno));
	}
	make_qps(&r);
	sh->wbase = (uintptr_t)(r.buf + rx_len);
	sh->wrkey = r.mr->rkey;
	for (int q = 0; q < nqp; q++) {
		rx_next[q] = 0;
		atomic_store(&sh->checked[q], 0);
	}
	for (int k = 0; k < nrecv; k++)
		for (int q = 0; q < (use_srq ? 1 : nqp); q++)
			post_one_recv(&r, use_srq ? -1 : q, k);
	atomic_store(&sh->stage[1], 1);
	wait_stage(0, 1);
	connect_qps(&r);
	atomic_store(&sh->stage[1], 2);
	end = now_ms() + 120000;
	while (total < want) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(r.cq, 16, wc);

		if (n < 0)
			FAIL("poll_cq");
		if (!n && now_ms() > end)
			FAIL("%d of %d messages arrived", total, want);
		if (!n && atomic_load(&sh->stage[0]) < 0)
			exit(1);
		for (int i = 0; i < n; i++) {
			int q = -1, seq;
			uint32_t len;
			const uint8_t *b;

			if (wc[i].status != IBV_WC_SUCCESS)
				FAIL("receive completion %s after %d messages",
				     ibv_wc_status_str(wc[i].status), total);
			for (int k = 0; k < nqp; k++)
				if (wc[i].qp_num == r.qp[k]->qp_num)
					q = k;
			if (q < 0)
				FAIL("a completion of QP 0x%x", wc[i].qp_num);
			seq = rx_next[q]++;
			len = msg_len(q, seq);
			if (wc[i].byte_len != len)
				FAIL("QP %d message %d: %u bytes, want %u", q, seq, wc[i].byte_len,
				     len);
			if (msg_op(q, seq) == IBV_WR_RDMA_WRITE_WITH_IMM) {
				b = r.buf + rx_len + ((size_t)q * SLOTS + seq % SLOTS) * maxlen;
				if (wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM)
					FAIL("QP %d message %d: opcode %d", q, seq, wc[i].opcode);
			} else {
				b = r.buf + wc[i].wr_id;
				if (wc[i].opcode != IBV_WC_RECV)
					FAIL("QP %d message %d: opcode %d", q, seq, wc[i].opcode);
			}
			if (msg_op(q, seq) != IBV_WR_SEND &&
			    (!(wc[i].wc_flags & IBV_WC_WITH_IMM) ||
			     ntohl(wc[i].imm_data) != (uint32_t)seq))
				FAIL("QP %d message %d: immediate", q, seq);
			if (!good(b, q, seq, len))
				FAIL("QP %d message %d of %u bytes: wrong data", q, seq, len);
			/* the receive can take the next message; the WRITE slot too */
			if (use_srq) {
				post_one_recv(&r, -1, (int)(wc[i].wr_id / maxlen));
			} else {
				size_t k = wc[i].wr_id / maxlen;

				post_one_recv(&r, (int)(k / nrecv), (int)(k % nrecv));
			}
			atomic_store(&sh->checked[q], seq + 1);
			total++;
		}
	}
	atomic_store(&sh->stage[1], 3);
	/* the sender's last completions need our last ACKs: leave after it is done */
	wait_stage(0, 3);
	close_res(&r);
	return 0;
}

/* ---- the sender --------------------------------------------------------------------------- */

static int sender(void)
{
	struct res r = { 0 };
	int sent[MAX_QPS] = { 0 }, done[MAX_QPS] = { 0 }, total = 0, want = nqp * nmsg;
	uint8_t *slot_of;
	uint64_t end;

	open_dev(&r, dev_a);
	/* a source buffer per message in flight */
	r.len = (size_t)nqp * window * maxlen + 64;
	r.buf = aligned_alloc(4096, (r.len + 4095) & ~(size_t)4095);
	slot_of = calloc((size_t)nqp * window, 1);
	if (!r.buf || !slot_of)
		FAIL("malloc");
	r.mr = ibv_reg_mr(r.pd, r.buf, r.len, 0);
	if (!r.mr)
		FAIL("reg_mr: %s", strerror(errno));
	make_qps(&r);
	atomic_store(&sh->stage[0], 1);
	wait_stage(1, 2);
	connect_qps(&r);
	atomic_store(&sh->stage[0], 2);
	end = now_ms() + 120000;
	while (total < want) {
		struct ibv_wc wc[16];
		int n;

		for (int q = 0; q < nqp; q++) {
			/* a window of messages; a WRITE slot only once its last use was checked */
			while (sent[q] < nmsg && sent[q] - done[q] < window &&
			       sent[q] - atomic_load(&sh->checked[q]) < SLOTS) {
				int seq = sent[q];
				uint32_t len = msg_len(q, seq);
				uint8_t *src = r.buf + ((size_t)q * window + seq % window) * maxlen;
				struct ibv_sge s = { (uintptr_t)src, len, r.mr->lkey };
				struct ibv_send_wr wr = { .wr_id = (uint64_t)q << 32 | (uint32_t)seq,
							  .sg_list = &s, .num_sge = 1,
							  .opcode = msg_op(q, seq),
							  .send_flags = IBV_SEND_SIGNALED,
							  .imm_data = htonl((uint32_t)seq) }, *bad;

				fill(src, q, seq, len);
				if (wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
					wr.wr.rdma.remote_addr = sh->wbase +
						((size_t)q * SLOTS + seq % SLOTS) * maxlen;
					wr.wr.rdma.rkey = sh->wrkey;
				}
				if (ibv_post_send(r.qp[q], &wr, &bad))
					FAIL("post_send: %s", strerror(errno));
				sent[q]++;
			}
		}
		n = ibv_poll_cq(r.cq, 16, wc);
		if (n < 0)
			FAIL("poll_cq");
		if (!n && now_ms() > end)
			FAIL("%d of %d sends completed", total, want);
		if (!n && atomic_load(&sh->stage[1]) < 0)
			exit(1);
		for (int i = 0; i < n; i++) {
			int q = (int)(wc[i].wr_id >> 32), seq = (int)(uint32_t)wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS)
				FAIL("QP %d message %d: completion %s after %d", q, seq,
				     ibv_wc_status_str(wc[i].status), total);
			if (q >= nqp || seq != done[q])
				FAIL("QP %d: completion of message %d, want %d", q, seq, done[q]);
			done[q]++;
			total++;
		}
	}
	atomic_store(&sh->stage[0], 3);
	wait_stage(1, 3);
	close_res(&r);
	free(slot_of);
	return 0;
}

static int one_loop(void)
{
	pid_t rx, tx;
	int st, bad = 0;

	memset(sh, 0, sizeof(*sh));
	rx = fork();
	if (!rx) {
		side = 1;
		alarm(300);
		_exit(receiver());
	}
	tx = fork();
	if (!tx) {
		side = 0;
		alarm(300);
		_exit(sender());
	}
	if (waitpid(tx, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		bad = 1;
	if (waitpid(rx, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		bad = 1;
	return bad;
}

int main(int argc, char **argv)
{
	pid_t hog[16];
	int opt, failed = 0, l;
	uint64_t t0 = now_ms();

	while ((opt = getopt(argc, argv, "a:b:q:n:s:w:r:t:SH:l:x:")) != -1) {
		switch (opt) {
		case 'a': dev_a = optarg; break;
		case 'b': dev_b = optarg; break;
		case 'q': nqp = atoi(optarg); break;
		case 'n': nmsg = atoi(optarg); break;
		case 's': maxlen = atoi(optarg); break;
		case 'w': window = atoi(optarg); break;
		case 'r': nrecv = atoi(optarg); break;
		case 't': timeout = atoi(optarg); break;
		case 'S': use_srq = true; break;
		case 'H': hogs = atoi(optarg); break;
		case 'l': loops = atoi(optarg); break;
		case 'x': seed = (unsigned int)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-a DEV] [-b DEV] [-q QPS] [-n MSGS] [-s MAXLEN] "
				"[-w WINDOW] [-r RECVS] [-t TIMEOUT] [-S] [-H HOGS] [-l LOOPS] "
				"[-x SEED]\n", argv[0]);
			return 2;
		}
	}
	if (nqp < 1 || nqp > MAX_QPS || nmsg < 1 || maxlen < 1 || maxlen > (1 << 24) ||
	    window < 1 || window > SLOTS || nrecv < 1 || timeout < 1 || timeout > 31 ||
	    hogs < 0 || hogs > 16 || loops < 1) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	for (int i = 0; i < hogs; i++) {
		hog[i] = fork();
		if (!hog[i]) {
			volatile unsigned long x = 0;

			alarm(3600);
			for (;;)
				x++;
		}
	}
	for (l = 0; l < loops && !failed; l++) {
		seed += (unsigned int)l;
		failed = one_loop();
		if (failed)
			fprintf(stderr, "FAIL: loop %d of %d (seed %u)\n", l + 1, loops, seed);
	}
	for (int i = 0; i < hogs; i++) {
		kill(hog[i], SIGKILL);
		waitpid(hog[i], NULL, 0);
	}
	printf("%s: %d of %d loops, %d QPs x %d messages of up to %d bytes, window %d, %d %s "
	       "receives, %d hogs (%llu ms)\n", failed ? "FAIL" : "ok", l - failed, loops, nqp, nmsg,
	       maxlen, window, nrecv, use_srq ? "shared" : "per-QP", hogs,
	       (unsigned long long)(now_ms() - t0));
	return failed;
}
