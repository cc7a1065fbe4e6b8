// SPDX-License-Identifier: MIT
/*
 * bv_scale: how a device behaves as its objects grow. One process opens two devices (the two
 * ports of a cx4 pair, or the two ends of an ntb link) and, for each count N of -q, connects N
 * RC QP pairs between them and measures:
 *
 *   qp_create_rate   QP pairs created and connected (INIT, RTR, RTS both sides) per second
 *   qp_mem_app       bytes of this process's resident memory per QP
 *   qp_mem_daemon    bytes of the daemons' resident memory per QP (-P: their pids)
 *   qps.lat          SEND ping-pong half round trip, 8 bytes, round-robin over the N pairs
 *   qps.bw           64 KiB RDMA WRITEs spread over the N pairs, at most 8 outstanding each
 *
 * and, once, MR registration of 64 KiB buffers (mr_reg_rate, mr_mem_app, mr_mem_daemon).
 * Every WRITE's target and every SEND is checked (first and last byte, the sequence number):
 * a figure of a transfer that went wrong is not a figure. Prints "ID VALUE UNIT qps=N" lines.
 *
 * usage: bv_scale -d DEV -D DEV [-g GID_INDEX] [-q N,N,...] [-t SECONDS] [-P PID,PID]
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSG_BIG		65536
#define MSG_SMALL	8
#define BW_DEPTH	8	/* outstanding WRITEs per QP */
#define MR_COUNT	1000
#define QP_STRIDE	(MSG_BIG + 4096)	/* per QP: a WRITE/SEND area, then a receive slot */

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;		/* QP_STRIDE per QP */
	size_t buf_len;
	union ibv_gid gid;
};

static int gid_index = 3;
static double seconds = 2.0;
static pid_t daemon_pids[2];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "bv_scale: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Resident memory of a process in bytes (0 when it cannot be read). */
static long rss_of(pid_t pid)
{
	char path[64], line[256];
	long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid ? (int)pid : (int)getpid());
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static long daemons_rss(void)
{
	long sum = 0;

	for (int i = 0; i < 2; i++)
		if (daemon_pids[i])
			sum += rss_of(daemon_pids[i]);
	return sum;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	if (!list)
		die("ibv_get_device_list");
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "bv_scale: no device %s\n", name);
		exit(1);
	}
	return ctx;
}

static void end_init(struct end *e, const char *name, int nqp)
{
	e->ctx = open_dev(name);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, nqp * (BW_DEPTH + 2) + 16, NULL, NULL, 0);
	e->buf_len = (size_t)nqp * QP_STRIDE;
	e->buf = aligned_alloc(4096, e->buf_len);
	if (!e->pd || !e->cq || !e->buf)
		die("pd/cq/buffer");
	memset(e->buf, 0, e->buf_len);
	e->mr = ibv_reg_mr(e->pd, e->buf, e->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr)
		die("ibv_reg_mr");
	if (ibv_query_gid(e->ctx, 1, gid_index, &e->gid))
		die("ibv_query_gid");
}

static void end_fini(struct end *e)
{
	ibv_dereg_mr(e->mr);
	free(e->buf);
	ibv_destroy_cq(e->cq);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
}

static char *send_area(struct end *e, int i)
{
	return e->buf + (size_t)i * QP_STRIDE;
}

static char *recv_slot(struct end *e, int i)
{
	return send_area(e, i) + MSG_BIG;
}

static struct ibv_qp *qp_new(struct end *e)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = BW_DEPTH + 1, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT");
	return qp;
}

static void qp_connect(struct ibv_qp *qp, struct end *peer, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .dest_qp_num = dqpn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->gid, .sgid_index = gid_index, .hop_limit = 64 } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS");
}

