// SPDX-License-Identifier: MIT
/*
 * The VFIO backend (devices/cx4/vfio) against the fake VFIO layer (fake_vfio.h): the exact
 * open and close sequences, every failure path (and a failure injected at every single call
 * of the open sequence) leaving nothing behind, BAR0 accessors reaching the fake BAR, MSI-X
 * vectors wired to the bus's eventfds, DMA maps checked byte for byte through the fake
 * IOMMU, the kernel's refusals (overlap, alignment, range, split unmap), reset, and the
 * container-fd path for client memory. One test uses the real system calls (no device here).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bv_expect.h"
#include "bv_rand.h"
#include "cx4_vfio.h"
#include "fake_vfio.h"

#define EXPECT_MSG(sub)                                                                    \
	do {                                                                               \
		if (!strstr(cx4_vfio_strerror(), (sub))) {                                 \
			fprintf(stderr, "FAIL %s:%d: message '%s' lacks '%s'\n", __FILE__, \
				__LINE__, cx4_vfio_strerror(), (sub));                     \
			failures++;                                                        \
		}                                                                          \
	} while (0)

#define BDF "0000:03:00.0"
#define MIB (1ull << 20)
#define IOVA_A 0x100000000ull

/* reproducible test data */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static void rnd_fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(bv_rand64(&rng_state) >> 56);
}

static uint16_t command(const struct fake_vfio *f)
{
	uint16_t c;

	memcpy(&c, f->config + 4, 2);
	return c;
}

/* Nothing of the backend's is left in the fake: fds, mmaps, IOMMU maps, MSI-X, bus master. */
static void expect_released(const struct fake_vfio *f, int line)
{
	if (fake_open_fds(f) || f->nvm || f->ndma || f->nirq || f->bad_munmaps || f->group_open ||
	    (command(f) & 0x4)) {
		fprintf(stderr,
			"FAIL line %d: left behind: %u fds, %u mmaps, %u IOMMU maps, "
			"%u MSI-X, %u bad munmaps, group %s, COMMAND 0x%x\n",
			line, fake_open_fds(f), f->nvm, f->ndma, f->nirq, f->bad_munmaps,
			f->group_open ? "open" : "closed", command(f));
		failures++;
	}
}

/* The log from line `from` on is exactly `want` (then more lines may follow). */
static void expect_log(const struct fake_vfio *f, unsigned int from, const char *const *want,
		       unsigned int n, int line)
{
	for (unsigned int i = 0; i < n; i++) {
		if (from + i >= f->nlog || strcmp(f->log[from + i], want[i])) {
			fprintf(stderr, "FAIL line %d: call %u is '%s', expected '%s'; log:\n",
				line, from + i, from + i < f->nlog ? f->log[from + i] : "(none)",
				want[i]);
			fake_log_dump(f);
			failures++;
			return;
		}
	}
}

static int open_fake(struct fake_vfio *f, const struct fake_cfg *cfg, struct cx4_bus **bus)
{
	if (fake_init(f, cfg)) {
		fprintf(stderr, "fake_init failed\n");
		exit(2);
	}
	return cx4_vfio_open_sys(BDF, &f->sys, bus);
}

static void close_fake(struct fake_vfio *f, struct cx4_bus *bus)
{
	if (bus)
		bus->ops->close(bus);
	expect_released(f, __LINE__);
	fake_fini(f);
}

/* ---- the sequences ---- */

