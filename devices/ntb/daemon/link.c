// SPDX-License-Identifier: MIT
/*
 * ntbd's half of the link: open this end, bring the link up with the peer daemon, and keep
 * port 1's state equal to the link's.
 *
 * Bring-up (once the hardware link is up), the portable algorithm of
 * Documentation/driver-api/ntb.rst with the window layout of docs/ntb-verbs.md:
 *  1. once per daemon: allocate an IOVA range for inbound window 0 aligned as mw_get_align()
 *     says, map the control region (a memfd) at its start, and translate the window to it
 *     (ntb_mw_set_trans; on IDT the peer translates, step 3);
 *  2. tell the peer over the mailbox (link_mbox.c): HELLO, XLAT(window 0 IOVA), SIZE, CTL,
 *     READY;
 *  3. from the peer's messages: on IDT program our outbound window 0 with its XLAT/SIZE
 *     (ntb_peer_mw_set_trans); once its READY arrived and ours was acknowledged, map its
 *     control region for stores (ntb_peer_mw_map) and write our header into it;
 *  4. READY: port ACTIVE, IBV_EVENT_PORT_ACTIVE to every client, module->link_ready().
 * From then on the mailbox is silent and all control lives in window memory. The link going
 * down (peer daemon exited or killed, link disabled) undoes 3-4: port DOWN, PORT_ERR events,
 * module->link_lost().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "link_cm.h"
#include "link_mbox.h"
#include "ntbd.h"

#define CTL_SIZE_DEF	(128ull << 20)
/*
 * Heartbeat: NTRDMA's period (100 ms), but 30 missed beats (3 s) before the peer counts as
 * hung, not ~10: on a loaded 2-core machine a daemon can be off the CPU for a second, and a
 * declared hang costs every client its QPs. A tick that comes late by half the limit means we
 * were the one not running: the peer gets a fresh limit.
 */
#define HB_MS_DEF	100
#define HB_MS_MAX	60000
#define HB_MISSES_DEF	30
#define HB_MISSES_MAX	100000

struct ntbd_peer_view {
	bool hello;
	uint64_t xlat, size, ctl;
	bool have_xlat, have_size, have_ctl;
	bool ready;
	uint32_t epoch;
};

static void link_step(struct ntbd *n);
static void link_changed(struct ntbd *n);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void arm_heartbeat(struct ntbd *n, bool on)
{
	struct itimerspec its = { 0 };

	if (n->hb_fd < 0 || !n->hb_ms)
		return;
	if (on) {
		its.it_value.tv_sec = n->hb_ms / 1000;
		its.it_value.tv_nsec = (long)(n->hb_ms % 1000) * 1000000L;
		its.it_interval = its.it_value;
	}
	timerfd_settime(n->hb_fd, 0, &its, NULL);
}

static const _Atomic uint32_t *peer_beat(struct ntbd *n)
{
	/* the peer writes its header at offset 0 of our control region */
	return &((const struct ntbd_ctl_hdr *)n->link.ctl)->heartbeat;
}

/*
 * The handshake's retransmit timer: every NTBD_MBOX_RETRY_MS at first, then every
 * HS_SLOW_MS once the handshake has lasted HS_SLOW_AFTER_MS - the peer daemon is stopped or
 * gone, and an idle daemon must not wake 50 times a second for it. Its messages still wake us
 * at once (doorbell or message interrupt); only our resends wait longer.
 */
#define HS_SLOW_AFTER_MS	1000
#define HS_SLOW_MS		250

static void arm_timer(struct ntbd *n, bool on)
{
	struct itimerspec its = { 0 };

	if (on) {
		long ms = now_ns() - n->hs_since_ns > HS_SLOW_AFTER_MS * 1000000ull ?
				  HS_SLOW_MS : NTBD_MBOX_RETRY_MS;

		its.it_value.tv_nsec = ms * 1000000L;
		its.it_interval = its.it_value;
	}
	timerfd_settime(n->timer_fd, 0, &its, NULL);
}

