// SPDX-License-Identifier: MIT
/*
 * What a daemon owes whoever started it, besides serving clients: a device socket only the
 * configured users may open, and word to systemd once it is ready (docs/install.md).
 */
#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bvd.h"

/*
 * Any local user may open the device (mode 0666, as Debian's udev rules make the kernel's
 * /dev/infiniband/uverbs*), or, with socket_group = GROUP in the device's section, that group's
 * members only (0660). The daemon must be in the group: bvctl and the systemd units put it there.
 */
int bvd_socket_access(struct bvd *d, const char *path)
{
	const char *group = bv_conf_get(d->conf, "socket_group", NULL);
	const struct group *gr;

	if (!group)
		return chmod(path, 0666);
	gr = getgrnam(group);
	if (!gr) {
		bvd_log(d, "socket_group %s: no such group", group);
		return -1;
	}
	if (chown(path, (uid_t)-1, gr->gr_gid) || chmod(path, 0660)) {
		bvd_log(d, "socket_group %s: %s: %s (is the daemon in the group?)", group, path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* sd_notify(3)'s protocol: one datagram to $NOTIFY_SOCKET; nothing when it is not set. */
void bvd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int s;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    (len = strlen(path)) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;	/* an abstract socket */
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	(void)!sendto(s, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		      offsetof(struct sockaddr_un, sun_path) + len);
	close(s);
}
