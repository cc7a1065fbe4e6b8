/* SPDX-License-Identifier: MIT */
/*
 * Window tables: the registered address space of one side of a connection, as a sorted array
 * of non-overlapping windows. Each endpoint has two: its own windows (local: address, MR,
 * local key) and the peer's, mirrored from the peer's REGISTER messages (remote: the peer's
 * address and remote key). Pure code, no verbs: unit-tested in tests/scif and fuzzed with the
 * wire parser.
 *
 * Offsets follow MPSS 3 (docs/scif.md "Registered address space"): SCIF_MAP_FIXED offsets lie
 * in [0, 2^62), offsets the implementation picks in [2^62, 2^63), so the two never collide.
 */
#ifndef SCIF_WINDOW_H
#define SCIF_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#define SCIF_PAGE_SIZE		4096ull
#define SCIF_FIXED_END		(1ull << 62)	/* SCIF_MAP_FIXED offsets lie below */
#define SCIF_AUTO_END		(1ull << 63)	/* automatic offsets: [SCIF_FIXED_END, here) */

/* Window states. */
enum {
	SCIF_WIN_LIVE = 0,	/* usable */
	SCIF_WIN_DEAD = 1,	/* being unregistered or still referenced: blocks its offsets only */
	SCIF_WIN_PENDING = 2,	/* being registered */
};

struct scif_win {
	uint64_t off;		/* first byte in the registered address space */
	uint64_t len;		/* bytes, a multiple of SCIF_PAGE_SIZE */
	uint64_t addr;		/* local: our address; remote: what the peer's key names */
	uint32_t key;		/* local: lkey; remote: rkey */
	uint32_t prot;		/* SCIF_PROT_READ | SCIF_PROT_WRITE */
	uint32_t state;		/* SCIF_WIN_* */
	uint32_t maps;		/* remote scif_mmap()s of it (local windows only) */
	void *mr;		/* local: its struct ibv_mr; remote: unused */
};

struct scif_wintab {
	struct scif_win *w;	/* sorted by off */
	size_t n, cap;
};

/* One contiguous piece of a range: [off, off + len) lies in window w. */
struct scif_span {
	const struct scif_win *w;
	uint64_t off, len;
};

void scif_wintab_init(struct scif_wintab *t);
void scif_wintab_free(struct scif_wintab *t);

/* Index of the window holding byte off, or -1. */
long scif_wintab_find(const struct scif_wintab *t, uint64_t off);

/*
 * Check a window for insertion: off and len page multiples, len > 0, no wrap past
 * SCIF_AUTO_END (-EINVAL), no overlap with any window, dead or live (-EADDRINUSE).
 */
int scif_wintab_check(const struct scif_wintab *t, uint64_t off, uint64_t len);
int scif_wintab_insert(struct scif_wintab *t, const struct scif_win *w);

/* A free automatic offset for len bytes: first fit from SCIF_FIXED_END (-ENOMEM when full). */
int scif_wintab_alloc(const struct scif_wintab *t, uint64_t len, uint64_t *off);

/*
 * Resolve [off, off + len) to live windows contiguous in offset space that all allow prot.
 * Fills at most max spans, in order; returns their number, -ENXIO (a byte not in a live
 * window, or off + len wraps), -EPERM (a window lacks prot) or -E2BIG (more than max).
 * Each span is cut at its window's end.
 */
int scif_wintab_resolve(const struct scif_wintab *t, uint64_t off, uint64_t len, uint32_t prot,
			struct scif_span *spans, int max);

/*
 * The windows scif_unregister(off, len) closes: those wholly inside the range. Returns 0 with
 * *first and *count set; -EINVAL if a window straddles either edge; -ENXIO unless the range is
 * exactly covered by contiguous live windows (MPSS 3's rule, docs/scif.md).
 */
int scif_wintab_whole(const struct scif_wintab *t, uint64_t off, uint64_t len, size_t *first,
		      size_t *count);

/* Remove count windows from index first. */
void scif_wintab_remove(struct scif_wintab *t, size_t first, size_t count);

#endif
