// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <unistd.h>

#include "ntbt.h"

int ntbt_failures;
uint32_t ntbt_seen[2];
static char rundir[64];

uint64_t ntbt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

const char *ntbt_rundir(void)
{
	if (!rundir[0]) {
		snprintf(rundir, sizeof(rundir), "/tmp/ntbt.XXXXXX");
		if (!mkdtemp(rundir)) {
			perror("mkdtemp");
			exit(2);
		}
	}
	return rundir;
}

int ntbt_done(void)
{
	char cmd[128];

	if (rundir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", rundir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", rundir);
	}
	if (ntbt_failures)
		fprintf(stderr, "%d check(s) failed\n", ntbt_failures);
	return ntbt_failures ? 1 : 0;
}

struct ntb_dev *ntbt_open(const char *profile, int side)
{
	struct ntb_dev_params p = { .link = "t0", .side = side, .profile = profile,
				    .rundir = ntbt_rundir() };
	struct ntb_dev *d;
	int err = ntb_dev_open(&p, &d);

	if (err) {
		fprintf(stderr, "ntb_dev_open(%s, side %d): %s\n", profile, side, strerror(-err));
		exit(2);
	}
	return d;
}

bool ntbt_pump(struct ntb_dev **devs, int n, ntbt_pred pred, void *arg, int timeout_ms)
{
	uint64_t end = ntbt_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd pfd[4];

		for (int i = 0; i < n; i++)
			ntbt_seen[i] |= ntb_events(devs[i]);
		if (pred && pred(arg))
			return true;
		if (ntbt_now_ms() >= end)
			return pred ? false : true;
		for (int i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = ntb_event_fd(devs[i]), .events = POLLIN };
		poll(pfd, n, 20);
	}
}

struct two {
	struct ntb_dev *a, *b;
};

static bool both_up(void *arg)
{
	struct two *t = arg;

	return ntb_link_is_up(t->a, NULL, NULL) && ntb_link_is_up(t->b, NULL, NULL);
}

void ntbt_pair(const char *profile, struct ntb_dev **a, struct ntb_dev **b)
{
	struct two t;
	struct ntb_dev *d[2];

	t.a = d[0] = ntbt_open(profile, 0);
	t.b = d[1] = ntbt_open(profile, 1);
	ntb_link_enable(t.a, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	ntb_link_enable(t.b, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	if (!ntbt_pump(d, 2, both_up, &t, 5000)) {
		fprintf(stderr, "link %s did not come up\n", profile);
		exit(2);
	}
	*a = t.a;
	*b = t.b;
}
