/* SPDX-License-Identifier: MIT */
/*
 * What two libscif endpoints exchange (docs/scif.md "Wire format"). Three things cross a
 * connection:
 *
 *  - the rdma_cm private data of the connection request and of its acceptance
 *    (struct scif_cm_pdata): SCIF ports and nodes, and where the sender's message ring is;
 *  - control messages (struct scif_wire_msg), one per SEND into a pre-posted receive: the
 *    accept grant, window registration, fences, wake-ups, disconnect;
 *  - memory the peer writes or reads directly: the message ring, struct scif_ctl (written by
 *    the peer: its producer and consumer counts, its wake-up requests) and struct scif_pub
 *    (read by the peer with RDMA READ when it is about to sleep).
 *
 * Everything is little-endian, the hosts' own order (static_assert below), so the layouts are
 * used as they are. Every byte a peer sends is checked here before use (scif_wire_parse,
 * scif_pdata_parse; the ring counts in ring.h): a peer is not trusted. Pure code:
 * tests/scif/fuzz feeds it arbitrary bytes.
 */
#ifndef SCIF_WIRE_H
#define SCIF_WIRE_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the wire is little-endian");

#define SCIF_WIRE_MAGIC		0x46494353u	/* "SCIF" */
#define SCIF_WIRE_VERSION	1

/* rdma_cm private data. 40 bytes: fits the 56 bytes an IB/RoCE REQ carries after rdma_cm's header. */
enum { SCIF_PDATA_CONNECT = 1, SCIF_PDATA_ACCEPT = 2 };

struct scif_cm_pdata {
	uint32_t magic;		/* SCIF_WIRE_MAGIC */
	uint8_t version;	/* SCIF_WIRE_VERSION */
	uint8_t kind;		/* SCIF_PDATA_* */
	uint16_t reserved;	/* 0 */
	uint16_t src_node;	/* the sender's SCIF address */
	uint16_t src_port;
	uint16_t dst_node;	/* whom it wants (CONNECT) or answers (ACCEPT) */
	uint16_t dst_port;
	uint32_t ring_size;	/* bytes of the sender's receive ring */
	uint32_t rkey;		/* of the sender's ring, ctl and pub */
	uint64_t ring_addr;	/* the sender's receive ring */
	uint64_t ctl_addr;	/* its struct scif_ctl; struct scif_pub follows it */
};
static_assert(sizeof(struct scif_cm_pdata) == 40, "private data layout");

/* Written by the peer into our memory (one cache line). */
struct scif_ctl {
	_Atomic uint64_t prod;		/* the peer's producer count into our ring */
	_Atomic uint64_t cons;		/* the peer's consumer count of its ring: our credits */
	_Atomic uint32_t want_data;	/* bumped when the peer sleeps waiting for our data */
	_Atomic uint32_t want_credit;	/* bumped when it sleeps waiting for our credits */
	uint8_t pad[40];
};
static_assert(sizeof(struct scif_ctl) == 64, "ctl layout");
#define SCIF_CTL_COUNTS_LEN	16	/* prod and cons: written together */
#define SCIF_CTL_WANT_DATA_OFF	16
#define SCIF_CTL_WANT_CREDIT_OFF 20

/* Ours, read by the peer (the cache line after struct scif_ctl). */
struct scif_pub {
	_Atomic uint64_t tx_prod;	/* bytes we have posted into the peer's ring */
	_Atomic uint64_t rx_cons;	/* bytes we consumed of our ring */
	uint8_t pad[48];
};
static_assert(sizeof(struct scif_pub) == 64, "pub layout");

/* Control messages. */
enum scif_op {
	SCIF_OP_GRANT = 1,	/* scif_accept took the connection: connect may return */
	SCIF_OP_REJECT,		/* the listener went away before accepting */
	SCIF_OP_DISCONNECT,	/* scif_close: no more data or RMA from this side */
	SCIF_OP_WAKE_DATA,	/* arg0: the want_data value answered */
	SCIF_OP_WAKE_CREDIT,	/* arg0: the want_credit value answered */
	SCIF_OP_REGISTER,	/* arg0 off, arg1 len, arg2 addr, arg3 rkey, arg4 prot */
	SCIF_OP_UNREGISTER,	/* arg0 off, arg1 len */
	SCIF_OP_MARK,		/* fence_mark(INIT_PEER) */
	SCIF_OP_WAIT,		/* arg0: a mark the receiver gave */
	SCIF_OP_SIGNAL,		/* arg0 loff, arg1 lval, arg2 roff, arg3 rval, arg4 flags */
	SCIF_OP_MAP,		/* arg0 off, arg1 len: the sender maps our pages */
	SCIF_OP_UNMAP,		/* arg0 off, arg1 len: ... and no longer does */
	SCIF_OP_ACK,		/* answers req: arg0 status (0 or an errno), arg1..3 values */
	SCIF_OP_MAX
};

struct scif_wire_msg {
	uint8_t op;		/* enum scif_op */
	uint8_t version;	/* SCIF_WIRE_VERSION */
	uint16_t reserved;	/* 0 */
	uint32_t req;		/* request id, echoed by its ACK (0: no answer wanted) */
	uint64_t arg[5];
	uint64_t pad[2];	/* 0 */
};
static_assert(sizeof(struct scif_wire_msg) == 64, "message layout");
#define SCIF_WIRE_MSG_LEN	sizeof(struct scif_wire_msg)

/* Why something from a peer was rejected; counted in scif_wire_stats. */
enum scif_reject {
	SCIF_REJ_LENGTH,	/* wrong size */
	SCIF_REJ_VERSION,	/* magic or version */
	SCIF_REJ_OP,		/* unknown operation or kind */
	SCIF_REJ_RESERVED,	/* reserved bytes not zero */
	SCIF_REJ_ARGS,		/* arguments out of range */
	SCIF_REJ_STATE,		/* well-formed but not valid now (handled by the caller) */
	SCIF_REJ_RING,		/* ring counts out of range */
	SCIF_REJ_MAX
};

extern _Atomic unsigned long scif_wire_stats[SCIF_REJ_MAX];
const char *scif_reject_name(enum scif_reject r);
/* Count a rejection; returns -EPROTO. */
int scif_wire_reject(enum scif_reject r);

/* Encode a message. */
void scif_wire_build(struct scif_wire_msg *m, enum scif_op op, uint32_t req, uint64_t a0,
		     uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4);

/* Check len bytes from a peer and copy them into out: 0, or -EPROTO (counted). */
int scif_wire_parse(const void *buf, size_t len, struct scif_wire_msg *out);

/* Check private data of the expected kind and copy it into out: 0, or -EPROTO (counted). */
int scif_pdata_parse(const void *buf, size_t len, uint8_t kind, struct scif_cm_pdata *out);

#endif
