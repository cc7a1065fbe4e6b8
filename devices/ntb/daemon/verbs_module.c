// SPDX-License-Identifier: MIT
/*
 * ntbd_verbs_module: what ntbd does for ntb provider contexts, plugged into ntbd's link life
 * cycle (ntbd.h). When the link is READY it lays out the verbs part of our control region:
 *
 *   NTBD_CTL_MODULE_OFF  our control area: the peer's ntbd writes its slots, QPs and keys here
 *   vbell_off            one vbell word per client slot, written by the peer's clients
 *   dgen_off, dir_off    our clients' pair directory, written by the peer's ntbd
 *   pool_off             the blocks the peer's clients write for ours (the peer's ntbd
 *                        allocates them)
 *   ctl_size .. win_size the aperture: registered memory, mapped for the peer's DMA
 *
 * and writes its own half into the peer's control area. The loopback memory (a memfd no
 * window shows) has the same parts for our clients among themselves, all written here: our
 * control area at 0, the directory, the pool.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs.h"

uint64_t nv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct nv_client *nv_client_find(struct nv_state *s, struct bvd_client *c)
{
	for (struct nv_client *cl = s->clients; cl; cl = cl->next)
		if (cl->c == c)
			return cl;
	return NULL;
}

#define LOOPBACK_SIZE_DEF	(256ull << 20)

static uint64_t page_up(uint64_t v)
{
	return (v + NTBV_PAGE - 1) & ~(uint64_t)(NTBV_PAGE - 1);
}

/* Directory and generation words for max_slots readers, from off: where they end. */
static uint64_t dir_plan(uint32_t max_slots, uint64_t off, uint64_t *dgen_off, uint64_t *dir_off)
{
	*dgen_off = page_up(off);
	*dir_off = page_up(*dgen_off + (uint64_t)max_slots * sizeof(struct ntbv_dgen));
	return page_up(*dir_off + (uint64_t)max_slots * max_slots * sizeof(struct ntbv_pair_ent));
}

