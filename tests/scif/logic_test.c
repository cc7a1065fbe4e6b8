// SPDX-License-Identifier: MIT
/*
 * scif-compat's logic without verbs: window tables (offsets, overlap, resolution over several
 * windows, unregister ranges), ring arithmetic and the checks of peer counts, the wire
 * parser's rules for every operation, private data, and the node table from configurations.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bv_expect.h"
#include "node.h"
#include "ring.h"
#include "scif.h"
#include "window.h"
#include "wire.h"

#define PG SCIF_PAGE_SIZE

static struct scif_win win(uint64_t off, uint64_t len, uint32_t prot)
{
	struct scif_win w = { .off = off, .len = len, .addr = 0x100000 + off, .key = (uint32_t)off,
			      .prot = prot };
	return w;
}

static void test_windows(void)
{
	struct scif_wintab t;
	struct scif_span s[8];
	struct scif_win w;
	size_t first, count;
	uint64_t off;
	int n;

	scif_wintab_init(&t);
	/* insertion: alignment, zero length, wrap, overlap */
	w = win(0, PG, SCIF_PROT_READ);
	EXPECT(!scif_wintab_insert(&t, &w));
	w = win(PG, 2 * PG, SCIF_PROT_READ | SCIF_PROT_WRITE);
	EXPECT(!scif_wintab_insert(&t, &w));
	w = win(10 * PG, PG, SCIF_PROT_WRITE);
	EXPECT(!scif_wintab_insert(&t, &w));
	EXPECT(t.n == 3 && t.w[0].off == 0 && t.w[1].off == PG && t.w[2].off == 10 * PG);
	w = win(2 * PG, PG, SCIF_PROT_READ);
	EXPECT(scif_wintab_insert(&t, &w) == -EADDRINUSE);
	w = win(9 * PG, 2 * PG, SCIF_PROT_READ);
	EXPECT(scif_wintab_insert(&t, &w) == -EADDRINUSE);
	EXPECT(scif_wintab_check(&t, 5 * PG + 1, PG) == -EINVAL);
	EXPECT(scif_wintab_check(&t, 5 * PG, PG + 1) == -EINVAL);
	EXPECT(scif_wintab_check(&t, 5 * PG, 0) == -EINVAL);
	EXPECT(scif_wintab_check(&t, SCIF_AUTO_END - PG, 2 * PG) == -EINVAL);
	EXPECT(!scif_wintab_check(&t, 3 * PG, 7 * PG));

	/* lookup */
	EXPECT(scif_wintab_find(&t, 0) == 0 && scif_wintab_find(&t, PG - 1) == 0);
	EXPECT(scif_wintab_find(&t, 3 * PG - 1) == 1 && scif_wintab_find(&t, 3 * PG) == -1);
	EXPECT(scif_wintab_find(&t, 10 * PG + 5) == 2 && scif_wintab_find(&t, 11 * PG) == -1);

	/* resolution across contiguous windows, cut at each window's end */
	n = scif_wintab_resolve(&t, 100, 2 * PG, SCIF_PROT_READ, s, 8);
	EXPECT(n == 2 && s[0].off == 100 && s[0].len == PG - 100 && s[1].off == PG &&
	       s[1].len == PG + 100 && s[1].w == &t.w[1]);
	EXPECT(scif_wintab_resolve(&t, 100, 2 * PG, SCIF_PROT_WRITE, s, 8) == -EPERM);
	EXPECT(scif_wintab_resolve(&t, 2 * PG, 2 * PG, SCIF_PROT_READ, s, 8) == -ENXIO); /* hole */
	EXPECT(scif_wintab_resolve(&t, 5 * PG, 1, SCIF_PROT_READ, s, 8) == -ENXIO);
	EXPECT(scif_wintab_resolve(&t, 0, 3 * PG, SCIF_PROT_READ, s, 1) == -E2BIG);
	EXPECT(scif_wintab_resolve(&t, 0, 0, SCIF_PROT_READ, s, 8) == -ENXIO);
	EXPECT(scif_wintab_resolve(&t, UINT64_MAX - 5, 10, SCIF_PROT_READ, s, 8) == -ENXIO);
	n = scif_wintab_resolve(&t, 10 * PG + 8, 8, SCIF_PROT_WRITE, s, 8);
	EXPECT(n == 1 && s[0].len == 8);
	t.w[1].state = SCIF_WIN_DEAD;
	EXPECT(scif_wintab_resolve(&t, 100, 2 * PG, SCIF_PROT_READ, s, 8) == -ENXIO);
	t.w[1].state = SCIF_WIN_LIVE;

	/* unregister ranges: whole windows only, exactly covered (MPSS 3) */
	EXPECT(!scif_wintab_whole(&t, 0, 3 * PG, &first, &count) && first == 0 && count == 2);
	EXPECT(!scif_wintab_whole(&t, PG, 2 * PG, &first, &count) && first == 1 && count == 1);
	EXPECT(scif_wintab_whole(&t, 0, 2 * PG, &first, &count) == -EINVAL);	/* straddles end */
	EXPECT(scif_wintab_whole(&t, 2 * PG, PG, &first, &count) == -EINVAL);	/* straddles start */
	EXPECT(scif_wintab_whole(&t, 0, 4 * PG, &first, &count) == -ENXIO);	/* hole after */
	EXPECT(scif_wintab_whole(&t, 4 * PG, PG, &first, &count) == -ENXIO);	/* nothing */
	EXPECT(scif_wintab_whole(&t, 0, 11 * PG, &first, &count) == -ENXIO);	/* a hole inside */
	EXPECT(scif_wintab_whole(&t, 0, 0, &first, &count) == -EINVAL);

	/* automatic offsets from 2^62, first fit, never below */
	EXPECT(!scif_wintab_alloc(&t, 4 * PG, &off) && off == SCIF_FIXED_END);
	w = win(off, 4 * PG, SCIF_PROT_READ);
	EXPECT(!scif_wintab_insert(&t, &w));
	EXPECT(!scif_wintab_alloc(&t, PG, &off) && off == SCIF_FIXED_END + 4 * PG);
	w = win(SCIF_FIXED_END + 6 * PG, PG, SCIF_PROT_READ);
	EXPECT(!scif_wintab_insert(&t, &w));
	EXPECT(!scif_wintab_alloc(&t, 2 * PG, &off) && off == SCIF_FIXED_END + 4 * PG);
	EXPECT(!scif_wintab_alloc(&t, 3 * PG, &off) && off == SCIF_FIXED_END + 7 * PG);
	EXPECT(scif_wintab_alloc(&t, SCIF_AUTO_END - SCIF_FIXED_END, &off) == -ENOMEM);
	EXPECT(scif_wintab_alloc(&t, 0, &off) == -EINVAL);

	scif_wintab_remove(&t, 0, 2);
	EXPECT(t.n == 3 && t.w[0].off == 10 * PG);
	scif_wintab_remove(&t, 1, 100);
	EXPECT(t.n == 1);
	scif_wintab_free(&t);
	EXPECT(t.n == 0 && !t.w);
}

