/* SPDX-License-Identifier: MIT */
/*
 * The message ring's arithmetic (docs/scif.md "Messaging"). Each direction of a connection has
 * one ring of size bytes (a power of two) in the receiver's memory; the sender writes bytes
 * into it with RDMA WRITE and then its producer count, the receiver copies them out and gives
 * the space back by writing its consumer count into the sender's memory (credits). Counts are
 * 64-bit byte counts that never wrap in practice (2^64 bytes).
 *
 * What the peer writes is checked before use: a producer count may only move forward and never
 * beyond the space we gave, a consumer count only forward and never beyond what we produced.
 * Pure code, unit-tested and fuzzed.
 */
#ifndef SCIF_RING_H
#define SCIF_RING_H

#include <stdbool.h>
#include <stdint.h>

struct scif_ring_pos {
	uint64_t prod;		/* bytes produced into the ring */
	uint64_t cons;		/* bytes consumed out of it */
	uint32_t size;		/* bytes, a power of two */
};

static inline uint64_t scif_ring_used(const struct scif_ring_pos *r)
{
	return r->prod - r->cons;
}

static inline uint64_t scif_ring_space(const struct scif_ring_pos *r)
{
	return r->size - (r->prod - r->cons);
}

/* Offset of count c in the ring and the bytes up to the ring's end from there. */
static inline uint32_t scif_ring_off(const struct scif_ring_pos *r, uint64_t c)
{
	return (uint32_t)(c & (r->size - 1));
}

static inline uint32_t scif_ring_to_end(const struct scif_ring_pos *r, uint64_t c)
{
	return r->size - scif_ring_off(r, c);
}

/* A ring size we accept from a peer: a power of two in [4 KiB, 16 MiB]. */
static inline bool scif_ring_size_ok(uint64_t size)
{
	return size >= 4096 && size <= (16u << 20) && !(size & (size - 1));
}

/* A producer count the peer published, seen by the consumer (r->cons is ours). */
static inline bool scif_ring_prod_ok(const struct scif_ring_pos *r, uint64_t prod)
{
	return prod >= r->prod && prod - r->cons <= r->size;
}

/* A consumer count the peer returned, seen by the producer (r->prod is ours). */
static inline bool scif_ring_cons_ok(const struct scif_ring_pos *r, uint64_t cons)
{
	return cons >= r->cons && cons <= r->prod;
}

/*
 * Split a transfer of len bytes starting at count c into at most two contiguous pieces
 * (before and after the ring's end). Returns the number of pieces.
 */
static inline int scif_ring_split(const struct scif_ring_pos *r, uint64_t c, uint32_t len,
				  uint32_t off[2], uint32_t n[2])
{
	uint32_t first = scif_ring_to_end(r, c);

	off[0] = scif_ring_off(r, c);
	if (len <= first) {
		n[0] = len;
		return len ? 1 : 0;
	}
	n[0] = first;
	off[1] = 0;
	n[1] = len - first;
	return 2;
}

#endif
