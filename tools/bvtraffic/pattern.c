// SPDX-License-Identifier: MIT
/*
 * What every message is: its key (from the seed, the opcode, the direction, the QP and the
 * sequence number) gives its size, its bytes, its immediate and its atomic operands, so both
 * ends know what must arrive without telling each other, and two messages never look alike.
 */
#include <string.h>

#include "bvtraffic.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

static const char *const op_names[BVT_NOPS] = {
    [BVT_SEND] = "send",	   [BVT_SEND_IMM] = "send_imm", [BVT_WRITE] = "write",
    [BVT_WRITE_IMM] = "write_imm", [BVT_READ] = "read",		[BVT_FADD] = "fetch_add",
    [BVT_CSWAP] = "cmp_swap",
};

const char *bvt_op_name(enum bvt_op op)
{
	return op_names[op];
}

/* splitmix64's finaliser: every input bit reaches every output bit */
uint64_t bvt_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t bvt_key(const struct bvt_cfg *c, enum bvt_op op, int dir, uint32_t qp, uint64_t seq)
{
	uint64_t k = bvt_mix(c->seed + GOLDEN * (1 + (uint64_t)op));

	k = bvt_mix(k ^ ((uint64_t)dir << 56) ^ ((uint64_t)qp << 40));
	return bvt_mix(k + seq * GOLDEN);
}

/*
 * A size in [min, max]: with a range, log-uniform (as many messages of 1..2 bytes as of
 * 32..64 KiB), with the edges of each power of two more likely (4095, 4096, 4097...).
 */
uint32_t bvt_size(const struct bvt_cfg *c, enum bvt_op op, uint64_t key, uint32_t max)
{
	uint32_t lo = c->min_size, hi = c->max_size < max ? c->max_size : max;
	uint64_t r = bvt_mix(key ^ 0x5153);
	uint32_t bits, base, n;

	if (op == BVT_FADD || op == BVT_CSWAP)
		return 8;
	if (lo >= hi)
		return hi;
	bits = 0;
	while (bits < 32 && (1ull << bits) <= hi - lo)
		bits++;
	base = (uint32_t)((r & 0xff) % (bits + 1)); /* the power of two */
	switch ((r >> 8) & 7) {
	case 0:
		n = (1u << base) - 1;
		break;
	case 1:
		n = 1u << base;
		break;
	case 2:
		n = (1u << base) + 1;
		break;
	default:
		n = (uint32_t)((r >> 16) & ((1ull << base) - 1)) + (base ? 1u << (base - 1) : 0);
		break;
	}
	if (!base && ((r >> 11) & 1))
		n = 0;
	n += lo;
	return n > hi ? hi : n;
}

uint32_t bvt_imm(uint64_t key)
{
	return (uint32_t)(bvt_mix(key ^ 0x1aa) >> 17);
}

static uint64_t word(uint64_t key, size_t i)
{
	return bvt_mix(key + (uint64_t)(i + 1) * GOLDEN);
}

uint8_t bvt_pattern_byte(uint64_t key, size_t i)
{
	uint64_t w = word(key, i / 8);

	return ((const uint8_t *)&w)[i % 8];
}

void bvt_fill(uint8_t *p, size_t n, uint64_t key)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = word(key, i / 8);

		memcpy(p + i, &w, n - i < 8 ? n - i : 8);
	}
}

size_t bvt_check(const uint8_t *p, size_t n, uint64_t key)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = word(key, i / 8);
		size_t k = n - i < 8 ? n - i : 8;

		if (memcmp(p + i, &w, k))
			for (size_t j = 0; j < k; j++)
				if (p[i + j] != ((uint8_t *)&w)[j])
					return i + j;
	}
	return n;
}

size_t bvt_check_fill(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != BVT_FILL)
			return i;
	return n;
}
