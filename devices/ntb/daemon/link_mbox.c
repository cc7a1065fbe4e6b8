// SPDX-License-Identifier: MIT
/* The link mailbox over message registers or scratchpads (see link_mbox.h). */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "link_mbox.h"
#include "ntbd.h"

#define R_CMD	0
#define R_LDATA	1
#define R_HDATA	2
#define R_ACK	3

static uint32_t cmd_word(uint8_t cmd, uint8_t wid, uint8_t tag, uint8_t seq)
{
	return cmd | (uint32_t)wid << 8 | (uint32_t)tag << 16 | (uint32_t)seq << 24;
}

static uint32_t ack_word(uint8_t tag, uint8_t seq)
{
	return (uint32_t)tag << 16 | (uint32_t)seq << 24;
}

void ntbd_mbox_reset(struct ntbd_mbox *m, struct ntb_dev *ntb)
{
	uint8_t old = m->tag;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	*m = (struct ntbd_mbox){ .ntb = ntb, .use_msgs = ntb_msg_count(ntb) >= 4 };
	/* a fresh nonzero session tag, different from the last one we used */
	m->tag = (uint8_t)(ts.tv_nsec ^ (ts.tv_nsec >> 8) ^ getpid());
	while (!m->tag || m->tag == old)
		m->tag++;
}

bool ntbd_mbox_idle(const struct ntbd_mbox *m)
{
	return !m->inflight && m->qhead == m->qtail && !m->ack_pending;
}

int ntbd_mbox_send(struct ntbd_mbox *m, uint8_t cmd, uint8_t wid, uint64_t data)
{
	if (m->qtail - m->qhead == NTBD_MBOX_QLEN)
		return -ENOSPC;
	m->q[m->qtail++ % NTBD_MBOX_QLEN] = (struct ntbd_mbox_msg){ cmd, wid, data };
	return 0;
}

/*
 * Write one register of the peer. Message registers can refuse (the peer has not taken the
 * previous value yet): IDT sets our outbound status bit; then report failure and leave the
 * retry to the timer.
 */
static bool put(struct ntbd_mbox *m, int reg, uint32_t val)
{
	struct ntb_dev *ntb = m->ntb;
	uint64_t out = 1ull << reg;	/* outbound status bit of msg register reg */

	if (!m->use_msgs)
		return !ntb_peer_spad_write(ntb, NTB_DEF_PEER_IDX, reg, val);
	ntb_peer_msg_write(ntb, NTB_DEF_PEER_IDX, reg, val);
	if (ntb_msg_read_sts(ntb) & out & ntb_msg_outbits(ntb)) {
		ntb_msg_clear_sts(ntb, out);
		return false;
	}
	return true;
}

static void push_current(struct ntbd_mbox *m)
{
	const struct ntbd_mbox_msg *c = &m->q[m->qhead % NTBD_MBOX_QLEN];

	/* data first, the command word last: it is what makes the command visible */
	if (!put(m, R_LDATA, (uint32_t)c->data) || !put(m, R_HDATA, (uint32_t)(c->data >> 32)) ||
	    !put(m, R_CMD, cmd_word(c->cmd, c->wid, m->tag, m->seq)))
		return;
	if (!m->use_msgs)
		ntb_peer_db_set(m->ntb, NTBD_DB_CTL);
}

static void push_ack(struct ntbd_mbox *m)
{
	if (!m->ack_pending)
		return;
	if (put(m, R_ACK, m->ack_word)) {
		m->ack_pending = false;
		if (!m->use_msgs)
			ntb_peer_db_set(m->ntb, NTBD_DB_CTL);
	}
}

static void push(struct ntbd_mbox *m)
{
	push_ack(m);
	if (!m->inflight && m->qhead != m->qtail) {
		/* seq 0 means "none" to the receiver: 255 wraps to 1 (in uint8_t, not int) */
		m->seq = (uint8_t)(m->seq + 1) ? m->seq + 1 : 1;
		m->inflight = true;
		push_current(m);
	}
}

