// SPDX-License-Identifier: MIT
/*
 * ntbd: the daemon owning one end of an NTB link. Glue between the bvd skeleton, the link
 * (link.c: bring-up with the peer daemon, port state) and the verbs module (resource
 * requests; ntbd_verbs_module). See ntbd.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "bvd_attr.h"
#include "bvd_cm.h"
#include "link_cm.h"
#include "ntbd.h"

static struct ntbd ntbd;

static int ntbd_init(struct bvd *d)
{
	struct ntbd *n = &ntbd;
	int err;

	n->d = d;
	d->priv = n;
	n->mod = &ntbd_verbs_module;
	err = ntbd_cm_init(n);
	if (!err)
		err = ntbd_link_init(n);
	if (err)
		return err;
	if (n->mod && n->mod->init && (err = n->mod->init(n))) {
		bvd_log(d, "module %s: init failed (%d)", n->mod->name, err);
		return err;
	}
	return 0;
}

static void ntbd_fini(struct bvd *d)
{
	struct ntbd *n = d->priv;

	/* link_lost() while the module still exists, its fini while the device is still open */
	ntbd_link_stop(n);
	if (n->mod && n->mod->fini)
		n->mod->fini(n);
	ntbd_link_fini(n);
	ntbd_cm_fini(n);
}

static int ntbd_query_device(struct bvd *d, struct bv_device_attr *a)
{
	bvd_default_device_attr(d->conf, a);
	a->vendor_part_id = BV_PART_NTB;
	return 0;
}

static int ntbd_query_port(struct bvd *d, unsigned int port, struct bv_port_attr *a)
{
	struct ntbd *n = d->priv;

	if (port != 1)
		return EINVAL;
	bvd_default_port_attr(d->conf, a);
	/* the port is as up as the link: ACTIVE once the daemons completed the bring-up */
	if (!ntbd_link_ready(n)) {
		a->state = IBV_PORT_DOWN;
		a->phys_state = n->ntb && ntb_link_is_up(n->ntb, NULL, NULL) ? 4 : 2; /* LinkUp
							* training / Polling (IBTA PortPhysicalState) */
	}
	return 0;
}

static int ntbd_client_open(struct bvd *d, struct bvd_client *c)
{
	struct ntbd *n = d->priv;

	return n->mod && n->mod->client_open ? n->mod->client_open(n, c) : 0;
}

static void ntbd_client_close(struct bvd *d, struct bvd_client *c)
{
	struct ntbd *n = d->priv;

	if (n->mod && n->mod->client_close)
		n->mod->client_close(n, c);
}

static void ntbd_request(struct bvd *d, struct bvd_client *c, uint16_t op, const void *in,
			 size_t len, int *fds, unsigned int nfds, struct bvd_reply *r)
{
	struct ntbd *n = d->priv;

	if (!n->mod || !n->mod->request) {
		r->status = EOPNOTSUPP;
		return;
	}
	n->mod->request(n, c, op, in, len, fds, nfds, r);
}

static void ntbd_status(struct bvd *d, char *buf, size_t len)
{
	struct ntbd *n = d->priv;
	size_t used;

	ntbd_link_status(n, buf, len);
	used = strnlen(buf, len);
	if (n->mod && n->mod->status && used < len)
		n->mod->status(n, buf + used, len - used);
}

const struct bvd_kind_ops ntbd_ops = {
	.kind = "ntb",
	.init = ntbd_init,
	.fini = ntbd_fini,
	.query_device = ntbd_query_device,
	.query_port = ntbd_query_port,
	.client_open = ntbd_client_open,
	.client_close = ntbd_client_close,
	.request = ntbd_request,
	.status = ntbd_status,
	.cm = &ntbd_cm_transport,
};
