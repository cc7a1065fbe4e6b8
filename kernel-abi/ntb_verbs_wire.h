/* SPDX-License-Identifier: MIT */
/*
 * The verbs layer's use of NTB window memory: what each end's ntbd and verbs clients write
 * into the other end's inbound window, and in which format. This is the "wire" of the ntb
 * device (there is no packet wire: the PCIe link carries posted writes into window memory).
 *
 * The design is NTRDMA's (docs/ntb-verbs.md "The window") adapted to user space:
 *
 *  - Nothing is ever read across the link on the data path (remote reads are slow
 *    non-posted round trips and can take down the reader when the peer dies). Every
 *    structure below lives in the memory of the end that READS it and is written by the
 *    other end: indices, credits and flags are pushed, never pulled.
 *  - Control state (which clients exist on the peer end, its QPs and its remote keys) is
 *    pushed by the peer's ntbd into this end's CONTROL AREA, so a requester can check a remote
 *    key, range, access and the target QP locally before it places any data (IB error
 *    semantics: a bad rkey leaves the target untouched).
 *  - Two clients exchange messages through a PAIR: two BLOCKS, one in each reader's memory,
 *    each written by one client only (its requests to the other, its responses to the other's
 *    requests, and the credits and bell wishes about the other's block). Requests and
 *    responses have separate rings so that consuming responses never waits for credits (no
 *    cycle, no deadlock); a block's rings carry every QP between the two clients, in order.
 *  - Blocks are allocated on demand, when a client first writes to another (NTB_OP_OPEN_PAIR),
 *    from a POOL in the reader's memory, by the WRITER's ntbd; the reader finds them in a
 *    DIRECTORY its own memory holds (one entry per writer slot and reader slot, written by
 *    the writer's ntbd). Memory grows with the pairs that talk, not with the square of the
 *    clients.
 *  - Loopback (two clients of one end, or one client with itself) is the same protocol over
 *    the end's own LOOPBACK memory, a memfd that never appears in a window (the NIC's
 *    internal path): its control area (this end's own objects), its directory and its pool
 *    are written by this end's ntbd; the blocks by this end's clients.
 *  - Payload of RDMA WRITE (and of READ responses the responder places) goes straight into
 *    registered memory (direct placement); small payloads and every SEND travel inline in
 *    ring messages.
 *  - One doorbell bit is enough (some profiles have 2): a writer that finds that the reader
 *    is not polling (the bell wish in the reader's block for it) writes the reader's vbell
 *    word and rings the doorbell bit the reader's slot names. Loopback writers write the
 *    reader slot's bell eventfd instead (the interrupt a NIC raises for its own loopback).
 *
 * All multi-byte fields are little-endian host order (both ends are one machine, and the
 * emulated link does not swap). Ring indices count 64-byte cells and only grow (mod 2^64).
 */
#ifndef NTB_VERBS_WIRE_H
#define NTB_VERBS_WIRE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ib_transport.h"

#define NTBV_MAGIC		0x5642544eu	/* "NTBV" */
#define NTBV_VERSION		3u
#define NTBV_MAX_SLOTS		128		/* verbs clients per end */
#define NTBV_CELL		64u		/* ring granule: one cache line */
#define NTBV_PAGE		4096u

/*
 * QP numbers carry the end that owns them (bit 23), so a QP number seen anywhere names one
 * QP of the link, and the table index in the low bits; bits 12..22 count reuse of an index.
 * 0 and 1 are IB's special QPs and never allocated.
 */
#define NTBV_QPN_SIDE		(1u << 23)
#define NTBV_QPN_INDEX_BITS	12
#define NTBV_MAX_QP		(1u << NTBV_QPN_INDEX_BITS)
#define NTBV_QPN_INDEX(qpn)	((qpn) & (NTBV_MAX_QP - 1))

#define NTBV_MAX_MR		(1u << 14)	/* key indexes per end */

/* Keys are index << 8 | variant byte (as mlx5 mkeys), so a stale key of a reused entry fails. */
#define NTBV_KEY_INDEX(key)	((key) >> 8)

/* ---------------------------------------------------------------------------------------- */
/*
 * Control area. In end X's window at NTBD_CTL_MODULE_OFF, written by end Y's ntbd: Y's
 * objects, and the layout of Y's window (where X's clients and ntbd write). In X's loopback
 * memory at offset 0, written by X's own ntbd: X's objects and the loopback memory's layout.
 * Window offsets (vbell_off .. pool_len) are from the start of the described end's inbound
 * window 0, which is its control region; loopback offsets from the start of the memfd.
 */
