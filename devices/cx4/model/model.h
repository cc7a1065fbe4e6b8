/* SPDX-License-Identifier: MIT */
/*
 * Internal structures of the ConnectX-4 device model (not for driver code: drivers see only
 * devices/cx4/bus/cx4_bus.h). One `struct mdev` per modelled PCI function; everything the
 * device does runs in its engine thread (model.c), one pass at a time, under mdev.lock:
 *
 *   pass:  drain BAR0 posted writes (bar0.c) -> requester (req.c) and its packets, CQEs
 *          -> run rung commands (cmdif.c)
 *          -> receive a batch of packets (net.c) -> responder (resp.c) / completer (comp.c)
 *          -> requester (req.c) -> expired timers -> flush: DMA writes, CQEs, EQEs,
 *             interrupts, packets
 *
 * The bus operations (dma_map/unmap, reset, close) come from driver threads and take the same
 * lock, so the engine never sees a mapping disappear under a DMA.
 *
 * Source abbreviations in comments: see kernel-abi/cx4_prm_iseg.h ([PRM], [ifc], [dv]...);
 * [rxe] = Linux drivers/infiniband/sw/rxe, [IBTA] = InfiniBand Architecture Spec vol 1 rel 1.4.
 */
#ifndef CX4_MODEL_INT_H
#define CX4_MODEL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "bv_timer_heap.h"
#include "cable.h"
#include "cx4_bus.h"
#include "cx4_model_ctl.h"
#include <infiniband/mlx5dv.h>

#include "cx4_prm.h"
#include "packet_port.h"
#include "roce_eth.h"
#include "roce_pkt.h"
#include "udp_port.h"
#include "pcap.h"

struct mdev;
struct mqp;
struct mcq;
struct meq;
struct msrq;
struct mmkey;

/* ---- BAR0 geometry ------------------------------------------------------------------------ */
/* 32 MB: 2^uar_sz MB with uar_sz = 5 ([trace] cmd_hca_cap; a guess, docs/cx4-model.md). */
#define MDEV_BAR0_SIZE (32u << 20)
#define MDEV_UAR_PAGES (MDEV_BAR0_SIZE / CX4_UAR_PAGE_SIZE)
/* The [trace] FW hands out UAR 0x10 first: pages 0..15 hold the init segment. */
#define MDEV_UAR_FIRST 16
#define MDEV_LOG_CMDQ_SIZE 5   /* 32 entries: MLX5_MAX_COMMANDS, the most a driver accepts */
#define MDEV_LOG_CMDQ_STRIDE 6 /* 64 bytes each */

/* ---- time --------------------------------------------------------------------------------- */
uint64_t cx4m_mdev_now_ns(void);
/*
 * While the cable carries the traffic, the sockets (UDP, UDP/IPv6, the raw socket of RoCE v1)
 * are looked at once per this many ns of passes (and always before the engine sleeps, when
 * epoll watches them): a receive that finds nothing is a system call per socket on every
 * pass otherwise.
 */
#define NET_SOCK_LOOK_NS 20000ull

/* ---- timers (timer.c): a binary heap of deadlines, fired by the engine ------------------- */
struct mtimer {
	struct bv_theap_node node; /* when: CLOCK_MONOTONIC ns */
	void (*fn)(struct mdev *d, struct mtimer *t);
};

/* the heap (common/bv_timer_heap.h) of every armed timer of one device */
struct mtimer_heap {
	struct bv_theap heap;
};

void cx4m_mtimer_init(struct mtimer *t, void (*fn)(struct mdev *, struct mtimer *));
int cx4m_mtimer_arm(struct mtimer_heap *hp, struct mtimer *t, uint64_t when);
void cx4m_mtimer_cancel(struct mtimer_heap *hp, struct mtimer *t);
static inline bool mtimer_armed(const struct mtimer *t)
{
	return bv_theap_has(&t->node);
}
/* Earliest deadline, or UINT64_MAX. */
uint64_t cx4m_mtimer_next(const struct mtimer_heap *hp);
/* Fire every timer due at `now`; returns how many fired. */
int cx4m_mtimer_run(struct mdev *d, struct mtimer_heap *hp, uint64_t now);
void cx4m_mtimer_heap_free(struct mtimer_heap *hp);

/* ---- object number tables (idtab.c) ------------------------------------------------------ */
/* Two-level table of object pointers by number, numbers in [base, base + max). */
struct idtab {
	void ***l1; /* [max >> 10] chunks of 1024 pointers */
	uint32_t base, max, next, count;
};

int cx4m_idtab_init(struct idtab *t, uint32_t base, uint32_t max);
void cx4m_idtab_free(struct idtab *t);
/* Allocate a free number and store p there; returns the number, or UINT32_MAX when full. */
uint32_t cx4m_idtab_alloc(struct idtab *t, void *p);
void *cx4m_idtab_get(const struct idtab *t, uint32_t id);
void cx4m_idtab_remove(struct idtab *t, uint32_t id);
/* Call fn on every object (removal of the current one allowed). */
void cx4m_idtab_foreach(struct idtab *t, void (*fn)(void *obj, void *ctx), void *ctx);

/* ---- IOMMU and DMA (iommu.c) ------------------------------------------------------------- */
struct iommu_map {
	uint64_t iova, len;
	uint32_t perm; /* enum cx4_dma_perm */
	uint8_t *host; /* fd-backed: our mapping of the range */
	pid_t pid;     /* pid-backed: process and address */
	uint64_t va;
};

struct iommu {
	struct iommu_map *m; /* sorted by iova, non-overlapping */
	size_t n, cap;
	uint64_t gen; /* bumped on every unmap: cached pointers are stale */
};

/* One contiguous piece of a translated range: either our pointer or (pid, va). */
struct dseg {
	uint8_t *host;
	pid_t pid;
	uint64_t va;
	uint64_t len;
};

int cx4m_iommu_add(struct iommu *io, const struct cx4_dma_map *m);
int cx4m_iommu_del(struct iommu *io, uint64_t iova, uint64_t len);
void cx4m_iommu_clear(struct iommu *io);
/*
 * Translate [iova, iova + len) with permission perm into at most max segments (adjacent
 * pieces merged). Returns the number of segments, -EFAULT if part of the range is not mapped,
 * -EACCES if the mapping lacks perm, -E2BIG if more than max segments are needed.
 */
int cx4m_iommu_xlate(const struct iommu *io, uint64_t iova, uint64_t len, uint32_t perm,
		     struct dseg *seg, int max);

/* Synchronous device reads/writes of host memory by IOVA: 0 or -EFAULT/-EACCES. */
int cx4m_dma_read(struct mdev *d, uint64_t iova, void *dst, size_t len);
int cx4m_dma_write(struct mdev *d, uint64_t iova, const void *src, size_t len);
/* Our pointer to [iova, +len) when it is one fd-backed piece with perm; NULL otherwise. */
uint8_t *cx4m_dma_ptr(struct mdev *d, uint64_t iova, size_t len, uint32_t perm);
/* Copy between our memory and a segment list (pid segments through process_vm_*). */
int cx4m_dseg_read(const struct dseg *s, int n, void *dst);
int cx4m_dseg_write(const struct dseg *s, int n, const void *src);

