// SPDX-License-Identifier: MIT
/*
 * Addresses, as rdma_cm's core has them (Linux cma.c): binding an id to an address and a
 * port of its port space, resolving a destination to GIDs and a route, forming service IDs,
 * the IP header rdma_cm puts in front of REQ and SIDR_REQ private data, and finding the
 * listener a request is for.
 *
 * The library routes: it picks the daemon whose device owns an address (or the first device
 * for loopback and wildcard destinations) and sends the id there; this daemon checks that
 * the address is its own. Addresses of this device: its IPv4 address (also as ::ffff:a.b.c.d),
 * its link-local GID as an IPv6 address, any loopback address, and its GIDs as AF_IB.
 *
 * Port bindings are per daemon, in bind lists per (port space, port) with the kernel's
 * rules (cma_check_port: REUSEADDR, AFONLY, wildcard against specific); a wildcard bind is
 * made on every daemon by the library with one port (BV_CM_BIND_WILDCARD_SET), so its
 * conflicts with any device's bindings are found.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <ifaddrs.h>
#include <infiniband/ib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm.h"

/* ---- sockaddr helpers ---------------------------------------------------------------------- */

static const struct sockaddr_in *in4(const struct sockaddr *sa)
{
	return (const struct sockaddr_in *)sa;
}

static const struct sockaddr_in6 *in6(const struct sockaddr *sa)
{
	return (const struct sockaddr_in6 *)sa;
}

static const struct sockaddr_ib *inib(const struct sockaddr *sa)
{
	return (const struct sockaddr_ib *)sa;
}

bool cm_any_addr(const struct sockaddr *sa)
{
	static const uint8_t zero[16];

	switch (sa->sa_family) {
	case AF_INET:
		return in4(sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	case AF_INET6:
		return !memcmp(&in6(sa)->sin6_addr, zero, 16);
	case AF_IB:
		return !memcmp(&inib(sa)->sib_addr, zero, 16);
	default:
		return false;
	}
}

bool cm_loopback_addr(const struct sockaddr *sa)
{
	const uint8_t *a6;

	switch (sa->sa_family) {
	case AF_INET:
		return (ntohl(in4(sa)->sin_addr.s_addr) >> 24) == 127;
	case AF_INET6:
		a6 = in6(sa)->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_LOOPBACK(&in6(sa)->sin6_addr))
			return true;
		return IN6_IS_ADDR_V4MAPPED(&in6(sa)->sin6_addr) && a6[12] == 127;
	default:
		return false;
	}
}

uint16_t cm_addr_port(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ntohs(in4(sa)->sin_port);
	case AF_INET6:
		return ntohs(in6(sa)->sin6_port);
	case AF_IB:
		return (uint16_t)(be64toh(inib(sa)->sib_sid) & be64toh(inib(sa)->sib_sid_mask));
	default:
		return 0;
	}
}

void cm_addr_set_port(struct sockaddr *sa, uint16_t port)
{
	struct sockaddr_ib *ib = (struct sockaddr_ib *)sa;
	uint64_t sid, mask;

	switch (sa->sa_family) {
	case AF_INET:
		((struct sockaddr_in *)sa)->sin_port = htons(port);
		break;
	case AF_INET6:
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
		break;
	case AF_IB:
		sid = be64toh(ib->sib_sid);
		mask = be64toh(ib->sib_sid_mask);
		ib->sib_sid = htobe64((sid & mask) | port);
		ib->sib_sid_mask = htobe64(~0ull);
		break;
	}
}

/* The address bytes of sa (4, 16 or 16), for comparisons. */
static const void *addr_bytes(const struct sockaddr *sa, size_t *len)
{
	switch (sa->sa_family) {
	case AF_INET:
		*len = 4;
		return &in4(sa)->sin_addr;
	case AF_INET6:
		*len = 16;
		return &in6(sa)->sin6_addr;
	case AF_IB:
		*len = 16;
		return &inib(sa)->sib_addr;
	default:
		*len = 0;
		return NULL;
	}
}

/* Linux cma_addr_cmp(): 0 when family and address are the same. */
static int addr_cmp(const struct sockaddr *a, const struct sockaddr *b)
{
	size_t la, lb;
	const void *pa = addr_bytes(a, &la), *pb = addr_bytes(b, &lb);

	if (a->sa_family != b->sa_family)
		return 1;
	return la != lb || memcmp(pa, pb, la);
}

