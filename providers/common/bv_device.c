// SPDX-License-Identifier: MIT
/* A bridgeverbs device as libibverbs found it in sysfs: its kind and its daemon's socket. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bv_provider.h"

/* Read one line of a sysfs-style file into buf, without the newline. */
static int read_line(const char *dir, const char *file, char *buf, size_t len)
{
	char path[IBV_SYSFS_PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

struct verbs_device *bv_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct bv_device *dev;
	const char *kind;

	if (strncmp(sysfs_dev->modalias, BV_MODALIAS_PREFIX, strlen(BV_MODALIAS_PREFIX)))
		return NULL;
	kind = sysfs_dev->modalias + strlen(BV_MODALIAS_PREFIX);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	snprintf(dev->kind, sizeof(dev->kind), "%s", kind);
	snprintf(dev->daemon, sizeof(dev->daemon), "%sd", kind);
	snprintf(dev->ibdev, sizeof(dev->ibdev), "%s", sysfs_dev->ibdev_name);
	if (read_line(sysfs_dev->ibdev_path, "bridgeverbs/socket", dev->sock_path,
		      sizeof(dev->sock_path))) {
		fprintf(stderr, "bridgeverbs: %s: no bridgeverbs/socket in %s; rerun 'bvctl up'\n",
			dev->ibdev, sysfs_dev->ibdev_path);
		free(dev);
		return NULL;
	}
	return &dev->vdev;
}

void bv_uninit_device(struct verbs_device *vdev)
{
	free(vdev);
}