/*
 * Batched remote-process copies: many (pid, va) <-> local pieces moved with one
 * process_vm_readv/writev per run of the same pid. Each op carries a tag; ops that fault are
 * reported through the callback with their tag.
 */
struct dma_op {
	pid_t pid;
	uint32_t len;
	uint64_t va;
	uint8_t *local;
	uint64_t tag;
};

struct dma_batch {
	struct dma_op *op;
	int n, cap;
	bool write; /* true: local -> remote */
};

int cx4m_dmab_add(struct dma_batch *b, pid_t pid, uint64_t va, uint8_t *local, uint32_t len,
		  uint64_t tag);
/* Run all ops; returns the number of faulting ops (each reported to fault()). */
int cx4m_dmab_flush(struct dma_batch *b, void (*fault)(void *ctx, uint64_t tag), void *ctx);
void cx4m_dmab_free(struct dma_batch *b);

/*
 * A device-side read or write of a list of segments: fd-backed pieces are copied at once,
 * pid-backed ones go to the batch (the caller flushes it before the data is needed/visible).
 */
void cx4m_dseg_copy_batched(struct dma_batch *b, const struct dseg *s, int n, uint8_t *local,
			    uint64_t tag);

/* ---- queue buffers described by PAS lists (dbuf.c) ---------------------------------------- */
struct dbuf {
	uint64_t *pas; /* IOVA of each page */
	uint32_t npages;
	uint32_t page_shift; /* 12 + log_page_size */
	uint32_t offset;     /* byte offset of the buffer in page 0 (page_offset * 64) */
	uint64_t len;	     /* buffer bytes */
	/* Fast path: the whole buffer is one fd-backed run of our memory. */
	uint8_t *base;
	uint32_t base_perm;
	uint64_t gen; /* iommu generation base was computed at */
};

/* Build from a PAS array (big-endian, as in the command); 0, -EINVAL or -ENOMEM. */
int cx4m_dbuf_init(struct dbuf *b, const uint8_t *pas_be, uint32_t npas, uint32_t log_page_size,
		   uint32_t page_offset_64, uint64_t len);
void cx4m_dbuf_free(struct dbuf *b);
/* Pointer to [off, off+len) (len may not cross the buffer end), or NULL if not directly
 * addressable (then use cx4m_dbuf_read/cx4m_dbuf_write). */
uint8_t *cx4m_dbuf_ptr(struct mdev *d, struct dbuf *b, uint64_t off, size_t len, uint32_t perm);
int cx4m_dbuf_read(struct mdev *d, struct dbuf *b, uint64_t off, void *dst, size_t len);
int cx4m_dbuf_write(struct mdev *d, struct dbuf *b, uint64_t off, const void *src, size_t len);

/* ---- ICM: the pages the driver gives to the firmware (icm.c) ------------------------------ */
enum { ICM_EMPTY, ICM_FREE, ICM_USED };

struct icm_page {
	uint64_t iova;
	uint8_t state; /* ICM_* */
};

/* A table of fixed-size object contexts kept in ICM pages (one chunk = one page). */
struct icm_table {
	const char *name;
	uint32_t obj_size; /* bytes per context, a power of two <= 4096 */
	uint32_t nchunks;
	int32_t *chunk; /* page index, -1 when not backed yet */
	uint16_t *ref;	/* live objects in the chunk */
};

enum icm_boot_slot {
	ICM_BOOT_CAP_GEN, /* current general capabilities */
	ICM_BOOT_CAP_ATOMIC,
	ICM_BOOT_CAP_ROCE,
	ICM_BOOT_ROCE_TBL0, /* RoCE address table, 2 x 128 entries of 32 bytes */
	ICM_BOOT_ROCE_TBL1,
	ICM_BOOT_VPORT, /* NIC vport context, registers */
	ICM_BOOT_NUM
};

struct icm {
	struct icm_page *page;
	uint32_t npages, cap;
	uint32_t *free; /* stack of ICM_FREE page indexes */
	uint32_t nfree;
	uint32_t *empty; /* stack of ICM_EMPTY slots */
	uint32_t nempty;
	uint32_t *hash; /* open addressing: iova >> 12 -> page index + 1 */
	uint32_t hash_size;
	uint32_t ngiven; /* pages held (free + used) */
	int32_t request; /* pages asked for (> 0) or offered back (< 0), not yet done */
	uint32_t boot_need, init_need;
	int32_t boot_page[ICM_BOOT_NUM];
	bool boot_done;
	bool init_done;
	struct icm_table qpc, cqc, eqc, mkc, srqc;
};

/* Give one page (MANAGE_PAGES give): 0, -EEXIST (already ours), -EINVAL, -ENOMEM. */
int cx4m_icm_give(struct mdev *d, uint64_t iova);
/* Take up to n free pages back; fills iova[]; returns how many. */
uint32_t cx4m_icm_take(struct mdev *d, uint64_t *iova, uint32_t n);
/* Allocate one zeroed page for firmware data; -1 when none is free or it faulted. */
int32_t cx4m_icm_alloc_page(struct mdev *d);
void cx4m_icm_free_page(struct mdev *d, int32_t pg);
/* Back the context of object `idx` in table t (allocating a page); 0 or -ENOMEM. */
int cx4m_icm_table_get(struct mdev *d, struct icm_table *t, uint32_t idx);
void cx4m_icm_table_put(struct mdev *d, struct icm_table *t, uint32_t idx);
int cx4m_icm_ctx_write(struct mdev *d, struct icm_table *t, uint32_t idx, const void *ctx,
		       size_t len);
int cx4m_icm_ctx_read(struct mdev *d, struct icm_table *t, uint32_t idx, void *ctx, size_t len);
/* Access firmware data in page pg; a DMA fault here is fatal for the firmware. */
int cx4m_icm_page_rw(struct mdev *d, int32_t pg, uint32_t off, void *buf, size_t len, bool write);
uint8_t *cx4m_icm_page_ptr(struct mdev *d, int32_t pg);
/* Take the boot pages (caps, RoCE table) once enough pages were given; 0 or -ENOMEM. */
int cx4m_icm_boot(struct mdev *d);
/* Take the init pages at INIT_HCA; 0 or -ENOMEM / -EFAULT. */
int cx4m_icm_init_hca(struct mdev *d);
/* TEARDOWN_HCA: firmware data is dropped, every page becomes free (returnable). */
void cx4m_icm_teardown(struct mdev *d);
/* Reset: forget the pages altogether. */
void cx4m_icm_reset(struct mdev *d);
void cx4m_icm_free(struct mdev *d);
/* Ask the driver for pages when the pool runs low, offer pages back when it holds many. */
void cx4m_icm_balance(struct mdev *d);
/* QUERY_PAGES answer for a stage (op_mod). */
int32_t cx4m_icm_query(struct mdev *d, unsigned int op_mod);

