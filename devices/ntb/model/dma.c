// SPDX-License-Identifier: MIT
/*
 * The emulated DMA engine: in-order descriptor channels that write into the peer's memory.
 *
 * A descriptor names a destination as (outbound window, offset). The engine translates it the
 * way the hardware path does: the window's translation register gives the peer IOVA, the
 * peer's IOMMU table gives (pid, va, perms); then it writes with process_vm_writev, gathering
 * consecutive writes to one process into one call (adjacent ranges merged, up to IOV_MAX
 * iovecs) until a fence, a signal, a read, or a change of target process. Faults (no
 * translation, beyond the window, unmapped IOVA, read-only) drop the access and are counted
 * on the target side, as an IOMMU logs them; the descriptor still completes.
 *
 * The engine runs in the process that opened the channel (see docs/ntb-model.md for why):
 * either its own thread, which spins for spin_us after the last work and then sleeps on an
 * eventfd, or (NTB_DMA_CHAN_MANUAL) whoever calls ntb_dma_run().
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

#define DMA_DEF_DEPTH	1024
#define DMA_DEF_SPIN_US	50
#define DMA_IOV_MAX	1024	/* UIO_MAXIOV */
#define DMA_INLINE_RUNS		8
#define DMA_INLINE_WINDOW_NS	(DMA_INLINE_RUNS * 2500ull)	/* 2.5 us apart on average */

enum dma_op {
	DMA_OP_WRITE = 1,
	DMA_OP_IMM32,
	DMA_OP_IMM64,
	DMA_OP_SIGNAL,
	DMA_OP_READ,
};

struct dma_desc {
	uint8_t op;
	uint8_t flags;
	uint16_t widx;
	uint32_t pad;
	uint64_t off;
	uint64_t len;
	uint64_t arg;		/* source pointer, immediate, doorbell bits, read destination */
};

struct ntb_dma_chan {
	const struct ntb_profile *prof;
	struct ntb_side *local;
	struct ntb_side *peer;
	uint32_t epoch;
	uint32_t peer_epoch;
	bool owner;
	uint64_t peer_db_allowed;

	struct dma_desc *ring;
	uint64_t mask;
	uint64_t head;			/* producer only */
	uint64_t submitted;		/* producer -> engine */
	uint64_t done;			/* engine -> everyone */
	int exec;			/* one executor at a time */
	int slot;			/* our engine slot in the peer's IOMMU table */
	uint64_t tag;			/* our claim on it */

	bool manual;
	uint32_t spin_us;
	pthread_t thread;
	int stop;
	int sleeping;
	int kick_fd;
	int evt_fd;
	bool inline_ok;			/* submit may run a lone descriptor batch itself */
	unsigned int inline_idx;
	uint64_t inline_start[DMA_INLINE_RUNS];	/* when the last inline runs started */
	int waiters;
	uint32_t wake;			/* futex word: bumped after completions when waiters */

	/* translation cache: the last IOMMU entry hit, valid while the table's seq holds */
	struct ntb_iommu_ent cache;
	uint64_t cache_seq;
	bool cache_ok;

	/* the batch being gathered */
	pid_t bpid;
	int niov;
	struct iovec liov[DMA_IOV_MAX];
	struct iovec riov[DMA_IOV_MAX];

