// SPDX-License-Identifier: MIT
/*
 * DMA engine micro-benchmark (not a test: nothing here asserts a time). Ratios taken in the
 * same run: engine bandwidth vs one process_vm_writev per buffer, and the 8-byte message rate
 * of the engine thread and of a caller-run channel. The target is a forked child's memory,
 * registered in side B's IOMMU, as an application's MR would be.
 *
 *   ntb_dma_bench [seconds-per-case [profile]]
 *   ntb_dma_bench pingpong [iterations]   half round trip of an 8-byte DMA ping-pong between
 *                                         two processes, inline submit vs engine thread
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ntbt.h"

#define BUF (64ull << 20)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double raw_bw(pid_t kid, uint8_t *src, uint8_t *dst, size_t sz, double secs)
{
	double t0 = now_s(), t;
	uint64_t bytes = 0;
	size_t off = 0;

	do {
		struct iovec l = { src + off, sz }, r = { dst + off, sz };

		if (process_vm_writev(kid, &l, 1, &r, 1, 0) != (ssize_t)sz)
			return -1;
		bytes += sz;
		off = (off + sz) % (BUF - sz + 1);
		t = now_s();
	} while (t - t0 < secs);
	return bytes / (t - t0);
}

static double dma_bw(struct ntb_dev *a, uint64_t win_off, uint8_t *src, size_t sz, double secs,
		     uint32_t flags)
{
	struct ntb_dma_chan_attr at = { .depth = 64, .flags = flags };
	struct ntb_dma_chan *ch;
	ntb_dma_cookie_t ck = 0;
	double t0, t;
	uint64_t bytes = 0;
	size_t off = 0;

	if (ntb_dma_chan_open(a, &at, &ch))
		return -1;
	t0 = now_s();
	do {
		int err = ntb_dma_memcpy(ch, 0, win_off + off, src + off, sz, 0, &ck);

		if (err == -ENOSPC) {
			ntb_dma_wait(ch, ntb_dma_completed(ch) + 1, 5000);
			t = now_s();
			continue;
		}
		ntb_dma_submit(ch);
		bytes += sz;
		off = (off + sz) % (BUF - sz + 1);
		t = now_s();
	} while (t - t0 < secs);
	ntb_dma_wait(ch, ck, 5000);
	t = now_s();
	ntb_dma_chan_close(ch);
	return bytes / (t - t0);
}

/* 8-byte writes walking a 4 KiB buffer, one submit per write (ib_write_bw -s 8's pattern). */
static double dma_rate(struct ntb_dev *a, uint64_t win_off, uint8_t *src, double secs,
		       uint32_t flags, uint64_t *syscalls)
{
	struct ntb_dma_chan_attr at = { .depth = 1024, .flags = flags };
	struct ntb_dma_chan *ch;
	struct ntb_dma_stats st;
	ntb_dma_cookie_t ck = 0;
	double t0, t;
	uint64_t n = 0;

	if (ntb_dma_chan_open(a, &at, &ch))
		return -1;
	t0 = now_s();
	do {
		for (int i = 0; i < 256; i++) {
			size_t off = (n * 8) % 4096;
			int err = ntb_dma_memcpy(ch, 0, win_off + off, src + off, 8, 0, &ck);

			if (err == -ENOSPC) {
				if (flags & NTB_DMA_CHAN_MANUAL)
					ntb_dma_run(ch, 0);
				else
					ntb_dma_wait(ch, ntb_dma_completed(ch) + 1, 5000);
				continue;
			}
			ntb_dma_submit(ch);
			n++;
		}
		t = now_s();
	} while (t - t0 < secs);
	ntb_dma_wait(ch, ck, 5000);
	t = now_s();
	ntb_dma_chan_stats(ch, &st);
	*syscalls = st.syscalls;
	ntb_dma_chan_close(ch);
	return n / (t - t0);
}

static bool up(void *arg)
{
	return ntb_link_is_up(arg, NULL, NULL);
}