/* ---- capabilities (caps.c) ---------------------------------------------------------------- */
/* Fill the maximum capability page of `type` for the profile; -1 if the type is unsupported. */
int cx4m_caps_max(const struct mdev *d, unsigned int type, uint8_t *page);
/* Default current values (what QUERY_HCA_CAP cur answers before any SET_HCA_CAP). */
int cx4m_caps_cur_default(const struct mdev *d, unsigned int type, uint8_t *page);
/* Validate a SET_HCA_CAP page against max and cur; 0 or a command status (with syndrome). */
int cx4m_caps_set_check(const struct mdev *d, unsigned int type, const uint8_t *cur,
			const uint8_t *in, uint8_t *out_new, uint32_t *synd);
/* The boot-page index holding the current caps of a type, -1 if none. */
int cx4m_caps_boot_slot(unsigned int type);

/* ---- commands (cmdif.c and cmd_*.c) ------------------------------------------------------ */
struct mcmd {
	const uint8_t *in; /* logical input message */
	uint32_t ilen;
	uint8_t *out; /* logical output message, zeroed */
	uint32_t olen;
	uint16_t opcode, op_mod;
	uint32_t syndrome; /* set by handlers that fail */
};

/* A handler returns CX4_CMD_STAT_* (OK or an error; set c->syndrome for errors). */
typedef int (*mcmd_fn)(struct mdev *d, struct mcmd *c);

/* Which HCA state a command needs (checked before the handler runs). */
enum mcmd_state {
	MCMD_ANY,     /* even before ENABLE_HCA */
	MCMD_ENABLED, /* after ENABLE_HCA */
	MCMD_BOOTED,  /* enabled and boot pages given */
	MCMD_INIT,    /* after INIT_HCA */
};

struct mcmd_desc {
	uint16_t opcode;
	uint8_t state;		  /* enum mcmd_state */
	uint16_t in_min, out_min; /* shortest acceptable lengths */
	mcmd_fn fn;
};

/* Per-area command tables, each terminated by opcode 0. */
extern const struct mcmd_desc cx4m_mcmd_hca[], cx4m_mcmd_res[], cx4m_mcmd_eq[], cx4m_mcmd_cq[],
    cx4m_mcmd_mkey[], cx4m_mcmd_qp[], cx4m_mcmd_srq[], cx4m_mcmd_vport[];

/* Fail a command with a status and a syndrome that names the check (docs/cx4-model.md). */
static inline int mcmd_err(struct mcmd *c, int status, uint32_t synd)
{
	c->syndrome = synd;
	return status;
}

/* Look at the doorbell bits and run the commands; returns the number executed. */
int cx4m_cmdif_run(struct mdev *d);
void cx4m_cmdif_reset(struct mdev *d);

/* ---- event queues (eq.c) ------------------------------------------------------------------ */
struct meq {
	uint32_t eqn;
	uint32_t log_size;
	uint32_t uar;
	uint32_t intr;
	uint64_t mask; /* event_bitmask */
	bool oi;
	bool armed;
	bool fire;     /* interrupt owed at the end of the pass */
	uint32_t refs; /* CQs using it */
	uint32_t npas;
	uint32_t pi, ci; /* producer (device) and consumer (from doorbells) */
	struct dbuf buf;
	uint32_t icm_idx;
};

/* Post an EQE (64 bytes, type/data filled, owner set here) to the EQ subscribed to its type
 * (lowest EQN); false when no EQ is. */
bool cx4m_eq_post_async(struct mdev *d, uint8_t *eqe);
/* Post a completion event for cqn to eq. */
void cx4m_eq_post_comp(struct mdev *d, struct meq *eq, uint32_t cqn);
void cx4m_eq_doorbell(struct mdev *d, uint32_t uar, uint32_t val, bool arm);
/* Deliver owed interrupts (end of pass). */
int cx4m_eq_fire(struct mdev *d);
struct meq *cx4m_eq_get(struct mdev *d, uint32_t eqn);
void cx4m_eq_destroy_all(struct mdev *d);
/* QP/SRQ affiliated events (COMM_EST, WQ errors, SRQ limit...). */
void cx4m_eq_post_qp_event(struct mdev *d, uint8_t type, uint32_t qpn, uint8_t queue_type);
void cx4m_eq_post_cmd(struct mdev *d, uint32_t slot_mask);
void cx4m_eq_post_page_request(struct mdev *d, int32_t npages);
void cx4m_eq_post_port_change(struct mdev *d, uint8_t sub_type);

/* ---- completion queues (cq.c) -------------------------------------------------------------- */
struct mcq {
	uint32_t cqn;
	uint32_t log_size;
	uint32_t cqe_size; /* 64 or 128 */
	bool cc, oi;
	uint32_t uar;
	struct meq *eq;
	uint64_t dbr;	  /* doorbell record IOVA */
	uint32_t pi;	  /* CQEs written */
	uint32_t ci_seen; /* last consumer index read from the doorbell record */
	uint8_t arm;	  /* 0 none, 1 next, 2 solicited */
	uint32_t arm_sn;
	uint32_t last_solicit; /* pi of the last solicited/error CQE + 1 */
	uint32_t event_pi;     /* pi when the last completion event was raised */
	uint8_t status;	       /* CX4_CQC_STATUS_* */
	uint32_t refs;	       /* QPs/SRQs using it */
	uint32_t cq_period, cq_max_count, period_mode;
	uint32_t mod_count; /* CQEs since the last event (moderation) */
	struct mtimer mod_timer;
	uint32_t npas;
	struct dbuf buf;
	uint32_t icm_idx;
};

struct mcq *cx4m_cq_get(struct mdev *d, uint32_t cqn);
/* Queue a CQE (written at the end of the pass, after the data it reports). */
void cx4m_cq_push(struct mdev *d, struct mcq *cq, const uint8_t *cqe64);
/* Write queued CQEs; returns how many. */
int cx4m_cq_flush(struct mdev *d);
void cx4m_cq_arm_doorbell(struct mdev *d, uint32_t uar, const uint8_t *val8);
void cx4m_cq_destroy_all(struct mdev *d);

/* ---- memory keys (mkey.c) ------------------------------------------------------------------ */
/* One entry of a KLM key: byte_count bytes at address va of key mkey. */
struct mklm {
	uint32_t bcount, mkey;
	uint64_t va;
};

struct mmkey {
	uint32_t index;
	uint8_t key;	     /* mkey_7_0 */
	uint8_t access_mode; /* CX4_MKC_ACCESS_MODE_PA / _MTT */
	uint8_t access;	     /* CX4_MKC_{A,RW,RR,LW,LR} bits as mkc byte 1 >> 2 */
	bool length64;
	bool free_state; /* mkc.free: unusable until a UMR makes it valid (memory windows) */
	bool umr_en;	 /* UMR WQEs may change it */
	bool en_rinval;	 /* a peer's SEND_WITH_INV may invalidate it (type 2 windows) */
	uint32_t pd;
	uint32_t qpn; /* 0xFFFFFF = any; a bound type 2 window: its QP */
	uint64_t start, len;
	/* KLM mode (memory windows): [start, start + len) maps through these, in order */
	struct mklm *klm;
	uint32_t nklm, max_klm;
	uint32_t log_page_size; /* page = 1 << log_page_size bytes */
	uint32_t nmtt;
	int32_t *mtt_page; /* ICM pages holding the MTT entries (512 per page) */
	uint32_t nmtt_pages;
	uint32_t icm_idx;
};

