/* SPDX-License-Identifier: MIT */
/*
 * cx4d: the ConnectX-4 driver in the kernel's role (Linux mlx5_core + the control half of
 * mlx5_ib). It owns the device through the bus interface (BAR0, DMA, MSI-X eventfds), brings
 * it up through the command queue, serves the firmware's page requests and health, and runs
 * the resource commands of its clients. One file per concern:
 *
 *   cx4d.c     main, the bvd ops table, request dispatch, --trace
 *   dma.c      the daemon's own DMA memory (command queue, mailboxes, EQs, firmware pages)
 *   cmd.c      the command interface: entries, mailbox chains, ownership, status
 *   trace.c    --trace: mlx5_core-format hexdumps of every command
 *   hca.c      bring-up and teardown (ENABLE_HCA ... CREATE_EQ), capabilities
 *   pages.c    firmware pages: boot/init/regular, page requests, reclaim
 *   eq.c       event queues, interrupts, event dispatch to clients
 *   health.c   the health buffer and heartbeat
 *   port.c     device and port attributes, RoCE address table, vport
 *   obj.c      per-client object handles (isolation) and number -> object maps
 *   umem.c     client memory mapped for device DMA (memfds, pid+va)
 *   pd.c mr.c mw.c cq.c srq.c qp.c ah.c ucontext.c   one resource kind each
 *   umr.c      the driver's UMR QP: memory keys changed in place (ibv_rereg_mr)
 *   gsi.c      QP1, the GSI agent: the connection manager's MADs (bvd_cm transport)
 */
#ifndef CX4D_H
#define CX4D_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bv_sysfs.h"
#include "bvd.h"
#include "bvd_attr.h"
#include "cx4_bus.h"
#include "cx4_prm.h"
#include "cx4_proto.h"

#define CX4D_PAGE		4096u
#define CX4D_MAX_COMP_EQS	8

/* ---- DMA memory the daemon owns (dma.c) --------------------------------------------------- */
struct cx4d_dma_chunk;

struct cx4d_dma {
	uint8_t *va;
	uint64_t iova;
	size_t len;
	struct cx4d_dma_chunk *chunk;
	size_t first;		/* first page in the chunk */
};

/* ---- Command interface (cmd.c) ------------------------------------------------------------- */
struct cx4d_mbox {
	uint8_t *va;
	uint64_t iova;
};

struct cx4d_cmd_slot {
	struct cx4d_mbox *in, *out;	/* mailbox chains, grown on demand */
	unsigned int nin, nout;
	bool busy;
};

/* ---- Event queues (eq.c) ------------------------------------------------------------------- */
struct cx4d_eq {
	struct cx4d_dma buf;
	uint32_t eqn;
	unsigned int log_size;
	uint32_t ci;
	unsigned int vector;
	uint64_t mask;
	bool live;
	const char *name;
};

/* ---- Number -> object maps (obj.c) ---------------------------------------------------------- */
struct cx4d_idmap_ent;

struct cx4d_idmap {
	struct cx4d_idmap_ent **b;
	unsigned int nbuckets;
};

/* ---- Client memory mapped for DMA (umem.c) ------------------------------------------------- */
struct cx4d_umem {
	uint64_t iova;		/* IOVA the device is given (PAS / MTT base) */
	uint64_t map_iova;	/* where the mapping starts, when not at iova */
	uint64_t map_len;
	bool mapped;
};

/* ---- Objects (one kind per file) ----------------------------------------------------------- */
enum cx4d_obj_type {
	CX4D_OBJ_PD = 1,
	CX4D_OBJ_MR,
	CX4D_OBJ_CQ,
	CX4D_OBJ_SRQ,
	CX4D_OBJ_QP,
	CX4D_OBJ_MW,
};
#define CX4D_OBJ_NTYPES (CX4D_OBJ_MW + 1) /* nobj[] is indexed by type: keep it the last + 1 */

struct cx4d_client;

struct cx4d_obj {
	enum cx4d_obj_type type;
	uint32_t handle;
	struct cx4d_client *owner;
	unsigned int users;	/* other objects that name this one: destroy says EBUSY */
};

struct cx4d_pd {
	struct cx4d_obj o;
	uint32_t pdn;
};

struct cx4d_mr {
	struct cx4d_obj o;
	struct cx4d_pd *pd;
	uint32_t mkey_index;
	uint32_t key;
	uint32_t access;	/* IBV_ACCESS_* as registered (or re-registered) */
	struct cx4d_umem umem;
};

struct cx4d_mw {
	struct cx4d_obj o;
	struct cx4d_pd *pd;
	uint32_t mkey_index;
};