static void set_state(struct ntbd *n, enum ntbd_link_state s)
{
	enum ntbd_link_state old = n->link.state;

	if (old == s)
		return;
	n->link.state = s;
	bvd_log(n->d, "link %s", s == NTBD_LINK_READY ? "ready: port ACTIVE" :
		s == NTBD_LINK_HANDSHAKE ? "up: handshake with the peer daemon" : "down: port DOWN");
	if (s == NTBD_LINK_READY) {
		n->hb_seen = atomic_load_explicit(peer_beat(n), memory_order_acquire);
		n->hb_seen_ns = n->hb_tick_ns = now_ns();
		arm_heartbeat(n, true);
		bvd_async_event_all(n->d, 1, IBV_EVENT_PORT_ACTIVE);
		if (n->mod && n->mod->link_ready)
			n->mod->link_ready(n);
		ntbd_cm_link_ready(n);
	} else if (old == NTBD_LINK_READY) {
		arm_heartbeat(n, false);
		ntbd_cm_link_lost(n);
		if (n->mod && n->mod->link_lost)
			n->mod->link_lost(n);
		bvd_async_event_all(n->d, 1, IBV_EVENT_PORT_ERR);
	}
}

/* Step 1: our window 0 = [control region | aperture], once per daemon. */
static int setup_window(struct ntbd *n)
{
	struct ntbd_link *l = &n->link;
	uint64_t align, size_align, size_max;
	struct ntb_iommu_map m;
	int err;

	if (l->win_size)
		return 0;
	err = ntb_mw_get_align(n->ntb, NTB_DEF_PEER_IDX, 0, &align, &size_align, &size_max);
	if (err)
		return err;
	if (align < NTB_PAGE_SIZE)
		align = NTB_PAGE_SIZE;
	if (l->ctl_size > size_max / 2)
		l->ctl_size = size_max / 2;
	err = ntb_iova_alloc(n->ntb, size_max, align, &l->win_iova);
	if (err)
		return err;
	m = (struct ntb_iommu_map){ .iova = l->win_iova, .len = l->ctl_size,
				    .perm = NTB_IOMMU_READ | NTB_IOMMU_WRITE, .fd = l->ctl_fd };
	err = ntb_iommu_map(n->ntb, &m);
	if (err) {
		ntb_iova_free(n->ntb, l->win_iova, size_max);
		return err;
	}
	if (ntb_xlat_model(n->ntb) == NTB_XLAT_INBOUND) {
		err = ntb_mw_set_trans(n->ntb, NTB_DEF_PEER_IDX, 0, l->win_iova, size_max);
		if (err) {
			ntb_iommu_unmap(n->ntb, l->win_iova, l->ctl_size);
			ntb_iova_free(n->ntb, l->win_iova, size_max);
			return err;
		}
	}
	l->win_size = size_max;
	return 0;
}

static void on_cmd(void *arg, const struct ntbd_mbox_msg *msg)
{
	struct ntbd *n = arg;

	switch (msg->cmd) {
	case MBOX_HELLO:
		/* the peer's session (re)starts: forget what an earlier one said */
		memset(n->pv, 0, sizeof(*n->pv));
		if (msg->data != NTBD_LINK_VERSION) {
			bvd_log(n->d, "peer daemon speaks link protocol %llu, we speak %u",
				(unsigned long long)msg->data, NTBD_LINK_VERSION);
			return;
		}
		n->pv->hello = true;
		break;
	case MBOX_XLAT:
		if (n->pv->hello && msg->wid == 0) {
			n->pv->xlat = msg->data;
			n->pv->have_xlat = true;
		}
		break;
	case MBOX_SIZE:
		if (n->pv->hello && msg->wid == 0) {
			n->pv->size = msg->data;
			n->pv->have_size = true;
		}
		break;
	case MBOX_CTL:
		if (n->pv->hello) {
			n->pv->ctl = msg->data;
			n->pv->have_ctl = true;
		}
		break;
	case MBOX_READY:
		if (n->pv->hello && n->pv->have_xlat && n->pv->have_size && n->pv->have_ctl) {
			n->pv->ready = true;
			n->pv->epoch = (uint32_t)msg->data;
		}
		break;
	}
}

