/* SPDX-License-Identifier: MIT */
/*
 * The ntb provider: RDMA verbs over an NTB link, NTRDMA's architecture in user space
 * (docs/ntb-verbs.md). Internal declarations shared by the files of this directory:
 *
 *   ntb_context.c   device context: attach to ntbd, map the windows, ops table
 *   ntb_pd.c ntb_mr.c ntb_cq.c ntb_srq.c ntb_ah.c ntb_qp.c   the objects, one per file
 *   ntb_post.c      post_send / post_recv: validation and queueing
 *   ntb_chan.c      the pair channels: rings in window or loopback memory, credits, bells
 *   ntb_pairs.c     finding and opening the pair blocks (directories, NTB_OP_OPEN_PAIR)
 *   ntb_req.c       requester: send queue -> ring messages or direct placement (DMA)
 *   ntb_resp.c      responder: request messages -> data placement, receives, READ, atomics
 *   ntb_comp.c      completer: response messages -> send completions, RNR and retry
 *   ntb_progress.c  the progress thread and the engine every thread runs
 *   ntb_trace.c     the engine's trace ring (NTB_TRACE=path: what it decided, when)
 *
 * Window memory formats: kernel-abi/ntb_verbs_wire.h. Control requests: kernel-abi/ntb_proto.h.
 *
 * Locks (pthread mutexes: on a 2-core machine a spinning waiter could starve the holder), in
 * the order they nest:
 *   peer->rx_lock (consuming a peer's rings) -> qp->sq_lock / qp->rq.lock / srq->lock
 *     -> peer->tx_lock (producing into a peer's rings) -> cq->lock
 *   ctx->lock (object tables; the sweep of send queues) -> qp->sq_lock -> ...
 *   ctx->open_lock (opening blocks, outside every engine lock) -> peer->rx_lock -> ...
 *   ctx->dma_lock nests inside qp->sq_lock.
 * A peer is a client slot of either end: "peers" of this end are the loopback.
 */
#ifndef NTB_PROVIDER_H
#define NTB_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "bv_provider.h"
#include "ntb_hal.h"
#include "ntb_proto.h"
#include "ntb_verbs_wire.h"
#include "ntb_trace.h"

/* Limits this provider reports and enforces (query_device). */
#define NTB_MAX_QP_WR		16384
#define NTB_GID_TBL_MAX		16	/* port 1's GID table as bvctl writes it (BV_GID_TBL_LEN) */
#define NTB_MAX_SGE		32
#define NTB_MAX_SGE_RD		32
#define NTB_MAX_CQE		(1 << 20)
#define NTB_MAX_INLINE		512
#define NTB_MAX_RD_ATOMIC	16
#define NTB_MAX_SRQ_WR		16384
#define NTB_MAX_MSG		(1u << 30)	/* port max_msg_sz */
#define NTB_GRH_LEN		40		/* UD receive buffers start with the GRH */
#define NTB_ROCE_L3_IPV4	2		/* a UD completion's sl: RoCE v2 over IPv4 */
#define NTB_STAGED_MAX		64		/* RC receive completions held per batch */
#define NTB_MAX_AH		65536
#define NTB_MAX_CQ		65536
#define NTB_MAX_SRQ		4096
#define NTB_MAX_PD		65535		/* ntbd's table, shared by the end */

/* An RDMA WRITE at least this long is placed by DMA instead of travelling in the ring. */
#define NTB_DIRECT_MIN		4096

struct ntb_context;
struct ntb_qp;

/* ----------------------------------------------------------------------------------------- */
/* Pair channels (ntb_chan.c)                                                                 */

/* A ring this process writes into: in the reader's memory, reached by stores only. */
struct ntb_txring {
	uint8_t *cells;			/* the ring (the reader's block) */
	uint32_t ncells;		/* power of two */
	uint32_t max_payload;		/* of one message: half the ring */
	uint64_t prod;			/* next cell to write (our copy; published to *prod_pub) */
	uint64_t published;		/* last value stored to *prod_pub */
	_Atomic uint64_t *prod_pub;	/* the consumer reads it: its memory */
	const _Atomic uint64_t *cons;	/* the consumer's credit return: our memory */
};

/* A ring this process reads: in our memory, written by the peer. */
struct ntb_rxring {
	const uint8_t *cells;
	uint32_t ncells;
	uint64_t cons;			/* next cell to read */
	uint64_t published;		/* last value stored to *cons_pub */
	const _Atomic uint64_t *prod;	/* the producer's index: our memory */
	_Atomic uint64_t *cons_pub;	/* our credit return: its memory (NULL: no block yet) */
};

