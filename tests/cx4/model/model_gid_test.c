// SPDX-License-Identifier: MIT
/*
 * The GID table of the ConnectX-4 model and the network types it gives packets: RoCE v2 over
 * IPv4, RoCE v2 over IPv6 (link-local and global) and RoCE v1 (docs/cx4-model.md, "GIDs and
 * media"). Through BAR0 and DMA only: SET_ROCE_ADDRESS entries with roce_version and l3_type,
 * QPs whose address path names a source GID index and a remote GID, UD address vectors.
 *
 *   caps      roce_cap says RoCE v1 only with an Ethernet medium; SET_ROCE_ADDRESS refuses an
 *             entry no medium carries and accepts it where one does
 *   loopback  one device, every GID type: RC WRITE / READ / SEND and UD SEND between two of
 *             its QPs, through the device's own loopback (nothing leaves by UDP)
 *   cable     two devices joined by a cable, every GID type
 *   udp6      two devices over RoCE v2 / IPv6 through UDP sockets: global addresses on the
 *             loopback device of a private network namespace (root)
 *   veth      two devices in two network namespaces joined by a veth pair (root): RoCE v1
 *             through AF_PACKET, link-local and IPv4 RoCE v2 through UDP, as on two hosts
 * Every byte of every transfer is checked; UD receives check the 40-byte GRH and the CQE's L3
 * type. CX4_MODEL_PCAP=DIR captures every device's wire (model_gid_pcap.sh checks them).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "roce_hdr.h"
#include "tverbs.h"

#define WAIT 5000
#define NGID 4 /* 0 fe80:: v1, 1 fe80:: v2, 2 ::ffff:ip v1, 3 ::ffff:ip v2 (as cx4d) */

struct port {
	struct tdev t;
	uint32_t pd;
	struct tcq scq, rcq;
	struct tmr mr;
	uint8_t mac[6];
	uint8_t gid[NGID][16];
};

static void eui64_gid(const uint8_t mac[6], uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 2;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

static void v4_gid(uint32_t ip, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &ip, 4);
}

