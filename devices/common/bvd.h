/* SPDX-License-Identifier: MIT */
/*
 * bvd: the daemon skeleton every bridgeverbs daemon shares (cx4d, ntbd). It plays the part of
 * the kernel's uverbs core: owns the device socket, admits clients, gives each an async event
 * channel, dispatches their requests to the device kind, and tears down everything a client
 * owned when it disconnects or dies. Single-threaded: one epoll loop; device kinds add their
 * interrupt eventfds to the same loop with bvd_watch_fd().
 */
#ifndef BVD_H
#define BVD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bv_config.h"
#include "bv_proto.h"

struct bvd;
struct bvd_cm_transport;
struct bvd_timers;

struct bvd_client {
	struct bvd_client *next;
	struct bvd *d;
	int sock;
	int async_fd;		/* our end of the client's async event socket */
	uint32_t id;
	uint32_t role;		/* enum bv_client_role; 0 until HELLO */
	pid_t pid;
	char comm[16];
	void *priv;		/* the device kind's per-client state */
};

struct bvd_reply {
	int status;		/* 0 or a positive errno */
	void *payload;		/* BV_MSG_PAYLOAD_MAX bytes provided by bvd */
	size_t len;
	int fds[BV_MSG_MAX_FDS];	/* sent, then closed by bvd */
	unsigned int nfds;
};

struct bvd_kind_ops {
	const char *kind;	/* "cx4", "ntb" */
	/* Bring the device up; a nonzero return ends the daemon with that status. */
	int (*init)(struct bvd *d);
	void (*fini)(struct bvd *d);
	int (*query_device)(struct bvd *d, struct bv_device_attr *attr);
	int (*query_port)(struct bvd *d, unsigned int port, struct bv_port_attr *attr);
	/* A verbs client said HELLO; return an errno to refuse it. */
	int (*client_open)(struct bvd *d, struct bvd_client *c);
	/* The client is gone: destroy everything it owned. */
	void (*client_close)(struct bvd *d, struct bvd_client *c);
	/*
	 * A kind-specific request. fds are the received descriptors: a handler that keeps one
	 * sets its slot to -1, bvd closes the rest.
	 */
	void (*request)(struct bvd *d, struct bvd_client *c, uint16_t op, const void *in,
			size_t len, int *fds, unsigned int nfds, struct bvd_reply *r);
	/* Append kind-specific lines to bvctl status. */
	void (*status)(struct bvd *d, char *buf, size_t len);
	/* How CM MADs reach other ports (devices/common/cm); NULL: no connection manager. */
	const struct bvd_cm_transport *cm;
};

struct bvd {
	const struct bvd_kind_ops *ops;
	struct bv_config cfg;
	const struct bv_dev_conf *conf;	/* this daemon's device */
	int epfd;
	int lsock;
	int sigfd;
	struct bvd_client *clients;
	uint32_t next_client_id;
	bool stop;
	uint32_t num_comp_vectors;
	void *priv;		/* the device kind's state */
	void *cm;		/* the connection manager's state (devices/common/cm) */
	struct bvd_timers *timers;	/* bvd_timer.h */
};

typedef void (*bvd_fd_cb)(struct bvd *d, int fd, uint32_t events, void *arg);

/*
 * A new client on socket s (SOCK_SEQPACKET, non-blocking; accepted, or one end of a
 * socketpair in a test that drives a daemon in-process): bvd owns and closes it from now on.
 * Returns 0 or -errno (s is then still the caller's).
 */
int bvd_client_add(struct bvd *d, int s);

/* Watch fd in the main loop (level-triggered EPOLLIN). */
int bvd_watch_fd(struct bvd *d, int fd, bvd_fd_cb cb, void *arg);
/* The same for other epoll events (EPOLLOUT: a socket to write when it has room). */
int bvd_watch_fd_events(struct bvd *d, int fd, uint32_t events, bvd_fd_cb cb, void *arg);
/* Change what a watched fd waits for. */
int bvd_modify_fd(struct bvd *d, int fd, uint32_t events);
void bvd_unwatch_fd(struct bvd *d, int fd);

/* Queue an async event for a client (struct ib_uverbs_async_event_desc). */
int bvd_async_event(struct bvd_client *c, uint64_t element, uint32_t event_type);
/* The same event for every verbs client (port and device events). */
void bvd_async_event_all(struct bvd *d, uint64_t element, uint32_t event_type);

void bvd_log(struct bvd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * One turn of the main loop: wait up to timeout_ms (-1: for ever) and run the callbacks of
 * the fds that are ready. Returns how many were, or -1 (errno). bvd_main() loops on it; a test
 * that drives a device kind in-process (no socket, no signals) calls it itself.
 */
int bvd_poll(struct bvd *d, int timeout_ms);

/* Parse arguments, bring the device up, serve until SIGTERM. Returns the exit status. */
int bvd_main(int argc, char **argv, const struct bvd_kind_ops *ops);

#endif
