// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bv_msg.h"
#include "bv_paths.h"
#include "bvd.h"
#include "bvd_timer.h"
#include "cm/bvd_cm.h"

/* An epoll registration: either a client socket, the listener, or a device fd. */
struct bvd_watch {
	int fd;
	bvd_fd_cb cb;
	void *arg;
	struct bvd_watch *next;
};

static struct bvd_watch *watches;

void bvd_log(struct bvd *d, const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "[%ld.%03ld] %s: ", (long)ts.tv_sec, ts.tv_nsec / 1000000,
		d && d->conf ? d->conf->name : "bvd");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int bvd_watch_fd(struct bvd *d, int fd, bvd_fd_cb cb, void *arg)
{
	return bvd_watch_fd_events(d, fd, EPOLLIN, cb, arg);
}

int bvd_watch_fd_events(struct bvd *d, int fd, uint32_t events, bvd_fd_cb cb, void *arg)
{
	struct epoll_event ev = { .events = events };
	struct bvd_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->cb = cb;
	w->arg = arg;
	ev.data.ptr = w;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int e = errno;

		free(w);
		return -e;
	}
	w->next = watches;
	watches = w;
	return 0;
}

int bvd_modify_fd(struct bvd *d, int fd, uint32_t events)
{
	for (struct bvd_watch *w = watches; w; w = w->next) {
		if (w->fd == fd) {
			struct epoll_event ev = { .events = events, .data.ptr = w };

			return epoll_ctl(d->epfd, EPOLL_CTL_MOD, fd, &ev) ? -errno : 0;
		}
	}
	return -ENOENT;
}

void bvd_unwatch_fd(struct bvd *d, int fd)
{
	for (struct bvd_watch **p = &watches; *p; p = &(*p)->next) {
		if ((*p)->fd == fd) {
			struct bvd_watch *w = *p;

			epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
			*p = w->next;
			free(w);
			return;
		}
	}
}

