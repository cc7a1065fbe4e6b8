// SPDX-License-Identifier: MIT
/*
 * cm_rate: rdma_cm connection set-up rate and per-connection latency, in the manner of
 * rdmacm-utils' cmtime (linked with the system's librdmacm; bvctl run makes it load ours).
 *
 *   cm_rate server ADDR PORT [-q]          accept connections (with an RC QP each: -q) until
 *                                          killed; answers each DISCONNECTED
 *   cm_rate client ADDR SRC PORT N [-q] [-w WINDOW]
 *                                          N connections, step by step as cmtime: resolve
 *                                          address, resolve route, (QP), connect, disconnect
 *                                          for all of them; WINDOW (default N: all at once)
 *                                          ids at a time in each step
 *   cm_rate tcp ADDR PORT N [-w WINDOW]    the baseline: N TCP connections over the kernel's
 *                                          loopback, the same steps (connect: the three-way
 *                                          handshake, as REQ/REP/RTU; disconnect: a FIN
 *                                          answered by the peer's, as DREQ/DREP), the
 *                                          listener a thread of this process
 *
 * The client prints per step: the step's wall time, its rate (N / wall time) and the
 * per-connection latency (from its call to its event) at p50, p99 and max:
 *   step connect: 1000 in 183.2 ms = 5458/s; p50 90.1 ms p99 180.3 ms max 182.0 ms
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>

struct conn {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	double start, done;
	bool ok;
};

static struct rdma_event_channel *ch;
static bool with_qp;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static struct sockaddr_in addr_of(const char *ip, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
		fprintf(stderr, "cm_rate: bad address %s\n", ip);
		exit(2);
	}
	return sa;
}

static int make_qp(struct rdma_cm_id *id, struct ibv_cq **cq)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 1, .max_recv_wr = 1,
					       .max_send_sge = 1, .max_recv_sge = 1 } };

	*cq = ibv_create_cq(id->verbs, 2, NULL, NULL, 0);
	if (!*cq)
		return -1;
	a.send_cq = a.recv_cq = *cq;
	return rdma_create_qp(id, NULL, &a);
}

static void free_qp(struct rdma_cm_id *id, struct ibv_cq *cq)
{
	if (id->qp)
		rdma_destroy_qp(id);
	if (cq)
		ibv_destroy_cq(cq);
}

static int server(const char *ip, int port)
{
	struct sockaddr_in sa = addr_of(ip, port);
	struct rdma_cm_id *l;
	struct rdma_cm_event *ev;
	unsigned long accepted = 0;

	if (rdma_create_id(ch, &l, NULL, RDMA_PS_TCP) || rdma_bind_addr(l, (struct sockaddr *)&sa) ||
	    rdma_listen(l, 1024)) {
		perror("cm_rate: listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	while (!rdma_get_cm_event(ch, &ev)) {
		struct rdma_cm_id *id = ev->id;
		enum rdma_cm_event_type e = ev->event;

		rdma_ack_cm_event(ev);
		if (e == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
			struct ibv_cq *cq = NULL;

			if (with_qp && make_qp(id, &cq)) {
				rdma_reject(id, NULL, 0);
				rdma_destroy_id(id);
				continue;
			}
			id->context = cq;
			if (rdma_accept(id, &p)) {
				free_qp(id, cq);
				rdma_destroy_id(id);
			}
			accepted++;
		} else if (e == RDMA_CM_EVENT_DISCONNECTED) {
			rdma_disconnect(id);
			free_qp(id, id->context);
			rdma_destroy_id(id);
		}
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *step, struct conn *c, int n, double t0, double t1)
{
	double *lat = malloc((size_t)n * sizeof(*lat));
	int ok = 0;

	for (int i = 0; i < n; i++)
		if (c[i].ok)
			lat[ok++] = c[i].done - c[i].start;
	qsort(lat, (size_t)ok, sizeof(*lat), cmp_double);
	printf("step %s: %d in %.1f ms = %.0f/s; p50 %.2f ms p99 %.2f ms max %.2f ms%s\n", step,
	       ok, t1 - t0, ok / ((t1 - t0) / 1e3), ok ? lat[ok / 2] : 0,
	       ok ? lat[(int)(ok * 0.99) < ok ? (int)(ok * 0.99) : ok - 1] : 0,
	       ok ? lat[ok - 1] : 0, ok == n ? "" : " (some failed)");
	fflush(stdout);
	free(lat);
}

/*
 * Take one event; 1 when it ended the step for one of our connections (good or not), 0 for
 * another event, -1 when the channel fails. Without a QP the active side sees
 * CONNECT_RESPONSE and completes the connection itself (rdma_establish).
 */