struct ntbv_ctrl_hdr {
	_Atomic uint32_t magic;		/* NTBV_MAGIC once the writer has initialised the area */
	uint32_t version;
	uint32_t side;			/* the writer's end */
	uint32_t max_slots;
	uint32_t max_qp;		/* entries of the QP table */
	uint32_t max_mr;		/* entries of the MR table */
	uint32_t mtu;			/* largest payload of one ring message */
	uint32_t ipv4;			/* the writer's port IPv4 address, network order */
	uint64_t qp_tbl_off;		/* from the start of this control area */
	uint64_t mr_tbl_off;
	_Atomic uint64_t gen;		/* bumped when a client of the writer came or went */
	uint8_t gid[16];		/* the writer's port GID (RoCE v2, IPv4-mapped) */
	uint8_t gid_ll[16];		/* ... and its link-local GID (from the MAC) */
	/* the described memory: where the other side's writers go */
	uint64_t vbell_off;		/* struct ntbv_vbell per slot of the described end */
	uint64_t dir_off;		/* struct ntbv_pair_ent [reader slot][writer slot] */
	uint64_t dgen_off;		/* struct ntbv_dgen per reader slot */
	uint64_t pool_off;		/* blocks, allocated by the writers' ntbd */
	uint64_t pool_len;
	uint64_t mem_len;		/* bytes of the described memory */
};

/* One verbs client of the writer's end. */
struct ntbv_slot {
	/*
	 * Even: free (or being torn down); odd: in use. Every new client of a slot gets a new
	 * epoch, so state kept about an older one is recognised as stale.
	 */
	_Atomic uint32_t epoch;
	uint32_t pid;
	uint32_t db_bit;		/* the doorbell bit that wakes it (after its vbell word) */
	/*
	 * The writer's HAL grant id of this client: its DMA channels hold engine slots in the
	 * reader's IOMMU tagged with it (pid, grant), which the reader's ntbd takes back once
	 * the epoch says the client is gone (ntb_iommu_engines_reclaim).
	 */
	uint32_t grant;
	char comm[16];
	uint8_t pad[32];
};

/* One QP of the writer's end, indexed by NTBV_QPN_INDEX(qpn). Seqlock: odd seq = changing. */
struct ntbv_qp_ent {
	_Atomic uint32_t seq;
	uint32_t qpn;			/* 0: no QP */
	uint8_t type;			/* IBV_QPT_* */
	uint8_t state;			/* IBV_QPS_* */
	uint8_t slot;			/* owner client */
	uint8_t reserved;
	uint32_t slot_epoch;
	uint32_t pd;
	uint32_t dest_qpn;		/* RC/UC from RTR */
	uint32_t qkey;			/* UD */
	uint32_t access;		/* qp_access_flags */
};

/*
 * One key of the writer's end, indexed by NTBV_KEY_INDEX(rkey). Seqlock as above. Regions with
 * remote access are here for the peer's requesters to check; regions with local write only are
 * here as sinks of the writer's own READs (access then has no IBV_ACCESS_REMOTE_* bit).
 */
struct ntbv_mr_ent {
	_Atomic uint32_t seq;
	uint32_t rkey;			/* 0: no key */
	uint32_t pd;
	uint32_t access;		/* IBV_ACCESS_* */
	uint8_t slot;
	uint8_t reserved[3];
	uint32_t slot_epoch;
	uint64_t hca_va;		/* the address requests name */
	uint64_t length;
	uint64_t win_off;		/* where hca_va is in the writer's inbound window 0,
					 * NTBV_NO_WINDOW: not mapped (ring messages only) */
};

#define NTBV_NO_WINDOW		UINT64_MAX

/*
 * Layout of a control area: header, slot table, QP table, MR table. The offsets of the tables
 * are in the header; these helpers give the canonical layout ntbd writes.
 */
#define NTBV_CTRL_SLOTS_OFF	256u
#define NTBV_CTRL_QP_OFF	(NTBV_CTRL_SLOTS_OFF + NTBV_MAX_SLOTS * sizeof(struct ntbv_slot))

static inline uint64_t ntbv_ctrl_mr_off(uint32_t max_qp)
{
	return (NTBV_CTRL_QP_OFF + (uint64_t)max_qp * sizeof(struct ntbv_qp_ent) + 63) & ~63ull;
}