	struct ntb_dma_stats st;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void st_add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

static void fault(struct ntb_dma_chan *ch)
{
	st_add(&ch->st.faults, 1);
	reg_inc(&ch->peer->regs->iommu_faults);
}

/* ------------------------------------------------------------------------------------------
 * Executing
 */

static void flush(struct ntb_dma_chan *ch)
{
	int i = 0;

	while (i < ch->niov) {
		ssize_t want = 0, r;

		for (int k = i; k < ch->niov; k++)
			want += ch->liov[k].iov_len;
		r = process_vm_writev(ch->bpid, ch->liov + i, ch->niov - i, ch->riov + i,
				      ch->niov - i, 0);
		st_add(&ch->st.syscalls, 1);
		if (r == want) {
			st_add(&ch->st.bytes, want);
			break;
		}
		if (r < 0) {
			if (errno != EFAULT && errno != ENOMEM) {
				/* ESRCH: the target is gone; EPERM: no ptrace access to it */
				for (; i < ch->niov; i++)
					fault(ch);
				break;
			}
			r = 0;
		}
		st_add(&ch->st.bytes, r);
		while (i < ch->niov && (size_t)r >= ch->liov[i].iov_len)
			r -= ch->liov[i++].iov_len;
		/* iovec i failed part way: its memory went away under a live mapping */
		if (i < ch->niov) {
			fault(ch);
			i++;
		}
	}
	ch->niov = 0;
}

static void add_iov(struct ntb_dma_chan *ch, pid_t pid, uint64_t rva, const void *src,
		    uint64_t len)
{
	if (ch->niov) {
		struct iovec *l = &ch->liov[ch->niov - 1], *r = &ch->riov[ch->niov - 1];

		if (ch->bpid == pid && (char *)r->iov_base + r->iov_len == (char *)(uintptr_t)rva &&
		    (const char *)l->iov_base + l->iov_len == (const char *)src) {
			l->iov_len += len;
			r->iov_len += len;
			return;
		}
		if (ch->bpid != pid || ch->niov == DMA_IOV_MAX)
			flush(ch);
	}
	ch->bpid = pid;
	ch->liov[ch->niov] = (struct iovec){ (void *)src, len };
	ch->riov[ch->niov] = (struct iovec){ (void *)(uintptr_t)rva, len };
	ch->niov++;
}

/* The IOMMU entry covering iova (true), or the next one above it (false). */
static bool resolve(struct ntb_dma_chan *ch, uint64_t iova, struct ntb_iommu_ent *e)
{
	struct ntb_iommu_tbl *t = ch->peer->iommu;

	if (ch->cache_ok && reg_load(&t->seq) == ch->cache_seq &&
	    iova - ch->cache.iova < ch->cache.len) {
		*e = ch->cache;
		return true;
	}
	if (ntb_iommu_lookup(t, iova, e, &ch->cache_seq)) {
		ch->cache = *e;
		ch->cache_ok = true;
		return true;
	}
	return false;
}

/*
 * Walk (widx, off, len) through the window translation and the peer's IOMMU, calling back
 * for each mapped piece with the permission needed; counts one fault per descriptor that
 * loses any part.
 */
static void walk(struct ntb_dma_chan *ch, const struct dma_desc *d, char *buf, uint64_t len,
		 uint32_t perm, void (*piece)(struct ntb_dma_chan *, pid_t, uint64_t, char *,
					      uint64_t))
{
	uint64_t base, xsize, iova;
	bool lost = false;

	if (ntb_xlat_read(ch->prof, ch->local, ch->peer, d->widx, &base, &xsize) ||
	    d->off >= xsize) {
		fault(ch);
		return;
	}
	if (len > xsize - d->off) {
		len = xsize - d->off;	/* beyond the window's limit: dropped */
		lost = true;
	}
	iova = base + d->off;
	while (len) {
		struct ntb_iommu_ent e;
		uint64_t chunk;

		if (!resolve(ch, iova, &e)) {
			/* a hole: skip to the next mapping */
			uint64_t skip = e.iova - iova;

			lost = true;
			if (skip >= len)
				break;
			iova += skip;
			buf += skip;
			len -= skip;
			continue;
		}
		chunk = e.iova + e.len - iova;
		if (chunk > len)
			chunk = len;
		if (e.perm & perm)
			piece(ch, e.pid, e.va + (iova - e.iova), buf, chunk);
		else
			lost = true;
		iova += chunk;
		buf += chunk;
		len -= chunk;
	}
	if (lost)
		fault(ch);
}

static void write_piece(struct ntb_dma_chan *ch, pid_t pid, uint64_t rva, char *src,
			uint64_t len)
{
	add_iov(ch, pid, rva, src, len);
}

static void read_piece(struct ntb_dma_chan *ch, pid_t pid, uint64_t rva, char *dst,
		       uint64_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)rva, len };
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

	st_add(&ch->st.syscalls, 1);
	if (n > 0)
		st_add(&ch->st.bytes, n);
	if (n != (ssize_t)len)
		fault(ch);
}

