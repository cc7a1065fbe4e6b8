// SPDX-License-Identifier: MIT
/*
 * The model's control socket: its controls outside the PCI function (cx4_model_ctl.h) for
 * processes that do not hold the bus - tests and `bvctl model DEV ...`. The driver that owns
 * the bus (cx4d) never sees this socket: it finds out what was done to the card the way it
 * would on a real one (a PORT_CHANGE event, the health buffer).
 *
 * One request per connection, SOCK_SEQPACKET, text (docs/cx4-model.md, "Controls outside the
 * function"):
 *   cable pull | cable plug     the cable out / back in
 *   fail disable | fail firmware the function fails (cx4_model_fail)
 *   drop N                      lose the next N received RoCE packets (0..1000000)
 *   stall USEC [PERIOD]         the engine stops for USEC us, or USEC of every PERIOD us
 *                               from now on (cx4_model_stall; 0 ends it)
 *   rxcost USEC                 each received packet costs the engine USEC (cx4_model_rx_cost)
 *   stats                       the model's own counters, "name value" per line
 * The reply's first line is "ok" or "error: why". A thread of its own serves the socket: it
 * sleeps in poll() until a request or the model's close comes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "model.h"

#define CTL_REQ_MAX 128
#define CTL_RSP_MAX 4096
#define CTL_CLIENT_MS 1000 /* a connection that says nothing this long is dropped */

struct mctl {
	struct mdev *d;
	int lfd, stopfd;
	pthread_t thread;
	struct sockaddr_un sa;
};

static size_t stats_text(struct mdev *d, char *buf, size_t len)
{
	struct cx4_model_stats s;
	size_t n = 0;

	if (cx4_model_get_stats(&d->bus, &s))
		return 0;
#define STAT(f)                                                                             \
	do {                                                                                \
		if (n < len)                                                                \
			n += (size_t)snprintf(buf + n, len - n, "%s %llu\n", #f,            \
					      (unsigned long long)s.f);                     \
	} while (0)
	STAT(cmds);
	STAT(tx_pkts);
	STAT(tx_bytes);
	STAT(tx_dropped);
	STAT(rx_pkts);
	STAT(rx_bytes);
	STAT(rx_drop_icrc);
	STAT(rx_drop_qp);
	STAT(retransmits);
	STAT(retry_timeouts);
	STAT(naks_sent);
	STAT(rnr_naks_sent);
	STAT(dma_faults);
	STAT(eqes);
	STAT(interrupts);
	STAT(wakeups);
	STAT(waiter_wakes);
	STAT(rx_fault_dropped);
	STAT(rx_fault_duplicated);
	STAT(rx_fault_delayed);
	STAT(cable_tx_pkts);
	STAT(cable_rx_pkts);
	STAT(cable_tx_full);
	STAT(loop_pkts);
	STAT(raw_tx_pkts);
	STAT(raw_rx_pkts);
	STAT(udp6_tx_pkts);
	STAT(udp6_rx_pkts);
#undef STAT
	return n < len ? n : len - 1;
}

