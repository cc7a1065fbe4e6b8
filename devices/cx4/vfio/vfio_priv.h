/* SPDX-License-Identifier: MIT */
/*
 * Inside the VFIO backend: the device state behind a struct cx4_bus, the DMA mapping table
 * (vfio_dma.c), the system call table and the error message (vfio_sys.c).
 */
#ifndef CX4_VFIO_PRIV_H
#define CX4_VFIO_PRIV_H

#include <pthread.h>

#include "cx4_vfio.h"

/* One mapping made through the bus (dma_map). */
struct vfio_map {
	uint64_t iova;
	uint64_t len;
	void *va; /* our mmap of the fd (fd-backed maps); NULL for own memory */
};

struct cx4_vfio {
	struct cx4_bus bus; /* first: the bus pointer is the device pointer */
	const struct cx4_vfio_sys *sys;
	char bdf[16];
	int container_fd;
	int group_fd;
	int device_fd;
	uint64_t cfg_offset; /* config space region in the device fd */
	uint64_t cfg_size;
	uint64_t bar0_size;
	void *bar0_map; /* the whole BAR0 (a PROT_NONE reservation with holes
			 * when the region is sparse-mmappable) */
	bool can_reset;
	bool master_on; /* we turned bus mastering on */
	bool msix_enabled;
	unsigned int msix_count;
	/* IOMMU */
	uint64_t iova_pgsize;
	struct cx4_vfio_iova_range *ranges;
	unsigned int nranges;
	pthread_mutex_t lock;  /* the mapping table */
	struct vfio_map *maps; /* sorted by iova, never overlapping */
	size_t nmaps, capmaps;
};

static inline struct cx4_vfio *vfio_of(struct cx4_bus *bus)
{
	return (struct cx4_vfio *)bus;
}

/* Record "what failed: strerror(err)" for cx4_vfio_strerror(); returns -err, errno = err. */
int cx4_vfio_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Forget the last message (start of a call that may fail). */
void cx4_vfio_clear_error(void);
/* Put back a message saved from cx4_vfio_strerror(). */
void cx4_vfio_set_error(const char *msg);

/* vfio_dma.c */
int cx4_vfio_iommu_info(struct cx4_vfio *v);
int cx4_vfio_dma_map(struct cx4_bus *bus, const struct cx4_dma_map *map);
int cx4_vfio_dma_unmap(struct cx4_bus *bus, uint64_t iova, uint64_t len);
void cx4_vfio_dma_unmap_all(struct cx4_vfio *v);

#endif /* CX4_VFIO_PRIV_H */
