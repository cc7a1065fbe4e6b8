// SPDX-License-Identifier: MIT
/*
 * The endpoint descriptor (docs/scif.md "Endpoint descriptors"). SCIF programs poll, select and
 * epoll on an endpoint and set O_NONBLOCK on it with fcntl; MPSS 3's scif.h even inlines
 * scif_get_fd() as the identity. So an endpoint is a real descriptor: one end (A) of an AF_UNIX
 * stream socketpair, whose readiness the library drives from the other end (B):
 *
 *   POLLIN   a one-byte token written into B sits in A's receive queue while the endpoint
 *            has data (connected) or a connection to accept (listening);
 *   POLLOUT  A's small send buffer is filled (by writing into A: the bytes go to B's queue and
 *            are never read) while the message ring has no space, while a connect is under
 *            way, and while the endpoint is neither connected nor disconnected; reading B
 *            empties it again (ring space, connect finished);
 *   POLLHUP  shutdown of B when the connection is gone (terminal, as in SCIF).
 *
 * SCIF's POLLERR for an unconnected endpoint cannot be shown by a socket: such an endpoint
 * shows no event at all. The tokens are written and drained under ep->lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "scif_priv.h"

/* A new descriptor pair: sv[0] the endpoint's (A), sv[1] the library's (B). */
int scif_epfd_pair(int sv[2])
{
	int one = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/* the smallest send buffer the kernel allows: a few writes fill it */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
	if (fcntl(sv[1], F_SETFL, O_NONBLOCK)) {
		int err = -errno;

		close(sv[0]);
		close(sv[1]);
		return err;
	}
	return 0;
}

void scif_epfd_attach(struct scif_ep *ep, const int sv[2])
{
	ep->fd = sv[0];
	ep->lfd = sv[1];
	ep->pollin = false;
	ep->out_blocked = false;
	ep->hup = false;
	scif_epfd_block_out(ep);	/* unbound: no POLLOUT */
}

int scif_epfd_open(struct scif_ep *ep)
{
	int sv[2], ret = scif_epfd_pair(sv);

	if (!ret)
		scif_epfd_attach(ep, sv);
	return ret;
}

void scif_epfd_set_in(struct scif_ep *ep)
{
	char t = 1;

	if (ep->pollin || ep->hup)
		return;
	if (send(ep->lfd, &t, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		ep->pollin = true;
}

void scif_epfd_clear_in(struct scif_ep *ep)
{
	char buf[16];

	if (!ep->pollin || ep->hup)
		return;
	while (recv(ep->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	ep->pollin = false;
}

void scif_epfd_block_out(struct scif_ep *ep)
{
	static const char junk[4096];

	if (ep->out_blocked || ep->hup)
		return;
	/* until the kernel says the buffer is full; the bytes wait in B's queue */
	for (int i = 0; i < 64; i++)
		if (send(ep->fd, junk, sizeof(junk), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			break;
	ep->out_blocked = true;
}

void scif_epfd_unblock_out(struct scif_ep *ep)
{
	char buf[4096];

	if (!ep->out_blocked || ep->hup)
		return;
	while (recv(ep->lfd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	ep->out_blocked = false;
}

void scif_epfd_hangup(struct scif_ep *ep)
{
	if (ep->hup)
		return;
	shutdown(ep->lfd, SHUT_RDWR);
	ep->hup = true;
}

/*
 * Wait until fd shows one of events (or a hangup), a signal arrives (-EINTR) or timeout_ms
 * passes (0). Called without ep->lock; the caller rechecks the state after.
 */
int scif_epfd_wait(struct scif_ep *ep, short events, int timeout_ms)
{
	struct pollfd p = { .fd = ep->fd, .events = events };
	int n = poll(&p, 1, timeout_ms);

	if (n < 0)
		return errno == EINTR ? -EINTR : -errno;
	return n;
}
