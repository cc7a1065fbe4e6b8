/* SPDX-License-Identifier: MIT */
/*
 * Internals of the daemon's connection manager (bvd_cm.h is its face to bvd and the kinds).
 * One struct cm_dev per daemon (its device has one port); one struct cm_id per rdma_cm id
 * the daemon holds for a client: it carries both of the kernel's layers, rdma_cm's state
 * (enum cma_state, Linux cma.c) and ib_cm's (enum ibcm_state, Linux cm.c), because here one
 * object plays both. Files:
 *
 *   cm_client.c  the clients' requests (bv_cm_proto.h), ids and their tables, cleanup
 *   cm_chan.c    event channels: events to the library, queued while the socket is full
 *   cm_addr.c    addresses: bind and ports (bind lists), resolve, routes, service ids, the
 *                IP private-data header, listener matching
 *   cm_conn.c    establishing connections (ib_cm): REQ, MRA, REJ, REP, RTU, and the
 *                retransmission of MADs that wait for an answer
 *   cm_disconn.c established connections and their end: DREQ, DREP, timewait, COMM_EST,
 *                LAP (refused), what a destroyed id tells its peer, a port going down
 *   cm_qp_attr.c the QP attributes of each transition (rdma_init_qp_attr)
 *   cm_sidr.c    UD service ID resolution: SIDR_REQ, SIDR_REP
 *   cm_req_wait.c REQs without a listener, held a moment for a listen on its way
 *   cm_mad.c     MADs: the header, validation of what arrives (the fuzzed parser), counters
 */
#ifndef BVD_CM_INT_H
#define BVD_CM_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#include "bv_cm_proto.h"
#include "bvd.h"
#include "bvd_cm.h"
#include "bvd_timer.h"
#include "ib_cm_mad.h"

/* rdma_cm's states (Linux enum rdma_cm_state) */
enum cma_state {
	CMA_IDLE,
	CMA_ADDR_QUERY,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_QUERY,
	CMA_ROUTE_RESOLVED,
	CMA_CONNECT,
	CMA_DISCONNECT,
	CMA_ADDR_BOUND,
	CMA_LISTEN,
	CMA_DEVICE_REMOVAL,
};

/* ib_cm's states (Linux enum ib_cm_state) */
enum ibcm_state {
	IBCM_IDLE,
	IBCM_LISTEN,
	IBCM_REQ_SENT,
	IBCM_REQ_RCVD,
	IBCM_MRA_REQ_SENT,
	IBCM_MRA_REQ_RCVD,
	IBCM_REP_SENT,
	IBCM_REP_RCVD,
	IBCM_MRA_REP_SENT,
	IBCM_MRA_REP_RCVD,
	IBCM_ESTABLISHED,
	IBCM_DREQ_SENT,
	IBCM_DREQ_RCVD,
	IBCM_TIMEWAIT,
	IBCM_SIDR_REQ_SENT,
	IBCM_SIDR_REQ_RCVD,
};

/* rdma_cm's constants (Linux cma.c) */
#define CMA_CM_RESPONSE_TIMEOUT		22	/* 4.096 us * 2^22 = 17 s */
#define CMA_MAX_CM_RETRIES		15
#define CMA_IBOE_PACKET_LIFETIME	16	/* RoCE paths: 4.096 us * 2^16 = 268 ms */
#define CMA_CM_MRA_SETTING		(IBCM_MRA_FLAG_DELAY | 24)
#define IBCM_MRA_FLAG_DELAY		0x80	/* MRA only when the message comes again */
#define UCMA_MAX_BACKLOG		1024	/* Linux ucma.c max_backlog */
#define CM_LISTEN_WAIT_MS		100	/* cm_req_wait.c; the kernel: 0 */

struct cm_dev;
struct cm_evq;
struct cm_req_wait;

/* An event channel of a client on this daemon: where its ids' events go. */
struct cm_chan {
	struct cm_chan *next;
	struct cm_dev *cm;
	struct bvd_client *owner;
	uint32_t handle;
	uint32_t cookie;
	int fd;				/* our end of the library's socket pair */
	struct cm_evq *head, *tail;	/* what the socket had no room for yet */
	uint32_t queued;
	bool want_out;			/* watching for EPOLLOUT */
	bool dead;			/* the library closed its end */
};

/* A bind list: every id bound to one port of one port space (Linux rdma_bind_list). */
struct cm_bind {
	struct cm_bind *next;
	uint16_t ps;
	uint16_t port;
	struct cm_id *owners;
};

