// SPDX-License-Identifier: MIT
/*
 * The ntb provider's device context: registration, attaching to ntbd's data path (our control
 * region, the HAL grant with the peer's window and DMA, the wake-up descriptors), the ops
 * table, and the device attributes the verbs engine implements.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ntb.h"

uint64_t ntb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int ntb_call(struct ntb_context *ctx, uint16_t op, const void *req, size_t req_len, void *rsp,
	     size_t rsp_len)
{
	struct bv_call call = { .op = op, .req = req, .req_len = req_len, .rsp = rsp,
				.rsp_max = rsp_len };
	int ret = bv_call(&ctx->bv, &call);

	if (!ret && rsp_len && call.rsp_len != rsp_len)
		ret = EPROTO;
	return ret;
}

void ntb_read_entry(void *dst, const void *src, size_t len)
{
	const _Atomic uint32_t *seq = src;

	/*
	 * The writer (the peer's ntbd) makes seq odd, writes, makes it even: microseconds. A
	 * peer that leaves it odd (or keeps changing it) must not stall the engine for ever:
	 * the entry then reads as empty (no key, no QP: nothing matches it).
	 */
	for (unsigned int tries = 0;; tries++) {
		uint32_t s1 = atomic_load_explicit(seq, memory_order_acquire);

		if (tries > 100000) {
			memset(dst, 0, len);
			return;
		}
		if (s1 & 1) {
			ntb_cpu_relax();
			continue;
		}
		memcpy(dst, src, len);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(seq, memory_order_relaxed) == s1)
			return;
	}
}

/* ---- async events raised by the data path ---------------------------------------------- */

void ntb_raise_event(struct ntb_context *ctx, uint64_t element, enum ibv_event_type type)
{
	pthread_mutex_lock(&ctx->ev_lock);
	if (ctx->nev < sizeof(ctx->ev) / sizeof(ctx->ev[0]))
		ctx->ev[ctx->nev++] = (struct ntb_pending_event){ element, type };
	pthread_mutex_unlock(&ctx->ev_lock);
	/* the progress thread sends them (an application thread never waits for ntbd) */
	ntb_progress_poke(ctx);
}

/* The async fd belongs to ntbd's end of a socket pair: ntbd queues the record for us. */
void ntb_flush_events(struct ntb_context *ctx)
{
	struct ntb_pending_event ev[64];
	unsigned int n;

	if (!ctx->nev)
		return;
	pthread_mutex_lock(&ctx->ev_lock);
	n = ctx->nev;
	memcpy(ev, ctx->ev, n * sizeof(ev[0]));
	ctx->nev = 0;
	pthread_mutex_unlock(&ctx->ev_lock);
	for (unsigned int i = 0; i < n; i++) {
		struct ntb_async_event_req req = { .element = ev[i].element,
						   .event_type = ev[i].type };

		ntb_call(ctx, NTB_OP_ASYNC_EVENT, &req, sizeof(req), NULL, 0);
	}
}

/* ---- attaching to the data path -------------------------------------------------------- */

static void detach(struct ntb_context *ctx)
{
	if (ctx->dma)
		ntb_dma_chan_close(ctx->dma);
	ctx->dma = NULL;
	if (ctx->hal) {
		if (ctx->peer)
			ntb_peer_mw_unmap(ctx->hal, 0);
		ntb_dev_close(ctx->hal);
	}
	ctx->hal = NULL;
	ctx->peer = NULL;
	if (ctx->local)
		munmap(ctx->local, ctx->local_len);
	ctx->local = NULL;
	if (ctx->lo)
		munmap(ctx->lo, ctx->lo_len);
	ctx->lo = NULL;
	if (ctx->relay_fd >= 0)
		close(ctx->relay_fd);
	ctx->relay_fd = -1;
	for (unsigned int e = 0; ctx->attached && e < 2; e++) {
		for (unsigned int i = 0; i < NTBV_MAX_SLOTS; i++) {
			struct ntb_peer *p = &ctx->peers[e][i];

			if (p->bell_fd >= 0)
				close(p->bell_fd);
			p->bell_fd = -1;
			pthread_mutex_destroy(&p->rx_lock);
			pthread_mutex_destroy(&p->tx_lock);
		}
	}
	ctx->attached = false;
}

