// SPDX-License-Identifier: MIT
/*
 * libscif between processes on bridgeverbs devices: every function, flag and documented error
 * that needs a connection, with every byte checked. Run through bvctl run with the devices up
 * (tests/integration/scif_verbs.sh); BV_SCIF_FABRIC picks the device kind.
 *
 *   scif_test [CASE...]      run the cases (all by default); each forks its processes:
 *                            node 0 (the listener) and node 1 (the connector), or two
 *                            processes of node 0 for the "self" cases
 *
 * A case's processes report through their exit status; a hang is caught by an alarm.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scif.h"

#define PG 4096

static const char *case_name;
static int failures;

static void failf(const char *file, int line, const char *what)
{
	fprintf(stderr, "FAIL [%s] %s:%d (pid %d): %s (errno %d %s)\n", case_name, file, line,
		(int)getpid(), what, errno, strerror(errno));
	failures++;
}

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			failf(__FILE__, __LINE__, #c);                                             \
	} while (0)
/* fatal in a child: report and leave */
#define MUST(c)                                                                                    \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			failf(__FILE__, __LINE__, #c);                                             \
			_exit(1);                                                                  \
		}                                                                                  \
	} while (0)
#define FAILS(call, e) CHECK((errno = 0, (call) == -1 && errno == (e)))

static uint16_t port_base;

/* A pattern every byte of which depends on its position and a seed. */
static void fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 8)) ^ (seed >> 3));
}

static size_t mismatch(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)((i * 131 + seed * 7 + (i >> 8)) ^ (seed >> 3)))
			return i + 1;
	return 0;
}

static void *pages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void set_node(int node)
{
	char v[8];

	snprintf(v, sizeof(v), "%d", node);
	setenv("BV_SCIF_NODE", v, 1);
}

/*
 * Marks: files both sides of a case see (also across network namespaces) that order steps a
 * connection cannot order, e.g. a connect after the server's checks that no request waits.
 * They live in a directory of this run's own (SCIF_TEST_MARKS, which --server and --client
 * need, else a new one): in a directory shared by every run, another test's "listening"
 * mark for the same port number let a client connect before its own listener was there.
 */
static int role;	/* 0: both sides; 1: only servers; 2: only clients (two hosts) */
static char mark_dir[48];
static bool mark_dir_ours;

static void case_mark(uint16_t port, char *path, size_t len, const char *what)
{
	int n = snprintf(path, len, "%s/%u.%s", mark_dir, port, what);

	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "scif_test: mark path too long\n");
		_exit(2);
	}
}

/* Where the marks go: SCIF_TEST_MARKS, or a new directory (removed at the end). */
static int marks_open(void)
{
	const char *d = getenv("SCIF_TEST_MARKS");

	if (d) {
		if (strlen(d) >= sizeof(mark_dir) - 1) {
			fprintf(stderr, "scif_test: SCIF_TEST_MARKS is longer than %zu\n",
				sizeof(mark_dir) - 2);
			return -1;
		}
		strcpy(mark_dir, d);
		if (mkdir(mark_dir, 0700) && errno != EEXIST) {
			perror("scif_test: SCIF_TEST_MARKS");
			return -1;
		}
		return 0;
	}
	if (role) {
		fprintf(stderr, "scif_test: --server and --client need SCIF_TEST_MARKS, a "
				"directory both sides see\n");
		return -1;
	}
	strcpy(mark_dir, "/tmp/scif_test.XXXXXX");
	if (!mkdtemp(mark_dir)) {
		perror("scif_test: mkdtemp");
		return -1;
	}
	mark_dir_ours = true;
	return 0;
}

static void marks_close(void)
{
	DIR *dir;
	struct dirent *de;

	if (!mark_dir_ours || !(dir = opendir(mark_dir)))
		return;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(dir), de->d_name, 0);
	closedir(dir);
	rmdir(mark_dir);
}

static void mark_set(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	close(fd);
}

/* Wait (secs at most) for the other side's mark. */
static bool mark_wait_s(const char *path, int secs)
{
	for (int i = 0; i < secs * 100; i++) {
		if (!access(path, F_OK))
			return true;
		usleep(10000);
	}
	return false;
}

static bool mark_wait(const char *path)
{
	return mark_wait_s(path, 30);
}

/*
 * A listener on node 0 at port, or -1; once it listens, the "listening" mark says so. The
 * connecting side waits for that mark, however long a loaded machine takes to start the
 * listener, and then connects once: a refusal after it is a failure, not a retry (a retry
 * budget hid refusals, and ran out when a listener took longer than it to come up).
 */
static scif_epd_t listener(uint16_t port, int backlog)
{
	scif_epd_t l = scif_open();
	char up[80];

	if (l < 0 || scif_bind(l, port) != port || scif_listen(l, backlog))
		return -1;
	case_mark(port, up, sizeof(up), "listening");
	mark_set(up);
	return l;
}

static scif_epd_t connect_to(uint16_t node, uint16_t port)
{
	struct scif_portID dst = { node, port };
	scif_epd_t e = scif_open();
	char up[80];
	int r = -1;

	if (e < 0)
		return -1;
	case_mark(port, up, sizeof(up), "listening");
	if (!mark_wait_s(up, 100)) {
		fprintf(stderr, "no listener on port %u came up in 100 s\n", port);
		errno = ETIMEDOUT;
	} else {
		r = scif_connect(e, &dst);
	}
	if (r < 0) {
		int err = errno;

		scif_close(e);
		errno = err;
		return -1;
	}
	return e;
}

/* Accept one connection (blocking). */
static scif_epd_t accept_one(scif_epd_t l, struct scif_portID *peer)
{
	struct scif_portID p;
	scif_epd_t n;

	if (scif_accept(l, peer ? peer : &p, &n, SCIF_ACCEPT_SYNC))
		return -1;
	return n;
}

static int send_all(scif_epd_t e, const void *buf, int len)
{
	return scif_send(e, (void *)buf, len, SCIF_SEND_BLOCK);
}

static int recv_all(scif_epd_t e, void *buf, int len)
{
	return scif_recv(e, buf, len, SCIF_RECV_BLOCK);
}

/* A one-byte go-ahead between the two sides of a case. */
static void sync_send(scif_epd_t e)
{
	char c = 'g';

	MUST(send_all(e, &c, 1) == 1);
}

static void sync_recv(scif_epd_t e)
{
	char c = 0;

	MUST(recv_all(e, &c, 1) == 1 && c == 'g');
}

static void on_signal(int sig)
{
	(void)sig;
}

/* A child that sends us SIGUSR1 in ms milliseconds (reaped with waitpid). */
static pid_t signal_later(int ms)
{
	pid_t me = getpid(), k = fork();

	if (k == 0) {
		usleep((useconds_t)ms * 1000);
		kill(me, SIGUSR1);
		_exit(0);
	}
	return k;
}

/* ----------------------------------------------------------------------------------------- */
/* Cases: each is a server (node 0) and a client (node 1) run in two processes                 */

struct tcase {
	const char *name;
	void (*server)(uint16_t port);
	void (*client)(uint16_t port);
	int client_node;		/* 1, or 0 for a connection to one's own node */
};

static void connect_server(uint16_t port)
{
	struct scif_portID peer;
	scif_epd_t l = listener(port, 4), n;

	MUST(l >= 0);
	{
		struct scif_portID self = { 0, port };

		FAILS(scif_connect(l, &self), EOPNOTSUPP);	/* a listener does not connect */
	}
	FAILS(scif_listen(l, 1), EISCONN);
	FAILS(scif_bind(l, 0), EISCONN);
	FAILS(scif_send(l, &peer, 1, 0), ENOTCONN);
	n = accept_one(l, &peer);
	MUST(n >= 0);
	{
		struct scif_portID p2;
		scif_epd_t n2;

		FAILS(scif_accept(n, &p2, &n2, 0), EINVAL);	/* not a listener */
	}
	CHECK(peer.node == (getenv("SCIF_TEST_SELF") ? 0 : 1) && peer.port >= SCIF_PORT_RSVD);
	sync_send(n);
	sync_recv(n);	/* the client is done with its checks */
	CHECK(scif_close(n) == 0);
	CHECK(scif_close(l) == 0);
}

static void connect_client(uint16_t port)
{
	scif_epd_t e = scif_open();
	struct scif_portID dst = { 0, port };
	uint16_t self;
	char up[80];
	int r;

	MUST(e >= 0);
	CHECK(scif_get_nodeIDs(NULL, 0, &self) >= 2 && self == 1);
	case_mark(port, up, sizeof(up), "listening");
	MUST(mark_wait_s(up, 100));
	r = scif_connect(e, &dst);
	CHECK(r >= SCIF_PORT_RSVD);	/* the local port */
	FAILS(scif_connect(e, &dst), EISCONN);
	FAILS(scif_bind(e, 0), EISCONN);
	FAILS(scif_listen(e, 1), EISCONN);
	sync_recv(e);
	sync_send(e);
	CHECK(scif_close(e) == 0);
}

/* No listener: ECONNREFUSED, and the endpoint may try again. */
static void refused_client(uint16_t port)
{
	struct scif_portID dst = { 0, (uint16_t)(port + 1) };
	scif_epd_t e = scif_open();

	MUST(e >= 0);
	FAILS(scif_connect(e, &dst), ECONNREFUSED);
	FAILS(scif_connect(e, &dst), ECONNREFUSED);	/* again, on the same endpoint */
	CHECK(scif_close(e) == 0);
}

