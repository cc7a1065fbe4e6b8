/* SPDX-License-Identifier: MIT */
/* bvctl: set up, start, stop and inspect bridgeverbs devices; run programs against them. */
#ifndef BVCTL_H
#define BVCTL_H

#include <stdbool.h>
#include <sys/types.h>

#include "bv_config.h"
#include "bv_paths.h"

struct bvctl {
	char daemondir[BV_PATH_MAX];	/* where cx4d and ntbd live */
	char libdir[BV_PATH_MAX];	/* the preload shim; in a build tree, the providers too */
	bool installed;			/* bvctl is BV_INSTALL_BINDIR/bvctl: the installed layout */
	bool direct;			/* --direct: never hand the daemons to systemd */
	const char *config_path;	/* --config; the system one when installed; else NULL */
	struct bv_config cfg;
};

/* bvctl.c: bring the configured devices up (as 'bvctl up'); put the environment 'bvctl run'
 * gives a program into this process's. */
int bvctl_up(struct bvctl *b);
void bvctl_set_env(const struct bvctl *b);

/* demo.c: the quick-start demo (bvctl demo). */
int bvctl_demo(struct bvctl *b);

/* setup.c: /dev/infiniband/uverbsN -> /dev/null (root, once). */
int bvctl_setup(bool tmpfiles);
bool bvctl_setup_done(void);

/* sysfs_tree.c: the tree libibverbs reads at $SYSFS_PATH. */
int bvctl_write_sysfs(const struct bv_config *cfg);
int bvctl_remove_tree(const char *path);

/* sysview.c: for the program bvctl run starts, the devices at /sys/class/infiniband (a
 * private mount namespace; root only). 0, or -1 when it could not be completed. */
int bvctl_sys_view(void);

/* daemons.c */
pid_t bvctl_daemon_pid(const struct bv_dev_conf *dev);	/* 0 if not running */
int bvctl_start_daemon(const struct bvctl *b, const struct bv_dev_conf *dev);
int bvctl_stop_daemon(const struct bv_dev_conf *dev);
int bvctl_daemon_status(const struct bv_dev_conf *dev, char *buf, size_t len);
int bvctl_wait_port_active(const struct bv_dev_conf *dev, int timeout_ms);
void bvctl_prepare_rundir(void);

/* systemd.c: the system instance under systemd (bridgeverbs.target, cx4d@, ntbd@). */
bool bvctl_use_systemd(const struct bvctl *b);
/* systemctl VERB [UNIT...] ((char *)NULL-terminated); its exit status */
int bvctl_systemctl(const char *verb, ...);
int bvctl_generator(int argc, char **argv);

/* model.c: a modelled card's controls outside its function (the model's control socket) */
int bvctl_model_request(const struct bv_dev_conf *dev, const char *req, char *rsp, size_t len);
int bvctl_model(const struct bvctl *b, int argc, char **argv);

#endif
