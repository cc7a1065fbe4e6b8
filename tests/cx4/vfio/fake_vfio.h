/* SPDX-License-Identifier: MIT */
/*
 * A fake VFIO layer for the VFIO backend's unit tests: a struct cx4_vfio_sys whose calls
 * emulate sysfs (vendor, device, iommu_group, driver), /dev/vfio/vfio with a type1 IOMMU
 * (records maps, refuses overlaps, unaligned and out-of-range maps and split unmaps as
 * drivers/vfio/vfio_iommu_type1.c does), a group, and a vfio-pci device: BAR0 is plain memory
 * (a memfd) mmapped through the device fd, config space answers pread/pwrite, MSI-X keeps the
 * eventfds it was given so a test can fire vectors. Every call is logged as a line of text so
 * tests can check the exact order and arguments; any call can be made to fail.
 *
 * Calls on fds the fake did not create (a test's memfd) go to the real system calls.
 */
#ifndef FAKE_VFIO_H
#define FAKE_VFIO_H

#include <linux/vfio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cx4_vfio.h"

#define FAKE_MAX_LOG 512
#define FAKE_MAX_FDS 128
#define FAKE_MAX_DMA 256
#define FAKE_MAX_VM 64

struct fake_cfg {
	const char *bdf;	 /* the function that exists */
	const char *vendor_text; /* sysfs contents */
	const char *device_text;
	const char *group;  /* iommu_group link target name; NULL: no link */
	const char *driver; /* driver link name; NULL: none */
	bool group_node;    /* /dev/vfio/<group> exists */
	bool vfio_node;	    /* /dev/vfio/vfio exists */
	int api_version;
	bool type1v2;
	bool viable;
	uint32_t device_flags;
	uint16_t cfg_vendor, cfg_device;
	uint16_t command; /* initial PCI COMMAND */
	bool command_ro;  /* COMMAND writes are dropped */
	uint64_t bar0_size;
	uint32_t bar0_flags;
	unsigned int nsparse; /* BAR0 sparse mmap areas (0: none) */
	struct vfio_region_sparse_mmap_area sparse[4];
	bool msix_mappable;
	uint32_t msix_count;
	uint32_t msix_flags;
	uint64_t iova_pgsizes;
	bool iova_caps; /* report the IOVA range capability */
	unsigned int nranges;
	struct vfio_iova_range ranges[4];
	uint32_t nr_iovas_claimed; /* != 0: lie about the number of ranges (malformed) */
};

struct fake_dma {
	uint64_t iova, size, vaddr;
	uint32_t flags;
};

struct fake_vm {
	void *addr;
	size_t len;
	bool device; /* a BAR0 mapping through the device fd */
};

struct fake_vfio {
	struct cx4_vfio_sys sys;
	struct fake_cfg cfg;
	/* log */
	char log[FAKE_MAX_LOG][160];
	unsigned int nlog;
	bool log_overflow;
	/* failure injection: the fail_at-th failable call (1-based) fails with fail_errno */
	unsigned int calls;
	unsigned int fail_at;
	int fail_errno;
	/* fds the fake created */
	struct {
		int fd;
		int kind;
	} fds[FAKE_MAX_FDS];
	unsigned int nfds;
	/* kernel state */
	bool group_open;
	bool container_set;
	int iommu_type;
	uint8_t config[256];
	int bar_fd;   /* memfd holding BAR0 */
	uint8_t *bar; /* the fake's own view of BAR0 */
	struct fake_dma dma[FAKE_MAX_DMA];
	unsigned int ndma;
	struct fake_vm vm[FAKE_MAX_VM];
	unsigned int nvm;
	unsigned int bad_munmaps; /* munmap that split a tracked mapping */
	int irq_fd[64];		  /* dups of the eventfds SET_IRQS was given */
	unsigned int nirq;
	unsigned int resets;
};

/* A ConnectX-4 Lx at 0000:03:00.0 in group 17, bound to vfio-pci, all features present. */
void fake_default_cfg(struct fake_cfg *cfg);
/* Set up the fake; returns 0 or -errno. */
int fake_init(struct fake_vfio *f, const struct fake_cfg *cfg);
/* Release what the fake itself holds (after the backend closed). */
void fake_fini(struct fake_vfio *f);

/* What the backend still holds through the fake: fds, BAR mmaps, IOMMU maps, MSI-X. */
unsigned int fake_open_fds(const struct fake_vfio *f);
/* "container", "group", "device", "eventfd", "sysfs" or "other". */
const char *fake_fd_kind(const struct fake_vfio *f, int fd);

/* Device side: signal MSI-X vector v; DMA through the IOMMU (0 or -EFAULT). */
int fake_fire(struct fake_vfio *f, unsigned int v);
int fake_dma_read(struct fake_vfio *f, uint64_t iova, void *buf, size_t len);
int fake_dma_write(struct fake_vfio *f, uint64_t iova, const void *buf, size_t len);

/* Log helpers: index of the first line equal to s at or after `from`, or -1. */
int fake_log_find(const struct fake_vfio *f, unsigned int from, const char *s);
void fake_log_dump(const struct fake_vfio *f);

#endif /* FAKE_VFIO_H */
