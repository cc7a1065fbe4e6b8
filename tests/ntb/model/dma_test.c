// SPDX-License-Identifier: MIT
/*
 * The DMA engine and the emulated IOMMU through the HAL, on every profile: copies of many
 * sizes and alignments checked byte for byte against a shadow copy, immediates, batching (few
 * syscalls for many small writes), fences and signals, IOMMU faults (hole, read-only, beyond
 * the window, unmapped while in use), PIO through a window, the cross-link read counter, link
 * down, and a client process using a grant.
 */
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bv_rand.h"
#include "ntbt.h"

#define MiB (1ull << 20)
#define KiB (1ull << 10)
#define OBJ_OFF 0		/* memfd object: window [0, 1 MiB) */
#define OBJ_LEN MiB
#define BUF_OFF MiB		/* process memory: [1 MiB, 5 MiB) */
#define BUF_LEN (4 * MiB)
#define RO_OFF (5 * MiB)	/* read-only: [5 MiB, 5 MiB + 64 KiB) */
#define RO_LEN (64 * KiB)
#define HOLE_OFF (RO_OFF + RO_LEN)

struct win {
	struct ntb_dev *a, *b;
	uint64_t iova, size;
	int memfd;
	uint8_t *obj;		/* B's view of the object */
	uint8_t *buf, *shadow;
	uint8_t *ro;
};

static struct ntb_dev *dv[2];

static void setup(const char *profile, struct win *w)
{
	uint64_t aa;
	struct ntb_iommu_map m;

	ntbt_pair(profile, &w->a, &w->b);
	dv[0] = w->a;
	dv[1] = w->b;
	CHECK_EQ(ntb_mw_get_align(w->b, 0, 0, &aa, NULL, &w->size), 0);
	if (aa < NTB_PAGE_SIZE)
		aa = NTB_PAGE_SIZE;
	CHECK_EQ(ntb_iova_alloc(w->b, w->size, aa, &w->iova), 0);
	CHECK_EQ(w->iova % aa, 0);

	w->memfd = memfd_create("obj", MFD_CLOEXEC);
	CHECK_EQ(ftruncate(w->memfd, OBJ_LEN), 0);
	w->obj = mmap(NULL, OBJ_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, w->memfd, 0);
	w->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->ro = mmap(NULL, RO_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->shadow = malloc(BUF_LEN);
	for (uint64_t i = 0; i < BUF_LEN; i++)
		w->buf[i] = w->shadow[i] = (uint8_t)(i * 7 + 1);
	memset(w->ro, 0x5a, RO_LEN);

	m = (struct ntb_iommu_map){ .iova = w->iova + OBJ_OFF, .len = OBJ_LEN,
				    .perm = NTB_IOMMU_READ | NTB_IOMMU_WRITE, .fd = w->memfd };
	CHECK_EQ(ntb_iommu_map(w->b, &m), 0);
	CHECK_EQ(ntb_iommu_map(w->b, &m), -EEXIST);
	m = (struct ntb_iommu_map){ .iova = w->iova + BUF_OFF, .len = BUF_LEN,
				    .perm = NTB_IOMMU_READ | NTB_IOMMU_WRITE, .fd = -1,
				    .pid = getpid(), .va = (uintptr_t)w->buf };
	CHECK_EQ(ntb_iommu_map(w->b, &m), 0);
	m = (struct ntb_iommu_map){ .iova = w->iova + RO_OFF, .len = RO_LEN,
				    .perm = NTB_IOMMU_READ, .fd = -1, .pid = getpid(),
				    .va = (uintptr_t)w->ro };
	CHECK_EQ(ntb_iommu_map(w->b, &m), 0);
	m.iova += 1;
	CHECK_EQ(ntb_iommu_map(w->b, &m), -EINVAL);	/* not page aligned */

	if (ntb_xlat_model(w->b) == NTB_XLAT_INBOUND)
		CHECK_EQ(ntb_mw_set_trans(w->b, 0, 0, w->iova, w->size), 0);
	else	/* IDT: the writer programs its outbound window with the address B sent */
		CHECK_EQ(ntb_peer_mw_set_trans(w->a, 0, 0, w->iova, w->size), 0);
}

static void teardown(struct win *w)
{
	if (w->a)
		ntb_dev_close(w->a);
	if (w->b)
		ntb_dev_close(w->b);
	munmap(w->obj, OBJ_LEN);
	munmap(w->buf, BUF_LEN);
	munmap(w->ro, RO_LEN);
	close(w->memfd);
	free(w->shadow);
}

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	return bv_rand64(&rnd_state);
}

