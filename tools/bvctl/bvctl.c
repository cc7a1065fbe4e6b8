// SPDX-License-Identifier: MIT
/*
 * bvctl: the administration tool of bridgeverbs.
 *
 *   setup    once, as root: /dev/infiniband/uverbsN nodes (optionally a tmpfiles.d entry)
 *   up       write the sysfs tree and start one daemon per configured device
 *   down     stop the daemons and remove everything up created
 *   status   devices, daemons, link state, clients
 *   env      shell exports that point libibverbs at the devices
 *   run      run a program with that environment
 *   model    a modelled card's controls outside its function (cable, failures, counters)
 *   demo     the quick-start demo
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <arpa/inet.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bv_proto.h"
#include "bvctl.h"

static const char *usage_text =
	"usage: bvctl [--rundir DIR] [--config FILE] COMMAND [ARGS]\n"
	"\n"
	"Commands:\n"
	"  setup [--tmpfiles]  once, as root: create /dev/infiniband/uverbs%d..%d -> /dev/null\n"
	"                      (--tmpfiles: also write /etc/tmpfiles.d/bridgeverbs.conf)\n"
	"  up                  write the sysfs tree and start one daemon per device (idempotent)\n"
	"  down                stop the daemons and remove the run directory\n"
	"  status              devices, daemons, link state and clients\n"
	"  env [--scif-node N] print shell exports: eval \"$(bvctl env)\"\n"
	"  run [--scif-node N] [--] CMD...\n"
	"                      run CMD with the bridgeverbs environment (as SCIF node N)\n"
	"  model DEV REQUEST   a modelled cx4 card's controls outside its function:\n"
	"                      cable pull|plug, fail disable|firmware, drop N, stats\n"
	"  demo                the quick-start demo\n"
	"\n"
	"Options:\n"
	"  --rundir DIR        run directory (default $BV_RUNDIR, else /run/bridgeverbs as root)\n"
	"  --config FILE       device configuration for 'up' (default: the built-in one:\n"
	"                      cx4_0, cx4_1, and the NTB link ntb_0 <-> ntb_1)\n"
	"  -h, --help          this text; 'bvctl COMMAND --help' for one command\n"
	"\n"
	"See bvctl(8) in docs/bvctl.8.\n";

static void usage(FILE *f)
{
	fprintf(f, usage_text, BV_UVERBS_BASE, BV_UVERBS_BASE + BV_UVERBS_COUNT - 1);
}

static int locate(struct bvctl *b)
{
	char exe[BV_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *env;

	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(b->bindir, sizeof(b->bindir), "%s", dirname(exe));
	if ((env = getenv("BV_LIBDIR")) && *env)
		snprintf(b->libdir, sizeof(b->libdir), "%s", env);
	else if (snprintf(b->libdir, sizeof(b->libdir), "%s/../lib", b->bindir) >=
		 (int)sizeof(b->libdir))
		return -1;
	return 0;
}

/* The configuration in effect: the one 'up' copied into the run directory, else --config. */
static int load_config(struct bvctl *b, bool for_up)
{
	char path[BV_PATH_MAX], err[256];
	const char *src = b->config_path;

	if (!bv_run_path(path, sizeof(path), "config", "") && !access(path, R_OK) &&
	    (!for_up || !src))
		src = path;
	if (bv_config_load(&b->cfg, src, err, sizeof(err))) {
		fprintf(stderr, "bvctl: configuration %s: %s\n", src ? src : "(built-in)", err);
		return -1;
	}
	return 0;
}

static int save_config(const struct bvctl *b)
{
	char path[BV_PATH_MAX];
	FILE *in = NULL, *out;
	int c;

	if (bv_run_path(path, sizeof(path), "config", ""))
		return -1;
	if (b->config_path && !(in = fopen(b->config_path, "r")))
		return -1;
	out = fopen(path, "w");
	if (!out) {
		if (in)
			fclose(in);
		return -1;
	}
	if (in) {
		while ((c = fgetc(in)) != EOF)
			fputc(c, out);
		fclose(in);
	} else {
		fputs(bv_default_config, out);
	}
	return fclose(out);
}

static bool any_running(const struct bv_config *cfg)
{
	for (int i = 0; i < cfg->ndev; i++)
		if (bvctl_daemon_pid(&cfg->dev[i]))
			return true;
	return false;
}

