// SPDX-License-Identifier: MIT
/*
 * Protection domains and memory regions. A region registered with remote write access is
 * mapped at an IOVA of the aperture (the part of our inbound window 0 after the control
 * region), with the owning process's pid and address: the peer's DMA engine then reaches it
 * through the window, the IOMMU faulting anything outside it (the kernel's umem pinning plus
 * IOMMU mapping, in the model). Regions with any remote access are published to the peer end,
 * whose requesters check key, range, rights and PD before they send or place anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <infiniband/verbs.h>

#include "verbs.h"

#define REMOTE_ANY (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
/* published: checked by the peer's requesters, or a sink its responders push READ data into */
#define PUBLISHED (REMOTE_ANY | IBV_ACCESS_LOCAL_WRITE)

/* ---- protection domains ------------------------------------------------------------------------ */

bool nv_pd_owned(struct nv_state *s, struct nv_client *cl, uint32_t pd)
{
	return s->pds && pd && pd < NV_MAX_PD && s->pds[pd].owner == cl;
}

void nv_alloc_pd(struct nv_state *s, struct nv_client *cl, struct bvd_reply *r)
{
	struct ntb_handle_rsp *rsp = r->payload;

	for (uint32_t n = 0; s->pds && n < NV_MAX_PD - 1; n++) {
		uint32_t pd = 1 + (s->next_pd + n) % (NV_MAX_PD - 1);

		if (s->pds[pd].owner)
			continue;
		s->pds[pd] = (struct nv_pd){ .owner = cl };
		s->next_pd = pd;
		cl->npds++;
		memset(rsp, 0, sizeof(*rsp));
		rsp->handle = pd;
		r->len = sizeof(*rsp);
		return;
	}
	r->status = ENOMEM;
}

void nv_dealloc_pd(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		   struct bvd_reply *r)
{
	const struct ntb_handle_req *req = in;

	if (len != sizeof(*req)) {
		r->status = EINVAL;
		return;
	}
	if (!nv_pd_owned(s, cl, req->handle)) {
		r->status = ENOENT;
		return;
	}
	if (s->pds[req->handle].users) {
		r->status = EBUSY;	/* IB: MRs or QPs still use it */
		return;
	}
	s->pds[req->handle] = (struct nv_pd){ 0 };
	cl->npds--;
}

/* ---- memory regions ------------------------------------------------------------------------------ */

/* The region's aperture range goes: once no peer DMA can still write it. */
static void mr_unmap(struct nv_state *s, struct nv_mr *m)
{
	if (m->ap_len) {
		/* returns once no peer DMA can still write the range (IOTLB invalidation) */
		int ret = ntb_iommu_unmap(s->n->ntb, s->n->link.win_iova + m->ap_off, m->ap_len);

		if (ret)
			bvd_log(s->n->d, "iommu unmap of key 0x%x: %s", m->key, strerror(-ret));
		nv_pool_free(&s->aperture, m->ap_off, m->ap_len);
	}
	m->ap_len = 0;
	m->win_off = NTBV_NO_WINDOW;
}

static void mr_release(struct nv_state *s, uint32_t idx)
{
	struct nv_mr *m = &s->mrs[idx];
	bool published = m->access & PUBLISHED;

	mr_unmap(s, m);
	if (m->pd < NV_MAX_PD && s->pds && s->pds[m->pd].users)
		s->pds[m->pd].users--;
	m->owner->nmrs--;
	m->owner = NULL;
	if (published && s->ready)
		nv_publish_mr(s, idx);
	m->access = 0;
	m->mw = 0;
}

/*
 * A memory object a client hands over for the peer's CPU to map (PIO) must stay at least as
 * large as the region: a store into a page past its end kills the storing process with
 * SIGBUS, and that process is the peer's application. The provider's memfds are sealed
 * against shrinking (ntb_shadow.c); anything else - a pipe, a socket, a file or memfd that
 * may shrink, one too small for the region - is refused.
 */
/* Bytes of the whole pages addr .. addr + len touches. */
static uint64_t page_span(uint64_t addr, uint64_t len)
{
	uint64_t mask = NTB_PAGE_SIZE - 1;

	return ((addr + len + mask) & ~mask) - (addr & ~mask);
}

static bool object_ok(int fd, uint64_t off, uint64_t len)
{
	int seals = fcntl(fd, F_GET_SEALS);
	struct stat st;

	return seals >= 0 && (seals & F_SEAL_SHRINK) && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	       off + len > off && st.st_size >= 0 && (uint64_t)st.st_size >= off + len;
}

