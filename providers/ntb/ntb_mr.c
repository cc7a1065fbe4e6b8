// SPDX-License-Identifier: MIT
/*
 * Memory regions. ntbd allocates the keys for the link end and, for regions with remote access,
 * maps the memory at an IOVA of the end's IOMMU aperture (the role of umem pinning: the peer's
 * DMA reaches it there) and publishes the key to the peer end, whose requesters check key,
 * range and rights before they place anything. Locally the data path checks lkeys against a
 * table indexed by key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bv_umem.h"
#include "ntb.h"

void ntb_slot_write(struct ntb_mr_slot *s, const struct ntb_mr_slot *v)
{
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);

	atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	s->lkey = v->lkey;
	s->rkey = v->rkey;
	s->pd = v->pd;
	s->access = v->access;
	s->addr = v->addr;
	s->hca_va = v->hca_va;
	s->length = v->length;
	s->mw_type = v->mw_type;
	s->mw_qpn = v->mw_qpn;
	s->parent = v->parent;
	s->parent_seq = v->parent_seq;
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

static bool lookup(struct ntb_context *ctx, uint32_t key, bool remote, struct ntb_mr_slot *out,
		   uint32_t *seqp)
{
	uint32_t idx = NTBV_KEY_INDEX(key);
	struct ntb_mr_slot *s;

	if (!idx || idx >= NTBV_MAX_MR)
		return false;
	s = &ctx->mrs[idx];
	for (;;) {
		uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);

		if (seq & 1) {
			ntb_cpu_relax();
			continue;
		}
		out->lkey = s->lkey;
		out->rkey = s->rkey;
		out->pd = s->pd;
		out->access = s->access;
		out->addr = s->addr;
		out->hca_va = s->hca_va;
		out->length = s->length;
		out->mw_type = s->mw_type;
		out->mw_qpn = s->mw_qpn;
		out->parent = s->parent;
		out->parent_seq = s->parent_seq;
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&s->seq, memory_order_relaxed) == seq) {
			*seqp = seq;
			break;
		}
	}
	if (!out->lkey)
		return false;
	if (!remote && out->mw_type)
		return false;	/* a window's key is no lkey */
	return remote ? out->rkey && out->rkey == key : out->lkey == key;
}

bool ntb_mr_lookup_seq(struct ntb_context *ctx, uint32_t key, bool remote,
		       struct ntb_mr_slot *out, uint32_t *seq)
{
	return lookup(ctx, key, remote, out, seq);
}

bool ntb_mr_lookup(struct ntb_context *ctx, uint32_t key, bool remote, struct ntb_mr_slot *out)
{
	uint32_t seq;

	return lookup(ctx, key, remote, out, &seq);
}

/* NTB_PIO=0: no region is shared with the peer's CPU (every remote write is a DMA). */
bool ntb_pio_enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("NTB_PIO");

		on = !e || *e != '0';
	}
	return on;
}

/* MW_BIND: windows may be bound to the region (ntb_mw.c). */
#define KNOWN_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_MW_BIND)

static bool access_ok(int access)
{
	/* IBTA 10.6.3.1 (o10-29): remote write or atomic access needs local write */
	return !(access & ~KNOWN_ACCESS) &&
	       (!(access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) ||
		(access & IBV_ACCESS_LOCAL_WRITE));
}

/* A new key for addr .. addr + length in PD pd, filled into mr (its keys, index, shadow). */
static int mr_register(struct ntb_context *ctx, uint32_t pd, uint64_t addr, uint64_t length,
		       uint64_t hca_va, int access, struct ntb_mr *mr)
{
	struct ntb_reg_mr_req req = { .pd = pd, .access = access, .addr = addr,
				      .length = length, .hca_va = hca_va };
	struct ntb_reg_mr_rsp rsp = { 0 };
	struct ntb_mr_slot v;
	int ret, fd = -1;
	bool shadow = false;

	/*
	 * ib_umem_get: pages the process could not have pinned fail it, before anything is made.
	 * Checked here, in the client's own process: ntbd runs without the right to read another
	 * user's mappings, and reaches the memory only through what this provider gives it.
	 */
	ret = bv_umem_check(getpid(), addr, length, bv_umem_writable((uint32_t)access));
	if (ret)
		return ret;
	/* remotely writable: let the peer's CPU reach the pages too (providers/common/bv_shadow.c)
	 */
	if ((access & IBV_ACCESS_REMOTE_WRITE) && ntb_pio_enabled() &&
	    !bv_shadow_get(addr, length, &fd, &req.fd_off))
		shadow = true;
	{
		struct bv_call call = { .op = NTB_OP_REG_MR, .req = &req, .req_len = sizeof(req),
					.fds = shadow ? &fd : NULL, .nfds = shadow ? 1 : 0,
					.rsp = &rsp, .rsp_max = sizeof(rsp) };

		ret = bv_call(&ctx->bv, &call);
		if (!ret && call.rsp_len != sizeof(rsp))
			ret = EPROTO;
	}
	if (!ret && (!NTBV_KEY_INDEX(rsp.lkey) || NTBV_KEY_INDEX(rsp.lkey) >= NTBV_MAX_MR ||
		     (rsp.rkey && rsp.rkey != rsp.lkey)))
		ret = EPROTO;
	if (ret) {
		if (shadow)
			bv_shadow_put(addr, length);
		return ret;
	}
	mr->shadow = shadow;
	mr->index = NTBV_KEY_INDEX(rsp.lkey);
	mr->addr = addr;
	mr->length = length;
	mr->hca_va = hca_va;
	mr->vmr.ibv_mr.lkey = rsp.lkey;
	mr->vmr.ibv_mr.rkey = rsp.rkey ? rsp.rkey : rsp.lkey;
	mr->vmr.ibv_mr.handle = rsp.lkey;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = access;
	v = (struct ntb_mr_slot){ .lkey = rsp.lkey, .rkey = rsp.rkey, .pd = pd, .access = access,
				  .addr = addr, .hca_va = hca_va, .length = length };
	ntb_slot_write(&ctx->mrs[mr->index], &v);
	return 0;
}