/* One capture per device: DIR/<test>-<n>.pcap. */
static const char *pcap_path(void)
{
	static char path[512];
	static int n;
	const char *dir = getenv("CX4_MODEL_PCAP");

	if (!dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s-%d.pcap", dir, t_name, n++);
	return path;
}

/* Open and bring up a port with cfg; its MAC is cfg.mac or the model's 02:00:<IPv4>. */
static void port_up(struct port *p, struct cx4_model_config cfg)
{
	static const uint8_t zero[6];

	cfg.pcap_path = pcap_path();
	T_EQ(tdev_open(&p->t, &cfg), 0);
	if (memcmp(cfg.mac, zero, 6)) {
		memcpy(p->mac, cfg.mac, 6);
	} else {
		p->mac[0] = 0x02;
		p->mac[1] = 0x00;
		memcpy(p->mac + 2, &p->t.ip, 4);
	}
	T_EQ(tdev_bringup(&p->t), 0);
	T_EQ(tdev_roce_setup(&p->t), 0);
	T_EQ(tdev_alloc_pd(&p->t, &p->pd), 0);
	T_EQ(tcq_create(&p->t, &p->scq, 8), 0);
	T_EQ(tcq_create(&p->t, &p->rcq, 8), 0);
	T_EQ(tmr_reg(&p->t, &p->mr, 2 << 20, TA_ALL, TMR_FD, p->pd), 0);
}

/* The table cx4d programs (Linux mlx5_ib set_roce_addr: l3_type IPv6 only for v2 over IPv6). */
static void gids_default(struct port *p)
{
	eui64_gid(p->mac, p->gid[0]);
	eui64_gid(p->mac, p->gid[1]);
	v4_gid(p->t.ip, p->gid[2]);
	v4_gid(p->t.ip, p->gid[3]);
	T_EQ(tdev_set_gid(&p->t, 0, p->gid[0], CX4_ROCE_VERSION_1, CX4_ROCE_L3_TYPE_IPV4, p->mac), 0);
	T_EQ(tdev_set_gid(&p->t, 1, p->gid[1], CX4_ROCE_VERSION_2, CX4_ROCE_L3_TYPE_IPV6, p->mac), 0);
	T_EQ(tdev_set_gid(&p->t, 2, p->gid[2], CX4_ROCE_VERSION_1, CX4_ROCE_L3_TYPE_IPV4, p->mac), 0);
	T_EQ(tdev_set_gid(&p->t, 3, p->gid[3], CX4_ROCE_VERSION_2, CX4_ROCE_L3_TYPE_IPV4, p->mac), 0);
}

static struct tsge sge(const struct tmr *mr, size_t off, uint32_t len)
{
	return (struct tsge){.len = len, .lkey = mr->key, .addr = (uintptr_t)mr->buf + off};
}

static struct cx4_model_stats stats(struct port *p)
{
	struct cx4_model_stats st;

	T_EQ(cx4_model_get_stats(p->t.bus, &st), 0);
	return st;
}

/*
 * Traffic from a's GID ia to b's GID ib (a == b: two QPs of one device): an RC pair with a
 * 300 KB WRITE, a 100 KB READ back and a 5000-byte SEND; a UD SEND of 1000 bytes with its GRH.
 * type: the network type both GIDs have (for the GRH and CQE checks).
 */
static void exchange(struct port *a, unsigned int ia, struct port *b, unsigned int ib,
		     uint8_t type, unsigned int seed)
{
	struct tqp qa, qb, ua, ub;
	struct tconn ca = {.mtu = CX4_QP_MTU_1024, .sq_psn = 7, .rq_psn = 900, .retry = 7,
			   .rnr_retry = 7, .sgid_index = ia};
	struct tconn cb = {.mtu = CX4_QP_MTU_1024, .sq_psn = 900, .rq_psn = 7, .retry = 7,
			   .rnr_retry = 7, .sgid_index = ib};
	struct tconn cu = {.qkey = 0x1234, .mtu = CX4_QP_MTU_4096};
	/* a's memory: [0, 300000) to write, [400000, 500000) read into, [600000] to send,
	 * [700000] to send by UD; b's: [0, 300000) written, [300000, 400000) read from, [400000]
	 * and [450000] received into; one device: b's part is the second MB of the same MR */
	const size_t wlen = 300000, rlen = 100000, slen = 5000, ulen = 1000;
	size_t boff = a == b ? 1 << 20 : 0;
	struct tmr *bm = &b->mr;
	uint8_t *bb = bm->buf + boff, *g;
	struct tcqe e;

	T_EQ(tqp_create(&a->t, &qa, CX4_QP_ST_RC, a->pd, &a->scq, &a->rcq, 6, 6, NULL), 0);
	T_EQ(tqp_create(&b->t, &qb, CX4_QP_ST_RC, b->pd, &b->scq, &b->rcq, 6, 6, NULL), 0);
	memcpy(ca.rgid, b->gid[ib], 16);
	memcpy(ca.rmac, b->mac, 6);
	ca.rqpn = qb.qpn;
	memcpy(cb.rgid, a->gid[ia], 16);
	memcpy(cb.rmac, a->mac, 6);
	cb.rqpn = qa.qpn;
	T_EQ(tqp_connect(&a->t, &qa, &ca), 0);
	T_EQ(tqp_connect(&b->t, &qb, &cb), 0);

	tfill(a->mr.buf, wlen, seed);
	tfill(bb + 300000, rlen, seed + 1);
	tfill(a->mr.buf + 600000, slen, seed + 2);
	{
		struct tsge ws = sge(&a->mr, 0, (uint32_t)wlen);
		struct tsge rs = sge(&a->mr, 400000, (uint32_t)rlen);
		struct tsge ss = sge(&a->mr, 600000, (uint32_t)slen);
		struct tsge rr = sge(bm, boff + 400000, 8192);
		struct tsend w = {.opcode = MLX5_OPCODE_RDMA_WRITE, .sg = &ws, .nsg = 1,
				  .raddr = (uintptr_t)bb, .rkey = bm->key};
		struct tsend r = {.opcode = MLX5_OPCODE_RDMA_READ, .sg = &rs, .nsg = 1,
				  .raddr = (uintptr_t)bb + 300000, .rkey = bm->key};
		struct tsend s = {.opcode = MLX5_OPCODE_SEND, .sg = &ss, .nsg = 1};

		tqp_post_recv(&b->t, &qb, &rr, 1);
		tqp_post_send(&a->t, &qa, &w);
		tqp_post_send(&a->t, &qa, &r);
		tqp_post_send(&a->t, &qa, &s);
		for (int k = 0; k < 3; k++) {
			tcq_expect(&a->t, &a->scq, &e, WAIT);
			T_EQ(e.opcode, MLX5_CQE_REQ);
			T_EQ(e.wqe_counter, k);
		}
		tcq_expect(&b->t, &b->rcq, &e, WAIT);
		T_EQ(e.opcode, MLX5_CQE_RESP_SEND);
		T_EQ(e.byte_cnt, slen);
		T_EQ(e.qpn, qb.qpn);
		tcheck_pattern(bb, wlen, seed, "RC WRITE");
		tcheck_pattern(a->mr.buf + 400000, rlen, seed + 1, "RC READ");
		tcheck_pattern(bb + 400000, slen, seed + 2, "RC SEND");
	}

	/* UD: the receive buffer starts with the 40-byte GRH (IPv6 header / GRH / IPv4) */
	T_EQ(tqp_create(&a->t, &ua, CX4_QP_ST_UD, a->pd, &a->scq, &a->rcq, 6, 6, NULL), 0);
	T_EQ(tqp_create(&b->t, &ub, CX4_QP_ST_UD, b->pd, &b->scq, &b->rcq, 6, 6, NULL), 0);
	T_EQ(tqp_connect(&a->t, &ua, &cu), 0);
	T_EQ(tqp_connect(&b->t, &ub, &cu), 0);
	{
		struct tsge us = sge(&a->mr, 700000, (uint32_t)ulen);
		struct tsge ur = sge(bm, boff + 450000, 8192);
		struct tsend s = {.opcode = MLX5_OPCODE_SEND, .sg = &us, .nsg = 1, .dqpn = ub.qpn,
				  .qkey = 0x1234, .sgid_index = ia};

		memcpy(s.dgid, b->gid[ib], 16);
		memcpy(s.dmac, b->mac, 6);
		tfill(a->mr.buf + 700000, ulen, seed + 3);
		memset(bb + 450000, 0xee, 8192);
		tqp_post_recv(&b->t, &ub, &ur, 1);
		tqp_post_send(&a->t, &ua, &s);
		tcq_expect(&a->t, &a->scq, &e, WAIT);
		T_EQ(e.opcode, MLX5_CQE_REQ);
		tcq_expect(&b->t, &b->rcq, &e, WAIT);
		T_EQ(e.opcode, MLX5_CQE_RESP_SEND);
		T_EQ(e.byte_cnt, 40 + ulen);
		T_EQ(e.flags_rqpn & 0xffffff, ua.qpn);
		T_EQ(e.flags_rqpn >> 28 & 3, 1); /* GRH present */
		/* L3 header type: 0 GRH, 1 IPv6, 2 IPv4 */
		T_EQ(e.flags_rqpn >> 24 & 3, type == ROCE_NET_IPV4 ? 2 : type == ROCE_NET_IPV6 ? 1 : 0);
		g = bb + 450000;
		if (type == ROCE_NET_IPV4) {
			for (int i = 0; i < 20; i++)
				T_EQ(g[i], 0);
			T_EQ(g[20], 0x45);
			T_EQ(g[29], 17);
			T_EQ(memcmp(g + 32, a->gid[ia] + 12, 4), 0);
			T_EQ(memcmp(g + 36, b->gid[ib] + 12, 4), 0);
		} else {
			T_EQ(g[0] >> 4, 6);
			T_EQ(g[6], type == ROCE_NET_IPV6 ? 17 : 0x1b);
			T_EQ(g[4] << 8 | g[5], (type == ROCE_NET_IPV6 ? 8 : 0) + 12 + 8 + ulen + 4);
			T_EQ(memcmp(g + 8, a->gid[ia], 16), 0);
			T_EQ(memcmp(g + 24, b->gid[ib], 16), 0);
		}
		tcheck_pattern(g + 40, ulen, seed + 3, "UD SEND");
		T_EQ(g[40 + ulen], 0xee);
	}
	T_EQ(tqp_modify(&a->t, &qa, CX4_CMD_OP_2RST_QP, 0, NULL), 0);
	T_EQ(tqp_modify(&b->t, &qb, CX4_CMD_OP_2RST_QP, 0, NULL), 0);
	T_EQ(tqp_modify(&a->t, &ua, CX4_CMD_OP_2RST_QP, 0, NULL), 0);
	T_EQ(tqp_modify(&b->t, &ub, CX4_CMD_OP_2RST_QP, 0, NULL), 0);
}

static const uint8_t type_of[NGID] = {ROCE_NET_GRH, ROCE_NET_IPV6, ROCE_NET_GRH, ROCE_NET_IPV4};
static const char *const type_name[NGID] = {"RoCE v1 fe80::", "RoCE v2 fe80::",
					    "RoCE v1 ::ffff:", "RoCE v2 ::ffff:"};

/* ---- capabilities and the table --------------------------------------------------------- */

static int query_roce_cap(struct tdev *t, uint8_t *cap)
{
	uint8_t in[16] = {0}, out[0x1010];

	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_QUERY_HCA_CAP);
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_CAP_ROCE << 1 | 1);
	if (tdev_cmd(t, in, sizeof(in), out, sizeof(out)))
		return -1;
	memcpy(cap, out + 0x10, CX4_HCA_CAP_SIZE);
	return 0;
}

