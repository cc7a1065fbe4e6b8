// SPDX-License-Identifier: MIT
/*
 * The calls of librdmacm's interface not implemented yet. Each answers as rdma-core's
 * librdmacm answers a call it cannot serve: -1 (or NULL) with errno ENOSYS, so a program
 * says what failed instead of misbehaving. Calls move out of this file as they are
 * implemented; docs/rdmacm.md lists what is left.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/select.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "rcm.h"

#define UNSUPPORTED_INT()	return rcm_err(ENOSYS)
#define UNSUPPORTED_PTR()	do { errno = ENOSYS; return NULL; } while (0)

RCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	UNSUPPORTED_PTR();
}

RCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
}

RCM_EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
			      void *context, enum rdma_port_space ps)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			      struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
}

RCM_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
				 struct sockaddr *dst_addr, int timeout_ms)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *qp_init_attr)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
}

RCM_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			   uint8_t private_data_len)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
			       uint8_t private_data_len)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *mc_join_attr,
				      void *context)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				 struct rdma_cm_event **event)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return 0;
}

RCM_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return 0;
}

RCM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	if (num_devices)
		*num_devices = 0;
	UNSUPPORTED_PTR();
}

RCM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
}

RCM_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
			       size_t optlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
}

RCM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
				 int *qp_attr_mask)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
}

/* ---- rsockets ------------------------------------------------------------------------------ */

RCM_EXPORT int rsocket(int domain, int type, int protocol)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rlisten(int socket, int backlog)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rshutdown(int socket, int how)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rclose(int socket)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
			     struct sockaddr *src_addr, socklen_t *addrlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
			   const struct sockaddr *dest_addr, socklen_t addrlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	UNSUPPORTED_INT();
}

/*
 * No rsocket exists yet, so every descriptor is an ordinary one and rpoll/rselect are poll
 * and select (rdma-core's rpoll also hands non-rsocket descriptors to poll; rdmacm-utils
 * poll their event channels through it).
 */
RCM_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

RCM_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
		       struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

RCM_EXPORT int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rsetsockopt(int socket, int level, int optname, const void *optval,
			   socklen_t optlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int rfcntl(int socket, int cmd, ...)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	UNSUPPORTED_INT();
}

RCM_EXPORT size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	errno = ENOSYS;
	return 0;
}