/* Messaging: byte stream, blocking and non-blocking, partial transfers, every byte checked. */
static void msg_server(uint16_t port)
{
	scif_epd_t l = listener(port, 1), n;
	static uint8_t big[1 << 20];
	uint8_t buf[256];
	int got = 0, r;

	MUST(l >= 0);
	{
		char full[80];

		case_mark(port, full, sizeof(full), "full");
		unlink(full);	/* a stale one */
	}
	n = accept_one(l, NULL);
	MUST(n >= 0);
	/* 1: a stream without boundaries: 100 sends of 7 bytes read back as 25-byte pieces */
	for (int i = 0; i < 28; i++) {
		CHECK(recv_all(n, buf, 25) == 25);
		for (int k = 0; k < 25; k++)
			CHECK(buf[k] == (uint8_t)(i * 25 + k));
	}
	/* 2: 1 MiB blocking: more than a ring, with credits coming back */
	CHECK(recv_all(n, big, sizeof(big)) == (int)sizeof(big));
	CHECK(!mismatch(big, sizeof(big), 11));
	/* 3: non-blocking receive of what is there: possibly 0, never EAGAIN */
	while (got < 300) {
		r = scif_recv(n, buf, 300 - got < (int)sizeof(buf) ? 300 - got : (int)sizeof(buf), 0);
		CHECK(r >= 0);
		if (r < 0)
			break;
		for (int k = 0; k < r; k++)
			if (buf[k] != (uint8_t)(got + k)) {
				fprintf(stderr, "at %d: %d bytes, byte %d is %u not %u\n", got, r, k,
					buf[k], (uint8_t)(got + k));
				CHECK(!"stream bytes");
				break;
			}
		got += r;
	}
	CHECK(got == 300);
	/* 4: echo, 8 bytes, a thousand times */
	for (int i = 0; i < 1000; i++) {
		uint64_t v;

		CHECK(recv_all(n, &v, 8) == 8);
		v = ~v;
		CHECK(send_all(n, &v, 8) == 8);
	}
	/* 5: the client fills the ring while we do not read: non-blocking sends stop short */
	{
		char full[80];

		case_mark(port, full, sizeof(full), "full");
		CHECK(mark_wait(full));	/* ... and its blocking send was interrupted */
		unlink(full);
	}
	got = 0;
	while (got < (int)sizeof(big)) {
		r = recv_all(n, big + got, (int)sizeof(big) - got);
		CHECK(r > 0);
		if (r <= 0)
			break;
		got += r;
	}
	CHECK(!mismatch(big, (size_t)got, 5));
	/* 6: the client closes; queued bytes stay readable, then ECONNRESET */
	sync_send(n);
	CHECK(recv_all(n, buf, 10) == 10 && !mismatch(buf, 10, 9));
	FAILS(scif_recv(n, buf, 1, SCIF_RECV_BLOCK), ECONNRESET);
	FAILS(scif_send(n, buf, 1, 0), ECONNRESET);
	/* every other call that needs the connection too (scif(3)) */
	{
		uint8_t *pg = pages(PG);
		int mark;

		MUST(pg);
		CHECK(scif_register(n, pg, PG, 0, SCIF_PROT_READ, 0) == SCIF_REGISTER_FAILED &&
		      errno == ECONNRESET);
		FAILS(scif_unregister(n, 0, PG), ECONNRESET);
		FAILS(scif_readfrom(n, 0, PG, 0, 0), ECONNRESET);
		FAILS(scif_writeto(n, 0, PG, 0, 0), ECONNRESET);
		FAILS(scif_vreadfrom(n, pg, PG, 0, 0), ECONNRESET);
		FAILS(scif_vwriteto(n, pg, PG, 0, 0), ECONNRESET);
		FAILS(scif_fence_mark(n, SCIF_FENCE_INIT_SELF, &mark), ECONNRESET);
		FAILS(scif_fence_wait(n, 0), ECONNRESET);
		FAILS(scif_listen(n, 1), EINVAL);
		FAILS(scif_bind(n, 0), EISCONN);
		FAILS(scif_fence_signal(n, 0, 1, 0, 1, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL),
		      ECONNRESET);
		CHECK(scif_mmap(NULL, PG, SCIF_PROT_READ, 0, n, 0) == SCIF_MMAP_FAILED &&
		      errno == ECONNRESET);
		munmap(pg, PG);
	}
	CHECK(scif_close(n) == 0 && scif_close(l) == 0);
}

static void msg_client(uint16_t port)
{
	scif_epd_t e = connect_to(0, port);
	static uint8_t big[1 << 20];
	uint8_t buf[300];
	int sent, r;

	MUST(e >= 0);
	for (int i = 0; i < 100; i++) {
		uint8_t m[7];

		for (int k = 0; k < 7; k++)
			m[k] = (uint8_t)(i * 7 + k);
		CHECK(send_all(e, m, 7) == 7);
	}
	fill(big, sizeof(big), 11);
	CHECK(send_all(e, big, sizeof(big)) == (int)sizeof(big));
	for (int k = 0; k < 300; k++)
		buf[k] = (uint8_t)k;
	/* non-blocking: what fits now (the reader may still be at the 1 MiB's end) */
	for (int off = 0, tries = 0; off < 300 && tries < 1000000; tries++) {
		r = scif_send(e, buf + off, 300 - off < 100 ? 300 - off : 100, 0);
		CHECK(r >= 0 && r <= 100);
		if (r < 0)
			break;
		off += r;
	}
	for (int i = 0; i < 1000; i++) {
		uint64_t v = (uint64_t)i * 0x0101010101ull, w;

		CHECK(send_all(e, &v, 8) == 8);
		CHECK(recv_all(e, &w, 8) == 8 && w == ~v);
	}
	/* non-blocking sends into a reader that does not read: some bytes, then 0 */
	fill(big, sizeof(big), 5);
	sent = 0;
	for (int i = 0; i < 1000; i++) {
		r = scif_send(e, big + sent, (int)sizeof(big) - sent, 0);
		CHECK(r >= 0);
		if (r <= 0)
			break;
		sent += r;
	}
	CHECK(sent > 0 && sent < (int)sizeof(big));
	CHECK(scif_send(e, big + sent, 100, 0) == 0);
	/* a blocking send that finds no room, ended by a signal before any byte: EINTR */
	{
		struct sigaction sa = { .sa_handler = on_signal }, old;
		char full[80];
		pid_t k;

		sigaction(SIGUSR1, &sa, &old);
		k = signal_later(300);
		FAILS(scif_send(e, big + sent, 100, SCIF_SEND_BLOCK), EINTR);
		waitpid(k, NULL, 0);
		sigaction(SIGUSR1, &old, NULL);
		case_mark(port, full, sizeof(full), "full");
		mark_set(full);
	}
	CHECK(send_all(e, big + sent, (int)sizeof(big) - sent) == (int)sizeof(big) - sent);
	sync_recv(e);
	fill(buf, 10, 9);
	CHECK(send_all(e, buf, 10) == 10);
	CHECK(scif_close(e) == 0);
}


/* ----------------------------------------------------------------------------------------- */
/* Registration, RMA, fences                                                                  */

#define W1 0x10000l	/* 4 pages, read-write */
#define W2 0x14000l	/* 2 pages right after: a range may span both */
#define W4 0x20000l	/* 1 page, write-only */

static void put64(scif_epd_t e, uint64_t v)
{
	MUST(send_all(e, &v, 8) == 8);
}

static uint64_t get64(scif_epd_t e)
{
	uint64_t v = 0;

	MUST(recv_all(e, &v, 8) == 8);
	return v;
}

/* Wait (bounded) for an 8-byte value to appear in memory. */
static bool wait_value(volatile uint64_t *p, uint64_t v)
{
	for (int i = 0; i < 20000 && *p != v; i++)
		usleep(500);
	return *p == v;
}

static void rma_server(uint16_t port)
{
	scif_epd_t l = listener(port, 1), n;
	uint8_t *w1 = pages(6 * PG), *w3 = pages(PG), *w4 = pages(PG);
	off_t o3, clo;

	MUST(l >= 0 && w1 && w3 && w4);
	n = accept_one(l, NULL);
	MUST(n >= 0);
	fill(w1, 6 * PG, 1);
	fill(w3, PG, 3);
	CHECK(scif_register(n, w1, 4 * PG, W1, SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED) ==
	      W1);
	CHECK(scif_register(n, w1 + 4 * PG, 2 * PG, W2, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_FIXED) == W2);
	/* overlaps; the fixed range is below 2^62; automatic offsets are above it */
	CHECK(scif_register(n, w3, PG, W1 + PG, SCIF_PROT_READ, SCIF_MAP_FIXED) ==
		      SCIF_REGISTER_FAILED && errno == EADDRINUSE);
	CHECK(scif_register(n, w3, PG, 1l << 62, SCIF_PROT_READ, SCIF_MAP_FIXED) ==
		      SCIF_REGISTER_FAILED && errno == EADDRINUSE);
	o3 = scif_register(n, w3, PG, 0x7000, SCIF_PROT_READ, 0);
	CHECK(o3 >= (1l << 62) && o3 % PG == 0);
	CHECK(scif_register(n, w4, PG, W4, SCIF_PROT_WRITE, SCIF_MAP_FIXED) == W4);
	{
		/*
		 * Memory that cannot be pinned: EFAULT, nothing registered. A hole (the middle
		 * page unmapped), also for the v* calls; read-only memory for SCIF_PROT_WRITE
		 * (it registers for SCIF_PROT_READ).
		 */
		uint8_t *holey = pages(3 * PG);
		void *ro = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		off_t o;

		MUST(holey && ro != MAP_FAILED && !munmap(holey + PG, PG));
		CHECK(scif_register(n, holey, 3 * PG, 0, SCIF_PROT_READ, 0) ==
			      SCIF_REGISTER_FAILED && errno == EFAULT);
		FAILS(scif_vwriteto(n, holey, 3 * PG, W1, 0), EFAULT);
		FAILS(scif_vreadfrom(n, holey + 5, 3 * PG - 10, W1, 0), EFAULT);
		CHECK(scif_register(n, ro, PG, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0) ==
			      SCIF_REGISTER_FAILED && errno == EFAULT);
		o = scif_register(n, ro, PG, 0, SCIF_PROT_READ, 0);
		CHECK(o != SCIF_REGISTER_FAILED && scif_unregister(n, o, PG) == 0);
		munmap(holey, 3 * PG);
		munmap(ro, PG);
	}
	put64(n, (uint64_t)o3);
	clo = (off_t)get64(n);

	/* the client wrote 5 pages at W1 + 100 (across the two windows): check every byte */
	MUST(get64(n) == 1);
	CHECK(!mismatch(w1 + 100, 5 * PG, 21));
	CHECK(!mismatch(w1, 100, 1) || w1[0] == (uint8_t)((0 * 131 + 7) ^ 0));
	fill(w1, 6 * PG, 1);	/* back to the pattern for the client's reads */
	put64(n, 2);

	/* v* writes: small (bounce) and large (registered for the call) at W1 */
	MUST(get64(n) == 3);
	{
		size_t m = mismatch(w1 + 7, 3000, 31);

		if (m)
			fprintf(stderr, "vwriteto: byte %zu of 3000 differs\n", m - 1);
		CHECK(!m);
	}
	put64(n, 3);
	MUST(get64(n) == 4);
	CHECK(!mismatch(w1, 6 * PG, 41));
	put64(n, 4);

	/* fences: async writes, then a remote signal after them */
	MUST(get64(n) == 5);
	CHECK(wait_value((volatile uint64_t *)(w1 + 6 * PG - 8), 0xabcdef0123456789ull));
	CHECK(!mismatch(w1, 6 * PG - 8, 51));
	put64(n, 6);
	/* INIT_PEER: the client asks us to mark, wait and signal for our RMAs */
	CHECK(scif_writeto(n, W1, PG, clo, 0) == 0);
	MUST(get64(n) == 7);
	/* Linux and MPSS: INIT_PEER | SIGNAL_LOCAL writes rval at roff in OUR space */
	CHECK(wait_value((volatile uint64_t *)(w1 + 16), 0x1111));
	CHECK(wait_value((volatile uint64_t *)(w1 + 24), 0x5555));	/* INIT_SELF, REMOTE */
	CHECK(wait_value((volatile uint64_t *)(w1 + 32), 0x7777));	/* INIT_PEER, swapped */

	/* unregister: straddling, unknown ranges; then for real: the peer's RMAs see ENXIO */
	FAILS(scif_unregister(n, W1 + PG, PG), EINVAL);
	FAILS(scif_unregister(n, W1, 2 * PG), EINVAL);
	FAILS(scif_unregister(n, 0x40000, PG), ENXIO);
	FAILS(scif_unregister(n, W1, 8 * PG), ENXIO);
	CHECK(scif_unregister(n, o3, PG) == 0);
	FAILS(scif_unregister(n, o3, PG), ENXIO);
	CHECK(scif_unregister(n, W1, 6 * PG) == 0);	/* two windows at once */
	put64(n, 8);
	MUST(get64(n) == 9);
	CHECK(scif_close(n) == 0 && scif_close(l) == 0);
}

