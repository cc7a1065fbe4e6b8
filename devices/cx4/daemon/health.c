// SPDX-License-Identifier: MIT
/*
 * Device health (PRM "HCA Health"; Linux mlx5/core/health.c, rdma-core mlx5_vfio.c health
 * sensors). Every 2 s the daemon reads the health buffer of the init segment:
 *
 *   fw_ver (0x230) all ones          the device fell off the bus
 *   nic_interface (0x14[10:8]) 1/7   the device was disabled or is in SW reset
 *   synd (0x23D) != 0                firmware reports an error (Linux prints it; with rfr it
 *                                    is fatal, rdma-core: "rfr && synd")
 *   health_counter (0x1010[23:0])    a heartbeat: unchanged three times in a row = dead
 *                                    (Linux MAX_MISSES, rdma-core MLX5_HEALTH_MISSES)
 *
 * A fatal condition ends the device's life: every client gets IBV_EVENT_DEVICE_FATAL,
 * commands fail with EIO from then on, and the daemon keeps serving (destroys, queries) so
 * clients can shut down cleanly, as a kernel with a dead mlx5 does.
 */
#include <errno.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "cx4d.h"

#define HEALTH_POLL_S	2
#define HEALTH_MISSES	3

void cx4d_device_fatal(struct cx4d *d, const char *why)
{
	if (d->dead)
		return;
	d->dead = true;
	cx4d_log(d, "device fatal: %s; health syndrome 0x%x, ext 0x%x", why,
		 cx4_mmio_read32(&d->bus->bar0, CX4_FLD_OFF(CX4_ISEG_HEALTH_SYND)) >> 16 & 0xff,
		 cx4_mmio_read32(&d->bus->bar0, CX4_FLD_OFF(CX4_ISEG_HEALTH_EXT_SYND)) & 0xffff);
	if (d->bvd)
		bvd_async_event_all(d->bvd, 1, IBV_EVENT_DEVICE_FATAL);
}

static void health_check(struct cx4d *d)
{
	struct cx4_mmio *bar = &d->bus->bar0;
	uint32_t fw_ver = cx4_mmio_read32(bar, CX4_FLD_OFF(CX4_ISEG_HEALTH_FW_VER));
	uint32_t l_sz = cx4_mmio_read32(bar, CX4_FLD_OFF(CX4_ISEG_CMDQ_ADDR_L_SZ));
	uint32_t synd_w = cx4_mmio_read32(bar, CX4_FLD_OFF(CX4_ISEG_HEALTH_SYND));
	uint32_t rfr_w = cx4_mmio_read32(bar, CX4_FLD_OFF(CX4_ISEG_HEALTH_RFR));
	uint32_t count = cx4_mmio_read32(bar, CX4_FLD_OFF(CX4_ISEG_HEALTH_COUNTER)) & 0xffffff;
	unsigned int ifc = (l_sz >> 8) & 7, synd = (synd_w >> 16) & 0xff;

	if (fw_ver == 0xffffffffu) {
		cx4d_device_fatal(d, "device not responding (health fw_ver all ones)");
		return;
	}
	if (ifc == CX4_NIC_IFC_DISABLED || ifc == CX4_NIC_IFC_SW_RESET) {
		cx4d_device_fatal(d, ifc == CX4_NIC_IFC_DISABLED ? "NIC interface disabled" :
								   "NIC interface in SW reset");
		return;
	}
	if (synd && (rfr_w >> 31)) {
		cx4d_device_fatal(d, "firmware syndrome with recovery flow required");
		return;
	}
	if (synd)
		cx4d_log(d, "health syndrome 0x%x", synd);
	if (count == d->health_prev) {
		if (++d->health_miss >= HEALTH_MISSES) {
			cx4d_device_fatal(d, "health counter stopped");
			return;
		}
	} else {
		d->health_miss = 0;
	}
	d->health_prev = count;
}

static void health_timer(struct bvd *b, int fd, uint32_t events, void *arg)
{
	struct cx4d *d = cx4d_of(b);
	uint64_t n;
	ssize_t r = read(fd, &n, sizeof(n));

	(void)r;
	(void)events;
	(void)arg;
	if (!d->dead)
		health_check(d);
}

int cx4d_health_start(struct cx4d *d)
{
	struct itimerspec its = { .it_interval = { HEALTH_POLL_S, 0 },
				  .it_value = { HEALTH_POLL_S, 0 } };
	int err;

	d->health_prev = cx4_mmio_read32(&d->bus->bar0, CX4_FLD_OFF(CX4_ISEG_HEALTH_COUNTER)) &
			 0xffffff;
	d->health_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->health_tfd < 0)
		return errno;
	if (timerfd_settime(d->health_tfd, 0, &its, NULL)) {
		err = errno;
		close(d->health_tfd);
		d->health_tfd = -1;
		return err;
	}
	err = bvd_watch_fd(d->bvd, d->health_tfd, health_timer, NULL);
	return err < 0 ? -err : err;
}

void cx4d_health_stop(struct cx4d *d)
{
	if (d->health_tfd < 0)
		return;
	bvd_unwatch_fd(d->bvd, d->health_tfd);
	close(d->health_tfd);
	d->health_tfd = -1;
}