static void test_caps(void)
{
	char dir[] = "/tmp/cx4-gid-caps.XXXXXX";
	uint8_t cap[CX4_HCA_CAP_SIZE], g[16], out[0x30], in[16] = {0};
	struct port a, b;

	port_up(&a, (struct cx4_model_config){0});
	T_EQ(query_roce_cap(&a.t, cap), 0);
	/* UDP over the loopback only: RoCE v2 over IPv4 and IPv6, no RoCE v1 (no GRH) */
	T_EQ(cx4_get(cap, CX4_CAP_ROCE_ROCE_VERSION), 0x4);
	T_EQ(cx4_get(cap, CX4_CAP_ROCE_L3_TYPE), 0x6);
	eui64_gid(a.mac, g);
	T_EQ(tdev_set_gid(&a.t, 1, g, CX4_ROCE_VERSION_1, CX4_ROCE_L3_TYPE_IPV4, a.mac),
	     CX4_CMD_STAT_BAD_PARAM_ERR);
	/* a link-local address the host does not have: nothing carries it */
	T_EQ(tdev_set_gid(&a.t, 1, g, CX4_ROCE_VERSION_2, CX4_ROCE_L3_TYPE_IPV6, a.mac),
	     CX4_CMD_STAT_BAD_PARAM_ERR);
	/* an IPv4 address that is not the port's; an IPv4-mapped GID as IPv6; v1.5 */
	v4_gid(htonl(0x0a000001), g);
	T_EQ(tdev_set_gid(&a.t, 1, g, CX4_ROCE_VERSION_2, CX4_ROCE_L3_TYPE_IPV4, a.mac),
	     CX4_CMD_STAT_BAD_PARAM_ERR);
	v4_gid(a.t.ip, g);
	T_EQ(tdev_set_gid(&a.t, 1, g, CX4_ROCE_VERSION_2, CX4_ROCE_L3_TYPE_IPV6, a.mac),
	     CX4_CMD_STAT_BAD_PARAM_ERR);
	T_EQ(tdev_set_gid(&a.t, 1, g, 1, CX4_ROCE_L3_TYPE_IPV4, a.mac), CX4_CMD_STAT_BAD_PARAM_ERR);
	/* a refused entry leaves the table as it was */
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_QUERY_ROCE_ADDRESS);
	cx4_set(in, CX4_QUERY_ROCE_ADDRESS_IN_INDEX, 1);
	T_EQ(tdev_cmd(&a.t, in, sizeof(in), out, sizeof(out)), 0);
	T_EQ(out[0x10] | out[0x10 + 10] | out[0x10 + 15], 0);
	tdev_close(&a.t);

	/* with a cable (an Ethernet link, even before its other end is there): all of it */
	T_ASSERT(mkdtemp(dir));
	port_up(&b, (struct cx4_model_config){.cable_dir = dir});
	T_EQ(query_roce_cap(&b.t, cap), 0);
	T_EQ(cx4_get(cap, CX4_CAP_ROCE_ROCE_VERSION), 0x5);
	T_EQ(cx4_get(cap, CX4_CAP_ROCE_L3_TYPE), 0x7);
	gids_default(&b);
	T_EQ(tdev_cmd(&b.t, in, sizeof(in), out, sizeof(out)), 0);
	T_EQ(memcmp(out + 0x10, b.gid[1], 16), 0);
	T_EQ(cx4_get(out + 0x10, CX4_ROCE_ADDR_ROCE_VERSION), CX4_ROCE_VERSION_2);
	T_EQ(cx4_get(out + 0x10, CX4_ROCE_ADDR_ROCE_L3_TYPE), CX4_ROCE_L3_TYPE_IPV6);
	/* deleting an entry: a QP naming it cannot send (the table no longer has it) */
	T_EQ(tdev_set_gid(&b.t, 1, (uint8_t[16]){0}, 0, 0, NULL), 0);
	T_EQ(tdev_cmd(&b.t, in, sizeof(in), out, sizeof(out)), 0);
	T_EQ(out[0x10], 0);
	tdev_close(&b.t);
	T_ASSERT(rmdir(dir) && errno == ENOENT);
}