static int buf_mismatch(struct win *w)
{
	for (uint64_t i = 0; i < BUF_LEN; i++)
		if (w->buf[i] != w->shadow[i]) {
			fprintf(stderr, "byte %llu: %02x, expected %02x\n", (unsigned long long)i,
				w->buf[i], w->shadow[i]);
			return 1;
		}
	return 0;
}

/* Copies of many sizes at many offsets, immediates; every byte checked. */
static void test_copies(struct win *w, uint32_t chan_flags)
{
	static const size_t sizes[] = { 1, 2, 3, 4, 7, 8, 9, 31, 63, 64, 65, 255, 4095, 4096,
					4097, 65536 + 3, 262144, MiB, 3 * MiB + 5 };
	struct ntb_dma_chan_attr at = { .depth = 256, .flags = chan_flags };
	struct ntb_dma_chan *ch;
	struct ntb_dma_stats st;
	ntb_dma_cookie_t ck = 0;
	uint8_t *src = malloc(BUF_LEN);
	size_t ndesc = 0;

	CHECK_EQ(ntb_dma_chan_open(w->a, &at, &ch), 0);
	for (int round = 0; round < 3; round++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			size_t len = sizes[s];
			uint64_t off = rnd() % (BUF_LEN - len + 1);
			uint8_t *from = src + rnd() % (BUF_LEN - len + 1);
			int err;

			for (size_t i = 0; i < len; i++)
				from[i] = (uint8_t)rnd();
			while ((err = ntb_dma_memcpy(ch, 0, BUF_OFF + off, from, len, 0, &ck)) ==
			       -ENOSPC)
				ntb_dma_wait(ch, ntb_dma_completed(ch) + 1, 5000);
			CHECK_EQ(err, 0);
			ndesc++;
			memcpy(w->shadow + off, from, len);
			/* the source must stay valid until completion: wait before reusing it */
			ntb_dma_submit(ch);
			CHECK_EQ(ntb_dma_wait(ch, ck, 10000), 0);
		}
		/* immediates, unaligned too */
		for (int i = 0; i < 50; i++) {
			uint64_t off = rnd() % (BUF_LEN - 8), v = rnd();

			if (i & 1) {
				CHECK_EQ(ntb_dma_imm32(ch, 0, BUF_OFF + off, (uint32_t)v, 0, &ck), 0);
				memcpy(w->shadow + off, &v, 4);
			} else {
				CHECK_EQ(ntb_dma_imm64(ch, 0, BUF_OFF + off, v, 0, &ck), 0);
				memcpy(w->shadow + off, &v, 8);
			}
			ndesc++;
		}
		ntb_dma_submit(ch);
		CHECK_EQ(ntb_dma_wait(ch, ck, 10000), 0);
		CHECK(!buf_mismatch(w));
	}
	CHECK_EQ(ntb_dma_completed(ch), ck);
	ntb_dma_chan_stats(ch, &st);
	CHECK_EQ(st.descs, ndesc);
	CHECK_EQ(st.faults, 0);
	CHECK_EQ(ntb_dma_memcpy(ch, 0, BUF_OFF, src, 0, 0, NULL), -EINVAL);
	CHECK_EQ(ntb_dma_memcpy(ch, ntb_peer_mw_count(w->a), 0, src, 1, 0, NULL), -EINVAL);
	ntb_dma_chan_close(ch);
	free(src);
}

