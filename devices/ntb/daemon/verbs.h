/* SPDX-License-Identifier: MIT */
/*
 * ntbd's verbs module (ntbd_verbs_module): the resource requests of ntb provider contexts
 * (kernel-abi/ntb_proto.h) and the control area this end publishes in the peer's window
 * (kernel-abi/ntb_verbs_wire.h). Plays the uverbs core plus the RDMA driver's resource code:
 *
 *   verbs_module.c   the hooks ntbd calls, the window plan, request dispatch, status
 *   verbs_clients.c  client slots: doorbell vectors, HAL grants, bells, relay, teardown
 *   verbs_pairs.c    pair blocks: allocation in the reader's pool, directory, retirement
 *   verbs_pool.c     first-fit allocator of page extents (aperture, pair pools)
 *   verbs_mr.c       protection domains, memory regions, the IOMMU aperture
 *   verbs_qp.c       QP numbers and the QP table
 *   verbs_publish.c  writing entries into the peer's control area and the loopback memory
 */
#ifndef NTBD_VERBS_H
#define NTBD_VERBS_H

#include <stdbool.h>
#include <stdint.h>

#include "ntb_proto.h"
#include "ntb_verbs_wire.h"
#include "ntbd.h"

#define NV_MAX_PD	65536

struct nv_client {
	struct bvd_client *c;
	struct nv_client *next;
	bool attached;
	unsigned int slot;
	pid_t pid;
	uint64_t db_bits;		/* its own doorbell vector, 0: relayed */
	uint32_t grant_id;
	bool granted;
	/* what it owns: its teardown stops looking through the tables once all are found */
	unsigned int npds, nmrs, nqps;
};

struct nv_slot {
	struct nv_client *owner;
	uint32_t epoch;			/* odd while in use */
	uint64_t freed_ns;		/* when it was last given back */
	/*
	 * The bell of the client holding the slot: an eventfd that wakes it (ntbd relays the
	 * shared doorbell into it, loopback writers write it). One per incarnation: writers
	 * that still hold a departed client's write into nothing, harmlessly.
	 */
	int bell_fd;
};

struct nv_extent {
	uint64_t off, len;
};

/* Free page extents of one memory (verbs_pool.c): first fit, merged on free. */
struct nv_pool {
	struct nv_extent *ext;
	unsigned int n, cap;
	uint64_t base, len;		/* the managed range */
	uint64_t used;
};

/* Which memory a pair's block is in: the peer's window, or our loopback memory. */
enum { NV_PEER = 0, NV_LOCAL = 1, NV_ENDS };

enum nv_pair_state {
	NV_PAIR_FREE = 0,
	NV_PAIR_OPEN,			/* published, written by its writer */
	NV_PAIR_RETIRED,		/* an incarnation left: readable until retire_ns + grace */
};

/* The block our client slot w writes for reader slot r of one end (verbs_pairs.c). */
struct nv_pair {
	uint8_t state;			/* enum nv_pair_state */
	uint32_t w_epoch, r_epoch;
	uint32_t req_cells, resp_cells;
	uint32_t seq;			/* of its published directory entry */
	uint64_t off, len;
	uint64_t retired_ns;
};

/* A block displaced before its grace ended: its memory returns to the pool later. */
struct nv_quarantine {
	uint8_t end;
	uint64_t off, len;
	uint64_t ready_ns;
};

struct nv_mr {
	struct nv_client *owner;	/* NULL: free */
	uint32_t key;
	uint32_t pd;
	uint32_t access;
	uint64_t addr, length, hca_va;
	uint64_t ap_off, ap_len;	/* aperture range mapped in the IOMMU (len 0: none) */
	uint64_t win_off;
	uint8_t variant;
	uint8_t mw;			/* 0: a region; IBV_MW_TYPE_1 or _2: a memory window's key */
	uint32_t seq;			/* of its published entry */
};

struct nv_qp {
	struct nv_client *owner;	/* NULL: free */
	struct ntbv_qp_ent ent;		/* what the peer sees (our copy: we never read theirs) */
	uint32_t pd;
	uint16_t gen;
};

struct nv_pd {
	struct nv_client *owner;
	uint32_t users;			/* MRs and QPs */
};