/* ---- the device's loopback ------------------------------------------------------------ */

static void test_loopback(void)
{
	char dir[] = "/tmp/cx4-gid-lb.XXXXXX";
	struct cx4_model_stats s0, s1;
	struct port a;

	/* the cable makes the port an Ethernet one (RoCE v1); no other end: all is loopback */
	T_ASSERT(mkdtemp(dir));
	port_up(&a, (struct cx4_model_config){.cable_dir = dir});
	gids_default(&a);
	s0 = stats(&a);
	for (unsigned int i = 0; i < NGID; i++) {
		t_name = type_name[i];
		exchange(&a, i, &a, i, type_of[i], 10 + i);
	}
	t_name = "loopback";
	s1 = stats(&a);
	T_ASSERT(s1.loop_pkts - s0.loop_pkts >= 4 * (293 + 98 + 5));
	T_EQ(s1.loop_pkts - s0.loop_pkts, s1.tx_pkts - s0.tx_pkts);
	T_EQ(s1.tx_pkts - s0.tx_pkts, s1.rx_pkts - s0.rx_pkts);
	T_EQ(s1.rx_drop_icrc + s1.rx_drop_qp + s1.tx_dropped + s1.retransmits, 0);
	tdev_close(&a.t);
	T_ASSERT(rmdir(dir) && errno == ENOENT);
}

