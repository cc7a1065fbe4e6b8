// SPDX-License-Identifier: MIT
/* Protection domains and memory regions: control verbs answered by cx4d. */
#include <errno.h>
#include <stdlib.h>

#include "cx4.h"

struct ibv_pd *cx4_alloc_pd(struct ibv_context *ctx)
{
	struct cx4_alloc_pd_rsp rsp;
	struct cx4_pd *pd = calloc(1, sizeof(*pd));
	int err;

	if (!pd)
		return NULL;
	err = cx4_call(ctx, CX4_OP_ALLOC_PD, NULL, 0, NULL, 0, &rsp, sizeof(rsp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	pd->ibv_pd.handle = rsp.handle;
	pd->pdn = rsp.pdn;
	return &pd->ibv_pd;
}

int cx4_dealloc_pd(struct ibv_pd *ibpd)
{
	struct cx4_handle_req req = {.handle = ibpd->handle};
	int err = cx4_call(ibpd->context, CX4_OP_DEALLOC_PD, &req, sizeof(req), NULL, 0, NULL, 0);

	if (err)
		return err;
	free(to_cx4_pd(ibpd));
	return 0;
}

/*
 * Registered memory is moved into a memfd the device maps (bv_shadow.c), as a card reaches
 * pinned pages through its IOMMU. CX4_SHADOW=0 keeps every region mapped by pid and address
 * instead (process_vm_readv/writev per transfer: slower, but the pages stay private).
 */
static bool shadow_enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("CX4_SHADOW");

		on = !e || *e != '0';
	}
	return on;
}

struct ibv_mr *cx4_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access)
{
	struct cx4_reg_mr_req req = {.pd_handle = pd->handle,
				     .access = (uint32_t)access,
				     .addr = (uintptr_t)addr,
				     .length = length,
				     .hca_va = hca_va};
	struct cx4_reg_mr_rsp rsp;
	struct cx4_mr *mr = calloc(1, sizeof(*mr));
	int err, fd = -1;

	if (!mr)
		return NULL;
	/*
	 * Share the pages with the device (a card reaches them through its IOMMU, no system call
	 * per transfer); where they cannot be moved, cx4d maps them by pid and address instead.
	 */
	mr->shadow = shadow_enabled() && !bv_shadow_get(req.addr, length, &fd, &req.fd_off);
	err = cx4_call(pd->context, CX4_OP_REG_MR, &req, sizeof(req), mr->shadow ? &fd : NULL,
		       mr->shadow ? 1 : 0, &rsp, sizeof(rsp));
	if (err) {
		if (mr->shadow)
			bv_shadow_put(req.addr, length);
		free(mr);
		errno = err;
		return NULL;
	}
	mr->vmr.ibv_mr.handle = rsp.handle;
	mr->vmr.ibv_mr.lkey = rsp.lkey;
	mr->vmr.ibv_mr.rkey = rsp.rkey;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = access;
	/* the ibv_mr is mr's first member: cx4_dereg_mr frees mr through it */
	// cppcheck-suppress memleak
	return &mr->vmr.ibv_mr;
}

/*
 * ibv_rereg_mr: a new PD or access changes the key in place (cx4d's UMR QP: the keys stay); a
 * new translation registers the new range (new keys) and lets the old one go. libibverbs
 * updates addr, length and pd of the ibv_mr after us.
 */
int cx4_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	struct cx4_mr *mr = (struct cx4_mr *)vmr;
	struct cx4_rereg_mr_req req = {.handle = vmr->ibv_mr.handle,
				       .flags = (uint32_t)flags,
				       .pd_handle = pd ? pd->handle : 0,
				       .access = (uint32_t)access,
				       .addr = (uintptr_t)addr,
				       .length = length,
				       .hca_va = (uintptr_t)addr};
	struct cx4_rereg_mr_rsp rsp;
	bool trans = flags & IBV_REREG_MR_CHANGE_TRANSLATION, shadow = false;
	int err, fd = -1;

	if ((flags & IBV_REREG_MR_CHANGE_PD) && (!pd || pd->context != vmr->ibv_mr.context))
		return EINVAL;
	if (trans)
		shadow = shadow_enabled() && !bv_shadow_get(req.addr, length, &fd, &req.fd_off);
	err = cx4_call(vmr->ibv_mr.context, CX4_OP_REREG_MR, &req, sizeof(req), shadow ? &fd : NULL,
		       shadow ? 1 : 0, &rsp, sizeof(rsp));
	if (err) {
		if (shadow)
			bv_shadow_put(req.addr, length);
		errno = err;
		return err;
	}
	if (trans) {
		if (mr->shadow)
			bv_shadow_put((uintptr_t)vmr->ibv_mr.addr, vmr->ibv_mr.length);
		mr->shadow = shadow;
	}
	vmr->ibv_mr.lkey = rsp.lkey;
	vmr->ibv_mr.rkey = rsp.rkey;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		vmr->access = access;
	return 0;
}

int cx4_dereg_mr(struct verbs_mr *vmr)
{
	struct cx4_handle_req req = {.handle = vmr->ibv_mr.handle};
	int err =
	    cx4_call(vmr->ibv_mr.context, CX4_OP_DEREG_MR, &req, sizeof(req), NULL, 0, NULL, 0);

	if (err)
		return err;
	/* the device no longer maps the memfd: the pages may go back to private memory */
	if (((struct cx4_mr *)vmr)->shadow)
		bv_shadow_put((uintptr_t)vmr->ibv_mr.addr, vmr->ibv_mr.length);
	free(vmr);
	return 0;
}
