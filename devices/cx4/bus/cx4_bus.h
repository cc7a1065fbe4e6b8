/* SPDX-License-Identifier: MIT */
/*
 * How a driver reaches a ConnectX-4 PCI function: BAR0 (MMIO), DMA through an IOMMU, and
 * MSI-X interrupt vectors. This is the whole boundary between driver code (cx4d, the cx4
 * provider) and the device. Two backends sit behind it:
 *
 *   model  the embedded ConnectX-4 device model (devices/cx4/model), the default;
 *   vfio   a real card through /dev/vfio (devices/cx4/vfio), same interface.
 *
 * Driver code never calls into a backend's internals: it loads/stores BAR0 with the
 * accessors below, hands the device IOVAs it mapped with dma_map(), and waits on irq_fd[].
 *
 * Memory the device may DMA is mapped at an IOVA in one of two ways, like an IOMMU mapping of
 * pinned pages: memory shared through a file descriptor (memfd: queue buffers, doorbell
 * records, command queue, firmware pages — the device maps it), or another process's memory
 * named by pid and virtual address (registered memory regions: the device reaches it with
 * process_vm_readv/writev). An access to an IOVA that is not mapped, or without the
 * permission, is a DMA fault: the device reports it as the hardware does, never a wild access.
 */
#ifndef CX4_BUS_H
#define CX4_BUS_H

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define CX4_BUS_MAX_VECTORS	32

enum cx4_dma_perm {
	CX4_DMA_READ = 1 << 0,	/* device may read (host -> device) */
	CX4_DMA_WRITE = 1 << 1,	/* device may write (device -> host) */
};

struct cx4_dma_map {
	uint64_t iova;		/* page aligned */
	uint64_t len;		/* page multiple */
	uint32_t perm;		/* enum cx4_dma_perm */
	int fd;			/* >= 0: shared memory, at fd_offset */
	uint64_t fd_offset;
	pid_t pid;		/* fd < 0: this process's memory, at va */
	uint64_t va;
};

/*
 * Posted-write notification. On real hardware an MMIO store reaches the device by itself. The
 * model is a thread that sleeps when idle, so a store to a doorbell must also wake it: the
 * model publishes whether it sleeps in a word of shared memory, and the writer signals an
 * eventfd only when it does (the cost of a doorbell is a store and a load while the device is
 * busy). The VFIO backend has no kick (NULL).
 */
struct cx4_kick_page {
	_Atomic uint32_t sleeping;	/* written by the model */
	_Atomic uint32_t progress;	/* model: +1 after a pass that others wait for (futex) */
	_Atomic uint32_t waiters;	/* driver threads sleeping in cx4_wait_end() */
	uint32_t pad[13];
};

struct cx4_kick {
	struct cx4_kick_page *page;	/* shared with the device */
	int efd;			/* eventfd the device waits on */
};

static inline void cx4_kick(const struct cx4_kick *k)
{
	static const uint64_t one = 1;

	if (!k || !k->page)
		return;
	/* the doorbell store must be visible before we read whether the device sleeps */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&k->page->sleeping, memory_order_relaxed)) {
		ssize_t r = write(k->efd, &one, sizeof(one));
		(void)r;
	}
}

/*
 * Waiting for the device instead of spinning on it (model only).
 *
 * A driver with nothing to do until the device writes memory (a CQE, a drained doorbell slot)
 * polls. On a card that costs only the polling core; with UMONITOR/UMWAIT the core even sleeps
 * until the device's write. The model's engine is a thread on the same CPUs as the application,
 * so a spinning driver takes the very CPU the device needs to make the progress it waits for.
 * So after a pass that wrote CQEs or drained posted writes, the model bumps `progress` and, when
 * a driver thread says it waits, wakes the futex on it: the emulated UMWAIT. Protocol, free of
 * lost wake-ups (the model writes, then reads `waiters`; we count ourselves in, then re-read):
 *
 *	snap = cx4_wait_begin(k);
 *	if (!condition) cx4_wait_end(k, snap, timeout_ns); else cx4_wait_cancel(k);
 *
 * The timeout bounds a wait whatever the device does. Without a kick page (VFIO) nothing waits.
 */
static inline uint32_t cx4_wait_begin(const struct cx4_kick *k)
{
	atomic_fetch_add(&k->page->waiters, 1);
	return atomic_load(&k->page->progress);
}

static inline void cx4_wait_cancel(const struct cx4_kick *k)
{
	atomic_fetch_sub(&k->page->waiters, 1);
}

