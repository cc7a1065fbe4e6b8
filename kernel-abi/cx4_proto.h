/* SPDX-License-Identifier: MIT */
/*
 * cx4d <-> cx4 provider: the ConnectX-4 part of the daemon protocol (bv_proto.h), in the role
 * of the mlx5_ib uverbs ABI (Linux include/uapi/rdma/mlx5-abi.h + the ib_uverbs write
 * commands). Control verbs become these requests; the data path never crosses the socket:
 * the provider builds WQEs, rings doorbells and polls CQEs in memory it shares with the device.
 *
 * Objects are named by handles the daemon hands out per client: a client can only name its
 * own objects, and the daemon destroys everything a client owned when it disconnects.
 *
 * Queue memory. A CQ, QP or SRQ buffer and its doorbell record live in one memfd the provider
 * creates and passes with the create request (SCM_RIGHTS). The daemon maps it for device DMA
 * (its IOVA goes into the object's PAS list) and the provider keeps it mmap()ed: the buffer
 * at offset 0, the 8-byte doorbell record at dbr_offset (64-byte aligned). The QP buffer holds
 * the receive queue at offset 0 and the send queue right after it (PRM "Work Queue Buffer",
 * the layout rdma-core mlx5 uses: sq.offset = rq size).
 *
 * Registered memory is reached by the device in the client's own address space (pid + VA,
 * the role of the kernel's umem pinning); the daemon takes the pid from the socket's peer
 * credentials, never from the request.
 *
 * All fields are host-endian. Every request and response has a fixed size; the daemon answers
 * EINVAL to a request of the wrong size.
 */
#ifndef CX4_PROTO_H
#define CX4_PROTO_H

#include <stdint.h>

#include "bv_proto.h"

enum cx4_op {
	/* fds in the response: UAR window (bar0 fd), and for the model the kick page + eventfd */
	CX4_OP_ALLOC_UCONTEXT = BV_OP_CX4_BASE,
	CX4_OP_ALLOC_PD,
	CX4_OP_DEALLOC_PD,
	CX4_OP_REG_MR,
	CX4_OP_DEREG_MR,
	CX4_OP_CREATE_CQ,	/* fds: buffer memfd [, completion channel] */
	CX4_OP_DESTROY_CQ,
	CX4_OP_CREATE_SRQ,	/* fds: buffer memfd */
	CX4_OP_MODIFY_SRQ,
	CX4_OP_QUERY_SRQ,
	CX4_OP_DESTROY_SRQ,
	CX4_OP_CREATE_QP,	/* fds: buffer memfd */
	CX4_OP_MODIFY_QP,
	CX4_OP_QUERY_QP,
	CX4_OP_DESTROY_QP,
	CX4_OP_RESOLVE_AH,	/* the kernel's part of mlx5 create_ah: validate + L2 address */
	CX4_OP_ALLOC_MW,
	CX4_OP_DEALLOC_MW,
	CX4_OP_RESIZE_CQ,	/* fds: the new buffer memfd */
	CX4_OP_REREG_MR,	/* fds: as REG_MR, when the translation changes */
	CX4_OP_MAX,
};

#define CX4_INVALID_HANDLE	0xffffffffu

/* ---- ALLOC_UCONTEXT ---------------------------------------------------------------------- */
enum cx4_uctx_flags {
	CX4_UCTX_BF = 1 << 0,		/* BlueFlame registers usable (cap bf) */
	CX4_UCTX_KICK = 1 << 1,		/* fds[1] kick page memfd, fds[2] kick eventfd follow */
	CX4_UCTX_ATOMIC_HOST_ORDER = 1 << 2,	/* 8-byte atomic replies in host order */
	CX4_UCTX_QP_DATA_IN_ORDER = 1 << 3,	/* cap qp_data_in_order: QPs may report it */
};

struct cx4_alloc_ucontext_rsp {
	uint32_t flags;			/* enum cx4_uctx_flags */
	uint32_t uar_index;		/* this context's UAR page (ALLOC_UAR) */
	uint64_t uar_mmap_offset;	/* where that page is in fds[0] */
	uint32_t log_bf_reg_size;	/* BlueFlame register: 1 << n bytes, two halves */
	uint32_t num_bf_regs;		/* per UAR page (PRM: 4) */
	uint32_t cqe_version;		/* 1: CQE srqn_uidx carries the QP's user_index */
	uint32_t max_sq_wqebbs;		/* 1 << log_max_qp_sz */
	uint32_t max_rq_wqes;
	uint32_t max_srq_wqes;		/* 1 << log_max_srq_sz */
	uint32_t max_cqes;		/* 1 << log_max_cq_sz */
	uint32_t max_send_wqe_bytes;	/* max_wqe_sz_sq */
	uint32_t max_recv_wqe_bytes;	/* max_wqe_sz_rq */
	uint32_t max_user_index;	/* user_index is 24 bits */
	uint32_t page_size;		/* queue buffers are multiples of this */
	uint32_t reserved;
};

