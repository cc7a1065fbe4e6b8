/* SPDX-License-Identifier: MIT */
/*
 * Writing the sysfs tree libibverbs (and, through bvctl run, programs that read /sys
 * directly) see for a device: <rundir>/sysfs/class/infiniband/<ibdev>/... (docs/bvctl.8).
 * bvctl writes what is fixed (identity, device/driver, device/net/<ifname>); the daemon, in
 * the kernel's role, writes what it learns from its device: port state, firmware version
 * and the GID table it programmed.
 */
#ifndef BV_SYSFS_H
#define BV_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bv_proto.h"

/* mkdir -p. 0 or -1 (errno). */
int bv_sysfs_mkdirs(const char *path);
/* Write the formatted text to <dir>/<file>, creating directories. 0 or -1 (said on stderr). */
int bv_sysfs_put(const char *dir, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "xxxx:xxxx:...:xxxx", as the kernel prints a GID. */
void bv_sysfs_gid_str(const uint8_t g[16], char buf[40]);
/* <rundir>/sysfs/class/infiniband/<ibdev>. 0 or -1. */
int bv_sysfs_ibdev_dir(char *buf, size_t len, const char *ibdev);

enum bv_gid_type {
	BV_GID_ROCE_V1 = 1, /* "IB/RoCE v1" */
	BV_GID_ROCE_V2 = 2, /* "RoCE v2" */
};

struct bv_gid_entry {
	uint8_t gid[16];
	uint8_t type; /* enum bv_gid_type */
};

/*
 * Port 1's GID table as the kernel shows it: gids/N, gid_attrs/types/N, gid_attrs/ndevs/N for
 * entries 0..n-1, then empty ones up to len (a zero GID; type "IB/RoCE v1", what libibverbs
 * infers from the kernel's EINVAL on an empty entry's type; no ndevs file). 0 or -1.
 */
int bv_sysfs_write_gids(const char *ibdev_dir, const struct bv_gid_entry *e, unsigned int n,
			unsigned int len, const char *ndev);

/* The files ibstat and ibstatus read of port 1 (state, phys_state, rate, lid, sm_lid, sm_sl,
 * lid_mask_count, cap_mask, link_layer), as Linux ib_core's sysfs.c prints them. */
int bv_sysfs_write_port(const char *ibdev_dir, const struct bv_port_attr *a);

#endif
