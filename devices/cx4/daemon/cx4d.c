// SPDX-License-Identifier: MIT
/*
 * cx4d: the ConnectX-4 daemon, in the kernel's role for one cx4 device (see cx4d.h for the
 * files). This one holds the bvd ops table (cx4d_ops; cx4d_main.c runs it): bring-up and
 * teardown, clients, and the dispatch of the cx4 requests (kernel-abi/cx4_proto.h) to one
 * handler per object kind.
 *
 * CX4D_TRACE=FILE (cx4d --trace[=FILE]), or "trace = FILE" in the device's configuration
 * section, writes every command as Linux mlx5_core's dynamic-debug hexdump.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bvd_attr.h"
#include "bvd_cm.h"
#include "cx4d.h"
#include "cx4d_bus.h"

static struct cx4d dev = { .health_tfd = -1 };

void cx4d_log(struct cx4d *d, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	bvd_log(d->bvd, "%s", buf);
}

static int open_trace(struct cx4d *d)
{
	const char *path = getenv("CX4D_TRACE");

	if (!path)
		path = bv_conf_get(d->conf, "trace", NULL);
	if (!path || !*path)
		return 0;
	if (!strcmp(path, "-")) {
		d->trace = stderr;
		return 0;
	}
	d->trace = fopen(path, "we");
	if (!d->trace) {
		cx4d_log(d, "cannot write the command trace to %s: %s", path, strerror(errno));
		return errno;
	}
	return 0;
}

static void cx4d_fini(struct bvd *b)
{
	struct cx4d *d = cx4d_of(b);

	cx4d_health_stop(d);
	if (d->bus) {
		cx4d_gsi_down(d);
		cx4d_hca_down(d);
		cx4d_dma_fini(d);
		d->bus->ops->close(d->bus);
		d->bus = NULL;
	}
	cx4d_idmap_fini(&d->qps);
	cx4d_idmap_fini(&d->cqs);
	cx4d_idmap_fini(&d->srqs);
	cx4d_idmap_fini(&d->pages);
	if (d->trace && d->trace != stderr)
		fclose(d->trace);
	d->trace = NULL;
}

static int cx4d_init(struct bvd *b)
{
	struct cx4d *d = &dev;
	int err;

	b->priv = d;
	d->bvd = b;
	d->conf = b->conf;
	if (cx4d_idmap_init(&d->qps) || cx4d_idmap_init(&d->cqs) || cx4d_idmap_init(&d->srqs) ||
	    cx4d_idmap_init(&d->pages))
		return 1;
	if (open_trace(d))
		return 1;
	err = cx4d_bus_open(d);
	if (err) {
		cx4d_fini(b);
		return 1;
	}
	err = cx4d_hca_up(d);
	if (!err)
		err = cx4d_health_start(d);
	/* without QP1 the verbs still work; the CM reports its port down (gsi.c says why) */
	if (!err)
		cx4d_gsi_up(d);
	if (err) {
		cx4d_log(d, "bring-up failed: %s", strerror(err));
		cx4d_fini(b);
		return 1;
	}
	cx4d_log(d, "ConnectX-4 up: fw %u.%u.%04u, ISSI %u, %zu firmware pages, %u completion "
		    "vector%s, %llu commands", d->fw_major, d->fw_minor, d->fw_sub, d->issi,
		 d->npages, d->ncomp, d->ncomp == 1 ? "" : "s", (unsigned long long)d->ncmds);
	return 0;
}