/*
 * One of the two memories this client reads and the end whose objects they describe
 * (kernel-abi/ntb_verbs_wire.h): NTB_END_PEER, the other end of the link (we read our window,
 * the peer's ntbd writes its control area and our directory there, we write the peer's
 * window); NTB_END_LOCAL, this end (the loopback memory, read and written, its control area
 * and directory written by our ntbd).
 */
struct ntb_end {
	bool up;			/* its control area was there and made sense */
	const struct ntbv_ctrl_hdr *ctrl;
	const struct ntbv_slot *slots;
	const struct ntbv_qp_ent *qps;
	const struct ntbv_mr_ent *mrs;
	/* copied from its header once and checked: every index we compute uses these */
	uint32_t side, max_slots, max_qp, max_mr, ipv4;
	uint8_t gid[16], gid_ll[16];
	/* what we read: our row of the directory, and where blocks written for us may be */
	uint8_t *rx_mem;
	uint64_t rx_len, pool_off, pool_len;
	uint32_t row_len;		/* our end's max_slots: the directory's row length */
	const struct ntbv_pair_ent *dir;
	const _Atomic uint64_t *dgen;
	uint64_t dgen_seen;
	/* what we write: the reader's memory, its vbells (NULL for the loopback) */
	uint8_t *tx_mem;
	uint64_t tx_len;
	struct ntbv_vbell *vbells;
};

/* Everything about one client slot of either end. */
struct ntb_peer {
	struct ntb_context *ctx;
	struct ntb_end *end;
	uint8_t endi;			/* NTB_END_PEER or NTB_END_LOCAL */
	uint8_t slot;
	bool active;			/* on ctx->active: the engine looks at it */
	bool garbage;			/* it wrote nonsense: ignored until its next block */
	/* the block it writes for us: from our directory (rx_lock) */
	struct ntbv_pair_hdr *rx_hdr;	/* NULL: none */
	uint32_t rx_epoch;		/* its incarnation that writes it */
	uint32_t rx_seq;		/* the directory entry's sequence count when bound */
	/* the block we write for it: from NTB_OP_OPEN_PAIR (tx_lock) */
	struct ntbv_pair_hdr *tx_hdr;	/* NULL: none */
	uint32_t tx_epoch;		/* its incarnation we write for */
	uint32_t bell_epoch;		/* ... our last bell wish went to */
	_Atomic uint32_t *vbell;	/* its vbell word (peer end) */
	uint64_t db_bits;		/* its doorbell (peer end) */
	int bell_fd;			/* its bell eventfd (loopback), -1: none */
	_Atomic uint32_t want_open;	/* the epoch the progress thread should open for, 0 */
	uint32_t open_failed;		/* the epoch whose block ntbd refused (no room) */
	pthread_mutex_t rx_lock;	/* consuming req_rx / resp_rx */
	pthread_mutex_t tx_lock;	/* producing into req_tx / resp_tx */
	struct ntb_txring req_tx, resp_tx;
	struct ntb_rxring req_rx, resp_rx;
	uint32_t bell_wish;		/* what we last asked of it (tx_hdr->bell) */
	struct ntb_qp *dirty;		/* responder: QPs owing an ACK or a flush (rx_lock) */
	unsigned int acks_owed;		/* ... the ACKs among them (rx_lock) */
	bool want_credit;		/* a writer found a ring full: ask for a bell on credits */
	bool resp_stalled;		/* a request waits for room in the response ring */
	unsigned int nqps;		/* QPs bound to it (RC/UC) */
};

/* The responder batch a thread runs: its RC receive completions wait for its ACKs. */
struct ntb_staged_wc {
	struct ntb_cq *cq;
	struct ibv_wc wc;
	bool solicited;
};

/* ----------------------------------------------------------------------------------------- */
/* Objects                                                                                    */

struct ntb_pd {
	struct ibv_pd ibv_pd;
	uint32_t handle;
	_Atomic int refs;		/* SRQs and AHs (ntbd counts MRs and QPs) */
};

struct ntb_mr {
	struct verbs_mr vmr;
	uint32_t index;
	bool shadow;			/* its pages were moved into a memfd (ntb_shadow.c) */
	uint64_t addr, length;		/* what the key covers, in this process */
	uint64_t hca_va;		/* ... and the address remote requests name */
};

_Static_assert(offsetof(struct ntb_mr, vmr) == 0 && offsetof(struct verbs_mr, ibv_mr) == 0,
	       "an ntb_mr is its ibv_mr");

/* A peer region we store into directly (PIO), cached per remote key index. */
struct ntb_pmap {
	uint32_t rkey;
	uint64_t win_off;
	uint64_t length;
	uint8_t *map;			/* NULL: DMA only */
	size_t map_len;
	uint8_t *base;			/* byte 0 of the region (its hca_va) */
};

