// SPDX-License-Identifier: MIT
/* Memory baselines: what one CPU copies per second, within a process and into another one. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baseline.h"

/* Keeps the copy from being optimised away: the compiler cannot see who reads dst. */
static void *volatile bl_sink;

void bl_memcpy_bw(size_t size)
{
	/*
	 * Page-aligned buffers: heap neighbours a few bytes off a 4 KiB multiple apart make the
	 * CPU's store-to-load alias check stall the copy (64 KiB ran 15x slower than 1 MiB).
	 */
	char *src = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	char *dst = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	uint64_t bytes = 0;
	double t0, t1;
	struct bl_slices sl = {0};

	if (!src || !dst)
		bl_die("aligned_alloc");
	memset(src, 0x5a, size);
	memset(dst, 0, size);
	/* ~4 MiB per clock read: the clock may be a system call in a VM */
	size_t batch = size >= (4u << 20) ? 1 : (4u << 20) / size;

	t0 = bl_now();
	sl.t = t0;
	do {
		for (size_t i = 0; i < batch; i++) {
			memcpy(dst, src, size);
			bl_sink = dst;
		}
		bytes += size * batch;
		t1 = bl_now();
		bl_slice(&sl, (double)bytes, t1);
	} while (t1 - t0 < bl_seconds);
	printf("memcpy_bw_%zu=%.2f Gb/s\n", size, bytes * 8 / (t1 - t0) / 1e9);
	printf("memcpy_bw_%zu_best=%.2f Gb/s\n", size, sl.best * 8 / 1e9);
	free(src);
	free(dst);
}

void bl_pvm_bw(size_t size)
{
	char *src = malloc(size);
	int p[2];
	pid_t pid;
	uint64_t bytes = 0, addr;
	double t0, t1;

	if (!src || pipe(p))
		bl_die("setup");
	memset(src, 0x5a, size);
	pid = fork();
	if (pid < 0)
		bl_die("fork");
	if (pid == 0) {
		/* the target of the writes: private memory of another process */
		char *mine = malloc(size);
		uint64_t a = (uintptr_t)mine;

		if (!mine)
			_exit(1);
		memset(mine, 0, size);
		if (write(p[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(p[0], &addr, sizeof(addr)) != sizeof(addr))
		bl_die("pipe read");
	struct iovec l = { src, size }, r = { (void *)(uintptr_t)addr, size };

	t0 = bl_now();
	do {
		if (process_vm_writev(pid, &l, 1, &r, 1, 0) != (ssize_t)size)
			bl_die("process_vm_writev");
		bytes += size;
	} while ((t1 = bl_now()) - t0 < bl_seconds);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
	close(p[1]);
	printf("pvm_bw_%zu=%.2f Gb/s\n", size, bytes * 8 / (t1 - t0) / 1e9);
	free(src);
}
