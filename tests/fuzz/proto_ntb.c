// SPDX-License-Identifier: MIT
/*
 * bvd_proto_fuzz for ntbd: the daemon of end 0 (ntbd_ops) of an emulated link, the peer end's
 * ntbd (link and verbs module, driven the way ntbd.c's init does) in this process too, so
 * that the link comes up and requests reach the verbs code. A provider opens with ATTACH
 * (EAGAIN while the peer's half of the plan is still on its way: retried, as the provider
 * does). Nothing left behind: no PD, MR, QP or client slot of end 0 is owned.
 */
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <errno.h>

#include "bvd_proto_fuzz.h"
#include "ntb_proto.h"
#include "ntbd.h"
#include "verbs.h"

static struct bvd *dmn, peer_bvd;
static struct ntbd peer;

const char *fuzz_kind_config(void)
{
	static char conf[512];

	/* no heartbeat: an input that runs long must not bounce the link under the next one */
	snprintf(conf, sizeof(conf),
		 "[device " FUZZ_DEVICE "]\nkind = ntb\nlink = fuzz%d\nside = 0\n"
		 "profile = intel-gen3\nip = 127.0.2.1\nheartbeat_ms = 0\n\n"
		 "[device fz_1]\nkind = ntb\nlink = fuzz%d\nside = 1\n"
		 "profile = intel-gen3\nip = 127.0.2.2\nheartbeat_ms = 0\n", (int)getpid(),
		 (int)getpid());
	return conf;
}

const struct bvd_kind_ops *fuzz_kind_ops(void)
{
	return &ntbd_ops;
}

int fuzz_kind_init(struct bvd *d)
{
	struct bvd *p = &peer_bvd;
	int err;

	dmn = d;
	err = d->ops->init(d);
	if (err)
		return err;
	/* the peer: what ntbd.c's init does, on a second bvd of this process */
	p->cfg = d->cfg;
	p->conf = bv_config_find(&p->cfg, "fz_1");
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->num_comp_vectors = 1;
	if (!p->conf || p->epfd < 0)
		return 1;
	peer.d = p;
	p->priv = &peer;
	peer.mod = &ntbd_verbs_module;
	if (ntbd_link_init(&peer) || peer.mod->init(&peer))
		return 1;
	for (int t = 0; t < 1000; t++) {
		fuzz_pump(10);
		if (ntbd_link_ready(d->priv) && ntbd_link_ready(&peer))
			return 0;
	}
	fprintf(stderr, "proto_ntb: the link did not come up\n");
	return 1;
}

void fuzz_kind_fini(void)
{
	if (!peer.d)
		return;
	ntbd_link_stop(&peer);
	if (peer.mod && peer.mod->fini)
		peer.mod->fini(&peer);
	ntbd_link_fini(&peer);
	peer.d = NULL;
}

void fuzz_kind_pump(void)
{
	if (peer.d)
		bvd_poll(&peer_bvd, 0);
}

uint16_t fuzz_kind_base(void)
{
	return BV_OP_NTB_BASE;
}

size_t fuzz_kind_buf_len(uint16_t op, const uint8_t *p, size_t len)
{
	/* REG_MR's memfd stands for the region's pages (from fd_off): let it be large */
	return op == NTB_OP_REG_MR ? 4u << 20 : 65536;
}

void fuzz_kind_open(struct fclient *c)
{
	struct ntb_attach_req a = { .version = NTB_PROTO_VERSION };
	int st = EAGAIN;

	for (int t = 0; t < 100 && st == EAGAIN; t++) {
		st = fuzz_call(c, NTB_OP_ATTACH, &a, sizeof(a), NULL, 0, NULL, 0, NULL);
		if (st == EAGAIN)
			fuzz_pump(10);
	}
	if (st)
		fuzz_die("ATTACH failed (%d)", st);
}

void fuzz_kind_canary(struct fclient *c)
{
	struct ntb_handle_rsp pd;
	struct ntb_handle_req h = { 0 };
	size_t n = 0;
	int st;

	fuzz_kind_open(c);
	st = fuzz_call(c, NTB_OP_ALLOC_PD, NULL, 0, NULL, 0, &pd, sizeof(pd), &n);
	if (st || n != sizeof(pd))
		fuzz_die("canary: ALLOC_PD failed (%d)", st);
	h.handle = pd.handle;
	st = fuzz_call(c, NTB_OP_DEALLOC_PD, &h, sizeof(h), NULL, 0, NULL, 0, NULL);
	if (st)
		fuzz_die("canary: DEALLOC_PD failed (%d)", st);
}

void fuzz_kind_check_idle(void)
{
	struct nv_state *s = nv(dmn->priv);
	unsigned int qps = 0, mrs = 0, slots = 0, pds = 0;

	for (uint32_t i = 0; i < NTBV_MAX_QP; i++)
		qps += s->qps[i].owner != NULL;
	for (uint32_t i = 0; i < NTBV_MAX_MR; i++)
		mrs += s->mrs[i].owner != NULL;
	for (uint32_t i = 0; i < NTBV_MAX_SLOTS; i++)
		slots += s->slots[i].owner != NULL;
	for (uint32_t i = 0; s->pds && i < NV_MAX_PD; i++)
		pds += s->pds[i].owner != NULL;
	if (qps || mrs || slots || pds || s->clients)
		fuzz_die("the clients left, end 0 still holds %u QPs, %u MRs, %u slots, %u PDs%s",
			 qps, mrs, slots, pds, s->clients ? ", a client" : "");
	if (!ntbd_link_ready(dmn->priv) || !ntbd_link_ready(&peer))
		fuzz_die("the link is down after the input");
}
