// SPDX-License-Identifier: MIT
/*
 * bvctl demo: the devices come up, ibv_devices lists them, then, on each kind, unmodified
 * programs run between two devices: perftest's ib_write_bw (RDMA WRITEs through a provider,
 * its daemon and the device) and rdmacm-utils' rping -V (rdma_cm through the CM library and
 * the daemons' connection manager, every ping's data verified), on the first two cx4 ports and
 * the two ends of the first ntb link; last, a SCIF program (docs/scif-samples/scif_hello.c,
 * built against libscif) between SCIF nodes 0 and 1, over each kind. Servers and clients meet
 * over the loopback side channel (TCP for perftest) or the devices' own addresses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bvctl.h"
#include "bv_proto.h"

/* A program that is not installed: its package, so the demo can say what to install. */
struct demo_prog {
	const char *name, *package;
};

/*
 * Start argv with bvctl run's environment (as SCIF node `node` when >= 0), its stdout to `out`
 * (-1: /dev/null, STDOUT_FILENO: ours, else that descriptor). Returns its pid, or -1.
 */
static pid_t demo_spawn(const struct bvctl *b, char *const argv[], int node, int out)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (out < 0)
		out = open("/dev/null", O_WRONLY);
	if (out >= 0 && out != STDOUT_FILENO)
		dup2(out, STDOUT_FILENO);
	if (node >= 0) {
		char n[16];

		snprintf(n, sizeof(n), "%d", node);
		setenv("BV_SCIF_NODE", n, 1);
	}
	bvctl_set_env(b);
	bvctl_sys_view();
	execvp(argv[0], argv);
	fprintf(stderr, "bvctl demo: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Its exit status (128 + signal for a signal), or -1. */
static int demo_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int demo_run(const struct bvctl *b, char *const argv[], int node)
{
	pid_t pid = demo_spawn(b, argv, node, STDOUT_FILENO);

	return pid < 0 ? -1 : demo_wait(pid);
}

/* The server could not be started, or gave up: stop it and reap it. */
static void demo_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	demo_wait(pid);
}

/* Whether prog is on PATH; if not, says which package has it. */
static bool demo_have(const struct demo_prog *p)
{
	const char *path = getenv("PATH");
	char dir[BV_PATH_MAX], file[BV_PATH_MAX + 64];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
		snprintf(file, sizeof(file), "%s/%s", *dir ? dir : ".", p->name);
		if (!access(file, X_OK))
			return true;
		path += n + (path[n] == ':');
	}
	printf("# %s is not installed (package %s): skipped\n", p->name, p->package);
	return false;
}

