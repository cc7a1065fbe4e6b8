// SPDX-License-Identifier: MIT
/*
 * The cx4 provider: registration and the device context (mlx5_alloc_context's part). A
 * context gets its own UAR page from cx4d (ALLOC_UCONTEXT) and maps it: the CQ arm doorbell
 * and four BlueFlame / send doorbell registers live there. With the model the daemon also
 * hands over the kick page and eventfd that wake the device on a doorbell (cx4_bus.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cx4.h"

int cx4_call(struct ibv_context *ctx, uint16_t op, const void *req, size_t req_len,
	     const int *fds, unsigned int nfds, void *rsp, size_t rsp_len)
{
	struct bv_call call = { .op = op, .req = req, .req_len = req_len, .fds = fds,
				.nfds = nfds, .rsp = rsp, .rsp_max = rsp_len };
	int ret = bv_call(to_bv_context(ctx), &call);

	if (!ret && call.rsp_len != rsp_len)
		ret = EPROTO;
	return ret;
}

void cx4_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond, uint32_t *done, uint32_t n)
{
	pthread_mutex_lock(mutex);
	while (*done < n)
		pthread_cond_wait(cond, mutex);
	pthread_mutex_unlock(mutex);
}

static void cx4_free_context(struct ibv_context *ibctx)
{
	struct cx4_context *ctx = to_cx4_ctx(ibctx);

	if (ctx->uar_page)
		munmap(ctx->uar_page, CX4_UAR_PAGE_SIZE);
	if (ctx->kick.page)
		munmap(ctx->kick.page, sizeof(struct cx4_kick_page));
	if (ctx->kick.efd >= 0)
		close(ctx->kick.efd);
	for (int i = 0; i < CX4_QP_TABLE_SIZE; i++)
		free(ctx->qp_table[i].table);
	pthread_mutex_destroy(&ctx->qp_table_mutex);
	bv_close_context(&ctx->bv);
}

static const struct verbs_context_ops cx4_ctx_ops = {
	.alloc_pd = cx4_alloc_pd,
	.dealloc_pd = cx4_dealloc_pd,
	.reg_mr = cx4_reg_mr,
	.dereg_mr = cx4_dereg_mr,
	.create_cq = cx4_create_cq,
	.create_cq_ex = cx4_create_cq_ex,
	.destroy_cq = cx4_destroy_cq,
	.poll_cq = cx4_poll_cq,
	.req_notify_cq = cx4_arm_cq,
	.cq_event = cx4_cq_event,
	.create_qp = cx4_create_qp,
	.create_qp_ex = cx4_create_qp_ex,
	.modify_qp = cx4_modify_qp,
	.query_qp = cx4_query_qp,
	.destroy_qp = cx4_destroy_qp,
	.post_send = cx4_post_send,
	.post_recv = cx4_post_recv,
	.create_srq = cx4_create_srq,
	.modify_srq = cx4_modify_srq,
	.query_srq = cx4_query_srq,
	.destroy_srq = cx4_destroy_srq,
	.post_srq_recv = cx4_post_srq_recv,
	.create_ah = cx4_create_ah,
	.destroy_ah = cx4_destroy_ah,
	.resize_cq = cx4_resize_cq,
	.rereg_mr = cx4_rereg_mr,
	.query_qp_data_in_order = cx4_query_qp_data_in_order,
	.alloc_mw = cx4_alloc_mw,
	.dealloc_mw = cx4_dealloc_mw,
	.bind_mw = cx4_bind_mw,
	.free_context = cx4_free_context,
};

/*
 * How long an empty ibv_poll_cq spins before it waits for the device (cq.c): CX4_POLL_SPIN_US,
 * default 50 (like the model engine's own spin); 0 spins forever, as a driver of a card does.
 */
static uint64_t poll_spin_ns(void)
{
	const char *v = getenv("CX4_POLL_SPIN_US");
	char *end;
	unsigned long us;

	if (!v || !*v)
		return 50 * 1000;
	us = strtoul(v, &end, 10);
	if (*end || us > 1000000)
		return 50 * 1000;
	return us * 1000;
}

