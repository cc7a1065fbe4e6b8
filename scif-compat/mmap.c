// SPDX-License-Identifier: MIT
/*
 * scif_mmap / scif_munmap (docs/scif.md "Mapping a peer's window"): the peer's registered pages
 * mapped into this process for loads and stores, as a Xeon Phi maps them through PCIe. Verbs
 * have no such operation; a connection maps what its transport can reach:
 *
 *   - the peer is on our own node (any device): its pages are local. The owner's window is
 *     in shareable memory (the providers move registered pages into a memfd, providers/common
 *     /bv_shadow.c): it names that descriptor and we take a copy of it (pidfd_getfd);
 *   - the other end of an ntb link: the pages behind the NTB window, through the ntb
 *     provider's extension ntbdv_map_peer_mr (providers/ntb/ntbdv.h);
 *   - anything else (cx4 to another node): EOPNOTSUPP, after SCIF's checks.
 *
 * The owner learns of each mapping (MAP, answered) and of its end (UNMAP from scif_munmap): a
 * window unregistered while mapped stays registered, dead, until the last mapping goes.
 * Mappings outlive scif_close, as in SCIF.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ntbdv.h"
#include "scif_priv.h"

#define MAP_SPANS 64

/* A scif_mmap()ed range: the owner hears of its unmapping through ep. */
struct mapping {
	struct mapping *next;
	uintptr_t addr;
	size_t len;
	uint64_t off;		/* the peer's registered offset at addr */
	struct scif_ep *ep;	/* a reference */
};

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mapping *maps;

/* ----------------------------------------------------------------------------------------- */
/* The ntb provider's extension, found in the loaded provider                                 */

static int find_ntb(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *n = info->dlpi_name, *want = "libntb-rdmav34.so";
	size_t ln = strlen(n), lw = strlen(want);

	if (ln >= lw && !strcmp(n + ln - lw, want)) {
		void *h = dlopen(n, RTLD_NOLOAD | RTLD_NOW);

		if (h)
			*(ntbdv_map_peer_mr_fn *)arg =
				(ntbdv_map_peer_mr_fn)dlsym(h, NTBDV_MAP_PEER_MR_SYM);
		return 1;
	}
	return 0;
}

static ntbdv_map_peer_mr_fn ntbdv_fn(void)
{
	static ntbdv_map_peer_mr_fn fn;

	if (!fn)
		dl_iterate_phdr(find_ntb, &fn);
	return fn;
}

/* ----------------------------------------------------------------------------------------- */
/* Owner side                                                                                  */

/*
 * The memory object behind [p, p + len) of our address space: a descriptor this process holds
 * open on it and the offset of p in it. -ENXIO: private memory (nothing another process can
 * map).
 */
static int backing_fd(uintptr_t p, size_t len, int *fdnum, uint64_t *fdoff)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long start, end, pgoff, ino = 0;
	char line[512];
	bool found = false;
	DIR *d;
	struct dirent *de;

	if (!f)
		return -ENXIO;
	while (fgets(line, sizeof(line), f)) {
		char perms[8], dev[16];

		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu", &start, &end, perms, &pgoff, dev,
			   &ino) != 6)
			continue;
		if (p >= start && p + len <= end && perms[3] == 's' && ino) {
			found = true;
			break;
		}
	}
	fclose(f);
	if (!found)
		return -ENXIO;
	d = opendir("/proc/self/fd");
	if (!d)
		return -ENXIO;
	while ((de = readdir(d))) {
		struct stat st;
		int fd = atoi(de->d_name);

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fstat(fd, &st) ||
		    !S_ISREG(st.st_mode) || st.st_ino != ino)
			continue;
		*fdnum = fd;
		*fdoff = pgoff + (p - start);
		closedir(d);
		return 0;
	}
	closedir(d);
	return -ENXIO;
}

/* The window of lwin holding [off, off + len) wholly, live or dead, or NULL. */
static struct scif_win *window_of(struct scif_ep *ep, uint64_t off, uint64_t len)
{
	long i = scif_wintab_find(&ep->lwin, off);
	struct scif_win *w;

	if (i < 0)
		return NULL;
	w = &ep->lwin.w[i];
	return off + len <= w->off + w->len ? w : NULL;
}

