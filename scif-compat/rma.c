// SPDX-License-Identifier: MIT
/*
 * Registered windows and RMA (docs/scif.md "Windows and RMA").
 *
 * A window is a memory region (ibv_reg_mr) at an offset of the endpoint's registered address
 * space; the peer learns of it (REGISTER, acknowledged) before scif_register returns and keeps
 * a mirror of our windows (offset -> its address and remote key), as we keep one of its.
 * scif_readfrom / scif_writeto resolve both ranges to windows contiguous in offset space and
 * become RDMA READ / WRITE work requests, one per remote piece with the local pieces as its
 * scatter list. Protection and ranges are checked here before anything is posted: on verbs a
 * remote access error would kill the whole queue pair, where SCIF fails just the call.
 *
 * The RMAs of an endpoint are numbered (31 bits); the last work request of each is signaled
 * with its number, and RC completes in order, so rma_done says which RMAs have completed:
 * that is what SCIF_RMA_SYNC and the fences wait for.
 *
 * scif_vreadfrom / scif_vwriteto take any memory: up to SCIF_BOUNCE_SIZE it is copied through
 * a registered bounce ring (and, for reads, copied out when the READ completes); beyond, it
 * is registered for the call and deregistered when it completes, or kept in a small cache of
 * registrations with SCIF_RMA_USECACHE. A cached registration is used again only while the
 * same mappings back its range (backing_id): SCIF's driver drops cached pinnings when the
 * memory is unmapped, and so must we.
 *
 * scif_unregister is a handshake: the windows stop being usable at once, the peer drops them
 * from its mirror once its RMAs in flight to them completed (UNREGISTER, acknowledged), then
 * ours finish and the memory is deregistered; a window the peer still maps (scif_mmap) lives
 * on, dead, until the peer unmaps it.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "scif_priv.h"

#define VCACHE_MAX	64
#define SPANS_MAX	64

static int reg_errno(int e)
{
	switch (e) {
	case ENOMEM:
		return ENOMEM;
	case EFAULT:
	case EINVAL:
	case EACCES:
	case EPERM:
		return EFAULT;	/* memory that cannot be registered */
	default:
		return EAGAIN;
	}
}

/*
 * A window's MR: written locally (an RDMA READ landing in it) and remotely only with
 * SCIF_PROT_WRITE, which the RMA calls check before they post (scif_wintab_resolve); without it the
 * MR asks for no write at all, so read-only memory registers for SCIF_PROT_READ (a writable
 * MR is pinned for write: EFAULT on read-only pages, as Linux ib_umem_get).
 */
static int access_of(int prot)
{
	int a = 0;

	if (prot & SCIF_PROT_READ)
		a |= IBV_ACCESS_REMOTE_READ;
	if (prot & SCIF_PROT_WRITE)
		a |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	return a;
}

/*
 * Every page of [start, end) is mapped readable (and writable for write): what the Linux driver's
 * pinning (get_user_pages, FOLL_WRITE for SCIF_PROT_WRITE) demands, or scif_register fails with
 * EFAULT. A verbs provider of its own may register any address (bridgeverbs' write by pid and
 * address), so we look ourselves, in /proc/self/maps: registration is no hot path.
 */
static bool user_mapped(uintptr_t start, uintptr_t end, bool write)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uintptr_t at = start;
	char line[512];

	if (!f)
		return true;	/* cannot tell: let the registration decide */
	while (at < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || hi <= at)
			continue;
		if (lo > at || perms[0] != 'r' || (write && perms[1] != 'w'))
			break;	/* a hole, or a page we may not pin */
		at = hi;
	}
	fclose(f);
	return at >= end;
}

/*
 * The pages of scif_register windows count against RLIMIT_MEMLOCK, as the Linux driver charges
 * them to mm->pinned_vm (scif_rma.c __scif_check_inc_pinned_vm(), scif_ulimit_check on by
 * default): beyond the limit, without CAP_IPC_LOCK, ENOMEM. The v* calls' own registrations
 * are not charged (scif_register_temp() pins without SCIF_MAP_ULIMIT), nor is the library's
 * own memory (rings, bounce buffer: kernel memory in SCIF).
 */
