// SPDX-License-Identifier: MIT
/*
 * Process state: the configuration and this process's node, the table from descriptors to
 * endpoints, the progress thread's epoll, and what a fork leaves to the child.
 *
 * A forked child gets a copy of this state but none of the verbs resources behind it (queue
 * pairs, the progress thread, the daemon connections belong to the parent). The child starts
 * afresh: its inherited endpoints are no endpoints of its own (calls on them fail with ENOTTY;
 * scif_close just closes the descriptor), and endpoints it opens are its own
 * (docs/scif.md "fork").
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bv_paths.h"
#include "scif_priv.h"

struct scif_lib scif_lib = { .lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1, .wakefd = -1 };

static bool debug_on;

uint64_t scif_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void scif_log(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "libscif[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", buf);
}

void scif_debug(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!debug_on)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	scif_log("%s", buf);
}

void scif_reject_log(struct scif_ep *ep, enum scif_reject r, const char *what)
{
	scif_wire_reject(r);
	scif_log("rejected %s from node %u port %u: %s (%lu so far)", what, ep->peer.node,
		 ep->peer.port, scif_reject_name(r), (unsigned long)scif_wire_stats[r]);
}

/* The child of a fork: forget the parent's endpoints and resources, keep nothing running. */
static void after_fork_child(void)
{
	pthread_mutex_init(&scif_lib.lock, NULL);
	/* the parent's objects stay allocated (freeing them could touch verbs state) */
	if (scif_lib.ninherited < scif_lib.nbyfd) {
		uint8_t *t = realloc(scif_lib.inherited_fd, (size_t)scif_lib.nbyfd);

		if (t) {
			memset(t + scif_lib.ninherited, 0, (size_t)(scif_lib.nbyfd - scif_lib.ninherited));
			scif_lib.inherited_fd = t;
			scif_lib.ninherited = scif_lib.nbyfd;
		}
	}
	for (int i = 0; i < scif_lib.nbyfd; i++) {
		if (i < scif_lib.ninherited && scif_lib.byfd[i])
			scif_lib.inherited_fd[i] = 1;
		scif_lib.byfd[i] = NULL;
	}
	scif_lib.eps = NULL;
	scif_lib.devs = NULL;
	/*
	 * librdmacm's state (its connection to the daemons, its device contexts) is the parent's
	 * and cannot be shared: a child that used it would disturb the parent's connections.
	 */
	if (scif_lib.cm_chan)
		scif_lib.cm_inherited = true;
	scif_lib.cm_chan = NULL;
	if (scif_lib.epfd >= 0)
		close(scif_lib.epfd);
	if (scif_lib.wakefd >= 0)
		close(scif_lib.wakefd);
	scif_lib.epfd = scif_lib.wakefd = -1;
	scif_lib.thread_running = false;
	scif_lib.ready = false;
	scif_lib.inherited = true;
	scif_lib.pinned = 0;	/* a new mm pins nothing (Linux: mm->pinned_vm starts at 0) */
}