void scif_mmap_peer(struct scif_ep *ep, const struct scif_wire_msg *m)
{
	struct scif_win *w = window_of(ep, m->arg[0], m->arg[1]);
	uint64_t fdoff = 0;
	int fdnum = -1, ret = 0;

	if (m->op == SCIF_OP_UNMAP) {
		if (!w || !w->maps) {
			scif_reject_log(ep, SCIF_REJ_STATE, "an unmapping of nothing mapped");
			return;
		}
		if (!--w->maps && w->state == SCIF_WIN_DEAD) {
			/* unregistered while mapped: it goes now */
			scif_win_dereg(w);
			scif_wintab_remove(&ep->lwin, (size_t)(w - ep->lwin.w), 1);
		}
		return;
	}
	if (!w || w->state != SCIF_WIN_LIVE)
		ret = ENXIO;
	else if (ep->peer.node == ep->node)
		ret = -backing_fd(w->addr + (m->arg[0] - w->off), m->arg[1], &fdnum, &fdoff);
	if (!ret)
		w->maps++;
	scif_send_ctrl(ep, SCIF_OP_ACK, m->req, (uint64_t)ret, ret ? 0 : (uint64_t)getpid(),
		       ret ? 0 : (uint64_t)fdnum, fdoff, 0);
}

/* ----------------------------------------------------------------------------------------- */
/* Mapper side                                                                                 */

/* A copy of another process's descriptor. */
static int fd_of(pid_t pid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), nfd;

	if (pfd < 0)
		return -errno;
	nfd = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	if (nfd < 0)
		nfd = -errno;
	close(pfd);
	return nfd;
}

/* Map one remote window piece at dst. */
static int map_span(struct scif_ep *ep, const struct scif_span *s, uint8_t *dst, int prot,
		    bool self, struct ibv_context *verbs, bool ntb)
{
	uint64_t v[3] = { 0 };
	int mprot = (prot & SCIF_PROT_READ ? PROT_READ : 0) | (prot & SCIF_PROT_WRITE ? PROT_WRITE : 0);
	int fd, ret;
	uint64_t fdoff;

	if (!self && !ntb)
		return -EOPNOTSUPP;
	ret = scif_request(ep, SCIF_OP_MAP, s->off, s->len, 0, 0, 0, v);
	if (ret)
		return ret == -ENXIO && self ? -EOPNOTSUPP : ret;
	if (self) {
		fd = fd_of((pid_t)v[0], (int)v[1]);
		fdoff = v[2];
	} else {
		struct ntbdv_peer_map pm;
		ntbdv_map_peer_mr_fn fn = ntbdv_fn();

		ret = fn ? fn(verbs, s->w->key, s->w->addr + (s->off - s->w->off), s->len, &pm) : ENXIO;
		/* read-only windows and DMA-only memory: the window cannot show them */
		fd = ret ? -(ret == EACCES || ret == ENXIO ? EOPNOTSUPP : ret) : pm.fd;
		fdoff = ret ? 0 : pm.offset;
	}
	if (fd >= 0) {
		if (mmap(dst, s->len, mprot, MAP_SHARED | MAP_FIXED, fd, (off_t)fdoff) == MAP_FAILED)
			ret = -errno;
		else
			ret = 0;
		close(fd);
	} else {
		ret = fd;
	}
	if (ret)
		scif_send_ctrl(ep, SCIF_OP_UNMAP, 0, s->off, s->len, 0, 0, 0);
	return ret;
}