struct cx4d_cq {
	struct cx4d_obj o;
	uint32_t cqn;
	uint64_t user_handle;
	int channel_fd;
	uint32_t eqn;
	struct cx4d_umem umem;		/* the buffer of CREATE_CQ: its ring, the doorbell record */
	struct cx4d_umem ring;		/* after a resize: the ring in use (umem keeps the record) */
	uint64_t events;
	uint32_t async_events;
};

struct cx4d_srq {
	struct cx4d_obj o;
	struct cx4d_pd *pd;
	uint32_t srqn;
	uint64_t user_handle;
	uint32_t limit;
	struct cx4d_umem umem;
	uint32_t async_events;
};

struct cx4d_qp {
	struct cx4d_obj o;
	struct cx4d_pd *pd;
	struct cx4d_cq *scq, *rcq;
	struct cx4d_srq *srq;
	uint32_t qpn;
	uint32_t type;		/* IBV_QPT_* */
	uint64_t user_handle;
	struct cx4d_umem umem;
	uint32_t async_events;
	/* what the kernel keeps of ib_qp_attr: the state machine and the cached path */
	uint32_t state;		/* enum ibv_qp_state */
	uint8_t ads[CX4_ADS_SIZE];	/* primary address path as last programmed */
	struct cx4_ah_attr ah;
	uint32_t port;
	uint32_t access;
	uint32_t qkey;
	uint32_t mtu;		/* enum ibv_mtu */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
};

/* ---- The GSI agent: QP1 and its buffers (gsi.c) ------------------------------------------- */
struct cx4d_gsi {
	bool up;
	bool has_pd, has_cq, has_qp;
	uint32_t pdn, cqn, qpn;
	uint32_t lkey;			/* the reserved lkey: IOVAs */
	struct cx4d_dma dbr;		/* CQ doorbell record at 0, QP's at 64 */
	struct cx4d_dma cqbuf;
	struct cx4d_dma qbuf;		/* RQ, then SQ */
	uint8_t *sq;
	struct cx4d_dma mem;		/* receive slots, then send slots */
	uint32_t rq_head;
	uint16_t sq_pi, sq_ci;		/* WQEBB counters */
	uint32_t cq_ci;
	uint32_t arm_sn;
	uint64_t rx, tx, rx_err, tx_err, tx_full;
};

/* ---- A verbs client (one ibv_context) ------------------------------------------------------ */
struct cx4d_client {
	struct bvd_client *bc;
	pid_t pid;		/* from SO_PEERCRED: whose memory REG_MR maps */
	bool has_uar;
	uint32_t uar;
	struct cx4d_obj **objs;
	uint32_t nobjs;		/* slots in objs */
	uint32_t live;		/* non-NULL slots */
};

/* ---- The driver's UMR QP (umr.c) ----------------------------------------------------------- */
struct cx4d_umr {
	bool live;
	bool broken;		/* a UMR failed: the QP is in error until recovered */
	uint32_t pdn, cqn, qpn;
	struct cx4d_dma cq_buf, qp_buf;	/* ring, then the doorbell record at 1 KB */
	uint32_t cq_ci, sq_pi;
};

/* ---- The device ---------------------------------------------------------------------------- */
struct cx4d_fw_page {
	struct cx4d_fw_page *next;	/* all pages, for teardown */
	struct cx4d_dma mem;
};

struct cx4d {
	struct bvd *bvd;
	struct cx4_bus *bus;
	const struct bv_dev_conf *conf;
	FILE *trace;		/* --trace: mlx5_core-format hexdumps of every command */

	/* init segment */
	uint16_t fw_major, fw_minor, fw_sub;
	uint16_t cmdif_rev;

	/* command queue */
	struct cx4d_dma cmdq;
	unsigned int log_cmdq_size, log_cmdq_stride;
	uint8_t token;
	bool cmd_events;	/* the command EQ exists: wait on its interrupt */
	struct cx4d_cmd_slot slot[CX4_CMDQ_MAX_ENTRIES];
	uint64_t ncmds;
	int cmd_depth;		/* nested commands (page requests served while one waits) */

	/* capabilities (QUERY_HCA_CAP answers after INIT_HCA) */
	uint8_t cap_gen[CX4_HCA_CAP_SIZE], cap_gen_max[CX4_HCA_CAP_SIZE];
	uint8_t cap_roce[CX4_HCA_CAP_SIZE];
	uint8_t cap_atomic[CX4_HCA_CAP_SIZE];
	bool have_roce_cap, have_atomic_cap;
	uint16_t issi;
	char psid[CX4_ADAPTER_PSID_LEN + 1];

	/* firmware pages */
	struct cx4d_idmap pages;	/* IOVA >> 12 -> struct cx4d_fw_page */
	struct cx4d_fw_page *page_list;
	size_t npages;
	bool hca_inited;

	/* our own UAR: EQ doorbells */
	bool have_uar;
	uint32_t uar;
	struct cx4_mmio uar_mmio;

