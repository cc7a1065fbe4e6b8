// SPDX-License-Identifier: MIT
/*
 * rs_stall.so: an LD_PRELOAD shim for rdmacm_rsockets that makes an unmodified rsockets
 * program a peer that gets no CPU for a while, as on a loaded machine: the first rrecv that
 * brings the bytes received to RS_STALL_AT stops the whole process (SIGSTOP: every thread,
 * the ntb provider's progress thread too) for RS_STALL_MS, then it goes on.
 *
 * Its peer meanwhile finishes sending and closes. rclose must not give up on data the stalled
 * end has not taken in yet: before the fix, rclose waited 2 s, disconnected, and the peer's
 * rstream -T n spun for ever on an end of file that came too early.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rsocket.h>

ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	static ssize_t (*next)(int, void *, size_t, int);
	static long long received;
	static int stalled;
	const char *at = getenv("RS_STALL_AT"), *ms = getenv("RS_STALL_MS");
	ssize_t ret;

	if (!next)
		next = (ssize_t (*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "rrecv");
	ret = next(socket, buf, len, flags);
	if (ret > 0)
		received += ret;
	if (!stalled && at && received >= atoll(at)) {
		long n = ms ? atol(ms) : 3000;
		pid_t me = getpid();
		struct timespec t = { .tv_sec = n / 1000, .tv_nsec = n % 1000 * 1000000 };

		stalled = 1;
		if (fork() == 0) {
			nanosleep(&t, NULL);
			kill(me, SIGCONT);
			_exit(0);
		}
		kill(me, SIGSTOP);
		fprintf(stderr, "rs_stall: stopped for %ld ms at %lld bytes\n", n, received);
	}
	return ret;
}
