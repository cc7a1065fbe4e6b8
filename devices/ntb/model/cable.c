// SPDX-License-Identifier: MIT
/*
 * The cable: how the two ends' processes find each other and exchange what a real link gives
 * for free (each side's registers become reachable from the other, interrupts are wired).
 *
 * Rendezvous: a SOCK_SEQPACKET Unix socket <rundir>/ntb-<link>.cable. Side 0 listens on it
 * (bound under a temporary name and renamed into place, so it appears already listening);
 * side 1 connects, and while it cannot, waits for the name to appear (inotify on the run
 * directory) - either side may start first and no one polls. A lock file per side refuses a
 * second live process on the same side.
 *
 * Messages (the model's own, never seen by drivers):
 *   HELLO    identity + fds: register file/IOMMU memfd, message eventfd, doorbell vector
 *            eventfds
 *   LINK     "my link enable changed" (the state itself is in the register file)
 *   OBJ_ADD  a shareable memory object now mapped in my IOMMU (fd), OBJ_DEL its removal
 * A hang-up (the peer process exited or was killed) unplugs the cable: link down, the peer's
 * side is released, every write toward it is dropped from then on.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include "cable_msg.h"
#include "model.h"

static void cable_log(struct ntb_dev *ntb, const char *fmt, const char *arg)
{
	fprintf(stderr, "ntb model (link %s side %d): ", ntb->link, ntb->side);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
}

static int cable_send(struct ntb_dev *ntb, const struct ntb_cable_msg *m, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * NTB_CABLE_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (ntb->cable < 0)
		return -ENOTCONN;
	if (nfds) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	if (sendmsg(ntb->cable, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(*m))
		return -errno;
	return 0;
}

static void cable_unplug(struct ntb_dev *ntb);

static void send_or_unplug(struct ntb_dev *ntb, const struct ntb_cable_msg *m, const int *fds,
			   int nfds)
{
	if (ntb->cable >= 0 && cable_send(ntb, m, fds, nfds))
		cable_unplug(ntb);
}

void ntb_cable_send_link(struct ntb_dev *ntb)
{
	struct ntb_cable_msg m = { .type = NTB_CABLE_LINK, .magic = NTB_CABLE_MAGIC };

	send_or_unplug(ntb, &m, NULL, 0);
}

void ntb_cable_send_obj(struct ntb_dev *ntb, const struct ntb_obj *o)
{
	struct ntb_cable_msg m = { .type = NTB_CABLE_OBJ_ADD, .magic = NTB_CABLE_MAGIC,
				   .obj = o->id, .obj_off = o->off, .obj_size = o->size };

	send_or_unplug(ntb, &m, &o->fd, 1);
}

void ntb_cable_send_obj_del(struct ntb_dev *ntb, uint32_t id)
{
	struct ntb_cable_msg m = { .type = NTB_CABLE_OBJ_DEL, .magic = NTB_CABLE_MAGIC, .obj = id };

	send_or_unplug(ntb, &m, NULL, 0);
}

void ntb_link_update(struct ntb_dev *ntb)
{
	struct ntb_regs *r = ntb->local->regs;
	bool up = ntb->cable >= 0 && ntb->peer && reg_load(&r->enabled) &&
		  reg_load(&ntb->peer->regs->enabled);
	bool was = reg_load(&r->link_up);

	if (ntb->peer) {
		uint32_t g = reg_load(&ntb->peer->regs->enable_gen);

		/*
		 * The peer disabled and re-enabled its link since we last looked (we were not
		 * running, or both messages came at once): on hardware the link went down and
		 * trained again. Say so: down now, up at the next ntb_events() (a driver only
		 * queries the state after each event, so it must see both).
		 */
		if (g != ntb->peer_enable_gen) {
			ntb->peer_enable_gen = g;
			if (was && up) {
				reg_store(&r->link_up, 0);
				ntb->relink = true;
				ntb_pend(ntb, NTB_EVENT_LINK);
				return;
			}
		}
	}
	if (ntb->relink && up)
		return;		/* reported at the next ntb_events() */
	if (up == was)
		return;
	if (up) {
		reg_store(&r->link_epoch, reg_load(&r->link_epoch) + 1);
		reg_inc(&r->link_ups);
	}
	reg_store(&r->link_up, up);
	ntb_pend(ntb, NTB_EVENT_LINK);
}

