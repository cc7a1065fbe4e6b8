// SPDX-License-Identifier: MIT
/*
 * DMA through the VFIO type1 IOMMU: the IOVA ranges and page size the IOMMU accepts, and the
 * bus's dma_map/dma_unmap as VFIO_IOMMU_MAP_DMA / VFIO_IOMMU_UNMAP_DMA (linux/vfio.h; the
 * kernel side is drivers/vfio/vfio_iommu_type1.c: vfio_dma_do_map/vfio_dma_do_unmap).
 *
 * type1 pins and maps pages of the calling process only (vfio_pin_pages_remote works on
 * current->mm), so:
 *   fd-backed maps (memfd: queues, command queue, firmware pages) are mmap()ed here and that
 *   VA is mapped; the mmap lives as long as the mapping;
 *   maps of this process's own memory (pid 0 or getpid()) map the VA as it is;
 *   maps of another process's memory cannot be made here (EOPNOTSUPP): cx4d hands that
 *   process the container fd (cx4_vfio_container_fd) and it maps its own pages with
 *   cx4_vfio_client_dma_map() at the IOVA cx4d assigned.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vfio_priv.h"

/*
 * Without the IOVA range capability (kernels before 5.4), use the ranges rdma-core's
 * mlx5_vfio.c assumes: everything from 64 KiB to 2^39 except the x86 MSI window
 * 0xFEE00000-0xFEEFFFFF (MLX5_VFIO_IOVA_MIN1..MAX2).
 */
static const struct cx4_vfio_iova_range legacy_ranges[] = {
    {0x10000ull, 0xfedfffffull},
    {0xfef00000ull, (1ull << 39) - 1},
};

#define IOMMU_INFO_MAX 65536u /* more than any kernel reports; guards realloc */
#define CAP_CHAIN_MAX 64      /* guards a looping capability chain */

static int set_ranges(struct cx4_vfio *v, const struct cx4_vfio_iova_range *r, unsigned int n)
{
	v->ranges = calloc(n, sizeof(*r));
	if (!v->ranges)
		return cx4_vfio_fail(ENOMEM, "%s: IOVA range table", v->bdf);
	memcpy(v->ranges, r, n * sizeof(*r));
	v->nranges = n;
	return 0;
}

/* Walk the VFIO_IOMMU_GET_INFO capability chain for the IOVA ranges. 1: found, 0: absent. */
static int parse_iova_caps(struct cx4_vfio *v, const struct vfio_iommu_type1_info *info)
{
	const uint8_t *base = (const uint8_t *)info;
	uint32_t off = info->cap_offset;

	for (int i = 0; off && i < CAP_CHAIN_MAX; i++) {
		const struct vfio_info_cap_header *h = (const void *)(base + off);
		const struct vfio_iommu_type1_info_cap_iova_range *c = (const void *)h;
		struct cx4_vfio_iova_range *r;

		if (off < sizeof(*info) || off + sizeof(*h) > info->argsz || (off & 3))
			return cx4_vfio_fail(EPROTO,
					     "%s: VFIO_IOMMU_GET_INFO capability at %u "
					     "outside its %u bytes",
					     v->bdf, off, info->argsz);
		if (h->id != VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) {
			off = h->next;
			continue;
		}
		if (off + sizeof(*c) > info->argsz ||
		    (info->argsz - off - sizeof(*c)) / sizeof(c->iova_ranges[0]) < c->nr_iovas)
			return cx4_vfio_fail(EPROTO,
					     "%s: VFIO_IOMMU_GET_INFO IOVA range capability "
					     "truncated (%u ranges)",
					     v->bdf, c->nr_iovas);
		if (!c->nr_iovas)
			return cx4_vfio_fail(ENOSPC, "%s: the IOMMU reports no usable IOVA range",
					     v->bdf);
		r = calloc(c->nr_iovas, sizeof(*r));
		if (!r)
			return cx4_vfio_fail(ENOMEM, "%s: IOVA range table", v->bdf);
		for (uint32_t k = 0; k < c->nr_iovas; k++) {
			r[k].start = c->iova_ranges[k].start;
			r[k].end = c->iova_ranges[k].end;
			if (r[k].start > r[k].end || (k && r[k].start <= r[k - 1].end)) {
				uint64_t a = r[k].start, b = r[k].end;

				free(r);
				return cx4_vfio_fail(EPROTO,
						     "%s: IOVA range %u [0x%" PRIx64 ", 0x%" PRIx64
						     "] is empty or out of order",
						     v->bdf, k, a, b);
			}
		}
		v->ranges = r;
		v->nranges = c->nr_iovas;
		return 1;
	}
	if (off)
		return cx4_vfio_fail(EPROTO, "%s: VFIO_IOMMU_GET_INFO capability chain loops",
				     v->bdf);
	return 0;
}

