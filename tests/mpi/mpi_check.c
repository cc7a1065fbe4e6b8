// SPDX-License-Identifier: MIT
/*
 * An MPI program that checks every byte MPI moves for it: point-to-point (blocking and
 * non-blocking, a ring and all pairs, eager and rendezvous sizes), collectives (Bcast, Reduce,
 * Allreduce, Allgather, Alltoall, Barrier) and one-sided communication (MPI_Put and MPI_Get in
 * fence epochs, and in passive-target lock epochs). Every buffer is filled with a pattern that
 * names its sender, receiver, round and offset, and checked on arrival; the rest of a
 * receive buffer (past what was sent) must stay untouched.
 *
 * Usage: mpirun ... mpi_check [max message bytes, default 1 MiB] [-v: rank 0 names each part]
 * Prints "mpi_check: N ranks, B bytes checked, OK" on rank 0 and exits 0; on any wrong byte
 * it names it and calls MPI_Abort.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, verbose;
static unsigned long long checked;

static void stage(const char *what)
{
	if (verbose && !rank) {
		fprintf(stderr, "mpi_check: %s\n", what);
		fflush(stderr);
	}
}

/* The byte at offset i of the message from src to dst in round r. */
static uint8_t pat(int src, int dst, int r, size_t i)
{
	uint32_t x = (uint32_t)src * 2654435761u ^ (uint32_t)dst * 40503u ^ (uint32_t)r * 97u ^
		     (uint32_t)i * 2246822519u;

	return (uint8_t)(x ^ x >> 13 ^ i >> 8);
}

static void fill(uint8_t *p, size_t n, int src, int dst, int r)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pat(src, dst, r, i);
}

static void fail(const char *what, int src, int r, size_t i, uint8_t got, uint8_t want)
{
	fprintf(stderr, "mpi_check rank %d: %s from rank %d round %d: byte %zu is 0x%02x, want 0x%02x\n",
		rank, what, src, r, i, got, want);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

static void check(const uint8_t *p, size_t n, int src, int dst, int r, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(src, dst, r, i))
			fail(what, src, r, i, p[i], pat(src, dst, r, i));
	checked += n;
}

/* Bytes past a message must be what they were (0xA5). */
static void check_guard(const uint8_t *p, size_t n, int src, int r, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0xa5)
			fail(what, src, r, i, p[i], 0xa5);
}

#define GUARD 64

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		MPI_Abort(MPI_COMM_WORLD, 3);
	return p;
}

/* Sizes from 0 through the eager limits to rendezvous ones. */
static size_t sizes[32];
static int nsizes;

static void make_sizes(size_t max)
{
	static const size_t s[] = {0, 1, 7, 64, 1000, 4096, 8193, 65536, 200000, 1 << 20, 4 << 20};

	for (size_t k = 0; k < sizeof(s) / sizeof(s[0]) && s[k] <= max; k++)
		sizes[nsizes++] = s[k];
}

