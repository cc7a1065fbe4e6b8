// SPDX-License-Identifier: MIT
/*
 * What the daemon, in the kernel's role, shows of its device in the sysfs tree (bv_sysfs.h):
 * the firmware version and port 1's state, rate and link, as ib_core's sysfs files do. Written
 * once the device is up, and again at every port event.
 */
#include <stdio.h>
#include <infiniband/verbs.h>

#include "bv_paths.h"
#include "bv_sysfs.h"
#include "bvd.h"

void bvd_sysfs_refresh(struct bvd *d)
{
	struct bv_device_attr da;
	struct bv_port_attr pa;
	char dir[BV_PATH_MAX * 2];

	if (bv_sysfs_ibdev_dir(dir, sizeof(dir), d->conf->name))
		return;
	if (d->ops->query_device && !d->ops->query_device(d, &da))
		bv_sysfs_put(dir, "fw_ver", "%s\n", da.fw_ver[0] ? da.fw_ver : "0.0.0");
	if (d->ops->query_port && !d->ops->query_port(d, 1, &pa))
		bv_sysfs_write_port(dir, &pa);
}