static int pin_charge(uint64_t len)
{
	uint64_t pages = len / SCIF_PAGE_SIZE, locked;
	struct rlimit rl;

	locked = atomic_fetch_add(&scif_lib.pinned, pages) + pages;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    locked <= rl.rlim_cur / SCIF_PAGE_SIZE || scif_capable(CAP_IPC_LOCK))
		return 0;
	atomic_fetch_sub(&scif_lib.pinned, pages);
	scif_debug("register: %lu pages pinned would exceed RLIMIT_MEMLOCK (%lu pages)",
		   (unsigned long)locked, (unsigned long)(rl.rlim_cur / SCIF_PAGE_SIZE));
	return -ENOMEM;
}

static void pin_uncharge(uint64_t len)
{
	atomic_fetch_sub(&scif_lib.pinned, len / SCIF_PAGE_SIZE);
}

void scif_win_dereg(struct scif_win *w)
{
	if (!w->mr)
		return;
	ibv_dereg_mr(w->mr);
	w->mr = NULL;
	pin_uncharge(w->len);
}

off_t scif_rma_register(struct scif_ep *ep, void *addr, size_t len, off_t offset, int prot,
			int flags)
{
	struct scif_win w = { .len = len, .addr = (uintptr_t)addr, .prot = (uint32_t)prot,
			      .state = SCIF_WIN_PENDING };
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	bool charged;
	long i;
	int ret;

	pthread_mutex_lock(&ep->lock);
	ret = scif_verify(ep);
	if (ret)
		goto unlock;
	pd = ep->conn->dev->pd;	/* devices live as long as the process */
	if (flags & SCIF_MAP_FIXED) {
		/* MPSS 3: fixed offsets below 2^62; the implementation's own above */
		if ((uint64_t)offset >= SCIF_FIXED_END || (uint64_t)offset + len > SCIF_FIXED_END) {
			ret = -EADDRINUSE;
			goto unlock;
		}
		w.off = (uint64_t)offset;
	} else {
		ret = scif_wintab_alloc(&ep->lwin, len, &w.off);
		if (ret)
			goto unlock;
	}
	/* reserve the offsets while we register and tell the peer */
	ret = scif_wintab_insert(&ep->lwin, &w);
	if (ret)
		goto unlock;
	pthread_mutex_unlock(&ep->lock);

	/* the driver's order: the offset (EADDRINUSE), the limit (ENOMEM), the pages (EFAULT) */
	mr = NULL;
	ret = pin_charge(len);
	charged = !ret;
	if (!ret && !user_mapped((uintptr_t)addr, (uintptr_t)addr + len, prot & SCIF_PROT_WRITE))
		ret = -EFAULT;
	else if (!ret && !(mr = ibv_reg_mr(pd, addr, len, access_of(prot))))
		ret = -reg_errno(errno);
	if (mr) {
		ret = scif_request(ep, SCIF_OP_REGISTER, w.off, len, (uintptr_t)addr, mr->rkey,
				   (uint64_t)prot, NULL);
		if (ret) {
			ibv_dereg_mr(mr);
			mr = NULL;
		}
	}
	if (ret && charged)
		pin_uncharge(len);
	pthread_mutex_lock(&ep->lock);
	i = scif_wintab_find(&ep->lwin, w.off);
	if (i >= 0 && ep->lwin.w[i].off == w.off && ep->lwin.w[i].state == SCIF_WIN_PENDING) {
		if (ret) {
			scif_wintab_remove(&ep->lwin, (size_t)i, 1);
		} else {
			ep->lwin.w[i].mr = mr;
			ep->lwin.w[i].key = mr->lkey;
			ep->lwin.w[i].state = SCIF_WIN_LIVE;
		}
	} else if (!ret) {
		/* the endpoint was torn down meanwhile */
		ibv_dereg_mr(mr);
		pin_uncharge(len);
		ret = -ECONNRESET;
	}
unlock:
	pthread_mutex_unlock(&ep->lock);
	return ret ? ret : (off_t)w.off;
}

