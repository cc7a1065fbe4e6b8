// SPDX-License-Identifier: MIT
/*
 * The pinning check of a memory registration (bv_umem.h), from the client's mappings in
 * /proc/<pid>/maps: they are listed in address order, so one pass walks the range.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "bv_umem.h"

#define BV_UMEM_PAGE 4096ull

int bv_umem_check(pid_t pid, uint64_t addr, uint64_t len, bool write)
{
	uint64_t at = addr & ~(BV_UMEM_PAGE - 1);
	uint64_t end = (addr + len + BV_UMEM_PAGE - 1) & ~(BV_UMEM_PAGE - 1);
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err;

	if (!len || end <= at)
		return EFAULT;
	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return errno;
	/* getline: a long path never splits a line into a second, misread one */
	while (at < end && getline(&line, &cap, f) > 0) {
		unsigned long long lo, hi;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3 || hi <= at)
			continue;
		if (lo > at)
			break; /* a hole */
		if (write ? perms[1] != 'w' : perms[0] != 'r')
			break; /* FOLL_WRITE needs VM_WRITE, a read pin VM_READ */
		at = hi;
	}
	err = ferror(f) ? EIO : 0;
	free(line);
	fclose(f);
	if (err)
		return err;
	return at >= end ? 0 : EFAULT;
}
