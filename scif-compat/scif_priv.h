/* SPDX-License-Identifier: MIT */
/*
 * libscif internals: SCIF endpoints on RDMA verbs (docs/scif.md). The files of this directory:
 *
 *   api.c        the 22 entry points: argument checks, errno, dispatch
 *   lib.c        process state: configuration, nodes, endpoint table, fork
 *   epfd.c       the endpoint descriptor: a socketpair whose readiness we drive
 *   port.c       SCIF port reservations (node-wide, abstract Unix sockets)
 *   conn.c       connections through rdma_cm: listen, connect, accept, teardown
 *   sq.c         the send queue: posting, completions, control messages
 *   ctrl.c       received control messages
 *   msg.c        scif_send / scif_recv over the message rings
 *   rma.c        windows and RMA (register, unregister, readfrom, writeto, v*)
 *   fence.c      fence_mark / fence_wait / fence_signal
 *   mmap.c       scif_mmap / scif_munmap
 *   progress.c   the progress thread: CM events, completions, peer requests, timers
 *   window.c ring.h wire.c node.c   pure logic (unit-tested, fuzzed)
 *
 * Locks, in the order they nest: ep->send_mutex / ep->recv_mutex (a whole call) ->
 * ep->lock (state, queues, windows) -> ep->sq_lock (posting to and polling the send queue).
 * lib.lock (the endpoint table) is never held while taking another.
 */
#ifndef SCIF_PRIV_H
#define SCIF_PRIV_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "node.h"
#include "ring.h"
#include "scif.h"
#include "window.h"
#include "wire.h"

#define SCIF_RING_SIZE		(64u << 10)	/* each direction's message ring */
#define SCIF_NRECV		64		/* control message receives posted */
#define SCIF_SQ_DEPTH		512		/* send queue entries */
#define SCIF_SIGNAL_EVERY	32		/* an unsignaled WR in this many is signaled */
#define SCIF_MAX_SGE		16
#define SCIF_CONNECT_TIMEOUT_MS	30000		/* SCIF_NODE_ALIVE_TIMEOUT */
#define SCIF_CM_TIMEOUT_MS	5000		/* address and route resolution */
#define SCIF_MAX_BACKLOG	1024		/* SCIF_MAX_BACKLOG */
#define SCIF_SPIN_NS		50000ull	/* spin at least this long before sleeping */
#define SCIF_SPIN_MAX_NS	2000000ull	/* adaptive spin: at most this long */
#define SCIF_PAUSE_NS		3000ull	/* a spin's busy part: ~2 ntb round trips */
#define SCIF_ARM_DELAY_NS	1000000ull	/* progress thread arms POLLIN after this idle time */
#define SCIF_NCTRL_SLOTS	32		/* control messages sent from memory (not inline) */
#define SCIF_KEEPALIVE_NS	1000000000ull	/* probe an idle connection's peer this often */
#define SCIF_BOUNCE_SIZE	(1u << 20)	/* vreadfrom/vwriteto copies up to this size */
#define SCIF_CLOSE_TIMEOUT_NS	5000000000ull	/* scif_close waits for RMAs this long */

enum scif_state {
	SCIF_UNBOUND,
	SCIF_BOUND,
	SCIF_LISTENING,
	SCIF_CONNECTING,	/* scif_connect under way, or accepted by the CM and queued */
	SCIF_CONNECTED,
	SCIF_DISCONNECTED,	/* the peer went away: queued bytes can still be received */
	SCIF_CLOSING,
};

/* A SCIF port this process holds (port.c). Shared by a listener and what it accepted. */
struct scif_port {
	uint16_t port;
	int fd;			/* the reservation */
	int refs;
};

/* A verbs device this process uses: one per ibv_context rdma_cm hands out. */
struct scif_dev {
	struct scif_dev *next;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	uint64_t max_msg;		/* port 1 max_msg_sz */
	bool is_ntb;			/* the bridgeverbs ntb provider: scif_mmap can map */
};

/* A request to the peer waiting for its ACK. */
struct scif_req {
	struct scif_req *next;
	uint32_t id;
	bool done;
	int status;
	uint64_t value[3];
};

/* Work deferred until the endpoint's RMAs up to seq have completed (fence.c, rma.c). */
enum scif_after_kind {
	SCIF_AFTER_STORE,	/* store val at local offset off (SIGNAL_LOCAL) */
	SCIF_AFTER_ACK,		/* answer the peer's request req (WAIT) */
	SCIF_AFTER_UNREG,	/* drop the peer's dead windows [off, off + len), answer req */
	SCIF_AFTER_COPYOUT,	/* vreadfrom through the bounce buffer: copy to addr */
	SCIF_AFTER_DEREG,	/* a temporary registration (vreadfrom/vwriteto) */
};