static unsigned int open_sequence(const char **l, char bufs[][128], unsigned int nvec)
{
	unsigned int n = 0;
	static const char *const head[] = {
	    "open /sys/bus/pci/devices/" BDF "/vendor",
	    "read sysfs",
	    "close sysfs",
	    "open /sys/bus/pci/devices/" BDF "/device",
	    "read sysfs",
	    "close sysfs",
	    "readlink /sys/bus/pci/devices/" BDF "/iommu_group",
	    "open /dev/vfio/vfio",
	    "ioctl container VFIO_GET_API_VERSION",
	    "ioctl container VFIO_CHECK_EXTENSION 3",
	    "open /dev/vfio/17",
	    "ioctl group VFIO_GROUP_GET_STATUS",
	    "ioctl group VFIO_GROUP_SET_CONTAINER container",
	    "ioctl container VFIO_SET_IOMMU 3",
	    "ioctl container VFIO_IOMMU_GET_INFO argsz=24",
	    /* 24 + the IOVA range capability: 16-byte header part + 2 ranges of 16 */
	    "ioctl container VFIO_IOMMU_GET_INFO argsz=72",
	    "ioctl group VFIO_GROUP_GET_DEVICE_FD " BDF,
	    "ioctl device VFIO_DEVICE_GET_INFO",
	    "ioctl device VFIO_DEVICE_GET_REGION_INFO index=7 argsz=32",
	    "pread device config+0x0 4",
	    "ioctl device VFIO_DEVICE_GET_REGION_INFO index=0 argsz=32",
	    /* + the MSI-X mappable capability header */
	    "ioctl device VFIO_DEVICE_GET_REGION_INFO index=0 argsz=40",
	    "pread device config+0x4 2",
	    "pwrite device config+0x4 2 0x406",
	    "pread device config+0x4 2",
	    "mmap device bar0+0x0 0x2000000 prot=3",
	    "ioctl device VFIO_DEVICE_GET_IRQ_INFO index=2",
	};

	for (unsigned int i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		l[n++] = head[i];
	for (unsigned int i = 0; i < nvec; i++)
		l[n++] = "eventfd 0x80800"; /* EFD_CLOEXEC | EFD_NONBLOCK */
	snprintf(bufs[0], 128,
		 "ioctl device VFIO_DEVICE_SET_IRQS index=2 flags=0x24 start=0 "
		 "count=%u",
		 nvec);
	l[n++] = bufs[0];
	return n;
}

static void test_open_sequence(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;
	const char *want[128];
	char bufs[2][128];
	unsigned int n, at;

	fake_default_cfg(&cfg);
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	EXPECT(bus != NULL);
	if (!bus) {
		fprintf(stderr, "open: %s\n", cx4_vfio_strerror());
		fake_log_dump(f);
		fake_fini(f);
		free(f);
		return;
	}
	n = open_sequence(want, bufs, CX4_BUS_MAX_VECTORS);
	expect_log(f, 0, want, n, __LINE__);
	EXPECT_EQ(f->nlog, n);

	/* what the bus says */
	EXPECT(cx4_vfio_is(bus));
	EXPECT_EQ(bus->bar0.len, 32 * MIB);
	EXPECT(bus->bar0.kick == NULL);
	EXPECT(bus->kick.page == NULL);
	EXPECT_EQ(bus->kick_page_fd, -1);
	EXPECT(!strcmp(fake_fd_kind(f, bus->bar0_fd), "device"));
	EXPECT_EQ(bus->bar0_fd_offset, 0); /* BAR0 is region 0 of vfio-pci */
	EXPECT_EQ(bus->num_vectors, CX4_BUS_MAX_VECTORS);
	EXPECT_EQ(cx4_vfio_msix_count(bus), 64);
	for (unsigned int i = 0; i < bus->num_vectors; i++)
		EXPECT(!strcmp(fake_fd_kind(f, bus->irq_fd[i]), "eventfd"));
	EXPECT(!strcmp(fake_fd_kind(f, cx4_vfio_container_fd(bus)), "container"));
	EXPECT_EQ(command(f), 0x406); /* MEMORY | MASTER added, INTx-disable kept */
	EXPECT_EQ(f->iommu_type, 3);  /* VFIO_TYPE1v2_IOMMU */
	EXPECT(f->container_set);

	/* close: MSI-X off, eventfds, bus master off, BAR0, device, group, container */
	at = f->nlog;
	bus->ops->close(bus);
	{
		const char *c[64];
		unsigned int k = 0;

		c[k++] = "ioctl device VFIO_DEVICE_SET_IRQS index=2 flags=0x21 start=0 count=0";
		for (unsigned int i = 0; i < CX4_BUS_MAX_VECTORS; i++)
			c[k++] = "close eventfd";
		c[k++] = "pread device config+0x4 2";
		c[k++] = "pwrite device config+0x4 2 0x402";
		c[k++] = "pread device config+0x4 2";
		c[k++] = "munmap device 0x2000000";
		c[k++] = "close device";
		c[k++] = "close group";
		c[k++] = "close container";
		expect_log(f, at, c, k, __LINE__);
		EXPECT_EQ(f->nlog, at + k);
	}
	expect_released(f, __LINE__);
	fake_fini(f);
	free(f);
}

/* The short form of the address means domain 0; fewer vectors than the bus can hold. */
static void test_short_bdf_and_few_vectors(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;

	fake_default_cfg(&cfg);
	cfg.msix_count = 8;
	cfg.device_text = "0x1013\n";
	cfg.cfg_device = 0x1013;
	EXPECT_EQ(fake_init(f, &cfg), 0);
	EXPECT_EQ(cx4_vfio_open_sys("03:00.0", &f->sys, &bus), 0);
	EXPECT(fake_log_find(f, 0, "ioctl group VFIO_GROUP_GET_DEVICE_FD " BDF) >= 0);
	EXPECT(fake_log_find(f, 0,
			     "ioctl device VFIO_DEVICE_SET_IRQS index=2 flags=0x24 "
			     "start=0 count=8") >= 0);
	if (bus) {
		EXPECT_EQ(bus->num_vectors, 8);
		EXPECT_EQ(cx4_vfio_msix_count(bus), 8);
		for (unsigned int i = 8; i < CX4_BUS_MAX_VECTORS; i++)
			EXPECT_EQ(bus->irq_fd[i], -1);
	}
	close_fake(f, bus);
	free(f);
}

/* ---- failure paths ---- */

struct fail_case {
	const char *name;
	void (*tweak)(struct fake_cfg *c);
	const char *bdf;
	int err;
	const char *msg;
};

static void t_api(struct fake_cfg *c)
{
	c->api_version = 1;
}
static void t_type1v2(struct fake_cfg *c)
{
	c->type1v2 = false;
}
static void t_viable(struct fake_cfg *c)
{
	c->viable = false;
}
static void t_vendor(struct fake_cfg *c)
{
	c->vendor_text = "0x8086\n";
}
static void t_cx5(struct fake_cfg *c)
{
	c->device_text = "0x1017\n";
}
static void t_garbage(struct fake_cfg *c)
{
	c->device_text = "mlx\n";
}
static void t_no_group(struct fake_cfg *c)
{
	c->group = NULL;
}
static void t_not_vfio(struct fake_cfg *c)
{
	c->group_node = false;
	c->driver = "mlx5_core";
}
static void t_no_vfio(struct fake_cfg *c)
{
	c->vfio_node = false;
}
static void t_msix0(struct fake_cfg *c)
{
	c->msix_count = 0;
}
static void t_msix_noefd(struct fake_cfg *c)
{
	c->msix_flags = VFIO_IRQ_INFO_NORESIZE;
}
static void t_cfg_id(struct fake_cfg *c)
{
	c->cfg_device = 0x1017;
}
static void t_bar_nommap(struct fake_cfg *c)
{
	c->bar0_flags &= ~VFIO_REGION_INFO_FLAG_MMAP;
}
static void t_bar_small(struct fake_cfg *c)
{
	c->bar0_size = 0x1000;
}
static void t_cmd_ro(struct fake_cfg *c)
{
	c->command_ro = true;
}
static void t_not_pci(struct fake_cfg *c)
{
	c->device_flags = VFIO_DEVICE_FLAGS_PLATFORM;
}
static void t_caps_bad(struct fake_cfg *c)
{
	c->nr_iovas_claimed = 1000;
}
static void t_no_range(struct fake_cfg *c)
{
	c->nranges = 0;
}
static void t_no_pgsize(struct fake_cfg *c)
{
	c->iova_pgsizes = 0;
}

static const struct fail_case fail_cases[] = {
    {"API version", t_api, NULL, EPROTO, "VFIO_GET_API_VERSION is 1"},
    {"no type1v2", t_type1v2, NULL, EOPNOTSUPP, "no VFIO_TYPE1v2_IOMMU"},
    {"group not viable", t_viable, NULL, EBUSY, "group 17 is not viable"},
    {"wrong vendor", t_vendor, NULL, ENODEV, "8086:1015 is not a ConnectX-4"},
    {"ConnectX-5", t_cx5, NULL, ENODEV, "15b3:1017 is not a ConnectX-4"},
    {"unreadable device id", t_garbage, NULL, EPROTO, "/device"},
    {"no such device", NULL, "0000:04:00.0", ENODEV, "no such PCI device"},
    {"no IOMMU group", t_no_group, NULL, ENOENT, "no IOMMU group"},
    {"not bound to vfio-pci", t_not_vfio, NULL, ENOENT, "bound to driver mlx5_core"},
    {"no /dev/vfio/vfio", t_no_vfio, NULL, ENOENT, "opening /dev/vfio/vfio"},
    {"no MSI-X", t_msix0, NULL, ENODEV, "no MSI-X vectors"},
    {"MSI-X without eventfd", t_msix_noefd, NULL, EOPNOTSUPP, "cannot signal eventfds"},
    {"config id mismatch", t_cfg_id, NULL, ENODEV, "config space says 15b3:1017"},
    {"BAR0 not mmappable", t_bar_nommap, NULL, ENODEV, "BAR0 (flags 0xb"},
    {"BAR0 too small", t_bar_small, NULL, ENODEV, "4096 bytes) is not an mmappable"},
    {"COMMAND does not stick", t_cmd_ro, NULL, EIO, "PCI COMMAND is 0x0400"},
    {"not vfio-pci", t_not_pci, NULL, ENODEV, "not a vfio-pci device"},
    {"IOVA caps truncated", t_caps_bad, NULL, EPROTO, "truncated (1000 ranges)"},
    {"no IOVA range", t_no_range, NULL, ENOSPC, "no usable IOVA range"},
    {"no IOMMU page size", t_no_pgsize, NULL, EPROTO, "no page size"},
    {"bad address", NULL, "0000:03:00.8", EINVAL, "is not a PCI address"},
    {"path in address", NULL, "../../../../etc", EINVAL, "is not a PCI address"},
    {"device 0x20", NULL, "0000:03:20.0", EINVAL, "is not a PCI address"},
    {"trailing junk", NULL, "0000:03:00.00", EINVAL, "is not a PCI address"},
    {"empty address", NULL, "", EINVAL, "is not a PCI address"},
};

static void test_failures(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));

	for (size_t i = 0; i < sizeof(fail_cases) / sizeof(fail_cases[0]); i++) {
		const struct fail_case *fc = &fail_cases[i];
		struct fake_cfg cfg;
		struct cx4_bus *bus = (struct cx4_bus *)&cfg; /* must be reset to NULL */
		int r, before = failures;

		fake_default_cfg(&cfg);
		if (fc->tweak)
			fc->tweak(&cfg);
		EXPECT_EQ(fake_init(f, &cfg), 0);
		errno = 0;
		r = cx4_vfio_open_sys(fc->bdf ? fc->bdf : BDF, &f->sys, &bus);
		EXPECT_EQ(r, -fc->err);
		EXPECT_EQ(errno, fc->err);
		EXPECT(bus == NULL);
		EXPECT_MSG(fc->msg);
		if (fc->bdf && fc->err == EINVAL)
			EXPECT_EQ(f->nlog, 0); /* refused before any system call */
		if (r == 0 && bus)
			bus->ops->close(bus);
		expect_released(f, __LINE__);
		if (failures != before)
			fprintf(stderr, "  in case '%s' (message: %s)\n", fc->name,
				cx4_vfio_strerror());
		fake_fini(f);
	}
	/* NULL address and NULL bus pointer */
	{
		struct cx4_bus *bus;

		EXPECT_EQ(cx4_vfio_open_sys(NULL, &f->sys, &bus), -EINVAL);
		EXPECT_MSG("(null)");
		EXPECT_EQ(cx4_vfio_open_sys(BDF, &f->sys, NULL), -EINVAL);
	}
	free(f);
}