/*
 * Writable memory is mapped for the peer's DMA (and PIO, when it is a memfd): remote writes of
 * its requesters, READ data its responders push. Best effort: without aperture or IOMMU room
 * the data travels in ring messages instead.
 */
static void mr_map(struct nv_state *s, struct nv_client *cl, struct nv_mr *m,
		   const struct ntb_reg_mr_req *req, const int *fds, unsigned int nfds)
{
	static unsigned int unmapped;
	uint64_t start = req->addr & ~(uint64_t)(NTB_PAGE_SIZE - 1);
	uint64_t end = (req->addr + req->length + NTB_PAGE_SIZE - 1) &
		       ~(uint64_t)(NTB_PAGE_SIZE - 1);
	/*
	 * Process memory, reached by the peer's DMA; when the provider moved the pages into a
	 * memfd, that object too, which the peer's CPU can map (PIO).
	 */
	struct ntb_iommu_map map = { .len = end - start, .perm = NTB_IOMMU_WRITE,
				     .fd = nfds ? fds[0] : -1, .fd_offset = req->fd_off,
				     .pid = cl->pid, .va = start };
	int ret;

	m->ap_len = 0;
	m->win_off = NTBV_NO_WINDOW;
	if (!(req->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE)))
		return;
	ret = nv_pool_alloc(&s->aperture, end - start, &m->ap_off);
	if (!ret) {
		map.iova = s->n->link.win_iova + m->ap_off;
		ret = ntb_iommu_map(s->n->ntb, &map);
		if (ret)
			nv_pool_free(&s->aperture, m->ap_off, end - start);
	}
	if (ret) {
		/* one line per 256: a program registering thousands would drown the log */
		if (!(unmapped++ % 256))
			bvd_log(s->n->d, "client %u: %llu bytes not mapped for the peer (%s): "
				"messages carry their data (%u regions so far)", cl->c->id,
				(unsigned long long)req->length, strerror(-ret), unmapped);
		return;
	}
	m->ap_len = end - start;
	m->win_off = m->ap_off + (req->addr - start);
}

static int reg_check(const struct ntb_reg_mr_req *req, const int *fds, unsigned int nfds)
{
	const uint32_t known = IBV_ACCESS_LOCAL_WRITE | REMOTE_ANY | IBV_ACCESS_RELAXED_ORDERING |
			       IBV_ACCESS_MW_BIND;

	if (!req->length || (req->access & ~known) || req->addr + req->length < req->addr ||
	    req->length > (1ull << 40) || nfds > 1 || (nfds && req->fd_off % NTB_PAGE_SIZE))
		return EINVAL;
	if (nfds && !object_ok(fds[0], req->fd_off, page_span(req->addr, req->length)))
		return EINVAL;
	return 0;
}

static void mr_answer(const struct nv_mr *m, struct bvd_reply *r)
{
	struct ntb_reg_mr_rsp *rsp = r->payload;

	memset(rsp, 0, sizeof(*rsp));
	rsp->lkey = m->key;
	rsp->rkey = (m->access & REMOTE_ANY) ? m->key : 0;
	rsp->win_off = m->win_off == NTBV_NO_WINDOW ? 0 : m->win_off;
	r->len = sizeof(*rsp);
}

/* A free key index (regions and windows share them), its key's variant moved on; NULL: none. */
static struct nv_mr *key_new(struct nv_state *s, uint32_t *idxp)
{
	static uint32_t cursor = 1;

	for (uint32_t n = 0; n < NTBV_MAX_MR - 1; n++) {
		uint32_t idx = 1 + (cursor + n) % (NTBV_MAX_MR - 1);
		struct nv_mr *m = &s->mrs[idx];

		if (!m->owner) {
			cursor = idx;
			m->variant++;
			m->key = idx << 8 | m->variant;
			*idxp = idx;
			return m;
		}
	}
	return NULL;
}

void nv_reg_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
	       const int *fds, unsigned int nfds, struct bvd_reply *r)
{
	const struct ntb_reg_mr_req *req = in;
	struct nv_mr *m;
	uint32_t idx = 0;

	if (len != sizeof(*req) || reg_check(req, fds, nfds)) {
		r->status = EINVAL;
		return;
	}
	if (!cl->attached || !s->ready) {
		r->status = ENOLINK;
		return;
	}
	if (!nv_pd_owned(s, cl, req->pd)) {
		r->status = ENOENT;
		return;
	}
	m = key_new(s, &idx);
	if (!m) {
		r->status = ENOMEM;
		return;
	}
	m->mw = 0;
	m->pd = req->pd;
	m->access = req->access;
	m->addr = req->addr;
	m->length = req->length;
	m->hca_va = req->hca_va;
	mr_map(s, cl, m, req, fds, nfds);
	m->owner = cl;
	cl->nmrs++;
	s->pds[req->pd].users++;
	if (req->access & PUBLISHED)
		nv_publish_mr(s, idx);
	mr_answer(m, r);
}