/* Many small writes: one submit, one run, few syscalls; then the contents. */
static void test_batching(struct win *w)
{
	struct ntb_dma_chan_attr at = { .depth = 8192, .flags = NTB_DMA_CHAN_MANUAL };
	struct ntb_dma_chan *ch;
	struct ntb_dma_stats st;
	uint64_t *vals = malloc(4096 * sizeof(*vals));
	ntb_dma_cookie_t ck;

	CHECK_EQ(ntb_dma_chan_open(w->a, &at, &ch), 0);
	/* 4096 contiguous 8-byte writes (ib_write_bw -s 8 walks its buffer like this) */
	for (int i = 0; i < 4096; i++) {
		vals[i] = rnd();
		CHECK_EQ(ntb_dma_memcpy(ch, 0, BUF_OFF + 8 * i, &vals[i], 8, 0, &ck), 0);
		memcpy(w->shadow + 8 * i, &vals[i], 8);
	}
	/* 2048 scattered ones */
	for (int i = 0; i < 2048; i++) {
		uint64_t off = 65536 + 64 * (uint64_t)i;

		CHECK_EQ(ntb_dma_imm64(ch, 0, BUF_OFF + off, off * 3, 0, &ck), 0);
		uint64_t v = off * 3;
		memcpy(w->shadow + off, &v, 8);
	}
	ntb_dma_submit(ch);
	CHECK_EQ(ntb_dma_run(ch, 0), 4096 + 2048);
	CHECK_EQ(ntb_dma_completed(ch), ck);
	ntb_dma_chan_stats(ch, &st);
	/* contiguous writes merge into one iovec; 2048 scattered need 2 calls of IOV_MAX */
	CHECK(st.syscalls <= 3);
	CHECK(!buf_mismatch(w));
	ntb_dma_chan_close(ch);
	free(vals);
}

/* Faults: a hole, a read-only mapping, beyond the window; the memory stays untouched. */
static void test_faults(struct win *w)
{
	struct ntb_dma_chan_attr at = { .flags = NTB_DMA_CHAN_MANUAL };
	struct ntb_dma_chan *ch;
	struct ntb_dma_stats st;
	struct ntb_stats sb0, sb1;
	uint8_t pat[8192];
	ntb_dma_cookie_t ck;

	memset(pat, 0xee, sizeof(pat));
	ntb_get_stats(w->b, &sb0);
	CHECK_EQ(ntb_dma_chan_open(w->a, &at, &ch), 0);
	CHECK_EQ(ntb_dma_memcpy(ch, 0, HOLE_OFF + 4096, pat, 100, 0, &ck), 0);	/* hole */
	CHECK_EQ(ntb_dma_memcpy(ch, 0, RO_OFF + 8, pat, 100, 0, &ck), 0);	/* read-only */
	/* straddles the end of the buffer into the read-only range: first part lands */
	CHECK_EQ(ntb_dma_memcpy(ch, 0, BUF_OFF + BUF_LEN - 16, pat, 32, 0, &ck), 0);
	memset(w->shadow + BUF_LEN - 16, 0xee, 16);
	CHECK_EQ(ntb_dma_memcpy(ch, 0, w->size - 4, pat, 64, 0, &ck), 0);	/* beyond */
	CHECK_EQ(ntb_dma_memcpy(ch, 0, w->size + 4096, pat, 64, 0, &ck), 0);	/* beyond */
	ntb_dma_submit(ch);
	ntb_dma_run(ch, 0);
	CHECK_EQ(ntb_dma_completed(ch), ck);	/* faulted descriptors still complete */
	ntb_dma_chan_stats(ch, &st);
	CHECK_EQ(st.faults, 5);
	ntb_get_stats(w->b, &sb1);
	CHECK_EQ(sb1.iommu_faults, sb0.iommu_faults + 5);
	for (uint64_t i = 0; i < RO_LEN; i++)
		if (w->ro[i] != 0x5a) {
			CHECK(!"read-only memory written");
			break;
		}
	CHECK(!buf_mismatch(w));

	/* unmapped while in use: later writes fault, earlier ones landed */
	{
		struct ntb_iommu_map m = { .iova = w->iova + RO_OFF, .len = RO_LEN,
					   .perm = NTB_IOMMU_READ | NTB_IOMMU_WRITE, .fd = -1,
					   .pid = getpid(), .va = (uintptr_t)w->ro };

		CHECK_EQ(ntb_iommu_unmap(w->b, w->iova + RO_OFF, RO_LEN), 0);
		CHECK_EQ(ntb_iommu_map(w->b, &m), 0);	/* now writable */
		CHECK_EQ(ntb_dma_memcpy(ch, 0, RO_OFF, pat, 16, 0, &ck), 0);
		ntb_dma_submit(ch);
		ntb_dma_run(ch, 0);
		CHECK_EQ(w->ro[0], 0xee);
		CHECK_EQ(w->ro[16], 0x5a);
		CHECK_EQ(ntb_iommu_unmap(w->b, w->iova + RO_OFF, RO_LEN + 4096), -ENOENT);
		CHECK_EQ(ntb_iommu_unmap(w->b, w->iova + RO_OFF, RO_LEN), 0);
		CHECK_EQ(ntb_dma_memcpy(ch, 0, RO_OFF + 32, pat, 16, 0, &ck), 0);
		ntb_dma_submit(ch);
		ntb_dma_run(ch, 0);
		CHECK_EQ(w->ro[32], 0x5a);
		ntb_dma_chan_stats(ch, &st);
		CHECK_EQ(st.faults, 6);
	}
	ntb_dma_chan_close(ch);
}