/* Peer: a new window of its registered address space. */
void scif_rma_peer_register(struct scif_ep *ep, const struct scif_wire_msg *m)
{
	struct scif_win w = { .off = m->arg[0], .len = m->arg[1], .addr = m->arg[2],
			      .key = (uint32_t)m->arg[3], .prot = (uint32_t)m->arg[4] };
	int ret = scif_wintab_insert(&ep->rwin, &w);

	if (ret == -EADDRINUSE)
		scif_reject_log(ep, SCIF_REJ_STATE, "a window overlapping another");
	scif_send_ctrl(ep, SCIF_OP_ACK, m->req, (uint64_t)-ret, 0, 0, 0, 0);
}

/* Peer: windows [off, off + len) go away once our RMAs issued so far complete. */
void scif_rma_peer_unregister(struct scif_ep *ep, const struct scif_wire_msg *m)
{
	struct scif_after a = { .kind = SCIF_AFTER_UNREG, .req = m->req, .off = m->arg[0],
				.len = m->arg[1] };
	size_t first, count;
	int ret = scif_wintab_whole(&ep->rwin, m->arg[0], m->arg[1], &first, &count);

	if (ret) {
		scif_reject_log(ep, SCIF_REJ_STATE, "an unregistration of no window");
		scif_send_ctrl(ep, SCIF_OP_ACK, m->req, (uint64_t)-ret, 0, 0, 0, 0);
		return;
	}
	for (size_t i = first; i < first + count; i++)
		ep->rwin.w[i].state = SCIF_WIN_DEAD;	/* no new RMA to them */
	a.seq = ep->rma_issued;
	if (scif_after_add(ep, &a))
		scif_send_ctrl(ep, SCIF_OP_ACK, m->req, ENOMEM, 0, 0, 0, 0);
}

/* Drop dead windows of the peer's mirror in [off, off + len) (under ep->lock). */
void scif_rma_drop_remote(struct scif_ep *ep, uint64_t off, uint64_t len)
{
	size_t i = 0;

	while (i < ep->rwin.n) {
		struct scif_win *w = &ep->rwin.w[i];

		if (w->state == SCIF_WIN_DEAD && w->off >= off && w->off + w->len <= off + len)
			scif_wintab_remove(&ep->rwin, i, 1);
		else
			i++;
	}
}

static bool rma_caught_up(struct scif_ep *ep, void *arg)
{
	uint32_t seq = *(uint32_t *)arg;

	return scif_seq_ge(__atomic_load_n(&ep->rma_done, __ATOMIC_ACQUIRE), seq) || ep->sq_err ||
	       ep->state != SCIF_CONNECTED;
}

