// SPDX-License-Identifier: MIT
/*
 * Shareable backing for registered memory: a region's pages moved into a memfd without changing
 * their addresses or contents, so that the daemon can map the same pages (both providers).
 *
 * ntb: on an NTB the peer's CPU can store straight into our registered memory through its
 * outbound window (the PIO path; Dolphin's SISCI maps remote segments this way), which is how a
 * short RDMA WRITE can cost the requester a few stores instead of a DMA descriptor. In the
 * emulated link a window can only be CPU-mapped where the memory behind it is a shareable
 * object; ntbd maps the memfd in the IOMMU for the peer.
 * cx4: the device model reaches registered memory as a card does through its IOMMU, without a
 * system call per access (process_vm_readv/writev pin and unpin every page of every transfer);
 * cx4d maps the memfd for the device.
 *
 * The bytes are copied into the memfd, and the memfd mapping replaces the private pages with a
 * single mremap. When the last region covering the pages is deregistered they become private
 * anonymous memory again the same way, so allocators that purge with MADV_DONTNEED see
 * zero-fill pages as they expect.
 *
 * A store another thread makes between the copy and the mremap would land in the old pages
 * and be lost: a silent corruption. So the pages are write-protected with userfaultfd
 * (UFFDIO_REGISTER_MODE_WP + UFFDIO_WRITEPROTECT, Linux 5.7 for anonymous memory, 6.0 for
 * shmem, which the way back needs) before the copy: every store into them - another thread's,
 * a system call writing into the buffer, a peer's DMA (process_vm_writev faults the page in
 * like a store) - waits in the kernel's fault handler. Nobody reads the userfaultfd: after the
 * mremap the range is the new mapping, which is not registered, and UFFDIO_WAKE lets the
 * waiting stores retry into it (handle_userfault returns VM_FAULT_RETRY; mremap holds the
 * mmap lock for writing, so a fault either queued before it and is woken after, or starts
 * after it and sees the new pages). Reads proceed throughout: the bytes do not change.
 * Known gap: a process_vm_writev (the model's DMA by pid) that pinned a page before the
 * write-protection was set copies into the pinned old page without a fault, and that store
 * is lost when it lands after the copy (ntb_shadow_test saw 1 of 40 million stores once; the
 * copy now waits 1 ms after protecting, so the transfer must also stall that long between
 * its pin and its copy). It needs a DMA already under way into pages that are being
 * registered for the first time.
 * Pages never touched (none ptes) must be protected too: on anonymous memory that needs
 * UFFD_FEATURE_WP_UNPOPULATED (6.4), else they are populated first (MADV_POPULATE_WRITE);
 * on shmem the kernel marks none ptes itself.
 *
 * Where userfaultfd is not available (vm.unprivileged_userfaultfd = 0 without CAP_SYS_PTRACE
 * or /dev/userfaultfd, or an older kernel) the pages are not moved at all: the region is then
 * written by DMA (pid + address), never racing. BV_UFFD=0 (or NTB_UFFD=0) makes the providers
 * behave as if userfaultfd were unavailable.
 *
 * Only private anonymous read/write mappings are moved (heap, mmap'ed buffers): file, shared,
 * stack and special mappings keep their semantics and their regions are written by DMA.
 * The memfd is sealed against shrinking (F_SEAL_SHRINK): a daemon that maps it (and ntbd's
 * peer) must never touch a page beyond its end (SIGBUS).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bv_provider.h"

#define BV_PAGE_SIZE 4096ul

#define SHADOW_MAX (256ull << 20) /* larger regions are written by DMA */

/* Newer than the kernel headers of Debian 12 (linux/userfaultfd.h of Linux 6.4) */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

struct shadow {
	struct shadow *next;
	uintptr_t start, end;
	int fd;
	unsigned long ino; /* the memfd's inode: what /proc/self/maps names */
	unsigned int refs;
};

static pthread_mutex_t shadow_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shadow *shadows;

/* Every byte of [start, end) is in a private anonymous read/write mapping. */
static bool mapped_private(uintptr_t start, uintptr_t end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uintptr_t at = start;

	if (!f)
		return false;
	while (at < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, inode;
		char perms[8], dev[16], path[256] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %255s", &lo, &hi, perms, &off, dev,
			   &inode, path) < 6)
			continue;
		if (hi <= at || lo > at)
			continue;
		if (strcmp(perms, "rw-p") || inode || (path[0] && strcmp(path, "[heap]")))
			break;
		at = hi;
	}
	fclose(f);
	return at >= end;
}