/* A second open of the same group (another cx4d) is refused while the first holds it. */
static void test_group_busy(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *a = NULL, *b = (struct cx4_bus *)&cfg;

	fake_default_cfg(&cfg);
	EXPECT_EQ(open_fake(f, &cfg, &a), 0);
	EXPECT_EQ(cx4_vfio_open_sys(BDF, &f->sys, &b), -EBUSY);
	EXPECT(b == NULL);
	EXPECT_MSG("open in another process");
	close_fake(f, a);
	free(f);
}

/* What the message must name when the call logged as `line` fails. */
static void failed_call_name(const char *line, char *out, size_t len)
{
	static const struct {
		const char *prefix, *name;
	} fixed[] = {
	    {"read sysfs", "reading /sys/bus/pci/devices/" BDF "/"},
	    {"pread device config+0x0 ", "reading PCI config space at 0x0"},
	    {"pread device config+0x4 ", "reading PCI config space at 0x4"},
	    {"pwrite device config+0x4 ", "writing PCI config space at 0x4"},
	    {"mmap device bar0+0x0 ", "mmap of BAR0"},
	    {"eventfd ", "eventfd for MSI-X vector"},
	};
	const char *p;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strncmp(line, fixed[i].prefix, strlen(fixed[i].prefix))) {
			snprintf(out, len, "%s", fixed[i].name);
			return;
		}
	/* "open PATH", "readlink PATH": the path; "ioctl KIND NAME ...": the ioctl's name */
	if (!strncmp(line, "ioctl ", 6) && (p = strchr(line + 6, ' ')))
		line = p + 1;
	else if ((p = strchr(line, ' ')))
		line = p + 1;
	snprintf(out, len, "%.*s", (int)strcspn(line, " "), line);
}

/*
 * Make each call of the open sequence fail in turn: open must report it, name it, and leave
 * nothing behind (no fd, mapping, IOMMU map, MSI-X, bus master).
 */
