// SPDX-License-Identifier: MIT
/*
 * REQs that found no listener, held a moment for a listen on their way before they are
 * rejected.
 *
 * The kernel's rdma_bind_addr and rdma_listen are a system call each; here they are a round
 * trip to every daemon (one batch: librdmacm-plugin id.c), with a wake-up of each on a shared
 * machine. Programs that let their peer connect as soon as they have called them, or just
 * before, race against that: perftest -R's server binds and listens anew right after the
 * handshake its client starts connecting from; qperf 0.4.11 sends its port before it calls
 * rdma_listen. On Linux the listen wins by the length of the client's resolve, QP creation
 * and connect; here a REQ could come first, and the kernel's answer to a REQ without a
 * listener, REJ "invalid service id" (8), ends the connection. So a REQ that finds no listener
 * waits up to cm_listen_wait_ms (docs/rdmacm.md) for a listen that takes it, and then gets the
 * kernel's REJ with the kernel's reason; cm_listen_wait_ms = 0 rejects at once, as the kernel
 * does. A duplicate of a waiting REQ is dropped; beyond CM_REQ_WAIT_MAX waiting REQs the next
 * is rejected at once, so a flood of REQs keeps no memory.
 */
#include <stdlib.h>
#include <string.h>

#include "cm.h"

#define CM_REQ_WAIT_MAX		64

struct cm_req_wait {
	struct cm_req_wait *next;
	struct cm_dev *cm;
	struct bvd_timer timer;
	struct bvd_cm_rx rx;		/* rx.mad points at mad */
	uint8_t mad[IB_MAD_SIZE];
};

static void unlink_wait(struct cm_dev *cm, struct cm_req_wait *w)
{
	for (struct cm_req_wait **p = &cm->req_waits; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			cm->nreq_waits--;
			break;
		}
	bvd_timer_cancel(cm->d, &w->timer);
}

static void wait_expired(struct bvd *d, struct bvd_timer *t)
{
	struct cm_req_wait *w =
		(struct cm_req_wait *)((char *)t - offsetof(struct cm_req_wait, timer));
	struct cm_dev *cm = w->cm;

	unlink_wait(cm, w);
	cm_req_no_listener(cm, &w->rx);
	free(w);
}

bool cm_req_wait(struct cm_dev *cm, const struct bvd_cm_rx *rx)
{
	uint64_t guid = cx4_get64(rx->mad, IB_CM_REQ_LOCAL_CA_GUID);
	uint32_t comm_id = cx4_get(rx->mad, IB_CM_REQ_LOCAL_COMM_ID);
	struct cm_req_wait *w;

	if (!cm->listen_wait_ms || rx->len < IB_MAD_SIZE)
		return false;
	for (w = cm->req_waits; w; w = w->next)
		if (cx4_get64(w->mad, IB_CM_REQ_LOCAL_CA_GUID) == guid &&
		    cx4_get(w->mad, IB_CM_REQ_LOCAL_COMM_ID) == comm_id) {
			cm->st.rx_duplicates++;	/* the first one's answer is coming */
			return true;
		}
	if (cm->nreq_waits >= CM_REQ_WAIT_MAX)
		return false;
	w = calloc(1, sizeof(*w));
	if (!w)
		return false;
	w->cm = cm;
	w->rx = *rx;
	memcpy(w->mad, rx->mad, IB_MAD_SIZE);
	w->rx.mad = w->mad;
	w->rx.len = IB_MAD_SIZE;
	bvd_timer_init(&w->timer, wait_expired);
	if (bvd_timer_arm(cm->d, &w->timer, cm->listen_wait_ms)) {
		free(w);
		return false;
	}
	w->next = cm->req_waits;
	cm->req_waits = w;
	cm->nreq_waits++;
	cm->st.req_waits++;
	return true;
}

void cm_req_wait_listen(struct cm_dev *cm)
{
	struct cm_req_wait *w = cm->req_waits, *next;

	for (; w; w = next) {
		const uint8_t *m = w->mad;

		next = w->next;
		if (!cm_find_listener(cm, cx4_get64(m, IB_CM_REQ_SERVICE_ID),
				      m + IB_CM_REQ_PRIVATE_DATA_OFF, IB_CM_REQ_PRIVATE_DATA_LEN,
				      cm_req_qp_type(m)))
			continue;
		unlink_wait(cm, w);
		cm_recv_req(cm, &w->rx);	/* finds the listener now */
		free(w);
		next = cm->req_waits;		/* the list may have changed meanwhile */
	}
}

void cm_req_wait_fini(struct cm_dev *cm)
{
	while (cm->req_waits) {
		struct cm_req_wait *w = cm->req_waits;

		unlink_wait(cm, w);
		free(w);
	}
}
