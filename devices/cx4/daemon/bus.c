// SPDX-License-Identifier: MIT
/*
 * The backend behind the bus interface. The driver never looks past struct cx4_bus: it gets
 * BAR0, DMA mapping, reset and interrupt eventfds from whichever backend the configuration
 * names. The ConnectX-4 model is the default; a VFIO backend plugs in the same way.
 */
#include <errno.h>
#include <string.h>

#include "cx4d.h"
#include "cx4d_bus.h"

#if __has_include("cx4_model.h")
#include "cx4_model.h"
#define HAVE_MODEL 1
#endif
#if __has_include("cx4_vfio.h")
#include "cx4_vfio.h"
#define HAVE_VFIO 1
#endif

int cx4d_bus_open(struct cx4d *d)
{
	const char *backend = bv_conf_get(d->conf, "backend", "model");

	if (!strcmp(backend, "model")) {
#ifdef HAVE_MODEL
		d->bus = cx4_model_open(d->conf);
		if (!d->bus) {
			cx4d_log(d, "cannot start the ConnectX-4 model: %s", strerror(errno));
			return errno ? errno : EIO;
		}
		return 0;
#else
		cx4d_log(d, "this cx4d was built without the ConnectX-4 model");
		return ENODEV;
#endif
	}
	if (!strcmp(backend, "vfio")) {
#ifdef HAVE_VFIO
		d->bus = cx4_vfio_open(bv_conf_get(d->conf, "pci", ""));
		if (!d->bus) {
			cx4d_log(d, "cannot open the VFIO device: %s", strerror(errno));
			return errno ? errno : EIO;
		}
		return 0;
#else
		cx4d_log(d, "this cx4d was built without the VFIO backend");
		return ENODEV;
#endif
	}
	cx4d_log(d, "unknown backend '%s' (model, vfio)", backend);
	return EINVAL;
}
