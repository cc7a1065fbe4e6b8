// SPDX-License-Identifier: MIT
/*
 * unit_shadow_stale_test: a registered region whose memory the application unmapped and mapped
 * again (allocators free memory before registration caches deregister it) must not lend its
 * memfd to a new region over the same addresses (providers/common/bv_shadow.c): the new pages
 * are not the memfd's, and what a device wrote through the new region would never reach the
 * application. Open MPI over UCX on cx4 lost UD receives this way (a new worker's receive pool
 * mapped where an earlier registered buffer had been): every byte read back as zero.
 *
 *   1. two regions over the same intact pages share one memfd (as before);
 *   2. unmapped and mapped again, the same range gets no stale memfd (-ENOTSUP: written by
 *      DMA) and the application's new bytes stay where they are when the old region goes;
 *   3. once the old region is gone a new region over the range is moved afresh, and a store
 *      through its memfd is what the application reads.
 * Exit status 77 (a skip) where userfaultfd cannot be used: then nothing is ever moved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bv_provider.h"

#define LEN (64u * 1024)

static int fail(const char *what)
{
	fprintf(stderr, "shadow_stale_test: %s\n", what);
	return 1;
}

int main(void)
{
	uint8_t *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t addr = (uintptr_t)p, off1, off2;
	int fd1, fd2, ret;
	uint8_t b = 0;

	if (p == MAP_FAILED)
		return fail("mmap");
	memset(p, 0x11, LEN);
	ret = bv_shadow_get(addr, LEN, &fd1, &off1);
	if (ret == -ENOTSUP) {
		printf("shadow_stale_test: userfaultfd not usable here, nothing is moved: skip\n");
		return 77;
	}
	if (ret)
		return fail("first region not moved");
	/* 1: the same intact pages: the same memfd */
	if (bv_shadow_get(addr, LEN, &fd2, &off2) || fd2 != fd1 || off2 != off1)
		return fail("a second region over intact pages did not share the memfd");
	bv_shadow_put(addr, LEN);

	/* 2: the application unmaps the range and maps fresh memory there */
	if (munmap(p, LEN) ||
	    mmap(p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p)
		return fail("mapping the range again");
	memset(p, 0x22, LEN);
	ret = bv_shadow_get(addr, LEN, &fd2, &off2);
	if (!ret && fd2 == fd1)
		return fail("a region over remapped pages got the old region's stale memfd");
	if (ret != -ENOTSUP)
		return fail("a region over remapped pages was moved while the old one is registered");
	/* the device writes through the old region: the application never sees it */
	if (pwrite(fd1, &(uint8_t){0x33}, 1, 0) != 1)
		return fail("pwrite into the old memfd");
	if (p[0] != 0x22)
		return fail("a store into the old memfd reached the remapped pages");
	bv_shadow_put(addr, LEN); /* the old region goes: the application's pages stay */
	for (size_t i = 0; i < LEN; i++)
		if (p[i] != 0x22)
			return fail("the old region's end changed the remapped pages");

	/* 3: now the range is moved afresh and shared with the device */
	if (bv_shadow_get(addr, LEN, &fd2, &off2))
		return fail("the range was not moved after the old region went");
	if (pwrite(fd2, &(uint8_t){0x44}, 1, 7) != 1 || pread(fd2, &b, 1, 8) != 1)
		return fail("pwrite/pread on the new memfd");
	if (p[7] != 0x44 || b != 0x22)
		return fail("the new memfd is not the application's pages");
	bv_shadow_put(addr, LEN);
	if (p[7] != 0x44 || p[8] != 0x22)
		return fail("the pages changed on the way back to private memory");
	munmap(p, LEN);
	printf("shadow_stale_test: OK\n");
	return 0;
}
