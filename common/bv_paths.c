// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bv_paths.h"

const char *bv_rundir(void)
{
	static char dir[BV_PATH_MAX];
	const char *env = getenv("BV_RUNDIR");
	struct stat st;

	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
	} else if (geteuid() == 0 || (!stat(BV_SYSTEM_RUNDIR, &st) && S_ISDIR(st.st_mode))) {
		snprintf(dir, sizeof(dir), BV_SYSTEM_RUNDIR);
	} else if ((env = getenv("XDG_RUNTIME_DIR")) && *env) {
		snprintf(dir, sizeof(dir), "%s/bridgeverbs", env);
	} else {
		snprintf(dir, sizeof(dir), "/tmp/bridgeverbs-%u", (unsigned int)geteuid());
	}
	return dir;
}

int bv_run_path(char *buf, size_t len, const char *name, const char *suffix)
{
	int n = snprintf(buf, len, "%s/%s%s", bv_rundir(), name, suffix);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}
