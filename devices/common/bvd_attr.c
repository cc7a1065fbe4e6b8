// SPDX-License-Identifier: MIT
#include <string.h>
#include <infiniband/verbs.h>

#include "bvd_attr.h"

void bvd_default_device_attr(const struct bv_dev_conf *conf, struct bv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->node_guid = bv_dev_node_guid(conf);
	a->sys_image_guid = a->node_guid;
	a->vendor_id = BV_VENDOR_ID;
	a->max_mr_size = ~0ull;
	a->page_size_cap = 0xfffff000;	/* 4 KiB and up */
	a->phys_port_cnt = 1;
	a->max_pkeys = 1;		/* RoCE: the default pkey only */
	a->local_ca_ack_delay = 16;
	a->atomic_cap = IBV_ATOMIC_NONE;
}

void bvd_default_port_attr(const struct bv_dev_conf *conf, struct bv_port_attr *a)
{
	long mtu = bv_conf_get_long(conf, "mtu", 4096);

	memset(a, 0, sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->phys_state = 5;		/* LinkUp */
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = mtu >= 4096 ? IBV_MTU_4096 : mtu >= 2048 ? IBV_MTU_2048 :
			mtu >= 1024 ? IBV_MTU_1024 : mtu >= 512 ? IBV_MTU_512 : IBV_MTU_256;
	a->gid_tbl_len = BV_GID_TBL_LEN;
	/* what mlx5 reports for a RoCE port: CM supported, IP based GIDs */
	a->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a->max_msg_sz = 1u << 30;
	a->pkey_tbl_len = 1;
	a->max_vl_num = 1;
	a->active_width = 2;		/* 4X */
	a->active_speed = 32;		/* EDR, 25 Gb/s per lane */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
}
