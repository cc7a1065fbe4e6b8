// SPDX-License-Identifier: MIT
/* The network device of a configured port (see bv_netdev.h): getifaddrs(3), netdevice(7). */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bv_netdev.h"

/* The interface carrying ip: the one with that address, else the longest prefix holding it. */
static bool carrier_of(struct in_addr ip, char name[IF_NAMESIZE])
{
	struct ifaddrs *ifa, *i;
	int best = -1;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i; i = i->ifa_next) {
		uint32_t a, m;
		int len;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask)
			continue;
		a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
		m = ((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr;
		len = a == ip.s_addr ? 33 : __builtin_popcount(m);
		if ((a & m) != (ip.s_addr & m) || len <= best)
			continue;
		best = len;
		snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
	}
	freeifaddrs(ifa);
	return best >= 0;
}

int bv_netdev_get(const char *ifname, struct bv_netdev *nd)
{
	struct ifreq ifr = {0};
	struct ifaddrs *ifa, *i;
	int s, err = 0;

	memset(nd, 0, sizeof(*nd));
	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -ENODEV;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (ioctl(s, SIOCGIFINDEX, &ifr))
		err = -errno;
	else
		nd->ifindex = (unsigned int)ifr.ifr_ifindex;
	if (!err && ioctl(s, SIOCGIFHWADDR, &ifr) == 0 &&
	    ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER) {
		nd->ethernet = true;
		memcpy(nd->mac, ifr.ifr_hwaddr.sa_data, 6);
	}
	close(s);
	if (err)
		return err == -ENXIO ? -ENODEV : err;
	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i; i = i->ifa_next) {
		const uint8_t *a;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6 || strcmp(i->ifa_name, ifname))
			continue;
		a = ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_V4MAPPED(a) ||
		    IN6_IS_ADDR_MULTICAST(a) || nd->naddr6 == BV_NETDEV_MAX_ADDR6)
			continue;
		memcpy(nd->addr6[nd->naddr6++], a, 16);
	}
	freeifaddrs(ifa);
	return 0;
}

void bv_config_resolve(struct bv_config *cfg)
{
	for (int k = 0; k < cfg->ndev; k++) {
		struct bv_dev_conf *d = &cfg->dev[k];
		char name[IF_NAMESIZE];
		struct bv_netdev nd;

		if (!d->netdev_given && carrier_of(d->ip, name))
			snprintf(d->netdev, sizeof(d->netdev), "%s", name);
		if (!d->mac_given && !bv_netdev_get(d->netdev, &nd) && nd.ethernet)
			memcpy(d->mac, nd.mac, 6);
	}
}
