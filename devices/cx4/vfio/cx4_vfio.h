/* SPDX-License-Identifier: MIT */
/*
 * The VFIO backend of the ConnectX-4 bus (cx4_bus.h): a real ConnectX-4 / ConnectX-4 Lx PCI
 * function bound to vfio-pci, reached through /dev/vfio the way rdma-core's mlx5_vfio.c
 * reaches it (mlx5_vfio_open_fds): a container with the type1v2 IOMMU, the device's
 * group, the device fd; BAR0 mmapped from the device fd, PCI COMMAND memory + bus master
 * enabled through the config region, one eventfd per MSI-X vector (VFIO_DEVICE_SET_IRQS),
 * DMA mappings with VFIO_IOMMU_MAP_DMA, reset by VFIO_DEVICE_RESET (FLR).
 *
 * Every system call goes through a table (struct cx4_vfio_sys) so the unit tests can put a
 * fake VFIO layer under the backend (tests/cx4/vfio). docs/cx4-vfio.md says how cx4d uses
 * it and what differs from the model.
 *
 * Error convention (as cx4_model_open): functions return 0 or -errno, also leave errno set,
 * and record a message naming what failed; cx4_vfio_strerror() returns it.
 */
#ifndef CX4_VFIO_H
#define CX4_VFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cx4_bus.h"

/*
 * The system calls the backend makes. Each takes the table's ctx first. ioctl's third argument
 * is what the real ioctl(2) gets: an integer (VFIO_CHECK_EXTENSION, VFIO_SET_IOMMU) or a
 * pointer cast to uintptr_t.
 */
struct cx4_vfio_sys {
	void *ctx;
	int (*open)(void *ctx, const char *path, int flags);
	int (*close)(void *ctx, int fd);
	ssize_t (*read)(void *ctx, int fd, void *buf, size_t len);
	ssize_t (*readlink)(void *ctx, const char *path, char *buf, size_t len);
	int (*ioctl)(void *ctx, int fd, unsigned long req, uintptr_t arg);
	void *(*mmap)(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off);
	int (*munmap)(void *ctx, void *addr, size_t len);
	ssize_t (*pread)(void *ctx, int fd, void *buf, size_t len, off_t off);
	ssize_t (*pwrite)(void *ctx, int fd, const void *buf, size_t len, off_t off);
	int (*eventfd)(void *ctx, unsigned int initval, int flags);
};

/* The real system calls. */
extern const struct cx4_vfio_sys cx4_vfio_sys_real;

/*
 * Open a ConnectX-4 PCI function by its address ("0000:03:00.0"; "03:00.0" means domain 0).
 * Returns 0 and the bus, or -errno:
 *   ENODEV   no such PCI device, or not a ConnectX-4 / 4 Lx (vendor 0x15b3, device
 *            0x1013/0x1014/0x1015/0x1016), or no MSI-X / no BAR0;
 *   ENOENT   no iommu_group (IOMMU off) or no /dev/vfio/<group> (not bound to vfio-pci);
 *   EBUSY    group not viable (another device of the group is not bound to vfio-pci), or
 *            already open elsewhere;
 *   EPROTO   VFIO API version is not VFIO_API_VERSION;
 *   EOPNOTSUPP  no type1v2 IOMMU;
 *   anything the kernel returns for a failing call (EACCES, EPERM, ENOMEM...).
 * On success: bus->bar0 maps all of BAR0 (kick NULL), bus->bar0_fd is the device fd and
 * bus->bar0_fd_offset the BAR0 region's offset in it, bus->irq_fd[0..num_vectors) the MSI-X
 * eventfds (non-blocking), bus->kick_page_fd = -1. bus->ops->close() releases everything.
 */
int cx4_vfio_open(const char *pci_bdf, struct cx4_bus **bus);
int cx4_vfio_open_sys(const char *pci_bdf, const struct cx4_vfio_sys *sys, struct cx4_bus **bus);

/* The message of the last failure in this thread ("" if none). */
const char *cx4_vfio_strerror(void);

/* Whether a bus is a VFIO one (the other calls below need one). */
bool cx4_vfio_is(const struct cx4_bus *bus);

/*
 * The VFIO container fd. VFIO type1 maps only memory of the process that issues
 * VFIO_IOMMU_MAP_DMA (it pins pages of current->mm), so registered memory of a client cannot be
 * mapped by cx4d: cx4d passes a dup of this fd to the client (SCM_RIGHTS), assigns the IOVA,
 * and the client maps its own pages with cx4_vfio_client_dma_map(). Returns -EINVAL for a
 * non-VFIO bus. The fd stays owned by the bus.
 */
int cx4_vfio_container_fd(const struct cx4_bus *bus);

/*
 * The IOVA ranges the IOMMU accepts (VFIO_IOMMU_GET_INFO's IOVA range capability, or the
 * legacy x86 ranges rdma-core falls back to) and its smallest page size: every dma_map must
 * lie inside one range and be aligned to the page size. cx4d allocates IOVAs from these.
 */
struct cx4_vfio_iova_range {
	uint64_t start;
	uint64_t end; /* inclusive */
};

int cx4_vfio_iova_ranges(const struct cx4_bus *bus, const struct cx4_vfio_iova_range **ranges,
			 unsigned int *n);
uint64_t cx4_vfio_iova_pgsize(const struct cx4_bus *bus);

/* Number of MSI-X vectors the function has (bus->num_vectors is at most CX4_BUS_MAX_VECTORS). */
unsigned int cx4_vfio_msix_count(const struct cx4_bus *bus);

/*
 * Client side of the container-fd path: map this process's memory [va, va + len) at iova for
 * the device (perm: enum cx4_dma_perm), and unmap it. sys NULL = the real system calls.
 */
int cx4_vfio_client_dma_map(const struct cx4_vfio_sys *sys, int container_fd, const void *va,
			    uint64_t iova, uint64_t len, uint32_t perm);
int cx4_vfio_client_dma_unmap(const struct cx4_vfio_sys *sys, int container_fd, uint64_t iova,
			      uint64_t len);

/* The PCI IDs this backend accepts (rdma-core providers/mlx5/mlx5.c mlx5_hca_table). */
#define CX4_PCI_VENDOR_MELLANOX 0x15b3
#define CX4_PCI_DEVICE_CX4 0x1013
#define CX4_PCI_DEVICE_CX4_VF 0x1014
#define CX4_PCI_DEVICE_CX4LX 0x1015
#define CX4_PCI_DEVICE_CX4LX_VF 0x1016

#endif /* CX4_VFIO_H */
