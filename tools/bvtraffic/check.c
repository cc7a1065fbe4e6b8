// SPDX-License-Identifier: MIT
/*
 * The checks both roles share: a target's bytes and guards, a UD receive's GRH, and what a
 * wrong message turns out to be (another QP's, an earlier window's) when it is one of ours.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "window.h"

const char *bvt_dir_name(int dir)
{
	return dir ? "server->client" : "client->server";
}

int bvt_qp_index(struct bvt *t, uint32_t qpn)
{
	for (uint32_t i = 0; i < t->cfg.nqp; i++)
		if (t->qp[i]->qp_num == qpn)
			return (int)i;
	return -1;
}

static bool matches(const uint8_t *p, size_t off, size_t k, uint64_t key)
{
	for (size_t i = 0; i < k; i++)
		if (p[off + i] != bvt_pattern_byte(key, off + i))
			return false;
	return true;
}

/*
 * Whose bytes are these, from the first wrong one on? Another QP's, opcode's, direction's
 * or an earlier window's message (misplaced, stale), if it is one of ours.
 */
static void identify(struct bvt *t, const struct win *w, uint64_t own, const uint8_t *p, size_t bad,
		     size_t n, char *out, size_t len)
{
	size_t k = n - bad < 32 ? n - bad : 32;
	uint64_t span = 4ull * t->cfg.depth, lo = w->seq0 > span ? w->seq0 - span : 0;

	out[0] = 0;
	if (k < 4)
		return;
	for (int dir = 0; dir < 2; dir++)
		for (int op = 0; op < BVT_NOPS; op++)
			for (uint32_t qp = 0; qp < t->cfg.nqp; qp++)
				for (uint64_t s = lo; s < w->seq0 + span; s++) {
					uint64_t key =
					    bvt_key(&t->cfg, (enum bvt_op)op, dir, qp, s);

					if (key != own && matches(p, bad, k, key)) {
						snprintf(out, len,
							 "; they are those of %s %s QP %u "
							 "seq %" PRIu64,
							 bvt_dir_name(dir),
							 bvt_op_name((enum bvt_op)op), qp, s);
						return;
					}
				}
	snprintf(out, len, "; from there on they are no message's of this run");
	if (bad + k < n && matches(p, bad + k, n - bad - k < 32 ? n - bad - k : 32, own))
		snprintf(out, len, "; the bytes after them are right again");
}

int bvt_check_target(struct bvt *t, const struct win *w, uint32_t qp, uint64_t seq,
		     const uint8_t *p, uint32_t n, uint64_t key, char *why, size_t len)
{
	return bvt_check_message(t, w, qp, seq, p, n, key, p - BVT_GUARD, why, len);
}

int bvt_check_message(struct bvt *t, const struct win *w, uint32_t qp, uint64_t seq,
		      const uint8_t *p, uint32_t n, uint64_t key, const uint8_t *before, char *why,
		      size_t len)
{
	size_t bad = bvt_check_fill(before, BVT_GUARD);
	char what[128], who[160];

	snprintf(what, sizeof(what), "%s %s QP %u seq %" PRIu64 " (%u B)", bvt_dir_name(w->dir),
		 bvt_op_name(w->op), qp, seq, n);
	if (bad < BVT_GUARD) {
		snprintf(why, len, "%s: guard byte %zd before the target is 0x%02x", what,
			 (ssize_t)bad - BVT_GUARD, before[bad]);
		return -1;
	}
	bad = bvt_check(p, n, key);
	if (bad < n) {
		identify(t, w, key, p, bad, n, who, sizeof(who));
		snprintf(why, len, "%s: byte %zu (the first wrong one) is 0x%02x, not 0x%02x%s",
			 what, bad, p[bad], bvt_pattern_byte(key, bad), who);
		return -1;
	}
	bad = bvt_check_fill(p + n, BVT_GUARD);
	if (bad < BVT_GUARD) {
		snprintf(why, len, "%s: guard byte %zu after the target is 0x%02x", what, bad,
			 p[n + bad]);
		return -1;
	}
	return 0;
}

static bool is_ipv4_mapped(const union ibv_gid *g)
{
	static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(g->raw, pre, 12);
}

/*
 * For RoCE v2 over IPv4 the IPv4 header sits in the last 20 of the 40 bytes (IBTA A17.4.5.1;
 * Linux ib_get_rdma_header_version), else the IPv6 header or the IB GRH is all 40. Its
 * addresses must be the two ends' GIDs.
 */
int bvt_check_grh(struct bvt *t, const uint8_t *g, char *why, size_t len)
{
	if (is_ipv4_mapped(&t->gid)) {
		const uint8_t *ip = g + 20;

		if (ip[0] == 0x45 && ip[9] == 17 && !memcmp(ip + 12, t->peer.gid.raw + 12, 4) &&
		    !memcmp(ip + 16, t->gid.raw + 12, 4))
			return 0;
		snprintf(why, len,
			 "UD GRH: IPv4 header 0x%02x, protocol %u, %u.%u.%u.%u -> "
			 "%u.%u.%u.%u",
			 ip[0], ip[9], ip[12], ip[13], ip[14], ip[15], ip[16], ip[17], ip[18],
			 ip[19]);
		return -1;
	}
	if ((g[0] >> 4) == 6 && !memcmp(g + 8, t->peer.gid.raw, 16) &&
	    !memcmp(g + 24, t->gid.raw, 16))
		return 0;
	snprintf(why, len, "UD GRH: version %u, the SGID and DGID are not the two ends' GIDs",
		 (unsigned int)(g[0] >> 4));
	return -1;
}
