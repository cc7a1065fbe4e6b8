/* SPDX-License-Identifier: MIT */
/*
 * librdmacm-plugin internals: what the files of the drop-in librdmacm.so.1 share.
 * See docs/rdmacm.md for the design: the library plays librdmacm + ucma, the daemon that owns
 * a device plays ib_cm and rdma_cm's core.
 */
#ifndef RCM_H
#define RCM_H

#include <errno.h>

/* Exported entry points (the version script librdmacm.map names them). */
#define RCM_EXPORT __attribute__((visibility("default")))

/* librdmacm's convention: -1 with errno set. */
static inline int rcm_err(int err)
{
	errno = err;
	return -1;
}

#endif /* RCM_H */
