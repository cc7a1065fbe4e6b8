// SPDX-License-Identifier: MIT
/*
 * ntbd: the daemon owning one end of an NTB link. This is the skeleton of the foundation: it
 * answers device and port attributes from the configuration. The link model, the handshake
 * with the peer daemon and the resource requests arrive with the NTB device.
 */
#include <errno.h>

#include "bvd.h"
#include "bvd_attr.h"

static int ntbd_query_device(struct bvd *d, struct bv_device_attr *a)
{
	bvd_default_device_attr(d->conf, a);
	a->vendor_part_id = BV_PART_NTB;
	return 0;
}

static int ntbd_query_port(struct bvd *d, unsigned int port, struct bv_port_attr *a)
{
	if (port != 1)
		return EINVAL;
	bvd_default_port_attr(d->conf, a);
	return 0;
}

static const struct bvd_kind_ops ntbd_ops = {
	.kind = "ntb",
	.query_device = ntbd_query_device,
	.query_port = ntbd_query_port,
};

int main(int argc, char **argv)
{
	return bvd_main(argc, argv, &ntbd_ops);
}