/*
 * The region of a key the client holds, again: a new translation, PD or access under the
 * same key (as a ConnectX's rereg keeps its mkey). The old range is unmapped first, so when
 * this returns no peer DMA can land in it any more.
 */
void nv_rereg_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		 const int *fds, unsigned int nfds, struct bvd_reply *r)
{
	const struct ntb_rereg_mr_req *req = in;
	uint32_t idx;
	struct nv_mr *m;
	bool was_published;

	if (len != sizeof(*req) || req->reserved || reg_check(&req->mr, fds, nfds)) {
		r->status = EINVAL;
		return;
	}
	if (!cl->attached || !s->ready) {
		r->status = ENOLINK;
		return;
	}
	idx = NTBV_KEY_INDEX(req->lkey);
	if (!idx || idx >= NTBV_MAX_MR || s->mrs[idx].owner != cl || s->mrs[idx].mw ||
	    s->mrs[idx].key != req->lkey || !nv_pd_owned(s, cl, req->mr.pd)) {
		r->status = ENOENT;
		return;
	}
	m = &s->mrs[idx];
	was_published = m->access & PUBLISHED;
	mr_unmap(s, m);
	if (m->pd < NV_MAX_PD && s->pds[m->pd].users)
		s->pds[m->pd].users--;
	m->pd = req->mr.pd;
	s->pds[m->pd].users++;
	m->access = req->mr.access;
	m->addr = req->mr.addr;
	m->length = req->mr.length;
	m->hca_va = req->mr.hca_va;
	mr_map(s, cl, m, &req->mr, fds, nfds);
	if (was_published || (m->access & PUBLISHED))
		nv_publish_mr(s, idx);
	mr_answer(m, r);
}

void nv_dereg_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		 struct bvd_reply *r)
{
	const struct ntb_handle_req *req = in;
	uint32_t idx;

	if (len != sizeof(*req)) {
		r->status = EINVAL;
		return;
	}
	idx = NTBV_KEY_INDEX(req->handle);
	if (!idx || idx >= NTBV_MAX_MR || s->mrs[idx].owner != cl || s->mrs[idx].mw ||
	    s->mrs[idx].key != req->handle) {
		r->status = ENOENT;
		return;
	}
	mr_release(s, idx);
}

/*
 * A memory window: only a key, from the same space as the regions' (as an HCA's mkeys), so
 * no rkey of this end names two things. Nothing is mapped or published for it.
 */
void nv_alloc_mw(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		 struct bvd_reply *r)
{
	const struct ntb_handle_req *req = in;
	struct ntb_handle_rsp *rsp = r->payload;
	struct nv_mr *m;
	uint32_t idx;

	if (len != sizeof(*req) ||
	    (req->reserved != IBV_MW_TYPE_1 && req->reserved != IBV_MW_TYPE_2)) {
		r->status = EINVAL;
		return;
	}
	if (!cl->attached || !s->ready) {
		r->status = ENOLINK;
		return;
	}
	if (!nv_pd_owned(s, cl, req->handle)) {
		r->status = ENOENT;
		return;
	}
	m = key_new(s, &idx);
	if (!m) {
		r->status = ENOMEM;
		return;
	}
	m->mw = (uint8_t)req->reserved;
	m->pd = req->handle;
	m->access = 0;
	m->addr = m->length = m->hca_va = 0;
	m->ap_len = 0;
	m->win_off = NTBV_NO_WINDOW;
	m->owner = cl;
	cl->nmrs++;
	s->pds[m->pd].users++;
	memset(rsp, 0, sizeof(*rsp));
	rsp->handle = m->key;
	r->len = sizeof(*rsp);
}

void nv_dealloc_mw(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		   struct bvd_reply *r)
{
	const struct ntb_handle_req *req = in;
	uint32_t idx;

	if (len != sizeof(*req) || req->reserved) {
		r->status = EINVAL;
		return;
	}
	idx = NTBV_KEY_INDEX(req->handle);
	if (!idx || idx >= NTBV_MAX_MR || s->mrs[idx].owner != cl || !s->mrs[idx].mw ||
	    s->mrs[idx].key != req->handle) {
		r->status = ENOENT;
		return;
	}
	mr_release(s, idx);
}