static void test_ring(size_t max)
{
	uint8_t *sb = xmalloc(max), *rb = xmalloc(max + GUARD);
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;

	for (int k = 0; k < nsizes; k++) {
		size_t n = sizes[k];
		MPI_Status st;
		int cnt;

		fill(sb, n, rank, next, k);
		memset(rb, 0xa5, max + GUARD);
		MPI_Sendrecv(sb, (int)n, MPI_BYTE, next, k, rb, (int)max, MPI_BYTE, prev, k,
			     MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if ((size_t)cnt != n || st.MPI_SOURCE != prev)
			fail("ring: length/source", prev, k, (size_t)cnt, 0, 0);
		check(rb, n, prev, rank, k, "ring");
		check_guard(rb + n, GUARD, prev, k, "ring guard");
	}
	free(sb);
	free(rb);
}

/* Every rank sends to every rank (itself too) with Isend/Irecv, all at once. */
static void test_all_pairs(size_t n, int r)
{
	uint8_t *sb = xmalloc(n * (size_t)nranks), *rb = xmalloc((n + GUARD) * (size_t)nranks);
	MPI_Request *rq = xmalloc(sizeof(*rq) * 2 * (size_t)nranks);

	memset(rb, 0xa5, (n + GUARD) * (size_t)nranks);
	for (int p = 0; p < nranks; p++) {
		MPI_Irecv(rb + (n + GUARD) * (size_t)p, (int)n, MPI_BYTE, p, 100 + r, MPI_COMM_WORLD,
			  &rq[p]);
		fill(sb + n * (size_t)p, n, rank, p, 100 + r);
	}
	for (int p = 0; p < nranks; p++)
		MPI_Isend(sb + n * (size_t)p, (int)n, MPI_BYTE, p, 100 + r, MPI_COMM_WORLD,
			  &rq[nranks + p]);
	MPI_Waitall(2 * nranks, rq, MPI_STATUSES_IGNORE);
	for (int p = 0; p < nranks; p++) {
		check(rb + (n + GUARD) * (size_t)p, n, p, rank, 100 + r, "all pairs");
		check_guard(rb + (n + GUARD) * (size_t)p + n, GUARD, p, 100 + r, "all pairs guard");
	}
	free(sb);
	free(rb);
	free(rq);
}

static void test_collectives(size_t max)
{
	uint8_t *b = xmalloc(max + GUARD), *all = xmalloc(max * (size_t)nranks);
	uint8_t *sb = xmalloc(max * (size_t)nranks);
	uint64_t *v = xmalloc(sizeof(uint64_t) * 4096), *s = xmalloc(sizeof(uint64_t) * 4096);

	for (int k = 0; k < nsizes; k++) {
		size_t n = sizes[k];
		int root = k % nranks;

		/* Bcast from a root that moves round by round */
		memset(b, 0xa5, max + GUARD);
		if (rank == root)
			fill(b, n, root, -1, 200 + k);
		MPI_Bcast(b, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
		check(b, n, root, -1, 200 + k, "bcast");
		check_guard(b + n, GUARD, root, 200 + k, "bcast guard");

		/* Allgather and Alltoall of n / nranks bytes per rank */
		{
			size_t c = n / (size_t)nranks;

			fill(b, c, rank, -2, 300 + k);
			MPI_Allgather(b, (int)c, MPI_BYTE, all, (int)c, MPI_BYTE, MPI_COMM_WORLD);
			for (int p = 0; p < nranks; p++)
				check(all + c * (size_t)p, c, p, -2, 300 + k, "allgather");
			for (int p = 0; p < nranks; p++)
				fill(sb + c * (size_t)p, c, rank, p, 400 + k);
			MPI_Alltoall(sb, (int)c, MPI_BYTE, all, (int)c, MPI_BYTE, MPI_COMM_WORLD);
			for (int p = 0; p < nranks; p++)
				check(all + c * (size_t)p, c, p, rank, 400 + k, "alltoall");
		}
	}
	/* Allreduce and Reduce: the sum of what every rank contributes, element by element */
	for (size_t n = 1; n <= 4096; n *= 8) {
		for (size_t i = 0; i < n; i++)
			v[i] = (uint64_t)(rank + 1) * 1000003u + i * 7u;
		MPI_Allreduce(v, s, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
		for (size_t i = 0; i < n; i++) {
			uint64_t want = (uint64_t)nranks * (nranks + 1) / 2 * 1000003u +
					(uint64_t)nranks * i * 7u;

			if (s[i] != want) {
				fprintf(stderr, "mpi_check rank %d: allreduce[%zu] = %llu, want %llu\n",
					rank, i, (unsigned long long)s[i], (unsigned long long)want);
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
		}
		checked += n * sizeof(uint64_t);
		memset(s, 0, n * sizeof(uint64_t));
		MPI_Reduce(v, s, (int)n, MPI_UINT64_T, MPI_MAX, nranks - 1, MPI_COMM_WORLD);
		if (rank == nranks - 1)
			for (size_t i = 0; i < n; i++)
				if (s[i] != (uint64_t)nranks * 1000003u + i * 7u) {
					fprintf(stderr, "mpi_check rank %d: reduce[%zu] wrong\n", rank, i);
					MPI_Abort(MPI_COMM_WORLD, 2);
				}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	free(b);
	free(all);
	free(sb);
	free(v);
	free(s);
}

/*
 * One-sided: each rank's window has a slot per rank for puts and one more that neighbours get
 * from. Fence epochs: every rank puts into its next neighbour's window and gets from its
 * previous neighbour's; then the same in passive-target epochs (MPI_Win_lock / unlock).
 */
static void prepare_window(uint8_t *base, size_t slot, int next, int r)
{
	memset(base, 0xa5, slot * (size_t)(nranks + 1));
	fill(base + slot * (size_t)nranks, slot - GUARD, rank, next, r + 50);
}

static void check_window(const uint8_t *base, const uint8_t *dst, size_t slot, size_t n,
			 int prev, int r, const char *what)
{
	/* what our previous neighbour put at its slot of our window, what we got from its window */
	check(base + slot * (size_t)prev, n, prev, rank, r, what);
	check_guard(base + slot * (size_t)prev + n, GUARD, prev, r, "put guard");
	check(dst, n, prev, rank, r + 50, what);
	check_guard(dst + n, GUARD, prev, r, "get guard");
}

static void test_rma(size_t max)
{
	size_t slot = max + GUARD, wbytes = slot * (size_t)(nranks + 1);
	uint8_t *base, *src = xmalloc(max), *dst = xmalloc(max + GUARD);
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	MPI_Win win;

	MPI_Win_allocate((MPI_Aint)wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	for (int k = 0; k < nsizes; k++) {
		size_t n = sizes[k];
		int r = 500 + k;

		if (verbose && !rank)
			fprintf(stderr, "mpi_check: put/get %zu bytes (fence)\n", n);

		prepare_window(base, slot, next, r);
		fill(src, n, rank, next, r);
		memset(dst, 0xa5, max + GUARD);
		MPI_Win_fence(0, win);
		MPI_Put(src, (int)n, MPI_BYTE, next, (MPI_Aint)(slot * (size_t)rank), (int)n,
			MPI_BYTE, win);
		MPI_Get(dst, (int)n, MPI_BYTE, prev, (MPI_Aint)(slot * (size_t)nranks), (int)n,
			MPI_BYTE, win);
		MPI_Win_fence(0, win);
		check_window(base, dst, slot, n, prev, r, "put/get (fence)");
	}
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	for (int k = 0; k < nsizes; k++) {
		size_t n = sizes[k];
		int r = 600 + k;

		if (verbose && !rank)
			fprintf(stderr, "mpi_check: put/get %zu bytes (lock)\n", n);

		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
		prepare_window(base, slot, next, r);
		MPI_Win_unlock(rank, win);
		fill(src, n, rank, next, r);
		memset(dst, 0xa5, max + GUARD);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
		MPI_Put(src, (int)n, MPI_BYTE, next, (MPI_Aint)(slot * (size_t)rank), (int)n,
			MPI_BYTE, win);
		MPI_Win_unlock(next, win);
		MPI_Win_lock(MPI_LOCK_SHARED, prev, 0, win);
		MPI_Get(dst, (int)n, MPI_BYTE, prev, (MPI_Aint)(slot * (size_t)nranks), (int)n,
			MPI_BYTE, win);
		MPI_Win_unlock(prev, win);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
		check_window(base, dst, slot, n, prev, r, "put/get (lock)");
		MPI_Win_unlock(rank, win);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Win_free(&win);
	free(src);
	free(dst);
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	unsigned long long total = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	verbose = argc > 2 && !strcmp(argv[2], "-v");
	make_sizes(max);
	stage("ring");
	test_ring(max);
	stage("all pairs");
	test_all_pairs(64, 0);
	test_all_pairs(max / 4, 1);
	stage("collectives");
	test_collectives(max);
	stage("one-sided");
	test_rma(max);
	MPI_Reduce(&checked, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!rank)
		printf("mpi_check: %d ranks, %llu bytes checked, OK\n", nranks, total);
	MPI_Finalize();
	return 0;
}
