/* SPDX-License-Identifier: MIT */
/*
 * The checks of the single-file unit tests. A check that fails prints where it is and what it
 * checked (EXPECT_EQ: both values too) and counts in failures; the test goes on, so that one
 * run reports every failure, and its main() returns non-zero when failures is.
 */
#ifndef BV_EXPECT_H
#define BV_EXPECT_H

#include <stdio.h>

static int failures __attribute__((unused));

#define EXPECT(c)                                                                    \
	do {                                                                         \
		if (!(c)) {                                                          \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                                  \
		}                                                                    \
	} while (0)

#define EXPECT_EQ(a, b)                                                                    \
	do {                                                                               \
		long long _a = (long long)(a), _b = (long long)(b);                        \
		if (_a != _b) {                                                            \
			fprintf(stderr, "FAIL %s:%d: %s == %s (%lld != %lld)\n", __FILE__, \
				__LINE__, #a, #b, _a, _b);                                 \
			failures++;                                                        \
		}                                                                          \
	} while (0)

#endif /* BV_EXPECT_H */
