/* SPDX-License-Identifier: MIT */
/*
 * librdmacm-plugin internals: what the files of the drop-in librdmacm.so.1 share.
 *
 * The library plays librdmacm and the kernel's ucma; the daemon that owns a device plays
 * ib_cm and rdma_cm's core (docs/rdmacm.md, kernel-abi/bv_cm_proto.h). Files:
 *
 *   dev.c       the devices: which libibverbs devices have a bridgeverbs daemon, their
 *               addresses, the CM connection to each daemon, the contexts and PDs the ids
 *               carry (rdma_get_devices), routing an address to a device
 *   chan.c      event channels: an epoll fd over one socket per daemon and a local queue;
 *               rdma_get_cm_event (and what librdmacm does with each event), ack, migrate
 *   id.c        ids: create, destroy, bind, resolve, listen, options, ports
 *   conn.c      connect, accept, reject, disconnect, establish, notify, QP attributes, ECE
 *   qp.c        rdma_create_qp(_ex), rdma_destroy_qp, the SRQ helpers
 *   ep.c        rdma_create_ep, rdma_destroy_ep, rdma_get_request
 *   addrinfo.c  rdma_getaddrinfo, rdma_freeaddrinfo
 *   event_str.c mcast.c    rdma_event_str; multicast (refused: no multicast on our ports)
 *   rsocket.c rs_stream.c rs_dgram.c rs_poll.c   rsockets (rs.h)
 */
#ifndef RCM_H
#define RCM_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "bv_cm_proto.h"
#include "bv_paths.h"

/* Exported entry points (the version script librdmacm.map names them). */
#define RCM_EXPORT __attribute__((visibility("default")))

/*
 * Sockets the library uses for itself (route lookups), made with the system calls directly:
 * under librspreload, socket()/connect()/close() would make them rsockets.
 */
static inline int rcm_sys_socket(int domain, int type)
{
	return (int)syscall(SYS_socket, domain, type, 0);
}

static inline int rcm_sys_connect(int s, const struct sockaddr *sa, socklen_t len)
{
	return (int)syscall(SYS_connect, s, sa, len);
}

static inline int rcm_sys_bind(int s, const struct sockaddr *sa, socklen_t len)
{
	return (int)syscall(SYS_bind, s, sa, len);
}

static inline int rcm_sys_getsockname(int s, struct sockaddr *sa, socklen_t *len)
{
	return (int)syscall(SYS_getsockname, s, sa, len);
}

static inline void rcm_sys_close(int fd)
{
	syscall(SYS_close, fd);
}

/* BV_RCM_DEBUG set: every event the application gets is printed on stderr. */
static inline bool rcm_debug(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("BV_RCM_DEBUG") != NULL;
	return on;
}

/* librdmacm's convention: -1 with errno set. */
static inline int rcm_err(int err)
{
	errno = err;
	return -1;
}

#define RCM_MAX_DEVS		32

/* ---- devices (dev.c) -------------------------------------------------------------------------- */

struct rcm_dev {
	int index;			/* in the device list; the cookie of our attachments */
	struct ibv_device *ibdev;
	char name[64];
	char sock_path[BV_PATH_MAX];
	/* addresses, from the GID table libibverbs reads (sysfs) */
	bool has_ip;
	uint32_t ip;			/* IPv4, network order */
	uint8_t gid4[16], gid6[16];	/* RoCE v2 GIDs: IPv4-mapped, link-local */
	/* opened on first use, shared by every id on the device (librdmacm's cma_device) */
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	uint32_t max_qpsize;
	uint8_t max_initiator_depth, max_responder_resources;
	uint8_t link_layer;
	bool port_active;
	/* the connection manager's control connection to the daemon */
	pthread_mutex_t lock;
	int sock;
	uint32_t seq;
	bool gone;			/* the daemon went away */
};

int rcm_init(void);
int rcm_ndevs(void);
struct rcm_dev *rcm_dev_at(int i);
/* Open the device's context and PD (once per process); 0 or an errno. */
int rcm_dev_open(struct rcm_dev *dev);
/* A request to the device's daemon; 0, a positive errno from it, or ENODEV when it is gone. */
int rcm_call(struct rcm_dev *dev, uint16_t op, const void *req, size_t len, void *rsp,
	     size_t rsp_max, const int *fds, unsigned int nfds);

/* One request of a batch (rcm_call_batch): err is rcm_call()'s answer. */
struct rcm_req {
	struct rcm_dev *dev;
	uint16_t op;
	const void *req;
	size_t len;
	void *rsp;
	size_t rsp_max;
	const int *fds;
	unsigned int nfds;
	int err;
	bool sent;
};

/* Two requests per device at most: ATTACH and the one that names the channel. */
#define RCM_BATCH_MAX		(2 * RCM_MAX_DEVS)

/* Requests to several daemons (or several to one), in flight together (dev.c). */
void rcm_call_batch(struct rcm_req *const *rq, int n);

/* Where an address lives. */
enum rcm_route_kind {
	RCM_ROUTE_NONE,			/* no device has it */
	RCM_ROUTE_WILDCARD,		/* 0.0.0.0 / :: : every device */
	RCM_ROUTE_LOOPBACK,		/* 127.0.0.0/8, ::1 that no device owns: the first device */
	RCM_ROUTE_OWN,			/* a device's own address */
	RCM_ROUTE_REMOTE,		/* elsewhere: through the device the kernel routes it by */
};
enum rcm_route_kind rcm_route(const struct sockaddr *sa, struct rcm_dev **dev);
/* The first device with an active port (the kernel's cma_bind_loopback()), else the first. */
struct rcm_dev *rcm_first_dev(void);

