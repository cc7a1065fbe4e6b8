// SPDX-License-Identifier: MIT
/*
 * BAR0 of the model: the initialization segment (page 0..2) and the UAR pages.
 *
 * The registers live in the memfd that drivers map. Reads are plain loads of what the model
 * keeps there (fw_rev, cmdif_rev, initializing, health buffer, internal timer, health
 * counter). Writes are seen through the posted-write rings (cx4_bus.h): each page's ring is
 * drained in order every pass, so the model acts on every store a driver makes, in the order
 * a PCIe device would receive them:
 *
 *   page 0:   0x10 cmdq_addr_h, 0x14 cmdq_addr_l_sz (latches the queue; nic_interface),
 *             0x18 command doorbell (1 << slot)                      [dev.h] mlx5_init_seg
 *   UAR page: 0x20 CQ arm (64 bit), 0x40 EQ doorbell + arm, 0x48 EQ doorbell,
 *             0x800..0xFFF send doorbell / BlueFlame      [dv], rdma-core mlx5.h MLX5_BF_OFFSET
 *
 * Only UAR pages that ALLOC_UAR handed out are drained; writes to other pages go nowhere,
 * as on a card where those pages are not backed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "model.h"

#define BOOT_DELAY_NS (2 * 1000 * 1000)		/* firmware "boot" after reset */
#define CMDIF_SETUP_NS (100 * 1000)		/* command interface set-up after 0x14 */
#define HEALTH_PERIOD_NS (500ull * 1000 * 1000) /* Linux polls every 2 s, rdma-core 1 s */
#define DRAIN_MAX (4 * (int)CX4_PW_RING_SLOTS)


void cx4m_bar0_set_timer(struct mdev *d)
{
	/*
	 * internal_timer_h/l: free running at device_frequency_mhz (cmd_hca_cap; 0x113 = 275
	 * MHz on the [trace] FW). Stored as one 64-bit big-endian word so a reader never sees
	 * the halves of two different values ([dev.h] mlx5_read_internal_timer reads h, l, h).
	 */
	uint64_t ticks = (d->now - d->boot_ns) * 275 / 1000;

	cx4_be64_store(d->bar0 + 0x1000, ticks);
}

void cx4m_bar0_reset(struct mdev *d)
{
	const struct mprofile *p = d->prof;

	/* Everything reads 0 after a reset, rings included: punch the whole BAR out. */
	if (fallocate(d->bar0_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, MDEV_BAR0_SIZE))
		memset(d->bar0, 0, MDEV_UAR_FIRST * CX4_UAR_PAGE_SIZE);
	cx4_set(d->bar0, CX4_ISEG_FW_REV_MAJOR, p->fw_major);
	cx4_set(d->bar0, CX4_ISEG_FW_REV_MINOR, p->fw_minor);
	cx4_set(d->bar0, CX4_ISEG_FW_REV_SUBMINOR, p->fw_sub);
	cx4_set(d->bar0, CX4_ISEG_CMDIF_REV, CX4_CMDIF_REV);
	cx4_set(d->bar0, CX4_ISEG_LOG_CMDQ_SIZE, MDEV_LOG_CMDQ_SIZE);
	cx4_set(d->bar0, CX4_ISEG_LOG_CMDQ_STRIDE, MDEV_LOG_CMDQ_STRIDE);
	cx4_set(d->bar0, CX4_ISEG_INITIALIZING, 1);
	/* health.fw_ver reads all ones only when the device is gone (rdma-core health check) */
	cx4_set(d->bar0, CX4_ISEG_HEALTH_FW_VER,
		(uint32_t)p->fw_major << 24 | (uint32_t)p->fw_minor << 16 | p->fw_sub);
	cx4_set(d->bar0, CX4_ISEG_HEALTH_HW_ID, p->pci_device);
	d->initializing = true;
	d->fatal = false;
	d->cmdq_h = 0;
	d->cmdq_iova = 0;
	d->cmdq_valid = false;
	d->cmd_pending = 0;
	d->nic_interface = CX4_NIC_IFC_FULL_DRIVER;
	d->health_counter = 0;
	d->boot_ns = d->now;
	cx4m_bar0_set_timer(d);
	cx4m_mtimer_arm(&d->timers, &d->boot_timer, d->now + BOOT_DELAY_NS);
	cx4m_mtimer_arm(&d->timers, &d->health_timer, d->now + HEALTH_PERIOD_NS);
}

