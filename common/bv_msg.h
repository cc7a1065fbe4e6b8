/* SPDX-License-Identifier: MIT */
/* Framing of bv_proto messages on a SOCK_SEQPACKET socket, with descriptor passing. */
#ifndef BV_MSG_H
#define BV_MSG_H

#include <stddef.h>
#include <stdint.h>
#include "bv_proto.h"

/* How long a client waits for its daemon before it gives up (ETIMEDOUT), in ms. */
#define BV_CALL_TIMEOUT_MS 30000

/* Send one message; fds are duplicated into the peer. Returns 0 or -errno. */
int bv_msg_send(int sock, const struct bv_msg_hdr *hdr, const void *payload, const int *fds,
		unsigned int nfds);

/*
 * Receive one message into hdr/payload (payload_max bytes). Received descriptors land in fds
 * (up to *nfds; extras are closed) and *nfds is set to their number. Returns 0, -EPIPE at end
 * of stream, -EPROTO for a malformed message, -EMSGSIZE if the payload did not fit, or -errno.
 */
int bv_msg_recv(int sock, struct bv_msg_hdr *hdr, void *payload, size_t payload_max, int *fds,
		unsigned int *nfds);

/* A call: what a client says and what comes back. */
struct bv_call {
	uint16_t op;
	const void *req;
	size_t req_len;
	const int *fds;
	unsigned int nfds;
	void *rsp;		/* response payload buffer */
	size_t rsp_max;
	size_t rsp_len;		/* out */
	int *rfds;		/* out: received descriptors */
	unsigned int nrfds;	/* in: room in rfds; out: how many arrived */
};

/*
 * Send a request and wait (poll, BV_CALL_TIMEOUT_MS) for its response. Returns the daemon's
 * status (0 or a positive errno) or a negative errno if the exchange itself failed (-EPIPE: the
 * daemon went away). seq is advanced by one per call.
 */
int bv_msg_call(int sock, uint32_t *seq, struct bv_call *call);

/*
 * bv_msg_call() in two halves, for a client that has several requests in flight (to one
 * daemon, in order, or to several at once): send with sequence number seq, then wait for the
 * response that must carry it. Same return values.
 */
int bv_msg_call_send(int sock, uint32_t seq, struct bv_call *call);
int bv_msg_call_wait(int sock, uint32_t seq, struct bv_call *call);

#endif
