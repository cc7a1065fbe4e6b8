/* SPDX-License-Identifier: MIT */
/*
 * The cx4 provider: the ConnectX-4 verbs data path in the application, as rdma-core's mlx5
 * provider does it (providers/mlx5), with cx4d in the kernel's place for control verbs.
 * One file per object kind:
 *
 *   cx4.c     registration, the device context (UAR page, BlueFlame registers), ops table
 *   buf.c     queue memory: memfds shared with the device
 *   pd.c      protection domains and memory regions
 *   cq.c      completion queues: CQE polling with the ownership bit, arming, events, cq_ex
 *   qp.c      queue pairs: sizing, create, modify, query, destroy
 *   send.c    post_send: WQEs in the send queue, doorbell record, UAR doorbell / BlueFlame
 *   wr.c      the ibv_wr_* post-send API: the same WQEs, one call at a time
 *   wqe.h     the WQE segments both build
 *   mw.c      memory windows: alloc, bind and invalidate (UMR WQEs)
 *   recv.c    post_recv and post_srq_recv
 *   srq.c     shared receive queues
 *   ah.c      address handles (UD address vectors)
 *
 * Layouts are rdma-core's <infiniband/mlx5dv.h> (WQE segments, CQE64); the UAR offsets are
 * the PRM's (kernel-abi/cx4_prm_iseg.h).
 */
#ifndef CX4_PROVIDER_H
#define CX4_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/mlx5dv.h>

#include "bv_provider.h"
#include "cx4_bus.h"
#include "cx4_prm_iseg.h"
#include "cx4_proto.h"

#define CX4_NUM_BF		CX4_UAR_BF_REGS_PER_PAGE
#define CX4_RCV_DBR		0	/* doorbell record words (mlx5 MLX5_RCV_DBR/SND_DBR) */
#define CX4_SND_DBR		1
#define CX4_CQ_SET_CI		0	/* CQ doorbell record words */
#define CX4_CQ_ARM_DB		1

/* x86: stores are ordered, so the DMA and MMIO barriers of rdma-core util/udma_barrier.h
 * are compiler barriers; the release fence also orders the model's reads on other cores. */
#define udma_to_device_barrier()	__atomic_thread_fence(__ATOMIC_RELEASE)
#define udma_from_device_barrier()	__atomic_thread_fence(__ATOMIC_ACQUIRE)

struct cx4_buf {
	void *va;
	size_t len;
	int fd;		/* closed once the daemon has it: the mapping stays */
};

/* A BlueFlame register: two halves used alternately (PRM; rdma-core bf->offset ^= size). */
struct cx4_bf {
	pthread_spinlock_t lock;
	size_t reg;		/* offset in the UAR page */
	size_t offset;		/* current half */
	size_t buf_size;	/* half size: WQEs up to this many bytes go through BlueFlame */
};

#define CX4_QP_TABLE_SHIFT	12
#define CX4_QP_TABLE_SIZE	(1 << (24 - CX4_QP_TABLE_SHIFT))

struct cx4_qp;

struct cx4_context {
	struct bv_context bv;
	struct cx4_alloc_ucontext_rsp caps;
	void *uar_page;			/* our UAR page, mapped from the daemon's fd */
	struct cx4_kick kick;		/* the model's doorbell wake-up (page NULL on hardware) */
	uint64_t poll_spin_ns;		/* empty polls spin this long, then wait (0: never wait) */
	struct cx4_mmio uar;
	struct cx4_bf bf[CX4_NUM_BF];
	unsigned int next_bf;
	/* QPN -> QP for CQE parsing (rdma-core mlx5_find_qp: a two-level table) */
	pthread_mutex_t qp_table_mutex;
	struct {
		struct cx4_qp **table;
		int refcnt;
	} qp_table[CX4_QP_TABLE_SIZE];
};

static inline struct cx4_context *to_cx4_ctx(struct ibv_context *ibctx)
{
	return (struct cx4_context *)to_bv_context(ibctx);
}

