// SPDX-License-Identifier: MIT
/*
 * The devices the connection manager works on: every device libibverbs lists that a
 * bridgeverbs daemon owns (its sysfs directory names the daemon's socket, as the providers
 * find it). For each the library keeps what librdmacm keeps in its cma_device — the one
 * context and PD per process that ids carry and rdma_get_devices() returns — plus the
 * addresses of its port (from the GID table: the RoCE v2 GIDs of its IPv4 address and of its
 * link-local address) and a control connection to the daemon, opened on first use.
 *
 * Routing an address to a device is the kernel's job in librdmacm's world (the IP route and
 * the netdev behind it); here: a device's own address is that device's, a loopback address no
 * device owns is the first device's (cma_resolve_loopback), and anything else goes out of the
 * device whose address the host's routing table picks as the source (a UDP socket connected
 * to the destination tells it: getsockname).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <infiniband/ib.h>
#include <infiniband/verbs.h>

#include "bv_msg.h"
#include "rcm.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_err;
static struct ibv_device **ibv_list;
static struct rcm_dev devs[RCM_MAX_DEVS];
static int ndevs;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static int read_file(const char *dir, const char *file, char *buf, size_t len)
{
	char path[IBV_SYSFS_PATH_MAX + 128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

/* "0000:0000:0000:0000:0000:ffff:7f00:0101" -> 16 bytes */
static int parse_gid(const char *s, uint8_t gid[16])
{
	unsigned int w[8];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2], &w[3], &w[4], &w[5], &w[6],
		   &w[7]) != 8)
		return -1;
	for (int i = 0; i < 8; i++) {
		gid[2 * i] = (uint8_t)(w[i] >> 8);
		gid[2 * i + 1] = (uint8_t)w[i];
	}
	return 0;
}

static const uint8_t v4prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* The RoCE v2 GIDs of port 1 (gid_attrs/types says which entries are v2). */
static void read_gids(struct rcm_dev *dev)
{
	for (int i = 0; i < 256; i++) {
		char file[64], buf[128], type[64];
		uint8_t gid[16];

		snprintf(file, sizeof(file), "ports/1/gids/%d", i);
		if (read_file(dev->ibdev->ibdev_path, file, buf, sizeof(buf)))
			break;
		snprintf(file, sizeof(file), "ports/1/gid_attrs/types/%d", i);
		if (read_file(dev->ibdev->ibdev_path, file, type, sizeof(type)) ||
		    strcmp(type, "RoCE v2") || parse_gid(buf, gid))
			continue;
		if (!memcmp(gid, v4prefix, 12)) {
			memcpy(dev->gid4, gid, 16);
			memcpy(&dev->ip, gid + 12, 4);
			dev->has_ip = true;
		} else if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80) {
			memcpy(dev->gid6, gid, 16);
		}
	}
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(((const struct rcm_dev *)a)->name, ((const struct rcm_dev *)b)->name);
}

static void do_init(void)
{
	int n = 0;

	ibv_list = ibv_get_device_list(&n);
	if (!ibv_list) {
		init_err = ENODEV;
		return;
	}
	for (int i = 0; i < n && ndevs < RCM_MAX_DEVS; i++) {
		struct rcm_dev *dev = &devs[ndevs];

		memset(dev, 0, sizeof(*dev));
		if (read_file(ibv_list[i]->ibdev_path, "bridgeverbs/socket", dev->sock_path,
			      sizeof(dev->sock_path)))
			continue;	/* not ours: it needs the kernel's rdma_cm */
		dev->ibdev = ibv_list[i];
		snprintf(dev->name, sizeof(dev->name), "%s", ibv_get_device_name(ibv_list[i]));
		read_gids(dev);
		dev->sock = -1;
		pthread_mutex_init(&dev->lock, NULL);
		ndevs++;
	}
	/* the kernel lists devices in the order they registered: here, by name */
	qsort(devs, (size_t)ndevs, sizeof(devs[0]), cmp_dev);
	for (int i = 0; i < ndevs; i++)
		devs[i].index = i;
	if (!ndevs)
		init_err = ENODEV;	/* librdmacm without devices: ENODEV everywhere */
}

int rcm_init(void)
{
	pthread_once(&once, do_init);
	return init_err;
}

int rcm_ndevs(void)
{
	return rcm_init() ? 0 : ndevs;
}

struct rcm_dev *rcm_dev_at(int i)
{
	return i >= 0 && i < rcm_ndevs() ? &devs[i] : NULL;
}

