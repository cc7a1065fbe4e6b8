// SPDX-License-Identifier: MIT
/*
 * cx4d: the ConnectX-4 daemon, in the kernel's role for one cx4 device. This is the skeleton of
 * the foundation: it answers device and port attributes from the configuration. Bring-up
 * through the command queue and the resource commands arrive with the device model.
 */
#include <errno.h>

#include "bvd.h"
#include "bvd_attr.h"

static int cx4d_query_device(struct bvd *d, struct bv_device_attr *a)
{
	bvd_default_device_attr(d->conf, a);
	a->vendor_part_id = BV_PART_CX4;
	return 0;
}

static int cx4d_query_port(struct bvd *d, unsigned int port, struct bv_port_attr *a)
{
	if (port != 1)
		return EINVAL;
	bvd_default_port_attr(d->conf, a);
	return 0;
}

static const struct bvd_kind_ops cx4d_ops = {
	.kind = "cx4",
	.query_device = cx4d_query_device,
	.query_port = cx4d_query_port,
};

int main(int argc, char **argv)
{
	return bvd_main(argc, argv, &cx4d_ops);
}