int bvd_async_event(struct bvd_client *c, uint64_t element, uint32_t event_type)
{
	struct { uint64_t element; uint32_t event_type; uint32_t reserved; } ev = {
		element, event_type, 0
	};

	if (c->async_fd < 0)
		return -EBADF;
	if (send(c->async_fd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(ev))
		return -errno;
	return 0;
}

void bvd_async_event_all(struct bvd *d, uint64_t element, uint32_t event_type)
{
	for (struct bvd_client *c = d->clients; c; c = c->next)
		if (c->role == BV_ROLE_VERBS)
			bvd_async_event(c, element, event_type);
}

int bvd_poll(struct bvd *d, int timeout_ms)
{
	struct epoll_event ev[16];
	int n = epoll_wait(d->epfd, ev, 16, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (int i = 0; i < n && !d->stop; i++) {
		struct bvd_watch *w = ev[i].data.ptr;
		bool live = false;

		/* A callback may have unwatched (freed) a later entry of this batch. */
		for (struct bvd_watch *x = watches; x; x = x->next)
			live |= x == w;
		if (live)
			w->cb(d, w->fd, ev[i].events, w->arg);
	}
	return n;
}

static void client_free(struct bvd *d, struct bvd_client *c)
{
	if (c->role == BV_ROLE_VERBS && d->ops->client_close)
		d->ops->client_close(d, c);
	if (c->role == BV_ROLE_CM)
		bvd_cm_client_gone(d, c);
	if (c->role == BV_ROLE_VERBS)
		bvd_log(d, "client %u (pid %d, %s) left", c->id, (int)c->pid, c->comm);
	bvd_unwatch_fd(d, c->sock);
	close(c->sock);
	if (c->async_fd >= 0)
		close(c->async_fd);
	for (struct bvd_client **p = &d->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	free(c);
}

static void do_hello(struct bvd *d, struct bvd_client *c, const struct bv_msg_hdr *h,
		     const void *in, struct bvd_reply *r)
{
	const struct bv_hello_req *req = in;
	struct bv_hello_rsp *rsp = r->payload;
	struct bv_device_attr attr;
	int sv[2];

	memset(rsp, 0, sizeof(*rsp));
	rsp->version = BV_PROTO_VERSION;
	snprintf(rsp->kind, sizeof(rsp->kind), "%s", d->ops->kind);
	snprintf(rsp->ibdev, sizeof(rsp->ibdev), "%s", d->conf->name);
	rsp->num_comp_vectors = d->num_comp_vectors;
	r->len = sizeof(*rsp);
	if (h->version != BV_PROTO_VERSION) {
		r->status = EPROTO;
		return;
	}
	if (h->len != sizeof(*req) || c->role) {
		r->status = EINVAL;
		return;
	}
	if (req->role != BV_ROLE_VERBS && req->role != BV_ROLE_ADMIN && req->role != BV_ROLE_CM) {
		r->status = EINVAL;
		return;
	}
	if (req->role == BV_ROLE_CM && !d->cm) {
		r->status = EOPNOTSUPP;	/* this kind has no connection manager */
		return;
	}
	if (req->role == BV_ROLE_VERBS && strncmp(req->kind, d->ops->kind, sizeof(req->kind))) {
		r->status = ENODEV;	/* a provider for another kind of device */
		return;
	}
	if (d->ops->query_device && !d->ops->query_device(d, &attr))
		rsp->phys_port_cnt = attr.phys_port_cnt;
	c->pid = req->pid;
	memcpy(c->comm, req->comm, sizeof(c->comm));
	c->comm[sizeof(c->comm) - 1] = 0;
	rsp->client_id = c->id;
	if (req->role == BV_ROLE_ADMIN || req->role == BV_ROLE_CM) {
		c->role = req->role;
		return;
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		r->status = errno;
		return;
	}
	c->role = BV_ROLE_VERBS;
	c->async_fd = sv[0];
	if (d->ops->client_open) {
		int err = d->ops->client_open(d, c);

		if (err) {
			c->role = 0;
			close(sv[0]);
			close(sv[1]);
			c->async_fd = -1;
			r->status = err;
			return;
		}
	}
	r->fds[0] = sv[1];
	r->nfds = 1;
	bvd_log(d, "client %u (pid %d, %s) opened the device", c->id, (int)c->pid, c->comm);
}

static void do_status(struct bvd *d, struct bvd_reply *r)
{
	char *buf = r->payload;
	size_t cap = BV_MSG_PAYLOAD_MAX, n;
	int nclients = 0;

	for (struct bvd_client *c = d->clients; c; c = c->next)
		nclients += c->role == BV_ROLE_VERBS;
	n = snprintf(buf, cap, "%s: kind %s, daemon pid %d, %d client%s\n", d->conf->name,
		     d->ops->kind, (int)getpid(), nclients, nclients == 1 ? "" : "s");
	for (struct bvd_client *c = d->clients; c && n < cap; c = c->next)
		if (c->role == BV_ROLE_VERBS)
			n += snprintf(buf + n, cap - n, "  client %u: pid %d (%s)\n", c->id,
				      (int)c->pid, c->comm);
	if (d->ops->status && n < cap)
		d->ops->status(d, buf + n, cap - n);
	n = strnlen(buf, cap - 1);
	if (d->cm && n < cap - 1)
		bvd_cm_status(d, buf + n, cap - n);
	r->len = strnlen(buf, cap - 1) + 1;
}

static void dispatch(struct bvd *d, struct bvd_client *c, const struct bv_msg_hdr *h,
		     const void *in, int *fds, unsigned int nfds, struct bvd_reply *r)
{
	if (h->op != BV_OP_HELLO && h->version != BV_PROTO_VERSION) {
		r->status = EPROTO;
		return;
	}
	if (h->op != BV_OP_HELLO && !c->role) {
		r->status = EPERM;	/* HELLO first */
		return;
	}
	switch (h->op) {
	case BV_OP_HELLO:
		do_hello(d, c, h, in, r);
		return;
	case BV_OP_QUERY_DEVICE:
		if (!d->ops->query_device) {
			r->status = EOPNOTSUPP;
			return;
		}
		memset(r->payload, 0, sizeof(struct bv_device_attr));
		r->status = d->ops->query_device(d, r->payload);
		r->len = r->status ? 0 : sizeof(struct bv_device_attr);
		return;
	case BV_OP_QUERY_PORT: {
		const struct bv_query_port_req *q = in;

		if (h->len != sizeof(*q)) {
			r->status = EINVAL;
			return;
		}
		if (!d->ops->query_port) {
			r->status = EOPNOTSUPP;
			return;
		}
		memset(r->payload, 0, sizeof(struct bv_port_attr));
		r->status = d->ops->query_port(d, q->port_num, r->payload);
		r->len = r->status ? 0 : sizeof(struct bv_port_attr);
		return;
	}
	case BV_OP_STATUS:
		do_status(d, r);
		return;
	default:
		if (h->op >= BV_OP_CM_BASE && h->op < BV_OP_CM_BASE + 0x100) {
			if (c->role != BV_ROLE_CM)
				r->status = EPERM;
			else
				bvd_cm_request(d, c, h->op, in, h->len, fds, nfds, r);
			return;
		}
		if (c->role != BV_ROLE_VERBS || !d->ops->request) {
			r->status = c->role == BV_ROLE_VERBS ? EOPNOTSUPP : EPERM;
			return;
		}
		d->ops->request(d, c, h->op, in, h->len, fds, nfds, r);
	}
}

static void client_readable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	static union {
		char bytes[BV_MSG_PAYLOAD_MAX];
		uint64_t align;
	} in, out;
	struct bvd_client *c = arg;
	struct bv_msg_hdr h, rh;
	struct bvd_reply r = { .payload = out.bytes };
	int fds[BV_MSG_MAX_FDS];
	unsigned int nfds = BV_MSG_MAX_FDS;
	int ret;

	ret = bv_msg_recv(fd, &h, in.bytes, sizeof(in.bytes), fds, &nfds);
	if (ret == -EAGAIN || ret == -EINTR)
		return;
	if (ret) {
		if (ret != -EPIPE && ret != -ECONNRESET)
			bvd_log(d, "client %u: bad message (%s), dropping it", c->id,
				strerror(-ret));
		client_free(d, c);
		return;
	}
	dispatch(d, c, &h, in.bytes, fds, nfds, &r);
	for (unsigned int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	rh = (struct bv_msg_hdr){ .magic = BV_PROTO_MAGIC, .version = BV_PROTO_VERSION,
				  .op = h.op, .seq = h.seq, .status = r.status,
				  .len = r.len, .nfds = r.nfds };
	ret = bv_msg_send(fd, &rh, out.bytes, r.fds, r.nfds);
	for (unsigned int i = 0; i < r.nfds; i++)
		close(r.fds[i]);
	if (ret) {
		client_free(d, c);
		return;
	}
}

int bvd_client_add(struct bvd *d, int s)
{
	struct bvd_client *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->d = d;
	c->sock = s;
	c->async_fd = -1;
	c->id = ++d->next_client_id;
	err = bvd_watch_fd(d, s, client_readable, c);
	if (err) {
		free(c);
		return err;
	}
	c->next = d->clients;
	d->clients = c;
	return 0;
}

static void listener_readable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	int s = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (s >= 0 && bvd_client_add(d, s))
		close(s);
}

static void signal_readable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) == sizeof(si)) {
		bvd_log(d, "signal %u: shutting down", si.ssi_signo);
		d->stop = true;
	}
}

