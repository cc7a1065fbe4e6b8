// SPDX-License-Identifier: MIT
/*
 * The backend behind the bus interface. The driver never looks past struct cx4_bus: it gets
 * BAR0, DMA mapping, reset and interrupt eventfds from whichever backend the configuration
 * names, and opening it is the only call it makes into a backend (the kernel's probe() of a
 * PCI function). The ConnectX-4 model is the default; the VFIO backend plugs in the same way.
 * tests/boundary_check.sh holds cx4d to that.
 *
 * Configuration keys of a cx4 device section used here: backend (model, vfio), profile
 * (cx4, cx4lx: which card the model presents), udp_port, port_mtu, pcap (capture file),
 * spin_us (model engine polling), rt_priority (SCHED_FIFO engine), cable (a label: two model
 * ports naming the same one are joined by a direct-attach cable, <rundir>/cable-<label>),
 * pci (VFIO). The model serves its controls outside the function (cable, failures, its own
 * counters) on <rundir>/<device>.model, to tests and `bvctl model`, not to this driver.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bv_paths.h"
#include "cx4_model.h"
#include "cx4_vfio.h"
#include "cx4d.h"
#include "cx4d_bus.h"

int cx4d_bus_open(struct cx4d *d)
{
	const char *backend = bv_conf_get(d->conf, "backend", "model");

	if (!strcmp(backend, "model")) {
		const char *prof = bv_conf_get(d->conf, "profile", "cx4");
		const char *cable = bv_conf_get(d->conf, "cable", NULL);
		char cable_dir[BV_PATH_MAX], ctl_path[BV_PATH_MAX];
		struct cx4_model_config mc = {
		    .name = d->conf->name,
		    .profile = !strcmp(prof, "cx4lx") ? CX4_MODEL_CX4LX : CX4_MODEL_CX4,
		    .ipv4 = d->conf->ip.s_addr,
		    .udp_port = (uint16_t)bv_conf_get_long(d->conf, "udp_port", 0),
		    .mtu = (uint32_t)bv_conf_get_long(d->conf, "port_mtu", 0),
		    .pcap_path = bv_conf_get(d->conf, "pcap", NULL),
		    .log = stderr,
		    .spin_us = (unsigned int)bv_conf_get_long(d->conf, "spin_us", 0),
		    .rt_priority = (unsigned int)bv_conf_get_long(d->conf, "rt_priority", 0),
		};
		int err;

		if (cable && (!*cable || strchr(cable, '/') || strlen(cable) > 32 ||
			      bv_run_path(cable_dir, sizeof(cable_dir), "cable-", cable) < 0)) {
			cx4d_log(d, "bad cable label '%s' (1 to 32 characters, no '/')", cable);
			return EINVAL;
		}
		mc.cable_dir = cable ? cable_dir : NULL;
		if (bv_run_path(ctl_path, sizeof(ctl_path), d->conf->name, ".model") < 0) {
			cx4d_log(d, "run directory path too long for %s.model", d->conf->name);
			return ENAMETOOLONG;
		}
		mc.ctl_path = ctl_path;
		if (strcmp(prof, "cx4") && strcmp(prof, "cx4lx")) {
			cx4d_log(d, "unknown model profile '%s' (cx4, cx4lx)", prof);
			return EINVAL;
		}
		memcpy(mc.mac, d->conf->mac, 6);
		err = cx4_model_open(&mc, &d->bus);
		if (err) {
			cx4d_log(d, "cannot start the ConnectX-4 model: %s", strerror(-err));
			return -err;
		}
		return 0;
	}
	if (!strcmp(backend, "vfio")) {
		int err = cx4_vfio_open(bv_conf_get(d->conf, "pci", ""), &d->bus);

		if (err) {
			cx4d_log(d, "cannot open the VFIO device %s: %s",
				 bv_conf_get(d->conf, "pci", "(no pci = in the configuration)"),
				 strerror(err < 0 ? -err : err));
			return err < 0 ? -err : err;
		}
		return 0;
	}
	cx4d_log(d, "unknown backend '%s' (model, vfio)", backend);
	return EINVAL;
}
