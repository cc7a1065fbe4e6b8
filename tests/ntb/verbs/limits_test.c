// SPDX-License-Identifier: MIT
/*
 * ntb_limits_test: every limit ibv_query_device reports can be reached, and the first object
 * or work request past it fails the way a device's does (ENOMEM for objects and full queues,
 * EINVAL for sizes past a maximum), never with EBUSY. One process, one device (the data
 * moves in loopback):
 *
 *   max_pd PDs, max_cq CQs, max_qp QPs, max_mr MRs, max_mw MWs, max_srq SRQs, max_ah AHs
 *   at once;
 *   a QP with max_qp_wr send and receive WRs posted at once, data checked;
 *   a SEND of max_sge gathered pieces into max_sge scattered ones, an RDMA READ of max_sge_rd;
 *   max_inline_data inline; a CQ of max_cqe; an SRQ of max_srq_wr WRs; max_qp_rd_atom.
 *
 * usage: ntb_limits_test [-d DEV] [TEST...]   (tests: pd cq qp mr mw srq ah wr sge misc)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct ibv_context *ctx;
static struct ibv_device_attr da;
static struct ibv_port_attr pa;
static const char *cur;
static int gid_index;
static union ibv_gid gid;

#define CHECK(cond, ...)                                                                    \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "FAIL [%s] %s:%d: ", cur, __FILE__, __LINE__);      \
			fprintf(stderr, __VA_ARGS__);                                        \
			fprintf(stderr, " (errno %s)\n", strerror(errno));                   \
			return -1;                                                           \
		}                                                                            \
	} while (0)

/* What a failure past a limit may be: a device's answer, not "busy, try again". */
#define PAST(ok_errnos, what) CHECK(errno != EBUSY && (ok_errnos), "%s past the limit", what)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- objects ------------------------------------------------------------------------------ */

static int t_pd(void)
{
	int n = da.max_pd, got = 0, ret = 0;
	struct ibv_pd **pds = calloc(n, sizeof(*pds));

	CHECK(pds, "calloc");
	for (; got < n; got++) {
		pds[got] = ibv_alloc_pd(ctx);
		if (!pds[got])
			break;
	}
	if (got < n) {
		fprintf(stderr, "FAIL [pd] only %d of max_pd %d PDs (%s)\n", got, n,
			strerror(errno));
		ret = -1;
	} else {
		struct ibv_pd *more = ibv_alloc_pd(ctx);

		if (more) {
			fprintf(stderr, "FAIL [pd] PD %d past max_pd %d\n", n + 1, n);
			ibv_dealloc_pd(more);
			ret = -1;
		} else if (errno == EBUSY) {
			fprintf(stderr, "FAIL [pd] EBUSY past max_pd\n");
			ret = -1;
		}
	}
	for (int i = 0; i < got; i++)
		if (ibv_dealloc_pd(pds[i]))
			ret = -1;
	free(pds);
	return ret;
}

static int t_cq(void)
{
	int n = da.max_cq, got = 0, ret = 0;
	struct ibv_cq **cqs = calloc(n, sizeof(*cqs));
	struct ibv_cq *big;

	CHECK(cqs, "calloc");
	for (; got < n; got++) {
		cqs[got] = ibv_create_cq(ctx, 1, NULL, NULL, 0);
		if (!cqs[got])
			break;
	}
	if (got < n) {
		fprintf(stderr, "FAIL [cq] only %d of max_cq %d CQs (%s)\n", got, n,
			strerror(errno));
		ret = -1;
	} else {
		struct ibv_cq *more = ibv_create_cq(ctx, 1, NULL, NULL, 0);

		if (more || errno == EBUSY) {
			fprintf(stderr, "FAIL [cq] CQ past max_cq: %s\n",
				more ? "created" : "EBUSY");
			if (more)
				ibv_destroy_cq(more);
			ret = -1;
		}
	}
	for (int i = 0; i < got; i++)
		ibv_destroy_cq(cqs[i]);
	free(cqs);
	if (ret)
		return ret;
	/* one of max_cqe entries, and none bigger */
	big = ibv_create_cq(ctx, da.max_cqe, NULL, NULL, 0);
	CHECK(big && big->cqe >= da.max_cqe, "a CQ of max_cqe %d", da.max_cqe);
	ibv_destroy_cq(big);
	big = ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0);
	if (big)
		ibv_destroy_cq(big);
	CHECK(!big, "a CQ of max_cqe + 1");
	PAST(errno == EINVAL || errno == ENOMEM, "max_cqe");
	return 0;
}