int scif_rma_unregister(struct scif_ep *ep, off_t offset, size_t len)
{
	size_t first, count;
	uint32_t seq;
	int ret;

	pthread_mutex_lock(&ep->lock);
	ret = scif_verify(ep);
	if (!ret)
		ret = scif_wintab_whole(&ep->lwin, (uint64_t)offset, len, &first, &count);
	if (ret) {
		pthread_mutex_unlock(&ep->lock);
		return ret;
	}
	for (size_t i = first; i < first + count; i++)
		ep->lwin.w[i].state = SCIF_WIN_DEAD;
	seq = ep->rma_issued;
	pthread_mutex_unlock(&ep->lock);

	ret = scif_request(ep, SCIF_OP_UNREGISTER, (uint64_t)offset, len, 0, 0, 0, NULL);
	/* our own RMAs from these windows finish before the memory goes */
	scif_wait(ep, rma_caught_up, &seq, SCIF_CLOSE_TIMEOUT_NS);
	pthread_mutex_lock(&ep->lock);
	for (size_t i = 0; i < ep->lwin.n;) {
		struct scif_win *w = &ep->lwin.w[i];

		if (w->state == SCIF_WIN_DEAD && w->off >= (uint64_t)offset &&
		    w->off + w->len <= (uint64_t)offset + len && !w->maps) {
			scif_win_dereg(w);
			scif_wintab_remove(&ep->lwin, i, 1);
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&ep->lock);
	/* a peer that went away meanwhile has no windows to drop: the local ones are gone */
	return ret == -ECONNRESET || ret == -ENODEV ? 0 : ret;
}

/* The peer is gone: its windows with it (under ep->lock). */
void scif_rma_peer_gone(struct scif_ep *ep)
{
	ep->rwin.n = 0;
	for (size_t i = 0; i < ep->lwin.n; i++)
		ep->lwin.w[i].maps = 0;
}

/* Everything registered, when the endpoint itself goes (no other thread uses it). */
void scif_rma_release(struct scif_ep *ep)
{
	for (size_t i = 0; i < ep->lwin.n; i++)
		scif_win_dereg(&ep->lwin.w[i]);
	scif_wintab_free(&ep->lwin);
	scif_wintab_free(&ep->rwin);
	while (ep->vcache) {
		struct scif_vreg *v = ep->vcache;

		ep->vcache = v->next;
		ibv_dereg_mr(v->mr);
		free(v);
	}
	while (ep->after) {
		struct scif_after *a = ep->after;

		ep->after = a->next;
		if (a->kind == SCIF_AFTER_DEREG && a->mr)
			ibv_dereg_mr(a->mr);
		free(a);
	}
	if (ep->bounce_mr)
		ibv_dereg_mr(ep->bounce_mr);
	if (ep->bounce)
		munmap(ep->bounce, SCIF_BOUNCE_SIZE);
}

/* ----------------------------------------------------------------------------------------- */
/* Copies                                                                                      */

/* The local side of a copy: registered pieces (lkey, address, length) in order. */
struct lpiece {
	uint64_t addr;
	uint32_t lkey;
	uint64_t len;
};

/* Bounce ring space for len bytes, freed as RMAs complete (under ep->lock). */
static int bounce_get(struct scif_ep *ep, size_t len, uint64_t *at)
{
	struct scif_conn *c = ep->conn;
	uint64_t pos;

	if (!ep->bounce) {
		ep->bounce = mmap(NULL, SCIF_BOUNCE_SIZE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ep->bounce == MAP_FAILED) {
			ep->bounce = NULL;
			return -ENOMEM;
		}
		ep->bounce_mr = ibv_reg_mr(c->dev->pd, ep->bounce, SCIF_BOUNCE_SIZE,
					   IBV_ACCESS_LOCAL_WRITE);
		if (!ep->bounce_mr) {
			munmap(ep->bounce, SCIF_BOUNCE_SIZE);
			ep->bounce = NULL;
			return -ENOMEM;
		}
	}
	/* free what completed */
	while (ep->bounce_nuse &&
	       scif_seq_ge(__atomic_load_n(&ep->rma_done, __ATOMIC_ACQUIRE), ep->bounce_use[0].seq)) {
		ep->bounce_tail = ep->bounce_use[0].end;
		memmove(&ep->bounce_use[0], &ep->bounce_use[1],
			--ep->bounce_nuse * sizeof(ep->bounce_use[0]));
	}
	if (ep->bounce_nuse == 64)
		return -EAGAIN;
	pos = ep->bounce_head;
	/* contiguous: skip the ring's tail end if it does not fit */
	if (pos % SCIF_BOUNCE_SIZE + len > SCIF_BOUNCE_SIZE)
		pos += SCIF_BOUNCE_SIZE - pos % SCIF_BOUNCE_SIZE;
	if (pos + len - ep->bounce_tail > SCIF_BOUNCE_SIZE)
		return -EAGAIN;
	ep->bounce_head = pos + len;
	*at = pos % SCIF_BOUNCE_SIZE;
	return 0;
}

/*
 * What backs [start, end) now: a hash of the /proc/self/maps lines that cover it (addresses,
 * permissions, offset, device, inode, name); 0 if part of it is not mapped. The Linux driver
 * drops a cached pinning when its memory is unmapped (an MMU notifier, scif_rma.c); a library
 * does not see munmap, and the providers move registered pages into a memfd (docs/scif.md
 * "Windows and RMA"), so a registration kept across an munmap and a new mmap at the same
 * address would still reach the old pages: a silent corruption. Any change to those lines,
 * benign ones included (a neighbour merged into the mapping), just costs a new registration.
 */
static uint64_t backing_id(uintptr_t start, uintptr_t end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */
	uintptr_t at = start;
	char line[512];

	if (!f)
		return 0;
	while (at < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || hi <= at)
			continue;
		if (lo > at)
			break;	/* a hole */
		for (const char *c = line; *c; c++)
			h = (h ^ (uint8_t)*c) * 1099511628211ull;
		at = hi;
	}
	fclose(f);
	return at >= end && h ? h : 0;
}

