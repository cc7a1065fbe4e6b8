// SPDX-License-Identifier: MIT
/*
 * cm_probe: checks of rdma_cm's semantics as an application sees them, linked against the
 * system's librdmacm like any Debian program (bvctl run makes it load librdmacm-plugin).
 *
 *   cm_probe api SRV CLI        the API on two addresses of this host (SRV listens, CLI
 *                               connects from): events, statuses, private data, options,
 *                               ports, channels, UD, IPv6, AF_IB (prints "ok ..." per check)
 *   cm_probe expect SRV CLI PORT EVENT [STATUS]
 *                               connect from CLI to SRV:PORT; the first event after the
 *                               route must be EVENT (with STATUS): UNREACHABLE -110, ...;
 *                               EVENT ERRNO: a call must fail, with errno STATUS
 *   cm_probe serve SRV PORT     accept connections, print their events, answer a
 *                               DISCONNECTED with rdma_disconnect; on DEVICE_REMOVAL destroy
 *                               the id, and once the listener is gone exit (0)
 *   cm_probe hold SRV CLI PORT EVENT[:STATUS]...
 *                               connect, print "established", then wait for each EVENT in
 *                               turn (DISCONNECTED, DEVICE_REMOVAL...) and print it; SIGUSR1
 *                               makes it call rdma_disconnect (a peer that went silent);
 *                               no EVENT: hold until killed
 *
 * Exit status 0 when every check passed; a failed check says what it expected.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));
	va_end(ap);
	failures++;
}

#define CHECK(cond, ...)			\
	do {					\
		if (!(cond))			\
			fail(__VA_ARGS__);	\
	} while (0)

static void ok(const char *what)
{
	printf("ok %s\n", what);
	fflush(stdout);
}

static struct sockaddr_in in4(const char *ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", ip);
		exit(2);
	}
	return a;
}

static struct sockaddr_in6 in6_mapped(const char *ip, uint16_t port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	char buf[64];

	snprintf(buf, sizeof(buf), "::ffff:%s", ip);
	if (inet_pton(AF_INET6, buf, &a.sin6_addr) != 1)
		exit(2);
	return a;
}

static int event_by_name(const char *name)
{
	for (int e = 0; e <= RDMA_CM_EVENT_TIMEWAIT_EXIT; e++)
		if (!strcmp(rdma_event_str(e) + strlen("RDMA_CM_EVENT_"), name))
			return e;
	fprintf(stderr, "unknown event %s\n", name);
	exit(2);
}

/* The next event on ch within ms (-1: any time); NULL on timeout. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) <= 0)
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

/* Wait for event `want` on ch (acking others, printing them); returns it, unacked. */
static struct rdma_cm_event *wait_event(struct rdma_event_channel *ch, int want, int ms)
{
	struct rdma_cm_event *ev;

	while ((ev = next_event(ch, ms))) {
		if ((int)ev->event == want)
			return ev;
		printf("  (event %s status %d)\n", rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
	}
	fail("no %s within %d ms", rdma_event_str(want), ms);
	return NULL;
}

/* ---- a connected pair on one channel -------------------------------------------------------- */

struct pair {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *cli, *srv;
	struct ibv_pd *pd;
	struct ibv_cq *cq_c, *cq_s;
};

static struct ibv_qp_init_attr qp_attr(struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = type,
				      .cap = { .max_send_wr = 4, .max_recv_wr = 4,
					       .max_send_sge = 1, .max_recv_sge = 1 } };

	return a;
}

static int make_qp(struct rdma_cm_id *id, struct ibv_cq **cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a;

	*cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);
	if (!*cq)
		return -1;
	a = qp_attr(*cq, type);
	return rdma_create_qp(id, NULL, &a);
}

/* Listen on srv:port, resolve and route cli -> srv:port; no connect yet. */
static int pair_setup(struct pair *p, const struct sockaddr *srv, const struct sockaddr *cli,
		      enum rdma_port_space ps)
{
	struct rdma_cm_event *ev;

	memset(p, 0, sizeof(*p));
	p->ch = rdma_create_event_channel();
	if (!p->ch)
		return -1;
	if (rdma_create_id(p->ch, &p->listen, NULL, ps) || rdma_bind_addr(p->listen,
									  (struct sockaddr *)srv) ||
	    rdma_listen(p->listen, 8))
		return -1;
	if (rdma_create_id(p->ch, &p->cli, NULL, ps) ||
	    rdma_resolve_addr(p->cli, (struct sockaddr *)cli, (struct sockaddr *)srv, 2000))
		return -1;
	ev = wait_event(p->ch, RDMA_CM_EVENT_ADDR_RESOLVED, 5000);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(p->cli, 2000))
		return -1;
	ev = wait_event(p->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	return 0;
}