static inline void cx4_wait_end(const struct cx4_kick *k, uint32_t snap, long timeout_ns)
{
	struct timespec ts = { .tv_sec = timeout_ns / 1000000000l,
			       .tv_nsec = timeout_ns % 1000000000l };

	/* futex(2) FUTEX_WAIT, shared: the page is a MAP_SHARED memfd mapping in both processes */
	if (atomic_load(&k->page->progress) == snap)
		syscall(SYS_futex, &k->page->progress, FUTEX_WAIT, snap, &ts, NULL, 0);
	atomic_fetch_sub(&k->page->waiters, 1);
}

/*
 * Posted-write log (model only).
 *
 * BAR0 of the model is shared memory, and shared memory keeps only the last value stored to
 * an address. A device sees every posted write: two CQs armed back to back through the same
 * UAR register (UAR + 0x20), two EQs re-armed through UAR + 0x40, two QPs sharing BlueFlame
 * register 0, two command slots rung through 0x18 — each is a separate doorbell to the card.
 * A model that samples the register between its polls would lose all but the last (and a
 * driver waiting for the lost CQ event hangs). So every store made through the accessors
 * below is also appended, in order, to a small ring that lives in the reserved bytes
 * 0x100..0x1EF of the 4 KB BAR0 page the store targets (reserved in the init segment page
 * and in every UAR page: PRM "Initialization Segment" / "UAR Page Format"). The model drains
 * each page's ring in order, so it sees exactly the sequence of writes a PCIe device would.
 *
 * Because the ring is in the page itself, a client that maps only its own UAR pages can only
 * log writes to those pages: isolation between clients is the MMU's, as with real UARs.
 * Writers on one page may be several threads: they claim slots with an atomic increment and
 * publish each entry with its sequence number. A full ring makes the writer wait (kicking the
 * model) until the model has drained it: back-pressure, like PCIe posted-write credits. The
 * model waits for a claimed slot however long its writer takes to publish it (on a loaded
 * machine a writer descheduled while it waited for room took over 100 ms): a posted write is
 * never lost while the device and the writer live. Backends without a kick (VFIO) never touch
 * the ring.
 */
#define CX4_PW_PAGE_SIZE	4096u
#define CX4_PW_RING_OFF		0x100u	/* ring header + entries: 0x100..0x1EF */
#define CX4_PW_RING_SLOTS	14u
/* a device that has taken none of a page's writes for this long is gone (its daemon died) */
#define CX4_PW_GONE_NS		(10ll * 1000000000ll)

struct cx4_pw_entry {
	_Atomic uint32_t seq;		/* slot number + 1 once published */
	uint16_t off;			/* register offset inside the page */
	uint16_t len;			/* bytes stored (4, 8, or a BlueFlame copy's length) */
	uint8_t val[8];			/* first 8 bytes as stored (big-endian register image) */
};

struct cx4_pw_ring {
	_Atomic uint32_t tail;		/* next slot a writer claims */
	_Atomic uint32_t head;		/* next slot the model consumes */
	uint32_t rsvd[2];
	struct cx4_pw_entry e[CX4_PW_RING_SLOTS];
};

_Static_assert(CX4_PW_RING_OFF + sizeof(struct cx4_pw_ring) <= 0x1f0,
	       "posted-write ring must stay below the initializing word at 0x1FC");

/* The ring of the BAR0 page that holds `reg` (mappings are page aligned). */
static inline struct cx4_pw_ring *cx4_pw_ring_of(volatile uint8_t *reg)
{
	uintptr_t page = (uintptr_t)reg & ~(uintptr_t)(CX4_PW_PAGE_SIZE - 1);

	return (struct cx4_pw_ring *)(page + CX4_PW_RING_OFF);
}

