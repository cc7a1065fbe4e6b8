// SPDX-License-Identifier: MIT
/*
 * A context's async event fd, as the kernel's would behave when its device goes away.
 *
 * The daemon sends async events as datagrams on a socket pair it made. A datagram socket
 * never learns that its peer died, so an application waiting on the daemon's end would wait
 * for ever once the daemon is gone. The kernel, when a device disappears under its verbs
 * clients (ib_uverbs_free_hw_resources), reports IB_EVENT_DEVICE_FATAL on every context's
 * async event file. So the application gets a socket pair of ours instead; a thread (asleep in
 * poll, never spinning) passes the daemon's events on, and when the daemon's connection hangs
 * up it writes IBV_EVENT_DEVICE_FATAL itself, once, and wakes the context's completion
 * channels (bv_chan.c). Commands to the dead daemon then fail (bv_call: ENODEV).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bv_provider.h"

/* struct ib_uverbs_async_event_desc: what ibv_get_async_event() read()s */
struct bv_async_desc {
	uint64_t element;
	uint32_t event_type;
	uint32_t reserved;
};

static void *relay(void *arg)
{
	struct bv_context *ctx = arg;
	struct bv_async *a = &ctx->async;
	bool fatal = false;

	for (;;) {
		struct pollfd p[3] = {{.fd = a->stop[0], .events = POLLIN},
				      {.fd = a->daemon_fd, .events = POLLIN},
				      {.fd = fatal ? -1 : ctx->conn.sock, .events = POLLRDHUP}};
		struct bv_async_desc ev;

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN &&
		    recv(a->daemon_fd, &ev, sizeof(ev), MSG_DONTWAIT) == sizeof(ev))
			send(a->app_end, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (p[2].revents & (POLLHUP | POLLRDHUP | POLLERR)) {
			ev = (struct bv_async_desc){.event_type = IBV_EVENT_DEVICE_FATAL};
			send(a->app_end, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL);
			bv_chan_wake_all(ctx);
			fatal = true;
		}
	}
	return NULL;
}

int bv_async_start(struct bv_context *ctx, int daemon_fd)
{
	struct bv_async *a = &ctx->async;
	int sv[2], err;

	a->daemon_fd = daemon_fd;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return errno;
	if (pipe2(a->stop, O_CLOEXEC)) {
		err = errno;
		goto fail_pair;
	}
	a->app_end = sv[1];
	err = pthread_create(&a->thread, NULL, relay, ctx);
	if (err)
		goto fail_pipe;
	a->running = true;
	ctx->vctx.context.async_fd = sv[0];
	return 0;

fail_pipe:
	close(a->stop[0]);
	close(a->stop[1]);
fail_pair:
	close(sv[0]);
	close(sv[1]);
	return err;
}

/* Before the context's fds close: the application's end is closed by libibverbs. */
void bv_async_stop(struct bv_context *ctx)
{
	struct bv_async *a = &ctx->async;

	if (!a->running)
		return;
	if (write(a->stop[1], "x", 1) != 1)
		return; /* cannot happen: the thread would never stop, so keep its fds */
	pthread_join(a->thread, NULL);
	close(a->stop[0]);
	close(a->stop[1]);
	close(a->app_end);
	close(a->daemon_fd);
	a->running = false;
}