static void pair_free(struct pair *p)
{
	struct rdma_cm_id *ids[] = { p->cli, p->srv, p->listen };

	for (unsigned int i = 0; i < 3; i++) {
		if (!ids[i])
			continue;
		if (ids[i]->qp)
			rdma_destroy_qp(ids[i]);
		rdma_destroy_id(ids[i]);
	}
	if (p->cq_c)
		ibv_destroy_cq(p->cq_c);
	if (p->cq_s)
		ibv_destroy_cq(p->cq_s);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	memset(p, 0, sizeof(*p));
}

/* ---- the API checks ------------------------------------------------------------------------ */

static uint16_t next_port = 20000;

static void check_devices(const char *srv_ip)
{
	int n = 0, found = 0;
	struct ibv_context **devs = rdma_get_devices(&n);
	struct rdma_cm_id *id;
	struct sockaddr_in a = in4(srv_ip, 0);

	CHECK(devs && n >= 1, "rdma_get_devices: %d devices", n);
	if (!devs)
		return;
	CHECK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id(sync)");
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&a) == 0, "bind %s", srv_ip);
	for (int i = 0; i < n; i++)
		found |= devs[i] == id->verbs;
	CHECK(found && id->verbs && id->pd && id->pd->context == id->verbs,
	      "id->verbs is one of rdma_get_devices()'s contexts, id->pd on it");
	CHECK(ntohs(rdma_get_src_port(id)) >= 1024, "an ephemeral port (%u)",
	      ntohs(rdma_get_src_port(id)));
	rdma_destroy_id(id);
	rdma_free_devices(devs);
	ok("rdma_get_devices returns the contexts ids carry");
}

static void check_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct pollfd p;

	CHECK(ch && ch->fd >= 0, "rdma_create_event_channel");
	if (!ch)
		return;
	p = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 0, "an empty channel is not readable");
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0, "O_NONBLOCK");
	errno = 0;
	CHECK(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN,
	      "rdma_get_cm_event on an empty nonblocking channel: EAGAIN");
	rdma_destroy_event_channel(ch);
	ok("event channel: pollable fd, O_NONBLOCK gives EAGAIN");
}

static void check_ports(const char *srv_ip)
{
	uint16_t port = next_port++;
	struct sockaddr_in a = in4(srv_ip, port), any = in4("0.0.0.0", port);
	struct sockaddr_in nowhere = in4("10.254.254.254", 0);
	struct rdma_cm_id *x, *y;
	int one = 1;

	rdma_create_id(NULL, &x, NULL, RDMA_PS_TCP);
	rdma_create_id(NULL, &y, NULL, RDMA_PS_TCP);
	CHECK(rdma_bind_addr(x, (struct sockaddr *)&a) == 0, "bind %s:%u", srv_ip, port);
	errno = 0;
	CHECK(rdma_bind_addr(y, (struct sockaddr *)&a) == -1 && errno == EADDRINUSE,
	      "a second bind of %s:%u: EADDRINUSE", srv_ip, port);
	rdma_destroy_id(y);
	rdma_create_id(NULL, &y, NULL, RDMA_PS_TCP);
	errno = 0;
	CHECK(rdma_bind_addr(y, (struct sockaddr *)&any) == -1 && errno == EADDRNOTAVAIL,
	      "0.0.0.0:%u while %s:%u is bound: EADDRNOTAVAIL", port, srv_ip, port);
	rdma_destroy_id(y);
	/* another port space has ports of its own */
	rdma_create_id(NULL, &y, NULL, RDMA_PS_UDP);
	CHECK(rdma_bind_addr(y, (struct sockaddr *)&a) == 0, "the same port in PS_UDP");
	rdma_destroy_id(y);
	rdma_destroy_id(x);
	/* REUSEADDR on both: they share the port until one listens */
	rdma_create_id(NULL, &x, NULL, RDMA_PS_TCP);
	rdma_create_id(NULL, &y, NULL, RDMA_PS_TCP);
	CHECK(rdma_set_option(x, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)) ==
		      0 &&
	      rdma_set_option(y, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)) == 0,
	      "REUSEADDR");
	CHECK(rdma_bind_addr(x, (struct sockaddr *)&a) == 0 &&
	      rdma_bind_addr(y, (struct sockaddr *)&a) == 0, "two REUSEADDR binds of one port");
	errno = 0;
	CHECK(rdma_listen(x, 1) == -1 && errno == EADDRINUSE,
	      "listening on a port another id shares: EADDRINUSE");
	rdma_destroy_id(y);
	CHECK(rdma_listen(x, 1) == 0, "listening once the port is ours alone");
	rdma_destroy_id(x);
	/* a port freed is free again */
	rdma_create_id(NULL, &x, NULL, RDMA_PS_TCP);
	CHECK(rdma_bind_addr(x, (struct sockaddr *)&a) == 0, "bind again after destroy");
	rdma_destroy_id(x);
	rdma_create_id(NULL, &x, NULL, RDMA_PS_TCP);
	errno = 0;
	CHECK(rdma_bind_addr(x, (struct sockaddr *)&nowhere) == -1 && errno == EADDRNOTAVAIL,
	      "bind to an address of no device and no interface: EADDRNOTAVAIL");
	rdma_destroy_id(x);
	ok("ports: EADDRINUSE, wildcard against specific, port spaces, REUSEADDR, no address");
}

