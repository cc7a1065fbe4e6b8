/* SPDX-License-Identifier: MIT */
/*
 * rsockets inside librdmacm-plugin: sockets over the rdma_cm calls and verbs of this very
 * library, as rdma-core keeps them inside librdmacm (so Debian's librspreload.so, which calls
 * rsocket(), rsend()... through librdmacm.so.1, uses them). docs/rdmacm.md, "rsockets",
 * describes the design; it is our own (the wire protocol is not rdma-core's):
 *
 *   rsocket.c   the socket table, rsocket/rbind/rlisten/raccept/rconnect/rshutdown/rclose,
 *               names, options, rfcntl, the connection's CM events
 *   rs_stream.c SOCK_STREAM data: RDMA WRITE WITH IMM into the peer's receive ring, credits,
 *               FIN, riomap/riowrite
 *   rs_dgram.c  SOCK_DGRAM: UD QPs, peers found through their UDP port
 *   rs_poll.c   rpoll, rselect
 *
 * An rsocket's number is a descriptor of its own (an epoll fd over the descriptors its
 * progress waits on: its rdma_cm event channel, its CQ's completion channel, a datagram
 * socket's UDP socket), so it never collides with a real descriptor, and poll() on it wakes
 * when the rsocket may have something to say; rpoll() polls those for rsockets and the
 * others as they are.
 */
#ifndef RS_H
#define RS_H

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* ---- the wire (both ends run this library) --------------------------------------------------- */

#define RS_VERSION		1

/* In the private data of the REQ (client) and the REP (server): where to write to us. */
struct rs_conn_data {
	uint8_t version;
	uint8_t flags;
	uint16_t credits;		/* receive WQEs posted: messages the peer may send */
	uint32_t rbuf_size;		/* the receive ring */
	uint64_t rbuf_addr;
	uint32_t rbuf_rkey;
	uint32_t reserved;
} __attribute__((packed));		/* 24 bytes, little endian: both ends are this host */

/*
 * Messages, each consuming one receive WQE of the peer (one credit):
 *   data   RDMA WRITE WITH IMM into the peer's ring at our write offset; imm = length
 *          (bit 31 clear); the bytes follow in ring order
 *   ctrl   SEND of one struct rs_ctrl into the WQE's own buffer (imm none)
 * riowrite is a plain RDMA WRITE into a region the peer mapped: no WQE, no credit.
 */
enum rs_ctrl_op {
	RS_CTRL_CREDIT = 1,		/* msgs WQEs reposted, bytes of the ring freed */
	RS_CTRL_FIN,			/* no more data from me (shutdown SHUT_WR / close) */
	RS_CTRL_IOMAP,			/* a region at offset is open to riowrite */
	RS_CTRL_IOUNMAP,
};

struct rs_ctrl {
	uint32_t op;
	uint32_t msgs;
	uint64_t bytes;			/* CREDIT: bytes; IOMAP: offset */
	uint64_t addr;			/* IOMAP */
	uint32_t len;			/* IOMAP: region length */
	uint32_t rkey;			/* IOMAP */
};

#define RS_CTRL_SIZE		((uint32_t)sizeof(struct rs_ctrl))
#define RS_MAX_MSG		65536u	/* bytes of one data message */

/* ---- one rsocket ----------------------------------------------------------------------------- */

enum rs_state {
	RS_INIT,
	RS_BOUND,
	RS_LISTENING,
	RS_RESOLVING_ADDR,
	RS_RESOLVING_ROUTE,
	RS_CONNECTING,
	RS_CONNECTED,
	RS_ERROR,			/* err says why; the socket waits for rclose */
};

struct rs_iomap {
	struct rs_iomap *next;
	uint64_t offset;
	uint64_t addr;
	uint32_t len;
	uint32_t rkey;
	struct ibv_mr *mr;		/* ours; NULL for the peer's */
	void *buf;
	bool announced;			/* ours: the peer was told */
};

struct rs_pending_req {
	struct rs_pending_req *next;
	struct rdma_cm_id *id;
	struct rs_conn_data peer;
	bool ok;			/* the private data made sense */
};

struct rs_dgram;

struct rs {
	int index;			/* the rsocket's number: an epoll fd */
	int domain, type;
	pthread_mutex_t lock;
	int flags;			/* F_SETFL: O_NONBLOCK */
	enum rs_state state;
	int err;			/* SO_ERROR, and what calls fail with in RS_ERROR */

	/* options (before the connection; rsockets' defaults) */
	uint32_t sq_size, rq_size, inline_size, iomap_size;
	uint32_t sbuf_size, rbuf_size;
	bool reuseaddr, keepalive, nodelay, oobinline, afonly;
	int keepidle;
	struct linger linger;

