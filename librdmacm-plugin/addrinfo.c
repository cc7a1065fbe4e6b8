// SPDX-License-Identifier: MIT
/*
 * rdma_getaddrinfo(): getaddrinfo(3) with RDMA's hints, as librdmacm's addrinfo.c answers:
 * one result (the first getaddrinfo gives), its QP type and port space from the hints or else
 * from the socket type and protocol (stream: RC and PS_TCP, datagram: UD and PS_UDP), the
 * address as the source for RAI_PASSIVE and the destination otherwise; AF_IB with
 * RAI_FAMILY | RAI_NUMERICHOST turns an IPv6 literal into a GID. A getaddrinfo error comes
 * back as its EAI_* code, as librdmacm returns it. No ibacm: no routes, no connect data.
 */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/ib.h>

#include "rcm.h"

static void to_ai_hints(struct addrinfo *ai, const struct rdma_addrinfo *rai)
{
	memset(ai, 0, sizeof(*ai));
	if (rai->ai_flags & RAI_PASSIVE)
		ai->ai_flags = AI_PASSIVE;
	if (rai->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if (rai->ai_family != AF_IB)
		ai->ai_family = rai->ai_family;
	switch (rai->ai_qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		ai->ai_socktype = SOCK_STREAM;
		break;
	case IBV_QPT_UD:
		ai->ai_socktype = SOCK_DGRAM;
		break;
	}
	switch (rai->ai_port_space) {
	case RDMA_PS_TCP:
		ai->ai_protocol = IPPROTO_TCP;
		break;
	case RDMA_PS_IPOIB:
	case RDMA_PS_UDP:
		ai->ai_protocol = IPPROTO_UDP;
		break;
	case RDMA_PS_IB:
		ai->ai_protocol = ai->ai_socktype == SOCK_STREAM ? IPPROTO_TCP :
				  ai->ai_socktype == SOCK_DGRAM ? IPPROTO_UDP : 0;
		break;
	}
}

static int copy_addr(struct sockaddr **dst, socklen_t *dst_len, const struct sockaddr *src,
		     socklen_t len)
{
	*dst = malloc(len);
	if (!*dst)
		return rcm_err(ENOMEM);
	memcpy(*dst, src, len);
	*dst_len = len;
	return 0;
}

/* An IPv6 literal as an AF_IB address with the port space's service ID (ucma_set_sid). */
static int in6_to_ib(int ps, struct sockaddr **dst, socklen_t *dst_len,
		     const struct sockaddr_in6 *src)
{
	struct sockaddr_ib *ib = calloc(1, sizeof(*ib));
	uint16_t port = ntohs(src->sin6_port);

	if (!ib)
		return rcm_err(ENOMEM);
	ib->sib_family = AF_IB;
	ib->sib_pkey = htons(0xffff);
	ib->sib_flowinfo = src->sin6_flowinfo;
	memcpy(&ib->sib_addr, &src->sin6_addr, 16);
	ib->sib_sid = htobe64(((uint64_t)ps << 16) + port);
	if (ps)
		ib->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
	if (port)
		ib->sib_sid_mask |= htobe64(RDMA_IB_IP_PORT_MASK);
	ib->sib_scope_id = src->sin6_scope_id;
	*dst = (struct sockaddr *)ib;
	*dst_len = sizeof(*ib);
	return 0;
}

static int to_rai(struct rdma_addrinfo *rai, const struct rdma_addrinfo *hints,
		  const struct addrinfo *ai)
{
	bool ib = (hints->ai_flags & RAI_FAMILY) && hints->ai_family == AF_IB &&
		  (hints->ai_flags & RAI_NUMERICHOST);
	struct sockaddr **addr;
	socklen_t *len;
	char **name;

	rai->ai_qp_type = hints->ai_qp_type ? hints->ai_qp_type :
			  ai->ai_socktype == SOCK_STREAM ? IBV_QPT_RC :
			  ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD : 0;
	rai->ai_port_space = hints->ai_port_space ? hints->ai_port_space :
			     ai->ai_protocol == IPPROTO_TCP ? RDMA_PS_TCP :
			     ai->ai_protocol == IPPROTO_UDP ? RDMA_PS_UDP : 0;
	if (ai->ai_flags & AI_PASSIVE) {
		rai->ai_flags = RAI_PASSIVE;
		addr = &rai->ai_src_addr;
		len = &rai->ai_src_len;
		name = &rai->ai_src_canonname;
	} else {
		addr = &rai->ai_dst_addr;
		len = &rai->ai_dst_len;
		name = &rai->ai_dst_canonname;
	}
	if (ai->ai_canonname)
		*name = strdup(ai->ai_canonname);
	if (ib && ai->ai_family == AF_INET6) {
		rai->ai_family = AF_IB;
		return in6_to_ib(rai->ai_port_space, addr, len,
				 (const struct sockaddr_in6 *)ai->ai_addr);
	}
	rai->ai_family = ai->ai_family;
	return copy_addr(addr, len, ai->ai_addr, ai->ai_addrlen);
}

RCM_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	static const struct rdma_addrinfo nohints;
	struct rdma_addrinfo *rai;
	int ret = 0, err;

	if (!service && !node && !hints)
		return rcm_err(EINVAL);
	if (!res)
		return rcm_err(EINVAL);
	err = rcm_init();
	if (err)
		return rcm_err(err);
	rai = calloc(1, sizeof(*rai));
	if (!rai)
		return rcm_err(ENOMEM);
	if (node || service) {
		struct addrinfo ai_hints, *ai;

		if (hints) {
			to_ai_hints(&ai_hints, hints);
			ret = getaddrinfo(node, service, &ai_hints, &ai);
		} else {
			ret = getaddrinfo(node, service, NULL, &ai);
		}
		if (!ret) {
			ret = to_rai(rai, hints ? hints : &nohints, ai);
			freeaddrinfo(ai);
		}
	} else {
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len)
			ret = copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len, hints->ai_dst_addr,
					hints->ai_dst_len);
	}
	if (!ret && !rai->ai_src_len && hints && hints->ai_src_len)
		ret = copy_addr(&rai->ai_src_addr, &rai->ai_src_len, hints->ai_src_addr,
				hints->ai_src_len);
	if (ret) {
		rdma_freeaddrinfo(rai);
		return ret;
	}
	*res = rai;
	return 0;
}

RCM_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *rai = res;

		res = res->ai_next;
		free(rai->ai_connect);
		free(rai->ai_route);
		free(rai->ai_src_canonname);
		free(rai->ai_dst_canonname);
		free(rai->ai_src_addr);
		free(rai->ai_dst_addr);
		free(rai);
	}
}
