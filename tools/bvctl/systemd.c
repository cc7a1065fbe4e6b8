// SPDX-License-Identifier: MIT
/*
 * The system instance under systemd. An installed bvctl on a host booted with systemd, asked to
 * bring up the system configuration in the system run directory, hands the daemons to systemd
 * instead of starting them itself:
 *
 *   bridgeverbs.target            bvctl up: systemctl start it; bvctl down: systemctl stop it
 *     bridgeverbs-sysfs.service   oneshot "bvctl --direct sysfs": the configuration copy and the
 *                                 sysfs tree; stopping it runs "bvctl --direct down"
 *     cx4d@NAME.service,          one per device of the system configuration: bvctl run as
 *     ntbd@NAME.service           bridgeverbs-generator makes bridgeverbs.target want them
 *
 * Anything else (--direct, --config of another file, another run directory, a build tree, a
 * host without systemd) starts the daemons directly (daemons.c). docs/install.md has both.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bv_install.h"
#include "bvctl.h"

bool bvctl_use_systemd(const struct bvctl *b)
{
	struct stat st;

	if (!BV_WITH_SYSTEMD || b->direct || !b->installed)
		return false;
	if (strcmp(bv_rundir(), BV_SYSTEM_RUNDIR) || !b->config_path ||
	    strcmp(b->config_path, BV_INSTALL_CONFIG))
		return false;
	/* sd_booted(3): systemd is PID 1 when this directory exists */
	return !lstat("/run/systemd/system", &st) && S_ISDIR(st.st_mode);
}

int bvctl_systemctl(const char *verb, ...)
{
	char *argv[8] = { "systemctl", (char *)verb };
	int status, n = 2;
	va_list ap;
	pid_t pid;

	va_start(ap, verb);
	while (n < 7 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "bvctl: systemctl: %s\n", strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A group name systemd takes as one word in SupplementaryGroups=. */
static bool plain_name(const char *s)
{
	if (!*s || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/*
 * systemd.generator(7): runs at boot and on every daemon-reload with the directories to write
 * units into; bridgeverbs.target gets a Wants= link to <kind>d@<name>.service per device of
 * the system configuration, and a device with socket_group a drop-in that puts its daemon in
 * that group (so it may give its socket to the group).
 */
int bvctl_generator(int argc, char **argv)
{
	char dir[BV_PATH_MAX * 2], path[BV_PATH_MAX * 3], unit[BV_PATH_MAX * 2], err[256];
	struct bv_config cfg;

	if (argc < 2) {
		fprintf(stderr, "usage: bridgeverbs-generator NORMAL_DIR [EARLY_DIR LATE_DIR]\n");
		return 2;
	}
	if (access(BV_INSTALL_CONFIG, F_OK) && errno == ENOENT)
		return 0;	/* nothing configured, nothing to start */
	if (bv_config_load(&cfg, BV_INSTALL_CONFIG, err, sizeof(err))) {
		fprintf(stderr, "bridgeverbs-generator: %s: %s\n", BV_INSTALL_CONFIG, err);
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/bridgeverbs.target.wants", argv[1]);
	if (mkdir(dir, 0755) && errno != EEXIST)
		goto fail;
	for (int i = 0; i < cfg.ndev; i++) {
		const struct bv_dev_conf *dev = &cfg.dev[i];
		const char *group = bv_conf_get(dev, "socket_group", NULL);

		snprintf(unit, sizeof(unit), "%s/%sd@.service", BV_INSTALL_UNITDIR, dev->kind);
		snprintf(path, sizeof(path), "%s/%sd@%s.service", dir, dev->kind, dev->name);
		if (symlink(unit, path) && errno != EEXIST)
			goto fail;
		if (!group)
			continue;
		if (!plain_name(group)) {
			fprintf(stderr,
				"bridgeverbs-generator: %s: device %s: bad socket_group '%s'\n",
				BV_INSTALL_CONFIG, dev->name, group);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/%sd@%s.service.d", argv[1], dev->kind, dev->name);
		if (mkdir(path, 0755) && errno != EEXIST)
			goto fail;
		snprintf(unit, sizeof(unit), "# from %s\n[Service]\nSupplementaryGroups=%s\n",
			 BV_INSTALL_CONFIG, group);
		strncat(path, "/50-socket-group.conf", sizeof(path) - strlen(path) - 1);
		if (write_file(path, unit))
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "bridgeverbs-generator: %s: %s\n", argv[1], strerror(errno));
	return 1;
}