/* Where a region lies in its window, in whole pages; the caller checked it is mapped. */
static void win_pages(uint64_t win_off, uint64_t length, uint64_t *start, uint64_t *end)
{
	*start = win_off & ~(uint64_t)(NTB_PAGE_SIZE - 1);
	*end = (win_off + length + NTB_PAGE_SIZE - 1) & ~(uint64_t)(NTB_PAGE_SIZE - 1);
}

/* One of our own regions, for a local client's stores (loopback): its memory object. */
static void map_local_mr(struct nv_state *s, uint32_t key, struct bvd_reply *r)
{
	struct ntb_map_peer_mr_rsp *rsp = r->payload;
	uint32_t idx = NTBV_KEY_INDEX(key);
	const struct nv_mr *m;
	uint64_t start, end, fd_off;
	int fd, ret;

	if (!idx || idx >= NTBV_MAX_MR || !s->mrs[idx].owner || s->mrs[idx].key != key ||
	    !(s->mrs[idx].access & IBV_ACCESS_REMOTE_WRITE) || !s->mrs[idx].ap_len) {
		r->status = ENOENT;
		return;
	}
	m = &s->mrs[idx];
	win_pages(m->win_off, m->length, &start, &end);
	ret = ntb_iommu_range_fd(s->n->ntb, s->n->link.win_iova + start, end - start, &fd,
				 &fd_off);
	if (ret) {
		r->status = -ret;	/* ENXIO: process memory, reached by messages only */
		return;
	}
	memset(rsp, 0, sizeof(*rsp));
	rsp->fd_off = fd_off;
	rsp->len = end - start;
	rsp->delta = m->win_off - start;
	r->len = sizeof(*rsp);
	r->fds[0] = fd;
	r->nfds = 1;
}

/* The region of an rkey, for a client's stores: the window range's memory object. */
void nv_map_peer_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		    struct bvd_reply *r)
{
	const struct ntb_handle_req *req = in;
	struct ntb_map_peer_mr_rsp *rsp = r->payload;
	struct ntbv_ctrl_hdr h;
	const struct ntbv_mr_ent *pe;
	struct ntbv_mr_ent e;
	uint64_t start, end, fd_off;
	uint32_t idx, seq;
	int fd, ret, tries = 0;

	if (len != sizeof(*req) || req->reserved > NTB_END_LOCAL) {
		r->status = EINVAL;
		return;
	}
	if (!cl->attached || !s->ready) {
		r->status = ENOLINK;
		return;
	}
	if (req->reserved == NTB_END_LOCAL) {
		map_local_mr(s, req->handle, r);
		return;
	}
	idx = NTBV_KEY_INDEX(req->handle);
	ret = nv_peer_hdr(s, &h);
	if (ret) {
		r->status = -ret;
		return;
	}
	if (!idx || idx >= h.max_mr) {
		r->status = ENOENT;
		return;
	}
	/* the peer's table is in our window: a local read, under its sequence count */
	pe = (const struct ntbv_mr_ent *)((const uint8_t *)s->n->link.ctl + s->ctrl_off +
					  h.mr_tbl_off) + idx;
	do {
		/* a writer holds an entry odd for microseconds; a peer that never ends: EAGAIN */
		if (++tries > 100000) {
			r->status = EAGAIN;
			return;
		}
		seq = atomic_load_explicit(&pe->seq, memory_order_acquire);
		memcpy(&e, (const void *)pe, sizeof(e));
		atomic_thread_fence(memory_order_acquire);
	} while ((seq & 1) || atomic_load_explicit(&pe->seq, memory_order_relaxed) != seq);
	if (e.rkey != req->handle || !(e.access & IBV_ACCESS_REMOTE_WRITE) || !e.length ||
	    e.win_off == NTBV_NO_WINDOW || e.win_off + e.length < e.win_off) {
		r->status = ENOENT;
		return;
	}
	win_pages(e.win_off, e.length, &start, &end);
	ret = ntb_peer_mw_range_fd(s->n->ntb, 0, start, end - start, &fd, &fd_off);
	if (ret) {
		r->status = -ret;
		return;
	}
	memset(rsp, 0, sizeof(*rsp));
	rsp->fd_off = fd_off;
	rsp->len = end - start;
	rsp->delta = e.win_off - start;
	r->len = sizeof(*rsp);
	r->fds[0] = fd;
	r->nfds = 1;
}

void nv_free_client_mrs(struct nv_state *s, struct nv_client *cl)
{
	for (uint32_t i = 1; cl->nmrs && i < NTBV_MAX_MR; i++)
		if (s->mrs[i].owner == cl)
			mr_release(s, i);
}