void *scif_mmap_ep(struct scif_ep *ep, void *addr, size_t len, int prot, int flags, off_t off)
{
	struct scif_span s[MAP_SPANS];
	struct ibv_context *verbs = NULL;
	struct mapping *mp;
	bool self = false, ntb = false;
	uint8_t *base;
	size_t done = 0;
	int n = 0, err = 0;

	if ((flags & ~SCIF_MAP_FIXED) || (prot & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)) || !len ||
	    len % SCIF_PAGE_SIZE || off % (off_t)SCIF_PAGE_SIZE ||
	    ((flags & SCIF_MAP_FIXED) && (uintptr_t)addr % SCIF_PAGE_SIZE))
		err = EINVAL;
	else if (off < 0)
		err = ENXIO;
	if (!err) {
		pthread_mutex_lock(&ep->lock);
		err = -scif_verify(ep);
		if (!err) {
			/* the spans' windows are copied: the table may change under us later */
			n = scif_wintab_resolve(&ep->rwin, (uint64_t)off, len, (uint32_t)prot, s,
						MAP_SPANS);
			if (n == -EPERM)
				err = EACCES;
			else if (n < 0)
				err = n == -E2BIG ? ENOMEM : ENXIO;
			self = ep->peer.node == ep->node;
			ntb = ep->conn->dev->is_ntb;
			verbs = ep->conn->dev->verbs;
		}
		pthread_mutex_unlock(&ep->lock);
	}
	if (!err && !self && !ntb)
		err = EOPNOTSUPP;	/* verbs cannot reach a remote node's pages with loads */
	if (err) {
		errno = err;
		return SCIF_MMAP_FAILED;
	}
	{
		struct scif_win wins[MAP_SPANS];

		pthread_mutex_lock(&ep->lock);
		for (int i = 0; i < n; i++) {
			wins[i] = *s[i].w;
			s[i].w = &wins[i];
		}
		pthread_mutex_unlock(&ep->lock);
		/* reserve the range, then lay the windows over it */
		base = mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				  (flags & SCIF_MAP_FIXED ? MAP_FIXED : 0), -1, 0);
		if (base == MAP_FAILED) {
			errno = ENOMEM;
			return SCIF_MMAP_FAILED;
		}
		for (int i = 0; i < n && !err; i++) {
			err = -map_span(ep, &s[i], base + done, prot, self, verbs, ntb);
			if (!err)
				done += s[i].len;
		}
	}
	mp = err ? NULL : calloc(1, sizeof(*mp));
	if (!mp) {
		/* what was mapped is given back */
		if (done)
			scif_send_ctrl(ep, SCIF_OP_UNMAP, 0, (uint64_t)off, done, 0, 0, 0);
		munmap(base, len);
		errno = err ? err : ENOMEM;
		return SCIF_MMAP_FAILED;
	}
	mp->addr = (uintptr_t)base;
	mp->len = len;
	mp->off = (uint64_t)off;
	mp->ep = ep;
	scif_ep_hold(ep);
	pthread_mutex_lock(&maps_lock);
	mp->next = maps;
	maps = mp;
	pthread_mutex_unlock(&maps_lock);
	return base;
}

/* Tell the owner about the part [a, b) of mapping m that goes; the mapping keeps the rest. */
static void unmapped(struct mapping *m, uintptr_t a, uintptr_t b)
{
	struct scif_ep *ep = m->ep;
	uint64_t off = m->off + (a - m->addr);

	/* the owner counts mappings per window: one UNMAP per window piece */
	pthread_mutex_lock(&ep->lock);
	while (ep->state == SCIF_CONNECTED && a < b) {
		long i = scif_wintab_find(&ep->rwin, off);
		uint64_t n = b - a;

		if (i < 0)
			break;
		if (off + n > ep->rwin.w[i].off + ep->rwin.w[i].len)
			n = ep->rwin.w[i].off + ep->rwin.w[i].len - off;
		scif_send_ctrl(ep, SCIF_OP_UNMAP, 0, off, n, 0, 0, 0);
		off += n;
		a += n;
	}
	pthread_mutex_unlock(&ep->lock);
}

int scif_munmap_range(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = a + ((len + SCIF_PAGE_SIZE - 1) & ~(SCIF_PAGE_SIZE - 1));
	struct mapping **pp, *m, *split = NULL;

	if (a % SCIF_PAGE_SIZE || !len || b < a)
		return -EINVAL;
	if (munmap(addr, len))
		return -errno;
	pthread_mutex_lock(&maps_lock);
	for (pp = &maps; (m = *pp);) {
		uintptr_t ma = m->addr, mb = m->addr + m->len, lo = a > ma ? a : ma,
			  hi = b < mb ? b : mb;

		if (lo >= hi) {
			pp = &m->next;
			continue;
		}
		unmapped(m, lo, hi);
		if (lo == ma && hi == mb) {
			*pp = m->next;
			scif_ep_put(m->ep);
			free(m);
			continue;
		}
		if (lo > ma && hi < mb && (split = calloc(1, sizeof(*split)))) {
			/* a hole in the middle: the part after it is a mapping of its own */
			split->addr = hi;
			split->len = mb - hi;
			split->off = m->off + (hi - ma);
			split->ep = m->ep;
			scif_ep_hold(m->ep);
			split->next = m->next;
			m->next = split;
		}
		if (lo == ma) {
			m->off += hi - ma;
			m->addr = hi;
			m->len = mb - hi;
		} else {
			m->len = lo - ma;
		}
		pp = &m->next;
	}
	pthread_mutex_unlock(&maps_lock);
	return 0;
}