static int t_qp(void)
{
	int n = da.max_qp, got = 0, ret = 0;
	struct ibv_qp **qps = calloc(n, sizeof(*qps));
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	CHECK(qps && pd && cq, "setup");
	ia.send_cq = ia.recv_cq = cq;
	for (; got < n; got++) {
		/* every type counts against the same table */
		ia.qp_type = got % 3 == 0 ? IBV_QPT_RC : got % 3 == 1 ? IBV_QPT_UC : IBV_QPT_UD;
		qps[got] = ibv_create_qp(pd, &ia);
		if (!qps[got])
			break;
	}
	if (got < n) {
		fprintf(stderr, "FAIL [qp] only %d of max_qp %d QPs (%s)\n", got, n,
			strerror(errno));
		ret = -1;
	} else {
		struct ibv_qp *more = ibv_create_qp(pd, &ia);

		if (more || errno == EBUSY) {
			fprintf(stderr, "FAIL [qp] QP past max_qp: %s\n",
				more ? "created" : "EBUSY");
			if (more)
				ibv_destroy_qp(more);
			ret = -1;
		}
	}
	for (int i = 0; i < got; i++)
		ibv_destroy_qp(qps[i]);
	free(qps);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return ret;
}

static int t_mr(void)
{
	int n = da.max_mr, got = 0, ret = 0;
	struct ibv_mr **mrs = calloc(n, sizeof(*mrs));
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	uint8_t *mem = aligned_alloc(4096, 4096 * 16);

	CHECK(mrs && pd && mem, "setup");
	for (; got < n; got++) {
		/* some of them local-write (mapped for the peer's DMA), some read-only */
		mrs[got] = ibv_reg_mr(pd, mem + 4096 * (got % 16), 4096,
				      got % 2 ? IBV_ACCESS_LOCAL_WRITE : 0);
		if (!mrs[got])
			break;
	}
	if (got < n) {
		fprintf(stderr, "FAIL [mr] only %d of max_mr %d MRs (%s)\n", got, n,
			strerror(errno));
		ret = -1;
	} else {
		struct ibv_mr *more = ibv_reg_mr(pd, mem, 4096, 0);

		if (more || errno == EBUSY) {
			fprintf(stderr, "FAIL [mr] MR past max_mr: %s\n",
				more ? "registered" : "EBUSY");
			if (more)
				ibv_dereg_mr(more);
			ret = -1;
		}
	}
	for (int i = 0; i < got; i++)
		ibv_dereg_mr(mrs[i]);
	free(mrs);
	free(mem);
	ibv_dealloc_pd(pd);
	return ret;
}

static int t_mw(void)
{
	int n = da.max_mw, got = 0, ret = 0;
	struct ibv_mw **mws = calloc(n ? n : 1, sizeof(*mws));
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	CHECK(mws && pd, "setup");
	for (; got < n; got++) {
		mws[got] = ibv_alloc_mw(pd, got % 2 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
		if (!mws[got])
			break;
	}
	if (got < n) {
		fprintf(stderr, "FAIL [mw] only %d of max_mw %d MWs (%s)\n", got, n,
			strerror(errno));
		ret = -1;
	} else {
		struct ibv_mw *more = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

		if (more || errno == EBUSY) {
			fprintf(stderr, "FAIL [mw] MW past max_mw: %s\n",
				more ? "allocated" : "EBUSY");
			if (more)
				ibv_dealloc_mw(more);
			ret = -1;
		}
	}
	for (int i = 0; i < got; i++)
		ibv_dealloc_mw(mws[i]);
	free(mws);
	ibv_dealloc_pd(pd);
	return ret;
}

static int t_srq(void)
{
	int n = da.max_srq, got = 0, ret = 0;
	struct ibv_srq **srqs = calloc(n, sizeof(*srqs));
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 1, .max_sge = 1 } };

	CHECK(srqs && pd, "setup");
	for (; got < n; got++) {
		srqs[got] = ibv_create_srq(pd, &sa);
		if (!srqs[got])
			break;
	}
	if (got < n) {
		fprintf(stderr, "FAIL [srq] only %d of max_srq %d SRQs (%s)\n", got, n,
			strerror(errno));
		ret = -1;
	} else {
		struct ibv_srq *more = ibv_create_srq(pd, &sa);

		if (more || errno == EBUSY) {
			fprintf(stderr, "FAIL [srq] SRQ past max_srq: %s\n",
				more ? "created" : "EBUSY");
			if (more)
				ibv_destroy_srq(more);
			ret = -1;
		}
	}
	for (int i = 0; i < got; i++)
		ibv_destroy_srq(srqs[i]);
	free(srqs);
	ibv_dealloc_pd(pd);
	return ret;
}