/*
 * What the data path needs of a registered region, kept in a table indexed by key: lookups
 * copy an entry under its sequence count, so a concurrent deregistration never frees memory
 * under a reader.
 */
struct ntb_mr_slot {
	_Atomic uint32_t seq;
	uint32_t lkey;			/* 0: free; a window: the key ntbd gave it */
	uint32_t rkey;			/* a window: its key while bound, else 0 */
	uint32_t pd;
	uint32_t access;
	uint32_t mw_type;		/* 0: a region; IBV_MW_TYPE_1 or _2: a window */
	uint64_t addr;			/* process address of byte 0 */
	uint64_t hca_va;		/* what remote requests name */
	uint64_t length;
	/* a bound window: the QP it is bound to (type 2), its region's slot as it was then */
	uint32_t mw_qpn;
	uint32_t parent;		/* key index of the region */
	uint32_t parent_seq;		/* the region's slot sequence when bound */
};

/* ibv_bind_mw's work request: a BIND_MW of a type 1 window (posting one is refused). */
#define NTB_WR_BIND_MW1		0xfe
/* ibv_wr_atomic_write's: the 8 bytes in wr.atomic.compare_add (no ibv_post_send form). */
#define NTB_WR_ATOMIC_WRITE	0xfd

/* A memory window (type 1 or 2): a key of the end's key space, bound by the provider. */
struct ntb_mw {
	struct ibv_mw ibv_mw;
	uint32_t key;			/* what ntbd allocated (the slot's lkey) */
};

/* The last local key a QP checked, valid while the key's table slot is unchanged. */
struct ntb_key_cache {
	uint32_t key;
	uint32_t seq;
	struct ntb_mr_slot slot;
};

/* The last remote region a QP placed into directly, valid while both entries are unchanged. */
struct ntb_direct_cache {
	uint32_t rkey;
	uint32_t dest_qpn;
	uint32_t qseq, mseq;		/* sequence counts of the peer's QP and MR entries */
	struct ntbv_mr_ent m;
	uint8_t *base;			/* PIO mapping of the region, NULL: DMA */
};

struct ntb_ah {
	struct ibv_ah ibv_ah;
	struct ibv_ah_attr attr;
};

/* A completion as poll_cq hands it out. */
struct ntb_cq {
	struct verbs_cq vcq;
	struct ntb_context *ctx;
	pthread_mutex_t lock;
	struct ibv_wc *ring;
	uint32_t size;			/* power of two, >= cqe + 1 */
	uint32_t head, tail;		/* produced / consumed */
	uint32_t cqe;			/* what the application asked for */
	_Atomic int armed;		/* 0, 1 (next), 2 (solicited only) */
	bool overflowed;
	uint64_t wc_flags;		/* cq_ex: fields the application reads */
	struct ibv_wc cur;		/* cq_ex: the completion being read */
};

/* A receive WQE. */
struct ntb_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t reserved;
	struct ibv_sge *sg;
};

struct ntb_rq {
	pthread_mutex_t lock;
	struct ntb_rwqe *wqe;
	struct ibv_sge *sge;
	uint32_t size;			/* power of two */
	uint32_t max_wr, max_sge;
	uint32_t head, tail;		/* consumed by the responder / posted */
};

struct ntb_srq {
	struct verbs_srq vsrq;
	struct ntb_context *ctx;
	struct ntb_rq rq;
	uint32_t limit;			/* armed limit, 0 = none */
	uint32_t pd;
};

enum ntb_swqe_state {
	NTB_SWQE_POSTED = 0,		/* not (or not completely) transmitted */
	NTB_SWQE_SENT,			/* transmitted, waiting for the responder */
	NTB_SWQE_DONE,			/* ready to complete */
};

/* ibv_wr_* work requests between ibv_wr_start() and ibv_wr_complete() (ntb_qpex.c). */
struct ntb_qp_stage {
	struct ibv_send_wr *wr;		/* max_send_wr of them */
	struct ibv_sge *sge;		/* max_send_sge per work request */
	uint8_t *inl;			/* max_inline_data per work request */
	uint32_t n;			/* staged so far */
	int err;			/* the first error building them */
};

