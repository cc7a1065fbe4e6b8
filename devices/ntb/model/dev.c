// SPDX-License-Identifier: MIT
/* Opening and closing a link end; the event fd. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "bv_paths.h"
#include "model.h"

void ntb_raise(int fd)
{
	static const uint64_t one = 1;

	if (fd >= 0) {
		ssize_t r = write(fd, &one, sizeof(one));
		(void)r;
	}
}

void ntb_pend(struct ntb_dev *ntb, uint32_t ev)
{
	if (ev && !(ntb->pending & ev)) {
		ntb->pending |= ev;
		ntb_raise(ntb->pend_fd);
	}
}

int ntb_epoll_add(struct ntb_dev *ntb, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(ntb->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void ntb_epoll_del(struct ntb_dev *ntb, int fd)
{
	epoll_ctl(ntb->epfd, EPOLL_CTL_DEL, fd, NULL);
}

static struct ntb_dev *dev_alloc(void)
{
	struct ntb_dev *ntb = calloc(1, sizeof(*ntb));

	if (!ntb)
		return NULL;
	ntb->lock_fd = ntb->lsock = ntb->inofd = ntb->cable = -1;
	ntb->epfd = epoll_create1(EPOLL_CLOEXEC);
	ntb->pend_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ntb->epfd < 0 || ntb->pend_fd < 0 || ntb_epoll_add(ntb, ntb->pend_fd)) {
		ntb_dev_close(ntb);
		return NULL;
	}
	return ntb;
}

struct ntb_dev *ntb_dev_alloc(void)
{
	return dev_alloc();
}

int ntb_dev_open(const struct ntb_dev_params *p, struct ntb_dev **out)
{
	struct ntb_dev *ntb;
	int prof, err;
	uint64_t mw;

	if (!p || !out || !p->link || !*p->link || strlen(p->link) >= sizeof(ntb->link) ||
	    (p->side != 0 && p->side != 1))
		return -EINVAL;
	for (const char *c = p->link; *c; c++)
		if (*c == '/')
			return -EINVAL;
	prof = ntb_profile_find(p->profile);
	if (prof < 0)
		return -EINVAL;
	mw = p->mw_size ? p->mw_size : ntb_profiles[prof].mw_size;
	/* a BAR is a power of two; 1 MiB .. 1 TiB keeps IOVA alignment sane */
	if (mw & (mw - 1) || mw < (1ull << 20) || mw > (1ull << 40))
		return -EINVAL;
	ntb = dev_alloc();
	if (!ntb)
		return -ENOMEM;
	ntb->owner = true;
	ntb->prof_idx = prof;
	ntb->prof = &ntb_profiles[prof];
	ntb->side = p->side;
	ntb->mw_size = mw;
	ntb->next_obj = 1;
	/*
	 * Grant ids name a client of this daemon in the peer's IOMMU engine slots, which outlive
	 * us: a successor must not reuse our ids (a random start, never 0).
	 */
	if (getrandom(&ntb->next_grant, sizeof(ntb->next_grant), GRND_NONBLOCK) !=
	    sizeof(ntb->next_grant))
		ntb->next_grant = (uint32_t)getpid() << 12 ^ (uint32_t)time(NULL);
	ntb->next_grant |= 1;
	snprintf(ntb->link, sizeof(ntb->link), "%s", p->link);
	ntb->local = ntb_side_new_local(prof, p->side, mw);
	if (!ntb->local) {
		ntb_dev_close(ntb);
		return -ENOMEM;
	}
	for (int i = 0; i < ntb->local->nvec; i++)
		if ((err = ntb_epoll_add(ntb, ntb->local->vec_fd[i]))) {
			ntb_dev_close(ntb);
			return err;
		}
	if ((err = ntb_epoll_add(ntb, ntb->local->misc_fd)) ||
	    (err = ntb_cable_open(ntb, p->rundir ? p->rundir : bv_rundir()))) {
		ntb_dev_close(ntb);
		return err;
	}
	*out = ntb;
	return 0;
}

void ntb_dev_close(struct ntb_dev *ntb)
{
	if (!ntb)
		return;
	for (int w = 0; w < NTB_MAX_MW; w++)
		if (ntb->pio[w].addr)
			munmap(ntb->pio[w].addr, ntb->pio[w].size);
	if (ntb->owner) {
		ntb_cable_close(ntb);
		ntb_objs_free(&ntb->objs);
		while (ntb->grants) {
			struct ntb_grant_rec *g = ntb->grants;

			ntb->grants = g->next;
			free(g);
		}
		free(ntb->iova);
	}
	ntb_objs_free(&ntb->peer_objs);
	if (ntb->peer)
		ntb_side_put(ntb->peer);
	if (ntb->local)
		ntb_side_put(ntb->local);
	if (ntb->pend_fd >= 0)
		close(ntb->pend_fd);
	if (ntb->epfd >= 0)
		close(ntb->epfd);
	free(ntb);
}

const char *ntb_profile_name(const struct ntb_dev *ntb)
{
	return ntb->prof->name;
}

enum ntb_topo ntb_get_topo(const struct ntb_dev *ntb)
{
	return ntb->prof->topo[ntb->side];
}

enum ntb_xlat_model ntb_xlat_model(const struct ntb_dev *ntb)
{
	return ntb->prof->xlat;
}

bool ntb_is_owner(const struct ntb_dev *ntb)
{
	return ntb->owner;
}

int ntb_event_fd(struct ntb_dev *ntb)
{
	return ntb->epfd;
}

static void drain_eventfd(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof(v));

	(void)r;
}

uint32_t ntb_events(struct ntb_dev *ntb)
{
	struct epoll_event ev[16];
	uint32_t ret;
	int n;

	if (ntb->relink) {
		/* the down half of a peer's bounce was reported last time: now the up half */
		ntb->relink = false;
		if (ntb->owner)
			ntb_link_update(ntb);
	}
	while ((n = epoll_wait(ntb->epfd, ev, 16, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (fd == ntb->pend_fd) {
				drain_eventfd(fd);
				continue;
			}
			if (ntb->local && fd == ntb->local->misc_fd) {
				drain_eventfd(fd);
				ntb->pending |= NTB_EVENT_MSG;
				continue;
			}
			if (ntb->local) {
				bool vec = false;

				for (int v = 0; v < ntb->local->nvec; v++)
					if (fd == ntb->local->vec_fd[v])
						vec = true;
				if (vec) {
					drain_eventfd(fd);
					ntb->pending |= NTB_EVENT_DB;
					continue;
				}
			}
			if (ntb->owner)
				ntb_cable_event(ntb, fd, ev[i].events);
		}
		if (n < 16)
			break;
	}
	ret = ntb->pending;
	ntb->pending = 0;
	drain_eventfd(ntb->pend_fd);
	if (ntb->relink)
		ntb_raise(ntb->pend_fd);	/* come back for the up half */
	return ret;
}

void ntb_get_stats(struct ntb_dev *ntb, struct ntb_stats *st)
{
	struct ntb_regs *r = ntb->local->regs;

	st->xlink_reads = reg_load(&r->xlink_reads);
	st->iommu_faults = reg_load(&r->iommu_faults);
	st->dropped_link = reg_load(&r->dropped_link);
	st->db_rings = reg_load(&r->db_rings);
	st->db_irqs = reg_load(&r->db_irqs);
	st->link_ups = reg_load(&r->link_ups);
	st->engines = ntb_iommu_engines_used(ntb->local->iommu);
}