enum mkey_access {
	MKEY_LR = 1 << 0, /* local read */
	MKEY_LW = 1 << 1, /* local write */
	MKEY_RR = 1 << 2, /* remote read */
	MKEY_RW = 1 << 3, /* remote write */
	MKEY_A = 1 << 4,  /* remote atomic */
};

/* Why a key check failed: mapped to CQE syndromes / NAKs by the caller. */
enum mkey_err {
	MKEY_OK = 0,
	MKEY_EKEY = -1,	   /* no such key / key byte mismatch */
	MKEY_EPD = -2,	   /* PD differs from the QP's */
	MKEY_EACCESS = -3, /* access right missing */
	MKEY_EBOUNDS = -4, /* outside [start, start + len) */
	MKEY_EDMA = -5,	   /* translated IOVA not mapped (IOMMU fault) */
	MKEY_ESEGS = -6,   /* too many pieces for one request */
};

/*
 * Translate [va, va + len) of key `key` for `qp` needing `access`: fills segs (host pointers
 * or pid/va pieces), returns the number of segments or an mkey_err.
 */
int cx4m_mkey_xlate(struct mdev *d, uint32_t key, uint32_t pd, uint32_t qpn, uint64_t va,
		    uint64_t len, unsigned int access, bool rlky, struct dseg *segs, int max);
/* The checks of cx4m_mkey_xlate without the translation (a whole RDMA range at its first packet).
 */
int cx4m_mkey_check(struct mdev *d, uint32_t key, uint32_t pd, uint32_t qpn, uint64_t va,
		    uint64_t len, unsigned int access);
/* A peer's SEND_WITH_INV for `qp`: 0 (the key is free now) or an mkey_err. */
int cx4m_mkey_remote_invalidate(struct mdev *d, uint32_t key, uint32_t pd, uint32_t qpn);
struct mmkey *cx4m_mkey_get(struct mdev *d, uint32_t index);
/* The mkc image kept in ICM, refreshed from the live fields (after a UMR). */
void cx4m_mkey_sync_icm(struct mdev *d, struct mmkey *m);
void cx4m_mkey_destroy_all(struct mdev *d);

/* ---- UMR WQEs (umr.c) ------------------------------------------------------------------------ */
struct mwqe;
/* Execute a UMR WQE of `qp`: 0, or the CQE syndrome it fails with. */
int cx4m_umr_exec(struct mdev *d, struct mqp *qp, const struct mwqe *w);

/* ---- shared receive queues (srq.c) --------------------------------------------------------- */
struct msrq {
	uint32_t srqn;
	uint32_t log_size;
	uint32_t stride_shift; /* WQE = 1 << stride_shift bytes */
	uint32_t pd;
	uint64_t dbr;
	uint32_t lwm;	   /* limit watermark (ARM_RQ), 0 = disarmed */
	uint16_t head;	   /* next WQE index the device uses */
	uint16_t consumed; /* WQEs taken */
	uint8_t state;
	uint32_t refs;
	uint32_t user_index;
	uint32_t npas;
	struct dbuf buf;
	uint32_t icm_idx;
};

struct msrq *cx4m_srq_get(struct mdev *d, uint32_t srqn);
/* Take the next WQE: copies it to wqe (stride bytes), returns its index or -1 if empty. */
int cx4m_srq_pop(struct mdev *d, struct msrq *s, uint8_t *wqe, uint32_t max);
void cx4m_srq_destroy_all(struct mdev *d);

/* ---- QPs (qp.c: commands and state; req.c/comp.c/resp.c: transport) ---------------------- */
#define MQP_MAX_SGE 64	 /* data segments a WQE can hold (1 KB WQE) */
#define MQP_MAX_SEGS 128 /* translated pieces per request */

/*
 * The remote end of a connected QP, or of one UD send (from the address vector): the PRM's
 * address path (ads) / address vector. The network type is not in it: it is that of the
 * source GID entry (src_addr_index), as on the card.
 */
struct mpath {
	uint8_t rgid[16];   /* remote GID (rgid_rip): IPv4 as ::ffff:a.b.c.d */
	uint16_t udp_sport; /* 0 = pick from the QP number */
	uint8_t hop_limit, tclass;
	uint8_t sgid_index;
	uint32_t flow_label;
	uint8_t rmac[6];
};

/* Send WQE parsing (wqe.c). */
struct msge {
	uint32_t len;
	uint32_t lkey;
	uint64_t addr;
	const uint8_t *inl; /* inline data (points into the WQE copy), else NULL */
};

struct mwqe {
	uint16_t idx;
	uint8_t opcode, opmod, fm_ce_se, ds;
	uint8_t nbb;
	uint32_t imm; /* as in the WQE (big-endian image) */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;
	/* UD address vector */
	uint32_t qkey, dqpn;
	struct mpath av;
	uint32_t len; /* total data bytes */
	uint32_t nsge;
	struct msge sge[MQP_MAX_SGE];
	/* UMR: the mkey it changes (control segment imm) and its segments, pointing into raw */
	uint32_t umr_key;
	const uint8_t *umr_ctrl, *umr_mkey, *umr_klm;
	uint32_t umr_nklm;
	uint8_t raw[1024]; /* the WQE as fetched (inline data points here) */
};

/* Requester bookkeeping of one send WQE in flight (RC: until acknowledged). */
struct mswqe {
	uint16_t idx;	/* WQE index (wqe_counter) */
	uint8_t nbb;	/* WQEBBs it occupies */
	uint8_t opcode; /* MLX5_OPCODE_* */
	uint8_t fm_ce_se;
	uint8_t done;		      /* 1: all packets acknowledged / completed */
	bool read_issued;	      /* READ/atomic: counted in reads_out */
	uint32_t first_psn, last_psn; /* PSNs the WQE uses (RC/UC) */
	uint32_t len;		      /* message bytes */
	uint32_t resid;		      /* READ: bytes still expected */
	uint64_t atomic_orig;
};

