// SPDX-License-Identifier: MIT
/*
 * The rsocket calls, not implemented yet: each answers as rdma-core's librdmacm answers a
 * call it cannot serve, -1 with errno ENOSYS, so a program says what failed instead of
 * misbehaving. docs/rdmacm.md lists what is left.
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
