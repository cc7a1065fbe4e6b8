// SPDX-License-Identifier: MIT
/* rdma_event_str(): the names librdmacm prints for its events. */
#include <rdma/rdma_cma.h>

#include "rcm.h"

#define NAME(e) [RDMA_CM_EVENT_##e] = "RDMA_CM_EVENT_" #e

static const char *const event_names[] = {
	NAME(ADDR_RESOLVED),	NAME(ADDR_ERROR),	NAME(ROUTE_RESOLVED),
	NAME(ROUTE_ERROR),	NAME(CONNECT_REQUEST),	NAME(CONNECT_RESPONSE),
	NAME(CONNECT_ERROR),	NAME(UNREACHABLE),	NAME(REJECTED),
	NAME(ESTABLISHED),	NAME(DISCONNECTED),	NAME(DEVICE_REMOVAL),
	NAME(MULTICAST_JOIN),	NAME(MULTICAST_ERROR),	NAME(ADDR_CHANGE),
	NAME(TIMEWAIT_EXIT),
};

RCM_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	if ((unsigned int)event < sizeof(event_names) / sizeof(event_names[0]) &&
	    event_names[event])
		return event_names[event];
	return "UNKNOWN EVENT";
}
