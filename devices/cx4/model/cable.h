/* SPDX-License-Identifier: MIT */
/*
 * The shared-memory format of a direct-attach cable between two modelled ports (cable.c):
 * what one end's engine and the other's agree on. Each end owns a receive ring, the file
 * <dir>/end-<IPv4 address, 8 hex digits>: a struct cable_ring page, then CABLE_RING_SIZE bytes
 * of records, and a FIFO <dir>/wake-<address> it sleeps on.
 *
 * A record is struct cable_rec followed by `len` bytes of UDP payload (the RoCE packet from
 * its BTH to its ICRC, which is computed with the record's IPv4 fields), padded to 64 bytes;
 * a record never crosses the ring's end: CABLE_WRAP in len says "go on at offset 0".
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

#define CABLE_MAGIC 0x43424c31u	   /* "CBL1" */
#define CABLE_RING_SIZE (4u << 20) /* record bytes per direction, as a socket buffer */
#define CABLE_MAX_PKT 8192	   /* UDP payload of one packet (path MTU <= 4096) */
#define CABLE_WRAP 0xffffffffu	   /* record length: go on at the ring's start */
#define CABLE_HDR 4096		   /* struct cable_ring, padded to a page */
#define CABLE_MAP (CABLE_HDR + CABLE_RING_SIZE)

struct cable_ring {
	uint32_t magic;
	uint32_t size;			   /* record bytes, CABLE_RING_SIZE */
	uint32_t owner;			   /* the receiving port's IPv4 address (network order) */
	_Atomic uint32_t alive;		   /* 0 once the owner closed it: producers let go */
	alignas(64) _Atomic uint64_t prod; /* bytes produced, written by the other end */
	_Atomic uint32_t tx_waiting;	   /* the other end found no room */
	alignas(64) _Atomic uint64_t cons; /* bytes given back, written by the owner */
	_Atomic uint32_t rx_sleeping;	   /* the owner is about to block */
};

struct cable_rec {
	uint32_t len;	/* UDP payload bytes, or CABLE_WRAP */
	uint32_t saddr; /* the sender's IPv4 header: address, UDP source port, ID, TOS, TTL */
	uint16_t sport;
	uint16_t ip_id;
	uint8_t tos, ttl;
	uint16_t rsvd;
};

static inline uint32_t cable_rec_space(uint32_t len)
{
	return (uint32_t)((sizeof(struct cable_rec) + len + 63) & ~(uint32_t)63);
}

#endif
