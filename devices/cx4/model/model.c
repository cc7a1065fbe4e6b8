// SPDX-License-Identifier: MIT
/*
 * The ConnectX-4 device model: creation, the bus operations and the engine thread.
 *
 * The engine runs passes (see model.h) while there is work. When a pass finds nothing to do
 * it keeps polling for cfg.spin_us (a doorbell or a packet then costs no wake-up), then
 * publishes "sleeping" in the kick page and blocks in epoll on: the kick eventfd (a driver
 * store while we sleep), the port's UDP socket (a packet), and a timerfd set to the next
 * device timer (retransmission, RNR, firmware boot, health heartbeat). An idle device
 * therefore costs nothing, as the brief requires, and a busy one never makes a system call
 * just to look for doorbells.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

static const struct mprofile profiles[] = {
    [CX4_MODEL_CX4] =
	{
	    .name = "ConnectX-4",
	    .pci_device = CX4_PCI_DEVICE_CX4,
	    /* Snabb's benchmark card (snabbco/snabb issue #1004): FW 12.16.1020, MT_2180110032 */
	    .fw_major = 12,
	    .fw_minor = 16,
	    .fw_sub = 1020,
	    .psid = "MT_2180110032",
	},
    [CX4_MODEL_CX4LX] =
	{
	    .name = "ConnectX-4 Lx",
	    .pci_device = CX4_PCI_DEVICE_CX4LX,
	    /* the [trace] card: FW 14.12.1220, PSID MT_2430110027 (QUERY_ADAPTER) */
	    .fw_major = 14,
	    .fw_minor = 12,
	    .fw_sub = 1220,
	    .psid = "MT_2430110027",
	},
};

void cx4m_mdev_log(struct mdev *d, const char *fmt, ...)
{
	va_list ap;

	if (!d->log)
		return;
	va_start(ap, fmt);
	flockfile(d->log);
	fprintf(d->log, "%s: ", d->name);
	vfprintf(d->log, fmt, ap);
	fputc('\n', d->log);
	funlockfile(d->log);
	va_end(ap);
}

/* ---- HCA-wide state -------------------------------------------------------------------------- */

static void free_tables(struct mdev *d)
{
	cx4m_idtab_free(&d->pds);
	cx4m_idtab_free(&d->tds);
	cx4m_idtab_free(&d->eqs);
	cx4m_idtab_free(&d->cqs);
	cx4m_idtab_free(&d->mkeys);
	cx4m_idtab_free(&d->qps);
	cx4m_idtab_free(&d->srqs);
}

/* INIT_HCA: the object tables, sized from the current capabilities; the port comes up. */
int cx4m_mdev_init_hca(struct mdev *d)
{
	const uint8_t *cap = d->cap_cur[0];

	free_tables(d);
	if (cx4m_idtab_init(&d->pds, 1, 1u << cx4_get(cap, CX4_CAP_GEN_LOG_MAX_PD)) ||
	    cx4m_idtab_init(&d->tds, 1, 1u << cx4_get(cap, CX4_CAP_GEN_LOG_MAX_TRANSPORT_DOMAIN)) ||
	    cx4m_eq_tables_init(d) || cx4m_cq_tables_init(d) || cx4m_mkey_tables_init(d) ||
	    cx4m_qp_tables_init(d) || cx4m_srq_tables_init(d)) {
		free_tables(d);
		return -ENOMEM;
	}
	cx4m_net_gids_clear(d);
	d->roce_tbl_size = cx4_get(d->cap_cur[2], CX4_CAP_ROCE_ADDRESS_TABLE_SIZE);
	if (d->roce_tbl_size > 256)
		d->roce_tbl_size = 256;
	d->hca = MHCA_INIT;
	cx4m_vport_init(d);
	cx4m_port_update(d);
	return 0;
}

