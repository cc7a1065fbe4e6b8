// SPDX-License-Identifier: MIT
/*
 * Grants: the data-path pieces of a link end handed to one client process. The owner packs a
 * description and every descriptor the client needs into one message on a fresh socket pair
 * and gives away the other end; the client unpacks it. One fd crosses the daemon protocol
 * however many the grant holds (bv_msg carries at most 4).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "model.h"

#define GRANT_MAGIC	0x544e5247u	/* "GRNT" */
#define GRANT_VERSION	2u
#define GRANT_MAX_OBJ	128
#define GRANT_MAX_FDS	(2 + 2 * NTB_MAX_DB_VECTORS + GRANT_MAX_OBJ)

struct grant_obj {
	uint32_t id;
	uint32_t pad;
	uint64_t off;
	uint64_t size;
};

struct grant_blob {
	uint32_t magic;
	uint32_t version;
	uint32_t profile;
	uint32_t side;
	uint64_t mw_size;
	uint32_t epoch;
	uint32_t flags;
	uint32_t peer_epoch;
	uint32_t pad;
	uint64_t db_bits;
	uint64_t peer_db_bits;
	uint32_t mw_mask;
	int32_t local_pid;
	int32_t peer_pid;
	uint32_t nobj;
	uint32_t grant_id;
	uint32_t pad2;
	uint64_t local_vecs;		/* local vector eventfds included, ascending */
	uint64_t peer_vecs;		/* peer vector eventfds included, ascending */
	struct grant_obj obj[GRANT_MAX_OBJ];
};

static uint64_t vectors_of(const struct ntb_profile *p, uint64_t bits)
{
	uint64_t v = 0;

	for (int i = 0; i < p->db_vectors; i++)
		if (ntb_profile_vector_mask(p, i) & bits)
			v |= 1ull << i;
	return v;
}

static uint64_t bits_of(const struct ntb_profile *p, uint64_t vecs)
{
	uint64_t b = 0;

	for (int i = 0; i < p->db_vectors; i++)
		if (vecs & (1ull << i))
			b |= ntb_profile_vector_mask(p, i);
	return b;
}

int ntb_grant_export(struct ntb_dev *ntb, const struct ntb_grant *g, uint32_t *grant_id)
{
	const struct ntb_profile *p = ntb->prof;
	struct grant_blob *b;
	struct ntb_grant_rec *rec;
	int fds[GRANT_MAX_FDS], nfds = 0, sv[2], err;
	uint64_t lvec, pvec;

	if (!ntb->owner)
		return -EPERM;
	if (!g || g->db_bits & ~p->db_valid_mask || g->peer_db_bits & ~p->db_valid_mask ||
	    g->peer_mw_mask & ~((1u << p->mw_count) - 1) || g->flags & ~NTB_GRANT_DMA)
		return -EINVAL;
	ntb_cable_drain(ntb);
	if (!ntb_link_is_up(ntb, NULL, NULL) || !ntb->peer)
		return -ENOTCONN;
	lvec = vectors_of(p, g->db_bits);
	if (bits_of(p, lvec) != g->db_bits)
		return -EINVAL;		/* not whole vectors */
	if (lvec & ntb->vec_given)
		return -EBUSY;
	pvec = vectors_of(p, g->peer_db_bits);

	b = calloc(1, sizeof(*b));
	rec = calloc(1, sizeof(*rec));
	if (!b || !rec) {
		free(b);
		free(rec);
		return -ENOMEM;
	}
	*b = (struct grant_blob){
		.magic = GRANT_MAGIC, .version = GRANT_VERSION, .profile = ntb->prof_idx,
		.side = ntb->side, .mw_size = ntb->mw_size,
		.epoch = reg_load(&ntb->local->regs->link_epoch), .flags = g->flags,
		.peer_epoch = ntb_peer_epoch_now(ntb->peer),
		.db_bits = g->db_bits, .peer_db_bits = g->peer_db_bits,
		.mw_mask = g->peer_mw_mask, .local_pid = getpid(), .peer_pid = ntb->peer->pid,
		.local_vecs = lvec, .peer_vecs = pvec,
	};
	/* never 0 (the owner's own channels), unique for this daemon's lifetime */
	if (!ntb->next_grant)
		ntb->next_grant++;
	b->grant_id = ntb->next_grant;
	fds[nfds++] = ntb->local->shm_fd;
	fds[nfds++] = ntb->peer->shm_fd;
	for (int i = 0; i < p->db_vectors; i++)
		if (lvec & (1ull << i))
			fds[nfds++] = ntb->local->vec_fd[i];
	for (int i = 0; i < p->db_vectors; i++)
		if (pvec & (1ull << i))
			fds[nfds++] = ntb->peer->vec_fd[i];
	if (g->peer_mw_mask)
		for (struct ntb_obj *o = ntb->peer_objs; o; o = o->next) {
			if (b->nobj == GRANT_MAX_OBJ) {
				free(b);
				free(rec);
				return -E2BIG;
			}
			b->obj[b->nobj++] = (struct grant_obj){ .id = o->id, .off = o->off,
								.size = o->size };
			fds[nfds++] = o->fd;
		}

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		free(b);
		free(rec);
		return err;
	}
	{
		union {
			char buf[CMSG_SPACE(sizeof(int) * GRANT_MAX_FDS)];
			struct cmsghdr align;
		} u;
		struct iovec iov = { .iov_base = b, .iov_len = sizeof(*b) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = CMSG_SPACE(sizeof(int) * nfds) };
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
		if (sendmsg(sv[0], &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(*b)) {
			err = -errno;
			close(sv[0]);
			close(sv[1]);
			free(b);
			free(rec);
			return err;
		}
	}
	close(sv[0]);
	free(b);
	/* the granted vectors are the client's now: we stop taking their interrupts */
	for (int i = 0; i < p->db_vectors; i++)
		if (lvec & (1ull << i))
			ntb_epoll_del(ntb, ntb->local->vec_fd[i]);
	ntb->vec_given |= lvec;
	rec->id = ntb->next_grant++;
	rec->vec_mask = lvec;
	rec->next = ntb->grants;
	ntb->grants = rec;
	if (grant_id)
		*grant_id = rec->id;
	return sv[1];
}