struct nv_state {
	struct ntbd *n;
	bool ready;			/* link READY and our plan laid out */
	/* our window plan (control region offsets) */
	uint32_t max_slots;
	uint64_t ctrl_off;		/* our control area: the peer writes it */
	uint64_t vbell_off;		/* the peer's clients write our clients' vbells here */
	uint64_t dir_off, dgen_off;	/* the peer's ntbd writes our clients' directory here */
	uint64_t pool_off, pool_len;	/* ... and allocates its clients' blocks here */
	uint32_t mtu;
	uint32_t req_cells_max, resp_cells_max;	/* the largest rings a block gets */
	/* the peer's control area in its window: we write it */
	uint8_t *pctrl;
	/* our loopback memory: our control area for our own clients, directory, pool */
	int lo_fd;
	uint8_t *lo;
	uint64_t lo_len;
	uint64_t lo_dir_off, lo_dgen_off, lo_pool_off, lo_pool_len;
	uint64_t lo_gen;		/* the loopback control area's generation */
	/* pairs our clients write: blocks in the peer's window and in our loopback memory */
	struct nv_pair (*pairs)[NTBV_MAX_SLOTS][NTBV_MAX_SLOTS];	/* [end][writer][reader] */
	struct nv_pool pool[NV_ENDS];
	bool peer_pool_ready;		/* pool[NV_PEER] laid out from the peer's header */
	uint32_t peer_dir_slots;	/* the peer's max_slots: its directory's row length */
	uint64_t peer_dir_off, peer_dgen_off;
	uint64_t dgen[NV_ENDS][NTBV_MAX_SLOTS];	/* what we last stored in a reader's dgen */
	uint32_t peer_epoch_seen[NTBV_MAX_SLOTS];	/* peer slot epochs our pairs know */
	unsigned int nopen[NV_ENDS];
	unsigned int nretired;
	struct nv_quarantine *quar;
	unsigned int nquar, quar_cap;
	uint64_t peer_gen;		/* bumped as we publish */
	uint64_t seen_gen;		/* the peer's gen we last relayed */
	struct nv_client *clients;
	struct nv_slot slots[NTBV_MAX_SLOTS];
	struct nv_mr mrs[NTBV_MAX_MR];
	struct nv_qp qps[NTBV_MAX_QP];
	struct nv_pd *pds;
	uint32_t next_pd;
	/* the aperture: the rest of window 0, where registered memory is mapped */
	struct nv_pool aperture;
	bool aperture_ready;
	uint32_t vector_owner_mask;	/* doorbell vectors given to clients */
	uint32_t ipv4;			/* our port address, network order */
	uint8_t gid[16], gid_ll[16];
	unsigned int engines_held;	/* revoked engine slots live processes still hold */
};

static inline struct nv_state *nv(struct ntbd *n)
{
	return n->mod_priv;
}

uint64_t nv_now(void);
struct nv_client *nv_client_find(struct nv_state *s, struct bvd_client *c);

/* verbs_pool.c */
int nv_pool_init(struct nv_pool *p, uint64_t base, uint64_t len);
void nv_pool_fini(struct nv_pool *p);
int nv_pool_alloc(struct nv_pool *p, uint64_t len, uint64_t *off);
void nv_pool_free(struct nv_pool *p, uint64_t off, uint64_t len);
static inline uint64_t nv_pool_avail(const struct nv_pool *p)
{
	return p->len - p->used;
}

/* verbs_pairs.c */
int nv_pairs_init(struct nv_state *s);
void nv_pairs_fini(struct nv_state *s);
void nv_open_pair(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		  struct bvd_reply *r);
/* Our client slot left: every pair it writes or (loopback) reads retires. */
void nv_pairs_client_gone(struct nv_state *s, unsigned int slot);
/* The peer's slot table changed: pairs towards its departed clients retire. */
void nv_pairs_peer_changed(struct nv_state *s);
/* The link went down: pairs in the peer's window are gone with its session. */
void nv_pairs_link_lost(struct nv_state *s);
/* Retired blocks whose grace is over go back to their pool. */
void nv_pairs_reclaim(struct nv_state *s);

/* verbs_clients.c */
void nv_attach(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
	       struct bvd_reply *r);
void nv_client_gone(struct nv_state *s, struct nv_client *cl);
void nv_relay(struct nv_state *s, bool all);
/* Take back the engine slots of our IOMMU that departed peer clients held. */
void nv_reclaim_engines(struct nv_state *s);

/* verbs_mr.c */
void nv_alloc_pd(struct nv_state *s, struct nv_client *cl, struct bvd_reply *r);
void nv_dealloc_pd(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		   struct bvd_reply *r);
bool nv_pd_owned(struct nv_state *s, struct nv_client *cl, uint32_t pd);
void nv_reg_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
	       const int *fds, unsigned int nfds, struct bvd_reply *r);
void nv_rereg_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		 const int *fds, unsigned int nfds, struct bvd_reply *r);
void nv_map_peer_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		    struct bvd_reply *r);
void nv_alloc_mw(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		 struct bvd_reply *r);
void nv_dealloc_mw(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		   struct bvd_reply *r);
void nv_dereg_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		 struct bvd_reply *r);
void nv_free_client_mrs(struct nv_state *s, struct nv_client *cl);

/* verbs_qp.c */
void nv_create_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		  struct bvd_reply *r);
void nv_modify_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		  struct bvd_reply *r);
void nv_destroy_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		   struct bvd_reply *r);
void nv_free_client_qps(struct nv_state *s, struct nv_client *cl);

/*
 * verbs_publish.c. Our objects go into two control areas: the peer's (in its window, while the
 * link is READY) and our loopback memory's (always): the same entries, for requesters of
 * either end.
 */
void nv_publish_header(struct nv_state *s);
void nv_publish_lo_header(struct nv_state *s);
void nv_publish_slot(struct nv_state *s, unsigned int slot);
void nv_publish_qp(struct nv_state *s, uint32_t index);
void nv_publish_mr(struct nv_state *s, uint32_t index);
/* A directory entry of the reader's memory of end (NV_PEER / NV_LOCAL), and its dgen. */
void nv_publish_pair(struct nv_state *s, int end, unsigned int w, unsigned int r,
		     const struct nv_pair *pr);
/*
 * The header the peer's ntbd wrote into our control area, copied once and checked (the peer
 * may write anything there at any time: a broken or hostile peer must not make us read or
 * write outside our mappings): 0, -EAGAIN (not written yet, or the link is not ready) or
 * -EPROTO (nonsense).
 */
int nv_peer_hdr(struct nv_state *s, struct ntbv_ctrl_hdr *h);
/* Tables changed: bump the generations and tell the peer's ntbd (the control doorbell). */
void nv_publish_done(struct nv_state *s);

#endif /* NTBD_VERBS_H */
