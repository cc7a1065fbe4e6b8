/* SPDX-License-Identifier: MIT */
/*
 * ntb_hal: how driver code (ntbd, the ntb provider) reaches one end of a PCIe NTB link.
 *
 * Modelled on Linux include/linux/ntb.h (v6.12, struct ntb_dev_ops and its inline wrappers)
 * for the link, memory windows, scratchpads, message registers and doorbells, plus a DMA engine
 * API modelled on dmaengine as NTRDMA's NTC uses it (include/linux/ntc.h: req_memcpy,
 * req_imm32/64, req_signal, fence-after, in-order completion). The emulated link
 * (devices/ntb/model) is the backend behind it; a real one (a kernel NTB char device, VFIO as
 * DPDK's NTB PMD does) would sit behind the same functions. Driver code never calls model
 * internals: every function here is a register load/store on the device's register file,
 * a DMA descriptor, or an interrupt (eventfd). See docs/ntb-model.md for the model itself.
 *
 * Conventions (as ntb.h): functions return 0 or a negative errno; pidx is a peer index (this
 * is a two-port link: always 0, NTB_DEF_PEER_IDX); widx a window index; bit masks are u64.
 * Events carry no payload: after an event, query the state (ntb.h: "query the link state once
 * after every link event").
 *
 * ----------------------------------------------------------------------------------------------
 * WHO CALLS WHAT
 *
 * There are two kinds of handle on the same link end:
 *
 *  - the OWNER handle, ntb_dev_open(): held by ntbd alone (one per link end, like the one Linux
 *    client bound to an ntb_dev). It owns link enable/disable, memory window translations,
 *    scratchpads, message registers, doorbell masks, the local IOMMU (which memory the peer may
 *    reach), and decides what each client process may touch (ntb_grant_export()).
 *
 *  - a CLIENT handle, ntb_client_attach(): held by the provider inside an application. It is
 *    built from one descriptor ntbd passes (SCM_RIGHTS) and gives exactly the data-path pieces
 *    the grant names: CPU mappings of the peer's window memory (PIO), ringing peer doorbell
 *    bits, waiting on / reading / clearing local doorbell bits it was given, DMA channels that
 *    write into the peer, link state, and the counters. Control operations (spads, msgs,
 *    translations, masks, IOMMU) return -EPERM on a client handle: ask ntbd.
 *
 * THREAD SAFETY
 *  - Owner handle: the control functions (link, mw, spad, msg, db mask, iommu, grant, events)
 *    are meant for one thread (ntbd's epoll loop); they are not locked against each other.
 *  - Lock-free and callable from any thread on either handle: ntb_link_is_up, ntb_db_read,
 *    ntb_db_clear, ntb_peer_db_set, the counters. They are single atomic register accesses.
 *  - DMA: a channel has one producer. ntb_dma_*() posting calls on one channel must be
 *    serialised by the caller (e.g. under the QP's send lock); different channels are
 *    independent. ntb_dma_completed() may be called from any thread. The engine runs
 *    concurrently with the producer (its own thread) or in the caller (ntb_dma_run()).
 *
 * HOW A CLIENT PROCESS GETS ITS DATA PATH
 *  1. ntbd fills a struct ntb_grant (which doorbell bits, which windows, DMA or not) and calls
 *     ntb_grant_export(): one fd. ntbd passes that fd to the provider in a bv_msg reply.
 *  2. The provider calls ntb_client_attach(fd): the HAL receives, over that fd, the register
 *     file of both ends (memfd), the peer's doorbell interrupt eventfds, the peer's IOMMU table,
 *     the memory objects backing the granted peer windows, and the eventfds of the local
 *     doorbell vectors it was granted. One fd crosses the daemon protocol, however many the
 *     grant needs.
 *  3. Data path, no daemon and in the common case no syscall:
 *       PIO   ntb_peer_mw_map() -> stores into the peer's window memory (rings, indices,
 *             inline data, vbells). Write-only by convention: a CPU load through the mapping
 *             is a read across the link (slow, and fatal if the peer dies, on hardware). The
 *             model cannot trap loads on a mapping, so it cannot count them: do not load.
 *       DMA   ntb_dma_chan_open() on the client handle: descriptors go into a ring in the
 *             client's own memory; the engine writes the peer's memory straight from the
 *             client's buffers (process_vm_writev, many iovecs per call).
 *       DB    ntb_peer_db_set(bits) rings the peer (a syscall only when the bit was clear
 *             and unmasked: the receiver has an interrupt to take). Incoming: poll
 *             ntb_event_fd() of the client handle, then ntb_db_read()/ntb_db_clear().
 *  4. A grant is a snapshot: when the link goes down (port event from ntbd) the client drops
 *     the handle (ntb_dev_close) and attaches again from a new grant after the link is back.
 *     Until then its peer writes are dropped by the model, as the hardware drops them.
 *
 * THE EMULATED IOMMU (what the peer's DMA engine may reach on this side)
 *  The owner maps local memory at IOVAs: either a shareable memory object (memfd: rings and
 *  control that the peer also CPU-maps through a window) or a range of some local process's
 *  address space (a client's registered MR: pid + va, reached by process_vm_writev/readv).
 *  The table is published in shared memory; the peer's DMA engines resolve
 *    outbound window offset -> (translation) -> this side's IOVA -> (pid, va, perms)
 *  without asking anyone. An access to an unmapped IOVA, beyond a window's translated size,
 *  or a write to a read-only mapping is an IOMMU fault: the access is dropped and counted on
 *  the target side (ntb_iommu_faults()); the initiator's descriptor still completes (PCIe
 *  posted writes are not acknowledged). ntb_iommu_unmap() returns only once no peer engine
 *  can still write the range (the IOTLB invalidation of a real IOMMU).
 *  Granularity is NTB_PAGE_SIZE: iova, va, fd offset and length must be page aligned.
 */
