// SPDX-License-Identifier: MIT
/*
 * The destination MAC of an IP address on the port's Ethernet net device, from the host's
 * neighbour table through libnl-route-3: what the kernel's ib_resolve_eth_dmac() gets from
 * rdma_addr_find_l2_eth_by_grh(), and libibverbs' ibv_resolve_eth_l2_from_gid() from the
 * same table. An address the table does not know yet is resolved the way a socket's first
 * datagram resolves it: one UDP datagram to the discard port makes the kernel send its ARP
 * request or neighbour solicitation, and the answer appears in the table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/neighbour.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netlink/netlink.h>
#include <netlink/route/neighbour.h>

#include "cx4d.h"

#define NEIGH_WAIT_MS 1000 /* the kernel's rdma_resolve_ip timeouts are of this order */
#define DISCARD_PORT 9	   /* RFC 863 */

/* A state whose link-layer address can be used (the kernel's NUD_VALID). */
#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)

/* One look at the table: 0 and the MAC, -ENOENT while unknown, or -errno. */
static int lookup(int ifindex, int family, const uint8_t *addr, uint8_t mac[6])
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cache *cache = NULL;
	struct nl_addr *dst = NULL;
	struct rtnl_neigh *n = NULL;
	int err = -ENOMEM;

	if (!sk)
		return -ENOMEM;
	if (nl_connect(sk, NETLINK_ROUTE) || rtnl_neigh_alloc_cache(sk, &cache)) {
		err = -EIO;
		goto out;
	}
	dst = nl_addr_build(family, addr, family == AF_INET ? 4 : 16);
	if (!dst)
		goto out;
	n = rtnl_neigh_get(cache, ifindex, dst);
	err = -ENOENT;
	if (n && (rtnl_neigh_get_state(n) & NUD_USABLE)) {
		struct nl_addr *ll = rtnl_neigh_get_lladdr(n);

		if (ll && nl_addr_get_len(ll) == 6) {
			memcpy(mac, nl_addr_get_binary_addr(ll), 6);
			err = 0;
		}
	}
out:
	if (n)
		rtnl_neigh_put(n);
	if (dst)
		nl_addr_put(dst);
	if (cache)
		nl_cache_free(cache);
	nl_socket_free(sk);
	return err;
}

/* A datagram to the address through the device: the kernel resolves its neighbour. */
static void provoke(struct cx4d *d, const char *ifname, int ifindex, int family,
		    const uint8_t *addr)
{
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} to = {0};
	socklen_t len;
	int s = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return;
	if (family == AF_INET) {
		to.v4.sin_family = AF_INET;
		to.v4.sin_port = htons(DISCARD_PORT);
		memcpy(&to.v4.sin_addr, addr, 4);
		len = sizeof(to.v4);
	} else {
		to.v6.sin6_family = AF_INET6;
		to.v6.sin6_port = htons(DISCARD_PORT);
		to.v6.sin6_scope_id = (uint32_t)ifindex;
		memcpy(&to.v6.sin6_addr, addr, 16);
		len = sizeof(to.v6);
	}
	/* through the port's device, as the port's own packets go (needs CAP_NET_RAW) */
	setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname) + 1);
	if (sendto(s, "", 0, MSG_DONTWAIT, (struct sockaddr *)&to, len) < 0 && errno != EAGAIN)
		cx4d_log(d, "neighbour resolution through %s: %s", ifname, strerror(errno));
	close(s);
}

int cx4d_neigh_resolve(struct cx4d *d, const uint8_t gid[16], uint8_t mac[6])
{
	static const uint8_t v4pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	const char *ifname = d->conf->netdev;
	int ifindex = (int)if_nametoindex(ifname);
	int family = memcmp(gid, v4pfx, 12) ? AF_INET6 : AF_INET;
	const uint8_t *addr = family == AF_INET ? gid + 12 : gid;
	struct timespec ts = {0, 10 * 1000000};
	int err;

	if (!ifindex)
		return EHOSTUNREACH;
	err = lookup(ifindex, family, addr, mac);
	if (err == -ENOENT) {
		provoke(d, ifname, ifindex, family, addr);
		for (int t = 0; t < NEIGH_WAIT_MS && err == -ENOENT; t += 10) {
			nanosleep(&ts, NULL);
			err = lookup(ifindex, family, addr, mac);
		}
	}
	if (err) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(family, addr, a, sizeof(a));
		cx4d_log(d, "no neighbour %s on %s: %s", a, ifname,
			 err == -ENOENT ? "not resolved within 1 s" : strerror(-err));
		return EHOSTUNREACH;
	}
	return 0;
}