/* ---- PD ---------------------------------------------------------------------------------- */
struct cx4_alloc_pd_rsp {
	uint32_t handle;
	uint32_t pdn;
};

struct cx4_handle_req {		/* DEALLOC_PD, DEREG_MR, DESTROY_CQ/SRQ/QP, QUERY_SRQ/QP */
	uint32_t handle;
	uint32_t reserved;
};

/*
 * DESTROY_CQ/SRQ/QP: how many events the daemon sent for the object, so the provider can wait
 * until the application acknowledged them before it frees the object (ibv_cmd_destroy_cq/qp:
 * comp_events_reported, events_reported).
 */
struct cx4_destroy_rsp {
	uint64_t comp_events;
	uint32_t async_events;
	uint32_t reserved;
};

/* ---- MR ---------------------------------------------------------------------------------- */
/*
 * With one descriptor attached, the pages of addr .. addr + length are also the memfd's, from
 * fd_off on (the page holding addr; providers/common/bv_shadow.c): cx4d maps the memfd for the
 * device instead of reaching the client's memory by pid. It must be sealed against shrinking.
 */
struct cx4_reg_mr_req {
	uint32_t pd_handle;
	uint32_t access;		/* enum ibv_access_flags */
	uint64_t addr;			/* VA in the client */
	uint64_t length;
	uint64_t hca_va;		/* address the device is given (ibv_reg_mr_iova2), usually addr */
	uint64_t fd_off;		/* with a descriptor: offset of addr's page in it */
};

struct cx4_reg_mr_rsp {
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t reserved;
};

/* ---- MW ---------------------------------------------------------------------------------- */
/*
 * A memory window: a memory key created free (unusable until a UMR WQE binds it), UMR-enabled,
 * in KLM mode, with remote invalidation allowed for type 2 (Linux mlx5_ib_alloc_mw).
 * DEALLOC_MW takes a struct cx4_handle_req.
 */
struct cx4_alloc_mw_req {
	uint32_t pd_handle;
	uint32_t type;			/* IBV_MW_TYPE_1 or IBV_MW_TYPE_2 */
};

struct cx4_alloc_mw_rsp {
	uint32_t handle;
	uint32_t rkey;			/* index << 8 | key byte */
};

/* ---- REREG_MR ---------------------------------------------------------------------------- */
/*
 * ibv_rereg_mr (Linux mlx5_ib_rereg_user_mr): a new PD or access flags change the memory key
 * in place (a UMR WQE on cx4d's own UMR QP: lkey and rkey stay); a new translation (address,
 * length) registers anew (new keys), with a memfd attached as for REG_MR. The fields not
 * named by flags are ignored.
 */
struct cx4_rereg_mr_req {
	uint32_t handle;
	uint32_t flags;			/* IBV_REREG_MR_CHANGE_{TRANSLATION,PD,ACCESS} */
	uint32_t pd_handle;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
	uint64_t hca_va;
	uint64_t fd_off;
};

struct cx4_rereg_mr_rsp {
	uint32_t lkey;
	uint32_t rkey;
};

/* ---- CQ ---------------------------------------------------------------------------------- */
enum cx4_cq_flags {
	CX4_CQ_CHANNEL = 1 << 0,	/* fds[1] is the completion channel */
};

struct cx4_create_cq_req {
	uint64_t user_handle;		/* the ibv_cq *: comp channel records and async events */
	uint64_t buf_len;		/* memfd size */
	uint64_t dbr_offset;
	uint32_t log_cq_size;		/* CQEs = 1 << n */
	uint32_t cqe_size;		/* 64 */
	uint32_t comp_vector;
	uint32_t flags;			/* enum cx4_cq_flags */
};

struct cx4_create_cq_rsp {
	uint32_t handle;
	uint32_t cqn;
};