static int map_device(struct cx4_context *ctx, int *fds, unsigned int nfds)
{
	const struct cx4_alloc_ucontext_rsp *c = &ctx->caps;
	size_t bf_reg;

	if (nfds < 1 || ((c->flags & CX4_UCTX_KICK) && nfds < 3))
		return EPROTO;
	ctx->uar_page = mmap(NULL, CX4_UAR_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0],
			     (off_t)c->uar_mmap_offset);
	if (ctx->uar_page == MAP_FAILED) {
		ctx->uar_page = NULL;
		return errno;
	}
	if (c->flags & CX4_UCTX_KICK) {
		ctx->kick.page = mmap(NULL, sizeof(struct cx4_kick_page), PROT_READ | PROT_WRITE,
				      MAP_SHARED, fds[1], 0);
		if (ctx->kick.page == MAP_FAILED) {
			ctx->kick.page = NULL;
			return errno;
		}
		ctx->kick.efd = fds[2];
		fds[2] = -1;
	}
	ctx->uar = (struct cx4_mmio){ .base = ctx->uar_page, .len = CX4_UAR_PAGE_SIZE,
				      .kick = ctx->kick.page ? &ctx->kick : NULL };
	ctx->poll_spin_ns = ctx->kick.page ? poll_spin_ns() : 0;
	bf_reg = (size_t)1 << c->log_bf_reg_size;
	if (c->log_bf_reg_size < 7 || c->log_bf_reg_size > 9)
		return EPROTO;	/* four registers must fit between 0x800 and the page end */
	for (int i = 0; i < CX4_NUM_BF; i++) {
		pthread_spin_init(&ctx->bf[i].lock, PTHREAD_PROCESS_PRIVATE);
		ctx->bf[i].reg = CX4_UAR_BF_OFFSET + i * bf_reg;
		ctx->bf[i].offset = 0;
		ctx->bf[i].buf_size = (c->flags & CX4_UCTX_BF) ? bf_reg / 2 : 0;
	}
	return 0;
}

static struct verbs_context *cx4_alloc_context(struct ibv_device *ibdev, int cmd_fd,
					       void *private_data)
{
	struct cx4_context *ctx;
	int fds[3] = { -1, -1, -1 };
	struct bv_call call = { .op = CX4_OP_ALLOC_UCONTEXT, .rfds = fds, .nrfds = 3 };
	int err;

	ctx = (struct cx4_context *)bv_open_context(ibdev, cmd_fd, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->kick.efd = -1;
	pthread_mutex_init(&ctx->qp_table_mutex, NULL);
	call.rsp = &ctx->caps;
	call.rsp_max = sizeof(ctx->caps);
	err = bv_call(&ctx->bv, &call);
	if (!err && call.rsp_len != sizeof(ctx->caps))
		err = EPROTO;
	if (!err)
		err = map_device(ctx, fds, call.nrfds);
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (err) {
		fprintf(stderr, "bridgeverbs: %s: cannot set up a device context: %s\n",
			ibdev->name, strerror(err));
		cx4_free_context(&ctx->bv.vctx.context);
		errno = err;
		return NULL;
	}
	bv_set_ops(&ctx->bv, &cx4_ctx_ops);
	return &ctx->bv.vctx;
}

static const struct verbs_match_ent cx4_match_table[] = {
	VERBS_MODALIAS_MATCH(BV_MODALIAS_PREFIX "cx4", NULL),
	{},
};

static const struct verbs_device_ops cx4_dev_ops = {
	.name = BV_PROVIDER_NAME_PREFIX "cx4",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_table = cx4_match_table,
	.alloc_device = bv_alloc_device,
	.uninit_device = bv_uninit_device,
	.alloc_context = cx4_alloc_context,
};

static void __attribute__((constructor)) cx4_register(void)
{
	bv_register_provider(&cx4_dev_ops);
}
