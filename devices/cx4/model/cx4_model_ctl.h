/* SPDX-License-Identifier: MIT */
/*
 * The ConnectX-4 model's controls outside the PCI function: what a test or a tool does to the
 * card, the cable or the network around it, and the model's own counters. No driver code may
 * include this (tests/boundary_check.sh fails the build's tests if cx4d or a provider does): a
 * driver sees the effect the way it would on a card, through events and registers. The same
 * controls are served on the model's control socket (cx4_model_config.ctl_path) for processes
 * that do not hold the bus: `bvctl model DEV cable pull`.
 */
#ifndef CX4_MODEL_CTL_H
#define CX4_MODEL_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include "cx4_model.h"

/* Pull or plug the cable: the port goes down/up with a PORT_CHANGE event. */
int cx4_model_set_link(struct cx4_bus *bus, bool up);

/* Device-side counters (what a card would count in its PPCNT / Q counters). */
struct cx4_model_stats {
	uint64_t cmds;		    /* commands executed */
	uint64_t tx_pkts, tx_bytes; /* RoCE packets sent (UDP payload bytes) */
	uint64_t tx_dropped;	    /* not sent: port down or RoCE disabled */
	uint64_t rx_pkts, rx_bytes;
	uint64_t rx_drop_icrc; /* dropped: ICRC or framing error */
	uint64_t rx_drop_qp;   /* dropped: no such QP / wrong state / bad PSN or opcode */
	uint64_t retransmits;  /* requester packets sent again (timeout, NAK, RNR) */
	uint64_t retry_timeouts; /* of those: the local ACK timer expired (the rest answer a NAK,
				  * an implied NAK or the end of an RNR wait) */
	uint64_t naks_sent, rnr_naks_sent;
	uint64_t dma_faults; /* DMA to an unmapped or forbidden IOVA */
	uint64_t eqes, interrupts;
	uint64_t wakeups;      /* engine went to sleep and was woken */
	uint64_t waiter_wakes; /* futex wakes of drivers waiting for a pass (cx4_wait_end) */
	/* cx4_model_rx_fault: packets dropped, duplicated, delivered late */
	uint64_t rx_fault_dropped, rx_fault_duplicated, rx_fault_delayed;
	/* frames that went over the direct-attach cable (cable_dir), counted in tx/rx_pkts too */
	uint64_t cable_tx_pkts, cable_rx_pkts;
	uint64_t cable_tx_full; /* times the other end's ring had no room (we waited) */
	uint64_t loop_pkts;	/* packets to our own GIDs, through the device's loopback */
	uint64_t raw_tx_pkts, raw_rx_pkts; /* RoCE v1 frames on the net device (AF_PACKET) */
	uint64_t udp6_tx_pkts, udp6_rx_pkts; /* RoCE v2 over IPv6 through UDP sockets */
	uint32_t cable_peer;	/* state, not a count: the other end's IPv4 address, 0 = none */
};

int cx4_model_get_stats(struct cx4_bus *bus, struct cx4_model_stats *st);

/*
 * Fail the function under its driver, as a card fails:
 *   CX4_MODEL_FAIL_DISABLE   the NIC interface goes to "disabled" (init segment 0x14): the
 *                            device forgets every object and answers no command;
 *   CX4_MODEL_FAIL_FIRMWARE  a firmware fatal error: health syndrome FW_ERR with "recovery
 *                            flow required", the heartbeat stops.
 * Nothing tells the driver: its health sensor has to find out. 0 or -EINVAL.
 */
enum cx4_model_failure {
	CX4_MODEL_FAIL_DISABLE = 1,
	CX4_MODEL_FAIL_FIRMWARE = 2,
};

int cx4_model_fail(struct cx4_bus *bus, enum cx4_model_failure how);

/*
 * Drop the next `n` received RoCE packets on purpose (tests of retransmission: a card on a
 * lossy network). Only packets for QPs are counted, not stray datagrams.
 */
int cx4_model_drop_rx(struct cx4_bus *bus, unsigned int n);

/*
 * Receive-side network impairment (what a lossy, duplicating or reordering Ethernet fabric does
 * to a card's traffic), for tests of RC recovery ([IBTA] 9.7.5, 9.9). Off unless a rule is
 * installed: with no rules the receive path is unchanged. A rule matches received RoCE packets
 * addressed to a QP of this device whose BTH opcode is in [op_min, op_max] (e.g. 0x0D..0x10 =
 * RC READ responses; 0x00..0xFF = any) and, when qpn is not zero, whose destination QP is qpn.
 * The first `skip` matching packets pass; the next `count` are acted on; then the rule is
 * spent. A packet is acted on by the first rule that takes it.
 *   CX4_MODEL_FAULT_DROP   lose it;
 *   CX4_MODEL_FAULT_DUP    deliver it twice (the copy right after the original);
 *   CX4_MODEL_FAULT_DELAY  hold it and deliver it after `delay` later packets of this device
 *                          (reordering), or as soon as the receive side finds nothing new.
 * At most CX4_MODEL_FAULT_RULES rules; a NULL rule clears them all (and releases held packets
 * at the next receive). Returns 0, -EINVAL or -ENOSPC. Counted in the stats (rx_fault_*).
 */
enum cx4_model_fault_action {
	CX4_MODEL_FAULT_DROP = 1,
	CX4_MODEL_FAULT_DUP = 2,
	CX4_MODEL_FAULT_DELAY = 3,
};

#define CX4_MODEL_FAULT_RULES 8

struct cx4_model_fault {
	enum cx4_model_fault_action action;
	uint8_t op_min, op_max; /* BTH opcode range */
	uint32_t qpn;		/* destination QP; 0 = any */
	uint32_t skip;		/* matching packets let through first */
	uint32_t count;		/* matching packets acted on after those */
	uint32_t delay;		/* DELAY: later packets that overtake it (1..64) */
};

int cx4_model_rx_fault(struct cx4_bus *bus, const struct cx4_model_fault *rule);

/*
 * Stop the device's engine, as the host does to a modelled device it does not schedule (a
 * loaded machine) or as firmware that stalls: doorbells, commands and packets wait (the
 * kernel's socket buffers hold the packets), timers fire late. period_usec 0: once, for usec
 * from now; else usec of every period_usec from now on (a thread that gets a time slice of
 * period - usec in every period), until the next call. usec 0 ends it. For tests of the
 * transport's timers under load ([IBTA] 9.7.6.1.3). usec at most 10 s and, when periodic,
 * less than the period; 0 or -EINVAL.
 */
int cx4_model_stall(struct cx4_bus *bus, uint32_t usec, uint32_t period_usec);

/*
 * Every received RoCE packet costs the engine usec more before it is handled (the engine
 * sleeps): a device whose host gives its thread a small share of a CPU, or a slow build, where
 * a pass over a full receive batch takes longer than a local ACK timeout. 0 = off (the
 * default); at most 100 ms. 0 or -EINVAL.
 */
int cx4_model_rx_cost(struct cx4_bus *bus, uint32_t usec);

#endif /* CX4_MODEL_CTL_H */