void cx4m_bar0_boot_done(struct mdev *d, struct mtimer *t)
{
	(void)t;
	/* The firmware is up (after reset) or the command interface is set up (after 0x14). */
	cx4_set(d->bar0, CX4_ISEG_INITIALIZING, 0);
	d->initializing = false;
}

static void flush_err_qp(void *obj, void *ctx)
{
	struct mqp *qp = obj;

	/*
	 * Receive WQEs posted to a QP in ERR have no doorbell: the device finds and flushes them
	 * on its own schedule (here: with the heartbeat), and at once on any send doorbell.
	 */
	if (qp->state == CX4_QP_STATE_ERR)
		cx4m_qp_activate(ctx, qp);
}

void cx4m_bar0_health_tick(struct mdev *d, struct mtimer *t)
{
	if (d->hca == MHCA_INIT && d->qps.l1)
		cx4m_idtab_foreach(&d->qps, flush_err_qp, d);
	/* The heartbeat drivers watch ([vfio.c]: dead after 3 polls without a change). */
	if (!d->fatal) {
		d->health_counter = (d->health_counter + 1) & 0xffffff;
		cx4_set(d->bar0, CX4_ISEG_HEALTH_COUNTER, d->health_counter);
	}
	cx4m_bar0_set_timer(d);
	cx4m_mtimer_arm(&d->timers, t, d->now + HEALTH_PERIOD_NS);
}

void cx4m_bar0_health_fatal(struct mdev *d, uint8_t synd)
{
	if (d->fatal)
		return;
	cx4m_mdev_log(d, "firmware fatal error, health syndrome 0x%02x", synd);
	/* [vfio.c] health check: rfr && synd -> fatal; Linux health.c prints synd at 0x23D */
	cx4_set(d->bar0, CX4_ISEG_HEALTH_SYND, synd);
	cx4_set(d->bar0, CX4_ISEG_HEALTH_RFR, 1);
	d->fatal = true;
}

void cx4m_bar0_nic_disable(struct mdev *d)
{
	uint32_t l_sz = cx4_be32_load(d->bar0 + 0x14);

	cx4_be32_store(d->bar0 + 0x14, (l_sz & ~(7u << 8)) | (uint32_t)CX4_NIC_IFC_DISABLED << 8);
	d->nic_interface = CX4_NIC_IFC_DISABLED;
	cx4m_mdev_destroy_objects(d);
	d->hca = MHCA_DISABLED;
}

void cx4m_bar0_uar_activate(struct mdev *d, uint32_t uar, bool on)
{
	struct cx4_pw_ring *r =
	    (struct cx4_pw_ring *)(d->bar0 + (size_t)uar * CX4_UAR_PAGE_SIZE + CX4_PW_RING_OFF);

	/*
	 * Writes made while the page was not ours are discarded, not replayed later: those
	 * published and those claimed and never published (a writer that died between its claim
	 * and its publish). The owner changes here and only here, so this is where a slot a dead
	 * writer left is given up; while the page has an owner, the model waits for each slot
	 * however long its writer takes (drain).
	 */
	atomic_store(&r->head, atomic_load(&r->tail));
	if (on) {
		d->uar_active[d->nuar_active++] = uar;
		return;
	}
	for (uint32_t i = 0; i < d->nuar_active; i++) {
		if (d->uar_active[i] == uar) {
			d->uar_active[i] = d->uar_active[--d->nuar_active];
			break;
		}
	}
}

