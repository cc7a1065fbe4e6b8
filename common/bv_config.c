// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bv_config.h"

const char bv_default_config[] =
	"# bridgeverbs default devices: two modelled ConnectX-4 ports joined by a cable, and one\n"
	"# NTB link.\n"
	"[device cx4_0]\n"
	"kind = cx4\n"
	"ip = 127.0.1.1\n"
	"cable = cx4\n"
	"\n"
	"[device cx4_1]\n"
	"kind = cx4\n"
	"ip = 127.0.1.2\n"
	"cable = cx4\n"
	"\n"
	"[device ntb_0]\n"
	"kind = ntb\n"
	"link = ntb0\n"
	"side = 0\n"
	"profile = intel-gen3\n"
	"ip = 127.0.2.1\n"
	"\n"
	"[device ntb_1]\n"
	"kind = ntb\n"
	"link = ntb0\n"
	"side = 1\n"
	"profile = intel-gen3\n"
	"ip = 127.0.2.2\n";

static int fail(char *err, size_t errlen, int line, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (line)
		n = snprintf(err, errlen, "line %d: ", line);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static int valid_name(const char *s)
{
	if (!*s || strlen(s) >= 64)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return 0;
	return 1;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = b[i];
	}
	return 0;
}

static int set_key(struct bv_dev_conf *d, const char *k, const char *v, int line, char *err,
		   size_t errlen)
{
	if (!strcmp(k, "kind")) {
		if (strcmp(v, "cx4") && strcmp(v, "ntb"))
			return fail(err, errlen, line, "kind must be cx4 or ntb, not '%s'", v);
		snprintf(d->kind, sizeof(d->kind), "%s", v);
	} else if (!strcmp(k, "ip")) {
		if (inet_pton(AF_INET, v, &d->ip) != 1)
			return fail(err, errlen, line, "ip '%s' is not an IPv4 address", v);
	} else if (!strcmp(k, "mac")) {
		if (parse_mac(v, d->mac))
			return fail(err, errlen, line, "mac '%s' is not xx:xx:xx:xx:xx:xx", v);
		d->mac_given = true;
	} else if (!strcmp(k, "netdev")) {
		if (strlen(v) >= sizeof(d->netdev))
			return fail(err, errlen, line, "netdev name too long");
		snprintf(d->netdev, sizeof(d->netdev), "%s", v);
		d->netdev_given = true;
	} else if (!strcmp(k, "link")) {
		if (!valid_name(v) || strlen(v) >= sizeof(d->link))
			return fail(err, errlen, line, "bad link name '%s'", v);
		snprintf(d->link, sizeof(d->link), "%s", v);
	} else if (!strcmp(k, "side")) {
		if (strcmp(v, "0") && strcmp(v, "1"))
			return fail(err, errlen, line, "side must be 0 or 1");
		d->side = atoi(v);
	} else if (!strcmp(k, "profile")) {
		if (strlen(v) >= sizeof(d->profile))
			return fail(err, errlen, line, "profile name too long");
		snprintf(d->profile, sizeof(d->profile), "%s", v);
	} else {
		if (d->nopts == BV_MAX_OPTS)
			return fail(err, errlen, line, "too many options");
		if (strlen(k) >= sizeof(d->opts[0].key) || strlen(v) >= sizeof(d->opts[0].val))
			return fail(err, errlen, line, "option too long");
		for (int i = 0; i < d->nopts; i++)
			if (!strcmp(d->opts[i].key, k))
				return fail(err, errlen, line, "'%s' given twice", k);
		snprintf(d->opts[d->nopts].key, sizeof(d->opts[0].key), "%s", k);
		snprintf(d->opts[d->nopts].val, sizeof(d->opts[0].val), "%s", v);
		d->nopts++;
	}
	return 0;
}

static int check(struct bv_config *cfg, char *err, size_t errlen)
{
	for (int i = 0; i < cfg->ndev; i++) {
		struct bv_dev_conf *d = &cfg->dev[i];
		static const uint8_t zero[6];

		if (!d->kind[0])
			return fail(err, errlen, 0, "device %s: no kind", d->name);
		if (!d->ip.s_addr)
			return fail(err, errlen, 0, "device %s: no ip", d->name);
		if (!memcmp(d->mac, zero, 6)) {
			/* locally administered, "bv", then the device index */
			const uint8_t mac[6] = { 0x02, 0x62, 0x76, 0x00, 0x00, (uint8_t)(i + 1) };

			memcpy(d->mac, mac, 6);
		}
		if (!d->netdev[0])
			snprintf(d->netdev, sizeof(d->netdev), "lo");
		for (int j = 0; j < i; j++) {
			if (!strcmp(cfg->dev[j].name, d->name))
				return fail(err, errlen, 0, "device %s defined twice", d->name);
			if (cfg->dev[j].ip.s_addr == d->ip.s_addr)
				return fail(err, errlen, 0, "devices %s and %s share an ip",
					    cfg->dev[j].name, d->name);
		}
		if (!strcmp(d->kind, "ntb")) {
			int ends = 0, sides = 0;

			if (!d->link[0])
				return fail(err, errlen, 0, "ntb device %s: no link", d->name);
			if (!d->profile[0])
				snprintf(d->profile, sizeof(d->profile), "intel-gen3");
			for (int j = 0; j < cfg->ndev; j++)
				if (!strcmp(cfg->dev[j].kind, "ntb") &&
				    !strcmp(cfg->dev[j].link, d->link)) {
					ends++;
					sides |= 1 << cfg->dev[j].side;
				}
			if (ends != 2 || sides != 3)
				return fail(err, errlen, 0,
					    "ntb link %s needs exactly two ends, side 0 and side 1",
					    d->link);
		}
	}
	return 0;
}