/* A send WQE, as the requester keeps it until it completes. */
struct ntb_swqe {
	uint64_t wr_id;
	uint8_t opcode;			/* IBV_WR_* */
	uint8_t state;			/* enum ntb_swqe_state */
	uint8_t status;			/* enum ibv_wc_status when DONE */
	uint8_t ring;			/* travels in the ring (not placed directly) */
	uint32_t send_flags;
	uint32_t num_sge;
	uint32_t length;
	uint32_t imm;
	uint32_t psn;
	uint32_t rkey;
	uint32_t remote_qpn;		/* UD */
	uint32_t remote_qkey;		/* UD */
	uint32_t sent;			/* bytes transmitted */
	uint32_t got;			/* READ: bytes received */
	uint64_t raddr;
	uint64_t compare_add;
	uint64_t swap;
	uint64_t ring_end;		/* request ring position after its last message */
	/* BIND_MW: the window (ntbd's key), rkey the new key, raddr/mw_len the range */
	uint32_t mw_key;
	uint32_t bind_lkey;		/* the region (0: unbind, type 1) */
	uint32_t bind_access;
	bool bind_type1;		/* from ibv_bind_mw (the only way to bind a type 1 window) */
	uint64_t mw_len;
	struct ibv_sge *sg;
	uint8_t ud_gid[16];		/* UD: destination GID */
};

struct ntb_qp {
	struct verbs_qp vqp;
	struct ntb_context *ctx;
	uint32_t qpn;
	enum ibv_qp_type type;
	_Atomic int state;		/* enum ibv_qp_state, the provider's truth */
	struct ntb_cq *scq, *rcq;
	struct ntb_srq *srq;
	uint32_t pd;
	bool sq_sig_all;
	uint64_t send_ops;		/* IBV_QP_EX_WITH_*: the ibv_wr_* calls it takes */
	struct ntb_qp_stage *stage;	/* NULL: no ibv_wr_* API */
	struct ibv_qp_cap cap;

	/* attributes (modify_qp) */
	uint32_t qkey;
	uint32_t dest_qpn;
	uint32_t sq_psn, rq_psn;	/* as last set */
	uint32_t access;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t port_num;
	uint8_t sq_draining;
	uint16_t pkey_index;
	enum ibv_mtu path_mtu;
	struct ibv_ah_attr ah_attr;

	/* the client its RC/UC partner lives in, of either end (from RTR) */
	struct ntb_peer *peer;
	uint32_t peer_epoch;
	uint64_t peer_gone_ns;		/* when we saw that peer client leave (progress.c) */

	/* send queue (requester, completer) */
	pthread_mutex_t sq_lock;
	struct ntb_swqe *sq;
	struct ibv_sge *sq_sge;
	uint8_t *sq_inline;
	uint32_t sq_size;		/* power of two */
	uint32_t sq_head;		/* next slot to post */
	uint32_t sq_tx;			/* next to transmit */
	uint32_t sq_tail;		/* oldest not completed */
	uint32_t next_psn;		/* PSN of the next new message */
	uint32_t rd_atomic;		/* READ/atomics transmitted and not answered */
	uint32_t inflight;		/* RC ring WQEs transmitted and not acknowledged */
	uint64_t ring_last;		/* request ring position after our last ring message */
	uint64_t deadline;		/* RC: transport timer (ns), 0 = off */
	uint64_t rnr_until;		/* RC: RNR wait before retransmitting (ns), 0 = none */
	uint64_t retry_wait;		/* RC: a retry waits for the completer to read this far */
	uint8_t retry_left;
	uint8_t rnr_left;
	struct ntb_key_cache lkc;	/* under sq_lock */
	struct ntb_direct_cache dc;	/* under sq_lock */

	/* receive queue (or the SRQ's) */
	struct ntb_rq rq;

	/* responder state: under the peer's rx_lock */
	uint32_t epsn;			/* next expected request PSN */
	uint32_t msn;
	bool need_ack;
	bool want_error;		/* entered ERROR: flush after the batch */
	bool dirty;			/* on its peer's dirty list */
	bool cur_dup;			/* the READ in progress answers a duplicate */
	bool nak_sent;			/* discarding until the NAK'ed PSN comes again */
	uint32_t nak_psn;
	bool cur_active;		/* a multi-segment message in progress */
	bool cur_drop;			/* ... being discarded */
	bool cur_has_recv;		/* ... consuming cur_recv */
	uint8_t cur_op;			/* NTBV_OP_* of the message in progress */
	struct ntb_rwqe cur_recv;	/* the receive it fills */
	struct ibv_sge cur_sge[NTB_MAX_SGE];
	uint32_t cur_read_off;		/* READ: bytes answered so far */
	uint64_t cur_local;		/* WRITE/READ: process address of the message's raddr */
	uint64_t cur_raddr;		/* WRITE: the message's remote address */
	uint32_t cur_total;		/* its length */
	uint32_t cur_psn;		/* the message in progress, the READ being answered */
	struct {
		uint32_t psn;
		uint64_t orig;
		bool valid;
	} atomic_cache[NTB_MAX_RD_ATOMIC];
	unsigned int atomic_next;
	struct ntb_qp *next_dirty;	/* responder: QPs owing an ACK after a batch */
	struct ntb_qp *next, *prev;	/* ctx->qp_list */
};

