/* SPDX-License-Identifier: MIT */
/*
 * bvd_proto_fuzz.c and its kind glue (proto_cx4.c, proto_ntb.c): the harness drives a daemon
 * through its socket; the glue says which daemon, how it comes up, and what "a provider's
 * first requests" and "nothing left behind" mean for that kind.
 */
#ifndef BVD_PROTO_FUZZ_H
#define BVD_PROTO_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bvd.h"

#define FUZZ_DEVICE "fz_0"	/* the daemon's device in the glue's configuration */

/* One client: our end of its socket (-1 once the daemon dropped it), the next seq. */
struct fclient {
	int sock;
	uint32_t seq;
	bool hello;
};

void fuzz_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* One turn of the daemon's loop (and of the glue's: the NTB peer). */
void fuzz_pump(int timeout_ms);
/* A well-formed request and its reply: the status, or -1 when the daemon dropped the client. */
int fuzz_call(struct fclient *c, uint16_t op, const void *in, size_t len, const int *fds,
	      unsigned int nfds, void *out, size_t out_max, size_t *out_len);
int fuzz_hello(struct fclient *c);

/* ---- the kind glue ---- */
const char *fuzz_kind_config(void);		/* configuration text, device FUZZ_DEVICE */
const struct bvd_kind_ops *fuzz_kind_ops(void);
int fuzz_kind_init(struct bvd *d);		/* ops->init, and whatever the kind needs */
void fuzz_kind_fini(void);
void fuzz_kind_pump(void);
uint16_t fuzz_kind_base(void);			/* the kind's op range */
/* The buffer length a request names (the size of the memfd a provider would send). */
size_t fuzz_kind_buf_len(uint16_t op, const uint8_t *p, size_t len);
void fuzz_kind_open(struct fclient *c);		/* a provider's first request */
void fuzz_kind_canary(struct fclient *c);	/* open, ALLOC_PD, DEALLOC_PD: must work */
void fuzz_kind_check_idle(void);		/* every client gone: nothing of theirs left */

#endif