	/* the connection manager */
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rs_pending_req *reqs, *reqs_tail;	/* listening: requests not accepted yet */

	/* verbs (stream, once connecting) */
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	unsigned int cq_unacked;
	bool cq_armed;
	struct ibv_mr *smr, *rmr, *cmr;
	uint8_t *sbuf, *rbuf, *cbuf;	/* send staging ring, receive ring, ctrl slots */

	/* sending */
	uint32_t s_head, s_used;	/* staging ring: next byte to fill, bytes in flight */
	uint32_t sq_avail;		/* send WQEs free */
	uint32_t credits;		/* peer receive WQEs we may consume */
	uint64_t peer_addr;
	uint32_t peer_rkey, peer_size, peer_tail, peer_space;
	uint32_t c_next;		/* next ctrl send slot (after the rq_size receive slots) */
	bool fin_sent, fin_pending;	/* shutdown(SHUT_WR) asked: FIN once a credit allows */
	bool credit_pending;

	/* receiving */
	uint32_t r_head, r_avail;	/* ring: next byte to read, bytes that arrived */
	uint32_t r_msgs, r_bytes;	/* reposted WQEs and freed bytes not yet returned */
	bool peer_fin, rd_shut, disconnected;

	/* riomap / riowrite */
	struct rs_iomap *iomaps;	/* ours */
	struct rs_iomap *peer_iomaps;	/* the peer's */

	struct rs_dgram *dg;		/* SOCK_DGRAM */
};

/* rsocket.c */
extern bool rs_debug;		/* BV_RS_DEBUG set: state changes and stalls on stderr */
struct rs *rs_lookup(int index);	/* locked, or NULL (errno EBADF) */
bool rs_is_rsocket(int index);
void rs_unlock(struct rs *rs);
int rs_epoll_add(struct rs *rs, int fd);
void rs_epoll_del(struct rs *rs, int fd);
/* Handle what the connection manager says (non-blocking); 0 or a positive errno. */
void rs_cm_progress(struct rs *rs);
void rs_set_error(struct rs *rs, int err);

/* rs_stream.c */
int rs_stream_setup(struct rs *rs);		/* QP, CQ, buffers for rs->id */
void rs_stream_teardown(struct rs *rs);
void rs_stream_connected(struct rs *rs, const struct rs_conn_data *peer);
void rs_conn_data_of(struct rs *rs, struct rs_conn_data *cd);
/* Take what the CQ has (non-blocking), then send what is owed (credits, FIN, iomaps). */
void rs_progress(struct rs *rs);
/* Wait, unlocked, until rs's descriptors say something (or timeout_ms); 0 or an errno. */
int rs_wait(struct rs *rs, int timeout_ms);
/* poll() readiness of a stream or listening rsocket after a progress pass */
short rs_stream_revents(struct rs *rs, short events);
void rs_arm(struct rs *rs);
/* Take what the CQ holds now; how many completions. */
int rs_poll_cq(struct rs *rs);
/* After a wake-up: take the CQ events that caused it (so the CQ can be armed again). */
void rs_take_events(struct rs *rs);
ssize_t rs_stream_send(struct rs *rs, const struct iovec *iov, int iovcnt, int flags);
ssize_t rs_stream_recv(struct rs *rs, const struct iovec *iov, int iovcnt, int flags);
int rs_shutdown_wr(struct rs *rs);
/* rclose: the FIN and the data before it delivered (bounded), then the connection down */
void rs_stream_drain(struct rs *rs);

/* rs_poll.c */
int64_t rs_now_ms(void);	/* CLOCK_MONOTONIC, in ms */

/* rs_dgram.c */
int rs_dgram_init(struct rs *rs);
void rs_dgram_free(struct rs *rs);
int rs_dgram_bind(struct rs *rs, const struct sockaddr *addr, socklen_t len);
int rs_dgram_connect(struct rs *rs, const struct sockaddr *addr, socklen_t len);
ssize_t rs_dgram_send(struct rs *rs, const struct iovec *iov, int iovcnt, int flags,
		      const struct sockaddr *to, socklen_t tolen);
ssize_t rs_dgram_recv(struct rs *rs, const struct iovec *iov, int iovcnt, int flags,
		      struct sockaddr *from, socklen_t *fromlen);
short rs_dgram_revents(struct rs *rs, short events);
int rs_dgram_name(struct rs *rs, struct sockaddr *addr, socklen_t *len, bool peer);
int rs_dgram_setsockopt(struct rs *rs, int level, int name, const void *val, socklen_t len);

static inline size_t rs_iov_len(const struct iovec *iov, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

#endif /* RS_H */