/* One end of the ping-pong: its own 4 KiB target, a channel into the peer's. */
static double pp_side(int side, int iters, uint32_t flags)
{
	struct ntb_dev *d = ntbt_open("intel-gen4", side);
	volatile uint64_t *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ntb_dma_chan_attr at = { .flags = flags };
	struct ntb_dma_chan *ch;
	uint64_t aa, wsz, iova, psz;
	struct ntb_iommu_map m;
	ntb_dma_cookie_t ck;
	void *pio;
	double t0;

	ntb_link_enable(d, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	ntbt_pump(&d, 1, up, d, 10000);
	ntb_mw_get_align(d, 0, 0, &aa, NULL, &wsz);
	ntb_iova_alloc(d, wsz, aa, &iova);
	m = (struct ntb_iommu_map){ .iova = iova, .len = 4096, .fd = -1, .pid = getpid(),
				    .va = (uintptr_t)buf, .perm = NTB_IOMMU_WRITE };
	buf[0] = 0;
	if (ntb_iommu_map(d, &m) || ntb_mw_set_trans(d, 0, 0, iova, wsz)) {
		ntb_dev_close(d);
		return -1;
	}
	/* the peer's window is translated once it can be mapped */
	while (ntb_peer_mw_map(d, 0, &pio, &psz) == -ENXIO)
		ntbt_pump(&d, 1, NULL, NULL, 5);
	ntb_peer_mw_unmap(d, 0);
	if (ntb_dma_chan_open(d, &at, &ch)) {
		ntb_dev_close(d);
		return -1;
	}
	usleep(100000);
	t0 = now_s();
	for (uint64_t i = 1; i <= (uint64_t)iters; i++) {
		if (side == 1)
			while (buf[0] != i)
				;
		ntb_dma_imm64(ch, 0, 0, i, 0, &ck);
		ntb_dma_submit(ch);
		if (flags & NTB_DMA_CHAN_MANUAL)
			ntb_dma_run(ch, 0);
		if (side == 0)
			while (buf[0] != i)
				;
	}
	t0 = (now_s() - t0) / iters / 2;
	ntb_dma_wait(ch, ck, 1000);
	ntb_dma_chan_close(ch);
	ntb_dev_close(d);
	return t0;
}

static int pingpong(int iters, int only)
{
	static const uint32_t modes[] = { 0, NTB_DMA_CHAN_NO_INLINE, NTB_DMA_CHAN_MANUAL };
	static const char *names[] = { "inline submit", "engine thread", "caller-run" };

	ntbt_rundir();	/* both processes in one run directory */
	for (int k = 0; k < 3; k++) {
		if (only >= 0 && k != only)
			continue;
		pid_t kid = fork();
		double half;

		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			_exit(pp_side(1, iters, modes[k]) < 0);
		}
		half = pp_side(0, iters, modes[k]);
		waitpid(kid, NULL, 0);
		printf("ping-pong %-14s half round trip %.2f us\n", names[k], half * 1e6);
	}
	return ntbt_done();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "pingpong"))
		return pingpong(argc > 2 ? atoi(argv[2]) : 20000, argc > 3 ? atoi(argv[3]) : -1);

	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	struct ntb_dev *a, *b;
	uint8_t *src, *dst;
	uint64_t iova, wsz, aa, sc;
	struct ntb_iommu_map m;
	pid_t kid;

	src = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(src, 1, BUF);
	memset(dst, 2, BUF);
	kid = fork();
	if (kid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	ntbt_pair(argc > 2 ? argv[2] : "intel-gen4", &a, &b);
	ntb_mw_get_align(b, 0, 0, &aa, NULL, &wsz);
	ntb_iova_alloc(b, wsz, aa < 4096 ? 4096 : aa, &iova);
	m = (struct ntb_iommu_map){ .iova = iova, .len = BUF, .fd = -1, .pid = kid,
				    .va = (uintptr_t)dst,
				    .perm = NTB_IOMMU_READ | NTB_IOMMU_WRITE };
	if (ntb_iommu_map(b, &m) || (ntb_xlat_model(b) == NTB_XLAT_INBOUND ?
				     ntb_mw_set_trans(b, 0, 0, iova, wsz) :
				     ntb_peer_mw_set_trans(a, 0, 0, iova, wsz))) {
		fprintf(stderr, "setup failed\n");
		return 2;
	}
	for (size_t sz = 64 << 10; sz <= (1 << 20); sz <<= 4) {
		double raw = raw_bw(kid, src, dst, sz, secs);
		double eng = dma_bw(a, 0, src, sz, secs, 0);
		double man = dma_bw(a, 0, src, sz, secs, NTB_DMA_CHAN_MANUAL);

		printf("%7zu B: process_vm_writev %.2f GB/s, engine thread %.2f GB/s (%.2fx), "
		       "caller-run %.2f GB/s (%.2fx)\n", sz, raw / 1e9, eng / 1e9, eng / raw,
		       man / 1e9, man / raw);
	}
	{
		double r = dma_rate(a, 0, src, secs, 0, &sc);

		printf("8 B writes, engine thread: %.2f M/s (%llu syscalls)\n", r / 1e6,
		       (unsigned long long)sc);
		r = dma_rate(a, 0, src, secs, NTB_DMA_CHAN_MANUAL, &sc);
		printf("8 B writes, caller-run:    %.2f M/s (%llu syscalls)\n", r / 1e6,
		       (unsigned long long)sc);
	}
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	ntb_dev_close(a);
	ntb_dev_close(b);
	return ntbt_done();
}
