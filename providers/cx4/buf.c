// SPDX-License-Identifier: MIT
/*
 * Queue memory. What a kernel driver would pin and map for the device, the provider allocates
 * as a memfd: it maps it here for the data path and passes the fd to cx4d, which maps it for
 * device DMA. The memory is shared, not copied, so WQEs, doorbell records and CQEs are seen
 * by both sides as they are written.
 *
 * A parent domain's allocator (ibv_alloc_parent_domain with IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS,
 * as rdma-core mlx5 mlx5_alloc_buf_extern) gives the application's own memory instead, which
 * the kernel would pin as it is; here bv_shadow moves its pages into a memfd without changing
 * their address (providers/common/bv_shadow.c) and cx4d maps that memfd from the pages' offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cx4.h"

size_t cx4_align(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

unsigned int cx4_ilog2_up(uint64_t v)
{
	unsigned int l = 0;

	while (l < 63 && (1ull << l) < v)
		l++;
	return l;
}

int cx4_buf_alloc(struct cx4_buf *b, size_t len, const char *name)
{
	len = cx4_align(len, CX4_ADAPTER_PAGE_SIZE);
	/* sealed against shrinking: cx4d maps it for the device and refuses it otherwise */
	b->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (b->fd < 0)
		return errno;
	if (ftruncate(b->fd, (off_t)len) || fcntl(b->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL)) {
		int err = errno;

		close(b->fd);
		b->fd = -1;
		return err;
	}
	b->va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->va == MAP_FAILED) {
		int err = errno;

		close(b->fd);
		b->fd = -1;
		b->va = NULL;
		return err;
	}
	b->len = len;
	b->off = 0;
	b->pdom = NULL;
	b->ext = false;
	return 0;
}

/* The application's memory from a parent domain's allocator, moved into a memfd. */
static int buf_alloc_ext(struct cx4_buf *b, size_t len, enum cx4_res_type type, void *va)
{
	uint64_t off;
	int fd, err;

	/* the device is given whole pages: an allocator that ignores the alignment is refused */
	if ((uintptr_t)va & (CX4_ADAPTER_PAGE_SIZE - 1))
		return EINVAL;
	err = -bv_shadow_get((uintptr_t)va, len, &fd, &off);
	if (err)
		return err;
	b->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (b->fd < 0) {
		err = errno;
		bv_shadow_put((uintptr_t)va, len);
		return err;
	}
	memset(va, 0, len); /* as a new memfd is */
	b->va = va;
	b->len = len;
	b->off = off;
	b->ext = true;
	b->res_type = type;
	return 0;
}

int cx4_buf_alloc_pd(struct cx4_buf *b, struct ibv_pd *pd, size_t len, enum cx4_res_type type,
		     const char *name)
{
	struct cx4_pd *pdom = pd ? to_cx4_pd(pd) : NULL;
	void *va = IBV_ALLOCATOR_USE_DEFAULT;
	int err;

	if (!pdom || !pdom->protection)
		return cx4_buf_alloc(b, len, name);
	len = cx4_align(len, CX4_ADAPTER_PAGE_SIZE);
	if (pdom->alloc)
		va = pdom->alloc(pd, pdom->pd_context, len, CX4_ADAPTER_PAGE_SIZE, type);
	if (va == IBV_ALLOCATOR_USE_DEFAULT) {
		err = cx4_buf_alloc(b, len, name);
	} else if (!va) {
		err = ENOMEM;
	} else {
		err = buf_alloc_ext(b, len, type, va);
		if (err)
			pdom->free(pd, pdom->pd_context, va, type);
	}
	if (err)
		return err;
	/* the parent domain stays until its queues are gone (mlx5: EBUSY) */
	b->pdom = pdom;
	__atomic_fetch_add(&pdom->users, 1, __ATOMIC_RELAXED);
	return 0;
}

void cx4_buf_free(struct cx4_buf *b)
{
	if (b->va && b->ext) {
		bv_shadow_put((uintptr_t)b->va, b->len);
		b->pdom->free(&b->pdom->ibv_pd, b->pdom->pd_context, b->va, b->res_type);
	} else if (b->va) {
		munmap(b->va, b->len);
	}
	if (b->va && b->pdom)
		__atomic_fetch_sub(&b->pdom->users, 1, __ATOMIC_RELAXED);
	if (b->fd >= 0)
		close(b->fd);
	b->va = NULL;
	b->fd = -1;
	b->pdom = NULL;
	b->ext = false;
}
