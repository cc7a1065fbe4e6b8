// SPDX-License-Identifier: MIT
/*
 * The sysfs tree libibverbs 44 reads when RDMA netlink is absent (research/rdma-core.md §2.2),
 * written under <rundir>/sysfs and selected with $SYSFS_PATH:
 *
 *   class/infiniband_verbs/abi_version                    6
 *   class/infiniband_verbs/uverbsN/{ibdev,dev,abi_version}
 *   class/infiniband/<dev>/{node_type,node_guid,sys_image_guid,node_desc,board_id,hca_type}
 *   class/infiniband/<dev>/device/modalias                bridgeverbs:<kind> (no stock provider
 *                                                         claims it)
 *   class/infiniband/<dev>/bridgeverbs/{socket,kind}      how the provider finds its daemon
 *   class/infiniband/<dev>/ports/1/{gids,gid_attrs/types,gid_attrs/ndevs}/0..3, pkeys/0
 *
 * GID table as mlx5 fills it for a RoCE port: 0 fe80:: v1, 1 fe80:: v2, 2 ::ffff:ip v1,
 * 3 ::ffff:ip v2. Every index below gid_tbl_len has its files: perftest and ibv_devinfo query
 * them all.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bvctl.h"

static int mkdirs(const char *path)
{
	char tmp[BV_PATH_MAX * 2];

	snprintf(tmp, sizeof(tmp), "%s", path);
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

static int put(const char *dir, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int put(const char *dir, const char *file, const char *fmt, ...)
{
	char path[BV_PATH_MAX * 2];
	va_list ap;
	FILE *f;
	char d[sizeof(path)];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(d, sizeof(d), "%s", path);
	*strrchr(d, '/') = 0;
	if (mkdirs(d))
		return -1;
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "bvctl: %s: %s\n", path, strerror(errno));
		return -1;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f);
}

/* "xxxx:xxxx:...:xxxx", 39 characters and the NUL */
static void gid_str(const uint8_t g[16], char buf[40])
{
	for (int i = 0; i < 8; i++)
		snprintf(buf + 5 * i, 40 - 5 * i, i < 7 ? "%02x%02x:" : "%02x%02x", g[2 * i],
			 g[2 * i + 1]);
}

static int write_device(const char *root, const struct bv_dev_conf *dev)
{
	char d[BV_PATH_MAX * 2], sock[BV_PATH_MAX], g[40];
	uint64_t guid = bv_dev_node_guid(dev);
	uint8_t gid_ll[16], gid_ip[16];
	int err = 0;

	snprintf(d, sizeof(d), "%s/class/infiniband_verbs/uverbs%d", root,
		 BV_UVERBS_BASE + dev->index);
	err |= put(d, "ibdev", "%s\n", dev->name);
	err |= put(d, "dev", "1:3\n");	/* /dev/null, which uverbsN links to */
	err |= put(d, "abi_version", "1\n");

	snprintf(d, sizeof(d), "%s/class/infiniband/%s", root, dev->name);
	err |= put(d, "node_type", "1: CA\n");
	err |= put(d, "node_guid", "%04x:%04x:%04x:%04x\n", (unsigned)(guid >> 48) & 0xffff,
		   (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		   (unsigned)guid & 0xffff);
	err |= put(d, "sys_image_guid", "%04x:%04x:%04x:%04x\n", (unsigned)(guid >> 48) & 0xffff,
		   (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		   (unsigned)guid & 0xffff);
	err |= put(d, "node_desc", "bridgeverbs %s %s\n", dev->kind, dev->name);
	err |= put(d, "hca_type", "%s\n", dev->kind);
	err |= put(d, "board_id", "BRIDGEVERBS_%s\n", !strcmp(dev->kind, "cx4") ? "CX4" : "NTB");
	err |= put(d, "device/modalias", BV_MODALIAS_PREFIX "%s\n", dev->kind);
	if (bv_run_path(sock, sizeof(sock), dev->name, ".sock"))
		return -1;
	err |= put(d, "bridgeverbs/socket", "%s\n", sock);
	err |= put(d, "bridgeverbs/kind", "%s\n", dev->kind);

	bv_dev_gid_link_local(dev, gid_ll);
	bv_dev_gid_ipv4(dev, gid_ip);
	for (int i = 0; i < 4; i++) {
		char f[64];

		gid_str(i < 2 ? gid_ll : gid_ip, g);
		snprintf(f, sizeof(f), "ports/1/gids/%d", i);
		err |= put(d, f, "%s\n", g);
		snprintf(f, sizeof(f), "ports/1/gid_attrs/types/%d", i);
		err |= put(d, f, "%s\n", i % 2 ? "RoCE v2" : "IB/RoCE v1");
		snprintf(f, sizeof(f), "ports/1/gid_attrs/ndevs/%d", i);
		err |= put(d, f, "%s\n", dev->netdev);
	}
	err |= put(d, "ports/1/pkeys/0", "0xffff\n");
	err |= put(d, "ports/1/link_layer", "Ethernet\n");
	return err ? -1 : 0;
}

int bvctl_write_sysfs(const struct bv_config *cfg)
{
	char root[BV_PATH_MAX], d[BV_PATH_MAX * 2];

	if (bv_run_path(root, sizeof(root), "sysfs", ""))
		return -1;
	snprintf(d, sizeof(d), "%s/class/infiniband_verbs", root);
	if (mkdirs(d) || put(d, "abi_version", "6\n"))
		return -1;
	for (int i = 0; i < cfg->ndev; i++)
		if (write_device(root, &cfg->dev[i]))
			return -1;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int bvctl_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
