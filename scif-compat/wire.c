// SPDX-License-Identifier: MIT
/*
 * Checking what a peer sends (wire.h). The rules are per operation: what each argument may be
 * so that the handler can use it without further range checks. Whether it makes sense in the
 * connection's state (a REGISTER overlapping a window, an ACK nobody asked for) is the
 * handler's to decide; it counts that as SCIF_REJ_STATE.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ring.h"
#include "scif.h"
#include "window.h"
#include "wire.h"

_Atomic unsigned long scif_wire_stats[SCIF_REJ_MAX];

static const char *const reject_names[SCIF_REJ_MAX] = {
	[SCIF_REJ_LENGTH] = "length",	[SCIF_REJ_VERSION] = "version",
	[SCIF_REJ_OP] = "operation",	[SCIF_REJ_RESERVED] = "reserved bytes",
	[SCIF_REJ_ARGS] = "arguments",	[SCIF_REJ_STATE] = "state",
	[SCIF_REJ_RING] = "ring counts",
};

const char *scif_reject_name(enum scif_reject r)
{
	return r < SCIF_REJ_MAX ? reject_names[r] : "?";
}

int scif_wire_reject(enum scif_reject r)
{
	if (r < SCIF_REJ_MAX)
		atomic_fetch_add_explicit(&scif_wire_stats[r], 1, memory_order_relaxed);
	return -EPROTO;
}

void scif_wire_build(struct scif_wire_msg *m, enum scif_op op, uint32_t req, uint64_t a0,
		     uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	memset(m, 0, sizeof(*m));
	m->op = (uint8_t)op;
	m->version = SCIF_WIRE_VERSION;
	m->req = req;
	m->arg[0] = a0;
	m->arg[1] = a1;
	m->arg[2] = a2;
	m->arg[3] = a3;
	m->arg[4] = a4;
}

/* A page-granular range of the registered address space. */
static int range_ok(uint64_t off, uint64_t len)
{
	return len && !(off % SCIF_PAGE_SIZE) && !(len % SCIF_PAGE_SIZE) && off < SCIF_AUTO_END &&
	       len <= SCIF_AUTO_END - off;
}

/* An 8-byte signal target: 4-byte aligned (as SCIF requires), inside the address space. */
static int signal_off_ok(uint64_t off)
{
	return !(off % 4) && off <= SCIF_AUTO_END - 8;
}

/* How many leading arguments op uses; the others must be 0. -1: unknown op. */
static int op_args(uint8_t op)
{
	switch (op) {
	case SCIF_OP_GRANT:
	case SCIF_OP_REJECT:
	case SCIF_OP_DISCONNECT:
	case SCIF_OP_MARK:
		return 0;
	case SCIF_OP_WAKE_DATA:
	case SCIF_OP_WAKE_CREDIT:
	case SCIF_OP_WAIT:
		return 1;
	case SCIF_OP_UNREGISTER:
	case SCIF_OP_MAP:
	case SCIF_OP_UNMAP:
		return 2;
	case SCIF_OP_ACK:
		return 4;
	case SCIF_OP_REGISTER:
	case SCIF_OP_SIGNAL:
		return 5;
	default:
		return -1;
	}
}

/* Requests that are answered carry a request id; the others carry none. */
static int wants_req(uint8_t op)
{
	switch (op) {
	case SCIF_OP_REGISTER:
	case SCIF_OP_UNREGISTER:
	case SCIF_OP_MARK:
	case SCIF_OP_WAIT:
	case SCIF_OP_SIGNAL:
	case SCIF_OP_MAP:
	case SCIF_OP_ACK:
		return 1;
	default:
		return 0;
	}
}

static int args_ok(const struct scif_wire_msg *m)
{
	const uint64_t *a = m->arg;

	switch (m->op) {
	case SCIF_OP_WAKE_DATA:
	case SCIF_OP_WAKE_CREDIT:
		return a[0] <= UINT32_MAX;
	case SCIF_OP_WAIT:
		return a[0] <= 0x7fffffffu;	/* a mark of the receiver's own RMAs */
	case SCIF_OP_REGISTER:
		/* protection 0 is a valid window (scif_register allows it), one no RMA may use */
		return range_ok(a[0], a[1]) && a[2] + a[1] >= a[2] && a[3] <= UINT32_MAX &&
		       !(a[4] & ~(uint64_t)(SCIF_PROT_READ | SCIF_PROT_WRITE));
	case SCIF_OP_UNREGISTER:
	case SCIF_OP_MAP:
	case SCIF_OP_UNMAP:
		return range_ok(a[0], a[1]);
	case SCIF_OP_SIGNAL: {
		uint64_t sig = SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE;

		if (!a[4] || (a[4] & ~sig))
			return 0;
		if ((a[4] & SCIF_SIGNAL_LOCAL) && !signal_off_ok(a[0]))
			return 0;
		if ((a[4] & SCIF_SIGNAL_REMOTE) && !signal_off_ok(a[2]))
			return 0;
		return 1;
	}
	case SCIF_OP_ACK:
		return a[0] < 4096;	/* 0 or an errno */
	default:
		return 1;
	}
}

int scif_wire_parse(const void *buf, size_t len, struct scif_wire_msg *out)
{
	struct scif_wire_msg m;
	int nargs;

	if (len != SCIF_WIRE_MSG_LEN)
		return scif_wire_reject(SCIF_REJ_LENGTH);
	memcpy(&m, buf, sizeof(m));
	if (m.version != SCIF_WIRE_VERSION)
		return scif_wire_reject(SCIF_REJ_VERSION);
	nargs = op_args(m.op);
	if (nargs < 0)
		return scif_wire_reject(SCIF_REJ_OP);
	if (m.reserved || m.pad[0] || m.pad[1])
		return scif_wire_reject(SCIF_REJ_RESERVED);
	for (int i = nargs; i < 5; i++)
		if (m.arg[i])
			return scif_wire_reject(SCIF_REJ_RESERVED);
	if (!m.req != !wants_req(m.op) || !args_ok(&m))
		return scif_wire_reject(SCIF_REJ_ARGS);
	*out = m;
	return 0;
}

int scif_pdata_parse(const void *buf, size_t len, uint8_t kind, struct scif_cm_pdata *out)
{
	struct scif_cm_pdata p;

	/* rdma_cm may hand over more than was sent (the transport's whole private data field) */
	if (!buf || len < sizeof(p))
		return scif_wire_reject(SCIF_REJ_LENGTH);
	memcpy(&p, buf, sizeof(p));
	if (p.magic != SCIF_WIRE_MAGIC || p.version != SCIF_WIRE_VERSION)
		return scif_wire_reject(SCIF_REJ_VERSION);
	if (p.kind != kind)
		return scif_wire_reject(SCIF_REJ_OP);
	if (p.reserved)
		return scif_wire_reject(SCIF_REJ_RESERVED);
	for (size_t i = sizeof(p); i < len; i++)
		if (((const uint8_t *)buf)[i])
			return scif_wire_reject(SCIF_REJ_RESERVED);
	if (!p.src_port || !p.dst_port || !scif_ring_size_ok(p.ring_size) ||
	    p.ring_addr + p.ring_size < p.ring_addr ||
	    p.ctl_addr + sizeof(struct scif_ctl) + sizeof(struct scif_pub) < p.ctl_addr)
		return scif_wire_reject(SCIF_REJ_ARGS);
	*out = p;
	return 0;
}