/*
 * The peer's control region must be memory it maps for us, writable, in one piece: our stores
 * into the rest of the window (a hole of its IOMMU) would fault here, where an NTB would drop
 * them. A peer that says otherwise is not talked to.
 */
static bool peer_ctl_backed(struct ntbd *n)
{
	uint64_t len = (n->pv->ctl + NTB_PAGE_SIZE - 1) & ~(uint64_t)(NTB_PAGE_SIZE - 1), off;
	int fd;

	if (ntb_peer_mw_range_fd(n->ntb, 0, 0, len, &fd, &off))
		return false;
	close(fd);
	return true;
}

/* Step 3-4: both READY: reach the peer's control region. */
static int finish(struct ntbd *n)
{
	struct ntbd_link *l = &n->link;
	struct ntbd_ctl_hdr *h;
	void *va;
	uint64_t size;
	int err;

	if (ntb_xlat_model(n->ntb) == NTB_XLAT_OUTBOUND) {
		err = ntb_peer_mw_set_trans(n->ntb, NTB_DEF_PEER_IDX, 0, n->pv->xlat, n->pv->size);
		if (err)
			return err;
	}
	err = ntb_peer_mw_map(n->ntb, 0, &va, &size);
	if (err)
		return err;
	if (n->pv->ctl < sizeof(*h) || n->pv->ctl > size || !peer_ctl_backed(n)) {
		ntb_peer_mw_unmap(n->ntb, 0);
		return -EPROTO;
	}
	l->peer_ctl = va;
	l->peer_ctl_size = n->pv->ctl;
	l->peer_win_size = size;
	l->peer_epoch = n->pv->epoch;
	/* our header in the peer's control region: stores only */
	h = va;
	h->version = NTBD_LINK_VERSION;
	h->epoch = l->epoch;
	h->hb_ms = n->hb_ms;
	ntb_pio_wmb();
	h->magic = NTBD_CTL_MAGIC;
	return 0;
}

static void link_down(struct ntbd *n)
{
	struct ntbd_link *l = &n->link;

	set_state(n, NTBD_LINK_DOWN);
	arm_timer(n, false);
	if (l->peer_ctl) {
		ntb_peer_mw_unmap(n->ntb, 0);
		l->peer_ctl = NULL;
		l->peer_ctl_size = l->peer_win_size = 0;
	}
	if (ntb_xlat_model(n->ntb) == NTB_XLAT_OUTBOUND)
		ntb_peer_mw_clear_trans(n->ntb, NTB_DEF_PEER_IDX, 0);
	memset(n->pv, 0, sizeof(*n->pv));
}

static void link_begin(struct ntbd *n)
{
	struct ntbd_link *l = &n->link;
	int err = setup_window(n);

	if (err) {
		bvd_log(n->d, "cannot set up window 0: %s", strerror(-err));
		return;
	}
	l->epoch++;
	n->hs_since_ns = now_ns();
	memset(n->pv, 0, sizeof(*n->pv));
	ntbd_mbox_reset(n->mbox, n->ntb);
	ntbd_mbox_send(n->mbox, MBOX_HELLO, 0, NTBD_LINK_VERSION);
	ntbd_mbox_send(n->mbox, MBOX_XLAT, 0, l->win_iova);
	ntbd_mbox_send(n->mbox, MBOX_SIZE, 0, l->win_size);
	ntbd_mbox_send(n->mbox, MBOX_CTL, 0, l->ctl_size);
	ntbd_mbox_send(n->mbox, MBOX_READY, 0, l->epoch);
	set_state(n, NTBD_LINK_HANDSHAKE);
	link_step(n);
}

