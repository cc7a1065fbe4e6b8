// SPDX-License-Identifier: MIT
/*
 * Event queues (PRM "Event Queues"; Linux mlx5/core/eq.c). Like Linux 4.4 the daemon creates
 *
 *   the command EQ      event CMD (0x0A), 2^8 entries, MSI-X vector 1
 *   the async EQ        QP/SRQ/CQ/port events (Linux 4.4's mask 0x1F02BE), 2^9, vector 2
 *   the pages EQ        PAGE_REQUEST (0x0B), 2^8, vector 0
 *   completion EQs      one per completion vector, 2^11 entries, vectors 3..
 *
 * An EQ is a ring of 64-byte EQEs in DMA memory, described by one PAS; software sets every
 * owner bit to 1 first; an EQE is new when its owner bit equals bit log_size of the consumer
 * counter. After a batch the consumer index is written to the UAR EQ doorbell (0x40: update
 * and re-arm; 0x48: update only, at least every 128 EQEs so the ring cannot overrun). The
 * interrupt is the vector's eventfd from the bus.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "bvd_cm.h"
#include "cx4d.h"

#define EQ_VEC_PAGES	0
#define EQ_VEC_CMD	1
#define EQ_VEC_ASYNC	2
#define EQ_VEC_COMP0	3

static void eq_doorbell(struct cx4d *d, struct cx4d_eq *eq, bool arm)
{
	cx4_mmio_write32(&d->uar_mmio, arm ? CX4_UAR_EQ_DOORBELL_ARM : CX4_UAR_EQ_DOORBELL_NOARM,
			 (eq->eqn << 24) | (eq->ci & 0xffffff));
}

static int eq_create(struct cx4d *d, struct cx4d_eq *eq, const char *name,
		     unsigned int log_size, unsigned int vector, uint64_t mask)
{
	size_t len = (size_t)CX4_EQE_SIZE << log_size;
	uint8_t in[CX4_CREATE_EQ_IN_SIZE + 8] = { 0 }, out[CX4_CREATE_EQ_OUT_SIZE];
	uint8_t *eqc = in + CX4_CREATE_EQ_IN_EQC;
	int err;

	if (vector >= d->bus->num_vectors)
		return EINVAL;
	err = cx4d_dma_alloc(d, len, &eq->buf);
	if (err)
		return err;
	for (size_t i = 0; i < ((size_t)1 << log_size); i++)
		eq->buf.va[i * CX4_EQE_SIZE + CX4_EQE_OWNER_BYTE] = 1;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_EQ, 0);
	cx4_set(eqc, CX4_EQC_LOG_EQ_SIZE, log_size);
	cx4_set(eqc, CX4_EQC_UAR_PAGE, d->uar);
	cx4_set(eqc, CX4_EQC_INTR, vector);
	cx4_set(eqc, CX4_EQC_LOG_PAGE_SIZE, cx4d_pas_log_page(eq->buf.len));
	cx4_set64(in, CX4_CREATE_EQ_IN_EVENT_BITMASK, mask);
	cx4_pas_set(in, CX4_CREATE_EQ_IN_PAS, 0, eq->buf.iova);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err) {
		cx4d_dma_free(d, &eq->buf);
		return err;
	}
	eq->eqn = cx4_get(out, CX4_CREATE_EQ_OUT_EQ_NUMBER);
	eq->log_size = log_size;
	eq->ci = 0;
	eq->vector = vector;
	eq->mask = mask;
	eq->name = name;
	eq->live = true;
	eq_doorbell(d, eq, true);
	return 0;
}

static void eq_destroy(struct cx4d *d, struct cx4d_eq *eq)
{
	uint8_t in[CX4_DESTROY_EQ_IN_SIZE] = { 0 }, out[CX4_DESTROY_EQ_OUT_SIZE];

	if (!eq->live)
		return;
	bvd_unwatch_fd(d->bvd, d->bus->irq_fd[eq->vector]);
	if (!d->dead) {
		cx4d_cmd_set_header(in, CX4_CMD_OP_DESTROY_EQ, 0);
		cx4_set(in, CX4_DESTROY_EQ_IN_EQ_NUMBER, eq->eqn);
		cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	}
	cx4d_dma_free(d, &eq->buf);
	eq->live = false;
}

static uint8_t *next_eqe(struct cx4d_eq *eq)
{
	uint8_t *eqe = eq->buf.va + (size_t)(eq->ci & ((1u << eq->log_size) - 1)) * CX4_EQE_SIZE;

	if (!cx4_eqe_sw_owned(eqe, eq->ci, eq->log_size))
		return NULL;
	/* read the EQE only after seeing its owner bit (Linux eq.c dma_rmb()) */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return eqe;
}