/* The loopback memory: sparse like the control region, pages appear when touched. */
static int loopback_init(struct nv_state *s)
{
	long len = bv_conf_get_long(s->n->d->conf, "loopback_size", (long)LOOPBACK_SIZE_DEF);
	uint64_t end;
	void *p;

	s->lo_fd = -1;
	s->lo_len = (uint64_t)len;
	end = dir_plan(s->max_slots, ntbv_ctrl_len(NTBV_MAX_QP, NTBV_MAX_MR), &s->lo_dgen_off,
		       &s->lo_dir_off);
	if (len <= 0 || s->lo_len % NTBV_PAGE ||
	    s->lo_len < end + ntbv_block_len(NTBV_REQ_CELLS_MAX, NTBV_RESP_CELLS_MAX)) {
		bvd_log(s->n->d, "loopback_size %ld: must be a multiple of 4096, at least %llu",
			len, (unsigned long long)(end + ntbv_block_len(NTBV_REQ_CELLS_MAX,
									NTBV_RESP_CELLS_MAX)));
		return -EINVAL;
	}
	s->lo_pool_off = end;
	s->lo_pool_len = s->lo_len - end;
	s->lo_fd = memfd_create("ntbd-loopback", MFD_CLOEXEC);
	if (s->lo_fd < 0 || ftruncate(s->lo_fd, (off_t)s->lo_len))
		return -errno;
	p = mmap(NULL, s->lo_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->lo_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	s->lo = p;
	if (nv_pool_init(&s->pool[NV_LOCAL], s->lo_pool_off, s->lo_pool_len))
		return -ENOMEM;
	nv_publish_lo_header(s);
	return 0;
}

static int nv_init(struct ntbd *n)
{
	struct nv_state *s = calloc(1, sizeof(*s));
	long mtu;
	int ret;

	if (!s)
		return -ENOMEM;
	n->mod_priv = s;
	s->n = n;
	s->lo_fd = -1;
	s->max_slots = NTBV_MAX_SLOTS;
	for (unsigned int i = 0; i < NTBV_MAX_SLOTS; i++)
		s->slots[i].bell_fd = -1;
	s->pds = calloc(NV_MAX_PD, sizeof(*s->pds));
	if (!s->pds || nv_pairs_init(s)) {
		ret = -ENOMEM;
		goto fail;
	}
	s->ipv4 = n->d->conf->ip.s_addr;
	bv_dev_gid_ipv4(n->d->conf, s->gid);
	bv_dev_gid_link_local(n->d->conf, s->gid_ll);
	mtu = bv_conf_get_long(n->d->conf, "mtu", 4096);
	s->mtu = mtu >= 4096 ? 4096 : mtu >= 2048 ? 2048 : mtu >= 1024 ? 1024 : mtu >= 512 ? 512 :
									 256;
	/*
	 * The largest rings of a block (powers of two between the smallest and the default
	 * largest): smaller ones make a stress test wait for credits all the time.
	 */
	s->req_cells_max = (uint32_t)bv_conf_get_long(n->d->conf, "pair_req_cells",
						      NTBV_REQ_CELLS_MAX);
	s->resp_cells_max = (uint32_t)bv_conf_get_long(n->d->conf, "pair_resp_cells",
						       NTBV_RESP_CELLS_MAX);
	if (s->req_cells_max < NTBV_REQ_CELLS_MIN || s->req_cells_max > (1u << 16) ||
	    (s->req_cells_max & (s->req_cells_max - 1)) ||
	    s->resp_cells_max < NTBV_RESP_CELLS_MIN || s->resp_cells_max > (1u << 16) ||
	    (s->resp_cells_max & (s->resp_cells_max - 1))) {
		bvd_log(n->d, "pair_req_cells %u, pair_resp_cells %u: powers of two from %u and "
			"%u to 65536", s->req_cells_max, s->resp_cells_max, NTBV_REQ_CELLS_MIN,
			NTBV_RESP_CELLS_MIN);
		ret = -EINVAL;
		goto fail;
	}
	ret = loopback_init(s);
	if (ret)
		goto fail;
	return 0;
fail:
	n->mod_priv = NULL;
	if (s->lo)
		munmap(s->lo, s->lo_len);
	if (s->lo_fd >= 0)
		close(s->lo_fd);
	nv_pairs_fini(s);
	free(s->pds);
	free(s);
	return ret;
}

static void nv_fini(struct ntbd *n)
{
	struct nv_state *s = nv(n);

	if (!s)
		return;
	while (s->clients) {
		struct nv_client *cl = s->clients;

		s->clients = cl->next;
		nv_client_gone(s, cl);
		free(cl);
	}
	nv_pool_fini(&s->aperture);
	nv_pairs_fini(s);
	for (unsigned int i = 0; i < NTBV_MAX_SLOTS; i++)
		if (s->slots[i].bell_fd >= 0)
			close(s->slots[i].bell_fd);
	if (s->lo)
		munmap(s->lo, s->lo_len);
	if (s->lo_fd >= 0)
		close(s->lo_fd);
	free(s->pds);
	free(s);
	n->mod_priv = NULL;
}

/* Our window: the peer's control area, our vbells, our directory, the peer's pool. */
static bool plan(struct nv_state *s)
{
	struct ntbd_link *l = &s->n->link;
	uint64_t ctrl_len = ntbv_ctrl_len(NTBV_MAX_QP, NTBV_MAX_MR), end;
	uint64_t need;

	s->ctrl_off = NTBD_CTL_MODULE_OFF;
	s->vbell_off = page_up(s->ctrl_off + ctrl_len);
	end = dir_plan(s->max_slots, s->vbell_off + (uint64_t)s->max_slots *
							sizeof(struct ntbv_vbell),
		       &s->dgen_off, &s->dir_off);
	s->pool_off = end;
	need = end + ntbv_block_len(NTBV_REQ_CELLS_MAX, NTBV_RESP_CELLS_MAX);
	if (need > l->ctl_size || s->ctrl_off + ctrl_len > l->peer_ctl_size) {
		bvd_log(s->n->d, "verbs: control region of %llu bytes (peer %llu) is too small: "
			"the verbs need %llu (and %llu of the peer's)",
			(unsigned long long)l->ctl_size, (unsigned long long)l->peer_ctl_size,
			(unsigned long long)need, (unsigned long long)(s->ctrl_off + ctrl_len));
		return false;
	}
	s->pool_len = l->ctl_size - end;
	return true;
}

static void nv_link_ready(struct ntbd *n)
{
	struct nv_state *s = nv(n);
	struct ntbd_link *l = &n->link;

	if (!plan(s))
		return;
	s->pctrl = (uint8_t *)l->peer_ctl + s->ctrl_off;
	/* what the peer's clients and ntbd write into our window starts empty */
	if (fallocate(l->ctl_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s->vbell_off,
		      (off_t)(l->ctl_size - s->vbell_off)))
		memset((uint8_t *)l->ctl + s->vbell_off, 0, l->ctl_size - s->vbell_off);
	if (!s->aperture_ready && !nv_pool_init(&s->aperture, l->ctl_size,
						 l->win_size > l->ctl_size ?
							 l->win_size - l->ctl_size : 0))
		s->aperture_ready = true;
	/* our half of the peer's control area: clear it, then describe everything we have */
	memset(s->pctrl, 0, ntbv_ctrl_len(NTBV_MAX_QP, NTBV_MAX_MR));
	for (unsigned int i = 0; i < NTBV_MAX_SLOTS; i++)
		if (s->slots[i].epoch)
			nv_publish_slot(s, i);
	for (uint32_t i = 2; i < NTBV_MAX_QP; i++)
		if (s->qps[i].owner)
			nv_publish_qp(s, i);
	for (uint32_t i = 1; i < NTBV_MAX_MR; i++)
		if (s->mrs[i].owner)
			nv_publish_mr(s, i);
	nv_publish_header(s);
	s->ready = true;
	nv_publish_done(s);
	/* channels of the last session's peer clients: theirs no more */
	nv_reclaim_engines(s);
	bvd_log(n->d, "verbs: %u client slots, pair pool %llu MiB, mtu %u, aperture %llu MiB, "
		"loopback %llu MiB", s->max_slots, (unsigned long long)(s->pool_len >> 20), s->mtu,
		(unsigned long long)((l->win_size - l->ctl_size) >> 20),
		(unsigned long long)(s->lo_len >> 20));
}

static void nv_link_lost(struct ntbd *n)
{
	struct nv_state *s = nv(n);

	/*
	 * The peer's control area and rings are gone with it. Attached clients keep their
	 * (now dead) grants: their QPs fail and they get IBV_EVENT_PORT_ERR from ntbd.
	 */
	if (s->ready) {
		struct ntbv_ctrl_hdr *ph = (struct ntbv_ctrl_hdr *)((uint8_t *)n->link.ctl +
								      s->ctrl_off);

		/*
		 * What the peer wrote into our control area describes its last session: a
		 * client attaching in the next one must wait (EAGAIN) until the peer's ntbd
		 * has cleared and rewritten it, not read stale slots and QPs meanwhile.
		 */
		atomic_store_explicit(&ph->magic, 0, memory_order_release);
	}
	s->ready = false;
	s->pctrl = NULL;
	s->seen_gen = 0;
	nv_pairs_link_lost(s);
	/* wake every client: its engine sees the link down and fails its QPs' work */
	nv_relay(s, true);
}

static void nv_tick(struct ntbd *n)
{
	struct nv_state *s = nv(n);

	/* revoked engine slots whose processes may have exited since */
	if (s->engines_held)
		nv_reclaim_engines(s);
	/* pair blocks whose grace is over */
	if (s->nretired || s->nquar)
		nv_pairs_reclaim(s);
}

static void nv_doorbell(struct ntbd *n, uint64_t bits)
{
	struct nv_state *s = nv(n);
	const struct ntbv_ctrl_hdr *ph;
	uint64_t gen;

	if (!s->ready || !(bits & NTBD_DB_CTL))
		return;
	ph = (const struct ntbv_ctrl_hdr *)((uint8_t *)n->link.ctl + s->ctrl_off);
	gen = atomic_load_explicit(&ph->gen, memory_order_acquire);
	/* the peer's tables changed (clients came or went): every client re-arms its bells */
	nv_relay(s, gen != s->seen_gen);
	/* ... and the blocks our clients write for departed ones retire */
	if (gen != s->seen_gen)
		nv_pairs_peer_changed(s);
	/* ... and the engine slots of clients that went are ours to take back */
	if (gen != s->seen_gen || s->engines_held)
		nv_reclaim_engines(s);
	s->seen_gen = gen;
}

static int nv_client_open(struct ntbd *n, struct bvd_client *c)
{
	struct nv_state *s = nv(n);
	struct nv_client *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return ENOMEM;
	cl->c = c;
	cl->next = s->clients;
	s->clients = cl;
	return 0;
}

static void nv_client_close(struct ntbd *n, struct bvd_client *c)
{
	struct nv_state *s = nv(n);

	for (struct nv_client **p = &s->clients; *p; p = &(*p)->next) {
		struct nv_client *cl = *p;

		if (cl->c != c)
			continue;
		*p = cl->next;
		nv_client_gone(s, cl);
		free(cl);
		return;
	}
}

static void nv_async(struct nv_client *cl, const void *in, size_t len, struct bvd_reply *r)
{
	const struct ntb_async_event_req *req = in;

	if (len != sizeof(*req) || req->event_type > IBV_EVENT_WQ_FATAL) {
		r->status = EINVAL;
		return;
	}
	r->status = -bvd_async_event(cl->c, req->element, req->event_type);
}

static void nv_request(struct ntbd *n, struct bvd_client *c, uint16_t op, const void *in,
		       size_t len, int *fds, unsigned int nfds, struct bvd_reply *r)
{
	struct nv_state *s = nv(n);
	struct nv_client *cl = nv_client_find(s, c);

	if (!cl) {
		r->status = EPERM;
		return;
	}
	switch (op) {
	case NTB_OP_ATTACH:
		nv_attach(s, cl, in, len, r);
		break;
	case NTB_OP_ALLOC_PD:
		nv_alloc_pd(s, cl, r);
		break;
	case NTB_OP_DEALLOC_PD:
		nv_dealloc_pd(s, cl, in, len, r);
		break;
	case NTB_OP_REG_MR:
		nv_reg_mr(s, cl, in, len, fds, nfds, r);
		break;
	case NTB_OP_DEREG_MR:
		nv_dereg_mr(s, cl, in, len, r);
		break;
	case NTB_OP_CREATE_QP:
		nv_create_qp(s, cl, in, len, r);
		break;
	case NTB_OP_MODIFY_QP:
		nv_modify_qp(s, cl, in, len, r);
		break;
	case NTB_OP_DESTROY_QP:
		nv_destroy_qp(s, cl, in, len, r);
		break;
	case NTB_OP_ASYNC_EVENT:
		nv_async(cl, in, len, r);
		break;
	case NTB_OP_MAP_PEER_MR:
		nv_map_peer_mr(s, cl, in, len, r);
		break;
	case NTB_OP_OPEN_PAIR:
		nv_open_pair(s, cl, in, len, r);
		break;
	case NTB_OP_REREG_MR:
		nv_rereg_mr(s, cl, in, len, fds, nfds, r);
		break;
	case NTB_OP_ALLOC_MW:
		nv_alloc_mw(s, cl, in, len, r);
		break;
	case NTB_OP_DEALLOC_MW:
		nv_dealloc_mw(s, cl, in, len, r);
		break;
	default:
		r->status = EOPNOTSUPP;
		break;
	}
}

static void nv_status(struct ntbd *n, char *buf, size_t len)
{
	struct nv_state *s = nv(n);
	size_t o = 0;
	unsigned int nqp = 0, nmr = 0;

	for (uint32_t i = 2; i < NTBV_MAX_QP; i++)
		nqp += s->qps[i].owner != NULL;
	for (uint32_t i = 1; i < NTBV_MAX_MR; i++)
		nmr += s->mrs[i].owner != NULL;
	o += snprintf(buf + o, len - o, "  verbs: %s, %u slots, mtu %u, %u QPs, %u MRs, "
		      "%u revoked engine slots held\n"
		      "    pairs: %u to the peer (pool %llu/%llu KiB), %u loopback (pool %llu/%llu "
		      "KiB), %u retired, %u quarantined\n",
		      s->ready ? "ready" : "waiting for the link", s->max_slots, s->mtu, nqp, nmr,
		      s->engines_held, s->nopen[NV_PEER],
		      (unsigned long long)(s->pool[NV_PEER].used >> 10),
		      (unsigned long long)(s->pool[NV_PEER].len >> 10), s->nopen[NV_LOCAL],
		      (unsigned long long)(s->pool[NV_LOCAL].used >> 10),
		      (unsigned long long)(s->pool[NV_LOCAL].len >> 10), s->nretired, s->nquar);
	for (unsigned int i = 0; i < s->max_slots && o < len; i++) {
		const struct nv_slot *sl = &s->slots[i];

		if (sl->epoch & 1)
			o += snprintf(buf + o, len - o, "    slot %u: pid %d, epoch %u, %s\n", i,
				      (int)sl->owner->pid, sl->epoch,
				      sl->owner->db_bits ? "own doorbell" : "relayed doorbell");
	}
}

const struct ntbd_module ntbd_verbs_module = {
	.name = "verbs",
	.init = nv_init,
	.fini = nv_fini,
	.link_ready = nv_link_ready,
	.link_lost = nv_link_lost,
	.doorbell = nv_doorbell,
	.client_open = nv_client_open,
	.client_close = nv_client_close,
	.request = nv_request,
	.status = nv_status,
	.tick = nv_tick,
};