struct scif_after {
	struct scif_after *next;
	uint32_t seq;			/* the RMA it waits for */
	enum scif_after_kind kind;
	uint64_t off, val;
	uint32_t req;
	void *addr;			/* COPYOUT: destination; DEREG: buffer to free or NULL */
	void *src;			/* COPYOUT: source */
	size_t len;
	struct ibv_mr *mr;		/* DEREG */
};

/*
 * What a connection holds: the rdma_cm id, queue pair, completion queues and the registered
 * memory of the rings. Created by conn.c, used under the endpoint's locks, and destroyed only by
 * the progress thread (scif_reap), after it has dispatched every event that names it.
 */
struct scif_conn {
	struct scif_conn *reap_next;
	struct scif_ep *ep;		/* holds a reference */
	struct rdma_cm_id *cm;
	struct scif_dev *dev;
	struct ibv_comp_channel *chan;	/* this connection's CQs: the progress thread */
	pthread_mutex_t chan_lock;	/* the progress thread reading chan */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t max_inline;
	int max_sge;
	int rd_atom;			/* RDMA READs in flight the peer accepts */
	uint8_t *area;			/* ring, ctl, pub: registered for the peer */
	size_t area_len;
	struct ibv_mr *area_mr;
	uint8_t *lbuf;			/* receive buffers and scratch: local */
	size_t lbuf_len;
	struct ibv_mr *lbuf_mr;
	uint8_t *stage;			/* what we write into the peer's ring, mirrored */
	struct ibv_mr *stage_mr;
	struct scif_ctl *ctl;		/* in area: written by the peer */
	struct scif_pub *pub;		/* in area: read by the peer */
	uint8_t *rxring;		/* in area */
	uint64_t *arm_slot;		/* in lbuf: [0] rx arm READ, [1] tx arm READ */
	uint64_t r_ring, r_ctl;		/* the peer's ring and ctl addresses */
	uint32_t r_rkey, r_ring_size;
	bool established;		/* the CM said ESTABLISHED */
	bool granted;			/* connector: GRANT came */
	bool has_peer;			/* r_* are known */
	bool recvs_posted;
	bool disconnected;		/* rdma_disconnect called or DISCONNECTED seen */
};

struct scif_ep {
	struct scif_ep *next;		/* lib.eps */
	struct scif_ep *reap_next;
	int fd;				/* the application's descriptor (socketpair end A) */
	int lfd;			/* ours (end B) */
	_Atomic int refs;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* state changes, ACKs, completions */
	enum scif_state state;
	uint16_t node;			/* our node */
	struct scif_port *port;
	struct scif_portID peer;
	int conn_err;			/* how the connect ended (0 while under way) */
	bool connect_async;		/* a non-blocking scif_connect not yet collected */
	uint64_t deadline;		/* CONNECTING: CLOCK_MONOTONIC ns */
	const struct scif_route *route;	/* CONNECTING: the route being tried */
	uint64_t keepalive;		/* CONNECTED: next probe */

	/* readiness of fd (epfd.c), under lock */
	bool pollin;			/* a token sits in fd's receive queue */
	bool out_blocked;		/* fd's send buffer is full: no POLLOUT */
	bool hup;

	/* listener */
	struct rdma_cm_id *lids[BV_MAX_DEVICES];
	int nlids;
	int backlog;
	struct scif_ep *queue;		/* CM-accepted connections, oldest first */
	int nqueued;			/* in the queue, established or not */
	struct scif_ep *listener;	/* queued: the listener it waits in (a reference) */
	struct scif_ep *qnext;

	struct scif_conn *conn;		/* CONNECTING .. DISCONNECTED */

