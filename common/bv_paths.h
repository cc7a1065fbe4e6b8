/* SPDX-License-Identifier: MIT */
/*
 * Where a bridgeverbs instance keeps its runtime state: the run directory holds the config
 * copy, the sysfs tree libibverbs reads, and per device the daemon's socket, pid and log.
 * $BV_RUNDIR selects it (tests use a private one). Otherwise it is the system instance's,
 * BV_SYSTEM_RUNDIR, for root and for every user once it exists (bvctl up as root, the systemd
 * units or tmpfiles.d made it); a user on a host without one gets $XDG_RUNTIME_DIR/bridgeverbs
 * (or /tmp/bridgeverbs-UID).
 */
#ifndef BV_PATHS_H
#define BV_PATHS_H

#include <stddef.h>

#define BV_PATH_MAX	256
#define BV_SYSTEM_RUNDIR "/run/bridgeverbs"
/* /dev/infiniband/uverbs<BASE+i>: above the numbers a real kernel hands out first. */
#define BV_UVERBS_BASE	64
#define BV_UVERBS_COUNT	32
#define BV_MODALIAS_PREFIX "bridgeverbs:"

const char *bv_rundir(void);
/* Fill buf with <rundir>/<name><suffix>; returns -1 if it does not fit. */
int bv_run_path(char *buf, size_t len, const char *name, const char *suffix);

#endif
