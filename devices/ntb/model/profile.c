// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "profile.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

const struct ntb_profile ntb_profiles[] = {
	{
		/*
		 * ntb_hw_gen1.c, Xeon E5 B2B: 2 data BARs, but the SDOORBELL_LOCKUP erratum puts
		 * the peer's registers behind one of them (b2b_mw_idx) => 1 usable window.
		 * xlat must be BAR-size aligned (intel_ntb_mw_set_trans: addr & (bar_size - 1)).
		 * 16 spads; 15 doorbell bits of which bit 14 is lost to the BIT14 erratum => 14.
		 * 4 MSI-X vectors of 5 bits (SNB_DB_MSIX_VECTOR_COUNT/SHIFT).
		 */
		.name = "intel-gen1",
		.topo = { NTB_TOPO_B2B_USD, NTB_TOPO_B2B_DSD },
		.port = { 0, 1 },
		.mw_count = 1,
		.mw_size = 512 * MiB,
		.align = NTB_ALIGN_BAR,
		.size_align = 1,
		.xlat = NTB_XLAT_INBOUND,
		.spad_count = 16,
		.msg_count = 0,
		.db_valid_mask = 0x3fff,
		.db_vectors = 4,
		.db_vector_shift = 5,
		.speed = NTB_SPEED_GEN3,
		.width = NTB_WIDTH_8,
	},
	{
		/*
		 * ntb_hw_gen3.c, Skylake-SP: 2 windows, BAR-size aligned xlat (a limit register
		 * allows size < BAR), 16 spads, 32 doorbell bits with one vector each (the 33rd
		 * vector is the link).
		 */
		.name = "intel-gen3",
		.topo = { NTB_TOPO_B2B_USD, NTB_TOPO_B2B_DSD },
		.port = { 0, 1 },
		.mw_count = 2,
		.mw_size = 512 * MiB,
		.align = NTB_ALIGN_BAR,
		.size_align = 1,
		.xlat = NTB_XLAT_INBOUND,
		.spad_count = 16,
		.msg_count = 0,
		.db_valid_mask = 0xffffffffull,
		.db_vectors = 32,
		.db_vector_shift = 1,
		.speed = NTB_SPEED_GEN3,
		.width = NTB_WIDTH_16,
	},
	{
		/* ntb_hw_gen4.c, Ice Lake / Sapphire Rapids: as gen3 but xlat aligned to 4 KiB. */
		.name = "intel-gen4",
		.topo = { NTB_TOPO_B2B_USD, NTB_TOPO_B2B_DSD },
		.port = { 0, 1 },
		.mw_count = 2,
		.mw_size = 1 * GiB,
		.align = NTB_ALIGN_4K,
		.size_align = 1,
		.xlat = NTB_XLAT_INBOUND,
		.spad_count = 16,
		.msg_count = 0,
		.db_valid_mask = 0xffffffffull,
		.db_vectors = 32,
		.db_vector_shift = 1,
		.speed = NTB_SPEED_GEN4,
		.width = NTB_WIDTH_16,
	},
	{
		/*
		 * ntb_hw_amd.c (0x148b): 2 windows, addr_align 4 KiB, PRI/SEC only; 16 spads
		 * shared => 8 per side; 16 doorbells, one reserved => 15, one vector per bit.
		 */
		.name = "amd",
		.topo = { NTB_TOPO_PRI, NTB_TOPO_SEC },
		.port = { 0, 1 },
		.mw_count = 2,
		.mw_size = 1 * GiB,
		.align = NTB_ALIGN_4K,
		.size_align = 1,
		.xlat = NTB_XLAT_INBOUND,
		.spad_count = 8,
		.msg_count = 0,
		.db_valid_mask = 0x7fff,
		.db_vectors = 15,
		.db_vector_shift = 1,
		.speed = NTB_SPEED_GEN3,
		.width = NTB_WIDTH_16,
	},
	{
		/*
		 * ntb_hw_idt.c (89HPESxNTx): translation only through peer_mw_set_trans, 4-byte
		 * alignment (IDT_TRANS_ALIGN), no scratchpads, 4 message registers, a 32-bit
		 * global doorbell, one interrupt for everything. PCIe gen2 switches.
		 */
		.name = "idt",
		.topo = { NTB_TOPO_SWITCH, NTB_TOPO_SWITCH },
		.port = { 0, 2 },
		.mw_count = 2,
		.mw_size = 1 * GiB,
		.align = NTB_ALIGN_4B,
		.size_align = 1,
		.xlat = NTB_XLAT_OUTBOUND,
		.spad_count = 0,
		.msg_count = 4,
		.db_valid_mask = 0xffffffffull,
		.db_vectors = 1,
		.db_vector_shift = 32,
		.speed = NTB_SPEED_GEN2,
		.width = NTB_WIDTH_8,
	},
	{
		/*
		 * ntb_hw_switchtec.c: direct windows with 4 KiB addr/size alignment, size >= 4 KiB
		 * and addr aligned to 2^floor(log2(size)); 128 spads emulated in a shared window;
		 * no message registers exposed; 64 doorbells shared => 28 per partition; no
		 * db_vector_count op => one vector.
		 */
		.name = "switchtec",
		.topo = { NTB_TOPO_SWITCH, NTB_TOPO_SWITCH },
		.port = { 0, 1 },
		.mw_count = 2,
		.mw_size = 1 * GiB,
		.align = NTB_ALIGN_4K,
		.size_align = 4096,
		.pow2_align_of_size = true,
		.xlat = NTB_XLAT_INBOUND,
		.spad_count = 128,
		.msg_count = 0,
		.db_valid_mask = 0x0fffffffull,
		.db_vectors = 1,
		.db_vector_shift = 28,
		.speed = NTB_SPEED_GEN3,
		.width = NTB_WIDTH_16,
	},
	{
		/*
		 * ntb_hw_epf.c / pci-epf-ntb: the minimal configuration: one window (num_mws),
		 * 4 KiB alignment, 16 spads (spad_count), 2 doorbells (MSI vectors - 2), one
		 * vector per doorbell.
		 */
		.name = "epf",
		.topo = { NTB_TOPO_PRI, NTB_TOPO_SEC },
		.port = { 0, 1 },
		.mw_count = 1,
		.mw_size = 1 * GiB,
		.align = NTB_ALIGN_4K,
		.size_align = 1,
		.xlat = NTB_XLAT_INBOUND,
		.spad_count = 16,
		.msg_count = 0,
		.db_valid_mask = 0x3,
		.db_vectors = 2,
		.db_vector_shift = 1,
		.speed = NTB_SPEED_GEN2,
		.width = NTB_WIDTH_1,
	},
};