/*
 * Every byte of [start, end) is still s's memfd, at its own offset: the application has not
 * unmapped (or mapped something else over) that part of a registered region since it was moved.
 * If it has, the memfd's pages behind the range are no longer what the application sees there:
 * what a device writes into them is lost to it, and a new region over the range must not share
 * them.
 */
static bool intact(const struct shadow *s, uintptr_t start, uintptr_t end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uintptr_t at = start;

	if (!f)
		return false;
	while (at < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, inode;
		char perms[8], dev[16];

		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu", &lo, &hi, perms, &off, dev, &inode) < 6)
			continue;
		if (hi <= at || lo > at)
			continue;
		if (strcmp(perms, "rw-s") || inode != s->ino || lo < s->start ||
		    off != lo - s->start)
			break;
		at = hi;
	}
	fclose(f);
	return at >= end;
}

/* What userfaultfd offers here (probed once): 0 = not usable for a safe move. */
static uint64_t uffd_features;
static pthread_once_t uffd_once = PTHREAD_ONCE_INIT;

static int uffd_new(uint64_t features)
{
	struct uffdio_api api = {.api = UFFD_API, .features = features};
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 && errno == EPERM) {
		/* Linux 6.1: /dev/userfaultfd, where the administrator granted access to it */
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

		if (dev >= 0) {
			fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
			close(dev);
		}
	}
	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return -1;
	}
	if (!features)
		uffd_features = api.features;
	return fd;
}

static void uffd_probe(void)
{
	const char *e = getenv("BV_UFFD") ? getenv("BV_UFFD") : getenv("NTB_UFFD");
	int fd;

	uffd_features = 0;
	if (e && *e == '0')
		return;
	fd = uffd_new(0);
	if (fd < 0) {
		uffd_features = 0;
		return;
	}
	close(fd);
	/* write-protect faults on anonymous memory (the way in) and on shmem (the way back) */
	if ((uffd_features & (UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_WP_HUGETLBFS_SHMEM)) !=
	    (UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_WP_HUGETLBFS_SHMEM))
		uffd_features = 0;
}

static bool uffd_usable(void)
{
	pthread_once(&uffd_once, uffd_probe);
	return uffd_features != 0;
}

/*
 * Replace [start, start + len) by the same bytes in another mapping (a memfd's, or private
 * anonymous memory for fd < 0), without a gap and without losing a concurrent store (see the
 * top of the file). On failure nothing changed and every store went where it was aimed.
 */
/*
 * The bytes of whole pages, through the memfd's file interface: a kernel copy, because the
 * pages hold more than the registered object (allocator metadata, a sanitizer's redzones) and
 * none of it is ours to inspect (raw system calls: sanitizers check their pread/pwrite
 * wrappers against the objects they know). into: copy the range into fd; else fd into mem.
 */
static int copy_pages(int fd, bool into, void *mem, size_t len)
{
	for (size_t done = 0; done < len;) {
		long n = syscall(into ? SYS_pwrite64 : SYS_pread64, fd, (uint8_t *)mem + done,
				 len - done, (off_t)done);

		if (n <= 0)
			return n ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* fd >= 0: move the range into fd (offset 0); fd < 0: back to private memory from back_fd. */
static int swap_pages(uintptr_t start, size_t len, int fd, int back_fd)
{
	struct uffdio_register reg = {.range = {start, len}, .mode = UFFDIO_REGISTER_MODE_WP};
	struct uffdio_writeprotect wp = {.range = {start, len},
					 .mode = UFFDIO_WRITEPROTECT_MODE_WP};
	struct uffdio_range range = {start, len};
	uint64_t features = UFFD_FEATURE_PAGEFAULT_FLAG_WP;
	void *tmp;
	int uffd, err;

	if (!uffd_usable())
		return -ENOTSUP;
	if (fd >= 0)
		features |= uffd_features & UFFD_FEATURE_WP_UNPOPULATED;
	else
		features |= UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	tmp = fd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
		      : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -errno;
	uffd = uffd_new(features);
	if (uffd < 0) {
		munmap(tmp, len);
		return -ENOTSUP;
	}
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) || !(reg.ioctls & (1ull << _UFFDIO_WRITEPROTECT))) {
		err = -ENOTSUP;
		goto out;
	}
	/* anonymous pages never touched: protect them by populating them (contents unchanged) */
	if (fd >= 0 && !(features & UFFD_FEATURE_WP_UNPOPULATED) &&
	    madvise((void *)start, len, MADV_POPULATE_WRITE)) {
		err = -ENOTSUP;
		goto unregister;
	}
	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp)) {
		err = -ENOTSUP;
		goto unregister;
	}
	/*
	 * Every store into the range waits from here on, except one a process_vm_writev makes
	 * through a page it pinned before the protection: give such a transfer, already
	 * copying, a moment to finish (the gap in the header narrows, it does not close).
	 */
	usleep(1000);
	/* the copy sees the final bytes */
	err = fd >= 0 ? copy_pages(fd, true, (void *)start, len)
		      : copy_pages(back_fd, false, tmp, len);
	if (err) {
		wp.mode = 0;
		ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
		goto unregister;
	}
	/*
	 * The raw system call: libraries that watch the address space through mremap (UCX's
	 * memory hooks invalidate their registration caches on it) must not see a move that
	 * changes neither the addresses nor the bytes. UCX's ucx_perftest am_bw hung about once
	 * in six runs when they did (with CX4_SHADOW=1).
	 */
	if ((void *)syscall(SYS_mremap, tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			    (void *)start) == MAP_FAILED) {
		err = -errno;
		/* unprotecting wakes the waiting stores: they land in the old pages, kept */
		wp.mode = 0;
		ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
		goto unregister;
	}
	tmp = NULL;
	/* the range is the new mapping, not registered: the waiting stores retry into it */
	ioctl(uffd, UFFDIO_WAKE, &range);
	/*
	 * Not inherited by a child (what ibv_fork_init() asks for on every region): inherited,
	 * a shared mapping would give the child the parent's pages instead of a copy.
	 */
	if (fd >= 0)
		madvise((void *)start, len, MADV_DONTFORK);
	close(uffd); /* wakes anyone still queued */
	return 0;
