// SPDX-License-Identifier: MIT
/*
 * Opening a ConnectX-4 PCI function through VFIO and the bus operations reset and close.
 *
 * The sequence is rdma-core's mlx5_vfio.c (mlx5_vfio_open_fds, mlx5_vfio_setup_function)
 * with the kernel's own checks made explicit, using linux/vfio.h:
 *
 *   sysfs        /sys/bus/pci/devices/<bdf>/{vendor,device} is 0x15b3:ConnectX-4 (is_mlx5_pci),
 *                iommu_group -> /dev/vfio/<group>
 *   container    open /dev/vfio/vfio, VFIO_GET_API_VERSION, VFIO_CHECK_EXTENSION(TYPE1v2)
 *   group        open /dev/vfio/<group>, VFIO_GROUP_GET_STATUS (viable),
 *                VFIO_GROUP_SET_CONTAINER, VFIO_SET_IOMMU(TYPE1v2), VFIO_IOMMU_GET_INFO
 *   device       VFIO_GROUP_GET_DEVICE_FD(bdf), VFIO_DEVICE_GET_INFO,
 *                VFIO_DEVICE_GET_REGION_INFO(config, BAR0), PCI COMMAND |= MEMORY | MASTER
 *                (mlx5_vfio_enable_pci_cmd writes 0x6), mmap BAR0 (mlx5_vfio_init_bar0)
 *   interrupts   VFIO_DEVICE_GET_IRQ_INFO(MSI-X), one eventfd per vector,
 *                VFIO_DEVICE_SET_IRQS(DATA_EVENTFD | ACTION_TRIGGER) for all of them at once
 *                (MSI-X is NORESIZE: the set is enabled as a whole)
 *
 * rdma-core uses VFIO_TYPE1_IOMMU; we require type1v2, whose unmap never splits a mapping and
 * which every kernel with vfio-pci since 3.x offers.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#include "vfio_priv.h"

#define REGION_INFO_MAX 4096u /* a BAR's capability chain is a few dozen bytes */

/* The smallest BAR0 we accept: the initialization segment spans pages 0-2 ([dev.h] mlx5_init_seg).
 */
#define BAR0_MIN 0x3000u

static const struct cx4_bus_ops vfio_ops;

static const uint16_t cx4_device_ids[] = {
    CX4_PCI_DEVICE_CX4,
    CX4_PCI_DEVICE_CX4_VF,
    CX4_PCI_DEVICE_CX4LX,
    CX4_PCI_DEVICE_CX4LX_VF,
};

