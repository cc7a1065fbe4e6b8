/* SPDX-License-Identifier: MIT */
/*
 * What every bridgeverbs provider shares: registration with libibverbs through the private ABI
 * resolved at load time, the device found in sysfs, and a context connected to the device's
 * daemon (control requests, async events, device and port attributes).
 */
#ifndef BV_PROVIDER_H
#define BV_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bv_msg.h"
#include "bv_paths.h"
#include "bv_proto.h"
#include "verbs_provider.h"

/* Every bridgeverbs provider's verbs_device_ops name starts with this (the shim checks it). */
#define BV_PROVIDER_NAME_PREFIX "bridgeverbs-"

/* The private entry points, resolved by bv_register_provider(). */
extern verbs_init_and_alloc_context_fn bv_verbs_init_and_alloc_context;
extern verbs_uninit_context_fn bv_verbs_uninit_context;
extern verbs_set_ops_fn bv_verbs_set_ops;

/* Resolve the private ABI and register ops; says why on stderr if it cannot. */
void bv_register_provider(const struct verbs_device_ops *ops);

struct bv_device {
	struct verbs_device vdev;
	char kind[16];
	char daemon[16];		/* "cx4d", "ntbd": named in error messages */
	char ibdev[64];
	char sock_path[BV_PATH_MAX];
};

static inline struct bv_device *to_bv_device(struct ibv_device *ibdev)
{
	return (struct bv_device *)ibdev;
}

/* verbs_device_ops::alloc_device / uninit_device for every bridgeverbs provider. */
struct verbs_device *bv_alloc_device(struct verbs_sysfs_dev *sysfs_dev);
void bv_uninit_device(struct verbs_device *vdev);

/* The daemon connection of one context. */
struct bv_conn {
	int sock;
	uint32_t seq;
	uint32_t client_id;
	pthread_mutex_t lock;
};

/* The async event fd the application reads, relayed from the daemon's (bv_async.c). */
struct bv_async {
	int daemon_fd;		/* the daemon's datagrams arrive here */
	int app_end;		/* and are passed on here; the application reads the other end */
	int stop[2];
	pthread_t thread;
	bool running;
};

/* A completion channel some CQs of the context deliver to (bv_chan.c). */
struct bv_chan_ref {
	int fd;			/* our dup of the channel's fd */
	unsigned int refs;	/* the CQs using it */
	ino_t ino;		/* which socket: the fd's inode */
	dev_t dev;
};

struct bv_chans {
	pthread_mutex_t lock;
	struct bv_chan_ref *v;
	size_t n, cap;
	bool dead;		/* woken: the daemon has gone */
};

/* Every provider context starts with this. */
struct bv_context {
	struct verbs_context vctx;
	struct bv_conn conn;
	struct bv_device_attr attr;	/* immutable: fetched once at open */
	struct bv_async async;
	struct bv_chans chans;
};

/*
 * Give the application its async fd: the daemon's events relayed, and IBV_EVENT_DEVICE_FATAL
 * when the daemon's connection hangs up (bv_async.c). Takes daemon_fd; 0 or an errno.
 */
int bv_async_start(struct bv_context *ctx, int daemon_fd);
void bv_async_stop(struct bv_context *ctx);

/*
 * A CQ with a completion channel holds the channel (by its fd) from its creation to its
 * destruction; when the daemon's connection hangs up every held channel is woken, as the
 * kernel wakes a gone device's channels (bv_chan.c). bv_chan_hold returns 0 or an errno.
 */
int bv_chan_hold(struct bv_context *ctx, int fd);
void bv_chan_release(struct bv_context *ctx, int fd);
void bv_chan_wake_all(struct bv_context *ctx);
void bv_chan_init(struct bv_chans *c);
void bv_chan_fini(struct bv_chans *c);

static inline struct bv_context *to_bv_context(struct ibv_context *ibctx)
{
	return (struct bv_context *)((char *)ibctx - offsetof(struct verbs_context, context));
}

/*
 * Allocate a context of ctx_size bytes (the provider's struct, starting with struct
 * bv_context) for ibdev: connect to the daemon, say HELLO, install the async fd, replace
 * cmd_fd with a read-only /dev/null (libibverbs' own commands then fail with EBADF/ENOTTY:
 * rdma-core libibverbs/device.c verbs_open_device), set num_comp_vectors,
 * fetch the device attributes, and install the common ops. NULL and errno on failure, with a
 * message naming the daemon when it cannot be reached.
 */
struct bv_context *bv_open_context(struct ibv_device *ibdev, int cmd_fd, size_t ctx_size);
/* Install provider ops on top of the common ones. */
void bv_set_ops(struct bv_context *ctx, const struct verbs_context_ops *ops);
/* Undo bv_open_context (the provider's free_context ends with this). */
void bv_close_context(struct bv_context *ctx);

/* A control request to the daemon; returns 0 or a positive errno. */
int bv_call(struct bv_context *ctx, struct bv_call *call);

/* Common ops. */
int bv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
		       struct ibv_device_attr_ex *attr, size_t attr_size);
int bv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr);

/* Which verbs opcodes each transport carries (IBTA: UD sends only, UC no reads or atomics),
 * without send with invalidate, memory windows and TSO (the ntb device; cx4 adds the first
 * two: providers/cx4/send.c cx4_opcode_ok). */
static inline bool bv_opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return t != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return t == IBV_QPT_RC;
	default:
		return false;
	}
}

/*
 * Move the pages of addr .. addr + len into a memfd (bv_shadow.c): 0 and *fd (ours until
 * bv_shadow_put; dup it to hand it on) with *fd_off the offset of addr's page in it, or -errno
 * when the region stays where it is (not private anonymous memory, no userfaultfd, too large).
 */
int bv_shadow_get(uint64_t addr, uint64_t len, int *fd, uint64_t *fd_off);
void bv_shadow_put(uint64_t addr, uint64_t len);

#endif