/* ---- two devices joined by a cable ------------------------------------------------------- */

static void test_cable(void)
{
	char dir[] = "/tmp/cx4-gid-cable.XXXXXX";
	struct cx4_model_stats sa, sb;
	struct port a, b;

	T_ASSERT(mkdtemp(dir));
	port_up(&a, (struct cx4_model_config){.cable_dir = dir});
	port_up(&b, (struct cx4_model_config){.cable_dir = dir});
	gids_default(&a);
	gids_default(&b);
	for (int i = 0; i < 2000 && (stats(&a).cable_peer != b.t.ip ||
				     stats(&b).cable_peer != a.t.ip); i++)
		usleep(1000);
	T_EQ(stats(&a).cable_peer, b.t.ip);
	for (unsigned int i = 0; i < NGID; i++) {
		t_name = type_name[i];
		exchange(&a, i, &b, i, type_of[i], 20 + i);
		exchange(&b, i, &a, i, type_of[i], 30 + i);
	}
	t_name = "cable";
	sa = stats(&a);
	sb = stats(&b);
	T_EQ(sa.cable_tx_pkts, sa.tx_pkts);
	T_EQ(sb.cable_rx_pkts, sb.rx_pkts);
	T_ASSERT(sa.tx_pkts >= 4 * (293 + 98 + 5));
	T_EQ(sa.rx_drop_icrc + sb.rx_drop_icrc + sa.tx_dropped + sb.tx_dropped, 0);
	T_EQ(sa.retransmits + sb.retransmits, 0);
	tdev_close(&a.t);
	tdev_close(&b.t);
	T_ASSERT(rmdir(dir) && errno == ENOENT);
}

/* ---- network namespaces (root) ---------------------------------------------------------- */

static int run(const char *cmd)
{
	int r = system(cmd);

	if (r)
		fprintf(stderr, "  '%s' exited %d\n", cmd, r);
	return r;
}

