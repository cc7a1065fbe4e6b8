// SPDX-License-Identifier: MIT
/*
 * The SCIF user API: the 22 functions of Intel's libscif (scif.h), exported under the version
 * node SCIF_0.0 (libscif.map). Each entry point checks its arguments in the order the SCIF
 * driver does (Linux drivers/misc/mic/scif/scif_api.c, scif_rma.c, scif_dma.c, scif_fence.c;
 * MPSS 3's micscif where they differ, as docs/scif.md records), sets errno and dispatches.
 *
 * An invalid descriptor: EBADF if it is no open descriptor, ENOTTY if it is open but not a
 * SCIF endpoint of this process (the ioctl of a non-SCIF file).
 */
#include <errno.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "scif_priv.h"

#define SCIF_EXPORT __attribute__((visibility("default")))

static int fail(int err)
{
	errno = err;
	return -1;
}

/* -errno or a value: the ioctl convention inside, errno outside. */
static int ret_int(int r)
{
	return r < 0 ? fail(-r) : r;
}

/* The endpoint behind a descriptor, held; NULL with errno set (EBADF, ENOTTY). */
static struct scif_ep *hold(scif_epd_t epd)
{
	int err;
	struct scif_ep *ep = scif_ep_get(epd, &err);

	if (!ep)
		errno = err;
	return ep;
}

/* Let go of the endpoint and return as the API does: the value, or -1 with errno. */
static int release(struct scif_ep *ep, int ret)
{
	scif_ep_put(ep);
	return ret_int(ret);
}