int bv_config_parse(struct bv_config *cfg, const char *text, char *err, size_t errlen)
{
	struct bv_dev_conf *cur = NULL;
	const char *p = text;
	int line = 0;

	memset(cfg, 0, sizeof(*cfg));
	while (*p) {
		char buf[512], *s, *eq;
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		line++;
		if (n >= sizeof(buf))
			return fail(err, errlen, line, "line too long");
		memcpy(buf, p, n);
		buf[n] = 0;
		p += n + (nl ? 1 : 0);
		if ((s = strchr(buf, '#')))
			*s = 0;
		s = trim(buf);
		if (!*s)
			continue;
		if (*s == '[') {
			char name[64];

			char again[80];

			if (sscanf(s, "[device %63[^] ]", name) != 1 ||
			    (snprintf(again, sizeof(again), "[device %s]", name), strcmp(again, s)))
				return fail(err, errlen, line, "expected [device NAME]");
			if (!valid_name(name))
				return fail(err, errlen, line, "bad device name '%s'", name);
			if (cfg->ndev == BV_MAX_DEVICES)
				return fail(err, errlen, line, "more than %d devices", BV_MAX_DEVICES);
			cur = &cfg->dev[cfg->ndev];
			cur->index = cfg->ndev++;
			snprintf(cur->name, sizeof(cur->name), "%s", name);
			continue;
		}
		if (!(eq = strchr(s, '=')))
			return fail(err, errlen, line, "expected key = value");
		if (!cur)
			return fail(err, errlen, line, "key outside a [device] section");
		*eq = 0;
		if (set_key(cur, trim(s), trim(eq + 1), line, err, errlen))
			return -1;
	}
	if (!cfg->ndev)
		return fail(err, errlen, 0, "no devices");
	return check(cfg, err, errlen);
}

int bv_config_load(struct bv_config *cfg, const char *path, char *err, size_t errlen)
{
	char *text;
	FILE *f;
	long n;
	int ret;

	if (!path)
		return bv_config_parse(cfg, bv_default_config, err, errlen);
	f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, 0, "%s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (1 << 20) || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return fail(err, errlen, 0, "%s: unreadable or too large", path);
	}
	text = calloc(1, n + 1);
	if (!text || fread(text, 1, n, f) != (size_t)n) {
		free(text);
		fclose(f);
		return fail(err, errlen, 0, "%s: read failed", path);
	}
	fclose(f);
	ret = bv_config_parse(cfg, text, err, errlen);
	free(text);
	return ret;
}

const struct bv_dev_conf *bv_config_find(const struct bv_config *cfg, const char *name)
{
	for (int i = 0; i < cfg->ndev; i++)
		if (!strcmp(cfg->dev[i].name, name))
			return &cfg->dev[i];
	return NULL;
}

const char *bv_conf_get(const struct bv_dev_conf *dev, const char *key, const char *def)
{
	for (int i = 0; i < dev->nopts; i++)
		if (!strcmp(dev->opts[i].key, key))
			return dev->opts[i].val;
	return def;
}

long bv_conf_get_long(const struct bv_dev_conf *dev, const char *key, long def)
{
	const char *v = bv_conf_get(dev, key, NULL);
	char *end;
	long r;

	if (!v)
		return def;
	r = strtol(v, &end, 0);
	return *end ? def : r;
}

/* EUI-64 from the MAC (IEEE: insert ff:fe, flip the universal/local bit), as mlx5 does. */
static void eui64(const uint8_t mac[6], uint8_t out[8])
{
	out[0] = mac[0] ^ 0x02;
	out[1] = mac[1];
	out[2] = mac[2];
	out[3] = 0xff;
	out[4] = 0xfe;
	out[5] = mac[3];
	out[6] = mac[4];
	out[7] = mac[5];
}

uint64_t bv_dev_node_guid(const struct bv_dev_conf *dev)
{
	uint8_t e[8];
	uint64_t g = 0;

	eui64(dev->mac, e);
	for (int i = 0; i < 8; i++)
		g = g << 8 | e[i];
	return g;
}

/* RoCE GID of an IPv4 address: the IPv4-mapped IPv6 address ::ffff:a.b.c.d. */
void bv_dev_gid_ipv4(const struct bv_dev_conf *dev, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &dev->ip.s_addr, 4);
}

/* fe80::EUI-64, the default GID of a RoCE port. */
void bv_dev_gid_link_local(const struct bv_dev_conf *dev, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	eui64(dev->mac, gid + 8);
}
