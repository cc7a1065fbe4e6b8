// SPDX-License-Identifier: MIT
/*
 * bvtraffic's checks must fail when they should: a flipped byte, a byte written next to a
 * target, a message from another QP or an earlier window (named as such), a short message,
 * a wrong GRH; and patterns and sizes must differ between messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bv_expect.h"
#include "window.h"

static struct bvt t;
static char why[512];

/* A target slot holding message (qp, seq) of window w, guards filled. */
static uint8_t *place(const struct win *w, uint32_t qp, uint64_t seq, uint32_t *n)
{
	uint64_t key = bvt_win_key(&t, w, qp, seq);
	uint8_t *p = bvt_qp_slot(&t, qp, (uint32_t)(seq - w->seq0));

	*n = bvt_win_size(&t, w, key);
	memset(p - BVT_GUARD, BVT_FILL, t.slot_stride);
	bvt_fill(p, *n, key);
	return p;
}

static int check(const struct win *w, uint32_t qp, uint64_t seq, const uint8_t *p, uint32_t n)
{
	return bvt_check_target(&t, w, qp, seq, p, n, bvt_win_key(&t, w, qp, seq), why,
				sizeof(why));
}

int main(void)
{
	struct win w = {.op = BVT_WRITE, .dir = 0, .seq0 = 64, .n = 8};
	uint32_t n, n2;
	uint8_t *p, *q;

	t.cfg = (struct bvt_cfg){.type = IBV_QPT_RC,
				 .nqp = 3,
				 .min_size = 100,
				 .max_size = 9000,
				 .depth = 8,
				 .seed = 12345};
	t.slot_bytes = 9000;
	t.slot_stride = 9000 + 2 * BVT_GUARD + 64;
	t.buf_len = t.slot_stride * 3 * 8 + 4096;
	t.buf = calloc(1, t.buf_len);
	t.atom_off = t.slot_stride * 3 * 8;

	/* a right message passes */
	p = place(&w, 1, 66, &n);
	EXPECT(!check(&w, 1, 66, p, n));
	/* one flipped bit anywhere fails, and says where */
	p[n / 2] ^= 0x10;
	EXPECT(check(&w, 1, 66, p, n) && strstr(why, "the first wrong one"));
	p[n / 2] ^= 0x10;
	p[n - 1] ^= 1;
	EXPECT(check(&w, 1, 66, p, n));
	p[n - 1] ^= 1;
	/* a byte just before or just after the message */
	p[-1] = 0;
	EXPECT(check(&w, 1, 66, p, n) && strstr(why, "before the target"));
	p[-1] = BVT_FILL;
	p[n + BVT_GUARD - 1] = 0;
	EXPECT(check(&w, 1, 66, p, n) && strstr(why, "after the target"));
	p[n + BVT_GUARD - 1] = BVT_FILL;
	EXPECT(!check(&w, 1, 66, p, n));

	/* another QP's message in this slot: caught and named */
	q = place(&w, 2, 66, &n2);
	memcpy(p, q, n < n2 ? n : n2);
	EXPECT(check(&w, 1, 66, p, n) && strstr(why, "QP 2 seq 66"));
	/* the same QP's message of an earlier window (stale): caught and named */
	bvt_fill(p, n, bvt_win_key(&t, &w, 1, 60));
	EXPECT(check(&w, 1, 66, p, n) && strstr(why, "QP 1 seq 60"));
	/* another opcode's or direction's message too */
	{
		struct win other = w;

		other.op = BVT_SEND;
		bvt_fill(p, n, bvt_win_key(&t, &other, 1, 66));
		EXPECT(check(&w, 1, 66, p, n) && strstr(why, "send QP 1 seq 66"));
		other.op = BVT_WRITE;
		other.dir = 1;
		bvt_fill(p, n, bvt_win_key(&t, &other, 1, 66));
		EXPECT(check(&w, 1, 66, p, n) && strstr(why, "server->client write QP 1 seq 66"));
	}
	/* a message cut short: the rest is guard, not message */
	p = place(&w, 0, 64, &n);
	memset(p + n - 5, BVT_FILL, 5);
	EXPECT(n > 5 && check(&w, 0, 64, p, n));

	/* messages differ: sizes vary over the range, no two keys share a pattern */
	{
		uint32_t lo = ~0u, hi = 0;
		int edges = 0;

		for (uint64_t s = 0; s < 4000; s++) {
			uint32_t z = bvt_win_size(&t, &w, bvt_win_key(&t, &w, 0, s));

			lo = z < lo ? z : lo;
			hi = z > hi ? z : hi;
			edges += z == 100 + 4096 || z == 100 + 4095 || z == 100 + 4097;
			EXPECT(z >= 100 && z <= 9000);
		}
		EXPECT(lo < 110 && hi > 8000 && edges > 0);
		EXPECT(bvt_win_key(&t, &w, 0, 1) != bvt_win_key(&t, &w, 1, 0));
		EXPECT(bvt_imm(bvt_win_key(&t, &w, 0, 1)) != bvt_imm(bvt_win_key(&t, &w, 0, 2)));
	}

	/* the GRH of a UD receive: IPv4 header in its last 20 bytes, the two ends' addresses */
	{
		uint8_t g[40] = {0};

		memcpy(t.gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\x00\x00\x02", 16);
		memcpy(t.peer.gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\x00\x00\x01", 16);
		t.ipv4_grh = true;
		g[20] = 0x45;
		g[29] = 17;
		memcpy(g + 32, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
		EXPECT(!bvt_check_grh(&t, g, why, sizeof(why)));
		g[35] = 3; /* from someone else */
		EXPECT(bvt_check_grh(&t, g, why, sizeof(why)));
		g[35] = 1;
		g[29] = 6; /* not UDP */
		EXPECT(bvt_check_grh(&t, g, why, sizeof(why)));
	}

	/* RoCE v1 with IPv4-mapped GIDs: a real GRH (version 6, the GIDs), no IPv4 header */
	{
		uint8_t g[40] = {0x60};

		t.ipv4_grh = false;
		memcpy(g + 8, t.peer.gid.raw, 16);
		memcpy(g + 24, t.gid.raw, 16);
		EXPECT(!bvt_check_grh(&t, g, why, sizeof(why)));
		g[39] = 3; /* to someone else */
		EXPECT(bvt_check_grh(&t, g, why, sizeof(why)));
		g[39] = 2;
		g[0] = 0x45; /* not a GRH */
		EXPECT(bvt_check_grh(&t, g, why, sizeof(why)));
	}
	free(t.buf);
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