/* The GID of an IP address on RoCE (rdma_ip2gid): IPv4-mapped, or the IPv6 address. */
static void ip2gid(const struct sockaddr *sa, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &in4(sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid, &in6(sa)->sin6_addr, 16);
	} else if (sa->sa_family == AF_IB) {
		memcpy(gid, &inib(sa)->sib_addr, 16);
	}
}

/* Is sa one of this port's own addresses? */
static bool addr_is_own(struct cm_dev *cm, const struct sockaddr *sa)
{
	uint8_t gid[16];

	ip2gid(sa, gid);
	return !memcmp(gid, cm->port.gid, 16) || !memcmp(gid, cm->port.gid6, 16);
}

/* May an id bind to sa here? (loopback counts: the library routes it to the first port.) */
static bool addr_is_mine(struct cm_dev *cm, const struct sockaddr *sa)
{
	return cm_any_addr(sa) || cm_loopback_addr(sa) || addr_is_own(cm, sa);
}

/* The source GID and its index for an id bound to src (our IPv4 GID unless link-local). */
static void src_gid(struct cm_dev *cm, const struct sockaddr *src, uint8_t gid[16],
		    uint8_t *index)
{
	uint8_t g[16];

	ip2gid(src, g);
	if (!memcmp(g, cm->port.gid6, 16)) {
		memcpy(gid, cm->port.gid6, 16);
		*index = cm->port.gid6_index;
	} else {
		memcpy(gid, cm->port.gid, 16);
		*index = cm->port.gid_index;
	}
}

/* ---- ports and bind lists (Linux cma_get_port and friends) ---------------------------------- */

static struct cm_bind *bind_find(struct cm_dev *cm, uint16_t ps, uint16_t port)
{
	for (struct cm_bind *b = cm->binds; b; b = b->next)
		if (b->ps == ps && b->port == port)
			return b;
	return NULL;
}

static void bind_add(struct cm_bind *b, struct cm_id *id)
{
	cm_addr_set_port((struct sockaddr *)&id->src, b->port);
	id->bind = b;
	id->bind_next = b->owners;
	b->owners = id;
}

static int bind_new(struct cm_dev *cm, uint16_t ps, uint16_t port, struct cm_id *id)
{
	struct cm_bind *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->ps = ps;
	b->port = port;
	b->next = cm->binds;
	cm->binds = b;
	bind_add(b, id);
	return 0;
}

void cm_unbind(struct cm_id *id)
{
	struct cm_bind *b = id->bind;
	struct cm_dev *cm = id->cm;

	if (!b)
		return;
	for (struct cm_id **p = &b->owners; *p; p = &(*p)->bind_next)
		if (*p == id) {
			*p = id->bind_next;
			break;
		}
	id->bind = NULL;
	id->bind_next = NULL;
	if (b->owners)
		return;
	for (struct cm_bind **p = &cm->binds; *p; p = &(*p)->next)
		if (*p == b) {
			*p = b->next;
			break;
		}
	free(b);
}

/* Linux cma_check_port() */
static int check_port(struct cm_bind *b, struct cm_id *id, bool reuseaddr)
{
	const struct sockaddr *addr = (const struct sockaddr *)&id->src;

	for (struct cm_id *cur = b->owners; cur; cur = cur->bind_next) {
		const struct sockaddr *cur_addr = (const struct sockaddr *)&cur->src;

		if (cur == id)
			continue;
		if (reuseaddr && cur->reuseaddr)
			continue;
		if (id->afonly && cur->afonly && addr->sa_family != cur_addr->sa_family)
			continue;
		if (cm_any_addr(addr) || cm_any_addr(cur_addr))
			return -EADDRNOTAVAIL;
		if (!addr_cmp(addr, cur_addr))
			return -EADDRINUSE;
	}
	return 0;
}

