/* SPDX-License-Identifier: MIT */
/*
 * The emulated NTB link: internals shared by the model's files. Nothing outside
 * devices/ntb/model includes this; drivers use ntb_hal.h.
 */
#ifndef NTB_MODEL_H
#define NTB_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ntb_hal.h"
#include "ntb_regs.h"
#include "profile.h"

/*
 * One side's shared memory as mapped in this process, with the interrupt eventfds of that
 * side (for the local side: the ones we are woken by; for the peer: the ones we write to
 * raise its interrupts). Reference counted: DMA channels keep the peer side they were opened
 * with alive after the cable is replaced (their writes are then dropped by the epoch check).
 */
struct ntb_side {
	int refs;
	int shm_fd;
	void *shm;
	struct ntb_regs *regs;
	struct ntb_iommu_tbl *iommu;
	int nvec;
	int vec_fd[NTB_MAX_DB_VECTORS];
	int misc_fd;			/* message-register interrupt */
	pid_t pid;			/* the side's owner process */
};

/* A shareable memory object (memfd) behind an FD-kind IOMMU mapping. */
struct ntb_obj {
	struct ntb_obj *next;
	uint32_t id;
	int fd;
	uint64_t off;			/* mapped range of fd: off .. off + size */
	uint64_t size;
	void *va;			/* our own mapping (local objects only) */
};

struct ntb_iova_range {
	uint64_t start, size;
};

struct ntb_grant_rec {
	struct ntb_grant_rec *next;
	uint32_t id;
	uint64_t vec_mask;		/* local vectors given away */
};

struct ntb_pio_map {
	void *addr;
	uint64_t size;
};

struct ntb_dev {
	bool owner;
	int prof_idx;
	const struct ntb_profile *prof;
	int side;
	uint64_t mw_size;
	struct ntb_side *local;
	struct ntb_side *peer;		/* NULL while no peer is plugged in */
	int epfd;			/* ntb_event_fd() */
	uint32_t pending;		/* events gathered, not yet returned */
	int pend_fd;			/* eventfd: readable while pending != 0 */
	struct ntb_pio_map pio[NTB_MAX_MW];

	/* owner: the cable */
	char link[64];
	char cable_path[256];
	int lock_fd;			/* socket bound to the side's abstract name */
	int lsock;			/* side 0: listening socket */
	int inofd;			/* side 1: inotify on the run directory */
	int cable;			/* connected socket, -1 while unplugged */
	bool peer_enabled;
	uint32_t peer_enable_gen;	/* the peer's enable_gen when we last looked */
	bool relink;			/* a peer bounce was reported as down: up next */
	struct ntb_obj *objs;		/* ours (FD-kind IOMMU mappings) */
	struct ntb_obj *peer_objs;	/* the peer's, received over the cable */
	uint32_t next_obj;
	struct ntb_iova_range *iova;	/* allocated ranges, sorted */
	int niova, iova_cap;
	struct ntb_grant_rec *grants;
	uint32_t next_grant;
	uint64_t vec_given;		/* local vectors held by clients */

	/* client */
	uint32_t epoch;			/* the link epoch the grant belongs to */
	uint32_t peer_epoch;		/* and the peer's */
	uint64_t g_db_bits;
	uint64_t g_peer_db_bits;
	uint32_t g_mw_mask;
	uint32_t g_flags;
	uint32_t g_grant_id;		/* the grant this handle came from */
};

/* dev.c */
struct ntb_dev *ntb_dev_alloc(void);

/* side.c */
struct ntb_side *ntb_side_new_local(int prof_idx, int side, uint64_t mw_size);
struct ntb_side *ntb_side_import(int shm_fd, int nvec, const int *vec_fd, int misc_fd, pid_t pid);
void ntb_side_get(struct ntb_side *s);
void ntb_side_put(struct ntb_side *s);

/* cable.c (owner) */
int ntb_cable_open(struct ntb_dev *ntb, const char *rundir);
void ntb_cable_close(struct ntb_dev *ntb);
void ntb_cable_event(struct ntb_dev *ntb, int fd, uint32_t events);
void ntb_cable_drain(struct ntb_dev *ntb);
void ntb_cable_send_link(struct ntb_dev *ntb);
void ntb_cable_send_obj(struct ntb_dev *ntb, const struct ntb_obj *o);
void ntb_cable_send_obj_del(struct ntb_dev *ntb, uint32_t id);
void ntb_link_update(struct ntb_dev *ntb);

/* events */
void ntb_pend(struct ntb_dev *ntb, uint32_t ev);
int ntb_epoll_add(struct ntb_dev *ntb, int fd);
void ntb_epoll_del(struct ntb_dev *ntb, int fd);

/* ops.c: the register operations on explicit sides (used by the DMA engine too) */
/*
 * Writes toward the peer pass only while both ends see the link up, and, for handles bound to
 * a session (client handles, DMA channels: epoch != 0), only in that session on both ends.
 */
bool ntb_link_ok(const struct ntb_side *local, uint32_t epoch, const struct ntb_side *peer,
		 uint32_t peer_epoch);
/* The session a handle made now belongs to: the peer's epoch once it sees the link up. */
uint32_t ntb_peer_epoch_now(const struct ntb_side *peer);
void ntb_side_db_set(const struct ntb_profile *p, struct ntb_side *local,
		     struct ntb_side *peer, uint64_t bits);
void ntb_raise(int fd);
/* A window's translation as the NTB sees it: 0 or -ENXIO (not translated). */
int ntb_xlat_read(const struct ntb_profile *p, struct ntb_side *local, struct ntb_side *peer,
		  int widx, uint64_t *base, uint64_t *size);

/* iommu.c */
/*
 * Look iova up in a side's table: true and the entry covering it, or false and the next
 * entry above iova (out->iova = UINT64_MAX if none), so a walker can skip the hole.
 */
bool ntb_iommu_lookup(struct ntb_iommu_tbl *t, uint64_t iova, struct ntb_iommu_ent *out,
		      uint64_t *seq);
/* A channel's claim on an engine slot: this process and the grant its handle came with. */
uint64_t ntb_iommu_slot_tag(uint32_t grant);
int ntb_iommu_slot_claim(struct ntb_iommu_tbl *t, uint64_t tag);
void ntb_iommu_slot_release(struct ntb_iommu_tbl *t, int slot, uint64_t tag);
/*
 * Enter/leave a batch of lookups whose results will be acted on. false: the slot was revoked
 * (the table's owner was told our client is gone): act on nothing.
 */
bool ntb_iommu_slot_enter(struct ntb_iommu_tbl *t, int slot, uint64_t tag);
void ntb_iommu_slot_leave(struct ntb_iommu_tbl *t, int slot);
unsigned int ntb_iommu_engines_used(const struct ntb_iommu_tbl *t);
void ntb_objs_free(struct ntb_obj **list);

static inline struct ntb_obj *ntb_obj_find(struct ntb_obj *l, uint32_t id)
{
	for (; l; l = l->next)
		if (l->id == id)
			return l;
	return NULL;
}

#endif