static void rma_client(uint16_t port)
{
	scif_epd_t e = connect_to(0, port);
	uint8_t *loc = pages(8 * PG), *ro = pages(PG);
	static uint8_t vbuf[(2 << 20) + 64];
	off_t lo, lro, o3;
	int mark;

	MUST(e >= 0 && loc && ro);
	lo = scif_register(e, loc, 8 * PG, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	lro = scif_register(e, ro, PG, 0x80000, SCIF_PROT_READ, SCIF_MAP_FIXED);
	MUST(lo != SCIF_REGISTER_FAILED && lro == 0x80000);
	o3 = (off_t)get64(e);
	put64(e, (uint64_t)lo);

	/* writeto across two remote windows, from one local window */
	fill(loc, 8 * PG, 21);
	CHECK(scif_writeto(e, lo, 5 * PG, W1 + 100, SCIF_RMA_SYNC) == 0);
	put64(e, 1);
	MUST(get64(e) == 2);
	/* readfrom, SYNC and async + fence */
	memset(loc, 0, 8 * PG);
	CHECK(scif_readfrom(e, lo + 3, 6 * PG - 3, W1 + 3, SCIF_RMA_SYNC) == 0);
	CHECK(!mismatch(loc, 0, 1));
	{
		uint8_t ref[6 * PG];

		fill(ref, sizeof(ref), 1);
		CHECK(!memcmp(loc + 3, ref + 3, 6 * PG - 3));
		memset(loc, 0, 8 * PG);
		CHECK(scif_readfrom(e, lo, PG, W1, 0) == 0);
		CHECK(scif_readfrom(e, lo + PG, 5 * PG, W1 + PG, SCIF_RMA_ORDERED | SCIF_RMA_USECPU) ==
		      0);
		CHECK(scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark) == 0 && !(mark & 0x80000000));
		CHECK(scif_fence_wait(e, mark) == 0);
		CHECK(!memcmp(loc, ref, 6 * PG));
	}
	/*
	 * Every rma_flags combination on each of the four calls, unaligned, across the two
	 * remote windows: the bytes arrive (fenced when not SCIF_RMA_SYNC), read back to check
	 */
	for (int fl = 0; fl < 16; fl++) {
		size_t len = 2 * PG + 100 + (size_t)fl;
		off_t rof = W1 + 4 * PG - PG / 2 + fl;	/* W1's last half page on into W2 */
		uint8_t *chk = loc + 4 * PG;
		uint32_t seed = 100 + (uint32_t)fl;

#define RMA_DONE()                                                                                 \
	CHECK((fl & SCIF_RMA_SYNC) || (scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark) == 0 &&   \
				       scif_fence_wait(e, mark) == 0))
		fill(loc + 5, len, seed);
		CHECK(scif_writeto(e, lo + 5, len, rof, fl) == 0);
		RMA_DONE();
		memset(chk, 0, 4 * PG);
		CHECK(scif_readfrom(e, lo + 4 * PG, len, rof, SCIF_RMA_SYNC) == 0);
		CHECK(!mismatch(chk, len, seed));
		memset(loc, 0, 4 * PG);
		CHECK(scif_readfrom(e, lo + 3, len, rof, fl) == 0);
		RMA_DONE();
		CHECK(!mismatch(loc + 3, len, seed));
		fill(vbuf + 7, len, seed + 50);
		CHECK(scif_vwriteto(e, vbuf + 7, len, rof, fl) == 0);
		RMA_DONE();
		memset(chk, 0, 4 * PG);
		CHECK(scif_readfrom(e, lo + 4 * PG, len, rof, SCIF_RMA_SYNC) == 0);
		CHECK(!mismatch(chk, len, seed + 50));
		memset(vbuf, 0, len + 16);
		CHECK(scif_vreadfrom(e, vbuf + 1, len, rof, fl) == 0);
		RMA_DONE();
		if (mismatch(vbuf + 1, len, seed + 50))
			fprintf(stderr, "rma flags %#x: vreadfrom differs\n", fl);
		CHECK(!mismatch(vbuf + 1, len, seed + 50));
#undef RMA_DONE
	}
	/* the read-only remote window */
	CHECK(scif_readfrom(e, lo, PG, o3, SCIF_RMA_SYNC) == 0);
	CHECK(!mismatch(loc, PG, 3));
	/* protection and ranges, checked before anything moves */
	FAILS(scif_writeto(e, lo, 8, o3, 0), EPERM);		/* remote read-only */
	FAILS(scif_readfrom(e, lo, 8, W4, 0), EPERM);		/* remote write-only */
	FAILS(scif_readfrom(e, lro, 8, W1, 0), EPERM);		/* local read-only */
	{
		/* a window with no access at all (prot 0 is valid): every RMA from it EPERM */
		off_t z = scif_register(e, ro, PG, 0x90000, 0, SCIF_MAP_FIXED);

		CHECK(z == 0x90000);
		FAILS(scif_writeto(e, z, 8, W1, 0), EPERM);
		FAILS(scif_readfrom(e, z, 8, W1, 0), EPERM);
		CHECK(scif_unregister(e, z, PG) == 0);
	}
	FAILS(scif_writeto(e, lo, 8, 0x30000, 0), ENXIO);	/* not registered */
	FAILS(scif_writeto(e, lo, 2 * PG, W2 + PG, 0), ENXIO);	/* runs past the last window */
	FAILS(scif_writeto(e, lo, 9 * PG, W1, 0), ENXIO);	/* past the local window */
	FAILS(scif_writeto(e, -PG, 8, W1, 0), ENXIO);
	FAILS(scif_readfrom(e, lo, 8, -8, 0), ENXIO);
	FAILS(scif_writeto(e, lo, 0, W1, 0), EINVAL);
	FAILS(scif_writeto(e, lo, 8, W1, 0x100), EINVAL);	/* no valid flag at all */
	CHECK(scif_writeto(e, lo, 8, W4, 0x100 | SCIF_RMA_SYNC) == 0);	/* any valid bit: fine */
	FAILS(scif_vwriteto(e, (void *)8, 8, W1, 0), EFAULT);
	FAILS(scif_vreadfrom(e, vbuf, 8, o3 + PG, 0), ENXIO);
	FAILS(scif_vwriteto(e, vbuf, 8, o3, 0), EPERM);		/* remote read-only */
	FAILS(scif_vreadfrom(e, vbuf, 8, W4, 0), EPERM);	/* remote write-only */
	FAILS(scif_vwriteto(e, vbuf, 0, W1, 0), EINVAL);
	FAILS(scif_vreadfrom(e, vbuf, 8, W1, 0x100), EINVAL);
	FAILS(scif_readfrom(e, lo, 0, W1, SCIF_RMA_SYNC), EINVAL);

	/* v*: small through the bounce ring, large registered for the call, and the cache */
	fill(vbuf + 5, 3000, 31);
	CHECK(scif_vwriteto(e, vbuf + 5, 3000, W1 + 7, SCIF_RMA_SYNC) == 0);
	put64(e, 3);
	MUST(get64(e) == 3);
	fill(vbuf + 1, 6 * PG, 41);
	CHECK(scif_vwriteto(e, vbuf + 1, 6 * PG, W1, 0) == 0);	/* async: a fence says done */
	CHECK(scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark) == 0 && scif_fence_wait(e, mark) == 0);
	put64(e, 4);
	MUST(get64(e) == 4);
	memset(vbuf, 0, sizeof(vbuf));
	for (int i = 0; i < 3; i++) {
		CHECK(scif_vreadfrom(e, vbuf + 9, 6 * PG, W1, SCIF_RMA_USECACHE | SCIF_RMA_SYNC) == 0);
		CHECK(!mismatch(vbuf + 9, 6 * PG, 41));
		memset(vbuf, 0, sizeof(vbuf));
		CHECK(scif_vreadfrom(e, vbuf + 3, 1000, W1 + 50, 0) == 0);	/* async, bounce */
		CHECK(scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark) == 0 &&
		      scif_fence_wait(e, mark) == 0);
		{
			uint8_t ref[6 * PG];

			fill(ref, sizeof(ref), 41);
			CHECK(!memcmp(vbuf + 3, ref + 50, 1000));
		}
	}

	/*
	 * SCIF_RMA_USECACHE across an munmap: the memory mapped again at the same address (the
	 * old mapping replaced, MAP_FIXED) is what the next v* call reads and writes, not the
	 * pages the cached registration held
	 */
	{
		uint8_t *m = pages(6 * PG);

		MUST(m);
		for (int round = 0; round < 3; round++) {
			uint32_t seed = 61 + (uint32_t)round;

			fill(m + 1, 5 * PG, seed);
			CHECK(scif_vwriteto(e, m + 1, 5 * PG, W1, SCIF_RMA_USECACHE | SCIF_RMA_SYNC) ==
			      0);
			memset(loc, 0, 8 * PG);
			CHECK(scif_readfrom(e, lo, 5 * PG, W1, SCIF_RMA_SYNC) == 0);
			CHECK(!mismatch(loc, 5 * PG, seed));
			MUST(mmap(m, 6 * PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m);
			CHECK(scif_vreadfrom(e, m + 1, 5 * PG, W1, SCIF_RMA_USECACHE | SCIF_RMA_SYNC) ==
			      0);
			CHECK(!mismatch(m + 1, 5 * PG, seed));
			MUST(mmap(m, 6 * PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m);
		}
		munmap(m, 6 * PG);
	}

	/* SIGNAL_REMOTE after async writes: the value lands after every byte before it */
	fill(loc, 8 * PG, 51);
	for (int i = 0; i < 6; i++)
		CHECK(scif_writeto(e, lo + i * PG, i == 5 ? PG - 8 : PG, W1 + i * PG, 0) == 0);
	CHECK(scif_fence_signal(e, 0, 0, W1 + 6 * PG - 8, 0xabcdef0123456789ull,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE) == 0);
	put64(e, 5);
	MUST(get64(e) == 6);
	/* SIGNAL_LOCAL: our own window, once our RMAs so far completed */
	CHECK(scif_readfrom(e, lo, 4 * PG, W1, 0) == 0);
	CHECK(scif_fence_signal(e, lo + 8 * PG - 8, 77, 0, 0,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL) == 0);
	CHECK(wait_value((volatile uint64_t *)(loc + 8 * PG - 8), 77));
	/* the peer's RMAs: a mark with bit 31, a wait on it, a signal by the peer */
	CHECK(scif_fence_mark(e, SCIF_FENCE_INIT_PEER, &mark) == 0 && (mark & 0x80000000));
	CHECK(scif_fence_wait(e, mark) == 0);
	CHECK(scif_fence_signal(e, 0, 0x2222, W1 + 16, 0x1111,
				SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL) == 0);
	/* ... and SIGNAL_REMOTE, swapped as the drivers do: lval at loff in OUR space */
	CHECK(scif_fence_signal(e, lo + 8 * PG - 16, 0x3333, 0, 0,
				SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_REMOTE) == 0);
	CHECK(wait_value((volatile uint64_t *)(loc + 8 * PG - 16), 0x3333));
	/* both signals at once, for our RMAs and for the peer's */
	CHECK(scif_fence_signal(e, lo + 8 * PG - 24, 0x4444, W1 + 24, 0x5555,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE) == 0);
	CHECK(wait_value((volatile uint64_t *)(loc + 8 * PG - 24), 0x4444));
	CHECK(scif_fence_signal(e, lo + 8 * PG - 32, 0x6666, W1 + 32, 0x7777,
				SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE) == 0);
	CHECK(wait_value((volatile uint64_t *)(loc + 8 * PG - 32), 0x6666));
	put64(e, 7);
	/* fence errors */
	FAILS(scif_fence_mark(e, 0, &mark), EINVAL);
	FAILS(scif_fence_mark(e, SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER, &mark), EINVAL);
	FAILS(scif_fence_mark(e, SCIF_FENCE_RAS_SELF, &mark), EINVAL);
	FAILS(scif_fence_mark(e, SCIF_FENCE_RAS_PEER, &mark), EINVAL);
	FAILS(scif_fence_signal(e, lo, 1, 0, 0, SCIF_SIGNAL_LOCAL), EINVAL);	/* no INIT flag */
	FAILS(scif_fence_signal(e, lo, 1, 0, 0,
				SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL),
	      EINVAL);
	FAILS(scif_fence_mark(e, SCIF_FENCE_INIT_SELF, (int *)8), EFAULT);
	CHECK(scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark) == 0);
	FAILS(scif_fence_wait(e, mark + 1000), EINVAL);	/* never handed out */
	FAILS(scif_fence_signal(e, lo, 1, 0, 0, SCIF_FENCE_INIT_SELF), EINVAL);
	FAILS(scif_fence_signal(e, lo + 2, 1, 0, 0, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL), EINVAL);
	FAILS(scif_fence_signal(e, 0, 0, W1 + 2, 1, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE), EINVAL);
	FAILS(scif_fence_signal(e, 0, 0, 0x30000, 1, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE), ENXIO);
	FAILS(scif_fence_signal(e, lro, 1, 0, 0, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL), ENXIO);
	FAILS(scif_fence_signal(e, 0, 0, 0x30000, 1, SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL), ENXIO);
	FAILS(scif_fence_signal(e, 0, 0, 0, 0, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL | 0x40), EINVAL);

	/* the server unregistered its windows: our RMAs to them fail with ENXIO */
	MUST(get64(e) == 8);
	FAILS(scif_readfrom(e, lo, 8, W1, 0), ENXIO);
	FAILS(scif_readfrom(e, lo, 8, o3, 0), ENXIO);
	CHECK(scif_writeto(e, lo, 8, W4, SCIF_RMA_SYNC) == 0);	/* W4 stays */
	/* our own: straddle, then whole */
	FAILS(scif_unregister(e, lo, PG), EINVAL);
	CHECK(scif_unregister(e, lo, 8 * PG) == 0 && scif_unregister(e, lro, PG) == 0);
	FAILS(scif_writeto(e, lo, 8, W4, 0), ENXIO);
	put64(e, 9);
	CHECK(scif_close(e) == 0);
}