	/* messaging (msg.c) */
	pthread_mutex_t send_mutex, recv_mutex;
	struct scif_ring_pos tx;	/* prod: ours into the peer's ring; cons: credits */
	struct scif_ring_pos rx;	/* prod: the peer's (ctl->prod); cons: ours */
	_Atomic uint64_t rx_cons_pub;	/* rx.cons as the recv side published it */
	uint64_t ctl_prod_sent;		/* counts last written to the peer's ctl */
	uint64_t ctl_cons_sent;
	uint32_t want_data_seen;	/* the peer's want_data we answered */
	uint32_t want_credit_seen;
	uint32_t my_want_data;		/* our arm counts */
	uint32_t my_want_credit;
	_Atomic int rx_busy;		/* threads in scif_recv */
	uint64_t rx_wait_est;		/* scif_recv: average wait for data that came soon */
	_Atomic uint64_t rx_idle_since;	/* ns: when a recv last emptied the ring */
	bool rx_armed;			/* the peer owes us WAKE_DATA for my_want_data */
	uint32_t rx_woken;		/* the last WAKE_DATA's count */
	int arm_state[2];		/* SCIF_ARM_*, for rx and tx (under sq_lock) */
	bool arm_async[2];		/* nobody waits for it: the progress thread takes the result */
	uint64_t arm_seen[2];		/* what the arm READ found */
	uint64_t arm_gen[2];		/* arms completed */
	uint64_t tx_cons_read;		/* the peer's consumer count as an arm READ found it */

	/* send queue (sq.c), under sq_lock */
	pthread_mutex_t sq_lock;
	struct scif_sq_meta {
		uint8_t kind;		/* SCIF_WR_* */
		uint32_t seq;		/* SCIF_WR_RMA: the call's sequence number */
	} sq_meta[SCIF_SQ_DEPTH];
	uint64_t slot_pos[SCIF_NCTRL_SLOTS];	/* WR that last sent from each ctrl slot */
	uint64_t last_tx_ns;		/* last WR posted: keepalive */
	uint64_t sq_posted;		/* WRs posted */
	uint64_t sq_done;		/* WRs known complete */
	uint32_t sq_unsignaled;
	uint32_t ctrl_slot;		/* next control message send slot */
	int sq_err;			/* a completion failed: the connection is dead */
	_Atomic int cq_waiters;		/* threads waiting for completions */

	/* windows and RMA (rma.c, fence.c), under lock */
	struct scif_wintab lwin;	/* ours */
	struct scif_wintab rwin;	/* the peer's */
	uint32_t rma_issued;		/* RMA calls posted (31 bits) */
	uint32_t rma_done;		/* ... completed, in order */
	struct scif_after *after, *after_tail;
	struct scif_req *reqs;
	uint32_t next_req;
	struct scif_vreg *vcache;	/* SCIF_RMA_USECACHE registrations, most recent first */
	int nvcache;
	uint8_t *bounce;		/* vreadfrom/vwriteto staging: a ring of SCIF_BOUNCE_SIZE */
	struct ibv_mr *bounce_mr;
	struct scif_ibuse {		/* bounce bytes in use, per RMA (FIFO) */
		uint32_t seq;
		uint64_t end;
	} bounce_use[64];
	uint32_t bounce_nuse;
	uint64_t bounce_head, bounce_tail;	/* byte counts: allocated, freed */
	uint32_t peer_maps;		/* scif_mmap()s the peer holds of our windows */
};

/* A registration of application memory for scif_v* (rma.c). */
struct scif_vreg {
	struct scif_vreg *next;
	uintptr_t start, end;		/* page-aligned */
	struct ibv_mr *mr;
	uint64_t backing;		/* what backed the range when registered (rma.c) */
	uint32_t last_seq;		/* the last RMA that used it */
};

/* What a send queue entry was for (sq.c). */
enum { SCIF_WR_PLAIN, SCIF_WR_RMA, SCIF_WR_ARM_RX, SCIF_WR_ARM_TX };
/* Arming: asking the peer to wake us (msg.c). */
enum { SCIF_ARM_IDLE, SCIF_ARM_POSTED, SCIF_ARM_DONE };

/* Where an epoll event comes from (lib.epfd's data.u64: a pointer with a tag). */
enum scif_src { SCIF_SRC_WAKE = 1, SCIF_SRC_CM, SCIF_SRC_CHAN, SCIF_SRC_EP };
#define SCIF_SRC(kind, p)	((uint64_t)(uintptr_t)(p) | (uint64_t)(kind))
#define SCIF_SRC_KIND(u)	((enum scif_src)((u) & 7))
#define SCIF_SRC_PTR(u)		((void *)(uintptr_t)((u) & ~(uint64_t)7))

