// SPDX-License-Identifier: MIT
/*
 * A direct-attach cable between two modelled ports on one host: the frames a port sends to
 * the other end's address go through a shared-memory ring instead of the host's UDP stack.
 *
 * Why: between two ports of one machine the kernel's UDP loopback is an emulation of the
 * network, and it costs two more copies of every byte (into and out of the socket) and a
 * system call per batch on each side, on the CPUs the devices need. Two cards joined by a
 * cable exchange frames with no host involved. The devices are unchanged: the same packets
 * (Ethernet frames of every RoCE type, ICRC, pcap), the same transport; only the medium
 * differs. A cable is an Ethernet link: it carries RoCE v1 and link-local IPv6 too, which
 * the UDP loopback cannot. Everything not for the other end's MAC (other hosts, the time
 * before the other end is up, an end that went away) goes by the port's other media.
 *
 * The shared format (files, records, positions, wake-ups) is described in cable.h.
 *
 * Trust: the two ends are daemons of one user (cx4d), as trusted as each other's cable; a
 * record's length is still checked against the ring before it is parsed.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

#define CABLE_LOOK_NS 100000000ull /* without inotify: look at most every 100 ms */
#define CABLE_PUBLISH_EVERY 8	   /* records between publications within one batch */

static inline uint8_t *ring_data(struct cable_ring *r)
{
	return (uint8_t *)r + CABLE_HDR;
}

static int end_path(char *buf, size_t len, const char *dir, const char *kind, uint32_t ipv4)
{
	int n = snprintf(buf, len, "%s/%s-%08x", dir, kind, ntohl(ipv4));

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static struct cable_ring *map_ring(int fd)
{
	void *p = mmap(NULL, CABLE_MAP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

int cx4m_cable_open(struct mdev *d, const char *dir)
{
	struct mcable *c = &d->net.cable;
	char path[CABLE_PATH_MAX];
	struct cable_ring *r;
	int fd, err;

	c->wake_fd = c->peer_wake_fd = c->watch_fd = -1;
	if (!dir)
		return 0;
	c->look_now = true;
	if (strlen(dir) >= sizeof(c->dir) - 16)
		return -ENAMETOOLONG;
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	err = end_path(path, sizeof(path), dir, "end", d->cfg.ipv4);
	if (err)
		return err;
	/* an end restarted after a crash finds its old file, which the other end may still map */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, CABLE_MAP)) {
		err = -errno;
		close(fd);
		return err;
	}
	r = map_ring(fd);
	close(fd);
	if (!r)
		return -errno;
	c->rx = r;
	/* (alive stays as it was: an other end that still maps this file goes on using it) */
	r->size = CABLE_RING_SIZE;
	r->owner = d->cfg.ipv4;
	memcpy(r->owner_mac, d->mac, 6);
	/* whatever an earlier life of this end left unread is lost, as frames on a cable are */
	c->rx_pos = atomic_load(&r->prod);
	atomic_store(&r->cons, c->rx_pos);
	atomic_store(&r->rx_sleeping, 0);
	r->magic = CABLE_MAGIC;
	atomic_store(&r->alive, 1);

	err = end_path(path, sizeof(path), dir, "wake", d->cfg.ipv4);
	if (err)
		return err;
	if (mkfifo(path, 0600) && errno != EEXIST)
		return -errno;
	/* read and write: a FIFO with a reader never blocks its opener nor raises SIGPIPE */
	c->wake_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->wake_fd < 0)
		return -errno;
	cx4m_cable_drain_wake(d);
	/* the other end's FIFO appears last, once its ring is ready: then we look (no polling) */
	c->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (c->watch_fd >= 0 && inotify_add_watch(c->watch_fd, dir, IN_CREATE | IN_MOVED_TO) < 0) {
		close(c->watch_fd);
		c->watch_fd = -1;
	}
	return 0;
}

static void drop_peer(struct mdev *d)
{
	struct mcable *c = &d->net.cable;

	if (c->tx)
		munmap(c->tx, CABLE_MAP);
	if (c->peer_wake_fd >= 0)
		close(c->peer_wake_fd);
	c->tx = NULL;
	c->peer_wake_fd = -1;
	c->peer = 0;
	memset(c->peer_mac, 0, 6);
	c->look_now = true; /* maybe another end is there already */
}