struct mreq {
	uint16_t pi;	  /* producer counter from the doorbell record (WQEBBs) */
	uint16_t next;	  /* WQEBB counter of the next WQE to start */
	uint16_t ci;	  /* WQEBB counter of the oldest uncompleted WQE */
	uint32_t psn;	  /* next PSN to send */
	uint32_t cur_off; /* bytes of the current (next) WQE already sent */
	uint32_t cur_psn; /* PSN of the current WQE's next packet */
	bool cur_started;
	/* in flight, in order: ring indexed by swq_tail..swq_head */
	struct mswqe *swq;
	uint32_t swq_size, swq_head, swq_tail;
	uint32_t reads_out; /* outstanding READ/atomic requests */
	uint32_t pkts_out;  /* unacknowledged packets */
	uint32_t since_ackreq;
	/* completer */
	uint32_t ack_psn; /* oldest unacknowledged PSN */
	uint32_t retry_left, rnr_left;
	bool need_retry; /* go back to ack_psn */
	bool rnr_wait;
	bool error; /* SQ in error: flush */
	bool dma_fault;
	uint32_t pos;	   /* swq position being (re)sent; == swq_head: new WQEs */
	uint32_t sent_psn; /* one past the highest PSN sent */
	uint32_t rnr_psn;
	struct mwqe *cur; /* parsed WQE being sent */
	bool cur_valid;
	uint16_t cur_idx;
	struct mwqe *cwqe; /* parsed WQE the completer writes READ data for */
	bool cwqe_valid;
	uint16_t cwqe_idx;
	uint32_t retry_psn;
	/* went back to reissue_psn (NAK, implied NAK, timeout); another reason to go back to the
	 * same PSN before anything new arrives is not a new loss ([IBTA] 9.7.5.1.x) */
	bool reissued;
	uint32_t reissue_psn;
	/* after a local ACK timeout: one packet (AckReq) outstanding until an ACK or NAK answers;
	 * probe_psn the PSN it resent, resume_* where sending stood when the timer fired */
	bool probe;
	bool resume_started;
	uint32_t probe_psn, resume_pos, resume_cur_psn;
	uint64_t last_progress;
	struct mtimer retry_timer;
	struct mtimer rnr_timer;
};

#define MRES_KEPT 16 /* responder resources remembered: 2^log_rra_max, at most 16 */
enum { MRES_READ = 1, MRES_ATOMIC = 2 };

/* Responder state of one QP. */
struct mresp {
	uint32_t epsn; /* expected PSN */
	uint32_t msn;
	uint16_t rq_ci; /* receive WQEs consumed */
	bool nak_sent;	/* one NAK-sequence per gap */
	bool in_msg;	/* between FIRST and LAST of a SEND/WRITE */
	uint8_t msg_op; /* opcode of the message in progress */
	/* receive WQE being filled (SEND) */
	bool have_wqe;
	bool drop_msg;	      /* UC: the rest of this message is dropped */
	uint16_t wqe_idx;     /* RQ counter or SRQ WQE index */
	uint32_t wqe_len;     /* buffer bytes */
	uint32_t msg_off;     /* bytes received so far */
	uint32_t msg_len;     /* RDMA WRITE: DMA length from the RETH */
	struct msge rsge[32]; /* the receive WQE's scatter list */
	uint32_t nrsge;
	/* RDMA WRITE in progress */
	uint64_t va;
	uint32_t rkey;
	uint32_t resid;
	/* ACK owed at the end of the pass */
	bool ack_owed;
	uint8_t ack_syn;
	uint32_t ack_psn;
	/*
	 * Responder resources ([IBTA] 9.7.4.1.x, o9-..: log_rra_max of them; rxe resp_res): one
	 * per READ or atomic request, in PSN order. Their responses leave in that order, from
	 * rd_head on; they are kept after that (the last MRES_KEPT), so a duplicate request is
	 * answered again from its own resource: READ data again from the PSN asked for, an atomic's
	 * saved result (never executed twice).
	 */
	struct mres {
		uint8_t kind; /* MRES_READ / MRES_ATOMIC; 0 = unused */
		uint64_t va;
		uint32_t rkey, len;
		uint32_t psn;	/* PSN of the first response */
		uint32_t npkts; /* PSNs (responses) it takes */
		uint32_t next;	/* next response to send; npkts = all sent */
		bool sent;	/* every response went out once: what is sent again is a replay */
		uint64_t orig;	/* atomic: the value before it */
	} rd[MRES_KEPT];
	uint32_t rd_head, rd_tail; /* free-running */
	uint32_t rd_kept;	   /* resources in rd[] (at most MRES_KEPT) */
	bool error;
	bool comm_est; /* COMM_EST posted */
};

struct mqp {
	uint32_t qpn;
	uint8_t st;    /* CX4_QP_ST_* */
	uint8_t state; /* CX4_QP_STATE_* */
	uint32_t pd;
	uint32_t uar;
	uint32_t user_index;
	uint32_t icm_idx;
	struct mcq *scq, *rcq;
	struct msrq *srq;
	uint8_t rq_type;
	bool no_sq;
	bool rlky;
	/* buffer: RQ at 0, SQ after it ([dv]/rdma-core mlx5 create_qp layout) */
	struct dbuf buf;
	uint32_t rq_wqe_cnt, rq_stride_shift;
	uint32_t sq_wqebbs;
	uint64_t sq_off;
	uint64_t dbr;
	/* context fields the transport uses */
	uint8_t mtu_code;
	uint32_t pmtu;
	uint32_t log_msg_max;
	uint32_t remote_qpn;
	uint32_t qkey;
	uint8_t retry_count, rnr_retry, min_rnr_nak, ack_timeout;
	uint8_t log_sra_max, log_rra_max;
	bool rre, rwe, rae;
	uint8_t atomic_mode;
	struct mpath path;
	uint16_t sport; /* UDP source port actually used */
	int sock;	/* index of the source-port socket */
	struct mreq req;
	struct mresp resp;
	/* engine lists */
	bool on_active; /* requester has work */
	struct mqp *active_next;
	bool on_ack; /* responder owes an ACK */
	struct mqp *ack_next;
	/* the qpc image kept in ICM is refreshed from these on QUERY_QP */
	uint8_t qpc[CX4_QPC_SIZE];
};

struct mqp *cx4m_qp_get(struct mdev *d, uint32_t qpn);
void cx4m_qp_destroy_all(struct mdev *d);
/*
 * Datagram QPs: UD, and the GSI QP (QP1, [PRM] "QP1/GSI": service type 0x8), which is UD on
 * the wire with the well-known number 1 and Q_Key 0x80010000 ([IBTA] 13.4.6.1).
 */
static inline bool mqp_datagram(const struct mqp *qp)
{
	return qp->st == CX4_QP_ST_UD || qp->st == CX4_QP_ST_QP1;
}
/* The QPN a datagram QP names as its source: 1 for the GSI QP (the DETH and the CQE). */
static inline uint32_t mqp_wire_qpn(const struct mqp *qp)
{
	return qp->st == CX4_QP_ST_QP1 ? 1 : qp->qpn;
}
/* Move a QP to ERR (flushing its queues) and post an affiliated event if `event` != 0xff. */
void cx4m_qp_to_error(struct mdev *d, struct mqp *qp, uint8_t event);
void cx4m_qp_activate(struct mdev *d, struct mqp *qp);
void cx4m_qp_sq_doorbell(struct mdev *d, uint32_t uar, const uint8_t *val8);

/* WQEs the device executes itself, without a packet (a NOP; a UMR changes a memory key). */
static inline bool wqe_local(uint8_t opcode)
{
	return opcode == MLX5_OPCODE_NOP || opcode == MLX5_OPCODE_UMR;
}

/* Fetch and parse the WQE at WQEBB counter `idx`; 0 or a CQE error syndrome. */
int cx4m_wqe_fetch(struct mdev *d, struct mqp *qp, uint16_t idx, struct mwqe *w);
/* Opcode and size of the WQE at idx (flushing WQEs never started); -1 if unreadable. */
int cx4m_wqe_opcode(struct mdev *d, struct mqp *qp, uint16_t idx, uint8_t *nbb);

