// SPDX-License-Identifier: MIT
/*
 * rpoll and rselect: poll(2) and select(2) over rsockets and ordinary descriptors together.
 *
 * An rsocket is ready when its state says so after a progress pass (rs_stream_revents,
 * rs_dgram_revents); when nothing is, every rsocket's CQ is armed, the states are looked at
 * once more (what completed before the arming raises no event), and poll(2) waits on the
 * rsockets' own descriptors (their epoll fds) and the ordinary ones; whatever wakes it, the
 * states are looked at again, until something is ready or the time is up.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <rdma/rsocket.h>

#include "rcm.h"
#include "rs.h"

int64_t rs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static short rs_revents(struct rs *rs, short events)
{
	return rs->type == SOCK_DGRAM ? rs_dgram_revents(rs, events) :
					rs_stream_revents(rs, events);
}

/* One look at everything: revents into fds; how many are ready. */
static int scan(struct pollfd *fds, nfds_t nfds, struct pollfd *sys, bool arm)
{
	nfds_t nsys = 0;
	int ready = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rs *rs = fds[i].fd >= 0 ? rs_lookup(fds[i].fd) : NULL;

		fds[i].revents = 0;
		if (!rs) {
			sys[nsys++] = fds[i];
			continue;
		}
		if (arm)
			rs_arm(rs);
		fds[i].revents = rs_revents(rs, fds[i].events);
		rs_unlock(rs);
		ready += fds[i].revents != 0;
	}
	if (nsys && poll(sys, nsys, 0) > 0) {
		nsys = 0;
		for (nfds_t i = 0; i < nfds; i++) {
			if (fds[i].fd >= 0 && rs_is_rsocket(fds[i].fd))
				continue;
			fds[i].revents = sys[nsys++].revents;
			ready += fds[i].revents != 0;
		}
	}
	return ready;
}

RCM_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct pollfd *sys = calloc(nfds ? nfds : 1, sizeof(*sys));
	int64_t end = timeout > 0 ? rs_now_ms() + timeout : 0;
	int ready;

	if (!sys)
		return rcm_err(ENOMEM);
	for (;;) {
		int left = timeout < 0 ? -1 : 0;

		ready = scan(fds, nfds, sys, false);
		if (ready || !timeout)
			break;
		ready = scan(fds, nfds, sys, true);	/* armed: then sleep */
		if (ready)
			break;
		if (timeout > 0) {
			int64_t l = end - rs_now_ms();

			if (l <= 0)
				break;
			left = (int)l;
		}
		for (nfds_t i = 0; i < nfds; i++) {
			sys[i] = fds[i];
			if (fds[i].fd >= 0 && rs_is_rsocket(fds[i].fd)) {
				sys[i].fd = fds[i].fd;	/* the rsocket's number is its epoll fd */
				sys[i].events = POLLIN;
			}
		}
		if (poll(sys, nfds, left) < 0) {
			ready = -1;	/* EINTR too, as poll(2) */
			break;
		}
		for (nfds_t i = 0; i < nfds; i++) {
			struct rs *rs;

			if (!(sys[i].revents & POLLIN) || fds[i].fd < 0 || !rs_is_rsocket(fds[i].fd))
				continue;
			rs = rs_lookup(fds[i].fd);
			if (rs) {
				rs_take_events(rs);
				rs_unlock(rs);
			}
		}
	}
	free(sys);
	return ready;
}

RCM_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
		       struct timeval *timeout)
{
	struct pollfd *fds = calloc(nfds > 0 ? (size_t)nfds : 1, sizeof(*fds));
	int n = 0, ret, ms;

	if (!fds)
		return rcm_err(ENOMEM);
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (readfds && FD_ISSET(fd, readfds))
			ev |= POLLIN;
		if (writefds && FD_ISSET(fd, writefds))
			ev |= POLLOUT;
		if (exceptfds && FD_ISSET(fd, exceptfds))
			ev |= POLLPRI;
		if (ev) {
			fds[n].fd = fd;
			fds[n++].events = ev;
		}
	}
	ms = timeout ? (int)(timeout->tv_sec * 1000 + (timeout->tv_usec + 999) / 1000) : -1;
	ret = rpoll(fds, (nfds_t)n, ms);
	if (ret < 0) {
		free(fds);
		return ret;
	}
	if (readfds)
		FD_ZERO(readfds);
	if (writefds)
		FD_ZERO(writefds);
	if (exceptfds)
		FD_ZERO(exceptfds);
	ret = 0;
	for (int i = 0; i < n; i++) {
		if (readfds && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
			FD_SET(fds[i].fd, readfds);
			ret++;
		}
		if (writefds && (fds[i].revents & (POLLOUT | POLLERR))) {
			FD_SET(fds[i].fd, writefds);
			ret++;
		}
		if (exceptfds && (fds[i].revents & POLLPRI)) {
			FD_SET(fds[i].fd, exceptfds);
			ret++;
		}
	}
	free(fds);
	return ret;
}