static unsigned int engine_run(struct ntb_dma_chan *ch, unsigned int budget)
{
	uint64_t start, end;
	bool ok, irq = false;

	if (__atomic_exchange_n(&ch->exec, 1, __ATOMIC_ACQUIRE))
		return 0;
	start = __atomic_load_n(&ch->done, __ATOMIC_RELAXED);
	end = __atomic_load_n(&ch->submitted, __ATOMIC_ACQUIRE);
	if (budget && end - start > budget)
		end = start + budget;
	if (start == end) {
		__atomic_store_n(&ch->exec, 0, __ATOMIC_RELEASE);
		return 0;
	}
	ok = ntb_link_ok(ch->local, ch->epoch, ch->peer, ch->peer_epoch) &&
	     ntb_iommu_slot_enter(ch->peer->iommu, ch->slot, ch->tag);
	for (uint64_t i = start; i != end; i++) {
		struct dma_desc *d = &ch->ring[i & ch->mask];

		if (!ok) {
			st_add(&ch->st.dropped_link, 1);
			reg_inc(&ch->local->regs->dropped_link);
		} else {
			switch (d->op) {
			case DMA_OP_WRITE:
				walk(ch, d, (char *)(uintptr_t)d->arg, d->len, NTB_IOMMU_WRITE,
				     write_piece);
				break;
			case DMA_OP_IMM32:
			case DMA_OP_IMM64:
				/* the value lives in the descriptor until the batch is flushed */
				walk(ch, d, (char *)&d->arg, d->len, NTB_IOMMU_WRITE, write_piece);
				break;
			case DMA_OP_SIGNAL:
				flush(ch);
				ntb_side_db_set(ch->prof, ch->local, ch->peer, d->arg);
				break;
			case DMA_OP_READ:
				flush(ch);
				reg_inc(&ch->local->regs->xlink_reads);
				walk(ch, d, (char *)(uintptr_t)d->arg, d->len, NTB_IOMMU_READ,
				     read_piece);
				break;
			}
			if (d->flags & NTB_DMA_FENCE)
				flush(ch);
		}
		irq |= d->flags & NTB_DMA_INTERRUPT;
	}
	if (ok) {
		flush(ch);
		ntb_iommu_slot_leave(ch->peer->iommu, ch->slot);
	}
	st_add(&ch->st.descs, end - start);
	__atomic_store_n(&ch->done, end, __ATOMIC_RELEASE);
	__atomic_store_n(&ch->exec, 0, __ATOMIC_RELEASE);
	if (irq)
		ntb_raise(ch->evt_fd);
	if (__atomic_load_n(&ch->waiters, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&ch->wake, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &ch->wake, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	}
	return end - start;
}

static bool pending(struct ntb_dma_chan *ch)
{
	return __atomic_load_n(&ch->submitted, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&ch->done, __ATOMIC_ACQUIRE);
}

static void *engine_thread(void *arg)
{
	struct ntb_dma_chan *ch = arg;
	uint64_t spin_ns = (uint64_t)ch->spin_us * 1000, last = now_ns();
	unsigned int idle = 0;

	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		uint64_t v;

		if (engine_run(ch, 0)) {
			last = now_ns();
			idle = 0;
			continue;
		}
		/* spin briefly (pending work may be run by ntb_dma_run() in another thread) */
		if (pending(ch) || ++idle & 63 || now_ns() - last < spin_ns) {
			cpu_relax();
			continue;
		}
		__atomic_store_n(&ch->sleeping, 1, __ATOMIC_SEQ_CST);
		if (pending(ch) || __atomic_load_n(&ch->stop, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&ch->sleeping, 0, __ATOMIC_SEQ_CST);
			continue;
		}
		if (read(ch->kick_fd, &v, sizeof(v)) < 0 && errno != EINTR)
			break;
		__atomic_store_n(&ch->sleeping, 0, __ATOMIC_SEQ_CST);
		last = now_ns();
		idle = 0;
	}
	return NULL;
}

/* ------------------------------------------------------------------------------------------
 * The channel API
 */

int ntb_dma_chan_open(struct ntb_dev *ntb, const struct ntb_dma_chan_attr *attr,
		      struct ntb_dma_chan **out)
{
	struct ntb_dma_chan *ch;
	uint32_t depth = attr && attr->depth ? attr->depth : DMA_DEF_DEPTH;
	int err;

	if (!out || depth & (depth - 1) || depth > (1u << 20))
		return -EINVAL;
	if (!ntb->owner && !(ntb->g_flags & NTB_GRANT_DMA))
		return -EPERM;
	if (!ntb->peer || !ntb_link_is_up(ntb, NULL, NULL))
		return -ENOTCONN;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->kick_fd = ch->evt_fd = -1;
	ch->slot = -1;
	ch->ring = calloc(depth, sizeof(*ch->ring));
	ch->kick_fd = eventfd(0, EFD_CLOEXEC);
	ch->evt_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!ch->ring || ch->kick_fd < 0 || ch->evt_fd < 0) {
		err = -ENOMEM;
		goto fail;
	}
	ch->prof = ntb->prof;
	ch->owner = ntb->owner;
	ch->local = ntb->local;
	ch->peer = ntb->peer;
	ntb_side_get(ch->local);
	ntb_side_get(ch->peer);
	ch->epoch = ntb->owner ? reg_load(&ntb->local->regs->link_epoch) : ntb->epoch;
	ch->peer_epoch = ntb->owner ? ntb_peer_epoch_now(ntb->peer) : ntb->peer_epoch;
	ch->peer_db_allowed = ntb->owner ? ntb->prof->db_valid_mask : ntb->g_peer_db_bits;
	ch->mask = depth - 1;
	ch->manual = attr && (attr->flags & NTB_DMA_CHAN_MANUAL);
	ch->spin_us = attr && attr->spin_us ? attr->spin_us : DMA_DEF_SPIN_US;
	ch->inline_ok = !(attr && (attr->flags & NTB_DMA_CHAN_NO_INLINE));
	ch->tag = ntb_iommu_slot_tag(ntb->owner ? 0 : ntb->g_grant_id);
	ch->slot = ntb_iommu_slot_claim(ch->peer->iommu, ch->tag);
	if (ch->slot < 0) {
		err = -EBUSY;
		goto fail;
	}
	if (!ch->manual && (err = -pthread_create(&ch->thread, NULL, engine_thread, ch)))
		goto fail;
	*out = ch;
	return 0;