/* ---- channels (chan.c) ------------------------------------------------------------------------ */

struct rcm_event;

struct rcm_chan {
	struct rdma_event_channel ch;	/* public: fd is our epoll fd */
	int efd;			/* eventfd: local events are queued */
	pthread_mutex_t lock;
	struct rcm_event *local_head, *local_tail;
	pthread_mutex_t attach[RCM_MAX_DEVS];	/* one attach at a time per daemon, not per channel */
	int member[RCM_MAX_DEVS];	/* our end of the socket pair per daemon, -1: none */
	uint32_t handle[RCM_MAX_DEVS];	/* the daemon's name for the channel */
	uint32_t name;			/* ours, which the daemons take (bv_cm_attach_req) */
};

static inline struct rcm_chan *rcm_chan_of(struct rdma_event_channel *ch)
{
	return (struct rcm_chan *)ch;
}

/* The daemon's handle for the channel on dev, attaching it there first if needed. */
int rcm_chan_attach(struct rcm_chan *c, struct rcm_dev *dev, uint32_t *handle);

/*
 * The same in two halves around a batch: begin holds the channel's attach lock for dev and,
 * when the channel is not there yet (needed), prepares the ATTACH request rq, which goes
 * first in the batch, before the requests naming the channel (c->name); end takes its answer
 * and the lock goes. 0 or an errno, from each.
 */
struct rcm_attach {
	bool needed;
	int sv[2];
	struct bv_cm_attach_req req;
	struct bv_cm_attach_rsp rsp;
	struct rcm_req rq;
};
int rcm_chan_attach_begin(struct rcm_chan *c, struct rcm_dev *dev, struct rcm_attach *a);
int rcm_chan_attach_end(struct rcm_chan *c, struct rcm_dev *dev, struct rcm_attach *a);
/* Queue an event the library makes itself (ADDR_ERROR, DEVICE_REMOVAL...). */
int rcm_chan_post_local(struct rcm_chan *c, struct rcm_event *evt);

/* ---- ids (id.c) -------------------------------------------------------------------------------- */

/* One daemon id behind a library id: one, or one per device for a wildcard listen. */
struct rcm_sub {
	struct rcm_dev *dev;
	uint32_t handle;
};

struct rcm_id {
	struct rdma_cm_id id;		/* public; first */
	uint64_t uid;			/* our name in events: table slot and generation */
	struct rcm_chan *chan;
	bool sync;			/* NULL channel: a private one, calls wait for events */
	struct rcm_dev *dev;		/* the device the id is on, NULL until bound */
	uint32_t handle;		/* the daemon's id on dev */
	struct rcm_sub *subs;		/* a wildcard bind or listen: every device */
	int nsubs;
	pthread_mutex_t mut;
	pthread_cond_t cond;
	int events_reported, events_completed;
	/* what the library keeps (librdmacm's cma_id_private) */
	uint8_t initiator_depth, responder_resources;
	bool connect_error;
	struct ibv_ece local_ece, remote_ece;
	void *connect;			/* rdma_create_ep's ai_connect: prefix of private data */
	size_t connect_len;
	struct ibv_qp_init_attr *qp_init_attr;	/* rdma_create_ep on a passive id */
	/* options, replayed on the daemon's id once it exists */
	bool tos_set, timeout_set, reuseaddr_set, afonly_set;
	uint8_t tos, timeout;
	int reuseaddr, afonly;
	uint32_t qkey;			/* UD: from the passive side's SIDR_REP or our accept */
};

static inline struct rcm_id *rcm_id_of(struct rdma_cm_id *id)
{
	return (struct rcm_id *)id;
}

struct rcm_id *rcm_id_alloc(struct rcm_chan *chan, void *context, enum rdma_port_space ps,
			    enum ibv_qp_type qp_type);
void rcm_id_free(struct rcm_id *id);
/* The live id an event names, or NULL (destroyed meanwhile). */
struct rcm_id *rcm_id_by_uid(uint64_t uid);
/* Put the id on dev (a daemon id, the device's context and PD). */
int rcm_id_attach(struct rcm_id *id, struct rcm_dev *dev, uint32_t handle);
/* A daemon id for id on dev, with the options set so far. */
int rcm_id_create_on(struct rcm_id *id, struct rcm_dev *dev, uint32_t *handle);
void rcm_id_set_route(struct rcm_id *id, const struct bv_cm_route *r);
/* A daemon died under channel c: its ids there get DEVICE_REMOVAL. */
void rcm_ids_device_removed(struct rcm_chan *c, struct rcm_dev *dev);
/* A call about id's daemon id (EINVAL when it has none: not bound yet). */
int rcm_id_call(struct rcm_id *id, uint16_t op, void *req, size_t len, void *rsp,
		size_t rsp_max);
/* librdmacm's ucma_complete(): a synchronous id waits for its event. */
int rcm_complete(struct rcm_id *id);

/* ---- events (chan.c) --------------------------------------------------------------------------- */

struct rcm_event {
	struct rdma_cm_event event;	/* public; first */
	struct rcm_id *id;		/* whose completion count the ack advances */
	struct rcm_event *next;		/* on a channel's local queue */
	uint8_t private_data[BV_CM_PRIVATE_DATA_MAX];
	/* a local event, in the form a daemon's would have */
	struct bv_cm_event raw;
};

/* ---- connections (conn.c) -------------------------------------------------------------------- */

/* librdmacm's ucma_process_conn_resp(): RTR, RTS, RTU on a CONNECT_RESPONSE. */
int rcm_process_conn_resp(struct rcm_id *id, const struct bv_cm_ece *ece);
int rcm_modify_qp_err(struct rcm_id *id);

#endif /* RCM_H */