void cx4m_mdev_destroy_objects(struct mdev *d)
{
	if (d->qps.l1)
		cx4m_qp_destroy_all(d);
	if (d->srqs.l1)
		cx4m_srq_destroy_all(d);
	if (d->cqs.l1)
		cx4m_cq_destroy_all(d);
	if (d->mkeys.l1)
		cx4m_mkey_destroy_all(d);
	if (d->eqs.l1)
		cx4m_eq_destroy_all(d);
	free_tables(d);
	for (uint32_t u = 0; u < MDEV_UAR_PAGES; u++)
		d->uar_used[u] = 0;
	d->nuar_active = 0;
	d->ncqe_q = 0;
	d->rx_dma.n = 0;
	d->active_head = d->active_tail = NULL;
	d->ack_head = NULL;
	d->neq_fire = 0;
	if (d->hca == MHCA_INIT)
		d->hca = MHCA_ENABLED;
	d->port_oper = CX4_PORT_STATUS_DOWN;
	memset(d->nic_vport_ctx, 0, sizeof(d->nic_vport_ctx));
	cx4m_net_gids_clear(d);
}

void cx4m_mdev_reset_state(struct mdev *d)
{
	cx4m_mdev_destroy_objects(d);
	cx4m_icm_reset(d);
	cx4m_cmdif_reset(d);
	d->hca = MHCA_DISABLED;
	d->issi = 0;
	d->host_endianness = 0;
	d->port_admin = CX4_PORT_STATUS_UP;
	d->admin_mtu = 0;
	d->port_mtu = d->cfg.mtu;
	memset(d->cap_cur, 0, sizeof(d->cap_cur));
	d->vport_cnt_base = d->stats; /* a reset function's counters start from 0 */
	cx4m_bar0_reset(d);
}

/* ---- the engine --------------------------------------------------------------------------- */

static void lock_dev(struct mdev *d)
{
	atomic_fetch_add(&d->lock_waiters, 1);
	pthread_mutex_lock(&d->lock);
	atomic_fetch_sub(&d->lock_waiters, 1);
}

static void rx_fault(void *ctx, uint64_t tag)
{
	struct mdev *d = ctx;
	struct mqp *qp = cx4m_qp_get(d, (uint32_t)tag);

	/* A responder write that the IOMMU / the remote process refused: the QP is broken. */
	d->stats.dma_faults++;
	if (qp)
		cx4m_qp_to_error(d, qp, CX4_EVENT_TYPE_WQ_CATAS_ERROR);
}

void cx4m_mdev_flush_rx_dma(struct mdev *d)
{
	if (d->rx_dma.n)
		cx4m_dmab_flush(&d->rx_dma, rx_fault, d);
}

/*
 * Let the QPs with work send, each up to its budget, in list order. The transmit queue holds
 * fewer packets than several busy QPs have to send: when it fills up, the QPs not served yet
 * go first the next time (ahead of those just served, which put themselves back at the end),
 * so every QP gets its turn and none waits for the others to run out of work (which, with a
 * local ACK timeout, fails it with "transport retries exceeded").
 */
static int run_active(struct mdev *d)
{
	struct mqp *qp = d->active_head;
	int work = 0;

	d->active_head = d->active_tail = NULL;
	while (qp) {
		struct mqp *next = qp->active_next;
		int w;

		if (!cx4m_net_tx_free_slots(d)) {
			struct mqp *last = qp;

			/* qp and those after it stay on the list (on_active), first in line */
			while (last->active_next)
				last = last->active_next;
			last->active_next = d->active_head;
			if (!d->active_head)
				d->active_tail = last;
			d->active_head = qp;
			break;
		}
		qp->on_active = false;
		qp->active_next = NULL;
		w = cx4m_req_run(d, qp, 64) + cx4m_resp_read_run(d, qp, 64);
		work += w;
		qp = next;
	}
	return work;
}

/* After a pass that wrote CQEs or drained posted writes: wake drivers waiting for it (cx4_bus.h). */
static void wake_waiters(struct mdev *d)
{
	/* our CQE and ring-head stores before the waiter count we read: pairs with cx4_wait_begin */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&d->kick_page->waiters, memory_order_relaxed))
		return;
	atomic_fetch_add(&d->kick_page->progress, 1);
	syscall(SYS_futex, &d->kick_page->progress, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	d->stats.waiter_wakes++;
}

