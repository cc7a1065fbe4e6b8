/* SPDX-License-Identifier: MIT */
/* Which device cx4d drives: the backend behind the bus interface (cx4_bus.h). */
#ifndef CX4D_BUS_H
#define CX4D_BUS_H

struct cx4d;

/*
 * Open the device named by the configuration: "backend = model" (the default) or "vfio"
 * with "pci = 0000:03:00.0". Fills d->bus; returns 0 or a positive errno after saying why.
 */
int cx4d_bus_open(struct cx4d *d);

#endif
