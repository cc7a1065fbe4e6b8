/* SPDX-License-Identifier: MIT */
/*
 * The shared-memory format of a direct-attach cable between two modelled ports (cable.c):
 * what one end's engine and the other's agree on. Each end owns a receive ring, the file
 * <dir>/end-<IPv4 address, 8 hex digits>: a struct cable_ring page, then CABLE_RING_SIZE bytes
 * of records, and a FIFO <dir>/wake-<address> it sleeps on.
 *
 * A record is struct cable_rec followed by `len` bytes of Ethernet frame (roce_eth.h: RoCE v2
 * over IPv4 or IPv6, or RoCE v1), padded to 64 bytes; a record never crosses the ring's end:
 * CABLE_WRAP in len says "go on at offset 0". The frame is what a wire would carry: the other
 * end's MAC filter, parser and ICRC check see it as from a cable.
 * Positions are free-running byte counts: the other end writes records, then stores prod
 * (release); this end reads them and stores cons (release) once nothing points into them.
 *
 * Wake-ups: a producer that published while rx_sleeping is set writes a byte to the owner's
 * FIFO; a producer that found no room sets tx_waiting, and the owner, after storing cons,
 * clears it and writes a byte to the producer's FIFO. Each side sets its flag, then looks once
 * more (seq_cst fences on both sides), so neither wake-up is lost.
 */
#ifndef CX4_MODEL_CABLE_H
#define CX4_MODEL_CABLE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#define CABLE_MAGIC 0x43424c32u	   /* "CBL2": Ethernet frames ("CBL1" carried UDP payloads) */
#define CABLE_RING_SIZE (4u << 20) /* record bytes per direction, as a socket buffer */
#define CABLE_MAX_PKT 8192	   /* one frame (path MTU <= 4096) */
#define CABLE_WRAP 0xffffffffu	   /* record length: go on at the ring's start */
#define CABLE_HDR 4096		   /* struct cable_ring, padded to a page */
#define CABLE_MAP (CABLE_HDR + CABLE_RING_SIZE)

struct cable_ring {
	uint32_t magic;
	uint32_t size;			   /* record bytes, CABLE_RING_SIZE */
	uint32_t owner;			   /* the receiving port's IPv4 address (network order) */
	_Atomic uint32_t alive;		   /* 0 once the owner closed it: producers let go */
	uint8_t owner_mac[6];		   /* its MAC: frames to it go through the cable */
	alignas(64) _Atomic uint64_t prod; /* bytes produced, written by the other end */
	_Atomic uint32_t tx_waiting;	   /* the other end found no room */
	alignas(64) _Atomic uint64_t cons; /* bytes given back, written by the owner */
	_Atomic uint32_t rx_sleeping;	   /* the owner is about to block */
};

struct cable_rec {
	uint32_t len; /* frame bytes, or CABLE_WRAP */
	uint32_t rsvd;
};

static inline uint32_t cable_rec_space(uint32_t len)
{
	return (uint32_t)((sizeof(struct cable_rec) + len + 63) & ~(uint32_t)63);
}

#endif
