// SPDX-License-Identifier: MIT
/* The configuration parser: the built-in config, identities, and every rejection. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "bv_expect.h"
#include "bv_config.h"

static void expect_error(const char *text, const char *msg)
{
	static struct bv_config cfg;
	char err[256] = "";

	EXPECT(bv_config_parse(&cfg, text, err, sizeof(err)) == -1);
	if (!strstr(err, msg)) {
		fprintf(stderr, "FAIL: error '%s' does not contain '%s'\n", err, msg);
		failures++;
	}
}

/* The system configuration the packages ship (dist/devices.conf) is the built-in one. */
static void expect_builtin(const char *path)
{
	static struct bv_config shipped, builtin;
	char err[256] = "";

	EXPECT(!bv_config_load(&builtin, NULL, err, sizeof(err)));
	if (bv_config_load(&shipped, path, err, sizeof(err))) {
		fprintf(stderr, "FAIL: %s: %s\n", path, err);
		failures++;
		return;
	}
	EXPECT(!memcmp(&shipped, &builtin, sizeof(shipped)));
}

int main(int argc, char **argv)
{
	static struct bv_config cfg;
	const struct bv_dev_conf *d;
	uint8_t gid[16];
	char err[256];

	EXPECT(!bv_config_load(&cfg, NULL, err, sizeof(err)));
	EXPECT(cfg.ndev == 4);
	d = bv_config_find(&cfg, "cx4_1");
	EXPECT(d && !strcmp(d->kind, "cx4") && d->index == 1 && !strcmp(d->netdev, "lo"));
	EXPECT(d && d->mac[0] == 0x02 && d->mac[5] == 2);
	EXPECT(d && bv_dev_node_guid(d) == 0x006276fffe000002ull);
	bv_dev_gid_ipv4(d, gid);
	EXPECT(gid[10] == 0xff && gid[11] == 0xff && gid[12] == 127 && gid[13] == 0 &&
	       gid[14] == 1 && gid[15] == 2);
	bv_dev_gid_link_local(d, gid);
	EXPECT(gid[0] == 0xfe && gid[1] == 0x80 && gid[8] == 0x00 && gid[11] == 0xff &&
	       gid[12] == 0xfe && gid[15] == 2);
	d = bv_config_find(&cfg, "ntb_1");
	EXPECT(d && d->side == 1 && !strcmp(d->link, "ntb0") && !strcmp(d->profile, "intel-gen3"));
	EXPECT(!bv_config_find(&cfg, "nope"));

	EXPECT(!bv_config_parse(&cfg,
				"[device a]\nkind=cx4\nip=10.0.0.1 # c\nmtu = 1024\npcap=/x\n"
				"mac = 02:00:00:00:00:09\n",
				err, sizeof(err)));
	EXPECT(bv_conf_get_long(&cfg.dev[0], "mtu", 0) == 1024);
	EXPECT(!strcmp(bv_conf_get(&cfg.dev[0], "pcap", ""), "/x"));
	EXPECT(bv_conf_get_long(&cfg.dev[0], "absent", 7) == 7);
	EXPECT(cfg.dev[0].mac[5] == 9);

	expect_error("kind = cx4\n", "line 1: key outside a [device] section");
	expect_error("[device a]\nkind = cx5\n", "line 2: kind must be cx4 or ntb");
	expect_error("[device a]\nkind = cx4\n", "device a: no ip");
	expect_error("[device a]\nkind = cx4\nip = 300.1.1.1\n", "line 3: ip");
	expect_error("[device a b]\n", "line 1");
	expect_error("[device a]\nkind=cx4\nip=1.1.1.1\n[device a]\nkind=cx4\nip=1.1.1.2\n",
		     "defined twice");
	expect_error("[device a]\nkind=cx4\nip=1.1.1.1\n[device b]\nkind=cx4\nip=1.1.1.1\n",
		     "share an ip");
	expect_error("[device a]\nkind=ntb\nip=1.1.1.1\nlink=l\nside=0\n", "needs exactly two");
	expect_error("[device a]\nkind=cx4\nip=1.1.1.1\nfoo\n", "line 4: expected key = value");
	expect_error("[device a]\nkind=cx4\nip=1.1.1.1\nx=1\nx=2\n", "given twice");
	expect_error("", "no devices");
	if (argc > 1)
		expect_builtin(argv[1]);
	if (!failures)
		printf("config_test OK\n");
	return failures ? 1 : 0;
}