/* ----------------------------------------------------------------------------------------- */
/* The context                                                                                */

struct ntb_context {
	struct bv_context bv;
	pthread_mutex_t lock;		/* object tables and attach */

	/* data path (valid once attached) */
	bool attached;
	struct ntb_dev *hal;		/* client handle */
	struct ntb_dma_chan *dma;
	pthread_mutex_t dma_lock;
	uint32_t side, slot, slot_epoch, max_slots, mtu;
	uint32_t gid_tbl_len;
	union ibv_gid gids[NTB_GID_TBL_MAX];	/* our port's GIDs (a datagram to one stays here);
						 * an empty entry is zero */
	uint32_t ipv4;			/* our port's address (network order), for UD GRHs */
	uint8_t *local;			/* our control region (fd 0), read/write */
	uint64_t local_len;
	uint8_t *lo;			/* our loopback memory (fd 3), read/write */
	uint64_t lo_len;
	uint8_t *peer;			/* the peer's window 0, stores only */
	uint64_t peer_len;
	_Atomic uint32_t *my_vbell;	/* our vbell word, in our window */
	uint32_t max_qp, max_mr;
	struct ntb_end ends[2];		/* [NTB_END_PEER], [NTB_END_LOCAL] */
	struct ntb_peer peers[2][NTBV_MAX_SLOTS];
	/* the peers with a block either way, in the order they appeared (only grows) */
	struct ntb_peer *active[2 * NTBV_MAX_SLOTS];
	_Atomic unsigned int nactive;
	pthread_mutex_t open_lock;	/* opening blocks; finding them in the directories */
	_Atomic int want_open;		/* some peer waits for its block (progress thread) */

	/* object tables */
	struct ntb_mr_slot *mrs;	/* indexed by NTBV_KEY_INDEX(lkey) */
	struct ntb_pmap **pmaps[2];	/* regions of either end we store into, by key index */
	pthread_mutex_t pmap_lock;
	pthread_mutex_t mw_lock;	/* binding and invalidating windows, a leaf lock */
	struct ntb_qp **qps;		/* indexed by NTBV_QPN_INDEX(qpn) */
	struct ntb_qp *qp_list;		/* every QP, under ctx->lock */

	/* progress thread */
	pthread_t thread;
	bool thread_running;
	_Atomic bool stop;
	int poke_fd;			/* eventfd: wake the progress thread */
	int relay_fd;			/* eventfd ntbd writes for our vbell */
	_Atomic uint64_t polls;		/* poll_cq calls, to tell an active application */
	_Atomic uint64_t consumed;	/* messages the engine consumed, whoever ran it */
	_Atomic int sleeping;		/* the progress thread is (about to be) blocked */
	_Atomic int armed_cqs;		/* CQs armed for a completion event */
	uint32_t spin_us;
	uint64_t db_bits;		/* our own doorbell vector (0: woken by ntbd's relay) */
	bool want_sweep;		/* a send queue waits for credits: sweep every pass */
	_Atomic uint64_t next_sweep;	/* ns: the next timer due (UINT64_MAX: none) */
	_Atomic uint64_t wake_at;	/* ns: when the blocked progress thread wakes anyway */

	/*
	 * The link session this context attached in is over (the peer's daemon died or hung,
	 * the link went down): latched, the context must be reopened. Every QP's outstanding
	 * work completed with errors (link_failed: done once).
	 */
	_Atomic bool link_lost;
	_Atomic bool link_failed;
	/*
	 * The table generations (both ends: the loopback has departures too) whose departed
	 * clients were dealt with (progress.c), as one sum of the two.
	 */
	_Atomic uint64_t peers_gen;
	_Atomic uint64_t peers_defer_gen;	/* while some QP waits: look again at peers_recheck */
	_Atomic uint64_t peers_recheck;
	/* objects the provider alone keeps: the device limits hold per context */
	_Atomic unsigned int ncq, nsrq, nah;

	/* async events the engine raised, sent outside the engine's locks */
	pthread_mutex_t ev_lock;
	struct ntb_pending_event {
		uint64_t element;
		uint32_t type;
	} ev[64];
	unsigned int nev;
};

static inline struct ntb_context *to_ntb_ctx(struct ibv_context *ibctx)
{
	return (struct ntb_context *)to_bv_context(ibctx);
}

