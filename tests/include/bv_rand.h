/* SPDX-License-Identifier: MIT */
/*
 * The tests' pseudo-random numbers: xorshift64* (S. Vigna, "An experimental exploration of
 * Marsaglia's xorshift generators, scrambled", ACM TOMS 42(4), 2016), deterministic so that a
 * failure reproduces with the same seed. The caller keeps the state; it must not be 0.
 */
#ifndef BV_RAND_H
#define BV_RAND_H

#include <stdint.h>

static inline uint64_t bv_rand64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

#endif /* BV_RAND_H */
