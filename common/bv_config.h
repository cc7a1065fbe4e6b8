/* SPDX-License-Identifier: MIT */
/*
 * The device configuration: which bridgeverbs devices exist, of what kind, on which address.
 * Read by bvctl (to write the sysfs tree and start the daemons) and by each daemon (to find its
 * own section). Format (docs/bvctl.md):
 *
 *	# comment
 *	[device cx4_0]
 *	kind = cx4
 *	ip = 127.0.1.1
 *
 * Keys common to every kind: kind, ip, mac, netdev. ntb adds link, side, profile. Other keys are
 * kept as options for the device's daemon and model (bv_conf_get).
 */
#ifndef BV_CONFIG_H
#define BV_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BV_MAX_DEVICES	32
#define BV_MAX_OPTS	32

struct bv_conf_opt {
	char key[32];
	char val[128];
};

struct bv_dev_conf {
	char name[64];		/* the ibdev name, e.g. cx4_0 */
	char kind[16];		/* "cx4" or "ntb" */
	int index;		/* position in the file: selects uverbs<BV_UVERBS_BASE+index> */
	struct in_addr ip;	/* port 1's IPv4 address (RoCE v2 GID, rdma_cm address) */
	uint8_t mac[6];		/* port 1's MAC (the link-local GID, node GUID) */
	char netdev[16];	/* the netdev the GIDs belong to (gid_attrs/ndevs) */
	bool mac_given;		/* mac / netdev were in the file (else bv_config_resolve */
	bool netdev_given;	/* decides them from the host's interfaces) */
	char link[32];		/* ntb: the link both ends name */
	int side;		/* ntb: 0 or 1 */
	char profile[32];	/* ntb: hardware profile */
	int nopts;
	struct bv_conf_opt opts[BV_MAX_OPTS];
};

struct bv_config {
	int ndev;
	struct bv_dev_conf dev[BV_MAX_DEVICES];
};

/* The configuration used when none is given: two cx4 ports, one ntb link. */
extern const char bv_default_config[];

/* Parse text; on error returns -1 and writes "line N: what" into err. */
int bv_config_parse(struct bv_config *cfg, const char *text, char *err, size_t errlen);
/* Load a file (NULL: the embedded default). */
int bv_config_load(struct bv_config *cfg, const char *path, char *err, size_t errlen);

const struct bv_dev_conf *bv_config_find(const struct bv_config *cfg, const char *name);
const char *bv_conf_get(const struct bv_dev_conf *dev, const char *key, const char *def);
long bv_conf_get_long(const struct bv_dev_conf *dev, const char *key, long def);

/* Identity derived from the configuration. */
uint64_t bv_dev_node_guid(const struct bv_dev_conf *dev);	/* host order */
void bv_dev_gid_ipv4(const struct bv_dev_conf *dev, uint8_t gid[16]);
void bv_dev_gid_link_local(const struct bv_dev_conf *dev, uint8_t gid[16]);

#endif