static int cmd_up(struct bvctl *b)
{
	struct bv_config running;
	int failed = 0;

	if (!bvctl_setup_done()) {
		if (geteuid() != 0) {
			fprintf(stderr, "bvctl up: /dev/infiniband/uverbs%d.. are missing; "
					"run 'bvctl setup' once as root\n", BV_UVERBS_BASE);
			return 1;
		}
		if (bvctl_setup(false))
			return 1;
	}
	if (mkdir(bv_rundir(), 0755) && errno != EEXIST) {
		fprintf(stderr, "bvctl up: %s: %s\n", bv_rundir(), strerror(errno));
		return 1;
	}
	/* Already up with another configuration? Keep what runs; say so. */
	if (!load_config(b, false) && any_running(&b->cfg) && b->config_path) {
		running = b->cfg;
		if (load_config(b, true))
			return 1;
		if (memcmp(&running, &b->cfg, sizeof(running))) {
			fprintf(stderr, "bvctl up: already up with another configuration; "
					"run 'bvctl down' first\n");
			return 1;
		}
	} else if (load_config(b, true)) {
		return 1;
	}
	if (!any_running(&b->cfg) && save_config(b)) {
		fprintf(stderr, "bvctl up: cannot write the configuration into %s\n", bv_rundir());
		return 1;
	}
	if (bvctl_write_sysfs(&b->cfg)) {
		fprintf(stderr, "bvctl up: cannot write the sysfs tree\n");
		return 1;
	}
	for (int i = 0; i < b->cfg.ndev; i++) {
		const struct bv_dev_conf *dev = &b->cfg.dev[i];

		if (bvctl_daemon_pid(dev))
			continue;
		if (bvctl_start_daemon(b, dev)) {
			failed++;
			continue;
		}
		printf("%-8s %s  up (%sd pid %d)\n", dev->name, dev->kind, dev->kind,
		       (int)bvctl_daemon_pid(dev));
	}
	/*
	 * An ntb port is ACTIVE only once both ends' daemons brought the link up: wait for that
	 * (when both ends are configured here), so programs started next find it up.
	 */
	for (int i = 0; i < b->cfg.ndev && !failed; i++) {
		const struct bv_dev_conf *dev = &b->cfg.dev[i];
		bool peer = false;

		if (strcmp(dev->kind, "ntb"))
			continue;
		for (int k = 0; k < b->cfg.ndev; k++)
			peer |= k != i && !strcmp(b->cfg.dev[k].kind, "ntb") &&
				!strcmp(b->cfg.dev[k].link, dev->link) &&
				b->cfg.dev[k].side != dev->side;
		if (peer && bvctl_wait_port_active(dev, 30000))
			fprintf(stderr, "bvctl up: %s: the link did not come up (bvctl status)\n",
				dev->name);
	}
	return failed ? 1 : 0;
}

static int cmd_down(struct bvctl *b)
{
	char path[BV_PATH_MAX];
	static const char *const suffixes[] = { ".sock", ".pid", ".log" };
	int ret = 0;

	if (access(bv_rundir(), F_OK))
		return 0;	/* nothing is up */
	if (load_config(b, false))
		return 1;
	for (int i = 0; i < b->cfg.ndev; i++) {
		if (bvctl_stop_daemon(&b->cfg.dev[i]))
			ret = 1;
		for (unsigned int k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++)
			if (!bv_run_path(path, sizeof(path), b->cfg.dev[i].name, suffixes[k]) &&
			    !getenv("BV_KEEP_LOGS"))
				unlink(path);
	}
	if (!bv_run_path(path, sizeof(path), "sysfs", "") && bvctl_remove_tree(path))
		ret = 1;
	if (!bv_run_path(path, sizeof(path), "config", ""))
		unlink(path);
	if (rmdir(bv_rundir()) && errno != ENOENT && !getenv("BV_KEEP_LOGS")) {
		fprintf(stderr, "bvctl down: %s: %s (files not ours are left there)\n",
			bv_rundir(), strerror(errno));
		ret = 1;
	}
	return ret;
}