/* [off, off + len) inside [0, total) */
static bool within(uint64_t off, uint64_t len, uint64_t total)
{
	return off <= total && len <= total - off;
}

/*
 * An end's control area (the peer's ntbd wrote it into our window; our ntbd into the
 * loopback memory), copied once and checked, then used: its writer may write it again at any
 * time, and a table offset changed after the check must not move any of our pointers. The
 * described memory (where we write: its control region) lies in the tx_len bytes we mapped.
 */
static int end_setup(struct ntb_context *ctx, struct ntb_end *end, const uint8_t *area,
		     uint64_t area_max, uint8_t *tx_mem, uint64_t tx_len)
{
	const struct ntbv_ctrl_hdr *h = (const struct ntbv_ctrl_hdr *)area;
	uint64_t clen = ntbv_ctrl_len(ctx->max_qp, ctx->max_mr);
	struct ntbv_ctrl_hdr hs;

	if (atomic_load_explicit(&h->magic, memory_order_acquire) != NTBV_MAGIC)
		return ENOLINK;
	memcpy(&hs, h, sizeof(hs));
	if (clen > area_max || hs.version != NTBV_VERSION || !hs.max_slots ||
	    hs.max_slots > NTBV_MAX_SLOTS || hs.max_qp > NTBV_MAX_QP || hs.max_mr > NTBV_MAX_MR ||
	    hs.qp_tbl_off > clen || hs.mr_tbl_off > clen || hs.qp_tbl_off < NTBV_CTRL_QP_OFF ||
	    hs.qp_tbl_off % 8 || hs.mr_tbl_off % 8 ||
	    hs.qp_tbl_off + (uint64_t)hs.max_qp * sizeof(struct ntbv_qp_ent) > clen ||
	    hs.mr_tbl_off + (uint64_t)hs.max_mr * sizeof(struct ntbv_mr_ent) > clen ||
	    hs.mem_len > tx_len ||
	    (tx_mem != ctx->lo && (hs.vbell_off % NTBV_CELL ||
				  !within(hs.vbell_off, (uint64_t)hs.max_slots *
								 sizeof(struct ntbv_vbell),
					  hs.mem_len))))
		return EPROTO;
	end->ctrl = h;
	end->side = hs.side;
	end->max_slots = hs.max_slots;
	end->max_qp = hs.max_qp;
	end->max_mr = hs.max_mr;
	end->ipv4 = hs.ipv4;
	memcpy(end->gid, hs.gid, sizeof(end->gid));
	memcpy(end->gid_ll, hs.gid_ll, sizeof(end->gid_ll));
	end->slots = (const struct ntbv_slot *)(area + NTBV_CTRL_SLOTS_OFF);
	end->qps = (const struct ntbv_qp_ent *)(area + hs.qp_tbl_off);
	end->mrs = (const struct ntbv_mr_ent *)(area + hs.mr_tbl_off);
	end->tx_mem = tx_mem;
	end->tx_len = hs.mem_len;	/* its control region: the blocks are there */
	end->vbells = tx_mem == ctx->lo ? NULL : (struct ntbv_vbell *)(tx_mem + hs.vbell_off);
	end->up = true;
	return 0;
}