/*
 * Registered memory mapped over again (the report behind bv_shadow's stale-memfd check): the
 * application replaces the mapping under a window it keeps registered (MAP_FIXED), and then
 * registers the new memory at the same address: a window (server) and the v* calls' own
 * registrations, temporary and cached (client). Those must reach the new pages, the ones the
 * application sees, not the old window's. What the old window reaches is not checked: SCIF
 * pins the old pages, and a provider that writes by DMA (no userfaultfd) reaches the new ones.
 */
#define REMAP_LEN	(160 * PG)	/* past SCIF_BOUNCE_SIZE / 2: v* calls register */
#define W_OLD		0x100000l
#define W_NEW		0x200000l

static uint8_t *remap(uint8_t *b, size_t len)
{
	void *p = mmap(b, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	return p == (void *)b ? b : NULL;
}

static void remap_server(uint16_t port)
{
	scif_epd_t l = listener(port, 1), n;
	uint8_t *b = pages(REMAP_LEN);
	int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;

	MUST(l >= 0 && b);
	n = accept_one(l, NULL);
	MUST(n >= 0);
	fill(b, REMAP_LEN, 71);
	CHECK(scif_register(n, b, REMAP_LEN, W_OLD, rw, SCIF_MAP_FIXED) == W_OLD);
	MUST(remap(b, REMAP_LEN));
	fill(b, REMAP_LEN, 72);
	CHECK(scif_register(n, b, REMAP_LEN, W_NEW, rw, SCIF_MAP_FIXED) == W_NEW);
	put64(n, 1);
	/* the client read the new window, then wrote it from its own remapped memory */
	MUST(get64(n) == 2);
	{
		size_t m = mismatch(b, REMAP_LEN, 74);

		if (m)
			fprintf(stderr, "remap: byte %zu of the new window differs\n", m - 1);
		CHECK(!m);
	}
	fill(b, REMAP_LEN, 75);
	put64(n, 3);
	MUST(get64(n) == 4);
	CHECK(scif_unregister(n, W_OLD, REMAP_LEN) == 0);
	CHECK(scif_unregister(n, W_NEW, REMAP_LEN) == 0);
	put64(n, 5);
	CHECK(scif_close(n) == 0 && scif_close(l) == 0);
	munmap(b, REMAP_LEN);
}

static void remap_client(uint16_t port)
{
	scif_epd_t e = connect_to(0, port);
	uint8_t *v = pages(REMAP_LEN), *c = pages(REMAP_LEN);
	off_t lc;

	MUST(e >= 0 && v && c);
	MUST(get64(e) == 1);
	CHECK(scif_vreadfrom(e, v, REMAP_LEN, W_NEW, SCIF_RMA_SYNC) == 0);
	CHECK(!mismatch(v, REMAP_LEN, 72));
	/* our own window, mapped over; then v* calls from the new memory at its address */
	fill(c, REMAP_LEN, 73);
	lc = scif_register(e, c, REMAP_LEN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	CHECK(lc != SCIF_REGISTER_FAILED);
	MUST(remap(c, REMAP_LEN));
	fill(c, REMAP_LEN, 74);
	CHECK(scif_vwriteto(e, c, REMAP_LEN, W_NEW, SCIF_RMA_SYNC) == 0);
	put64(e, 2);
	MUST(get64(e) == 3);
	CHECK(scif_vreadfrom(e, c, REMAP_LEN, W_NEW, SCIF_RMA_USECACHE | SCIF_RMA_SYNC) == 0);
	CHECK(!mismatch(c, REMAP_LEN, 75));
	if (lc != SCIF_REGISTER_FAILED)
		CHECK(scif_unregister(e, lc, REMAP_LEN) == 0);
	put64(e, 4);
	MUST(get64(e) == 5);
	CHECK(scif_close(e) == 0);
	munmap(v, REMAP_LEN);
	munmap(c, REMAP_LEN);
}

/* ----------------------------------------------------------------------------------------- */
/* Readiness: poll, select, epoll, scif_poll; non-blocking connect and accept                  */

static short revents(scif_epd_t e, short events, int ms)
{
	struct pollfd p = { .fd = e, .events = events };

	return poll(&p, 1, ms) == 1 ? p.revents : 0;
}

static void poll_server(uint16_t port)
{
	scif_epd_t l = listener(port, 2), n;
	struct scif_portID peer;
	struct scif_pollepd pe;
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0);
	char b[16], checked[80];

	case_mark(port, checked, sizeof(checked), "checked");
	unlink(checked);	/* a stale one */
	MUST(l >= 0 && ep >= 0);
	/* a listener: POLLIN once a request waits; accept without SYNC: EAGAIN before */
	FAILS(scif_accept(l, &peer, &n, 0), EAGAIN);
	CHECK(revents(l, POLLIN | POLLOUT, 0) == 0);
	mark_set(checked);	/* the client connects now */
	CHECK(revents(l, POLLIN, 10000) == POLLIN);
	unlink(checked);
	CHECK(scif_accept(l, &peer, &n, 0) == 0 && peer.node == 1);
	CHECK(revents(l, POLLIN, 0) == 0);
	/* connected: POLLOUT (ring space), no POLLIN until data comes */
	CHECK(revents(n, POLLIN | POLLOUT, 1000) == POLLOUT);
	sync_send(n);
	/* epoll and select see it too */
	CHECK(!epoll_ctl(ep, EPOLL_CTL_ADD, n, &ev));
	CHECK(epoll_wait(ep, &ev, 1, 10000) == 1 && (ev.events & EPOLLIN));
	{
		fd_set rd;
		struct timeval tv = { 5, 0 };

		FD_ZERO(&rd);
		FD_SET(n, &rd);
		CHECK(select(n + 1, &rd, NULL, NULL, &tv) == 1 && FD_ISSET(n, &rd));
	}
	CHECK(scif_recv(n, b, 5, 0) == 5 && !memcmp(b, "hello", 5));
	/* nothing left: the readiness goes away */
	CHECK(revents(n, POLLIN, 0) == 0);
	sync_send(n);	/* the next bytes come after this check, however late we are */
	/* scif_poll */
	pe.epd = n;
	pe.events = SCIF_POLLIN;
	CHECK(scif_poll(&pe, 1, 10000) == 1 && (pe.revents & SCIF_POLLIN));
	CHECK(scif_recv(n, b, 6, SCIF_RECV_BLOCK) == 6 && !memcmp(b, "again!", 6));
	pe.revents = 0;
	CHECK(scif_poll(&pe, 1, 50) == 0);
	sync_send(n);
	/* the client closes: POLLHUP */
	CHECK(revents(n, POLLIN, 10000) & POLLHUP);
	FAILS(scif_recv(n, b, 1, 0), ECONNRESET);
	close(ep);
	CHECK(scif_close(n) == 0 && scif_close(l) == 0);
}

static void poll_client(uint16_t port)
{
	scif_epd_t e = scif_open();
	struct scif_portID dst = { 0, port };
	char checked[80];
	int r;

	MUST(e >= 0);
	/* a non-blocking connect: EINPROGRESS, POLLOUT when it is done, the result next */
	CHECK(!fcntl(e, F_SETFL, fcntl(e, F_GETFL) | O_NONBLOCK));
	case_mark(port, checked, sizeof(checked), "checked");
	MUST(mark_wait(checked));	/* the server's first checks saw no request */
	FAILS(scif_connect(e, &dst), EINPROGRESS);
	FAILS(scif_listen(e, 1), EISCONN);	/* connecting */
	FAILS(scif_bind(e, 0), EISCONN);
	r = scif_connect(e, &dst);
	CHECK(r == -1 && (errno == EINPROGRESS || errno == EISCONN || r > 0));
	CHECK(revents(e, POLLOUT, 30000) & POLLOUT);
	r = scif_connect(e, &dst);
	CHECK(r >= SCIF_PORT_RSVD);
	FAILS(scif_connect(e, &dst), EISCONN);
	sync_recv(e);
	usleep(200000);	/* the server most likely sleeps in epoll_wait: its wake-up */
	CHECK(send_all(e, "hello", 5) == 5);
	sync_recv(e);	/* the server saw the readiness go */
	usleep(200000);	/* ... and most likely sleeps in scif_poll */
	CHECK(send_all(e, "again!", 6) == 6);
	sync_recv(e);
	CHECK(scif_close(e) == 0);
}

/*
 * The backlog: requests beyond it are refused; a listener closed with requests queued too.
 * The second connector starts once the server saw the first request queued (a mark), or a
 * loaded machine may deliver it first.
 */
static void backlog_server(uint16_t port)
{
	scif_epd_t l = listener(port, 1), n;
	char queued[80], refused[80];

	case_mark(port, queued, sizeof(queued), "queued");
	case_mark(port, refused, sizeof(refused), "refused");
	unlink(queued);	/* stale ones */
	unlink(refused);
	MUST(l >= 0);
	CHECK(revents(l, POLLIN, 30000) == POLLIN);
	mark_set(queued);
	CHECK(mark_wait(refused));	/* the second request came in meanwhile and was refused */
	n = accept_one(l, NULL);
	CHECK(n >= 0);
	sync_send(n);
	sync_recv(n);	/* a third request waits in the backlog now */
	CHECK(revents(l, POLLIN, 10000) == POLLIN);
	CHECK(scif_close(l) == 0);	/* refuses it */
	sync_recv(n);
	CHECK(scif_close(n) == 0);
	unlink(queued);
	unlink(refused);
}

static void backlog_client(uint16_t port)
{
	struct scif_portID dst = { 0, port };
	scif_epd_t a = scif_open(), c = scif_open();
	char up[80];
	int st;
	pid_t pid;

	MUST(a >= 0 && c >= 0);
	case_mark(port, up, sizeof(up), "listening");
	MUST(mark_wait_s(up, 100));
	pid = fork();
	if (pid == 0) {
		scif_epd_t b = scif_open();	/* a child's own endpoint */
		char queued[80], refused[80];
		bool ok;

		case_mark(port, queued, sizeof(queued), "queued");
		case_mark(port, refused, sizeof(refused), "refused");
		mark_wait(queued);
		errno = 0;
		ok = scif_connect(b, &dst) == -1 && errno == ECONNREFUSED;
		mark_set(refused);
		_exit(ok ? 0 : 1);
	}
	CHECK(scif_connect(a, &dst) > 0);	/* returns once the server accepted it */
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st));
	sync_recv(a);
	sync_send(a);
	FAILS(scif_connect(c, &dst), ECONNREFUSED);	/* queued, then the listener closed */
	sync_send(a);
	CHECK(scif_close(a) == 0 && scif_close(c) == 0);
}

