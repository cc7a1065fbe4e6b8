// SPDX-License-Identifier: MIT
/*
 * libibverbs only lists a device whose /dev/infiniband/<uverbsN> exists as a character device
 * (stat follows links), and opens it as cmd_fd. The path is compiled in, so bvctl setup makes
 * /dev/infiniband/uverbs64.. links to /dev/null, and the sysfs `dev` file says 1:3 to match.
 * Never create /dev/infiniband/rdma_cm: librdmacm would talk its kernel ABI to /dev/null.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bvctl.h"

#define TMPFILES_CONF "/etc/tmpfiles.d/bridgeverbs.conf"

bool bvctl_setup_done(void)
{
	for (int i = 0; i < BV_UVERBS_COUNT; i++) {
		char path[64];
		struct stat st;

		snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", BV_UVERBS_BASE + i);
		if (stat(path, &st) || !S_ISCHR(st.st_mode))
			return false;
	}
	return true;
}

int bvctl_setup(bool tmpfiles)
{
	int made = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "bvctl setup: needs root (it creates /dev/infiniband/uverbsN)\n");
		return 1;
	}
	if (mkdir("/dev/infiniband", 0755) && errno != EEXIST) {
		perror("bvctl setup: /dev/infiniband");
		return 1;
	}
	for (int i = 0; i < BV_UVERBS_COUNT; i++) {
		char path[64], target[64];
		struct stat st;
		ssize_t n;

		snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", BV_UVERBS_BASE + i);
		if (!lstat(path, &st)) {
			n = readlink(path, target, sizeof(target) - 1);
			if (n > 0 && (target[n] = 0, !strcmp(target, "/dev/null")))
				continue;
			fprintf(stderr, "bvctl setup: %s exists and is not ours; leaving it\n", path);
			continue;
		}
		if (symlink("/dev/null", path)) {
			fprintf(stderr, "bvctl setup: %s: %s\n", path, strerror(errno));
			return 1;
		}
		made++;
	}
	if (tmpfiles) {
		FILE *f = fopen(TMPFILES_CONF, "w");

		if (!f) {
			perror("bvctl setup: " TMPFILES_CONF);
			return 1;
		}
		fprintf(f, "# bridgeverbs: uverbs nodes for kernel-less verbs devices (bvctl setup)\n"
			   "d /dev/infiniband 0755 root root -\n");
		for (int i = 0; i < BV_UVERBS_COUNT; i++)
			fprintf(f, "L /dev/infiniband/uverbs%d - - - - /dev/null\n",
				BV_UVERBS_BASE + i);
		fclose(f);
		printf("wrote %s\n", TMPFILES_CONF);
	}
	printf("bvctl setup: /dev/infiniband/uverbs%d..%d ready (%d new)\n", BV_UVERBS_BASE,
	       BV_UVERBS_BASE + BV_UVERBS_COUNT - 1, made);
	return 0;
}