/* Run the mailbox; finish when both sides are READY. */
static void link_step(struct ntbd *n)
{
	bool busy;

	if (n->link.state != NTBD_LINK_HANDSHAKE)
		return;
	busy = ntbd_mbox_poll(n->mbox, on_cmd, n);
	if (n->pv->ready && !busy) {
		int err = finish(n);

		if (err) {
			bvd_log(n->d, "peer's window 0 unusable: %s", strerror(-err));
			n->pv->ready = false;	/* wait for the peer to start over */
		} else {
			arm_timer(n, false);
			set_state(n, NTBD_LINK_READY);
			return;
		}
	}
	arm_timer(n, true);	/* retransmit until acknowledged, poll for the peer */
}

static void link_changed(struct ntbd *n)
{
	bool up = ntb_link_is_up(n->ntb, NULL, NULL);

	if (!up && n->link.state != NTBD_LINK_DOWN)
		link_down(n);
	else if (up && n->link.state == NTBD_LINK_DOWN)
		link_begin(n);
}

static void ntb_readable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	struct ntbd *n = arg;
	uint32_t ev = ntb_events(n->ntb);

	if (ev & NTB_EVENT_LINK)
		link_changed(n);
	if (ev & NTB_EVENT_DB) {
		/* the canonical receive loop: read, clear, then look at the work */
		uint64_t db = ntb_db_read(n->ntb);

		ntb_db_clear(n->ntb, db);
		if (n->link.state == NTBD_LINK_HANDSHAKE && (db & NTBD_DB_CTL))
			link_step(n);
		if (n->link.state == NTBD_LINK_READY && db && n->mod && n->mod->doorbell)
			n->mod->doorbell(n, db);
		if (n->link.state == NTBD_LINK_READY && (db & NTBD_DB_CTL))
			ntbd_cm_doorbell(n);
	}
	if ((ev & NTB_EVENT_MSG) && n->link.state == NTBD_LINK_HANDSHAKE)
		link_step(n);
}

/*
 * The peer daemon stopped beating: it is hung (or so slow it might as well be). Take the link
 * down for everyone: ours go DOWN now (PORT_ERR; the provider sees the link down and fails its
 * QPs' work), and disabling and re-enabling the link gives every handle a new session, so the
 * peer's clients' writes are dropped (their epoch is gone) and the peer's model reports the
 * bounce to it when it runs again; meanwhile we wait in the handshake.
 */
static void link_bounce(struct ntbd *n, uint64_t silent_ms)
{
	n->hb_downs++;
	bvd_log(n->d, "peer daemon silent for %llu ms (heartbeat every %u ms): link down",
		(unsigned long long)silent_ms, n->hb_ms);
	ntb_link_disable(n->ntb);
	link_changed(n);
	ntb_link_enable(n->ntb, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
}

static void hb_readable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	struct ntbd *n = arg;
	const struct ntbd_ctl_hdr *ph = n->link.ctl;
	uint64_t v, now = now_ns(), limit;
	uint32_t beat, period, peer_ms = ph->hb_ms;

	if (read(fd, &v, sizeof(v)) < 0)
		return;
	if (n->link.state != NTBD_LINK_READY || !n->link.peer_ctl) {
		arm_heartbeat(n, false);
		return;
	}
	/*
	 * The peer's period (its header in our control region, one load: the peer may write
	 * anything there; at most what a config may say): a slower peer beats slower.
	 */
	if (peer_ms > HB_MS_MAX)
		peer_ms = HB_MS_MAX;
	period = peer_ms > n->hb_ms ? peer_ms : n->hb_ms;
	limit = (uint64_t)period * n->hb_misses * 1000000ull;
	/* we were not running for a while: say nothing about the peer, start counting again */
	if (now - n->hb_tick_ns > limit / 2)
		n->hb_seen_ns = now;
	n->hb_tick_ns = now;
	/* ours: a store into the peer's control region (a posted write) */
	atomic_store_explicit(&((struct ntbd_ctl_hdr *)n->link.peer_ctl)->heartbeat, ++n->hb_sent,
			      memory_order_release);
	beat = atomic_load_explicit(peer_beat(n), memory_order_acquire);
	if (!peer_ms) {
		/* a peer whose heartbeat is off never beats: nothing to expect */
		n->hb_seen_ns = now;
	} else if (beat != n->hb_seen) {
		n->hb_seen = beat;
		n->hb_seen_ns = now;
	} else if (now - n->hb_seen_ns > limit) {
		link_bounce(n, (now - n->hb_seen_ns) / 1000000);
		return;
	}
	if (n->mod && n->mod->tick)
		n->mod->tick(n);
}

