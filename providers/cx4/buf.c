// SPDX-License-Identifier: MIT
/*
 * Queue memory. What a kernel driver would pin and map for the device, the provider allocates
 * as a memfd: it maps it here for the data path and passes the fd to cx4d, which maps it for
 * device DMA. The memory is shared, not copied, so WQEs, doorbell records and CQEs are seen
 * by both sides as they are written.
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
	return 0;
}

void cx4_buf_free(struct cx4_buf *b)
{
	if (b->va)
		munmap(b->va, b->len);
	if (b->fd >= 0)
		close(b->fd);
	b->va = NULL;
	b->fd = -1;
}