/* Our GID at index i, or NULL where the table has none (an empty entry: zero). */
static inline const union ibv_gid *ntb_gid(const struct ntb_context *ctx, uint32_t i)
{
	static const uint8_t zero[16];

	if (i >= ctx->gid_tbl_len || i >= NTB_GID_TBL_MAX || !memcmp(ctx->gids[i].raw, zero, 16))
		return NULL;
	return &ctx->gids[i];
}

/* gid is one of ours (a datagram or a path to it stays on this end). */
static inline bool ntb_gid_is_own(const struct ntb_context *ctx, const uint8_t *gid)
{
	for (uint32_t i = 0; i < NTB_GID_TBL_MAX; i++) {
		const union ibv_gid *g = ntb_gid(ctx, i);

		if (g && !memcmp(gid, g->raw, 16))
			return true;
	}
	return false;
}

static inline struct ntb_pd *to_ntb_pd(struct ibv_pd *pd)
{
	return (struct ntb_pd *)pd;
}

static inline struct ntb_cq *to_ntb_cq(struct ibv_cq *cq)
{
	return (struct ntb_cq *)cq;
}

static inline struct ntb_qp *to_ntb_qp(struct ibv_qp *qp)
{
	return (struct ntb_qp *)qp;
}

static inline struct ntb_srq *to_ntb_srq(struct ibv_srq *srq)
{
	return (struct ntb_srq *)srq;
}

static inline int qp_state(const struct ntb_qp *qp)
{
	return atomic_load_explicit(&qp->state, memory_order_acquire);
}

/* Monotonic time in ns. */
uint64_t ntb_now(void);
static inline void ntb_cpu_relax(void)
{
	__builtin_ia32_pause();
}

/* ntb_context.c */
int ntb_ensure_attached(struct ntb_context *ctx);
/*
 * Is the link session of this context still up? A few loads of the register files (the
 * HAL's link state and both session epochs); once false, false for ever.
 */
bool ntb_link_alive(struct ntb_context *ctx);
int ntb_call(struct ntb_context *ctx, uint16_t op, const void *req, size_t req_len, void *rsp,
	     size_t rsp_len);
void ntb_raise_event(struct ntb_context *ctx, uint64_t element, enum ibv_event_type type);
void ntb_flush_events(struct ntb_context *ctx);
/* Read a seqlock-protected entry of a control table (written by the peer end). */
void ntb_read_entry(void *dst, const void *src, size_t len);

/* ntb_pd.c */
struct ibv_pd *ntb_alloc_pd(struct ibv_context *context);
int ntb_dealloc_pd(struct ibv_pd *pd);

/* ntb_mr.c */
struct ibv_mr *ntb_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			  int access);
int ntb_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *ntb_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int ntb_dealloc_mw(struct ibv_mw *mw);
int ntb_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
/* The engine's side: a BIND_MW or LOCAL_INV work request, IBV_WC_SUCCESS or the error. */
enum ibv_wc_status ntb_mw_bind_exec(struct ntb_qp *qp, const struct ntb_swqe *w);
enum ibv_wc_status ntb_mw_local_inv(struct ntb_qp *qp, uint32_t rkey);
/* SEND_WITH_INV at the responder: invalidate the type 2 window rkey bound to qp. */
bool ntb_mw_remote_inv(struct ntb_qp *qp, uint32_t rkey);
/*
 * The region or bound window an rkey names for a remote access on qp (a window: bound to qp
 * if it is of type 2, its region unchanged since the bind); false: no access.
 */
bool ntb_rkey_lookup(struct ntb_qp *qp, uint32_t rkey, struct ntb_mr_slot *out);
int ntb_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access);
/* Copy the slot for key (lkey or rkey); false if none. */
bool ntb_mr_lookup(struct ntb_context *ctx, uint32_t key, bool remote, struct ntb_mr_slot *out);
/* ... and the slot's sequence count it was read under */
bool ntb_mr_lookup_seq(struct ntb_context *ctx, uint32_t key, bool remote,
		       struct ntb_mr_slot *out, uint32_t *seq);
/* Write a key's slot (seqlocked: readers see the old entry or the new one). */
void ntb_slot_write(struct ntb_mr_slot *s, const struct ntb_mr_slot *v);
/*
 * Check a local scatter list: every lkey valid, in the PD, in range, with the access asked
 * (IBV_ACCESS_LOCAL_WRITE or 0). Returns IBV_WC_SUCCESS or the completion error.
 */
enum ibv_wc_status ntb_check_sges(struct ntb_context *ctx, uint32_t pd, const struct ibv_sge *sg,
				  uint32_t num_sge, uint32_t access, struct ntb_key_cache *kc);
/* Copy between a message buffer and a scatter list (already checked), from byte offset off. */
void ntb_sg_copy_in(const struct ibv_sge *sg, uint32_t num_sge, uint32_t off, const void *src,
		    uint32_t len);