void ntb_grant_revoke(struct ntb_dev *ntb, uint32_t grant_id)
{
	for (struct ntb_grant_rec **p = &ntb->grants; *p; p = &(*p)->next)
		if ((*p)->id == grant_id) {
			struct ntb_grant_rec *g = *p;

			for (int i = 0; i < ntb->prof->db_vectors; i++)
				if (g->vec_mask & (1ull << i)) {
					ntb_epoll_add(ntb, ntb->local->vec_fd[i]);
					/* an interrupt the client did not take: look again */
					ntb_raise(ntb->local->vec_fd[i]);
				}
			ntb->vec_given &= ~g->vec_mask;
			*p = g->next;
			free(g);
			return;
		}
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int ntb_client_attach(int fd, struct ntb_dev **out)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * GRANT_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct grant_blob *b = calloc(1, sizeof(*b));
	struct iovec iov = { .iov_base = b, .iov_len = sizeof(*b) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	int fds[GRANT_MAX_FDS], nfds = 0, want, k, lv[NTB_MAX_DB_VECTORS], pv[NTB_MAX_DB_VECTORS];
	const struct ntb_profile *p;
	struct ntb_dev *ntb;
	ssize_t r;

	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	r = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	close(fd);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); r > 0 && c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (int i = 0; i < n && nfds < GRANT_MAX_FDS; i++)
				memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
	if (r != sizeof(*b) || b->magic != GRANT_MAGIC || b->version != GRANT_VERSION ||
	    b->profile >= (uint32_t)ntb_profile_count || b->nobj > GRANT_MAX_OBJ ||
	    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		close_all(fds, nfds);
		free(b);
		return r < 0 ? -errno : -EPROTO;
	}
	p = &ntb_profiles[b->profile];
	want = 2 + __builtin_popcountll(b->local_vecs) + __builtin_popcountll(b->peer_vecs) +
	       b->nobj;
	if (nfds != want || (b->local_vecs | b->peer_vecs) >> p->db_vectors) {
		close_all(fds, nfds);
		free(b);
		return -EPROTO;
	}
	ntb = ntb_dev_alloc();
	if (!ntb) {
		close_all(fds, nfds);
		free(b);
		return -ENOMEM;
	}
	ntb->owner = false;
	ntb->prof_idx = b->profile;
	ntb->prof = p;
	ntb->side = b->side;
	ntb->mw_size = b->mw_size;
	ntb->epoch = b->epoch;
	ntb->peer_epoch = b->peer_epoch;
	ntb->g_db_bits = b->db_bits;
	ntb->g_peer_db_bits = b->peer_db_bits;
	ntb->g_mw_mask = b->mw_mask;
	ntb->g_flags = b->flags;
	ntb->g_grant_id = b->grant_id;
	k = 2;
	for (int i = 0; i < NTB_MAX_DB_VECTORS; i++) {
		lv[i] = i < p->db_vectors && (b->local_vecs & (1ull << i)) ? fds[k++] : -1;
	}
	for (int i = 0; i < NTB_MAX_DB_VECTORS; i++)
		pv[i] = i < p->db_vectors && (b->peer_vecs & (1ull << i)) ? fds[k++] : -1;
	ntb->local = ntb_side_import(fds[0], p->db_vectors, lv, -1, b->local_pid);
	ntb->peer = ntb_side_import(fds[1], p->db_vectors, pv, -1, b->peer_pid);
	for (uint32_t i = 0; i < b->nobj; i++, k++) {
		struct ntb_obj *o = calloc(1, sizeof(*o));

		if (!o) {
			close(fds[k]);
			continue;
		}
		o->id = b->obj[i].id;
		o->off = b->obj[i].off;
		o->size = b->obj[i].size;
		o->fd = fds[k];
		o->next = ntb->peer_objs;
		ntb->peer_objs = o;
	}
	free(b);
	if (!ntb->local || !ntb->peer) {
		ntb_dev_close(ntb);
		return -EPROTO;
	}
	for (int i = 0; i < p->db_vectors; i++)
		if (ntb->local->vec_fd[i] >= 0 && ntb_epoll_add(ntb, ntb->local->vec_fd[i])) {
			ntb_dev_close(ntb);
			return -ENOMEM;
		}
	*out = ntb;
	return 0;
}
