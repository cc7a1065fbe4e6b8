// SPDX-License-Identifier: MIT
/*
 * Shared-memory floors: how fast two processes can hand a message to each other here.
 *
 * shm-pingpong: two processes bounce a sequence number in one cache line, both spinning. An
 * ntb write is CPU stores into window memory that the peer polls: this is its floor.
 *
 * swdev-floor: ib_write_lat between two software devices (cx4_0 <-> cx4_1) has four actors:
 * the two programs, each spinning on its own memory, and the two device engines, each asleep
 * until something wakes it. A message from A to B goes A -> engine A (doorbell: a wake-up) ->
 * engine B (the wire: a wake-up) -> B's memory, which B polls. Here the engines are two relay
 * processes sleeping on a futex in shared memory: relay A copies A's message to relay B's inbox
 * and wakes it, relay B copies it into B's buffer. Nothing is done but the hand-overs, so no
 * design whose engines block between messages can have a shorter half round trip here.
 * swdev-floor-rt: the same with the relays at SCHED_FIFO, the floor of engines that run at
 * real-time priority (cx4's rt_priority): a woken relay preempts a polling program at once.
 */
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baseline.h"

#define CACHELINE 64

struct bl_line {
	_Alignas(CACHELINE) _Atomic uint32_t seq;
	char msg[CACHELINE - sizeof(uint32_t)];
};

static void *shared_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bl_die("mmap");
	memset(p, 0, size);
	return p;
}

static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}

static void spin_until(_Atomic uint32_t *w, uint32_t v)
{
	while (atomic_load_explicit(w, memory_order_acquire) != v)
		cpu_relax();
}

/* Runs the timed side: SEND(seq) then waits for the echo of seq; prints the half round trips. */
static void time_rounds(const char *name, void (*send)(void *, uint32_t),
			_Atomic uint32_t *echo, void *ctx)
{
	enum { N = 200000 };
	double *rtt = malloc(sizeof(double) * N), end = bl_now() + bl_seconds;
	size_t n = 0;

	if (!rtt)
		bl_die("malloc");
	for (uint32_t seq = 1; n < N && bl_now() < end; seq++) {
		double t0 = bl_now();

		send(ctx, seq);
		spin_until(echo, seq);
		rtt[n++] = bl_now() - t0;
	}
	bl_print_lat(name, rtt, n);
	free(rtt);
}

struct pingpong {
	struct bl_line a2b, b2a;
};

static void pp_send(void *ctx, uint32_t seq)
{
	struct pingpong *pp = ctx;

	atomic_store_explicit(&pp->a2b.seq, seq, memory_order_release);
}

void bl_shm_pingpong(void)
{
	struct pingpong *pp = shared_map(sizeof(*pp));
	pid_t pid = fork();

	if (pid < 0)
		bl_die("fork");
	if (pid == 0) {
		for (uint32_t seq = 1;; seq++) {
			spin_until(&pp->a2b.seq, seq);
			atomic_store_explicit(&pp->b2a.seq, seq, memory_order_release);
		}
	}
	time_rounds("shm_half_rtt", pp_send, &pp->b2a.seq, pp);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	munmap(pp, sizeof(*pp));
}

/* A relay's inbox: a message and a futex word the sender bumps and wakes. */
struct relay_box {
	struct bl_line line;
	_Alignas(CACHELINE) _Atomic uint32_t bell;
};

struct swdev {
	struct bl_line mem_a, mem_b;		/* what A and B poll (their "registered memory") */
	struct relay_box ra_from_app, ra_from_wire;	/* relay A's two doorbells */
	struct relay_box rb_from_app, rb_from_wire;	/* relay B's */
	_Alignas(CACHELINE) _Atomic uint32_t bell_a, bell_b;	/* one futex word per relay */
};

static void futex_wake(_Atomic uint32_t *w)
{
	atomic_fetch_add_explicit(w, 1, memory_order_release);
	syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static uint32_t futex_sleep(_Atomic uint32_t *w, uint32_t seen)
{
	uint32_t v;

	while ((v = atomic_load_explicit(w, memory_order_acquire)) == seen)
		syscall(SYS_futex, w, FUTEX_WAIT, seen, NULL, NULL, 0);
	return v;
}

static void deliver(struct bl_line *dst, const struct bl_line *src)
{
	memcpy(dst->msg, src->msg, sizeof(dst->msg));
	atomic_store_explicit(&dst->seq, atomic_load_explicit(&src->seq, memory_order_acquire),
			      memory_order_release);
}

/*
 * One device engine: sleeps on its bell; on a message from its program, passes it to the
 * peer relay's wire inbox and wakes it; on one from the wire, places it in its program's
 * memory. Each message is exactly one futex wake of one sleeping relay.
 */
static void relay(struct swdev *s, _Atomic uint32_t *bell, struct relay_box *from_app,
		  struct relay_box *from_wire, struct relay_box *peer_wire,
		  _Atomic uint32_t *peer_bell, struct bl_line *my_mem)
{
	uint32_t seen = 0, app_seen = 0, wire_seen = 0;

	for (;;) {
		seen = futex_sleep(bell, seen);
		uint32_t v = atomic_load_explicit(&from_app->line.seq, memory_order_acquire);

		if (v != app_seen) {
			app_seen = v;
			deliver(&peer_wire->line, &from_app->line);
			futex_wake(peer_bell);
		}
		v = atomic_load_explicit(&from_wire->line.seq, memory_order_acquire);
		if (v != wire_seen) {
			wire_seen = v;
			deliver(my_mem, &from_wire->line);
		}
	}
}

static void swdev_send(void *ctx, uint32_t seq)
{
	struct swdev *s = ctx;

	atomic_store_explicit(&s->ra_from_app.line.seq, seq, memory_order_release);
	futex_wake(&s->bell_a);
}

/* rt: the relays at SCHED_FIFO priority 50, as cx4 engines with rt_priority = 50 */
static void relay_priority(int rt)
{
	struct sched_param sp = {.sched_priority = 50};

	if (rt && sched_setscheduler(0, SCHED_FIFO, &sp))
		bl_die("sched_setscheduler SCHED_FIFO");
}

void bl_swdev_floor(int rt)
{
	struct swdev *s = shared_map(sizeof(*s));
	pid_t pids[3];

	pids[0] = fork();
	if (pids[0] == 0) {
		relay_priority(rt);
		relay(s, &s->bell_a, &s->ra_from_app, &s->ra_from_wire, &s->rb_from_wire,
		      &s->bell_b, &s->mem_a);
	}
	pids[1] = fork();
	if (pids[1] == 0) {
		relay_priority(rt);
		relay(s, &s->bell_b, &s->rb_from_app, &s->rb_from_wire, &s->ra_from_wire,
		      &s->bell_a, &s->mem_b);
	}
	pids[2] = fork();
	if (pids[2] == 0) {
		/* program B: polls its memory, answers each message through its engine */
		for (uint32_t seq = 1;; seq++) {
			spin_until(&s->mem_b.seq, seq);
			atomic_store_explicit(&s->rb_from_app.line.seq, seq, memory_order_release);
			futex_wake(&s->bell_b);
		}
	}
	for (int i = 0; i < 3; i++)
		if (pids[i] < 0)
			bl_die("fork");
	time_rounds(rt ? "swdev_floor_rt_half_rtt" : "swdev_floor_half_rtt", swdev_send,
		    &s->mem_a.seq, s);
	for (int i = 0; i < 3; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	munmap(s, sizeof(*s));
}