static void check_options(const char *srv_ip, const char *cli_ip)
{
	struct sockaddr_in s = in4(srv_ip, next_port++), c = in4(cli_ip, 0);
	struct rdma_cm_id *id;
	uint8_t tos = 0x20, t = 19;
	int bad = 3, afonly = 1;
	struct ibv_qp_attr qa;
	int mask;

	rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP);
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1) == 0, "TOS");
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, 1) == 0,
	      "ACK_TIMEOUT");
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &afonly,
			      sizeof(afonly)) == 0, "AFONLY");
	errno = 0;
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &bad, sizeof(bad)) == -1 &&
	      errno == EINVAL, "TOS of the wrong size: EINVAL");
	errno = 0;
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, 99, &bad, sizeof(bad)) == -1 &&
	      errno == ENOSYS, "an unknown option: ENOSYS");
	CHECK(rdma_resolve_addr(id, (struct sockaddr *)&c, (struct sockaddr *)&s, 2000) == 0 &&
	      rdma_resolve_route(id, 2000) == 0, "sync resolve addr + route");
	CHECK(id->route.num_paths == 1 && id->route.path_rec &&
	      id->route.path_rec->traffic_class == tos,
	      "the route carries the TOS (traffic class %u)",
	      id->route.path_rec ? id->route.path_rec->traffic_class : 0);
	CHECK(id->port_num == 1 && id->verbs, "a resolved id is on port 1 of a device");
	qa.qp_state = IBV_QPS_INIT;
	CHECK(rdma_init_qp_attr(id, &qa, &mask) == 0 && (mask & IBV_QP_PORT) && qa.port_num == 1,
	      "rdma_init_qp_attr(INIT) before the handshake");
	errno = 0;
	qa.qp_state = IBV_QPS_RTS;
	CHECK(rdma_init_qp_attr(id, &qa, &mask) == 0 ? 1 : errno == EINVAL,
	      "rdma_init_qp_attr(RTS) before the handshake");
	errno = 0;
	CHECK(rdma_join_multicast(id, (struct sockaddr *)&s, NULL) == -1 && errno == EOPNOTSUPP,
	      "rdma_join_multicast: EOPNOTSUPP (no multicast on these ports)");
	rdma_destroy_id(id);
	ok("options: TOS, ACK_TIMEOUT, AFONLY, bad sizes, unknown names; multicast refused");
}