unregister:
	ioctl(uffd, UFFDIO_UNREGISTER, &range);
out:
	close(uffd);
	if (tmp)
		munmap(tmp, len);
	return err;
}

int bv_shadow_get(uint64_t addr, uint64_t len, int *fd, uint64_t *fd_off)
{
	uintptr_t start = addr & ~(uintptr_t)(BV_PAGE_SIZE - 1);
	uintptr_t end = (addr + len + BV_PAGE_SIZE - 1) & ~(uintptr_t)(BV_PAGE_SIZE - 1);
	struct shadow *s;
	struct stat st;
	int ret = -ENOTSUP;

	if (end - start > SHADOW_MAX || end <= start || !uffd_usable())
		return -ENOTSUP;
	pthread_mutex_lock(&shadow_lock);
	for (s = shadows; s; s = s->next) {
		/*
		 * Pages moved for an earlier region that the application unmapped while it was
		 * still registered (allocators free memory before registration caches let go of
		 * it) and then mapped again: the new pages are not the memfd's. Such a region is
		 * written by DMA (pid + address) until the old one is gone: sharing the stale memfd
		 * would send the device's writes where the application never looks.
		 */
		if (start < s->end && s->start < end &&
		    !intact(s, start > s->start ? start : s->start, end < s->end ? end : s->end))
			goto out;
		if (s->start <= start && end <= s->end) {
			s->refs++;
			*fd = s->fd;
			*fd_off = start - s->start;
			ret = 0;
			goto out;
		}
		if (start < s->end && s->start < end)
			goto out; /* overlaps a moved range only in part: keep it as it is */
	}
	if (!mapped_private(start, end))
		goto out;
	s = calloc(1, sizeof(*s));
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	s->fd = memfd_create("bv-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->fd < 0 || ftruncate(s->fd, (off_t)(end - start)) ||
	    fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) || fstat(s->fd, &st)) {
		ret = -errno;
		goto fail;
	}
	s->ino = (unsigned long)st.st_ino;
	ret = swap_pages(start, end - start, s->fd, -1);
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

void bv_shadow_put(uint64_t addr, uint64_t len)
{
	uintptr_t start = addr & ~(uintptr_t)(BV_PAGE_SIZE - 1);
	uintptr_t end = (addr + len + BV_PAGE_SIZE - 1) & ~(uintptr_t)(BV_PAGE_SIZE - 1);

	pthread_mutex_lock(&shadow_lock);
	for (struct shadow **p = &shadows; *p; p = &(*p)->next) {
		struct shadow *s = *p;

		if (s->start > start || end > s->end)
			continue;
		if (--s->refs == 0) {
			*p = s->next;
			/*
			 * Back to private memory, unless the application unmapped it already
			 * (any part: what is mapped there now is the application's own).
			 * If that cannot be done safely, the pages stay the memfd's (still
			 * the same bytes at the same addresses), which is never a corruption.
			 */
			if (intact(s, s->start, s->end))
				swap_pages(s->start, s->end - s->start, -1, s->fd);
			close(s->fd);
			free(s);
		}
		break;
	}
	pthread_mutex_unlock(&shadow_lock);
}