static void cable_plug(struct ntb_dev *ntb, int fd)
{
	struct ntb_side *l = ntb->local;
	int fds[NTB_CABLE_MAX_FDS], n = 0;
	struct ntb_cable_msg m = {
		.type = NTB_CABLE_HELLO, .magic = NTB_CABLE_MAGIC, .version = NTB_CABLE_VERSION,
		.side = ntb->side, .profile = ntb->prof_idx, .nvec = l->nvec,
		.mw_size = ntb->mw_size, .pid = getpid(),
	};

	ntb->cable = fd;
	if (ntb_epoll_add(ntb, fd)) {
		close(fd);
		ntb->cable = -1;
		return;
	}
	fds[n++] = l->shm_fd;
	fds[n++] = l->misc_fd;
	for (int i = 0; i < l->nvec; i++)
		fds[n++] = l->vec_fd[i];
	if (cable_send(ntb, &m, fds, n)) {
		cable_unplug(ntb);
		return;
	}
	for (struct ntb_obj *o = ntb->objs; o && ntb->cable >= 0; o = o->next)
		ntb_cable_send_obj(ntb, o);
}

static void cable_try_connect(struct ntb_dev *ntb)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (ntb->cable >= 0)
		return;
	/* the length was checked by ntb_cable_open() */
	memcpy(sa.sun_path, ntb->cable_path, strlen(ntb->cable_path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);	/* not there yet: inotify tells us when it is */
		return;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	cable_plug(ntb, fd);
}

static void cable_unplug(struct ntb_dev *ntb)
{
	if (ntb->cable < 0)
		return;
	ntb_epoll_del(ntb, ntb->cable);
	close(ntb->cable);
	ntb->cable = -1;
	ntb->peer_enabled = false;
	ntb_link_update(ntb);
	if (ntb->peer) {
		ntb_side_put(ntb->peer);
		ntb->peer = NULL;
	}
	ntb_objs_free(&ntb->peer_objs);
	ntb_pend(ntb, NTB_EVENT_LINK);
}

static void cable_hello(struct ntb_dev *ntb, const struct ntb_cable_msg *m, int *fds, int nfds)
{
	const char *why = NULL;

	if (m->version != NTB_CABLE_VERSION)
		why = "model version";
	else if (m->side == (uint32_t)ntb->side)
		why = "both ends claim the same side";
	else if (m->profile != (uint32_t)ntb->prof_idx)
		why = "the ends have different profiles";
	else if (m->mw_size != ntb->mw_size)
		why = "the ends have different mw_size";
	else if (m->nvec != (uint32_t)ntb->prof->db_vectors || nfds != (int)m->nvec + 2)
		why = "doorbell vectors";
	else if (ntb->peer)
		why = "second HELLO";
	if (why) {
		cable_log(ntb, "peer refused: %s; the link stays down", why);
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return;
	}
	ntb->peer = ntb_side_import(fds[0], m->nvec, fds + 2, fds[1], m->pid);
	if (!ntb->peer) {
		cable_log(ntb, "%s", "cannot map the peer's registers");
		return;
	}
	ntb->peer_enable_gen = reg_load(&ntb->peer->regs->enable_gen);
	ntb_link_update(ntb);
}

/*
 * The peer's memory object must hold the range it announces: we map it (PIO through the
 * window, and clients do), and a store past the end of a memfd is a SIGBUS here, where an NTB
 * drops a write that reaches no memory. A broken or hostile peer's short object is refused.
 */