static void post_recv(struct end *e, struct ibv_qp *qp, int i)
{
	struct ibv_sge sge = { (uintptr_t)recv_slot(e, i), MSG_SMALL, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv");
}

static void post_send(struct end *e, struct ibv_qp *qp, int i, uint64_t seq)
{
	struct ibv_sge sge = { (uintptr_t)send_area(e, i), MSG_SMALL, e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memcpy(send_area(e, i), &seq, sizeof(seq));
	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send");
}

/* Polls CQ until a completion of OPCODE arrives; the other kinds are counted in *other. */
static struct ibv_wc wait_wc(struct ibv_cq *cq, enum ibv_wc_opcode opcode, int *other)
{
	struct ibv_wc wc;
	double limit = now() + 10;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (n == 0) {
			if (now() > limit) {
				fprintf(stderr, "bv_scale: no completion in 10 s\n");
				exit(1);
			}
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "bv_scale: completion error %s (wr %llu)\n",
				ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
			exit(1);
		}
		if (wc.opcode == opcode)
			return wc;
		(*other)++;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* SEND ping-pong, each round trip on the next QP pair: A sends, B answers. */
static double pingpong(struct end *a, struct end *b, struct ibv_qp **qa, struct ibv_qp **qb, int n)
{
	enum { MAXR = 100000 };
	double *rtt = malloc(sizeof(double) * MAXR), end = now() + seconds, med;
	int r = 0, sends_a = 0, sends_b = 0;	/* send completions pass by in wait_wc */

	if (!rtt)
		die("malloc");
	for (int i = 0; i < n; i++) {
		post_recv(a, qa[i], i);
		post_recv(b, qb[i], i);
	}
	for (uint64_t seq = 1; r < MAXR && now() < end; seq++) {
		int i = (int)(seq % n);
		double t0 = now();
		uint64_t got;
		struct ibv_wc wc;

		post_send(a, qa[i], i, seq);
		wc = wait_wc(b->cq, IBV_WC_RECV, &sends_b);
		memcpy(&got, recv_slot(b, (int)wc.wr_id), sizeof(got));
		if ((int)wc.wr_id != i || got != seq || wc.byte_len != MSG_SMALL) {
			fprintf(stderr, "bv_scale: QP %d got message %llu on %d, sent %llu on %d\n",
				i, (unsigned long long)got, (int)wc.wr_id, (unsigned long long)seq, i);
			exit(1);
		}
		post_recv(b, qb[i], i);
		post_send(b, qb[i], i, seq);
		wc = wait_wc(a->cq, IBV_WC_RECV, &sends_a);
		memcpy(&got, recv_slot(a, (int)wc.wr_id), sizeof(got));
		if ((int)wc.wr_id != i || got != seq) {
			fprintf(stderr, "bv_scale: answer %llu on %d, expected %llu on %d\n",
				(unsigned long long)got, (int)wc.wr_id, (unsigned long long)seq, i);
			exit(1);
		}
		post_recv(a, qa[i], i);
		rtt[r++] = now() - t0;
	}
	qsort(rtt, r, sizeof(double), cmp_double);
	med = r ? rtt[r / 2] / 2 : 0;
	free(rtt);
	return med;
}

/* 64 KiB WRITEs from A into B, round-robin over the pairs; each target checked at the end. */
static double write_bw(struct end *a, struct end *b, struct ibv_qp **qa, int n)
{
	int *outstanding = calloc(n, sizeof(int)), total = 0;
	uint64_t bytes = 0, *last = calloc(n, sizeof(uint64_t));
	double t0 = now(), t1;
	int i = 0;

	if (!outstanding || !last)
		die("calloc");
	for (;;) {
		int stop = (t1 = now()) - t0 >= seconds;

		/* keep every QP's queue topped up; a fresh tag in the first and last 8 bytes */
		for (int k = 0; !stop && k < n && total < n * BW_DEPTH; k++, i = (i + 1) % n) {
			if (outstanding[i] >= BW_DEPTH)
				continue;
			char *src = send_area(a, i);
			uint64_t tag = ++last[i] * 1000003u + i;
			struct ibv_sge sge = { (uintptr_t)src, MSG_BIG, a->mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { (uintptr_t)send_area(b, i), b->mr->rkey },
			}, *bad;

			memcpy(src, &tag, sizeof(tag));
			memcpy(src + MSG_BIG - sizeof(tag), &tag, sizeof(tag));
			if (ibv_post_send(qa[i], &wr, &bad))
				die("post WRITE");
			outstanding[i]++;
			total++;
		}
		if (stop && !total)
			break;
		struct ibv_wc wc[16];
		int got = ibv_poll_cq(a->cq, 16, wc);

		if (got < 0)
			die("ibv_poll_cq");
		for (int k = 0; k < got; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "bv_scale: WRITE error %s\n", ibv_wc_status_str(wc[k].status));
				exit(1);
			}
			outstanding[wc[k].wr_id]--;
			total--;
			bytes += MSG_BIG;
		}
	}
	t1 = now();
	/* every pair's target holds the tag of its last WRITE at both ends */
	for (int k = 0; k < n; k++) {
		uint64_t want = last[k] * 1000003u + k, head, tail;
		char *dst = send_area(b, k);

		memcpy(&head, dst, sizeof(head));
		memcpy(&tail, dst + MSG_BIG - sizeof(tail), sizeof(tail));
		if (last[k] && (head != want || tail != want)) {
			fprintf(stderr, "bv_scale: QP %d target holds %llx/%llx, last WRITE %llx\n", k,
				(unsigned long long)head, (unsigned long long)tail,
				(unsigned long long)want);
			exit(1);
		}
	}
	free(outstanding);
	free(last);
	return bytes * 8 / (t1 - t0) / 1e9;
}

static void measure_qps(const char *da, const char *db, int n)
{
	struct end a, b;
	struct ibv_qp **qa = calloc(n, sizeof(*qa)), **qb = calloc(n, sizeof(*qb));
	long app0, dmn0, app1, dmn1;
	double t0, t1;

	if (!qa || !qb)
		die("calloc");
	end_init(&a, da, n);
	end_init(&b, db, n);
	app0 = rss_of(0);
	dmn0 = daemons_rss();
	t0 = now();
	for (int i = 0; i < n; i++) {
		qa[i] = qp_new(&a);
		qb[i] = qp_new(&b);
		qp_connect(qa[i], &b, qb[i]->qp_num);
		qp_connect(qb[i], &a, qa[i]->qp_num);
	}
	t1 = now();
	app1 = rss_of(0);
	dmn1 = daemons_rss();
	printf("qp_create_rate %.1f pairs/s qps=%d\n", n / (t1 - t0), n);
	printf("qp_mem_app %.0f B/QP qps=%d\n", (double)(app1 - app0) / (2.0 * n), n);
	if (daemon_pids[0])
		printf("qp_mem_daemon %.0f B/QP qps=%d\n", (double)(dmn1 - dmn0) / (2.0 * n), n);
	printf("qps.lat %.3f us qps=%d size=%d\n", pingpong(&a, &b, qa, qb, n) * 1e6, n, MSG_SMALL);
	printf("qps.bw %.3f Gb/s qps=%d size=%d\n", write_bw(&a, &b, qa, n), n, MSG_BIG);
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		ibv_destroy_qp(qa[i]);
		ibv_destroy_qp(qb[i]);
	}
	end_fini(&a);
	end_fini(&b);
	free(qa);
	free(qb);
}