int cx4_vfio_iommu_info(struct cx4_vfio *v)
{
	const struct cx4_vfio_sys *s = v->sys;
	struct vfio_iommu_type1_info *info = calloc(1, sizeof(*info));
	int ret;

	if (!info)
		return cx4_vfio_fail(ENOMEM, "%s: VFIO_IOMMU_GET_INFO buffer", v->bdf);
	info->argsz = sizeof(*info);
	if (s->ioctl(s->ctx, v->container_fd, VFIO_IOMMU_GET_INFO, (uintptr_t)info)) {
		ret = cx4_vfio_fail(errno, "%s: VFIO_IOMMU_GET_INFO", v->bdf);
		goto out;
	}
	/* the capability chain did not fit: the kernel says how much it needs (vfio.h) */
	if (info->argsz > sizeof(*info)) {
		uint32_t need = info->argsz;
		void *n;

		if (need > IOMMU_INFO_MAX) {
			ret = cx4_vfio_fail(EPROTO, "%s: VFIO_IOMMU_GET_INFO wants %u bytes",
					    v->bdf, need);
			goto out;
		}
		n = realloc(info, need);
		if (!n) {
			ret = cx4_vfio_fail(ENOMEM, "%s: VFIO_IOMMU_GET_INFO buffer", v->bdf);
			goto out;
		}
		info = n;
		memset(info, 0, need);
		info->argsz = need;
		if (s->ioctl(s->ctx, v->container_fd, VFIO_IOMMU_GET_INFO, (uintptr_t)info)) {
			ret = cx4_vfio_fail(errno, "%s: VFIO_IOMMU_GET_INFO (%u bytes)", v->bdf,
					    need);
			goto out;
		}
		if (info->argsz > need) {
			ret = cx4_vfio_fail(EPROTO,
					    "%s: VFIO_IOMMU_GET_INFO grew from %u to %u bytes",
					    v->bdf, need, info->argsz);
			goto out;
		}
	}
	/*
	 * The smallest IOMMU page: every map's iova, size and vaddr must be a multiple of it
	 * (vfio_dma_do_map). ConnectX-4 pages are 4 KB, so never below that.
	 */
	v->iova_pgsize = 4096;
	if (info->flags & VFIO_IOMMU_INFO_PGSIZES) {
		uint64_t p = info->iova_pgsizes;

		if (!p) {
			ret = cx4_vfio_fail(EPROTO, "%s: the IOMMU reports no page size", v->bdf);
			goto out;
		}
		p &= -p;
		if (p > v->iova_pgsize)
			v->iova_pgsize = p;
	}
	ret = 0;
	if (info->flags & VFIO_IOMMU_INFO_CAPS)
		ret = parse_iova_caps(v, info);
	if (ret == 0)
		ret = set_ranges(v, legacy_ranges, 2);
	else if (ret > 0)
		ret = 0;
out:
	free(info);
	return ret;
}

