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
 *   sysfs    the configuration copy and the sysfs tree alone (bridgeverbs-sysfs.service)
 *
 * Installed, on a host booted with systemd, up and down of the system instance go through
 * the units (systemd.c); otherwise bvctl starts and stops the daemons itself (daemons.c).
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

#include "bv_install.h"
#include "bv_netdev.h"
#include "bv_proto.h"
#include "bvctl.h"

static const char *usage_text =
	"usage: bvctl [--rundir DIR] [--config FILE] [--direct] COMMAND [ARGS]\n"
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
	"  demo                the quick-start demo: perftest and rping on a cx4 pair and an\n"
	"                      ntb link, a SCIF program between SCIF nodes 0 and 1\n"
	"  sysfs               write the configuration copy and the sysfs tree, start nothing\n"
	"                      (what bridgeverbs-sysfs.service runs)\n"
	"\n"
	"Options:\n"
	"  --rundir DIR        run directory (default $BV_RUNDIR, else %s for root and,\n"
	"                      once it exists, for everyone)\n"
	"  --config FILE       device configuration for 'up' (default: %s\n"
	"                      when installed, else the built-in one: cx4_0, cx4_1, and the\n"
	"                      NTB link ntb_0 <-> ntb_1)\n"
	"  --direct            start and stop the daemons here, never through systemd\n"
	"  -h, --help          this text; 'bvctl COMMAND --help' for one command\n"
	"\n"
	"See bvctl(8), bridgeverbs(7) and bridgeverbs.conf(5).\n";

static void usage(FILE *f)
{
	fprintf(f, usage_text, BV_UVERBS_BASE, BV_UVERBS_BASE + BV_UVERBS_COUNT - 1,
		BV_SYSTEM_RUNDIR, BV_INSTALL_CONFIG);
}

/*
 * Installed (bvctl is BV_INSTALL_BINDIR/bvctl): the daemons in sbin, the shim in the private
 * library directory, the providers where libibverbs finds them by itself, the system
 * configuration. From a build tree: the daemons next to bvctl, the libraries in ../lib
 * ($BV_LIBDIR overrides), the built-in configuration.
 */