static int listen_on(struct bvd *d, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		bvd_log(d, "socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -1;
	unlink(path);	/* a stale socket from a daemon that died */
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 64)) {
		bvd_log(d, "cannot listen on %s: %s", path, strerror(errno));
		close(s);
		return -1;
	}
	chmod(path, 0666);	/* any local user may open the device, as /dev/infiniband */
	return s;
}

static void usage(FILE *f, const char *prog, const char *kind)
{
	fprintf(f,
		"usage: %s --device NAME [--config FILE] [--rundir DIR]\n"
		"The bridgeverbs %s daemon: owns device NAME and serves its verbs clients.\n"
		"  --device NAME   the device's section in the configuration\n"
		"  --config FILE   configuration (default: RUNDIR/config, else the built-in one)\n"
		"  --rundir DIR    run directory (default: $BV_RUNDIR or %s)\n"
		"Normally started by 'bvctl up'.\n",
		prog, kind, "/run/bridgeverbs");
}

int bvd_main(int argc, char **argv, const struct bvd_kind_ops *ops)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "config", required_argument, NULL, 'c' },
		{ "rundir", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bvd dd;
	struct bvd *d = &dd;
	const char *device = NULL, *config = NULL;
	char path[BV_PATH_MAX], err[256];
	sigset_t mask;
	int opt, status = 0;
	FILE *pf;

	while ((opt = getopt_long(argc, argv, "d:c:r:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			device = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'r':
			setenv("BV_RUNDIR", optarg, 1);
			break;
		case 'h':
			usage(stdout, argv[0], ops->kind);
			return 0;
		default:
			usage(stderr, argv[0], ops->kind);
			return 2;
		}
	}
	if (!device || optind != argc) {
		usage(stderr, argv[0], ops->kind);
		return 2;
	}
	if (!config && !bv_run_path(path, sizeof(path), "config", "") && !access(path, R_OK))
		config = path;
	if (bv_config_load(&d->cfg, config, err, sizeof(err))) {
		fprintf(stderr, "%s: configuration %s: %s\n", argv[0], config ? config : "(built-in)",
			err);
		return 2;
	}
	d->conf = bv_config_find(&d->cfg, device);
	if (!d->conf) {
		fprintf(stderr, "%s: no device '%s' in the configuration\n", argv[0], device);
		return 2;
	}
	if (strcmp(d->conf->kind, ops->kind)) {
		fprintf(stderr, "%s: device %s is of kind %s, this daemon drives %s\n", argv[0],
			device, d->conf->kind, ops->kind);
		return 2;
	}
	d->ops = ops;
	d->num_comp_vectors = 1;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->epfd < 0 || d->sigfd < 0 || bvd_watch_fd(d, d->sigfd, signal_readable, NULL))
		return 1;

	if (ops->init && (status = ops->init(d))) {
		bvd_log(d, "device bring-up failed (%d)", status);
		return status;
	}
	if (ops->cm && (status = bvd_cm_init(d))) {
		bvd_log(d, "connection manager: cannot start (%d)", status);
		if (ops->fini)
			ops->fini(d);
		return 1;
	}
	if (bv_run_path(path, sizeof(path), d->conf->name, ".sock") ||
	    (d->lsock = listen_on(d, path)) < 0 ||
	    bvd_watch_fd(d, d->lsock, listener_readable, NULL)) {
		bvd_cm_fini(d);
		if (ops->fini)
			ops->fini(d);
		return 1;
	}
	if (!bv_run_path(path, sizeof(path), d->conf->name, ".pid") && (pf = fopen(path, "w"))) {
		fprintf(pf, "%d\n", (int)getpid());
		fclose(pf);
	}
	bvd_log(d, "%s daemon ready (pid %d)", ops->kind, (int)getpid());

	while (!d->stop) {
		if (bvd_poll(d, -1) < 0) {
			bvd_log(d, "epoll_wait: %s", strerror(errno));
			status = 1;
			break;
		}
	}

	while (d->clients)
		client_free(d, d->clients);
	if (!bv_run_path(path, sizeof(path), d->conf->name, ".sock"))
		unlink(path);
	if (!bv_run_path(path, sizeof(path), d->conf->name, ".pid"))
		unlink(path);
	bvd_cm_fini(d);
	if (ops->fini)
		ops->fini(d);
	bvd_timers_fini(d);
	bvd_log(d, "stopped");
	return status;
}
