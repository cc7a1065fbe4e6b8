// SPDX-License-Identifier: MIT
/*
 * The link is real: two processes find each other whichever starts first; the link goes down
 * when a side's process exits or is killed (peer writes are dropped from then on) and comes
 * back when it restarts; one live process per side.
 */
#include <signal.h>
#include <sys/mman.h>
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

/* In a child: a failed step says which, and ends the child (its parent sees EOF). */
#define must(ok)                                                                                   \
	do {                                                                                       \
		if (!(ok)) {                                                                       \
			fprintf(stderr, "link_test child %d: line %d: %s failed\n", (int)getpid(),   \
				__LINE__, #ok);                                                    \
			_exit(3);                                                                  \
		}                                                                                  \
	} while (0)

/*
 * A client outlives its daemon: side 0's owner is SIGKILLed (nobody clears its register
 * file) while its client process still holds a grant and a DMA channel. Its writes must be
 * dropped all the same (the peer's model saw the cable go), and its link reads as down.
 */
static void test_orphaned_client(void)
{
	int ready[2], go[2], res[2];
	pid_t owner;
	struct ntb_dev *b;
	struct ntb_dev *one[1];
	uint64_t aa, wsz, iova;
	uint8_t *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct ntb_iommu_map m;
	char c;
	int r[3] = { -1, -1, -1 };

	must(!pipe(ready) && !pipe(go) && !pipe(res));
	memset(buf, 0x11, 4096);
	owner = fork();
	if (owner == 0) {
		struct ntb_dev *a;
		uint32_t gid;
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		a = ntbt_open(profile, 0);
		ntb_link_enable(a, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
		must(ntbt_pump(&a, 1, a_up, a, 5000));
		fd = ntb_grant_export(a, &(struct ntb_grant){ .peer_db_bits = 1,
							  .flags = NTB_GRANT_DMA }, &gid);
		must(fd >= 0);
		if (fork() == 0) {	/* the client */
			struct ntb_dev *cl;
			struct ntb_dma_chan *ch;
			struct ntb_dma_stats st;
			ntb_dma_cookie_t ck;
			uint8_t x[64];

			/* a client is not a fork of its daemon: drop what we inherited from it */
			for (int k = 3; k < 1024; k++)
				if (k != fd && k != ready[1] && k != go[0] && k != res[1])
					close(k);
			must(!ntb_client_attach(fd, &cl));
			/* the owner saw the link up; this process may see it a moment later */
			for (int t = 0; t < 500 && !ntb_link_is_up(cl, NULL, NULL); t++)
				usleep(10000);
			must(!ntb_dma_chan_open(cl, &(struct ntb_dma_chan_attr){
						      .flags = NTB_DMA_CHAN_MANUAL }, &ch));
			must(write(ready[1], "r", 1) == 1);
			must(read(go[0], &c, 1) == 1);	/* the owner is dead now */
			memset(x, 0x77, sizeof(x));
			r[0] = (int)ntb_link_is_up(cl, NULL, NULL);
			r[1] = ntb_dma_memcpy(ch, 0, 0, x, sizeof(x), 0, &ck);
			ntb_peer_db_set(cl, 1);
			ntb_dma_chan_stats(ch, &st);
			r[2] = (int)st.syscalls;
			must(write(res[1], r, sizeof(r)) == sizeof(r));
			_exit(0);
		}
		close(fd);
		close(ready[1]);	/* only the client writes these: EOF when it dies */
		close(res[1]);
		for (;;)
			ntbt_pump(&a, 1, NULL, NULL, 1000);
	}
	close(ready[1]);
	close(res[1]);
	b = ntbt_open(profile, 1);
	one[0] = b;
	ntb_link_enable(b, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	CHECK(ntbt_pump(one, 1, a_up, b, 5000));
	CHECK_EQ(ntb_mw_get_align(b, 0, 0, &aa, NULL, &wsz), 0);
	CHECK_EQ(ntb_iova_alloc(b, wsz, aa, &iova), 0);
	m = (struct ntb_iommu_map){ .iova = iova, .len = 4096, .fd = -1, .pid = getpid(),
				    .va = (uintptr_t)buf, .perm = NTB_IOMMU_WRITE };
	CHECK_EQ(ntb_iommu_map(b, &m), 0);
	CHECK_EQ(ntb_mw_set_trans(b, 0, 0, iova, wsz), 0);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	CHECK(ntbt_pump(one, 1, a_down, b, 5000));
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(read(res[0], r, sizeof(r)), (ssize_t)sizeof(r));
	CHECK_EQ(r[0], 0);		/* the client sees the link down */
	CHECK_EQ(r[1], -ENOTCONN);	/* and cannot post */
	CHECK_EQ(r[2], 0);		/* nothing reached the peer */
	CHECK_EQ(ntb_db_read(b), 0);
	for (int i = 0; i < 4096; i++)
		if (buf[i] != 0x11) {
			CHECK(!"written after the link went down");
			break;
		}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	ntb_dev_close(b);
	munmap(buf, 4096);
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

	/*
	 * A bounce the peer only looks at afterwards (its process was stopped: both LINK
	 * messages wait on the cable) is still reported as down, then up: on hardware the
	 * link went down and trained again, and the peer's driver must learn that its session
	 * ended (ntbd's heartbeat bounces the link of a hung peer this way).
	 */
	kill(kid, SIGSTOP);
	CHECK_EQ(ntb_link_disable(a), 0);
	CHECK_EQ(ntb_link_enable(a, NTB_SPEED_AUTO, NTB_WIDTH_AUTO), 0);
	CHECK(ntbt_pump(&a, 1, a_up, a, 5000));
	kill(kid, SIGCONT);
	CHECK_EQ(child_said(rd, 5000), 'D');
	CHECK_EQ(child_said(rd, 5000), 'U');

	kill(kid, SIGTERM);
	waitpid(kid, &status, 0);
	close(rd);
	ntb_dev_close(a);

	test_orphaned_client();
	return ntbt_done();
}