struct cm_id {
	struct cm_dev *cm;
	uint32_t handle;		/* ours; also our local communication id (xor'ed) */
	struct bvd_client *owner;
	struct cm_chan *chan;
	uint64_t uid;			/* the library's; 0: events are dropped (not accepted) */
	uint16_t ps;			/* enum rdma_port_space */
	uint8_t qp_type;		/* enum ibv_qp_type */
	enum cma_state state;
	enum ibcm_state ib;

	/* addresses (rdma_cm) */
	struct sockaddr_storage src, dst;
	struct cm_bind *bind;		/* the port this id holds, NULL when none */
	struct cm_id *bind_next;
	bool wildcard_set;		/* one of a wildcard bind on every device */
	bool reuseaddr, afonly, afonly_set, tos_set, timeout_set;
	uint8_t tos, timeout;
	uint8_t sgid[16], dgid[16];	/* the port's GID for src, the peer's */
	uint8_t sgid_index;
	bool loopback;			/* the destination is this port */
	struct bv_cm_path path;
	bool has_route;

	/* listening */
	int backlog;			/* connection requests it may still take */
	struct cm_id *listen;		/* a new connection, until accepted: its listener */

	/* the connection (ib_cm) */
	uint32_t local_id, remote_id;	/* communication ids, host order */
	uint64_t remote_ca_guid;
	uint64_t tid;			/* of the exchange in progress */
	uint64_t service_id;
	uint32_t local_qpn, remote_qpn;
	uint32_t sq_psn, rq_psn;
	uint32_t seq_num;		/* rdma_cm's starting PSN for our QP */
	uint32_t qkey;
	uint8_t initiator_depth, responder_resources;
	uint8_t retry_count, rnr_retry_count, flow_control, srq;
	uint8_t path_mtu;
	uint8_t max_cm_retries;
	uint8_t av_timeout;		/* the path's local ACK timeout (4.096 us * 2^n) */
	uint8_t target_ack_delay;
	uint8_t service_timeout;	/* what our MRA said */
	uint32_t timeout_ms;		/* of a retried MAD */
	struct bvd_cm_av av;		/* where MADs to the peer go */
	struct bv_cm_ece ece;		/* ours */
	bool has_ibcm;			/* took part in a handshake: Linux's cm_id.ib exists */

	/* the MAD that waits for an answer, resent every timeout_ms (Linux ib_mad retries) */
	uint8_t msg[IB_MAD_SIZE];
	bool msg_live;
	uint8_t msg_retries;		/* resends left */
	enum ibcm_state msg_state;	/* the state it was sent in */
	struct bvd_timer msg_timer;
	struct bvd_timer tw_timer;	/* timewait */
	/* private data of our last MRA, RTU or DREP: the answer to a duplicate */
	uint8_t priv[IB_CM_RTU_PRIVATE_DATA_LEN];
	uint8_t priv_len;

	/* tables */
	struct cm_id *hnext;		/* by handle */
	struct cm_id *rnext;		/* by (remote CA GUID, remote id): duplicate REQs */
	bool in_remote;
	struct cm_id *onext, *oprev;	/* the owner's ids */
};

/* MAD counters, by attribute (REQ .. APR = index 0 .. 10) and what was dropped. */
#define CM_ATTR_FIRST	IB_CM_ATTR_REQ
#define CM_NATTR	(IB_CM_ATTR_APR - IB_CM_ATTR_REQ + 1)

struct cm_stats {
	uint64_t rx[CM_NATTR];
	uint64_t tx[CM_NATTR];
	uint64_t tx_retries;
	uint64_t tx_failed;
	uint64_t rx_duplicates;
	uint64_t rx_malformed;		/* dropped: not a valid CM MAD */
	uint64_t rx_unmatched;		/* dropped: no id in a state that takes it */
	uint64_t req_waits;		/* REQs that waited for their listener (cm_req_wait.c) */
	uint64_t events;
	uint64_t events_dropped;	/* the library's channel went away */
};

struct cm_dev {
	struct bvd *d;
	const struct bvd_cm_transport *tp;
	struct bvd_cm_port port;
	uint32_t next_handle;
	uint32_t id_xor;		/* local ids = handle ^ id_xor (Linux random_id_operand) */
	uint32_t tid_hi;
	struct cm_id **ids;		/* hash by handle */
	struct cm_id **remote;		/* hash by remote id */
	uint32_t nids;
	struct cm_bind *binds;
	struct cm_chan *chans;
	uint32_t last_port;		/* last ephemeral port handed out */
	/* CM timing, from the configuration (docs/rdmacm.md): the kernel's by default */
	uint8_t response_timeout;	/* cm_response_timeout */
	uint8_t max_cm_retries;		/* cm_max_retries */
	uint8_t packet_life_time;	/* cm_packet_life_time */
	uint32_t listen_wait_ms;	/* cm_listen_wait_ms (cm_req_wait.c) */
	struct cm_req_wait *req_waits;
	unsigned int nreq_waits;
	struct cm_stats st;
};