/* A store to the init segment. */
static void iseg_write(struct mdev *d, uint16_t off, const uint8_t *val)
{
	uint32_t v = cx4_be32_load(val);

	switch (off) {
	case 0x10:
		d->cmdq_h = v;
		break;
	case 0x14: {
		uint8_t nic = (v >> 8) & 7;
		uint32_t l = v & 0xfffff000u;

		/* log_cmdq_size/stride are read-only: put them back under the driver's store */
		bar0_wr32(d, 0x14,
			  l | (uint32_t)nic << 8 | MDEV_LOG_CMDQ_SIZE << 4 | MDEV_LOG_CMDQ_STRIDE);
		if (nic == CX4_NIC_IFC_SW_RESET) {
			cx4m_mdev_log(d, "nic_interface = SW reset");
			cx4m_mdev_reset_state(d);
			return;
		}
		if (nic == CX4_NIC_IFC_DISABLED) {
			/* after fast teardown (rdma-core/Linux): the function stops for good */
			cx4m_bar0_nic_disable(d);
			return;
		}
		if (nic != CX4_NIC_IFC_FULL_DRIVER)
			return;
		/*
		 * The queue address is latched by this write, the high word having been written
		 * before (PRM; [vfio.c] mlx5_vfio_init_cmd_interface, [snabb]). While the firmware
		 * sets up the command interface it reports "initializing"; the bit clears once
		 * the queue is usable (Linux 4.4 writes the address, then waits for it; newer
		 * Linux and rdma-core also wait for the boot to end before writing it).
		 */
		d->nic_interface = nic;
		d->cmdq_iova = (uint64_t)d->cmdq_h << 32 | l;
		d->cmdq_valid = d->cmdq_iova != 0;
		d->cmd_pending = 0;
		cx4_set(d->bar0, CX4_ISEG_INITIALIZING, 1);
		d->initializing = true;
		if (!mtimer_armed(&d->boot_timer) ||
		    d->boot_timer.node.when < d->now + CMDIF_SETUP_NS)
			cx4m_mtimer_arm(&d->timers, &d->boot_timer, d->now + CMDIF_SETUP_NS);
		break;
	}
	case 0x18:
		d->cmd_pending |= v;
		break;
	default:
		/* read-only or reserved registers: the store has no effect on the device */
		break;
	}
}

static void uar_write(struct mdev *d, uint32_t uar, uint16_t off, uint16_t len, const uint8_t *val)
{
	if (off == CX4_UAR_CQ_DOORBELL && len == 8)
		cx4m_cq_arm_doorbell(d, uar, val);
	else if (off == CX4_UAR_EQ_DOORBELL_ARM && len >= 4)
		cx4m_eq_doorbell(d, uar, cx4_be32_load(val), true);
	else if (off == CX4_UAR_EQ_DOORBELL_NOARM && len >= 4)
		cx4m_eq_doorbell(d, uar, cx4_be32_load(val), false);
	else if (off >= CX4_UAR_BF_OFFSET && len >= 8)
		cx4m_qp_sq_doorbell(d, uar, val);
}

static int drain(struct mdev *d, uint32_t page)
{
	struct cx4_pw_ring *r =
	    (struct cx4_pw_ring *)(d->bar0 + (size_t)page * CX4_UAR_PAGE_SIZE + CX4_PW_RING_OFF);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	int n = 0;

	while (n < DRAIN_MAX) {
		struct cx4_pw_entry *e = &r->e[h % CX4_PW_RING_SLOTS];
		uint8_t val[8];
		uint16_t off, len;

		/*
		 * Not published yet: its writer claimed the slot and has not stored it, however
		 * long that takes (a writer descheduled between the two, or waiting for room, took
		 * over 100 ms on a loaded machine). A PCIe device loses no posted write; the later
		 * ones wait behind it, in order. A slot whose writer died is given up when its page
		 * changes owner (cx4m_bar0_uar_activate).
		 */
		if (atomic_load_explicit(&e->seq, memory_order_acquire) != h + 1)
			break;
		off = e->off;
		len = e->len;
		memcpy(val, e->val, sizeof(val));
		atomic_store_explicit(&r->head, ++h, memory_order_release);
		n++;
		if (off >= CX4_UAR_PAGE_SIZE)
			continue;
		if (page == 0)
			iseg_write(d, off, val);
		else if (page >= MDEV_UAR_FIRST && d->uar_used[page])
			uar_write(d, page, off, len, val);
	}
	return n;
}

int cx4m_bar0_poll(struct mdev *d)
{
	int n = drain(d, 0);

	for (uint32_t i = 0; i < d->nuar_active; i++)
		n += drain(d, d->uar_active[i]);
	return n;
}
