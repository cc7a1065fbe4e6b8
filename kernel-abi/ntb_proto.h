/* SPDX-License-Identifier: MIT */
/*
 * The ntb provider <-> ntbd control protocol: the kind-specific requests (BV_OP_NTB_BASE..) a
 * provider context sends to the daemon owning its end of the NTB link, after BV_OP_HELLO.
 * They play the role of the uverbs commands of a kernel RDMA driver: everything that needs the
 * device's owner (window and doorbell split, IOMMU mappings, publishing objects to the peer
 * end) goes through here; the data path never does (kernel-abi/ntb_verbs_wire.h describes the
 * window memory the data path uses instead).
 *
 * Conventions as in bv_proto.h: fixed-width host-endian fields, one response per request,
 * status 0 or a positive errno, descriptors with SCM_RIGHTS (at most BV_MSG_MAX_FDS).
 *
 * Object names (PD handles, keys, QP numbers) are allocated by ntbd for its whole end, so the
 * peer end can name them, and are checked against the asking client: a client can never
 * name another client's objects (ntbd answers ENOENT).
 */
#ifndef NTB_PROTO_H
#define NTB_PROTO_H

#include <stdint.h>

#include "bv_proto.h"

#define NTB_PROTO_VERSION	2u

enum ntb_op {
	/*
	 * Become a verbs client of this end: get a client slot, the memory the data path lives
	 * in and the wake-up descriptor. Response: struct ntb_attach_rsp and, when the link is
	 * up, fds [0] local window memory, [1] HAL grant, [2] bell eventfd, [3] loopback memory.
	 * ENOLINK while the link is down (the context still opens; QPs and MRs need the link).
	 */
	NTB_OP_ATTACH = BV_OP_NTB_BASE,
	NTB_OP_ALLOC_PD,	/* -> ntb_handle_rsp */
	NTB_OP_DEALLOC_PD,	/* ntb_handle_req */
	/*
	 * Register memory: ntbd maps it at an IOVA of this end's IOMMU aperture (the role of
	 * umem pinning) and, with remote access, publishes the key to the peer end.
	 */
	NTB_OP_REG_MR,		/* ntb_reg_mr_req -> ntb_reg_mr_rsp */
	NTB_OP_DEREG_MR,	/* ntb_handle_req (the lkey) */
	NTB_OP_CREATE_QP,	/* ntb_create_qp_req -> ntb_create_qp_rsp */
	NTB_OP_MODIFY_QP,	/* ntb_modify_qp_req: publish the QP's new state to the peer end */
	NTB_OP_DESTROY_QP,	/* ntb_handle_req (the QP number) */
	/* Queue an async event (SRQ limit, QP fatal...) on this client's async fd. */
	NTB_OP_ASYNC_EVENT,	/* ntb_async_event_req */
	/*
	 * CPU access to one remote key's region of the peer (PIO): the part of our outbound
	 * window 0 it occupies, as a descriptor to mmap. ENXIO when the peer's region is reachable
	 * by DMA only. Request ntb_handle_req (the rkey; reserved: NTB_END_LOCAL for a key of
	 * this end, mapped from the loopback path); response ntb_map_peer_mr_rsp + one fd.
	 */
	NTB_OP_MAP_PEER_MR,
	/*
	 * The block this client writes for one client of either end (kernel-abi/
	 * ntb_verbs_wire.h "Pairs"): allocated in the reader's memory the first time, the same
	 * one after that while both incarnations live. ntb_open_pair_req -> ntb_open_pair_rsp
	 * and, for a reader of this end, one fd: its bell eventfd. ESTALE: the reader slot is
	 * not in that incarnation (any more); ENOSPC: the reader's pool is full.
	 */
	NTB_OP_OPEN_PAIR,
	/*
	 * ibv_rereg_mr: the region of a key this client holds gets a new translation, PD or
	 * access, under the same key. ntb_rereg_mr_req (+ one descriptor, as REG_MR) ->
	 * ntb_reg_mr_rsp.
	 */
	NTB_OP_REREG_MR,
	/*
	 * Memory windows: a key of this end's key space for a window of type reserved
	 * (IBV_MW_TYPE_1 or _2) in PD handle (ntb_handle_req -> ntb_handle_rsp, the key), and
	 * back (ntb_handle_req, the key). Binding is the provider's (the window grants access to
	 * the owner's own memory, checked by its own responders); a window's key is never
	 * published, so the peer's requesters send what names it as messages.
	 */
	NTB_OP_ALLOC_MW,
	NTB_OP_DEALLOC_MW,
	NTB_OP_MAX,
};

struct ntb_attach_req {
	uint32_t version;		/* NTB_PROTO_VERSION */
	uint32_t reserved;
};

/* The two memories a client reads: its end's window (written by the peer end), loopback. */
enum ntb_end_id {
	NTB_END_PEER = 0,		/* the other end of the link */
	NTB_END_LOCAL = 1,		/* this end (loopback) */
};