static int t_ah(void)
{
	int n = da.max_ah, got = 0, ret = 0;
	struct ibv_ah **ahs = calloc(n, sizeof(*ahs));
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };

	CHECK(ahs && pd, "setup");
	aa.grh.dgid = gid;
	aa.grh.sgid_index = gid_index;
	aa.grh.hop_limit = 1;
	for (; got < n; got++) {
		ahs[got] = ibv_create_ah(pd, &aa);
		if (!ahs[got])
			break;
	}
	if (got < n) {
		fprintf(stderr, "FAIL [ah] only %d of max_ah %d AHs (%s)\n", got, n,
			strerror(errno));
		ret = -1;
	} else {
		struct ibv_ah *more = ibv_create_ah(pd, &aa);

		if (more || errno == EBUSY) {
			fprintf(stderr, "FAIL [ah] AH past max_ah: %s\n",
				more ? "created" : "EBUSY");
			if (more)
				ibv_destroy_ah(more);
			ret = -1;
		}
	}
	for (int i = 0; i < got; i++)
		ibv_destroy_ah(ahs[i]);
	free(ahs);
	ibv_dealloc_pd(pd);
	return ret;
}

/* ---- work requests -------------------------------------------------------------------------- */

struct lo {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
};

static int connect_rc(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = da.max_qp_rd_atom;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = da.max_qp_init_rd_atom;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Two RC QPs of this context connected to each other, with the caps asked. */
static int lo_open(struct lo *l, uint32_t wr, uint32_t sge, uint32_t inl, int cqe)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = wr, .max_recv_wr = wr,
						.max_send_sge = sge, .max_recv_sge = sge,
						.max_inline_data = inl } };

	l->pd = ibv_alloc_pd(ctx);
	l->cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (!l->pd || !l->cq)
		return -1;
	ia.send_cq = ia.recv_cq = l->cq;
	l->a = ibv_create_qp(l->pd, &ia);
	l->b = ibv_create_qp(l->pd, &ia);
	if (!l->a || !l->b)
		return -1;
	return connect_rc(l->a, l->b->qp_num) || connect_rc(l->b, l->a->qp_num) ? -1 : 0;
}

static void lo_close(struct lo *l)
{
	if (l->a)
		ibv_destroy_qp(l->a);
	if (l->b)
		ibv_destroy_qp(l->b);
	if (l->cq)
		ibv_destroy_cq(l->cq);
	if (l->pd)
		ibv_dealloc_pd(l->pd);
	memset(l, 0, sizeof(*l));
}

/* n completions, all successful; returns how many of each kind (sends, receives). */
static int reap(struct ibv_cq *cq, int n, int *sends, int *recvs, struct ibv_wc *save)
{
	uint64_t end = now_ms() + 60000;
	struct ibv_wc wc[64];
	int got = 0;

	*sends = *recvs = 0;
	while (got < n && now_ms() < end) {
		int k = ibv_poll_cq(cq, 64, wc);

		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "FAIL [%s] completion %s (id %llu)\n", cur,
					ibv_wc_status_str(wc[i].status),
					(unsigned long long)wc[i].wr_id);
				return -1;
			}
			if (wc[i].opcode & IBV_WC_RECV)
				(*recvs)++;
			else
				(*sends)++;
			if (save)
				save[got] = wc[i];
			got++;
		}
	}
	return got == n ? 0 : -1;
}

