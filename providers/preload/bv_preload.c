// SPDX-License-Identifier: MIT
/*
 * libbridgeverbs-preload.so: the things a userspace provider cannot do from inside
 * libibverbs (rdma-core libibverbs/verbs.c ibv_create_comp_channel and ibv_get_cq_event,
 * libibverbs/ibdev_nl.c), done by interposing exactly three symbols.
 *
 * 1. ibv_create_comp_channel() is implemented inside libibverbs as a kernel write() on
 *    cmd_fd. For contexts of a bridgeverbs device we create the channel here: its fd is a
 *    self-connected AF_UNIX datagram socket, so whoever holds the fd (the provider, or the
 *    device daemon the provider passed it to) can send() the 8-byte cq_handle records that
 *    ibv_get_cq_event() read()s, and nobody else can inject into it. ibv_destroy_comp_channel
 *    (close + free) needs no help. Other contexts go to the real function.
 *
 * 2. ibv_get_cq_event() reads one record from the channel's fd. When the device's daemon dies
 *    the provider shuts the channel down (providers/common/bv_chan.c), as the kernel closes
 *    the event queue of a device that goes away; the kernel's read() then fails with EIO
 *    (ib_uverbs_event_read), the socket's returns 0 and libibverbs returns -1 without an
 *    errno. For bridgeverbs channels the call here gives that -1 errno EIO.
 *
 * 3. With BV_HIDE_RDMA_NETLINK=1, socket(AF_NETLINK, *, NETLINK_RDMA) fails with
 *    EPROTONOSUPPORT, so that on a host whose kernel has RDMA netlink libibverbs still
 *    enumerates the sysfs tree at $SYSFS_PATH (it only reads sysfs when netlink fails).
 *
 * The shim links nothing but libc: it is preloaded into every process of `bvctl run`.
 * It carries no symbol versions, so it satisfies versioned references too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/netlink.h>

#include "verbs_provider.h"

#define BV_PROVIDER_NAME_PREFIX "bridgeverbs-"

typedef struct ibv_comp_channel *(*create_comp_channel_fn)(struct ibv_context *);
typedef int (*get_cq_event_fn)(struct ibv_comp_channel *, struct ibv_cq **, void **);

/*
 * libibverbs' own definition of a verb. RTLD_NEXT finds it when libibverbs is in the global
 * scope (linked in, or dlopen()ed with RTLD_GLOBAL); a Python extension (pyverbs) dlopen()s it
 * RTLD_LOCAL, and then only a handle to the loaded library finds it.
 */
static void *real_verb(const char *name, const char *version)
{
	void *f = dlvsym(RTLD_NEXT, name, version), *lib;

	if (f)
		return f;
	lib = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib)
		return NULL;
	f = dlvsym(lib, name, version);
	dlclose(lib);	/* NOLOAD took a reference; the library stays loaded */
	return f;
}

static int is_bridgeverbs(struct ibv_context *ctx)
{
	const struct verbs_device *vdev = bv_verbs_get_device(ctx->device);

	return vdev->ops && vdev->ops->name &&
	       !strncmp(vdev->ops->name, BV_PROVIDER_NAME_PREFIX,
			strlen(BV_PROVIDER_NAME_PREFIX));
}

static int self_connected_socket(void)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa_family_t);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	/* Autobind to a unique abstract address, then connect to it. */
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (bind(s, (struct sockaddr *)&sa, len))
		goto fail;
	len = sizeof(sa);
	if (getsockname(s, (struct sockaddr *)&sa, &len) ||
	    connect(s, (struct sockaddr *)&sa, len))
		goto fail;
	return s;
fail:
	close(s);
	return -1;
}

__attribute__((visibility("default"))) struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	static create_comp_channel_fn real;
	struct ibv_comp_channel *ch;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	if (!is_bridgeverbs(context)) {
		if (!real)
			real = (create_comp_channel_fn)real_verb("ibv_create_comp_channel",
								 "IBVERBS_1.0");
		if (!real) {
			errno = ENOSYS;
			return NULL;
		}
		return real(context);
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return NULL;
	ch->fd = self_connected_socket();
	if (ch->fd < 0) {
		int e = errno;

		free(ch);
		errno = e;
		return NULL;
	}
	ch->context = context;
	ch->refcnt = 0;
	return ch;
}

__attribute__((visibility("default"))) int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	static get_cq_event_fn real;
	int saved = errno, ret;

	if (!real)
		real = (get_cq_event_fn)real_verb("ibv_get_cq_event", "IBVERBS_1.1");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (!channel || !channel->context || !is_bridgeverbs(channel->context))
		return real(channel, cq, cq_context);
	errno = EIO;	/* left as it is only when read() found the channel shut down */
	ret = real(channel, cq, cq_context);
	if (!ret)
		errno = saved;
	return ret;
}

__attribute__((visibility("default"))) int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		const char *hide = getenv("BV_HIDE_RDMA_NETLINK");

		if (hide && *hide == '1') {
			errno = EPROTONOSUPPORT;
			return -1;
		}
	}
	return syscall(SYS_socket, domain, type, protocol);
}