/* copy_to_user: store into a caller's pointer, EFAULT if it is not writable memory. */
static int put_user(void *dst, const void *src, size_t len)
{
	struct iovec l = { .iov_base = (void *)src, .iov_len = len };
	struct iovec r = { .iov_base = dst, .iov_len = len };

	if (!dst)
		return -EFAULT;
	return process_vm_writev(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A pointer no buffer can start at (the first page is never mapped). */
static bool bad_ptr(const void *p)
{
	return (uintptr_t)p < 4096;
}

/* scif_verify_epd: the state every data-path call requires. */
int scif_verify(const struct scif_ep *ep)
{
	if (ep->state == SCIF_DISCONNECTED)
		return -ECONNRESET;
	if (ep->state != SCIF_CONNECTED)
		return -ENOTCONN;
	return 0;
}

void scif_ep_free(struct scif_ep *ep)
{
	scif_rma_release(ep);
	pthread_mutex_destroy(&ep->lock);
	pthread_cond_destroy(&ep->cond);
	pthread_mutex_destroy(&ep->send_mutex);
	pthread_mutex_destroy(&ep->recv_mutex);
	pthread_mutex_destroy(&ep->sq_lock);
	free(ep);
}

struct scif_ep *scif_ep_alloc(void)
{
	struct scif_ep *ep = calloc(1, sizeof(*ep));
	pthread_condattr_t ca;

	if (!ep)
		return NULL;
	ep->fd = ep->lfd = -1;
	atomic_init(&ep->refs, 1);
	pthread_mutex_init(&ep->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ep->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&ep->send_mutex, NULL);
	pthread_mutex_init(&ep->recv_mutex, NULL);
	pthread_mutex_init(&ep->sq_lock, NULL);
	ep->state = SCIF_UNBOUND;
	ep->node = scif_lib.nodes.self;
	scif_wintab_init(&ep->lwin);
	scif_wintab_init(&ep->rwin);
	return ep;
}

SCIF_EXPORT scif_epd_t scif_open(void)
{
	struct scif_ep *ep;
	int ret = scif_lib_init();

	if (ret)
		return fail(-ret);
	ep = scif_ep_alloc();
	if (!ep)
		return fail(ENOMEM);
	ret = scif_epfd_open(ep);
	if (ret) {
		scif_ep_put(ep);
		return fail(-ret);
	}
	ret = scif_ep_table_add(ep);
	if (!ret)
		ret = scif_epoll_add(ep->lfd, EPOLLRDHUP, SCIF_SRC(SCIF_SRC_EP, ep));
	if (ret) {
		scif_ep_table_del(ep);
		close(ep->fd);
		close(ep->lfd);
		ep->fd = ep->lfd = -1;
		scif_ep_put(ep);
		return fail(-ret);
	}
	scif_ep_put(ep);	/* the table holds it */
	return ep->fd;
}

SCIF_EXPORT int scif_close(scif_epd_t epd)
{
	struct scif_ep *ep;
	int err, fd;

	ep = scif_ep_get(epd, &err);
	if (!ep) {
		/* a forked child closing what its parent left it */
		if (err == ENOTTY && scif_lib_take_inherited(epd))
			return close(epd);
		return fail(err == ENOTTY ? EINVAL : err);
	}
	scif_conn_close(ep);
	scif_ep_table_del(ep);
	pthread_mutex_lock(&ep->lock);
	fd = ep->fd;
	ep->fd = -1;
	pthread_mutex_unlock(&ep->lock);
	scif_reap_ep(ep);	/* descriptor B and listen ids: the progress thread */
	close(fd);
	scif_ep_put(ep);
	return 0;
}

SCIF_EXPORT int scif_bind(scif_epd_t epd, uint16_t pn)
{
	struct scif_ep *ep = hold(epd);
	int err, ret;

	if (!ep)
		return -1;
	/* SCIF: like IETF RFC 1700, ports below 1024 are for privileged processes */
	if (pn && pn < SCIF_ADMIN_PORT_END && !scif_capable(CAP_SYS_ADMIN)) {
		ret = -EACCES;
		goto out;
	}
	pthread_mutex_lock(&ep->lock);
	if (ep->state == SCIF_BOUND) {
		ret = -EINVAL;
	} else if (ep->state != SCIF_UNBOUND) {
		ret = -EISCONN;
	} else {
		ep->port = scif_port_reserve(ep->node, pn, &err);
		if (ep->port) {
			ep->state = SCIF_BOUND;
			ret = ep->port->port;
		} else {
			ret = -err;
		}
	}
	pthread_mutex_unlock(&ep->lock);
out:
	return release(ep, ret);
}

SCIF_EXPORT int scif_listen(scif_epd_t epd, int backlog)
{
	struct scif_ep *ep = hold(epd);
	int ret;

	if (!ep)
		return -1;
	if (backlog <= 0) {
		ret = -EINVAL;
		goto out;
	}
	pthread_mutex_lock(&ep->lock);
	switch (ep->state) {
	case SCIF_BOUND:
		ret = scif_conn_listen(ep, backlog < SCIF_MAX_BACKLOG ? backlog : SCIF_MAX_BACKLOG);
		break;
	case SCIF_LISTENING:
	case SCIF_CONNECTING:
	case SCIF_CONNECTED:
		ret = -EISCONN;
		break;
	default:
		ret = -EINVAL;
		break;
	}
	pthread_mutex_unlock(&ep->lock);
out:
	return release(ep, ret);
}

SCIF_EXPORT int scif_connect(scif_epd_t epd, struct scif_portID *dst)
{
	struct scif_ep *ep = hold(epd);
	int ret;

	if (!ep)
		return -1;
	if (!dst)
		ret = -EINVAL;
	else if (!scif_nodes_route(&scif_lib.nodes, dst->node))
		ret = -ENODEV;
	else if (!dst->port)
		ret = -EINVAL;
	else
		ret = scif_conn_connect(ep, dst);
	return release(ep, ret);
}

SCIF_EXPORT int scif_accept(scif_epd_t epd, struct scif_portID *peer, scif_epd_t *newepd,
			    int flags)
{
	struct scif_ep *ep = hold(epd);
	int ret;

	if (!ep)
		return -1;
	if ((flags & ~SCIF_ACCEPT_SYNC) || !peer || !newepd)
		ret = -EINVAL;
	else
		ret = scif_conn_accept(ep, peer, newepd, flags);
	return release(ep, ret);
}

/* scif_msg_param_check */
static int msg_check(const void *msg, int len, int flags)
{
	if (len < 0)
		return -EINVAL;
	if (flags && !(flags & SCIF_SEND_BLOCK))
		return -EINVAL;
	if (bad_ptr(msg))
		return -EFAULT;
	return 0;
}

/* scif_send and scif_recv: the endpoint, then a zero length (done), then the arguments. */
static int msg_io(scif_epd_t epd, void *msg, int len, int flags,
		  int (*io)(struct scif_ep *ep, void *msg, int len, int flags))
{
	struct scif_ep *ep = hold(epd);
	int ret;

	if (!ep)
		return -1;
	if (!len)
		ret = 0;
	else if (!(ret = msg_check(msg, len, flags)))
		ret = io(ep, msg, len, flags);
	return release(ep, ret);
}

SCIF_EXPORT int scif_send(scif_epd_t epd, void *msg, int len, int flags)
{
	return msg_io(epd, msg, len, flags, scif_msg_send);
}

SCIF_EXPORT int scif_recv(scif_epd_t epd, void *msg, int len, int flags)
{
	return msg_io(epd, msg, len, flags, scif_msg_recv);
}

SCIF_EXPORT off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
				int prot_flags, int map_flags)
{
	struct scif_ep *ep = hold(epd);
	off_t ret;

	if (!ep)
		return SCIF_REGISTER_FAILED;
	/* user mode: SCIF_MAP_KERNEL is not a flag a program may pass */
	if ((map_flags & ~SCIF_MAP_FIXED) ||
	    ((map_flags & SCIF_MAP_FIXED) &&
	     (offset % (off_t)SCIF_PAGE_SIZE || offset < 0 ||
	      (uint64_t)offset + len < (uint64_t)offset || (uint64_t)offset + len > SCIF_AUTO_END)) ||
	    (prot_flags & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)) || !len ||
	    (uintptr_t)addr % SCIF_PAGE_SIZE || len % SCIF_PAGE_SIZE)
		ret = -EINVAL;
	else
		ret = scif_rma_register(ep, addr, len, offset, prot_flags, map_flags);
	scif_ep_put(ep);
	if (ret < 0) {
		errno = (int)-ret;
		return SCIF_REGISTER_FAILED;
	}
	return ret;
}

