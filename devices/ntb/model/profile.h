/* SPDX-License-Identifier: MIT */
/*
 * Hardware profiles: the limits of the NTB devices Linux v6.12 drives, as their drivers
 * report them (drivers/ntb/hw/{intel,amd,idt,mscc,epf}; docs/ntb-model.md).
 */
#ifndef NTB_PROFILE_H
#define NTB_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "ntb_hal.h"

enum ntb_align_rule {
	NTB_ALIGN_BAR,		/* addr_align = BAR size (Intel gen1/gen3: xlat reg is BAR aligned) */
	NTB_ALIGN_4K,		/* addr_align = 4 KiB (PAGE_SIZE: Intel gen4, AMD, Switchtec, EPF) */
	NTB_ALIGN_4B,		/* addr_align = 4 bytes (IDT_TRANS_ALIGN) */
};

struct ntb_profile {
	const char *name;
	enum ntb_topo topo[2];		/* side 0, side 1 */
	int port[2];			/* port numbers of side 0, side 1 */
	int mw_count;			/* usable windows each way */
	uint64_t mw_size;		/* default BAR size */
	enum ntb_align_rule align;
	uint64_t size_align;
	bool pow2_align_of_size;	/* Switchtec: addr aligned to 2^floor(log2(size)), size >= 4K */
	enum ntb_xlat_model xlat;
	int spad_count;
	int msg_count;
	uint64_t db_valid_mask;
	int db_vectors;
	int db_vector_shift;		/* bits per vector (vector v serves bits v*shift ..) */
	enum ntb_speed speed;
	enum ntb_width width;
};

extern const struct ntb_profile ntb_profiles[];
extern const int ntb_profile_count;

/* NULL name: the default (intel-gen3). Returns the index or -1. */
int ntb_profile_find(const char *name);
uint64_t ntb_profile_vector_mask(const struct ntb_profile *p, int vec);
uint64_t ntb_profile_addr_align(const struct ntb_profile *p, uint64_t bar_size);
/* The driver's set_trans checks: 0 or -EINVAL. */
int ntb_profile_check_trans(const struct ntb_profile *p, uint64_t bar_size, uint64_t addr,
			    uint64_t size);

#endif