struct cx4_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

static inline struct cx4_pd *to_cx4_pd(struct ibv_pd *pd)
{
	return (struct cx4_pd *)pd;
}

struct cx4_mr {
	struct verbs_mr vmr;
	bool shadow; /* its pages were moved into a memfd the device maps (bv_shadow.c) */
};

static inline struct cx4_mr *to_cx4_mr(struct ibv_mr *mr)
{
	return (struct cx4_mr *)mr;
}

struct cx4_cq {
	struct verbs_cq vcq;
	struct cx4_buf buf;		/* the ring (until a resize) and the doorbell record */
	struct cx4_buf ring;		/* after a resize: the ring in use */
	uint8_t *cqes;
	unsigned int ncqe;		/* power of two */
	volatile __be32 *dbrec;
	uint32_t cons_index;
	uint32_t cqn;
	uint32_t handle;
	uint32_t arm_sn;
	pthread_spinlock_t lock;
	bool has_channel;
	/* empty polls since the last CQE (cq.c idle_wait) */
	unsigned int idle_polls;
	uint64_t idle_since;
	/* ibv_cq_ex: the completion being read between start_poll and end_poll */
	uint64_t wc_flags;
	struct ibv_wc cur;
	uint64_t cur_ts;
};

static inline struct cx4_cq *to_cx4_cq(struct ibv_cq *cq)
{
	return (struct cx4_cq *)cq;
}

struct cx4_srq {
	struct verbs_srq vsrq;
	struct cx4_buf buf;
	uint8_t *wqes;
	unsigned int wqe_shift;
	unsigned int wqe_cnt;
	int max_gs;
	uint64_t *wrid;
	unsigned int head, tail;
	uint16_t counter;
	volatile __be32 *db;
	uint32_t srqn;
	uint32_t handle;
	pthread_spinlock_t lock;
};

static inline struct cx4_srq *to_cx4_srq(struct ibv_srq *srq)
{
	return (struct cx4_srq *)srq;
}

struct cx4_wq {
	uint64_t *wrid;
	unsigned int *wqe_head;		/* SQ: head (WR count) when the WQE was posted */
	uint8_t *wr_data;		/* SQ: the ibv_wc_opcode of a UMR WQE (bind, invalidate) */
	unsigned int wqe_cnt;		/* SQ: WQEBBs; RQ: WQEs */
	unsigned int max_post;		/* WRs that always fit */
	unsigned int head, tail;	/* WRs posted / completed */
	unsigned int cur_post;		/* SQ: WQEBB producer counter */
	int max_gs;
	unsigned int wqe_shift;
	unsigned int offset;		/* in the QP buffer */
	pthread_spinlock_t lock;
};

struct cx4_qp {
	struct verbs_qp vqp;
	struct cx4_buf buf;
	struct cx4_wq sq, rq;
	uint8_t *sq_start, *sq_end;
	volatile __be32 *db;
	struct cx4_bf *bf;
	uint32_t qpn;
	uint32_t handle;
	int max_inline;
	uint8_t sq_signal_bits;
	uint8_t fm_cache;
	unsigned int sq_wqe_size;	/* max bytes of one send WQE */
	struct ibv_qp_cap cap;
	uint64_t send_ops;		/* IBV_QP_EX_WITH_*: what the SQ was sized for */
	bool rq_ready, sq_ready;	/* posting allowed: since INIT / RTS, until RESET */
	/* ibv_wr_* (wr.c): the batch between wr_start and wr_complete, under sq.lock */
	struct {
		struct mlx5_wqe_ctrl_seg *ctrl;	/* the WQE being built, NULL between WQEs */
		uint8_t *data;			/* where its next segment goes */
		uint8_t *ud_av;			/* UD: its address vector */
		unsigned int ds;		/* its size so far, 16-byte units */
		unsigned int setters;		/* UD: address and data both given */
		uint8_t wc_op;
		bool atomic, scatter, wqe_inl;
		unsigned int nreq;
		struct mlx5_wqe_ctrl_seg *last;	/* the batch's last WQE: the doorbell */
		unsigned int last_ds;
		bool inl;
		unsigned int cur_post_rb;	/* where the batch began */
		uint8_t fm_cache_rb;
		int err;
	} wr;
};