static void test_ring(void)
{
	struct scif_ring_pos r = { .size = 4096 };
	uint32_t off[2], n[2];

	EXPECT(scif_ring_space(&r) == 4096 && scif_ring_used(&r) == 0);
	r.prod = 5000;
	r.cons = 4000;
	EXPECT(scif_ring_used(&r) == 1000 && scif_ring_space(&r) == 3096);
	EXPECT(scif_ring_off(&r, 5000) == 904 && scif_ring_to_end(&r, 5000) == 3192);
	EXPECT(scif_ring_split(&r, 5000, 100, off, n) == 1 && off[0] == 904 && n[0] == 100);
	EXPECT(scif_ring_split(&r, 8000, 200, off, n) == 2 && off[0] == 3904 && n[0] == 192 &&
	       off[1] == 0 && n[1] == 8);
	EXPECT(scif_ring_split(&r, 8000, 0, off, n) == 0);
	/* a producer count: forward only, within the space given */
	EXPECT(scif_ring_prod_ok(&r, 5000) && scif_ring_prod_ok(&r, 8096));
	EXPECT(!scif_ring_prod_ok(&r, 8097) && !scif_ring_prod_ok(&r, 4999));
	/* a consumer count: forward only, never past what was produced */
	EXPECT(scif_ring_cons_ok(&r, 4000) && scif_ring_cons_ok(&r, 5000));
	EXPECT(!scif_ring_cons_ok(&r, 5001) && !scif_ring_cons_ok(&r, 3999));
	EXPECT(scif_ring_size_ok(4096) && scif_ring_size_ok(1 << 24));
	EXPECT(!scif_ring_size_ok(2048) && !scif_ring_size_ok(6000) && !scif_ring_size_ok(1 << 25));
}

