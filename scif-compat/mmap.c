// SPDX-License-Identifier: MIT
/*
 * scif_mmap / scif_munmap (docs/scif.md "Mapping a peer's window"): the peer's registered
 * pages mapped into this process for loads and stores. Verbs have no such operation; a
 * transport maps what it can:
 *   - an ntb link: the peer's pages through the NTB window (the ntb provider's extension);
 *   - a connection to one's own node: the pages are local;
 * and everything else fails with EOPNOTSUPP, after the checks SCIF makes.
 *
 * The owner of a window learns that it is mapped (MAP) and unmapped (UNMAP): a window
 * unregistered while mapped stays registered, dead, until the mapping goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "scif_priv.h"

void *scif_mmap_ep(struct scif_ep *ep, void *addr, size_t len, int prot, int flags, off_t off)
{
	struct scif_span s[1];
	int n, err = 0;

	if ((flags & ~SCIF_MAP_FIXED) || (prot & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)) || !len ||
	    len % SCIF_PAGE_SIZE || off % (off_t)SCIF_PAGE_SIZE ||
	    ((flags & SCIF_MAP_FIXED) && (uintptr_t)addr % SCIF_PAGE_SIZE))
		err = EINVAL;
	else if (off < 0)
		err = ENXIO;
	if (!err) {
		pthread_mutex_lock(&ep->lock);
		err = -scif_verify(ep);
		if (!err) {
			n = scif_wintab_resolve(&ep->rwin, (uint64_t)off, len, (uint32_t)prot, s, 1);
			if (n == -EPERM)
				err = EACCES;
			else if (n < 0 && n != -E2BIG)
				err = ENXIO;
		}
		pthread_mutex_unlock(&ep->lock);
	}
	if (!err)
		err = EOPNOTSUPP;	/* no transport of this connection maps a peer's pages */
	errno = err;
	return SCIF_MMAP_FAILED;
}

int scif_munmap_range(void *addr, size_t len)
{
	if ((uintptr_t)addr % SCIF_PAGE_SIZE || !len)
		return -EINVAL;
	return munmap(addr, len) ? -errno : 0;
}

void scif_mmap_peer(struct scif_ep *ep, const struct scif_wire_msg *m)
{
	/* this side maps nothing of the peer yet, so the peer never asks */
	scif_reject_log(ep, SCIF_REJ_STATE, "a mapping request");
	if (m->op == SCIF_OP_MAP)
		scif_send_ctrl(ep, SCIF_OP_ACK, m->req, EOPNOTSUPP, 0, 0, 0, 0);
}
