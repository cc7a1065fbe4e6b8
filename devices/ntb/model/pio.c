// SPDX-License-Identifier: MIT
/*
 * CPU mappings of outbound windows (the PIO path): the peer's window translation and IOMMU
 * decide which of its memory objects appear where in the window; we map exactly those.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "model.h"

#define PIO_MAX_ENTS	256

/* Copy the peer's IOMMU entries that overlap [base, base + size), consistently. */
static int overlapping(struct ntb_iommu_tbl *t, uint64_t base, uint64_t size,
		       struct ntb_iommu_ent *out, int max)
{
	for (unsigned int tries = 0;; tries++) {
		uint64_t seq = reg_load(&t->seq);
		uint32_t count;
		int n = 0;

		if (seq & 1) {
			if (tries > 100000)
				return 0;	/* the owner died mid-edit: map nothing */
			sched_yield();
			continue;
		}
		count = reg_load_relaxed(&t->count);
		if (count > NTB_IOMMU_MAX)
			count = NTB_IOMMU_MAX;
		for (uint32_t i = 0; i < count && n < max; i++) {
			uint64_t iova = reg_load_relaxed(&t->ent[i].iova);
			uint64_t len = reg_load_relaxed(&t->ent[i].len);

			if (iova >= base + size || iova + len <= base)
				continue;
			out[n].iova = iova;
			out[n].len = len;
			out[n].perm = reg_load_relaxed(&t->ent[i].perm);
			out[n].obj = reg_load_relaxed(&t->ent[i].obj);
			out[n].obj_off = reg_load_relaxed(&t->ent[i].obj_off);
			n++;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (reg_load_relaxed(&t->seq) == seq)
			return n;
	}
}

/*
 * The peer's IOMMU table is the peer's to write: an entry may name a part of an object that
 * the object (as announced over the cable, cable.c) does not have. Such a part stays unmapped.
 */
static bool obj_holds(const struct ntb_obj *o, uint64_t off, uint64_t len)
{
	return off >= o->off && off + len >= off && off + len <= o->off + o->size;
}

int ntb_peer_mw_map(struct ntb_dev *ntb, int widx, void **addr, uint64_t *size)
{
	struct ntb_iommu_ent *ents;
	uint64_t base, xsize;
	char *map;
	int n, err;

	if (widx < 0 || widx >= ntb->prof->mw_count || !addr || !size)
		return -EINVAL;
	if (!ntb->owner && !(ntb->g_mw_mask & (1u << widx)))
		return -EPERM;
	if (ntb->owner)
		ntb_cable_drain(ntb);
	if (!ntb_link_is_up(ntb, NULL, NULL) || !ntb->peer)
		return -ENOTCONN;
	err = ntb_xlat_read(ntb->prof, ntb->local, ntb->peer, widx, &base, &xsize);
	if (err)
		return err;
	ntb_peer_mw_unmap(ntb, widx);
	map = mmap(NULL, xsize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return -errno;
	ents = calloc(PIO_MAX_ENTS, sizeof(*ents));
	if (!ents) {
		munmap(map, xsize);
		return -ENOMEM;
	}
	n = overlapping(ntb->peer->iommu, base, xsize, ents, PIO_MAX_ENTS);
	for (int i = 0; i < n; i++) {
		const struct ntb_iommu_ent *e = &ents[i];
		uint64_t lo = e->iova > base ? e->iova : base;
		uint64_t hi = e->iova + e->len < base + xsize ? e->iova + e->len : base + xsize;
		struct ntb_obj *o;

		if (!e->obj || !(e->perm & NTB_IOMMU_WRITE))
			continue;	/* DMA-only memory, or read-only: stays PROT_NONE */
		o = ntb_obj_find(ntb->peer_objs, e->obj);
		if (!o)
			continue;
		/* window offsets must stay page aligned for mmap: IOVA and base both are */
		if ((lo - base) % NTB_PAGE_SIZE || !obj_holds(o, e->obj_off + (lo - e->iova), hi - lo))
			continue;
		if (mmap(map + (lo - base), hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 o->fd, e->obj_off + (lo - e->iova)) == MAP_FAILED) {
			err = -errno;
			munmap(map, xsize);
			free(ents);
			return err;
		}
	}
	free(ents);
	ntb->pio[widx].addr = map;
	ntb->pio[widx].size = xsize;
	*addr = map;
	*size = xsize;
	return 0;
}

int ntb_peer_mw_range_fd(struct ntb_dev *ntb, int widx, uint64_t off, uint64_t len, int *fd,
			 uint64_t *fd_off)
{
	struct ntb_iommu_ent e[2];
	struct ntb_obj *o;
	uint64_t base, xsize;
	int n, err;

	if (!ntb->owner)
		return -EPERM;
	if (widx < 0 || widx >= ntb->prof->mw_count || !fd || !fd_off || !len ||
	    (off | len) % NTB_PAGE_SIZE)
		return -EINVAL;
	ntb_cable_drain(ntb);	/* objects the peer sent meanwhile */
	if (!ntb_link_is_up(ntb, NULL, NULL) || !ntb->peer)
		return -ENOTCONN;
	err = ntb_xlat_read(ntb->prof, ntb->local, ntb->peer, widx, &base, &xsize);
	if (err)
		return err;
	if (off + len > xsize || off + len < off)
		return -EINVAL;
	n = overlapping(ntb->peer->iommu, base + off, len, e, 2);
	if (n != 1 || !e[0].obj || !(e[0].perm & NTB_IOMMU_WRITE) || e[0].iova > base + off ||
	    e[0].iova + e[0].len < base + off + len)
		return -ENXIO;
	o = ntb_obj_find(ntb->peer_objs, e[0].obj);
	if (!o || !obj_holds(o, e[0].obj_off + (base + off - e[0].iova), len))
		return -ENXIO;
	*fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	*fd_off = e[0].obj_off + (base + off - e[0].iova);
	return 0;
}

int ntb_iommu_range_fd(struct ntb_dev *ntb, uint64_t iova, uint64_t len, int *fd,
		       uint64_t *fd_off)
{
	struct ntb_iommu_ent e[2];
	struct ntb_obj *o;
	int n;

	if (!ntb->owner)
		return -EPERM;
	if (!fd || !fd_off || !len || (iova | len) % NTB_PAGE_SIZE || iova + len < iova)
		return -EINVAL;
	n = overlapping(ntb->local->iommu, iova, len, e, 2);
	if (n != 1 || !e[0].obj || !(e[0].perm & NTB_IOMMU_WRITE) || e[0].iova > iova ||
	    e[0].iova + e[0].len < iova + len)
		return -ENXIO;
	o = ntb_obj_find(ntb->objs, e[0].obj);
	if (!o)
		return -ENXIO;
	*fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	*fd_off = e[0].obj_off + (iova - e[0].iova);
	return 0;
}

int ntb_peer_mw_unmap(struct ntb_dev *ntb, int widx)
{
	if (widx < 0 || widx >= NTB_MAX_MW)
		return -EINVAL;
	if (!ntb->pio[widx].addr)
		return 0;
	munmap(ntb->pio[widx].addr, ntb->pio[widx].size);
	ntb->pio[widx].addr = NULL;
	ntb->pio[widx].size = 0;
	return 0;
}