static int pass(struct mdev *d)
{
	int work, progress;

	while (atomic_load_explicit(&d->lock_waiters, memory_order_relaxed))
		sched_yield();
	pthread_mutex_lock(&d->lock);
	d->now = cx4m_mdev_now_ns();
	work = progress = cx4m_bar0_poll(d);
	if (d->hca == MHCA_INIT) {
		/* what the doorbells asked for leaves first (latency of a request) ... */
		work += run_active(d);
		work += cx4m_net_tx_flush(d);
		progress += cx4m_cq_flush(d);
	}
	/*
	 * Commands see what the doorbells stored before them did, as the firmware of a card
	 * that finished the sends long before the command arrived (a CQ resize counts their
	 * CQEs as outstanding).
	 */
	work += cx4m_cmdif_run(d);
	if (d->hca == MHCA_INIT) {
		/* ... then what came in, its data written before anything reports it */
		work += cx4m_net_rx(d);
		cx4m_mdev_flush_rx_dma(d);
	}
	work += cx4m_mtimer_run(d, &d->timers, d->now);
	/* responses, retransmissions and acknowledgements the packets and timers asked for */
	work += run_active(d);
	cx4m_mdev_flush_rx_dma(d);
	d->net.scratch_used = 0;
	cx4m_net_rx_done(d);
	progress += cx4m_cq_flush(d);
	work += cx4m_resp_send_acks(d);
	work += cx4m_net_tx_flush(d);
	/* completions of packets just sent (UC, UD) */
	progress += cx4m_cq_flush(d);
	cx4m_eq_fire(d);
	pthread_mutex_unlock(&d->lock);
	if (progress)
		wake_waiters(d);
	return work + progress;
}

