// SPDX-License-Identifier: MIT
/*
 * Every hardware profile through the HAL: counts and limits as the Linux drivers report them
 * (drivers/ntb/hw/; docs/ntb-model.md), the EINVALs of their set_trans checks, and link-gated
 * queries.
 */
#include "ntbt.h"

#define MiB (1ull << 20)

struct expect {
	const char *name;
	int mw;
	int spads;
	int msgs;
	uint64_t db_valid;
	int vectors;
	enum ntb_xlat_model xlat;
	int align_rule;		/* 0: BAR size, 1: 4 KiB, 2: 4 bytes */
	uint64_t size_align;
};

static const struct expect expects[] = {
	{ "intel-gen1", 1, 16, 0, 0x3fff, 4, NTB_XLAT_INBOUND, 0, 1 },
	{ "intel-gen3", 2, 16, 0, 0xffffffffull, 32, NTB_XLAT_INBOUND, 0, 1 },
	{ "intel-gen4", 2, 16, 0, 0xffffffffull, 32, NTB_XLAT_INBOUND, 1, 1 },
	{ "amd", 2, 8, 0, 0x7fff, 15, NTB_XLAT_INBOUND, 1, 1 },
	{ "idt", 2, 0, 4, 0xffffffffull, 1, NTB_XLAT_OUTBOUND, 2, 1 },
	{ "switchtec", 2, 128, 0, 0x0fffffffull, 1, NTB_XLAT_INBOUND, 1, 4096 },
	{ "epf", 1, 16, 0, 0x3, 2, NTB_XLAT_INBOUND, 1, 1 },
};

static int set_trans(struct ntb_dev *d, int widx, uint64_t addr, uint64_t size)
{
	if (ntb_xlat_model(d) == NTB_XLAT_INBOUND)
		return ntb_mw_set_trans(d, 0, widx, addr, size);
	return ntb_peer_mw_set_trans(d, 0, widx, addr, size);
}

