// SPDX-License-Identifier: MIT
/*
 * Scratchpad, message register and doorbell semantics through the HAL: who sees which write,
 * IDT message status (full register => sender's outbound bit + event), sticky doorbells,
 * masks and the unmask re-raise, the cross-link read counter, drops after link down.
 */
#include "ntbt.h"

static struct ntb_dev *dv[2];

static bool seen(void *arg)
{
	uint32_t *want = arg;

	return (ntbt_seen[want[0]] & want[1]) == want[1];
}

/* Pump until end `side` has seen events `ev`; clears them. */
static bool wait_ev(int side, uint32_t ev, int ms)
{
	uint32_t want[2] = { side, ev };
	bool ok = ntbt_pump(dv, 2, seen, want, ms);

	ntbt_seen[side] &= ~ev;
	return ok;
}

static void test_spads(void)
{
	struct ntb_dev *a, *b;
	struct ntb_stats st0, st1;

	ntbt_pair("intel-gen3", &a, &b);
	dv[0] = a;
	dv[1] = b;
	ntb_get_stats(a, &st0);
	CHECK_EQ(ntb_peer_spad_write(a, 0, 5, 0xdead), 0);
	CHECK_EQ(ntb_spad_read(b, 5), 0xdead);	/* lands in the peer's register */
	CHECK_EQ(ntb_spad_read(a, 5), 0);	/* not ours */
	CHECK_EQ(ntb_spad_write(a, 6, 0xbeef), 0);
	CHECK_EQ(ntb_spad_read(a, 6), 0xbeef);
	CHECK_EQ(ntb_spad_read(b, 6), 0);
	ntb_get_stats(a, &st1);
	CHECK_EQ(st1.xlink_reads, st0.xlink_reads);	/* writes and local reads: none */
	CHECK_EQ(ntb_peer_spad_read(a, 0, 5), 0xdead);
	ntb_get_stats(a, &st1);
	CHECK_EQ(st1.xlink_reads, st0.xlink_reads + 1);
	CHECK_EQ(ntb_peer_spad_write(a, 1, 5, 0), -EINVAL);	/* no peer index 1 */

	/* link down: writes toward the peer are dropped and counted; reads return ~0 */
	ntb_dev_close(b);
	dv[1] = NULL;
	{
		struct ntb_dev *one[1] = { a };
		uint64_t end = ntbt_now_ms() + 5000;

		while (ntb_link_is_up(a, NULL, NULL) && ntbt_now_ms() < end)
			ntbt_pump(one, 1, NULL, NULL, 20);
	}
	CHECK_EQ(ntb_link_is_up(a, NULL, NULL), 0);
	CHECK(ntbt_seen[0] & NTB_EVENT_LINK);
	ntbt_seen[0] = 0;
	ntb_get_stats(a, &st0);
	CHECK_EQ(ntb_peer_spad_write(a, 0, 5, 1), 0);
	CHECK_EQ(ntb_peer_db_set(a, 1), 0);
	CHECK_EQ(ntb_peer_spad_read(a, 0, 5), 0xffffffffu);
	ntb_get_stats(a, &st1);
	CHECK_EQ(st1.dropped_link, st0.dropped_link + 3);
	ntb_dev_close(a);
}

static void test_doorbells(const char *profile, uint64_t bit, uint64_t other)
{
	struct ntb_dev *a, *b;
	struct ntb_stats st0, st1;

	fprintf(stderr, "# doorbells on %s\n", profile);
	ntbt_pair(profile, &a, &b);
	dv[0] = a;
	dv[1] = b;
	ntbt_seen[0] = ntbt_seen[1] = 0;
	ntb_get_stats(a, &st0);
	CHECK_EQ(ntb_peer_db_set(a, bit), 0);
	CHECK(wait_ev(1, NTB_EVENT_DB, 2000));
	CHECK_EQ(ntb_db_read(b), bit);
	CHECK_EQ(ntb_db_read(a), 0);
	/* sticky: ringing again before the clear raises no new interrupt */
	CHECK_EQ(ntb_peer_db_set(a, bit), 0);
	ntb_get_stats(a, &st1);
	CHECK_EQ(st1.db_rings, st0.db_rings + 2);
	CHECK_EQ(st1.db_irqs, st0.db_irqs + 1);
	CHECK_EQ(ntb_db_clear(b, bit), 0);
	CHECK_EQ(ntb_db_read(b), 0);
	CHECK_EQ(ntb_db_clear(b, ~ntb_db_valid_mask(b)), -EINVAL);

	/* masked: the bit is set, no interrupt; unmasking raises it (ntb.h) */
	CHECK_EQ(ntb_db_set_mask(b, other), 0);
	CHECK_EQ(ntb_db_read_mask(b), other);
	ntbt_pump(dv, 2, NULL, NULL, 50);
	ntbt_seen[1] = 0;
	CHECK_EQ(ntb_peer_db_set(a, other), 0);
	CHECK(!wait_ev(1, NTB_EVENT_DB, 200));
	CHECK_EQ(ntb_db_read(b), other);
	CHECK_EQ(ntb_db_clear_mask(b, other), 0);
	CHECK(wait_ev(1, NTB_EVENT_DB, 2000));
	CHECK_EQ(ntb_db_clear(b, other), 0);
	CHECK_EQ(ntb_db_read(b), 0);
	ntb_get_stats(a, &st1);
	CHECK_EQ(st1.xlink_reads, st0.xlink_reads);
	ntb_dev_close(a);
	ntb_dev_close(b);
}

