// SPDX-License-Identifier: MIT
/*
 * cm_mad_fuzz: libFuzzer harness for the daemons' connection manager (devices/common/cm):
 * the MAD parser and every state machine behind it, with what a hostile peer port sends
 * (bvd_cm_recv(): any bytes, any length, from any GID) and what a hostile library sends
 * (bvd_cm_request(): any op of the 0x03xx range, any payload).
 *
 * One daemon's CM runs in this process on a fake transport (its device: 127.0.1.1, RoCE v2
 * GID index 3; every MAD it sends is checked and kept). Each input is the session of one
 * client that first sets up, as librdmacm-plugin would:
 *   L  a listener on 127.0.1.1:PORT_L (RDMA_PS_TCP, RC)
 *   A  an RC id connecting to 127.0.1.2:7000 (a REQ went out: IBCM_REQ_SENT)
 *   U  a UD id resolving 127.0.1.2:7001 through SIDR (a SIDR_REQ went out)
 * and then runs the input's records, one after the other:
 *
 *   u8 flags | u8 sel | u16 len (little-endian) | len bytes
 *
 *   flags bit 0 clear: a MAD from the peer port. Its 256 bytes start as the record's bytes
 *     (zero-padded); it arrives with len bytes only when bit 7 is set (short MADs), else 256.
 *     bit 1  a valid CM header (base version 1, class 0x07, version 2, SEND), attribute
 *            REQ + (sel & 15) % 11
 *     bit 2  the field where the receiver looks up its id (remote comm id; SIDR_REP: the
 *            request id) names one of ours: A, U, or the newest connection a REQ created
 *            (sel >> 4 picks)
 *     bit 3  REQ / SIDR_REQ: the listener's service id and a valid IPv4 cma header (from
 *            127.0.1.2, to 127.0.1.1)
 *     bit 4  the TID of the newest MAD we sent
 *     bit 5  from a GID of the body's last 16 bytes (else 127.0.1.2's)
 *   flags bit 0 set: a request of the client: op BV_OP_CM_BASE + (sel & 31) % 18 (17 is
 *     past the last op), the record's bytes as payload; bit 2: its first four bytes are the
 *     handle of L, A, U or the newest connection (sel >> 5 picks), bit 3: no payload-length
 *     mistakes (zero-padded or cut to the request's own size), bit 4: an ATTACH carries a
 *     descriptor that is no socket
 *   session flags: the first record's flags bit 6: CONNECT_REQUEST events are accepted at
 *     once (an RC connection with QPN 0x123), bit 5 of it: ESTABLISHED ones disconnected
 *
 * After each record the daemon's timers run (bvd_poll) and the client's channel is drained.
 * Checked: every MAD sent is a whole MAD with a valid CM header; every event is one whole
 * struct bv_cm_event of a known type; replies are 0 or an errno and fit a message. At the end
 * the client goes away as a killed one does: none of its ids may survive, no descriptor may
 * leak. (ASan and UBSan catch the rest: a timer or a MAD reaching a freed id.)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "bv_config.h"
#include "bv_msg.h"
#include "cm.h"
#include "fuzz_util.h"

#define PORT_L	18515
#define NSENT	8

static struct bvd dev;
static struct cm_dev *cm;
static uint8_t sent[NSENT][IB_MAD_SIZE];
static unsigned int nsent;
static int base_fds;
static bool verbose;		/* CM_FUZZ_VERBOSE=1: what goes in and out, to check seeds */

static void die(const char *what)
{
	fprintf(stderr, "cm_mad_fuzz: %s (%s)\n", what, strerror(errno));
	abort();
}

static void gid_of(const char *ip, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	inet_pton(AF_INET, ip, gid + 12);
}

static int fake_port(struct bvd *d, struct bvd_cm_port *p)
{
	(void)d;
	memset(p, 0, sizeof(*p));
	p->active = true;
	gid_of("127.0.1.1", p->gid);
	p->gid_index = 3;
	p->gid6[0] = 0xfe;
	p->gid6[1] = 0x80;
	p->gid6[15] = 1;
	p->gid6_index = 1;
	p->mtu = 3;			/* IBV_MTU_1024 */
	p->ack_delay = 16;
	p->max_rd_atomic = 16;
	p->ca_guid = 0x0002c90300001111ull;
	return 0;
}