/*
 * A registration of [addr, addr + len) for a v* call: cached or temporary. NULL with *err;
 * EBUSY and *busy_seq: a cached registration of memory unmapped since is still used by RMA
 * busy_seq, which must complete before the range can be registered again.
 */
static struct ibv_mr *vreg_get(struct scif_ep *ep, void *addr, size_t len, bool cache,
			       bool *temp, int *err, uint32_t *busy_seq)
{
	uintptr_t start = (uintptr_t)addr & ~(SCIF_PAGE_SIZE - 1);
	uintptr_t end = ((uintptr_t)addr + len + SCIF_PAGE_SIZE - 1) & ~(SCIF_PAGE_SIZE - 1);
	struct scif_vreg **pp, *v;
	struct ibv_mr *mr;

	*temp = false;
	if (cache) {
		for (pp = &ep->vcache; (v = *pp); pp = &v->next) {
			uint64_t id;

			if (v->start > start || v->end < end)
				continue;
			id = backing_id(v->start, v->end);
			if (id && id == v->backing) {
				/* most recent first */
				*pp = v->next;
				v->next = ep->vcache;
				ep->vcache = v;
				return v->mr;
			}
			/* stale: its pages are no longer what the addresses show */
			if (!scif_seq_ge(ep->rma_done, v->last_seq)) {
				*busy_seq = v->last_seq;
				*err = EBUSY;	/* not an ibv_reg_mr error (reg_errno) */
				return NULL;
			}
			*pp = v->next;
			ibv_dereg_mr(v->mr);
			free(v);
			ep->nvcache--;
			break;
		}
	}
	mr = ibv_reg_mr(ep->conn->dev->pd, (void *)start, end - start, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		*err = reg_errno(errno);
		return NULL;
	}
	if (!cache) {
		*temp = true;
		return mr;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		*temp = true;
		return mr;
	}
	v->start = start;
	v->end = end;
	v->mr = mr;
	v->backing = backing_id(start, end);	/* after the registration moved the pages */
	v->next = ep->vcache;
	ep->vcache = v;
	if (++ep->nvcache > VCACHE_MAX) {
		/* evict the least recent one no RMA in flight uses */
		struct scif_vreg **last = NULL;

		for (pp = &ep->vcache; *pp; pp = &(*pp)->next)
			if (scif_seq_ge(ep->rma_done, (*pp)->last_seq) && *pp != v)
				last = pp;
		if (last) {
			struct scif_vreg *old = *last;

			*last = old->next;
			ibv_dereg_mr(old->mr);
			free(old);
			ep->nvcache--;
		}
	}
	return mr;
}

static void vcache_used(struct scif_ep *ep, struct ibv_mr *mr, uint32_t seq)
{
	for (struct scif_vreg *v = ep->vcache; v; v = v->next)
		if (v->mr == mr)
			v->last_seq = seq;
}

/*
 * Post the work requests of one copy: remote pieces rs against local pieces lp, cut at
 * max_sge and the port's max message. The last request is signaled with seq; with ordered,
 * the last (partial) cache line goes last, on its own, fenced behind a read's body.
 */
