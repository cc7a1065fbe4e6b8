/* SPDX-License-Identifier: MIT */
/* Attributes every bridgeverbs port shares (RoCE v2 over IPv4); device kinds override. */
#ifndef BVD_ATTR_H
#define BVD_ATTR_H

#include "bv_config.h"
#include "bv_proto.h"

/*
 * Neither kind may claim Mellanox's vendor id: perftest and UCX would then take mlx5-only
 * paths (mlx5dv, ibv_wr_*). 0x627665 ("bve") is not an assigned OUI we know of.
 */
#define BV_VENDOR_ID		0x627665
#define BV_PART_CX4		0xb4c4
#define BV_PART_NTB		0xb4e7
#define BV_GID_TBL_LEN		4	/* v1 link-local, v2 link-local, v1 IPv4, v2 IPv4 */
/* cx4: the default GID, the IPv4 address and the net device's IPv6 ones, each as RoCE v1 and
 * v2 where the port carries them (devices/cx4/daemon/port.c); the rest of the table empty */
#define BV_CX4_GID_TBL_LEN	16

void bvd_default_device_attr(const struct bv_dev_conf *conf, struct bv_device_attr *a);
void bvd_default_port_attr(const struct bv_dev_conf *conf, struct bv_port_attr *a);

#endif