SCIF_EXPORT int scif_unregister(scif_epd_t epd, off_t offset, size_t len)
{
	struct scif_ep *ep = hold(epd);
	int ret;

	if (!ep)
		return -1;
	if (!len || len % SCIF_PAGE_SIZE || offset % (off_t)SCIF_PAGE_SIZE || offset < 0 ||
	    (uint64_t)offset + len < (uint64_t)offset)
		ret = -EINVAL;
	else
		ret = scif_rma_unregister(ep, offset, len);
	return release(ep, ret);
}

#define RMA_FLAGS (SCIF_RMA_USECPU | SCIF_RMA_USECACHE | SCIF_RMA_SYNC | SCIF_RMA_ORDERED)

/* scif_rma_copy's checks (MPSS 3): the state first, then the flags, then the length. */
static int rma_call(scif_epd_t epd, off_t loff, void *addr, size_t len, off_t roff, int flags,
		    bool write, bool virt)
{
	struct scif_ep *ep = hold(epd);
	int ret;

	if (!ep)
		return -1;
	pthread_mutex_lock(&ep->lock);
	ret = scif_verify(ep);
	pthread_mutex_unlock(&ep->lock);
	if (!ret && flags && !(flags & RMA_FLAGS))
		ret = -EINVAL;
	if (!ret && !len)
		ret = -EINVAL;
	if (!ret && virt && bad_ptr(addr))
		ret = -EFAULT;
	if (!ret)
		ret = scif_rma_copy(ep, loff, addr, len, roff, flags, write);
	return release(ep, ret);
}

SCIF_EXPORT int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
			      int rma_flags)
{
	return rma_call(epd, loffset, NULL, len, roffset, rma_flags, false, false);
}

SCIF_EXPORT int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
			     int rma_flags)
{
	return rma_call(epd, loffset, NULL, len, roffset, rma_flags, true, false);
}