/* Everything the CM sends must be a MAD a peer's CM would take. */
static int fake_send(struct bvd *d, const struct bvd_cm_av *av, const void *mad, size_t len)
{
	const uint8_t *m = mad;
	uint32_t attr;

	(void)d;
	(void)av;
	attr = cx4_get(m, IB_MAD_ATTR_ID);
	if (len != IB_MAD_SIZE || cx4_get(m, IB_MAD_BASE_VERSION) != IB_MGMT_BASE_VERSION ||
	    cx4_get(m, IB_MAD_MGMT_CLASS) != IB_MGMT_CLASS_CM ||
	    cx4_get(m, IB_MAD_CLASS_VERSION) != IB_CM_CLASS_VERSION ||
	    cx4_get(m, IB_MAD_METHOD) != IB_MGMT_METHOD_SEND || attr < IB_CM_ATTR_REQ ||
	    attr > IB_CM_ATTR_APR) {
		fprintf(stderr, "cm_mad_fuzz: the CM sent a bad MAD (len %zu attr 0x%x)\n", len,
			attr);
		abort();
	}
	memcpy(sent[nsent++ % NSENT], mad, IB_MAD_SIZE);
	if (verbose)
		printf("  sent attr 0x%02x\n", attr);
	return 0;
}

static const struct bvd_cm_transport fake_tp = {
	.name = "fuzz",
	.port = fake_port,
	.send = fake_send,
};

static const struct bvd_kind_ops fake_ops = {
	.kind = "cx4",
	.cm = &fake_tp,
};

static int count_fds(void)
{
	int n = fuzz_count_fds();

	if (n < 0)
		die("/proc/self/fd");
	return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char conf[] =
		"[device cx4_0]\nkind = cx4\nip = 127.0.1.1\ncable = cx4\n"
		/* short timers: retries and timewait expire while the fuzzer runs */
		"cm_response_timeout = 8\ncm_max_retries = 2\ncm_packet_life_time = 8\n";
	char err[256];

	(void)argc;
	(void)argv;
	verbose = getenv("CM_FUZZ_VERBOSE") != NULL;
	if (bv_config_parse(&dev.cfg, conf, err, sizeof(err))) {
		fprintf(stderr, "cm_mad_fuzz: %s\n", err);
		abort();
	}
	dev.conf = bv_config_find(&dev.cfg, "cx4_0");
	dev.ops = &fake_ops;
	dev.epfd = epoll_create1(EPOLL_CLOEXEC);
	dev.lsock = dev.sigfd = -1;
	if (!dev.conf || dev.epfd < 0 || bvd_cm_init(&dev))
		die("bvd_cm_init");
	cm = cm_of(&dev);
	/* reproducible: the same input does the same (ids, TIDs, PSNs) */
	cm->id_xor = 0;
	cm->tid_hi = 0x12345678;
	{
		/* the timers' timerfd exists from the first timer on: make it now */
		struct bvd_timer t;

		bvd_timer_init(&t, NULL);
		if (bvd_timer_arm(&dev, &t, 1000))
			die("timer");
		bvd_timer_cancel(&dev, &t);
	}
	return 0;
}

/* ---- the client ----------------------------------------------------------------------------- */

struct session {
	struct bvd_client *c;
	int lib_sock;			/* the library's end of the channel */
	uint32_t chan;
	uint32_t h[4];			/* L, A, U, the newest connection */
	bool accept, disconnect;
};

static union {
	uint8_t bytes[BV_MSG_PAYLOAD_MAX];
	uint64_t align;
} reply;

static int request(struct session *s, uint16_t op, const void *in, size_t len, int *fds,
		   unsigned int nfds)
{
	struct bvd_reply r = { .payload = reply.bytes };
	void *copy = NULL;

	/* a buffer of exactly len bytes: a read past the request is an ASan finding */
	if (len && !(copy = malloc(len)))
		die("malloc");
	if (len)
		memcpy(copy, in, len);
	bvd_cm_request(&dev, s->c, op, copy, len, fds, nfds, &r);
	free(copy);
	if (r.status < 0 || r.status > 4095 || r.len > BV_MSG_PAYLOAD_MAX ||
	    r.nfds > BV_MSG_MAX_FDS) {
		fprintf(stderr, "cm_mad_fuzz: op 0x%x: status %d len %zu nfds %u\n", op, r.status,
			r.len, r.nfds);
		abort();
	}
	for (unsigned int i = 0; i < r.nfds; i++)
		close(r.fds[i]);
	return r.status;
}