/* Connect the pair with private data both ways; returns 0 when both are ESTABLISHED. */
static int pair_connect(struct pair *p, const char *req_data, const char *rep_data,
			bool ud)
{
	struct rdma_conn_param cp = { .private_data = req_data,
				      .private_data_len = (uint8_t)strlen(req_data) + 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	enum ibv_qp_type type = ud ? IBV_QPT_UD : IBV_QPT_RC;
	unsigned int plen = ud ? 180 : 56;

	if (make_qp(p->cli, &p->cq_c, type)) {
		fail("client QP");
		return -1;
	}
	CHECK(p->cli->qp->state == (ud ? IBV_QPS_RTS : IBV_QPS_INIT),
	      "rdma_create_qp: %s QP in %s", ud ? "UD" : "RC", ud ? "RTS" : "INIT");
	if (rdma_connect(p->cli, &cp)) {
		fail("rdma_connect");
		return -1;
	}
	ev = wait_event(p->ch, RDMA_CM_EVENT_CONNECT_REQUEST, 5000);
	if (!ev)
		return -1;
	CHECK(ev->listen_id == p->listen && ev->id && ev->id != p->listen,
	      "CONNECT_REQUEST names the listener and a new id");
	p->srv = ev->id;
	if (ud) {
		CHECK(ev->param.ud.private_data_len == plen &&
		      !strcmp(ev->param.ud.private_data, req_data),
		      "SIDR request: %u bytes of private data (got %u), ours first", plen,
		      ev->param.ud.private_data_len);
	} else {
		CHECK(ev->param.conn.private_data_len == plen &&
		      !strcmp(ev->param.conn.private_data, req_data),
		      "REQ: %u bytes of private data (got %u), ours first", plen,
		      ev->param.conn.private_data_len);
		CHECK(ev->param.conn.qp_num == p->cli->qp->qp_num,
		      "the request carries the client's QPN");
	}
	CHECK(p->srv->verbs && p->srv->context == p->listen->context,
	      "the new id is on a device and inherits the listener's context");
	rdma_ack_cm_event(ev);
	if (make_qp(p->srv, &p->cq_s, type)) {
		fail("server QP");
		return -1;
	}
	cp.private_data = rep_data;
	cp.private_data_len = (uint8_t)strlen(rep_data) + 1;
	if (rdma_accept(p->srv, &cp)) {
		fail("rdma_accept");
		return -1;
	}
	ev = wait_event(p->ch, RDMA_CM_EVENT_ESTABLISHED, 5000);
	if (!ev)
		return -1;
	if (ud) {
		CHECK(ev->id == p->cli, "the client's ESTABLISHED (UD: the passive side has none)");
		CHECK(ev->param.ud.qp_num == p->srv->qp->qp_num &&
		      ev->param.ud.qkey == RDMA_UDP_QKEY && ev->param.ud.ah_attr.is_global &&
		      !memcmp(ev->param.ud.ah_attr.grh.dgid.raw,
			      p->srv->route.addr.addr.ibaddr.sgid.raw, 16),
		      "SIDR_REP: the server's QPN, RDMA_UDP_QKEY, an address vector to it");
		CHECK(ev->param.ud.private_data_len == 136 &&
		      !strcmp(ev->param.ud.private_data, rep_data),
		      "SIDR_REP: 136 bytes of private data (got %u), ours first",
		      ev->param.ud.private_data_len);
		rdma_ack_cm_event(ev);
		return 0;
	}
	/* two ESTABLISHED, in either order */
	for (int i = 0; i < 2; i++) {
		if (ev->id == p->cli) {
			CHECK(ev->param.conn.private_data_len == 196 &&
			      !strcmp(ev->param.conn.private_data, rep_data),
			      "REP: 196 bytes of private data (got %u), ours first",
			      ev->param.conn.private_data_len);
			CHECK(p->cli->qp->state == IBV_QPS_RTS, "the client's QP is in RTS");
		} else {
			CHECK(ev->id == p->srv, "ESTABLISHED for the new id");
		}
		rdma_ack_cm_event(ev);
		if (i == 0 && !(ev = wait_event(p->ch, RDMA_CM_EVENT_ESTABLISHED, 5000)))
			return -1;
	}
	CHECK(p->srv->qp->state == IBV_QPS_RTS, "the server's QP is in RTS");
	return 0;
}

static void check_connect(const char *srv_ip, const char *cli_ip)
{
	uint16_t port = next_port++;
	struct sockaddr_in s = in4(srv_ip, port), c = in4(cli_ip, 0);
	struct rdma_cm_event *ev;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct pair p;

	if (pair_setup(&p, (struct sockaddr *)&s, (struct sockaddr *)&c, RDMA_PS_TCP)) {
		fail("pair setup");
		pair_free(&p);
		return;
	}
	if (!pair_connect(&p, "hello from the client", "welcome from the server", false)) {
		CHECK(ibv_query_qp(p.cli->qp, &qa, IBV_QP_DEST_QPN | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN,
				   &qi) == 0 && qa.dest_qp_num == p.srv->qp->qp_num,
		      "the client's QP points at the server's (%#x, want %#x)", qa.dest_qp_num,
		      p.srv->qp->qp_num);
		CHECK(ntohs(rdma_get_dst_port(p.cli)) == port &&
		      ntohs(rdma_get_src_port(p.srv)) == port &&
		      ntohs(rdma_get_dst_port(p.srv)) == ntohs(rdma_get_src_port(p.cli)),
		      "ports: client -> %u, the new id's mirror them", port);
		ok("connect/accept: REQ, REP, RTU with private data both ways, QPs in RTS");
		/* a disconnect: DISCONNECTED on both, then TIMEWAIT_EXIT */
		CHECK(rdma_disconnect(p.cli) == 0, "rdma_disconnect");
		ev = wait_event(p.ch, RDMA_CM_EVENT_DISCONNECTED, 5000);
		if (ev) {
			struct rdma_cm_id *first = ev->id;

			rdma_ack_cm_event(ev);
			if (first == p.srv)
				CHECK(rdma_disconnect(p.srv) == 0, "the passive side's DREP");
			ev = wait_event(p.ch, RDMA_CM_EVENT_DISCONNECTED, 5000);
			if (ev) {
				CHECK(ev->id != first, "DISCONNECTED for both ids");
				rdma_ack_cm_event(ev);
			}
			ev = wait_event(p.ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 10000);
			if (ev)
				rdma_ack_cm_event(ev);
			ok("disconnect: DREQ, DREP, DISCONNECTED on both sides, TIMEWAIT_EXIT");
		}
	}
	pair_free(&p);
}

static void check_reject(const char *srv_ip, const char *cli_ip)
{
	uint16_t port = next_port++;
	struct sockaddr_in s = in4(srv_ip, port), c = in4(cli_ip, 0);
	struct sockaddr_in none = in4(srv_ip, next_port++);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct pair p;
	static const char why[] = "go away";

	/* nobody listens: REJ "invalid service ID" (8) */
	if (pair_setup(&p, (struct sockaddr *)&s, (struct sockaddr *)&c, RDMA_PS_TCP)) {
		fail("pair setup");
		pair_free(&p);
		return;
	}
	rdma_create_id(p.ch, &id, NULL, RDMA_PS_TCP);
	if (!rdma_resolve_addr(id, (struct sockaddr *)&c, (struct sockaddr *)&none, 2000) &&
	    (ev = wait_event(p.ch, RDMA_CM_EVENT_ADDR_RESOLVED, 5000))) {
		rdma_ack_cm_event(ev);
		rdma_resolve_route(id, 2000);
		if ((ev = wait_event(p.ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000))) {
			struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
			struct ibv_cq *cq;

			rdma_ack_cm_event(ev);
			make_qp(id, &cq, IBV_QPT_RC);
			CHECK(rdma_connect(id, &cp) == 0, "connect to a port nobody listens on");
			ev = wait_event(p.ch, RDMA_CM_EVENT_REJECTED, 5000);
			if (ev) {
				CHECK(ev->id == id && ev->status == 8 &&
				      ev->param.conn.private_data_len == 148,
				      "REJECTED status 8 (no listener, got %d), 148 bytes",
				      ev->status);
				CHECK(id->qp->state == IBV_QPS_ERR, "a rejected QP goes to ERR");
				rdma_ack_cm_event(ev);
			}
			rdma_destroy_qp(id);
			ibv_destroy_cq(cq);
		}
	}
	rdma_destroy_id(id);
	ok("no listener: REJECTED, status 8");

	/* the listener says no, with private data: status 28 (consumer defined) */
	make_qp(p.cli, &p.cq_c, IBV_QPT_RC);
	{
		struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };

		CHECK(rdma_connect(p.cli, &cp) == 0, "connect");
	}
	ev = wait_event(p.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 5000);
	if (ev) {
		p.srv = ev->id;
		rdma_ack_cm_event(ev);
		CHECK(rdma_reject(p.srv, why, sizeof(why)) == 0, "rdma_reject");
		ev = wait_event(p.ch, RDMA_CM_EVENT_REJECTED, 5000);
		if (ev) {
			CHECK(ev->id == p.cli && ev->status == 28 &&
			      ev->param.conn.private_data_len == 148 &&
			      !memcmp(ev->param.conn.private_data, why, sizeof(why)),
			      "REJECTED status 28 (consumer, got %d) with our private data",
			      ev->status);
			rdma_ack_cm_event(ev);
		}
	}
	pair_free(&p);
	ok("consumer reject: REJECTED, status 28, private data");
}