#ifndef NTB_HAL_H
#define NTB_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NTB_PAGE_SIZE		4096u
#define NTB_MAX_MW		8	/* windows per direction, any profile */
#define NTB_MAX_SPADS		128	/* Switchtec emulates 128 */
#define NTB_MAX_MSGS		4	/* IDT: 4 inbound + 4 outbound */
#define NTB_MAX_DB_VECTORS	32
#define NTB_DEF_PEER_IDX	0	/* ntb.h: two-port devices have one peer, index 0 */
#define NTB_DEF_PEER_CNT	1

/* ntb.h enum ntb_speed / ntb_width */
enum ntb_speed {
	NTB_SPEED_AUTO = -1,
	NTB_SPEED_NONE = 0,
	NTB_SPEED_GEN1 = 1,
	NTB_SPEED_GEN2 = 2,
	NTB_SPEED_GEN3 = 3,
	NTB_SPEED_GEN4 = 4,
};

enum ntb_width {
	NTB_WIDTH_AUTO = -1,
	NTB_WIDTH_NONE = 0,
	NTB_WIDTH_1 = 1,
	NTB_WIDTH_2 = 2,
	NTB_WIDTH_4 = 4,
	NTB_WIDTH_8 = 8,
	NTB_WIDTH_12 = 12,
	NTB_WIDTH_16 = 16,
	NTB_WIDTH_32 = 32,
};

/* ntb.h enum ntb_topo */
enum ntb_topo {
	NTB_TOPO_NONE = -1,
	NTB_TOPO_PRI,
	NTB_TOPO_SEC,
	NTB_TOPO_B2B_USD,
	NTB_TOPO_B2B_DSD,
	NTB_TOPO_SWITCH,
	NTB_TOPO_CROSSLINK,
};

/*
 * Who programs a window's translation (Documentation/driver-api/ntb.rst, "NTB memory window
 * translation"): INBOUND = the side owning the memory calls ntb_mw_set_trans() (Intel, AMD,
 * Switchtec, EPF); OUTBOUND = the side that writes calls ntb_peer_mw_set_trans() with an
 * address the memory owner sent it (IDT). The other call returns -EOPNOTSUPP.
 */
enum ntb_xlat_model {
	NTB_XLAT_INBOUND = 1,
	NTB_XLAT_OUTBOUND = 2,
};