#define CM_HASH		1024u

static inline struct cm_dev *cm_of(struct bvd *d)
{
	return d->cm;
}

/* A REQ's transport service type as the QP type a listener must take (0xff: none). */
static inline uint8_t cm_req_qp_type(const uint8_t *req)
{
	unsigned int tst = cx4_get(req, IB_CM_REQ_TRANSPORT_SERVICE_TYPE);

	return tst == 0 ? IBV_QPT_RC : tst == 1 ? IBV_QPT_UC : 0xff;
}

/* 4.096 us * 2^t in ms, as Linux cm_convert_to_ms() approximates it */
static inline uint32_t cm_convert_to_ms(unsigned int iba_time)
{
	return 1u << (iba_time > 8 ? (iba_time > 31 ? 23 : iba_time - 8) : 0);
}

/* cm_client.c */
struct cm_id *cm_id_alloc(struct cm_dev *cm, struct bvd_client *owner, struct cm_chan *chan,
			  uint64_t uid, uint16_t ps, uint8_t qp_type);
struct cm_id *cm_id_find(struct cm_dev *cm, uint32_t handle);
struct cm_id *cm_id_by_local_id(struct cm_dev *cm, uint32_t local_id);
void cm_id_destroy(struct cm_id *id);
void cm_remote_insert(struct cm_id *id);
void cm_remote_remove(struct cm_id *id);
struct cm_id *cm_remote_find(struct cm_dev *cm, uint64_t ca_guid, uint32_t remote_id);
bool cm_refresh_port(struct cm_dev *cm);

/* cm_chan.c */
/* A channel the library named handle (bv_cm_attach_req): 0 or EINVAL, EEXIST, ENOMEM. */
int cm_chan_attach(struct cm_dev *cm, struct bvd_client *owner, int fd, uint32_t cookie,
		   uint32_t handle);
struct cm_chan *cm_chan_find(struct cm_dev *cm, struct bvd_client *owner, uint32_t handle);
void cm_chan_free(struct cm_chan *ch);
/* Deliver an event of id (dropped, as the kernel drops it, when the id's uid is 0). */
void cm_event(struct cm_id *id, struct bv_cm_event *ev);
/* An event for a new connection, on its listener's channel with the listener's uid. */
void cm_event_conn_req(struct cm_id *listen, struct cm_id *conn, struct bv_cm_event *ev);
void cm_event_init(struct bv_cm_event *ev, uint32_t event, int32_t status);

/* cm_addr.c */
bool cm_any_addr(const struct sockaddr *sa);
bool cm_loopback_addr(const struct sockaddr *sa);
uint16_t cm_addr_port(const struct sockaddr *sa);
void cm_addr_set_port(struct sockaddr *sa, uint16_t port);
int cm_bind(struct cm_id *id, const struct sockaddr *addr, bool wildcard_set);
void cm_unbind(struct cm_id *id);
int cm_listen(struct cm_id *id, int backlog);
int cm_resolve_addr(struct cm_id *id, const struct sockaddr *src, const struct sockaddr *dst,
		    bool loopback);
int cm_resolve_route(struct cm_id *id);
void cm_route_of(const struct cm_id *id, struct bv_cm_route *r);
uint64_t cm_service_id(const struct cm_id *id, const struct sockaddr *sa);
unsigned int cm_user_data_offset(const struct cm_id *id);
void cm_format_ip_hdr(const struct cm_id *id, uint8_t *hdr);
/* The listener a REQ/SIDR_REQ is for, or NULL; fills the new connection's addresses. */
struct cm_id *cm_find_listener(struct cm_dev *cm, uint64_t service_id, const uint8_t *priv,
			       size_t priv_len, uint8_t qp_type);
/* Is anything listening on the port space and port of service_id? */
bool cm_listener_on_port(struct cm_dev *cm, uint64_t service_id);
int cm_conn_addrs(struct cm_id *conn, const struct cm_id *listen, uint64_t service_id,
		  const uint8_t *priv, size_t priv_len, const uint8_t *peer_gid);