static void timer_readable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	struct ntbd *n = arg;
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return;
	if (n->link.state != NTBD_LINK_HANDSHAKE) {
		arm_timer(n, false);
		return;
	}
	ntbd_mbox_tick(n->mbox, on_cmd, n);
	link_step(n);
}

bool ntbd_link_ready(const struct ntbd *n)
{
	return n->link.state == NTBD_LINK_READY;
}

int ntbd_link_init(struct ntbd *n)
{
	const struct bv_dev_conf *c = n->d->conf;
	struct ntb_dev_params p = {
		.link = c->link[0] ? c->link : c->name,
		.side = c->side,
		.profile = c->profile[0] ? c->profile : NULL,
		.mw_size = (uint64_t)bv_conf_get_long(c, "mw_size", 0),
	};
	struct ntbd_link *l = &n->link;
	long ctl = bv_conf_get_long(c, "ctl_size", (long)CTL_SIZE_DEF);
	int err;

	long hb_ms = bv_conf_get_long(c, "heartbeat_ms", HB_MS_DEF);
	long hb_misses = bv_conf_get_long(c, "heartbeat_misses", HB_MISSES_DEF);

	n->timer_fd = -1;
	n->hb_fd = -1;
	l->ctl_fd = -1;
	n->pv = calloc(1, sizeof(*n->pv));
	if (!n->pv)
		return 1;
	if (hb_ms < 0 || hb_ms > HB_MS_MAX || hb_misses < 2 || hb_misses > HB_MISSES_MAX) {
		bvd_log(n->d, "heartbeat_ms %ld (0..60000, 0: off), heartbeat_misses %ld (2..)",
			hb_ms, hb_misses);
		return 2;
	}
	n->hb_ms = (uint32_t)hb_ms;
	n->hb_misses = (uint32_t)hb_misses;
	if (ctl < (long)NTB_PAGE_SIZE * 2 || ctl % NTB_PAGE_SIZE) {
		bvd_log(n->d, "ctl_size %ld: must be a multiple of 4096, at least 8192", ctl);
		return 2;
	}
	l->ctl_size = ctl;
	n->mbox = calloc(1, sizeof(*n->mbox));
	if (!n->mbox)
		return 1;
	err = ntb_dev_open(&p, &n->ntb);
	if (err) {
		bvd_log(n->d, "cannot open link %s side %d (profile %s): %s", p.link, p.side,
			p.profile ? p.profile : "default", strerror(-err));
		return err == -EINVAL ? 2 : 1;
	}
	/* the control region: zero-filled shared memory, pages appear when touched */
	l->ctl_fd = memfd_create("ntbd-ctl", MFD_CLOEXEC);
	if (l->ctl_fd < 0 || ftruncate(l->ctl_fd, l->ctl_size))
		return 1;
	l->ctl = mmap(NULL, l->ctl_size, PROT_READ | PROT_WRITE, MAP_SHARED, l->ctl_fd, 0);
	if (l->ctl == MAP_FAILED) {
		l->ctl = NULL;
		return 1;
	}
	n->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	n->hb_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (n->timer_fd < 0 || bvd_watch_fd(n->d, n->timer_fd, timer_readable, n) ||
	    n->hb_fd < 0 || bvd_watch_fd(n->d, n->hb_fd, hb_readable, n) ||
	    bvd_watch_fd(n->d, ntb_event_fd(n->ntb), ntb_readable, n))
		return 1;
	bvd_log(n->d, "link %s side %d, profile %s, mailbox over %s", p.link, p.side,
		ntb_profile_name(n->ntb), ntb_msg_count(n->ntb) >= 4 ? "message registers" :
		"scratchpads");
	return -ntb_link_enable(n->ntb, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
}

void ntbd_link_stop(struct ntbd *n)
{
	if (!n->ntb)
		return;
	if (n->link.state != NTBD_LINK_DOWN)
		link_down(n);
	ntb_link_disable(n->ntb);
}

void ntbd_link_fini(struct ntbd *n)
{
	struct ntbd_link *l = &n->link;

	ntbd_link_stop(n);
	if (n->ntb) {
		bvd_unwatch_fd(n->d, ntb_event_fd(n->ntb));
		ntb_dev_close(n->ntb);
		n->ntb = NULL;
	}
	if (n->timer_fd >= 0) {
		bvd_unwatch_fd(n->d, n->timer_fd);
		close(n->timer_fd);
		n->timer_fd = -1;
	}
	if (n->hb_fd >= 0) {
		bvd_unwatch_fd(n->d, n->hb_fd);
		close(n->hb_fd);
		n->hb_fd = -1;
	}
	if (l->ctl)
		munmap(l->ctl, l->ctl_size);
	if (l->ctl_fd >= 0)
		close(l->ctl_fd);
	free(n->mbox);
	n->mbox = NULL;
	free(n->pv);
	n->pv = NULL;
}

static const char *human(uint64_t v, char *buf, size_t len)
{
	if (v >= (1ull << 30) && !(v % (1ull << 30)))
		snprintf(buf, len, "%llu GiB", (unsigned long long)(v >> 30));
	else
		snprintf(buf, len, "%llu MiB", (unsigned long long)(v >> 20));
	return buf;
}

void ntbd_link_status(struct ntbd *n, char *buf, size_t len)
{
	static const char *names[] = { "DOWN", "HANDSHAKE", "READY" };
	struct ntbd_link *l = &n->link;
	struct ntb_stats st;
	enum ntb_speed sp;
	enum ntb_width wd;
	char a[32], b[32];

	if (!n->ntb) {
		snprintf(buf, len, "  link: not open\n");
		return;
	}
	ntb_get_stats(n->ntb, &st);
	bool hw = ntb_link_is_up(n->ntb, &sp, &wd);
	snprintf(buf, len,
		 "  link %s side %d, profile %s: %s (hardware link %s%s), port %s\n"
		 "  window 0: %s at IOVA 0x%llx, control region %s; peer epoch %u, ours %u\n"
		 "  counters: xlink_reads %llu, iommu_faults %llu, dropped %llu, db_rings %llu, "
		 "link_ups %llu, engines %llu\n"
		 "  heartbeat: every %u ms, down after %u missed, peer last beat %lld ms ago, "
		 "hung peers %llu\n",
		 n->d->conf->link[0] ? n->d->conf->link : n->d->conf->name, n->d->conf->side,
		 ntb_profile_name(n->ntb), names[l->state], hw ? "up" : "down",
		 hw ? (sp == NTB_SPEED_GEN4 ? ", gen4" : sp == NTB_SPEED_GEN3 ? ", gen3" :
		       sp == NTB_SPEED_GEN2 ? ", gen2" : ", gen1") : "",
		 l->state == NTBD_LINK_READY ? "ACTIVE" : "DOWN",
		 human(l->win_size, a, sizeof(a)), (unsigned long long)l->win_iova,
		 human(l->ctl_size, b, sizeof(b)), l->peer_epoch, l->epoch,
		 (unsigned long long)st.xlink_reads, (unsigned long long)st.iommu_faults,
		 (unsigned long long)st.dropped_link, (unsigned long long)st.db_rings,
		 (unsigned long long)st.link_ups, (unsigned long long)st.engines, n->hb_ms,
		 n->hb_misses, l->state == NTBD_LINK_READY ?
		 (long long)((now_ns() - n->hb_seen_ns) / 1000000) : -1ll,
		 (unsigned long long)n->hb_downs);
	(void)wd;
}