struct ntb_dev;

/* ---------------------------------------------------------------------------------------------
 * Opening an end (ntbd) and attaching to it (a client)
 */

struct ntb_dev_params {
	const char *link;	/* the link name both ends share (config key "link") */
	int side;		/* 0 (upstream / B2B USD / port 0) or 1 */
	const char *profile;	/* "intel-gen1", "intel-gen3", "intel-gen4", "amd", "idt",
				 * "switchtec", "epf"; NULL = "intel-gen3" */
	const char *rundir;	/* where the link's rendezvous socket lives; NULL = bv_rundir() */
	uint64_t mw_size;	/* BAR (aperture) size of each window, power of two; 0 = profile
				 * default (config key "mw_size") */
};

/*
 * Open this end of the link: creates its register file and IOMMU table and plugs the cable
 * (the rendezvous with the other end's process; either may start first). The link is
 * disabled until ntb_link_enable(). Errors: -EINVAL (bad params/profile), -EADDRINUSE (this
 * side of the link is already open by a live process), -errno from the system.
 */
int ntb_dev_open(const struct ntb_dev_params *p, struct ntb_dev **out);
/* Close a handle. For the owner this unplugs the cable: the peer sees the link go down. */
void ntb_dev_close(struct ntb_dev *ntb);

/* The profile's name, topology and window translation model. */
const char *ntb_profile_name(const struct ntb_dev *ntb);
enum ntb_topo ntb_get_topo(const struct ntb_dev *ntb);
enum ntb_xlat_model ntb_xlat_model(const struct ntb_dev *ntb);
/* Owner handle or client handle. */
bool ntb_is_owner(const struct ntb_dev *ntb);

/*
 * Events. The fd is readable when something happened; ntb_events() does the work behind it
 * (the owner: cable rendezvous and hang-up, messages from the peer's model, interrupts) and
 * returns what happened since the last call; then query the state. Never blocks.
 * A client handle's fd covers the doorbell vectors of its grant only (link changes reach
 * clients as port events from ntbd).
 */
#define NTB_EVENT_LINK	(1u << 0)	/* link state may have changed: ntb_link_is_up() */
#define NTB_EVENT_DB	(1u << 1)	/* doorbell interrupt: ntb_db_read() */
#define NTB_EVENT_MSG	(1u << 2)	/* message status changed: ntb_msg_read_sts() */
int ntb_event_fd(struct ntb_dev *ntb);
uint32_t ntb_events(struct ntb_dev *ntb);

/* ---------------------------------------------------------------------------------------------
 * Ports and link (ntb.h: ntb_port_number .. ntb_link_disable)
 */
int ntb_port_number(struct ntb_dev *ntb);
int ntb_peer_port_count(struct ntb_dev *ntb);
int ntb_peer_port_number(struct ntb_dev *ntb, int pidx);
int ntb_peer_port_idx(struct ntb_dev *ntb, int port);

/*
 * Bit pidx set when the link to that peer is up: the cable is connected, both ends' processes
 * are alive, and both ends enabled the link. speed/width may be NULL.
 */
uint64_t ntb_link_is_up(struct ntb_dev *ntb, enum ntb_speed *speed, enum ntb_width *width);
/* Owner only. Enable takes the profile's speed/width (AUTO) or lower; events follow. */
int ntb_link_enable(struct ntb_dev *ntb, enum ntb_speed max_speed, enum ntb_width max_width);
/*
 * Owner only. Once it returns no write from this side passes (the model drops them and counts
 * them in ntb_stats.dropped_link); the peer's writes stop as soon as its model sees the link
 * change (the cable message), which is the closest the emulation gets to ntb.h's barrier.
 */
int ntb_link_disable(struct ntb_dev *ntb);

/* ---------------------------------------------------------------------------------------------
 * Memory windows (ntb.h: ntb_mw_count .. ntb_peer_mw_set_trans)
 *
 * Inbound window widx: what the peer reaches through its outbound window widx. Its translation
 * names an IOVA of this side's IOMMU. mw_count/mw_get_align are only meaningful with the link
 * up (ntb.h: mw_get_align "returns -ENOTCONN" otherwise).
 */