SCIF_EXPORT int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t offset,
			       int rma_flags)
{
	return rma_call(epd, -1, addr, len, offset, rma_flags, false, true);
}

SCIF_EXPORT int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t offset,
			      int rma_flags)
{
	return rma_call(epd, -1, addr, len, offset, rma_flags, true, true);
}

SCIF_EXPORT int scif_fence_mark(scif_epd_t epd, int flags, int *mark)
{
	struct scif_ep *ep = hold(epd);
	int ret, m = 0;

	if (!ep)
		return -1;
	ret = scif_fence_mark_ep(ep, flags, &m);
	if (!ret)
		ret = put_user(mark, &m, sizeof(m));
	return release(ep, ret);
}

SCIF_EXPORT int scif_fence_wait(scif_epd_t epd, int mark)
{
	struct scif_ep *ep = hold(epd);

	if (!ep)
		return -1;
	return release(ep, scif_fence_wait_ep(ep, mark));
}

SCIF_EXPORT int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval, off_t roff,
				  uint64_t rval, int flags)
{
	struct scif_ep *ep = hold(epd);

	if (!ep)
		return -1;
	return release(ep, scif_fence_signal_ep(ep, loff, lval, roff, rval, flags));
}

SCIF_EXPORT void *scif_mmap(void *addr, size_t len, int prot_flags, int map_flags,
			    scif_epd_t epd, off_t offset)
{
	struct scif_ep *ep = hold(epd);
	void *ret;

	if (!ep)
		return SCIF_MMAP_FAILED;
	ret = scif_mmap_ep(ep, addr, len, prot_flags, map_flags, offset);
	scif_ep_put(ep);
	return ret;
}

SCIF_EXPORT int scif_munmap(void *addr, size_t len)
{
	return ret_int(scif_munmap_range(addr, len));
}

SCIF_EXPORT int scif_get_nodeIDs(uint16_t *nodes, int len, uint16_t *self)
{
	uint16_t ids[SCIF_MAX_ROUTES + 1];
	int ret = scif_lib_init(), n;

	if (ret)
		return fail(-ret);
	n = scif_nodes_list(&scif_lib.nodes, ids, SCIF_MAX_ROUTES);
	if (n > SCIF_MAX_ROUTES)
		n = SCIF_MAX_ROUTES;
	ret = put_user(self, &scif_lib.nodes.self, sizeof(*self));
	if (!ret && len > 0 && n)
		ret = put_user(nodes, ids, (size_t)(len < n ? len : n) * sizeof(*ids));
	return ret ? fail(-ret) : n;
}

/* Readers that poll: have the peer wake us on data now, not after a delay. */
static void arm_pollers(const struct scif_pollepd *epds, unsigned int nepds)
{
	for (unsigned int i = 0; i < nepds; i++) {
		struct scif_ep *ep;
		int err;

		if (!(epds[i].events & POLLIN) || !(ep = scif_ep_get(epds[i].epd, &err)))
			continue;
		scif_msg_arm_rx(ep);
		scif_ep_put(ep);
	}
}

SCIF_EXPORT int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout)
{
	int ret;

	/* struct scif_pollepd is laid out as struct pollfd (libscif casts it too) */
	_Static_assert(sizeof(struct scif_pollepd) == sizeof(struct pollfd) &&
			       offsetof(struct scif_pollepd, revents) ==
				       offsetof(struct pollfd, revents),
		       "scif_pollepd is a pollfd");
	if (timeout > INT32_MAX)
		timeout = INT32_MAX;
	/*
	 * A look first: the kernel checks the array (EFAULT, EINVAL beyond RLIMIT_NOFILE) before
	 * we read it to arm readers, and what is ready needs no arming
	 */
	ret = poll((struct pollfd *)epds, nepds, 0);
	if (ret || !nepds)
		return ret;
	arm_pollers(epds, nepds);
	return poll((struct pollfd *)epds, nepds, timeout < 0 ? -1 : (int)timeout);
}

SCIF_EXPORT int scif_get_fd(scif_epd_t epd)
{
	return epd;
}