void ntb_sg_copy_out(void *dst, const struct ibv_sge *sg, uint32_t num_sge, uint32_t off,
		     uint32_t len);
uint64_t ntb_sg_total(const struct ibv_sge *sg, uint32_t num_sge);

/* ntb_shadow.c */
bool ntb_pio_enabled(void);
/* ntb_req.c: PIO mappings of regions of either end and direct copies into the peer's window */
void ntb_pmaps_free(struct ntb_context *ctx);
uint8_t *ntb_pio_region(struct ntb_context *ctx, unsigned int endi, const struct ntbv_mr_ent *m);
/* Stores, the last 8 bytes after a store fence (a peer polling the end sees the rest first). */
void ntb_pio_copy(uint8_t *dst, const void *src, size_t len);
/* One DMA copy into the peer's window 0 at off, run in this thread; true when issued. */
bool ntb_dma_copy(struct ntb_context *ctx, uint64_t off, const void *src, size_t len);

/* ntb_cq.c */
struct ibv_cq *ntb_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *ch,
			     int comp_vector);
struct ibv_cq_ex *ntb_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);
int ntb_destroy_cq(struct ibv_cq *cq);
int ntb_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int ntb_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ntb_resize_cq(struct ibv_cq *cq, int cqe);
/* Drop a QP's completions not yet polled (its reset: mlx5_ib_cq_clean does the same). */
void ntb_cq_clean(struct ntb_cq *cq, uint32_t qpn);
/* Add a completion (from any thread); raises the channel event if armed. */
void ntb_cq_push(struct ntb_cq *cq, const struct ibv_wc *wc, bool solicited);
/* A responder batch's completions on this thread wait until its ACKs are out (ntb_resp.c). */
void ntb_cq_stage_begin(void);
void ntb_cq_stage_end(void);
unsigned int ntb_cq_staged(void);	/* held so far in this thread's batch */

/* ntb_srq.c */
struct ibv_srq *ntb_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int ntb_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int ntb_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int ntb_destroy_srq(struct ibv_srq *srq);
int ntb_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int ntb_rq_init(struct ntb_rq *rq, uint32_t max_wr, uint32_t max_sge);
void ntb_rq_fini(struct ntb_rq *rq);
/* Take the next receive WQE (copied into out and its sges); false if empty. */
bool ntb_rq_take(struct ntb_context *ctx, struct ntb_qp *qp, struct ntb_rwqe *out,
		 struct ibv_sge *sge);

/* ntb_ah.c */
struct ibv_ah *ntb_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int ntb_destroy_ah(struct ibv_ah *ah);

/* ntb_qp.c */
struct ibv_qp *ntb_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *ntb_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
int ntb_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int ntb_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init);
int ntb_destroy_qp(struct ibv_qp *qp);
/* Enter ERROR (false if it already was); then flush the send queue (sq_lock held or not). */
bool ntb_qp_mark_error(struct ntb_qp *qp);
void ntb_qp_to_error(struct ntb_qp *qp, bool sq_locked);
/* Flush the receive queue; flush the receive a message was filling (peer rx_lock held). */
void ntb_qp_flush_rq(struct ntb_qp *qp);
void ntb_qp_flush_cur(struct ntb_qp *qp);
void ntb_qp_complete_sq(struct ntb_qp *qp);	/* sq_lock held */
/*
 * The peer can never answer again - the link went down under the QP, or the peer client
 * left (sq_lock held): RC's oldest outstanding WQE completes with IBV_WC_RETRY_EXC_ERR (what
 * the transport timer would say), the rest are flushed, the QP is in ERROR. The caller
 * flushes the receive side.
 */
void ntb_qp_unreachable(struct ntb_qp *qp);
struct ntb_qp *ntb_qp_lookup(struct ntb_context *ctx, uint32_t qpn);
uint32_t ntb_mtu_bytes(enum ibv_mtu mtu);

/* ntb_post.c */
int ntb_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
/* Post a chain; whole: all of it or nothing (the errno of its first bad work request). */
int ntb_post_chain(struct ntb_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad,
		   bool whole);

