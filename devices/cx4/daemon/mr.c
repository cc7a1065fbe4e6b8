// SPDX-License-Identifier: MIT
/*
 * Memory regions: the client's memory mapped for DMA (pid + VA or its memfd, see umem.c) and a
 * memory key translating the registered addresses to it (CREATE_MKEY in MTT mode, as Linux
 * mlx5_ib_reg_user_mr and rdma-core mlx5_vfio reg_mr do):
 *
 *   mkc: access_mode MTT, lr always, lw/rr/rw/a from the access flags, qpn 0xFFFFFF (any QP),
 *        mkey_7_0 a per-device key byte, pd, start_addr = the address verbs hands out,
 *        len, log_page_size = the MTT page size, translations_octword_size = (n + 1) / 2
 *   MTT: n big-endian IOVAs of the pages, bit 0 read / bit 1 write enable.
 *
 * lkey = rkey = mkey_index << 8 | mkey_7_0. The device checks pd, bounds and access rights on
 * every use; the bus checks the IOVA mapping and its permission.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <infiniband/verbs.h>

#include "cx4d.h"

/* Smallest MTT page (>= 4 KB) for which the region needs at most this many entries. */
#define MTT_MAX_ENTRIES 256

static unsigned int pick_log_page(uint64_t hca_va, uint64_t len)
{
	unsigned int lp = 12;

	while (lp < 30) {
		uint64_t P = 1ull << lp;
		uint64_t n = ((hca_va & (P - 1)) + len + P - 1) >> lp;

		if (n <= MTT_MAX_ENTRIES)
			break;
		lp++;
	}
	return lp;
}