int ntb_mw_count(struct ntb_dev *ntb, int pidx);
int ntb_mw_get_align(struct ntb_dev *ntb, int pidx, int widx, uint64_t *addr_align,
		     uint64_t *size_align, uint64_t *size_max);
/*
 * Owner only, INBOUND profiles: peer accesses to its outbound window widx land at this side's
 * IOVA addr .. addr + size. addr must be a multiple of addr_align, size of size_align and
 * <= size_max, plus each driver's own rules (Switchtec: size >= 4 KiB and addr aligned to
 * 2^floor(log2(size))): -EINVAL otherwise, as the Linux drivers return. size 0 clears.
 */
int ntb_mw_set_trans(struct ntb_dev *ntb, int pidx, int widx, uint64_t addr, uint64_t size);
int ntb_mw_clear_trans(struct ntb_dev *ntb, int pidx, int widx);

/* Outbound windows: the BARs through which this side reaches the peer. */
int ntb_peer_mw_count(struct ntb_dev *ntb);
/*
 * The window's bus address and BAR size. The emulated bus address is what DMA descriptors
 * could name; the HAL's DMA calls take (widx, offset) instead.
 */
int ntb_peer_mw_get_addr(struct ntb_dev *ntb, int widx, uint64_t *base, uint64_t *size);
/*
 * Owner only, OUTBOUND profiles (IDT): this side's outbound window widx lands at the peer's
 * IOVA addr .. addr + size (the peer sent addr, e.g. over message registers).
 */
int ntb_peer_mw_set_trans(struct ntb_dev *ntb, int pidx, int widx, uint64_t addr,
			  uint64_t size);
int ntb_peer_mw_clear_trans(struct ntb_dev *ntb, int pidx, int widx);

/*
 * CPU-map outbound window widx for stores (the ioremap_wc of ntb_transport): the whole
 * translated range, *size bytes. Parts of it the peer backed with shareable memory objects are
 * mapped read/write; the rest (process memory reachable only by DMA, or unmapped IOVA) is
 * PROT_NONE, so a stray store faults here instead of corrupting anything. The mapping is a
 * snapshot of the peer's translation and IOMMU at the time of the call: the peer's protocol
 * must set them up first (the link bring-up does, for the control region). Stores through a
 * write-combining window may be reordered: put a release fence (ntb_pio_wmb) between payload
 * and the flag or doorbell that publishes it (ntb_transport: wmb() before iowrite32(flags)).
 * Owner: any window. Client: windows in its grant. -ENOTCONN with the link down, -ENXIO if
 * the peer has not translated the window.
 */
int ntb_peer_mw_map(struct ntb_dev *ntb, int widx, void **addr, uint64_t *size);
int ntb_peer_mw_unmap(struct ntb_dev *ntb, int widx);
/*
 * Owner only: what a client process mmaps to store into just one page-aligned range of
 * outbound window widx (as a kernel NTB driver would map that part of the BAR into the
 * process): a new descriptor for the peer memory object behind it and the range's offset in
 * that object. The range must lie inside one writable shareable-memory mapping of the peer's
 * IOMMU (-ENXIO otherwise: DMA-only memory or a hole). Unlike ntb_peer_mw_map this sees
 * mappings the peer made after the grant (registered memory). Stores only, as above.
 */
int ntb_peer_mw_range_fd(struct ntb_dev *ntb, int widx, uint64_t off, uint64_t len, int *fd,
			 uint64_t *fd_off);