static void test_fail_every_call(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;
	unsigned int n;

	fake_default_cfg(&cfg);
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	n = f->calls;
	close_fake(f, bus);
	EXPECT(n > 40);
	for (unsigned int i = 1; i <= n; i++) {
		int before = failures, r;
		unsigned int nfailed;

		bus = (struct cx4_bus *)&cfg;
		EXPECT_EQ(fake_init(f, &cfg), 0);
		f->fail_at = i;
		f->fail_errno = EIO;
		r = cx4_vfio_open_sys(BDF, &f->sys, &bus);
		EXPECT_EQ(r, -EIO);
		EXPECT(bus == NULL);
		EXPECT_MSG(BDF ": ");
		EXPECT_MSG("Input/output error");
		nfailed = 0;
		for (unsigned int k = 0; k < f->nlog; k++) {
			const char *l = f->log[k];
			size_t ll = strlen(l);
			char name[160];

			if (ll < 7 || strcmp(l + ll - 7, " FAILED"))
				continue;
			failed_call_name(l, name, sizeof(name));
			EXPECT_MSG(name);
			nfailed++;
		}
		EXPECT_EQ(nfailed, 1);
		if (r == 0 && bus)
			bus->ops->close(bus);
		expect_released(f, __LINE__);
		if (failures != before) {
			fprintf(stderr, "  with call %u failing (message: %s)\n", i,
				cx4_vfio_strerror());
			fake_log_dump(f);
		}
		fake_fini(f);
	}
	free(f);
}

/* ---- BAR0 ---- */

static void test_bar0(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;
	uint8_t pat[4096], bf[256];
	uint8_t *uar;

	fake_default_cfg(&cfg);
	if (open_fake(f, &cfg, &bus)) {
		EXPECT(!"open");
		fake_fini(f);
		free(f);
		return;
	}
	/* the device's registers are big-endian (Linux device.h struct mlx5_init_seg) */
	memcpy(f->bar, "\x00\x0c\x00\x0e\x00\x05\x04\xc4", 8);
	EXPECT_EQ(cx4_mmio_read32(&bus->bar0, 0x0), 0x000c000e); /* fw 14.12 */
	EXPECT_EQ(cx4_mmio_read32(&bus->bar0, 0x4) >> 16, 5);	 /* cmdif_rev */
	cx4_mmio_write32(&bus->bar0, 0x18, 1u << 31);		 /* cmd_dbell, slot 31 */
	EXPECT(!memcmp(f->bar + 0x18, "\x80\x00\x00\x00", 4));
	cx4_mmio_write32(&bus->bar0, 0x10, 0x12345678); /* cmdq_addr_h */
	EXPECT(!memcmp(f->bar + 0x10, "\x12\x34\x56\x78", 4));
	/* a whole page, every word, both ways */
	rnd_fill(pat, sizeof(pat));
	memcpy(f->bar + 3 * 4096, pat, sizeof(pat));
	for (size_t o = 0; o < sizeof(pat); o += 4) {
		uint32_t be;

		memcpy(&be, pat + o, 4);
		if (cx4_mmio_read32(&bus->bar0, 3 * 4096 + o) != __builtin_bswap32(be)) {
			EXPECT(!"BAR0 read mismatch");
			break;
		}
	}
	for (size_t o = 0; o < sizeof(pat); o += 4) {
		uint32_t be;

		memcpy(&be, pat + o, 4);
		cx4_mmio_write32(&bus->bar0, 4 * 4096 + o, __builtin_bswap32(be));
	}
	EXPECT(!memcmp(f->bar + 4 * 4096, pat, sizeof(pat)));
	/* UAR doorbell (64-bit) and BlueFlame in UAR page 5 (MLX5_CQ_DOORBELL, MLX5_BF_OFFSET) */
	cx4_mmio_write64_be(&bus->bar0, 5 * 4096 + 0x20, 0x0123456789abcdefull);
	EXPECT(!memcmp(f->bar + 5 * 4096 + 0x20, "\xef\xcd\xab\x89\x67\x45\x23\x01", 8));
	rnd_fill(bf, sizeof(bf));
	cx4_mmio_bf_copy(&bus->bar0, 5 * 4096 + 0x800, bf, sizeof(bf));
	EXPECT(!memcmp(f->bar + 5 * 4096 + 0x800, bf, sizeof(bf)));
	/* the last word of the BAR */
	cx4_mmio_write32(&bus->bar0, 32 * MIB - 4, 0xa5a5c3c3);
	EXPECT(!memcmp(f->bar + 32 * MIB - 4, "\xa5\xa5\xc3\xc3", 4));

	/* a client maps its UAR page n from bar0_fd at bar0_fd_offset + n * 4 KB */
	uar = f->sys.mmap(f->sys.ctx, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bus->bar0_fd,
			  (off_t)(bus->bar0_fd_offset + 7 * 4096));
	EXPECT(uar != MAP_FAILED);
	if (uar != MAP_FAILED) {
		uar[0x20] = 0x5a;
		EXPECT_EQ(f->bar[7 * 4096 + 0x20], 0x5a);
		EXPECT_EQ(cx4_mmio_read32(&bus->bar0, 7 * 4096 + 0x20) >> 24, 0x5a);
		f->sys.munmap(f->sys.ctx, uar, 4096);
	}
	close_fake(f, bus);
	free(f);
}

/* Is the page at p mapped with permissions `perm` ("---p", "rw-s")? From /proc/self/maps. */
static bool page_perms(const void *p, const char *perm)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[512];
	bool ok = false;

	if (!m)
		return false;
	while (fgets(line, sizeof(line), m)) {
		unsigned long a, b;
		char pr[8];

		if (sscanf(line, "%lx-%lx %7s", &a, &b, pr) == 3 && (uintptr_t)p >= a &&
		    (uintptr_t)p < b) {
			ok = !strcmp(pr, perm);
			break;
		}
	}
	fclose(m);
	return ok;
}