static void port_event(struct cx4d *d, const uint8_t *eqe)
{
	unsigned int sub = cx4_get(eqe, CX4_EQE_SUB_TYPE);
	unsigned int port = cx4_get(eqe, CX4_EQE_PORT_NUM);

	cx4d_port_refresh(d);
	cx4d_log(d, "port %u change: subtype %u", port, sub);
	if (sub == CX4_PORT_CHANGE_SUBTYPE_ACTIVE || sub == CX4_PORT_CHANGE_SUBTYPE_DOWN)
		bvd_cm_port_change(d->bvd, sub == CX4_PORT_CHANGE_SUBTYPE_ACTIVE);
	if (sub == CX4_PORT_CHANGE_SUBTYPE_ACTIVE)
		bvd_async_event_all(d->bvd, port, IBV_EVENT_PORT_ACTIVE);
	else if (sub == CX4_PORT_CHANGE_SUBTYPE_DOWN)
		bvd_async_event_all(d->bvd, port, IBV_EVENT_PORT_ERR);
	else if (sub == CX4_PORT_CHANGE_SUBTYPE_GUID)
		bvd_async_event_all(d->bvd, port, IBV_EVENT_GID_CHANGE);
	else if (sub == CX4_PORT_CHANGE_SUBTYPE_PKEY)
		bvd_async_event_all(d->bvd, port, IBV_EVENT_PKEY_CHANGE);
	else if (sub == CX4_PORT_CHANGE_SUBTYPE_LID)
		bvd_async_event_all(d->bvd, port, IBV_EVENT_LID_CHANGE);
}

static void handle_eqe(struct cx4d *d, const uint8_t *eqe)
{
	unsigned int type = cx4_get(eqe, CX4_EQE_TYPE);

	switch (type) {
	case CX4_EVENT_TYPE_COMP:
		cx4d_cq_event(d, cx4_get(eqe, CX4_EQE_COMP_CQN));
		break;
	case CX4_EVENT_TYPE_CMD:
		/* the entry's ownership bit is what the waiter looks at */
		break;
	case CX4_EVENT_TYPE_PAGE_REQUEST: {
		uint16_t func = cx4_get(eqe, CX4_EQE_PAGE_REQ_FUNC_ID);
		int32_t n = (int32_t)cx4_get(eqe, CX4_EQE_PAGE_REQ_NUM_PAGES);

		if (n > 0)
			cx4d_pages_give(d, func, n);
		else if (n < 0)
			cx4d_pages_reclaim(d, func, -n);
		break;
	}
	case CX4_EVENT_TYPE_PORT_CHANGE:
		port_event(d, eqe);
		break;
	case CX4_EVENT_TYPE_CQ_ERROR:
		cx4d_cq_error(d, cx4_get(eqe, CX4_EQE_CQ_ERR_CQN),
			      cx4_get(eqe, CX4_EQE_CQ_ERR_SYNDROME));
		break;
	case CX4_EVENT_TYPE_PATH_MIG:
	case CX4_EVENT_TYPE_COMM_EST:
	case CX4_EVENT_TYPE_SQ_DRAINED:
	case CX4_EVENT_TYPE_WQ_CATAS_ERROR:
	case CX4_EVENT_TYPE_PATH_MIG_FAILED:
	case CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR:
	case CX4_EVENT_TYPE_WQ_ACCESS_ERROR:
	case CX4_EVENT_TYPE_SRQ_LAST_WQE:
		cx4d_qp_event(d, cx4_get(eqe, CX4_EQE_QP_SRQ_N), type);
		break;
	case CX4_EVENT_TYPE_SRQ_CATAS_ERROR:
	case CX4_EVENT_TYPE_SRQ_RQ_LIMIT:
		cx4d_srq_event(d, cx4_get(eqe, CX4_EQE_QP_SRQ_N), type);
		break;
	case CX4_EVENT_TYPE_INTERNAL_ERROR:
		cx4d_device_fatal(d, "internal error event");
		break;
	default:
		cx4d_log(d, "unexpected event type 0x%x on an EQ", type);
	}
}

