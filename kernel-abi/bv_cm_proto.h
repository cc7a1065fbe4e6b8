/* SPDX-License-Identifier: MIT */
/*
 * The connection manager's protocol between librdmacm-plugin (the library in the
 * application: librdmacm + ucma) and the daemon that owns a device (ib_cm + rdma_cm's core).
 * It is the counterpart of the kernel's rdma_ucm ABI (rdma-core kernel-headers/rdma/
 * rdma_user_cm.h), carried as bv_proto messages (bv_proto.h) over the device's control socket
 * by a client that said HELLO with role BV_ROLE_CM. Ops 0x0300..0x03ff.
 *
 * Requests get one response each, in order, as every bv_proto request. Events do not come
 * back on that socket: like the kernel's ucma file, an event channel is its own descriptor.
 * The library makes one SOCK_SEQPACKET socket pair per (event channel, daemon), keeps one end
 * and hands the other to the daemon with BV_OP_CM_ATTACH; the daemon writes one
 * struct bv_cm_event per message there, in order, queueing what the socket cannot take yet.
 * A daemon that dies closes its end: the library sees end of file and reports
 * RDMA_CM_EVENT_DEVICE_REMOVAL on every id it had there.
 *
 * Handles name the daemon's ids (one per device: a wildcard listen has one on every device);
 * uids are the library's names for its ids, echoed in every event. Like the kernel, a daemon
 * drops the events of an id whose uid is 0 (a new connection the application has not
 * accepted yet). Addresses are struct sockaddr_storage (AF_INET, AF_INET6, AF_IB), values in
 * host order except what sockaddrs keep in network order: both ends are one machine.
 */
#ifndef BV_CM_PROTO_H
#define BV_CM_PROTO_H

#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <infiniband/ib.h>	/* struct sockaddr_ib */

#include "bv_proto.h"

/*
 * The bytes of an address as the protocol carries it: its family's sockaddr; 0 for NULL or a
 * family it does not carry (librdmacm cma.c ucma_addrlen, AF_IB always supported).
 */
static inline socklen_t bv_cm_addrlen(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	default:
		return 0;
	}
}

enum bv_cm_op {
	BV_OP_CM_ATTACH = BV_OP_CM_BASE,	/* fds[0]: the channel's daemon end */
	BV_OP_CM_DETACH,
	BV_OP_CM_CREATE_ID,
	BV_OP_CM_DESTROY_ID,
	BV_OP_CM_BIND,
	BV_OP_CM_RESOLVE_ADDR,
	BV_OP_CM_RESOLVE_ROUTE,
	BV_OP_CM_LISTEN,
	BV_OP_CM_CONNECT,
	BV_OP_CM_ACCEPT,	/* passive: REP / SIDR_REP; active after CONNECT_RESPONSE: RTU */
	BV_OP_CM_REJECT,
	BV_OP_CM_DISCONNECT,
	BV_OP_CM_INIT_QP_ATTR,
	BV_OP_CM_NOTIFY,
	BV_OP_CM_SET_OPTION,
	BV_OP_CM_MIGRATE,
	BV_OP_CM_QUERY,
	BV_OP_CM_END,
};

#define BV_CM_PRIVATE_DATA_MAX	256	/* RDMA_MAX_PRIVATE_DATA */

/* A path record (struct ibv_sa_path_rec's fields in host order). */
struct bv_cm_path {
	uint8_t dgid[16];
	uint8_t sgid[16];
	uint32_t flow_label;
	uint16_t dlid;
	uint16_t slid;
	uint16_t pkey;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t mtu;			/* enum ibv_mtu */
	uint8_t rate;
	uint8_t packet_life_time;
	uint8_t reversible;
	uint8_t numb_path;
	uint8_t preference;
	uint8_t pad;
};

/* Where an id is: what librdmacm reads back into id->route and id->port_num. */
struct bv_cm_route {
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint16_t pkey;
	uint8_t port_num;		/* 0: not bound to a port */
	uint8_t num_paths;		/* 0 or 1: path is valid */
	uint32_t pad;
	struct bv_cm_path path;
};

/* Connection parameters (struct rdma_conn_param), both directions. */
struct bv_cm_conn {
	uint8_t private_data[BV_CM_PRIVATE_DATA_MAX];
	uint16_t private_data_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint32_t qp_num;
	uint32_t qkey;			/* UD: the Q_Key accepted with / learned from SIDR */
};

/* An address vector (struct ibv_ah_attr with its GRH). */
struct bv_cm_ah {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint16_t dlid;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
	uint16_t pad;
};

