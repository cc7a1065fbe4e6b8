// SPDX-License-Identifier: MIT
/*
 * cx4_model_perf: a quick look at the model's data path speed between two modelled ports in
 * one process, driven like perftest drives a card (not a test: numbers depend on the machine;
 * the real benchmarks are cx4-driver's bench scripts, with the same-run baselines of
 * bench/bv_baseline).
 *
 *   cx4_model_perf write-bw SIZE [SECONDS]   RDMA WRITE bandwidth, 128 WQEs in flight,
 *                                            every 16th signalled (ib_write_bw style)
 *   cx4_model_perf read-bw SIZE [SECONDS]    the same with RDMA READ
 *   cx4_model_perf write-lat-1dev [SECONDS]  the same with both QPs on one device
 *   cx4_model_perf write-lat [SECONDS]       8-byte RDMA WRITE ping-pong, polled memory
 *                                            (ib_write_lat style): median half round trip
 * Memory is registered by pid+va (as a client's malloc'd buffers are) unless -f (memfd).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tverbs.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void up(struct tside *s, size_t mrlen, int kind)
{
	T_EQ(tdev_open(&s->t, NULL), 0);
	tside_bringup(s, 10);
	T_EQ(tqp_create(&s->t, &s->qp, CX4_QP_ST_RC, s->pd, &s->scq, &s->rcq, 9, 9, NULL), 0);
	T_EQ(tmr_reg(&s->t, &s->mr, mrlen, TA_ALL, kind, s->pd), 0);
}

static void connect2(struct tside *a, struct tside *b)
{
	struct tconn ca = {
	    .rip = b->t.ip, .rqpn = b->qp.qpn, .mtu = CX4_QP_MTU_4096, .retry = 7, .rnr_retry = 7};
	struct tconn cb = {
	    .rip = a->t.ip, .rqpn = a->qp.qpn, .mtu = CX4_QP_MTU_4096, .retry = 7, .rnr_retry = 7};

	T_EQ(tqp_connect(&a->t, &a->qp, &ca), 0);
	T_EQ(tqp_connect(&b->t, &b->qp, &cb), 0);
}

static void stats(const char *who, struct tdev *t)
{
	struct cx4_model_stats s;

	cx4_model_get_stats(t->bus, &s);
	printf(
	    "  %s: tx %lu rx %lu retrans %lu naks %lu rnr %lu drops %lu/%lu wakeups %lu eqes %lu\n",
	    who, (unsigned long)s.tx_pkts, (unsigned long)s.rx_pkts, (unsigned long)s.retransmits,
	    (unsigned long)s.naks_sent, (unsigned long)s.rnr_naks_sent,
	    (unsigned long)s.rx_drop_icrc, (unsigned long)s.rx_drop_qp, (unsigned long)s.wakeups,
	    (unsigned long)s.eqes);
}

static void rdma_bw(size_t size, double secs, int kind, uint8_t opcode)
{
	struct tside a, b;
	const int depth = 128, sig = 16;
	uint64_t posted = 0, done = 0;
	double t0, t1;
	uint8_t c[64];

	up(&a, size, kind);
	up(&b, size, kind);
	connect2(&a, &b);
	t0 = now();
	t1 = t0;
	while (t1 - t0 < secs) {
		while (posted - done < (uint64_t)depth) {
			struct tsge s = {
			    .len = (uint32_t)size, .lkey = a.mr.key, .addr = (uintptr_t)a.mr.buf};
			struct tsend w = {.opcode = opcode,
					  .sg = &s,
					  .nsg = 1,
					  .raddr = (uintptr_t)b.mr.buf,
					  .rkey = b.mr.key,
					  .unsignaled = (posted + 1) % sig != 0};

			tqp_post_send(&a.t, &a.qp, &w);
			posted++;
		}
		if (tcq_poll(&a.t, &a.scq, c, 0)) {
			if (c[63] >> 4 != MLX5_CQE_REQ)
				T_FAIL("error CQE, syndrome 0x%x", c[0x37]);
			done += sig;
		}
		t1 = now();
	}
	printf("%s_bw_%zu=%.2f Gb/s (%.0f msg/s)\n",
	       opcode == MLX5_OPCODE_RDMA_READ ? "read" : "write", size,
	       done * size * 8 / (t1 - t0) / 1e9, done / (t1 - t0));
	stats("A", &a.t);
	stats("B", &b.t);
	tdev_close(&a.t);
	tdev_close(&b.t);
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static void write_lat(double secs, int kind, bool one_dev)
{
	struct tside a, b;
	double *lat = malloc(sizeof(double) * 1000000);
	size_t n = 0;
	double start = now();
	volatile uint8_t *ina, *inb;
	uint8_t c[64];

	up(&a, 4096, kind);
	if (one_dev) {
		/* both QPs on one device: one engine, the packets loop back to its own port */
		b = a;
		T_EQ(tcq_create(&a.t, &b.scq, 10), 0);
		T_EQ(tcq_create(&a.t, &b.rcq, 10), 0);
		T_EQ(tqp_create(&a.t, &b.qp, CX4_QP_ST_RC, a.pd, &b.scq, &b.rcq, 9, 9, NULL), 0);
		T_EQ(tmr_reg(&a.t, &b.mr, 4096, TA_ALL, kind, a.pd), 0);
	} else {
		up(&b, 4096, kind);
	}
	connect2(&a, &b);
	ina = a.mr.buf + 64;
	inb = b.mr.buf + 64;
	for (uint8_t v = 1; now() - start < secs && n < 1000000; v++) {
		struct tsge sa = {.len = 8, .lkey = a.mr.key, .addr = (uintptr_t)a.mr.buf};
		struct tsge sb = {.len = 8, .lkey = b.mr.key, .addr = (uintptr_t)b.mr.buf};
		struct tsend wa = {.opcode = MLX5_OPCODE_RDMA_WRITE,
				   .sg = &sa,
				   .nsg = 1,
				   .raddr = (uintptr_t)inb,
				   .rkey = b.mr.key,
				   .unsignaled = true};
		struct tsend wb = {.opcode = MLX5_OPCODE_RDMA_WRITE,
				   .sg = &sb,
				   .nsg = 1,
				   .raddr = (uintptr_t)ina,
				   .rkey = a.mr.key,
				   .unsignaled = true};
		double t0 = now();

		if (!v)
			v = 1;
		memset(a.mr.buf, v, 8);
		memset(b.mr.buf, v, 8);
		if (n % 32 == 31)
			wa.unsignaled = wb.unsignaled = false;
		tqp_post_send(&a.t, &a.qp, &wa);
		while (inb[7] != v)
			;
		tqp_post_send(&b.t, &b.qp, &wb);
		while (ina[7] != v)
			;
		lat[n++] = (now() - t0) / 2 * 1e6;
		if (!wa.unsignaled) {
			while (!tcq_poll(&a.t, &a.scq, c, 0))
				;
			while (!tcq_poll(&b.t, &b.scq, c, 0))
				;
		}
	}
	qsort(lat, n, sizeof(*lat), cmp);
	printf("write_half_rtt_8=%.2f us (median of %zu)\n", lat[n / 2], n);
	stats("A", &a.t);
	if (!one_dev)
		stats("B", &b.t);
	free(lat);
	tdev_close(&a.t);
	if (!one_dev)
		tdev_close(&b.t);
}

