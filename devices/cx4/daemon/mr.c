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

#include "bv_umem.h"
#include "cx4d.h"

/* Smallest MTT page (>= 4 KB) for which the region needs at most this many entries. */
#define MTT_MAX_ENTRIES 256
/*
 * The most entries one CREATE_MKEY carries: 512 KB of MTT, 1024 mailboxes; with 1 GB pages a
 * region of 64 TB. Beyond it no client could have pinned the memory (Linux ib_umem_get fails
 * first: EINVAL over 2^32 pages, else ENOMEM or EFAULT); without the bound a client's 64 PB
 * registration made cx4d build a 32 MB command and keep 1 GB of mailbox memory
 * (cx4d_proto_fuzz, tests/fuzz/cx4d/regress/reg-mr-64pb-mailbox-growth).
 */
#define MTT_CMD_MAX_ENTRIES 65536

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

void cx4d_mkey_destroy(struct cx4d *d, uint32_t index)
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

/* ib_check_mr_access(), and the flags we know: 0 or an errno. */
static int access_ok(uint32_t access)
{
	if (access & ~(ACCESS_HONOURED | ACCESS_OPTIONAL | IBV_ACCESS_MW_BIND))
		return EOPNOTSUPP; /* on-demand paging, zero-based, ... */
	/* remote write or atomic needs local write */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

static bool writable(uint32_t access)
{
	return access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
}

/*
 * Map the region for the device and create its key (Linux mlx5_ib_reg_user_mr): fills
 * mr->umem, mkey_index, key, access. fd < 0: the region is reached by pid and address.
 */
static int mr_create(struct cx4d *d, struct cx4d_client *cl, struct cx4d_mr *mr,
		     const struct cx4d_pd *pd, uint32_t access, uint64_t addr, uint64_t length,
		     uint64_t hca_va, int fd, uint64_t fd_off)
{
	uint8_t out[CX4_CREATE_MKEY_OUT_SIZE], *in = NULL, *mkc;
	unsigned int lp;
	uint64_t n, P;
	size_t inlen;
	uint32_t perm, mtt_bits;
	int err;

	if (!length || addr + length < addr || hca_va + length < hca_va)
		return EINVAL;
	err = access_ok(access);
	if (err)
		return err;
	if ((addr ^ hca_va) & (CX4D_PAGE - 1))
		return EINVAL; /* ib_umem_find_best_pgsz() finds no page size either */
	lp = pick_log_page(hca_va, length);
	P = 1ull << lp;
	n = ((hca_va & (P - 1)) + length + P - 1) >> lp;
	if (n > MTT_CMD_MAX_ENTRIES)
		return ENOMEM;
	perm = CX4_DMA_READ;
	mtt_bits = CX4_MTT_READ;
	if (writable(access)) {
		perm |= CX4_DMA_WRITE;
		mtt_bits |= CX4_MTT_WRITE;
	}
	if (fd >= 0 && !object_ok(fd, fd_off, addr, length))
		return EINVAL;
	/* ib_umem_get: pages the client could not have pinned fail it, before anything is made */
	err = bv_umem_check(cl->pid, addr, length, bv_umem_writable(access));
	if (err)
		return err;
	err = cx4d_umem_map_va(d, cl->pid, fd, fd_off, addr, length, hca_va, lp, perm, &mr->umem);
	if (err)
		return err;

	inlen = CX4_CREATE_MKEY_IN_SIZE + ((n + 1) & ~1ull) * 8;
	in = calloc(1, inlen);
	if (!in) {
		err = ENOMEM;
		goto fail;
	}
	mkc = in + CX4_CREATE_MKEY_IN_MKC;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_MKEY, 0);
	cx4_set(mkc, CX4_MKC_ACCESS_MODE_1_0, CX4_MKC_ACCESS_MODE_MTT);
	/* its PD and access may change in place later (ibv_rereg_mr through our UMR QP) */
	cx4_set(mkc, CX4_MKC_UMR_EN, 1);
	cx4_set(mkc, CX4_MKC_LR, 1);
	cx4_set(mkc, CX4_MKC_LW, !!(access & IBV_ACCESS_LOCAL_WRITE));
	cx4_set(mkc, CX4_MKC_RR, !!(access & IBV_ACCESS_REMOTE_READ));
	cx4_set(mkc, CX4_MKC_RW, !!(access & IBV_ACCESS_REMOTE_WRITE));
	cx4_set(mkc, CX4_MKC_A, !!(access & IBV_ACCESS_REMOTE_ATOMIC));
	cx4_set(mkc, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	/* a per-device key byte, so a stale key rarely names a new region (mlx5_ib mkey_key) */
	if (!++d->mkey_key)
		d->mkey_key = 1;
	cx4_set(mkc, CX4_MKC_MKEY_7_0, d->mkey_key);
	cx4_set(mkc, CX4_MKC_PD, pd->pdn);
	cx4_set64(mkc, CX4_MKC_START_ADDR, hca_va);
	cx4_set64(mkc, CX4_MKC_LEN, length);
	cx4_set(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE, (uint32_t)((n + 1) / 2));
	cx4_set(mkc, CX4_MKC_LOG_PAGE_SIZE, lp);
	cx4_set(in, CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE, (uint32_t)((n + 1) / 2));
	for (uint64_t i = 0; i < n; i++)
		cx4_pas_set(in, CX4_CREATE_MKEY_IN_KLM_PAS_MTT, i,
			    (mr->umem.iova + (i << lp)) | mtt_bits);
	err = cx4d_cmd(d, in, inlen, out, sizeof(out));
	free(in);
	if (err)
		goto fail;
	mr->mkey_index = cx4_get(out, CX4_CREATE_MKEY_OUT_MKEY_INDEX);
	mr->key = mr->mkey_index << 8 | d->mkey_key;
	mr->access = access;
	return 0;
fail:
	cx4d_umem_unmap(d, &mr->umem);
	return err;
}

int cx4d_mr_reg(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_reg_mr_req *req = q->in;
	struct cx4_reg_mr_rsp *rsp = q->r->payload;
	struct cx4d_pd *pd;
	struct cx4d_mr *mr;
	int err;

	if (q->len != sizeof(*req))
		return EINVAL;
	pd = cx4d_obj_get(cl, req->pd_handle, CX4D_OBJ_PD);
	if (!pd)
		return EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return ENOMEM;
	err = mr_create(d, cl, mr, pd, req->access, req->addr, req->length, req->hca_va,
			q->nfds ? q->fds[0] : -1, req->fd_off);
	if (err) {
		free(mr);
		return err;
	}
	mr->pd = pd;
	err = cx4d_obj_add(cl, &mr->o, CX4D_OBJ_MR);
	if (err) {
		cx4d_mkey_destroy(d, mr->mkey_index);
		cx4d_umem_unmap(d, &mr->umem);
		free(mr);
		return err;
	}
	pd->o.users++;
	rsp->handle = mr->o.handle;
	rsp->lkey = rsp->rkey = mr->key;
	rsp->reserved = 0;
	q->r->len = sizeof(*rsp);
	return 0;
}

/*
 * ibv_rereg_mr (Linux mlx5_ib_rereg_user_mr). Without a new translation the key changes in
 * place: a UMR WQE on our UMR QP gives it the new PD and access (mlx5r_umr_rereg_pd_access),
 * lkey and rkey stay; a region mapped read-only cannot become writable that way (EPERM, as
 * Linux says for a umem pinned without write). A new translation registers the region anew
 * (create_real_mr / mlx5_ib_reg_user_mr): a new key replaces the old one, which is destroyed.
 */
int cx4d_mr_rereg(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_rereg_mr_req *req = q->in;
	struct cx4_rereg_mr_rsp *rsp = q->r->payload;
	struct cx4d_mr *mr, nmr;
	struct cx4d_pd *pd;
	uint32_t access;
	int err;

	if (q->len != sizeof(*req))
		return EINVAL;
	mr = cx4d_obj_get(cl, req->handle, CX4D_OBJ_MR);
	if (!mr)
		return EINVAL;
	if (req->flags & ~(uint32_t)(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
				     IBV_REREG_MR_CHANGE_ACCESS))
		return EOPNOTSUPP;
	pd = (req->flags & IBV_REREG_MR_CHANGE_PD) ? cx4d_obj_get(cl, req->pd_handle, CX4D_OBJ_PD)
						   : mr->pd;
	if (!pd)
		return EINVAL;
	access = (req->flags & IBV_REREG_MR_CHANGE_ACCESS) ? req->access : mr->access;
	err = access_ok(access);
	if (err)
		return err;
	if (!(req->flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		if (writable(access) && !writable(mr->access))
			return EPERM;
		err = cx4d_umr_rereg_pd_access(d, mr->key, pd->pdn, access);
		if (err)
			return err;
	} else {
		if (q->nfds > 1)
			return EINVAL;
		memset(&nmr, 0, sizeof(nmr));
		err = mr_create(d, cl, &nmr, pd, access, req->addr, req->length, req->hca_va,
				q->nfds ? q->fds[0] : -1, req->fd_off);
		if (err)
			return err;
		cx4d_mkey_destroy(d, mr->mkey_index);
		cx4d_umem_unmap(d, &mr->umem);
		mr->umem = nmr.umem;
		mr->mkey_index = nmr.mkey_index;
		mr->key = nmr.key;
	}
	mr->access = access;
	if (pd != mr->pd) {
		mr->pd->o.users--;
		pd->o.users++;
		mr->pd = pd;
	}
	rsp->lkey = rsp->rkey = mr->key;
	q->r->len = sizeof(*rsp);
	return 0;
}

void cx4d_mr_destroy(struct cx4d *d, struct cx4d_mr *mr)
{
	cx4d_mkey_destroy(d, mr->mkey_index);
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
