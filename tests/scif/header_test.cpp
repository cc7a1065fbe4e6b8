// SPDX-License-Identifier: MIT
// scif.h in C++11: it compiles warning-free with -pedantic, its names keep C linkage, and its
// types and constants are Intel's (the values programs were built with).
#include <scif.h>

#include <cstdio>
#include <type_traits>

static_assert(std::is_same<scif_epd_t, int>::value, "scif_epd_t is a descriptor");
static_assert(sizeof(struct scif_portID) == 4 && sizeof(portID_t) == 4, "scif_portID");
static_assert(std::is_same<struct portID, struct scif_portID>::value, "portID");
static_assert(sizeof(struct scif_pollepd) == 8, "scif_pollepd");
static_assert(SCIF_ACCEPT_SYNC == 1 && SCIF_SEND_BLOCK == 1 && SCIF_RECV_BLOCK == 1 &&
		      ACCEPT_SYNC == 1 && SEND_BLOCK == 1 && RECV_BLOCK == 1,
	      "blocking flags");
static_assert(SCIF_PROT_READ == 1 && SCIF_PROT_WRITE == 2, "protection");
static_assert(SCIF_MAP_FIXED == 0x10 && SCIF_MAP_KERNEL == 0x20, "map flags");
static_assert(SCIF_FENCE_INIT_SELF == 1 && SCIF_FENCE_INIT_PEER == 2 &&
		      SCIF_FENCE_RAS_SELF == 4 && SCIF_FENCE_RAS_PEER == 8 &&
		      SCIF_SIGNAL_LOCAL == 0x10 && SCIF_SIGNAL_REMOTE == 0x20,
	      "fence flags");
static_assert(SCIF_RMA_USECPU == 1 && SCIF_RMA_USECACHE == 2 && SCIF_RMA_SYNC == 4 &&
		      SCIF_RMA_ORDERED == 8,
	      "rma flags");
static_assert(SCIF_POLLIN == POLLIN && SCIF_POLLOUT == POLLOUT && SCIF_POLLERR == POLLERR &&
		      SCIF_POLLHUP == POLLHUP && SCIF_POLLNVAL == POLLNVAL,
	      "poll events");
static_assert(SCIF_ADMIN_PORT_END == 1024 && SCIF_PORT_RSVD == 1088 && SCIF_COI_PORT_0 == 40 &&
		      SCIF_OFED_PORT_9 == 69 && MPSSD_CRED == 162 && SCIF_MYO_PORT_0 == 1025 &&
		      SCIF_ST_PORT_9 == 1053 && SCIF_COSM_LISTEN_PORT == 201,
	      "ports");

// Every function, with Intel's signature.
static scif_epd_t (*const p_open)(void) = scif_open;
static int (*const p_close)(scif_epd_t) = scif_close;
static int (*const p_bind)(scif_epd_t, uint16_t) = scif_bind;
static int (*const p_listen)(scif_epd_t, int) = scif_listen;
static int (*const p_connect)(scif_epd_t, struct scif_portID *) = scif_connect;
static int (*const p_accept)(scif_epd_t, struct scif_portID *, scif_epd_t *, int) = scif_accept;
static int (*const p_send)(scif_epd_t, void *, int, int) = scif_send;
static int (*const p_recv)(scif_epd_t, void *, int, int) = scif_recv;
static off_t (*const p_register)(scif_epd_t, void *, size_t, off_t, int, int) = scif_register;
static int (*const p_unregister)(scif_epd_t, off_t, size_t) = scif_unregister;
static int (*const p_readfrom)(scif_epd_t, off_t, size_t, off_t, int) = scif_readfrom;
static int (*const p_writeto)(scif_epd_t, off_t, size_t, off_t, int) = scif_writeto;
static int (*const p_vreadfrom)(scif_epd_t, void *, size_t, off_t, int) = scif_vreadfrom;
static int (*const p_vwriteto)(scif_epd_t, void *, size_t, off_t, int) = scif_vwriteto;
static int (*const p_fence_mark)(scif_epd_t, int, int *) = scif_fence_mark;
static int (*const p_fence_wait)(scif_epd_t, int) = scif_fence_wait;
static int (*const p_fence_signal)(scif_epd_t, off_t, uint64_t, off_t, uint64_t, int) =
	scif_fence_signal;
static void *(*const p_mmap)(void *, size_t, int, int, scif_epd_t, off_t) = scif_mmap;
static int (*const p_munmap)(void *, size_t) = scif_munmap;
static int (*const p_get_nodeIDs)(uint16_t *, int, uint16_t *) = scif_get_nodeIDs;
static int (*const p_poll)(struct scif_pollepd *, unsigned int, long) = scif_poll;
static int (*const p_get_fd)(scif_epd_t) = scif_get_fd;

int main()
{
	const void *all[] = { (const void *)p_open,	  (const void *)p_close,
			      (const void *)p_bind,	  (const void *)p_listen,
			      (const void *)p_connect,	  (const void *)p_accept,
			      (const void *)p_send,	  (const void *)p_recv,
			      (const void *)p_register,	  (const void *)p_unregister,
			      (const void *)p_readfrom,	  (const void *)p_writeto,
			      (const void *)p_vreadfrom,  (const void *)p_vwriteto,
			      (const void *)p_fence_mark, (const void *)p_fence_wait,
			      (const void *)p_fence_signal, (const void *)p_mmap,
			      (const void *)p_munmap,	  (const void *)p_get_nodeIDs,
			      (const void *)p_poll,	  (const void *)p_get_fd };

	for (const void *f : all)
		if (!f)
			return 1;
	if (scif_get_fd(42) != 42 || SCIF_OPEN_FAILED != -1 || SCIF_REGISTER_FAILED != (off_t)-1 ||
	    SCIF_MMAP_FAILED != (void *)-1)
		return 1;
	std::printf("PASS\n");
	return 0;
}