void cx4m_cable_close(struct mdev *d)
{
	struct mcable *c = &d->net.cable;
	char path[CABLE_PATH_MAX];

	drop_peer(d);
	if (c->rx) {
		atomic_store(&c->rx->alive, 0);
		munmap(c->rx, CABLE_MAP);
		c->rx = NULL;
		/* the other end still maps it; it sees alive 0 and lets go */
		if (!end_path(path, sizeof(path), c->dir, "end", d->cfg.ipv4))
			unlink(path);
	}
	if (c->watch_fd >= 0)
		close(c->watch_fd);
	c->watch_fd = -1;
	if (c->wake_fd >= 0) {
		close(c->wake_fd);
		if (!end_path(path, sizeof(path), c->dir, "wake", d->cfg.ipv4))
			unlink(path);
		rmdir(c->dir); /* the last end to go removes the cable */
	}
	c->wake_fd = -1;
}

/* Map the other end's ring and FIFO, if it is there and alive. */
static void look(struct mdev *d)
{
	struct mcable *c = &d->net.cable;
	char own[16], path[CABLE_PATH_MAX];
	struct dirent *e;
	DIR *dp = opendir(c->dir);

	if (!dp)
		return;
	snprintf(own, sizeof(own), "end-%08x", ntohl(d->cfg.ipv4));
	while (!c->tx && (e = readdir(dp))) {
		struct cable_ring *r;
		struct stat st;
		int fd;

		if (strncmp(e->d_name, "end-", 4) || strlen(e->d_name) != 12 ||
		    !strcmp(e->d_name, own))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", c->dir, e->d_name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		r = fstat(fd, &st) || st.st_size < CABLE_MAP ? NULL : map_ring(fd);
		close(fd);
		if (!r)
			continue;
		if (r->magic != CABLE_MAGIC || r->size != CABLE_RING_SIZE ||
		    !atomic_load(&r->alive) || !r->owner || r->owner == d->cfg.ipv4 ||
		    end_path(path, sizeof(path), c->dir, "wake", r->owner)) {
			munmap(r, CABLE_MAP);
			continue;
		}
		c->peer_wake_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (c->peer_wake_fd < 0) {
			munmap(r, CABLE_MAP);
			continue;
		}
		c->tx = r;
		c->peer = r->owner;
		memcpy(c->peer_mac, r->owner_mac, 6);
		c->tx_pos = c->tx_published = atomic_load(&r->prod);
		cx4m_mdev_log(d, "cable: joined to the port at %u.%u.%u.%u",
			      ((uint8_t *)&r->owner)[0], ((uint8_t *)&r->owner)[1],
			      ((uint8_t *)&r->owner)[2], ((uint8_t *)&r->owner)[3]);
	}
	closedir(dp);
}

uint32_t cx4m_cable_peer(struct mdev *d)
{
	struct mcable *c = &d->net.cable;

	if (!c->rx)
		return 0;
	if (c->tx && !atomic_load_explicit(&c->tx->alive, memory_order_acquire)) {
		cx4m_mdev_log(d, "cable: the other end went away");
		drop_peer(d);
	}
	if (!c->tx && (c->look_now || (c->watch_fd < 0 && d->now >= c->next_look_ns))) {
		c->look_now = false;
		c->next_look_ns = d->now + CABLE_LOOK_NS;
		look(d);
	}
	return c->peer;
}

static void wake(int fd)
{
	static const uint8_t b = 1;

	/* EAGAIN: the FIFO is full of wake-ups already */
	if (write(fd, &b, 1) < 0)
		return;
}

void cx4m_cable_publish(struct mdev *d)
{
	struct mcable *c = &d->net.cable;

	if (!c->tx || c->tx_pos == c->tx_published)
		return;
	atomic_store_explicit(&c->tx->prod, c->tx_pos, memory_order_release);
	c->tx_published = c->tx_pos;
	/* prod before rx_sleeping: pairs with the consumer's rx_sleeping before prod */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&c->tx->rx_sleeping, memory_order_relaxed))
		wake(c->peer_wake_fd);
}

/* Free bytes of the other end's ring; sets tx_waiting when fewer than need. */
static uint64_t tx_room(struct mdev *d, struct mcable *c, uint64_t need)
{
	uint64_t room = CABLE_RING_SIZE -
			(c->tx_pos - atomic_load_explicit(&c->tx->cons, memory_order_acquire));

	if (room >= need)
		return room;
	atomic_store(&c->tx->tx_waiting, 1);
	d->stats.cable_tx_full++;
	atomic_thread_fence(memory_order_seq_cst);
	return CABLE_RING_SIZE -
	       (c->tx_pos - atomic_load_explicit(&c->tx->cons, memory_order_acquire));
}