static int post_copy(struct scif_ep *ep, const struct scif_span *rs, int nrs,
		     const struct lpiece *lp, int nlp, bool write, bool ordered, uint32_t seq)
{
	struct scif_conn *c = ep->conn;
	struct ibv_send_wr wr[8];
	struct ibv_sge sge[8][SCIF_MAX_SGE];
	uint64_t total = 0, tail_at, done = 0, lpoff = 0, max_msg = c->dev->max_msg;
	uint64_t end = rs[nrs - 1].off + rs[nrs - 1].len, tail = end % 64 ? end % 64 : 64;
	int li = 0, nw = 0, ret = 0;

	for (int i = 0; i < nrs; i++)
		total += rs[i].len;
	/* the last (partial) cache line of the range: a request of its own, last */
	tail_at = ordered && total > tail ? total - tail : total;
	if (!max_msg || max_msg > (1ull << 30))
		max_msg = 1ull << 30;
	pthread_mutex_lock(&ep->sq_lock);
	for (int r = 0; r < nrs && !ret; r++) {
		uint64_t roff = 0;

		while (roff < rs[r].len && !ret) {
			struct ibv_send_wr *w = &wr[nw];
			uint64_t want = rs[r].len - roff, got = 0;
			int ns = 0;

			if (want > max_msg)
				want = max_msg;
			if (done < tail_at && done + want > tail_at)
				want = tail_at - done;	/* the ordered tail is a request of its own */
			while (got < want && ns < c->max_sge) {
				uint64_t n = lp[li].len - lpoff;

				if (n > want - got)
					n = want - got;
				sge[nw][ns].addr = lp[li].addr + lpoff;
				sge[nw][ns].length = (uint32_t)n;
				sge[nw][ns].lkey = lp[li].lkey;
				ns++;
				got += n;
				lpoff += n;
				if (lpoff == lp[li].len) {
					li++;
					lpoff = 0;
				}
			}
			memset(w, 0, sizeof(*w));
			w->opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
			w->sg_list = sge[nw];
			w->num_sge = ns;
			w->wr.rdma.remote_addr = rs[r].w->addr + (rs[r].off - rs[r].w->off) + roff;
			w->wr.rdma.rkey = rs[r].w->key;
			if (!write && done == tail_at && ordered)
				w->send_flags |= IBV_SEND_FENCE;
			roff += got;
			done += got;
			if (done == total)
				w->wr_id = (uint64_t)SCIF_WR_RMA << 56 | seq;
			nw++;
			if (nw == 8 || done == total) {
				for (int k = 0; k + 1 < nw; k++)
					wr[k].next = &wr[k + 1];
				wr[nw - 1].next = NULL;
				ret = scif_sq_post(ep, wr);
				nw = 0;
			}
		}
	}
	pthread_mutex_unlock(&ep->sq_lock);
	return ret;
}

static bool rma_is_done(struct scif_ep *ep, void *arg)
{
	uint32_t seq = *(uint32_t *)arg;

	return scif_seq_ge(__atomic_load_n(&ep->rma_done, __ATOMIC_ACQUIRE), seq) || ep->sq_err ||
	       ep->state != SCIF_CONNECTED;
}

/*
 * A user buffer we may read (vwriteto) or at least find mapped (vreadfrom): its first and last
 * bytes readable and, across more pages, no hole between them (msync fails with ENOMEM where a
 * page is not mapped); the copy through the bounce ring would fault on one.
 */
static bool user_readable(const void *addr, size_t len)
{
	char b;
	struct iovec l = { .iov_base = &b, .iov_len = 1 };
	struct iovec r[2] = { { .iov_base = (void *)addr, .iov_len = 1 },
			      { .iov_base = (char *)addr + len - 1, .iov_len = 1 } };
	uintptr_t start = (uintptr_t)addr & ~(SCIF_PAGE_SIZE - 1);
	uintptr_t end = ((uintptr_t)addr + len + SCIF_PAGE_SIZE - 1) & ~(SCIF_PAGE_SIZE - 1);

	return process_vm_readv(getpid(), &l, 1, &r[0], 1, 0) == 1 &&
	       process_vm_readv(getpid(), &l, 1, &r[1], 1, 0) == 1 &&
	       (end - start <= 2 * SCIF_PAGE_SIZE || !msync((void *)start, end - start, MS_ASYNC));
}

