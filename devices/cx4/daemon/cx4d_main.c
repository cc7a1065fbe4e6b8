// SPDX-License-Identifier: MIT
/*
 * cx4d's main: the bvd skeleton with the cx4 device kind (cx4d.c).
 *
 *   cx4d --device NAME [--config FILE] [--rundir DIR] [--trace[=FILE]]
 *
 * --trace writes the command trace to stderr, --trace=FILE to FILE (as CX4D_TRACE=FILE).
 */
#include <stdlib.h>
#include <string.h>

#include "cx4d.h"

int main(int argc, char **argv)
{
	int n = 0;

	/* --trace[=FILE] is ours; everything else is bvd's */
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--trace")) {
			setenv("CX4D_TRACE", "-", 1);
			continue;
		}
		if (!strncmp(argv[i], "--trace=", 8)) {
			setenv("CX4D_TRACE", argv[i] + 8, 1);
			continue;
		}
		argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return bvd_main(n, argv, &cx4d_ops);
}