const int ntb_profile_count = sizeof(ntb_profiles) / sizeof(ntb_profiles[0]);

int ntb_profile_find(const char *name)
{
	if (!name || !*name)
		name = "intel-gen3";
	for (int i = 0; i < ntb_profile_count; i++)
		if (!strcmp(ntb_profiles[i].name, name))
			return i;
	return -1;
}

uint64_t ntb_profile_vector_mask(const struct ntb_profile *p, int vec)
{
	uint64_t m;

	if (vec < 0 || vec >= p->db_vectors)
		return 0;
	m = p->db_vector_shift >= 64 ? ~0ull : (1ull << p->db_vector_shift) - 1;
	return (m << (vec * p->db_vector_shift)) & p->db_valid_mask;
}

uint64_t ntb_profile_addr_align(const struct ntb_profile *p, uint64_t bar_size)
{
	switch (p->align) {
	case NTB_ALIGN_BAR:
		return bar_size;
	case NTB_ALIGN_4K:
		return 4096;
	case NTB_ALIGN_4B:
		return 4;
	}
	return bar_size;
}

int ntb_profile_check_trans(const struct ntb_profile *p, uint64_t bar_size, uint64_t addr,
			    uint64_t size)
{
	uint64_t align = ntb_profile_addr_align(p, bar_size);

	if (!size)
		return 0;	/* clearing */
	if (addr & (align - 1))
		return -EINVAL;
	if (size > bar_size || size % p->size_align)
		return -EINVAL;
	if (p->pow2_align_of_size) {
		/* switchtec_ntb_mw_set_trans: xlate_pos = ilog2(size), >= 12, addr aligned */
		int pos = 63 - __builtin_clzll(size);

		if (pos < 12 || (addr & ((1ull << pos) - 1)))
			return -EINVAL;
	}
	return 0;
}
