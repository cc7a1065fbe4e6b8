// SPDX-License-Identifier: MIT
/*
 * Client memory mapped for device DMA: the role of the kernel's ib_umem (pin + IOMMU map).
 *
 *  - Queue buffers (CQ, QP, SRQ and their doorbell records) come as a memfd from the
 *    provider; the whole fd is mapped at an IOVA aligned to its power-of-two size, so one PAS
 *    entry with a large log_page_size describes it (PRM: a PAS page is 4 KB << log_page_size;
 *    Linux does the same for its contiguous EQ buffers, Snabb for every queue).
 *
 *  - Registered memory is mapped by pid + VA (the device reaches the client's pages where
 *    they are, as an IOMMU maps pinned pages), or, when the provider moved the region's pages
 *    into a memfd (providers/common/bv_shadow.c), as that memfd: the same pages, reached
 *    without a system call per transfer. The IOVA is chosen so that the device address
 *    hca_va and its IOVA agree modulo the MTT page size 2^log_page: then MTT entry i is simply
 *    iova_base + i * 2^log_page, few entries describe a large region, and the mkey bounds keep
 *    the device inside the registered bytes. ib_umem_find_best_pgsz() picks a page size by the
 *    same rule (VA and DMA address congruent modulo the page size).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "cx4d.h"

unsigned int cx4d_log2_up(uint64_t v)
{
	unsigned int l = 0;

	while (l < 63 && (1ull << l) < v)
		l++;
	return l;
}

unsigned int cx4d_pas_log_page(uint64_t len)
{
	unsigned int l = cx4d_log2_up(len);

	return l > 12 ? l - 12 : 0;
}

/*
 * A memfd a client hands over must stay at least as large as the pages the device is given:
 * the device touching a page past its end would kill cx4d with SIGBUS (a client that shrinks
 * its queue buffer under a CQ, then lets a completion come). The provider's memfds are sealed
 * against shrinking (providers/cx4/buf.c, bv_shadow.c); anything else is refused.
 */
bool cx4d_umem_fd_ok(int fd, uint64_t off, uint64_t len)
{
	int seals = fcntl(fd, F_GET_SEALS);
	struct stat st;

	return seals >= 0 && (seals & F_SEAL_SHRINK) && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	       !(off & (CX4D_PAGE - 1)) && off + len > off && st.st_size >= 0 &&
	       (uint64_t)st.st_size >= off + len;
}

int cx4d_umem_map_fd(struct cx4d *d, int fd, uint64_t len, struct cx4d_umem *u)
{
	struct cx4_dma_map map;
	uint64_t iova;
	int err;

	memset(u, 0, sizeof(*u));
	if (!len || len % CX4D_PAGE || len > (1ull << 32) || !cx4d_umem_fd_ok(fd, 0, len))
		return EINVAL;
	iova = cx4d_iova_alloc(d, len, 1ull << cx4d_log2_up(len));
	if (!iova)
		return ENOMEM;
	map = (struct cx4_dma_map){
	    .iova = iova, .len = len, .perm = CX4_DMA_READ | CX4_DMA_WRITE, .fd = fd};
	err = d->bus->ops->dma_map(d->bus, &map);
	if (err)
		return err < 0 ? -err : err;
	u->iova = iova;
	u->map_len = len;
	u->mapped = true;
	d->numem++;
	d->umem_bytes += len;
	return 0;
}

int cx4d_umem_map_va(struct cx4d *d, pid_t pid, int fd, uint64_t fd_off, uint64_t va, uint64_t len,
		     uint64_t hca_va, unsigned int log_page, uint32_t perm, struct cx4d_umem *u)
{
	uint64_t P = 1ull << log_page;
	uint64_t va_start = va & ~(uint64_t)(CX4D_PAGE - 1);
	uint64_t va_end = (va + len + CX4D_PAGE - 1) & ~(uint64_t)(CX4D_PAGE - 1);
	uint64_t span = (hca_va & (P - 1)) + len;
	uint64_t n = (span + P - 1) >> log_page;
	uint64_t base;
	struct cx4_dma_map map;
	int err;

	memset(u, 0, sizeof(*u));
	if ((va ^ hca_va) & (CX4D_PAGE - 1))
		return EINVAL;
	base = cx4d_iova_alloc(d, n << log_page, P);
	if (!base)
		return ENOMEM;
	map = (struct cx4_dma_map){
	    .iova = base + (hca_va & (P - 1)) - (va - va_start),
	    .len = va_end - va_start,
	    .perm = perm,
	    .fd = fd,
	    .fd_offset = fd_off,
	    .pid = fd < 0 ? pid : 0,
	    .va = fd < 0 ? va_start : 0,
	};
	err = d->bus->ops->dma_map(d->bus, &map);
	if (err)
		return err < 0 ? -err : err;
	u->iova = base;
	u->map_len = map.len;
	u->mapped = true;
	/* remember where the mapping itself starts for unmap */
	u->map_iova = map.iova;
	d->numem++;
	d->umem_bytes += u->map_len;
	return 0;
}

void cx4d_umem_unmap(struct cx4d *d, struct cx4d_umem *u)
{
	if (!u->mapped)
		return;
	d->bus->ops->dma_unmap(d->bus, u->map_iova ? u->map_iova : u->iova, u->map_len);
	u->mapped = false;
	d->numem--;
	d->umem_bytes -= u->map_len;
}