/* ntb_qpex.c: the ibv_wr_* API */
int ntb_qpex_check(enum ibv_qp_type type, uint64_t send_ops);
int ntb_qpex_init(struct ntb_qp *qp, uint64_t send_ops);
void ntb_qpex_fini(struct ntb_qp *qp);
int ntb_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
int ntb_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int ntb_post_recv_common(struct ntb_context *ctx, struct ntb_rq *rq, uint32_t pd,
			 struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* ntb_chan.c */
void ntb_chan_setup(struct ntb_context *ctx);
uint32_t ntb_slot_epoch(const struct ntb_peer *p);
/* The peer of a live slot of an end (NULL if none). */
struct ntb_peer *ntb_peer_get(struct ntb_context *ctx, unsigned int endi, unsigned int slot);
/*
 * Bring producing (tx_lock held) / consuming (rx_lock held) state to the live incarnation.
 * Producing: NTB_TX_READY, NTB_TX_WAIT (our block is being opened: try again later, the
 * progress thread sweeps when it is there), NTB_TX_GONE (nobody to write to).
 */
enum { NTB_TX_READY, NTB_TX_WAIT, NTB_TX_GONE };
int ntb_peer_tx_sync(struct ntb_peer *p);
bool ntb_peer_rx_sync(struct ntb_peer *p);
/* Bind the block we write (the OPEN_PAIR answer), rx_lock and tx_lock held. */
void ntb_peer_tx_bind(struct ntb_peer *p, const struct ntb_open_pair_rsp *rsp, int bell_fd);
/* Bind the block its directory entry names, or unbind a stale one (rx_lock held). */
void ntb_peer_rx_bind(struct ntb_peer *p);
/* Producing: room for a message of ncells (padding the ring end if needed); NULL if full. */
struct ntbv_msg *ntb_tx_reserve(struct ntb_peer *p, struct ntb_txring *r, uint32_t ncells);
bool ntb_tx_room(struct ntb_peer *p, struct ntb_txring *r, uint32_t ncells);
void ntb_tx_commit(struct ntb_txring *r, uint32_t ncells);
/* Publish what was produced and ring the peer if it asked for it. tx_lock held. */
void ntb_tx_publish(struct ntb_peer *p, uint32_t quiet_kind);
/* Consuming: a checked copy of the next message's header and its payload; then advance. */
bool ntb_rx_peek(struct ntb_peer *p, struct ntb_rxring *r, struct ntbv_msg *h,
		 const uint8_t **payload);
void ntb_rx_advance(struct ntb_rxring *r, const struct ntbv_msg *h);
void ntb_rx_publish(struct ntb_peer *p);
bool ntb_rx_pending(struct ntb_peer *p);
/* Ask every active peer for bells (or stop asking). */
void ntb_bells_arm(struct ntb_context *ctx, bool arm);
/* Some writer now waits for credits the armed bells do not ask for. */
bool ntb_bells_stale(struct ntb_context *ctx);

/* ntb_pairs.c */
/* Open our block for p's incarnation epoch now (a control call: never from poll_cq). */
int ntb_pair_open(struct ntb_peer *p, uint32_t epoch);
/* Let the progress thread open it (any thread, any lock). */
void ntb_pair_want(struct ntb_peer *p, uint32_t epoch);
/* The opens the progress thread was asked for. */
void ntb_pairs_open_pending(struct ntb_context *ctx);
/* A directory changed: bind the blocks written for us that are new. Returns true if done. */
bool ntb_pairs_scan(struct ntb_context *ctx);
/* The end whose QP a number names, and the checked copy of its table entry (false: none). */
bool ntb_qp_entry(struct ntb_context *ctx, uint32_t qpn, unsigned int *endi,
		  struct ntbv_qp_ent *e);

/* ntb_req.c */
/* Open the blocks a chain of datagrams needs (no lock held: a control call into ntbd). */
void ntb_ud_open(struct ntb_qp *qp, const struct ibv_send_wr *wr);
/* Transmit what the send queue holds; sq_lock held. */
void ntb_qp_tx(struct ntb_qp *qp);
/* Go back to send WQE index i and transmit from there again; sq_lock held. */
void ntb_qp_rewind(struct ntb_qp *qp, uint32_t i);
/* Timers of the send queue; sq_lock held. Returns true if something happened. */
bool ntb_qp_timers(struct ntb_qp *qp, uint64_t now);

/* ntb_resp.c */
/* Consume request messages of peer p; rx_lock held. Returns messages handled. */
int ntb_resp_process(struct ntb_peer *p, int budget);
void ntb_resp_ack_now(struct ntb_peer *p, struct ntb_qp *qp);

/* ntb_comp.c */
int ntb_comp_process(struct ntb_peer *p, int budget);

/* ntb_progress.c */
int ntb_progress_start(struct ntb_context *ctx);
void ntb_progress_stop(struct ntb_context *ctx);
/* One pass of the engine over everything this context does; returns work done. */
int ntb_engine(struct ntb_context *ctx, bool from_app);
void ntb_progress_poke(struct ntb_context *ctx);
/* A timer of some QP is due at when (ns): make sure the progress thread looks by then. */
void ntb_timer(struct ntb_context *ctx, uint64_t when);

#endif /* NTB_PROVIDER_H */
