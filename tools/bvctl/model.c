// SPDX-License-Identifier: MIT
/*
 * bvctl model DEV REQUEST...: the controls of a modelled card outside its PCI function, what a
 * person does to a real one with their hands and a cable - pull and plug the cable, make the
 * function fail, lose received packets - and the model's own counters. bvctl asks the model
 * on its control socket (<rundir>/DEV.model, served by the model's thread in cx4d's process;
 * devices/cx4/model/ctl.c); the driver is not involved, it finds out as it would on a card.
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bvctl.h"

#define MODEL_RSP_MAX 4096
#define MODEL_TIMEOUT_MS 5000

int bvctl_model_request(const struct bv_dev_conf *dev, const char *req, char *rsp, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd p = { .events = POLLIN };
	ssize_t n;
	int s, err;

	if (strcmp(dev->kind, "cx4"))
		return -EOPNOTSUPP;
	if (bv_run_path(sa.sun_path, sizeof(sa.sun_path), dev->name, ".model"))
		return -ENAMETOOLONG;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	p.fd = s;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(s, req, strlen(req), MSG_NOSIGNAL) < 0) {
		err = -errno;
		close(s);
		return err;
	}
	if (poll(&p, 1, MODEL_TIMEOUT_MS) != 1) {
		close(s);
		return -ETIMEDOUT;
	}
	n = recv(s, rsp, len - 1, 0);
	err = n < 0 ? -errno : 0;
	close(s);
	if (n <= 0)
		return n < 0 ? err : -EPIPE;
	rsp[n] = 0;
	return 0;
}

int bvctl_model(const struct bvctl *b, int argc, char **argv)
{
	const struct bv_dev_conf *dev;
	char req[128] = "", rsp[MODEL_RSP_MAX];
	size_t n = 0;
	int err;

	bool help = argc > 0 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"));

	if (help || argc < 2) {
		fprintf(help ? stdout : stderr,
			"usage: bvctl model DEV cable pull|plug    the cable out / back in\n"
			"       bvctl model DEV fail disable|firmware  the function fails under its "
			"driver\n"
			"       bvctl model DEV drop N             lose the next N received RoCE "
			"packets\n"
			"       bvctl model DEV stall US [PERIOD]  its engine stops US us "
			"(of every PERIOD)\n"
			"       bvctl model DEV rxcost US          each packet costs its engine "
			"US us\n"
			"       bvctl model DEV stats              the model's own counters\n"
			"A modelled cx4 device only; its driver finds out as on a card.\n");
		return help ? 0 : 2;
	}
	dev = bv_config_find(&b->cfg, argv[0]);
	if (!dev) {
		fprintf(stderr, "bvctl model: no device %s\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int w = snprintf(req + n, sizeof(req) - n, "%s%s", i > 1 ? " " : "", argv[i]);

		if (w < 0 || (size_t)w >= sizeof(req) - n) {
			fprintf(stderr, "bvctl model: request too long\n");
			return 2;
		}
		n += (size_t)w;
	}
	err = bvctl_model_request(dev, req, rsp, sizeof(rsp));
	if (err) {
		fprintf(stderr, "bvctl model: %s: %s\n", dev->name,
			err == -EOPNOTSUPP ? "not a modelled cx4 device" : strerror(-err));
		return 1;
	}
	if (strncmp(rsp, "ok\n", 3)) {
		fprintf(stderr, "bvctl model: %s: %s", dev->name, rsp);
		return 1;
	}
	fputs(rsp + 3, stdout);
	return 0;
}