/* Requester (req.c), completer (comp.c), responder (resp.c). */
int cx4m_req_run(struct mdev *d, struct mqp *qp, unsigned int budget);
void cx4m_comp_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p);
void cx4m_comp_retry_timeout(struct mdev *d, struct mtimer *t);
void cx4m_comp_rnr_timeout(struct mdev *d, struct mtimer *t);
void cx4m_comp_flush_sq(struct mdev *d, struct mqp *qp);
/* Retire completed WQEs in order (CQEs for the signalled ones). */
void cx4m_comp_retire(struct mdev *d, struct mqp *qp);
/* WQE at swq position pos failed locally / remotely: its error CQE, then the QP to ERR. */
void cx4m_comp_error(struct mdev *d, struct mqp *qp, uint32_t pos, uint8_t syndrome);
/* A UC/UD WQE's last packet left: it is complete. */
void cx4m_comp_sent(struct mdev *d, struct mqp *qp, uint32_t pos);
/* Requester transmit window and timers. */
void cx4m_req_arm_retry(struct mdev *d, struct mqp *qp);
/* Go back and send again from psn (NAK, timeout, RNR). */
void cx4m_req_rewind(struct mdev *d, struct mqp *qp, uint32_t psn);
void cx4m_resp_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p);
int cx4m_resp_send_acks(struct mdev *d);
void cx4m_resp_ack_now(struct mdev *d);
int cx4m_resp_read_run(struct mdev *d, struct mqp *qp, unsigned int budget);
void cx4m_resp_flush_rq(struct mdev *d, struct mqp *qp);

/* Build CQEs (cqe.c). */
void cx4m_cqe_req(struct mdev *d, struct mqp *qp, const struct mswqe *w, uint32_t byte_cnt);
void cx4m_cqe_req_err(struct mdev *d, struct mqp *qp, uint16_t idx, uint8_t opcode,
		      uint8_t syndrome);
struct mrecv {
	uint8_t opcode; /* MLX5_CQE_RESP_* */
	uint32_t byte_cnt;
	uint32_t imm;	 /* big-endian image */
	uint32_t src_qp; /* UD */
	uint8_t net;	 /* UD: the network type, the CQE's L3 header type */
	bool solicited;
	uint16_t wqe_counter;
};
void cx4m_cqe_resp(struct mdev *d, struct mqp *qp, const struct mrecv *r);
void cx4m_cqe_resp_err(struct mdev *d, struct mqp *qp, uint16_t wqe_counter, uint8_t syndrome);

/* ---- the wire (net.c) ---------------------------------------------------------------------- */
#define NET_TX_SLOTS 256
#define NET_RX_SLOTS 32
#define NET_SLOT_SIZE 4352	 /* one packet: 4096 payload + headers + ICRC, rounded */
#define NET_RX_BUF (65536 + 256) /* one GRO receive: up to 64 KB of packets */
#define NET_RX_HEADROOM 64
#define NET_MAX_IOV (MQP_MAX_SEGS + 2)
#define NET_MAX_SOCKS 64
#define NET_GSO_MAX_SEGS 64 /* Linux UDP_MAX_SEGMENTS */
#define NET_SCRATCH (256u << 10)

struct txpkt {
	struct mqp *qp;	 /* requester packets: for DMA fault attribution */
	int32_t swq_pos; /* requester: swq position of the WQE, -1 otherwise */
	bool last;	 /* last packet of that WQE (UC/UD: completes it when sent) */
	uint8_t hdr[ROCE_MAX_HDR_LEN];
	uint8_t tail[8]; /* pad + ICRC, computed when the packet is sent */
	uint8_t hlen;
	uint16_t sock; /* IPv4: the source-port socket */
	bool faulted;
	bool zcopy;	    /* some iov points into host memory */
	struct mpath dst;   /* where it goes, and from which GID entry */
	uint8_t route;	    /* enum net_route, chosen when it is sent */
	uint8_t l2[ROCE_ETH_HDR_LEN + ROCE_IP6UDP_LEN]; /* frame media: Ethernet + network hdr */
	uint8_t l2len;
	uint32_t plen;			   /* payload bytes */
	int iovcnt;			   /* headers + payload pieces */
	struct iovec iov[NET_MAX_IOV + 1]; /* + the tail, for the pcap writer */
	uint8_t *bounce;		   /* NET_SLOT_SIZE bytes of ours */
};

struct mroce_addr;

/* How a queued packet leaves (net.c). */
enum net_route {
	NET_ROUTE_DROP,	  /* nowhere to go: its source GID is gone, or no medium carries it */
	NET_ROUTE_SELF,	  /* to one of our own GIDs: the device's loopback */
	NET_ROUTE_CABLE,  /* to the cable's other end (its MAC) */
	NET_ROUTE_PACKET, /* RoCE v1: an Ethernet frame on the net device (AF_PACKET) */
	NET_ROUTE_UDP4,	  /* RoCE v2 / IPv4: the kernel's UDP socket */
	NET_ROUTE_UDP6,	  /* RoCE v2 / IPv6: the UDP socket of the source address */
	NET_ROUTE_UNKNOWN = 0xff, /* not chosen yet */
};

/* The device's own loopback: frames to its own GIDs, received at the next pass (net.c). */
#define NET_LOOP_SIZE (1u << 20)
struct mloop {
	uint8_t *buf;		 /* NET_LOOP_SIZE bytes of records: u32 length, frame, pad to 8 */
	uint64_t prod, rx, cons; /* bytes written, read, given back (at the end of a pass) */
};

/* A UDP socket of an IPv6 source address of the GID table (a GID may appear twice). */
#define NET_MAX_UDP6 8
struct mudp6 {
	struct roce_udp_port rx; /* addr:4791, GRO on */
	struct roce_udp_port tx; /* addr:<source port>, GSO off */
	unsigned int users;	 /* GID entries with this address */
};

/* A direct-attach cable to another modelled port of this host (cable.c). */
#define CABLE_PATH_MAX 256
struct cable_ring;
struct mcable {
	char dir[CABLE_PATH_MAX];
	struct cable_ring *rx; /* our end, NULL when the port has no cable */
	int wake_fd;	       /* our FIFO (read and write), in the engine's epoll */
	uint64_t rx_pos;       /* next record; given back (cons) when the pass ends */
	struct cable_ring *tx; /* the other end's ring, once found */
	int peer_wake_fd;
	uint32_t peer; /* its address, 0 = not joined (frames go by UDP) */
	uint8_t peer_mac[6];
	uint64_t tx_pos, tx_published;
	int watch_fd; /* inotify on dir (in the engine's epoll): an end appeared */
	bool look_now;
	uint64_t next_look_ns;
};

