// SPDX-License-Identifier: MIT
/*
 * The completion channels a context's CQs deliver to, so that the daemon's death wakes them.
 *
 * When a device goes away under its verbs clients, the kernel (ib_uverbs_free_hw_resources ->
 * uverbs_destroy_ufile_hw) closes the event queue of every completion channel of the context:
 * a read() asleep in ibv_get_cq_event returns -EIO once the queued events are taken, and
 * poll() says the fd is ready (ib_uverbs_event_read, ib_uverbs_event_poll). A channel here is a
 * self-connected datagram socket (providers/preload/bv_preload.c); shut down for reading and
 * writing, its sleeper wakes, a read returns the records still queued, then 0, and poll reports
 * POLLIN | POLLHUP. The preload shim turns that end of file into EIO (ibv_get_cq_event).
 *
 * A channel's fd is the application's: it may close it as soon as no CQ uses it
 * (ibv_destroy_comp_channel refuses before). So each channel in use by a CQ is held here by a
 * dup of its fd (one per socket, counted by CQ), and only those are shut down.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bv_provider.h"

void bv_chan_init(struct bv_chans *c)
{
	pthread_mutex_init(&c->lock, NULL);
	c->v = NULL;
	c->n = c->cap = 0;
	c->dead = false;
}

static struct bv_chan_ref *find(struct bv_chans *c, const struct stat *st)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].ino == st->st_ino && c->v[i].dev == st->st_dev)
			return &c->v[i];
	return NULL;
}

int bv_chan_hold(struct bv_context *ctx, int fd)
{
	struct bv_chans *c = &ctx->chans;
	struct bv_chan_ref *r;
	struct stat st;
	int err = 0;

	if (fstat(fd, &st))
		return errno;
	pthread_mutex_lock(&c->lock);
	r = find(c, &st);
	if (r) {
		r->refs++;
		goto out;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct bv_chan_ref *v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			err = ENOMEM;
			goto out;
		}
		c->v = v;
		c->cap = cap;
	}
	r = &c->v[c->n];
	r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (r->fd < 0) {
		err = errno;
		goto out;
	}
	r->ino = st.st_ino;
	r->dev = st.st_dev;
	r->refs = 1;
	c->n++;
	if (c->dead) /* the daemon went while this CQ was being made */
		shutdown(r->fd, SHUT_RDWR);
out:
	pthread_mutex_unlock(&c->lock);
	return err;
}

void bv_chan_release(struct bv_context *ctx, int fd)
{
	struct bv_chans *c = &ctx->chans;
	struct bv_chan_ref *r;
	struct stat st;

	if (fstat(fd, &st))
		return;
	pthread_mutex_lock(&c->lock);
	r = find(c, &st);
	if (r && !--r->refs) {
		close(r->fd);
		*r = c->v[--c->n];
	}
	pthread_mutex_unlock(&c->lock);
}

void bv_chan_wake_all(struct bv_context *ctx)
{
	struct bv_chans *c = &ctx->chans;

	pthread_mutex_lock(&c->lock);
	c->dead = true;
	for (size_t i = 0; i < c->n; i++)
		shutdown(c->v[i].fd, SHUT_RDWR);
	pthread_mutex_unlock(&c->lock);
}

void bv_chan_fini(struct bv_chans *c)
{
	for (size_t i = 0; i < c->n; i++)
		close(c->v[i].fd);
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
	pthread_mutex_destroy(&c->lock);
}
