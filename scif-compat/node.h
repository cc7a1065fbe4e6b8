/* SPDX-License-Identifier: MIT */
/*
 * SCIF nodes from the bridgeverbs configuration (docs/scif.md "Nodes"). A node is a host; this
 * process is node $BV_SCIF_NODE (bvctl run --scif-node N; default 0, the host). The devices
 * of a node are the [device] sections whose scif_node is that node (default: an ntb end's
 * side, the k-th cx4 device's k); a node reaches
 *   - itself through each of its devices (a connection to one's own address),
 *   - the node at the other end of each of its ntb links,
 *   - every other cx4 port of the configuration through each of its cx4 ports,
 *   - the nodes a device's scif_peers option names ("N=IP,N=IP": hosts this configuration
 *     does not describe, e.g. another network namespace).
 * Routes to a node are ordered by $BV_SCIF_FABRIC (kinds or device names, default "ntb,cx4");
 * devices it does not name are not used. A connect tries them in that order.
 */
#ifndef SCIF_NODE_H
#define SCIF_NODE_H

#include <netinet/in.h>
#include <stdint.h>

#include "bv_config.h"

#define SCIF_MAX_NODE		4095	/* highest node id accepted in a configuration */
#define SCIF_MAX_ROUTES		(2 * BV_MAX_DEVICES)
#define SCIF_MAX_PEERS		8	/* scif_peers entries per device */

struct scif_route {
	uint16_t node;			/* where it leads */
	int dev;			/* index of our device in the configuration */
	int rank;			/* position of the device's kind/name in $BV_SCIF_FABRIC */
	struct in_addr src, dst;	/* rdma_cm addresses: our port, theirs */
};

struct scif_nodes {
	uint16_t self;
	int nlocal;			/* devices of this node */
	int local[BV_MAX_DEVICES];	/* their configuration indexes */
	int nroutes;			/* sorted by node, then rank */
	struct scif_route routes[SCIF_MAX_ROUTES];
};

/* The node a device belongs to, or -1 with a message in err if its options are bad. */
int scif_dev_node(const struct bv_config *cfg, int idx, char *err, size_t errlen);

/*
 * Build the node view of node self from cfg. fabric: the preference list ("ntb,cx4" when NULL).
 * Returns 0, or -1 with a message in err.
 */
int scif_nodes_build(struct scif_nodes *nv, const struct bv_config *cfg, uint16_t self,
		     const char *fabric, char *err, size_t errlen);

/* The nodes reachable (self included), ascending and unique: fills ids[0..max), returns the count. */
int scif_nodes_list(const struct scif_nodes *nv, uint16_t *ids, int max);

/* The preferred route to node, or NULL (not reachable). */
const struct scif_route *scif_nodes_route(const struct scif_nodes *nv, uint16_t node);

/* The route to the same node after r in preference order, or NULL. */
const struct scif_route *scif_nodes_next_route(const struct scif_nodes *nv,
					       const struct scif_route *r);

#endif