/* Consume every new EQE; returns how many. */
static unsigned int eq_poll(struct cx4d *d, struct cx4d_eq *eq)
{
	unsigned int n = 0;
	uint8_t *eqe;

	while (eq->live && (eqe = next_eqe(eq))) {
		uint8_t copy[CX4_EQE_SIZE];

		/* handlers may run commands (page requests), which may poll this EQ again */
		memcpy(copy, eqe, sizeof(copy));
		eq->ci++;
		n++;
		if (!(n % CX4_EQ_SPARE_EQES))
			eq_doorbell(d, eq, false);
		handle_eqe(d, copy);
	}
	if (eq->live)
		eq_doorbell(d, eq, true);
	return n;
}

static void drain_irq(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof(v));

	(void)r;
}

static void eq_irq(struct bvd *b, int fd, uint32_t events, void *arg)
{
	struct cx4d *d = cx4d_of(b);
	struct cx4d_eq *eq = arg;

	(void)events;
	drain_irq(fd);
	eq_poll(d, eq);
}

void cx4d_eq_poll_while_waiting(struct cx4d *d, int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = d->bus->irq_fd[d->eq_cmd.vector], .events = POLLIN },
		{ .fd = d->eq_pages.live ? d->bus->irq_fd[d->eq_pages.vector] : -1,
		  .events = POLLIN },
	};

	if (poll(p, 2, timeout_ms) <= 0)
		return;
	if (p[0].revents & POLLIN) {
		drain_irq(p[0].fd);
		eq_poll(d, &d->eq_cmd);
	}
	if (p[1].revents & POLLIN) {
		drain_irq(p[1].fd);
		eq_poll(d, &d->eq_pages);
	}
}

static int eq_watch(struct cx4d *d, struct cx4d_eq *eq)
{
	int err = bvd_watch_fd(d->bvd, d->bus->irq_fd[eq->vector], eq_irq, eq);

	return err < 0 ? -err : err;
}

/*
 * The command EQ comes first: once it exists commands complete by event (Linux 4.4
 * mlx5_start_eqs: mlx5_cmd_use_events after creating it).
 */
int cx4d_eq_create_cmd(struct cx4d *d)
{
	int err = eq_create(d, &d->eq_cmd, "cmd", 8, EQ_VEC_CMD,
			    CX4_EVENT_BIT(CX4_EVENT_TYPE_CMD));

	if (err)
		return err;
	d->cmd_events = true;
	return eq_watch(d, &d->eq_cmd);
}

int cx4d_eqs_create(struct cx4d *d)
{
	unsigned int want;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int err;

	if (d->bus->num_vectors < EQ_VEC_COMP0 + 1) {
		cx4d_log(d, "device has %u interrupt vectors, the driver needs at least %u",
			 d->bus->num_vectors, EQ_VEC_COMP0 + 1);
		return ENODEV;
	}
	err = cx4d_eq_create_cmd(d);
	if (!err)
		err = eq_create(d, &d->eq_async, "async", 9, EQ_VEC_ASYNC,
				CX4_ASYNC_EVENT_MASK_LINUX44);
	if (!err)
		err = eq_watch(d, &d->eq_async);
	if (!err)
		err = eq_create(d, &d->eq_pages, "pages", 8, EQ_VEC_PAGES,
				CX4_EVENT_BIT(CX4_EVENT_TYPE_PAGE_REQUEST));
	if (!err)
		err = eq_watch(d, &d->eq_pages);
	if (err)
		return err;
	/* Linux: one completion EQ per online CPU, as many as there are vectors */
	want = ncpu > 0 ? (unsigned int)ncpu : 1;
	if (want > d->bus->num_vectors - EQ_VEC_COMP0)
		want = d->bus->num_vectors - EQ_VEC_COMP0;
	if (want > CX4D_MAX_COMP_EQS)
		want = CX4D_MAX_COMP_EQS;
	for (d->ncomp = 0; d->ncomp < want; d->ncomp++) {
		struct cx4d_eq *eq = &d->eq_comp[d->ncomp];

		err = eq_create(d, eq, "comp", 11, EQ_VEC_COMP0 + d->ncomp, 0);
		if (!err)
			err = eq_watch(d, eq);
		if (err)
			return err;
	}
	d->bvd->num_comp_vectors = d->ncomp;
	return 0;
}

void cx4d_eqs_destroy(struct cx4d *d)
{
	while (d->ncomp)
		eq_destroy(d, &d->eq_comp[--d->ncomp]);
	eq_destroy(d, &d->eq_pages);
	eq_destroy(d, &d->eq_async);
	/* the command EQ last: the destroys above complete through it */
	d->cmd_events = false;
	eq_destroy(d, &d->eq_cmd);
}