/* Enhanced Connection Establishment (struct ibv_ece: vendor id and options). */
struct bv_cm_ece {
	uint32_t vendor_id;
	uint32_t options;
};

/* ---- requests: every request about an id starts with its handle ----------------------------- */

struct bv_cm_attach_req {
	uint32_t cookie;		/* echoed in every event written there */
	uint32_t chan;			/* the library's name for the channel: nonzero, one per
					 * channel of this client (EEXIST otherwise), so requests
					 * that name it can follow the ATTACH without waiting */
};

struct bv_cm_attach_rsp {
	uint32_t chan;
};

struct bv_cm_detach_req {
	uint32_t chan;
};

/* Options an id had before it was on a device (rdma_set_option), given at its creation. */
#define BV_CM_OPT_TOS		(1u << 0)
#define BV_CM_OPT_REUSEADDR	(1u << 1)
#define BV_CM_OPT_AFONLY	(1u << 2)
#define BV_CM_OPT_ACK_TIMEOUT	(1u << 3)

struct bv_cm_id_opts {
	uint8_t set;			/* BV_CM_OPT_* */
	uint8_t tos;
	uint8_t timeout;
	uint8_t reuseaddr;
	uint8_t afonly;
	uint8_t pad[3];
};

#define BV_CM_CREATE_BIND	(1u << 8)	/* and bind it to addr (BIND's flags below too) */

/*
 * An id lives in the library until its first bind or resolve; CREATE_ID makes the daemon's
 * with the options set meanwhile and, with BV_CM_CREATE_BIND, binds it: rdma_bind_addr()
 * is one round trip, as the kernel's is one system call.
 */
struct bv_cm_create_id_req {
	uint64_t uid;
	uint32_t chan;
	uint16_t ps;			/* enum rdma_port_space */
	uint8_t qp_type;		/* enum ibv_qp_type */
	uint8_t pad;
	struct bv_cm_id_opts opts;
	uint32_t flags;			/* BV_CM_CREATE_BIND | BV_CM_BIND_WILDCARD_SET */
	uint32_t pad2;
	struct sockaddr_storage addr;	/* BV_CM_CREATE_BIND */
};

struct bv_cm_create_id_rsp {
	uint32_t handle;
	uint32_t pad;
	struct bv_cm_route route;	/* BV_CM_CREATE_BIND: where the id is */
};

/* DESTROY_ID, DISCONNECT, RESOLVE_ROUTE, QUERY */
struct bv_cm_id_req {
	uint32_t handle;
	int32_t timeout_ms;		/* RESOLVE_ROUTE */
};

#define BV_CM_BIND_WILDCARD_SET	(1u << 0)	/* one of a wildcard bind on every device:
						 * the port must be free everywhere */

struct bv_cm_bind_req {
	uint32_t handle;
	uint32_t flags;
	struct sockaddr_storage addr;
};

/* BIND, LISTEN and QUERY answer where the id is. */
typedef struct bv_cm_route bv_cm_route_rsp;

#define BV_CM_RESOLVE_SRC	(1u << 0)	/* src is given */
#define BV_CM_RESOLVE_LOOPBACK	(1u << 1)	/* dst is this port (loopback, wildcard or
						 * our address): the library routed it here */

struct bv_cm_resolve_addr_req {
	uint32_t handle;
	int32_t timeout_ms;
	uint32_t flags;
	uint32_t pad;
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
};

struct bv_cm_listen_req {
	uint32_t handle;
	int32_t backlog;
};

struct bv_cm_connect_req {
	uint32_t handle;
	uint32_t pad;
	struct bv_cm_conn conn;
	struct bv_cm_ece ece;
};

struct bv_cm_accept_req {
	uint32_t handle;
	uint32_t has_conn;		/* 0: the active side's RTU (rdma_establish) */
	uint64_t uid;			/* passive: the application's id from now on */
	struct bv_cm_conn conn;
	struct bv_cm_ece ece;
};

struct bv_cm_reject_req {
	uint32_t handle;
	uint8_t reason;			/* enum ib_cm_rej_reason; 0: consumer defined */
	uint8_t private_data_len;
	uint16_t pad;
	uint8_t private_data[BV_CM_PRIVATE_DATA_MAX];
};

struct bv_cm_init_qp_attr_req {
	uint32_t handle;
	uint32_t qp_state;		/* enum ibv_qp_state */
};