static int t_wr(void)
{
	uint32_t n = (uint32_t)da.max_qp_wr;
	struct ibv_send_wr *swr = calloc(n + 1, sizeof(*swr)), *sbad;
	struct ibv_recv_wr *rwr = calloc(n + 1, sizeof(*rwr)), *rbad;
	struct ibv_sge *ss = calloc(n + 1, sizeof(*ss)), *rs = calloc(n + 1, sizeof(*rs));
	uint64_t *src = calloc(n + 1, 8), *dst = calloc(n + 1, 8);
	struct ibv_wc *wc = calloc(2 * n, sizeof(*wc));
	struct ibv_mr *smr, *rmr;
	struct lo l = { 0 };
	int sends, recvs, ret = -1;

	CHECK(swr && rwr && ss && rs && src && dst && wc, "calloc");
	CHECK(!lo_open(&l, n, 1, 0, 2 * n + 2), "two QPs of max_qp_wr %u WRs", n);
	smr = ibv_reg_mr(l.pd, src, (n + 1) * 8, 0);
	rmr = ibv_reg_mr(l.pd, dst, (n + 1) * 8, IBV_ACCESS_LOCAL_WRITE);
	CHECK(smr && rmr, "reg_mr");
	for (uint32_t i = 0; i <= n; i++) {
		src[i] = 0x5eed000000000000ull | i;
		ss[i] = (struct ibv_sge){ (uintptr_t)&src[i], 8, smr->lkey };
		rs[i] = (struct ibv_sge){ (uintptr_t)&dst[i], 8, rmr->lkey };
		swr[i] = (struct ibv_send_wr){ .wr_id = i, .sg_list = &ss[i], .num_sge = 1,
					       .opcode = IBV_WR_SEND,
					       .send_flags = IBV_SEND_SIGNALED,
					       .next = i < n ? &swr[i + 1] : NULL };
		rwr[i] = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &rs[i], .num_sge = 1,
					       .next = i < n ? &rwr[i + 1] : NULL };
	}
	/* max_qp_wr + 1 in one call: the last one does not fit */
	errno = 0;
	ret = ibv_post_recv(l.b, rwr, &rbad);
	CHECK(ret && rbad == &rwr[n] && ret != EBUSY, "post_recv of %u + 1 WRs: %d", n, ret);
	errno = 0;
	ret = ibv_post_send(l.a, swr, &sbad);
	CHECK(ret && sbad == &swr[n] && ret != EBUSY, "post_send of %u + 1 WRs: %d", n, ret);
	CHECK(!reap(l.cq, 2 * n, &sends, &recvs, wc) && sends == (int)n && recvs == (int)n,
	      "%u sends and receives completed (%d, %d)", n, sends, recvs);
	for (uint32_t i = 0; i < 2 * n; i++)
		if (wc[i].opcode & IBV_WC_RECV)
			CHECK(wc[i].byte_len == 8 && dst[wc[i].wr_id] == src[wc[i].wr_id],
			      "receive %llu: %u bytes, 0x%llx", (unsigned long long)wc[i].wr_id,
			      wc[i].byte_len, (unsigned long long)dst[wc[i].wr_id]);
	ret = 0;
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	lo_close(&l);
	/* a QP asking for more than max_qp_wr */
	{
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = n + 1, .max_recv_wr = 1,
							.max_send_sge = 1, .max_recv_sge = 1 } };
		struct ibv_qp *qp = ibv_create_qp(pd, &ia);

		if (qp)
			ibv_destroy_qp(qp);
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
		CHECK(!qp, "a QP of max_qp_wr + 1 WRs");
		PAST(errno == EINVAL || errno == ENOMEM, "max_qp_wr");
	}
	free(swr);
	free(rwr);
	free(ss);
	free(rs);
	free(src);
	free(dst);
	free(wc);
	return ret;
}