fail:
	if (ch->peer) {
		ntb_iommu_slot_release(ch->peer->iommu, ch->slot, ch->tag);
		ntb_side_put(ch->peer);
		ntb_side_put(ch->local);
	}
	if (ch->kick_fd >= 0)
		close(ch->kick_fd);
	if (ch->evt_fd >= 0)
		close(ch->evt_fd);
	free(ch->ring);
	free(ch);
	return err;
}

void ntb_dma_chan_close(struct ntb_dma_chan *ch)
{
	if (!ch)
		return;
	ntb_dma_submit(ch);
	if (!ch->manual) {
		__atomic_store_n(&ch->stop, 1, __ATOMIC_SEQ_CST);
		ntb_raise(ch->kick_fd);
		pthread_join(ch->thread, NULL);
	}
	while (pending(ch))
		engine_run(ch, 0);
	ntb_iommu_slot_release(ch->peer->iommu, ch->slot, ch->tag);
	ntb_side_put(ch->peer);
	ntb_side_put(ch->local);
	close(ch->kick_fd);
	close(ch->evt_fd);
	free(ch->ring);
	free(ch);
}

static int post(struct ntb_dma_chan *ch, uint8_t op, int widx, uint64_t off, uint64_t len,
		uint64_t arg, uint32_t flags, ntb_dma_cookie_t *cookie)
{
	struct dma_desc *d;

	if (flags & ~(NTB_DMA_FENCE | NTB_DMA_INTERRUPT))
		return -EINVAL;
	if (op != DMA_OP_SIGNAL && (widx < 0 || widx >= ch->prof->mw_count || !len ||
				    off + len < off))
		return -EINVAL;
	if (!ntb_link_ok(ch->local, ch->epoch, ch->peer, ch->peer_epoch))
		return -ENOTCONN;
	if (ch->head - __atomic_load_n(&ch->done, __ATOMIC_ACQUIRE) > ch->mask)
		return -ENOSPC;
	d = &ch->ring[ch->head & ch->mask];
	d->op = op;
	d->flags = flags;
	d->widx = widx;
	d->off = off;
	d->len = len;
	d->arg = arg;
	ch->head++;
	if (cookie)
		*cookie = ch->head;
	return 0;
}

int ntb_dma_memcpy(struct ntb_dma_chan *ch, int widx, uint64_t off, const void *src,
		   size_t len, uint32_t flags, ntb_dma_cookie_t *cookie)
{
	return post(ch, DMA_OP_WRITE, widx, off, len, (uintptr_t)src, flags, cookie);
}

int ntb_dma_imm32(struct ntb_dma_chan *ch, int widx, uint64_t off, uint32_t val,
		  uint32_t flags, ntb_dma_cookie_t *cookie)
{
	return post(ch, DMA_OP_IMM32, widx, off, 4, val, flags, cookie);
}

int ntb_dma_imm64(struct ntb_dma_chan *ch, int widx, uint64_t off, uint64_t val,
		  uint32_t flags, ntb_dma_cookie_t *cookie)
{
	return post(ch, DMA_OP_IMM64, widx, off, 8, val, flags, cookie);
}

int ntb_dma_signal(struct ntb_dma_chan *ch, uint64_t peer_db_bits, uint32_t flags,
		   ntb_dma_cookie_t *cookie)
{
	if (!peer_db_bits || peer_db_bits & ~ch->prof->db_valid_mask)
		return -EINVAL;
	if (peer_db_bits & ~ch->peer_db_allowed)
		return -EPERM;
	return post(ch, DMA_OP_SIGNAL, 0, 0, 0, peer_db_bits, flags, cookie);
}