/* "dddd:bb:dd.f" or "bb:dd.f" (domain 0), lower-cased into out; anything else is refused. */
static int parse_bdf(const char *in, char out[16])
{
	unsigned int dom = 0, bus, dev, fn;
	char tail;
	int n = 0;

	if (!in)
		return -1;
	for (const char *p = in; *p; p++)
		if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
			return -1;
	if (strlen(in) == 12) {
		if (sscanf(in, "%4x:%2x:%2x.%1x%n%c", &dom, &bus, &dev, &fn, &n, &tail) != 4 ||
		    n != 12)
			return -1;
	} else if (strlen(in) == 7) {
		if (sscanf(in, "%2x:%2x.%1x%n%c", &bus, &dev, &fn, &n, &tail) != 3 || n != 7)
			return -1;
	} else {
		return -1;
	}
	if (dev > 0x1f || fn > 7)
		return -1;
	snprintf(out, 16, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

/* Read a sysfs attribute holding one hex number ("0x15b3\n"). */
static int read_sysfs_hex(const struct cx4_vfio_sys *s, const char *path, unsigned long *val)
{
	char buf[64], *end;
	ssize_t n;
	int fd = s->open(s->ctx, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = s->read(s->ctx, fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		int e = errno;

		s->close(s->ctx, fd);
		return -e;
	}
	s->close(s->ctx, fd);
	buf[n] = 0;
	errno = 0;
	*val = strtoul(buf, &end, 16);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EPROTO;
	return 0;
}

/* The last path component of a sysfs link ("../../../kernel/iommu_groups/17" -> "17"). */
static int read_link_name(const struct cx4_vfio_sys *s, const char *path, char *out, size_t len)
{
	char buf[256];
	const char *b;
	ssize_t n = s->readlink(s->ctx, path, buf, sizeof(buf) - 1);

	if (n < 0)
		return -errno;
	buf[n] = 0;
	b = strrchr(buf, '/');
	b = b ? b + 1 : buf;
	if (!*b || strlen(b) >= len)
		return -EPROTO;
	strcpy(out, b);
	return 0;
}

static int check_identity(struct cx4_vfio *v, unsigned int *vendor, unsigned int *device)
{
	const struct cx4_vfio_sys *s = v->sys;
	char path[128];
	unsigned long ven, dev;
	int err;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", v->bdf);
	err = read_sysfs_hex(s, path, &ven);
	if (err == -ENOENT)
		return cx4_vfio_fail(ENODEV, "%s: no such PCI device (%s)", v->bdf, path);
	if (err)
		return cx4_vfio_fail(-err, "%s: reading %s", v->bdf, path);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", v->bdf);
	err = read_sysfs_hex(s, path, &dev);
	if (err)
		return cx4_vfio_fail(-err, "%s: reading %s", v->bdf, path);
	*vendor = (unsigned int)ven;
	*device = (unsigned int)dev;
	if (ven == CX4_PCI_VENDOR_MELLANOX)
		for (size_t i = 0; i < sizeof(cx4_device_ids) / sizeof(cx4_device_ids[0]); i++)
			if (dev == cx4_device_ids[i])
				return 0;
	return cx4_vfio_fail(ENODEV,
			     "%s: PCI id %04lx:%04lx is not a ConnectX-4 or ConnectX-4 Lx "
			     "(15b3:1013/1014/1015/1016)",
			     v->bdf, ven, dev);
}

/* Why /dev/vfio/<group> is missing: name the driver the function is bound to. */
static int no_group_node(struct cx4_vfio *v, const char *node, int err)
{
	char path[128], drv[64];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", v->bdf);
	if (read_link_name(v->sys, path, drv, sizeof(drv)))
		strcpy(drv, "none");
	if (strcmp(drv, "vfio-pci"))
		return cx4_vfio_fail(err,
				     "%s: opening %s (bound to driver %s, not vfio-pci; see "
				     "docs/cx4-vfio.md)",
				     v->bdf, node, drv);
	return cx4_vfio_fail(err, "%s: opening %s", v->bdf, node);
}

static int open_container_and_group(struct cx4_vfio *v)
{
	const struct cx4_vfio_sys *s = v->sys;
	struct vfio_group_status st = {.argsz = sizeof(st)};
	char path[128], group[32], node[64];
	int r, err;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", v->bdf);
	err = read_link_name(s, path, group, sizeof(group));
	if (err)
		return cx4_vfio_fail(err == -ENOENT ? ENOENT : -err,
				     "%s: no IOMMU group (%s; is the "
				     "IOMMU enabled, e.g. intel_iommu=on?)",
				     v->bdf, path);
	for (const char *p = group; *p; p++)
		if (!isdigit((unsigned char)*p))
			return cx4_vfio_fail(EPROTO, "%s: IOMMU group name '%s' is not a number",
					     v->bdf, group);

	v->container_fd = s->open(s->ctx, "/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (v->container_fd < 0)
		return cx4_vfio_fail(errno, "%s: opening /dev/vfio/vfio", v->bdf);
	r = s->ioctl(s->ctx, v->container_fd, VFIO_GET_API_VERSION, 0);
	if (r != VFIO_API_VERSION)
		return cx4_vfio_fail(r < 0 ? errno : EPROTO,
				     "%s: VFIO_GET_API_VERSION is %d, we speak "
				     "%d",
				     v->bdf, r, VFIO_API_VERSION);
	r = s->ioctl(s->ctx, v->container_fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU);
	if (r <= 0)
		return cx4_vfio_fail(r < 0 ? errno : EOPNOTSUPP,
				     "%s: VFIO_CHECK_EXTENSION: no "
				     "VFIO_TYPE1v2_IOMMU",
				     v->bdf);

	snprintf(node, sizeof(node), "/dev/vfio/%s", group);
	v->group_fd = s->open(s->ctx, node, O_RDWR | O_CLOEXEC);
	if (v->group_fd < 0) {
		if (errno == ENOENT)
			return no_group_node(v, node, ENOENT);
		if (errno == EBUSY)
			return cx4_vfio_fail(EBUSY,
					     "%s: opening %s (the group is open in another "
					     "process)",
					     v->bdf, node);
		return cx4_vfio_fail(errno, "%s: opening %s", v->bdf, node);
	}
	if (s->ioctl(s->ctx, v->group_fd, VFIO_GROUP_GET_STATUS, (uintptr_t)&st))
		return cx4_vfio_fail(errno, "%s: VFIO_GROUP_GET_STATUS of group %s", v->bdf, group);
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE))
		return cx4_vfio_fail(
		    EBUSY,
		    "%s: IOMMU group %s is not viable (every device in "
		    "/sys/kernel/iommu_groups/%s/devices must be bound to vfio-pci)",
		    v->bdf, group, group);
	if (s->ioctl(s->ctx, v->group_fd, VFIO_GROUP_SET_CONTAINER, (uintptr_t)&v->container_fd))
		return cx4_vfio_fail(errno, "%s: VFIO_GROUP_SET_CONTAINER", v->bdf);
	if (s->ioctl(s->ctx, v->container_fd, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		return cx4_vfio_fail(errno, "%s: VFIO_SET_IOMMU(VFIO_TYPE1v2_IOMMU)", v->bdf);
	return cx4_vfio_iommu_info(v);
}

/*
 * Region info with its capability chain (the kernel reports the size it needs in argsz when
 * the chain does not fit). Returns a malloc()ed buffer or NULL with the failure recorded.
 */
static struct vfio_region_info *region_info(struct cx4_vfio *v, uint32_t index, const char *name)
{
	const struct cx4_vfio_sys *s = v->sys;
	struct vfio_region_info *ri = calloc(1, sizeof(*ri));
	uint32_t need;

	if (!ri) {
		cx4_vfio_fail(ENOMEM, "%s: region info of %s", v->bdf, name);
		return NULL;
	}
	ri->argsz = sizeof(*ri);
	ri->index = index;
	if (s->ioctl(s->ctx, v->device_fd, VFIO_DEVICE_GET_REGION_INFO, (uintptr_t)ri))
		goto fail_errno;
	need = ri->argsz;
	if (need > sizeof(*ri)) {
		struct vfio_region_info *n;

		if (need > REGION_INFO_MAX) {
			cx4_vfio_fail(EPROTO, "%s: VFIO_DEVICE_GET_REGION_INFO(%s) wants %u bytes",
				      v->bdf, name, need);
			goto fail;
		}
		n = realloc(ri, need);
		if (!n) {
			cx4_vfio_fail(ENOMEM, "%s: region info of %s", v->bdf, name);
			goto fail;
		}
		ri = n;
		memset(ri, 0, need);
		ri->argsz = need;
		ri->index = index;
		if (s->ioctl(s->ctx, v->device_fd, VFIO_DEVICE_GET_REGION_INFO, (uintptr_t)ri))
			goto fail_errno;
		if (ri->argsz > need) {
			cx4_vfio_fail(EPROTO,
				      "%s: VFIO_DEVICE_GET_REGION_INFO(%s) grew to %u bytes",
				      v->bdf, name, ri->argsz);
			goto fail;
		}
	}
	return ri;
fail_errno:
	cx4_vfio_fail(errno, "%s: VFIO_DEVICE_GET_REGION_INFO(%s)", v->bdf, name);
fail:
	free(ri);
	return NULL;
}

/* A capability of a region info, or NULL (a malformed chain is treated as absent: -EPROTO). */
static const struct vfio_info_cap_header *region_cap(const struct vfio_region_info *ri, uint16_t id,
						     int *err)
{
	const uint8_t *base = (const uint8_t *)ri;
	uint32_t off = (ri->flags & VFIO_REGION_INFO_FLAG_CAPS) ? ri->cap_offset : 0;

	*err = 0;
	for (int i = 0; off && i < 64; i++) {
		const struct vfio_info_cap_header *h = (const void *)(base + off);

		if (off < sizeof(*ri) || off + sizeof(*h) > ri->argsz || (off & 3)) {
			*err = -EPROTO;
			return NULL;
		}
		if (h->id == id)
			return h;
		off = h->next;
	}
	if (off)
		*err = -EPROTO;
	return NULL;
}

static int read_config(struct cx4_vfio *v, void *buf, size_t len, uint64_t off)
{
	const struct cx4_vfio_sys *s = v->sys;
	ssize_t n = s->pread(s->ctx, v->device_fd, buf, len, (off_t)(v->cfg_offset + off));

	if (n == (ssize_t)len)
		return 0;
	return cx4_vfio_fail(n < 0 ? errno : EIO, "%s: reading PCI config space at 0x%" PRIx64,
			     v->bdf, off);
}

static int write_config(struct cx4_vfio *v, const void *buf, size_t len, uint64_t off)
{
	const struct cx4_vfio_sys *s = v->sys;
	ssize_t n = s->pwrite(s->ctx, v->device_fd, buf, len, (off_t)(v->cfg_offset + off));

	if (n == (ssize_t)len)
		return 0;
	return cx4_vfio_fail(n < 0 ? errno : EIO, "%s: writing PCI config space at 0x%" PRIx64,
			     v->bdf, off);
}

/*
 * Memory space and bus master on (PCI COMMAND bits 1 and 2): without them the card neither
 * answers BAR0 nor DMAs (mlx5_vfio_enable_pci_cmd; Linux pci_enable_device + pci_set_master).
 * Read-modify-write keeps the other bits (INTx disable, SERR...) as vfio-pci left them.
 */
static int set_pci_command(struct cx4_vfio *v, uint16_t set, uint16_t clear)
{
	uint16_t cmd, want;
	int err = read_config(v, &cmd, 2, PCI_COMMAND);

	if (err)
		return err;
	want = (uint16_t)((cmd | set) & ~clear);
	if (want == cmd)
		return 0;
	err = write_config(v, &want, 2, PCI_COMMAND);
	if (err)
		return err;
	err = read_config(v, &cmd, 2, PCI_COMMAND);
	if (err)
		return err;
	if ((cmd & (set | clear)) != set)
		return cx4_vfio_fail(EIO, "%s: PCI COMMAND is 0x%04x after writing 0x%04x", v->bdf,
				     cmd, want);
	return 0;
}

static int setup_config(struct cx4_vfio *v, unsigned int vendor, unsigned int device)
{
	struct vfio_region_info *ri = region_info(v, VFIO_PCI_CONFIG_REGION_INDEX, "config");
	uint16_t id[2];
	int err;

	if (!ri)
		return -errno;
	v->cfg_offset = ri->offset;
	v->cfg_size = ri->size;
	err = 0;
	if ((ri->flags & (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE)) !=
		(VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE) ||
	    ri->size < 64)
		err = cx4_vfio_fail(ENODEV,
				    "%s: config region (flags 0x%x, %" PRIu64 " bytes) is "
				    "not a read/write PCI header",
				    v->bdf, ri->flags, (uint64_t)ri->size);
	free(ri);
	if (err)
		return err;
	/* the function behind the device fd must be the one sysfs named */
	err = read_config(v, id, sizeof(id), PCI_VENDOR_ID);
	if (err)
		return err;
	if (id[0] != vendor || id[1] != device)
		return cx4_vfio_fail(ENODEV, "%s: config space says %04x:%04x, sysfs %04x:%04x",
				     v->bdf, id[0], id[1], vendor, device);
	return 0;
}

/*
 * mmap BAR0. Kernels since 4.16 let the whole BAR be mapped (the MSI-X table included:
 * VFIO_REGION_INFO_CAP_MSIX_MAPPABLE); older ones describe the mappable parts with a sparse
 * mmap capability. Then the BAR's address range is reserved PROT_NONE and only those parts
 * are mapped over it; the driver never touches the holes (the MSI-X table/PBA).
 */
static int map_bar0(struct cx4_vfio *v, const struct vfio_region_info *ri)
{
	const struct cx4_vfio_sys *s = v->sys;
	const struct vfio_region_info_cap_sparse_mmap *sp;
	int err;
	uint8_t *base;

	sp = (const void *)region_cap(ri, VFIO_REGION_INFO_CAP_SPARSE_MMAP, &err);
	if (err)
		return cx4_vfio_fail(EPROTO, "%s: BAR0 region capability chain is malformed",
				     v->bdf);
	if (sp && region_cap(ri, VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, &err))
		sp = NULL;
	if (!sp) {
		base = s->mmap(s->ctx, NULL, ri->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       v->device_fd, (off_t)ri->offset);
		if (base == MAP_FAILED)
			return cx4_vfio_fail(errno, "%s: mmap of BAR0 (%" PRIu64 " bytes)", v->bdf,
					     (uint64_t)ri->size);
		v->bar0_map = base;
		return 0;
	}
	if ((const uint8_t *)sp + sizeof(*sp) > (const uint8_t *)ri + ri->argsz ||
	    ((size_t)((const uint8_t *)ri + ri->argsz - (const uint8_t *)sp) - sizeof(*sp)) /
		    sizeof(sp->areas[0]) <
		sp->nr_areas)
		return cx4_vfio_fail(EPROTO, "%s: BAR0 sparse mmap capability truncated", v->bdf);
	base = s->mmap(s->ctx, NULL, ri->size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return cx4_vfio_fail(errno, "%s: reserving %" PRIu64 " bytes for BAR0", v->bdf,
				     (uint64_t)ri->size);
	v->bar0_map = base;
	for (uint32_t i = 0; i < sp->nr_areas; i++) {
		uint64_t off = sp->areas[i].offset, len = sp->areas[i].size;

		if (!len)
			continue;
		if (((off | len) & 4095) || off + len < off || off + len > ri->size)
			return cx4_vfio_fail(EPROTO,
					     "%s: BAR0 mmap area %u [0x%" PRIx64 ", +0x%" PRIx64
					     ") is unaligned or outside the BAR",
					     v->bdf, i, off, len);
		if (s->mmap(s->ctx, base + off, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			    v->device_fd, (off_t)(ri->offset + off)) == MAP_FAILED)
			return cx4_vfio_fail(
			    errno, "%s: mmap of BAR0 area [0x%" PRIx64 ", +0x%" PRIx64 ")", v->bdf,
			    off, len);
	}
	return 0;
}

static int setup_bar0(struct cx4_vfio *v)
{
	struct vfio_region_info *ri = region_info(v, VFIO_PCI_BAR0_REGION_INDEX, "BAR0");
	const uint32_t need =
	    VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP;
	int err;

	if (!ri)
		return -errno;
	if ((ri->flags & need) != need || ri->size < BAR0_MIN || (ri->size & (ri->size - 1)))
		err = cx4_vfio_fail(ENODEV,
				    "%s: BAR0 (flags 0x%x, %" PRIu64 " bytes) is not an "
				    "mmappable ConnectX-4 BAR",
				    v->bdf, ri->flags, (uint64_t)ri->size);
	else {
		/* from here on close (or a failing open) turns bus mastering off again */
		v->master_on = true;
		err = set_pci_command(v, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 0);
	}
	if (!err)
		err = map_bar0(v, ri);
	if (!err) {
		v->bar0_size = ri->size;
		v->bus.bar0.base = v->bar0_map;
		v->bus.bar0.len = ri->size;
		v->bus.bar0.kick = NULL;
		v->bus.bar0_fd = v->device_fd;
		v->bus.bar0_fd_offset = ri->offset;
	} else if (v->bar0_map) {
		v->sys->munmap(v->sys->ctx, v->bar0_map, ri->size);
		v->bar0_map = NULL;
	}
	free(ri);
	return err;
}

static int setup_msix(struct cx4_vfio *v)
{
	const struct cx4_vfio_sys *s = v->sys;
	struct vfio_irq_info irq = {.argsz = sizeof(irq), .index = VFIO_PCI_MSIX_IRQ_INDEX};
	struct {
		struct vfio_irq_set set;
		int32_t fds[CX4_BUS_MAX_VECTORS];
	} req;
	unsigned int n;

	if (s->ioctl(s->ctx, v->device_fd, VFIO_DEVICE_GET_IRQ_INFO, (uintptr_t)&irq))
		return cx4_vfio_fail(errno, "%s: VFIO_DEVICE_GET_IRQ_INFO(MSI-X)", v->bdf);
	if (!irq.count)
		return cx4_vfio_fail(ENODEV, "%s: the function has no MSI-X vectors", v->bdf);
	if (!(irq.flags & VFIO_IRQ_INFO_EVENTFD))
		return cx4_vfio_fail(EOPNOTSUPP, "%s: MSI-X cannot signal eventfds (flags 0x%x)",
				     v->bdf, irq.flags);
	v->msix_count = irq.count;
	n = irq.count < CX4_BUS_MAX_VECTORS ? irq.count : CX4_BUS_MAX_VECTORS;
	for (unsigned int i = 0; i < n; i++) {
		int fd = s->eventfd(s->ctx, 0, EFD_CLOEXEC | EFD_NONBLOCK);

		if (fd < 0)
			return cx4_vfio_fail(errno, "%s: eventfd for MSI-X vector %u", v->bdf, i);
		v->bus.irq_fd[i] = fd;
		v->bus.num_vectors = i + 1;
	}
	memset(&req, 0, sizeof(req));
	req.set.argsz = (uint32_t)(sizeof(req.set) + n * sizeof(int32_t));
	req.set.flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	req.set.index = VFIO_PCI_MSIX_IRQ_INDEX;
	req.set.start = 0;
	req.set.count = n;
	for (unsigned int i = 0; i < n; i++)
		req.fds[i] = v->bus.irq_fd[i];
	if (s->ioctl(s->ctx, v->device_fd, VFIO_DEVICE_SET_IRQS, (uintptr_t)&req))
		return cx4_vfio_fail(errno, "%s: VFIO_DEVICE_SET_IRQS(MSI-X, %u eventfds)", v->bdf,
				     n);
	v->msix_enabled = true;
	return 0;
}

static int setup_device(struct cx4_vfio *v, unsigned int vendor, unsigned int device)
{
	const struct cx4_vfio_sys *s = v->sys;
	struct vfio_device_info di = {.argsz = sizeof(di)};
	int err;

	v->device_fd = s->ioctl(s->ctx, v->group_fd, VFIO_GROUP_GET_DEVICE_FD, (uintptr_t)v->bdf);
	if (v->device_fd < 0)
		return cx4_vfio_fail(errno, "%s: VFIO_GROUP_GET_DEVICE_FD", v->bdf);
	if (s->ioctl(s->ctx, v->device_fd, VFIO_DEVICE_GET_INFO, (uintptr_t)&di))
		return cx4_vfio_fail(errno, "%s: VFIO_DEVICE_GET_INFO", v->bdf);
	if (!(di.flags & VFIO_DEVICE_FLAGS_PCI) || di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX ||
	    di.num_irqs <= VFIO_PCI_MSIX_IRQ_INDEX)
		return cx4_vfio_fail(ENODEV,
				     "%s: not a vfio-pci device (flags 0x%x, %u regions, %u "
				     "irq indexes)",
				     v->bdf, di.flags, di.num_regions, di.num_irqs);
	v->can_reset = di.flags & VFIO_DEVICE_FLAGS_RESET;
	err = setup_config(v, vendor, device);
	if (!err)
		err = setup_bar0(v);
	if (!err)
		err = setup_msix(v);
	return err;
}

/* Release whatever was set up, in reverse order; used by close and by a failing open. */
static void teardown(struct cx4_vfio *v)
{
	const struct cx4_vfio_sys *s = v->sys;

	if (v->msix_enabled) {
		struct vfio_irq_set off = {
		    .argsz = sizeof(off),
		    .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
		    .index = VFIO_PCI_MSIX_IRQ_INDEX,
		    .start = 0,
		    .count = 0,
		};

		/* disable the whole MSI-X index before its eventfds go away (vfio.h) */
		s->ioctl(s->ctx, v->device_fd, VFIO_DEVICE_SET_IRQS, (uintptr_t)&off);
		v->msix_enabled = false;
	}
	for (unsigned int i = 0; i < v->bus.num_vectors; i++)
		s->close(s->ctx, v->bus.irq_fd[i]);
	v->bus.num_vectors = 0;
	/*
	 * Stop the function's DMA before its IOVAs are unmapped: a card that still held a queue
	 * would otherwise fault on (or, without the unmaps, write into) freed memory.
	 */
	if (v->master_on)
		set_pci_command(v, 0, PCI_COMMAND_MASTER);
	cx4_vfio_dma_unmap_all(v);
	if (v->bar0_map)
		s->munmap(s->ctx, v->bar0_map, v->bar0_size);
	if (v->device_fd >= 0)
		s->close(s->ctx, v->device_fd);
	if (v->group_fd >= 0)
		s->close(s->ctx, v->group_fd);
	if (v->container_fd >= 0)
		s->close(s->ctx, v->container_fd);
	free(v->ranges);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

int cx4_vfio_open_sys(const char *pci_bdf, const struct cx4_vfio_sys *sys, struct cx4_bus **bus)
{
	struct cx4_vfio *v;
	unsigned int vendor = 0, device = 0;	/* set by check_identity() */
	int err;

	cx4_vfio_clear_error();
	if (!bus)
		return cx4_vfio_fail(EINVAL, "cx4_vfio_open: no bus pointer");
	*bus = NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return cx4_vfio_fail(ENOMEM, "cx4_vfio_open");
	if (parse_bdf(pci_bdf, v->bdf)) {
		free(v);
		return cx4_vfio_fail(EINVAL,
				     "cx4_vfio_open: '%s' is not a PCI address "
				     "(dddd:bb:dd.f)",
				     pci_bdf ? pci_bdf : "(null)");
	}
	v->sys = sys ? sys : &cx4_vfio_sys_real;
	v->container_fd = v->group_fd = v->device_fd = -1;
	pthread_mutex_init(&v->lock, NULL);
	v->bus.ops = &vfio_ops;
	v->bus.backend = v;
	v->bus.bar0_fd = -1;
	v->bus.kick.page = NULL;
	v->bus.kick.efd = -1;
	v->bus.kick_page_fd = -1;
	for (unsigned int i = 0; i < CX4_BUS_MAX_VECTORS; i++)
		v->bus.irq_fd[i] = -1;

	err = check_identity(v, &vendor, &device);
	if (!err)
		err = open_container_and_group(v);
	if (!err)
		err = setup_device(v, vendor, device);
	if (err) {
		char msg[256];

		/* teardown's own calls must not replace the message of what failed */
		snprintf(msg, sizeof(msg), "%s", cx4_vfio_strerror());
		teardown(v);
		cx4_vfio_set_error(msg);
		errno = -err;
		return err;
	}
	*bus = &v->bus;
	return 0;
}

int cx4_vfio_open(const char *pci_bdf, struct cx4_bus **bus)
{
	return cx4_vfio_open_sys(pci_bdf, NULL, bus);
}

/*
 * Function level reset through vfio-pci (VFIO_DEVICE_RESET: pci_try_reset_function, which
 * saves and restores config space around the FLR, so COMMAND and MSI-X come back as they
 * were). The IOMMU mappings are the host's, not the device's: they survive the reset.
 */
static int vfio_reset(struct cx4_bus *bus)
{
	struct cx4_vfio *v = vfio_of(bus);
	const struct cx4_vfio_sys *s = v->sys;

	cx4_vfio_clear_error();
	if (!v->can_reset)
		return cx4_vfio_fail(EOPNOTSUPP,
				     "%s: the device offers no reset "
				     "(VFIO_DEVICE_FLAGS_RESET clear)",
				     v->bdf);
	if (s->ioctl(s->ctx, v->device_fd, VFIO_DEVICE_RESET, 0))
		return cx4_vfio_fail(errno, "%s: VFIO_DEVICE_RESET", v->bdf);
	/* a no-op unless the restore lost them */
	return set_pci_command(v, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 0);
}

static void vfio_close(struct cx4_bus *bus)
{
	if (bus)
		teardown(vfio_of(bus));
}

static const struct cx4_bus_ops vfio_ops = {
    .dma_map = cx4_vfio_dma_map,
    .dma_unmap = cx4_vfio_dma_unmap,
    .reset = vfio_reset,
    .close = vfio_close,
};

bool cx4_vfio_is(const struct cx4_bus *bus)
{
	return bus && bus->ops == &vfio_ops;
}

int cx4_vfio_container_fd(const struct cx4_bus *bus)
{
	if (!cx4_vfio_is(bus))
		return cx4_vfio_fail(EINVAL, "cx4_vfio_container_fd: not a VFIO bus");
	return ((const struct cx4_vfio *)bus)->container_fd;
}

int cx4_vfio_iova_ranges(const struct cx4_bus *bus, const struct cx4_vfio_iova_range **ranges,
			 unsigned int *n)
{
	const struct cx4_vfio *v = (const struct cx4_vfio *)bus;

	if (!cx4_vfio_is(bus))
		return cx4_vfio_fail(EINVAL, "cx4_vfio_iova_ranges: not a VFIO bus");
	*ranges = v->ranges;
	*n = v->nranges;
	return 0;
}

uint64_t cx4_vfio_iova_pgsize(const struct cx4_bus *bus)
{
	return cx4_vfio_is(bus) ? ((const struct cx4_vfio *)bus)->iova_pgsize : 0;
}

unsigned int cx4_vfio_msix_count(const struct cx4_bus *bus)
{
	return cx4_vfio_is(bus) ? ((const struct cx4_vfio *)bus)->msix_count : 0;
}