/* Old kernels: BAR0 mappable only around the MSI-X table (sparse mmap capability). */
static void test_bar0_sparse(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;

	fake_default_cfg(&cfg);
	cfg.msix_mappable = false;
	cfg.nsparse = 2;
	cfg.sparse[0] = (struct vfio_region_sparse_mmap_area){0, 0x2000};
	cfg.sparse[1] = (struct vfio_region_sparse_mmap_area){0x3000, 32 * MIB - 0x3000};
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	EXPECT(fake_log_find(f, 0, "mmap anon 0x2000000 prot=0") >= 0);
	EXPECT(fake_log_find(f, 0, "mmap device bar0+0x0 0x2000 prot=3 fixed") >= 0);
	EXPECT(fake_log_find(f, 0, "mmap device bar0+0x3000 0x1ffd000 prot=3 fixed") >= 0);
	if (bus) {
		cx4_mmio_write32(&bus->bar0, 0x1ffc, 0x11223344);
		EXPECT(!memcmp(f->bar + 0x1ffc, "\x11\x22\x33\x44", 4));
		cx4_mmio_write32(&bus->bar0, 0x3000, 0x55667788);
		EXPECT(!memcmp(f->bar + 0x3000, "\x55\x66\x77\x88", 4));
		EXPECT(page_perms((const void *)(bus->bar0.base + 0x2000), "---p"));
		EXPECT(page_perms((const void *)(bus->bar0.base + 0x3000), "rw-s"));
	}
	close_fake(f, bus);

	/* sparse, but the kernel also says the MSI-X table may be mapped: one mapping */
	cfg.msix_mappable = true;
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	EXPECT(fake_log_find(f, 0, "mmap device bar0+0x0 0x2000000 prot=3") >= 0);
	EXPECT(fake_log_find(f, 0, "mmap anon 0x2000000 prot=0") < 0);
	close_fake(f, bus);

	/* an area outside the BAR is refused */
	cfg.msix_mappable = false;
	cfg.sparse[1].size = 32 * MIB;
	bus = NULL;
	EXPECT_EQ(open_fake(f, &cfg, &bus), -EPROTO);
	EXPECT_MSG("outside the BAR");
	close_fake(f, bus);
	free(f);
}

/* ---- MSI-X ---- */

static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void test_msix(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;

	fake_default_cfg(&cfg);
	if (open_fake(f, &cfg, &bus)) {
		EXPECT(!"open");
		fake_fini(f);
		free(f);
		return;
	}
	EXPECT_EQ(f->nirq, CX4_BUS_MAX_VECTORS);
	for (unsigned int v = 0; v < bus->num_vectors; v++) {
		uint64_t cnt = 0;

		EXPECT_EQ(fake_fire(f, v), 0);
		EXPECT_EQ(fake_fire(f, v), 0);
		for (unsigned int k = 0; k < bus->num_vectors; k++)
			if (readable(bus->irq_fd[k]) != (k == v)) {
				fprintf(stderr, "FAIL: vector %u fired, fd of %u readable: %d\n", v,
					k, readable(bus->irq_fd[k]));
				failures++;
			}
		EXPECT_EQ(read(bus->irq_fd[v], &cnt, sizeof(cnt)), sizeof(cnt));
		EXPECT_EQ(cnt, 2);
		/* non-blocking: an idle vector reads EAGAIN, never blocks the daemon */
		EXPECT_EQ(read(bus->irq_fd[v], &cnt, sizeof(cnt)), -1);
		EXPECT_EQ(errno, EAGAIN);
	}
	close_fake(f, bus);
	free(f);
}

/* ---- DMA ---- */

static int make_memfd(size_t len, uint8_t **view)
{
	int fd = memfd_create("vfio-test-dma", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)len))
		return -1;
	*view = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return *view == MAP_FAILED ? -1 : fd;
}