/* Linux cma_port_is_unique(): may an ephemeral port be shared with these owners? */
static int port_is_unique(struct cm_bind *b, struct cm_id *id)
{
	const struct sockaddr *daddr = (const struct sockaddr *)&id->dst;
	const struct sockaddr *saddr = (const struct sockaddr *)&id->src;
	uint16_t dport = cm_addr_port(daddr);

	for (struct cm_id *cur = b->owners; cur; cur = cur->bind_next) {
		const struct sockaddr *cur_daddr = (const struct sockaddr *)&cur->dst;
		const struct sockaddr *cur_saddr = (const struct sockaddr *)&cur->src;

		if (cur == id)
			continue;
		if (dport && cm_addr_port(cur_daddr) && dport != cm_addr_port(cur_daddr))
			continue;
		if (!cm_any_addr(saddr) && !cm_any_addr(cur_saddr) && addr_cmp(saddr, cur_saddr))
			continue;
		if (!cm_any_addr(daddr) && !cm_any_addr(cur_daddr) && addr_cmp(daddr, cur_daddr))
			continue;
		return -EADDRNOTAVAIL;
	}
	return 0;
}

static void local_port_range(int *low, int *high)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

	*low = 32768;
	*high = 60999;
	if (f) {
		if (fscanf(f, "%d %d", low, high) != 2 || *low < 1 || *high > 65535 || *low > *high) {
			*low = 32768;
			*high = 60999;
		}
		fclose(f);
	}
}

/* Linux cma_alloc_any_port() */
static int alloc_any_port(struct cm_dev *cm, uint16_t ps, struct cm_id *id)
{
	int low, high, remaining;
	uint32_t rover;

	local_port_range(&low, &high);
	remaining = high - low + 1;
	rover = (uint32_t)low + (uint32_t)random() % (uint32_t)remaining;
	for (; remaining; remaining--) {
		if (rover != cm->last_port) {
			struct cm_bind *b = bind_find(cm, ps, (uint16_t)rover);
			int ret = 0;

			if (!b)
				ret = bind_new(cm, ps, (uint16_t)rover, id);
			else if (!(ret = port_is_unique(b, id)))
				bind_add(b, id);
			if (!ret)
				cm->last_port = rover;
			if (ret != -EADDRNOTAVAIL)
				return ret;
		}
		if (++rover > (uint32_t)high)
			rover = (uint32_t)low;
	}
	return -EADDRNOTAVAIL;
}

/* Linux cma_select_ib_ps(): an AF_IB address names its port space in its service ID. */
static uint16_t select_ib_ps(struct cm_id *id)
{
	struct sockaddr_ib *sib = (struct sockaddr_ib *)&id->src;
	uint64_t mask = be64toh(sib->sib_sid_mask) & IB_CMA_PS_MASK;
	uint64_t sid = be64toh(sib->sib_sid) & mask, sid_ps;
	uint16_t ps = 0;

	if (id->ps == RDMA_PS_IB && sid == (RDMA_IB_PS_IB & mask)) {
		sid_ps = RDMA_IB_PS_IB;
		ps = RDMA_PS_IB;
	} else if ((id->ps == RDMA_PS_IB || id->ps == RDMA_PS_TCP) &&
		   sid == (RDMA_IB_IP_PS_TCP & mask)) {
		sid_ps = RDMA_IB_IP_PS_TCP;
		ps = RDMA_PS_TCP;
	} else if ((id->ps == RDMA_PS_IB || id->ps == RDMA_PS_UDP) &&
		   sid == (RDMA_IB_IP_PS_UDP & mask)) {
		sid_ps = RDMA_IB_IP_PS_UDP;
		ps = RDMA_PS_UDP;
	}
	if (ps) {
		sib->sib_sid = htobe64(sid_ps | cm_addr_port((struct sockaddr *)sib));
		sib->sib_sid_mask = htobe64(IB_CMA_PS_MASK | be64toh(sib->sib_sid_mask));
	}
	return ps;
}

/* Linux cma_get_port() */
static int get_port(struct cm_id *id)
{
	struct cm_dev *cm = id->cm;
	const struct sockaddr *src = (const struct sockaddr *)&id->src;
	uint16_t ps, port = cm_addr_port(src);
	struct cm_bind *b;
	int ret;

	ps = src->sa_family == AF_IB ? select_ib_ps(id) : id->ps;
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB && ps != RDMA_PS_IPOIB)
		return -EPROTONOSUPPORT;
	if (!port)
		return alloc_any_port(cm, ps, id);
	b = bind_find(cm, ps, port);
	if (!b)
		return bind_new(cm, ps, port, id);
	ret = check_port(b, id, id->reuseaddr);
	if (!ret)
		bind_add(b, id);
	return ret;
}

