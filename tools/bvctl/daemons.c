// SPDX-License-Identifier: MIT
/* Starting, stopping and asking the device daemons (cx4d, ntbd), one per device. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bv_install.h"
#include "bv_msg.h"
#include "bvctl.h"

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A pid that exists and is not a zombie (a daemon of another user answers EPERM). */
static bool pid_alive(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	if (pid <= 0 || (kill(pid, 0) && errno != EPERM))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return false;
	return p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

pid_t bvctl_daemon_pid(const struct bv_dev_conf *dev)
{
	char path[BV_PATH_MAX];
	FILE *f;
	int pid = 0;

	if (bv_run_path(path, sizeof(path), dev->name, ".pid") || !(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid_alive(pid) ? pid : 0;
}

/* Connect as an admin client; returns the socket or -errno. */
static int admin_connect(const struct bv_dev_conf *dev)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct bv_hello_req req = { .role = BV_ROLE_ADMIN, .pid = getpid(), .comm = "bvctl" };
	struct bv_hello_rsp rsp;
	struct bv_call call = { .op = BV_OP_HELLO, .req = &req, .req_len = sizeof(req),
				.rsp = &rsp, .rsp_max = sizeof(rsp) };
	uint32_t seq = 0;
	int s, ret;

	if (bv_run_path(sa.sun_path, sizeof(sa.sun_path), dev->name, ".sock"))
		return -ENAMETOOLONG;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(s);
		return ret;
	}
	ret = bv_msg_call(s, &seq, &call);
	if (ret) {
		close(s);
		return ret < 0 ? ret : -ret;
	}
	return s;
}

int bvctl_daemon_status(const struct bv_dev_conf *dev, char *buf, size_t len)
{
	struct bv_call call = { .op = BV_OP_STATUS, .rsp = buf, .rsp_max = len - 1 };
	uint32_t seq = 1;
	int s = admin_connect(dev), ret;

	if (s < 0)
		return s;
	ret = bv_msg_call(s, &seq, &call);
	close(s);
	if (ret)
		return ret < 0 ? ret : -ret;
	buf[call.rsp_len < len ? call.rsp_len : len - 1] = 0;
	return 0;
}

/*
 * Wait until port 1 of dev is ACTIVE (an ntb port is once both daemons finished the link
 * bring-up, a few ms after the second one starts). Returns 0, or -ETIMEDOUT.
 */
int bvctl_wait_port_active(const struct bv_dev_conf *dev, int timeout_ms)
{
	for (int t = 0; t <= timeout_ms; t += 10) {
		struct bv_query_port_req req = { .port_num = 1 };
		struct bv_port_attr attr = { 0 };
		struct bv_call call = { .op = BV_OP_QUERY_PORT, .req = &req, .req_len = sizeof(req),
					.rsp = &attr, .rsp_max = sizeof(attr) };
		uint32_t seq = 1;
		int s = admin_connect(dev);

		if (s >= 0) {
			int ret = bv_msg_call(s, &seq, &call);

			close(s);
			if (!ret && call.rsp_len == sizeof(attr) && attr.state == 4 /* ACTIVE */)
				return 0;
		}
		sleep_ms(10);
	}
	return -ETIMEDOUT;
}

static void show_log_tail(const struct bv_dev_conf *dev)
{
	char path[BV_PATH_MAX], line[512];
	long lines = 0, skip;
	FILE *f;

	if (bv_run_path(path, sizeof(path), dev->name, ".log") || !(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f))
		lines++;
	rewind(f);
	skip = lines > 10 ? lines - 10 : 0;
	fprintf(stderr, "--- last lines of %s ---\n", path);
	while (fgets(line, sizeof(line), f))
		if (skip-- <= 0)
			fputs(line, stderr);
	fclose(f);
}

/*
 * Exec the daemon, under $BV_DAEMON_WRAPPER if set (words split on spaces, e.g.
 * "valgrind -q --error-exitcode=99"): the tests run the daemons under valgrind that way.
 */
static void exec_daemon(const char *exe, const char *daemon, const char *name)
{
	const char *wrapper = getenv("BV_DAEMON_WRAPPER");
	char *argv[32], *words, *save = NULL;
	int n = 0;

	if (wrapper && *wrapper && (words = strdup(wrapper))) {
		for (char *w = strtok_r(words, " ", &save); w && n < 24;
		     w = strtok_r(NULL, " ", &save))
			argv[n++] = w;
		argv[n++] = (char *)exe;
	} else {
		argv[n++] = (char *)daemon;
	}
	argv[n++] = "--device";
	argv[n++] = (char *)name;
	argv[n++] = "--rundir";
	argv[n++] = (char *)bv_rundir();
	argv[n] = NULL;
	if (wrapper && *wrapper)
		execvp(argv[0], argv);
	else
		execv(exe, argv);
}

/*
 * Started by root, the daemons run as BV_DAEMON_USER (cmake -DBV_DAEMON_USER=; the Debian
 * package's "bridgeverbs"), as their systemd units run them: in that user's group and the
 * device's socket_group, without privileges, but cx4d keeps CAP_SYS_PTRACE: the model's DMA
 * reaches registered memory it could not share by pid and address (process_vm_readv/writev),
 * as the kernel's umem pinning reaches any process. Returns 0, or -1 with a message.
 */
static int drop_privileges(const struct bv_dev_conf *dev)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2] = { { 0 } };
	const char *group = bv_conf_get(dev, "socket_group", NULL);
	bool ptrace = !strcmp(dev->kind, "cx4");
	const struct passwd *pw;
	gid_t groups[2];
	int ngroups = 0;

	if (geteuid() != 0 || !*BV_DAEMON_USER)
		return 0;
	if (!(pw = getpwnam(BV_DAEMON_USER))) {
		fprintf(stderr, "bvctl: no user %s to run %sd as (the package creates it)\n",
			BV_DAEMON_USER, dev->kind);
		return -1;
	}
	groups[ngroups++] = pw->pw_gid;
	if (group) {
		const struct group *gr = getgrnam(group);

		if (!gr) {
			fprintf(stderr, "bvctl: %s: socket_group %s does not exist\n", dev->name,
				group);
			return -1;
		}
		groups[ngroups++] = gr->gr_gid;
	}
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(ngroups, groups) ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid))
		goto fail;
	if (ptrace)
		caps[0].effective = caps[0].permitted = caps[0].inheritable = 1u << CAP_SYS_PTRACE;
	if (syscall(SYS_capset, &hdr, caps) ||
	    (ptrace && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_PTRACE, 0, 0)) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "bvctl: cannot run %sd as %s: %s\n", dev->kind, BV_DAEMON_USER,
		strerror(errno));
	return -1;
}

