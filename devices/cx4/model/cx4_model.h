/* SPDX-License-Identifier: MIT */
/*
 * The ConnectX-4 device model: the `model` backend of the bus (devices/cx4/bus/cx4_bus.h).
 *
 * cx4_model_open() builds one modelled PCI function with one Ethernet port that speaks RoCE v2
 * on the IPv4 address it is given, and returns its bus. From then on a driver reaches the
 * device only through that bus: BAR0 loads and stores with the cx4_mmio_* accessors, memory it
 * maps for DMA with bus->ops->dma_map, and the interrupt eventfds bus->irq_fd[]. What the model
 * implements, and where it differs from a real card, is documented in docs/cx4-model.md.
 *
 * BAR0 is a memfd (bus->bar0_fd, 32 MB as on the card: cmd_hca_cap.uar_sz = 5), so a client
 * process can mmap the UAR pages cx4d allocates for it: UAR page n is at offset n * 4096. The
 * client also needs the kick (bus->kick_page_fd, 4 KB, and bus->kick.efd) to wake the model
 * after its doorbells. All three descriptors are close-on-exec; pass dups with SCM_RIGHTS.
 */
#ifndef CX4_MODEL_H
#define CX4_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cx4_bus.h"

/* Which firmware/board the model presents (docs/cx4-model.md, "Identity and capabilities"). */
enum cx4_model_profile {
	/* ConnectX-4 (PCI 0x1013), FW 12.16.1020, PSID MT_2180110032: Snabb's benchmark card. */
	CX4_MODEL_CX4 = 0,
	/* ConnectX-4 Lx (PCI 0x1015), FW 14.12.1220, PSID MT_2430110027: the Linux trace card. */
	CX4_MODEL_CX4LX = 1,
};

struct cx4_model_config {
	/* Name used in log lines and the command trace prefix; NULL = "cx4model". */
	const char *name;
	enum cx4_model_profile profile;
	/* The port's IPv4 address, network byte order (required; loopback addresses are fine). */
	uint32_t ipv4;
	/* UDP port the port listens on and sends to; 0 = 4791 (IANA RoCE v2). */
	uint16_t udp_port;
	/* Port MAC (RoCE address table default, pcap); all zero = 02:00:<IPv4 address>. */
	uint8_t mac[6];
	/*
	 * Port MTU in bytes (the Ethernet MTU of the link, as PMTU.oper_mtu); 0 = 4200, which
	 * carries RoCE path MTU 4096. A QP whose path MTU does not fit the port's is accepted, as
	 * on the card, but its oversized packets are dropped by the network (EMSGSIZE).
	 */
	uint32_t mtu;
	/* Capture every packet sent and received to this pcap file; NULL = off. */
	const char *pcap_path;
	/*
	 * Print every command, input and output, in Linux mlx5_core's dump_command() hexdump
	 * format (devices/cx4/trace) to this stream; NULL = off. trace_flags: enum
	 * cx4_trace_flags of devices/cx4/trace/cmd_trace.h.
	 */
	FILE *cmd_trace;
	unsigned int trace_flags;
	/* Log device-side errors (DMA faults, dropped packets, error CQEs) to this stream. */
	FILE *log;
	/* MSI-X vectors (eventfds); 0 = 16, at most CX4_BUS_MAX_VECTORS. */
	unsigned int num_vectors;
	/* How long the engine thread polls for work before it sleeps, in us; 0 = 50. */
	unsigned int spin_us;
	/*
	 * Run the engine thread at this SCHED_FIFO priority (1..99; 0 = normal scheduling). A
	 * card does not wait for a CPU; a model thread does, and on a machine with fewer cores
	 * than busy-polling threads (perftest, the pingpongs) a woken engine can wait a whole
	 * time slice. The engine polls at most spin_us before it blocks, so it never holds a CPU
	 * for long. Needs CAP_SYS_NICE; without it the engine runs normally (logged).
	 */
	unsigned int rt_priority;
	/* Firmware pages asked for by QUERY_PAGES boot / init; 0 = 6 / 48 (see docs). */
	unsigned int boot_pages;
	unsigned int init_pages;
	/* UDP source ports (sockets) used for per-QP entropy; 0 = 8, at most 64. */
	unsigned int src_ports;
	/*
	 * A direct-attach cable to another modelled port of this host: the directory (created
	 * if missing) that both ends' configurations name. Frames to the other end's address go
	 * through shared memory instead of the host's UDP stack; everything else, and all
	 * traffic while the other end is not up, still goes by UDP. NULL = no cable.
	 */
	const char *cable_dir;
	/*
	 * A Unix socket (SOCK_SEQPACKET, mode 0600, created; removed at close) where the model
	 * serves its controls outside the function to tests and tools: `bvctl model DEV ...`
	 * (docs/cx4-model.md, "Controls outside the function"). NULL = none.
	 */
	const char *ctl_path;
};

/*
 * Create and start the device. The device comes up as after power-on: the init segment
 * reports "initializing" for a few milliseconds, then waits for a driver. Returns 0 and the
 * bus, or -errno (EINVAL for a bad config, EADDRINUSE if the address/port is taken...).
 * bus->ops->close() stops the device and frees everything, including the bus.
 */
int cx4_model_open(const struct cx4_model_config *cfg, struct cx4_bus **bus);

/*
 * The controls outside the PCI function (pulling the cable, failing the function, counters of
 * the model itself, network impairment) are not here: tests and tools reach them through
 * cx4_model_ctl.h, or through the control socket (cfg.ctl_path, `bvctl model`), never
 * driver code.
 */

#endif /* CX4_MODEL_H */