static bool b_has_db(void *arg)
{
	return ntb_db_read(dv[1]) & *(uint64_t *)arg;
}

/* Signal after data: when the doorbell is seen, the data is there. PIO into the object. */
static void test_signal_pio(struct win *w)
{
	struct ntb_dma_chan *ch;
	struct ntb_stats sa0, sa1;
	uint64_t bit = 1ull << (64 - __builtin_clzll(ntb_db_valid_mask(w->a)) - 1);
	uint8_t data[1000];
	ntb_dma_cookie_t ck;
	void *pio;
	uint64_t psize;

	ntb_get_stats(w->a, &sa0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i ^ 0x3c);
	CHECK_EQ(ntb_dma_chan_open(w->a, NULL, &ch), 0);
	CHECK_EQ(ntb_dma_memcpy(ch, 0, OBJ_OFF + 100, data, sizeof(data), 0, &ck), 0);
	CHECK_EQ(ntb_dma_signal(ch, bit, 0, &ck), 0);
	CHECK_EQ(ntb_dma_signal(ch, 0, 0, &ck), -EINVAL);
	ntb_dma_submit(ch);
	CHECK(ntbt_pump(dv, 2, b_has_db, &bit, 5000));
	CHECK(!memcmp(w->obj + 100, data, sizeof(data)));
	CHECK_EQ(ntb_db_clear(w->b, bit), 0);
	CHECK_EQ(ntb_dma_wait(ch, ck, 5000), 0);
	ntb_dma_chan_close(ch);

	/* PIO: stores through the window land in B's object; process memory is not mapped */
	CHECK_EQ(ntb_peer_mw_map(w->a, 0, &pio, &psize), 0);
	CHECK_EQ(psize, w->size);
	memcpy((uint8_t *)pio + OBJ_OFF + 5000, data, sizeof(data));
	ntb_pio_wmb();
	CHECK(!memcmp(w->obj + 5000, data, sizeof(data)));
	{
		unsigned char vec;

		/* PROT_NONE reservation: nothing resident behind the DMA-only part */
		CHECK_EQ(mincore((uint8_t *)pio + BUF_OFF, 4096, &vec), 0);
		CHECK_EQ(vec & 1, 0);
	}
	CHECK_EQ(ntb_peer_mw_unmap(w->a, 0), 0);

	/* one range of the window, for a client to map: the object behind it */
	{
		int fd;
		uint64_t fdoff;
		uint8_t *p;

		CHECK_EQ(ntb_peer_mw_range_fd(w->a, 0, OBJ_OFF + 8192, 8192, &fd, &fdoff), 0);
		p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, fdoff);
		CHECK(p != MAP_FAILED);
		if (p != MAP_FAILED) {
			memcpy(p + 10, data, 100);
			CHECK(!memcmp(w->obj + 8192 + 10, data, 100));
			munmap(p, 8192);
		}
		close(fd);
		CHECK_EQ(ntb_peer_mw_range_fd(w->a, 0, BUF_OFF, 4096, &fd, &fdoff), -ENXIO);
		CHECK_EQ(ntb_peer_mw_range_fd(w->a, 0, HOLE_OFF, 4096, &fd, &fdoff), -ENXIO);
		CHECK_EQ(ntb_peer_mw_range_fd(w->a, 0, OBJ_LEN - 4096, 8192, &fd, &fdoff), -ENXIO);
		CHECK_EQ(ntb_peer_mw_range_fd(w->a, 0, 100, 4096, &fd, &fdoff), -EINVAL);
	}
	ntb_get_stats(w->a, &sa1);
	CHECK_EQ(sa1.xlink_reads, sa0.xlink_reads);	/* all of that: no reads across */
}