/*
 * Where this client's data path lives. fd 0 is this end's control region (the memory behind
 * our inbound window 0, which the peer writes), fd 3 this end's loopback memory: the offsets
 * below are into them (the layouts of kernel-abi/ntb_verbs_wire.h, decided by ntbd: a client
 * uses these, never the copies in shared memory another process could rewrite). fd 1 is a
 * HAL grant (ntb_client_attach): the peer's window 0 for stores, the peer doorbell bits, DMA,
 * and our own doorbell vector when db_bits is not 0. fd 2 is the eventfd that wakes this
 * client: ntbd writes it when a peer rang the shared doorbell for us (clients without a
 * vector of their own), loopback writers when they produced something for us. The peer's
 * layout is in our control area's header, written by the peer's ntbd.
 */
struct ntb_attach_rsp {
	uint32_t version;
	uint32_t side;			/* 0 or 1: which end of the link this is */
	uint32_t slot;			/* this client's slot on its end */
	uint32_t slot_epoch;		/* incarnation of the slot (odd while in use) */
	uint32_t max_slots;		/* slots per end (<= NTBV_MAX_SLOTS) */
	uint32_t mtu;			/* bytes: largest payload of one ring message */
	uint32_t max_qp;		/* QP table entries of either control area */
	uint32_t max_mr;		/* MR table entries of either control area */
	uint32_t ipv4;			/* this end's port address, network order */
	uint32_t reserved;
	uint64_t db_bits;		/* our own doorbell bits (0: woken through fd 2 only) */
	/* fd 0: our window; the peer's ntbd writes its control area and our directory here */
	uint64_t win_len;
	uint64_t ctrl_off;
	uint64_t win_vbell_off;		/* our vbell words (struct ntbv_vbell per slot) */
	uint64_t win_dir_off;		/* [reader][writer] struct ntbv_pair_ent, max_slots^2 */
	uint64_t win_dgen_off;
	uint64_t win_pool_off, win_pool_len;
	/* fd 3: loopback memory; our ntbd writes its control area (at 0) and directory */
	uint64_t lo_len;
	uint64_t lo_dir_off;
	uint64_t lo_dgen_off;
	uint64_t lo_pool_off, lo_pool_len;
};

/* For requests that name one object: a PD handle, an lkey, a QP number. */
struct ntb_handle_req {
	uint32_t handle;
	uint32_t reserved;
};

struct ntb_handle_rsp {
	uint32_t handle;
	uint32_t reserved;
};

/*
 * With one descriptor attached, the pages of addr .. addr + length are (also) the memfd's,
 * from fd_off on (the page holding addr): ntbd maps the memfd for the peer, whose CPU can then
 * store into the region through its window (providers/ntb/ntb_shadow.c).
 */
struct ntb_reg_mr_req {
	uint32_t pd;
	uint32_t access;		/* enum ibv_access_flags */
	uint64_t addr;			/* the process's virtual address */
	uint64_t length;
	uint64_t hca_va;		/* the address remote peers name (ibv_reg_mr_iova) */
	uint64_t fd_off;		/* with a descriptor: offset of addr's page in it */
};

struct ntb_rereg_mr_req {
	uint32_t lkey;			/* the key (unchanged) */
	uint32_t reserved;
	struct ntb_reg_mr_req mr;	/* what it covers from now on */
};

struct ntb_reg_mr_rsp {
	uint32_t lkey;
	uint32_t rkey;			/* 0 without remote access */
	uint64_t win_off;		/* where addr is in our window 0 (0 without remote access) */
};

struct ntb_create_qp_req {
	uint32_t pd;
	uint32_t qp_type;		/* IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD */
};

struct ntb_create_qp_rsp {
	uint32_t qpn;
	uint32_t reserved;
};

/* What the peer end needs to know about one of our QPs (mirrored into its QP table). */
struct ntb_modify_qp_req {
	uint32_t qpn;
	uint32_t state;			/* enum ibv_qp_state after the transition */
	uint32_t dest_qpn;		/* RC/UC: the connected peer QP (valid from RTR) */
	uint32_t qkey;			/* UD */
	uint32_t access;		/* qp_access_flags: what remote requests may do */
	uint32_t reserved;
};

struct ntb_map_peer_mr_rsp {
	uint64_t fd_off;		/* map len bytes of the fd from here */
	uint64_t len;
	uint64_t delta;			/* where the region's first byte is in that mapping */
};

struct ntb_open_pair_req {
	uint32_t end;			/* enum ntb_end_id: where the reader is */
	uint32_t slot;			/* the reader's slot */
	uint32_t epoch;			/* ... in this incarnation */
	uint32_t reserved;
};

struct ntb_open_pair_rsp {
	uint64_t off;			/* the block, in the reader's memory (peer window 0 or
					 * loopback memory) */
	uint32_t req_cells;
	uint32_t resp_cells;
	uint32_t w_epoch;		/* our slot epoch, r_epoch the reader's */
	uint32_t r_epoch;
};

struct ntb_async_event_req {
	uint64_t element;		/* ibv_qp* / ibv_srq* / ibv_cq* as the application knows it */
	uint32_t event_type;		/* enum ibv_event_type */
	uint32_t reserved;
};

#endif /* NTB_PROTO_H */
