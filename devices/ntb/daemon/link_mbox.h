/* SPDX-License-Identifier: MIT */
/*
 * The link mailbox: small commands between the two daemons over message registers when the
 * hardware has them (IDT), else over scratchpads - the "message library" idea of the seed
 * series ("[PATCH v2 0/4] NTB: Introduce message library", 2018) with the seq/ack scheme Allen
 * Hubbe proposed in its review, so that neither side ever reads the other's registers.
 *
 * Registers (all written by the peer, read locally):
 *   spads: 0 CMD, 1 LDATA, 2 HDATA, 3 ACK        msgs: 0 CMD, 1 LDATA, 2 HDATA, 3 ACK
 *   CMD  = cmd[7:0] | wid[15:8] | tag[23:16] | seq[31:24]
 *   ACK  = tag[23:16] | seq[31:24] of the last command of ours the peer took
 * A command is new when its (tag, seq) differs from the last one taken. tag is the sender's
 * session (a fresh random nonzero byte per link-up), so whatever the registers still hold from
 * an earlier session is recognisable; a HELLO starts the peer's session and commands of any
 * other tag are ignored. One command is in flight per direction; the sender writes LDATA,
 * HDATA, then CMD (ntb_transport's "VERSION last" rule), rings NTBD_DB_CTL (spads) or relies
 * on the message event (msgs), and resends the same command every NTBD_MBOX_RETRY_MS until
 * the ACK comes back: a lost write (message register full, link bounce) only costs time.
 */
#ifndef NTBD_LINK_MBOX_H
#define NTBD_LINK_MBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "ntb_hal.h"

#define NTBD_MBOX_RETRY_MS	20
#define NTBD_MBOX_QLEN		16

enum ntbd_mbox_cmd {
	MBOX_HELLO = 1,		/* data: NTBD_LINK_VERSION; starts the sender's session */
	MBOX_XLAT = 2,		/* wid, data: IOVA the sender's inbound window wid translates to */
	MBOX_SIZE = 3,		/* wid, data: translated size of that window */
	MBOX_CTL = 4,		/* data: size of the control region at offset 0 of window 0 */
	MBOX_READY = 5,		/* data: the sender's link epoch; all of the above was sent */
};

struct ntbd_mbox_msg {
	uint8_t cmd;
	uint8_t wid;
	uint64_t data;
};

struct ntbd_mbox {
	struct ntb_dev *ntb;
	bool use_msgs;
	uint8_t tag;			/* our session */
	uint8_t seq;			/* seq of our command in flight / last sent */
	bool inflight;
	struct ntbd_mbox_msg q[NTBD_MBOX_QLEN];
	unsigned int qhead, qtail;
	/* inbound */
	uint8_t peer_tag;		/* the session a HELLO started; 0 none */
	uint16_t last_taken;		/* (tag << 8 | seq) of the last command taken, 0 none */
	bool ack_pending;		/* our ACK word still has to reach the peer */
	uint32_t ack_word;
	unsigned int stale_ticks;	/* msgs: data in-bits without CMD, ticks seen */
};

/* Start a session (link came up): fresh tag, empty queue. */
void ntbd_mbox_reset(struct ntbd_mbox *m, struct ntb_dev *ntb);
int ntbd_mbox_send(struct ntbd_mbox *m, uint8_t cmd, uint8_t wid, uint64_t data);
/*
 * Take what arrived and push what is queued; on_cmd is called for each new command of the
 * peer's session (HELLO included). Returns true while something is still in flight (the
 * caller keeps the retry timer armed).
 */
bool ntbd_mbox_poll(struct ntbd_mbox *m, void (*on_cmd)(void *arg, const struct ntbd_mbox_msg *),
		    void *arg);
/* The retry timer fired: resend what is not acknowledged. */
bool ntbd_mbox_tick(struct ntbd_mbox *m, void (*on_cmd)(void *arg, const struct ntbd_mbox_msg *),
		    void *arg);
bool ntbd_mbox_idle(const struct ntbd_mbox *m);

#endif