/* The attributes and mask for one QP transition (ib_cm_init_qp_attr). */
struct bv_cm_qp_attr {
	uint32_t mask;			/* enum ibv_qp_attr_mask */
	uint32_t qp_state;
	uint32_t qp_access_flags;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t path_mtu;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint16_t pad;
	struct bv_cm_ah ah;
};

struct bv_cm_notify_req {
	uint32_t handle;
	uint32_t event;			/* enum ibv_event_type */
};

#define BV_CM_OPTION_MAX	16

struct bv_cm_set_option_req {
	uint32_t handle;
	uint32_t level;			/* RDMA_OPTION_ID */
	uint32_t optname;		/* RDMA_OPTION_ID_TOS, REUSEADDR, AFONLY, ACK_TIMEOUT */
	uint32_t optlen;
	uint8_t optval[BV_CM_OPTION_MAX];
};

struct bv_cm_migrate_req {
	uint32_t handle;
	uint32_t chan;
};

/* ---- events --------------------------------------------------------------------------------- */

#define BV_CM_EVENT_ROUTE	(1u << 0)	/* route is valid: copy it into id->route */
#define BV_CM_EVENT_UD		(1u << 1)	/* ah, conn.qp_num and conn.qkey are rdma_ud_param */

struct bv_cm_event {
	uint64_t uid;			/* the id's; CONNECT_REQUEST: the listening id's */
	uint32_t cookie;		/* the attachment's (BV_OP_CM_ATTACH) */
	uint32_t handle;		/* the id's; CONNECT_REQUEST: the new connection's */
	uint32_t event;			/* enum rdma_cm_event_type */
	int32_t status;
	uint32_t flags;
	uint32_t pad;
	struct bv_cm_conn conn;
	struct bv_cm_ah ah;
	struct bv_cm_ece ece;
	struct bv_cm_route route;
};

/* The library and the daemons are built together, but a message is a message: its sizes are
   pinned (x86_64), so a change to one is a change to the protocol. */
_Static_assert(sizeof(struct bv_cm_path) == 52, "struct bv_cm_path");
_Static_assert(sizeof(struct bv_cm_route) == 352, "struct bv_cm_route");
_Static_assert(sizeof(struct bv_cm_conn) == 272, "struct bv_cm_conn");
_Static_assert(sizeof(struct bv_cm_ah) == 32, "struct bv_cm_ah");
_Static_assert(sizeof(struct bv_cm_ece) == 8, "struct bv_cm_ece");
_Static_assert(sizeof(struct bv_cm_id_opts) == 8, "struct bv_cm_id_opts");
_Static_assert(sizeof(struct bv_cm_attach_req) == 8, "struct bv_cm_attach_req");
_Static_assert(sizeof(struct bv_cm_attach_rsp) == 4, "struct bv_cm_attach_rsp");
_Static_assert(sizeof(struct bv_cm_detach_req) == 4, "struct bv_cm_detach_req");
_Static_assert(sizeof(struct bv_cm_create_id_req) == 160, "struct bv_cm_create_id_req");
_Static_assert(sizeof(struct bv_cm_create_id_rsp) == 360, "struct bv_cm_create_id_rsp");
_Static_assert(sizeof(struct bv_cm_id_req) == 8, "struct bv_cm_id_req");
_Static_assert(sizeof(struct bv_cm_bind_req) == 136, "struct bv_cm_bind_req");
_Static_assert(sizeof(struct bv_cm_resolve_addr_req) == 272, "struct bv_cm_resolve_addr_req");
_Static_assert(sizeof(struct bv_cm_listen_req) == 8, "struct bv_cm_listen_req");
_Static_assert(sizeof(struct bv_cm_connect_req) == 288, "struct bv_cm_connect_req");
_Static_assert(sizeof(struct bv_cm_accept_req) == 296, "struct bv_cm_accept_req");
_Static_assert(sizeof(struct bv_cm_reject_req) == 264, "struct bv_cm_reject_req");
_Static_assert(sizeof(struct bv_cm_init_qp_attr_req) == 8, "struct bv_cm_init_qp_attr_req");
_Static_assert(sizeof(struct bv_cm_qp_attr) == 72, "struct bv_cm_qp_attr");
_Static_assert(sizeof(struct bv_cm_notify_req) == 8, "struct bv_cm_notify_req");
_Static_assert(sizeof(struct bv_cm_set_option_req) == 32, "struct bv_cm_set_option_req");
_Static_assert(sizeof(struct bv_cm_migrate_req) == 8, "struct bv_cm_migrate_req");
_Static_assert(sizeof(struct bv_cm_event) == 696, "struct bv_cm_event");

#endif /* BV_CM_PROTO_H */