/* Take mr's key away: locally first, then from ntbd (and the peer); its pages go back. */
static int mr_release(struct ntb_context *ctx, struct ntb_mr *mr)
{
	struct ntb_handle_req req = { .handle = mr->vmr.ibv_mr.lkey };
	struct ntb_mr_slot none = { 0 };
	int ret;

	/*
	 * Local users stop seeing the key first; ntbd then unpublishes it and unmaps the IOMMU
	 * range, which returns only once no peer DMA can still land in it.
	 */
	ntb_slot_write(&ctx->mrs[mr->index], &none);
	ret = ntb_call(ctx, NTB_OP_DEREG_MR, &req, sizeof(req), NULL, 0);
	/*
	 * ENODEV: ntbd is gone, and its IOMMU with it (the peer's model dropped the link):
	 * nothing can reach the region any more, as after a device's removal.
	 */
	if (ret && ret != ENOENT && ret != ENODEV)
		return ret;
	/* no peer can reach the pages any more: give them back their private backing */
	if (mr->shadow)
		bv_shadow_put(mr->addr, mr->length);
	mr->shadow = false;
	return 0;
}

struct ibv_mr *ntb_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t hca_va,
			  int access)
{
	struct ntb_context *ctx = to_ntb_ctx(ibpd->context);
	struct ntb_mr *mr;
	int ret;

	if (!access_ok(access) || !length || (uintptr_t)addr + length < (uintptr_t)addr) {
		errno = EINVAL;
		return NULL;
	}
	ret = ntb_ensure_attached(ctx);
	if (ret) {
		errno = ret;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = mr_register(ctx, to_ntb_pd(ibpd)->handle, (uintptr_t)addr, length, hca_va, access,
			  mr);
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	/* the ibv_mr is the start of struct ntb_mr (vmr first, ibv_mr first in it) */
	return (struct ibv_mr *)mr;
}

int ntb_dereg_mr(struct verbs_mr *vmr)
{
	struct ntb_mr *mr = (struct ntb_mr *)vmr;
	int ret = mr_release(to_ntb_ctx(vmr->ibv_mr.context), mr);

	if (ret)
		return ret;
	free(mr);
	return 0;
}

/*
 * ibv_rereg_mr: the region's new translation, PD or access under the same keys (ntbd remaps it
 * in place, as a ConnectX updates its mkey). Refused (IBV_REREG_MR_ERR_INPUT or _CMD, errno
 * set) before anything changed, the region stays as it was.
 */
int ntb_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *ibpd, void *addr, size_t length,
		 int access)
{
	struct ntb_context *ctx = to_ntb_ctx(vmr->ibv_mr.context);
	struct ntb_mr *mr = (struct ntb_mr *)vmr;
	struct ntb_rereg_mr_req req = { .lkey = vmr->ibv_mr.lkey };
	struct ntb_reg_mr_rsp rsp = { 0 };
	struct ntb_mr_slot v;
	uint32_t pd = to_ntb_pd((flags & IBV_REREG_MR_CHANGE_PD) ? ibpd : vmr->ibv_mr.pd)->handle;
	uint64_t a = mr->addr, len = mr->length, iova = mr->hca_va;
	bool shadow = false;
	int ret, fd = -1;

	if (flags & ~(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
		      IBV_REREG_MR_CHANGE_ACCESS)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		a = (uintptr_t)addr;
		len = length;
		iova = a;
	}
	if (!(flags & IBV_REREG_MR_CHANGE_ACCESS))
		access = vmr->access;
	if (!access_ok(access) || !len || a + len < a ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && (!ibpd || ibpd->context != vmr->ibv_mr.context))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	ret = ntb_ensure_attached(ctx);
	if (ret) {
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	/* the new translation is pinned before the old one goes (ib_umem_get in rereg_user_mr) */
	ret = bv_umem_check(getpid(), a, len, bv_umem_writable((uint32_t)access));
	if (ret) {
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	req.mr = (struct ntb_reg_mr_req){ .pd = pd, .access = access, .addr = a, .length = len,
					  .hca_va = iova };
	/* the new pages in a memfd first (the same pages: one more reference to it) */
	if ((access & IBV_ACCESS_REMOTE_WRITE) && ntb_pio_enabled() &&
	    !bv_shadow_get(a, len, &fd, &req.mr.fd_off))
		shadow = true;
	{
		struct bv_call call = { .op = NTB_OP_REREG_MR, .req = &req, .req_len = sizeof(req),
					.fds = shadow ? &fd : NULL, .nfds = shadow ? 1 : 0,
					.rsp = &rsp, .rsp_max = sizeof(rsp) };

		ret = bv_call(&ctx->bv, &call);
		if (!ret && (call.rsp_len != sizeof(rsp) || rsp.lkey != vmr->ibv_mr.lkey ||
			     (rsp.rkey && rsp.rkey != rsp.lkey)))
			ret = EPROTO;
	}
	if (ret) {
		if (shadow)
			bv_shadow_put(a, len);
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	/* no peer can reach the old pages any more (ntbd unmapped them): their backing goes */
	if (mr->shadow)
		bv_shadow_put(mr->addr, mr->length);
	mr->shadow = shadow;
	mr->addr = a;
	mr->length = len;
	mr->hca_va = iova;
	vmr->access = access;
	v = (struct ntb_mr_slot){ .lkey = rsp.lkey, .rkey = rsp.rkey, .pd = pd, .access = access,
				  .addr = a, .hca_va = iova, .length = len };
	ntb_slot_write(&ctx->mrs[mr->index], &v);
	/* the rkey stays the key (ibv_mr's rkey is the lkey where there is no remote access) */
	return 0;
}

enum ibv_wc_status ntb_check_sges(struct ntb_context *ctx, uint32_t pd, const struct ibv_sge *sg,
				  uint32_t num_sge, uint32_t access, struct ntb_key_cache *kc)
{
	for (uint32_t i = 0; i < num_sge; i++) {
		struct ntb_mr_slot m;
		uint32_t idx = NTBV_KEY_INDEX(sg[i].lkey), seq;
		bool ok;

		if (!sg[i].length)
			continue;
		/* the same key as last time, its slot untouched since: no need to look again */
		if (kc && kc->key == sg[i].lkey && idx && idx < NTBV_MAX_MR &&
		    atomic_load_explicit(&ctx->mrs[idx].seq, memory_order_acquire) == kc->seq) {
			m = kc->slot;
			ok = true;
		} else {
			ok = lookup(ctx, sg[i].lkey, false, &m, &seq);
			if (ok && kc) {
				kc->key = sg[i].lkey;
				kc->seq = seq;
				kc->slot = m;
			}
		}
		if (!ok || m.pd != pd || sg[i].addr < m.addr ||
		    sg[i].addr + sg[i].length > m.addr + m.length ||
		    sg[i].addr + sg[i].length < sg[i].addr || (m.access & access) != access)
			return IBV_WC_LOC_PROT_ERR;
	}
	return IBV_WC_SUCCESS;
}

uint64_t ntb_sg_total(const struct ibv_sge *sg, uint32_t num_sge)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < num_sge; i++)
		n += sg[i].length;
	return n;
}

void ntb_sg_copy_in(const struct ibv_sge *sg, uint32_t num_sge, uint32_t off, const void *src,
		    uint32_t len)
{
	const uint8_t *s = src;

	for (uint32_t i = 0; i < num_sge && len; i++) {
		uint32_t n;

		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		n = sg[i].length - off;
		if (n > len)
			n = len;
		memcpy((uint8_t *)(uintptr_t)sg[i].addr + off, s, n);
		s += n;
		len -= n;
		off = 0;
	}
}

void ntb_sg_copy_out(void *dst, const struct ibv_sge *sg, uint32_t num_sge, uint32_t off,
		     uint32_t len)
{
	uint8_t *d = dst;

	for (uint32_t i = 0; i < num_sge && len; i++) {
		uint32_t n;

		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		n = sg[i].length - off;
		if (n > len)
			n = len;
		memcpy(d, (const uint8_t *)(uintptr_t)sg[i].addr + off, n);
		d += n;
		len -= n;
		off = 0;
	}
}