/* librdmacm's ucma_init_device() + the PD of ucma_get_device() */
int rcm_dev_open(struct rcm_dev *dev)
{
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	int err = 0;

	pthread_mutex_lock(&open_lock);
	if (dev->verbs && dev->pd)
		goto out;
	if (!dev->verbs) {
		dev->verbs = ibv_open_device(dev->ibdev);
		if (!dev->verbs) {
			err = errno ? errno : ENODEV;
			goto out;
		}
		if (ibv_query_device(dev->verbs, &attr)) {
			err = errno ? errno : ENODEV;
			ibv_close_device(dev->verbs);
			dev->verbs = NULL;
			goto out;
		}
		dev->max_qpsize = (uint32_t)attr.max_qp_wr;
		dev->max_initiator_depth = (uint8_t)attr.max_qp_init_rd_atom;
		dev->max_responder_resources = (uint8_t)attr.max_qp_rd_atom;
		dev->link_layer = IBV_LINK_LAYER_UNSPECIFIED;
		if (!ibv_query_port(dev->verbs, 1, &port)) {
			dev->link_layer = port.link_layer;
			dev->port_active = port.state == IBV_PORT_ACTIVE;
		}
	}
	if (!dev->pd) {
		dev->pd = ibv_alloc_pd(dev->verbs);
		if (!dev->pd)
			err = errno ? errno : ENOMEM;
	}
out:
	pthread_mutex_unlock(&open_lock);
	return err;
}

static int dev_connect(struct rcm_dev *dev)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct bv_hello_req req = { .role = BV_ROLE_CM };
	struct bv_hello_rsp rsp;
	struct bv_call call = { .op = BV_OP_HELLO, .req = &req, .req_len = sizeof(req),
				.rsp = &rsp, .rsp_max = sizeof(rsp) };
	int s, ret;

	if (strlen(dev->sock_path) >= sizeof(sa.sun_path))
		return ENAMETOOLONG;
	strcpy(sa.sun_path, dev->sock_path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = errno;
		close(s);
		return ret == ENOENT || ret == ECONNREFUSED ? ENODEV : ret;
	}
	req.pid = (uint32_t)getpid();
	if (read_file("/proc/self", "comm", req.comm, sizeof(req.comm)))
		snprintf(req.comm, sizeof(req.comm), "?");
	ret = bv_msg_call(s, &dev->seq, &call);
	if (ret) {
		close(s);
		return ret < 0 ? ENODEV : ret;
	}
	dev->sock = s;
	return 0;
}

/* The daemon went away: its ids with it (DEVICE_REMOVAL on the channels). */
static void dev_lost(struct rcm_dev *dev)
{
	dev->gone = true;
	close(dev->sock);
	dev->sock = -1;
}

/*
 * Requests to one daemon or several, all sent before any answer is awaited: each daemon
 * serves its own in order while the others serve theirs, so a batch to n daemons takes one
 * round trip, not n, and a daemon's requests that depend on each other (ATTACH, then
 * CREATE_ID naming the channel) take one. rq[] holds each daemon's requests together, the
 * daemons in ascending index order (the order their locks are taken in).
 */
void rcm_call_batch(struct rcm_req *const *rq, int n)
{
	struct bv_call call[RCM_BATCH_MAX];
	uint32_t seq[RCM_BATCH_MAX];

	for (int i = 0; i < n; i++) {
		struct rcm_dev *dev = rq[i]->dev;

		call[i] = (struct bv_call){ .op = rq[i]->op, .req = rq[i]->req, .req_len = rq[i]->len,
					    .fds = rq[i]->fds, .nfds = rq[i]->nfds,
					    .rsp = rq[i]->rsp, .rsp_max = rq[i]->rsp_max };
		if (!i || dev != rq[i - 1]->dev)
			pthread_mutex_lock(&dev->lock);
		rq[i]->err = 0;
		if (dev->gone)
			rq[i]->err = ENODEV;
		else if (dev->sock < 0)
			rq[i]->err = dev_connect(dev);
		if (!rq[i]->err) {
			seq[i] = ++dev->seq;
			if (bv_msg_call_send(dev->sock, seq[i], &call[i]) < 0) {
				dev_lost(dev);
				rq[i]->err = ENODEV;
			}
		}
		rq[i]->sent = !rq[i]->err;
	}
	for (int i = 0; i < n; i++) {
		struct rcm_dev *dev = rq[i]->dev;
		int ret;

		if (rq[i]->sent) {
			ret = dev->sock < 0 ? -EPIPE : bv_msg_call_wait(dev->sock, seq[i], &call[i]);
			if (ret < 0) {
				if (dev->sock >= 0)
					dev_lost(dev);
				ret = ENODEV;
			}
			rq[i]->err = ret;
		}
		if (i == n - 1 || dev != rq[i + 1]->dev)
			pthread_mutex_unlock(&dev->lock);
	}
}

int rcm_call(struct rcm_dev *dev, uint16_t op, const void *req, size_t len, void *rsp,
	     size_t rsp_max, const int *fds, unsigned int nfds)
{
	struct rcm_req rq = { .dev = dev, .op = op, .req = req, .len = len, .rsp = rsp,
			      .rsp_max = rsp_max, .fds = fds, .nfds = nfds };
	struct rcm_req *p = &rq;

	rcm_call_batch(&p, 1);
	return rq.err;
}