/* Read what the peer wrote into our registers. */
static bool take(struct ntbd_mbox *m, uint32_t *cmd, uint64_t *data, uint32_t *ack, bool *has_ack)
{
	struct ntb_dev *ntb = m->ntb;
	bool has_cmd;
	int pidx;

	*has_ack = false;
	if (!m->use_msgs) {
		*cmd = ntb_spad_read(ntb, R_CMD);
		*data = ntb_spad_read(ntb, R_LDATA) | (uint64_t)ntb_spad_read(ntb, R_HDATA) << 32;
		*ack = ntb_spad_read(ntb, R_ACK);
		*has_ack = true;
		return *cmd != 0;
	}
	/* message registers: in-bit 16 + reg says the register holds something */
	uint64_t sts = ntb_msg_read_sts(ntb), in = ntb_msg_inbits(ntb);
	uint64_t bit_cmd = 1ull << (16 + R_CMD), bit_ack = 1ull << (16 + R_ACK);
	uint64_t bit_data = (1ull << (16 + R_LDATA)) | (1ull << (16 + R_HDATA));

	if (sts & bit_ack & in) {
		*ack = ntb_msg_read(ntb, &pidx, R_ACK);
		*has_ack = true;
		ntb_msg_clear_sts(ntb, bit_ack);
	}
	has_cmd = sts & bit_cmd & in;
	if (has_cmd) {
		*cmd = ntb_msg_read(ntb, &pidx, R_CMD);
		*data = ntb_msg_read(ntb, &pidx, R_LDATA) |
			(uint64_t)ntb_msg_read(ntb, &pidx, R_HDATA) << 32;
		ntb_msg_clear_sts(ntb, bit_cmd | bit_data);
		m->stale_ticks = 0;
	}
	return has_cmd;
}

static void receive(struct ntbd_mbox *m, void (*on_cmd)(void *, const struct ntbd_mbox_msg *),
		    void *arg)
{
	uint32_t cw = 0, aw = 0;
	uint64_t data = 0;
	bool has_ack;

	if (take(m, &cw, &data, &aw, &has_ack)) {
		uint8_t cmd = cw & 0xff, wid = (cw >> 8) & 0xff, tag = (cw >> 16) & 0xff;
		uint8_t seq = cw >> 24;
		uint16_t id = (uint16_t)tag << 8 | seq;

		if (tag && seq && id != m->last_taken) {
			struct ntbd_mbox_msg msg = { cmd, wid, data };

			m->last_taken = id;
			if (cmd == MBOX_HELLO)
				m->peer_tag = tag;
			if (tag == m->peer_tag)
				on_cmd(arg, &msg);
		}
		/*
		 * Acknowledge. A message register only shows a command the peer wrote again,
		 * so a duplicate there means our ACK was lost: acknowledge it again. A
		 * scratchpad keeps showing the last command: acknowledge it once.
		 */
		if (tag && seq && (m->use_msgs || m->ack_word != ack_word(tag, seq))) {
			m->ack_word = ack_word(tag, seq);
			m->ack_pending = true;
		}
	}
	if (has_ack && m->inflight && aw == ack_word(m->tag, m->seq)) {
		m->inflight = false;
		m->qhead++;
	}
}

bool ntbd_mbox_poll(struct ntbd_mbox *m, void (*on_cmd)(void *, const struct ntbd_mbox_msg *),
		    void *arg)
{
	if (!m->ntb)
		return false;
	receive(m, on_cmd, arg);
	push(m);
	return !ntbd_mbox_idle(m);
}

bool ntbd_mbox_tick(struct ntbd_mbox *m, void (*on_cmd)(void *, const struct ntbd_mbox_msg *),
		    void *arg)
{
	if (!m->ntb)
		return false;
	receive(m, on_cmd, arg);
	if (m->use_msgs) {
		/*
		 * Data registers full without a command for two ticks: a half-delivered or stale
		 * message blocks the peer's next write; free them (the sender resends).
		 */
		uint64_t sts = ntb_msg_read_sts(m->ntb);
		uint64_t bit_data = (1ull << (16 + R_LDATA)) | (1ull << (16 + R_HDATA));

		if ((sts & bit_data) && !(sts & (1ull << (16 + R_CMD)))) {
			if (++m->stale_ticks >= 2) {
				ntb_msg_clear_sts(m->ntb, sts & bit_data);
				m->stale_ticks = 0;
			}
		}
	}
	if (m->inflight)
		push_current(m);	/* resend the same (tag, seq) */
	push(m);
	return !ntbd_mbox_idle(m);
}