#define NET_MAX_OWN 32
struct mnet {
	struct mcable cable;
	struct mloop loop;
	struct {
		uint8_t net, gid[16];
	} own[NET_MAX_OWN]; /* the distinct GIDs of the table, by type */
	unsigned int nown;
	struct roce_packet_port raw;		/* RoCE v1 on the net device; fd -1: none */
	struct mudp6 udp6[NET_MAX_UDP6];	/* fd -1: free */
	struct roce_udp_port rx_port;		/* IP:4791, GRO on */
	unsigned int rx_turn;			/* which receive source goes first this pass */
	struct iovec *raw_iov;			/* ROCE_PACKET_BATCH frames' pieces */
	struct roce_udp_port tx[NET_MAX_SOCKS]; /* source ports, GSO on */
	unsigned int ntx;
	/* -1, or the socket that said EAGAIN (EPOLLOUT armed): tx[i], NET_MAX_SOCKS + udp6[i].tx,
	 * or NET_MAX_SOCKS + NET_MAX_UDP6 for the AF_PACKET socket */
	int blocked_sock;
	struct roce_pcap *pcap;
	/* transmit queue: [head, tail) built in order */
	struct txpkt *tx_slot;
	uint32_t tx_head, tx_tail; /* free-running */
	struct dma_batch tx_dma;   /* payload reads of queued packets */
	struct iovec *tx_iov;	   /* iovs of one sendmmsg batch */
	uint8_t *rx_buf[NET_RX_SLOTS];
	uint64_t sock_next_look; /* cabled: the pass time from which to look at the sockets again */
	bool sock_look_now;	/* the engine is about to sleep: look whatever the time */
	unsigned int drop_rx; /* test knob */
	uint32_t rx_cost_us;  /* cx4_model_rx_cost */
	/* receive-side impairment (cx4_model_rx_fault) */
	struct net_fault {
		struct cx4_model_fault f;
		uint32_t seen; /* matching packets so far */
	} fault[CX4_MODEL_FAULT_RULES];
	unsigned int nfault;
	struct net_held {
		uint8_t *buf; /* NET_RX_BUF bytes, allocated with the first DELAY rule */
		size_t len;
		struct roce_addr addr; /* UDP datagrams */
		bool frame;	       /* an Ethernet frame (cable, loopback, AF_PACKET) */
		uint32_t after; /* packets still to overtake it; 0 = slot free */
	} held[CX4_MODEL_FAULT_RULES];
	uint8_t *scratch; /* per-pass memory for data the responder builds */
	size_t scratch_used;
	uint8_t *slab;
};

int cx4m_net_open(struct mdev *d, const char *pcap_path, const char *cable_dir);
/* Copy the payload of queued packets that still points into host memory into their own
 * buffers (before an IOMMU unmap). */
void cx4m_net_tx_materialize(struct mdev *d);
void cx4m_net_close(struct mdev *d);
/* A free transmit slot (NULL when the queue is full: try again next pass). */
struct txpkt *cx4m_net_tx_get(struct mdev *d);
/* Headers for the slot, to dst (IPv4: from source-port socket sock); the payload is added
 * with cx4m_net_tx_payload. */
int cx4m_net_tx_hdr(struct mdev *d, struct txpkt *t, const struct roce_tx_hdr *h, uint32_t plen,
		    const struct mpath *dst, uint16_t sock);
/* Add translated payload pieces (fd pieces by reference, pid pieces read into the bounce). */
int cx4m_net_tx_payload(struct mdev *d, struct txpkt *t, const struct dseg *s, int n,
			uint32_t bounce_off);
/* Add payload bytes of ours (inline data, atomic results) by copy. */
void cx4m_net_tx_copy(struct txpkt *t, const void *src, uint32_t len, uint32_t bounce_off);
void cx4m_net_tx_commit(struct mdev *d, struct txpkt *t);
/* Memory that lives until the end of the pass (pending DMA may point into it). */
uint8_t *cx4m_net_scratch(struct mdev *d, size_t len);
unsigned int cx4m_net_tx_free_slots(const struct mdev *d);
/* Send what is queued; returns packets sent. */
int cx4m_net_tx_flush(struct mdev *d);
/* Receive and dispatch a batch; returns packets received. */
int cx4m_net_rx(struct mdev *d);
/* Install a receive fault rule (NULL: clear all); 0 or -errno. */
int cx4m_net_set_fault(struct mdev *d, const struct cx4_model_fault *f);
/* Give back what this pass received (no DMA points into it any more). */
void cx4m_net_rx_done(struct mdev *d);
/* The engine is about to sleep (true) or woke (false). */
void cx4m_net_sleeping(struct mdev *d, bool sleeping);

/* cable.c: 0 or -errno; dir NULL = no cable */
int cx4m_cable_open(struct mdev *d, const char *dir);
void cx4m_cable_close(struct mdev *d);
/* The other end's address once joined (looked for at most every 100 ms), else 0. */
uint32_t cx4m_cable_peer(struct mdev *d);
/* Queue one Ethernet frame (pieces, len bytes) for the other end: 0, -EAGAIN (full, the
 * other end wakes us when it has room) or -EINVAL. */
int cx4m_cable_put(struct mdev *d, const struct iovec *iov, int iovcnt, uint32_t len);
/* Make what cx4m_cable_put queued visible to the other end (and wake it if it sleeps). */
void cx4m_cable_publish(struct mdev *d);
/* The next received frame (valid until cx4m_cable_rx_done) or NULL. */
const uint8_t *cx4m_cable_next(struct mdev *d, size_t *len);
void cx4m_cable_rx_done(struct mdev *d);
void cx4m_cable_sleeping(struct mdev *d, bool sleeping);
void cx4m_cable_drain_wake(struct mdev *d);

/* Pick the source-port socket for a QP (per-QP entropy; docs/cx4-model.md, "The wire"). */
uint16_t cx4m_net_sport_for(struct mdev *d, uint32_t qpn, uint16_t want, bool av, int *sock);

/* The network type of a valid GID table entry (its roce_version and l3_type). */
uint8_t cx4m_net_type_of(const struct mroce_addr *a);
/* Whether a GID can be the far end of a packet of network type net: RoCE v2 over IPv4 talks
 * to IPv4-mapped GIDs only, over IPv6 to no such GID, RoCE v1 to any. */
bool cx4m_net_rgid_ok(uint8_t net, const uint8_t rgid[16]);
/* A received packet comes from the far end of path and to its source GID (rxe check_addr). */
bool cx4m_net_pkt_on_path(const struct mdev *d, const struct roce_pkt *p, const struct mpath *path);
/* Whether the port has a medium for RoCE v1 frames (a cable, or an Ethernet net device). */
bool cx4m_net_has_ethernet(const struct mdev *d);
/*
 * SET_ROCE_ADDRESS: make a the table's entry idx, if the port's media can carry it (IPv6:
 * the sockets of its address are opened, those of the entry it replaces closed). 0, or
 * -errno when no medium carries it (the entry is left as it was).
 */
int cx4m_net_gid_set(struct mdev *d, uint32_t idx, const struct mroce_addr *a);
/* Every entry invalid (INIT_HCA, teardown, reset). */
void cx4m_net_gids_clear(struct mdev *d);

/* ---- the device ---------------------------------------------------------------------------- */
struct mprofile {
	const char *name;
	uint16_t pci_device;
	uint16_t fw_major, fw_minor, fw_sub;
	const char *psid;
};

