/* SPDX-License-Identifier: MIT */
/*
 * The NTB model's cable: the messages the two ends' processes exchange over the link's
 * rendezvous socket (cable.c), with the descriptors they carry - an end's register file and
 * interrupt eventfds in its HELLO, a memory object its IOMMU maps in OBJ_ADD. The model's own
 * wire between its two halves (a real NTB has the PCIe link instead); the cable fuzzer speaks
 * it too (tests/ntb/fuzz/ntb_cable_fuzz.c).
 */
#ifndef NTB_CABLE_MSG_H
#define NTB_CABLE_MSG_H

#include <stdint.h>

#include "ntb_hal.h"

#define NTB_CABLE_MAGIC		0x4c424143u	/* "CABL" */
#define NTB_CABLE_VERSION	1u
/* HELLO: the register file, the message-register interrupt and the doorbell vectors */
#define NTB_CABLE_MAX_FDS	(NTB_MAX_DB_VECTORS + 2)

enum ntb_cable_type {
	NTB_CABLE_HELLO = 1,
	NTB_CABLE_LINK = 2,
	NTB_CABLE_OBJ_ADD = 3,
	NTB_CABLE_OBJ_DEL = 4,
};

struct ntb_cable_msg {
	uint32_t type;
	uint32_t magic;
	uint32_t version;
	uint32_t side;
	uint32_t profile;
	uint32_t nvec;
	uint64_t mw_size;
	int32_t pid;
	uint32_t obj;
	uint64_t obj_off;
	uint64_t obj_size;
};

#endif /* NTB_CABLE_MSG_H */
