/* SPDX-License-Identifier: MIT */
/* bvctl: set up, start, stop and inspect bridgeverbs devices; run programs against them. */
#ifndef BVCTL_H
#define BVCTL_H

#include <stdbool.h>
#include <sys/types.h>

#include "bv_config.h"
#include "bv_paths.h"

struct bvctl {
	char bindir[BV_PATH_MAX];	/* where bvctl, cx4d and ntbd live */
	char libdir[BV_PATH_MAX];	/* where the providers and the shim live */
	const char *config_path;	/* --config, or NULL */
	struct bv_config cfg;
};

/* setup.c: /dev/infiniband/uverbsN -> /dev/null (root, once). */
int bvctl_setup(bool tmpfiles);
bool bvctl_setup_done(void);

/* sysfs_tree.c: the tree libibverbs reads at $SYSFS_PATH. */
int bvctl_write_sysfs(const struct bv_config *cfg);
int bvctl_remove_tree(const char *path);

/* daemons.c */
pid_t bvctl_daemon_pid(const struct bv_dev_conf *dev);	/* 0 if not running */
int bvctl_start_daemon(const struct bvctl *b, const struct bv_dev_conf *dev);
int bvctl_stop_daemon(const struct bv_dev_conf *dev);
int bvctl_daemon_status(const struct bv_dev_conf *dev, char *buf, size_t len);
int bvctl_wait_port_active(const struct bv_dev_conf *dev, int timeout_ms);

/* model.c: a modelled card's controls outside its function (the model's control socket) */
int bvctl_model_request(const struct bv_dev_conf *dev, const char *req, char *rsp, size_t len);
int bvctl_model(const struct bvctl *b, int argc, char **argv);

#endif
