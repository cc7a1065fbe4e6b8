// SPDX-License-Identifier: MIT
/*
 * libscif's behaviour that needs no connection, checked against Intel's documentation and the
 * SCIF driver: node enumeration, descriptors (poll, fcntl, fork, close without scif_close),
 * ports (automatic, in use, privileged, exhausted), and every argument and state error of the
 * 22 functions on an endpoint that is not connected. It reads a configuration from a private
 * run directory and starts no daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scif.h"

static int failures;

#define EXPECT(c)                                                                                  \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: %s (errno %d %s)\n", __FILE__, __LINE__, #c,  \
				errno, strerror(errno));                                           \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* A call fails with -1 and errno e. */
#define FAILS(call, e) EXPECT((errno = 0, (call) == -1 && errno == (e)))

static const char config[] = "[device cx4_0]\nkind = cx4\nip = 127.0.1.1\n"
			     "[device cx4_1]\nkind = cx4\nip = 127.0.1.2\n"
			     "[device ntb_0]\nkind = ntb\nlink = l\nside = 0\nip = 127.0.2.1\n"
			     "[device ntb_1]\nkind = ntb\nlink = l\nside = 1\nip = 127.0.2.2\n";

static void test_nodes(void)
{
	uint16_t self = 99, ids[4] = { 7, 7, 7, 7 };

	EXPECT(scif_get_nodeIDs(NULL, 0, &self) == 2 && self == 0);
	EXPECT(scif_get_nodeIDs(ids, 4, &self) == 2 && ids[0] == 0 && ids[1] == 1 && ids[2] == 7);
	ids[0] = 7;
	EXPECT(scif_get_nodeIDs(ids, 1, &self) == 2 && ids[0] == 0 && ids[1] == 1);
	FAILS(scif_get_nodeIDs(ids, 2, (uint16_t *)8), EFAULT);
	FAILS(scif_get_nodeIDs(NULL, 2, &self), EFAULT);
}

static void test_bad_descriptors(void)
{
	struct scif_portID dst = { 0, 40 };
	char b[8];
	int null = open("/dev/null", O_RDWR);

	FAILS(scif_bind(-1, 0), EBADF);
	FAILS(scif_bind(1000, 0), EBADF);
	FAILS(scif_bind(null, 0), ENOTTY);
	FAILS(scif_listen(null, 1), ENOTTY);
	FAILS(scif_connect(null, &dst), ENOTTY);
	FAILS(scif_send(null, b, 1, 0), ENOTTY);
	FAILS(scif_recv(-1, b, 1, 0), EBADF);
	FAILS(scif_fence_wait(null, 0), ENOTTY);
	EXPECT(scif_mmap(NULL, 4096, SCIF_PROT_READ, 0, null, 0) == SCIF_MMAP_FAILED &&
	       errno == ENOTTY);
	EXPECT(scif_register(-1, b, 4096, 0, SCIF_PROT_READ, 0) == SCIF_REGISTER_FAILED &&
	       errno == EBADF);
	FAILS(scif_close(-1), EBADF);
	/* not an endpoint: refused, and left open */
	FAILS(scif_close(null), EINVAL);
	EXPECT(fcntl(null, F_GETFD) >= 0);
	close(null);
}

/* libscif's name for a port (port.c), to take ports behind its back. */
int scif_port_name(struct sockaddr_un *a, uint16_t node, uint16_t pn);