static int collect_one(struct conn *c, int n, enum rdma_cm_event_type good)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type e;
	struct conn *x;
	int status;

	if (rdma_get_cm_event(ch, &ev))
		return -1;
	x = ev->id->context;
	e = ev->event;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (!x || x < c || x >= c + n || x->done || e == RDMA_CM_EVENT_TIMEWAIT_EXIT)
		return 0;
	if (e == RDMA_CM_EVENT_CONNECT_RESPONSE && good == RDMA_CM_EVENT_ESTABLISHED) {
		x->ok = !rdma_establish(x->id);
	} else if (e == good) {
		x->ok = true;
	} else {
		fprintf(stderr, "cm_rate: %s (%d)\n", rdma_event_str(e), status);
		x->ok = false;
	}
	x->done = now_ms();
	return 1;
}

enum step { S_ADDR, S_ROUTE, S_CONNECT, S_DISCONNECT };

static int start(struct conn *x, enum step s, const struct sockaddr_in *dst,
		 const struct sockaddr_in *src)
{
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7, .qp_num = 1 };

	x->start = now_ms();
	x->done = 0;
	x->ok = false;
	switch (s) {
	case S_ADDR:
		return rdma_resolve_addr(x->id, (struct sockaddr *)src, (struct sockaddr *)dst, 2000);
	case S_ROUTE:
		return rdma_resolve_route(x->id, 2000);
	case S_CONNECT:
		return rdma_connect(x->id, &p);
	case S_DISCONNECT:
		return rdma_disconnect(x->id);
	}
	return -1;
}

static void run_step(const char *name, enum step s, enum rdma_cm_event_type good, struct conn *c,
		     int n, int window, const struct sockaddr_in *dst, const struct sockaddr_in *src)
{
	int next = 0, pending = 0;
	double t0 = now_ms();

	while (next < n || pending) {
		int r;

		while (next < n && pending < window) {
			if (start(&c[next], s, dst, src)) {
				perror(name);
				c[next].done = now_ms();
			} else {
				pending++;
			}
			next++;
		}
		if (!pending)
			continue;
		r = collect_one(c, n, good);
		if (r < 0)
			break;
		pending -= r;
	}
	report(name, c, n, t0, now_ms());
}

static int client(const char *ip, const char *src_ip, int port, int n, int window)
{
	struct sockaddr_in dst = addr_of(ip, port), src = addr_of(src_ip, 0);
	struct conn *c = calloc((size_t)n, sizeof(*c));
	double t0;

	if (!c)
		return 1;
	for (int i = 0; i < n; i++)
		if (rdma_create_id(ch, &c[i].id, &c[i], RDMA_PS_TCP)) {
			perror("rdma_create_id");
			return 1;
		}
	run_step("resolve_addr", S_ADDR, RDMA_CM_EVENT_ADDR_RESOLVED, c, n, window, &dst, &src);
	run_step("resolve_route", S_ROUTE, RDMA_CM_EVENT_ROUTE_RESOLVED, c, n, window, &dst, &src);
	if (with_qp) {
		t0 = now_ms();
		for (int i = 0; i < n; i++) {
			c[i].start = now_ms();
			c[i].ok = !make_qp(c[i].id, &c[i].cq);
			c[i].done = now_ms();
		}
		report("create_qp", c, n, t0, now_ms());
	}
	run_step("connect", S_CONNECT, RDMA_CM_EVENT_ESTABLISHED, c, n, window, &dst, &src);
	run_step("disconnect", S_DISCONNECT, RDMA_CM_EVENT_DISCONNECTED, c, n, window, &dst, &src);
	t0 = now_ms();
	for (int i = 0; i < n; i++) {
		c[i].start = now_ms();
		free_qp(c[i].id, c[i].cq);
		c[i].ok = !rdma_destroy_id(c[i].id);
		c[i].done = now_ms();
	}
	report("destroy", c, n, t0, now_ms());
	return 0;
}