struct mroce_addr {
	uint8_t gid[16];
	uint8_t mac[6];
	uint8_t version, l3_type;
	uint8_t net; /* enum roce_net, from version and l3_type */
	bool vlan_valid;
	uint16_t vlan;
	bool valid;
};

enum mhca_state {
	MHCA_DISABLED, /* after reset: waiting for ENABLE_HCA */
	MHCA_ENABLED,  /* ENABLE_HCA done */
	MHCA_INIT,     /* INIT_HCA done */
};

struct mdev {
	struct cx4_bus bus; /* first: the bus pointer is the device pointer */
	struct cx4_model_config cfg;
	char name[32];
	char netdev[16]; /* cfg.netdev points here */
	const struct mprofile *prof;

	/* BAR0 and the kick */
	uint8_t *bar0;
	int bar0_fd;
	struct cx4_kick_page *kick_page;
	int irq_fd[CX4_BUS_MAX_VECTORS];
	unsigned int nvec;

	/* engine */
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	/* cx4_model_stall (under lock): stopped from stall_at for stall_ns, every stall_period */
	uint64_t stall_at, stall_ns, stall_period;
	pthread_mutex_t lock;
	atomic_int lock_waiters;
	int epfd, timerfd;
	uint64_t timerfd_armed; /* the deadline timerfd is set to (UINT64_MAX: none) */
	uint64_t now; /* ns, refreshed each pass */
	uint64_t boot_ns;
	struct mtimer_heap timers;
	struct mtimer boot_timer, health_timer;

	/* the IOMMU in front of the device */
	struct iommu iommu;

	/* init segment state */
	bool initializing;
	bool fatal;	 /* health syndrome set: the firmware is dead */
	uint32_t cmdq_h; /* last write to 0x10 */
	uint64_t cmdq_iova;
	bool cmdq_valid;
	uint32_t cmd_pending; /* doorbell bits not yet served */
	uint8_t nic_interface;
	uint32_t health_counter;

	/* HCA */
	enum mhca_state hca;
	uint16_t issi;
	uint8_t host_endianness;
	bool teardown;
	uint8_t cap_cur[3]
		       [CX4_HCA_CAP_SIZE]; /* cache of the ICM copies, by cx4m_caps_boot_slot() */
	struct icm icm;

	/* objects */
	uint32_t *uar_used;		     /* [MDEV_UAR_PAGES]: 0 free, 1 + objects using it */
	uint32_t uar_active[MDEV_UAR_PAGES]; /* UAR pages whose rings are polled */
	uint32_t nuar_active;
	struct idtab pds, tds, eqs, cqs, mkeys, qps, srqs;
	struct mqp *gsi;	/* port 1's QP1, when the driver created it */
	struct meq *eq_by_type[64]; /* first subscribed EQ per event type (cache) */

	/* port */
	struct mroce_addr roce[256];
	uint32_t roce_tbl_size;
	uint8_t port_admin, port_oper; /* CX4_PORT_STATUS_* */
	bool link_cable;	       /* cx4_model_set_link */
	uint32_t port_mtu;	       /* bytes (Ethernet MTU) */
	uint32_t admin_mtu;	       /* PMTU admin (frame bytes), 0 = max */
	uint8_t nic_vport_ctx[CX4_NIC_VPORT_CTX_SIZE];
	uint8_t mac[6];

	/* data path */
	struct mnet net;
	struct mqp *active_head, *active_tail;
	struct mqp *ack_head;
	struct dma_batch rx_dma; /* responder data writes of this pass */
	struct {
		struct mcq *cq;
		uint8_t cqe[64];
	} * cqe_q; /* CQEs owed at the end of the pass */
	uint32_t ncqe_q, cqe_q_cap;
	struct meq *eq_fire_list[256]; /* EQs with an interrupt owed at the end of the pass */
	uint32_t neq_fire;

	struct cx4_model_stats stats;
	struct cx4_model_stats vport_cnt_base; /* stats at the last QUERY_VPORT_COUNTER clear */
	struct mctl *ctl;		       /* the control socket (ctl.c), NULL: none */
	FILE *log;
};

static inline struct mdev *mdev_of(struct cx4_bus *bus)
{
	return (struct mdev *)bus;
}

/* Log a device-side event (cfg.log), prefixed with the device name. */
void cx4m_mdev_log(struct mdev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* BAR0 (bar0.c) */
void cx4m_bar0_reset(struct mdev *d);
/* Drain the posted-write rings of page 0 and the active UAR pages; returns writes seen. */
int cx4m_bar0_poll(struct mdev *d);
void cx4m_bar0_set_timer(struct mdev *d);
void cx4m_bar0_health_fatal(struct mdev *d, uint8_t synd);
/* The function stops for good: nic_interface "disabled", every object forgotten. */
void cx4m_bar0_nic_disable(struct mdev *d);

/* ctl.c: the control socket (cx4_model_config.ctl_path) */
struct mctl;
int cx4m_mctl_start(struct mdev *d, const char *path);
void cx4m_mctl_stop(struct mdev *d);
void cx4m_bar0_health_tick(struct mdev *d, struct mtimer *t);
void cx4m_bar0_boot_done(struct mdev *d, struct mtimer *t);
void cx4m_bar0_uar_activate(struct mdev *d, uint32_t uar, bool on);
static inline uint32_t bar0_rd32(const struct mdev *d, uint32_t off)
{
	return cx4_be32_load(d->bar0 + off);
}
static inline void bar0_wr32(struct mdev *d, uint32_t off, uint32_t v)
{
	cx4_be32_store(d->bar0 + off, v);
}

/* Object tables, created at INIT_HCA (sized from the current capabilities). */
int cx4m_eq_tables_init(struct mdev *d);
int cx4m_cq_tables_init(struct mdev *d);
int cx4m_mkey_tables_init(struct mdev *d);
int cx4m_qp_tables_init(struct mdev *d);
int cx4m_srq_tables_init(struct mdev *d);
int cx4m_mdev_init_hca(struct mdev *d);

/* The port (vport.c). */
void cx4m_vport_init(struct mdev *d);
void cx4m_port_update(struct mdev *d);
bool cx4m_vport_roce_enabled(const struct mdev *d);

/* A packet whose payload could not be read (DMA fault); swq_pos -1 for responses. */
void cx4m_qp_tx_fault(struct mdev *d, struct mqp *qp, int32_t swq_pos);

/* Run the responder's pending DMA writes now (before memory they point to is reused). */
void cx4m_mdev_flush_rx_dma(struct mdev *d);

/* Whole-device reset (FLR, nic_interface SW reset, close). */
void cx4m_mdev_reset_state(struct mdev *d);
/* Destroy every object (TEARDOWN_HCA, reset). */
void cx4m_mdev_destroy_objects(struct mdev *d);

/* Syndromes: a stable 32-bit code per failed check, (opcode << 16) | check number. */
#define MSYND(op, n) (((uint32_t)(op) << 16) | (uint32_t)(n))

#endif /* CX4_MODEL_INT_H */
