// SPDX-License-Identifier: MIT
/*
 * The fake VFIO layer (fake_vfio.h). The kernel behaviour it copies is cited per ioctl from
 * linux/vfio.h and drivers/vfio/{container.c,group.c,vfio_iommu_type1.c,pci/vfio_pci_core.c}.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_vfio.h"

enum { FK_NONE, FK_SYSFS, FK_CONTAINER, FK_GROUP, FK_DEVICE, FK_EVENTFD };

static const char *const kind_name[] = {"other", "sysfs",  "container",
					"group", "device", "eventfd"};

/* vfio-pci: region index i lives at i << 40 in the device fd (VFIO_PCI_INDEX_TO_OFFSET) */
#define REGION_OFF(i) ((uint64_t)(i) << 40)
#define CFG_SIZE 256u

static void logf_(struct fake_vfio *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logf_(struct fake_vfio *f, const char *fmt, ...)
{
	va_list ap;

	if (f->nlog == FAKE_MAX_LOG) {
		f->log_overflow = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(f->log[f->nlog++], sizeof(f->log[0]), fmt, ap);
	va_end(ap);
}

/* Count a failable call; true if it is the one to fail (its log line gets " FAILED"). */
static bool inject(struct fake_vfio *f)
{
	if (++f->calls != f->fail_at)
		return false;
	if (f->nlog) {
		char *l = f->log[f->nlog - 1];

		strncat(l, " FAILED", sizeof(f->log[0]) - strlen(l) - 1);
	}
	errno = f->fail_errno ? f->fail_errno : EIO;
	return true;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static int kind_of(const struct fake_vfio *f, int fd)
{
	for (unsigned int i = 0; i < f->nfds; i++)
		if (f->fds[i].fd == fd)
			return f->fds[i].kind;
	return FK_NONE;
}

static int new_fd(struct fake_vfio *f, int kind, const char *contents)
{
	int fd;

	if (f->nfds == FAKE_MAX_FDS)
		return fail(EMFILE);
	fd = kind == FK_EVENTFD ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)
				: memfd_create(kind_name[kind], MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (contents) {
		size_t n = strlen(contents);

		if (write(fd, contents, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET)) {
			close(fd);
			return fail(EIO);
		}
	}
	f->fds[f->nfds].fd = fd;
	f->fds[f->nfds].kind = kind;
	f->nfds++;
	return fd;
}

/* ---- sysfs and /dev/vfio ---- */

static bool sysfs_path(const struct fake_vfio *f, const char *path, const char *attr)
{
	char want[160];

	snprintf(want, sizeof(want), "/sys/bus/pci/devices/%s/%s", f->cfg.bdf, attr);
	return !strcmp(path, want);
}

static int fk_open(void *ctx, const char *path, int flags)
{
	struct fake_vfio *f = ctx;
	char node[64];
	int fd;

	logf_(f, "open %s", path);
	if (inject(f))
		return -1;
	if (sysfs_path(f, path, "vendor"))
		return new_fd(f, FK_SYSFS, f->cfg.vendor_text);
	if (sysfs_path(f, path, "device"))
		return new_fd(f, FK_SYSFS, f->cfg.device_text);
	if (!strcmp(path, "/dev/vfio/vfio")) {
		if (!f->cfg.vfio_node)
			return fail(ENOENT);
		return new_fd(f, FK_CONTAINER, NULL);
	}
	snprintf(node, sizeof(node), "/dev/vfio/%s", f->cfg.group ? f->cfg.group : "-");
	if (f->cfg.group && f->cfg.group_node && !strcmp(path, node)) {
		/* a group is opened by one process at a time (vfio_group_fops_open: EBUSY) */
		if (f->group_open)
			return fail(EBUSY);
		if ((flags & O_ACCMODE) != O_RDWR)
			return fail(EINVAL);
		fd = new_fd(f, FK_GROUP, NULL);
		if (fd >= 0)
			f->group_open = true;
		return fd;
	}
	return fail(ENOENT);
}

static ssize_t fk_readlink(void *ctx, const char *path, char *buf, size_t len)
{
	struct fake_vfio *f = ctx;
	char target[128];
	size_t n;

	logf_(f, "readlink %s", path);
	if (inject(f))
		return -1;
	if (sysfs_path(f, path, "iommu_group") && f->cfg.group)
		snprintf(target, sizeof(target), "../../../../kernel/iommu_groups/%s",
			 f->cfg.group);
	else if (sysfs_path(f, path, "driver") && f->cfg.driver)
		snprintf(target, sizeof(target), "../../../../bus/pci/drivers/%s", f->cfg.driver);
	else
		return fail(ENOENT);
	n = strlen(target);
	if (n > len)
		n = len;
	memcpy(buf, target, n); /* readlink does not terminate */
	return (ssize_t)n;
}

static ssize_t fk_read(void *ctx, int fd, void *buf, size_t len)
{
	struct fake_vfio *f = ctx;

	logf_(f, "read %s", kind_name[kind_of(f, fd)]);
	if (inject(f))
		return -1;
	return read(fd, buf, len);
}

static int fk_close(void *ctx, int fd)
{
	struct fake_vfio *f = ctx;

	for (unsigned int i = 0; i < f->nfds; i++) {
		if (f->fds[i].fd != fd)
			continue;
		logf_(f, "close %s", kind_name[f->fds[i].kind]);
		if (f->fds[i].kind == FK_DEVICE) {
			/* vfio_pci_core_close_device disables interrupts, dropping the eventfds */
			for (unsigned int k = 0; k < f->nirq; k++)
				if (f->irq_fd[k] >= 0)
					close(f->irq_fd[k]);
			f->nirq = 0;
		}
		if (f->fds[i].kind == FK_GROUP) {
			/* releasing the group detaches it from its container
			 * (vfio_group_fops_release) */
			f->group_open = false;
			f->container_set = false;
			f->iommu_type = 0;
		}
		f->fds[i] = f->fds[--f->nfds];
		return close(fd);
	}
	logf_(f, "close other");
	return close(fd);
}

static int fk_eventfd(void *ctx, unsigned int initval, int flags)
{
	struct fake_vfio *f = ctx;

	logf_(f, "eventfd 0x%x", (unsigned int)flags);
	if (inject(f))
		return -1;
	return new_fd(f, FK_EVENTFD, NULL);
}

/* ---- container: the type1 IOMMU ---- */

static uint64_t pgsize(const struct fake_vfio *f)
{
	return f->cfg.iova_pgsizes & -f->cfg.iova_pgsizes;
}

static bool iova_valid(const struct fake_vfio *f, uint64_t first, uint64_t last)
{
	/* without reported ranges every IOVA is valid (vfio_iommu_iova_dma_valid) */
	if (!f->cfg.iova_caps)
		return true;
	for (unsigned int i = 0; i < f->cfg.nranges; i++)
		if (first >= f->cfg.ranges[i].start && last <= f->cfg.ranges[i].end)
			return true;
	return false;
}

/* vfio_dma_do_map */
static int iommu_map(struct fake_vfio *f, struct vfio_iommu_type1_dma_map *m)
{
	uint64_t p = pgsize(f);

	if (m->argsz < offsetof(struct vfio_iommu_type1_dma_map, size) + sizeof(m->size))
		return fail(EINVAL);
	if (m->flags & ~(uint32_t)(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE))
		return fail(EINVAL);
	if (!(m->flags & (VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)) || !m->size ||
	    ((m->size | m->iova | m->vaddr) & (p - 1)))
		return fail(EINVAL);
	if (m->iova + m->size - 1 < m->iova || m->vaddr + m->size - 1 < m->vaddr)
		return fail(EINVAL);
	for (unsigned int i = 0; i < f->ndma; i++)
		if (m->iova < f->dma[i].iova + f->dma[i].size && f->dma[i].iova < m->iova + m->size)
			return fail(EEXIST);
	if (!iova_valid(f, m->iova, m->iova + m->size - 1))
		return fail(EINVAL);
	/* pinning faults on memory that is not mapped */
	if (msync((void *)(uintptr_t)m->vaddr, m->size, MS_ASYNC))
		return fail(EFAULT);
	if (f->ndma == FAKE_MAX_DMA)
		return fail(ENOSPC);
	f->dma[f->ndma++] = (struct fake_dma){
	    .iova = m->iova, .size = m->size, .vaddr = m->vaddr, .flags = m->flags};
	return 0;
}

/* vfio_dma_do_unmap, type1v2 rules: never split a mapping; report the bytes unmapped */
static int iommu_unmap(struct fake_vfio *f, struct vfio_iommu_type1_dma_unmap *u)
{
	uint64_t p = pgsize(f), done = 0, last;

	if (u->argsz < offsetof(struct vfio_iommu_type1_dma_unmap, size) + sizeof(u->size) ||
	    u->flags)
		return fail(EINVAL);
	if (!u->size || ((u->iova | u->size) & (p - 1)) || u->iova + u->size - 1 < u->iova)
		return fail(EINVAL);
	last = u->iova + u->size - 1;
	for (unsigned int i = 0; i < f->ndma; i++) {
		const struct fake_dma *d = &f->dma[i];

		if (u->iova > d->iova && u->iova < d->iova + d->size)
			return fail(EINVAL);
		if (last >= d->iova && last < d->iova + d->size - 1)
			return fail(EINVAL);
	}
	for (unsigned int i = 0; i < f->ndma;) {
		if (f->dma[i].iova >= u->iova && f->dma[i].iova + f->dma[i].size - 1 <= last) {
			done += f->dma[i].size;
			f->dma[i] = f->dma[--f->ndma];
		} else {
			i++;
		}
	}
	u->size = done;
	return 0;
}

/* vfio_iommu_type1_get_info */
static int iommu_info(struct fake_vfio *f, struct vfio_iommu_type1_info *in)
{
	const size_t base = sizeof(struct vfio_iommu_type1_info);
	size_t capsz = sizeof(struct vfio_iommu_type1_info_cap_iova_range) +
		       f->cfg.nranges * sizeof(struct vfio_iova_range);

	if (in->argsz < offsetof(struct vfio_iommu_type1_info, iova_pgsizes) + 8)
		return fail(EINVAL);
	in->flags = VFIO_IOMMU_INFO_PGSIZES;
	in->iova_pgsizes = f->cfg.iova_pgsizes;
	if (in->argsz >= base)
		in->cap_offset = 0;
	if (!f->cfg.iova_caps)
		return 0;
	in->flags |= VFIO_IOMMU_INFO_CAPS;
	if (in->argsz < base + capsz) {
		in->argsz = (uint32_t)(base + capsz);
		return 0;
	} else {
		struct vfio_iommu_type1_info_cap_iova_range *c = (void *)((uint8_t *)in + base);

		memset(c, 0, capsz);
		c->header.id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE;
		c->header.version = 1;
		c->header.next = 0;
		c->nr_iovas = f->cfg.nr_iovas_claimed ? f->cfg.nr_iovas_claimed : f->cfg.nranges;
		memcpy(c->iova_ranges, f->cfg.ranges, f->cfg.nranges * sizeof(c->iova_ranges[0]));
		in->cap_offset = (uint32_t)base;
	}
	return 0;
}

static int container_ioctl(struct fake_vfio *f, unsigned long req, uintptr_t arg)
{
	switch (req) {
	case VFIO_GET_API_VERSION:
		logf_(f, "ioctl container VFIO_GET_API_VERSION");
		return inject(f) ? -1 : f->cfg.api_version;
	case VFIO_CHECK_EXTENSION:
		logf_(f, "ioctl container VFIO_CHECK_EXTENSION %lu", (unsigned long)arg);
		if (inject(f))
			return -1;
		return (arg == VFIO_TYPE1v2_IOMMU && f->cfg.type1v2) || arg == VFIO_TYPE1_IOMMU;
	case VFIO_SET_IOMMU:
		logf_(f, "ioctl container VFIO_SET_IOMMU %lu", (unsigned long)arg);
		if (inject(f))
			return -1;
		/* needs a group attached first (vfio_ioctl_set_iommu) */
		if (!f->container_set)
			return fail(EINVAL);
		if (f->iommu_type)
			return fail(EBUSY);
		if (arg != VFIO_TYPE1_IOMMU && !(arg == VFIO_TYPE1v2_IOMMU && f->cfg.type1v2))
			return fail(ENODEV);
		f->iommu_type = (int)arg;
		return 0;
	case VFIO_IOMMU_GET_INFO: {
		struct vfio_iommu_type1_info *in = (void *)arg;

		logf_(f, "ioctl container VFIO_IOMMU_GET_INFO argsz=%u", in->argsz);
		if (inject(f))
			return -1;
		if (!f->iommu_type)
			return fail(EINVAL);
		return iommu_info(f, in);
	}
	case VFIO_IOMMU_MAP_DMA: {
		struct vfio_iommu_type1_dma_map *m = (void *)arg;

		logf_(f, "ioctl container VFIO_IOMMU_MAP_DMA iova=0x%llx size=0x%llx flags=%u",
		      (unsigned long long)m->iova, (unsigned long long)m->size, m->flags);
		if (inject(f))
			return -1;
		if (!f->iommu_type)
			return fail(EINVAL);
		return iommu_map(f, m);
	}
	case VFIO_IOMMU_UNMAP_DMA: {
		struct vfio_iommu_type1_dma_unmap *u = (void *)arg;

		logf_(f, "ioctl container VFIO_IOMMU_UNMAP_DMA iova=0x%llx size=0x%llx",
		      (unsigned long long)u->iova, (unsigned long long)u->size);
		if (inject(f))
			return -1;
		if (!f->iommu_type)
			return fail(EINVAL);
		return iommu_unmap(f, u);
	}
	}
	logf_(f, "ioctl container 0x%lx", req);
	return fail(ENOTTY);
}

/* ---- group ---- */

static int group_ioctl(struct fake_vfio *f, unsigned long req, uintptr_t arg)
{
	switch (req) {
	case VFIO_GROUP_GET_STATUS: {
		struct vfio_group_status *st = (void *)arg;

		logf_(f, "ioctl group VFIO_GROUP_GET_STATUS");
		if (inject(f))
			return -1;
		if (st->argsz < sizeof(*st))
			return fail(EINVAL);
		st->flags = (f->cfg.viable ? VFIO_GROUP_FLAGS_VIABLE : 0) |
			    (f->container_set ? VFIO_GROUP_FLAGS_CONTAINER_SET : 0);
		return 0;
	}
	case VFIO_GROUP_SET_CONTAINER: {
		int cfd = *(const int *)arg;

		logf_(f, "ioctl group VFIO_GROUP_SET_CONTAINER %s", kind_name[kind_of(f, cfd)]);
		if (inject(f))
			return -1;
		if (kind_of(f, cfd) != FK_CONTAINER)
			return fail(EBADF);
		if (f->container_set)
			return fail(EINVAL);
		/* a group that is not viable cannot be used (vfio_group_ioctl_set_container) */
		if (!f->cfg.viable)
			return fail(EPERM);
		f->container_set = true;
		return 0;
	}
	case VFIO_GROUP_GET_DEVICE_FD: {
		const char *name = (const char *)arg;

		logf_(f, "ioctl group VFIO_GROUP_GET_DEVICE_FD %s", name);
		if (inject(f))
			return -1;
		if (!f->container_set || !f->iommu_type)
			return fail(EINVAL);
		if (strcmp(name, f->cfg.bdf))
			return fail(ENODEV);
		return new_fd(f, FK_DEVICE, NULL);
	}
	}
	logf_(f, "ioctl group 0x%lx", req);
	return fail(ENOTTY);
}

/* ---- device ---- */

static int region_info(struct fake_vfio *f, struct vfio_region_info *ri)
{
	const size_t base = sizeof(*ri);
	uint8_t caps[512];
	size_t capsz = 0;

	if (ri->argsz < base)
		return fail(EINVAL);
	ri->cap_offset = 0;
	switch (ri->index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		ri->offset = REGION_OFF(ri->index);
		ri->size = CFG_SIZE;
		ri->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
		return 0;
	case VFIO_PCI_BAR0_REGION_INDEX:
		ri->offset = REGION_OFF(ri->index);
		ri->size = f->cfg.bar0_size;
		ri->flags = f->cfg.bar0_flags;
		break;
	default:
		if (ri->index >= VFIO_PCI_NUM_REGIONS)
			return fail(EINVAL);
		ri->offset = REGION_OFF(ri->index);
		ri->size = 0;
		ri->flags = 0;
		return 0;
	}
	/* BAR0 capabilities: sparse areas, then MSI-X mappable (vfio_pci_ioctl_get_region_info) */
	if (f->cfg.nsparse) {
		struct vfio_region_info_cap_sparse_mmap *sp = (void *)caps;

		capsz = sizeof(*sp) + f->cfg.nsparse * sizeof(sp->areas[0]);
		memset(sp, 0, capsz);
		sp->header.id = VFIO_REGION_INFO_CAP_SPARSE_MMAP;
		sp->header.version = 1;
		sp->nr_areas = f->cfg.nsparse;
		memcpy(sp->areas, f->cfg.sparse, f->cfg.nsparse * sizeof(sp->areas[0]));
	}
	if (f->cfg.msix_mappable) {
		struct vfio_info_cap_header *h = (void *)(caps + capsz);

		if (capsz)
			((struct vfio_info_cap_header *)caps)->next = (uint32_t)(base + capsz);
		h->id = VFIO_REGION_INFO_CAP_MSIX_MAPPABLE;
		h->version = 1;
		h->next = 0;
		capsz += sizeof(*h);
	}
	if (!capsz)
		return 0;
	ri->flags |= VFIO_REGION_INFO_FLAG_CAPS;
	if (ri->argsz < base + capsz) {
		ri->argsz = (uint32_t)(base + capsz);
		return 0;
	}
	memcpy((uint8_t *)ri + base, caps, capsz);
	ri->cap_offset = (uint32_t)base;
	return 0;
}

static int set_irqs(struct fake_vfio *f, struct vfio_irq_set *s)
{
	uint32_t data = s->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
	uint32_t action = s->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;

	if (s->argsz < sizeof(*s) || s->index != VFIO_PCI_MSIX_IRQ_INDEX ||
	    action != VFIO_IRQ_SET_ACTION_TRIGGER)
		return fail(EINVAL);
	if (data == VFIO_IRQ_SET_DATA_NONE && s->count == 0) {
		/* disable the index (vfio_pci_set_msi_trigger) */
		for (unsigned int i = 0; i < f->nirq; i++)
			if (f->irq_fd[i] >= 0)
				close(f->irq_fd[i]);
		f->nirq = 0;
		return 0;
	}
	if (data != VFIO_IRQ_SET_DATA_EVENTFD || !s->count ||
	    s->start + s->count > f->cfg.msix_count || s->start + s->count > 64 ||
	    s->argsz < sizeof(*s) + s->count * sizeof(int32_t))
		return fail(EINVAL);
	if (f->nirq)
		return fail(EINVAL); /* NORESIZE: the fake wants a disable first */
	for (uint32_t i = 0; i < s->count; i++) {
		int32_t efd;

		memcpy(&efd, s->data + i * sizeof(efd), sizeof(efd));
		if (kind_of(f, efd) != FK_EVENTFD) {
			for (unsigned int k = 0; k < f->nirq; k++)
				close(f->irq_fd[k]);
			f->nirq = 0;
			return fail(EINVAL);
		}
		f->irq_fd[s->start + i] = fcntl(efd, F_DUPFD_CLOEXEC, 0);
		f->nirq = s->start + i + 1;
	}
	return 0;
}

static int device_ioctl(struct fake_vfio *f, unsigned long req, uintptr_t arg)
{
	switch (req) {
	case VFIO_DEVICE_GET_INFO: {
		struct vfio_device_info *di = (void *)arg;

		logf_(f, "ioctl device VFIO_DEVICE_GET_INFO");
		if (inject(f))
			return -1;
		if (di->argsz < offsetof(struct vfio_device_info, num_irqs) + 4)
			return fail(EINVAL);
		di->flags = f->cfg.device_flags;
		di->num_regions = VFIO_PCI_NUM_REGIONS;
		di->num_irqs = VFIO_PCI_NUM_IRQS;
		return 0;
	}
	case VFIO_DEVICE_GET_REGION_INFO: {
		struct vfio_region_info *ri = (void *)arg;

		logf_(f, "ioctl device VFIO_DEVICE_GET_REGION_INFO index=%u argsz=%u", ri->index,
		      ri->argsz);
		if (inject(f))
			return -1;
		return region_info(f, ri);
	}
	case VFIO_DEVICE_GET_IRQ_INFO: {
		struct vfio_irq_info *ii = (void *)arg;

		logf_(f, "ioctl device VFIO_DEVICE_GET_IRQ_INFO index=%u", ii->index);
		if (inject(f))
			return -1;
		if (ii->argsz < sizeof(*ii) || ii->index >= VFIO_PCI_NUM_IRQS)
			return fail(EINVAL);
		ii->count = ii->index == VFIO_PCI_MSIX_IRQ_INDEX ? f->cfg.msix_count : 0;
		ii->flags = ii->index == VFIO_PCI_MSIX_IRQ_INDEX ? f->cfg.msix_flags : 0;
		return 0;
	}
	case VFIO_DEVICE_SET_IRQS: {
		struct vfio_irq_set *s = (void *)arg;

		logf_(f, "ioctl device VFIO_DEVICE_SET_IRQS index=%u flags=0x%x start=%u count=%u",
		      s->index, s->flags, s->start, s->count);
		if (inject(f))
			return -1;
		return set_irqs(f, s);
	}
	case VFIO_DEVICE_RESET:
		logf_(f, "ioctl device VFIO_DEVICE_RESET");
		if (inject(f))
			return -1;
		/* vfio_pci_ioctl_reset: -EINVAL when the device cannot be reset */
		if (!(f->cfg.device_flags & VFIO_DEVICE_FLAGS_RESET))
			return fail(EINVAL);
		f->resets++;
		return 0;
	}
	logf_(f, "ioctl device 0x%lx", req);
	return fail(ENOTTY);
}

static int fk_ioctl(void *ctx, int fd, unsigned long req, uintptr_t arg)
{
	struct fake_vfio *f = ctx;

	switch (kind_of(f, fd)) {
	case FK_CONTAINER:
		return container_ioctl(f, req, arg);
	case FK_GROUP:
		return group_ioctl(f, req, arg);
	case FK_DEVICE:
		return device_ioctl(f, req, arg);
	}
	logf_(f, "ioctl %s 0x%lx", kind_name[kind_of(f, fd)], req);
	return fail(ENOTTY);
}

/* Config space through the config region (vfio_pci_config_rw): only COMMAND is writable here. */
static ssize_t config_rw(struct fake_vfio *f, void *buf, size_t len, off_t off, bool write)
{
	uint64_t o = (uint64_t)off - REGION_OFF(VFIO_PCI_CONFIG_REGION_INDEX);

	if ((uint64_t)off < REGION_OFF(VFIO_PCI_CONFIG_REGION_INDEX) || o >= CFG_SIZE ||
	    len > CFG_SIZE - o)
		return fail(EINVAL);
	if (!write) {
		memcpy(buf, f->config + o, len);
		return (ssize_t)len;
	}
	for (size_t i = 0; i < len; i++)
		if (o + i == 4 || o + i == 5)
			if (!f->cfg.command_ro)
				f->config[o + i] = ((const uint8_t *)buf)[i];
	return (ssize_t)len;
}

static ssize_t fk_pread(void *ctx, int fd, void *buf, size_t len, off_t off)
{
	struct fake_vfio *f = ctx;
	uint64_t o = (uint64_t)off - REGION_OFF(VFIO_PCI_CONFIG_REGION_INDEX);

	logf_(f, "pread %s config+0x%llx %zu", kind_name[kind_of(f, fd)], (unsigned long long)o,
	      len);
	if (inject(f))
		return -1;
	if (kind_of(f, fd) != FK_DEVICE)
		return pread(fd, buf, len, off);
	return config_rw(f, buf, len, off, false);
}

static ssize_t fk_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off)
{
	struct fake_vfio *f = ctx;
	uint64_t o = (uint64_t)off - REGION_OFF(VFIO_PCI_CONFIG_REGION_INDEX);
	unsigned int v = 0;

	memcpy(&v, buf, len < sizeof(v) ? len : sizeof(v));
	logf_(f, "pwrite %s config+0x%llx %zu 0x%x", kind_name[kind_of(f, fd)],
	      (unsigned long long)o, len, v);
	if (inject(f))
		return -1;
	if (kind_of(f, fd) != FK_DEVICE)
		return pwrite(fd, buf, len, off);
	return config_rw(f, (void *)buf, len, off, true);
}

static void track_vm(struct fake_vfio *f, void *addr, size_t len, bool device)
{
	if (f->nvm < FAKE_MAX_VM)
		f->vm[f->nvm++] = (struct fake_vm){.addr = addr, .len = len, .device = device};
}

/* BAR0 through the device fd (vfio_pci_core_mmap); other fds and anonymous maps are real. */
static void *fk_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct fake_vfio *f = ctx;
	bool dev = fd >= 0 && kind_of(f, fd) == FK_DEVICE;
	void *p;

	if (dev)
		logf_(f, "mmap device bar0+0x%llx 0x%zx prot=%d%s", (unsigned long long)off, len,
		      prot, (flags & MAP_FIXED) ? " fixed" : "");
	else
		logf_(f, "mmap %s 0x%zx prot=%d", fd < 0 ? "anon" : kind_name[kind_of(f, fd)], len,
		      prot);
	if (inject(f))
		return MAP_FAILED;
	if (!dev) {
		p = mmap(addr, len, prot, flags, fd, off);
		if (p != MAP_FAILED)
			track_vm(f, p, len, false);
		return p;
	}
	if (!(f->cfg.bar0_flags & VFIO_REGION_INFO_FLAG_MMAP) || !(flags & MAP_SHARED) || off < 0 ||
	    ((uint64_t)off & 4095) || !len || (uint64_t)off + len > f->cfg.bar0_size) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (f->cfg.nsparse && !f->cfg.msix_mappable) {
		bool inside = false;

		for (unsigned int i = 0; i < f->cfg.nsparse; i++)
			if ((uint64_t)off >= f->cfg.sparse[i].offset &&
			    (uint64_t)off + len <= f->cfg.sparse[i].offset + f->cfg.sparse[i].size)
				inside = true;
		if (!inside) {
			errno = EINVAL;
			return MAP_FAILED;
		}
	}
	p = mmap(addr, len, prot, flags, f->bar_fd, off);
	if (p != MAP_FAILED)
		track_vm(f, p, len, true);
	return p;
}

static int fk_munmap(void *ctx, void *addr, size_t len)
{
	struct fake_vfio *f = ctx;
	uintptr_t a = (uintptr_t)addr, e = a + len;
	bool dev = false;

	for (unsigned int i = 0; i < f->nvm;) {
		uintptr_t va = (uintptr_t)f->vm[i].addr, ve = va + f->vm[i].len;

		if (va >= a && ve <= e) {
			dev |= f->vm[i].device;
			f->vm[i] = f->vm[--f->nvm];
			continue;
		}
		if (va < e && a < ve)
			f->bad_munmaps++;
		i++;
	}
	logf_(f, "munmap %s 0x%zx", dev ? "device" : "other", len);
	return munmap(addr, len);
}

/* ---- setup and device-side helpers ---- */

void fake_default_cfg(struct fake_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->bdf = "0000:03:00.0";
	c->vendor_text = "0x15b3\n";
	c->device_text = "0x1015\n";
	c->group = "17";
	c->driver = "vfio-pci";
	c->group_node = true;
	c->vfio_node = true;
	c->api_version = VFIO_API_VERSION;
	c->type1v2 = true;
	c->viable = true;
	c->device_flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
	c->cfg_vendor = 0x15b3;
	c->cfg_device = 0x1015;
	c->command = 0x0400;	  /* INTx disabled, as vfio-pci leaves it */
	c->bar0_size = 32u << 20; /* 32 MB as on the card (cmd_hca_cap.uar_sz = 5) */
	c->bar0_flags =
	    VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP;
	c->msix_mappable = true;
	c->msix_count = 64;
	c->msix_flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE;
	c->iova_pgsizes = 0x40201000ull; /* 4K | 2M | 1G, as Intel VT-d */
	c->iova_caps = true;
	c->nranges = 2;
	c->ranges[0] = (struct vfio_iova_range){0, 0xfedfffffull};
	c->ranges[1] = (struct vfio_iova_range){0xfef00000ull, (1ull << 48) - 1};
}

static const struct cx4_vfio_sys fake_sys_ops = {
    .open = fk_open,
    .close = fk_close,
    .read = fk_read,
    .readlink = fk_readlink,
    .ioctl = fk_ioctl,
    .mmap = fk_mmap,
    .munmap = fk_munmap,
    .pread = fk_pread,
    .pwrite = fk_pwrite,
    .eventfd = fk_eventfd,
};

int fake_init(struct fake_vfio *f, const struct fake_cfg *cfg)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	f->sys = fake_sys_ops;
	f->sys.ctx = f;
	f->bar_fd = memfd_create("fake-bar0", MFD_CLOEXEC);
	if (f->bar_fd < 0)
		return -errno;
	if (cfg->bar0_size && ftruncate(f->bar_fd, (off_t)cfg->bar0_size))
		return -errno;
	if (cfg->bar0_size) {
		f->bar =
		    mmap(NULL, cfg->bar0_size, PROT_READ | PROT_WRITE, MAP_SHARED, f->bar_fd, 0);
		if (f->bar == MAP_FAILED)
			return -errno;
	}
	memcpy(f->config + 0, &cfg->cfg_vendor, 2);
	memcpy(f->config + 2, &cfg->cfg_device, 2);
	memcpy(f->config + 4, &cfg->command, 2);
	for (unsigned int i = 0; i < 64; i++)
		f->irq_fd[i] = -1;
	return 0;
}

