// SPDX-License-Identifier: MIT
/*
 * The verbs test kit (vt.h) and the test program's main:
 *
 *   cx4_verbs_test [-a DEV] [-b DEV] [-g GID_INDEX] [-v] data|errors|xverbs|pdom|all
 *
 * xverbs includes pdom (parent domains).
 *
 * DEV defaults: cx4_0 and cx4_1; give the same device twice for loopback. Exit status 0 only
 * when every check passed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vt.h"

struct vt_opts vt_opt = { .dev_a = "cx4_0", .dev_b = "cx4_1", .gid_index = -1 };
int vt_failures;

void vt_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	vt_failures++;
}

void vt_log(const char *fmt, ...)
{
	va_list ap;

	if (!vt_opt.verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

uint64_t vt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint8_t pat(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)i * 2654435761u ^ seed * 40503u;

	x ^= x >> 13;
	return (uint8_t)(x ^ (x >> 7) ^ (i >> 8));
}

void vt_fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pat(i, seed);
}

bool vt_check(const uint8_t *p, size_t n, uint32_t seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(i, seed)) {
			VT_FAIL("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, p[i],
				pat(i, seed));
			return false;
		}
	return true;
}

bool vt_check_const(const uint8_t *p, size_t n, uint8_t v, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v) {
			VT_FAIL("%s: byte %zu is 0x%02x, expected 0x%02x (untouched)", what, i,
				p[i], v);
			return false;
		}
	return true;
}

struct vt_qp_params vt_default_params(enum ibv_qp_type type)
{
	return (struct vt_qp_params){
		.type = type,
		.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12,
		.max_send_wr = 64, .max_recv_wr = 64,
	};
}

static int pick_gid(struct vt_end *e)
{
	int idx = vt_opt.gid_index;

	if (idx < 0) {
		/* perftest get_best_gid_index(): prefer RoCE v2 with an IPv4-mapped address */
		idx = 0;
		for (int i = 0; i < e->port.gid_tbl_len; i++) {
			struct ibv_gid_entry g;

			if (ibv_query_gid_ex(e->ctx, 1, i, &g, 0))
				continue;
			if (g.gid_type == IBV_GID_TYPE_ROCE_V2 && g.gid.raw[10] == 0xff &&
			    g.gid.raw[11] == 0xff)
				idx = i;
		}
	}
	return idx;
}

static int find_device(const char *name, struct ibv_context **ctx)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int found = 0;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			*ctx = ibv_open_device(list[i]);
			found = *ctx != NULL;
			break;
		}
	if (list)
		ibv_free_device_list(list);
	return found ? 0 : -1;
}

int vt_open(struct vt_end *e, const char *dev, const struct vt_qp_params *p)
{
	struct ibv_qp_init_attr ia = { 0 };

	memset(e, 0, sizeof(*e));
	e->type = p->type;
	if (find_device(dev, &e->ctx)) {
		VT_FAIL("cannot open %s", dev);
		return -1;
	}
	if (ibv_query_port(e->ctx, 1, &e->port)) {
		VT_FAIL("query_port %s", dev);
		return -1;
	}
	e->pd = ibv_alloc_pd(e->ctx);
	if (e->pd && p->pdom) {
		struct ibv_parent_domain_init_attr pa = *p->pdom;

		pa.pd = e->pd;
		e->pdom = ibv_alloc_parent_domain(e->ctx, &pa);
		if (!e->pdom) {
			VT_FAIL("%s: alloc_parent_domain: %s", dev, strerror(errno));
			return -1;
		}
	}
	if (p->cq_ex) {
		struct ibv_device_attr_ex ax;
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 256,
			.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
				    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				    IBV_WC_EX_WITH_DLID_PATH_BITS,
		};

		/* completion timestamps where the device has a clock to stamp them with */
		if (!ibv_query_device_ex(e->ctx, NULL, &ax) && ax.hca_core_clock) {
			ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
			e->cq_ts = true;
		}

		if (e->pdom) {
			ca.comp_mask |= IBV_CQ_INIT_ATTR_MASK_PD;
			ca.parent_domain = e->pdom;
		}
		e->cqx = ibv_create_cq_ex(e->ctx, &ca);
		e->cq = e->cqx ? ibv_cq_ex_to_cq(e->cqx) : NULL;
	} else {
		e->cq = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	}
	e->buf = aligned_alloc(4096, VT_BUF);
	if (!e->pd || !e->cq || !e->buf) {
		VT_FAIL("%s: pd/cq/buffer: %s", dev, strerror(errno));
		return -1;
	}
	memset(e->buf, 0, VT_BUF);
	e->mr = ibv_reg_mr(e->pdom ? e->pdom : e->pd, e->buf, VT_BUF, p->mr_access);
	if (!e->mr) {
		VT_FAIL("%s: reg_mr: %s", dev, strerror(errno));
		return -1;
	}
	if (p->use_srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = p->max_recv_wr, .max_sge = 2 } };

		e->srq = ibv_create_srq(e->pdom ? e->pdom : e->pd, &sa);
		if (!e->srq) {
			VT_FAIL("%s: create_srq: %s", dev, strerror(errno));
			return -1;
		}
	}
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.srq = e->srq;
	ia.qp_type = p->type;
	ia.cap.max_send_wr = p->max_send_wr;
	ia.cap.max_recv_wr = p->max_recv_wr;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 2;
	ia.cap.max_inline_data = p->max_inline;
	if (p->send_ops) {
		struct ibv_qp_init_attr_ex x = {
			.send_cq = ia.send_cq, .recv_cq = ia.recv_cq, .srq = ia.srq,
			.qp_type = ia.qp_type, .cap = ia.cap, .pd = e->pdom ? e->pdom : e->pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = p->send_ops,
		};

		e->qp = ibv_create_qp_ex(e->ctx, &x);
	} else {
		e->qp = ibv_create_qp(e->pdom ? e->pdom : e->pd, &ia);
	}
	if (p->expect_create_errno) {
		if (e->qp || errno != p->expect_create_errno)
			VT_FAIL("%s: create_qp succeeded or failed with %s, expected %s", dev,
				strerror(errno), strerror(p->expect_create_errno));
		return -1;
	}
	if (!e->qp) {
		VT_FAIL("%s: create_qp: %s", dev, strerror(errno));
		return -1;
	}
	e->psn = (uint32_t)(vt_now_ms() * 7919) & 0xffffff;
	return 0;
}