static void measure_mrs(const char *da)
{
	struct ibv_context *ctx = open_dev(da);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr **mr = calloc(MR_COUNT, sizeof(*mr));
	char *buf = aligned_alloc(4096, (size_t)MR_COUNT * MSG_BIG);
	long app0, dmn0, app1, dmn1;
	double t0, t1, t2;

	if (!pd || !mr || !buf)
		die("pd/buffers");
	memset(buf, 1, (size_t)MR_COUNT * MSG_BIG);	/* resident before the first measurement */
	app0 = rss_of(0);
	dmn0 = daemons_rss();
	t0 = now();
	for (int i = 0; i < MR_COUNT; i++) {
		mr[i] = ibv_reg_mr(pd, buf + (size_t)i * MSG_BIG, MSG_BIG,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
		if (!mr[i])
			die("ibv_reg_mr");
	}
	t1 = now();
	app1 = rss_of(0);
	dmn1 = daemons_rss();
	for (int i = 0; i < MR_COUNT; i++)
		if (ibv_dereg_mr(mr[i]))
			die("ibv_dereg_mr");
	t2 = now();
	printf("mr_reg_rate %.1f MRs/s size=%d\n", MR_COUNT / (t1 - t0), MSG_BIG);
	printf("mr_dereg_rate %.1f MRs/s size=%d\n", MR_COUNT / (t2 - t1), MSG_BIG);
	printf("mr_mem_app %.0f B/MR size=%d\n", (double)(app1 - app0) / MR_COUNT, MSG_BIG);
	if (daemon_pids[0])
		printf("mr_mem_daemon %.0f B/MR size=%d\n", (double)(dmn1 - dmn0) / MR_COUNT, MSG_BIG);
	free(buf);
	free(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

int main(int argc, char **argv)
{
	const char *da = NULL, *db = NULL;
	char *qlist = strdup("1,16,256");
	int opt;

	while ((opt = getopt(argc, argv, "d:D:g:q:t:P:")) != -1) {
		switch (opt) {
		case 'd': da = optarg; break;
		case 'D': db = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'q': free(qlist); qlist = strdup(optarg); break;
		case 't': seconds = atof(optarg); break;
		case 'P': sscanf(optarg, "%d,%d", &daemon_pids[0], &daemon_pids[1]); break;
		default:
			fprintf(stderr, "usage: bv_scale -d DEV -D DEV [-g GID] [-q N,...] [-t S] [-P PID,PID]\n");
			return 2;
		}
	}
	if (!da || !db || !qlist) {
		fprintf(stderr, "bv_scale: -d and -D name the two devices\n");
		return 2;
	}
	for (char *tok = strtok(qlist, ","); tok; tok = strtok(NULL, ",")) {
		int n = atoi(tok);

		if (n > 0)
			measure_qps(da, db, n);
	}
	measure_mrs(da);
	free(qlist);
	return 0;
}
