/* SPDX-License-Identifier: MIT */
/*
 * The connection manager of a bridgeverbs daemon: the kernel's ib_cm and rdma_cm core for
 * the daemon's device, serving librdmacm-plugin clients (bv_cm_proto.h) and speaking IB CM
 * MADs (ib_cm_mad.h) with the CM of the other end. docs/rdmacm.md describes it.
 *
 * A device kind gives it a transport: how a MAD reaches QP1 of another port (cx4: UD
 * datagrams through the device's GSI QP; ntb: the link's control channel to the peer
 * daemon) and what its own port is; it hands every MAD it receives to bvd_cm_recv(). The rest
 * (ids, listens, state machines, timers, retries, events) is here and the same for every kind.
 */
#ifndef BVD_CM_H
#define BVD_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bvd;
struct bvd_client;
struct bvd_reply;

/* The local port as the CM needs it. */
struct bvd_cm_port {
	bool active;			/* the port can send and receive MADs */
	uint8_t gid[16];		/* the RoCE v2 GID of the port's IPv4 address */
	uint8_t gid_index;
	uint8_t gid6[16];		/* the RoCE v2 link-local GID (fe80::EUI-64) */
	uint8_t gid6_index;
	uint8_t mtu;			/* enum ibv_mtu: the active MTU */
	uint8_t ack_delay;		/* local CA ACK delay ([IBTA] 14.2.5.4) */
	uint8_t max_rd_atomic;		/* max_qp_rd_atom / max_qp_init_rd_atom */
	uint64_t ca_guid;		/* node GUID, host order */
};

/* Where a MAD goes: the remote port's QP1 (the address vector of a GSI send). */
struct bvd_cm_av {
	uint8_t dgid[16];
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
};

/* A MAD as it arrived: from whom (the GRH of the datagram), and the bytes. */
struct bvd_cm_rx {
	uint8_t sgid[16];		/* the sender's GID */
	uint8_t dgid[16];		/* ours, as the sender addressed us */
	uint32_t src_qpn;
	uint16_t pkey;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
	const uint8_t *mad;
	size_t len;
};

struct bvd_cm_transport {
	const char *name;		/* "GSI QP1", "ntb control channel" */
	int (*port)(struct bvd *d, struct bvd_cm_port *p);
	/* Send one 256-byte MAD; 0, or a positive errno (the MAD is lost: retries cover it). */
	int (*send)(struct bvd *d, const struct bvd_cm_av *av, const void *mad, size_t len);
};

/* bvd.c drives these; a kind without a transport (ops->cm NULL) has no CM. */
int bvd_cm_init(struct bvd *d);
void bvd_cm_fini(struct bvd *d);
void bvd_cm_request(struct bvd *d, struct bvd_client *c, uint16_t op, const void *in,
		    size_t len, int *fds, unsigned int nfds, struct bvd_reply *r);
void bvd_cm_client_gone(struct bvd *d, struct bvd_client *c);
void bvd_cm_status(struct bvd *d, char *buf, size_t len);

/* The kind's receive path: every MAD that arrived for QP1 (malformed ones included). */
void bvd_cm_recv(struct bvd *d, const struct bvd_cm_rx *rx);
/* The port went down or came back: connections on it are told (docs/rdmacm.md). */
void bvd_cm_port_change(struct bvd *d, bool active);

#endif /* BVD_CM_H */