/* max_sge pieces of different lengths; a SEND gathers them, the receive scatters them. */
static int t_sge(void)
{
	int n = da.max_sge, nrd = da.max_sge_rd, sends, recvs;
	size_t len = 0;
	struct ibv_sge *ss = calloc(n + 1, sizeof(*ss)), *rs = calloc(n + 1, sizeof(*rs));
	uint8_t *src = malloc(1 << 20), *dst = malloc(1 << 20);
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rw = { 0 }, *rbad;
	struct ibv_mr *smr, *rmr;
	struct lo l = { 0 };

	CHECK(ss && rs && src && dst, "malloc");
	CHECK(!lo_open(&l, 4, n, 0, 16), "two QPs of max_sge %d", n);
	for (size_t i = 0; i < (1 << 20); i++)
		src[i] = (uint8_t)(i * 131 + 7);
	memset(dst, 0xee, 1 << 20);
	smr = ibv_reg_mr(l.pd, src, 1 << 20, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	rmr = ibv_reg_mr(l.pd, dst, 1 << 20, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(smr && rmr, "reg_mr");
	for (int i = 0; i < n; i++) {
		/* pieces of 1 .. 257 bytes, every other byte skipped on the receive side */
		uint32_t piece = 1 + (uint32_t)(i * 37) % 257;

		ss[i] = (struct ibv_sge){ (uintptr_t)(src + 4096 * i), piece, smr->lkey };
		rs[i] = (struct ibv_sge){ (uintptr_t)(dst + 8192 * i), piece, rmr->lkey };
		len += piece;
	}
	rw.sg_list = rs;
	rw.num_sge = n + 1;
	CHECK(ibv_post_recv(l.b, &rw, &rbad), "a receive of max_sge + 1 pieces was taken");
	rw.num_sge = n;
	CHECK(!ibv_post_recv(l.b, &rw, &rbad), "a receive of max_sge %d pieces", n);
	wr.sg_list = ss;
	wr.num_sge = n + 1;
	CHECK(ibv_post_send(l.a, &wr, &bad), "a SEND of max_sge + 1 pieces was taken");
	wr.num_sge = n;
	CHECK(!ibv_post_send(l.a, &wr, &bad), "a SEND of max_sge %d pieces", n);
	CHECK(!reap(l.cq, 2, &sends, &recvs, NULL) && sends == 1 && recvs == 1, "completions");
	for (int i = 0; i < n; i++)
		CHECK(!memcmp(dst + 8192 * i, src + 4096 * i, rs[i].length) &&
			      dst[8192 * i + rs[i].length] == 0xee,
		      "piece %d of %zu bytes", i, len);
	/* an RDMA READ scattering into max_sge_rd pieces */
	memset(dst, 0xee, 1 << 20);
	for (int i = 0; i < nrd; i++)
		rs[i] = (struct ibv_sge){ (uintptr_t)(dst + 8192 * i), 100 + i, rmr->lkey };
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
				   .sg_list = rs, .num_sge = nrd };
	wr.wr.rdma.remote_addr = (uintptr_t)src;
	wr.wr.rdma.rkey = smr->rkey;
	CHECK(!ibv_post_send(l.a, &wr, &bad), "a READ of max_sge_rd %d pieces", nrd);
	CHECK(!reap(l.cq, 1, &sends, &recvs, NULL), "READ completion");
	len = 0;
	for (int i = 0; i < nrd; i++) {
		CHECK(!memcmp(dst + 8192 * i, src + len, rs[i].length), "READ piece %d", i);
		len += rs[i].length;
	}
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	lo_close(&l);
	free(ss);
	free(rs);
	free(src);
	free(dst);
	return 0;
}

/* max_inline_data, max_srq_wr, max_qp_rd_atom */
static int t_misc(void)
{
	uint8_t msg[4096], in[4096 + 64];
	struct ibv_sge s = { (uintptr_t)msg, 0, 0 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &s, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad;
	struct ibv_recv_wr rw = { 0 }, *rbad;
	struct ibv_device_attr_ex dx;
	struct ibv_srq_init_attr sa = { .attr = { .max_sge = 1 } };
	struct ibv_qp_attr qa = { 0 };
	struct ibv_sge rs;
	struct ibv_mr *mr;
	struct ibv_srq *srq;
	struct lo l = { 0 };
	int sends, recvs;
	uint32_t inl;

	CHECK(!ibv_query_device_ex(ctx, NULL, &dx), "query_device_ex");
	/* the largest inline the QP reports it takes */
	CHECK(!lo_open(&l, 4, 1, 512, 16), "two QPs of 512 inline bytes");
	{
		struct ibv_qp_init_attr ia;

		CHECK(!ibv_query_qp(l.a, &qa, IBV_QP_CAP, &ia), "query_qp");
		inl = ia.cap.max_inline_data;
		CHECK(inl >= 512 && inl <= sizeof(msg), "max_inline_data %u", inl);
	}
	for (uint32_t i = 0; i < inl; i++)
		msg[i] = (uint8_t)(i ^ 0x5a);
	mr = ibv_reg_mr(l.pd, in, sizeof(in), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr");
	rs = (struct ibv_sge){ (uintptr_t)in, sizeof(in), mr->lkey };
	rw.sg_list = &rs;
	rw.num_sge = 1;
	CHECK(!ibv_post_recv(l.b, &rw, &rbad), "post_recv");
	s.length = inl + 1;
	CHECK(ibv_post_send(l.a, &wr, &bad), "inline of %u + 1 bytes was taken", inl);
	s.length = inl;
	CHECK(!ibv_post_send(l.a, &wr, &bad), "inline of %u bytes", inl);
	memset(msg, 0, sizeof(msg));	/* inline: the data was copied at post time */
	CHECK(!reap(l.cq, 2, &sends, &recvs, NULL), "inline completions");
	for (uint32_t i = 0; i < inl; i++)
		CHECK(in[i] == (uint8_t)(i ^ 0x5a), "inline byte %u", i);
	ibv_dereg_mr(mr);
	/* max_qp_rd_atom: lo_open asked for it; one more is refused */
	qa.max_rd_atomic = da.max_qp_init_rd_atom + 1;
	CHECK(ibv_modify_qp(l.a, &qa, IBV_QP_MAX_QP_RD_ATOMIC), "max_rd_atomic past the limit");
	lo_close(&l);

	/* an SRQ of max_srq_wr WRs, full; one bigger is refused */
	sa.attr.max_wr = da.max_srq_wr;
	l.pd = ibv_alloc_pd(ctx);
	srq = ibv_create_srq(l.pd, &sa);
	CHECK(srq && sa.attr.max_wr >= (uint32_t)da.max_srq_wr, "an SRQ of max_srq_wr %d",
	      da.max_srq_wr);
	mr = ibv_reg_mr(l.pd, in, sizeof(in), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr");
	rs = (struct ibv_sge){ (uintptr_t)in, 64, mr->lkey };
	for (int i = 0; i < da.max_srq_wr; i++)
		CHECK(!ibv_post_srq_recv(srq, &rw, &rbad), "SRQ receive %d of %d", i,
		      da.max_srq_wr);
	errno = 0;
	CHECK(ibv_post_srq_recv(srq, &rw, &rbad), "SRQ receive past max_srq_wr");
	ibv_destroy_srq(srq);
	ibv_dereg_mr(mr);
	sa.attr.max_wr = da.max_srq_wr + 1;
	srq = ibv_create_srq(l.pd, &sa);
	if (srq)
		ibv_destroy_srq(srq);
	CHECK(!srq, "an SRQ of max_srq_wr + 1");
	PAST(errno == EINVAL || errno == ENOMEM, "max_srq_wr");
	ibv_dealloc_pd(l.pd);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} tests[] = {
	{ "pd", t_pd }, { "cq", t_cq }, { "qp", t_qp }, { "mr", t_mr }, { "mw", t_mw },
	{ "srq", t_srq },
	{ "ah", t_ah }, { "wr", t_wr }, { "sge", t_sge }, { "misc", t_misc },
};

int main(int argc, char **argv)
{
	const char *dev = "ntb_0";
	struct ibv_device **list;
	int opt, failed = 0, ran = 0;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: %s [-d DEV] [TEST...]\n", argv[0]);
			return 2;
		}
		dev = optarg;
	}
	list = ibv_get_device_list(NULL);
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx || ibv_query_device(ctx, &da) || ibv_query_port(ctx, 1, &pa)) {
		fprintf(stderr, "cannot open %s\n", dev);
		return 1;
	}
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;

		if (!ibv_query_gid(ctx, 1, i, &g) && g.raw[10] == 0xff && g.raw[11] == 0xff) {
			gid = g;
			gid_index = i;
		}
	}
	printf("%s: max_pd %d max_cq %d max_cqe %d max_qp %d max_qp_wr %d max_sge %d "
	       "max_sge_rd %d max_mr %d max_mw %d max_srq %d max_srq_wr %d max_ah %d max_qp_rd_atom %d\n",
	       dev, da.max_pd, da.max_cq, da.max_cqe, da.max_qp, da.max_qp_wr, da.max_sge,
	       da.max_sge_rd, da.max_mr, da.max_mw, da.max_srq, da.max_srq_wr, da.max_ah,
	       da.max_qp_rd_atom);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool sel = optind == argc;
		uint64_t t0 = now_ms();
		int r;

		for (int j = optind; j < argc; j++)
			sel |= !strcmp(argv[j], tests[i].name);
		if (!sel)
			continue;
		cur = tests[i].name;
		r = tests[i].fn();
		printf("%s %s (%llu ms)\n", r ? "FAIL" : "ok  ", cur,
		       (unsigned long long)(now_ms() - t0));
		fflush(stdout);
		failed += r != 0;
		ran++;
	}
	ibv_close_device(ctx);
	printf("%d of %d tests failed\n", failed, ran);
	return failed || !ran ? 1 : 0;
}
