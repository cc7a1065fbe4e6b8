// SPDX-License-Identifier: MIT
/*
 * Opens every verbs device, creates a completion channel (through the preload shim), queries
 * the device, every port, every GID and every pkey, checks what a RoCE port must report, and
 * closes everything. Run under valgrind by the foundation tests. Exit 0 only if every check
 * passed; each failure says what.
 *
 * usage: open_all [EXPECTED_DEVICE_COUNT]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static int check_port(struct ibv_context *ctx, const char *name, uint8_t port)
{
	struct ibv_port_attr pa;
	int v1_ll = 0, v2_ipv4 = 0;

	if (ibv_query_port(ctx, port, &pa)) {
		CHECK(0, "%s: ibv_query_port(%u): %s", name, port, strerror(errno));
		return -1;
	}
	CHECK(pa.state == IBV_PORT_ACTIVE, "%s port %u: state %d", name, port, pa.state);
	CHECK(pa.link_layer == IBV_LINK_LAYER_ETHERNET, "%s: link layer %d", name, pa.link_layer);
	CHECK(pa.gid_tbl_len > 0, "%s: gid_tbl_len %d", name, pa.gid_tbl_len);
	CHECK(pa.pkey_tbl_len > 0, "%s: pkey_tbl_len %d", name, pa.pkey_tbl_len);
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		static const union ibv_gid zero;
		union ibv_gid gid;
		struct ibv_gid_entry entry;
		int ret;

		CHECK(!ibv_query_gid(ctx, port, i, &gid), "%s: ibv_query_gid(%d)", name, i);
		ret = ibv_query_gid_ex(ctx, port, i, &entry, 0);
		/* an empty entry, as the kernel has them: ENODATA, and a zero GID */
		if (ret == ENODATA) {
			CHECK(!memcmp(&gid, &zero, sizeof(gid)), "%s: gid %d: ENODATA", name, i);
			continue;
		}
		if (ret) {
			CHECK(0, "%s: ibv_query_gid_ex(%d): %s", name, i, strerror(ret));
			continue;
		}
		CHECK(!memcmp(&entry.gid, &gid, sizeof(gid)), "%s: gid %d differs", name, i);
		if (entry.gid_type == IBV_GID_TYPE_ROCE_V1 && gid.raw[0] == 0xfe &&
		    gid.raw[1] == 0x80)
			v1_ll++;
		if (entry.gid_type == IBV_GID_TYPE_ROCE_V2 && gid.raw[10] == 0xff &&
		    gid.raw[11] == 0xff && !gid.global.subnet_prefix)
			v2_ipv4++;
	}
	CHECK(v1_ll == 1, "%s: %d RoCE v1 link-local GIDs", name, v1_ll);
	CHECK(v2_ipv4 == 1, "%s: %d RoCE v2 IPv4-mapped GIDs", name, v2_ipv4);
	for (int i = 0; i < pa.pkey_tbl_len; i++) {
		__be16 pkey;

		CHECK(!ibv_query_pkey(ctx, port, i, &pkey), "%s: ibv_query_pkey(%d)", name, i);
		CHECK(i || ntohs(pkey) == 0xffff, "%s: pkey 0 is 0x%x", name, ntohs(pkey));
	}
	return 0;
}

static void check_device(struct ibv_device *dev)
{
	const char *name = ibv_get_device_name(dev);
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	ctx = ibv_open_device(dev);
	if (!ctx) {
		CHECK(0, "%s: ibv_open_device: %s", name, strerror(errno));
		return;
	}
	CHECK(ctx->num_comp_vectors >= 1, "%s: num_comp_vectors %d", name, ctx->num_comp_vectors);
	CHECK(ctx->async_fd >= 0, "%s: no async fd", name);
	CHECK(!ibv_query_device(ctx, &a), "%s: ibv_query_device", name);
	CHECK(a.phys_port_cnt >= 1, "%s: phys_port_cnt %d", name, a.phys_port_cnt);
	CHECK(a.node_guid == ibv_get_device_guid(dev), "%s: node guid differs from sysfs", name);
	CHECK(!ibv_query_device_ex(ctx, NULL, &ax), "%s: ibv_query_device_ex", name);
	CHECK(!memcmp(&ax.orig_attr, &a, sizeof(a)), "%s: query_device_ex differs", name);
	for (uint8_t p = 1; p <= a.phys_port_cnt; p++)
		check_port(ctx, name, p);

	ch = ibv_create_comp_channel(ctx);
	CHECK(ch != NULL, "%s: ibv_create_comp_channel: %s", name, strerror(errno));
	if (ch) {
		CHECK(ch->fd >= 0 && ch->context == ctx, "%s: bad channel", name);
		CHECK(!ibv_destroy_comp_channel(ch), "%s: ibv_destroy_comp_channel", name);
	}
	/* Not built yet or not: a verb either works or says EOPNOTSUPP, never fakes success. */
	pd = ibv_alloc_pd(ctx);
	if (pd)
		CHECK(!ibv_dealloc_pd(pd), "%s: ibv_dealloc_pd", name);
	else
		CHECK(errno == EOPNOTSUPP || errno == ENOSYS, "%s: ibv_alloc_pd: %s", name,
		      strerror(errno));
	CHECK(!ibv_close_device(ctx), "%s: ibv_close_device", name);
}

int main(int argc, char **argv)
{
	int n, expected = argc > 1 ? atoi(argv[1]) : -1;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (!list) {
		fprintf(stderr, "FAIL: ibv_get_device_list: %s\n", strerror(errno));
		return 1;
	}
	CHECK(expected < 0 || n == expected, "%d devices, expected %d", n, expected);
	for (int i = 0; i < n; i++)
		check_device(list[i]);
	ibv_free_device_list(list);
	if (!failures)
		printf("open_all: %d devices OK\n", n);
	return failures ? 1 : 0;
}
