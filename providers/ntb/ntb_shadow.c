// SPDX-License-Identifier: MIT
/*
 * Shareable backing for remotely writable memory regions.
 *
 * On an NTB the peer's CPU can store straight into our registered memory through its outbound
 * window (the PIO path; Dolphin's SISCI maps remote segments this way), which is how a short
 * RDMA WRITE can cost the requester a few stores instead of a DMA descriptor. In the emulated
 * link a window can only be CPU-mapped where the memory behind it is a shareable object, so
 * when a region is registered with remote write access its pages are moved into one (a memfd)
 * without changing their addresses or contents: the bytes are copied into the memfd, and the
 * memfd mapping replaces the private pages with a single mremap, which other threads see as
 * atomic (they read either the old page or the new one). ntbd maps the memfd in the IOMMU for
 * the peer; DMA still reaches the same pages by pid and address. When the last region covering
 * the pages is deregistered they become private anonymous memory again the same way, so
 * allocators that purge with MADV_DONTNEED see zero-fill pages as they expect.
 *
 * Only private anonymous read/write mappings are moved (heap, mmap'ed buffers): file, shared,
 * stack and special mappings keep their semantics and their regions are written by DMA.
 * Limitation: a store another thread makes into these pages while the copy runs (microseconds,
 * during ibv_reg_mr / ibv_dereg_mr) can be lost. NTB_PIO=0 turns the PIO path off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ntb.h"

#define SHADOW_MAX	(256ull << 20)	/* larger regions are written by DMA */

struct shadow {
	struct shadow *next;
	uintptr_t start, end;
	int fd;
	unsigned int refs;
};

static pthread_mutex_t shadow_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shadow *shadows;

bool ntb_pio_enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("NTB_PIO");

		on = !e || *e != '0';
	}
	return on;
}

/*
 * Every byte of [start, end) is in a private anonymous read/write mapping (ours: false), or
 * in a shared mapping of one of our memfds (ours: true).
 */
static bool mapped_as(uintptr_t start, uintptr_t end, bool ours)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uintptr_t at = start;

	if (!f)
		return false;
	while (at < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, inode;
		char perms[8], dev[16], path[256] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %255s", &lo, &hi, perms, &off, dev, &inode,
			   path) < 6)
			continue;
		if (hi <= at || lo > at)
			continue;
		if (ours ? strcmp(perms, "rw-s") || strncmp(path, "/memfd:ntb-mr", 13) :
			   strcmp(perms, "rw-p") || inode || (path[0] && strcmp(path, "[heap]")))
			break;
		at = hi;
	}
	fclose(f);
	return at >= end;
}

/* Replace [start, start + len) by the same bytes in another mapping, without a gap. */
static int swap_pages(uintptr_t start, size_t len, int fd)
{
	void *tmp = fd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) :
			      mmap(NULL, len, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (tmp == MAP_FAILED)
		return -errno;
	memcpy(tmp, (void *)start, len);
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) == MAP_FAILED) {
		int err = -errno;

		munmap(tmp, len);
		return err;
	}
	/* libibverbs asked for DONTFORK on the region (ibv_dontfork_range): keep it */
	if (fd >= 0)
		madvise((void *)start, len, MADV_DONTFORK);
	return 0;
}

int ntb_shadow_get(uint64_t addr, uint64_t len, int *fd, uint64_t *fd_off)
{
	uintptr_t start = addr & ~(uintptr_t)(NTB_PAGE_SIZE - 1);
	uintptr_t end = (addr + len + NTB_PAGE_SIZE - 1) & ~(uintptr_t)(NTB_PAGE_SIZE - 1);
	struct shadow *s;
	int ret = -ENOTSUP;

	if (!ntb_pio_enabled() || end - start > SHADOW_MAX || end <= start)
		return -ENOTSUP;
	pthread_mutex_lock(&shadow_lock);
	for (s = shadows; s; s = s->next) {
		if (s->start <= start && end <= s->end) {
			s->refs++;
			*fd = s->fd;
			*fd_off = start - s->start;
			ret = 0;
			goto out;
		}
		if (start < s->end && s->start < end)
			goto out;	/* overlaps a moved range only in part: keep it as it is */
	}
	if (!mapped_as(start, end, false))
		goto out;
	s = calloc(1, sizeof(*s));
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	s->fd = memfd_create("ntb-mr", MFD_CLOEXEC);
	if (s->fd < 0 || ftruncate(s->fd, (off_t)(end - start))) {
		ret = -errno;
		goto fail;
	}
	ret = swap_pages(start, end - start, s->fd);
	if (ret)
		goto fail;
	s->start = start;
	s->end = end;
	s->refs = 1;
	s->next = shadows;
	shadows = s;
	*fd = s->fd;
	*fd_off = 0;
	goto out;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s);
out:
	pthread_mutex_unlock(&shadow_lock);
	return ret;
}

void ntb_shadow_put(uint64_t addr, uint64_t len)
{
	uintptr_t start = addr & ~(uintptr_t)(NTB_PAGE_SIZE - 1);
	uintptr_t end = (addr + len + NTB_PAGE_SIZE - 1) & ~(uintptr_t)(NTB_PAGE_SIZE - 1);

	pthread_mutex_lock(&shadow_lock);
	for (struct shadow **p = &shadows; *p; p = &(*p)->next) {
		struct shadow *s = *p;

		if (s->start > start || end > s->end)
			continue;
		if (--s->refs == 0) {
			*p = s->next;
			/* back to private memory, unless the application unmapped it already */
			if (mapped_as(s->start, s->end, true))
				swap_pages(s->start, s->end - s->start, -1);
			close(s->fd);
			free(s);
		}
		break;
	}
	pthread_mutex_unlock(&shadow_lock);
}