/* Where we read an end's blocks: our directory row and pool in mem (ntbd's layout). */
static int end_rx(struct ntb_context *ctx, struct ntb_end *end, uint8_t *mem, uint64_t len,
		  uint64_t dir_off, uint64_t dgen_off, uint64_t pool_off, uint64_t pool_len)
{
	if (dir_off % 8 || dgen_off % 8 || pool_off % NTBV_PAGE ||
	    !within(dir_off, (uint64_t)ctx->max_slots * ctx->max_slots *
				     sizeof(struct ntbv_pair_ent), len) ||
	    !within(dgen_off, (uint64_t)ctx->max_slots * sizeof(struct ntbv_dgen), len) ||
	    !within(pool_off, pool_len, len))
		return EPROTO;
	end->rx_mem = mem;
	end->rx_len = len;
	end->row_len = ctx->max_slots;
	end->dir = (const struct ntbv_pair_ent *)(mem + dir_off) + (uint64_t)ctx->slot *
										  ctx->max_slots;
	end->dgen = &((const struct ntbv_dgen *)(mem + dgen_off))[ctx->slot].gen;
	end->dgen_seen = 0;
	end->pool_off = pool_off;
	end->pool_len = pool_len;
	return 0;
}

static int attach_locked(struct ntb_context *ctx)
{
	struct ntb_attach_req req = { .version = NTB_PROTO_VERSION };
	struct ntb_attach_rsp rsp;
	int fds[4] = { -1, -1, -1, -1 };
	struct bv_call call = { .op = NTB_OP_ATTACH, .req = &req, .req_len = sizeof(req),
				.rsp = &rsp, .rsp_max = sizeof(rsp), .rfds = fds, .nrfds = 4 };
	struct ntb_dma_chan_attr dattr = { .depth = 1024, .flags = NTB_DMA_CHAN_MANUAL };
	uint64_t size;
	void *p;
	int ret;

	ret = bv_call(&ctx->bv, &call);
	if (ret)
		goto out;
	ret = EPROTO;
	if (call.rsp_len != sizeof(rsp) || call.nrfds != 4 || rsp.version != NTB_PROTO_VERSION ||
	    !rsp.max_slots || rsp.max_slots > NTBV_MAX_SLOTS || rsp.slot >= rsp.max_slots ||
	    rsp.max_qp > NTBV_MAX_QP || rsp.max_mr > NTBV_MAX_MR || !rsp.mtu ||
	    rsp.ctrl_off % NTBV_PAGE ||
	    !within(rsp.ctrl_off, ntbv_ctrl_len(rsp.max_qp, rsp.max_mr), rsp.win_len) ||
	    rsp.win_vbell_off % NTBV_CELL ||
	    !within(rsp.win_vbell_off, (uint64_t)rsp.max_slots * sizeof(struct ntbv_vbell),
		    rsp.win_len) ||
	    ntbv_ctrl_len(rsp.max_qp, rsp.max_mr) > rsp.lo_len)
		goto out;
	ctx->slot = rsp.slot;
	ctx->max_slots = rsp.max_slots;
	ctx->max_qp = rsp.max_qp;
	ctx->max_mr = rsp.max_mr;
	p = mmap(NULL, rsp.win_len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (p == MAP_FAILED) {
		ret = errno;
		goto out;
	}
	ctx->local = p;
	ctx->local_len = rsp.win_len;
	p = mmap(NULL, rsp.lo_len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[3], 0);
	if (p == MAP_FAILED) {
		ret = errno;
		goto fail;
	}
	ctx->lo = p;
	ctx->lo_len = rsp.lo_len;
	ctx->relay_fd = fds[2];
	fds[2] = -1;
	ret = -ntb_client_attach(fds[1], &ctx->hal);
	fds[1] = -1;		/* consumed */
	if (ret)
		goto fail;
	ret = -ntb_peer_mw_map(ctx->hal, 0, &p, &size);
	if (ret)
		goto fail;
	ctx->peer = p;
	ctx->peer_len = size;
	/* without a DMA channel (the engine slots of the peer's IOMMU are all taken), PIO and
	 * ring messages carry everything */
	ret = -ntb_dma_chan_open(ctx->hal, &dattr, &ctx->dma);
	if (ret) {
		ctx->dma = NULL;
		fprintf(stderr, "bridgeverbs: %s: no DMA channel (%s): PIO and ring messages "
			"carry everything\n", ctx->bv.vctx.context.device->name,
			ret == EBUSY ? "the peer's IOMMU engine slots are all taken" : strerror(ret));
	}

	ctx->side = rsp.side;
	ctx->slot_epoch = rsp.slot_epoch;
	ctx->mtu = rsp.mtu;
	ctx->ipv4 = rsp.ipv4;
	ctx->db_bits = rsp.db_bits;
	ctx->my_vbell = &((struct ntbv_vbell *)(ctx->local + rsp.win_vbell_off))[rsp.slot].vbell;
	/*
	 * The peer's ntbd wrote its control area when the link came up (ENOLINK: not yet);
	 * ours is in the loopback memory. Then where blocks for us are: ntbd's word.
	 */
	ret = end_setup(ctx, &ctx->ends[NTB_END_PEER], ctx->local + rsp.ctrl_off,
			rsp.win_len - rsp.ctrl_off, ctx->peer, ctx->peer_len);
	if (!ret)
		ret = end_setup(ctx, &ctx->ends[NTB_END_LOCAL], ctx->lo, rsp.lo_len, ctx->lo,
				rsp.lo_len);
	if (!ret)
		ret = end_rx(ctx, &ctx->ends[NTB_END_PEER], ctx->local, rsp.win_len,
			     rsp.win_dir_off, rsp.win_dgen_off, rsp.win_pool_off,
			     rsp.win_pool_len);
	if (!ret)
		ret = end_rx(ctx, &ctx->ends[NTB_END_LOCAL], ctx->lo, rsp.lo_len, rsp.lo_dir_off,
			     rsp.lo_dgen_off, rsp.lo_pool_off, rsp.lo_pool_len);
	if (ret)
		goto fail;
	ntb_trace_init();
	ntb_chan_setup(ctx);
	ctx->attached = true;
	ret = ntb_progress_start(ctx);
	if (ret)
		goto fail;
	return 0;
fail:
	detach(ctx);
	memset(ctx->ends, 0, sizeof(ctx->ends));
out:
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret;
}

bool ntb_link_alive(struct ntb_context *ctx)
{
	if (atomic_load_explicit(&ctx->link_lost, memory_order_relaxed))
		return false;
	if (!ctx->hal || ntb_link_is_up(ctx->hal, NULL, NULL))
		return true;
	atomic_store(&ctx->link_lost, true);
	return false;
}

int ntb_ensure_attached(struct ntb_context *ctx)
{
	int ret = 0;

	/* a context whose link session ended cannot make new QPs or MRs: reopen it */
	if (ctx->attached)
		return ntb_link_alive(ctx) ? 0 : ENOLINK;
	pthread_mutex_lock(&ctx->lock);
	/* EAGAIN: the link just came up and the peer's ntbd is still writing its half */
	for (int tries = 0; !ctx->attached && tries < 100; tries++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		ret = attach_locked(ctx);
		if (ret != EAGAIN)
			break;
		nanosleep(&ts, NULL);
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* ---- device attributes ------------------------------------------------------------------ */

/*
 * ntbd reports the identity (GUID, vendor, part, firmware); the limits are this engine's own
 * and are the ones it enforces.
 */
static int ntb_query_device_ex(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	struct ibv_device_attr *a = &ex.orig_attr;
	int ret = bv_query_device_ex(context, input, &ex, sizeof(ex));

	if (ret)
		return ret;
	a->max_mr_size = 1ull << 40;
	a->page_size_cap = NTB_PAGE_SIZE;
	a->max_qp = NTBV_MAX_QP - 2;
	a->max_qp_wr = NTB_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_CURR_QP_STATE_MOD | IBV_DEVICE_SRQ_RESIZE |
			      IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = NTB_MAX_SGE;
	a->max_sge_rd = NTB_MAX_SGE_RD;
	a->max_cq = NTB_MAX_CQ;
	a->max_cqe = NTB_MAX_CQE - 1;
	a->max_mr = NTBV_MAX_MR - 1;
	a->max_pd = NTB_MAX_PD;
	a->max_qp_rd_atom = NTB_MAX_RD_ATOMIC;
	a->max_ee_rd_atom = 0;
	a->max_res_rd_atom = NTB_MAX_RD_ATOMIC * a->max_qp;
	a->max_qp_init_rd_atom = NTB_MAX_RD_ATOMIC;
	a->max_ee_init_rd_atom = 0;
	/* executed by the responder's CPU: atomic with respect to other verbs atomics */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ee = 0;
	a->max_rdd = 0;
	/* windows take keys from the regions' space (as an HCA's mkeys): either maximum alone */
	a->max_mw = NTBV_MAX_MR - 1;
	a->max_raw_ipv6_qp = 0;
	a->max_raw_ethy_qp = 0;
	a->max_mcast_grp = 0;
	a->max_mcast_qp_attach = 0;
	a->max_total_mcast_qp_attach = 0;
	a->max_ah = NTB_MAX_AH;
	a->max_srq = NTB_MAX_SRQ;
	a->max_srq_wr = NTB_MAX_SRQ_WR;
	a->max_srq_sge = NTB_MAX_SGE;
	a->max_pkeys = 1;
	ex.device_cap_flags_ex = a->device_cap_flags;
	ex.completion_timestamp_mask = 0;
	ex.hca_core_clock = 0;
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

static int ntb_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *attr)
{
	int ret = bv_query_port(context, port, attr);

	if (!ret) {
		attr->max_msg_sz = NTB_MAX_MSG;
		attr->port_cap_flags |= IBV_PORT_CM_SUP;
	}
	return ret;
}

static void ntb_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	/* nothing to acknowledge: events carry no provider state */
}

/* ---- ops --------------------------------------------------------------------------------- */

static void ntb_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops ntb_ctx_ops = {
	.alloc_mw = ntb_alloc_mw,
	.alloc_pd = ntb_alloc_pd,
	.bind_mw = ntb_bind_mw,
	.async_event = ntb_async_event,
	.create_ah = ntb_create_ah,
	.create_cq = ntb_create_cq,
	.create_cq_ex = ntb_create_cq_ex,
	.create_qp = ntb_create_qp,
	.create_qp_ex = ntb_create_qp_ex,
	.create_srq = ntb_create_srq,
	.dealloc_mw = ntb_dealloc_mw,
	.dealloc_pd = ntb_dealloc_pd,
	.dereg_mr = ntb_dereg_mr,
	.destroy_ah = ntb_destroy_ah,
	.destroy_cq = ntb_destroy_cq,
	.destroy_qp = ntb_destroy_qp,
	.destroy_srq = ntb_destroy_srq,
	.free_context = ntb_free_context,
	.modify_qp = ntb_modify_qp,
	.modify_srq = ntb_modify_srq,
	.poll_cq = ntb_poll_cq,
	.post_recv = ntb_post_recv,
	.post_send = ntb_post_send,
	.post_srq_recv = ntb_post_srq_recv,
	.query_device_ex = ntb_query_device_ex,
	.query_port = ntb_query_port,
	.query_qp = ntb_query_qp,
	.query_qp_data_in_order = ntb_query_qp_data_in_order,
	.query_srq = ntb_query_srq,
	.reg_mr = ntb_reg_mr,
	.rereg_mr = ntb_rereg_mr,
	.req_notify_cq = ntb_req_notify_cq,
	.resize_cq = ntb_resize_cq,
};

static void ntb_free_context(struct ibv_context *ibctx)
{
	struct ntb_context *ctx = to_ntb_ctx(ibctx);

	ntb_progress_stop(ctx);
	ntb_trace_dump("close");
	ntb_flush_events(ctx);
	ntb_pmaps_free(ctx);
	detach(ctx);
	if (ctx->poke_fd >= 0)
		close(ctx->poke_fd);
	free(ctx->mrs);
	free(ctx->qps);
	free(ctx->pmaps[0]);
	free(ctx->pmaps[1]);
	pthread_mutex_destroy(&ctx->pmap_lock);
	pthread_mutex_destroy(&ctx->mw_lock);
	pthread_mutex_destroy(&ctx->open_lock);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->dma_lock);
	pthread_mutex_destroy(&ctx->ev_lock);
	bv_close_context(&ctx->bv);
}

/* GID index i of port 1 as libibverbs reads it: the sysfs file (zero when there is none). */
static void read_gid(struct ibv_device *ibdev, uint32_t i, union ibv_gid *gid)
{
	char path[IBV_SYSFS_PATH_MAX + 64], buf[64];
	ssize_t n;
	int fd;

	memset(gid, 0, sizeof(*gid));
	snprintf(path, sizeof(path), "%s/ports/1/gids/%u", ibdev->ibdev_path, i);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (inet_pton(AF_INET6, buf, gid->raw) != 1)
		memset(gid, 0, sizeof(*gid));
}

static struct verbs_context *ntb_alloc_context(struct ibv_device *ibdev, int cmd_fd,
					       void *private_data)
{
	struct bv_context *bv = bv_open_context(ibdev, cmd_fd, sizeof(struct ntb_context));
	struct ntb_context *ctx = (struct ntb_context *)bv;
	const char *spin;
	int ret;

	if (!bv)
		return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->dma_lock, NULL);
	pthread_mutex_init(&ctx->ev_lock, NULL);
	pthread_mutex_init(&ctx->open_lock, NULL);
	ctx->relay_fd = -1;
	ctx->poke_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* how long the progress thread polls after work before it blocks (a wake-up costs more) */
	spin = getenv("NTB_SPIN_US");
	ctx->spin_us = spin ? (uint32_t)atoi(spin) : 200;
	ctx->mrs = calloc(NTBV_MAX_MR, sizeof(*ctx->mrs));
	ctx->qps = calloc(NTBV_MAX_QP, sizeof(*ctx->qps));
	ctx->pmaps[0] = calloc(NTBV_MAX_MR, sizeof(*ctx->pmaps[0]));
	ctx->pmaps[1] = calloc(NTBV_MAX_MR, sizeof(*ctx->pmaps[1]));
	pthread_mutex_init(&ctx->pmap_lock, NULL);
	pthread_mutex_init(&ctx->mw_lock, NULL);
	if (ctx->poke_fd < 0 || !ctx->mrs || !ctx->qps || !ctx->pmaps[0] || !ctx->pmaps[1]) {
		ret = ENOMEM;
		goto fail;
	}
	bv_set_ops(bv, &ntb_ctx_ops);
	{
		struct ibv_port_attr pa;

		ctx->gid_tbl_len = bv_query_port(&bv->vctx.context, 1, &pa) ? 1 : pa.gid_tbl_len;
		/* our GIDs: an address handle or a path naming one of them stays on this end */
		for (uint32_t i = 0; i < ctx->gid_tbl_len && i < NTB_GID_TBL_MAX; i++)
			read_gid(ibdev, i, &ctx->gids[i]);
	}
	/*
	 * Without the link the context still opens (queries, PDs, CQs: ibv_devinfo shows the
	 * port down); creating QPs and registering memory try again and fail with the reason.
	 */
	ntb_ensure_attached(ctx);
	return &bv->vctx;
fail:
	if (ctx->poke_fd >= 0)
		close(ctx->poke_fd);
	free(ctx->mrs);
	free(ctx->qps);
	free(ctx->pmaps[0]);
	free(ctx->pmaps[1]);
	bv_close_context(bv);
	errno = ret;
	return NULL;
}

static const struct verbs_match_ent ntb_match_table[] = {
	VERBS_MODALIAS_MATCH(BV_MODALIAS_PREFIX "ntb", NULL),
	{},
};

static const struct verbs_device_ops ntb_dev_ops = {
	.name = BV_PROVIDER_NAME_PREFIX "ntb",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_table = ntb_match_table,
	.alloc_device = bv_alloc_device,
	.uninit_device = bv_uninit_device,
	.alloc_context = ntb_alloc_context,
};

static void __attribute__((constructor)) ntb_register(void)
{
	bv_register_provider(&ntb_dev_ops);
}