static void test_dma(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;
	const size_t len = 64 * 1024;
	uint8_t *view, *buf = NULL, *got = malloc(len), *pat = malloc(len);
	unsigned int nvm0, nlog0;
	struct cx4_dma_map m;
	int fd;

	fake_default_cfg(&cfg);
	if (open_fake(f, &cfg, &bus)) {
		EXPECT(!"open");
		fake_fini(f);
		free(f);
		free(got);
		free(pat);
		return;
	}
	fd = make_memfd(len, &view);
	EXPECT(fd >= 0);
	rnd_fill(view, len);
	nvm0 = f->nvm;

	/* fd-backed, read/write: the device reads what the host wrote, and the reverse */
	m = (struct cx4_dma_map){
	    .iova = IOVA_A, .len = len, .perm = CX4_DMA_READ | CX4_DMA_WRITE, .fd = fd};
	EXPECT_EQ(bus->ops->dma_map(bus, &m), 0);
	EXPECT(fake_log_find(f, 0,
			     "ioctl container VFIO_IOMMU_MAP_DMA iova=0x100000000 "
			     "size=0x10000 flags=3") >= 0);
	EXPECT_EQ(f->nvm, nvm0 + 1); /* our own mmap of the memfd */
	EXPECT_EQ(fake_dma_read(f, IOVA_A, got, len), 0);
	EXPECT(!memcmp(got, view, len));
	rnd_fill(pat, len);
	EXPECT_EQ(fake_dma_write(f, IOVA_A, pat, len), 0);
	EXPECT(!memcmp(view, pat, len));

	/* fd offset; read-only: the device may read, not write */
	m = (struct cx4_dma_map){.iova = IOVA_A + 2 * MIB,
				 .len = 16384,
				 .perm = CX4_DMA_READ,
				 .fd = fd,
				 .fd_offset = 32768};
	EXPECT_EQ(bus->ops->dma_map(bus, &m), 0);
	EXPECT_EQ(fake_dma_read(f, IOVA_A + 2 * MIB, got, 16384), 0);
	EXPECT(!memcmp(got, view + 32768, 16384));
	EXPECT_EQ(fake_dma_write(f, IOVA_A + 2 * MIB, pat, 8), -EFAULT);
	EXPECT(!memcmp(view + 32768, pat + 32768, 16384));

	/* this process's own memory, by pid 0 and by our pid */
	EXPECT_EQ(posix_memalign((void **)&buf, 4096, 8192), 0);
	memset(buf, 0, 8192);
	m = (struct cx4_dma_map){.iova = IOVA_A + 4 * MIB,
				 .len = 8192,
				 .perm = CX4_DMA_WRITE,
				 .fd = -1,
				 .pid = 0,
				 .va = (uintptr_t)buf};
	EXPECT_EQ(bus->ops->dma_map(bus, &m), 0);
	EXPECT_EQ(fake_dma_write(f, IOVA_A + 4 * MIB + 100, pat, 5000), 0);
	EXPECT(!memcmp(buf + 100, pat, 5000));
	EXPECT_EQ(fake_dma_read(f, IOVA_A + 4 * MIB, got, 8), -EFAULT); /* write-only */
	EXPECT_EQ(bus->ops->dma_unmap(bus, IOVA_A + 4 * MIB, 8192), 0);
	m.pid = getpid();
	EXPECT_EQ(bus->ops->dma_map(bus, &m), 0);
	EXPECT_EQ(bus->ops->dma_unmap(bus, IOVA_A + 4 * MIB, 8192), 0);

	/* another process's memory: not with VFIO type1 */
	nlog0 = f->nlog;
	m.pid = 1;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EOPNOTSUPP);
	EXPECT_EQ(errno, EOPNOTSUPP);
	EXPECT_MSG("container fd");
	EXPECT_EQ(f->nlog, nlog0); /* refused before the kernel */

	/* overlaps: refused by us ... */
	m = (struct cx4_dma_map){
	    .iova = IOVA_A + 4096, .len = 4096, .perm = CX4_DMA_READ, .fd = fd};
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EEXIST);
	EXPECT_MSG("overlaps the mapping at 0x100000000");
	m.iova = IOVA_A - 4096;
	m.len = 8192;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EEXIST);
	EXPECT_EQ(f->nvm, nvm0 + 2); /* no mmap left behind by the refusals */
	/* ... and by the kernel, for a range a client mapped through the container fd */
	EXPECT_EQ(cx4_vfio_client_dma_map(&f->sys, cx4_vfio_container_fd(bus), buf,
					  IOVA_A + 8 * MIB, 8192, CX4_DMA_READ),
		  0);
	m = (struct cx4_dma_map){
	    .iova = IOVA_A + 8 * MIB, .len = 4096, .perm = CX4_DMA_READ, .fd = fd};
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EEXIST);
	EXPECT_MSG("VFIO_IOMMU_MAP_DMA iova 0x100800000");
	EXPECT_EQ(f->nvm, nvm0 + 2);
	EXPECT_EQ(
	    cx4_vfio_client_dma_unmap(&f->sys, cx4_vfio_container_fd(bus), IOVA_A + 8 * MIB, 8192),
	    0);

	/* alignment, wrap, permission, range */
	m = (struct cx4_dma_map){
	    .iova = IOVA_A + 16 * MIB + 1, .len = 4096, .perm = CX4_DMA_READ, .fd = fd};
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EINVAL);
	EXPECT_MSG("not a multiple of the IOMMU page");
	m.iova = IOVA_A + 16 * MIB;
	m.len = 100;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EINVAL);
	m.len = 0;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EINVAL);
	m.len = 4096;
	m.perm = 0;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EINVAL);
	EXPECT_MSG("bad permission");
	m.perm = 4;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EINVAL);
	m.perm = CX4_DMA_READ;
	m.iova = 0xfffffffffffff000ull;
	m.len = 8192;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EINVAL);
	EXPECT_MSG("wraps");
	m.iova = 1ull << 50;
	m.len = 4096;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -ERANGE);
	EXPECT_MSG("outside the IOMMU's IOVA ranges");
	m.iova = 0xfee00000ull; /* the MSI window the kernel reserves */
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -ERANGE);
	m.iova = 0xfedff000ull; /* straddles the end of range 0 */
	m.len = 8192;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -ERANGE);
	m.fd = 12345; /* not an fd: mmap fails, named */
	m.iova = IOVA_A + 16 * MIB;
	m.len = 4096;
	EXPECT_EQ(bus->ops->dma_map(bus, &m), -EBADF);
	EXPECT_MSG("mmap of fd 12345");
	EXPECT_EQ(f->nvm, nvm0 + 2);

	/* the fake kernel itself refuses what type1 refuses */
	{
		struct vfio_iommu_type1_dma_map km = {.argsz = sizeof(km),
						      .flags = VFIO_DMA_MAP_FLAG_READ,
						      .vaddr = (uintptr_t)buf + 1,
						      .iova = IOVA_A + 32 * MIB,
						      .size = 4096};
		int cfd = cx4_vfio_container_fd(bus);

		EXPECT_EQ(f->sys.ioctl(f->sys.ctx, cfd, VFIO_IOMMU_MAP_DMA, (uintptr_t)&km), -1);
		EXPECT_EQ(errno, EINVAL); /* unaligned vaddr */
		km.vaddr = (uintptr_t)buf;
		km.iova = IOVA_A;
		EXPECT_EQ(f->sys.ioctl(f->sys.ctx, cfd, VFIO_IOMMU_MAP_DMA, (uintptr_t)&km), -1);
		EXPECT_EQ(errno, EEXIST); /* overlap */
		km.iova = 1ull << 50;
		EXPECT_EQ(f->sys.ioctl(f->sys.ctx, cfd, VFIO_IOMMU_MAP_DMA, (uintptr_t)&km), -1);
		EXPECT_EQ(errno, EINVAL); /* outside the ranges */
	}

	/* unmap: unknown, split, and two adjacent mappings at once */
	EXPECT_EQ(bus->ops->dma_unmap(bus, IOVA_A + 64 * MIB, 4096), -ENOENT);
	EXPECT_MSG("no mapping starts there");
	EXPECT_EQ(bus->ops->dma_unmap(bus, IOVA_A, 4096), -EINVAL);
	EXPECT_MSG("does not cover whole mappings");
	EXPECT_EQ(bus->ops->dma_unmap(bus, IOVA_A + 4096, 4096), -ENOENT);
	EXPECT_EQ(bus->ops->dma_unmap(bus, IOVA_A, 0), -ENOENT);
	EXPECT_EQ(fake_dma_read(f, IOVA_A, got, 16), 0); /* still mapped */
	m = (struct cx4_dma_map){.iova = IOVA_A + len, .len = 4096, .perm = CX4_DMA_READ, .fd = fd};
	EXPECT_EQ(bus->ops->dma_map(bus, &m), 0);
	EXPECT_EQ(f->ndma, 3);
	EXPECT_EQ(bus->ops->dma_unmap(bus, IOVA_A, len + 4096), 0);
	EXPECT(fake_log_find(f, 0,
			     "ioctl container VFIO_IOMMU_UNMAP_DMA iova=0x100000000 "
			     "size=0x11000") >= 0);
	EXPECT_EQ(f->ndma, 1);
	EXPECT_EQ(fake_dma_read(f, IOVA_A, got, 16), -EFAULT);
	EXPECT_EQ(fake_dma_read(f, IOVA_A + len, got, 16), -EFAULT);
	EXPECT_EQ(f->nvm, nvm0 + 1); /* the memfd views were unmapped */
	/* the mapping left at IOVA_A + 2 MB goes with close */
	close_fake(f, bus);
	munmap(view, len);
	close(fd);
	free(buf);
	free(got);
	free(pat);
	free(f);
}