static void must(struct session *s, uint16_t op, const void *in, size_t len)
{
	int st = request(s, op, in, len, NULL, 0);

	if (st) {
		fprintf(stderr, "cm_mad_fuzz: setup op 0x%x: %s\n", op, strerror(st));
		abort();
	}
}

static struct sockaddr_storage in4(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
	return ss;
}

static uint32_t create_id(struct session *s, uint64_t uid, uint16_t ps, uint8_t qp_type)
{
	struct bv_cm_create_id_req q = { .uid = uid, .chan = s->chan, .ps = ps,
					 .qp_type = qp_type };

	must(s, BV_OP_CM_CREATE_ID, &q, sizeof(q));
	return ((struct bv_cm_create_id_rsp *)reply.bytes)->handle;
}

static void connect_to(struct session *s, uint32_t h, uint16_t port, bool ud)
{
	struct bv_cm_resolve_addr_req ra = { .handle = h, .timeout_ms = 2000,
					     .flags = BV_CM_RESOLVE_SRC };
	struct bv_cm_id_req rr = { .handle = h, .timeout_ms = 2000 };
	struct bv_cm_connect_req c = { .handle = h };

	ra.src = in4("127.0.1.1", 0);
	ra.dst = in4("127.0.1.2", port);
	must(s, BV_OP_CM_RESOLVE_ADDR, &ra, sizeof(ra));
	must(s, BV_OP_CM_RESOLVE_ROUTE, &rr, sizeof(rr));
	c.conn.qp_num = ud ? 0x124 : 0x125;
	c.conn.retry_count = 7;
	c.conn.rnr_retry_count = 7;
	c.conn.responder_resources = 1;
	c.conn.initiator_depth = 1;
	c.conn.private_data_len = 8;
	must(s, BV_OP_CM_CONNECT, &c, sizeof(c));
}

