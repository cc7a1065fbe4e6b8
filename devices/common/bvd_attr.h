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
/*
 * A RoCE port's GID table holds more entries than the port's addresses fill, the rest empty:
 * mlx5 sizes it by the device (roce_address_table_size), rxe has 1024 (RXE_PORT_GID_TBL_LEN),
 * and the kernel adds entries as the net device gains addresses. ntb fills its first
 * BV_NTB_NGIDS: 0 fe80:: v1, 1 fe80:: v2, 2 ::ffff:ip v1, 3 ::ffff:ip v2.
 */
#define BV_GID_TBL_LEN		16
#define BV_NTB_NGIDS		4
/* cx4: the default GID, the IPv4 address and the net device's IPv6 ones, each as RoCE v1 and
 * v2 where the port carries them (devices/cx4/daemon/port.c); the rest of the table empty */
#define BV_CX4_GID_TBL_LEN	16

void bvd_default_device_attr(const struct bv_dev_conf *conf, struct bv_device_attr *a);
void bvd_default_port_attr(const struct bv_dev_conf *conf, struct bv_port_attr *a);

#endif