/* Into a new network namespace of our own with lo up; false (skip) when not allowed. */
static bool own_netns(void)
{
	if (unshare(CLONE_NEWNET)) {
		printf("  skipped: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return false;
	}
	return !run("ip link set lo up");
}

static void test_udp6(void)
{
	static const char *const addr[2] = {"fd00:6276::a", "fd00:6276::b"};
	struct cx4_model_stats sa, sb;
	struct port p[2];

	if (!own_netns())
		return;
	T_EQ(run("ip -6 addr add fd00:6276::a/128 dev lo nodad && "
		 "ip -6 addr add fd00:6276::b/128 dev lo nodad"),
	     0);
	for (int k = 0; k < 2; k++) {
		uint8_t g[16];

		port_up(&p[k], (struct cx4_model_config){.netdev = "lo"});
		/* lo is not an Ethernet device: RoCE v1 is not offered */
		T_EQ(tdev_set_gid(&p[k].t, 0, (uint8_t[16]){0xfe, 0x80, [15] = 1},
				  CX4_ROCE_VERSION_1, 0, p[k].mac),
		     CX4_CMD_STAT_BAD_PARAM_ERR);
		T_EQ(inet_pton(AF_INET6, addr[k], g), 1);
		memcpy(p[k].gid[1], g, 16);
		T_EQ(tdev_set_gid(&p[k].t, 1, g, CX4_ROCE_VERSION_2, CX4_ROCE_L3_TYPE_IPV6, p[k].mac),
		     0);
	}
	t_name = "RoCE v2 IPv6 global";
	exchange(&p[0], 1, &p[1], 1, ROCE_NET_IPV6, 40);
	exchange(&p[1], 1, &p[0], 1, ROCE_NET_IPV6, 41);
	/* one device to its own IPv6 GID: the device's loopback, not the socket */
	exchange(&p[0], 1, &p[0], 1, ROCE_NET_IPV6, 42);
	t_name = "udp6";
	sa = stats(&p[0]);
	sb = stats(&p[1]);
	T_ASSERT(sa.udp6_tx_pkts >= 293 + 5);
	T_ASSERT(sb.udp6_rx_pkts >= 293 + 5);
	T_ASSERT(sa.loop_pkts >= 293 + 5);
	T_EQ(sa.rx_drop_icrc + sb.rx_drop_icrc + sa.tx_dropped + sb.tx_dropped, 0);
	/* the GID goes: its sockets close, and another device can take the address */
	T_EQ(tdev_set_gid(&p[1].t, 1, (uint8_t[16]){0}, 0, 0, NULL), 0);
	T_EQ(tdev_set_gid(&p[0].t, 2, p[1].gid[1], CX4_ROCE_VERSION_2, CX4_ROCE_L3_TYPE_IPV6,
			  p[0].mac),
	     0);
	tdev_close(&p[0].t);
	tdev_close(&p[1].t);
}

static void ifmac(const char *ifn, uint8_t mac[6])
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	T_ASSERT(strlen(ifn) < sizeof(ifr.ifr_name));
	memcpy(ifr.ifr_name, ifn, strlen(ifn));
	T_ASSERT(s >= 0 && !ioctl(s, SIOCGIFHWADDR, &ifr));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
}

/* Enter network namespace name (of `ip netns`). */
static void enter_ns(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	T_ASSERT(fd >= 0);
	T_EQ(setns(fd, CLONE_NEWNET), 0);
	close(fd);
}

static char ns_name[2][32];

static void ns_cleanup(void)
{
	char cmd[128];

	for (int k = 0; k < 2; k++)
		if (ns_name[k][0]) {
			snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null", ns_name[k]);
			if (system(cmd))
				continue;
		}
}