/* Linux rdma_bind_addr_dst() */
int cm_bind(struct cm_id *id, const struct sockaddr *addr, bool wildcard_set)
{
	socklen_t len = bv_cm_addrlen(addr);
	int ret;

	if (!len)
		return -EAFNOSUPPORT;
	if (id->state != CMA_IDLE)
		return -EINVAL;
	if (!addr_is_mine(id->cm, addr))
		return -EADDRNOTAVAIL;
	if (wildcard_set && (!cm_any_addr(addr) || !cm_addr_port(addr)))
		return -EINVAL;
	memset(&id->src, 0, sizeof(id->src));
	memcpy(&id->src, addr, len);
	if (!id->afonly_set)
		id->afonly = addr->sa_family == AF_INET;	/* AF_INET6: bindv6only = 0 */
	if (id->dst.ss_family != addr->sa_family) {
		memset(&id->dst, 0, sizeof(id->dst));
		id->dst.ss_family = addr->sa_family;
	}
	id->wildcard_set = wildcard_set;
	ret = get_port(id);
	if (ret)
		return ret;
	src_gid(id->cm, (struct sockaddr *)&id->src, id->sgid, &id->sgid_index);
	id->state = CMA_ADDR_BOUND;
	return 0;
}

/* Linux rdma_listen() */
int cm_listen(struct cm_id *id, int backlog)
{
	int ret;

	if (id->state == CMA_IDLE) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		ret = cm_bind(id, (struct sockaddr *)&any, false);
		if (ret)
			return ret;
	}
	if (id->state != CMA_ADDR_BOUND)
		return -EINVAL;
	/* a listener may not share its port any more */
	if (id->reuseaddr) {
		ret = check_port(id->bind, id, false);
		if (ret)
			return ret;
		id->reuseaddr = false;
	}
	id->backlog = backlog <= 0 || backlog > UCMA_MAX_BACKLOG ? UCMA_MAX_BACKLOG : backlog;
	id->state = CMA_LISTEN;
	id->ib = IBCM_LISTEN;
	return 0;
}

/* ---- resolution ------------------------------------------------------------------------------ */

static void route_event(struct cm_id *id, uint32_t event, int status)
{
	struct bv_cm_event ev;

	cm_event_init(&ev, event, status);
	if (!status) {
		ev.flags = BV_CM_EVENT_ROUTE;
		cm_route_of(id, &ev.route);
	}
	cm_event(id, &ev);
}

/*
 * Linux rdma_resolve_addr() with RoCE's resolution (addr_resolve(), cma_resolve_loopback()):
 * the destination GID of an IP address is that address as a GID (no ARP: the MAC is the
 * driver's business when the route is used), a loopback or wildcard destination, or one of
 * our own addresses, is this port itself. ADDR_RESOLVED follows at once.
 */
