// SPDX-License-Identifier: MIT
/*
 * SCIF ports (docs/scif.md "Ports"). A port is unique on its node, across processes: a bound
 * endpoint holds an AF_UNIX socket bound to the abstract name
 * "bridgeverbs-scif/<run directory hash>/<node>/<port>". The kernel refuses a second bind
 * (EADDRINUSE, which SCIF reports as EINVAL) and releases the name when the holder closes it
 * or dies, so a killed program leaves nothing behind. Abstract names belong to the network
 * namespace, like the rest of a bridgeverbs instance.
 *
 * scif_bind(epd, 0) takes the lowest free port from SCIF_PORT_RSVD up, as MPSS 3 does; ports
 * below SCIF_ADMIN_PORT_END need CAP_SYS_ADMIN. An accepted endpoint shares its listener's
 * port (reference counted), as in SCIF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bv_paths.h"
#include "scif_priv.h"

static uint32_t rundir_hash(void)
{
	const char *s = bv_rundir();
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int try_bind(uint16_t node, uint16_t pn)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, len;

	len = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "bridgeverbs-scif/%08x/%u/%u",
		       rundir_hash(), node, pn);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len))) {
		int err = errno;

		close(fd);
		return err == EADDRINUSE ? -EADDRINUSE : -err;
	}
	return fd;
}

struct scif_port *scif_port_reserve(uint16_t node, uint16_t pn, int *err)
{
	struct scif_port *p = calloc(1, sizeof(*p));
	bool any = !pn;
	int fd = -EADDRINUSE;

	if (!p) {
		*err = ENOMEM;
		return NULL;
	}
	if (pn) {
		fd = try_bind(node, pn);
		if (fd == -EADDRINUSE) {
			*err = EINVAL;	/* SCIF: "the port is already bound" */
			free(p);
			return NULL;
		}
	} else {
		for (unsigned int n = SCIF_PORT_RSVD; n <= 0xffff && fd == -EADDRINUSE; n++) {
			fd = try_bind(node, (uint16_t)n);
			pn = (uint16_t)n;
		}
		if (fd == -EADDRINUSE) {
			*err = ENOSPC;
			free(p);
			return NULL;
		}
	}
	if (fd < 0) {
		/* out of descriptors: no port can be had (ENOSPC), or not this one (ENOMEM) */
		*err = fd == -EMFILE || fd == -ENFILE ? (any ? ENOSPC : ENOMEM) : -fd;
		free(p);
		return NULL;
	}
	p->fd = fd;
	p->port = pn;
	p->refs = 1;
	return p;
}

/* Reference counts change under the endpoints' locks of a listener and its accepted ones. */
void scif_port_get(struct scif_port *p)
{
	__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
}

void scif_port_put(struct scif_port *p)
{
	if (p && !__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL)) {
		close(p->fd);
		free(p);
	}
}