void vt_close(struct vt_end *e)
{
	if (e->qp && ibv_destroy_qp(e->qp))
		VT_FAIL("destroy_qp: %s", strerror(errno));
	if (e->srq && ibv_destroy_srq(e->srq))
		VT_FAIL("destroy_srq");
	if (e->mr && ibv_dereg_mr(e->mr))
		VT_FAIL("dereg_mr");
	if (e->cq && ibv_destroy_cq(e->cq))
		VT_FAIL("destroy_cq");
	if (e->pdom && ibv_dealloc_pd(e->pdom))
		VT_FAIL("dealloc_pd (parent domain)");
	if (e->pd && ibv_dealloc_pd(e->pd))
		VT_FAIL("dealloc_pd");
	if (e->ctx && ibv_close_device(e->ctx))
		VT_FAIL("close_device");
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

static int to_rts(struct vt_end *e, struct vt_end *peer, const struct vt_qp_params *p)
{
	struct ibv_qp_attr a = { 0 };
	int gid = pick_gid(e);

	if (ibv_query_gid(peer->ctx, 1, pick_gid(peer), &peer->gid))
		return -1;
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	if (p->type == IBV_QPT_UD) {
		a.qkey = 0x11111111;
		if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_QKEY))
			return -1;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    (p->type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_ATOMIC : 0);
		if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS))
			return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (p->type == IBV_QPT_UD) {
		if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
			return -1;
	} else {
		int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			   IBV_QP_RQ_PSN;

		a.path_mtu = e->port.active_mtu;
		a.dest_qp_num = peer->qp->qp_num;
		a.rq_psn = peer->psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.sgid_index = (uint8_t)gid;
		a.ah_attr.grh.hop_limit = 64;
		if (p->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = p->min_rnr_timer;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		if (ibv_modify_qp(e->qp, &a, mask))
			return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = e->psn;
	if (p->type == IBV_QPT_RC) {
		a.timeout = p->timeout;
		a.retry_cnt = p->retry_cnt;
		a.rnr_retry = p->rnr_retry;
		a.max_rd_atomic = 16;
		return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_MAX_QP_RD_ATOMIC);
	}
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

int vt_connect(struct vt_end *a, struct vt_end *b, const struct vt_qp_params *p)
{
	if (to_rts(a, b, p) || to_rts(b, a, p)) {
		VT_FAIL("bringing the QPs to RTS: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int vt_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	uint64_t end = vt_now_ms() + (uint64_t)timeout_ms;
	unsigned int spins = 0;

	/* the clock before the poll: a poller descheduled past its deadline looks once more */
	for (;;) {
		bool clock = ++spins % 1024 == 0, late = clock && vt_now_ms() > end;
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n < 0 ? -1 : 1;
		if (late)
			return 0;
		if (clock)
			usleep(50);
	}
}

bool vt_cq_quiet(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;

	return vt_poll(cq, &wc, ms) == 0;
}

struct ibv_ah *vt_ah(struct vt_end *from, struct vt_end *to)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	if (ibv_query_gid(to->ctx, 1, pick_gid(to), &a.grh.dgid))
		return NULL;
	a.grh.sgid_index = (uint8_t)pick_gid(from);
	a.grh.hop_limit = 64;
	return ibv_create_ah(from->pd, &a);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: cx4_verbs_test [-a DEV] [-b DEV] [-g GID] [-v] data|errors|xverbs|pdom|all\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "a:b:g:v")) != -1) {
		switch (opt) {
		case 'a': vt_opt.dev_a = optarg; break;
		case 'b': vt_opt.dev_b = optarg; break;
		case 'g': vt_opt.gid_index = atoi(optarg); break;
		case 'v': vt_opt.verbose = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (strcmp(argv[optind], "data") && strcmp(argv[optind], "errors") &&
	    strcmp(argv[optind], "xverbs") && strcmp(argv[optind], "pdom") &&
	    strcmp(argv[optind], "all")) {
		fprintf(stderr, "cx4_verbs_test: no test group '%s'\n", argv[optind]);
		usage();
	}
	if (!strcmp(argv[optind], "data") || !strcmp(argv[optind], "all"))
		vt_data_tests();
	if (!strcmp(argv[optind], "errors") || !strcmp(argv[optind], "all"))
		vt_error_tests();
	if (!strcmp(argv[optind], "xverbs") || !strcmp(argv[optind], "all")) {
		vt_xverbs_tests();
		vt_pdom_tests();
	} else if (!strcmp(argv[optind], "pdom")) {
		vt_pdom_tests();
	}
	printf("%s: %d failure%s\n", vt_failures ? "FAIL" : "PASS", vt_failures,
	       vt_failures == 1 ? "" : "s");
	return vt_failures ? 1 : 0;
}