/* Run one request; the reply goes into rsp. */
static void ctl_request(struct mdev *d, char *req, char *rsp, size_t len)
{
	char *arg = strchr(req, ' ');
	int err = -EINVAL;

	if (arg)
		*arg++ = 0;
	if (!strcmp(req, "cable") && arg && (!strcmp(arg, "pull") || !strcmp(arg, "plug"))) {
		cx4m_mdev_log(d, "control: cable %s", !strcmp(arg, "plug") ? "plugged" : "pulled");
		err = cx4_model_set_link(&d->bus, !strcmp(arg, "plug"));
	} else if (!strcmp(req, "fail") && arg &&
		   (!strcmp(arg, "disable") || !strcmp(arg, "firmware"))) {
		cx4m_mdev_log(d, "control: the function fails (%s)", arg);
		err = cx4_model_fail(&d->bus, !strcmp(arg, "disable") ? CX4_MODEL_FAIL_DISABLE
								     : CX4_MODEL_FAIL_FIRMWARE);
	} else if (!strcmp(req, "drop") && arg) {
		char *end;
		unsigned long n = strtoul(arg, &end, 10);

		if (*arg && !*end && n <= 1000000)
			err = cx4_model_drop_rx(&d->bus, (unsigned int)n);
	} else if (!strcmp(req, "stall") && arg) {
		char *end, *end2;
		unsigned long us = strtoul(arg, &end, 10), period = 0;

		if (*end == ' ')
			period = strtoul(end + 1, &end2, 10);
		else
			end2 = end;
		if (*arg && end != arg && !*end2 && us <= 10000000 && period <= 10000000)
			err = cx4_model_stall(&d->bus, (uint32_t)us, (uint32_t)period);
	} else if (!strcmp(req, "rxcost") && arg) {
		char *end;
		unsigned long us = strtoul(arg, &end, 10);

		if (*arg && !*end && us <= 100000)
			err = cx4_model_rx_cost(&d->bus, (uint32_t)us);
	} else if (!strcmp(req, "stats") && !arg) {
		size_t n = (size_t)snprintf(rsp, len, "ok\n");

		stats_text(d, rsp + n, len - n);
		return;
	} else {
		snprintf(rsp, len,
			 "error: unknown request (cable pull|plug, fail disable|firmware, "
			 "drop N, stall USEC [PERIOD], rxcost USEC, stats)\n");
		return;
	}
	if (err)
		snprintf(rsp, len, "error: %s\n", strerror(-err));
	else
		snprintf(rsp, len, "ok\n");
}

static void ctl_serve(struct mctl *c, int fd)
{
	char req[CTL_REQ_MAX + 1], rsp[CTL_RSP_MAX];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n;

	if (poll(&p, 1, CTL_CLIENT_MS) != 1)
		return;
	n = recv(fd, req, CTL_REQ_MAX, MSG_DONTWAIT);
	if (n <= 0)
		return;
	req[n] = 0;
	while (n > 0 && (req[n - 1] == '\n' || req[n - 1] == ' '))
		req[--n] = 0;
	if (strlen(req) != (size_t)n) {
		snprintf(rsp, sizeof(rsp), "error: a NUL in the request\n");
	} else {
		ctl_request(c->d, req, rsp, sizeof(rsp));
	}
	n = send(fd, rsp, strlen(rsp), MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)n;
}

static void *ctl_thread(void *arg)
{
	struct mctl *c = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = c->lfd, .events = POLLIN},
				      {.fd = c->stopfd, .events = POLLIN}};
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		ctl_serve(c, fd);
		close(fd);
	}
	return NULL;
}

int cx4m_mctl_start(struct mdev *d, const char *path)
{
	struct mctl *c;
	int err;

	if (strlen(path) >= sizeof(c->sa.sun_path))
		return -ENAMETOOLONG;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->d = d;
	c->sa.sun_family = AF_UNIX;
	strcpy(c->sa.sun_path, path);
	c->stopfd = eventfd(0, EFD_CLOEXEC);
	c->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->stopfd < 0 || c->lfd < 0) {
		err = -errno;
		goto fail;
	}
	unlink(path); /* a stale socket of a model that died */
	if (bind(c->lfd, (struct sockaddr *)&c->sa, sizeof(c->sa)) || chmod(path, 0600) ||
	    listen(c->lfd, 8)) {
		err = -errno;
		unlink(path);
		goto fail;
	}
	err = -pthread_create(&c->thread, NULL, ctl_thread, c);
	if (err) {
		unlink(path);
		goto fail;
	}
	d->ctl = c;
	return 0;
fail:
	if (c->lfd >= 0)
		close(c->lfd);
	if (c->stopfd >= 0)
		close(c->stopfd);
	free(c);
	return err;
}

void cx4m_mctl_stop(struct mdev *d)
{
	static const uint64_t one = 1;
	struct mctl *c = d->ctl;
	ssize_t r;

	if (!c)
		return;
	r = write(c->stopfd, &one, sizeof(one));
	(void)r;
	pthread_join(c->thread, NULL);
	unlink(c->sa.sun_path);
	close(c->lfd);
	close(c->stopfd);
	free(c);
	d->ctl = NULL;
}