static void destroy_mkey(struct cx4d *d, uint32_t index)
{
	uint8_t in[CX4_DESTROY_MKEY_IN_SIZE] = {0}, out[CX4_DESTROY_MKEY_OUT_SIZE];

	if (d->dead)
		return;
	cx4d_cmd_set_header(in, CX4_CMD_OP_DESTROY_MKEY, 0);
	cx4_set(in, CX4_DESTROY_MKEY_IN_MKEY_INDEX, index);
	cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

/* IBV_ACCESS_* bits the device honours, and the ones verbs lets a device ignore. */
#define ACCESS_HONOURED                                                              \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC)
#define ACCESS_OPTIONAL (IBV_ACCESS_RELAXED_ORDERING | (0x3ffu << 20))

/* A memfd standing for the region's pages must hold them all (cx4d_umem_fd_ok). */
static bool object_ok(int fd, uint64_t off, uint64_t addr, uint64_t len)
{
	uint64_t span = ((addr + len + CX4D_PAGE - 1) & ~(uint64_t)(CX4D_PAGE - 1)) -
			(addr & ~(uint64_t)(CX4D_PAGE - 1));

	return cx4d_umem_fd_ok(fd, off, span);
}

int cx4d_mr_reg(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_reg_mr_req *req = q->in;
	struct cx4_reg_mr_rsp *rsp = q->r->payload;
	uint8_t out[CX4_CREATE_MKEY_OUT_SIZE], *in = NULL, *mkc;
	struct cx4d_pd *pd;
	struct cx4d_mr *mr;
	unsigned int lp;
	uint64_t n, P;
	size_t inlen;
	uint32_t perm, mtt_bits;
	int err;

	if (q->len != sizeof(*req))
		return EINVAL;
	pd = cx4d_obj_get(cl, req->pd_handle, CX4D_OBJ_PD);
	if (!pd || !req->length || req->addr + req->length < req->addr ||
	    req->hca_va + req->length < req->hca_va)
		return EINVAL;
	if (req->access & ~(ACCESS_HONOURED | ACCESS_OPTIONAL | IBV_ACCESS_MW_BIND))
		return EOPNOTSUPP; /* on-demand paging, zero-based, ... */
	/* ib_check_mr_access(): remote write or atomic needs local write */
	if ((req->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(req->access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if ((req->addr ^ req->hca_va) & (CX4D_PAGE - 1))
		return EINVAL; /* ib_umem_find_best_pgsz() finds no page size either */

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return ENOMEM;
	lp = pick_log_page(req->hca_va, req->length);
	P = 1ull << lp;
	n = ((req->hca_va & (P - 1)) + req->length + P - 1) >> lp;
	perm = CX4_DMA_READ;
	mtt_bits = CX4_MTT_READ;
	if (req->access &
	    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) {
		perm |= CX4_DMA_WRITE;
		mtt_bits |= CX4_MTT_WRITE;
	}
	if (q->nfds && !object_ok(q->fds[0], req->fd_off, req->addr, req->length)) {
		err = EINVAL;
		goto fail;
	}
	err = cx4d_umem_map_va(d, cl->pid, q->nfds ? q->fds[0] : -1, req->fd_off, req->addr,
			       req->length, req->hca_va, lp, perm, &mr->umem);
	if (err)
		goto fail;

	inlen = CX4_CREATE_MKEY_IN_SIZE + ((n + 1) & ~1ull) * 8;
	in = calloc(1, inlen);
	if (!in) {
		err = ENOMEM;
		goto fail;
	}
	mkc = in + CX4_CREATE_MKEY_IN_MKC;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_MKEY, 0);
	cx4_set(mkc, CX4_MKC_ACCESS_MODE_1_0, CX4_MKC_ACCESS_MODE_MTT);
	cx4_set(mkc, CX4_MKC_LR, 1);
	cx4_set(mkc, CX4_MKC_LW, !!(req->access & IBV_ACCESS_LOCAL_WRITE));
	cx4_set(mkc, CX4_MKC_RR, !!(req->access & IBV_ACCESS_REMOTE_READ));
	cx4_set(mkc, CX4_MKC_RW, !!(req->access & IBV_ACCESS_REMOTE_WRITE));
	cx4_set(mkc, CX4_MKC_A, !!(req->access & IBV_ACCESS_REMOTE_ATOMIC));
	cx4_set(mkc, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	/* a per-device key byte, so a stale key rarely names a new region (mlx5_ib mkey_key) */
	if (!++d->mkey_key)
		d->mkey_key = 1;
	cx4_set(mkc, CX4_MKC_MKEY_7_0, d->mkey_key);
	cx4_set(mkc, CX4_MKC_PD, pd->pdn);
	cx4_set64(mkc, CX4_MKC_START_ADDR, req->hca_va);
	cx4_set64(mkc, CX4_MKC_LEN, req->length);
	cx4_set(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE, (uint32_t)((n + 1) / 2));
	cx4_set(mkc, CX4_MKC_LOG_PAGE_SIZE, lp);
	cx4_set(in, CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE, (uint32_t)((n + 1) / 2));
	for (uint64_t i = 0; i < n; i++)
		cx4_pas_set(in, CX4_CREATE_MKEY_IN_KLM_PAS_MTT, i,
			    (mr->umem.iova + (i << lp)) | mtt_bits);
	err = cx4d_cmd(d, in, inlen, out, sizeof(out));
	if (err)
		goto fail;
	mr->mkey_index = cx4_get(out, CX4_CREATE_MKEY_OUT_MKEY_INDEX);
	mr->key = mr->mkey_index << 8 | d->mkey_key;
	mr->pd = pd;
	err = cx4d_obj_add(cl, &mr->o, CX4D_OBJ_MR);
	if (err) {
		destroy_mkey(d, mr->mkey_index);
		goto fail;
	}
	pd->o.users++;
	free(in);
	rsp->handle = mr->o.handle;
	rsp->lkey = rsp->rkey = mr->key;
	rsp->reserved = 0;
	q->r->len = sizeof(*rsp);
	return 0;
fail:
	free(in);
	cx4d_umem_unmap(d, &mr->umem);
	free(mr);
	return err;
}

void cx4d_mr_destroy(struct cx4d *d, struct cx4d_mr *mr)
{
	destroy_mkey(d, mr->mkey_index);
	cx4d_umem_unmap(d, &mr->umem);
	mr->pd->o.users--;
	cx4d_obj_remove(mr->o.owner, &mr->o);
	free(mr);
}

int cx4d_mr_dereg(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_handle_req *req = q->in;
	struct cx4d_mr *mr;

	if (q->len != sizeof(*req))
		return EINVAL;
	mr = cx4d_obj_get(cl, req->handle, CX4D_OBJ_MR);
	if (!mr)
		return EINVAL;
	cx4d_mr_destroy(d, mr);
	return 0;
}
