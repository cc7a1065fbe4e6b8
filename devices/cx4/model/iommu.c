// SPDX-License-Identifier: MIT
/*
 * The emulated IOMMU: every device access to host memory goes through an IOVA the owner of
 * the device (cx4d) mapped with bus->ops->dma_map, like a VFIO/IOMMU mapping of pinned pages.
 *
 *   fd-backed mappings (memfd: queues, doorbell records, command queue, firmware pages) are
 *   mmap()ed into the model, so the device reads and writes them directly;
 *   pid-backed mappings (registered memory of a client process) are reached with
 *   process_vm_readv/writev, batched: one system call moves all pieces of one process that a
 *   pass of the engine needs (dmab_*).
 *
 * An IOVA that is not mapped, or mapped without the permission, is a DMA fault: the caller
 * turns it into what the hardware reports (error CQE, CQ/EQ error event, health syndrome);
 * nothing is ever read or written outside a mapping. A remote process that unmapped its
 * memory or died makes process_vm_* fail: also a DMA fault.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model.h"

#define PAGE_MASK_4K 0xfffull

/* First mapping whose end is above iova (binary search), or io->n. */
static size_t find_idx(const struct iommu *io, uint64_t iova)
{
	size_t lo = 0, hi = io->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (io->m[mid].iova + io->m[mid].len <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cx4m_iommu_add(struct iommu *io, const struct cx4_dma_map *m)
{
	struct iommu_map e = {.iova = m->iova, .len = m->len, .perm = m->perm};
	size_t i;

	if (!m->len || (m->iova & PAGE_MASK_4K) || (m->len & PAGE_MASK_4K) ||
	    m->iova + m->len < m->iova || !m->iova || !(m->perm & (CX4_DMA_READ | CX4_DMA_WRITE)) ||
	    (m->perm & ~(uint32_t)(CX4_DMA_READ | CX4_DMA_WRITE)))
		return -EINVAL;
	i = find_idx(io, m->iova);
	if (i < io->n && io->m[i].iova < m->iova + m->len)
		return -EEXIST;
	if (m->fd >= 0) {
		int prot = 0;
		void *p;

		if (m->fd_offset & PAGE_MASK_4K)
			return -EINVAL;
		if (m->perm & CX4_DMA_READ)
			prot |= PROT_READ;
		if (m->perm & CX4_DMA_WRITE)
			prot |= PROT_READ | PROT_WRITE;
		p = mmap(NULL, m->len, prot, MAP_SHARED, m->fd, (off_t)m->fd_offset);
		if (p == MAP_FAILED)
			return -errno;
		e.host = p;
	} else {
		if (m->pid <= 0)
			return -EINVAL;
		e.pid = m->pid;
		e.va = m->va;
	}
	if (io->n == io->cap) {
		size_t cap = io->cap ? io->cap * 2 : 64;
		struct iommu_map *nm = realloc(io->m, cap * sizeof(*nm));

		if (!nm) {
			if (e.host)
				munmap(e.host, e.len);
			return -ENOMEM;
		}
		io->m = nm;
		io->cap = cap;
	}
	memmove(&io->m[i + 1], &io->m[i], (io->n - i) * sizeof(*io->m));
	io->m[i] = e;
	io->n++;
	return 0;
}

/* Unmap whole mappings covering exactly [iova, iova + len). */
int cx4m_iommu_del(struct iommu *io, uint64_t iova, uint64_t len)
{
	size_t i = find_idx(io, iova), j;
	uint64_t at = iova;

	if (i >= io->n || io->m[i].iova != iova || !len)
		return -ENOENT;
	for (j = i; j < io->n && at < iova + len; j++) {
		if (io->m[j].iova != at)
			return -EINVAL;
		at += io->m[j].len;
	}
	if (at != iova + len)
		return -EINVAL;
	for (size_t k = i; k < j; k++)
		if (io->m[k].host)
			munmap(io->m[k].host, io->m[k].len);
	memmove(&io->m[i], &io->m[j], (io->n - j) * sizeof(*io->m));
	io->n -= j - i;
	io->gen++;
	return 0;
}

void cx4m_iommu_clear(struct iommu *io)
{
	for (size_t i = 0; i < io->n; i++)
		if (io->m[i].host)
			munmap(io->m[i].host, io->m[i].len);
	free(io->m);
	io->m = NULL;
	io->n = io->cap = 0;
	io->gen++;
}

int cx4m_iommu_xlate(const struct iommu *io, uint64_t iova, uint64_t len, uint32_t perm,
		     struct dseg *seg, int max)
{
	size_t i = find_idx(io, iova);
	int n = 0;

	if (iova + len < iova)
		return -EFAULT;
	while (len) {
		const struct iommu_map *m;
		uint64_t off, take;

		if (i >= io->n || io->m[i].iova > iova)
			return -EFAULT;
		m = &io->m[i];
		if ((m->perm & perm) != perm)
			return -EACCES;
		off = iova - m->iova;
		take = m->len - off < len ? m->len - off : len;
		if (n && m->host && seg[n - 1].host &&
		    seg[n - 1].host + seg[n - 1].len == m->host + off) {
			seg[n - 1].len += take;
		} else if (n && !m->host && !seg[n - 1].host && seg[n - 1].pid == m->pid &&
			   seg[n - 1].va + seg[n - 1].len == m->va + off) {
			seg[n - 1].len += take;
		} else {
			if (n == max)
				return -E2BIG;
			seg[n] = (struct dseg){
			    .host = m->host ? m->host + off : NULL,
			    .pid = m->pid,
			    .va = m->host ? 0 : m->va + off,
			    .len = take,
			};
			n++;
		}
		iova += take;
		len -= take;
		i++;
	}
	return n;
}

/* process_vm_* moves at most IOV_MAX pieces and may stop early; loop over the whole piece. */
static int remote_rw(pid_t pid, uint64_t va, void *local, uint64_t len, bool write)
{
	while (len) {
		struct iovec l = {.iov_base = local, .iov_len = len};
		struct iovec r = {.iov_base = (void *)(uintptr_t)va, .iov_len = len};
		ssize_t k = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
				  : process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (k <= 0)
			return -EFAULT;
		va += (uint64_t)k;
		local = (uint8_t *)local + k;
		len -= (uint64_t)k;
	}
	return 0;
}

int cx4m_dseg_read(const struct dseg *s, int n, void *dst)
{
	uint8_t *p = dst;

	for (int i = 0; i < n; i++) {
		if (s[i].host)
			memcpy(p, s[i].host, s[i].len);
		else if (remote_rw(s[i].pid, s[i].va, p, s[i].len, false))
			return -EFAULT;
		p += s[i].len;
	}
	return 0;
}

int cx4m_dseg_write(const struct dseg *s, int n, const void *src)
{
	const uint8_t *p = src;

	for (int i = 0; i < n; i++) {
		if (s[i].host)
			memcpy(s[i].host, p, s[i].len);
		else if (remote_rw(s[i].pid, s[i].va, (void *)p, s[i].len, true))
			return -EFAULT;
		p += s[i].len;
	}
	return 0;
}

#define DMA_SYNC_SEGS 16

static int dma_rw(struct mdev *d, uint64_t iova, void *buf, size_t len, bool write)
{
	uint8_t *p = buf;

	/* Long ranges may need more pieces than fit the stack array: go in steps. */
	while (len) {
		struct dseg s[DMA_SYNC_SEGS];
		size_t step = len > (64u << 10) ? (64u << 10) : len;
		int n = cx4m_iommu_xlate(&d->iommu, iova, step,
					 write ? CX4_DMA_WRITE : CX4_DMA_READ, s, DMA_SYNC_SEGS);

		if (n == -E2BIG) {
			step = 4096 - (iova & 0xfff);
			if (step > len)
				step = len;
			n = cx4m_iommu_xlate(&d->iommu, iova, step,
					     write ? CX4_DMA_WRITE : CX4_DMA_READ, s,
					     DMA_SYNC_SEGS);
		}
		if (n < 0 || (write ? cx4m_dseg_write(s, n, p) : cx4m_dseg_read(s, n, p))) {
			d->stats.dma_faults++;
			cx4m_mdev_log(d, "DMA fault: %s of %zu bytes at IOVA 0x%llx",
				      write ? "write" : "read", step, (unsigned long long)iova);
			return n == -EACCES ? -EACCES : -EFAULT;
		}
		iova += step;
		p += step;
		len -= step;
	}
	return 0;
}

int cx4m_dma_read(struct mdev *d, uint64_t iova, void *dst, size_t len)
{
	return dma_rw(d, iova, dst, len, false);
}

int cx4m_dma_write(struct mdev *d, uint64_t iova, const void *src, size_t len)
{
	return dma_rw(d, iova, (void *)src, len, true);
}

uint8_t *cx4m_dma_ptr(struct mdev *d, uint64_t iova, size_t len, uint32_t perm)
{
	struct dseg s;

	if (cx4m_iommu_xlate(&d->iommu, iova, len, perm, &s, 1) != 1 || !s.host)
		return NULL;
	return s.host;
}

/* ---- batches ---------------------------------------------------------------------------- */

int cx4m_dmab_add(struct dma_batch *b, pid_t pid, uint64_t va, uint8_t *local, uint32_t len,
		  uint64_t tag)
{
	if (b->n && b->op[b->n - 1].pid == pid && b->op[b->n - 1].tag == tag &&
	    b->op[b->n - 1].va + b->op[b->n - 1].len == va &&
	    b->op[b->n - 1].local + b->op[b->n - 1].len == local &&
	    (uint64_t)b->op[b->n - 1].len + len <= UINT32_MAX) {
		b->op[b->n - 1].len += len;
		return 0;
	}
	if (b->n == b->cap) {
		int cap = b->cap ? b->cap * 2 : 256;
		struct dma_op *op = realloc(b->op, (size_t)cap * sizeof(*op));

		if (!op)
			return -ENOMEM;
		b->op = op;
		b->cap = cap;
	}
	b->op[b->n++] =
	    (struct dma_op){.pid = pid, .len = len, .va = va, .local = local, .tag = tag};
	return 0;
}

void cx4m_dseg_copy_batched(struct dma_batch *b, const struct dseg *s, int n, uint8_t *local,
			    uint64_t tag)
{
	for (int i = 0; i < n; i++) {
		if (s[i].host) {
			if (b->write)
				memcpy(s[i].host, local, s[i].len);
			else
				memcpy(local, s[i].host, s[i].len);
		} else {
			uint64_t off = 0;

			while (off < s[i].len) {
				uint32_t k = s[i].len - off > (1u << 30)
						 ? (1u << 30)
						 : (uint32_t)(s[i].len - off);

				if (cx4m_dmab_add(b, s[i].pid, s[i].va + off, local + off, k,
						  tag)) {
					/* Out of memory: do it now, synchronously. */
					remote_rw(s[i].pid, s[i].va + off, local + off, k,
						  b->write);
				}
				off += k;
			}
		}
		local += s[i].len;
	}
}

#define BATCH_IOV 1024 /* IOV_MAX */

/* Run ops [a, e) (same pid) one by one, reporting the faulting ones. */
static int run_single(struct dma_batch *b, int a, int e, void (*fault)(void *, uint64_t), void *ctx)
{
	int bad = 0;

	for (int i = a; i < e; i++) {
		struct dma_op *o = &b->op[i];

		if (remote_rw(o->pid, o->va, o->local, o->len, b->write)) {
			bad++;
			if (fault)
				fault(ctx, o->tag);
		}
	}
	return bad;
}

int cx4m_dmab_flush(struct dma_batch *b, void (*fault)(void *ctx, uint64_t tag), void *ctx)
{
	struct iovec l[BATCH_IOV], r[BATCH_IOV];
	int bad = 0, i = 0;

	while (i < b->n) {
		pid_t pid = b->op[i].pid;
		int e = i, k = 0;
		uint64_t want = 0;
		ssize_t got;

		while (e < b->n && b->op[e].pid == pid && k < BATCH_IOV) {
			l[k] = (struct iovec){.iov_base = b->op[e].local, .iov_len = b->op[e].len};
			r[k] = (struct iovec){.iov_base = (void *)(uintptr_t)b->op[e].va,
					      .iov_len = b->op[e].len};
			want += b->op[e].len;
			k++;
			e++;
		}
		got = b->write ? process_vm_writev(pid, l, (unsigned long)k, r, (unsigned long)k, 0)
			       : process_vm_readv(pid, l, (unsigned long)k, r, (unsigned long)k, 0);
		if (got < 0 || (uint64_t)got != want) {
			/* Partial: redo the ops from the first one not fully done, one by one. */
			uint64_t acc = 0;
			int first = i;

			if (got > 0) {
				while (first < e && acc + b->op[first].len <= (uint64_t)got)
					acc += b->op[first++].len;
			}
			bad += run_single(b, first, e, fault, ctx);
		}
		i = e;
	}
	b->n = 0;
	return bad;
}

void cx4m_dmab_free(struct dma_batch *b)
{
	free(b->op);
	b->op = NULL;
	b->n = b->cap = 0;
}