static void test_msgs(void)
{
	struct ntb_dev *a, *b;
	uint64_t in0, out0;
	int pidx = -1;

	ntbt_pair("idt", &a, &b);
	dv[0] = a;
	dv[1] = b;
	ntbt_seen[0] = ntbt_seen[1] = 0;
	in0 = 1ull << 16;
	out0 = 1;
	CHECK_EQ(ntb_peer_msg_write(a, 0, 0, 0x11), 0);
	CHECK(wait_ev(1, NTB_EVENT_MSG, 2000));
	CHECK_EQ(ntb_msg_read_sts(b), in0);
	CHECK_EQ(ntb_msg_read(b, &pidx, 0), 0x11);
	CHECK_EQ(pidx, 0);
	CHECK_EQ(ntb_msg_read_sts(a), 0);
	/* the register is still full: delivery fails, the sender's out bit and event */
	CHECK_EQ(ntb_peer_msg_write(a, 0, 0, 0x22), 0);
	CHECK(wait_ev(0, NTB_EVENT_MSG, 2000));
	CHECK_EQ(ntb_msg_read_sts(a), out0);
	CHECK_EQ(ntb_msg_read(b, &pidx, 0), 0x11);	/* not overwritten */
	/* other registers are independent */
	CHECK_EQ(ntb_peer_msg_write(a, 0, 3, 0x33), 0);
	CHECK_EQ(ntb_msg_read_sts(b), in0 | (1ull << 19));
	CHECK_EQ(ntb_msg_read(b, &pidx, 3), 0x33);
	/* receiver frees, sender clears its status and retries */
	CHECK_EQ(ntb_msg_clear_sts(b, in0 | (1ull << 19)), 0);
	CHECK_EQ(ntb_msg_clear_sts(a, out0), 0);
	CHECK_EQ(ntb_msg_read_sts(a), 0);
	CHECK_EQ(ntb_peer_msg_write(a, 0, 0, 0x44), 0);
	CHECK_EQ(ntb_msg_read_sts(a), 0);
	CHECK_EQ(ntb_msg_read(b, &pidx, 0), 0x44);
	CHECK_EQ(ntb_msg_clear_sts(b, 1ull << 20), -EINVAL);	/* not a valid bit */
	/* masked inbound: no event until unmasked */
	CHECK_EQ(ntb_msg_clear_sts(b, in0), 0);
	ntbt_pump(dv, 2, NULL, NULL, 50);
	ntbt_seen[1] = 0;
	CHECK_EQ(ntb_msg_set_mask(b, in0), 0);
	CHECK_EQ(ntb_peer_msg_write(a, 0, 0, 0x55), 0);
	CHECK(!wait_ev(1, NTB_EVENT_MSG, 200));
	CHECK_EQ(ntb_msg_clear_mask(b, in0), 0);
	CHECK(wait_ev(1, NTB_EVENT_MSG, 2000));
	CHECK_EQ(ntb_msg_read(b, &pidx, 0), 0x55);
	/* scratchpads do not exist on IDT */
	CHECK_EQ(ntb_peer_spad_write(a, 0, 0, 1), -EINVAL);
	ntb_dev_close(a);
	ntb_dev_close(b);
}

int main(void)
{
	test_spads();
	test_doorbells("intel-gen3", 1ull << 3, 1ull << 4);
	test_doorbells("intel-gen1", 1ull << 13, 1ull << 2);	/* two bits of one vector */
	test_doorbells("epf", 1, 2);
	test_doorbells("idt", 1ull << 31, 1);
	test_doorbells("switchtec", 1ull << 27, 1ull << 5);
	test_msgs();
	return ntbt_done();
}
