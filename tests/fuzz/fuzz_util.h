/* SPDX-License-Identifier: MIT */
/*
 * What the libFuzzer harnesses share: a private run directory under /tmp, the monotonic clock
 * in milliseconds (their recovery deadlines) and the count of open descriptors (their leak
 * checks, before and after an input).
 */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t fuzz_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Open descriptors of this process (-1 when /proc cannot say). */
static inline int fuzz_count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	if (!dir)
		return -1;
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

/* A new directory /tmp/<name>.XXXXXX in dir (at least 64 bytes); 0, or -1 with errno. */
static inline int fuzz_rundir_make(char *dir, size_t size, const char *name)
{
	snprintf(dir, size, "/tmp/%s.XXXXXX", name);
	return mkdtemp(dir) ? 0 : -1;
}

/* Removes dir and everything in it, once (dir is emptied); name says who could not. */
static inline void fuzz_rundir_remove(char *dir, const char *name)
{
	char cmd[128];

	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "%s: could not remove %s\n", name, dir);
	dir[0] = 0;
}

#endif /* FUZZ_UTIL_H */