bool scif_capable(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* Was fd one of the parent's endpoints (and is not one of ours since)? Clears the mark. */
bool scif_lib_take_inherited(int fd)
{
	bool was;

	pthread_mutex_lock(&scif_lib.lock);
	was = fd >= 0 && fd < scif_lib.ninherited && scif_lib.inherited_fd[fd];
	if (was)
		scif_lib.inherited_fd[fd] = 0;
	pthread_mutex_unlock(&scif_lib.lock);
	return was;
}

static int load_nodes(void)
{
	char path[BV_PATH_MAX], err[256];
	const char *env = getenv("BV_SCIF_NODE");
	long self = 0;

	if (env && *env) {
		char *end;

		self = strtol(env, &end, 10);
		if (*end || self < 0 || self > SCIF_MAX_NODE) {
			scif_log("BV_SCIF_NODE='%s' is not a node id 0..%d", env, SCIF_MAX_NODE);
			return -ENXIO;
		}
	}
	if (bv_run_path(path, sizeof(path), "config", "") ||
	    bv_config_load(&scif_lib.cfg, path, err, sizeof(err))) {
		scif_log("no bridgeverbs configuration in %s (bvctl up; bvctl run): %s",
			 bv_rundir(), err);
		return -ENXIO;
	}
	if (!env || !*env) {
		/* not said: the lowest node with a device here (node 0 where the host is) */
		self = SCIF_MAX_NODE + 1;
		for (int i = 0; i < scif_lib.cfg.ndev; i++) {
			int n = scif_dev_node(&scif_lib.cfg, i, err, sizeof(err));

			if (n >= 0 && n < self)
				self = n;
		}
		if (self > SCIF_MAX_NODE)
			self = 0;
	}
	if (scif_nodes_build(&scif_lib.nodes, &scif_lib.cfg, (uint16_t)self,
			     getenv("BV_SCIF_FABRIC"), err, sizeof(err))) {
		scif_log("configuration %s: %s", path, err);
		return -ENXIO;
	}
	if (!scif_lib.nodes.nlocal) {
		scif_log("node %ld has no device in %s (scif_node, docs/scif.md)", self, path);
		return -ENXIO;
	}
	return 0;
}

int scif_lib_init(void)
{
	static bool atfork;
	int ret = 0;

	pthread_mutex_lock(&scif_lib.lock);
	if (scif_lib.ready)
		goto out;
	if (!atfork) {
		pthread_atfork(NULL, NULL, after_fork_child);
		atfork = true;
	}
	debug_on = getenv("SCIF_DEBUG") && atoi(getenv("SCIF_DEBUG")) > 0;
	scif_lib.fence_doc = getenv("SCIF_FENCE_SIGNAL_DOC") && atoi(getenv("SCIF_FENCE_SIGNAL_DOC")) > 0;
	ret = load_nodes();
	if (ret)
		goto out;
	scif_lib.epfd = epoll_create1(EPOLL_CLOEXEC);
	scif_lib.wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (scif_lib.epfd < 0 || scif_lib.wakefd < 0) {
		ret = -errno;
		goto out;
	}
	ret = scif_epoll_add(scif_lib.wakefd, EPOLLIN, SCIF_SRC(SCIF_SRC_WAKE, NULL));
	if (!ret)
		ret = scif_progress_start();
	if (!ret)
		scif_lib.ready = true;
out:
	if (ret && scif_lib.epfd >= 0) {
		close(scif_lib.epfd);
		scif_lib.epfd = -1;
	}
	if (ret && scif_lib.wakefd >= 0) {
		close(scif_lib.wakefd);
		scif_lib.wakefd = -1;
	}
	pthread_mutex_unlock(&scif_lib.lock);
	return ret;
}

int scif_epoll_add(int fd, uint32_t events, uint64_t data)
{
	struct epoll_event e = { .events = events, .data.u64 = data };

	return epoll_ctl(scif_lib.epfd, EPOLL_CTL_ADD, fd, &e) ? -errno : 0;
}

void scif_epoll_del(int fd)
{
	epoll_ctl(scif_lib.epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* The process's rdma_cm event channel, created on first use (a listen or a connect). */
struct rdma_event_channel *scif_cm_channel(int *err)
{
	struct rdma_event_channel *ch;

	pthread_mutex_lock(&scif_lib.lock);
	if (scif_lib.cm_inherited) {
		pthread_mutex_unlock(&scif_lib.lock);
		scif_log("a forked child of a process that used SCIF connections cannot make its own"
			 " (exec first; docs/scif.md \"fork\")");
		*err = ENODEV;
		return NULL;
	}
	ch = scif_lib.cm_chan;
	if (!ch) {
		ch = rdma_create_event_channel();
		if (!ch || fcntl(ch->fd, F_SETFL, O_NONBLOCK) ||
		    fcntl(ch->fd, F_SETFD, FD_CLOEXEC) ||
		    scif_epoll_add(ch->fd, EPOLLIN, SCIF_SRC(SCIF_SRC_CM, ch))) {
			scif_log("rdma_cm is not available: %s (bvctl run sets it up)", strerror(errno));
			*err = ENODEV;
			if (ch)
				rdma_destroy_event_channel(ch);
			ch = NULL;
		} else {
			scif_lib.cm_chan = ch;
		}
	}
	pthread_mutex_unlock(&scif_lib.lock);
	return ch;
}

int scif_ep_table_add(struct scif_ep *ep)
{
	int ret = 0;

	pthread_mutex_lock(&scif_lib.lock);
	if (ep->fd >= scif_lib.nbyfd) {
		int n = scif_lib.nbyfd ? scif_lib.nbyfd : 64;
		struct scif_ep **t;

		while (n <= ep->fd)
			n *= 2;
		t = realloc(scif_lib.byfd, (size_t)n * sizeof(*t));
		if (!t) {
			ret = -ENOMEM;
			goto out;
		}
		memset(t + scif_lib.nbyfd, 0, (size_t)(n - scif_lib.nbyfd) * sizeof(*t));
		scif_lib.byfd = t;
		scif_lib.nbyfd = n;
	}
	scif_lib.byfd[ep->fd] = ep;
	if (ep->fd < scif_lib.ninherited)
		scif_lib.inherited_fd[ep->fd] = 0;
	ep->next = scif_lib.eps;
	scif_lib.eps = ep;
	atomic_fetch_add(&ep->refs, 1);	/* the table's */
out:
	pthread_mutex_unlock(&scif_lib.lock);
	return ret;
}

void scif_ep_table_del(struct scif_ep *ep)
{
	bool found = false;

	pthread_mutex_lock(&scif_lib.lock);
	if (ep->fd >= 0 && ep->fd < scif_lib.nbyfd && scif_lib.byfd[ep->fd] == ep)
		scif_lib.byfd[ep->fd] = NULL;
	for (struct scif_ep **p = &scif_lib.eps; *p; p = &(*p)->next) {
		if (*p == ep) {
			*p = ep->next;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&scif_lib.lock);
	if (found)
		scif_ep_put(ep);
}

struct scif_ep *scif_ep_get(int fd, int *err)
{
	struct scif_ep *ep = NULL;

	if (fd < 0) {
		*err = EBADF;
		return NULL;
	}
	pthread_mutex_lock(&scif_lib.lock);
	if (fd < scif_lib.nbyfd)
		ep = scif_lib.byfd[fd];
	if (ep)
		atomic_fetch_add(&ep->refs, 1);
	pthread_mutex_unlock(&scif_lib.lock);
	if (!ep)
		*err = fcntl(fd, F_GETFD) < 0 ? EBADF : ENOTTY;
	return ep;
}

void scif_ep_put(struct scif_ep *ep)
{
	if (ep && atomic_fetch_sub(&ep->refs, 1) == 1)
		scif_ep_free(ep);
}
