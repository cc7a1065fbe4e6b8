/* SPDX-License-Identifier: MIT */
/*
 * The link's CM channel: how the two ntbds carry the connection manager's MADs
 * (devices/common/cm) across an NTB link, where there is no packet wire and so no QP1.
 *
 * It lives in the link's own page of each control region (the first 4 KiB, after struct
 * ntbd_ctl_hdr): a ring of MAD slots in the region of the end that READS it, written by the
 * other end (PIO stores through its mapping, like every control structure of the link: nothing
 * is read across it). The writer says how far it filled the ring (prod) and how far it has
 * consumed the ring in ITS own region (cons), and raises want_room while MADs of its wait for
 * slots; then the reader rings the writer's doorbell (NTBD_DB_CTL) once it made room. A ring
 * is valid in the writer's session only: epoch is the writer's link epoch.
 */
#ifndef NTBD_LINK_CM_H
#define NTBD_LINK_CM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define NTBD_CM_RING_OFF	64	/* in the link's page of the control region */
#define NTBD_CM_SLOTS		12
#define NTBD_CM_MAD		256

struct ntbd_cm_slot {
	uint8_t sgid[16];		/* the sender's GID and the one it addressed: the GRH */
	uint8_t dgid[16];
	uint32_t len;
	uint8_t pad[28];
	uint8_t mad[NTBD_CM_MAD];
};

struct ntbd_cm_ring {
	_Atomic uint32_t epoch;		/* the writer's link epoch, written last */
	_Atomic uint32_t prod;		/* slots the writer filled, counting up */
	_Atomic uint32_t cons;		/* slots of its own ring the writer emptied */
	_Atomic uint32_t want_room;	/* the writer has MADs waiting for slots here */
	uint8_t pad[48];
	struct ntbd_cm_slot slot[NTBD_CM_SLOTS];
};

_Static_assert(sizeof(struct ntbd_cm_slot) == 320, "ntbd_cm_slot");
_Static_assert(NTBD_CM_RING_OFF + sizeof(struct ntbd_cm_ring) <= 4096,
	       "the CM ring must fit the link's page");

struct ntbd;

/* link_cm.c */
int ntbd_cm_init(struct ntbd *n);
void ntbd_cm_fini(struct ntbd *n);
void ntbd_cm_link_ready(struct ntbd *n);
void ntbd_cm_link_lost(struct ntbd *n);
void ntbd_cm_doorbell(struct ntbd *n);
extern const struct bvd_cm_transport ntbd_cm_transport;

#endif /* NTBD_LINK_CM_H */
