// SPDX-License-Identifier: MIT
/*
 * The engine's trace ring (ntb_trace.h): lock-free (one fetch-add per event, any thread), in
 * process memory, written out as text.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ntb.h"
#include "ntb_trace.h"

#define NTB_TRACE_LEN_DEFAULT	(1u << 16)

struct ntb_trace_ent {
	uint64_t t;
	uint32_t qpn;
	uint16_t ev;
	uint16_t tid;
	uint32_t a, b;
	uint64_t c, d;
};

bool ntb_trace_on;
static struct ntb_trace_ent *ring;
static _Atomic uint64_t next;
static const char *path;
static uint64_t len = NTB_TRACE_LEN_DEFAULT;	/* power of two */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *const names[] = {
	[NTB_TR_TX] = "tx", [NTB_TR_TMO_QUEUED] = "tmo-queued", [NTB_TR_TMO_RESP] = "tmo-resp",
	[NTB_TR_TMO_RETRY] = "tmo-RETRY", [NTB_TR_TMO_EXC] = "tmo-EXCEEDED",
	[NTB_TR_REWIND] = "rewind", [NTB_TR_C_ACK] = "c-ack", [NTB_TR_C_NAK] = "c-nak",
	[NTB_TR_R_REQ] = "r-req", [NTB_TR_R_ACK] = "r-ack", [NTB_TR_R_ACK_FULL] = "r-ack-FULL",
	[NTB_TR_R_NAK] = "r-nak", [NTB_TR_R_PUB] = "r-pub", [NTB_TR_R_STALL] = "r-stall",
};

static void at_exit(void)
{
	ntb_trace_dump("exit");
}

static void init_once(void)
{
	path = getenv("NTB_TRACE");
	if (!path || !*path)
		return;
	if (getenv("NTB_TRACE_LEN")) {
		unsigned long want = strtoul(getenv("NTB_TRACE_LEN"), NULL, 0);

		while (len < want && len < (1u << 26))
			len <<= 1;
	}
	ring = calloc(len, sizeof(*ring));
	if (!ring)
		return;
	atexit(at_exit);
	ntb_trace_on = true;
}

void ntb_trace_init(void)
{
	pthread_once(&once, init_once);
}

void ntb_trace_log(uint16_t ev, uint32_t qpn, uint32_t a, uint32_t b, uint64_t c, uint64_t d)
{
	uint64_t i = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
	struct ntb_trace_ent *e = &ring[i & (len - 1)];

	*e = (struct ntb_trace_ent){ .t = ntb_now(), .qpn = qpn, .ev = ev,
				     .tid = (uint16_t)gettid(), .a = a, .b = b, .c = c, .d = d };
}

void ntb_trace_dump(const char *why)
{
	uint64_t end = atomic_load(&next), i = end > len ? end - len : 0;
	char name[512];
	FILE *f;

	if (!ntb_trace_on)
		return;
	snprintf(name, sizeof(name), "%s.%d", path, (int)getpid());
	f = fopen(name, "w");
	if (!f)
		return;
	fprintf(f, "# ntb trace of pid %d (%s): %llu events\n", (int)getpid(), why,
		(unsigned long long)end);
	for (; i < end; i++) {
		const struct ntb_trace_ent *e = &ring[i & (len - 1)];
		const char *n = e->ev < sizeof(names) / sizeof(names[0]) && names[e->ev] ?
					names[e->ev] : "?";

		fprintf(f, "%llu.%09llu %5u qp %06x %-12s %u %u %llu %llu\n",
			(unsigned long long)(e->t / 1000000000),
			(unsigned long long)(e->t % 1000000000), e->tid, e->qpn, n, e->a, e->b,
			(unsigned long long)e->c, (unsigned long long)e->d);
	}
	fclose(f);
}