static void check_ud(const char *srv_ip, const char *cli_ip)
{
	uint16_t port = next_port++;
	struct sockaddr_in s = in4(srv_ip, port), c = in4(cli_ip, 0);
	struct pair p;

	if (pair_setup(&p, (struct sockaddr *)&s, (struct sockaddr *)&c, RDMA_PS_UDP) ||
	    pair_connect(&p, "ud hello", "ud welcome", true))
		fail("UD pair");
	else
		ok("UD: SIDR_REQ/SIDR_REP, QPN, Q_Key and address vector in the event");
	pair_free(&p);
}

static void check_ipv6(const char *srv_ip, const char *cli_ip)
{
	uint16_t port = next_port++;
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in s4 = in4(srv_ip, port), c4 = in4(cli_ip, 0);
	struct sockaddr_in6 s6 = in6_mapped(srv_ip, port), c6 = in6_mapped(cli_ip, 0);
	struct pair p;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *l6;
	int err;

	/* an IPv6 wildcard listener (AFONLY off by default) takes an IPv4 request */
	memset(&p, 0, sizeof(p));
	p.ch = rdma_create_event_channel();
	rdma_create_id(p.ch, &l6, NULL, RDMA_PS_TCP);
	err = rdma_bind_addr(l6, (struct sockaddr *)&any6) || rdma_listen(l6, 4);
	CHECK(!err, "listen on [::]:%u", port);
	rdma_create_id(p.ch, &p.cli, NULL, RDMA_PS_TCP);
	if (!rdma_resolve_addr(p.cli, (struct sockaddr *)&c4, (struct sockaddr *)&s4, 2000) &&
	    (ev = wait_event(p.ch, RDMA_CM_EVENT_ADDR_RESOLVED, 5000))) {
		rdma_ack_cm_event(ev);
		rdma_resolve_route(p.cli, 2000);
		if ((ev = wait_event(p.ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000))) {
			struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };

			rdma_ack_cm_event(ev);
			make_qp(p.cli, &p.cq_c, IBV_QPT_RC);
			rdma_connect(p.cli, &cp);
			ev = wait_event(p.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 5000);
			if (ev) {
				CHECK(ev->listen_id == l6 &&
				      ev->id->route.addr.src_addr.sa_family == AF_INET,
				      "an IPv4 request to the [::] listener: an AF_INET new id");
				rdma_reject(ev->id, NULL, 0);
				p.srv = ev->id;
				rdma_ack_cm_event(ev);
				ok("IPv6 wildcard listener takes IPv4 requests");
			}
		}
	}
	p.listen = l6;
	pair_free(&p);

	/* IPv4-mapped IPv6 addresses end to end */
	port = next_port++;
	s6.sin6_port = htons(port);
	if (pair_setup(&p, (struct sockaddr *)&s6, (struct sockaddr *)&c6, RDMA_PS_TCP) ||
	    pair_connect(&p, "v6 hello", "v6 welcome", false))
		fail("IPv4-mapped IPv6 pair");
	else
		CHECK(p.srv->route.addr.src_addr.sa_family == AF_INET6,
		      "the new id of an IPv6 request is AF_INET6");
	pair_free(&p);
	ok("IPv4-mapped IPv6 addresses: connect/accept");
}