static void set_timerfd(struct mdev *d)
{
	uint64_t next;
	struct itimerspec its = {0};

	pthread_mutex_lock(&d->lock);
	next = cx4m_mtimer_next(&d->timers);
	pthread_mutex_unlock(&d->lock);
	/* the same deadline as last time, not yet passed: the timerfd is still set to it */
	if (next == d->timerfd_armed && (next == UINT64_MAX || next > cx4m_mdev_now_ns()))
		return;
	d->timerfd_armed = next;
	if (next != UINT64_MAX) {
		if (!next)
			next = 1;
		its.it_value.tv_sec = (time_t)(next / 1000000000ull);
		its.it_value.tv_nsec = (long)(next % 1000000000ull);
	}
	timerfd_settime(d->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* cx4_model_stall: the engine does nothing in the stopped time (or until the model stops). */
static void stall(struct mdev *d)
{
	uint64_t now = cx4m_mdev_now_ns(), end;

	pthread_mutex_lock(&d->lock);
	if (!d->stall_ns || now < d->stall_at) {
		pthread_mutex_unlock(&d->lock);
		return;
	}
	end = d->stall_at + d->stall_ns;
	if (d->stall_period) {
		/* the next stop starts one period after this one (those missed are skipped) */
		d->stall_at += (now - d->stall_at) / d->stall_period * d->stall_period;
		end = d->stall_at + d->stall_ns;
		d->stall_at += d->stall_period;
	} else {
		d->stall_ns = 0;
	}
	pthread_mutex_unlock(&d->lock);
	while ((now = cx4m_mdev_now_ns()) < end && !atomic_load(&d->stop)) {
		struct timespec ts = {.tv_nsec = end - now < 1000000 ? (long)(end - now) : 1000000};

		nanosleep(&ts, NULL);
	}
}

static void *engine(void *arg)
{
	struct mdev *d = arg;
	uint64_t spin_ns = (uint64_t)d->cfg.spin_us * 1000, idle_since = 0;

	if (d->cfg.rt_priority) {
		struct sched_param sp = {.sched_priority = (int)d->cfg.rt_priority};
		int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);

		if (err)
			cx4m_mdev_log(d, "engine: SCHED_FIFO %u: %s (normal scheduling)",
				      d->cfg.rt_priority, strerror(err));
	}

	while (!atomic_load(&d->stop)) {
		struct epoll_event ev[4];
		uint64_t v;
		int n;

		stall(d);
		if (pass(d)) {
			idle_since = 0;
			continue;
		}
		if (!idle_since)
			idle_since = cx4m_mdev_now_ns();
		if (cx4m_mdev_now_ns() - idle_since < spin_ns) {
			/*
			 * Poll, but let other runnable threads (the application's own polling loop,
			 * the peer device) have the CPU at once: on a machine with fewer cores than
			 * busy threads a plain spin holds a core for a whole time slice.
			 */
			sched_yield();
			continue;
		}
		/* Going to sleep: say so, then look once more (a store may have raced us). */
		atomic_store(&d->kick_page->sleeping, 1);
		cx4m_net_sleeping(d, true);
		d->net.sock_look_now = true;
		atomic_thread_fence(memory_order_seq_cst);
		if (pass(d) || atomic_load(&d->stop)) {
			atomic_store(&d->kick_page->sleeping, 0);
			cx4m_net_sleeping(d, false);
			idle_since = 0;
			continue;
		}
		set_timerfd(d);
		n = epoll_wait(d->epfd, ev, 4, -1);
		atomic_store(&d->kick_page->sleeping, 0);
		cx4m_net_sleeping(d, false);
		for (int i = 0; i < n; i++)
			if (ev[i].data.fd == d->bus.kick.efd || ev[i].data.fd == d->timerfd)
				while (read(ev[i].data.fd, &v, sizeof(v)) > 0)
					;
		d->stats.wakeups++;
		idle_since = 0;
	}
	return NULL;
}

/* ---- bus operations ------------------------------------------------------------------------ */

static int op_dma_map(struct cx4_bus *bus, const struct cx4_dma_map *map)
{
	struct mdev *d = mdev_of(bus);
	int err;

	if (!map)
		return -EINVAL;
	lock_dev(d);
	err = cx4m_iommu_add(&d->iommu, map);
	pthread_mutex_unlock(&d->lock);
	return err;
}

static int op_dma_unmap(struct cx4_bus *bus, uint64_t iova, uint64_t len)
{
	struct mdev *d = mdev_of(bus);
	int err;

	lock_dev(d);
	/* packets still queued may point into the range: give them their own copy first */
	cx4m_net_tx_materialize(d);
	err = cx4m_iommu_del(&d->iommu, iova, len);
	pthread_mutex_unlock(&d->lock);
	return err;
}

static int op_reset(struct cx4_bus *bus)
{
	struct mdev *d = mdev_of(bus);

	lock_dev(d);
	d->now = cx4m_mdev_now_ns();
	cx4m_mdev_reset_state(d);
	pthread_mutex_unlock(&d->lock);
	cx4_kick(&d->bus.kick);
	return 0;
}

static void mdev_free(struct mdev *d)
{
	cx4m_mctl_stop(d);
	if (d->thread_started) {
		static const uint64_t one = 1;
		ssize_t r;

		atomic_store(&d->stop, true);
		r = write(d->bus.kick.efd, &one, sizeof(one));
		(void)r;
		pthread_join(d->thread, NULL);
	}
	cx4m_mdev_destroy_objects(d);
	cx4m_icm_free(d);
	cx4m_net_close(d);
	cx4m_iommu_clear(&d->iommu);
	cx4m_mtimer_heap_free(&d->timers);
	cx4m_dmab_free(&d->rx_dma);
	free(d->cqe_q);
	free(d->uar_used);
	for (unsigned int i = 0; i < d->nvec; i++)
		if (d->irq_fd[i] >= 0)
			close(d->irq_fd[i]);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->timerfd >= 0)
		close(d->timerfd);
	if (d->bus.kick.efd >= 0)
		close(d->bus.kick.efd);
	if (d->kick_page)
		munmap(d->kick_page, CX4_PW_PAGE_SIZE);
	if (d->bus.kick_page_fd >= 0)
		close(d->bus.kick_page_fd);
	if (d->bar0)
		munmap(d->bar0, MDEV_BAR0_SIZE);
	if (d->bar0_fd >= 0)
		close(d->bar0_fd);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static void op_close(struct cx4_bus *bus)
{
	if (bus)
		mdev_free(mdev_of(bus));
}

static const struct cx4_bus_ops model_ops = {
    .dma_map = op_dma_map,
    .dma_unmap = op_dma_unmap,
    .reset = op_reset,
    .close = op_close,
};

static int shm(const char *name, size_t len, int *fd, void **p)
{
	*fd = memfd_create(name, MFD_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (ftruncate(*fd, (off_t)len))
		return -errno;
	*p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (*p == MAP_FAILED) {
		*p = NULL;
		return -errno;
	}
	return 0;
}

static int add_ep(struct mdev *d, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int cx4_model_open(const struct cx4_model_config *cfg, struct cx4_bus **busp)
{
	struct mdev *d;
	void *p;
	int err;

	if (!cfg || !busp || !cfg->ipv4 || cfg->num_vectors > CX4_BUS_MAX_VECTORS ||
	    cfg->rt_priority > 99 ||
	    (unsigned int)cfg->profile >= sizeof(profiles) / sizeof(profiles[0]) ||
	    cfg->src_ports > NET_MAX_SOCKS || (cfg->mtu && (cfg->mtu < 576 || cfg->mtu > 9600)))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cfg = *cfg;
	snprintf(d->name, sizeof(d->name), "%s", cfg->name ? cfg->name : "cx4model");
	d->cfg.name = d->name;
	if (cfg->netdev) {
		if (strlen(cfg->netdev) >= sizeof(d->netdev)) {
			free(d);
			return -EINVAL;
		}
		snprintf(d->netdev, sizeof(d->netdev), "%s", cfg->netdev);
		d->cfg.netdev = d->netdev;
	}
	if (!d->cfg.udp_port)
		d->cfg.udp_port = ROCE_V2_UDP_PORT;
	if (!d->cfg.mtu)
		d->cfg.mtu = 4200;
	if (!d->cfg.num_vectors)
		d->cfg.num_vectors = 16;
	if (!d->cfg.spin_us)
		d->cfg.spin_us = 50;
	if (!d->cfg.src_ports)
		d->cfg.src_ports = 8;
	d->icm.boot_need = d->cfg.boot_pages > ICM_BOOT_NUM ? d->cfg.boot_pages : ICM_BOOT_NUM;
	d->icm.init_need = d->cfg.init_pages > 5 ? d->cfg.init_pages : (d->cfg.init_pages ? 5 : 48);
	/* the caller's strings are used only here, by cx4m_net_open */
	d->cfg.pcap_path = NULL;
	d->cfg.cable_dir = NULL;
	d->log = cfg->log;
	d->prof = &profiles[cfg->profile];
	d->nvec = d->cfg.num_vectors;
	memcpy(d->mac, cfg->mac, 6);
	if (!(d->mac[0] | d->mac[1] | d->mac[2] | d->mac[3] | d->mac[4] | d->mac[5])) {
		d->mac[0] = 0x02; /* locally administered: 02:00:<IPv4 address> */
		memcpy(d->mac + 2, &cfg->ipv4, 4);
	}
	d->bar0_fd = d->bus.kick_page_fd = d->bus.kick.efd = d->epfd = d->timerfd = -1;
	d->timerfd_armed = UINT64_MAX;
	d->net.cable.wake_fd = d->net.cable.peer_wake_fd = d->net.cable.watch_fd = -1;
	for (unsigned int i = 0; i < CX4_BUS_MAX_VECTORS; i++)
		d->irq_fd[i] = d->bus.irq_fd[i] = -1;
	d->link_cable = true;
	pthread_mutex_init(&d->lock, NULL);
	cx4m_mtimer_init(&d->boot_timer, cx4m_bar0_boot_done);
	cx4m_mtimer_init(&d->health_timer, cx4m_bar0_health_tick);
	d->rx_dma.write = true;

	d->uar_used = calloc(MDEV_UAR_PAGES, sizeof(*d->uar_used));
	err = d->uar_used ? 0 : -ENOMEM;
	if (!err)
		err = shm("cx4-bar0", MDEV_BAR0_SIZE, &d->bar0_fd, &p);
	if (!err) {
		d->bar0 = p;
		err = shm("cx4-kick", CX4_PW_PAGE_SIZE, &d->bus.kick_page_fd, &p);
	}
	if (!err) {
		d->kick_page = p;
		d->bus.kick.page = p;
		d->bus.kick.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (d->bus.kick.efd < 0)
			err = -errno;
	}
	for (unsigned int i = 0; !err && i < d->nvec; i++) {
		d->irq_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (d->irq_fd[i] < 0)
			err = -errno;
		d->bus.irq_fd[i] = d->irq_fd[i];
	}
	if (!err)
		err = cx4m_net_open(d, cfg->pcap_path, cfg->cable_dir);
	if (!err) {
		d->epfd = epoll_create1(EPOLL_CLOEXEC);
		d->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (d->epfd < 0 || d->timerfd < 0)
			err = -errno;
	}
	if (!err)
		err = add_ep(d, d->bus.kick.efd);
	if (!err)
		err = add_ep(d, d->timerfd);
	if (!err)
		err = add_ep(d, d->net.rx_port.fd);
	if (!err && d->net.cable.wake_fd >= 0)
		err = add_ep(d, d->net.cable.wake_fd);
	if (!err && d->net.raw.fd >= 0)
		err = add_ep(d, d->net.raw.fd);
	if (!err && d->net.cable.watch_fd >= 0)
		err = add_ep(d, d->net.cable.watch_fd);
	if (err) {
		mdev_free(d);
		return err;
	}
	d->bus.ops = &model_ops;
	d->bus.bar0 =
	    (struct cx4_mmio){.base = d->bar0, .len = MDEV_BAR0_SIZE, .kick = &d->bus.kick};
	d->bus.bar0_fd = d->bar0_fd;
	d->bus.bar0_fd_offset = 0;
	d->bus.num_vectors = d->nvec;
	d->bus.backend = d;
	d->now = cx4m_mdev_now_ns();
	cx4m_mdev_reset_state(d);
	if (pthread_create(&d->thread, NULL, engine, d)) {
		mdev_free(d);
		return -EAGAIN;
	}
	d->thread_started = true;
	/* a name for ps -L and for tests that ask how long the engine waited for a CPU */
	pthread_setname_np(d->thread, "cx4-engine");
	if (cfg->ctl_path) {
		err = cx4m_mctl_start(d, cfg->ctl_path);
		if (err) {
			cx4m_mdev_log(d, "cannot serve the control socket %s: %s", cfg->ctl_path,
				      strerror(-err));
			mdev_free(d);
			return err;
		}
	}
	*busp = &d->bus;
	return 0;
}

/* ---- outside controls -------------------------------------------------------------------------
 */

int cx4_model_set_link(struct cx4_bus *bus, bool up)
{
	struct mdev *d;

	if (!bus || bus->ops != &model_ops)
		return -EINVAL;
	d = mdev_of(bus);
	lock_dev(d);
	d->link_cable = up;
	cx4m_port_update(d);
	cx4m_eq_fire(d);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int cx4_model_fail(struct cx4_bus *bus, enum cx4_model_failure how)
{
	struct mdev *d;

	if (!bus || bus->ops != &model_ops ||
	    (how != CX4_MODEL_FAIL_DISABLE && how != CX4_MODEL_FAIL_FIRMWARE))
		return -EINVAL;
	d = mdev_of(bus);
	lock_dev(d);
	if (how == CX4_MODEL_FAIL_DISABLE)
		cx4m_bar0_nic_disable(d);
	else
		cx4m_bar0_health_fatal(d, CX4_HEALTH_SYND_FW_ERR);
	pthread_mutex_unlock(&d->lock);
	cx4_kick(&d->bus.kick);
	return 0;
}

int cx4_model_get_stats(struct cx4_bus *bus, struct cx4_model_stats *st)
{
	struct mdev *d;

	if (!bus || !st || bus->ops != &model_ops)
		return -EINVAL;
	d = mdev_of(bus);
	lock_dev(d);
	*st = d->stats;
	st->cable_peer = d->net.cable.peer;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int cx4_model_drop_rx(struct cx4_bus *bus, unsigned int n)
{
	struct mdev *d;

	if (!bus || bus->ops != &model_ops)
		return -EINVAL;
	d = mdev_of(bus);
	lock_dev(d);
	d->net.drop_rx = n;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int cx4_model_stall(struct cx4_bus *bus, uint32_t usec, uint32_t period_usec)
{
	struct mdev *d;

	if (!bus || bus->ops != &model_ops || usec > 10000000 ||
	    (period_usec && usec >= period_usec))
		return -EINVAL;
	d = mdev_of(bus);
	lock_dev(d);
	d->stall_at = cx4m_mdev_now_ns();
	d->stall_ns = usec * 1000ull;
	d->stall_period = period_usec * 1000ull;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int cx4_model_rx_cost(struct cx4_bus *bus, uint32_t usec)
{
	struct mdev *d;

	if (!bus || bus->ops != &model_ops || usec > 100000)
		return -EINVAL;
	d = mdev_of(bus);
	lock_dev(d);
	d->net.rx_cost_us = usec;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int cx4_model_rx_fault(struct cx4_bus *bus, const struct cx4_model_fault *rule)
{
	struct mdev *d;
	int err;

	if (!bus || bus->ops != &model_ops)
		return -EINVAL;
	d = mdev_of(bus);
	lock_dev(d);
	err = cx4m_net_set_fault(d, rule);
	pthread_mutex_unlock(&d->lock);
	return err;
}
