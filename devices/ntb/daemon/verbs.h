/* SPDX-License-Identifier: MIT */
/*
 * ntbd's verbs module (ntbd_verbs_module): the resource requests of ntb provider contexts
 * (kernel-abi/ntb_proto.h) and the control area this end publishes in the peer's window
 * (kernel-abi/ntb_verbs_wire.h). Plays the uverbs core plus the RDMA driver's resource code:
 *
 *   verbs_module.c   the hooks ntbd calls, the window plan, request dispatch, status
 *   verbs_clients.c  client slots: slices, doorbell vectors, HAL grants, relay, teardown
 *   verbs_mr.c       protection domains, memory regions, the IOMMU aperture
 *   verbs_qp.c       QP numbers and the QP table
 *   verbs_publish.c  writing entries into the peer's control area (stores only, seqlocked)
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
	int relay_fd;			/* eventfd: "look at your rings" */
	/* what it owns: its teardown stops looking through the tables once all are found */
	unsigned int npds, nmrs, nqps;
};

struct nv_slot {
	struct nv_client *owner;
	uint32_t epoch;			/* odd while in use */
	uint64_t freed_ns;		/* when it was last given back */
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

struct nv_extent {
	uint64_t off, len;
};

struct nv_state {
	struct ntbd *n;
	bool ready;			/* link READY and our plan laid out */
	/* our window plan (control region offsets) */
	uint32_t max_slots;
	uint32_t ring_cells;		/* request rings */
	uint32_t resp_cells;		/* response rings */
	uint64_t ctrl_off;		/* our control area: the peer writes it */
	uint64_t slices_off;
	uint64_t slice_len;
	uint32_t mtu;
	/* the peer's control area in its window: we write it */
	uint8_t *pctrl;
	uint64_t peer_gen;		/* bumped as we publish */
	uint64_t seen_gen;		/* the peer's gen we last relayed */
	struct nv_client *clients;
	struct nv_slot slots[NTBV_MAX_SLOTS];
	struct nv_mr mrs[NTBV_MAX_MR];
	struct nv_qp qps[NTBV_MAX_QP];
	struct nv_pd *pds;
	uint32_t next_pd;
	/* the aperture: the rest of window 0, where registered memory is mapped */
	struct nv_extent *free_ext;
	unsigned int nfree, free_cap;
	uint32_t vector_owner_mask;	/* doorbell vectors given to clients */
	uint32_t ipv4;			/* our port address, network order */
	uint8_t gid[16];
	unsigned int engines_held;	/* revoked engine slots live processes still hold */
};

static inline struct nv_state *nv(struct ntbd *n)
{
	return n->mod_priv;
}

uint64_t nv_now(void);
struct nv_client *nv_client_find(struct nv_state *s, struct bvd_client *c);

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
void nv_map_peer_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		    struct bvd_reply *r);
void nv_dereg_mr(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		 struct bvd_reply *r);
void nv_free_client_mrs(struct nv_state *s, struct nv_client *cl);
void nv_aperture_init(struct nv_state *s, uint64_t off, uint64_t len);
void nv_aperture_fini(struct nv_state *s);

/* verbs_qp.c */
void nv_create_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		  struct bvd_reply *r);
void nv_modify_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		  struct bvd_reply *r);
void nv_destroy_qp(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
		   struct bvd_reply *r);
void nv_free_client_qps(struct nv_state *s, struct nv_client *cl);

/* verbs_publish.c */
void nv_publish_header(struct nv_state *s);
void nv_publish_slot(struct nv_state *s, unsigned int slot);
void nv_publish_qp(struct nv_state *s, uint32_t index);
void nv_publish_mr(struct nv_state *s, uint32_t index);
/*
 * The header the peer's ntbd wrote into our control area, copied once and checked (the peer
 * may write anything there at any time: a broken or hostile peer must not make us read or
 * write outside our mappings): 0, -EAGAIN (not written yet, or the link is not ready) or
 * -EPROTO (nonsense).
 */
int nv_peer_hdr(struct nv_state *s, struct ntbv_ctrl_hdr *h);
/* Zero the pair blocks a dead client of ours left in every peer slice. */
void nv_clear_peer_pairs(struct nv_state *s, unsigned int slot);
void nv_publish_done(struct nv_state *s);

#endif /* NTBD_VERBS_H */