static int parse(const struct scif_wire_msg *m)
{
	struct scif_wire_msg out;

	return scif_wire_parse(m, sizeof(*m), &out);
}

static void test_wire(void)
{
	struct scif_wire_msg m, out;
	struct scif_cm_pdata p, q;
	uint8_t big[64];
	unsigned long before = scif_wire_stats[SCIF_REJ_ARGS];

	scif_wire_build(&m, SCIF_OP_GRANT, 0, 0, 0, 0, 0, 0);
	EXPECT(!scif_wire_parse(&m, sizeof(m), &out) && out.op == SCIF_OP_GRANT);
	EXPECT(scif_wire_parse(&m, sizeof(m) - 1, &out) == -EPROTO);
	m.version = 2;
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_GRANT, 7, 0, 0, 0, 0, 0);	/* a request id where none goes */
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_GRANT, 0, 1, 0, 0, 0, 0);	/* an argument where none goes */
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_GRANT, 0, 0, 0, 0, 0, 0);
	m.pad[1] = 1;
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_GRANT, 0, 0, 0, 0, 0, 0);
	m.reserved = 1;
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, (enum scif_op)0, 0, 0, 0, 0, 0, 0);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_MAX, 0, 0, 0, 0, 0, 0);
	EXPECT(parse(&m) == -EPROTO);

	/* REGISTER: page-granular range, no wrap, a 32-bit key, protection R, W, both or none */
	scif_wire_build(&m, SCIF_OP_REGISTER, 1, PG, PG, 0x7000, 42, SCIF_PROT_READ);
	EXPECT(!parse(&m));
	scif_wire_build(&m, SCIF_OP_REGISTER, 0, PG, PG, 0x7000, 42, SCIF_PROT_READ);
	EXPECT(parse(&m) == -EPROTO);	/* no request id */
	scif_wire_build(&m, SCIF_OP_REGISTER, 1, PG + 1, PG, 0x7000, 42, SCIF_PROT_READ);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_REGISTER, 1, PG, 0, 0x7000, 42, SCIF_PROT_READ);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_REGISTER, 1, SCIF_AUTO_END - PG, 2 * PG, 0x7000, 42, 1);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_REGISTER, 1, PG, PG, UINT64_MAX - 10, 42, 1);
	EXPECT(parse(&m) == -EPROTO);	/* the address range wraps */
	scif_wire_build(&m, SCIF_OP_REGISTER, 1, PG, PG, 0x7000, 1ull << 32, 1);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_REGISTER, 1, PG, PG, 0x7000, 42, 4);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_REGISTER, 1, PG, PG, 0x7000, 42, 0);
	EXPECT(parse(&m) == 0);	/* a window without access: valid, as scif_register's */

	/* SIGNAL: flags, and 4-byte aligned offsets for the signals selected */
	scif_wire_build(&m, SCIF_OP_SIGNAL, 3, 4, 1, 0, 0, SCIF_SIGNAL_LOCAL);
	EXPECT(!parse(&m));
	scif_wire_build(&m, SCIF_OP_SIGNAL, 3, 2, 1, 0, 0, SCIF_SIGNAL_LOCAL);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_SIGNAL, 3, 2, 1, 8, 9, SCIF_SIGNAL_REMOTE);
	EXPECT(!parse(&m));
	scif_wire_build(&m, SCIF_OP_SIGNAL, 3, 0, 1, 0, 0, 0);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_SIGNAL, 3, 0, 1, 0, 0, SCIF_FENCE_INIT_SELF);
	EXPECT(parse(&m) == -EPROTO);

	/* the others */
	scif_wire_build(&m, SCIF_OP_WAKE_DATA, 0, 5, 0, 0, 0, 0);
	EXPECT(!parse(&m));
	scif_wire_build(&m, SCIF_OP_WAKE_DATA, 0, 1ull << 32, 0, 0, 0, 0);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_WAIT, 9, 0x80000000u, 0, 0, 0, 0);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_ACK, 9, 4096, 0, 0, 0, 0);
	EXPECT(parse(&m) == -EPROTO);
	scif_wire_build(&m, SCIF_OP_ACK, 9, ENXIO, 77, 0, 0, 0);
	EXPECT(!scif_wire_parse(&m, sizeof(m), &out) && out.arg[0] == ENXIO && out.arg[1] == 77);
	scif_wire_build(&m, SCIF_OP_UNMAP, 0, PG, PG, 0, 0, 0);
	EXPECT(!parse(&m));
	scif_wire_build(&m, SCIF_OP_MAP, 0, PG, PG, 0, 0, 0);
	EXPECT(parse(&m) == -EPROTO);
	EXPECT(scif_wire_stats[SCIF_REJ_ARGS] > before);

	/* private data */
	memset(&p, 0, sizeof(p));
	p.magic = SCIF_WIRE_MAGIC;
	p.version = SCIF_WIRE_VERSION;
	p.kind = SCIF_PDATA_CONNECT;
	p.src_port = 1088;
	p.dst_port = 40;
	p.ring_size = 65536;
	p.ring_addr = 0x10000;
	p.ctl_addr = 0x20000;
	memset(big, 0, sizeof(big));
	memcpy(big, &p, sizeof(p));
	EXPECT(!scif_pdata_parse(big, 56, SCIF_PDATA_CONNECT, &q) && q.dst_port == 40);
	EXPECT(scif_pdata_parse(big, 56, SCIF_PDATA_ACCEPT, &q) == -EPROTO);
	EXPECT(scif_pdata_parse(big, 39, SCIF_PDATA_CONNECT, &q) == -EPROTO);
	EXPECT(scif_pdata_parse(NULL, 0, SCIF_PDATA_CONNECT, &q) == -EPROTO);
	big[50] = 1;	/* bytes after it must be 0 */
	EXPECT(scif_pdata_parse(big, 56, SCIF_PDATA_CONNECT, &q) == -EPROTO);
	big[50] = 0;
	((struct scif_cm_pdata *)big)->ring_size = 65535;
	EXPECT(scif_pdata_parse(big, 56, SCIF_PDATA_CONNECT, &q) == -EPROTO);
	((struct scif_cm_pdata *)big)->ring_size = 65536;
	((struct scif_cm_pdata *)big)->dst_port = 0;
	EXPECT(scif_pdata_parse(big, 56, SCIF_PDATA_CONNECT, &q) == -EPROTO);
	((struct scif_cm_pdata *)big)->dst_port = 40;
	((struct scif_cm_pdata *)big)->magic = 0;
	EXPECT(scif_pdata_parse(big, 56, SCIF_PDATA_CONNECT, &q) == -EPROTO);
}