/* ----------------------------------------------------------------------------------------- */
/* Interruptions: another thread's scif_close, a signal, the peer process killed               */

struct closer {
	scif_epd_t e;
	int ms;
};

static void *close_later(void *arg)
{
	struct closer *c = arg;

	usleep((useconds_t)c->ms * 1000);
	scif_close(c->e);
	return NULL;
}

static void intr_server(uint16_t port)
{
	scif_epd_t l = listener(port, 1), n;
	struct scif_portID peer;
	struct closer c;
	pthread_t t;
	char b[8];
	struct sigaction sa = { .sa_handler = on_signal };

	MUST(l >= 0);
	n = accept_one(l, NULL);
	MUST(n >= 0);
	/* a signal ends a blocking recv that got nothing: EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	{
		pid_t k = signal_later(300);

		FAILS(scif_recv(n, b, 8, SCIF_RECV_BLOCK), EINTR);
		waitpid(k, NULL, 0);
	}
	/* ... and one that got some: the count */
	sync_send(n);
	{
		pid_t k = signal_later(600);

		CHECK(scif_recv(n, b, 8, SCIF_RECV_BLOCK) == 3 && !memcmp(b, "abc", 3));
		waitpid(k, NULL, 0);
	}
	/* a signal ends a blocking accept (EINTR), and so does scif_close in another thread */
	{
		pid_t k = signal_later(300);

		FAILS(scif_accept(l, &peer, &n, SCIF_ACCEPT_SYNC), EINTR);
		waitpid(k, NULL, 0);
	}
	c.e = l;
	c.ms = 300;
	pthread_create(&t, NULL, close_later, &c);
	FAILS(scif_accept(l, &peer, &n, SCIF_ACCEPT_SYNC), EINTR);
	pthread_join(t, NULL);
	sync_send(n);
	/* the client is killed: our blocking recv ends with ECONNRESET, not a hang */
	FAILS(scif_recv(n, b, 8, SCIF_RECV_BLOCK), ECONNRESET);
	CHECK(revents(n, POLLIN, 0) & POLLHUP);
	FAILS(scif_send(n, b, 8, SCIF_SEND_BLOCK), ECONNRESET);
	CHECK(scif_close(n) == 0);
}

static void intr_client(uint16_t port)
{
	scif_epd_t e = connect_to(0, port);

	MUST(e >= 0);
	sync_recv(e);
	CHECK(send_all(e, "abc", 3) == 3);
	sync_recv(e);
	usleep(200000);
	kill(getpid(), SIGKILL);
}


/* ----------------------------------------------------------------------------------------- */
/* Several endpoints and processes at once                                                     */

#define MULTI_PROCS 3
#define MULTI_EPS 2

/* One connection's work, run in its own thread on both sides: echo and RMA both ways. */
struct conn_work {
	scif_epd_t e;
	int id;
	int bad;
	const char *step;	/* the first that failed, and its errno */
	int err;
};

/* Record the first failing step of a connection's work (errno: the thread's own). */
#define WORK_FAILED(w, what)                                                                       \
	do {                                                                                       \
		if (!(w)->bad) {                                                                   \
			(w)->step = (what);                                                        \
			(w)->err = errno;                                                          \
		}                                                                                  \
		(w)->bad = 1;                                                                      \
	} while (0)

static void work_check(const struct conn_work *w, const char *side)
{
	if (w->bad)
		fprintf(stderr, "multi %s conn %d (pid %d): %s failed (errno %d %s)\n", side, w->id,
			(int)getpid(), w->step, w->err, strerror(w->err));
	CHECK(!w->bad);
}