/*
 * ibv_resize_cq (Linux mlx5_ib_resize_cq, user CQ): MODIFY_CQ with the resize op on a new ring
 * in the attached memfd (same doorbell record, which stays in the old memfd). The device
 * finishes the old ring with a RESIZE CQE and continues in the new one; the provider copies
 * the CQEs before it across (rdma-core mlx5_cq_resize_copy_cqes).
 */
struct cx4_resize_cq_req {
	uint32_t handle;
	uint32_t log_cq_size;
	uint64_t buf_len;
};

/* ---- SRQ --------------------------------------------------------------------------------- */
struct cx4_create_srq_req {
	uint64_t user_handle;		/* the ibv_srq * */
	uint64_t buf_len;
	uint64_t dbr_offset;
	uint32_t pd_handle;
	uint32_t log_srq_size;		/* WQEs = 1 << n */
	uint32_t log_stride;		/* WQE = 16 << n bytes (next segment + data segments) */
	uint32_t limit;			/* srq_limit armed at creation, 0 = none */
	uint32_t user_index;
	uint32_t reserved;
};

struct cx4_create_srq_rsp {
	uint32_t handle;
	uint32_t srqn;
};

struct cx4_modify_srq_req {
	uint32_t handle;
	uint32_t attr_mask;		/* IBV_SRQ_LIMIT only; IBV_SRQ_MAX_WR (resize) -> EOPNOTSUPP */
	uint32_t max_wr;
	uint32_t srq_limit;
};

struct cx4_query_srq_rsp {
	uint32_t limit;
	uint32_t state;
};

/* ---- QP ---------------------------------------------------------------------------------- */
enum cx4_qp_flags {
	CX4_QP_NO_SQ = 1 << 0,		/* receive-only (SRQ-less XRC target style): log_sq ignored */
	CX4_QP_SRQ = 1 << 1,		/* receives come from srq_handle; no RQ in the buffer */
	CX4_QP_ZERO_RQ = 1 << 2,	/* max_recv_wr == 0 and no SRQ */
};

struct cx4_create_qp_req {
	uint64_t user_handle;		/* the ibv_qp * */
	uint64_t buf_len;
	uint64_t dbr_offset;
	uint32_t qp_type;		/* IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD */
	uint32_t flags;			/* enum cx4_qp_flags */
	uint32_t pd_handle;
	uint32_t send_cq_handle;
	uint32_t recv_cq_handle;
	uint32_t srq_handle;		/* CX4_INVALID_HANDLE unless CX4_QP_SRQ */
	uint32_t log_sq_size;		/* send WQEBBs (64 B) = 1 << n */
	uint32_t log_rq_size;		/* receive WQEs = 1 << n */
	uint32_t log_rq_stride;		/* receive WQE = 16 << n bytes */
	uint32_t user_index;		/* echoed in every CQE of this QP (cqe_version 1) */
};

struct cx4_create_qp_rsp {
	uint32_t handle;
	uint32_t qpn;
};

/* struct ibv_ah_attr in fixed-width form (RoCE: always global). */
struct cx4_ah_attr {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t is_global;
	uint8_t port_num;
	uint8_t static_rate;
	uint8_t src_path_bits;
	uint16_t dlid;
	uint16_t reserved;
};

/* ibv_modify_qp: the attributes named by attr_mask (enum ibv_qp_attr_mask). */
struct cx4_modify_qp_req {
	uint32_t handle;
	uint32_t attr_mask;
	uint32_t qp_state;
	uint32_t cur_qp_state;
	uint32_t path_mtu;		/* enum ibv_mtu */
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sq_draining;
	uint8_t en_sqd_async_notify;
	uint8_t reserved;
	struct cx4_ah_attr ah;
};

/* ibv_query_qp from QUERY_QP's context (everything the device knows). */
struct cx4_query_qp_rsp {
	uint32_t qp_state;
	uint32_t path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sq_draining;
	uint8_t data_in_order;		/* qpc.data_in_order (ibv_query_qp_data_in_order) */
	uint8_t reserved;
	struct cx4_ah_attr ah;
};

/* ---- AH ---------------------------------------------------------------------------------- */
struct cx4_resolve_ah_req {
	uint32_t pd_handle;
	uint32_t reserved;
	struct cx4_ah_attr ah;
};

struct cx4_resolve_ah_rsp {
	uint8_t dmac[6];
	uint8_t gid_type;		/* 0 RoCE v1, 1 RoCE v2 (the sgid's type) */
	uint8_t reserved;
};

#endif /* CX4_PROTO_H */
