/* SPDX-License-Identifier: MIT */
/*
 * The network device of a configured port, from the interfaces of this network namespace
 * (docs/bvctl.8, "net device"). bvctl and the daemons decide it the same way, in the
 * namespace where `bvctl up` runs:
 *   - the configuration's `netdev`, else the interface that carries the port's IPv4 address
 *     (the one with that address, else the one whose prefix holds it: lo for 127.x.y.z);
 *   - the port's MAC: the configuration's `mac`, else, on an Ethernet device, the device's
 *     own (so that its link-local IPv6 address is the port's default GID and its neighbours
 *     know the port by it), else the configured default.
 */
#ifndef BV_NETDEV_H
#define BV_NETDEV_H

#include <stdbool.h>
#include <stdint.h>

#include "bv_config.h"

#define BV_NETDEV_MAX_ADDR6 8

struct bv_netdev {
	unsigned int ifindex;	/* 0: no such device in this namespace */
	bool ethernet;		/* ARPHRD_ETHER (not the loopback) */
	uint8_t mac[6];
	/* IPv6 addresses of global scope on it (not link-local, loopback or IPv4-mapped) */
	unsigned int naddr6;
	uint8_t addr6[BV_NETDEV_MAX_ADDR6][16];
};

/* Decide every device's net device and MAC as above (a no-op for what the file gives). */
void bv_config_resolve(struct bv_config *cfg);

/* What the device ifname is now: 0, or -errno (-ENODEV when it does not exist). */
int bv_netdev_get(const char *ifname, struct bv_netdev *nd);

#endif
