// SPDX-License-Identifier: MIT
/*
 * The system calls of the VFIO backend, behind a table so that tests can substitute a fake
 * VFIO layer, and the per-thread message of the last failure (like dlerror()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vfio_priv.h"

static int sys_open(void *ctx, const char *path, int flags)
{
	return open(path, flags);
}

static int sys_close(void *ctx, int fd)
{
	return close(fd);
}

static ssize_t sys_read(void *ctx, int fd, void *buf, size_t len)
{
	return read(fd, buf, len);
}

static ssize_t sys_readlink(void *ctx, const char *path, char *buf, size_t len)
{
	return readlink(path, buf, len);
}

static int sys_ioctl(void *ctx, int fd, unsigned long req, uintptr_t arg)
{
	return ioctl(fd, req, arg);
}

static void *sys_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

static int sys_munmap(void *ctx, void *addr, size_t len)
{
	return munmap(addr, len);
}

static ssize_t sys_pread(void *ctx, int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off);
}

static ssize_t sys_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off)
{
	return pwrite(fd, buf, len, off);
}

static int sys_eventfd(void *ctx, unsigned int initval, int flags)
{
	return eventfd(initval, flags);
}

const struct cx4_vfio_sys cx4_vfio_sys_real = {
    .ctx = NULL,
    .open = sys_open,
    .close = sys_close,
    .read = sys_read,
    .readlink = sys_readlink,
    .ioctl = sys_ioctl,
    .mmap = sys_mmap,
    .munmap = sys_munmap,
    .pread = sys_pread,
    .pwrite = sys_pwrite,
    .eventfd = sys_eventfd,
};

static __thread char last_error[256];

int cx4_vfio_fail(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(last_error))
		snprintf(last_error + n, sizeof(last_error) - (size_t)n, ": %s", strerror(err));
	errno = err;
	return -err;
}

void cx4_vfio_clear_error(void)
{
	last_error[0] = 0;
}

void cx4_vfio_set_error(const char *msg)
{
	snprintf(last_error, sizeof(last_error), "%s", msg);
}

const char *cx4_vfio_strerror(void)
{
	return last_error;
}
