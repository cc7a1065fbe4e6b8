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
/* The device's own counters for `bvctl status` (the model's; nothing for VFIO); bytes written. */
size_t cx4d_bus_status(struct cx4d *d, char *buf, size_t len);

/*
 * Tests: with the model backend, SIGUSR1 / SIGUSR2 pull / plug the port's cable (the model's
 * outside-the-function control). Block the signals before any thread starts, then watch them.
 */
void cx4d_bus_block_test_signals(void);
int cx4d_bus_test_controls(struct cx4d *d);

#endif