static int cx4d_client_open(struct bvd *b, struct bvd_client *c)
{
	struct cx4d_client *cl = calloc(1, sizeof(*cl));
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (!cl)
		return ENOMEM;
	/* whose memory REG_MR maps: the peer the kernel vouches for, not what HELLO claimed */
	if (getsockopt(c->sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0) {
		free(cl);
		return EPERM;
	}
	cl->pid = cred.pid;
	cl->bc = c;
	c->priv = cl;
	(void)b;
	return 0;
}

/* Everything the client owned, users before what they use (uverbs_destroy_ufile_hw order). */
static void cx4d_client_close(struct bvd *b, struct bvd_client *c)
{
	struct cx4d *d = cx4d_of(b);
	struct cx4d_client *cl = c->priv;
	static const enum cx4d_obj_type order[] = { CX4D_OBJ_QP, CX4D_OBJ_SRQ, CX4D_OBJ_CQ,
						    CX4D_OBJ_MR, CX4D_OBJ_PD };

	if (!cl)
		return;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (uint32_t h = 0; h < cl->nobjs; h++) {
			struct cx4d_obj *o = cl->objs[h];

			if (!o || o->type != order[k])
				continue;
			switch (o->type) {
			case CX4D_OBJ_QP: cx4d_qp_destroy(d, (struct cx4d_qp *)o); break;
			case CX4D_OBJ_SRQ: cx4d_srq_destroy(d, (struct cx4d_srq *)o); break;
			case CX4D_OBJ_CQ: cx4d_cq_destroy(d, (struct cx4d_cq *)o); break;
			case CX4D_OBJ_MR: cx4d_mr_destroy(d, (struct cx4d_mr *)o); break;
			case CX4D_OBJ_PD: cx4d_pd_destroy(d, (struct cx4d_pd *)o); break;
			}
		}
	cx4d_ucontext_free(d, cl);
	free(cl->objs);
	free(cl);
	c->priv = NULL;
}

typedef int (*cx4d_handler)(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q);

static const struct {
	cx4d_handler fn;
	bool needs_device;	/* false: works on a dead device too (teardown, queries) */
} handlers[CX4_OP_MAX - BV_OP_CX4_BASE] = {
	[CX4_OP_ALLOC_UCONTEXT - BV_OP_CX4_BASE] = { cx4d_ucontext_alloc, true },
	[CX4_OP_ALLOC_PD - BV_OP_CX4_BASE] = { cx4d_pd_alloc, true },
	[CX4_OP_DEALLOC_PD - BV_OP_CX4_BASE] = { cx4d_pd_dealloc, false },
	[CX4_OP_REG_MR - BV_OP_CX4_BASE] = { cx4d_mr_reg, true },
	[CX4_OP_DEREG_MR - BV_OP_CX4_BASE] = { cx4d_mr_dereg, false },
	[CX4_OP_CREATE_CQ - BV_OP_CX4_BASE] = { cx4d_cq_create, true },
	[CX4_OP_DESTROY_CQ - BV_OP_CX4_BASE] = { cx4d_cq_destroy_req, false },
	[CX4_OP_CREATE_SRQ - BV_OP_CX4_BASE] = { cx4d_srq_create, true },
	[CX4_OP_MODIFY_SRQ - BV_OP_CX4_BASE] = { cx4d_srq_modify, true },
	[CX4_OP_QUERY_SRQ - BV_OP_CX4_BASE] = { cx4d_srq_query, true },
	[CX4_OP_DESTROY_SRQ - BV_OP_CX4_BASE] = { cx4d_srq_destroy_req, false },
	[CX4_OP_CREATE_QP - BV_OP_CX4_BASE] = { cx4d_qp_create, true },
	[CX4_OP_MODIFY_QP - BV_OP_CX4_BASE] = { cx4d_qp_modify, true },
	[CX4_OP_QUERY_QP - BV_OP_CX4_BASE] = { cx4d_qp_query, true },
	[CX4_OP_DESTROY_QP - BV_OP_CX4_BASE] = { cx4d_qp_destroy_req, false },
	[CX4_OP_RESOLVE_AH - BV_OP_CX4_BASE] = { cx4d_ah_resolve, true },
};

static void cx4d_request(struct bvd *b, struct bvd_client *c, uint16_t op, const void *in,
			 size_t len, int *fds, unsigned int nfds, struct bvd_reply *r)
{
	struct cx4d *d = cx4d_of(b);
	struct cx4d_req q = { .in = in, .len = len, .fds = fds, .nfds = nfds, .r = r };
	unsigned int i = op - BV_OP_CX4_BASE;

	if (op < BV_OP_CX4_BASE || op >= CX4_OP_MAX || !handlers[i].fn) {
		r->status = EOPNOTSUPP;
		return;
	}
	if (handlers[i].needs_device && d->dead) {
		r->status = EIO;
		return;
	}
	r->status = handlers[i].fn(d, c->priv, &q);
	if (r->status) {
		r->len = 0;
		for (unsigned int k = 0; k < r->nfds; k++)
			close(r->fds[k]);
		r->nfds = 0;
	}
}

static void cx4d_status(struct bvd *b, char *buf, size_t len)
{
	struct cx4d *d = cx4d_of(b);
	size_t n;

	n = snprintf(buf, len, "  ConnectX-4 fw %u.%u.%04u, PSID %s, ISSI %u, %s\n"
			       "  %zu firmware pages, %llu commands, UAR 0x%x, EQs cmd 0x%x async "
			       "0x%x pages 0x%x, %u completion EQ%s\n",
		     d->fw_major, d->fw_minor, d->fw_sub, d->psid[0] ? d->psid : "-", d->issi,
		     d->dead ? "DEAD" : "healthy", d->npages, (unsigned long long)d->ncmds, d->uar,
		     d->eq_cmd.eqn, d->eq_async.eqn, d->eq_pages.eqn, d->ncomp,
		     d->ncomp == 1 ? "" : "s");
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      "  clients hold %u PDs, %u MRs, %u CQs, %u SRQs, %u QPs; %u DMA "
				      "mappings of client memory (%llu KiB)\n",
				      d->nobj[CX4D_OBJ_PD], d->nobj[CX4D_OBJ_MR], d->nobj[CX4D_OBJ_CQ],
				      d->nobj[CX4D_OBJ_SRQ], d->nobj[CX4D_OBJ_QP], d->numem,
				      (unsigned long long)(d->umem_bytes >> 10));
	if (n < len)
		n += cx4d_port_status(d, buf + n, len - n);
	if (n < len)
		n += cx4d_gsi_status(d, buf + n, len - n);
	for (struct bvd_client *c = b->clients; c && n < len; c = c->next) {
		struct cx4d_client *cl = c->priv;

		if (c->role == BV_ROLE_VERBS && cl)
			n += snprintf(buf + n, len - n, "  client %u: UAR 0x%x, %u objects\n", c->id,
				      cl->has_uar ? cl->uar : 0, cl->live);
	}
}

const struct bvd_kind_ops cx4d_ops = {
	.kind = "cx4",
	.init = cx4d_init,
	.fini = cx4d_fini,
	.query_device = cx4d_query_device,
	.query_port = cx4d_query_port,
	.client_open = cx4d_client_open,
	.client_close = cx4d_client_close,
	.request = cx4d_request,
	.status = cx4d_status,
	.cm = &cx4d_gsi_transport,
};