int cx4m_cable_put(struct mdev *d, const struct iovec *iov, int iovcnt, uint32_t len)
{
	struct mcable *c = &d->net.cable;
	uint32_t need = cable_rec_space(len), off = (uint32_t)(c->tx_pos & (CABLE_RING_SIZE - 1));
	uint32_t to_end = CABLE_RING_SIZE - off;
	struct cable_rec *rec;
	uint8_t *p;

	if (!c->tx || len > CABLE_MAX_PKT)
		return -EINVAL;
	if (to_end < need) {
		if (tx_room(d, c, (uint64_t)to_end + need) < (uint64_t)to_end + need) {
			cx4m_cable_publish(d);
			return -EAGAIN;
		}
		((struct cable_rec *)(ring_data(c->tx) + off))->len = CABLE_WRAP;
		c->tx_pos += to_end;
		off = 0;
	} else if (tx_room(d, c, need) < need) {
		cx4m_cable_publish(d);
		return -EAGAIN;
	}
	rec = (struct cable_rec *)(ring_data(c->tx) + off);
	*rec = (struct cable_rec){.len = len};
	p = (uint8_t *)(rec + 1);
	for (int i = 0; i < iovcnt; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	c->tx_pos += need;
	d->stats.cable_tx_pkts++;
	/* let the other end start on a long batch before it is all written */
	if (c->tx_pos - c->tx_published >= (uint64_t)CABLE_PUBLISH_EVERY * cable_rec_space(len))
		cx4m_cable_publish(d);
	return 0;
}

const uint8_t *cx4m_cable_next(struct mdev *d, size_t *len)
{
	struct mcable *c = &d->net.cable;
	uint64_t prod;

	if (!c->rx)
		return NULL;
	prod = atomic_load_explicit(&c->rx->prod, memory_order_acquire);
	while (c->rx_pos != prod) {
		uint32_t off = (uint32_t)(c->rx_pos & (CABLE_RING_SIZE - 1));
		struct cable_rec rec;

		if (prod - c->rx_pos > CABLE_RING_SIZE)
			break; /* not a position the producer could publish */
		memcpy(&rec, ring_data(c->rx) + off, sizeof(rec));
		if (rec.len == CABLE_WRAP) {
			c->rx_pos += CABLE_RING_SIZE - off;
			continue;
		}
		if (!rec.len || rec.len > CABLE_MAX_PKT ||
		    cable_rec_space(rec.len) > CABLE_RING_SIZE - off ||
		    cable_rec_space(rec.len) > prod - c->rx_pos)
			break;
		*len = rec.len;
		c->rx_pos += cable_rec_space(rec.len);
		d->stats.cable_rx_pkts++;
		return ring_data(c->rx) + off + sizeof(rec);
	}
	if (c->rx_pos != prod) {
		cx4m_mdev_log(d, "cable: bad record at %llu, skipping to %llu",
			      (unsigned long long)c->rx_pos, (unsigned long long)prod);
		d->stats.rx_drop_icrc++;
		c->rx_pos = prod;
	}
	return NULL;
}

void cx4m_cable_rx_done(struct mdev *d)
{
	struct mcable *c = &d->net.cable;

	if (!c->rx)
		return;
	if (atomic_load_explicit(&c->rx->cons, memory_order_relaxed) != c->rx_pos) {
		atomic_store_explicit(&c->rx->cons, c->rx_pos, memory_order_release);
		/* cons before tx_waiting: pairs with the producer's tx_waiting before cons */
		atomic_thread_fence(memory_order_seq_cst);
	}
	if (!atomic_load_explicit(&c->rx->tx_waiting, memory_order_relaxed))
		return;
	if (!cx4m_cable_peer(d))
		return; /* the producer is not found yet: it is woken once we are joined */
	atomic_store(&c->rx->tx_waiting, 0);
	wake(c->peer_wake_fd);
}

void cx4m_cable_sleeping(struct mdev *d, bool sleeping)
{
	if (d->net.cable.rx)
		atomic_store(&d->net.cable.rx->rx_sleeping, sleeping ? 1 : 0);
}

void cx4m_cable_drain_wake(struct mdev *d)
{
	struct mcable *c = &d->net.cable;
	uint8_t buf[256] __attribute__((aligned(8)));

	while (c->wake_fd >= 0 && read(c->wake_fd, buf, sizeof(buf)) > 0)
		;
	/* something appeared in the directory: look at the next pass */
	while (c->watch_fd >= 0 && read(c->watch_fd, buf, sizeof(buf)) > 0)
		c->look_now = true;
}