int cm_resolve_addr(struct cm_id *id, const struct sockaddr *src, const struct sockaddr *dst,
		    bool loopback)
{
	socklen_t dlen = bv_cm_addrlen(dst);
	int ret;

	if (!dlen)
		return -EAFNOSUPPORT;
	if (id->state == CMA_IDLE) {
		struct sockaddr_storage any = { .ss_family = dst->sa_family };

		if (dst->sa_family == AF_IB)
			((struct sockaddr_ib *)&any)->sib_pkey = inib(dst)->sib_pkey;
		memset(&id->dst, 0, sizeof(id->dst));
		memcpy(&id->dst, dst, dlen);
		ret = cm_bind(id, src && src->sa_family ? src : (struct sockaddr *)&any, false);
		if (ret)
			return ret;
	} else if (id->state != CMA_ADDR_BOUND) {
		return -EINVAL;
	}
	if (id->src.ss_family != dst->sa_family)
		return -EINVAL;
	memset(&id->dst, 0, sizeof(id->dst));
	memcpy(&id->dst, dst, dlen);
	/*
	 * An unbound source is the port's own address, except towards a loopback address that is
	 * not ours: then the source is that loopback address (the kernel's cma_bind_loopback()
	 * sets 127.0.0.1 / ::1 for a wildcard destination).
	 */
	loopback |= cm_any_addr(dst);
	if (cm_any_addr((struct sockaddr *)&id->src)) {
		uint16_t port = cm_addr_port((struct sockaddr *)&id->src);

		if (loopback && !addr_is_own(id->cm, dst)) {
			if (id->src.ss_family == AF_INET)
				((struct sockaddr_in *)&id->src)->sin_addr.s_addr =
					cm_any_addr(dst) ? htonl(INADDR_LOOPBACK) :
							   in4(dst)->sin_addr.s_addr;
			else if (id->src.ss_family == AF_INET6)
				((struct sockaddr_in6 *)&id->src)->sin6_addr =
					cm_any_addr(dst) ? in6addr_loopback : in6(dst)->sin6_addr;
		} else if (id->src.ss_family == AF_INET) {
			uint32_t ip;

			memcpy(&ip, id->cm->port.gid + 12, 4);
			((struct sockaddr_in *)&id->src)->sin_addr.s_addr = ip;
		} else if (id->src.ss_family == AF_INET6) {
			memcpy(&((struct sockaddr_in6 *)&id->src)->sin6_addr,
			       IN6_IS_ADDR_LINKLOCAL(&in6(dst)->sin6_addr) ? id->cm->port.gid6 :
									      id->cm->port.gid,
			       16);
		} else if (id->src.ss_family == AF_IB) {
			memcpy(&((struct sockaddr_ib *)&id->src)->sib_addr, id->cm->port.gid, 16);
		}
		cm_addr_set_port((struct sockaddr *)&id->src, port);
	}
	src_gid(id->cm, (struct sockaddr *)&id->src, id->sgid, &id->sgid_index);
	id->loopback = loopback;
	if (loopback)
		memcpy(id->dgid, id->sgid, 16);
	else
		ip2gid(dst, id->dgid);
	id->state = CMA_ADDR_RESOLVED;
	id->has_route = false;
	route_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

/* Linux iboe_get_mtu(): the IB MTU that fits an Ethernet MTU after the RoCE headers. */
static uint8_t iboe_mtu(int mtu)
{
	mtu -= 40 + 8 + 12 + 4 + 28 + 4;	/* GRH/IP, UDP, BTH, XRC, AtomicETH, ICRC */
	return mtu >= 4096 ? IBV_MTU_4096 : mtu >= 2048 ? IBV_MTU_2048 :
	       mtu >= 1024 ? IBV_MTU_1024 : mtu >= 512 ? IBV_MTU_512 :
	       mtu >= 256 ? IBV_MTU_256 : 0;
}

/*
 * The MTU of the interface the source address lives on (its subnet), as an IB MTU; 0 when
 * none has it. Linux cma_resolve_iboe_route() takes min(port, iboe_get_mtu(netdev MTU)): a
 * port whose IP traffic leaves through a 1500-byte interface speaks 1024-byte RoCE packets,
 * which is what a kernel peer on that Ethernet expects (rxe drops bigger ones).
 */
static uint8_t iface_mtu(const struct sockaddr_storage *src)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)src;
	struct ifaddrs *ifs, *best = NULL;
	uint32_t best_mask = 0;
	struct ifreq ifr;
	uint8_t mtu = 0;
	int s;

	if (src->ss_family != AF_INET || getifaddrs(&ifs))
		return 0;
	for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
		uint32_t a, m;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask)
			continue;
		a = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		m = ntohl(((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr);
		if ((ntohl(s4->sin_addr.s_addr) & m) == (a & m) && (!best || m > best_mask)) {
			best = i;
			best_mask = m;
		}
	}
	if (best && (s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", best->ifa_name);
		if (!ioctl(s, SIOCGIFMTU, &ifr))
			mtu = iboe_mtu(ifr.ifr_mtu);
		close(s);
	}
	freeifaddrs(ifs);
	return mtu;
}

/* Linux cma_resolve_iboe_route(): a RoCE path is made here, not asked of an SA. */
int cm_resolve_route(struct cm_id *id)
{
	struct bv_cm_path *p = &id->path;
	uint8_t im;

	if (id->state != CMA_ADDR_RESOLVED)
		return -EINVAL;
	if (!cm_refresh_port(id->cm))
		return -ENETUNREACH;
	memset(p, 0, sizeof(*p));
	memcpy(p->sgid, id->sgid, 16);
	memcpy(p->dgid, id->dgid, 16);
	p->pkey = IB_DEFAULT_PKEY;
	p->hop_limit = 64;		/* the IP route's hop limit (ip4_dst_hoplimit) */
	p->traffic_class = id->tos_set ? id->tos : 0;
	p->sl = (id->tos_set ? id->tos : 0) >> 5;	/* rt_tos2priority for the default map */
	p->mtu = id->cm->port.mtu;
	im = iface_mtu(&id->src);
	if (im && im < p->mtu)
		p->mtu = im;
	p->rate = 0;			/* IB_RATE_PORT_CURRENT */
	p->packet_life_time = id->cm->packet_life_time;
	p->reversible = 1;
	p->numb_path = 1;
	p->preference = 0;
	id->has_route = true;
	id->state = CMA_ROUTE_RESOLVED;
	route_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

void cm_route_of(const struct cm_id *id, struct bv_cm_route *r)
{
	memset(r, 0, sizeof(*r));
	r->src = id->src;
	r->dst = id->dst;
	r->pkey = IB_DEFAULT_PKEY;
	if (id->src.ss_family) {
		r->port_num = 1;
		memcpy(r->sgid, id->sgid, 16);
		memcpy(r->dgid, id->dgid, 16);
	}
	if (id->has_route) {
		r->num_paths = 1;
		r->path = id->path;
		memcpy(r->sgid, id->path.sgid, 16);
		memcpy(r->dgid, id->path.dgid, 16);
	}
}

/* ---- service IDs and the IP header ---------------------------------------------------------- */

/* Linux rdma_get_service_id() */
uint64_t cm_service_id(const struct cm_id *id, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_IB)
		return be64toh(inib(sa)->sib_sid);
	return IB_CMA_SERVICE_ID(id->ps, cm_addr_port(sa));
}

/* Linux cma_user_data_offset() */
unsigned int cm_user_data_offset(const struct cm_id *id)
{
	return id->src.ss_family == AF_IB ? 0 : IB_CMA_HDR_LEN;
}

/* Linux cma_format_hdr() */
void cm_format_ip_hdr(const struct cm_id *id, uint8_t *hdr)
{
	const struct sockaddr *src = (const struct sockaddr *)&id->src;
	const struct sockaddr *dst = (const struct sockaddr *)&id->dst;

	memset(hdr, 0, IB_CMA_HDR_LEN);
	cx4_set(hdr, IB_CMA_HDR_CMA_VERSION, IB_CMA_VERSION);
	cx4_set(hdr, IB_CMA_HDR_PORT, cm_addr_port(src));
	if (src->sa_family == AF_INET) {
		cx4_set(hdr, IB_CMA_HDR_IP_VERSION, 4);
		memcpy(hdr + IB_CMA_HDR_SRC_ADDR_OFF + 12, &in4(src)->sin_addr, 4);
		memcpy(hdr + IB_CMA_HDR_DST_ADDR_OFF + 12, &in4(dst)->sin_addr, 4);
	} else if (src->sa_family == AF_INET6) {
		cx4_set(hdr, IB_CMA_HDR_IP_VERSION, 6);
		memcpy(hdr + IB_CMA_HDR_SRC_ADDR_OFF, &in6(src)->sin6_addr, 16);
		memcpy(hdr + IB_CMA_HDR_DST_ADDR_OFF, &in6(dst)->sin6_addr, 16);
	}
}

/* The IP version of a request's header, or 0 when it has none (an AF_IB request). */
static unsigned int hdr_ip_version(const uint8_t *priv, size_t len)
{
	unsigned int v;

	if (len < IB_CMA_HDR_LEN || cx4_get(priv, IB_CMA_HDR_CMA_VERSION) != IB_CMA_VERSION)
		return 0;
	v = cx4_get(priv, IB_CMA_HDR_IP_VERSION);
	return v == 4 || v == 6 ? v : 0;
}

/* Linux cma_match_private_data() */
static bool match_private_data(const struct cm_id *id, const uint8_t *priv, size_t len)
{
	const struct sockaddr *addr = (const struct sockaddr *)&id->src;
	unsigned int v = hdr_ip_version(priv, len);

	if (addr->sa_family == AF_IB)
		return true;
	if (!v)
		return false;	/* an IP listener takes only requests with an IP header */
	if (cm_any_addr(addr) && !id->afonly)
		return true;
	if (addr->sa_family == AF_INET) {
		if (v != 4)
			return false;
		return cm_any_addr(addr) ||
		       !memcmp(priv + IB_CMA_HDR_DST_ADDR_OFF + 12, &in4(addr)->sin_addr, 4);
	}
	if (addr->sa_family == AF_INET6) {
		if (v != 6)
			return false;
		return cm_any_addr(addr) ||
		       !memcmp(priv + IB_CMA_HDR_DST_ADDR_OFF, &in6(addr)->sin6_addr, 16);
	}
	return false;
}

/* Linux cma_ib_check_req_qp_type(): qp_type is the request's (UD for SIDR) */
static bool qp_type_ok(const struct cm_id *listen, uint8_t qp_type)
{
	return listen->qp_type == qp_type || !listen->qp_type;
}

/* Linux cma_ib_id_from_event() / cma_find_listener() for one port */
struct cm_id *cm_find_listener(struct cm_dev *cm, uint64_t service_id, const uint8_t *priv,
			       size_t priv_len, uint8_t qp_type)
{
	uint16_t ps = (uint16_t)(service_id >> 16), port = (uint16_t)service_id;
	struct cm_bind *b;

	if ((service_id >> 32) != 0)
		return NULL;	/* not in an rdma_cm port space */
	b = bind_find(cm, ps, port);
	if (!b)
		return NULL;
	for (struct cm_id *id = b->owners; id; id = id->bind_next)
		if (id->state == CMA_LISTEN && match_private_data(id, priv, priv_len) &&
		    qp_type_ok(id, qp_type))
			return id;
	return NULL;
}

bool cm_listener_on_port(struct cm_dev *cm, uint64_t service_id)
{
	struct cm_bind *b;

	if ((service_id >> 32) != 0)
		return false;
	b = bind_find(cm, (uint16_t)(service_id >> 16), (uint16_t)service_id);
	for (struct cm_id *id = b ? b->owners : NULL; id; id = id->bind_next)
		if (id->state == CMA_LISTEN)
			return true;
	return false;
}

/*
 * Linux cma_save_net_info(): a new connection's addresses, from the IP header (the peer's
 * source is our destination) or, for AF_IB, from the listener and the peer's GID.
 */
int cm_conn_addrs(struct cm_id *conn, const struct cm_id *listen, uint64_t service_id,
		  const uint8_t *priv, size_t priv_len, const uint8_t *peer_gid)
{
	unsigned int v = listen->src.ss_family == AF_IB ? 0 : hdr_ip_version(priv, priv_len);
	uint16_t port = (uint16_t)service_id;

	memset(&conn->src, 0, sizeof(conn->src));
	memset(&conn->dst, 0, sizeof(conn->dst));
	if (v == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)&conn->src;
		struct sockaddr_in *d = (struct sockaddr_in *)&conn->dst;

		s->sin_family = d->sin_family = AF_INET;
		memcpy(&s->sin_addr, priv + IB_CMA_HDR_DST_ADDR_OFF + 12, 4);
		s->sin_port = htons(port);
		memcpy(&d->sin_addr, priv + IB_CMA_HDR_SRC_ADDR_OFF + 12, 4);
		d->sin_port = htons((uint16_t)cx4_get(priv, IB_CMA_HDR_PORT));
	} else if (v == 6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&conn->src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)&conn->dst;

		s->sin6_family = d->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, priv + IB_CMA_HDR_DST_ADDR_OFF, 16);
		s->sin6_port = htons(port);
		memcpy(&d->sin6_addr, priv + IB_CMA_HDR_SRC_ADDR_OFF, 16);
		d->sin6_port = htons((uint16_t)cx4_get(priv, IB_CMA_HDR_PORT));
	} else if (listen->src.ss_family == AF_IB) {
		struct sockaddr_ib *s = (struct sockaddr_ib *)&conn->src;
		struct sockaddr_ib *d = (struct sockaddr_ib *)&conn->dst;
		const struct sockaddr_ib *l = (const struct sockaddr_ib *)&listen->src;

		s->sib_family = d->sib_family = AF_IB;
		s->sib_pkey = d->sib_pkey = htons(IB_DEFAULT_PKEY);
		memcpy(&s->sib_addr, conn->cm->port.gid, 16);
		if (!cm_any_addr((const struct sockaddr *)l))
			s->sib_addr = l->sib_addr;
		s->sib_sid = htobe64(service_id);
		s->sib_sid_mask = htobe64(~0ull);
		memcpy(&d->sib_addr, peer_gid, 16);
	} else {
		return -EAFNOSUPPORT;
	}
	conn->afonly = listen->afonly;
	return 0;
}
