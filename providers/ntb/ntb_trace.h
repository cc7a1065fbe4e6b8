/* SPDX-License-Identifier: MIT */
/*
 * The engine's trace ring (docs/ntb-verbs.md "Retries"): what the requester, the responder
 * and the completer decided, with a time stamp, in a ring of the last NTB_TRACE_LEN events,
 * written to NTB_TRACE.<pid> when the process exits and when a QP exhausts its retries. Off
 * (one predictable branch) unless the environment names NTB_TRACE: a flake that shows once in
 * a thousand runs is read from the two processes' traces instead of guessed at.
 */
#ifndef NTB_TRACE_H
#define NTB_TRACE_H

#include <stdbool.h>
#include <stdint.h>

enum ntb_trace_ev {
	NTB_TR_TX = 1,		/* requester: a message (or its segments) in the ring */
	NTB_TR_TMO_QUEUED,	/* timer: the request still waits in the responder's ring */
	NTB_TR_TMO_RESP,	/* timer: its answer may wait in our response ring */
	NTB_TR_TMO_RETRY,	/* timer: a retry counted */
	NTB_TR_TMO_EXC,		/* timer: retries exhausted */
	NTB_TR_REWIND,		/* go back to a PSN */
	NTB_TR_C_ACK,		/* completer: ACK read */
	NTB_TR_C_NAK,		/* completer: NAK read */
	NTB_TR_R_REQ,		/* responder: request consumed */
	NTB_TR_R_ACK,		/* responder: coalesced ACK out */
	NTB_TR_R_ACK_FULL,	/* responder: no room for an ACK owed */
	NTB_TR_R_NAK,		/* responder: NAK out */
	NTB_TR_R_PUB,		/* responder: credits published */
	NTB_TR_R_STALL,		/* responder: a request waits (no room for answers) */
};

extern bool ntb_trace_on;

void ntb_trace_init(void);
void ntb_trace_log(uint16_t ev, uint32_t qpn, uint32_t a, uint32_t b, uint64_t c, uint64_t d);
/* Write the ring now (NTB_TRACE.<pid>), e.g. when a retry counter ran out. */
void ntb_trace_dump(const char *why);

#define NTB_TRACE(ev, qpn, a, b, c, d)                                                      \
	do {                                                                               \
		if (__builtin_expect(ntb_trace_on, 0))                                      \
			ntb_trace_log(ev, qpn, a, b, c, d);                                 \
	} while (0)

#endif /* NTB_TRACE_H */