static void check_ib(const char *srv_ip, const char *cli_ip)
{
	struct sockaddr_in s4 = in4(srv_ip, 0);
	struct rdma_cm_id *probe;
	struct sockaddr_ib s = { .sib_family = AF_IB, .sib_pkey = htons(0xffff) };
	struct sockaddr_ib c = { .sib_family = AF_IB, .sib_pkey = htons(0xffff) };
	struct sockaddr_in c4 = in4(cli_ip, 0);
	uint16_t port = next_port++;
	struct rdma_cm_event *ev;
	struct pair p;

	/* the two ports' GIDs, as the kernel would give them in an AF_IB address */
	rdma_create_id(NULL, &probe, NULL, RDMA_PS_IB);
	rdma_bind_addr(probe, (struct sockaddr *)&s4);
	memcpy(&s.sib_addr, probe->route.addr.addr.ibaddr.sgid.raw, 16);
	rdma_destroy_id(probe);
	rdma_create_id(NULL, &probe, NULL, RDMA_PS_IB);
	rdma_bind_addr(probe, (struct sockaddr *)&c4);
	memcpy(&c.sib_addr, probe->route.addr.addr.ibaddr.sgid.raw, 16);
	rdma_destroy_id(probe);
	s.sib_sid = htobe64(RDMA_IB_PS_IB | port);
	s.sib_sid_mask = htobe64(~0ull);
	if (pair_setup(&p, (struct sockaddr *)&s, (struct sockaddr *)&c, RDMA_PS_IB)) {
		fail("AF_IB pair setup");
		pair_free(&p);
		return;
	}
	make_qp(p.cli, &p.cq_c, IBV_QPT_RC);
	{
		struct rdma_conn_param cp = { .private_data = "ib",
					      .private_data_len = 3, .retry_count = 7,
					      .rnr_retry_count = 7 };

		CHECK(rdma_connect(p.cli, &cp) == 0, "AF_IB connect");
	}
	ev = wait_event(p.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 5000);
	if (ev) {
		CHECK(ev->param.conn.private_data_len == 92 &&
		      !strcmp(ev->param.conn.private_data, "ib") &&
		      ev->id->route.addr.src_addr.sa_family == AF_IB,
		      "AF_IB: no IP header, 92 bytes of private data, an AF_IB new id (len %u)",
		      ev->param.conn.private_data_len);
		p.srv = ev->id;
		rdma_ack_cm_event(ev);
		rdma_reject(p.srv, NULL, 0);
	}
	pair_free(&p);
	ok("AF_IB: bind to a GID, listen on a service ID, connect");
}

static void check_migrate(const char *srv_ip, const char *cli_ip)
{
	struct sockaddr_in s = in4(srv_ip, next_port++), c = in4(cli_ip, 0);
	struct rdma_event_channel *ch1 = rdma_create_event_channel(), *ch2;
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;

	ch2 = rdma_create_event_channel();
	rdma_create_id(ch1, &id, NULL, RDMA_PS_TCP);
	CHECK(rdma_migrate_id(id, ch2) == 0 && id->channel == ch2, "rdma_migrate_id");
	CHECK(rdma_resolve_addr(id, (struct sockaddr *)&c, (struct sockaddr *)&s, 2000) == 0,
	      "resolve");
	ev = next_event(ch2, 5000);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED && ev->id == id,
	      "the event comes on the new channel");
	if (ev)
		rdma_ack_cm_event(ev);
	CHECK(!next_event(ch1, 100), "and not on the old one");
	/* NULL: synchronous from now on */
	CHECK(rdma_migrate_id(id, NULL) == 0 && id->channel != ch2, "migrate to NULL");
	CHECK(rdma_resolve_route(id, 2000) == 0 && id->event &&
	      id->event->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "a synchronous id's call returns with id->event set");
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch1);
	rdma_destroy_event_channel(ch2);
	ok("rdma_migrate_id: to another channel, to a private one (synchronous)");
}