	/* event queues */
	struct cx4d_eq eq_cmd, eq_async, eq_pages;
	struct cx4d_eq eq_comp[CX4D_MAX_COMP_EQS];
	unsigned int ncomp;

	/* number -> object (isolation: events go to the owner only) */
	struct cx4d_idmap qps, cqs, srqs;

	/* what clients hold, for bvctl status: a client that died must leave nothing behind */
	unsigned int nobj[CX4D_OBJ_NTYPES];	/* live objects of each type */
	unsigned int numem;			/* client memory mapped for the device */
	uint64_t umem_bytes;

	/* port 1 */
	uint8_t mac[6];
	uint32_t port_state;		/* enum ibv_port_state */
	uint32_t max_mtu_bytes, oper_mtu_bytes;
	uint32_t eth_proto_oper;
	uint32_t gid_tbl_len;
	struct bv_gid_entry gids[BV_CX4_GID_TBL_LEN];	/* entries 0..ngids-1 programmed */
	unsigned int ngids;

	/* health */
	int health_tfd;
	uint32_t health_prev;
	unsigned int health_miss;
	bool dead;

	struct cx4d_gsi gsi;
	struct cx4d_umr umr;

	uint8_t mkey_key;		/* mkey_7_0 of the next memory key */
	uint64_t iova_next;		/* IOVA allocator: never reused */
	int hca_state;			/* bring-up progress, for teardown */
};

/* cx4d.c: the device kind (cx4d_main.c runs bvd_main() with it; the fuzz targets drive it) */
extern const struct bvd_kind_ops cx4d_ops;

static inline struct cx4d *cx4d_of(struct bvd *b)
{
	return b->priv;
}

