// SPDX-License-Identifier: MIT
/*
 * The view of /sys that bvctl run gives its program: the devices' tree at /sys/class/infiniband
 * (and /sys/class/infiniband_verbs), for programs that read those paths directly instead of
 * through libibverbs and $SYSFS_PATH: infiniband-diags (libibumad's SYS_INFINIBAND), pyverbs'
 * tests (device/net), UCX (gid_attrs/types), Open MPI (device/driver).
 *
 * /sys/class exists only as the kernel makes it, so the program gets a private mount
 * namespace (mount_namespaces(7)) in which /sys/class is a tmpfs holding a bind mount of every
 * real class, plus the devices' tree bound at infiniband and infiniband_verbs. Nothing changes
 * outside the program's namespace; the daemons' later writes to the tree (port state) show.
 * Needs CAP_SYS_ADMIN: without it, or with BV_SYSFS_VIEW=0, the program runs in the host's
 * view (libibverbs still finds the devices through $SYSFS_PATH).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bvctl.h"

/* Bind src at dst (a directory created for it). */
static int bind_dir(const char *src, const char *dst)
{
	if (mkdir(dst, 0755) && errno != EEXIST)
		return -1;
	return mount(src, dst, NULL, MS_BIND | MS_REC, NULL);
}

/* Every entry of the real /sys/class (staged at stage) bound into the tmpfs at /sys/class. */
static int rebind_classes(const char *stage)
{
	char src[BV_PATH_MAX * 2], dst[BV_PATH_MAX + 16];
	struct dirent *e;
	DIR *dp = opendir(stage);
	int err = 0;

	if (!dp)
		return -1;
	while (!err && (e = readdir(dp))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "infiniband") ||
		    !strcmp(e->d_name, "infiniband_verbs"))
			continue;
		snprintf(src, sizeof(src), "%s/%s", stage, e->d_name);
		snprintf(dst, sizeof(dst), "/sys/class/%s", e->d_name);
		err = bind_dir(src, dst);
	}
	closedir(dp);
	return err;
}

int bvctl_sys_view(void)
{
	char tree[BV_PATH_MAX], src[BV_PATH_MAX * 2], stage[] = "/tmp/bvsys.XXXXXX";
	const char *env = getenv("BV_SYSFS_VIEW");
	int err;

	if ((env && !strcmp(env, "0")) || geteuid() != 0)
		return 0;
	if (bv_run_path(tree, sizeof(tree), "sysfs", "") || access(tree, F_OK))
		return 0; /* nothing is up: the host's view */
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "bvctl run: no view of the devices under /sys: %s\n",
			strerror(errno));
		return 0;
	}
	if (!mkdtemp(stage))
		return -1;
	err = mount("/sys/class", stage, NULL, MS_BIND | MS_REC, NULL);
	if (!err)
		err = mount("bvsys", "/sys/class", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			    "mode=755");
	if (!err)
		err = rebind_classes(stage);
	if (!err) {
		snprintf(src, sizeof(src), "%s/class/infiniband", tree);
		err = bind_dir(src, "/sys/class/infiniband");
	}
	if (!err) {
		snprintf(src, sizeof(src), "%s/class/infiniband_verbs", tree);
		err = bind_dir(src, "/sys/class/infiniband_verbs");
	}
	if (err) {
		fprintf(stderr, "bvctl run: cannot show the devices under /sys: %s\n",
			strerror(errno));
		umount2("/sys/class", MNT_DETACH); /* the host's view again, whatever was bound */
	}
	umount2(stage, MNT_DETACH);
	rmdir(stage);
	return err ? -1 : 0;
}