static void *serve_conn(void *arg)
{
	struct conn_work *w = arg;
	uint8_t *mem = pages(4 * PG);
	uint32_t seed;
	off_t off;

	if (!mem || recv_all(w->e, &seed, 4) != 4) {
		WORK_FAILED(w, "recv seed");
		return NULL;
	}
	fill(mem, 4 * PG, seed + 1);
	off = scif_register(w->e, mem, 4 * PG, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (off == SCIF_REGISTER_FAILED) {
		WORK_FAILED(w, "register");
		return NULL;
	}
	if (send_all(w->e, &off, 8) != 8) {
		WORK_FAILED(w, "send offset");
		return NULL;
	}
	for (int i = 0; i < 200; i++) {
		uint64_t v;

		if (recv_all(w->e, &v, 8) != 8 || v != seed * 1000ull + (uint64_t)i ||
		    send_all(w->e, &v, 8) != 8) {
			WORK_FAILED(w, "echo");
			return NULL;
		}
	}
	/* the client wrote our window's second half: check it, then let it go */
	if (recv_all(w->e, &seed, 4) != 4 || mismatch(mem + 2 * PG, 2 * PG, seed))
		WORK_FAILED(w, "recv done, window written");
	if (send_all(w->e, &seed, 4) != 4)
		WORK_FAILED(w, "send done");
	return NULL;
}

static void multi_server(uint16_t port)
{
	scif_epd_t l = listener(port, 16);
	struct conn_work w[MULTI_PROCS * MULTI_EPS];
	pthread_t t[MULTI_PROCS * MULTI_EPS];
	int n = MULTI_PROCS * MULTI_EPS;

	MUST(l >= 0);
	for (int i = 0; i < n; i++) {
		w[i].e = accept_one(l, NULL);
		w[i].id = i;
		w[i].bad = 0;
		MUST(w[i].e >= 0);
		pthread_create(&t[i], NULL, serve_conn, &w[i]);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		work_check(&w[i], "server");
		CHECK(scif_close(w[i].e) == 0);
	}
	CHECK(scif_close(l) == 0);
}

static void *client_conn(void *arg)
{
	struct conn_work *w = arg;
	uint32_t seed = (uint32_t)(getpid() * 10 + w->id);
	uint8_t *mem = pages(4 * PG);
	off_t roff, lo;

	if (!mem || send_all(w->e, &seed, 4) != 4) {
		WORK_FAILED(w, "send seed");
		return NULL;
	}
	if (recv_all(w->e, &roff, 8) != 8) {
		WORK_FAILED(w, "recv offset");
		return NULL;
	}
	lo = scif_register(w->e, mem, 4 * PG, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (lo == SCIF_REGISTER_FAILED) {
		WORK_FAILED(w, "register");
		return NULL;
	}
	for (int i = 0; i < 200; i++) {
		uint64_t v = seed * 1000ull + (uint64_t)i, r = 0;

		if (send_all(w->e, &v, 8) != 8 || recv_all(w->e, &r, 8) != 8 || r != v) {
			WORK_FAILED(w, "echo");
			return NULL;
		}
	}
	/* read the server's first half, write its second half */
	if (scif_readfrom(w->e, lo, 2 * PG, roff, SCIF_RMA_SYNC))
		WORK_FAILED(w, "readfrom");
	else if (mismatch(mem, 2 * PG, seed + 1))
		WORK_FAILED(w, "readfrom's bytes");
	fill(mem + 2 * PG, 2 * PG, seed + 2);
	if (scif_writeto(w->e, lo + 2 * PG, 2 * PG, roff + 2 * PG, SCIF_RMA_SYNC))
		WORK_FAILED(w, "writeto");
	seed += 2;
	if (send_all(w->e, &seed, 4) != 4 || recv_all(w->e, &seed, 4) != 4)
		WORK_FAILED(w, "done");
	return NULL;
}

static void multi_client(uint16_t port)
{
	pid_t kids[MULTI_PROCS];
	int st;

	for (int p = 0; p < MULTI_PROCS; p++) {
		kids[p] = fork();
		if (kids[p] == 0) {
			struct conn_work w[MULTI_EPS];
			pthread_t t[MULTI_EPS];

			for (int i = 0; i < MULTI_EPS; i++) {
				w[i].e = connect_to(0, port);
				w[i].id = i;
				w[i].bad = 0;
				MUST(w[i].e >= 0);
				pthread_create(&t[i], NULL, client_conn, &w[i]);
			}
			for (int i = 0; i < MULTI_EPS; i++) {
				pthread_join(t[i], NULL);
				work_check(&w[i], "client");
				CHECK(scif_close(w[i].e) == 0);
			}
			_exit(failures ? 1 : 0);
		}
	}
	for (int p = 0; p < MULTI_PROCS; p++)
		CHECK(waitpid(kids[p], &st, 0) == kids[p] && WIFEXITED(st) && !WEXITSTATUS(st));
}

/* ----------------------------------------------------------------------------------------- */
/* fork: the child of a process with connections                                              */

static void fork_server(uint16_t port)
{
	scif_epd_t l = listener(port, 2), n;
	uint64_t v;

	MUST(l >= 0);
	n = accept_one(l, NULL);
	MUST(n >= 0);
	CHECK(recv_all(n, &v, 8) == 8 && v == 42);	/* from the parent, after the child ran */
	CHECK(send_all(n, &v, 8) == 8);
	CHECK(scif_close(n) == 0 && scif_close(l) == 0);
}

static void fork_client(uint16_t port)
{
	scif_epd_t e = connect_to(0, port);
	uint64_t v = 42;
	int st;
	pid_t pid;

	MUST(e >= 0);
	pid = fork();
	if (pid == 0) {
		char b = 0;

		/* the parent's connection is not the child's: a clear error, not a crash */
		errno = 0;
		if (scif_send(e, &b, 1, 0) != -1 || errno != ENOTTY)
			_exit(2);
		/* closing it here leaves the parent's connection alone */
		if (scif_close(e) != 0)
			_exit(3);
		/* connections of its own it cannot make: librdmacm's state is the parent's */
		{
			struct scif_portID dst = { 0, port };
			scif_epd_t f = scif_open();

			errno = 0;
			if (f < 0 || scif_connect(f, &dst) != -1 || errno != ENODEV)
				_exit(5);
			scif_close(f);
		}
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st));
	/* the parent's endpoint still works */
	CHECK(send_all(e, &v, 8) == 8);
	v = 0;
	CHECK(recv_all(e, &v, 8) == 8 && v == 42);
	/* a child that execs does not even inherit the descriptor (FD_CLOEXEC) */
	pid = fork();
	if (pid == 0) {
		char fd[16];

		snprintf(fd, sizeof(fd), "%d", e);
		execl("/bin/sh", "sh", "-c", "test ! -e /proc/self/fd/$0", fd, (char *)NULL);
		_exit(4);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st));
	CHECK(scif_close(e) == 0);
}


/* An idle connection: a blocking recv waits quietly for seconds, then gets its byte. */
static void idle_server(uint16_t port)
{
	scif_epd_t l = listener(port, 1), n;

	MUST(l >= 0);
	n = accept_one(l, NULL);
	MUST(n >= 0);
	sleep(3);
	sync_send(n);
	CHECK(scif_close(n) == 0 && scif_close(l) == 0);
}

static void idle_client(uint16_t port)
{
	scif_epd_t e = connect_to(0, port);

	MUST(e >= 0);
	sync_recv(e);
	CHECK(scif_close(e) == 0);
}


/* ----------------------------------------------------------------------------------------- */
/* scif_mmap: the peer's window for loads and stores                                          */

static bool mmap_expected(void)
{
	const char *f = getenv("BV_SCIF_FABRIC");

	/* across nodes only an ntb link maps; to one's own node every device does */
	return (f && !strcmp(f, "ntb")) || getenv("SCIF_TEST_SELF");
}

static void mmap_server(uint16_t port)
{
	scif_epd_t l = listener(port, 1), n;
	uint8_t *w = pages(4 * PG), *ro = pages(PG);

	MUST(l >= 0 && w && ro);
	n = accept_one(l, NULL);
	MUST(n >= 0);
	fill(w, 4 * PG, 61);
	CHECK(scif_register(n, w, 2 * PG, W1, SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED) ==
	      W1);
	CHECK(scif_register(n, w + 2 * PG, 2 * PG, W1 + 2 * PG, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_FIXED) == W1 + 2 * PG);
	CHECK(scif_register(n, ro, PG, W4, SCIF_PROT_READ, SCIF_MAP_FIXED) == W4);
	sync_send(n);
	/* the client stored through its mapping: our pages show it */
	sync_recv(n);
	if (mmap_expected()) {
		CHECK(!mismatch(w + PG, PG, 62));
		/* unregistered while mapped: the pages stay the client's to use */
		CHECK(scif_unregister(n, W1, 2 * PG) == 0);
		sync_send(n);
		sync_recv(n);
		CHECK(!mismatch(w, PG, 63));
	}
	sync_send(n);
	sync_recv(n);
	CHECK(scif_close(n) == 0 && scif_close(l) == 0);
}

static void mmap_client(uint16_t port)
{
	scif_epd_t e = connect_to(0, port);
	uint8_t *m, *fixed = pages(2 * PG);

	MUST(e >= 0 && fixed);
	sync_recv(e);
	/* SCIF's checks come first */
	CHECK(scif_mmap(NULL, PG, SCIF_PROT_READ | SCIF_PROT_WRITE, 0, e, W4) == SCIF_MMAP_FAILED &&
	      errno == EACCES);
	CHECK(scif_mmap(NULL, PG, SCIF_PROT_READ, 0, e, 0x30000) == SCIF_MMAP_FAILED &&
	      errno == ENXIO);
	CHECK(scif_mmap(NULL, 8 * PG, SCIF_PROT_READ, 0, e, W1) == SCIF_MMAP_FAILED &&
	      errno == ENXIO);
	m = scif_mmap(NULL, 2 * PG, SCIF_PROT_READ | SCIF_PROT_WRITE, 0, e, W1);
	if (!mmap_expected()) {
		/* verbs cannot load from another node's memory: a clear error */
		CHECK(m == SCIF_MMAP_FAILED && errno == EOPNOTSUPP);
		sync_send(e);
		sync_recv(e);
		sync_send(e);
		CHECK(scif_close(e) == 0);
		return;
	}
	MUST(m != SCIF_MMAP_FAILED);
	/* loads see the peer's bytes, stores reach them */
	CHECK(!mismatch(m, 2 * PG, 61));
	fill(m + PG, PG, 62);
	/* SCIF_MAP_FIXED: exactly there; a range across two windows */
	CHECK(scif_mmap(fixed, 2 * PG, SCIF_PROT_READ, SCIF_MAP_FIXED, e, W1 + PG) == fixed);
	CHECK(!mismatch(fixed, PG, 62));
	{
		uint8_t ref[4 * PG];

		fill(ref, sizeof(ref), 61);
		CHECK(!memcmp(fixed + PG, ref + 2 * PG, PG));
	}
	CHECK(scif_munmap(fixed, 2 * PG) == 0);
	sync_send(e);
	/* after the owner unregistered: the mapping still reaches its pages */
	sync_recv(e);
	fill(m, PG, 63);
	sync_send(e);
	sync_recv(e);
	CHECK(scif_munmap(m, 2 * PG) == 0);
	FAILS(scif_munmap((uint8_t *)m + 1, PG), EINVAL);
	sync_send(e);
	CHECK(scif_close(e) == 0);
}

/* ----------------------------------------------------------------------------------------- */
/* Limits: out of descriptors, RLIMIT_MEMLOCK, an rdma_cm port taken by another program        */