static void check_sync_refused(const char *srv_ip, const char *cli_ip)
{
	struct sockaddr_in s = in4(srv_ip, next_port++), c = in4(cli_ip, 0);
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };

	rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP);
	CHECK(rdma_resolve_addr(id, (struct sockaddr *)&c, (struct sockaddr *)&s, 2000) == 0 &&
	      rdma_resolve_route(id, 2000) == 0, "sync resolve");
	make_qp(id, &cq, IBV_QPT_RC);
	errno = 0;
	CHECK(rdma_connect(id, &cp) == -1 && errno == ECONNREFUSED,
	      "a synchronous connect to nobody: ECONNREFUSED");
	rdma_destroy_qp(id);
	ibv_destroy_cq(cq);
	rdma_destroy_id(id);
	ok("synchronous connect without a listener: ECONNREFUSED");
}

static void check_getaddrinfo(void)
{
	struct rdma_addrinfo hints = { 0 }, *res = NULL;
	int ret;

	ret = rdma_getaddrinfo("127.0.0.1", "7471", NULL, &res);
	CHECK(!ret && res && res->ai_family == AF_INET && res->ai_dst_addr &&
	      res->ai_qp_type == IBV_QPT_RC && res->ai_port_space == RDMA_PS_TCP,
	      "numeric, no hints: a destination, RC, PS_TCP");
	rdma_freeaddrinfo(res);
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	ret = rdma_getaddrinfo(NULL, "7471", &hints, &res);
	CHECK(!ret && res && (res->ai_flags & RAI_PASSIVE) && res->ai_src_addr &&
	      ((struct sockaddr_in *)res->ai_src_addr)->sin_addr.s_addr == 0,
	      "RAI_PASSIVE without a node: the wildcard as source");
	rdma_freeaddrinfo(res);
	memset(&hints, 0, sizeof(hints));
	hints.ai_qp_type = IBV_QPT_UD;
	hints.ai_port_space = RDMA_PS_UDP;
	ret = rdma_getaddrinfo("localhost", "7471", &hints, &res);
	CHECK(!ret && res && res->ai_qp_type == IBV_QPT_UD && res->ai_port_space == RDMA_PS_UDP,
	      "a name through getaddrinfo, UD hints");
	rdma_freeaddrinfo(res);
	hints.ai_flags = RAI_NUMERICHOST;
	ret = rdma_getaddrinfo("localhost", "7471", &hints, &res);
	CHECK(ret == EAI_NONAME, "RAI_NUMERICHOST with a name: EAI_NONAME (got %d)", ret);
	ok("rdma_getaddrinfo: numeric, names, RAI_PASSIVE, RAI_NUMERICHOST");
}

static int cmd_api(const char *srv, const char *cli)
{
	check_devices(srv);
	check_channel();
	check_ports(srv);
	check_options(srv, cli);
	check_getaddrinfo();
	check_connect(srv, cli);
	check_reject(srv, cli);
	check_sync_refused(srv, cli);
	check_ud(srv, cli);
	check_ipv6(srv, cli);
	check_ib(srv, cli);
	check_migrate(srv, cli);
	if (failures)
		printf("%d FAILED\n", failures);
	else
		printf("PASS\n");
	return failures ? 1 : 0;
}

/* ---- expect, serve, hold -------------------------------------------------------------------- */

/* A connect from cli_ip to srv_ip:port up to the first event after rdma_connect (*evp); a
 * call that fails leaves *evp NULL and its errno in *err. */
static int connect_until(const char *srv_ip, const char *cli_ip, uint16_t port,
			 struct rdma_event_channel **chp, struct rdma_cm_id **idp,
			 struct rdma_cm_event **evp, int *err)
{
	struct sockaddr_in s = in4(srv_ip, port), c = in4(cli_ip, 0);
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct ibv_cq *cq;

	*evp = NULL;
	*err = 0;
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		goto sync;
	if (rdma_resolve_addr(id, (struct sockaddr *)&c, (struct sockaddr *)&s, 2000)) {
		printf("rdma_resolve_addr: errno %d\n", errno);
		goto sync;
	}
	if (!(ev = wait_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 5000)))
		return -1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, 2000)) {
		printf("rdma_resolve_route: errno %d\n", errno);
		goto sync;
	}
	if (!(ev = wait_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000)))
		return -1;
	rdma_ack_cm_event(ev);
	if (make_qp(id, &cq, IBV_QPT_RC))
		goto sync;
	if (rdma_connect(id, &cp)) {
		printf("rdma_connect: errno %d\n", errno);
		goto sync;
	}
	*evp = next_event(ch, 600000);
	*chp = ch;
	*idp = id;
	return *evp ? 0 : -1;