struct rcm_dev *rcm_first_dev(void)
{
	int n = rcm_ndevs();

	for (int i = 0; i < n; i++)
		if (!devs[i].gone && !rcm_dev_open(&devs[i]) && devs[i].port_active)
			return &devs[i];
	return n ? &devs[0] : NULL;
}

static struct rcm_dev *dev_by_gid(const uint8_t gid[16])
{
	for (int i = 0; i < rcm_ndevs(); i++)
		if ((devs[i].has_ip && !memcmp(gid, devs[i].gid4, 16)) ||
		    !memcmp(gid, devs[i].gid6, 16))
			return &devs[i];
	return NULL;
}

/* The source address the host would use towards sa (the kernel's route lookup). */
static int route_source(const struct sockaddr *sa, uint8_t gid[16])
{
	struct sockaddr_storage src;
	socklen_t len = sizeof(src);
	int s = rcm_sys_socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC), ret = -1;
	struct sockaddr_storage dst;

	if (s < 0)
		return -1;
	memcpy(&dst, sa, bv_cm_addrlen(sa));
	/* any port will do; connect() on a datagram socket sends nothing */
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = htons(9);
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(9);
	if (!rcm_sys_connect(s, (struct sockaddr *)&dst, bv_cm_addrlen(sa)) &&
	    !rcm_sys_getsockname(s, (struct sockaddr *)&src, &len)) {
		memset(gid, 0, 16);
		if (src.ss_family == AF_INET) {
			memcpy(gid, v4prefix, 12);
			memcpy(gid + 12, &((struct sockaddr_in *)&src)->sin_addr, 4);
		} else {
			memcpy(gid, &((struct sockaddr_in6 *)&src)->sin6_addr, 16);
		}
		ret = 0;
	}
	rcm_sys_close(s);
	return ret;
}

enum rcm_route_kind rcm_route(const struct sockaddr *sa, struct rcm_dev **dev)
{
	uint8_t gid[16] = { 0 };
	bool loopback = false;

	*dev = NULL;
	if (rcm_init())
		return RCM_ROUTE_NONE;
	switch (sa->sa_family) {
	case AF_INET: {
		uint32_t ip = ((const struct sockaddr_in *)sa)->sin_addr.s_addr;

		if (ip == htonl(INADDR_ANY))
			return RCM_ROUTE_WILDCARD;
		memcpy(gid, v4prefix, 12);
		memcpy(gid + 12, &ip, 4);
		loopback = (ntohl(ip) >> 24) == 127;
		break;
	}
	case AF_INET6: {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_UNSPECIFIED(a))
			return RCM_ROUTE_WILDCARD;
		memcpy(gid, a, 16);
		loopback = IN6_IS_ADDR_LOOPBACK(a) ||
			   (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
		break;
	}
	case AF_IB: {
		static const uint8_t zero[16];

		memcpy(gid, &((const struct sockaddr_ib *)sa)->sib_addr, 16);
		if (!memcmp(gid, zero, 16))
			return RCM_ROUTE_WILDCARD;
		*dev = dev_by_gid(gid);
		if (*dev)
			return RCM_ROUTE_OWN;
		/* one subnet: any GID is reached from the first port (cma_resolve_ib_dev) */
		*dev = rcm_first_dev();
		return *dev ? RCM_ROUTE_REMOTE : RCM_ROUTE_NONE;
	}
	default:
		return RCM_ROUTE_NONE;
	}
	*dev = dev_by_gid(gid);
	if (*dev)
		return RCM_ROUTE_OWN;
	if (loopback) {
		*dev = rcm_first_dev();
		return *dev ? RCM_ROUTE_LOOPBACK : RCM_ROUTE_NONE;
	}
	if (route_source(sa, gid))
		return RCM_ROUTE_NONE;
	*dev = dev_by_gid(gid);
	return *dev ? RCM_ROUTE_REMOTE : RCM_ROUTE_NONE;
}

/* ---- rdma_get_devices --------------------------------------------------------------------- */

RCM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int n = 0;

	if (num_devices)
		*num_devices = 0;
	if (rcm_init()) {
		errno = ENODEV;
		return NULL;
	}
	list = calloc((size_t)ndevs + 1, sizeof(*list));
	if (!list)
		return NULL;
	/* the very contexts the ids carry (librdmacm: devices that do not open are left out) */
	for (int i = 0; i < ndevs; i++)
		if (!rcm_dev_open(&devs[i]))
			list[n++] = devs[i].verbs;
	if (num_devices)
		*num_devices = n;
	return list;
}

RCM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);	/* only the array: the contexts stay (librdmacm keeps them too) */
}