/* A DMA read is a read across the link: it works, and it is counted. */
static void test_read(struct win *w)
{
	struct ntb_dma_chan *ch;
	struct ntb_stats sa0, sa1;
	uint8_t got[3000];
	ntb_dma_cookie_t ck;

	ntb_get_stats(w->a, &sa0);
	CHECK_EQ(ntb_dma_chan_open(w->a, NULL, &ch), 0);
	CHECK_EQ(ntb_dma_read(ch, got, 0, BUF_OFF + 12345, sizeof(got), 0, &ck), 0);
	ntb_dma_submit(ch);
	CHECK_EQ(ntb_dma_wait(ch, ck, 5000), 0);
	CHECK(!memcmp(got, w->shadow + 12345, sizeof(got)));
	ntb_dma_chan_close(ch);
	ntb_get_stats(w->a, &sa1);
	CHECK_EQ(sa1.xlink_reads, sa0.xlink_reads + 1);
}

/* A client process attached through a grant writes, rings, maps; control is refused. */
static void test_grant(struct win *w)
{
	struct ntb_grant g = { .peer_db_bits = 2, .peer_mw_mask = 1, .flags = NTB_GRANT_DMA };
	int nv = ntb_db_vector_count(w->a);
	uint64_t mine = 0;
	uint32_t gid;
	int fd, status;
	pid_t kid;
	uint64_t bit = 2;

	/* a whole doorbell vector of A for the client, if A has one to spare */
	for (int v = nv - 1; v > 0 && !mine; v--)
		mine = ntb_db_vector_mask(w->a, v);
	g.db_bits = mine;
	/* grants are whole vectors: part of a multi-bit vector is refused */
	for (int v = 0; v < nv; v++) {
		uint64_t m = ntb_db_vector_mask(w->a, v);

		if (__builtin_popcountll(m) >= 2) {
			CHECK_EQ(ntb_grant_export(w->a, &(struct ntb_grant){ .db_bits = m & -m },
						  NULL), -EINVAL);
			break;
		}
	}

	CHECK_EQ(ntb_grant_export(w->a, &(struct ntb_grant){ .db_bits = 1ull << 63 }, &gid),
		 -EINVAL);
	fd = ntb_grant_export(w->a, &g, &gid);
	CHECK(fd >= 0);
	kid = fork();
	if (kid == 0) {
		struct ntb_dev *c;
		struct ntb_dma_chan *ch;
		ntb_dma_cookie_t ck;
		static uint8_t data[200000];
		void *pio;
		uint64_t psize;
		int bad = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (ntb_client_attach(fd, &c))
			_exit(10);
		bad |= ntb_is_owner(c) << 1;
		bad |= (ntb_spad_write(c, 0, 1) != -EPERM) << 2;
		bad |= (ntb_peer_db_set(c, 1) != -EPERM) << 3;
		{
			int rfd;
			uint64_t roff;

			bad |= (ntb_peer_mw_range_fd(c, 0, 0, 4096, &rfd, &roff) != -EPERM) << 3;
		}
		bad |= (ntb_link_is_up(c, NULL, NULL) != 1) << 4;
		if (mine) {
			/* our doorbell vector: B rings it after the fork */
			struct pollfd pfd = { .fd = ntb_event_fd(c), .events = POLLIN };

			bad |= (poll(&pfd, 1, 5000) != 1 || !(ntb_events(c) & NTB_EVENT_DB) ||
				ntb_db_read(c) != mine || ntb_db_clear(c, mine) ||
				ntb_db_read(c) != 0 || ntb_db_clear(c, 1) != -EPERM) << 7;
		}
		for (size_t i = 0; i < sizeof(data); i++)
			data[i] = (uint8_t)(i * 13 + 5);
		if (ntb_dma_chan_open(c, NULL, &ch))
			_exit(11);
		ntb_dma_memcpy(ch, 0, BUF_OFF + 777, data, sizeof(data), 0, &ck);
		ntb_dma_signal(ch, 2, 0, &ck);
		ntb_dma_submit(ch);
		bad |= (ntb_dma_wait(ch, ck, 5000) != 0) << 5;
		ntb_dma_chan_close(ch);
		bad |= (ntb_peer_mw_map(c, 0, &pio, &psize) != 0) << 6;
		if (!(bad & (1 << 6)))
			memcpy((uint8_t *)pio + OBJ_OFF + 9000, data, 100);
		ntb_dev_close(c);
		_exit(bad);
	}
	close(fd);
	if (mine) {
		CHECK_EQ(ntb_peer_db_set(w->b, mine), 0);
		CHECK_EQ(ntb_db_read(w->a) & mine, 0);	/* the owner no longer sees it */
		CHECK_EQ(ntb_db_clear(w->a, mine), -EPERM);
		CHECK_EQ(ntb_grant_export(w->a, &g, NULL), -EBUSY);	/* given already */
	}
	CHECK_EQ(waitpid(kid, &status, 0), kid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	for (size_t i = 0; i < 200000; i++)
		w->shadow[777 + i] = (uint8_t)(i * 13 + 5);
	CHECK(ntbt_pump(dv, 2, b_has_db, &bit, 5000));
	CHECK_EQ(ntb_db_clear(w->b, bit), 0);
	CHECK(!buf_mismatch(w));
	for (int i = 0; i < 100; i++)
		if (w->obj[9000 + i] != (uint8_t)(i * 13 + 5)) {
			CHECK(!"PIO from the client");
			break;
		}
	ntb_grant_revoke(w->a, gid);
	if (mine) {	/* back to the owner */
		CHECK_EQ(ntb_peer_db_set(w->b, mine), 0);
		CHECK_EQ(ntb_db_read(w->a) & mine, mine);
		CHECK_EQ(ntb_db_clear(w->a, mine), 0);
	}
}

/* The peer goes away: posting says so, queued writes are dropped and counted. */
static void test_link_down(struct win *w)
{
	struct ntb_dma_chan_attr at = { .flags = NTB_DMA_CHAN_MANUAL };
	struct ntb_dma_chan *ch;
	struct ntb_dma_stats st;
	struct ntb_dev *one[1] = { w->a };
	uint8_t x = 1;
	ntb_dma_cookie_t ck;

	CHECK_EQ(ntb_dma_chan_open(w->a, &at, &ch), 0);
	CHECK_EQ(ntb_dma_memcpy(ch, 0, BUF_OFF, &x, 1, 0, &ck), 0);
	ntb_dma_submit(ch);
	ntb_dev_close(w->b);
	w->b = NULL;
	for (uint64_t end = ntbt_now_ms() + 5000;
	     ntb_link_is_up(w->a, NULL, NULL) && ntbt_now_ms() < end;)
		ntbt_pump(one, 1, NULL, NULL, 20);
	CHECK_EQ(ntb_link_is_up(w->a, NULL, NULL), 0);
	ntb_dma_run(ch, 0);
	ntb_dma_chan_stats(ch, &st);
	CHECK_EQ(st.dropped_link, 1);
	CHECK_EQ(w->buf[0], w->shadow[0]);
	CHECK_EQ(ntb_dma_memcpy(ch, 0, BUF_OFF, &x, 1, 0, &ck), -ENOTCONN);
	ntb_dma_chan_close(ch);
}

int main(int argc, char **argv)
{
	static const char *profiles[] = { "intel-gen1", "intel-gen3", "intel-gen4", "amd",
					  "idt", "switchtec", "epf" };

	for (size_t p = 0; p < sizeof(profiles) / sizeof(profiles[0]); p++) {
		struct win w = { 0 };

		if (argc > 1 && strcmp(argv[1], profiles[p]))
			continue;
		fprintf(stderr, "# dma on %s\n", profiles[p]);
		setup(profiles[p], &w);
		test_copies(&w, 0);
		test_copies(&w, NTB_DMA_CHAN_MANUAL);
		test_batching(&w);
		test_faults(&w);
		test_signal_pio(&w);
		test_read(&w);
		test_grant(&w);
		test_link_down(&w);
		teardown(&w);
	}
	return ntbt_done();
}