int main(int argc, char **argv)
{
	int kind = TMR_PID, i = 1;

	t_name = "perf";
	if (argc > 1 && !strcmp(argv[1], "-f")) {
		kind = TMR_FD;
		i++;
	}
	if (argc > i + 1 && !strcmp(argv[i], "write-bw")) {
		rdma_bw(strtoul(argv[i + 1], NULL, 0), argc > i + 2 ? atof(argv[i + 2]) : 2, kind,
			MLX5_OPCODE_RDMA_WRITE);
		return 0;
	}
	if (argc > i + 1 && !strcmp(argv[i], "read-bw")) {
		rdma_bw(strtoul(argv[i + 1], NULL, 0), argc > i + 2 ? atof(argv[i + 2]) : 2, kind,
			MLX5_OPCODE_RDMA_READ);
		return 0;
	}
	if (argc > i && !strcmp(argv[i], "write-lat")) {
		write_lat(argc > i + 1 ? atof(argv[i + 1]) : 2, kind, false);
		return 0;
	}
	if (argc > i && !strcmp(argv[i], "write-lat-1dev")) {
		write_lat(argc > i + 1 ? atof(argv[i + 1]) : 2, kind, true);
		return 0;
	}
	fprintf(
	    stderr,
	    "usage: cx4_model_perf [-f] write-bw|read-bw SIZE [SECONDS] | write-lat [SECONDS]\n");
	return 2;
}