/* Append one posted write to its page's ring; called after the store itself. */
static inline void cx4_pw_log(const struct cx4_kick *k, volatile uint8_t *reg, const void *val8,
			      uint16_t len)
{
	struct cx4_pw_ring *r = cx4_pw_ring_of(reg);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct cx4_pw_entry *e;
	unsigned long spins = 0;
	struct timespec since = { 0, 0 }, now;
	uint32_t seen = 0;

	/*
	 * Claim a slot (compare-and-swap on the tail) only once it is free, so that every claimed
	 * slot is published right after: a writer that claimed first and then gave up waiting
	 * left a slot the device never passes, and every later write to the page was lost. While
	 * the ring is full, leave the CPU to the device (it is runnable: we kicked it): spin a
	 * little, then sleep until a pass drained rings. Only a device that took nothing for
	 * CX4_PW_GONE_NS of our clock (not of our iterations: a busy device ends each wait at
	 * once) is given up on: this write is dropped then, having claimed nothing.
	 */
	for (;;) {
		uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);

		if (t - head < CX4_PW_RING_SLOTS) {
			if (atomic_compare_exchange_weak_explicit(&r->tail, &t, t + 1,
								  memory_order_relaxed,
								  memory_order_relaxed))
				break;
			continue;	/* t is the tail another writer left */
		}
		cx4_kick(k);
		if (++spins > 64) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (spins == 65 || head != seen) {
				since = now; /* the device took a write meanwhile: it is there */
				seen = head;
			} else if ((now.tv_sec - since.tv_sec) * 1000000000ll +
					   (now.tv_nsec - since.tv_nsec) >
				   CX4_PW_GONE_NS) {
				return;
			}
			uint32_t snap = cx4_wait_begin(k);

			if (t - atomic_load_explicit(&r->head, memory_order_acquire) >=
			    CX4_PW_RING_SLOTS)
				cx4_wait_end(k, snap, 100000);
			else
				cx4_wait_cancel(k);
		}
		t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	}
	e = &r->e[t % CX4_PW_RING_SLOTS];
	e->off = (uint16_t)((uintptr_t)reg & (CX4_PW_PAGE_SIZE - 1));
	e->len = len;
	__builtin_memcpy(e->val, val8, 8);
	atomic_store_explicit(&e->seq, t + 1, memory_order_release);
}

/* A mapped register window: all of BAR0 (cx4d) or one UAR page (a provider). */
struct cx4_mmio {
	volatile uint8_t *base;		/* page aligned */
	size_t len;
	const struct cx4_kick *kick;	/* NULL on real hardware */
};

/* PRM registers are big-endian; these take and return CPU-order values (iowrite32be). */
static inline void cx4_mmio_write32(const struct cx4_mmio *m, size_t off, uint32_t val)
{
	uint32_t be = __builtin_bswap32(val);

	*(volatile uint32_t *)(m->base + off) = be;
	if (m->kick) {
		uint8_t v[8] = { 0 };

		__builtin_memcpy(v, &be, 4);
		cx4_pw_log(m->kick, m->base + off, v, 4);
		cx4_kick(m->kick);
	}
}

static inline uint32_t cx4_mmio_read32(const struct cx4_mmio *m, size_t off)
{
	return __builtin_bswap32(*(volatile uint32_t *)(m->base + off));
}

/* A 64-bit doorbell (send doorbell, CQ arm): one store of the big-endian pair, as mlx5 does. */
static inline void cx4_mmio_write64_be(const struct cx4_mmio *m, size_t off, uint64_t be_val)
{
	*(volatile uint64_t *)(m->base + off) = be_val;
	if (m->kick) {
		cx4_pw_log(m->kick, m->base + off, &be_val, 8);
		cx4_kick(m->kick);
	}
}

/*
 * BlueFlame: copy a whole WQE (a multiple of 64 bytes) into the UAR's BlueFlame buffer; the
 * device takes it from there instead of fetching it from host memory.
 */
static inline void cx4_mmio_bf_copy(const struct cx4_mmio *m, size_t off, const void *src,
				    size_t bytes)
{
	const uint64_t *s = src;
	volatile uint64_t *d = (volatile uint64_t *)(m->base + off);

	for (size_t i = 0; i < bytes / 8; i++)
		d[i] = s[i];
	if (m->kick) {
		cx4_pw_log(m->kick, m->base + off, s, (uint16_t)bytes);
		cx4_kick(m->kick);
	}
}

struct cx4_bus;

struct cx4_bus_ops {
	int (*dma_map)(struct cx4_bus *bus, const struct cx4_dma_map *map);
	int (*dma_unmap)(struct cx4_bus *bus, uint64_t iova, uint64_t len);
	/* Function level reset (PCI FLR): the device forgets everything, as after power-on. */
	int (*reset)(struct cx4_bus *bus);
	void (*close)(struct cx4_bus *bus);
};

struct cx4_bus {
	const struct cx4_bus_ops *ops;
	struct cx4_mmio bar0;
	/*
	 * What a client mmap()s to reach its UAR pages: UAR page n of BAR0 is at
	 * bar0_fd_offset + n * 4096 in bar0_fd (the model: a memfd; VFIO: the device fd's BAR0
	 * region).
	 */
	int bar0_fd;
	uint64_t bar0_fd_offset;
	/* The kick for BAR0 stores, and what a client needs for its own (model only). */
	struct cx4_kick kick;
	int kick_page_fd;		/* memfd holding the cx4_kick_page, -1 for VFIO */
	unsigned int num_vectors;
	int irq_fd[CX4_BUS_MAX_VECTORS];	/* eventfd per MSI-X vector */
	void *backend;
};

#endif /* CX4_BUS_H */
