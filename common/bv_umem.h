/* SPDX-License-Identifier: MIT */
/*
 * A client's memory as the kernel would pin it for a memory region: Linux ib_umem_get() pins
 * the pages with pin_user_pages_fast(), FOLL_WRITE when the region is writable
 * (ib_access_writable(): local or remote write, atomics, MW bind). A page in no mapping, or in
 * one without the access asked for (check_vma_flags() in mm/gup.c), fails the registration
 * with EFAULT, and nothing of it is left behind.
 */
#ifndef BV_UMEM_H
#define BV_UMEM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

/*
 * Every page of [addr, addr + len) of process pid is mapped readable, and writable when
 * write: 0, else EFAULT; the errno of reading /proc/<pid>/maps when that fails.
 */
int bv_umem_check(pid_t pid, uint64_t addr, uint64_t len, bool write);

/* ib_access_writable(): the region is pinned for writing (MW bind: a window may write it). */
static inline bool bv_umem_writable(uint32_t access)
{
	return access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
}

#endif /* BV_UMEM_H */