/* Until a TCP socket listens on port (this network namespace), at most ms milliseconds. */
static bool wait_tcp_listen(unsigned int port, int ms)
{
	char pat[32], line[256];

	snprintf(pat, sizeof(pat), ":%04X 00000000:0000 0A", port);
	for (; ms > 0; ms -= 50) {
		FILE *f = fopen("/proc/net/tcp", "re");
		bool found = false;

		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, pat) != NULL;
		if (f)
			fclose(f);
		if (found)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

/* Until an rdma_cm listener (RDMA_PS_TCP) on port shows in a daemon's status, at most ms. */
static bool wait_cm_listen(const struct bvctl *b, unsigned int port, int ms)
{
	static char buf[BV_MSG_MAX];
	char pat[48];

	snprintf(pat, sizeof(pat), "cm listen: ps 0x0106 port %u\n", port);
	for (; ms > 0; ms -= 50) {
		for (int i = 0; i < b->cfg.ndev; i++)
			if (!bvctl_daemon_status(&b->cfg.dev[i], buf, sizeof(buf)) &&
			    strstr(buf, pat))
				return true;
		usleep(50 * 1000);
	}
	return false;
}

/* ib_write_bw between two devices: the server on srv, the client on cli, over TCP port. */
static int demo_write_bw(const struct bvctl *b, const char *srv, const char *cli, const char *port)
{
	char *const server[] = {"ib_write_bw", "-d", (char *)srv, "-x",		"3",
				"-D",	       "2",  "-p",	  (char *)port, NULL};
	char *const client[] = {"ib_write_bw", "-d", (char *)cli,  "-x",	"3", "-D",
				"2",	       "-p", (char *)port, "127.0.0.1", NULL};
	pid_t pid;
	int ret;

	printf("$ bvctl run -- ib_write_bw -d %s -x 3 -D 2 -p %s &\n"
	       "$ bvctl run -- ib_write_bw -d %s -x 3 -D 2 -p %s 127.0.0.1\n",
	       srv, port, cli, port);
	fflush(stdout);
	/* the client prints the same table: show it once */
	pid = demo_spawn(b, server, -1, -1);
	if (pid < 0)
		return 1;
	if (!wait_tcp_listen((unsigned int)atoi(port), 20000)) {
		fprintf(stderr, "bvctl demo: the ib_write_bw server on %s did not start\n", srv);
		demo_stop(pid);
		return 1;
	}
	ret = demo_run(b, client, -1);
	if (ret)
		kill(pid, SIGTERM);
	return demo_wait(pid) || ret ? 1 : 0;
}

/* rping -V between the devices' addresses: the server on srv, the client from cli. */
static int demo_rping(const struct bvctl *b, const struct bv_dev_conf *srv,
		      const struct bv_dev_conf *cli, const char *port)
{
	char sa[INET_ADDRSTRLEN], ca[INET_ADDRSTRLEN];
	char *const server[] = {"rping", "-s", "-a", sa, "-p", (char *)port, "-C", "4", "-V", NULL};
	char *const client[] = {"rping",      "-c", "-a", sa,	"-I", ca,  "-p",
				(char *)port, "-C", "4",  "-V", "-v", NULL};
	pid_t pid;
	int ret;

	inet_ntop(AF_INET, &srv->ip, sa, sizeof(sa));
	inet_ntop(AF_INET, &cli->ip, ca, sizeof(ca));
	printf("$ bvctl run -- rping -s -a %s -p %s -C 4 -V &        # %s\n"
	       "$ bvctl run -- rping -c -a %s -I %s -p %s -C 4 -V -v  # %s\n",
	       sa, port, srv->name, sa, ca, port, cli->name);
	fflush(stdout);
	pid = demo_spawn(b, server, -1, STDOUT_FILENO);
	if (pid < 0)
		return 1;
	if (!wait_cm_listen(b, (unsigned int)atoi(port), 20000)) {
		fprintf(stderr, "bvctl demo: the rping server on %s did not listen\n", srv->name);
		demo_stop(pid);
		return 1;
	}
	ret = demo_run(b, client, -1);
	if (ret)
		kill(pid, SIGTERM);
	return demo_wait(pid) || ret ? 1 : 0;
}

/* The listener's output, read line by line from its pipe without stdio's buffer. */
struct demo_lines {
	int fd;
	size_t len;
	char buf[1024];
};

/*
 * Copy the listener's lines to our output until one contains `until` (NULL: until its end) or
 * ms pass without a line. True when `until` was seen (with NULL: when the end came).
 */
static bool demo_relay(struct demo_lines *l, const char *until, int ms)
{
	struct pollfd p = {.fd = l->fd, .events = POLLIN};

	for (;;) {
		char *nl = memchr(l->buf, '\n', l->len);
		ssize_t n;

		if (nl) {
			size_t k = (size_t)(nl - l->buf) + 1;
			bool seen;

			*nl = 0;
			printf("  [node 0] %s\n", l->buf);
			fflush(stdout);
			seen = until && strstr(l->buf, until);
			memmove(l->buf, l->buf + k, l->len - k);
			l->len -= k;
			if (seen)
				return true;
			continue;
		}
		if (l->len == sizeof(l->buf))
			l->len = 0; /* a line longer than the buffer: not ours, dropped */
		if (poll(&p, 1, ms) <= 0)
			return false;
		n = read(l->fd, l->buf + l->len, sizeof(l->buf) - l->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return until == NULL;
		l->len += (size_t)n;
	}
}

/* scif_hello: the listener as SCIF node 0, the connector as node 1, over one device kind. */
static int demo_scif(const struct bvctl *b, const char *prog, const char *fabric, const char *port)
{
	char text[64];
	char *const listener[] = {(char *)prog, "listen", (char *)port, NULL};
	char *const connector[] = {(char *)prog, "connect", "0", (char *)port, text, NULL};
	struct demo_lines out = {.len = 0};
	int fds[2], ret = 1;
	pid_t pid;

	snprintf(text, sizeof(text), "hello over %s", fabric);
	printf("$ BV_SCIF_FABRIC=%s bvctl run --scif-node 0 -- scif_hello listen %s &\n"
	       "$ BV_SCIF_FABRIC=%s bvctl run --scif-node 1 -- scif_hello connect 0 %s '%s'\n",
	       fabric, port, fabric, port, text);
	fflush(stdout);
	if (pipe2(fds, O_CLOEXEC))
		return 1;
	setenv("BV_SCIF_FABRIC", fabric, 1);
	pid = demo_spawn(b, listener, 0, fds[1]);
	close(fds[1]);
	out.fd = fds[0];
	if (pid < 0) {
		close(fds[0]);
		unsetenv("BV_SCIF_FABRIC");
		return 1;
	}
	if (!demo_relay(&out, "listening on port", 20000)) {
		fprintf(stderr, "bvctl demo: the SCIF listener did not listen\n");
		kill(pid, SIGTERM);
	} else {
		ret = demo_run(b, connector, 1) ? 1 : 0;
		if (!demo_relay(&out, NULL, 20000))
			kill(pid, SIGTERM);
	}
	close(fds[0]);
	unsetenv("BV_SCIF_FABRIC");
	return demo_wait(pid) || ret ? 1 : 0;
}

/* The demo's SCIF program: next to bvctl in a build tree, in the private directory installed. */
static bool scif_prog(const struct bvctl *b, char *path, size_t len)
{
	snprintf(path, len, "%s/scif_hello", b->installed ? b->libdir : b->daemondir);
	if (!access(path, X_OK))
		return true;
	printf("# no %s (the bridgeverbs package installs it): skipped\n", path);
	return false;
}

int bvctl_demo(struct bvctl *b)
{
	static const struct demo_prog perftest = {"ib_write_bw", "perftest"},
				      rdmacm = {"rping", "rdmacm-utils"};
	char *const devices[] = {"ibv_devices", NULL};
	const struct bv_dev_conf *cx4[2] = {NULL, NULL}, *ntb[2] = {NULL, NULL};
	char scif[BV_PATH_MAX + 16];
	int ret, ncx4 = 0;

	ret = bvctl_up(b);
	if (ret)
		return ret;
	for (int i = 0; i < b->cfg.ndev; i++) {
		const struct bv_dev_conf *d = &b->cfg.dev[i];

		if (!strcmp(d->kind, "cx4") && ncx4 < 2)
			cx4[ncx4++] = d;
		if (strcmp(d->kind, "ntb") || ntb[0] || d->side != 0)
			continue;
		for (int k = 0; k < b->cfg.ndev; k++) {
			const struct bv_dev_conf *p = &b->cfg.dev[k];

			if (!strcmp(p->kind, "ntb") && !strcmp(p->link, d->link) && p->side == 1) {
				ntb[0] = d;
				ntb[1] = p;
			}
		}
	}
	printf("\n$ bvctl run -- ibv_devices\n");
	fflush(stdout);
	ret = demo_run(b, devices, -1) ? 1 : 0;

	printf("\n# cx4: two ConnectX-4 ports, RoCE v2 between the device models\n");
	if (!cx4[1]) {
		printf("# fewer than two cx4 devices configured, nothing to show\n");
	} else {
		if (demo_have(&perftest))
			ret |= demo_write_bw(b, cx4[0]->name, cx4[1]->name, "18599");
		if (demo_have(&rdmacm))
			ret |= demo_rping(b, cx4[0], cx4[1], "18597");
	}
	printf("\n# ntb: the two ends of an NTB link, RDMA through its windows\n");
	if (!ntb[1]) {
		printf("# no NTB link with both ends configured, nothing to show\n");
	} else {
		if (demo_have(&perftest))
			ret |= demo_write_bw(b, ntb[0]->name, ntb[1]->name, "18600");
		if (demo_have(&rdmacm))
			ret |= demo_rping(b, ntb[0], ntb[1], "18598");
	}
	printf("\n# SCIF: a SCIF program (docs/scif-samples/scif_hello.c) between nodes 0 and 1\n");
	if (scif_prog(b, scif, sizeof(scif))) {
		if (ntb[1])
			ret |= demo_scif(b, scif, "ntb", "4101");
		if (cx4[1])
			ret |= demo_scif(b, scif, "cx4", "4102");
	}
	printf("\n%s\n", ret ? "bvctl demo: something failed (above)" : "bvctl demo: done");
	return ret ? 1 : 0;
}
