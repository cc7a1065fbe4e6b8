// SPDX-License-Identifier: MIT
/*
 * The emulated IOMMU of one side: a sorted table of IOVA ranges -> (pid, va, perms) in shared
 * memory, edited by the owner under a sequence lock and walked by the peer's DMA engines;
 * plus the IOVA range allocator the owner uses to lay out its windows.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

#define PAGE_MASK	((uint64_t)NTB_PAGE_SIZE - 1)
#define IOVA_LO		(1ull << 32)	/* keep IOVA 0 and the low 4 GiB unused */
#define IOVA_HI		(1ull << NTB_IOVA_BITS)

/* Index of the first entry whose end is above iova (entries are sorted, disjoint). */
static uint32_t tbl_search(const struct ntb_iommu_tbl *t, uint32_t count, uint64_t iova)
{
	uint32_t lo = 0, hi = count;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		uint64_t end = reg_load_relaxed(&t->ent[mid].iova) +
			       reg_load_relaxed(&t->ent[mid].len);

		if (end <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void ent_copy(struct ntb_iommu_ent *d, const struct ntb_iommu_ent *s)
{
	d->iova = reg_load_relaxed(&s->iova);
	d->len = reg_load_relaxed(&s->len);
	d->va = reg_load_relaxed(&s->va);
	d->pid = reg_load_relaxed(&s->pid);
	d->perm = reg_load_relaxed(&s->perm);
	d->obj = reg_load_relaxed(&s->obj);
	d->obj_off = reg_load_relaxed(&s->obj_off);
}

/*
 * A sequence count stays odd only while the owner edits (microseconds). If it stays odd, the
 * owner died mid-edit: after SEQ_PATIENCE yields, readers give up (a miss: the access faults).
 */
#define SEQ_PATIENCE	100000

bool ntb_iommu_lookup(struct ntb_iommu_tbl *t, uint64_t iova, struct ntb_iommu_ent *out,
		      uint64_t *seqp)
{
	for (unsigned int tries = 0;; tries++) {
		uint64_t seq = reg_load(&t->seq);
		uint32_t count, i;
		bool hit = false;

		if (seq & 1) {
			if (tries > SEQ_PATIENCE) {
				out->iova = UINT64_MAX;
				out->len = 0;
				return false;
			}
			sched_yield();
			continue;
		}
		count = reg_load_relaxed(&t->count);
		if (count > NTB_IOMMU_MAX)
			count = NTB_IOMMU_MAX;
		i = tbl_search(t, count, iova);
		if (i < count) {
			ent_copy(out, &t->ent[i]);
			hit = out->iova <= iova && iova - out->iova < out->len;
		} else {
			out->iova = UINT64_MAX;	/* nothing mapped above iova */
			out->len = 0;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (reg_load_relaxed(&t->seq) == seq) {
			if (seqp)
				*seqp = seq;
			return hit;
		}
	}
}

/* ------------------------------------------------------------------------------------------
 * Engine slots: who may act on a lookup right now (see ntb_regs.h)
 */

uint64_t ntb_iommu_slot_tag(uint32_t grant)
{
	return (uint64_t)getpid() << 32 | grant;
}

int ntb_iommu_slot_claim(struct ntb_iommu_tbl *t, uint64_t tag)
{
	for (int i = 0; i < NTB_IOMMU_SLOTS; i++) {
		uint64_t zero = 0;

		if (__atomic_compare_exchange_n(&t->slot[i].owner, &zero, tag, false,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			reg_store(&t->slot[i].active, 0);
			return i;
		}
	}
	return -1;
}

void ntb_iommu_slot_release(struct ntb_iommu_tbl *t, int slot, uint64_t tag)
{
	uint64_t o = tag;

	if (slot < 0)
		return;
	reg_store(&t->slot[slot].active, 0);
	/* ours, revoked or not; if the table's owner took it back already, nothing to do */
	if (!__atomic_compare_exchange_n(&t->slot[slot].owner, &o, 0, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED) && o == (tag | NTB_SLOT_REVOKED))
		__atomic_compare_exchange_n(&t->slot[slot].owner, &o, 0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED);
}

bool ntb_iommu_slot_enter(struct ntb_iommu_tbl *t, int slot, uint64_t tag)
{
	for (unsigned int tries = 0;; tries++) {
		uint64_t seq = reg_load(&t->seq), a = seq + 2;

		if ((seq & 1) && tries <= SEQ_PATIENCE) {
			sched_yield();
			continue;
		}
		/* active holds seq + 2 so that 0 stays "idle" even at seq 0 */
		__atomic_store_n(&t->slot[slot].active, a, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&t->slot[slot].owner, __ATOMIC_SEQ_CST) != tag) {
			/* revoked (or taken back): write nothing more */
			__atomic_compare_exchange_n(&t->slot[slot].active, &a, 0, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
			return false;
		}
		if (__atomic_load_n(&t->seq, __ATOMIC_SEQ_CST) == seq)
			return true;
	}
}

void ntb_iommu_slot_leave(struct ntb_iommu_tbl *t, int slot)
{
	__atomic_store_n(&t->slot[slot].active, 0, __ATOMIC_RELEASE);
}

static bool pid_gone(pid_t pid)
{
	return pid <= 0 || (kill(pid, 0) && errno == ESRCH);
}

/* Free a slot whose claimant process has exited (it can never act again). */
static bool slot_free_if_dead(struct ntb_iommu_slot *s, uint64_t o)
{
	if (!o || !pid_gone(NTB_SLOT_PID(o)))
		return false;
	/* a dead claimant's active word never changes again: clear it, then free the slot */
	__atomic_store_n(&s->active, 0, __ATOMIC_SEQ_CST);
	return __atomic_compare_exchange_n(&s->owner, &o, 0, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

int ntb_iommu_engines_reclaim(struct ntb_dev *ntb,
			      bool (*keep)(void *arg, pid_t pid, uint32_t grant), void *arg)
{
	struct ntb_iommu_tbl *t;
	int held = 0;

	if (!ntb->owner)
		return -EPERM;
	t = ntb->local->iommu;
	for (int i = 0; i < NTB_IOMMU_SLOTS; i++) {
		struct ntb_iommu_slot *s = &t->slot[i];
		uint64_t o = __atomic_load_n(&s->owner, __ATOMIC_SEQ_CST);

		if (!o || slot_free_if_dead(s, o))
			continue;
		if (o & NTB_SLOT_REVOKED) {
			held++;
			continue;
		}
		/* the owner's own channels (grant 0) live as long as the peer daemon */
		if (!NTB_SLOT_GRANT(o) || !keep || keep(arg, NTB_SLOT_PID(o), NTB_SLOT_GRANT(o)))
			continue;
		if (__atomic_compare_exchange_n(&s->owner, &o, o | NTB_SLOT_REVOKED, false,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED) &&
		    !slot_free_if_dead(s, o | NTB_SLOT_REVOKED))
			held++;
	}
	return held;
}

unsigned int ntb_iommu_engines_used(const struct ntb_iommu_tbl *t)
{
	unsigned int n = 0;

	for (int i = 0; i < NTB_IOMMU_SLOTS; i++)
		n += __atomic_load_n(&t->slot[i].owner, __ATOMIC_RELAXED) != 0;
	return n;
}

/*
 * After an edit that left the table at seq: wait until no engine still acts on a lookup made
 * before it. Engines hold a slot for one batch (microseconds); a claimant that died holding
 * one is detected and its slot freed.
 */
static void iommu_quiesce(struct ntb_iommu_tbl *t, uint64_t seq)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 0; i < NTB_IOMMU_SLOTS; i++) {
		struct ntb_iommu_slot *s = &t->slot[i];
		unsigned int spins = 0;

		for (;;) {
			uint64_t a = __atomic_load_n(&s->active, __ATOMIC_SEQ_CST);

			if (!a || a >= seq + 2)
				break;
			if (++spins < 1000) {
				sched_yield();
				continue;
			}
			if (slot_free_if_dead(s, reg_load(&s->owner)))
				break;
			nanosleep(&(struct timespec){ 0, 20000 }, NULL);
		}
	}
}

static void tbl_write_begin(struct ntb_iommu_tbl *t)
{
	reg_store(&t->seq, reg_load_relaxed(&t->seq) + 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static uint64_t tbl_write_end(struct ntb_iommu_tbl *t)
{
	uint64_t seq = reg_load_relaxed(&t->seq) + 1;

	reg_store(&t->seq, seq);
	return seq;
}

/* Field-wise atomic stores: readers copy fields with atomic loads under the seqlock. */
static void ent_store(struct ntb_iommu_ent *d, const struct ntb_iommu_ent *s)
{
	__atomic_store_n(&d->iova, s->iova, __ATOMIC_RELAXED);
	__atomic_store_n(&d->len, s->len, __ATOMIC_RELAXED);
	__atomic_store_n(&d->va, s->va, __ATOMIC_RELAXED);
	__atomic_store_n(&d->pid, s->pid, __ATOMIC_RELAXED);
	__atomic_store_n(&d->perm, s->perm, __ATOMIC_RELAXED);
	__atomic_store_n(&d->obj, s->obj, __ATOMIC_RELAXED);
	__atomic_store_n(&d->obj_off, s->obj_off, __ATOMIC_RELAXED);
}

static void tbl_insert(struct ntb_iommu_tbl *t, uint32_t at, const struct ntb_iommu_ent *e)
{
	uint32_t count = t->count;

	for (uint32_t i = count; i > at; i--) {
		struct ntb_iommu_ent tmp;

		ent_copy(&tmp, &t->ent[i - 1]);
		ent_store(&t->ent[i], &tmp);
	}
	ent_store(&t->ent[at], e);
	__atomic_store_n(&t->count, count + 1, __ATOMIC_RELAXED);
}

static void tbl_remove(struct ntb_iommu_tbl *t, uint32_t at)
{
	uint32_t count = t->count;

	for (uint32_t i = at; i + 1 < count; i++) {
		struct ntb_iommu_ent tmp;

		ent_copy(&tmp, &t->ent[i + 1]);
		ent_store(&t->ent[i], &tmp);
	}
	__atomic_store_n(&t->count, count - 1, __ATOMIC_RELAXED);
}

int ntb_iommu_map(struct ntb_dev *ntb, const struct ntb_iommu_map *m)
{
	struct ntb_iommu_tbl *t;
	struct ntb_iommu_ent e = { 0 };
	struct ntb_obj *o = NULL;
	uint32_t at;

	if (!ntb->owner)
		return -EPERM;
	if (!m || !m->len || (m->iova | m->len) & PAGE_MASK || m->iova < IOVA_LO ||
	    m->iova + m->len > IOVA_HI || m->iova + m->len < m->iova ||
	    !m->perm || m->perm & ~(NTB_IOMMU_READ | NTB_IOMMU_WRITE))
		return -EINVAL;
	if (m->fd < 0 && (m->va & PAGE_MASK || m->pid <= 0 || m->va + m->len < m->va))
		return -EINVAL;
	if (m->fd >= 0 && (m->fd_offset & PAGE_MASK || (m->pid > 0 && m->va & PAGE_MASK)))
		return -EINVAL;
	t = ntb->local->iommu;
	if (t->count >= NTB_IOMMU_MAX)
		return -ENOSPC;
	at = tbl_search(t, t->count, m->iova);
	if (at < t->count && t->ent[at].iova < m->iova + m->len)
		return -EEXIST;
	e.iova = m->iova;
	e.len = m->len;
	e.perm = m->perm;
	if (m->fd >= 0) {
		void *va;

		o = calloc(1, sizeof(*o));
		if (!o)
			return -ENOMEM;
		o->fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
		if (o->fd < 0) {
			free(o);
			return -errno;
		}
		va = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, m->fd_offset);
		if (va == MAP_FAILED) {
			int err = -errno;

			close(o->fd);
			free(o);
			return err == -EACCES ? -EINVAL : err;
		}
		o->id = ntb->next_obj++;
		o->off = m->fd_offset;
		o->size = m->len;
		o->va = va;
		e.pid = getpid();
		e.va = (uintptr_t)va;
		e.obj = o->id;
		e.obj_off = m->fd_offset;
		if (m->pid > 0) {
			/* the object is also mapped at va in pid: DMA goes there */
			e.pid = m->pid;
			e.va = m->va;
		}
	} else {
		e.pid = m->pid;
		e.va = m->va;
	}
	tbl_write_begin(t);
	tbl_insert(t, at, &e);
	tbl_write_end(t);
	if (o) {
		o->next = ntb->objs;
		ntb->objs = o;
		ntb_cable_send_obj(ntb, o);
	}
	return 0;
}

static void obj_drop(struct ntb_dev *ntb, uint32_t id)
{
	for (struct ntb_obj **p = &ntb->objs; *p; p = &(*p)->next)
		if ((*p)->id == id) {
			struct ntb_obj *o = *p;

			*p = o->next;
			o->next = NULL;
			ntb_cable_send_obj_del(ntb, id);
			ntb_objs_free(&o);
			return;
		}
}

int ntb_iommu_unmap(struct ntb_dev *ntb, uint64_t iova, uint64_t len)
{
	struct ntb_iommu_tbl *t;
	uint32_t at, obj;
	uint64_t seq;

	if (!ntb->owner)
		return -EPERM;
	t = ntb->local->iommu;
	at = tbl_search(t, t->count, iova);
	if (at >= t->count || t->ent[at].iova != iova || t->ent[at].len != len)
		return -ENOENT;
	obj = t->ent[at].obj;
	tbl_write_begin(t);
	tbl_remove(t, at);
	seq = tbl_write_end(t);
	iommu_quiesce(t, seq);
	if (obj)
		obj_drop(ntb, obj);
	return 0;
}

int ntb_iommu_unmap_pid(struct ntb_dev *ntb, pid_t pid)
{
	struct ntb_iommu_tbl *t;
	uint64_t seq;
	int n = 0;

	if (!ntb->owner)
		return -EPERM;
	t = ntb->local->iommu;
	tbl_write_begin(t);
	for (uint32_t i = 0; i < t->count;) {
		if (t->ent[i].pid == pid && !t->ent[i].obj) {
			tbl_remove(t, i);
			n++;
		} else {
			i++;
		}
	}
	seq = tbl_write_end(t);
	iommu_quiesce(t, seq);
	return n;
}

void ntb_objs_free(struct ntb_obj **list)
{
	while (*list) {
		struct ntb_obj *o = *list;

		*list = o->next;
		if (o->va)
			munmap(o->va, o->size);
		if (o->fd >= 0)
			close(o->fd);
		free(o);
	}
}

/* ------------------------------------------------------------------------------------------
 * IOVA ranges
 */

int ntb_iova_alloc(struct ntb_dev *ntb, uint64_t size, uint64_t align, uint64_t *iova)
{
	uint64_t at = IOVA_LO;
	int i;

	if (!ntb->owner)
		return -EPERM;
	if (!size || size & PAGE_MASK || (align & (align - 1)) || size > IOVA_HI)
		return -EINVAL;
	if (align < NTB_PAGE_SIZE)
		align = NTB_PAGE_SIZE;
	for (i = 0; i <= ntb->niova; i++) {
		uint64_t limit = i < ntb->niova ? ntb->iova[i].start : IOVA_HI;

		at = (at + align - 1) & ~(align - 1);
		if (at + size <= limit && at + size > at)
			break;
		if (i < ntb->niova)
			at = ntb->iova[i].start + ntb->iova[i].size;
	}
	if (i > ntb->niova)
		return -ENOSPC;
	if (ntb->niova == ntb->iova_cap) {
		int cap = ntb->iova_cap ? ntb->iova_cap * 2 : 16;
		struct ntb_iova_range *n = realloc(ntb->iova, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ntb->iova = n;
		ntb->iova_cap = cap;
	}
	memmove(&ntb->iova[i + 1], &ntb->iova[i], (ntb->niova - i) * sizeof(*ntb->iova));
	ntb->iova[i] = (struct ntb_iova_range){ at, size };
	ntb->niova++;
	*iova = at;
	return 0;
}

void ntb_iova_free(struct ntb_dev *ntb, uint64_t iova, uint64_t size)
{
	for (int i = 0; i < ntb->niova; i++)
		if (ntb->iova[i].start == iova && ntb->iova[i].size == size) {
			memmove(&ntb->iova[i], &ntb->iova[i + 1],
				(ntb->niova - i - 1) * sizeof(*ntb->iova));
			ntb->niova--;
			return;
		}
}