/* ---- IOMMU information ---- */

static void test_iova_ranges(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;
	const struct cx4_vfio_iova_range *r;
	unsigned int n = 0;
	uint8_t *page = NULL;

	fake_default_cfg(&cfg);
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	EXPECT_EQ(cx4_vfio_iova_ranges(bus, &r, &n), 0);
	EXPECT_EQ(n, 2);
	if (n == 2) {
		EXPECT_EQ(r[0].start, 0);
		EXPECT_EQ(r[0].end, 0xfedfffffull);
		EXPECT_EQ(r[1].start, 0xfef00000ull);
		EXPECT_EQ(r[1].end, (1ull << 48) - 1);
	}
	EXPECT_EQ(cx4_vfio_iova_pgsize(bus), 4096);
	close_fake(f, bus);

	/* no range capability (kernels before 5.4): rdma-core's legacy ranges, one GET_INFO */
	cfg.iova_caps = false;
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	EXPECT(fake_log_find(f, 0, "ioctl container VFIO_IOMMU_GET_INFO argsz=24") >= 0);
	EXPECT(fake_log_find(f, 0, "ioctl container VFIO_IOMMU_GET_INFO argsz=72") < 0);
	EXPECT_EQ(cx4_vfio_iova_ranges(bus, &r, &n), 0);
	EXPECT_EQ(n, 2);
	if (n == 2) {
		EXPECT_EQ(r[0].start, 0x10000);
		EXPECT_EQ(r[0].end, 0xfedfffffull);
		EXPECT_EQ(r[1].start, 0xfef00000ull);
		EXPECT_EQ(r[1].end, (1ull << 39) - 1);
	}
	if (bus) {
		struct cx4_dma_map m = {
		    .iova = 1ull << 39, .len = 4096, .perm = CX4_DMA_READ, .fd = -1};

		EXPECT_EQ(posix_memalign((void **)&page, 65536, 65536), 0);
		memset(page, 0, 65536);
		m.va = (uintptr_t)page;
		EXPECT_EQ(bus->ops->dma_map(bus, &m), -ERANGE);
		m.iova = (1ull << 39) - 4096;
		EXPECT_EQ(bus->ops->dma_map(bus, &m), 0);
		EXPECT_EQ(bus->ops->dma_unmap(bus, m.iova, 4096), 0);
	}
	close_fake(f, bus);

	/* a 64 KB IOMMU page: maps must be 64 KB multiples */
	cfg.iova_caps = true;
	cfg.iova_pgsizes = 0x10000;
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	EXPECT_EQ(cx4_vfio_iova_pgsize(bus), 65536);
	if (bus) {
		struct cx4_dma_map m = {.iova = IOVA_A,
					.len = 4096,
					.perm = CX4_DMA_READ,
					.fd = -1,
					.va = (uintptr_t)page};

		EXPECT_EQ(bus->ops->dma_map(bus, &m), -EINVAL);
		EXPECT_MSG("IOMMU page 0x10000");
		m.len = 65536;
		EXPECT_EQ(bus->ops->dma_map(bus, &m), 0);
		m.iova = IOVA_A + 65536;
		m.va = (uintptr_t)page + 4096;
		EXPECT_EQ(bus->ops->dma_map(bus, &m), -EINVAL); /* vaddr not 64 KB aligned */
		EXPECT_MSG("vaddr");
	}
	close_fake(f, bus);
	free(page);

	/* not a VFIO bus */
	{
		static const struct cx4_bus_ops other_ops;
		struct cx4_bus other = {.ops = &other_ops};

		EXPECT(!cx4_vfio_is(&other));
		EXPECT(!cx4_vfio_is(NULL));
		EXPECT_EQ(cx4_vfio_container_fd(&other), -EINVAL);
		EXPECT_EQ(cx4_vfio_iova_ranges(&other, &r, &n), -EINVAL);
		EXPECT_EQ(cx4_vfio_iova_pgsize(&other), 0);
		EXPECT_EQ(cx4_vfio_msix_count(&other), 0);
	}
	free(f);
}

/* ---- reset ---- */

static void test_reset(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;
	unsigned int at;

	fake_default_cfg(&cfg);
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	if (bus) {
		at = f->nlog;
		EXPECT_EQ(bus->ops->reset(bus), 0);
		EXPECT_EQ(f->resets, 1);
		EXPECT(fake_log_find(f, at, "ioctl device VFIO_DEVICE_RESET") == (int)at);
		EXPECT(fake_log_find(f, at, "pwrite device config+0x4 2 0x406") < 0);
		EXPECT_EQ(command(f), 0x406);
		/* a restore that lost COMMAND: put memory and bus master back */
		memset(f->config + 4, 0, 2);
		EXPECT_EQ(bus->ops->reset(bus), 0);
		EXPECT_EQ(command(f), 0x6);
		f->fail_at = f->calls + 1;
		EXPECT_EQ(bus->ops->reset(bus), -EIO);
		EXPECT_MSG("VFIO_DEVICE_RESET");
	}
	close_fake(f, bus);

	cfg.device_flags = VFIO_DEVICE_FLAGS_PCI;
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	if (bus) {
		at = f->nlog;
		EXPECT_EQ(bus->ops->reset(bus), -EOPNOTSUPP);
		EXPECT_MSG("no reset");
		EXPECT_EQ(f->nlog, at);
	}
	close_fake(f, bus);
	free(f);
}

