// SPDX-License-Identifier: MIT
/*
 * The sysfs tree libibverbs 44 reads when RDMA netlink is absent (rdma-core libibverbs/init.c
 * find_sysfs_devs, setup_sysfs_dev; libibverbs/cmd_device.c query_sysfs_gid*),
 * written under <rundir>/sysfs and selected with $SYSFS_PATH (bvctl run also shows it at
 * /sys/class/infiniband, bvctl.c):
 *
 *   class/infiniband_verbs/abi_version                    6
 *   class/infiniband_verbs/uverbsN/{ibdev,dev,abi_version}
 *   class/infiniband/<dev>/{node_type,node_guid,sys_image_guid,node_desc,board_id,hca_type,
 *                           hw_rev}
 *   class/infiniband/<dev>/device/{modalias,numa_node}    modalias bridgeverbs:<kind> (no stock
 *                                                         provider claims it)
 *   class/infiniband/<dev>/device/driver                  -> bus/bridgeverbs/drivers/<kind>d
 *   class/infiniband/<dev>/device/net/<ifname>            -> class/net/<ifname>
 *   class/infiniband/<dev>/bridgeverbs/{socket,kind}      how the provider finds its daemon
 *   class/infiniband/<dev>/ports/1/{gids,gid_attrs/types,gid_attrs/ndevs}/N, pkeys/0,
 *                                  link_layer
 *
 * The daemon adds what it learns from its device (bv_sysfs.h): fw_ver, the port's state
 * files, and for cx4 the GID table it programmed (until then every entry is empty); a daemon
 * that runs as its own user owns its device's directory for that. For ntb
 * the GID table is the one mlx5 builds for a RoCE port: 0 fe80:: v1, 1 fe80:: v2, 2 ::ffff:ip
 * v1, 3 ::ffff:ip v2, the rest of its BV_GID_TBL_LEN entries empty. Every index below
 * gid_tbl_len has its files: perftest and ibv_devinfo query them all.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bv_install.h"
#include "bv_sysfs.h"
#include "bvd_attr.h"
#include "bvctl.h"

/* <dir>/<name> -> target, replacing what was there. */
static int relink(const char *dir, const char *name, const char *target)
{
	char path[BV_PATH_MAX * 2];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	unlink(path);
	if (symlink(target, path)) {
		fprintf(stderr, "bvctl: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The device's parent, as a PCI function's directory is for mlx5: its driver (the daemon in
 * the kernel's role; Open MPI's UCX component reads the link's name) and its net device
 * (device/net/<ifname>, a link to that interface's directory, which pyverbs lists). In the
 * tree the net link dangles; in the view bvctl run gives of /sys it is the live interface.
 */
static int write_parent(const char *root, const char *ibdev_dir, const struct bv_dev_conf *dev)
{
	char d[BV_PATH_MAX * 3], drv[BV_PATH_MAX * 4], link[BV_PATH_MAX];
	int err = 0;

	snprintf(d, sizeof(d), "%s/device", ibdev_dir);
	snprintf(drv, sizeof(drv), "%s/bus/bridgeverbs/drivers/%sd", root, dev->kind);
	err |= bv_sysfs_mkdirs(drv);
	err |= bv_sysfs_put(d, "modalias", BV_MODALIAS_PREFIX "%s\n", dev->kind);
	err |= bv_sysfs_put(d, "numa_node", "-1\n");
	/* device -> <dev> -> infiniband -> class -> the tree's root */
	snprintf(link, sizeof(link), "../../../../bus/bridgeverbs/drivers/%sd", dev->kind);
	err |= relink(d, "driver", link);
	snprintf(drv, sizeof(drv), "%s/net", d);
	err |= bv_sysfs_mkdirs(drv);
	/* net -> device -> <dev> -> infiniband -> class */
	snprintf(link, sizeof(link), "../../../../net/%s", dev->netdev);
	err |= relink(drv, dev->netdev, link);
	return err;
}

static uid_t daemon_uid;
static gid_t daemon_gid;

static int chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (lchown(path, daemon_uid, daemon_gid)) {
		fprintf(stderr, "bvctl: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The daemon, in the kernel's role, rewrites its device's attributes as it learns them
 * (bv_sysfs.h: fw_ver, the port's state, cx4's GID table), each file through a rename in its
 * directory. Started by root as BV_DAEMON_USER (bvctl or its unit), it owns its device's
 * directory; the rest of the tree stays root's. Without that user, nothing to do.
 */
static int give_to_daemon(const char *ibdev_dir)
{
	const struct passwd *pw;

	if (geteuid() != 0 || !*BV_DAEMON_USER)
		return 0;
	if (!(pw = getpwnam(BV_DAEMON_USER)))
		return 0;	/* starting the daemon says so */
	daemon_uid = pw->pw_uid;
	daemon_gid = pw->pw_gid;
	return nftw(ibdev_dir, chown_entry, 16, FTW_PHYS) ? -1 : 0;
}

static bool gids_present(const char *ibdev_dir)
{
	char path[BV_PATH_MAX * 3];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ports/1/gids/0", ibdev_dir);
	return stat(path, &st) == 0;
}

static int write_device(const char *root, const struct bv_dev_conf *dev)
{
	char d[BV_PATH_MAX * 2], sock[BV_PATH_MAX];
	uint64_t guid = bv_dev_node_guid(dev);
	int err = 0;

	snprintf(d, sizeof(d), "%s/class/infiniband_verbs/uverbs%d", root,
		 BV_UVERBS_BASE + dev->index);
	err |= bv_sysfs_put(d, "ibdev", "%s\n", dev->name);
	err |= bv_sysfs_put(d, "dev", "1:3\n"); /* /dev/null, which uverbsN links to */
	err |= bv_sysfs_put(d, "abi_version", "1\n");

	snprintf(d, sizeof(d), "%s/class/infiniband/%s", root, dev->name);
	err |= bv_sysfs_put(d, "node_type", "1: CA\n");
	err |= bv_sysfs_put(d, "node_guid", "%04x:%04x:%04x:%04x\n",
			    (unsigned)(guid >> 48) & 0xffff, (unsigned)(guid >> 32) & 0xffff,
			    (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
	err |= bv_sysfs_put(d, "sys_image_guid", "%04x:%04x:%04x:%04x\n",
			    (unsigned)(guid >> 48) & 0xffff, (unsigned)(guid >> 32) & 0xffff,
			    (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
	err |= bv_sysfs_put(d, "node_desc", "bridgeverbs %s %s\n", dev->kind, dev->name);
	err |= bv_sysfs_put(d, "hca_type", "%s\n", dev->kind);
	err |= bv_sysfs_put(d, "hw_rev", "0x0\n");
	err |= bv_sysfs_put(d, "board_id", "BRIDGEVERBS_%s\n",
			    !strcmp(dev->kind, "cx4") ? "CX4" : "NTB");
	err |= write_parent(root, d, dev);
	if (bv_run_path(sock, sizeof(sock), dev->name, ".sock"))
		return -1;
	err |= bv_sysfs_put(d, "bridgeverbs/socket", "%s\n", sock);
	err |= bv_sysfs_put(d, "bridgeverbs/kind", "%s\n", dev->kind);

	if (!strcmp(dev->kind, "ntb")) {
		struct bv_gid_entry e[BV_NTB_NGIDS];

		for (int i = 0; i < BV_NTB_NGIDS; i++) {
			if (i < 2)
				bv_dev_gid_link_local(dev, e[i].gid);
			else
				bv_dev_gid_ipv4(dev, e[i].gid);
			e[i].type = i % 2 ? BV_GID_ROCE_V2 : BV_GID_ROCE_V1;
		}
		err |= bv_sysfs_write_gids(d, e, BV_NTB_NGIDS, BV_GID_TBL_LEN, dev->netdev);
	} else if (!gids_present(d)) {
		/*
		 * cx4d writes the table it programmed into the device (port.c); until then every
		 * entry is empty. A table already there is a running daemon's (bvctl up restarting
		 * another device must not blank it) or a dead one's, which its restart rewrites.
		 */
		err |= bv_sysfs_write_gids(d, NULL, 0, BV_CX4_GID_TBL_LEN, dev->netdev);
	}
	err |= bv_sysfs_put(d, "ports/1/pkeys/0", "0xffff\n");
	err |= bv_sysfs_put(d, "ports/1/link_layer", "Ethernet\n");
	err |= give_to_daemon(d);
	return err ? -1 : 0;
}

int bvctl_write_sysfs(const struct bv_config *cfg)
{
	char root[BV_PATH_MAX], d[BV_PATH_MAX * 2];

	if (bv_run_path(root, sizeof(root), "sysfs", ""))
		return -1;
	snprintf(d, sizeof(d), "%s/class/infiniband_verbs", root);
	if (bv_sysfs_mkdirs(d) || bv_sysfs_put(d, "abi_version", "6\n"))
		return -1;
	for (int i = 0; i < cfg->ndev; i++)
		if (write_device(root, &cfg->dev[i]))
			return -1;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int bvctl_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
