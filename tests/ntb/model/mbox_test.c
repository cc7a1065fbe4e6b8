// SPDX-License-Identifier: MIT
/*
 * ntbd's link mailbox (devices/ntb/daemon/link_mbox.c) between two ends, over message
 * registers (idt) and scratchpads (the others): commands arrive once and in order both ways;
 * what the registers still hold from an earlier session is ignored; a message register left
 * full (half a stale message) only delays delivery; a restarted session is taken afresh.
 */
#include "link_mbox.h"
#include "ntbt.h"

struct rx {
	int n;
	struct ntbd_mbox_msg m[32];
};

static void on_cmd(void *arg, const struct ntbd_mbox_msg *msg)
{
	struct rx *r = arg;

	if (r->n < 32)
		r->m[r->n++] = *msg;
}

static struct ntb_dev *dv[2];
static struct ntbd_mbox mb[2];
static struct rx rx[2];

/* Run both ends until both are idle and each took want commands (or time runs out). */
static bool run(int want, int ms)
{
	uint64_t end = ntbt_now_ms() + ms, next_tick = 0;

	while (ntbt_now_ms() < end) {
		ntbt_pump(dv, 2, NULL, NULL, 2);
		for (int i = 0; i < 2; i++) {
			if (ntbt_now_ms() >= next_tick)
				ntbd_mbox_tick(&mb[i], on_cmd, &rx[i]);
			else
				ntbd_mbox_poll(&mb[i], on_cmd, &rx[i]);
			/* the doorbell the spad transport rings: ntbd clears it like this */
			ntb_db_clear(dv[i], ntb_db_read(dv[i]));
		}
		if (ntbt_now_ms() >= next_tick)
			next_tick = ntbt_now_ms() + NTBD_MBOX_RETRY_MS;
		if (ntbd_mbox_idle(&mb[0]) && ntbd_mbox_idle(&mb[1]) && rx[0].n >= want &&
		    rx[1].n >= want)
			return true;
	}
	return false;
}

static void session(int side_first, uint64_t base)
{
	memset(rx, 0, sizeof(rx));
	for (int i = 0; i < 2; i++) {
		int s = (side_first + i) % 2;

		ntbd_mbox_reset(&mb[s], dv[s]);
		CHECK_EQ(ntbd_mbox_send(&mb[s], MBOX_HELLO, 0, 1), 0);
		CHECK_EQ(ntbd_mbox_send(&mb[s], MBOX_XLAT, 0, base + s), 0);
		CHECK_EQ(ntbd_mbox_send(&mb[s], MBOX_SIZE, 1, 0x123456789abcull + s), 0);
		CHECK_EQ(ntbd_mbox_send(&mb[s], MBOX_CTL, 0, ~0ull - s), 0);
		CHECK_EQ(ntbd_mbox_send(&mb[s], MBOX_READY, 0, 77 + s), 0);
	}
	CHECK(run(5, 5000));
	for (int s = 0; s < 2; s++) {
		int p = !s;	/* rx[s] holds what p sent */

		CHECK_EQ(rx[s].n, 5);
		CHECK_EQ(rx[s].m[0].cmd, MBOX_HELLO);
		CHECK_EQ(rx[s].m[1].cmd, MBOX_XLAT);
		CHECK_EQ(rx[s].m[1].data, base + p);
		CHECK_EQ(rx[s].m[2].cmd, MBOX_SIZE);
		CHECK_EQ(rx[s].m[2].wid, 1);
		CHECK_EQ(rx[s].m[2].data, 0x123456789abcull + p);
		CHECK_EQ(rx[s].m[3].data, ~0ull - p);
		CHECK_EQ(rx[s].m[4].cmd, MBOX_READY);
		CHECK_EQ(rx[s].m[4].data, 77 + p);
	}
}

static void test(const char *profile)
{
	struct ntb_stats st[2];
	bool msgs;

	fprintf(stderr, "# mailbox on %s\n", profile);
	ntbt_pair(profile, &dv[0], &dv[1]);
	msgs = ntb_msg_count(dv[0]) >= 4;
	memset(mb, 0, sizeof(mb));

	/* leftovers of an earlier session in B's registers */
	if (msgs) {
		/* half a message: data registers full, no command */
		CHECK_EQ(ntb_peer_msg_write(dv[0], 0, 1, 0xdead), 0);
		CHECK_EQ(ntb_peer_msg_write(dv[0], 0, 2, 0xbeef), 0);
	} else {
		/* a READY of another session (tag 0x5a, seq 9) and a stale ACK */
		CHECK_EQ(ntb_peer_spad_write(dv[0], 0, 1, 0xdead), 0);
		CHECK_EQ(ntb_peer_spad_write(dv[0], 0, 0, MBOX_READY | 0x5a << 16 | 9u << 24), 0);
		CHECK_EQ(ntb_peer_spad_write(dv[0], 0, 3, 0x5a << 16 | 1u << 24), 0);
	}
	session(0, 1ull << 40);
	/* a second session (the link bounced): taken afresh, in the other order */
	session(1, 1ull << 41);
	ntb_get_stats(dv[0], &st[0]);
	ntb_get_stats(dv[1], &st[1]);
	CHECK_EQ(st[0].xlink_reads + st[1].xlink_reads, 0);	/* no reads across the link */
	ntb_dev_close(dv[0]);
	ntb_dev_close(dv[1]);
}

int main(void)
{
	test("idt");
	test("intel-gen1");
	test("amd");
	test("epf");
	test("switchtec");
	return ntbt_done();
}