/* Index of the first mapping that ends above iova. */
static size_t find_idx(const struct cx4_vfio *v, uint64_t iova)
{
	size_t lo = 0, hi = v->nmaps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v->maps[mid].iova + v->maps[mid].len <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool in_ranges(const struct cx4_vfio *v, uint64_t first, uint64_t last)
{
	for (unsigned int i = 0; i < v->nranges; i++)
		if (first >= v->ranges[i].start && last <= v->ranges[i].end)
			return true;
	return false;
}

static uint32_t vfio_flags(uint32_t perm)
{
	return ((perm & CX4_DMA_READ) ? VFIO_DMA_MAP_FLAG_READ : 0) |
	       ((perm & CX4_DMA_WRITE) ? VFIO_DMA_MAP_FLAG_WRITE : 0);
}

static int map_ioctl(const struct cx4_vfio_sys *s, int container_fd, uint64_t vaddr, uint64_t iova,
		     uint64_t len, uint32_t perm)
{
	struct vfio_iommu_type1_dma_map m = {
	    .argsz = sizeof(m),
	    .flags = vfio_flags(perm),
	    .vaddr = vaddr,
	    .iova = iova,
	    .size = len,
	};

	return s->ioctl(s->ctx, container_fd, VFIO_IOMMU_MAP_DMA, (uintptr_t)&m) ? -errno : 0;
}

/* Returns the bytes the kernel unmapped, or -errno. */
static int64_t unmap_ioctl(const struct cx4_vfio_sys *s, int container_fd, uint64_t iova,
			   uint64_t len)
{
	struct vfio_iommu_type1_dma_unmap u = {.argsz = sizeof(u), .iova = iova, .size = len};

	if (s->ioctl(s->ctx, container_fd, VFIO_IOMMU_UNMAP_DMA, (uintptr_t)&u))
		return -errno;
	return (int64_t)u.size;
}

static int check_map_args(uint64_t iova, uint64_t len, uint32_t perm, uint64_t pgsize,
			  const char *who)
{
	if (!len || ((iova | len) & (pgsize - 1)))
		return cx4_vfio_fail(EINVAL,
				     "%s: dma_map iova 0x%" PRIx64 " len 0x%" PRIx64
				     " not a multiple of the IOMMU page 0x%" PRIx64,
				     who, iova, len, pgsize);
	if (iova + len < iova)
		return cx4_vfio_fail(EINVAL,
				     "%s: dma_map iova 0x%" PRIx64 " len 0x%" PRIx64 " wraps", who,
				     iova, len);
	if (!(perm & (CX4_DMA_READ | CX4_DMA_WRITE)) ||
	    (perm & ~(uint32_t)(CX4_DMA_READ | CX4_DMA_WRITE)))
		return cx4_vfio_fail(EINVAL, "%s: dma_map iova 0x%" PRIx64 " bad permission 0x%x",
				     who, iova, perm);
	return 0;
}

int cx4_vfio_dma_map(struct cx4_bus *bus, const struct cx4_dma_map *map)
{
	struct cx4_vfio *v = vfio_of(bus);
	const struct cx4_vfio_sys *s = v->sys;
	uint64_t iova = map->iova, len = map->len, vaddr;
	void *va = NULL;
	size_t i;
	int err;

	cx4_vfio_clear_error();
	err = check_map_args(iova, len, map->perm, v->iova_pgsize, v->bdf);
	if (err)
		return err;
	pthread_mutex_lock(&v->lock);
	if (!in_ranges(v, iova, iova + len - 1)) {
		err = cx4_vfio_fail(ERANGE,
				    "%s: dma_map [0x%" PRIx64 ", 0x%" PRIx64 "] is outside "
				    "the IOMMU's IOVA ranges",
				    v->bdf, iova, iova + len - 1);
		goto out;
	}
	i = find_idx(v, iova);
	if (i < v->nmaps && v->maps[i].iova < iova + len) {
		err = cx4_vfio_fail(EEXIST,
				    "%s: dma_map [0x%" PRIx64 ", 0x%" PRIx64 "] overlaps "
				    "the mapping at 0x%" PRIx64,
				    v->bdf, iova, iova + len - 1, v->maps[i].iova);
		goto out;
	}
	if (v->nmaps == v->capmaps) {
		size_t cap = v->capmaps ? v->capmaps * 2 : 64;
		struct vfio_map *nm = realloc(v->maps, cap * sizeof(*nm));

		if (!nm) {
			err = cx4_vfio_fail(ENOMEM, "%s: dma_map table", v->bdf);
			goto out;
		}
		v->maps = nm;
		v->capmaps = cap;
	}
	if (map->fd >= 0) {
		int prot = PROT_READ | ((map->perm & CX4_DMA_WRITE) ? PROT_WRITE : 0);

		/* type1 pins the pages writable for device writes, so the VA must be too */
		va = s->mmap(s->ctx, NULL, len, prot, MAP_SHARED, map->fd, (off_t)map->fd_offset);
		if (va == MAP_FAILED) {
			va = NULL;
			err = cx4_vfio_fail(errno,
					    "%s: dma_map: mmap of fd %d at 0x%" PRIx64
					    " (0x%" PRIx64 " bytes)",
					    v->bdf, map->fd, map->fd_offset, len);
			goto out;
		}
		vaddr = (uintptr_t)va;
	} else if (map->pid == 0 || map->pid == getpid()) {
		vaddr = map->va;
	} else {
		/*
		 * VFIO type1 can only pin pages of the process that calls VFIO_IOMMU_MAP_DMA;
		 * there is no way to map another process's memory by pid and VA from here. cx4d
		 * must pass the container fd (cx4_vfio_container_fd) to the client, which maps
		 * its own memory at the IOVA cx4d chose (cx4_vfio_client_dma_map). See
		 * docs/cx4-vfio.md and ARCHITECTURE.md.
		 */
		err = cx4_vfio_fail(EOPNOTSUPP,
				    "%s: dma_map of pid %d's memory: VFIO maps only "
				    "the caller's pages; the client must map it through the "
				    "container fd",
				    v->bdf, (int)map->pid);
		goto out;
	}
	if (vaddr & (v->iova_pgsize - 1)) {
		err = cx4_vfio_fail(EINVAL,
				    "%s: dma_map vaddr 0x%" PRIx64 " not aligned to the "
				    "IOMMU page 0x%" PRIx64,
				    v->bdf, vaddr, v->iova_pgsize);
		goto out;
	}
	err = map_ioctl(s, v->container_fd, vaddr, iova, len, map->perm);
	if (err) {
		err =
		    cx4_vfio_fail(-err, "%s: VFIO_IOMMU_MAP_DMA iova 0x%" PRIx64 " len 0x%" PRIx64,
				  v->bdf, iova, len);
		goto out;
	}
	memmove(&v->maps[i + 1], &v->maps[i], (v->nmaps - i) * sizeof(*v->maps));
	v->maps[i] = (struct vfio_map){.iova = iova, .len = len, .va = va};
	v->nmaps++;
	va = NULL;
out:
	pthread_mutex_unlock(&v->lock);
	if (va)
		s->munmap(s->ctx, va, len);
	if (err)
		errno = -err;
	return err;
}

/*
 * Unmap whole mappings that tile [iova, iova + len) exactly (as the model's IOMMU does; the
 * kernel's type1v2 also refuses to split a mapping).
 */
int cx4_vfio_dma_unmap(struct cx4_bus *bus, uint64_t iova, uint64_t len)
{
	struct cx4_vfio *v = vfio_of(bus);
	const struct cx4_vfio_sys *s = v->sys;
	size_t i, j;
	uint64_t at = iova;
	int64_t done;
	int err = 0;

	cx4_vfio_clear_error();
	pthread_mutex_lock(&v->lock);
	i = find_idx(v, iova);
	if (!len || iova + len < iova || i >= v->nmaps || v->maps[i].iova != iova) {
		err = cx4_vfio_fail(ENOENT,
				    "%s: dma_unmap iova 0x%" PRIx64 " len 0x%" PRIx64
				    ": no mapping starts there",
				    v->bdf, iova, len);
		goto out;
	}
	for (j = i; j < v->nmaps && at < iova + len; j++) {
		if (v->maps[j].iova != at)
			break;
		at += v->maps[j].len;
	}
	if (at != iova + len) {
		err = cx4_vfio_fail(EINVAL,
				    "%s: dma_unmap [0x%" PRIx64 ", 0x%" PRIx64 "] does not "
				    "cover whole mappings",
				    v->bdf, iova, iova + len - 1);
		goto out;
	}
	done = unmap_ioctl(s, v->container_fd, iova, len);
	if (done < 0) {
		err = cx4_vfio_fail((int)-done,
				    "%s: VFIO_IOMMU_UNMAP_DMA iova 0x%" PRIx64 " len 0x%" PRIx64,
				    v->bdf, iova, len);
		goto out;
	}
	if ((uint64_t)done != len)
		err = cx4_vfio_fail(EIO,
				    "%s: VFIO_IOMMU_UNMAP_DMA iova 0x%" PRIx64
				    " unmapped 0x%" PRIx64 " of 0x%" PRIx64 " bytes",
				    v->bdf, iova, (uint64_t)done, len);
	/* whatever the kernel unmapped, these entries no longer map anything we track */
	for (size_t k = i; k < j; k++)
		if (v->maps[k].va)
			s->munmap(s->ctx, v->maps[k].va, v->maps[k].len);
	memmove(&v->maps[i], &v->maps[j], (v->nmaps - j) * sizeof(*v->maps));
	v->nmaps -= j - i;
out:
	pthread_mutex_unlock(&v->lock);
	if (err)
		errno = -err;
	return err;
}

void cx4_vfio_dma_unmap_all(struct cx4_vfio *v)
{
	const struct cx4_vfio_sys *s = v->sys;

	pthread_mutex_lock(&v->lock);
	for (size_t k = 0; k < v->nmaps; k++) {
		unmap_ioctl(s, v->container_fd, v->maps[k].iova, v->maps[k].len);
		if (v->maps[k].va)
			s->munmap(s->ctx, v->maps[k].va, v->maps[k].len);
	}
	free(v->maps);
	v->maps = NULL;
	v->nmaps = v->capmaps = 0;
	pthread_mutex_unlock(&v->lock);
}

int cx4_vfio_client_dma_map(const struct cx4_vfio_sys *sys, int container_fd, const void *va,
			    uint64_t iova, uint64_t len, uint32_t perm)
{
	const struct cx4_vfio_sys *s = sys ? sys : &cx4_vfio_sys_real;
	int err;

	cx4_vfio_clear_error();
	err = check_map_args(iova, len, perm, 4096, "client");
	if (err)
		return err;
	if ((uintptr_t)va & 4095)
		return cx4_vfio_fail(EINVAL, "client: dma_map va %p not page aligned", va);
	err = map_ioctl(s, container_fd, (uintptr_t)va, iova, len, perm);
	if (err)
		return cx4_vfio_fail(-err,
				     "client: VFIO_IOMMU_MAP_DMA iova 0x%" PRIx64 " len 0x%" PRIx64,
				     iova, len);
	return 0;
}

int cx4_vfio_client_dma_unmap(const struct cx4_vfio_sys *sys, int container_fd, uint64_t iova,
			      uint64_t len)
{
	const struct cx4_vfio_sys *s = sys ? sys : &cx4_vfio_sys_real;
	int64_t done;

	cx4_vfio_clear_error();
	done = unmap_ioctl(s, container_fd, iova, len);
	if (done < 0)
		return cx4_vfio_fail(
		    (int)-done, "client: VFIO_IOMMU_UNMAP_DMA iova 0x%" PRIx64 " len 0x%" PRIx64,
		    iova, len);
	if (!done)
		return cx4_vfio_fail(
		    ENOENT, "client: VFIO_IOMMU_UNMAP_DMA iova 0x%" PRIx64 ": nothing mapped there",
		    iova);
	if ((uint64_t)done != len)
		return cx4_vfio_fail(EIO,
				     "client: VFIO_IOMMU_UNMAP_DMA iova 0x%" PRIx64
				     " unmapped 0x%" PRIx64 " of 0x%" PRIx64 " bytes",
				     iova, (uint64_t)done, len);
	return 0;
}