/* cx4d.c */
void cx4d_log(struct cx4d *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* trace.c */
void cx4d_trace_cmd(struct cx4d *d, const uint8_t *entry, const struct cx4d_mbox *blocks,
		    unsigned int nblocks, size_t msg_len, bool input);

/* dma.c */
uint64_t cx4d_iova_alloc(struct cx4d *d, uint64_t len, uint64_t align);
int cx4d_dma_alloc(struct cx4d *d, size_t len, struct cx4d_dma *m);
void cx4d_dma_free(struct cx4d *d, struct cx4d_dma *m);
void cx4d_dma_fini(struct cx4d *d);

/* cmd.c */
int cx4d_cmd_init(struct cx4d *d);
void cx4d_cmd_fini(struct cx4d *d);
/*
 * Execute one command: in/out are the whole messages (header included). Returns 0 when the
 * device executed it with status OK, else a positive errno (the command status mapped as
 * Linux cmd_status_to_err does; ETIMEDOUT; EIO for delivery errors), with a log line.
 */
int cx4d_cmd(struct cx4d *d, const void *in, size_t inlen, void *out, size_t outlen);
/* The same, quiet about command status failures (probing optional features). */
int cx4d_cmd_quiet(struct cx4d *d, const void *in, size_t inlen, void *out, size_t outlen,
		   uint8_t *status);
void cx4d_cmd_set_header(void *in, uint16_t opcode, uint16_t op_mod);

/* hca.c */
int cx4d_hca_up(struct cx4d *d);
void cx4d_hca_down(struct cx4d *d);
int cx4d_query_cap(struct cx4d *d, unsigned int type, unsigned int cur, uint8_t *cap);

/* pages.c */
int cx4d_pages_satisfy(struct cx4d *d, uint16_t op_mod);
int cx4d_pages_give(struct cx4d *d, uint16_t func_id, int32_t n);
int cx4d_pages_reclaim(struct cx4d *d, uint16_t func_id, int32_t n);
int cx4d_pages_reclaim_all(struct cx4d *d);
void cx4d_pages_free_all(struct cx4d *d);

/* eq.c */
int cx4d_eqs_create(struct cx4d *d);
int cx4d_eq_create_cmd(struct cx4d *d);
void cx4d_eqs_destroy(struct cx4d *d);
/* Serve events of the command/pages EQs while a command waits (cmd.c). */
void cx4d_eq_poll_while_waiting(struct cx4d *d, int timeout_ms);

/* health.c */
int cx4d_health_start(struct cx4d *d);
void cx4d_health_stop(struct cx4d *d);
void cx4d_device_fatal(struct cx4d *d, const char *why);

/* port.c */
int cx4d_port_init(struct cx4d *d);
int cx4d_query_device(struct bvd *b, struct bv_device_attr *a);
int cx4d_query_port(struct bvd *b, unsigned int port, struct bv_port_attr *a);
void cx4d_port_refresh(struct cx4d *d);
/* `bvctl status` lines: the port's state and traffic counters (QUERY_VPORT_COUNTER). */
size_t cx4d_port_status(struct cx4d *d, char *buf, size_t len);
int cx4d_gid_get(struct cx4d *d, unsigned int index, uint8_t gid[16], int *roce_v2);
/* One of the port's GIDs (loopback: the destination MAC is ours). */
bool cx4d_gid_is_own(struct cx4d *d, const uint8_t gid[16]);
uint32_t cx4d_active_mtu(struct cx4d *d);

/* gsi.c */
extern const struct bvd_cm_transport cx4d_gsi_transport;
int cx4d_gsi_up(struct cx4d *d);
void cx4d_gsi_down(struct cx4d *d);
void cx4d_gsi_cq_event(struct cx4d *d);
size_t cx4d_gsi_status(struct cx4d *d, char *buf, size_t len);

/* obj.c */
int cx4d_idmap_init(struct cx4d_idmap *m);
void cx4d_idmap_fini(struct cx4d_idmap *m);
int cx4d_idmap_put(struct cx4d_idmap *m, uint64_t id, void *p);
void *cx4d_idmap_get(struct cx4d_idmap *m, uint64_t id);
void cx4d_idmap_del(struct cx4d_idmap *m, uint64_t id);
int cx4d_obj_add(struct cx4d_client *cl, struct cx4d_obj *o, enum cx4d_obj_type type);
void *cx4d_obj_get(struct cx4d_client *cl, uint32_t handle, enum cx4d_obj_type type);
void cx4d_obj_remove(struct cx4d_client *cl, struct cx4d_obj *o);

/* umem.c */
/* fd is a regular file sealed against shrinking that holds off .. off + len. */
bool cx4d_umem_fd_ok(int fd, uint64_t off, uint64_t len);
int cx4d_umem_map_fd(struct cx4d *d, int fd, uint64_t off, uint64_t len, struct cx4d_umem *u);
/* Registered memory: by pid + va, or (fd >= 0) the memfd holding those pages from fd_off on. */
int cx4d_umem_map_va(struct cx4d *d, pid_t pid, int fd, uint64_t fd_off, uint64_t va,
		     uint64_t len, uint64_t hca_va, unsigned int log_page, uint32_t perm,
		     struct cx4d_umem *u);
void cx4d_umem_unmap(struct cx4d *d, struct cx4d_umem *u);
unsigned int cx4d_log2_up(uint64_t v);
/* log_page_size of the single PAS entry that covers a buffer of len bytes (4 KB << n). */
unsigned int cx4d_pas_log_page(uint64_t len);

/* Resource requests: each fills r (status, payload, fds) like a bvd request handler. */
struct cx4d_req {
	const void *in;
	size_t len;
	int *fds;
	unsigned int nfds;
	struct bvd_reply *r;
};

int cx4d_ucontext_alloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
void cx4d_ucontext_free(struct cx4d *d, struct cx4d_client *cl);
int cx4d_pd_alloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_pd_dealloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
void cx4d_pd_destroy(struct cx4d *d, struct cx4d_pd *pd);
int cx4d_mr_reg(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_mr_dereg(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_mr_rereg(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
void cx4d_mr_destroy(struct cx4d *d, struct cx4d_mr *mr);
void cx4d_mkey_destroy(struct cx4d *d, uint32_t index);
int cx4d_mw_alloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_mw_dealloc(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
void cx4d_mw_destroy(struct cx4d *d, struct cx4d_mw *mw);
/* umr.c: a memory key's PD and access changed in place; 0 or an errno */
int cx4d_umr_rereg_pd_access(struct cx4d *d, uint32_t key, uint32_t pdn, uint32_t access);
void cx4d_umr_fini(struct cx4d *d);
int cx4d_cq_create(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_cq_destroy_req(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_cq_resize(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
void cx4d_cq_destroy(struct cx4d *d, struct cx4d_cq *cq);
void cx4d_cq_event(struct cx4d *d, uint32_t cqn);
void cx4d_cq_error(struct cx4d *d, uint32_t cqn, uint8_t syndrome);
int cx4d_srq_create(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_srq_modify(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_srq_query(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_srq_destroy_req(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
void cx4d_srq_destroy(struct cx4d *d, struct cx4d_srq *srq);
void cx4d_srq_event(struct cx4d *d, uint32_t srqn, uint8_t type);
int cx4d_qp_create(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_qp_modify(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_qp_query(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_qp_destroy_req(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
void cx4d_qp_destroy(struct cx4d *d, struct cx4d_qp *qp);
void cx4d_qp_event(struct cx4d *d, uint32_t qpn, uint8_t type);
int cx4d_ah_resolve(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);
int cx4d_resolve_dmac(struct cx4d *d, const uint8_t dgid[16], uint8_t dmac[6]);

/* neigh.c: the MAC of an IP GID on the port's Ethernet net device. 0 or EHOSTUNREACH. */
int cx4d_neigh_resolve(struct cx4d *d, const uint8_t gid[16], uint8_t mac[6]);

#endif /* CX4D_H */