static void test_veth(void)
{
	char cmd[2048], ifn[2][16];
	struct cx4_model_stats s[2];
	struct port p[2];
	unsigned int id = (unsigned int)getpid() % 200;

	if (geteuid()) {
		printf("  skipped: needs root for network namespaces\n");
		return;
	}
	for (int k = 0; k < 2; k++) {
		snprintf(ns_name[k], sizeof(ns_name[k]), "bvgid%c%d", 'A' + k, (int)getpid());
		snprintf(ifn[k], sizeof(ifn[k]), "bvg%c%d", 'a' + k, (int)getpid() % 100000);
	}
	atexit(ns_cleanup);
	/*
	 * no duplicate address detection: the link-local addresses are usable at once (plain
	 * conversions, each argument in its place: cppcheck misreads %n$)
	 */
	snprintf(cmd, sizeof(cmd),
		 "ip netns add %s && ip netns add %s && "
		 "ip -n %s link set lo up && ip -n %s link set lo up && "
		 "ip netns exec %s sysctl -qw net.ipv6.conf.all.accept_dad=0 "
		 "net.ipv6.conf.default.accept_dad=0 && "
		 "ip netns exec %s sysctl -qw net.ipv6.conf.all.accept_dad=0 "
		 "net.ipv6.conf.default.accept_dad=0 && "
		 "ip link add %s netns %s type veth peer name %s netns %s && "
		 "ip -n %s link set %s addrgenmode eui64 && "
		 "ip -n %s link set %s addrgenmode eui64 && "
		 "ip -n %s addr add 10.78.%u.1/24 dev %s && "
		 "ip -n %s addr add 10.78.%u.2/24 dev %s && "
		 "ip -n %s link set %s up && ip -n %s link set %s up",
		 ns_name[0], ns_name[1], ns_name[0], ns_name[1], ns_name[0], ns_name[1],
		 ifn[0], ns_name[0], ifn[1], ns_name[1], ns_name[0], ifn[0], ns_name[1], ifn[1],
		 ns_name[0], id, ifn[0], ns_name[1], id, ifn[1],
		 ns_name[0], ifn[0], ns_name[1], ifn[1]);
	if (run(cmd)) {
		printf("  skipped: cannot build the veth pair\n");
		return;
	}
	/* the kernel adds the link-local addresses once both ends have carrier */
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof(cmd),
			 "for i in $(seq 100); do ip -n %s -6 addr show dev %s scope link | "
			 "grep -q inet6 && exit 0; sleep 0.05; done; exit 1",
			 ns_name[k], ifn[k]);
		T_EQ(run(cmd), 0);
	}
	for (int k = 0; k < 2; k++) {
		struct cx4_model_config c = {.netdev = ifn[k]};
		char ip[32];

		/* the port is the host's Ethernet device: its MAC, its address (as cx4d does) */
		enter_ns(ns_name[k]);
		ifmac(ifn[k], c.mac);
		snprintf(ip, sizeof(ip), "10.78.%u.%d", id, k + 1);
		c.ipv4 = inet_addr(ip);
		port_up(&p[k], c);
		gids_default(&p[k]);
	}
	for (unsigned int i = 0; i < NGID; i++) {
		t_name = type_name[i];
		exchange(&p[0], i, &p[1], i, type_of[i], 50 + i);
		exchange(&p[1], i, &p[0], i, type_of[i], 60 + i);
	}
	t_name = "veth";
	s[0] = stats(&p[0]);
	s[1] = stats(&p[1]);
	for (int k = 0; k < 2; k++) {
		/* RoCE v1 (two GIDs) through AF_PACKET, link-local RoCE v2 through UDP/IPv6 */
		T_ASSERT(s[k].raw_tx_pkts >= 2 * (293 + 98 + 5));
		T_ASSERT(s[k].raw_rx_pkts >= 2 * (293 + 98 + 5));
		T_ASSERT(s[k].udp6_tx_pkts >= 293 + 98 + 5);
		T_ASSERT(s[k].udp6_rx_pkts >= 293 + 98 + 5);
		T_EQ(s[k].rx_drop_icrc + s[k].tx_dropped, 0);
	}
	tdev_close(&p[0].t);
	tdev_close(&p[1].t);
	ns_cleanup();
	ns_name[0][0] = ns_name[1][0] = 0;
}

static const struct {
	const char *name;
	void (*fn)(void);
	bool own_ns; /* leaves the process in another network namespace: run in a child */
} tests[] = {
    {"caps", test_caps, false},	      {"loopback", test_loopback, false},
    {"cable", test_cable, false},     {"udp6", test_udp6, true},
    {"veth", test_veth, true},
};

int main(int argc, char **argv)
{
	int ran = 0;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool want = argc < 2;
		pid_t pid;
		int st;

		for (int k = 1; k < argc; k++)
			if (!strcmp(argv[k], tests[i].name))
				want = true;
		if (!want)
			continue;
		t_name = tests[i].name;
		printf("%s\n", t_name);
		fflush(stdout);
		if (!tests[i].own_ns) {
			tests[i].fn();
		} else {
			pid = fork();
			T_ASSERT(pid >= 0);
			if (!pid) {
				tests[i].fn();
				fflush(NULL);
				exit(0);
			}
			T_ASSERT(waitpid(pid, &st, 0) == pid);
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				return 1;
		}
		ran++;
	}
	printf("model_gid_test: %d test(s) passed\n", ran);
	return ran ? 0 : 1;
}