static void session_start(struct session *s)
{
	struct bv_cm_attach_req a = { .cookie = 7, .chan = 3 };
	struct bv_cm_bind_req b = { 0 };
	struct bv_cm_listen_req l = { .backlog = 4 };
	int sv[2];

	memset(s, 0, sizeof(*s));
	if (!(s->c = calloc(1, sizeof(*s->c))) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		die("client");
	/* what bvd does for a client that said HELLO with role CM */
	s->c->d = &dev;
	s->c->sock = -1;
	s->c->async_fd = -1;
	s->c->id = 1;
	s->c->role = BV_ROLE_CM;
	s->c->pid = getpid();
	strcpy(s->c->comm, "fuzz");
	dev.clients = s->c;
	s->lib_sock = sv[1];
	if (request(s, BV_OP_CM_ATTACH, &a, sizeof(a), &sv[0], 1))
		die("attach");
	if (sv[0] >= 0)
		die("attach left the descriptor");
	s->chan = ((struct bv_cm_attach_rsp *)reply.bytes)->chan;

	s->h[0] = create_id(s, 1, RDMA_PS_TCP, IBV_QPT_RC);
	b.handle = s->h[0];
	b.addr = in4("127.0.1.1", PORT_L);
	must(s, BV_OP_CM_BIND, &b, sizeof(b));
	l.handle = s->h[0];
	must(s, BV_OP_CM_LISTEN, &l, sizeof(l));
	s->h[1] = create_id(s, 2, RDMA_PS_TCP, IBV_QPT_RC);
	connect_to(s, s->h[1], 7000, false);
	s->h[2] = create_id(s, 3, RDMA_PS_UDP, IBV_QPT_UD);
	connect_to(s, s->h[2], 7001, true);
}

/* Read every event the channel holds; react as the session flags say. */
static void drain(struct session *s)
{
	struct bv_cm_event ev;
	ssize_t n;

	while ((n = recv(s->lib_sock, &ev, sizeof(ev), MSG_DONTWAIT | MSG_TRUNC)) >= 0) {
		if (n != (ssize_t)sizeof(ev) || ev.event > RDMA_CM_EVENT_TIMEWAIT_EXIT ||
		    ev.cookie != 7) {
			fprintf(stderr, "cm_mad_fuzz: bad event (%zd bytes, event %u)\n", n,
				ev.event);
			abort();
		}
		if (verbose)
			printf("  event %u status %d handle 0x%x\n", ev.event, ev.status,
			       ev.handle);
		if (ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			s->h[3] = ev.handle;
			if (s->accept) {
				struct bv_cm_accept_req a = { .handle = ev.handle, .has_conn = 1,
							      .uid = 100 + ev.handle };

				a.conn.qp_num = 0x123;
				a.conn.responder_resources = 1;
				a.conn.initiator_depth = 1;
				request(s, BV_OP_CM_ACCEPT, &a, sizeof(a), NULL, 0);
			}
		} else if (ev.event == RDMA_CM_EVENT_ESTABLISHED && s->disconnect) {
			struct bv_cm_id_req d = { .handle = ev.handle };

			request(s, BV_OP_CM_DISCONNECT, &d, sizeof(d), NULL, 0);
		}
	}
}

static uint32_t local_id_of(uint32_t handle)
{
	struct cm_id *id = cm_id_find(cm, handle);

	return id ? id->local_id : handle ^ cm->id_xor;
}

static void put_ip(uint8_t *at, const char *ip)
{
	memset(at, 0, 16);
	inet_pton(AF_INET, ip, at + 12);
}

static void run_mad(struct session *s, uint8_t flags, uint8_t sel, const uint8_t *b,
		    size_t len)
{
	uint8_t mad[IB_MAD_SIZE] = { 0 };
	struct bvd_cm_rx rx = { .src_qpn = 1, .pkey = 0xffff, .hop_limit = 64 };
	uint32_t who = s->h[(sel >> 4) % 4];
	uint16_t attr;

	memcpy(mad, b, len < sizeof(mad) ? len : sizeof(mad));
	if (flags & 2) {
		cm_mad_hdr(mad, (uint16_t)(IB_CM_ATTR_REQ + (sel & 15) % CM_NATTR),
			   cx4_get64(mad, IB_MAD_TID), cx4_get(mad, IB_MAD_ATTR_MOD));
	}
	attr = (uint16_t)cx4_get(mad, IB_MAD_ATTR_ID);
	if (flags & 4) {
		uint32_t lid = local_id_of(who);

		switch (attr) {
		case IB_CM_ATTR_SIDR_REP:
			cx4_set(mad, IB_CM_SIDR_REP_REQUEST_ID, local_id_of(s->h[2]));
			break;
		case IB_CM_ATTR_REQ:
		case IB_CM_ATTR_SIDR_REQ:
			break;
		default:
			/* the same offset in MRA, REJ, REP, RTU, DREQ, DREP, LAP, APR */
			cx4_set(mad, IB_CM_REP_REMOTE_COMM_ID, lid);
		}
	}
	if ((flags & 8) && (attr == IB_CM_ATTR_REQ || attr == IB_CM_ATTR_SIDR_REQ)) {
		unsigned int off = attr == IB_CM_ATTR_REQ ? IB_CM_REQ_PRIVATE_DATA_OFF :
							    IB_CM_SIDR_REQ_PRIVATE_DATA_OFF;
		uint64_t sid = IB_CMA_SERVICE_ID(RDMA_PS_TCP, PORT_L);

		if (attr == IB_CM_ATTR_REQ)
			cx4_set64(mad, IB_CM_REQ_SERVICE_ID, sid);
		else
			cx4_set64(mad, IB_CM_SIDR_REQ_SERVICE_ID, sid);
		cx4_set(mad + off, IB_CMA_HDR_CMA_VERSION, 0);
		cx4_set(mad + off, IB_CMA_HDR_IP_VERSION, 4);
		put_ip(mad + off + IB_CMA_HDR_SRC_ADDR_OFF, "127.0.1.2");
		put_ip(mad + off + IB_CMA_HDR_DST_ADDR_OFF, "127.0.1.1");
	}
	if ((flags & 16) && nsent)
		cx4_set64(mad, IB_MAD_TID, cx4_get64(sent[(nsent - 1) % NSENT], IB_MAD_TID));
	if (flags & 32)
		memcpy(rx.sgid, mad + IB_MAD_SIZE - 16, 16);
	else
		gid_of("127.0.1.2", rx.sgid);
	gid_of("127.0.1.1", rx.dgid);
	rx.mad = mad;
	rx.len = (flags & 128) ? len : IB_MAD_SIZE;
	if (rx.len > IB_MAD_SIZE)
		rx.len = IB_MAD_SIZE;
	bvd_cm_recv(&dev, &rx);
}

/* the requests' own sizes, for flags bit 3 */
static size_t request_size(uint16_t op)
{
	switch (op) {
	case BV_OP_CM_ATTACH: return sizeof(struct bv_cm_attach_req);
	case BV_OP_CM_DETACH: return sizeof(struct bv_cm_detach_req);
	case BV_OP_CM_CREATE_ID: return sizeof(struct bv_cm_create_id_req);
	case BV_OP_CM_BIND: return sizeof(struct bv_cm_bind_req);
	case BV_OP_CM_RESOLVE_ADDR: return sizeof(struct bv_cm_resolve_addr_req);
	case BV_OP_CM_LISTEN: return sizeof(struct bv_cm_listen_req);
	case BV_OP_CM_CONNECT: return sizeof(struct bv_cm_connect_req);
	case BV_OP_CM_ACCEPT: return sizeof(struct bv_cm_accept_req);
	case BV_OP_CM_REJECT: return sizeof(struct bv_cm_reject_req);
	case BV_OP_CM_INIT_QP_ATTR: return sizeof(struct bv_cm_init_qp_attr_req);
	case BV_OP_CM_NOTIFY: return sizeof(struct bv_cm_notify_req);
	case BV_OP_CM_SET_OPTION: return sizeof(struct bv_cm_set_option_req);
	case BV_OP_CM_MIGRATE: return sizeof(struct bv_cm_migrate_req);
	default: return sizeof(struct bv_cm_id_req);
	}
}

static void run_request(struct session *s, uint8_t flags, uint8_t sel, const uint8_t *b,
			size_t len)
{
	uint16_t op = (uint16_t)(BV_OP_CM_BASE + (sel & 31) % (BV_OP_CM_END - BV_OP_CM_BASE + 1));
	static uint8_t buf[BV_MSG_PAYLOAD_MAX];
	size_t n = len;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, b, len < sizeof(buf) ? len : sizeof(buf));
	if (flags & 8)
		n = request_size(op);
	if (n > sizeof(buf))
		n = sizeof(buf);
	if ((flags & 4) && n >= 4) {
		uint32_t h = s->h[(sel >> 5) % 4];

		memcpy(buf, &h, 4);
	}
	/* an ATTACH without a descriptor, or with one that is no socket pair */
	if (op == BV_OP_CM_ATTACH && (flags & 16)) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (request(s, op, buf, n, &fd, 1) == 0 || fd < 0)
			die("ATTACH took /dev/null");
		close(fd);
		return;
	}
	request(s, op, buf, n, NULL, 0);
}