/* A modelled card: the model's own counters (its control socket), beside what the driver says. */
static void model_status(const struct bv_dev_conf *dev)
{
	static const char *const show[] = { "tx_pkts", "rx_pkts", "rx_drop_icrc", "rx_drop_qp",
					    "retransmits", "naks_sent", "rnr_naks_sent",
					    "dma_faults", "cable_tx_pkts", "cable_rx_pkts" };
	char rsp[4096], *line, *save;
	int n = 0;

	if (bvctl_model_request(dev, "stats", rsp, sizeof(rsp)) || strncmp(rsp, "ok\n", 3))
		return;
	printf("  model (outside the function):");
	for (line = strtok_r(rsp + 3, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (size_t i = 0; i < sizeof(show) / sizeof(show[0]); i++)
			if (!strncmp(line, show[i], strlen(show[i])) &&
			    line[strlen(show[i])] == ' ')
				printf("%s %s", n++ ? "," : "", line);
	printf("\n");
}

static int cmd_status(struct bvctl *b)
{
	static char buf[BV_MSG_MAX];
	int down = 0;

	if (load_config(b, false))
		return 1;
	printf("run directory %s\n", bv_rundir());
	for (int i = 0; i < b->cfg.ndev; i++) {
		const struct bv_dev_conf *dev = &b->cfg.dev[i];
		char ip[INET_ADDRSTRLEN];
		pid_t pid = bvctl_daemon_pid(dev);
		int ret;

		inet_ntop(AF_INET, &dev->ip, ip, sizeof(ip));
		if (!pid) {
			printf("%s: kind %s, %s: daemon %sd not running\n", dev->name, dev->kind, ip,
			       dev->kind);
			down++;
			continue;
		}
		ret = bvctl_daemon_status(dev, buf, sizeof(buf));
		if (ret) {
			printf("%s: kind %s, %s: daemon pid %d does not answer (%s)\n", dev->name,
			       dev->kind, ip, (int)pid, strerror(-ret));
			down++;
			continue;
		}
		fputs(buf, stdout);
		model_status(dev);
	}
	return down ? 3 : 0;
}

static void build_env(const struct bvctl *b, char **vars, int *n)
{
	char buf[BV_PATH_MAX * 4];
	const char *old;

	snprintf(buf, sizeof(buf), "%s/sysfs", bv_rundir());
	vars[(*n)++] = strdup(buf);	/* SYSFS_PATH */
	old = getenv("RDMAV_DRIVERS");
	snprintf(buf, sizeof(buf), "%s/libcx4:%s/libntb%s%s", b->libdir, b->libdir,
		 old && *old ? ":" : "", old && *old ? old : "");
	vars[(*n)++] = strdup(buf);	/* RDMAV_DRIVERS */
	/* After what is already preloaded: a sanitizer runtime must stay first. */
	old = getenv("LD_PRELOAD");
	snprintf(buf, sizeof(buf), "%s%s%s/libbridgeverbs-preload.so", old && *old ? old : "",
		 old && *old ? ":" : "", b->libdir);
	vars[(*n)++] = strdup(buf);	/* LD_PRELOAD */
	vars[(*n)++] = strdup(bv_rundir());	/* BV_RUNDIR */
	vars[(*n)++] = strdup("1");	/* BV_HIDE_RDMA_NETLINK */
	/*
	 * The drop-in librdmacm.so.1 (librdmacm-plugin) first: programs linked against the
	 * system's librdmacm load ours, whose connection manager lives in the daemons. The
	 * system library stays where it is.
	 */
	old = getenv("LD_LIBRARY_PATH");
	snprintf(buf, sizeof(buf), "%s/rdmacm%s%s", b->libdir, old && *old ? ":" : "",
		 old && *old ? old : "");
	vars[(*n)++] = strdup(buf);	/* LD_LIBRARY_PATH */
}

static const char *const env_names[] = { "SYSFS_PATH", "RDMAV_DRIVERS", "LD_PRELOAD",
					 "BV_RUNDIR", "BV_HIDE_RDMA_NETLINK",
					 "LD_LIBRARY_PATH" };

static int cmd_env(struct bvctl *b)
{
	char *vars[8];
	int n = 0;

	build_env(b, vars, &n);
	for (int i = 0; i < n; i++) {
		printf("export %s='%s'\n", env_names[i], vars[i]);
		free(vars[i]);
	}
	if (getenv("BV_SCIF_NODE"))
		printf("export BV_SCIF_NODE='%s'\n", getenv("BV_SCIF_NODE"));
	return 0;
}

static void set_env(const struct bvctl *b)
{
	char *vars[8];
	int n = 0;

	build_env(b, vars, &n);
	for (int i = 0; i < n; i++) {
		setenv(env_names[i], vars[i], 1);
		free(vars[i]);
	}
}

/* --scif-node N: the SCIF node the program is (libscif reads BV_SCIF_NODE, docs/scif.md). */
static int scif_node_opt(int *argc, char ***argv)
{
	char *end;
	long n;

	if (*argc < 1 || strcmp((*argv)[0], "--scif-node"))
		return 0;
	if (*argc < 2 || (n = strtol((*argv)[1], &end, 10), *end || n < 0 || n > 4095)) {
		fprintf(stderr, "bvctl: --scif-node wants a node id 0..4095\n");
		return -1;
	}
	setenv("BV_SCIF_NODE", (*argv)[1], 1);
	*argc -= 2;
	*argv += 2;
	return 0;
}

static int cmd_run(struct bvctl *b, int argc, char **argv)
{
	if (argc > 0 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (scif_node_opt(&argc, &argv))
		return 2;
	if (argc > 0 && !strcmp(argv[0], "--")) {
		argc--;
		argv++;
	}
	if (argc == 0) {
		fprintf(stderr, "usage: bvctl run [--] CMD [ARGS...]\n");
		return 2;
	}
	set_env(b);
	execvp(argv[0], argv);
	fprintf(stderr, "bvctl run: %s: %s\n", argv[0], strerror(errno));
	return 127;
}

/* Run argv with the environment, wait; returns its exit status. */
static int run_wait(const struct bvctl *b, char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		set_env(b);
		execvp(argv[0], argv);
		fprintf(stderr, "bvctl: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Until a TCP socket listens on port (this network namespace), at most ms milliseconds. */
static bool wait_listen(unsigned int port, int ms)
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

/*
 * The demo: the devices come up, then perftest's ib_write_bw runs between the two modelled
 * ConnectX-4 ports (server on cx4_0, client on cx4_1 over the loopback TCP side channel),
 * RDMA WRITEs through the whole stack: provider, cx4d, model, RoCE v2 on the wire.
 */
static int cmd_demo(struct bvctl *b)
{
	char *const devices[] = { "ibv_devices", NULL };
	char *const server[] = { "ib_write_bw", "-d", "cx4_0", "-x", "3", "-D", "2", "-p", "18599",
				 NULL };
	char *const client[] = { "ib_write_bw", "-d", "cx4_1", "-x", "3", "-D", "2", "-p", "18599",
				 "127.0.0.1", NULL };
	int ret, status;
	pid_t srv;

	ret = cmd_up(b);
	if (ret)
		return ret;
	printf("\n$ bvctl run -- ibv_devices\n");
	fflush(stdout);
	ret = run_wait(b, devices);
	printf("\n$ bvctl run -- ib_write_bw -d cx4_0 -x 3 -D 2 -p 18599 &\n"
	       "$ bvctl run -- ib_write_bw -d cx4_1 -x 3 -D 2 -p 18599 127.0.0.1\n");
	fflush(stdout);
	srv = fork();
	if (srv < 0)
		return 1;
	if (srv == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* the client prints the same table: show it once */
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		set_env(b);
		execvp(server[0], server);
		_exit(127);
	}
	if (!wait_listen(18599, 20000)) {
		fprintf(stderr, "bvctl demo: the ib_write_bw server did not start\n");
		ret = 1;
	} else {
		ret |= run_wait(b, client);
	}
	if (ret)
		kill(srv, SIGTERM);
	if (waitpid(srv, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		ret |= 1;
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rundir", required_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "tmpfiles", no_argument, NULL, 't' },
		{ "scif-node", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct bvctl b = { 0 };
	bool tmpfiles = false, help = false;
	const char *cmd;
	int opt;

	/* '+': stop at the first non-option, so 'run' keeps its command's options. */
	while ((opt = getopt_long(argc, argv, "+r:c:ht", opts, NULL)) != -1) {
		switch (opt) {
		case 'n': {
			char *na[2] = { "--scif-node", optarg }, **nv = na;
			int nc = 2;

			if (scif_node_opt(&nc, &nv))
				return 2;
			break;
		}
		case 'r':
			setenv("BV_RUNDIR", optarg, 1);
			break;
		case 'c':
			b.config_path = optarg;
			break;
		case 'h':
			help = true;
			break;
		case 't':
			tmpfiles = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	cmd = argv[optind++];
	/* Options after the command (bvctl up --config F, bvctl setup --tmpfiles). */
	if (strcmp(cmd, "run")) {
		while ((opt = getopt_long(argc, argv, "+r:c:ht", opts, NULL)) != -1) {
			if (opt == 'r')
				setenv("BV_RUNDIR", optarg, 1);
			else if (opt == 'c')
				b.config_path = optarg;
			else if (opt == 'h')
				help = true;
			else if (opt == 't')
				tmpfiles = true;
			else if (opt == 'n' && optarg && !setenv("BV_SCIF_NODE", optarg, 1))
				continue;
			else
				return 2;
		}
	}
	if (help) {
		usage(stdout);
		return 0;
	}
	if (locate(&b)) {
		fprintf(stderr, "bvctl: cannot find my own directory\n");
		return 1;
	}
	if (!strcmp(cmd, "setup"))
		return bvctl_setup(tmpfiles);
	if (!strcmp(cmd, "up"))
		return cmd_up(&b);
	if (!strcmp(cmd, "down"))
		return cmd_down(&b);
	if (!strcmp(cmd, "status"))
		return cmd_status(&b);
	if (!strcmp(cmd, "env"))
		return cmd_env(&b);
	if (!strcmp(cmd, "run"))
		return cmd_run(&b, argc - optind, argv + optind);
	if (!strcmp(cmd, "demo"))
		return cmd_demo(&b);
	if (!strcmp(cmd, "model"))
		return load_config(&b, false) ? 1 : bvctl_model(&b, argc - optind, argv + optind);
	fprintf(stderr, "bvctl: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