static void test_nodes(void)
{
	static struct bv_config cfg;
	struct scif_nodes nv;
	const struct scif_route *r;
	uint16_t ids[8];
	char err[256];

	/* the built-in configuration: node 0 = cx4_0 + ntb_0, node 1 = cx4_1 + ntb_1 */
	EXPECT(!bv_config_load(&cfg, NULL, err, sizeof(err)));
	EXPECT(!scif_nodes_build(&nv, &cfg, 0, NULL, err, sizeof(err)));
	EXPECT(nv.nlocal == 2);
	EXPECT(scif_nodes_list(&nv, ids, 8) == 2 && ids[0] == 0 && ids[1] == 1);
	r = scif_nodes_route(&nv, 1);
	EXPECT(r && !strcmp(cfg.dev[r->dev].name, "ntb_0") && r->dst.s_addr == cfg.dev[3].ip.s_addr);
	r = scif_nodes_next_route(&nv, r);	/* then cx4 */
	EXPECT(r && !strcmp(cfg.dev[r->dev].name, "cx4_0") && r->dst.s_addr == cfg.dev[1].ip.s_addr);
	EXPECT(!scif_nodes_next_route(&nv, r));
	r = scif_nodes_route(&nv, 0);
	EXPECT(r && !strcmp(cfg.dev[r->dev].name, "ntb_0") && r->dst.s_addr == r->src.s_addr);
	r = scif_nodes_next_route(&nv, r);	/* to ourselves through cx4 too */
	EXPECT(r && r->node == 0 && !strcmp(cfg.dev[r->dev].name, "cx4_0") &&
	       r->dst.s_addr == r->src.s_addr);
	EXPECT(!scif_nodes_next_route(&nv, r));
	EXPECT(!scif_nodes_route(&nv, 2));
	/* BV_SCIF_FABRIC: only the devices it names, in its order */
	EXPECT(!scif_nodes_build(&nv, &cfg, 1, "cx4", err, sizeof(err)));
	r = scif_nodes_route(&nv, 0);
	EXPECT(r && !strcmp(cfg.dev[r->dev].name, "cx4_1") && r->dst.s_addr == cfg.dev[0].ip.s_addr);
	EXPECT(!scif_nodes_next_route(&nv, r));
	EXPECT(!scif_nodes_build(&nv, &cfg, 1, "ntb_1", err, sizeof(err)));
	r = scif_nodes_route(&nv, 0);
	EXPECT(r && !strcmp(cfg.dev[r->dev].name, "ntb_1") && !scif_nodes_next_route(&nv, r));
	EXPECT(!scif_nodes_build(&nv, &cfg, 1, "cx4, ntb", err, sizeof(err)));
	r = scif_nodes_route(&nv, 0);
	EXPECT(r && !strcmp(cfg.dev[r->dev].name, "cx4_1"));
	r = scif_nodes_next_route(&nv, r);
	EXPECT(r && !strcmp(cfg.dev[r->dev].name, "ntb_1"));
	EXPECT(!scif_nodes_build(&nv, &cfg, 7, NULL, err, sizeof(err)) && nv.nlocal == 0 &&
	       scif_nodes_list(&nv, ids, 8) == 0);

	/* two hosts: each configuration has its own port and names the other by address */
	EXPECT(!bv_config_parse(&cfg,
				"[device cx4_0]\nkind = cx4\nip = 10.1.1.2\nscif_node = 1\n"
				"scif_peers = 0=10.1.1.1, 5=10.1.1.5\n",
				err, sizeof(err)));
	EXPECT(!scif_nodes_build(&nv, &cfg, 1, NULL, err, sizeof(err)));
	EXPECT(scif_nodes_list(&nv, ids, 8) == 3 && ids[0] == 0 && ids[1] == 1 && ids[2] == 5);
	EXPECT(scif_nodes_list(&nv, ids, 1) == 3 && ids[0] == 0);
	r = scif_nodes_route(&nv, 5);
	EXPECT(r && r->dst.s_addr == htonl(0x0a010105) && r->src.s_addr == htonl(0x0a010102));

	/* mistakes are reported */
	EXPECT(!bv_config_parse(&cfg, "[device a]\nkind = cx4\nip = 10.0.0.1\nscif_node = x\n", err,
				sizeof(err)));
	EXPECT(scif_nodes_build(&nv, &cfg, 0, NULL, err, sizeof(err)) && strstr(err, "scif_node"));
	EXPECT(!bv_config_parse(&cfg, "[device a]\nkind = cx4\nip = 10.0.0.1\nscif_node = 4096\n",
				err, sizeof(err)));
	EXPECT(scif_nodes_build(&nv, &cfg, 0, NULL, err, sizeof(err)));
	EXPECT(!bv_config_parse(&cfg, "[device a]\nkind = cx4\nip = 10.0.0.1\nscif_peers = 3\n", err,
				sizeof(err)));
	EXPECT(scif_nodes_build(&nv, &cfg, 0, NULL, err, sizeof(err)) && strstr(err, "scif_peers"));
	EXPECT(!bv_config_parse(&cfg, "[device a]\nkind = cx4\nip = 10.0.0.1\nscif_peers = 0=1.2.3.4\n",
				err, sizeof(err)));
	EXPECT(scif_nodes_build(&nv, &cfg, 0, NULL, err, sizeof(err)) && strstr(err, "this node"));
}

int main(void)
{
	test_windows();
	test_ring();
	test_wire();
	test_nodes();
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	else
		printf("PASS\n");
	return failures ? 1 : 0;
}
