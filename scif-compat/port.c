// SPDX-License-Identifier: MIT
/*
 * SCIF ports (docs/scif.md "Ports"). A port is unique on its node, across processes: a bound
 * endpoint holds an AF_UNIX socket bound to the abstract name
 * "bridgeverbs-scif/<run directory hash>/<node>/<port>/<4 mixed bytes>". The kernel refuses a second bind
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

/*
 * The name of port pn of node. Linux hashes abstract names with a 16-bit checksum into 256
 * buckets: names that differ in a few digits crowd a few buckets, and with thousands of ports
 * taken each bind then scans thousands of names. Four mixed bytes at the end spread them.
 */
int scif_port_name(struct sockaddr_un *a, uint16_t node, uint16_t pn)
{
	uint32_t mix = ((uint32_t)node << 16 | pn) * 2654435761u;
	int len;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	len = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 5, "bridgeverbs-scif/%08x/%u/%u/",
		       rundir_hash(), node, pn);
	memcpy(a->sun_path + 1 + len, &mix, sizeof(mix));
	return (int)offsetof(struct sockaddr_un, sun_path) + 1 + len + (int)sizeof(mix);
}

/* Bind fd to port pn's name: 0, -EADDRINUSE (taken; fd stays unbound, reusable) or -errno. */
static int try_bind(int fd, uint16_t node, uint16_t pn)
{
	struct sockaddr_un a;
	int len = scif_port_name(&a, node, pn);

	if (bind(fd, (struct sockaddr *)&a, (socklen_t)len))
		return -errno;
	return 0;
}

struct scif_port *scif_port_reserve(uint16_t node, uint16_t pn, int *err)
{
	struct scif_port *p = calloc(1, sizeof(*p));
	int fd, ret = -EADDRINUSE;

	if (!p) {
		*err = ENOMEM;
		return NULL;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		/*
		 * Out of descriptors: SCIF's ENOMEM (no more system resources; the driver needs
		 * none), not ENOSPC, which says every port is taken
		 */
		*err = errno == EMFILE || errno == ENFILE ? ENOMEM : errno;
		free(p);
		return NULL;
	}
	if (pn) {
		ret = try_bind(fd, node, pn);
		if (ret == -EADDRINUSE)
			ret = -EINVAL;	/* SCIF: "the port is already bound" */
	} else {
		for (unsigned int n = SCIF_PORT_RSVD; n <= 0xffff && ret == -EADDRINUSE; n++) {
			ret = try_bind(fd, node, (uint16_t)n);
			pn = (uint16_t)n;
		}
		if (ret == -EADDRINUSE)
			ret = -ENOSPC;
	}
	if (ret) {
		close(fd);
		free(p);
		*err = -ret;
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
