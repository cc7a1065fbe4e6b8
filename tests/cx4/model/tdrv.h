/* SPDX-License-Identifier: MIT */
/*
 * A minimal ConnectX-4 driver for the model's unit tests. It touches the device only the way
 * cx4d may: BAR0 loads/stores through the cx4_mmio accessors, memory it maps for DMA with
 * bus->ops->dma_map (memfd chunks, or this process's memory by pid+va), and the interrupt
 * eventfds. Everything a test checks is what a driver can observe.
 */
#ifndef CX4_TDRV_H
#define CX4_TDRV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cx4_bus.h"
#include "cx4_model_ctl.h" /* a test driver: it may pull the cable, read the model's counters */
#include "cx4_prm.h"

/* ---- test assertions -------------------------------------------------------------------- */
extern const char *t_name;
#define T_FAIL(...)                                                               \
	do {                                                                      \
		fprintf(stderr, "FAIL %s:%d (%s): ", __FILE__, __LINE__, t_name); \
		fprintf(stderr, __VA_ARGS__);                                     \
		fputc('\n', stderr);                                              \
		exit(1);                                                          \
	} while (0)
#define T_ASSERT(c)                       \
	do {                              \
		if (!(c))                 \
			T_FAIL("%s", #c); \
	} while (0)
#define T_EQ(a, b)                                                                           \
	do {                                                                                 \
		long long _a = (long long)(a), _b = (long long)(b);                          \
		if (_a != _b)                                                                \
			T_FAIL("%s == %s: 0x%llx != 0x%llx", #a, #b, (unsigned long long)_a, \
			       (unsigned long long)_b);                                      \
	} while (0)

/* ---- DMA memory ------------------------------------------------------------------------- */
struct tmem {
	int fd;
	uint8_t *p;
	size_t len;
	uint64_t iova;
	bool scattered; /* each 4 KB page mapped for DMA on its own, 8 KB of IOVA apart */
};

/* The IOVA of byte off of a DMA buffer (page by page when scattered). */
static inline uint64_t tmem_iova(const struct tmem *m, size_t off)
{
	return m->scattered ? m->iova + (off / 4096) * 8192 + off % 4096 : m->iova + off;
}

struct tdev;

/* A zeroed memfd chunk mapped for device DMA (read+write) at a fresh IOVA. */
int tmem_alloc(struct tdev *t, size_t len, struct tmem *m);
void tmem_free(struct tdev *t, struct tmem *m);
/* Map this process's memory [va, va+len) by pid (page-aligned), returns its IOVA or 0. */
uint64_t tmem_map_va(struct tdev *t, void *va, size_t len);

/* ---- the device ------------------------------------------------------------------------- */
#define TDEV_MBOX_BLOCKS 128

struct tdev {
	struct cx4_bus *bus;
	uint32_t ip; /* the port's IPv4, network order */
	struct cx4_mmio bar;
	uint64_t next_iova;
	struct tmem cmdq;
	struct tmem mbox_in, mbox_out; /* TDEV_MBOX_BLOCKS blocks each, 1 KB apart */
	uint8_t token;
	unsigned int slot;     /* command slot to use */
	struct tmem pages[64]; /* firmware pages, 64 per chunk */
	unsigned int npages_chunks;
	unsigned int pages_given;
	/* set after tdev_bringup */
	uint32_t uar;
	struct tmem eq_mem;
	uint32_t eqn; /* async + cmd + page request EQ */
	uint32_t eq_ci;
	/* events seen while draining the EQ after commands (tdev_eq_poll returns them first) */
	bool autodrain; /* drain the EQ after each command (set by bring-up) */
	uint8_t evq[64][64];
	unsigned int evq_head, evq_tail;
	/* last command */
	uint8_t deliv;
	uint32_t syndrome;
	bool quiet;
	bool atomic_mode1;	     /* bring-up sets atomic_req_8B_endianness_mode = 1 */
	bool scatter;		     /* DMA buffers as separate 4 KB mappings (tmem.scattered) */
	unsigned int cmd_timeout_ms; /* how long tdev_cmd waits for ownership; 0 = 10 s */
};

/* Open a model with cfg (a zero cfg gets a unique 127.x address) and map BAR0 accessors. */
int tdev_open(struct tdev *t, const struct cx4_model_config *cfg);
void tdev_close(struct tdev *t);
/* Unique loopback address for device k of this process (network order). */
uint32_t tdev_addr(unsigned int k);

/* Point the device at a command queue and wait for "initializing" to clear. */
int tdev_cmdif_init(struct tdev *t);

/*
 * Post a command in t->slot and wait for ownership to return (polling, up to cmd_timeout_ms).
 * Returns the command status (out byte 0) and sets t->syndrome, or -1 for a delivery error
 * (t->deliv) and -2 on timeout. `in`/`out` are the logical messages.
 */
int tdev_cmd(struct tdev *t, const void *in, uint32_t ilen, void *out, uint32_t olen);
/* Same with a hook that may corrupt the entry/mailboxes just before the doorbell. */
int tdev_cmd_hook(struct tdev *t, const void *in, uint32_t ilen, void *out, uint32_t olen,
		  void (*hook)(struct tdev *t, uint8_t *entry, void *ctx), void *ctx);

/* Convenience: a command with only a header (opcode, op_mod) and up to 2 words. */
int tdev_simple(struct tdev *t, uint16_t opcode, uint16_t op_mod, uint32_t w8, uint32_t wc,
		uint8_t *out16);

/* Give n firmware pages (MANAGE_PAGES give) from memfd chunks; returns the status. */
int tdev_give_pages(struct tdev *t, uint32_t n);
/* Linux order: ENABLE_HCA, QUERY/SET_ISSI, boot pages, HOST_ENDIANNESS, QUERY_HCA_CAP cur/max,
 * SET_HCA_CAP, init pages, INIT_HCA, then ALLOC_UAR, CREATE_EQ (cmd+async+pages), arm it. */
int tdev_bringup(struct tdev *t);
/* Enable RoCE on the vport and set RoCE address 0 to the port's IPv4 (v2). */
int tdev_roce_setup(struct tdev *t);
/* SET_ROCE_ADDRESS idx = gid (all zero: delete) with roce_version / l3_type and the source
 * MAC mac (NULL: none); returns the command status. */
int tdev_set_gid(struct tdev *t, uint32_t idx, const uint8_t gid[16], uint32_t version,
		 uint32_t l3_type, const uint8_t *mac);

/* Next EQE on the test EQ (consumes it, re-arms); returns type or -1 if none. */
int tdev_eq_poll(struct tdev *t, uint8_t *eqe64);
/* Wait up to ms for an interrupt on vector v; true if one came. */
bool tdev_wait_irq(struct tdev *t, unsigned int v, int ms);

/* Create an EQ/CQ with the given parameters; return status, number in *num. */
int tdev_create_eq(struct tdev *t, struct tmem *mem, uint32_t log_size, uint32_t intr,
		   uint64_t mask, uint32_t *eqn);
int tdev_create_cq(struct tdev *t, struct tmem *mem, struct tmem *dbr, uint32_t log_size,
		   uint32_t eqn, uint32_t *cqn);
/* With cqc.cqe_sz (0: 64 B, 1: 128 B) and cqc.cc (collapsed). */
int tdev_create_cq_ex(struct tdev *t, struct tmem *mem, struct tmem *dbr, uint32_t log_size,
		      uint32_t eqn, uint32_t cqe_sz, uint32_t cc, uint32_t *cqn);

/* A debugging aid for a test under construction: len bytes at p to stderr, 16 a line. */
void tdev_hexdump(const void *p, size_t len);

#endif /* CX4_TDRV_H */