static inline struct cx4_qp *to_cx4_qp(struct ibv_qp *qp)
{
	return (struct cx4_qp *)qp;
}

struct cx4_ah {
	struct ibv_ah ibv_ah;
	struct mlx5_wqe_av av;
};

static inline struct cx4_ah *to_cx4_ah(struct ibv_ah *ah)
{
	return (struct cx4_ah *)ah;
}

/* buf.c */
int cx4_buf_alloc(struct cx4_buf *b, size_t len, const char *name);
void cx4_buf_free(struct cx4_buf *b);
size_t cx4_align(size_t v, size_t a);
unsigned int cx4_ilog2_up(uint64_t v);

/* cx4.c */
int cx4_call(struct ibv_context *ctx, uint16_t op, const void *req, size_t req_len,
	     const int *fds, unsigned int nfds, void *rsp, size_t rsp_len);
/* Wait until the application acknowledged `n` events counted in *done (ibv_cmd_destroy_*). */
void cx4_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond, uint32_t *done, uint32_t n);

/* pd.c */
struct ibv_pd *cx4_alloc_pd(struct ibv_context *ctx);
int cx4_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *cx4_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			  int access);
int cx4_dereg_mr(struct verbs_mr *vmr);
int cx4_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access);

/* cq.c */
struct ibv_cq *cx4_create_cq(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *channel,
			     int comp_vector);
struct ibv_cq_ex *cx4_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
int cx4_destroy_cq(struct ibv_cq *cq);
int cx4_resize_cq(struct ibv_cq *cq, int cqe);
int cx4_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int cx4_arm_cq(struct ibv_cq *cq, int solicited);
void cx4_cq_event(struct ibv_cq *cq);
void cx4_cq_clean(struct cx4_cq *cq, uint32_t qpn, struct cx4_srq *srq);

/* qp.c */
struct ibv_qp *cx4_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *cx4_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
int cx4_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int cx4_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init);
int cx4_destroy_qp(struct ibv_qp *qp);
int cx4_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
struct cx4_qp *cx4_find_qp(struct cx4_context *ctx, uint32_t qpn);

/* send.c / recv.c */
int cx4_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int cx4_post_send_locked(struct cx4_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad,
			 bool bind_type1);
bool cx4_opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op);
void cx4_sq_doorbell(struct cx4_qp *qp, unsigned int nreq, bool inl, unsigned int ds, void *ctrl);
int cx4_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int cx4_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
void cx4_free_srq_wqe(struct cx4_srq *srq, unsigned int ind);

/* wr.c */
uint64_t cx4_send_ops_supported(enum ibv_qp_type type);
void cx4_qp_init_wr_ops(struct cx4_qp *qp);

/* mw.c */
struct ibv_mw *cx4_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int cx4_dealloc_mw(struct ibv_mw *mw);
int cx4_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
/* The UMR segments of a bind (bi->length > 0) or an invalidation; *segp, *ds advance. */
int cx4_umr_bind_segs(struct cx4_qp *qp, enum ibv_mw_type type, uint32_t new_rkey,
		      const struct ibv_mw_bind_info *bi, uint8_t **segp, unsigned int *ds);

/* srq.c */
struct ibv_srq *cx4_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int cx4_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int cx4_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int cx4_destroy_srq(struct ibv_srq *srq);

/* ah.c */
struct ibv_ah *cx4_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int cx4_destroy_ah(struct ibv_ah *ah);

#endif /* CX4_PROVIDER_H */