static void check_profile(const struct expect *e)
{
	struct ntb_dev *a, *b;
	uint64_t aa, sa, smax, base, bar, all = 0, iova = 1ull << 40;
	enum ntb_speed sp;
	enum ntb_width wd;
	int nv;

	fprintf(stderr, "# profile %s\n", e->name);
	/* before the link is up: mw_get_align says -ENOTCONN (ntb.h) */
	a = ntbt_open(e->name, 0);
	CHECK_EQ(ntb_mw_get_align(a, 0, 0, &aa, &sa, &smax), -ENOTCONN);
	CHECK_EQ(ntb_link_is_up(a, NULL, NULL), 0);
	ntb_dev_close(a);

	ntbt_pair(e->name, &a, &b);
	CHECK(!strcmp(ntb_profile_name(a), e->name));
	CHECK_EQ(ntb_link_is_up(a, &sp, &wd), 1);
	CHECK(sp > NTB_SPEED_NONE && wd > NTB_WIDTH_NONE);
	CHECK_EQ(ntb_peer_port_count(a), 1);
	CHECK(ntb_port_number(a) != ntb_port_number(b));
	CHECK_EQ(ntb_peer_port_number(a, 0), ntb_port_number(b));
	CHECK_EQ(ntb_peer_port_idx(a, ntb_port_number(b)), 0);
	CHECK_EQ(ntb_mw_count(a, 0), e->mw);
	CHECK_EQ(ntb_mw_count(a, 1), -EINVAL);
	CHECK_EQ(ntb_peer_mw_count(a), e->mw);
	CHECK_EQ(ntb_spad_count(a), e->spads);
	CHECK_EQ(ntb_msg_count(a), e->msgs);
	CHECK_EQ(ntb_db_valid_mask(a), e->db_valid);
	CHECK_EQ(ntb_xlat_model(a), e->xlat);

	/* doorbell vectors partition the valid bits */
	nv = ntb_db_vector_count(a);
	CHECK_EQ(nv, e->vectors);
	for (int v = 0; v < nv; v++) {
		uint64_t m = ntb_db_vector_mask(a, v);

		CHECK(!(m & all));
		all |= m;
	}
	CHECK_EQ(all, e->db_valid);
	CHECK_EQ(ntb_peer_db_set(a, ~e->db_valid & 0xffffffffffffffffull), -EINVAL);

	/* window alignment, as mw_get_align reports and set_trans enforces */
	CHECK_EQ(ntb_peer_mw_get_addr(a, 0, &base, &bar), 0);
	CHECK_EQ(ntb_peer_mw_get_addr(a, e->mw, &base, &bar), -EINVAL);
	CHECK_EQ(ntb_mw_get_align(a, 0, 0, &aa, &sa, &smax), 0);
	CHECK_EQ(ntb_mw_get_align(a, 0, e->mw, &aa, &sa, &smax), -EINVAL);
	CHECK_EQ(aa, e->align_rule == 0 ? bar : e->align_rule == 1 ? 4096 : 4);
	CHECK_EQ(sa, e->size_align);
	CHECK_EQ(smax, bar);
	for (int w = 0; w < e->mw; w++) {
		CHECK_EQ(set_trans(a, w, iova, bar), 0);
		CHECK_EQ(set_trans(a, w, iova, bar * 2), -EINVAL);	/* beyond the BAR */
		if (aa > 1)
			CHECK_EQ(set_trans(a, w, iova + aa / 2, bar / 2), -EINVAL);
		CHECK_EQ(set_trans(a, w, 0, 0), 0);	/* clear */
	}
	CHECK_EQ(set_trans(a, e->mw, iova, bar), -EINVAL);
	if (e->xlat == NTB_XLAT_INBOUND) {
		CHECK_EQ(ntb_peer_mw_set_trans(a, 0, 0, iova, bar), -EOPNOTSUPP);
	} else {
		CHECK_EQ(ntb_mw_set_trans(a, 0, 0, iova, bar), -EOPNOTSUPP);
		/* IDT: any 4-byte aligned address */
		CHECK_EQ(ntb_peer_mw_set_trans(a, 0, 0, iova + 4, 4 * MiB), 0);
		CHECK_EQ(ntb_peer_mw_set_trans(a, 0, 0, iova + 2, 4 * MiB), -EINVAL);
	}
	if (e->align_rule == 0)	/* Intel gen1/gen3: page aligned is not enough */
		CHECK_EQ(set_trans(a, 0, iova + 4096, bar / 2), -EINVAL);
	if (e->size_align == 4096) {	/* Switchtec */
		CHECK_EQ(set_trans(a, 0, iova, 2048), -EINVAL);		/* < 4 KiB */
		CHECK_EQ(set_trans(a, 0, iova, 6144), -EINVAL);		/* not 4 KiB multiple */
		CHECK_EQ(set_trans(a, 0, iova + 4096, 64 * 1024), -EINVAL); /* 2^16 align */
		CHECK_EQ(set_trans(a, 0, iova + 65536, 64 * 1024), 0);
	}
	CHECK_EQ(set_trans(a, 0, 0, 0), 0);

	/* optional registers */
	CHECK_EQ(ntb_spad_write(a, e->spads, 1), -EINVAL);
	CHECK_EQ(ntb_peer_spad_write(a, 0, e->spads, 1), -EINVAL);
	CHECK_EQ(ntb_spad_read(a, e->spads), 0);
	if (!e->msgs) {
		CHECK_EQ(ntb_peer_msg_write(a, 0, 0, 1), -EOPNOTSUPP);
		CHECK_EQ(ntb_msg_inbits(a), 0);
	} else {
		CHECK_EQ(ntb_msg_inbits(a), 0xf0000);
		CHECK_EQ(ntb_msg_outbits(a), 0xf);
		CHECK_EQ(ntb_peer_msg_write(a, 0, e->msgs, 1), -EINVAL);
	}

	/* a configured BAR size must be a power of two */
	{
		struct ntb_dev_params p = { .link = "bad", .side = 0, .profile = e->name,
					    .rundir = ntbt_rundir(), .mw_size = 3 * MiB };
		struct ntb_dev *x;

		CHECK_EQ(ntb_dev_open(&p, &x), -EINVAL);
	}
	ntb_dev_close(a);
	ntb_dev_close(b);
}

int main(void)
{
	struct ntb_dev_params p = { .link = "t0", .side = 0, .profile = "no-such",
				    .rundir = ntbt_rundir() };
	struct ntb_dev *x;

	CHECK_EQ(ntb_dev_open(&p, &x), -EINVAL);
	p.profile = NULL;
	p.side = 2;
	CHECK_EQ(ntb_dev_open(&p, &x), -EINVAL);
	for (size_t i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		check_profile(&expects[i]);
	return ntbt_done();
}