/* RLIMIT_NOFILE down to the lowest free descriptor: the next one a call opens fails (EMFILE). */
static void fds_squeeze(struct rlimit *saved)
{
	struct rlimit r;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	MUST(fd >= 0 && !getrlimit(RLIMIT_NOFILE, saved));
	close(fd);
	r = *saved;
	r.rlim_cur = (rlim_t)fd;
	MUST(!setrlimit(RLIMIT_NOFILE, &r));
}

static void fds_restore(const struct rlimit *saved)
{
	MUST(!setrlimit(RLIMIT_NOFILE, saved));
}

/* CAP_IPC_LOCK in this thread's effective set, on or off; false if it cannot be had. */
static bool cap_ipc_lock(bool on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	uint32_t bit = 1u << (CAP_IPC_LOCK % 32);

	if (syscall(SYS_capget, &h, d))
		return false;
	if (on)
		d[CAP_IPC_LOCK / 32].effective |= bit;
	else
		d[CAP_IPC_LOCK / 32].effective &= ~bit;
	return !syscall(SYS_capset, &h, d);
}

#define LIM_CV_LEN	(160 * PG)	/* past SCIF_BOUNCE_SIZE / 2: a v* call registers it */

static void limits_server(uint16_t port)
{
	scif_epd_t l = listener(port, 4), n, n2, b = scif_open();
	int rw = SCIF_PROT_READ | SCIF_PROT_WRITE, r, err;
	struct scif_portID peer;
	struct rlimit saved;

	MUST(l >= 0 && b >= 0);
	/*
	 * scif_listen on an rdma_cm port that a program other than SCIF listens on: EADDRINUSE
	 * (SCIF port p is rdma_cm port p, docs/scif.md "Ports"), and the endpoint stays bound
	 */
	{
		struct rdma_event_channel *ch = rdma_create_event_channel();
		struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(port + 1) };
		struct rdma_cm_id *id = NULL;

		MUST(ch && !rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
		MUST(!rdma_bind_addr(id, (struct sockaddr *)&any) && !rdma_listen(id, 1));
		CHECK(scif_bind(b, (uint16_t)(port + 1)) == port + 1);
		FAILS(scif_listen(b, 1), EADDRINUSE);
		rdma_destroy_id(id);
		rdma_destroy_event_channel(ch);
		CHECK(scif_listen(b, 1) == 0);
		CHECK(scif_close(b) == 0);
	}
	/*
	 * scif_accept without a descriptor to give: EMFILE, as Intel's libscif (it opens the new
	 * endpoint's descriptor first), and the request stays queued for the next accept
	 */
	CHECK(revents(l, POLLIN, 30000) == POLLIN);
	fds_squeeze(&saved);
	errno = 0;
	r = scif_accept(l, &peer, &n, SCIF_ACCEPT_SYNC);
	err = errno;
	fds_restore(&saved);
	CHECK(r == -1 && err == EMFILE);
	n = accept_one(l, &peer);
	MUST(n >= 0);
	sync_send(n);
	/* the client's second connection, after its scif_connect without descriptors */
	n2 = accept_one(l, NULL);
	MUST(n2 >= 0);
	/*
	 * RLIMIT_MEMLOCK without CAP_IPC_LOCK: windows beyond it are ENOMEM, process-wide, as the
	 * Linux driver charges pinned pages; the v* calls' own registrations are not charged;
	 * unregistering gives the pages back
	 */
	{
		uint8_t *m = pages(40 * PG), *v = pages(LIM_CV_LEN);
		struct rlimit ml, ml_saved;
		off_t cv = (off_t)get64(n), a, b2, c, o;
		bool can_raise;

		MUST(m && v && !getrlimit(RLIMIT_MEMLOCK, &ml_saved));
		ml = ml_saved;
		ml.rlim_cur = 16 * PG;
		MUST(ml.rlim_max >= ml.rlim_cur && !setrlimit(RLIMIT_MEMLOCK, &ml));
		can_raise = cap_ipc_lock(false) && cap_ipc_lock(true) && cap_ipc_lock(false);
		a = scif_register(n, m, 8 * PG, W_OLD, rw, SCIF_MAP_FIXED);
		CHECK(a == W_OLD);
		CHECK(scif_register(n, m + 8 * PG, 16 * PG, 0, rw, 0) == SCIF_REGISTER_FAILED &&
		      errno == ENOMEM);
		/* the offset is checked before the limit, the limit before the pages */
		CHECK(scif_register(n, m + 8 * PG, 16 * PG, W_OLD, rw, SCIF_MAP_FIXED) ==
			      SCIF_REGISTER_FAILED && errno == EADDRINUSE);
		b2 = scif_register(n, m + 8 * PG, 8 * PG, 0, rw, 0);	/* 16 pages: the limit */
		CHECK(b2 != SCIF_REGISTER_FAILED);
		CHECK(scif_register(n2, m + 16 * PG, PG, 0, SCIF_PROT_READ, 0) ==
			      SCIF_REGISTER_FAILED && errno == ENOMEM);
		fill(v, LIM_CV_LEN, 83);
		CHECK(scif_vwriteto(n, v, LIM_CV_LEN, cv, SCIF_RMA_SYNC) == 0);
		CHECK(scif_unregister(n, a, 8 * PG) == 0);
		c = scif_register(n2, m + 16 * PG, 8 * PG, 0, rw, 0);
		CHECK(c != SCIF_REGISTER_FAILED);
		if (can_raise) {
			/* CAP_IPC_LOCK: no limit (the driver's capable(CAP_IPC_LOCK)) */
			MUST(cap_ipc_lock(true));
			o = scif_register(n, m + 24 * PG, 16 * PG, 0, rw, 0);
			CHECK(o != SCIF_REGISTER_FAILED && !scif_unregister(n, o, 16 * PG));
		} else {
			fprintf(stderr, "limits: CAP_IPC_LOCK cannot be raised here, not checked\n");
		}
		MUST(!setrlimit(RLIMIT_MEMLOCK, &ml_saved));
		/* a window registered at the limit is a real one: the client reads and writes it */
		fill(m + 8 * PG, 8 * PG, 81);
		put64(n, (uint64_t)b2);
		MUST(get64(n) == 1);
		CHECK(!mismatch(m + 8 * PG, 8 * PG, 82));
		if (c != SCIF_REGISTER_FAILED)
			CHECK(scif_unregister(n2, c, 8 * PG) == 0);
		CHECK(scif_unregister(n, b2, 8 * PG) == 0);
		put64(n, 2);
		munmap(m, 40 * PG);
		munmap(v, LIM_CV_LEN);
	}
	CHECK(scif_close(n2) == 0 && scif_close(n) == 0 && scif_close(l) == 0);
}

static void limits_client(uint16_t port)
{
	struct scif_portID dst = { 0, port };
	scif_epd_t e = connect_to(0, port), f = scif_open();
	uint8_t *loc = pages(8 * PG), *cvw = pages(LIM_CV_LEN);
	int rw = SCIF_PROT_READ | SCIF_PROT_WRITE, r, err;
	struct rlimit saved;
	off_t lo, cv, b2;

	MUST(e >= 0 && f >= 0 && loc && cvw);
	sync_recv(e);
	/*
	 * scif_connect without a descriptor for the connection (bound before: the port is not
	 * what is missing): ENOMEM; the endpoint may try again
	 */
	CHECK(scif_bind(f, 0) >= SCIF_PORT_RSVD);
	fds_squeeze(&saved);
	errno = 0;
	r = scif_connect(f, &dst);
	err = errno;
	fds_restore(&saved);
	CHECK(r == -1 && err == ENOMEM);
	CHECK(scif_connect(f, &dst) >= SCIF_PORT_RSVD);
	lo = scif_register(e, loc, 8 * PG, 0, rw, 0);
	cv = scif_register(e, cvw, LIM_CV_LEN, 0, rw, 0);
	MUST(lo != SCIF_REGISTER_FAILED && cv != SCIF_REGISTER_FAILED);
	put64(e, (uint64_t)cv);
	b2 = (off_t)get64(e);
	CHECK(!mismatch(cvw, LIM_CV_LEN, 83));	/* the server's vwriteto beyond its limit */
	CHECK(scif_readfrom(e, lo, 8 * PG, b2, SCIF_RMA_SYNC) == 0);
	CHECK(!mismatch(loc, 8 * PG, 81));
	fill(loc, 8 * PG, 82);
	CHECK(scif_writeto(e, lo, 8 * PG, b2, SCIF_RMA_SYNC) == 0);
	put64(e, 1);
	MUST(get64(e) == 2);
	CHECK(scif_close(f) == 0 && scif_close(e) == 0);
	munmap(loc, 8 * PG);
	munmap(cvw, LIM_CV_LEN);
}

/* ----------------------------------------------------------------------------------------- */
/* A node that dies: node 0's daemon killed under a connection (run only when named)          */

static bool conn_gone(int err)
{
	return err == ECONNRESET || err == ENODEV;
}

/* Every call that needs the connection fails as the connection's end said (err). */
static void all_gone(scif_epd_t e, int err, off_t win, uint8_t *pg)
{
	int mark;

#define GONE(call) CHECK((errno = 0, (call) == -1 && errno == err))
	CHECK(scif_register(e, pg, PG, 0, SCIF_PROT_READ, 0) == SCIF_REGISTER_FAILED &&
	      errno == err);
	GONE(scif_unregister(e, win, PG));
	GONE(scif_readfrom(e, win, PG, 0, 0));
	GONE(scif_writeto(e, win, PG, 0, SCIF_RMA_SYNC));
	GONE(scif_vreadfrom(e, pg, PG, 0, 0));
	GONE(scif_vwriteto(e, pg, PG, 0, 0));
	GONE(scif_fence_mark(e, SCIF_FENCE_INIT_PEER, &mark));
	GONE(scif_fence_wait(e, 0));
	GONE(scif_fence_signal(e, win, 1, 0, 1, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL));
	CHECK(scif_mmap(NULL, PG, SCIF_PROT_READ, 0, e, 0) == SCIF_MMAP_FAILED && errno == err);
	GONE(scif_send(e, pg, 8, 0));
	GONE(scif_recv(e, pg, 8, 0));
#undef GONE
}

