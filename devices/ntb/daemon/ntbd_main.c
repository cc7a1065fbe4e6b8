// SPDX-License-Identifier: MIT
/* ntbd's main: the bvd skeleton with the ntb device kind (ntbd.c). */
#include "ntbd.h"

int main(int argc, char **argv)
{
	return bvd_main(argc, argv, &ntbd_ops);
}