/* Process state (lib.c). */
struct scif_lib {
	pthread_mutex_t lock;
	bool ready;
	struct bv_config cfg;
	struct scif_nodes nodes;
	struct scif_ep *eps;
	struct scif_ep **byfd;		/* fd -> endpoint */
	int nbyfd;
	struct scif_dev *devs;
	struct rdma_event_channel *cm_chan;
	int epfd;			/* the progress thread's epoll */
	int wakefd;			/* eventfd: wake the progress thread */
	bool thread_running;
	struct scif_conn *reap_conns;	/* for the progress thread to destroy */
	struct scif_ep *reap_eps;	/* closed: descriptor B and listen ids to release */
	bool inherited;			/* a forked child */
	bool cm_inherited;		/* ... of a process that had used rdma_cm: it may not */
	uint8_t *inherited_fd;		/* 1 for a descriptor the parent had as an endpoint */
	int ninherited;
	bool fence_doc;			/* SCIF_FENCE_SIGNAL_DOC=1: INIT_PEER as documented */
	_Atomic uint64_t pinned;	/* pages of scif_register windows (RLIMIT_MEMLOCK) */
	_Atomic uint64_t wake_at;	/* when the progress thread looks again by itself (ns) */
};

extern struct scif_lib scif_lib;

/* api.c */
int scif_verify(const struct scif_ep *ep);	/* under ep->lock */
struct scif_ep *scif_ep_alloc(void);
void scif_ep_free(struct scif_ep *ep);

/* lib.c */
int scif_lib_init(void);
bool scif_lib_take_inherited(int fd);
struct scif_ep *scif_ep_get(int fd, int *err);	/* a reference, or NULL with *err */
void scif_ep_put(struct scif_ep *ep);
static inline void scif_ep_hold(struct scif_ep *ep)
{
	atomic_fetch_add(&ep->refs, 1);
}
int scif_ep_table_add(struct scif_ep *ep);
void scif_ep_table_del(struct scif_ep *ep);
uint64_t scif_now_ns(void);
bool scif_capable(int cap);	/* the calling thread has cap in its effective set */
/*
 * One step of a wait that spins: the first SCIF_PAUSE_NS of it busy (a peer on another CPU
 * answers within a round trip, and a yield that hands the core to another process costs more
 * than that), then yielding (the peer may need this core: on a loaded machine the scheduler
 * often keeps both ends on one CPU, where every busy nanosecond is the peer's wait; with 20 µs
 * busy an ntb ping-pong on one CPU took 48 µs a round trip, with 3 µs 13 µs, while on two
 * CPUs it stayed at 1.4-2 µs either way: docs/scif.md "Performance").
 */
static inline void scif_spin_step(uint64_t spun_ns)
{
	if (spun_ns < SCIF_PAUSE_NS) {
		for (int i = 0; i < 16; i++)
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#elif defined(__aarch64__)
			__asm__ volatile("yield");
#else
			__asm__ volatile("" ::: "memory");
#endif
	} else {
		sched_yield();
	}
}
void scif_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void scif_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void scif_reject_log(struct scif_ep *ep, enum scif_reject r, const char *what);
int scif_epoll_add(int fd, uint32_t events, uint64_t data);
void scif_epoll_del(int fd);
struct rdma_event_channel *scif_cm_channel(int *err);

/* progress.c */
int scif_progress_start(void);
void scif_progress_kick(void);
void scif_reap_conn(struct scif_conn *c);	/* hand a connection over for destruction */
void scif_reap_ep(struct scif_ep *ep);		/* a closed endpoint's descriptor and listen ids */

/* epfd.c, under ep->lock */
int scif_epfd_open(struct scif_ep *ep);
int scif_epfd_pair(int sv[2]);
void scif_epfd_attach(struct scif_ep *ep, const int sv[2]);
void scif_epfd_set_in(struct scif_ep *ep);
void scif_epfd_clear_in(struct scif_ep *ep);
void scif_epfd_block_out(struct scif_ep *ep);
void scif_epfd_unblock_out(struct scif_ep *ep);
void scif_epfd_hangup(struct scif_ep *ep);
int scif_epfd_wait(struct scif_ep *ep, short events, int timeout_ms);	/* without the lock */

/* port.c */
struct sockaddr_un;
int scif_port_name(struct sockaddr_un *a, uint16_t node, uint16_t pn);	/* its length */
struct scif_port *scif_port_reserve(uint16_t node, uint16_t pn, int *err);
void scif_port_get(struct scif_port *p);
void scif_port_put(struct scif_port *p);

/* conn.c: rdma_cm events, copied and acknowledged before they are handled */
struct scif_cm_ev {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id, *listen_id;
	uint8_t pdata_len;
	uint8_t pdata[255];
};
#define SCIF_LISTEN_TAG		1ul	/* a listen id's context: its endpoint, tagged */