static bool obj_ok(int fd, const struct ntb_cable_msg *m)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= 0 &&
	       !(m->obj_off % NTB_PAGE_SIZE) && !(m->obj_size % NTB_PAGE_SIZE) && m->obj_size &&
	       m->obj_off + m->obj_size > m->obj_off &&
	       (uint64_t)st.st_size >= m->obj_off + m->obj_size;
}

static void cable_obj_add(struct ntb_dev *ntb, const struct ntb_cable_msg *m, int *fds, int nfds)
{
	struct ntb_obj *o;

	if (nfds != 1 || !obj_ok(fds[0], m) || ntb_obj_find(ntb->peer_objs, m->obj) ||
	    !(o = calloc(1, sizeof(*o)))) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return;
	}
	o->id = m->obj;
	o->fd = fds[0];
	o->off = m->obj_off;
	o->size = m->obj_size;
	o->next = ntb->peer_objs;
	ntb->peer_objs = o;
}

static void cable_obj_del(struct ntb_dev *ntb, uint32_t id)
{
	for (struct ntb_obj **p = &ntb->peer_objs; *p; p = &(*p)->next)
		if ((*p)->id == id) {
			struct ntb_obj *o = *p;

			*p = o->next;
			o->next = NULL;
			ntb_objs_free(&o);
			return;
		}
}

static void cable_readable(struct ntb_dev *ntb)
{
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * NTB_CABLE_MAX_FDS)];
			struct cmsghdr align;
		} u;
		struct ntb_cable_msg m;
		struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		int fds[NTB_CABLE_MAX_FDS], nfds = 0;
		ssize_t r = recvmsg(ntb->cable, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		/* a failed recvmsg (ECONNRESET: the peer died) wrote no control data to parse */
		if (r < 0)
			mh.msg_controllen = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (int i = 0; i < n; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (nfds < NTB_CABLE_MAX_FDS)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
		if (r <= 0 || r != sizeof(m) || m.magic != NTB_CABLE_MAGIC ||
		    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			if (r > 0)
				cable_log(ntb, "%s", "bad message on the cable; unplugging");
			cable_unplug(ntb);
			if (ntb->side == 1)
				cable_try_connect(ntb);
			return;
		}
		switch (m.type) {
		case NTB_CABLE_HELLO:
			cable_hello(ntb, &m, fds, nfds);
			break;
		case NTB_CABLE_LINK:
			ntb_link_update(ntb);
			break;
		case NTB_CABLE_OBJ_ADD:
			cable_obj_add(ntb, &m, fds, nfds);
			break;
		case NTB_CABLE_OBJ_DEL:
			cable_obj_del(ntb, m.obj);
			break;
		default:
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
		}
		if (ntb->cable < 0)
			return;
	}
}