void fake_fini(struct fake_vfio *f)
{
	for (unsigned int i = 0; i < f->nirq; i++)
		if (f->irq_fd[i] >= 0)
			close(f->irq_fd[i]);
	f->nirq = 0;
	for (unsigned int i = 0; i < f->nfds; i++)
		close(f->fds[i].fd);
	f->nfds = 0;
	if (f->bar && f->bar != MAP_FAILED)
		munmap(f->bar, f->cfg.bar0_size);
	f->bar = NULL;
	if (f->bar_fd >= 0)
		close(f->bar_fd);
	f->bar_fd = -1;
}

unsigned int fake_open_fds(const struct fake_vfio *f)
{
	return f->nfds;
}

const char *fake_fd_kind(const struct fake_vfio *f, int fd)
{
	return kind_name[kind_of(f, fd)];
}

int fake_fire(struct fake_vfio *f, unsigned int v)
{
	static const uint64_t one = 1;

	if (v >= f->nirq || f->irq_fd[v] < 0)
		return -EINVAL;
	return write(f->irq_fd[v], &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

/* The device's side of the IOMMU: translate piece by piece, checking the permission. */
static int dma_rw(struct fake_vfio *f, uint64_t iova, void *buf, size_t len, bool write)
{
	uint8_t *b = buf;

	while (len) {
		const struct fake_dma *d = NULL;
		size_t n;

		for (unsigned int i = 0; i < f->ndma; i++)
			if (iova >= f->dma[i].iova && iova - f->dma[i].iova < f->dma[i].size)
				d = &f->dma[i];
		if (!d || !(d->flags & (write ? VFIO_DMA_MAP_FLAG_WRITE : VFIO_DMA_MAP_FLAG_READ)))
			return -EFAULT;
		n = d->size - (iova - d->iova);
		if (n > len)
			n = len;
		if (write)
			memcpy((void *)(uintptr_t)(d->vaddr + (iova - d->iova)), b, n);
		else
			memcpy(b, (const void *)(uintptr_t)(d->vaddr + (iova - d->iova)), n);
		b += n;
		iova += n;
		len -= n;
	}
	return 0;
}

int fake_dma_read(struct fake_vfio *f, uint64_t iova, void *buf, size_t len)
{
	return dma_rw(f, iova, buf, len, false);
}

int fake_dma_write(struct fake_vfio *f, uint64_t iova, const void *buf, size_t len)
{
	return dma_rw(f, iova, (void *)buf, len, true);
}

int fake_log_find(const struct fake_vfio *f, unsigned int from, const char *s)
{
	for (unsigned int i = from; i < f->nlog; i++)
		if (!strcmp(f->log[i], s))
			return (int)i;
	return -1;
}

void fake_log_dump(const struct fake_vfio *f)
{
	for (unsigned int i = 0; i < f->nlog; i++)
		fprintf(stderr, "  %3u %s\n", i, f->log[i]);
}