/* cm_conn.c: establishment */
int cm_connect(struct cm_id *id, const struct bv_cm_conn *p, const struct bv_cm_ece *ece);
int cm_accept(struct cm_id *id, const struct bv_cm_conn *p, const struct bv_cm_ece *ece);
int cm_establish_rtu(struct cm_id *id);
int cm_reject(struct cm_id *id, uint8_t reason, const uint8_t *priv, uint8_t len);
void cm_recv_req(struct cm_dev *cm, const struct bvd_cm_rx *rx);
/* The kernel's answer to a REQ that no listener takes: REJ 8, or 28 (a listener elsewhere). */
void cm_req_no_listener(struct cm_dev *cm, const struct bvd_cm_rx *rx);
void cm_recv_mra(struct cm_dev *cm, const struct bvd_cm_rx *rx);
void cm_recv_rej(struct cm_dev *cm, const struct bvd_cm_rx *rx);
void cm_recv_rep(struct cm_dev *cm, const struct bvd_cm_rx *rx);
void cm_recv_rtu(struct cm_dev *cm, const struct bvd_cm_rx *rx);
/* The MAD that waits for an answer, and what happens when none comes (cm_sidr.c too). */
int cm_send_retried(struct cm_id *id, enum ibcm_state state);
void cm_cancel_msg(struct cm_id *id);
void cm_msg_timeout(struct bvd *d, struct bvd_timer *t);
void cm_timewait_expired(struct bvd *d, struct bvd_timer *t);
void cm_conn_event(struct cm_id *id, uint32_t event, int status);
void cm_reset_to_idle(struct cm_id *id);
void cm_enter_timewait(struct cm_id *id);
void cm_issue_rej(struct cm_dev *cm, const struct bvd_cm_rx *rx, uint16_t reason,
		  enum ib_cm_msg_response rejected, const void *ari, uint8_t ari_len);
/* Linux cm_destroy_id() for the handshake states; false when id is in none of them. */
bool cm_conn_destroy_handshake(struct cm_id *id);

/* cm_disconn.c: the established connection and its end */
int cm_disconnect(struct cm_id *id);
int cm_notify(struct cm_id *id, uint32_t event);
void cm_recv_dreq(struct cm_dev *cm, const struct bvd_cm_rx *rx);
void cm_recv_drep(struct cm_dev *cm, const struct bvd_cm_rx *rx);
void cm_recv_lap(struct cm_dev *cm, const struct bvd_cm_rx *rx);
/* An id goes away: tell the peer as Linux cm_destroy_id() does. */
void cm_conn_destroy(struct cm_id *id);
void cm_conn_port_down(struct cm_id *id);

/* cm_qp_attr.c */
int cm_init_qp_attr(struct cm_id *id, uint32_t state, struct bv_cm_qp_attr *a);

/* cm_sidr.c */
int cm_sidr_connect(struct cm_id *id, const struct bv_cm_conn *p);
int cm_sidr_accept(struct cm_id *id, const struct bv_cm_conn *p, const struct bv_cm_ece *ece);
int cm_sidr_reject(struct cm_id *id, const uint8_t *priv, uint8_t len);
void cm_sidr_send_error(struct cm_id *id);
void cm_recv_sidr_req(struct cm_dev *cm, const struct bvd_cm_rx *rx);
void cm_recv_sidr_rep(struct cm_dev *cm, const struct bvd_cm_rx *rx);

/* cm_req_wait.c: true when the REQ waits (for a listen, or a duplicate of one that does) */
bool cm_req_wait(struct cm_dev *cm, const struct bvd_cm_rx *rx);
/* A listen began: the REQs it takes go on. */
void cm_req_wait_listen(struct cm_dev *cm);
void cm_req_wait_fini(struct cm_dev *cm);

/* cm_mad.c */
void cm_mad_hdr(uint8_t *mad, uint16_t attr_id, uint64_t tid, uint32_t attr_mod);
uint64_t cm_new_tid(struct cm_id *id);
/* Send a MAD to the id's peer, or (av) to where a received MAD came from. */
int cm_mad_send(struct cm_dev *cm, const struct bvd_cm_av *av, const uint8_t *mad);
void cm_av_from_rx(struct cm_dev *cm, const struct bvd_cm_rx *rx, struct bvd_cm_av *av);
/* A valid CM MAD's attribute id, or 0 (counted as malformed). */
uint16_t cm_mad_check(struct cm_dev *cm, const uint8_t *mad, size_t len);

#endif /* BVD_CM_INT_H */