static int take_port(unsigned int port)
{
	struct sockaddr_un a;
	int len = scif_port_name(&a, 0, (uint16_t)port);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, (socklen_t)len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_ports(void)
{
	scif_epd_t a = scif_open(), b = scif_open(), c = scif_open();
	int pa, pb, st;
	pid_t pid;

	EXPECT(a >= 0 && b >= 0 && c >= 0);
	pa = scif_bind(a, 0);
	EXPECT(pa >= SCIF_PORT_RSVD);
	FAILS(scif_bind(a, 0), EINVAL);	/* bound once */
	FAILS(scif_bind(a, 3000), EINVAL);
	FAILS(scif_bind(b, (uint16_t)pa), EINVAL);	/* in use: EINVAL, not EADDRINUSE */
	pb = scif_bind(b, 0);
	EXPECT(pb >= SCIF_PORT_RSVD && pb != pa);
	/*
	 * Automatic ports as the driver hands them out (idr_alloc from SCIF_PORT_RSVD): the
	 * lowest free one, so in this private run directory 1088 and 1089; a released port is
	 * the next one given again
	 */
	EXPECT(pa == SCIF_PORT_RSVD && pb == SCIF_PORT_RSVD + 1);
	{
		scif_epd_t d = scif_open(), f;

		EXPECT(d >= 0 && scif_bind(d, 0) == SCIF_PORT_RSVD + 2);
		EXPECT(scif_close(a) == 0);
		a = scif_open();
		EXPECT(scif_bind(a, 0) == pa);	/* the lowest free again */
		f = scif_open();
		EXPECT(f >= 0 && scif_bind(f, 0) == SCIF_PORT_RSVD + 3);
		EXPECT(scif_close(d) == 0 && scif_close(f) == 0);
	}
	EXPECT(scif_bind(c, 100) == 100);	/* root may take a port below 1024 */
	EXPECT(scif_close(c) == 0);
	c = scif_open();
	EXPECT(scif_bind(c, 100) == 100);	/* released by the close */
	EXPECT(scif_close(c) == 0);

	/* below SCIF_ADMIN_PORT_END needs CAP_SYS_ADMIN (checked before the state) */
	pid = fork();
	if (pid == 0) {
		scif_epd_t e = scif_open();

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		errno = 0;
		if (scif_bind(e, 200) != -1 || errno != EACCES)
			_exit(3);
		if (scif_bind(e, 5001) != 5001)
			_exit(4);
		errno = 0;
		if (scif_bind(e, 1023) != -1 || errno != EACCES)
			_exit(5);	/* the state check comes after: EACCES, not EINVAL */
		_exit(0);
	}
	EXPECT(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (WIFEXITED(st) && WEXITSTATUS(st))
		fprintf(stderr, "child exit %d\n", WEXITSTATUS(st));

	/*
	 * Every port from SCIF_PORT_RSVD up taken: ENOSPC, for bind and for connect's own bind.
	 * Helpers hold the names (a process may not have 64k descriptors here).
	 */
	{
		pid_t holders[8];
		int nh = 0, ready[2];
		char c1;

		EXPECT(!pipe(ready));
		for (unsigned int from = SCIF_PORT_RSVD; from <= 0xffff; from += 12000) {
			pid_t h = fork();

			if (h == 0) {
				for (unsigned int p = from; p < from + 12000 && p <= 0xffff; p++)
					if (take_port(p) < 0 && p != (unsigned int)pa &&
					    p != (unsigned int)pb)
						_exit(1);
				if (write(ready[1], "r", 1) != 1)
					_exit(1);
				pause();
				_exit(0);
			}
			holders[nh++] = h;
		}
		for (int i = 0; i < nh; i++)
			EXPECT(read(ready[0], &c1, 1) == 1);
		pid = fork();
		if (pid == 0) {
			struct scif_portID dst = { 0, 40 };
			scif_epd_t e = scif_open(), f = scif_open();

			errno = 0;
			if (scif_bind(e, 0) != -1 || errno != ENOSPC)
				_exit(4);
			errno = 0;
			if (scif_connect(f, &dst) != -1 || errno != ENOSPC)
				_exit(5);
			if (scif_bind(e, 1000) != 1000)	/* a given port is still fine */
				_exit(6);
			_exit(0);
		}
		EXPECT(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		       WEXITSTATUS(st) == 0);
		if (WIFEXITED(st) && WEXITSTATUS(st))
			fprintf(stderr, "child exit %d\n", WEXITSTATUS(st));
		for (int i = 0; i < nh; i++) {
			kill(holders[i], SIGKILL);
			waitpid(holders[i], NULL, 0);
		}
		close(ready[0]);
		close(ready[1]);
	}
	EXPECT(scif_close(a) == 0 && scif_close(b) == 0);
}

static void test_unconnected(void)
{
	scif_epd_t e = scif_open(), l = scif_open();
	struct scif_portID dst = { 0, 40 }, peer;
	scif_epd_t ne;
	char buf[16];
	void *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int mark;

	EXPECT(e >= 0 && l >= 0 && page != MAP_FAILED);
	/* listen */
	FAILS(scif_listen(l, 5), EINVAL);	/* not bound */
	EXPECT(scif_bind(l, 0) > 0);
	FAILS(scif_listen(l, 0), EINVAL);
	FAILS(scif_listen(l, -3), EINVAL);
	/* connect */
	FAILS(scif_connect(e, NULL), EINVAL);
	dst.node = 77;
	FAILS(scif_connect(e, &dst), ENODEV);	/* no such node */
	dst.node = 1;
	dst.port = 0;
	FAILS(scif_connect(e, &dst), EINVAL);
	/* accept */
	FAILS(scif_accept(l, &peer, &ne, 0), EINVAL);	/* not listening */
	FAILS(scif_accept(l, &peer, &ne, 2), EINVAL);
	FAILS(scif_accept(l, NULL, &ne, SCIF_ACCEPT_SYNC), EINVAL);
	FAILS(scif_accept(l, &peer, NULL, SCIF_ACCEPT_SYNC), EINVAL);
	/* send / recv: length 0 is 0 whatever the state; then the arguments; then the state */
	EXPECT(scif_send(e, buf, 0, 0) == 0 && scif_recv(e, NULL, 0, 5) == 0);
	FAILS(scif_send(e, buf, -1, 0), EINVAL);
	FAILS(scif_recv(e, buf, 4, 2), EINVAL);	/* flags without SCIF_RECV_BLOCK */
	FAILS(scif_send(e, NULL, 4, 0), EFAULT);
	FAILS(scif_send(e, buf, 4, SCIF_SEND_BLOCK | 2), ENOTCONN);
	FAILS(scif_recv(e, buf, 4, 0), ENOTCONN);
	/* register: the arguments first, then the state */
	EXPECT(scif_register(e, page, 4096, 0, SCIF_PROT_READ, SCIF_MAP_KERNEL) ==
		       SCIF_REGISTER_FAILED && errno == EINVAL);
	EXPECT(scif_register(e, page, 4096, 0, 4, 0) == SCIF_REGISTER_FAILED && errno == EINVAL);
	EXPECT(scif_register(e, page, 0, 0, 1, 0) == SCIF_REGISTER_FAILED && errno == EINVAL);
	EXPECT(scif_register(e, (char *)page + 1, 4096, 0, 1, 0) == SCIF_REGISTER_FAILED &&
	       errno == EINVAL);
	EXPECT(scif_register(e, page, 4095, 0, 1, 0) == SCIF_REGISTER_FAILED && errno == EINVAL);
	EXPECT(scif_register(e, page, 4096, 100, 1, SCIF_MAP_FIXED) == SCIF_REGISTER_FAILED &&
	       errno == EINVAL);
	EXPECT(scif_register(e, page, 4096, -4096, 1, SCIF_MAP_FIXED) == SCIF_REGISTER_FAILED &&
	       errno == EINVAL);
	EXPECT(scif_register(e, page, 4096, 0, 3, SCIF_MAP_FIXED) == SCIF_REGISTER_FAILED &&
	       errno == ENOTCONN);
	/* unregister */
	FAILS(scif_unregister(e, 0, 0), EINVAL);
	FAILS(scif_unregister(e, 0, 100), EINVAL);
	FAILS(scif_unregister(e, 100, 4096), EINVAL);
	FAILS(scif_unregister(e, -4096, 4096), EINVAL);
	FAILS(scif_unregister(e, 0, 4096), ENOTCONN);
	/* RMA: the state first */
	FAILS(scif_readfrom(e, 0, 8, 0, 0x100), ENOTCONN);
	FAILS(scif_writeto(e, 0, 8, 0, SCIF_RMA_SYNC), ENOTCONN);
	FAILS(scif_vreadfrom(e, buf, 8, 0, 0), ENOTCONN);
	FAILS(scif_vwriteto(e, NULL, 8, 0, 0), ENOTCONN);
	/* fences: the state first */
	FAILS(scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark), ENOTCONN);
	FAILS(scif_fence_mark(e, 0, &mark), ENOTCONN);
	FAILS(scif_fence_wait(e, 0), ENOTCONN);
	FAILS(scif_fence_signal(e, 0, 1, 0, 1, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL), ENOTCONN);
	/* mmap: the arguments, then the state */
	EXPECT(scif_mmap(NULL, 4096, SCIF_PROT_READ, 0x1, e, 0) == SCIF_MMAP_FAILED && errno == EINVAL);
	EXPECT(scif_mmap(NULL, 4096, 4, 0, e, 0) == SCIF_MMAP_FAILED && errno == EINVAL);
	EXPECT(scif_mmap(NULL, 0, SCIF_PROT_READ, 0, e, 0) == SCIF_MMAP_FAILED && errno == EINVAL);
	EXPECT(scif_mmap(NULL, 4096, SCIF_PROT_READ, 0, e, 10) == SCIF_MMAP_FAILED &&
	       errno == EINVAL);
	EXPECT(scif_mmap((char *)page + 8, 4096, SCIF_PROT_READ, SCIF_MAP_FIXED, e, 0) ==
		       SCIF_MMAP_FAILED && errno == EINVAL);
	EXPECT(scif_mmap(NULL, 4096, SCIF_PROT_READ, 0, e, -4096) == SCIF_MMAP_FAILED &&
	       errno == ENXIO);
	EXPECT(scif_mmap(NULL, 4096, SCIF_PROT_READ, 0, e, 0) == SCIF_MMAP_FAILED &&
	       errno == ENOTCONN);
	FAILS(scif_munmap((char *)page + 1, 4096), EINVAL);
	EXPECT(scif_munmap(page, 8192) == 0);
	EXPECT(scif_close(e) == 0 && scif_close(l) == 0);
}

static void test_descriptor(void)
{
	scif_epd_t e = scif_open();
	struct scif_pollepd p[2];
	struct pollfd pf;
	fd_set rd, wr;
	struct timeval tv = { 0, 0 };
	int port;

	EXPECT(e >= 0 && scif_get_fd(e) == e);
	EXPECT(fcntl(e, F_GETFD) & FD_CLOEXEC);	/* as libscif sets it */
	EXPECT(!fcntl(e, F_SETFL, fcntl(e, F_GETFL) | O_NONBLOCK) &&
	       (fcntl(e, F_GETFL) & O_NONBLOCK));
	/* unconnected: no event (SCIF says POLLERR, which a socket cannot show: docs/scif.md) */
	p[0].epd = e;
	p[0].events = SCIF_POLLIN | SCIF_POLLOUT;
	p[1].epd = 1000;
	p[1].events = SCIF_POLLIN;
	EXPECT(scif_poll(p, 2, 0) == 1 && p[0].revents == 0 && p[1].revents == SCIF_POLLNVAL);
	EXPECT(scif_poll(NULL, 0, 0) == 0);
	pf.fd = e;
	pf.events = POLLIN | POLLOUT;
	EXPECT(poll(&pf, 1, 0) == 0);
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_SET(e, &rd);
	FD_SET(e, &wr);
	EXPECT(select(e + 1, &rd, &wr, NULL, &tv) == 0);

	/* a program that closes the descriptor with close(2): the library lets its port go */
	port = scif_bind(e, 0);
	EXPECT(port > 0);
	close(e);
	for (int i = 0; i < 200; i++) {
		scif_epd_t f = scif_open();
		int r = scif_bind(f, (uint16_t)port);

		scif_close(f);
		if (r == port)
			return;
		usleep(10000);
	}
	EXPECT(!"the port of a close(2)d endpoint was released");
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* scif_poll is poll(2): its errors, without touching a bad array itself. */
static void test_poll_errors(void)
{
	scif_epd_t e = scif_open();
	struct scif_pollepd p = { .epd = e, .events = SCIF_POLLIN };
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval t = { .it_value = { 0, 100000 } };
	struct rlimit rl;
	void *gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	EXPECT(e >= 0 && gone != MAP_FAILED && !munmap(gone, 4096));
	FAILS(scif_poll((struct scif_pollepd *)8, 1, 0), EFAULT);
	FAILS(scif_poll(gone, 1, 0), EFAULT);
	{
		/* a whole array one longer than RLIMIT_NOFILE (set low for it): EINVAL */
		struct scif_pollepd many[65];
		struct rlimit low;

		for (int i = 0; i < 65; i++)
			many[i] = (struct scif_pollepd){ .epd = -1 };
		EXPECT(!getrlimit(RLIMIT_NOFILE, &rl));
		low = rl;
		low.rlim_cur = 64;
		EXPECT(!setrlimit(RLIMIT_NOFILE, &low));
		FAILS(scif_poll(many, 65, 0), EINVAL);
		EXPECT(!setrlimit(RLIMIT_NOFILE, &rl));
	}
	/* a signal: EINTR (no SA_RESTART; poll is never restarted anyway) */
	EXPECT(!sigaction(SIGALRM, &sa, &old) && !setitimer(ITIMER_REAL, &t, NULL));
	FAILS(scif_poll(&p, 1, 5000), EINTR);
	sigaction(SIGALRM, &old, NULL);
	EXPECT(scif_close(e) == 0);
}

/*
 * Out of descriptors: scif_open fails as open(2) does in Intel's library (EMFILE); a bind,
 * which needs one here and none in the driver, is ENOMEM (no more system resources), not
 * ENOSPC (every port taken); nothing is left half done.
 */
static void test_no_descriptors(void)
{
	scif_epd_t e = scif_open();
	struct rlimit saved, r;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	EXPECT(e >= 0 && fd >= 0 && !getrlimit(RLIMIT_NOFILE, &saved));
	close(fd);
	r = saved;
	r.rlim_cur = (rlim_t)fd;
	EXPECT(!setrlimit(RLIMIT_NOFILE, &r));
	errno = 0;
	{
		int o = scif_open(), oe = errno, b0, b0e, b1, b1e;

		errno = 0;
		b0 = scif_bind(e, 0);
		b0e = errno;
		errno = 0;
		b1 = scif_bind(e, 5000);
		b1e = errno;
		EXPECT(!setrlimit(RLIMIT_NOFILE, &saved));
		errno = oe;
		EXPECT(o == -1 && oe == EMFILE);
		errno = b0e;
		EXPECT(b0 == -1 && b0e == ENOMEM);
		errno = b1e;
		EXPECT(b1 == -1 && b1e == ENOMEM);
	}
	EXPECT(scif_bind(e, 5000) == 5000);	/* still unbound before */
	EXPECT(scif_close(e) == 0);
}

static void test_fork(void)
{
	scif_epd_t e = scif_open();
	int st, port = scif_bind(e, 0);
	pid_t pid;

	EXPECT(port > 0);
	pid = fork();
	if (pid == 0) {
		scif_epd_t f;

		/* the parent's endpoint is not the child's */
		errno = 0;
		if (scif_listen(e, 1) != -1 || errno != ENOTTY)
			_exit(2);
		if (scif_close(e) != 0 || fcntl(e, F_GETFD) != -1)
			_exit(3);
		/* its own endpoints work; the parent's port is still taken (the parent holds it) */
		f = scif_open();
		if (f < 0)
			_exit(4);
		errno = 0;
		if (scif_bind(f, (uint16_t)port) != -1 || errno != EINVAL)
			_exit(5);
		if (scif_bind(f, 0) <= 0 || scif_close(f))
			_exit(6);
		_exit(0);
	}
	EXPECT(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (WIFEXITED(st) && WEXITSTATUS(st))
		fprintf(stderr, "child exit %d\n", WEXITSTATUS(st));
	/* the parent's endpoint is unaffected */
	FAILS(scif_bind(e, 0), EINVAL);
	EXPECT(scif_close(e) == 0);
}

int main(void)
{
	char dir[] = "/tmp/scif-errno.XXXXXX", path[64];
	FILE *f;

	if (!mkdtemp(dir))
		return 2;
	snprintf(path, sizeof(path), "%s/config", dir);
	f = fopen(path, "w");
	if (!f || fputs(config, f) < 0 || fclose(f))
		return 2;
	setenv("BV_RUNDIR", dir, 1);
	unsetenv("BV_SCIF_NODE");
	signal(SIGPIPE, SIG_IGN);

	test_nodes();
	test_bad_descriptors();
	test_ports();
	test_unconnected();
	test_descriptor();
	test_poll_errors();
	test_no_descriptors();
	test_fork();

	unlink(path);
	rmdir(dir);
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	else
		printf("PASS\n");
	return failures ? 1 : 0;
}
