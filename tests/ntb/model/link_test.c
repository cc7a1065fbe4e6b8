// SPDX-License-Identifier: MIT
/*
 * The link is real: two processes find each other whichever starts first; the link goes down
 * when a side's process exits or is killed (peer writes are dropped from then on) and comes
 * back when it restarts; one live process per side.
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ntbt.h"

static const char *profile = "intel-gen1";

/* Child: side 1; reports link changes as 'U'/'D' on fd out; exits when in closes. */
static pid_t spawn_side1(int *rd)
{
	int up[2];
	pid_t pid;

	if (pipe(up))
		exit(2);
	pid = fork();
	if (pid < 0)
		exit(2);
	if (pid == 0) {
		struct ntb_dev *d;
		bool was = false;

		close(up[0]);
		/* drop what the parent's end holds: we are a separate machine */
		close_range(3, up[1] - 1, 0);
		close_range(up[1] + 1, ~0u, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* never outlive the test */
		if (getppid() == 1)
			_exit(0);
		d = ntbt_open(profile, 1);
		ntb_link_enable(d, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
		for (;;) {
			struct pollfd pfd = { .fd = ntb_event_fd(d), .events = POLLIN };
			bool now;

			poll(&pfd, 1, 1000);
			ntb_events(d);
			now = ntb_link_is_up(d, NULL, NULL);
			if (now != was && write(up[1], now ? "U" : "D", 1) != 1)
				_exit(0);	/* the parent is gone */
			was = now;
		}
	}
	close(up[1]);
	*rd = up[0];
	return pid;
}

static char child_said(int rd, int ms)
{
	struct pollfd pfd = { .fd = rd, .events = POLLIN };
	char c = 0;

	if (poll(&pfd, 1, ms) == 1 && read(rd, &c, 1) == 1)
		return c;
	return 0;
}

static bool a_up(void *arg)
{
	return ntb_link_is_up(arg, NULL, NULL);
}

static bool a_down(void *arg)
{
	return !ntb_link_is_up(arg, NULL, NULL);
}

int main(int argc, char **argv)
{
	struct ntb_dev *a, *x;
	struct ntb_stats st0, st1;
	struct ntb_dev_params p = { .link = "t0", .side = 0, .profile = profile,
				    .rundir = ntbt_rundir() };
	int rd, status;
	pid_t kid;

	if (argc > 1)
		profile = argv[1];
	p.profile = profile;

	/* side 1 first; side 0 arrives later */
	kid = spawn_side1(&rd);
	usleep(100000);
	a = ntbt_open(profile, 0);
	CHECK_EQ(ntb_dev_open(&p, &x), -EADDRINUSE);	/* one process per side */
	ntb_link_enable(a, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	CHECK(ntbt_pump(&a, 1, a_up, a, 5000));
	CHECK_EQ(child_said(rd, 5000), 'U');
	ntb_get_stats(a, &st0);
	CHECK_EQ(st0.link_ups, 1);

	/* the peer is killed: link down here, writes dropped */
	kill(kid, SIGKILL);
	waitpid(kid, &status, 0);
	close(rd);
	CHECK(ntbt_pump(&a, 1, a_down, a, 5000));
	ntb_get_stats(a, &st0);
	CHECK_EQ(ntb_peer_spad_write(a, 0, 0, 7), 0);
	CHECK_EQ(ntb_peer_db_set(a, 1), 0);
	ntb_get_stats(a, &st1);
	CHECK_EQ(st1.dropped_link, st0.dropped_link + 2);
	CHECK_EQ(st1.db_rings, st0.db_rings);

	/* it restarts: the link comes back */
	kid = spawn_side1(&rd);
	CHECK(ntbt_pump(&a, 1, a_up, a, 5000));
	CHECK_EQ(child_said(rd, 5000), 'U');
	ntb_get_stats(a, &st1);
	CHECK_EQ(st1.link_ups, 2);

	/* now side 0 goes away and comes back while side 1 lives */
	ntb_dev_close(a);
	CHECK_EQ(child_said(rd, 5000), 'D');
	a = ntbt_open(profile, 0);
	ntb_link_enable(a, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	CHECK(ntbt_pump(&a, 1, a_up, a, 5000));
	CHECK_EQ(child_said(rd, 5000), 'U');

	/* disabling the link takes it down on both ends; enabling brings it back */
	CHECK_EQ(ntb_link_disable(a), 0);
	CHECK_EQ(ntb_link_is_up(a, NULL, NULL), 0);
	CHECK_EQ(child_said(rd, 5000), 'D');
	CHECK_EQ(ntb_link_enable(a, NTB_SPEED_AUTO, NTB_WIDTH_AUTO), 0);
	CHECK(ntbt_pump(&a, 1, a_up, a, 5000));
	CHECK_EQ(child_said(rd, 5000), 'U');

	kill(kid, SIGTERM);
	waitpid(kid, &status, 0);
	close(rd);
	ntb_dev_close(a);
	return ntbt_done();
}
