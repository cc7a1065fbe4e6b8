/* SPDX-License-Identifier: MIT */
/*
 * vt: a small verbs test kit for the cx4 driver tests (data and error cases). Two endpoints,
 * each a context + PD + CQ + QP + one registered buffer, on the same device or on two, wired
 * together the way perftest does it (RoCE v2 GIDs, PSNs, rkeys exchanged in memory).
 * Every wait has a deadline: a test fails, it never hangs.
 */
#ifndef VT_H
#define VT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define VT_BUF		(4u << 20)	/* registered bytes per endpoint */
#define VT_TIMEOUT_MS	10000

struct vt_opts {
	const char *dev_a, *dev_b;
	int gid_index;
	int verbose;
};

struct vt_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	uint32_t psn;
	struct ibv_port_attr port;
	enum ibv_qp_type type;
	struct ibv_cq_ex *cqx;		/* when created with ibv_create_cq_ex */
	bool cq_ts;			/* ... with completion timestamps (the device has a clock) */
};

struct vt_qp_params {
	enum ibv_qp_type type;
	bool use_srq;
	int mr_access;			/* access flags of the registered buffer */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint32_t max_inline;
	uint32_t max_send_wr, max_recv_wr;
	bool cq_ex;			/* the CQ comes from ibv_create_cq_ex */
	uint64_t send_ops;		/* ibv_create_qp_ex with these send_ops_flags */
	int expect_create_errno;	/* the QP's creation must fail with this */
};

extern struct vt_opts vt_opt;
extern int vt_failures;

#define VT_FAIL(...) vt_fail(__FILE__, __LINE__, __VA_ARGS__)
void vt_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void vt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct vt_qp_params vt_default_params(enum ibv_qp_type type);
int vt_open(struct vt_end *e, const char *dev, const struct vt_qp_params *p);
void vt_close(struct vt_end *e);
/* Both QPs to RTS, each aimed at the other (UD: to RTS with a qkey). */
int vt_connect(struct vt_end *a, struct vt_end *b, const struct vt_qp_params *p);
/* Poll one completion with a deadline; returns 1, 0 on timeout, -1 on poll error. */
int vt_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);
/* Nothing more arrives within ms. */
bool vt_cq_quiet(struct ibv_cq *cq, int ms);
struct ibv_ah *vt_ah(struct vt_end *from, struct vt_end *to);
uint64_t vt_now_ms(void);

/* Deterministic byte patterns: every byte checked, none reused between tests. */
void vt_fill(uint8_t *p, size_t n, uint32_t seed);
bool vt_check(const uint8_t *p, size_t n, uint32_t seed, const char *what);
bool vt_check_const(const uint8_t *p, size_t n, uint8_t v, const char *what);

/* The test groups. */
void vt_data_tests(void);
void vt_error_tests(void);
void vt_xverbs_tests(void);

#endif