int scif_conn_listen(struct scif_ep *ep, int backlog);		/* under ep->lock */
int scif_conn_connect(struct scif_ep *ep, const struct scif_portID *dst);
int scif_conn_accept(struct scif_ep *lep, struct scif_portID *peer, int *newfd, int flags);
void scif_conn_close(struct scif_ep *ep);
void scif_conn_cm_event(const struct scif_cm_ev *ev);		/* progress thread */
void scif_conn_lost(struct scif_ep *ep, int err);		/* under ep->lock */
void scif_conn_granted(struct scif_ep *ep, bool granted);	/* under ep->lock */
void scif_conn_timers(uint64_t now, uint64_t *next);
void scif_conn_destroy(struct scif_conn *c);			/* progress thread */

/* sq.c */
int scif_sq_post(struct scif_ep *ep, struct ibv_send_wr *wr);	/* under sq_lock */
int scif_sq_poll(struct scif_ep *ep);				/* under sq_lock */
int scif_send_ctrl(struct scif_ep *ep, enum scif_op op, uint32_t req, uint64_t a0,
		   uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4);
int scif_request(struct scif_ep *ep, enum scif_op op, uint64_t a0, uint64_t a1, uint64_t a2,
		 uint64_t a3, uint64_t a4, uint64_t value[3]);
void scif_ack_req(struct scif_ep *ep, uint32_t req, int status, const uint64_t value[3]);
/* under lock */
void scif_sq_notify(struct scif_ep *ep);			/* under sq_lock */
int scif_post_recvs(struct scif_conn *c, int n);
void scif_chan_event(struct scif_conn *c);			/* progress thread */
int scif_wait(struct scif_ep *ep, bool (*done)(struct scif_ep *, void *), void *arg,
	      uint64_t timeout_ns);
int scif_sq_drain(struct scif_ep *ep, uint64_t timeout_ns);

/* ctrl.c, progress thread */
void scif_ctrl_recv(struct scif_ep *ep, const void *buf, size_t len);

/* msg.c */
int scif_msg_send(struct scif_ep *ep, void *msg, int len, int flags);
int scif_msg_recv(struct scif_ep *ep, void *msg, int len, int flags);
void scif_msg_init(struct scif_ep *ep);			/* a connection is established */
void scif_msg_arm_done(struct scif_ep *ep, int which);	/* under sq_lock */
void scif_msg_wake(struct scif_ep *ep, enum scif_op op, uint32_t seq);	/* under lock */
void scif_msg_timers(uint64_t now, uint64_t *next);
void scif_msg_arm_rx(struct scif_ep *ep);

/* rma.c */
off_t scif_rma_register(struct scif_ep *ep, void *addr, size_t len, off_t offset, int prot,
			int flags);
int scif_rma_unregister(struct scif_ep *ep, off_t offset, size_t len);
int scif_rma_copy(struct scif_ep *ep, off_t loff, void *addr, size_t len, off_t roff,
		  int flags, bool write);
void scif_rma_completed(struct scif_ep *ep, uint32_t seq);	/* under ep->lock */
void scif_rma_release(struct scif_ep *ep);
void scif_win_dereg(struct scif_win *w);	/* a local window's memory goes */
void scif_rma_peer_register(struct scif_ep *ep, const struct scif_wire_msg *m);
void scif_rma_peer_unregister(struct scif_ep *ep, const struct scif_wire_msg *m);
void scif_rma_peer_gone(struct scif_ep *ep);		/* under ep->lock */
void scif_rma_drop_remote(struct scif_ep *ep, uint64_t off, uint64_t len);	/* under ep->lock */

/* fence.c */
int scif_fence_mark_ep(struct scif_ep *ep, int flags, int *mark);
int scif_fence_wait_ep(struct scif_ep *ep, int mark);
int scif_fence_signal_ep(struct scif_ep *ep, off_t loff, uint64_t lval, off_t roff,
			 uint64_t rval, int flags);
void scif_fence_peer(struct scif_ep *ep, const struct scif_wire_msg *m);	/* progress */
void scif_after_run(struct scif_ep *ep);	/* under ep->lock */
int scif_after_add(struct scif_ep *ep, const struct scif_after *a);	/* under ep->lock */

/* mmap.c */
void *scif_mmap_ep(struct scif_ep *ep, void *addr, size_t len, int prot, int flags, off_t off);
int scif_munmap_range(void *addr, size_t len);
void scif_mmap_peer(struct scif_ep *ep, const struct scif_wire_msg *m);	/* progress */

/* Sequence numbers of 31 bits (fence marks): a is at or after b. */
static inline bool scif_seq_ge(uint32_t a, uint32_t b)
{
	return ((a - b) & 0x7fffffffu) < 0x40000000u;
}

#endif
