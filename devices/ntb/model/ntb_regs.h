/* SPDX-License-Identifier: MIT */
/*
 * The emulated NTB's per-side register file and IOMMU table: one memfd per link end, created
 * by that end's owner (ntbd) and mapped by both ends' processes. It plays the part of the
 * NTB function's BAR0 registers (Intel: SPAD, PDOORBELL/PDBMSK, xlat and limit registers;
 * IDT: NTMSG/NTMSGSTS, doorbell, lookup tables) plus the IOMMU page tables a real system
 * keeps in host memory.
 *
 * Who writes what (the rule that keeps the data path free of reads across the link):
 *   - spad[], msg_in[], msg_src[], the inbound msg status bits and db are written by the
 *     PEER (peer_spad_write, peer_msg_write, peer_db_set) and read by this side.
 *   - everything else is written by this side's owner and read by this side, or read by the
 *     peer's model as hardware would (a window's translation and the IOMMU table are what the
 *     NTB and the IOMMU consult when a peer write arrives; no driver code reads them).
 * Atomic accessors are the model's MMIO: every field is accessed with __atomic builtins.
 */
#ifndef NTB_REGS_H
#define NTB_REGS_H

#include <stdint.h>

#include "ntb_hal.h"

#define NTB_REGS_MAGIC		0x5342544eu	/* "NTBS" */
#define NTB_REGS_VERSION	2u

/* IDT NT message status layout (ntb_hw_idt.h: IDT_OUTMSG_MASK, IDT_INMSG_MASK) */
#define NTB_MSG_OUT_SHIFT	0
#define NTB_MSG_IN_SHIFT	16
#define NTB_MSG_OUTBITS		(0xfull << NTB_MSG_OUT_SHIFT)
#define NTB_MSG_INBITS		(0xfull << NTB_MSG_IN_SHIFT)

/* A window translation register pair, published with a sequence count (odd: being written). */
struct ntb_xlat {
	uint64_t seq;
	uint64_t base;			/* IOVA of the memory owner's side */
	uint64_t size;			/* 0: not translated */
};

struct ntb_regs {
	/* identity, written once at open */
	uint32_t magic;
	uint32_t version;
	uint32_t profile;		/* index into ntb_profiles[] */
	uint32_t side;
	uint64_t mw_size;		/* BAR size of every window */
	int32_t owner_pid;
	uint32_t pad0;

	/* link: written by this side's owner */
	uint32_t enabled;		/* ntb_link_enable() */
	uint32_t link_up;		/* the link state this side sees */
	uint32_t link_epoch;		/* increments each time the link comes up */
	uint32_t speed;
	uint32_t width;
	uint32_t enable_gen;		/* increments at every ntb_link_disable(): a bounce the
					 * peer's model must see even if it looks too late */

	/* counters of this side (struct ntb_stats) */
	uint64_t xlink_reads;
	uint64_t iommu_faults;
	uint64_t dropped_link;
	uint64_t db_rings;
	uint64_t db_irqs;
	uint64_t link_ups;

	/* doorbell: db written (OR) by the peer, cleared (AND-NOT) here; mask written here */
	uint64_t db;
	uint64_t db_mask;

	/* message registers: in/src written by the peer; sts in-bits set by the peer, out-bits
	 * set by this side's model when a send fails, both cleared here (W1C) */
	uint32_t msg_in[NTB_MAX_MSGS];
	uint32_t msg_src[NTB_MAX_MSGS];
	uint32_t msg_sts;
	uint32_t msg_mask;

	/* scratchpads, written by the peer (and by this side: ntb_spad_write) */
	uint32_t spad[NTB_MAX_SPADS];

	/* window translations: in_mw set here for INBOUND profiles (ntb_mw_set_trans);
	 * out_mw set here for OUTBOUND profiles (ntb_peer_mw_set_trans) */
	struct ntb_xlat in_mw[NTB_MAX_MW];
	struct ntb_xlat out_mw[NTB_MAX_MW];
};
_Static_assert(sizeof(struct ntb_regs) <= 4096, "register file fits one page");

/*
 * The IOMMU table: sorted, non-overlapping entries, published with a sequence lock (seq odd
 * while the owner edits). Readers that act on a lookup (DMA engines of the peer) hold an
 * engine slot while they do: slot.active = the seq they looked up under. An unmap waits
 * until no slot is active with an older seq, so no write can land in memory after its unmap
 * returned (the IOTLB flush of a real IOMMU).
 */
#define NTB_IOMMU_MAX		8192
#define NTB_IOMMU_SLOTS		128

struct ntb_iommu_ent {
	uint64_t iova;
	uint64_t len;
	uint64_t va;			/* address in pid's address space */
	int32_t pid;
	uint32_t perm;			/* NTB_IOMMU_READ/WRITE */
	uint32_t obj;			/* memory object id (shareable memfd), 0: process memory */
	uint32_t pad;
	uint64_t obj_off;		/* offset of iova in the object */
};

/*
 * An engine slot. The claimant is a DMA channel of a process of the peer side (or of the peer's
 * owner): owner = pid << 32 | the grant id its client handle came with (0: the owner's own
 * handle). The table's owner may revoke a slot (NTB_SLOT_REVOKED: the peer's daemon says that
 * client is gone) - the engine then drops what it would have written - and frees it once the
 * claimant process has exited (a killed client never gives its slot back itself).
 */
#define NTB_SLOT_REVOKED	(1ull << 63)
#define NTB_SLOT_PID(owner)	((pid_t)(((owner) >> 32) & 0x7fffffff))
#define NTB_SLOT_GRANT(owner)	((uint32_t)(owner))

struct ntb_iommu_slot {
	uint64_t owner;			/* 0: free */
	uint64_t active;		/* seq of the lookup in progress, 0 idle */
};

struct ntb_iommu_tbl {
	uint64_t seq;
	uint32_t count;
	uint32_t pad;
	struct ntb_iommu_slot slot[NTB_IOMMU_SLOTS];
	struct ntb_iommu_ent ent[NTB_IOMMU_MAX];
};

/* The whole per-side shared memory. */
#define NTB_SHM_REGS_OFF	0
#define NTB_SHM_IOMMU_OFF	4096
#define NTB_SHM_SIZE \
	((NTB_SHM_IOMMU_OFF + sizeof(struct ntb_iommu_tbl) + 4095) & ~(size_t)4095)

/* MMIO-like accessors on shared fields */
#define reg_load(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define reg_load_relaxed(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define reg_store(p, v)		__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define reg_or(p, v)		__atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST)
#define reg_andnot(p, v)	__atomic_fetch_and((p), ~(v), __ATOMIC_SEQ_CST)
#define reg_inc(p)		__atomic_fetch_add((p), 1, __ATOMIC_RELAXED)
#define reg_add(p, v)		__atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

#endif /* NTB_REGS_H */