/* ---- close with everything in use, and failing calls during close ---- */

static void test_close_releases(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;
	uint8_t *view;
	int fd = make_memfd(1 << 20, &view);

	fake_default_cfg(&cfg);
	for (int round = 0; round < 3; round++) {
		EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
		if (!bus)
			break;
		for (unsigned int i = 0; i < 16; i++) {
			struct cx4_dma_map m = {.iova = IOVA_A + i * 65536ull,
						.len = 65536,
						.perm = CX4_DMA_READ | CX4_DMA_WRITE,
						.fd = fd,
						.fd_offset = i * 65536ull};

			EXPECT_EQ(bus->ops->dma_map(bus, &m), 0);
		}
		EXPECT_EQ(f->ndma, 16);
		/* round 1: the MSI-X disable fails; round 2: an IOMMU unmap fails */
		if (round == 1)
			f->fail_at = f->calls + 1;
		if (round == 2)
			f->fail_at = f->calls + 5;
		bus->ops->close(bus);
		/* the kernel drops all maps of a container when it goes away; the fake too? */
		if (round == 2) {
			EXPECT_EQ(f->ndma, 1); /* the one the "kernel" refused to unmap */
			f->ndma = 0;
		}
		expect_released(f, __LINE__);
		fake_fini(f);
	}
	munmap(view, 1 << 20);
	close(fd);
	free(f);
}

/* ---- the client path: the container fd ---- */

static void test_client_container_fd(void)
{
	struct fake_vfio *f = calloc(1, sizeof(*f));
	struct fake_cfg cfg;
	struct cx4_bus *bus = NULL;
	uint8_t *mem = NULL, pat[12288];
	int cfd;

	fake_default_cfg(&cfg);
	EXPECT_EQ(open_fake(f, &cfg, &bus), 0);
	if (!bus) {
		fake_fini(f);
		free(f);
		return;
	}
	cfd = cx4_vfio_container_fd(bus);
	EXPECT(!strcmp(fake_fd_kind(f, cfd), "container"));
	EXPECT_EQ(posix_memalign((void **)&mem, 4096, sizeof(pat)), 0);
	rnd_fill(mem, sizeof(pat));
	/* what a client does with the fd cx4d passed it and the IOVA cx4d assigned */
	EXPECT_EQ(cx4_vfio_client_dma_map(&f->sys, cfd, mem, IOVA_A, sizeof(pat),
					  CX4_DMA_READ | CX4_DMA_WRITE),
		  0);
	EXPECT_EQ(fake_dma_read(f, IOVA_A, pat, sizeof(pat)), 0);
	EXPECT(!memcmp(pat, mem, sizeof(pat)));
	rnd_fill(pat, sizeof(pat));
	EXPECT_EQ(fake_dma_write(f, IOVA_A + 1, pat, sizeof(pat) - 1), 0);
	EXPECT(!memcmp(mem + 1, pat, sizeof(pat) - 1));
	EXPECT_EQ(cx4_vfio_client_dma_map(&f->sys, cfd, mem + 1, IOVA_A + MIB, 4096, CX4_DMA_READ),
		  -EINVAL);
	EXPECT_EQ(cx4_vfio_client_dma_map(&f->sys, cfd, mem, IOVA_A + MIB, 4096, 0), -EINVAL);
	EXPECT_EQ(cx4_vfio_client_dma_unmap(&f->sys, cfd, IOVA_A, 4096), -EINVAL); /* split */
	EXPECT_EQ(cx4_vfio_client_dma_unmap(&f->sys, cfd, IOVA_A, sizeof(pat)), 0);
	EXPECT_EQ(cx4_vfio_client_dma_unmap(&f->sys, cfd, IOVA_A, sizeof(pat)), -ENOENT);
	EXPECT_MSG("nothing mapped there");
	EXPECT_EQ(fake_dma_read(f, IOVA_A, pat, 8), -EFAULT);
	close_fake(f, bus);
	free(mem);
	free(f);
}

/* ---- the real system calls on a machine without the device ---- */

static void test_real_syscalls(void)
{
	struct cx4_bus *bus = (struct cx4_bus *)&failures;

	EXPECT_EQ(cx4_vfio_open("ffff:ff:1f.7", &bus), -ENODEV);
	EXPECT(bus == NULL);
	EXPECT_MSG("ffff:ff:1f.7: no such PCI device");
	/* the client helpers on a non-container fd fail cleanly (ioctl on /dev/null: ENOTTY) */
	{
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		static uint8_t page[4096] __attribute__((aligned(4096)));

		EXPECT_EQ(cx4_vfio_client_dma_map(NULL, fd, page, IOVA_A, 4096, CX4_DMA_READ),
			  -ENOTTY);
		EXPECT_MSG("client: VFIO_IOMMU_MAP_DMA");
		EXPECT_EQ(cx4_vfio_client_dma_unmap(NULL, fd, IOVA_A, 4096), -ENOTTY);
		close(fd);
	}
}

int main(void)
{
	test_open_sequence();
	test_short_bdf_and_few_vectors();
	test_failures();
	test_group_busy();
	test_fail_every_call();
	test_bar0();
	test_bar0_sparse();
	test_msix();
	test_dma();
	test_iova_ranges();
	test_reset();
	test_close_releases();
	test_client_container_fd();
	test_real_syscalls();
	if (failures) {
		fprintf(stderr, "vfio_test: %d failure(s)\n", failures);
		return 1;
	}
	printf("vfio_test: all passed\n");
	return 0;
}
