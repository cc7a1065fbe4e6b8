/* SPDX-License-Identifier: MIT */
/* Helpers for the NTB model tests: a private run directory, two ends, event pumping. */
#ifndef NTBT_H
#define NTBT_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntb_hal.h"

extern int ntbt_failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			ntbt_failures++;                                                   \
		}                                                                          \
	} while (0)

#define CHECK_EQ(a, b)                                                                     \
	do {                                                                               \
		long long _a = (long long)(a), _b = (long long)(b);                        \
		if (_a != _b) {                                                            \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n",  \
				__FILE__, __LINE__, #a, #b, _a, _b);                       \
			ntbt_failures++;                                                   \
		}                                                                          \
	} while (0)

/* A fresh run directory for this test (removed by ntbt_done). */
const char *ntbt_rundir(void);
int ntbt_done(void);
/* Open one end (aborts the test on failure). */
struct ntb_dev *ntbt_open(const char *profile, int side);
/* Process events on the given ends until pred(arg) holds or timeout_ms passes. */
typedef bool (*ntbt_pred)(void *arg);
bool ntbt_pump(struct ntb_dev **devs, int n, ntbt_pred pred, void *arg, int timeout_ms);
/* Open both ends in this process, enable, wait for link up. */
void ntbt_pair(const char *profile, struct ntb_dev **a, struct ntb_dev **b);
/* Events seen by ntbt_pump, per end, accumulated (cleared by the caller). */
extern uint32_t ntbt_seen[2];
uint64_t ntbt_now_ms(void);

#endif