static int locate(struct bvctl *b)
{
	char exe[BV_PATH_MAX], self[BV_PATH_MAX + 8];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *env;

	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(self, sizeof(self), "%s/bvctl", BV_INSTALL_BINDIR);
	b->installed = !strcmp(exe, self);
	if (b->installed) {
		snprintf(b->daemondir, sizeof(b->daemondir), "%s", BV_INSTALL_SBINDIR);
		snprintf(b->libdir, sizeof(b->libdir), "%s", BV_INSTALL_PRIVATE_LIBDIR);
		if (!b->config_path)
			b->config_path = BV_INSTALL_CONFIG;
	} else {
		snprintf(b->daemondir, sizeof(b->daemondir), "%s", dirname(exe));
		if (snprintf(b->libdir, sizeof(b->libdir), "%s/../lib", b->daemondir) >=
		    (int)sizeof(b->libdir))
			return -1;
	}
	if ((env = getenv("BV_LIBDIR")) && *env)
		snprintf(b->libdir, sizeof(b->libdir), "%s", env);
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
	/* each port's net device and MAC, from this namespace's interfaces (bv_netdev.h) */
	bv_config_resolve(&b->cfg);
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

/*
 * The configuration up brings up: the one given (or the system one), unless daemons already run
 * with another, which up keeps and says so. 0, or 1 with a message.
 */
static int config_for_up(struct bvctl *b)
{
	struct bv_config running;

	if (!load_config(b, false) && any_running(&b->cfg) && b->config_path) {
		running = b->cfg;
		if (load_config(b, true))
			return 1;
		if (memcmp(&running, &b->cfg, sizeof(running))) {
			fprintf(stderr, "bvctl up: already up with another configuration; "
					"run 'bvctl down' first\n");
			return 1;
		}
		return 0;
	}
	return load_config(b, true) ? 1 : 0;
}

/* The run directory's configuration copy and the sysfs tree programs read. */
static int write_instance(struct bvctl *b)
{
	bvctl_prepare_rundir();
	if (!any_running(&b->cfg) && save_config(b)) {
		fprintf(stderr, "bvctl: cannot write the configuration into %s\n", bv_rundir());
		return 1;
	}
	if (bvctl_write_sysfs(&b->cfg)) {
		fprintf(stderr, "bvctl: cannot write the sysfs tree into %s\n", bv_rundir());
		return 1;
	}
	return 0;
}

static int cmd_sysfs(struct bvctl *b)
{
	return config_for_up(b) || write_instance(b) ? 1 : 0;
}

/* systemd starts the daemons: bridgeverbs.target wants one unit per device (systemd.c). */
static int start_systemd(struct bvctl *b)
{
	int failed = 0;

	if (bvctl_systemctl("daemon-reload", (char *)NULL) ||
	    bvctl_systemctl("start", "bridgeverbs.target", (char *)NULL)) {
		fprintf(stderr, "bvctl up: systemctl start bridgeverbs.target failed "
				"(systemctl status bridgeverbs-sysfs.service)\n");
		return 1;
	}
	for (int i = 0; i < b->cfg.ndev; i++) {
		const struct bv_dev_conf *dev = &b->cfg.dev[i];
		pid_t pid = bvctl_daemon_pid(dev);

		if (!pid) {
			fprintf(stderr, "bvctl up: %s: %sd@%s.service is not running "
					"(systemctl status %sd@%s.service)\n",
				dev->name, dev->kind, dev->name, dev->kind, dev->name);
			failed++;
			continue;
		}
		printf("%-8s %s  up (%sd@%s.service, pid %d)\n", dev->name, dev->kind, dev->kind,
		       dev->name, (int)pid);
	}
	return failed;
}

static int start_direct(struct bvctl *b)
{
	int failed = 0;

	if (write_instance(b))
		return 1;
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
	return failed;
}

int bvctl_up(struct bvctl *b)
{
	int failed;

	if (!bvctl_setup_done()) {
		if (geteuid() != 0) {
			fprintf(stderr, "bvctl up: /dev/infiniband/uverbs%d.. are missing; "
					"run 'bvctl setup' once as root\n", BV_UVERBS_BASE);
			return 1;
		}
		if (bvctl_setup(false))
			return 1;
	}
	if (config_for_up(b))
		return 1;
	failed = bvctl_use_systemd(b) ? start_systemd(b) : start_direct(b);
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

	/*
	 * systemd stops the units. The target stops first (it is ordered after what it wants);
	 * bridgeverbs-sysfs.service stops last, once the daemons are gone, running bvctl --direct
	 * down: waiting for it is waiting for everything.
	 */
	if (bvctl_use_systemd(b) &&
	    bvctl_systemctl("stop", "bridgeverbs.target", "bridgeverbs-sysfs.service",
			    (char *)NULL)) {
		fprintf(stderr, "bvctl down: systemctl stop bridgeverbs.target failed\n");
		ret = 1;
	}
	if (access(bv_rundir(), F_OK))
		return ret;	/* nothing is up */
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

struct env_var {
	const char *name;
	char *value;
};

/*
 * What a program needs to see the devices (docs/install.md): the sysfs tree libibverbs reads
 * instead of /sys, the providers (from a build tree; installed ones libibverbs loads through
 * /etc/libibverbs.d), the shim for completion channels, and RDMA netlink hidden.
 */
static int build_env(const struct bvctl *b, struct env_var *v)
{
	char buf[BV_PATH_MAX * 4];
	const char *old;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s/sysfs", bv_rundir());
	v[n++] = (struct env_var){ "SYSFS_PATH", strdup(buf) };
	if (!b->installed) {
		old = getenv("RDMAV_DRIVERS");
		snprintf(buf, sizeof(buf), "%s/libcx4:%s/libntb%s%s", b->libdir, b->libdir,
			 old && *old ? ":" : "", old && *old ? old : "");
		v[n++] = (struct env_var){ "RDMAV_DRIVERS", strdup(buf) };
	}
	/* After what is already preloaded: a sanitizer runtime must stay first. */
	old = getenv("LD_PRELOAD");
	snprintf(buf, sizeof(buf), "%s%s%s/libbridgeverbs-preload.so", old && *old ? old : "",
		 old && *old ? ":" : "", b->libdir);
	v[n++] = (struct env_var){ "LD_PRELOAD", strdup(buf) };
	v[n++] = (struct env_var){ "BV_RUNDIR", strdup(bv_rundir()) };
	v[n++] = (struct env_var){ "BV_HIDE_RDMA_NETLINK", strdup("1") };
	/*
	 * The drop-in librdmacm.so.1 (librdmacm-plugin) first: programs linked against the
	 * system's librdmacm load ours, whose connection manager lives in the daemons. The
	 * system library stays where it is.
	 */
	old = getenv("LD_LIBRARY_PATH");
	snprintf(buf, sizeof(buf), "%s/rdmacm%s%s", b->libdir, old && *old ? ":" : "",
		 old && *old ? old : "");
	v[n++] = (struct env_var){ "LD_LIBRARY_PATH", strdup(buf) };
	return n;
}

static int cmd_env(struct bvctl *b)
{
	struct env_var v[8];
	int n = build_env(b, v);

	for (int i = 0; i < n; i++) {
		printf("export %s='%s'\n", v[i].name, v[i].value);
		free(v[i].value);
	}
	if (getenv("BV_SCIF_NODE"))
		printf("export BV_SCIF_NODE='%s'\n", getenv("BV_SCIF_NODE"));
	return 0;
}

void bvctl_set_env(const struct bvctl *b)
{
	struct env_var v[8];
	int n = build_env(b, v);

	for (int i = 0; i < n; i++) {
		setenv(v[i].name, v[i].value, 1);
		free(v[i].value);
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
	bvctl_set_env(b);
	bvctl_sys_view();
	execvp(argv[0], argv);
	fprintf(stderr, "bvctl run: %s: %s\n", argv[0], strerror(errno));
	return 127;
}

struct cmdline {
	bool tmpfiles, help;
};

/* One option, before or after the command; false for one we do not know. */
static bool take_option(int opt, struct bvctl *b, struct cmdline *c)
{
	switch (opt) {
	case 'r':
		setenv("BV_RUNDIR", optarg, 1);
		return true;
	case 'c':
		b->config_path = optarg;
		return true;
	case 'D':
		b->direct = true;
		return true;
	case 'h':
		c->help = true;
		return true;
	case 't':
		c->tmpfiles = true;
		return true;
	case 'n': { /* --scif-node N before the command: as 'run --scif-node N' */
		char *na[2] = { "--scif-node", optarg }, **nv = na;
		int nc = 2;

		return !scif_node_opt(&nc, &nv);
	}
	}
	return false;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rundir", required_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ "direct", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "tmpfiles", no_argument, NULL, 't' },
		{ "scif-node", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct bvctl b = { 0 };
	struct cmdline c = { 0 };
	const char *cmd;
	int opt;

	/* systemd runs us as its generator through a link of that name (systemd.c) */
	if (!strcmp(basename(argv[0]), "bridgeverbs-generator"))
		return bvctl_generator(argc, argv);
	/* '+': stop at the first non-option, so 'run' keeps its command's options. */
	while ((opt = getopt_long(argc, argv, "+r:c:ht", opts, NULL)) != -1) {
		if (!take_option(opt, &b, &c)) {
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(c.help ? stdout : stderr);
		return c.help ? 0 : 2;
	}
	cmd = argv[optind++];
	/* Options after the command (bvctl up --config F, bvctl setup --tmpfiles). */
	if (strcmp(cmd, "run")) {
		while ((opt = getopt_long(argc, argv, "+r:c:ht", opts, NULL)) != -1)
			if (!take_option(opt, &b, &c))
				return 2;
	}
	if (c.help) {
		usage(stdout);
		return 0;
	}
	if (locate(&b)) {
		fprintf(stderr, "bvctl: cannot find my own directory\n");
		return 1;
	}
	if (!strcmp(cmd, "setup"))
		return bvctl_setup(c.tmpfiles);
	if (!strcmp(cmd, "up"))
		return bvctl_up(&b);
	if (!strcmp(cmd, "down"))
		return cmd_down(&b);
	if (!strcmp(cmd, "status"))
		return cmd_status(&b);
	if (!strcmp(cmd, "env"))
		return cmd_env(&b);
	if (!strcmp(cmd, "run"))
		return cmd_run(&b, argc - optind, argv + optind);
	if (!strcmp(cmd, "demo"))
		return bvctl_demo(&b);
	if (!strcmp(cmd, "model"))
		return load_config(&b, false) ? 1 : bvctl_model(&b, argc - optind, argv + optind);
	if (!strcmp(cmd, "sysfs"))
		return cmd_sysfs(&b);
	fprintf(stderr, "bvctl: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