/* The TCP baseline's listener: accepts, and closes each connection at its peer's FIN. */
static void *tcp_listener(void *arg)
{
	int l = *(int *)arg, ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = { .events = EPOLLIN, .data.fd = l }, ev[64];

	epoll_ctl(ep, EPOLL_CTL_ADD, l, &e);
	for (;;) {
		int n = epoll_wait(ep, ev, 64, -1);

		for (int i = 0; i < n; i++) {
			char b;
			int fd;

			if (ev[i].data.fd != l) {
				if (read(ev[i].data.fd, &b, 1) <= 0)
					close(ev[i].data.fd);	/* our FIN answers theirs */
				continue;
			}
			while ((fd = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
				e.data.fd = fd;
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
			}
		}
	}
	return NULL;
}

/*
 * One step over n sockets, window at a time: start() begins it on socket i, and it ends when
 * the socket shows `want` (EPOLLOUT: connected; EPOLLIN: the peer's FIN read as 0 bytes).
 */
static void tcp_step(const char *name, int *fd, struct conn *c, int n, int window,
		     const struct sockaddr_in *dst, bool connect_step)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), next = 0, pending = 0;
	struct epoll_event ev[64];
	double t0 = now_ms();

	while (next < n || pending) {
		int m;

		while (next < n && pending < window) {
			struct epoll_event e = { .data.u32 = (uint32_t)next };
			struct conn *x = &c[next];
			int r;

			x->start = now_ms();
			x->ok = false;
			if (connect_step) {
				fd[next] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
				r = connect(fd[next], (const struct sockaddr *)dst, sizeof(*dst));
				r = r && errno != EINPROGRESS ? -1 : 0;
				e.events = EPOLLOUT;
			} else {
				r = shutdown(fd[next], SHUT_WR);
				e.events = EPOLLIN;
			}
			if (r || epoll_ctl(ep, EPOLL_CTL_ADD, fd[next], &e)) {
				perror(name);
				x->done = now_ms();
			} else {
				pending++;
			}
			next++;
		}
		m = epoll_wait(ep, ev, 64, 5000);
		if (m <= 0)
			break;
		for (int i = 0; i < m; i++) {
			struct conn *x = &c[ev[i].data.u32];
			int f = fd[ev[i].data.u32], err = 0;
			socklen_t len = sizeof(err);
			char b;

			if (connect_step)
				x->ok = !getsockopt(f, SOL_SOCKET, SO_ERROR, &err, &len) && !err;
			else
				x->ok = read(f, &b, 1) == 0;
			x->done = now_ms();
			epoll_ctl(ep, EPOLL_CTL_DEL, f, NULL);
			pending--;
		}
	}
	close(ep);
	report(name, c, n, t0, now_ms());
}

static int tcp(const char *ip, int port, int n, int window)
{
	struct sockaddr_in dst = addr_of(ip, port);
	struct conn *c = calloc((size_t)n, sizeof(*c));
	int *fd = calloc((size_t)n, sizeof(*fd)), l, one = 1;
	pthread_t t;

	l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!c || !fd || bind(l, (struct sockaddr *)&dst, sizeof(dst)) || listen(l, 4096) ||
	    pthread_create(&t, NULL, tcp_listener, &l)) {
		perror("cm_rate: tcp listen");
		return 1;
	}
	tcp_step("connect", fd, c, n, window, &dst, true);
	tcp_step("disconnect", fd, c, n, window, &dst, false);
	for (int i = 0; i < n; i++)
		close(fd[i]);
	return 0;
}

int main(int argc, char **argv)
{
	int window = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-q")) {
			with_qp = true;
		} else if (!strcmp(argv[i], "-w") && i + 1 < argc) {
			window = atoi(argv[i + 1]);
			memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(*argv));
			argc -= 2;
			i--;
			continue;
		} else {
			continue;
		}
		memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
		argc--;
		i--;
	}
	if (argc == 5 && !strcmp(argv[1], "tcp")) {
		int n = atoi(argv[4]);

		return tcp(argv[2], atoi(argv[3]), n, window > 0 ? window : n);
	}
	ch = rdma_create_event_channel();
	if (!ch) {
		perror("rdma_create_event_channel");
		return 1;
	}
	if (argc == 4 && !strcmp(argv[1], "server"))
		return server(argv[2], atoi(argv[3]));
	if (argc == 6 && !strcmp(argv[1], "client")) {
		int n = atoi(argv[5]);

		return client(argv[2], argv[3], atoi(argv[4]), n, window > 0 ? window : n);
	}
	fprintf(stderr, "usage: cm_rate server ADDR PORT [-q] | "
			"cm_rate client ADDR SRC PORT N [-q] [-w WINDOW] | "
			"cm_rate tcp ADDR PORT N [-w WINDOW]\n");
	return 2;
}