static void death_server(uint16_t port)
{
	scif_epd_t l = listener(port, 1), n;
	uint8_t *pg = pages(PG);
	off_t win;
	char b[8];
	int err;

	MUST(l >= 0 && pg);
	n = accept_one(l, NULL);
	MUST(n >= 0);
	win = scif_register(n, pg, PG, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	MUST(win != SCIF_REGISTER_FAILED);
	sync_send(n);
	/* our own device goes away under a blocked recv: it ends, with an error */
	errno = 0;
	CHECK(scif_recv(n, b, 8, SCIF_RECV_BLOCK) == -1 && conn_gone(errno));
	err = errno;
	CHECK(revents(n, POLLIN, 1000) & POLLHUP);
	errno = 0;
	CHECK(scif_send(n, b, 8, SCIF_SEND_BLOCK) == -1 && errno == err);
	all_gone(n, err, win, pg);
	CHECK(scif_close(n) == 0);
	scif_close(l);
}

/*
 * How the client takes the connection's node away: SCIF_TEST_VICTIM, the pid file of node 0's
 * daemon, which it kills (nodedeath); SCIF_TEST_CABLE, "bvctl ... model DEV cable", which it
 * runs with pull (cable: the port goes down, and bridgeverbs' CM disconnects its connections
 * at once, docs/rdmacm.md "Port down"; the script plugs it back). Either way both ends'
 * blocked calls end and every later call fails alike - ECONNRESET, as Intel's driver marks a
 * lost node's endpoints disconnected (scif_invalidate_ep), or ENODEV.
 */
static void take_node_away(void)
{
	const char *victim = getenv("SCIF_TEST_VICTIM"), *cable = getenv("SCIF_TEST_CABLE");
	char cmd[512];
	long pid = 0;
	FILE *f;

	if (cable) {
		snprintf(cmd, sizeof(cmd), "%s pull", cable);
		MUST(system(cmd) == 0);
		return;
	}
	MUST(victim && (f = fopen(victim, "r")));
	MUST(fscanf(f, "%ld", &pid) == 1 && pid > 1);
	fclose(f);
	MUST(kill((pid_t)pid, SIGKILL) == 0);
}

static void death_client(uint16_t port)
{
	scif_epd_t e = connect_to(0, port);
	struct timespec t0, t1;
	uint8_t *loc = pages(PG);
	off_t win;
	char b[8];
	int err;

	MUST(e >= 0 && loc);
	win = scif_register(e, loc, PG, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	MUST(win != SCIF_REGISTER_FAILED);
	sync_recv(e);
	take_node_away();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	CHECK(scif_recv(e, b, 8, SCIF_RECV_BLOCK) == -1 && conn_gone(errno));
	err = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* the transport's retries, not a hang: well within the case's alarm */
	CHECK(t1.tv_sec - t0.tv_sec < 60);
	fprintf(stderr, "%s: recv ended after %.1f s (%s)\n", case_name,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		strerror(err));
	CHECK(revents(e, POLLIN, 1000) & POLLHUP);
	{
		uint8_t *pg = pages(PG);

		MUST(pg);
		errno = 0;
		CHECK(scif_send(e, b, 8, 0) == -1 && errno == err);
		all_gone(e, err, win, pg);
	}
	CHECK(scif_close(e) == 0);
	if (getenv("SCIF_TEST_VICTIM") && getenv("BV_SCIF_FABRIC") &&
	    !strcmp(getenv("BV_SCIF_FABRIC"), "ntb")) {
		/*
		 * a node whose daemon is gone, and with it the ntb link, cannot be reached:
		 * ENODEV, at once (over cx4 the CM's retries take over a minute to say so)
		 */
		struct scif_portID dst = { 0, port };
		scif_epd_t f = scif_open();

		MUST(f >= 0);
		FAILS(scif_connect(f, &dst), ENODEV);
		CHECK(scif_close(f) == 0);
	}
}

/*
 * A listener that never accepts: scif_connect gives ECONNREFUSED after SCIF's 30 s
 * (SCIF_NODE_ALIVE_TIMEOUT) and the endpoint may connect again; once the listener accepts,
 * the connection carries bytes.
 */
static void grant_server(uint16_t port)
{
	scif_epd_t l = listener(port, 2), n;
	char gave_up[80], again[80];
	uint64_t v;
	int i;

	case_mark(port, gave_up, sizeof(gave_up), "gave_up");
	case_mark(port, again, sizeof(again), "again");
	unlink(gave_up);
	unlink(again);
	MUST(l >= 0);
	CHECK(revents(l, POLLIN, 30000) == POLLIN);	/* queued, not accepted */
	CHECK(mark_wait_s(gave_up, 60));
	/* the request the connector gave up on leaves the queue */
	for (i = 0; i < 100 && revents(l, POLLIN, 0); i++)
		usleep(100000);
	CHECK(i < 100);
	mark_set(again);
	n = accept_one(l, NULL);	/* the retry */
	MUST(n >= 0);
	CHECK(recv_all(n, &v, 8) == 8 && v == 77);
	CHECK(scif_close(n) == 0 && scif_close(l) == 0);
	unlink(gave_up);
	unlink(again);
}

static void grant_client(uint16_t port)
{
	struct scif_portID dst = { 0, port };
	scif_epd_t e = scif_open();
	struct timespec t0, t1;
	char up[80], gave_up[80], again[80];
	uint64_t v = 77;
	double waited;

	MUST(e >= 0);
	case_mark(port, up, sizeof(up), "listening");
	case_mark(port, gave_up, sizeof(gave_up), "gave_up");
	MUST(mark_wait_s(up, 100));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	FAILS(scif_connect(e, &dst), ECONNREFUSED);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "grant: refused after %.1f s\n", waited);
	CHECK(waited >= 29.0 && waited < 60.0);
	mark_set(gave_up);
	case_mark(port, again, sizeof(again), "again");
	MUST(mark_wait_s(again, 60));
	CHECK(scif_connect(e, &dst) >= SCIF_PORT_RSVD);	/* the same endpoint, again */
	CHECK(send_all(e, &v, 8) == 8);
	CHECK(scif_close(e) == 0);
}

static const struct tcase cases[] = {
	{ "connect", connect_server, connect_client, 1 },
	{ "refused", NULL, refused_client, 1 },
	{ "messages", msg_server, msg_client, 1 },
	{ "rma", rma_server, rma_client, 1 },
	{ "remap", remap_server, remap_client, 1 },
	{ "poll", poll_server, poll_client, 1 },
	{ "backlog", backlog_server, backlog_client, 1 },
	{ "interrupt", intr_server, intr_client, 1 },
	{ "multi", multi_server, multi_client, 1 },
	{ "fork", fork_server, fork_client, 1 },
	{ "idle", idle_server, idle_client, 1 },
	{ "mmap", mmap_server, mmap_client, 1 },
	{ "limits", limits_server, limits_client, 1 },
	/* a connection to one's own node: two processes of node 0 */
	{ "self", msg_server, msg_client, 0 },
	{ "self_rma", rma_server, rma_client, 0 },
	{ "self_mmap", mmap_server, mmap_client, 0 },
	/* kill a daemon, pull a cable, wait 30 s: only when named */
	{ "nodedeath", death_server, death_client, 1 },
	{ "cable", death_server, death_client, 1 },
	{ "granttimeout", grant_server, grant_client, 1 },
};


static int run_case(const struct tcase *t, uint16_t port)
{
	pid_t s = -1, c;
	int st, bad = 0;
	char up[80];

	if (role) {
		/*
		 * One side, in this process's node (BV_SCIF_NODE, bvctl run --scif-node), in a
		 * child of its own: a process that made connections forks no child that makes
		 * its own (librdmacm's state is the parent's).
		 */
		case_name = t->name;
		if (role == 1 && !t->server)
			return 0;
		case_mark(port, up, sizeof(up), "listening");
		if (role == 1)
			unlink(up);	/* a stale one */
		c = fork();
		if (c == 0) {
			alarm(120);
			if (role == 2)
				sleep(1);	/* the other host's listener first */
			(role == 1 ? t->server : t->client)(port);
			_exit(failures ? 1 : 0);
		}
		bad = waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st);
		if (role == 1)
			unlink(up);
		printf("%s %s\n", bad ? "FAIL" : "ok", t->name);
		return bad;
	}

	case_name = t->name;
	case_mark(port, up, sizeof(up), "listening");
	unlink(up);	/* a stale one */
	if (t->client_node == 0)
		setenv("SCIF_TEST_SELF", "1", 1);
	else
		unsetenv("SCIF_TEST_SELF");
	if (t->server) {
		s = fork();
		if (s == 0) {
			alarm(120);
			set_node(0);
			t->server(port);
			_exit(failures ? 1 : 0);
		}
		usleep(200000);	/* the listener first */
	}
	c = fork();
	if (c == 0) {
		alarm(120);
		set_node(t->client_node);
		t->client(port);
		_exit(failures ? 1 : 0);
	}
	if (waitpid(c, &st, 0) != c || (t->client != intr_client && (!WIFEXITED(st) || WEXITSTATUS(st)))) {
		fprintf(stderr, "FAIL [%s] client: %s %d\n", t->name,
			WIFSIGNALED(st) ? "signal" : "exit",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		bad = 1;
		if (s > 0)
			kill(s, SIGKILL);
	}
	if (s > 0 && (waitpid(s, &st, 0) != s || !WIFEXITED(st) || WEXITSTATUS(st))) {
		fprintf(stderr, "FAIL [%s] server: %s %d\n", t->name,
			WIFSIGNALED(st) ? "signal" : "exit",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		bad = 1;
	}
	unlink(up);
	printf("%s %s\n", bad ? "FAIL" : "ok", t->name);
	fflush(stdout);
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	port_base = (uint16_t)(2000 + (getpid() % 500) * 20);
	/* --server / --client PORT: one side only (the other runs elsewhere, same PORT) */
	if (argc > 2 && (!strcmp(argv[1], "--server") || !strcmp(argv[1], "--client"))) {
		role = argv[1][2] == 's' ? 1 : 2;
		port_base = (uint16_t)atoi(argv[2]);
		argc -= 2;
		argv += 2;
	}
	for (int a = 1; a < argc; a++) {
		bool known = false;

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			known |= !strcmp(argv[a], cases[i].name);
		if (!known) {
			fprintf(stderr, "scif_test: no case '%s'\n", argv[a]);
			return 2;
		}
	}
	if (marks_open())
		return 2;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool want = argc < 2 && strcmp(cases[i].name, "nodedeath") &&
			    strcmp(cases[i].name, "cable") && strcmp(cases[i].name, "granttimeout");

		for (int a = 1; a < argc; a++)
			want |= !strcmp(argv[a], cases[i].name);
		if (want)
			bad += run_case(&cases[i], (uint16_t)(port_base + 2 * i));
	}
	marks_close();
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