static void session_end(struct session *s)
{
	bvd_cm_client_gone(&dev, s->c);
	for (unsigned int b = 0; b < CM_HASH; b++)
		for (struct cm_id *id = cm->ids[b]; id; id = id->hnext)
			if (id->owner == s->c) {
				fprintf(stderr, "cm_mad_fuzz: id 0x%x outlived its client\n",
					id->handle);
				abort();
			}
	for (struct cm_chan *ch = cm->chans; ch; ch = ch->next)
		if (ch->owner == s->c)
			die("a channel outlived its client");
	dev.clients = NULL;
	free(s->c);
	close(s->lib_sock);
	bvd_poll(&dev, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session s;
	size_t at = 0;

	base_fds = count_fds();
	srandom(1);
	session_start(&s);
	if (size) {
		s.accept = data[0] & 0x40;
		s.disconnect = data[0] & 0x20;
	}
	drain(&s);
	for (int rec = 0; rec < 64 && at + 4 <= size; rec++) {
		uint8_t flags = data[at], sel = data[at + 1];
		size_t len = (size_t)data[at + 2] | (size_t)data[at + 3] << 8;

		at += 4;
		if (len > size - at)
			len = size - at;
		if (verbose)
			printf("record: flags 0x%02x sel 0x%02x len %zu\n", flags, sel, len);
		if (flags & 1)
			run_request(&s, flags, sel, data + at, len);
		else
			run_mad(&s, flags, sel, data + at, len);
		at += len;
		bvd_poll(&dev, 0);
		drain(&s);
	}
	session_end(&s);
	if (count_fds() != base_fds) {
		fprintf(stderr, "cm_mad_fuzz: %d descriptors now, %d before\n", count_fds(),
			base_fds);
		abort();
	}
	return 0;
}