static inline uint64_t ntbv_ctrl_len(uint32_t max_qp, uint32_t max_mr)
{
	uint64_t len = ntbv_ctrl_mr_off(max_qp) + (uint64_t)max_mr * sizeof(struct ntbv_mr_ent);

	return (len + NTBV_PAGE - 1) & ~(uint64_t)(NTBV_PAGE - 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Pairs: the directory, the generation words, the vbells and the blocks.                  */

/*
 * Where writer slot w's block for reader slot r is, for the incarnations (slot epochs) it was
 * opened between: dir[r * max_slots + w] in the reader's memory, written by the writer's
 * ntbd (seqlocked; seq 0 or off 0: no block). The reader consumes the block while the entry
 * is unchanged and the writer's slot is still w_epoch (or, draining what a departed writer
 * sent, w_epoch + 1); a writer's ntbd reuses the memory of a retired block only after
 * NTBV_RETIRE_NS, having cleared the entry first.
 */
struct ntbv_pair_ent {
	_Atomic uint32_t seq;
	uint32_t w_epoch;
	uint32_t r_epoch;
	uint32_t req_cells;		/* power of two */
	uint32_t resp_cells;		/* power of two */
	uint32_t reserved;
	uint64_t off;			/* the block, in the reader's memory */
};

#define NTBV_RETIRE_NS		3000000000ull

/* Bumped by the writers' ntbd whenever it changes a directory entry of this reader slot. */
struct ntbv_dgen {
	_Atomic uint64_t gen;
};

/*
 * Any writer that produced something for a reader slot while the reader was not polling
 * stores 1 here before ringing the doorbell; the reader clears it when it wakes (ntbd relays
 * the shared doorbell bit to the clients whose word is set).
 */
struct ntbv_vbell {
	_Atomic uint32_t vbell;
	uint8_t pad[NTBV_CELL - 4];
};

/*
 * What writer p asks of reader x, in the block p writes for x. A fresh (zeroed) block, or no
 * block at all, means "ring me for everything": a reader that stops polling clears the QUIET
 * bits, so a writer that has never heard from it rings rather than leaving a message unnoticed.
 */
enum ntbv_bell_flags {
	NTBV_QUIET_REQ = 1 << 0,	/* do not ring me for requests: I am polling */
	NTBV_QUIET_RESP = 1 << 1,	/* ... for responses */
	NTBV_WANT_CREDIT = 1 << 2,	/* do ring me when you consume my rings (I wait for room) */
};

/* The head of the block p writes for x (x's memory); written by p. */
struct ntbv_pair_hdr {
	/* what p produced for x (the rings of this block) */
	_Atomic uint64_t req_prod;
	_Atomic uint64_t resp_prod;
	uint8_t pad0[NTBV_CELL - 16];
	/* how far p consumed the rings of the block x writes for p (credits for x) */
	_Atomic uint64_t req_cons;
	_Atomic uint64_t resp_cons;
	uint8_t pad1[NTBV_CELL - 16];
	_Atomic uint32_t bell;		/* enum ntbv_bell_flags, about x's writes to p */
	uint32_t epoch;			/* p's slot epoch */
	uint8_t pad2[NTBV_CELL - 8];
};

/*
 * A block: header, request ring (req_cells), response ring (resp_cells), page aligned.
 * Requests carry the SEND data and short WRITEs; responses are short (ACKs, atomics, READ
 * data that could not be placed), so the response ring may be the smaller one.
 */
static inline uint64_t ntbv_block_len(uint32_t req_cells, uint32_t resp_cells)
{
	uint64_t len = sizeof(struct ntbv_pair_hdr) +
		       ((uint64_t)req_cells + resp_cells) * NTBV_CELL;

	return (len + NTBV_PAGE - 1) & ~(uint64_t)(NTBV_PAGE - 1);
}

#define NTBV_BLOCK_REQ_OFF	sizeof(struct ntbv_pair_hdr)

static inline uint64_t ntbv_block_resp_off(uint32_t req_cells)
{
	return sizeof(struct ntbv_pair_hdr) + (uint64_t)req_cells * NTBV_CELL;
}

/*
 * Ring sizes ntbd gives a block: the largest while the pool has room for them and for the
 * smallest blocks of every pair the live clients could still open, the smallest otherwise.
 * The smallest request ring holds two datagrams of a 4096-byte MTU (a message is at most
 * half a ring); response segments shrink to what half a small response ring holds.
 */
#define NTBV_REQ_CELLS_MAX	2048		/* 128 KiB */
#define NTBV_RESP_CELLS_MAX	256		/* 16 KiB */
#define NTBV_REQ_CELLS_MIN	256		/* 16 KiB */
#define NTBV_RESP_CELLS_MIN	64		/* 4 KiB */

/* The largest payload of one message in a ring of ncells (it may fill half the ring). */
static inline uint32_t ntbv_ring_max_payload(uint32_t ncells)
{
	return (ncells / 2 - 1) * NTBV_CELL;
}

/* ---------------------------------------------------------------------------------------- */
/* Ring messages. A message is a header cell followed by its inline payload (len bytes).    */

enum ntbv_msg_op {
	NTBV_OP_PAD = 0,	/* filler up to the end of the ring: skip it */
	/* requests: requester -> responder, request ring */
	NTBV_OP_SEND = 1,	/* a segment of a SEND (FIRST .. LAST), payload inline */
	NTBV_OP_WRITE = 2,	/* a segment of an RDMA WRITE, payload inline, at raddr */
	NTBV_OP_WRITE_DONE = 3,	/* an RDMA WRITE the requester placed by DMA: imm/ack only */
	NTBV_OP_READ = 4,	/* read total bytes at raddr */
	NTBV_OP_CMP_SWP = 5,	/* if *raddr == arg0 then *raddr = arg1 */
	NTBV_OP_FETCH_ADD = 6,	/* *raddr += arg0 */
	NTBV_OP_ATOMIC_WRITE = 7, /* *raddr = arg0 in one 64-bit store; acknowledged as a WRITE */
	/* responses: responder -> requester, response ring */
	NTBV_OP_ACK = 16,	/* requests up to psn (inclusive) are done */
	NTBV_OP_NAK = 17,	/* request psn failed: total = enum ntbv_nak */
	NTBV_OP_READ_RESP = 18,	/* a segment of READ data for psn, at offset raddr */
	NTBV_OP_ATOMIC_RESP = 19, /* original value (arg0) of the atomic psn */
};

enum ntbv_msg_flags {
	NTBV_F_FIRST = 1 << 0,
	NTBV_F_LAST = 1 << 1,
	NTBV_F_IMM = 1 << 2,		/* imm is valid (on LAST) */
	NTBV_F_SOLICITED = 1 << 3,
	NTBV_F_UD = 1 << 4,		/* a UD datagram: rkey carries the Q_Key */
	/*
	 * READ: the requester's buffer is registered (key arg1, address arg0): the responder may
	 * place the data there itself and answer with one READ_RESP carrying this flag and no
	 * payload (NTRDMA's READ: a push by the responder).
	 */
	NTBV_F_PLACE = 1 << 5,
	/* SEND_WITH_INV (on LAST): imm carries the rkey of a memory window to invalidate */
	NTBV_F_INV = 1 << 6,
};

/* IB NAK codes (IBTA 9.7.5.2.8 AETH syndrome) as the responder reports them. */
enum ntbv_nak {
	NTBV_NAK_RNR = 1,		/* no receive WQE: arg0 = min_rnr_timer code */
	NTBV_NAK_SEQ = 2,		/* PSN sequence error (not expected here) */
	NTBV_NAK_INV_REQ = 3,		/* invalid request: bad opcode, too long for the recv */
	NTBV_NAK_ACCESS = 4,		/* remote access error: key, range, rights */
	NTBV_NAK_OP = 5,		/* remote operational error */
};

struct ntbv_msg {
	uint8_t op;			/* enum ntbv_msg_op */
	uint8_t flags;			/* enum ntbv_msg_flags */
	uint16_t ncells;		/* cells of this message, header included (>= 1) */
	uint32_t dst_qpn;
	uint32_t src_qpn;
	uint32_t psn;			/* 24 bits: the message's sequence number (ib_psn_*) */
	uint32_t len;			/* payload bytes after the header */
	uint32_t imm;			/* immediate data, as the application gave it (__be32) */
	uint32_t rkey;			/* WRITE/READ/atomics: remote key; UD: Q_Key */
	uint32_t total;			/* FIRST: message length; READ: bytes; NAK: syndrome */
	uint64_t raddr;			/* remote address of this segment; READ_RESP: offset */
	uint64_t arg0;			/* compare / add; ATOMIC_RESP: original; NAK RNR: timer */
	uint64_t arg1;			/* swap */
	uint32_t msn;			/* ACK: message sequence number */
	uint32_t reserved;
};

static inline uint32_t ntbv_msg_cells(uint32_t payload)
{
	return 1 + (payload + NTBV_CELL - 1) / NTBV_CELL;
}

#if defined(__LP64__)
_Static_assert(sizeof(struct ntbv_ctrl_hdr) <= NTBV_CTRL_SLOTS_OFF, "ctrl header");
_Static_assert(sizeof(struct ntbv_slot) == 64, "slot");
_Static_assert(sizeof(struct ntbv_qp_ent) == 32, "qp entry");
_Static_assert(sizeof(struct ntbv_mr_ent) == 48, "mr entry");
_Static_assert(sizeof(struct ntbv_pair_hdr) == 3 * NTBV_CELL, "pair header");
_Static_assert(sizeof(struct ntbv_pair_ent) == 32, "pair directory entry");
_Static_assert(sizeof(struct ntbv_vbell) == NTBV_CELL, "vbell");
_Static_assert(sizeof(struct ntbv_msg) == NTBV_CELL, "one message header is one cell");
#endif

#endif /* NTB_VERBS_WIRE_H */
