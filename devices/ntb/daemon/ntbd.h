/* SPDX-License-Identifier: MIT */
/*
 * ntbd: the daemon owning one end of an NTB link (the role of an NTB client driver in the
 * kernel plus the uverbs core). ntbd.c is only the glue to the bvd skeleton; the link
 * bring-up lives in link*.c (this header's struct ntbd_link), the verbs resource requests in
 * a module of their own (ntbd_verbs_module, verbs_module.c).
 *
 * Link life cycle, as the module sees it:
 *
 *   DOWN --(cable + both ends enabled: hardware link up)--> HANDSHAKE
 *   HANDSHAKE --(mailbox exchange over msgs or spads done)--> READY   => module->link_ready()
 *   any --(peer daemon gone / link disabled)--> DOWN                  => module->link_lost()
 *   READY --(the peer's heartbeat stops: hung)--> DOWN: we bounce the link (disable, enable),
 *          which the peer's model reports to it as down and up whenever it runs again
 *
 * READY means: our inbound window 0 is translated to [control region | aperture] of our IOVA
 * space, the peer's is translated and its control region is mapped here for stores
 * (peer_ctl), and both daemons run the same protocol version. Port 1 is ACTIVE exactly while
 * READY; every verbs client gets IBV_EVENT_PORT_ACTIVE / IBV_EVENT_PORT_ERR on the change.
 */
#ifndef NTBD_H
#define NTBD_H

#include <stdatomic.h>
#include <stdint.h>

#include "bvd.h"
#include "ntb_hal.h"

/* The bring-up protocol spoken by the two daemons (link_mbox.c). */
#define NTBD_LINK_VERSION	1u
/* Doorbell bit the link mailbox uses during HANDSHAKE; after READY it is the module's. */
#define NTBD_DB_CTL		(1ull << 0)

enum ntbd_link_state {
	NTBD_LINK_DOWN = 0,
	NTBD_LINK_HANDSHAKE,
	NTBD_LINK_READY,
};

/*
 * The control region: a memfd of ctl_size bytes at offset 0 of inbound window 0, written by
 * the peer (PIO stores through its mapping, or its DMA) and read here. Its first page is the
 * link's (struct ntbd_ctl_hdr); the rest (from NTBD_CTL_MODULE_OFF) belongs to the module.
 * The aperture is the remainder of window 0: IOVAs win_iova + ctl_size .. win_iova + win_size,
 * where the module maps registered memory (ntb_iommu_map) for the peer's DMA.
 */
#define NTBD_CTL_MODULE_OFF	4096u

struct ntbd_ctl_hdr {
	uint32_t magic;		/* NTBD_CTL_MAGIC once the writer (the peer) initialised it */
	uint32_t version;	/* NTBD_LINK_VERSION */
	uint32_t epoch;		/* the writer's link epoch (increments per bring-up) */
	/*
	 * The writer's heartbeat: incremented every heartbeat period while its link is READY.
	 * A peer daemon that is alive but stopped (SIGSTOP, a debugger, a hung machine) keeps
	 * the cable and so the hardware link; only this says it stopped working (NTRDMA: a
	 * heartbeat in window memory every 100 ms, ~10 misses mean the peer is gone).
	 */
	_Atomic uint32_t heartbeat;
	/*
	 * The writer's heartbeat period in ms, 0 when it does not beat (config heartbeat_ms):
	 * the reader only expects beats that come, and no faster than they come.
	 */
	uint32_t hb_ms;
	uint32_t pad;
};
#define NTBD_CTL_MAGIC		0x4c544e42u	/* "BNTL" */

struct ntbd_link {
	enum ntbd_link_state state;
	uint32_t epoch;			/* our bring-up count */
	uint32_t peer_epoch;		/* the peer's, from its READY */
	int ctl_fd;			/* memfd of our control region (pass it to clients) */
	void *ctl;			/* our control region, mapped read/write here */
	uint64_t ctl_size;
	uint64_t win_iova;		/* our window 0 translation: IOVA base and size */
	uint64_t win_size;
	void *peer_ctl;			/* the peer's control region: stores only */
	uint64_t peer_ctl_size;
	uint64_t peer_win_size;		/* the peer's window 0 translated size */
};

struct ntbd;
struct ntbd_cm;

/* What the verbs resource code plugs into ntbd; every hook is optional. */
struct ntbd_module {
	const char *name;
	int (*init)(struct ntbd *n);		/* after the device is open, before serving */
	void (*fini)(struct ntbd *n);
	void (*link_ready)(struct ntbd *n);	/* entered READY */
	void (*link_lost)(struct ntbd *n);	/* left READY (peer gone, link disabled) */
	/* Doorbell bits fired (read and already cleared by ntbd); NTBD_DB_CTL once READY. */
	void (*doorbell)(struct ntbd *n, uint64_t bits);
	int (*client_open)(struct ntbd *n, struct bvd_client *c);
	void (*client_close)(struct ntbd *n, struct bvd_client *c);
	void (*request)(struct ntbd *n, struct bvd_client *c, uint16_t op, const void *in,
			size_t len, int *fds, unsigned int nfds, struct bvd_reply *r);
	void (*status)(struct ntbd *n, char *buf, size_t len);
	void (*tick)(struct ntbd *n);		/* every heartbeat period while READY */
};

struct ntbd {
	struct bvd *d;
	struct ntb_dev *ntb;		/* the owner handle of this end */
	struct ntbd_link link;
	const struct ntbd_module *mod;	/* NULL when no module is linked in */
	void *mod_priv;			/* the module's state */
	/* link_mbox.c's state (private) */
	struct ntbd_mbox *mbox;
	struct ntbd_peer_view *pv;	/* link.c: what the peer said in this handshake */
	int timer_fd;
	uint64_t hs_since_ns;		/* when the handshake began (link.c: retransmit backoff) */
	/* link.c: the heartbeat (while READY) */
	int hb_fd;
	uint32_t hb_ms;			/* period; 0: off (config heartbeat_ms) */
	uint32_t hb_misses;		/* periods without a beat that mean "hung" */
	uint32_t hb_sent;		/* our counter */
	uint32_t hb_seen;		/* the peer's, when it last changed */
	uint64_t hb_seen_ns;		/* when it last changed */
	uint64_t hb_tick_ns;		/* our last tick */
	uint64_t hb_downs;		/* times the peer was declared hung */
	struct ntbd_cm *cm;		/* link_cm.c: the connection manager's MADs */
};

/* ntbd.c: the device kind (ntbd_main.c runs bvd_main() with it; the fuzz targets drive it) */
extern const struct bvd_kind_ops ntbd_ops;

/* The verbs module (verbs_module.c); ntbd always links it. */
extern const struct ntbd_module ntbd_verbs_module;

/* link.c: the link half of ntbd */
int ntbd_link_init(struct ntbd *n);
/* Take the link down (module->link_lost() if it was READY) and disable it; the device stays
 * open for the module's own teardown. ntbd_link_fini() then closes everything. */
void ntbd_link_stop(struct ntbd *n);
void ntbd_link_fini(struct ntbd *n);
bool ntbd_link_ready(const struct ntbd *n);
void ntbd_link_status(struct ntbd *n, char *buf, size_t len);

#endif /* NTBD_H */