/* The run directory; the daemons' user, when they get one, must be able to write into it. */
void bvctl_prepare_rundir(void)
{
	const struct passwd *pw;

	if (mkdir(bv_rundir(), 0755) && errno != EEXIST)
		return;	/* what writes into it next says why */
	if (geteuid() == 0 && *BV_DAEMON_USER && (pw = getpwnam(BV_DAEMON_USER)) &&
	    chown(bv_rundir(), pw->pw_uid, pw->pw_gid))
		fprintf(stderr, "bvctl: %s: %s\n", bv_rundir(), strerror(errno));
}

int bvctl_start_daemon(const struct bvctl *b, const struct bv_dev_conf *dev)
{
	char exe[BV_PATH_MAX * 2], log[BV_PATH_MAX], daemon[24];
	pid_t pid, dpid = 0;
	int pfd[2], s;

	snprintf(daemon, sizeof(daemon), "%sd", dev->kind);
	snprintf(exe, sizeof(exe), "%s/%s", b->daemondir, daemon);
	if (access(exe, X_OK)) {
		fprintf(stderr, "bvctl: %s: %s (build the project first)\n", exe, strerror(errno));
		return -1;
	}
	if (bv_run_path(log, sizeof(log), dev->name, ".log") || pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* A double fork: the daemon must not be our child when bvctl exits. */
		int null = open("/dev/null", O_RDONLY), fd;

		setsid();
		dpid = fork();
		if (dpid != 0) {
			if (write(pfd[1], &dpid, sizeof(dpid)) != sizeof(dpid))
				_exit(1);
			_exit(0);
		}
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (null >= 0)
			dup2(null, 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		unsetenv("NOTIFY_SOCKET");	/* systemd's word is for the units' daemons */
		if (drop_privileges(dev))
			_exit(126);
		exec_daemon(exe, daemon, dev->name);
		fprintf(stderr, "exec %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	if (read(pfd[0], &dpid, sizeof(dpid)) != sizeof(dpid))
		dpid = 0;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	/* Ready when it answers HELLO; failed when it exits first or takes over 20 s. */
	for (int t = 0; t < 2000 && dpid > 0 && pid_alive(dpid); t++) {
		s = admin_connect(dev);
		if (s >= 0) {
			close(s);
			return 0;
		}
		sleep_ms(10);
	}
	if (dpid > 0 && pid_alive(dpid))
		kill(dpid, SIGKILL);
	fprintf(stderr, "bvctl: %s for %s did not come up\n", daemon, dev->name);
	show_log_tail(dev);
	return -1;
}

int bvctl_stop_daemon(const struct bv_dev_conf *dev)
{
	pid_t pid = bvctl_daemon_pid(dev);

	if (!pid)
		return 0;
	kill(pid, SIGTERM);
	for (int t = 0; t < 500 && pid_alive(pid); t++)
		sleep_ms(10);
	if (pid_alive(pid)) {
		fprintf(stderr, "bvctl: %s (pid %d) ignored SIGTERM for 5 s; killing it\n",
			dev->name, (int)pid);
		kill(pid, SIGKILL);
		for (int t = 0; t < 200 && pid_alive(pid); t++)
			sleep_ms(10);
	}
	return pid_alive(pid) ? -1 : 0;
}