int scif_rma_copy(struct scif_ep *ep, off_t loff, void *addr, size_t len, off_t roff,
		  int flags, bool write)
{
	struct scif_span rs[SPANS_MAX], ls[SPANS_MAX];
	struct lpiece lp[SPANS_MAX];
	struct scif_after a = { 0 };
	struct ibv_mr *vmr = NULL;
	bool temp = false, bounce = false;
	uint64_t bat = 0, bhead = 0;
	uint32_t seq, busy_seq;
	int nrs, nlp = 0, ret;

	if (roff < 0 || (!addr && loff < 0))
		return -ENXIO;
	if (addr && !user_readable(addr, len))
		return -EFAULT;
again:
	pthread_mutex_lock(&ep->lock);
	ret = scif_verify(ep);
	if (ret)
		goto unlock;
	nrs = scif_wintab_resolve(&ep->rwin, (uint64_t)roff, len,
				  write ? SCIF_PROT_WRITE : SCIF_PROT_READ, rs, SPANS_MAX);
	if (nrs < 0) {
		ret = nrs == -E2BIG ? -ENOMEM : nrs;
		goto unlock;
	}
	if (!addr) {
		nlp = scif_wintab_resolve(&ep->lwin, (uint64_t)loff, len,
					  write ? SCIF_PROT_READ : SCIF_PROT_WRITE, ls, SPANS_MAX);
		if (nlp < 0) {
			ret = nlp == -E2BIG ? -ENOMEM : nlp;
			goto unlock;
		}
		for (int i = 0; i < nlp; i++) {
			lp[i].addr = ls[i].w->addr + (ls[i].off - ls[i].w->off);
			lp[i].lkey = ls[i].w->key;
			lp[i].len = ls[i].len;
		}
	} else if (len <= SCIF_BOUNCE_SIZE / 2 && !(flags & SCIF_RMA_USECACHE)) {
		bhead = ep->bounce_head;
		while ((ret = bounce_get(ep, len, &bat)) == -EAGAIN) {
			uint32_t oldest = ep->bounce_use[0].seq;

			pthread_mutex_unlock(&ep->lock);
			scif_wait(ep, rma_is_done, &oldest, 0);
			pthread_mutex_lock(&ep->lock);
			ret = scif_verify(ep);
			if (ret)
				goto unlock;
		}
		if (ret)
			goto unlock;
		bounce = true;
		if (write)
			memcpy(ep->bounce + bat, addr, len);
		lp[0].addr = (uintptr_t)(ep->bounce + bat);
		lp[0].lkey = ep->bounce_mr->lkey;
		lp[0].len = len;
		nlp = 1;
	} else {
		vmr = vreg_get(ep, addr, len, flags & SCIF_RMA_USECACHE, &temp, &ret, &busy_seq);
		if (!vmr && ret == EBUSY) {
			/* a stale cached registration still in use: once it is not, from the top */
			pthread_mutex_unlock(&ep->lock);
			scif_wait(ep, rma_is_done, &busy_seq, 0);
			goto again;
		}
		if (!vmr) {
			ret = -ret;
			goto unlock;
		}
		lp[0].addr = (uintptr_t)addr;
		lp[0].lkey = vmr->lkey;
		lp[0].len = len;
		nlp = 1;
	}
	seq = (ep->rma_issued + 1) & 0x7fffffffu;
	ret = post_copy(ep, rs, nrs, lp, nlp, write, flags & SCIF_RMA_ORDERED, seq);
	if (ret) {
		if (temp)
			ibv_dereg_mr(vmr);
		if (bounce)
			ep->bounce_head = bhead;
		ret = ret == -ENOMEM ? -ENOMEM : -ECONNRESET;
		goto unlock;
	}
	ep->rma_issued = seq;
	if (bounce) {
		ep->bounce_use[ep->bounce_nuse].seq = seq;
		ep->bounce_use[ep->bounce_nuse].end = ep->bounce_head;
		ep->bounce_nuse++;
	}
	if (vmr && !temp)
		vcache_used(ep, vmr, seq);
	if (!(flags & SCIF_RMA_SYNC)) {
		/* what the completion leaves to do */
		if (bounce && !write) {
			a.kind = SCIF_AFTER_COPYOUT;
			a.seq = seq;
			a.addr = addr;
			a.src = ep->bounce + bat;
			a.len = len;
			ret = scif_after_add(ep, &a);
		} else if (temp) {
			a.kind = SCIF_AFTER_DEREG;
			a.seq = seq;
			a.mr = vmr;
			ret = scif_after_add(ep, &a);
		}
		goto unlock;
	}
	pthread_mutex_unlock(&ep->lock);
	scif_wait(ep, rma_is_done, &seq, 0);
	pthread_mutex_lock(&ep->lock);
	if (!scif_seq_ge(ep->rma_done, seq) || ep->sq_err) {
		ret = ep->sq_err == ENODEV || ep->conn_err == ENODEV ? -ENODEV : -ECONNRESET;
	} else if (bounce && !write) {
		memcpy(addr, ep->bounce + bat, len);
	}
	if (temp)
		ibv_dereg_mr(vmr);
unlock:
	pthread_mutex_unlock(&ep->lock);
	return ret;
}