static void listener_readable(struct ntb_dev *ntb)
{
	int fd = accept4(ntb->lsock, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	/*
	 * Only one side-1 process can hold its lock, so a new connection means the old peer is
	 * gone even if its hang-up is still queued: replace the cable.
	 */
	if (ntb->cable >= 0)
		cable_unplug(ntb);
	cable_plug(ntb, fd);
}

static void inotify_readable(struct ntb_dev *ntb)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const char *base = strrchr(ntb->cable_path, '/') + 1;
	bool seen = false;
	ssize_t r;

	while ((r = read(ntb->inofd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + r;) {
			struct inotify_event *e = (struct inotify_event *)p;

			if (e->len && !strcmp(e->name, base))
				seen = true;
			p += sizeof(*e) + e->len;
		}
	}
	if (seen)
		cable_try_connect(ntb);
}

void ntb_cable_event(struct ntb_dev *ntb, int fd, uint32_t events)
{
	if (fd == ntb->cable) {
		if (events & EPOLLIN)
			cable_readable(ntb);
		else if (events & (EPOLLHUP | EPOLLERR))
			cable_unplug(ntb);
		if (ntb->cable < 0 && ntb->side == 1)
			cable_try_connect(ntb);
	} else if (fd == ntb->lsock) {
		listener_readable(ntb);
	} else if (fd == ntb->inofd) {
		inotify_readable(ntb);
	}
}

/* Take in whatever the cable has queued (objects the peer announced) without waiting. */
void ntb_cable_drain(struct ntb_dev *ntb)
{
	if (ntb->cable >= 0)
		cable_readable(ntb);
}

int ntb_cable_open(struct ntb_dev *ntb, const char *rundir)
{
	char path[300];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int err;

	if ((size_t)snprintf(ntb->cable_path, sizeof(ntb->cable_path), "%s/ntb-%s.cable", rundir,
			     ntb->link) >= sizeof(sa.sun_path) - 8)
		return -ENAMETOOLONG;
	/*
	 * One live process per side: a socket bound to an abstract name made of the run
	 * directory and the link. The kernel releases it when the holder dies (nothing is left
	 * in the run directory after a kill), and a second open in the same process conflicts
	 * too. (Abstract names are per network namespace: both ends and their clients share
	 * one anyway, since the cable is a Unix socket.)
	 */
	{
		char real[PATH_MAX];
		uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */
		struct sockaddr_un la = { .sun_family = AF_UNIX };
		int n;

		if (!realpath(rundir, real))
			return -errno;
		for (const char *c = real; *c; c++)
			h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
		n = snprintf(la.sun_path + 1, sizeof(la.sun_path) - 1, "bridgeverbs-ntb-%016llx-%s-%d",
			     (unsigned long long)h, ntb->link, ntb->side);
		ntb->lock_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (ntb->lock_fd < 0)
			return -errno;
		if (bind(ntb->lock_fd, (struct sockaddr *)&la,
			 offsetof(struct sockaddr_un, sun_path) + 1 + n))
			return errno == EADDRINUSE ? -EADDRINUSE : -errno;
	}

	if (ntb->side == 0) {
		snprintf(path, sizeof(path), "%s.%d", ntb->cable_path, (int)getpid() % 100000);
		if (strlen(path) >= sizeof(sa.sun_path))
			return -ENAMETOOLONG;
		memcpy(sa.sun_path, path, strlen(path) + 1);
		unlink(path);
		ntb->lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (ntb->lsock < 0)
			return -errno;
		if (bind(ntb->lsock, (struct sockaddr *)&sa, sizeof(sa)) || listen(ntb->lsock, 4) ||
		    rename(path, ntb->cable_path)) {
			err = -errno;
			unlink(path);
			return err;
		}
		return ntb_epoll_add(ntb, ntb->lsock);
	}
	ntb->inofd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ntb->inofd < 0)
		return -errno;
	if (inotify_add_watch(ntb->inofd, rundir, IN_CREATE | IN_MOVED_TO) < 0)
		return -errno;
	if ((err = ntb_epoll_add(ntb, ntb->inofd)))
		return err;
	cable_try_connect(ntb);	/* after the watch: a listener appearing now is not missed */
	return 0;
}

void ntb_cable_close(struct ntb_dev *ntb)
{
	if (ntb->cable >= 0) {
		close(ntb->cable);
		ntb->cable = -1;
	}
	if (ntb->lsock >= 0) {
		/* still ours: a successor cannot take the side before our lock goes below */
		close(ntb->lsock);
		unlink(ntb->cable_path);
		ntb->lsock = -1;
	}
	if (ntb->inofd >= 0) {
		close(ntb->inofd);
		ntb->inofd = -1;
	}
	if (ntb->lock_fd >= 0) {
		close(ntb->lock_fd);
		ntb->lock_fd = -1;
	}
	if (ntb->local)
		reg_store(&ntb->local->regs->link_up, 0);
}
