// SPDX-License-Identifier: MIT
/* Writing a device's sysfs tree (see bv_sysfs.h); formats of Linux drivers/infiniband/core/sysfs.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bv_paths.h"
#include "bv_sysfs.h"

int bv_sysfs_mkdirs(const char *path)
{
	char tmp[BV_PATH_MAX * 2];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

int bv_sysfs_put(const char *dir, const char *file, const char *fmt, ...)
{
	char path[BV_PATH_MAX * 2], d[BV_PATH_MAX * 2], tmp[BV_PATH_MAX * 2 + 8];
	va_list ap;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return -1;
	snprintf(d, sizeof(d), "%s", path);
	*strrchr(d, '/') = 0;
	if (bv_sysfs_mkdirs(d))
		return -1;
	/* readers see the old text or the new, never half of it */
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "%s: %s\n", tmp, strerror(errno));
		return -1;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

void bv_sysfs_gid_str(const uint8_t g[16], char buf[40])
{
	for (int i = 0; i < 8; i++)
		snprintf(buf + 5 * i, 40 - 5 * i, i < 7 ? "%02x%02x:" : "%02x%02x", g[2 * i],
			 g[2 * i + 1]);
}

int bv_sysfs_ibdev_dir(char *buf, size_t len, const char *ibdev)
{
	char root[BV_PATH_MAX];

	if (bv_run_path(root, sizeof(root), "sysfs", ""))
		return -1;
	return snprintf(buf, len, "%s/class/infiniband/%s", root, ibdev) >= (int)len ? -1 : 0;
}

int bv_sysfs_write_gids(const char *ibdev_dir, const struct bv_gid_entry *e, unsigned int n,
			unsigned int len, const char *ndev)
{
	static const uint8_t zero[16];
	int err = 0;

	for (unsigned int i = 0; i < len; i++) {
		char f[64], g[40], path[BV_PATH_MAX * 2];

		bv_sysfs_gid_str(i < n ? e[i].gid : zero, g);
		snprintf(f, sizeof(f), "ports/1/gids/%u", i);
		err |= bv_sysfs_put(ibdev_dir, f, "%s\n", g);
		snprintf(f, sizeof(f), "ports/1/gid_attrs/types/%u", i);
		err |= bv_sysfs_put(ibdev_dir, f, "%s\n",
				    i < n && e[i].type == BV_GID_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1");
		snprintf(f, sizeof(f), "ports/1/gid_attrs/ndevs/%u", i);
		if (i < n) {
			err |= bv_sysfs_put(ibdev_dir, f, "%s\n", ndev);
		} else if (snprintf(path, sizeof(path), "%s/%s", ibdev_dir, f) < (int)sizeof(path)) {
			unlink(path);
		}
	}
	return err ? -1 : 0;
}

/* ib_core rate_show(): the link's rate from the lane speed and the width. */
static void rate_str(uint8_t speed, uint8_t width, char *buf, size_t len)
{
	const char *sp = "", *w;
	int rate, lanes; /* rate in 100 Mb/s per lane */

	switch (speed) {
	case 2: sp = " DDR"; rate = 50; break;
	case 4: sp = " QDR"; rate = 100; break;
	case 8: sp = " FDR10"; rate = 100; break;
	case 16: sp = " FDR"; rate = 140; break;
	case 32: sp = " EDR"; rate = 250; break;
	case 64: sp = " HDR"; rate = 500; break;
	case 128: sp = " NDR"; rate = 1000; break;
	default: rate = 25; break;
	}
	switch (width) {
	case 2: w = "4X"; lanes = 4; break;
	case 4: w = "8X"; lanes = 8; break;
	case 8: w = "12X"; lanes = 12; break;
	case 16: w = "2X"; lanes = 2; break;
	default: w = "1X"; lanes = 1; break;
	}
	rate *= lanes;
	snprintf(buf, len, "%d%s Gb/sec (%s%s)", rate / 10, rate % 10 ? ".5" : "", w, sp);
}

int bv_sysfs_write_port(const char *ibdev_dir, const struct bv_port_attr *a)
{
	static const char *const state[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					    "ACTIVE_DEFER"};
	static const char *const phys[] = {"<unknown>", "Sleep", "Polling", "Disabled",
					   "PortConfigurationTraining", "LinkUp",
					   "LinkErrorRecovery", "Phy Test"};
	char rate[64];
	int err = 0;

	rate_str(a->active_speed, a->active_width, rate, sizeof(rate));
	err |= bv_sysfs_put(ibdev_dir, "ports/1/state", "%u: %s\n", a->state,
			    a->state < 6 ? state[a->state] : "UNKNOWN");
	err |= bv_sysfs_put(ibdev_dir, "ports/1/phys_state", "%u: %s\n", a->phys_state,
			    a->phys_state < 8 ? phys[a->phys_state] : "<unknown>");
	err |= bv_sysfs_put(ibdev_dir, "ports/1/rate", "%s\n", rate);
	err |= bv_sysfs_put(ibdev_dir, "ports/1/lid", "0x%x\n", a->lid);
	err |= bv_sysfs_put(ibdev_dir, "ports/1/sm_lid", "0x%x\n", a->sm_lid);
	err |= bv_sysfs_put(ibdev_dir, "ports/1/sm_sl", "%u\n", a->sm_sl);
	err |= bv_sysfs_put(ibdev_dir, "ports/1/lid_mask_count", "%u\n", a->lmc);
	err |= bv_sysfs_put(ibdev_dir, "ports/1/cap_mask", "0x%08x\n", a->port_cap_flags);
	err |= bv_sysfs_put(ibdev_dir, "ports/1/link_layer", "%s\n",
			    a->link_layer == 1 ? "InfiniBand" : "Ethernet");
	return err ? -1 : 0;
}