sync:
	*err = errno;
	return -1;
}

/* EVENT "ERRNO": a call of the connect must fail with errno STATUS */
static int cmd_expect(const char *srv, const char *cli, uint16_t port, const char *event,
		      const char *status)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int err;

	if (!strcmp(event, "ERRNO")) {
		if (!connect_until(srv, cli, port, &ch, &id, &ev, &err) || !err ||
		    (status && err != atoi(status))) {
			fail("wanted a call failing with errno %s", status ? status : "(any)");
			return 1;
		}
		return 0;
	}
	if (connect_until(srv, cli, port, &ch, &id, &ev, &err)) {
		fail("no event after the connect");
		return 1;
	}
	printf("event %s status %d\n", rdma_event_str(ev->event), ev->status);
	if ((int)ev->event != event_by_name(event) || (status && ev->status != atoi(status))) {
		fail("wanted %s%s%s", event, status ? " status " : "", status ? status : "");
		return 1;
	}
	return 0;
}

static int cmd_serve(const char *srv, uint16_t port)
{
	struct sockaddr_in s = in4(srv, port);
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *l;
	struct rdma_cm_event *ev;
	bool listening = true;

	if (!ch || rdma_create_id(ch, &l, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(l, (struct sockaddr *)&s) || rdma_listen(l, 16)) {
		perror("listen");
		return 1;
	}
	printf("listening\n");
	/* once the listener is removed, the other ids' removals follow at once */
	while ((ev = next_event(ch, listening ? -1 : 2000))) {
		struct rdma_cm_id *id = ev->id;
		enum rdma_cm_event_type e = ev->event;

		printf("event %s status %d%s\n", rdma_event_str(e), ev->status,
		       id == l ? " (listener)" : "");
		rdma_ack_cm_event(ev);
		if (e == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
			struct ibv_cq *cq;

			if (make_qp(id, &cq, IBV_QPT_RC) || rdma_accept(id, &cp))
				perror("accept");
		} else if (e == RDMA_CM_EVENT_DISCONNECTED) {
			rdma_disconnect(id);
		} else if (e == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			if (id == l)
				listening = false;
			if (id->qp) {
				struct ibv_cq *cq = id->qp->send_cq;

				rdma_destroy_qp(id);
				ibv_destroy_cq(cq);
			}
			if (rdma_destroy_id(id))
				perror("rdma_destroy_id after DEVICE_REMOVAL");
		}
	}
	if (listening)
		return 1;
	rdma_destroy_event_channel(ch);
	printf("removed\n");
	return 0;
}

static volatile sig_atomic_t want_disconnect;

static void on_usr1(int sig)
{
	(void)sig;
	want_disconnect = 1;
}

static int cmd_hold(const char *srv, const char *cli, uint16_t port, int nev, char **events)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int waited = 0;

	sigaction(SIGUSR1, &sa, NULL);
	if (connect_until(srv, cli, port, &ch, &id, &ev, &waited) ||
	    ev->event != RDMA_CM_EVENT_ESTABLISHED) {
		fail("not established");
		return 1;
	}
	rdma_ack_cm_event(ev);
	printf("established\n");
	waited = 0;
	/* no EVENT: hold the connection until killed */
	while (!nev && (ev = next_event(ch, -1))) {
		printf("event %s status %d\n", rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
	}
	for (int i = 0; i < nev; i++) {
		char *want = events[i], *st = strchr(want, ':');

		if (st)
			*st++ = 0;
		/* slices of 50 ms, for SIGUSR1; 600 s in all */
		while (!(ev = next_event(ch, 50)) && waited++ < 12000)
			if (want_disconnect) {
				want_disconnect = 0;
				printf("rdma_disconnect: %d\n", rdma_disconnect(id) ? -errno : 0);
			}
		if (!ev) {
			fail("no %s", want);
			return 1;
		}
		printf("event %s status %d\n", rdma_event_str(ev->event), ev->status);
		if ((int)ev->event != event_by_name(want) || (st && ev->status != atoi(st))) {
			fail("wanted %s", want);
			return 1;
		}
		rdma_ack_cm_event(ev);
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "api"))
		return cmd_api(argv[2], argv[3]);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "expect"))
		return cmd_expect(argv[2], argv[3], (uint16_t)atoi(argv[4]), argv[5],
				  argc == 7 ? argv[6] : NULL);
	if (argc == 4 && !strcmp(argv[1], "serve"))
		return cmd_serve(argv[2], (uint16_t)atoi(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "hold"))
		return cmd_hold(argv[2], argv[3], (uint16_t)atoi(argv[4]), argc - 5, argv + 5);
	fprintf(stderr, "usage: cm_probe api SRV CLI | expect SRV CLI PORT EVENT [STATUS] | "
			"serve SRV PORT | hold SRV CLI PORT EVENT[:STATUS]...\n");
	return 2;
}