int ntb_dma_read(struct ntb_dma_chan *ch, void *dst, int widx, uint64_t off, size_t len,
		 uint32_t flags, ntb_dma_cookie_t *cookie)
{
	return post(ch, DMA_OP_READ, widx, off, len, (uintptr_t)dst, flags, cookie);
}

void ntb_dma_submit(struct ntb_dma_chan *ch)
{
	bool idle = !pending(ch);
	int one = 1;

	__atomic_store_n(&ch->submitted, ch->head, __ATOMIC_SEQ_CST);
	if (ch->manual || !pending(ch))
		return;
	if (!__atomic_load_n(&ch->sleeping, __ATOMIC_SEQ_CST))
		return;		/* the engine thread is awake: it takes it from here */
	/*
	 * The engine sleeps. A submit with nothing else pending runs here and now (one
	 * syscall, no wake-up of another thread: ~50 us on two cores) - unless submits come
	 * as a stream: more than DMA_INLINE_RUNS of them within DMA_INLINE_WINDOW_NS (start to
	 * start), i.e. faster than a round trip through the peer can produce them. A stream
	 * wakes the engine thread once, and it batches (one syscall for many descriptors).
	 */
	if (ch->inline_ok && idle) {
		uint64_t t = now_ns();
		uint64_t *oldest = &ch->inline_start[ch->inline_idx % DMA_INLINE_RUNS];

		if (t - *oldest > DMA_INLINE_WINDOW_NS) {
			*oldest = t;
			ch->inline_idx++;
			if (engine_run(ch, 0) && !pending(ch))
				return;
		}
	}
	/* wake the engine only if it sleeps, and only once per sleep */
	if (__atomic_compare_exchange_n(&ch->sleeping, &one, 0, false, __ATOMIC_SEQ_CST,
					__ATOMIC_RELAXED))
		ntb_raise(ch->kick_fd);
}

int ntb_dma_run(struct ntb_dma_chan *ch, unsigned int budget)
{
	return (int)engine_run(ch, budget);
}

ntb_dma_cookie_t ntb_dma_completed(struct ntb_dma_chan *ch)
{
	return __atomic_load_n(&ch->done, __ATOMIC_ACQUIRE);
}

int ntb_dma_wait(struct ntb_dma_chan *ch, ntb_dma_cookie_t cookie, int timeout_ms)
{
	uint64_t t0 = now_ns(), spin_ns = (uint64_t)ch->spin_us * 1000;
	int ret = 0;

	if (cookie > __atomic_load_n(&ch->submitted, __ATOMIC_ACQUIRE)) {
		if (cookie > ch->head)
			return -EINVAL;
		ntb_dma_submit(ch);
	}
	while (ntb_dma_completed(ch) < cookie) {
		if (ch->manual) {
			engine_run(ch, 0);
			continue;
		}
		if (now_ns() - t0 < spin_ns) {
			cpu_relax();
			continue;
		}
		__atomic_fetch_add(&ch->waiters, 1, __ATOMIC_SEQ_CST);
		for (;;) {
			uint32_t w = __atomic_load_n(&ch->wake, __ATOMIC_SEQ_CST);
			int64_t left = timeout_ms - (int64_t)((now_ns() - t0) / 1000000);
			struct timespec ts = { left / 1000, (left % 1000) * 1000000 };

			if (ntb_dma_completed(ch) >= cookie)
				break;
			if (timeout_ms >= 0 && left <= 0) {
				ret = -ETIMEDOUT;
				break;
			}
			syscall(SYS_futex, &ch->wake, FUTEX_WAIT_PRIVATE, w,
				timeout_ms >= 0 ? &ts : NULL, NULL, 0);
		}
		__atomic_fetch_sub(&ch->waiters, 1, __ATOMIC_SEQ_CST);
		break;
	}
	return ret;
}

int ntb_dma_event_fd(struct ntb_dma_chan *ch)
{
	return ch->evt_fd;
}

void ntb_dma_chan_stats(struct ntb_dma_chan *ch, struct ntb_dma_stats *st)
{
	st->descs = __atomic_load_n(&ch->st.descs, __ATOMIC_RELAXED);
	st->bytes = __atomic_load_n(&ch->st.bytes, __ATOMIC_RELAXED);
	st->syscalls = __atomic_load_n(&ch->st.syscalls, __ATOMIC_RELAXED);
	st->faults = __atomic_load_n(&ch->st.faults, __ATOMIC_RELAXED);
	st->dropped_link = __atomic_load_n(&ch->st.dropped_link, __ATOMIC_RELAXED);
	st->src_errors = __atomic_load_n(&ch->st.src_errors, __ATOMIC_RELAXED);
}