static inline void ntb_pio_wmb(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------------------------------
 * Scratchpads (ntb.h: ntb_spad_count .. ntb_peer_spad_write). Optional: 0 on IDT.
 * Local spads are the ones the peer writes. Reads of out-of-range indexes return 0 (as
 * the Intel driver does); writes return -EINVAL. Owner only (-EPERM for clients).
 */
int ntb_spad_count(struct ntb_dev *ntb);
uint32_t ntb_spad_read(struct ntb_dev *ntb, int sidx);
int ntb_spad_write(struct ntb_dev *ntb, int sidx, uint32_t val);
int ntb_peer_spad_write(struct ntb_dev *ntb, int pidx, int sidx, uint32_t val);
/* A read across the link: counted in ntb_stats.xlink_reads. Avoid (see research §1.9). */
uint32_t ntb_peer_spad_read(struct ntb_dev *ntb, int pidx, int sidx);

/* ---------------------------------------------------------------------------------------------
 * Message registers (ntb.h: ntb_msg_count .. ntb_peer_msg_write), IDT semantics. Optional:
 * only the idt profile has them (4). Owner only.
 *
 * Status word: inbound bits (ntb_msg_inbits(), IDT 0x000F0000: bit 16+midx = inbound register
 * midx holds a message) and outbound bits (ntb_msg_outbits(), IDT 0x0000000F: bit midx =
 * the last write of outbound register midx FAILED because the peer's inbound register was
 * still full). ntb_peer_msg_write() returns 0 even then, as idt_ntb_peer_msg_write() does
 * ("Client driver shall check the status register"): check ntb_msg_read_sts() & outbits
 * after writing. The receiver reads the message, then ntb_msg_clear_sts(inbit) frees the
 * register (write-1-to-clear). A message arriving, or a failed send, raises NTB_EVENT_MSG
 * unless masked (ntb_msg_set_mask).
 */
int ntb_msg_count(struct ntb_dev *ntb);
uint64_t ntb_msg_inbits(struct ntb_dev *ntb);
uint64_t ntb_msg_outbits(struct ntb_dev *ntb);
uint64_t ntb_msg_read_sts(struct ntb_dev *ntb);
int ntb_msg_clear_sts(struct ntb_dev *ntb, uint64_t sts_bits);
int ntb_msg_set_mask(struct ntb_dev *ntb, uint64_t mask_bits);
int ntb_msg_clear_mask(struct ntb_dev *ntb, uint64_t mask_bits);
/* The message in inbound register midx; *pidx = the peer that sent it. */
uint32_t ntb_msg_read(struct ntb_dev *ntb, int *pidx, int midx);
int ntb_peer_msg_write(struct ntb_dev *ntb, int pidx, int midx, uint32_t msg);

/* ---------------------------------------------------------------------------------------------
 * Doorbells (ntb.h: ntb_db_valid_mask .. ntb_peer_db_set). Mandatory; as few as 2 bits (epf).
 *
 * Bits are sticky until the receiver clears them. An interrupt (the eventfd of the vector that
 * serves the bit) fires when a bit goes from clear to set while unmasked, and when
 * ntb_db_clear_mask() unmasks a bit that is already set (ntb.h requires it). Receive loop, as
 * ntb_transport_rxc_db: read, handle, ntb_db_clear(bits), then look for work again (a ring
 * that arrived before the clear set no new interrupt).
 */
uint64_t ntb_db_valid_mask(struct ntb_dev *ntb);
int ntb_db_vector_count(struct ntb_dev *ntb);
uint64_t ntb_db_vector_mask(struct ntb_dev *ntb, int db_vector);
/*
 * Local register. A client sees and clears only the bits of its grant; the owner all the
 * others (bits of vectors it granted away read as 0 and ntb_db_clear() of them is -EPERM).
 */
uint64_t ntb_db_read(struct ntb_dev *ntb);
int ntb_db_clear(struct ntb_dev *ntb, uint64_t db_bits);
/* Owner only. */
uint64_t ntb_db_read_mask(struct ntb_dev *ntb);
int ntb_db_set_mask(struct ntb_dev *ntb, uint64_t db_bits);
int ntb_db_clear_mask(struct ntb_dev *ntb, uint64_t db_bits);
/* Ring peer doorbell bits. A client may ring only the peer bits of its grant (-EPERM). */
int ntb_peer_db_set(struct ntb_dev *ntb, uint64_t db_bits);

/* ---------------------------------------------------------------------------------------------
 * The emulated IOMMU of this side (owner only)
 */
#define NTB_IOMMU_READ	(1u << 0)	/* the peer's DMA may read (DMA read, counted as xlink) */
#define NTB_IOMMU_WRITE	(1u << 1)	/* the peer's DMA and PIO may write */

struct ntb_iommu_map {
	uint64_t iova;		/* page aligned, chosen by the caller (ntb_iova_alloc) */
	uint64_t len;		/* page multiple */
	uint32_t perm;		/* NTB_IOMMU_* */
	/*
	 * Either a shareable memory object: fd >= 0, bytes fd_offset .. + len of it (memfd). The
	 * HAL keeps a reference and hands it to the peer, whose CPU can then map it through a
	 * window (ntb_peer_mw_map). The peer's DMA reaches it through the HAL's own mapping of
	 * it in the owner process, or, if pid > 0, at va in pid (say so when a client maps the
	 * same memfd: then the peer's DMA writes into that client's process, and payload and
	 * ring updates for one client go out in the same batch - one syscall).
	 * Or process memory: fd = -1, pid's va .. va + len (a client's registered MR);
	 * reachable by the peer's DMA only.
	 */
	int fd;
	uint64_t fd_offset;
	pid_t pid;
	uint64_t va;
};

/* -EINVAL (alignment, perm), -EEXIST (overlaps a mapping), -ENOSPC (table full). */
int ntb_iommu_map(struct ntb_dev *ntb, const struct ntb_iommu_map *map);
/* Unmap exactly a range given to ntb_iommu_map (-ENOENT otherwise); waits out peer DMA. */
int ntb_iommu_unmap(struct ntb_dev *ntb, uint64_t iova, uint64_t len);
/*
 * The memory object behind a page-aligned range of this side's IOMMU, as ntb_peer_mw_range_fd
 * gives the peer's: a new descriptor and the range's offset in it. For loopback (two
 * processes of this end): a local CPU then stores where the peer's CPU would through the
 * window. -ENXIO unless the range lies inside one writable shareable-memory mapping.
 */
int ntb_iommu_range_fd(struct ntb_dev *ntb, uint64_t iova, uint64_t len, int *fd,
		       uint64_t *fd_off);
/* Unmap every process-memory mapping of pid (a client died). Returns how many. */
int ntb_iommu_unmap_pid(struct ntb_dev *ntb, pid_t pid);

/*
 * Engine slots (owner only). Every DMA channel of the peer's processes holds one of the
 * NTB_IOMMU_SLOTS (128) slots of this side's IOMMU table while it exists (the handshake that
 * makes ntb_iommu_unmap a barrier). A channel gives its slot back when it is closed; one of a
 * process that was killed never does, so the owner reclaims them: for every slot of a peer
 * client's channel (tagged with the peer's grant id) that keep(arg, pid, grant) says is gone -
 * the peer's daemon published that its client left - the slot is revoked at once (its engine
 * writes nothing more) and freed when the process has exited; slots of exited processes are
 * freed whatever keep says. Returns how many revoked slots live processes still hold (call
 * again later), or -EPERM.
 */
int ntb_iommu_engines_reclaim(struct ntb_dev *ntb,
			      bool (*keep)(void *arg, pid_t pid, uint32_t grant), void *arg);

/*
 * A simple IOVA range allocator over this side's IOVA space (NTB_IOVA_BITS), for ntbd: e.g.
 * one BAR-size-aligned range per window, inside which the caller places its own mappings.
 */
#define NTB_IOVA_BITS	47
int ntb_iova_alloc(struct ntb_dev *ntb, uint64_t size, uint64_t align, uint64_t *iova);
void ntb_iova_free(struct ntb_dev *ntb, uint64_t iova, uint64_t size);

/* ---------------------------------------------------------------------------------------------
 * Grants: what one client process may use (owner exports, client attaches)
 */
#define NTB_GRANT_DMA	(1u << 0)	/* may open DMA channels into the peer */

struct ntb_grant {
	/*
	 * Local doorbell bits the client waits on, reads and clears. Must be whole vectors
	 * (ntb_db_vector_mask): their eventfds move to the client, and the owner's ntb_events()
	 * no longer reports them. -EBUSY if another live grant holds one of them. 0 = none (the
	 * client is woken some other way, e.g. ntbd relays the control doorbell).
	 */
	uint64_t db_bits;
	uint64_t peer_db_bits;	/* peer doorbell bits it may ring */
	uint32_t peer_mw_mask;	/* outbound windows it may CPU-map (bit widx) */
	uint32_t flags;		/* NTB_GRANT_* */
};

/*
 * Owner: package a grant. Returns an fd (>= 0) to pass to the client with SCM_RIGHTS (the
 * caller closes its copy after sending), or -errno: -ENOTCONN with the link down, -EINVAL,
 * -EBUSY. Doorbell vectors of a grant return to the owner with ntb_grant_revoke() (call it
 * when the client goes away); the grant's id is returned in *grant_id.
 */
int ntb_grant_export(struct ntb_dev *ntb, const struct ntb_grant *g, uint32_t *grant_id);
void ntb_grant_revoke(struct ntb_dev *ntb, uint32_t grant_id);
/* Client: build a handle from the fd ntbd passed (consumes the fd). */
int ntb_client_attach(int fd, struct ntb_dev **out);

/* ---------------------------------------------------------------------------------------------
 * DMA engine (either handle; clients need NTB_GRANT_DMA)
 *
 * A channel is an in-order descriptor queue. Descriptors target the peer through an outbound
 * window: (widx, offset in the window) -> the window's translation -> the peer's IOVA -> its
 * IOMMU -> (process, address). Sources are addresses in the calling process; they must stay
 * valid until the descriptor completes (like any DMA).
 *
 * Ordering: descriptors of one channel take effect in order. NTB_DMA_FENCE on a descriptor
 * ("fence after", NTC/DMA_PREP_FENCE): everything up to and including it is visible in the
 * peer's memory before any later descriptor of the channel starts. A signal descriptor is
 * always fenced before (data, then doorbell: the order ntb_transport gets from its DMA
 * callback, and NTRDMA from a fenced req_signal). Nothing is ordered across channels.
 *
 * Batching: the engine gathers consecutive writes up to the next fence or signal into one
 * process_vm_writev per target process (up to IOV_MAX iovecs, adjacent ranges merged), so
 * small writes do not cost a syscall each.
 *
 * Completion: every descriptor gets a cookie (increasing from 1 per channel); completion is in
 * order, so ntb_dma_completed() >= cookie means done. "Done" means issued to the link (PCIe
 * posted-write semantics), i.e. written into the peer's memory or dropped (IOMMU fault or
 * link down, counted in the stats) - not acknowledged by the peer's software.
 *
 * Where it runs: the engine is part of the model and runs in the process that opened the
 * channel, in an engine thread per channel that spins briefly after work and then blocks on an
 * eventfd (ntb_dma_submit wakes it with one write only if it sleeps), or, with
 * NTB_DMA_CHAN_MANUAL, only when the owner calls ntb_dma_run() (e.g. from a provider progress
 * thread that is awake anyway). Justification: docs/ntb-model.md.
 */
struct ntb_dma_chan;
typedef uint64_t ntb_dma_cookie_t;

#define NTB_DMA_CHAN_MANUAL	(1u << 0)	/* no engine thread: the caller runs it */
#define NTB_DMA_CHAN_NO_INLINE	(1u << 1)	/* ntb_dma_submit never runs descriptors */

struct ntb_dma_chan_attr {
	uint32_t depth;		/* descriptors in flight, power of two; 0 = 1024 */
	uint32_t flags;		/* NTB_DMA_CHAN_* */
	uint32_t spin_us;	/* engine spin before blocking; 0 = default (50 us) */
};

/* Descriptor flags */
#define NTB_DMA_FENCE		(1u << 0)	/* fence after this descriptor */
#define NTB_DMA_INTERRUPT	(1u << 1)	/* write the channel's event fd when it completes */

int ntb_dma_chan_open(struct ntb_dev *ntb, const struct ntb_dma_chan_attr *attr,
		      struct ntb_dma_chan **out);
/* Runs what was submitted, then stops the engine and frees the channel. */
void ntb_dma_chan_close(struct ntb_dma_chan *chan);

/*
 * Post descriptors (not yet visible to the engine: see ntb_dma_submit). Return 0 and the
 * cookie, -ENOSPC when the ring is full (wait for completions), -EINVAL for a window index
 * out of range or a zero length, -ENOTCONN with the link down.
 */
int ntb_dma_memcpy(struct ntb_dma_chan *chan, int widx, uint64_t off, const void *src,
		   size_t len, uint32_t flags, ntb_dma_cookie_t *cookie);
int ntb_dma_imm32(struct ntb_dma_chan *chan, int widx, uint64_t off, uint32_t val,
		  uint32_t flags, ntb_dma_cookie_t *cookie);
int ntb_dma_imm64(struct ntb_dma_chan *chan, int widx, uint64_t off, uint64_t val,
		  uint32_t flags, ntb_dma_cookie_t *cookie);
/* Ring peer doorbell bits after everything before it is visible (client: granted bits). */
int ntb_dma_signal(struct ntb_dma_chan *chan, uint64_t peer_db_bits, uint32_t flags,
		   ntb_dma_cookie_t *cookie);
/*
 * Read the peer's memory into dst (process_vm_readv on the resolved target). A read across
 * the link: counted in xlink_reads. For tests and slow paths; the verbs data path pushes.
 */
int ntb_dma_read(struct ntb_dma_chan *chan, void *dst, int widx, uint64_t off, size_t len,
		 uint32_t flags, ntb_dma_cookie_t *cookie);

/*
 * Issue pending descriptors (dmaengine issue_pending): a store while the engine thread is
 * awake. If it sleeps: a submit with nothing else pending runs in the caller (one syscall, no
 * thread wake-up: what a ping-pong wants), unless submits come as a stream (more than 8
 * within 20 us): then the engine thread is woken once (an eventfd write) and batches them.
 * NTB_DMA_CHAN_NO_INLINE: always the thread. MANUAL channels: only the store.
 */
void ntb_dma_submit(struct ntb_dma_chan *chan);
/* Execute up to budget submitted descriptors in the calling thread (0 = all). Returns count. */
int ntb_dma_run(struct ntb_dma_chan *chan, unsigned int budget);
/* The last completed cookie. */
ntb_dma_cookie_t ntb_dma_completed(struct ntb_dma_chan *chan);
/* Wait (spin briefly, then block) until cookie completes; -ETIMEDOUT after timeout_ms. */
int ntb_dma_wait(struct ntb_dma_chan *chan, ntb_dma_cookie_t cookie, int timeout_ms);
/* eventfd written when an NTB_DMA_INTERRUPT descriptor completes. */
int ntb_dma_event_fd(struct ntb_dma_chan *chan);

struct ntb_dma_stats {
	uint64_t descs;		/* descriptors completed */
	uint64_t bytes;		/* payload bytes written into (or read from) the peer */
	uint64_t syscalls;	/* process_vm_writev/readv calls issued */
	uint64_t faults;	/* descriptors (or parts) dropped by the peer's IOMMU */
	uint64_t dropped_link;	/* descriptors dropped because the link was down */
	uint64_t src_errors;	/* always 0 for now: process_vm_writev does not say whether
				 * the local or the remote side failed; both count as faults */
};
void ntb_dma_chan_stats(struct ntb_dma_chan *chan, struct ntb_dma_stats *st);

/* ---------------------------------------------------------------------------------------------
 * Counters of this side (shared by every process on it: ntbd and clients)
 */
struct ntb_stats {
	uint64_t xlink_reads;	/* reads of peer resources: peer spad reads, DMA reads,
				 * peer register reads. The data path must make none. */
	uint64_t iommu_faults;	/* peer accesses this side's IOMMU dropped */
	uint64_t dropped_link;	/* writes by this side dropped because the link was down */
	uint64_t db_rings;	/* peer_db_set calls from this side */
	uint64_t db_irqs;	/* interrupts (eventfd writes) this side raised on the peer */
	uint64_t link_ups;	/* times the link came up */
	uint64_t engines;	/* engine slots of this side's IOMMU held by peer DMA channels */
};
void ntb_get_stats(struct ntb_dev *ntb, struct ntb_stats *st);

#endif /* NTB_HAL_H */
