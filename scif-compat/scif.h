/* SPDX-License-Identifier: MIT */
/*
 * scif.h - the SCIF user API (Symmetric Communication Interface), as Intel's MPSS user library
 * libscif declares it: the same functions, types, constants and macros, so that programs written
 * for Intel's library build against bridgeverbs' libscif.so.0 unchanged ("#include <scif.h>",
 * "-lscif"). The implementation runs SCIF on RDMA verbs: see docs/scif.md for the behaviour,
 * the errors each call returns, and where it differs from a Xeon Phi.
 *
 * The values below are the ABI: they equal Intel's (and the Linux kernel's include/linux/scif.h
 * for the subset it has), and SCIF_MAP_FIXED, SCIF_PROT_* and SCIF_POLL* equal the mmap(2)
 * and poll(2) values they stand for.
 */
#ifndef __SCIF_H__
#define __SCIF_H__

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/select.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of scif_accept(), scif_send() and scif_recv(). */
#define SCIF_ACCEPT_SYNC	1
#define SCIF_SEND_BLOCK		1
#define SCIF_RECV_BLOCK		1

/* The names of the first SCIF releases, still used by older programs. */
#define ACCEPT_SYNC		SCIF_ACCEPT_SYNC
#define SEND_BLOCK		SCIF_SEND_BLOCK
#define RECV_BLOCK		SCIF_RECV_BLOCK

/* Window protection (scif_register, scif_mmap). */
enum {
	SCIF_PROT_READ = (1 << 0),
	SCIF_PROT_WRITE = (1 << 1)
};

/* Mapping flags (scif_register, scif_mmap). SCIF_MAP_KERNEL is for kernel clients only. */
enum {
	SCIF_MAP_FIXED = 0x10,
	SCIF_MAP_KERNEL = 0x20
};

/* Fence flags (scif_fence_mark, scif_fence_signal). */
enum {
	SCIF_FENCE_INIT_SELF = (1 << 0),
	SCIF_FENCE_INIT_PEER = (1 << 1)
};

/* Declared by Intel's header, accepted by no implementation (EINVAL). */
enum {
	SCIF_FENCE_RAS_SELF = (1 << 2),
	SCIF_FENCE_RAS_PEER = (1 << 3)
};

enum {
	SCIF_SIGNAL_LOCAL = (1 << 4),
	SCIF_SIGNAL_REMOTE = (1 << 5)
};

/* RMA flags (scif_readfrom, scif_writeto, scif_vreadfrom, scif_vwriteto). */
#define SCIF_RMA_USECPU		1
#define SCIF_RMA_USECACHE	(1 << 1)
#define SCIF_RMA_SYNC		(1 << 2)
#define SCIF_RMA_ORDERED	(1 << 3)

/* scif_poll() events: those of poll(2). */
#define SCIF_POLLIN		POLLIN
#define SCIF_POLLOUT		POLLOUT
#define SCIF_POLLERR		POLLERR
#define SCIF_POLLHUP		POLLHUP
#define SCIF_POLLNVAL		POLLNVAL

/* Well-known ports of the MPSS components (all below SCIF_ADMIN_PORT_END but MYO and ST). */
#define SCIF_COI_PORT_0		40
#define SCIF_COI_PORT_1		41
#define SCIF_COI_PORT_2		42
#define SCIF_COI_PORT_3		43
#define SCIF_COI_PORT_4		44
#define SCIF_COI_PORT_5		45
#define SCIF_COI_PORT_6		46
#define SCIF_COI_PORT_7		47
#define SCIF_COI_PORT_8		48
#define SCIF_COI_PORT_9		49

#define SCIF_OFED_PORT_0	60
#define SCIF_OFED_PORT_1	61
#define SCIF_OFED_PORT_2	62
#define SCIF_OFED_PORT_3	63
#define SCIF_OFED_PORT_4	64
#define SCIF_OFED_PORT_5	65
#define SCIF_OFED_PORT_6	66
#define SCIF_OFED_PORT_7	67
#define SCIF_OFED_PORT_8	68
#define SCIF_OFED_PORT_9	69

#define SCIF_NETDEV_PORT_0	80
#define SCIF_NETDEV_PORT_1	81
#define SCIF_NETDEV_PORT_2	82
#define SCIF_NETDEV_PORT_3	83
#define SCIF_NETDEV_PORT_4	84
#define SCIF_NETDEV_PORT_5	85
#define SCIF_NETDEV_PORT_6	86
#define SCIF_NETDEV_PORT_7	87
#define SCIF_NETDEV_PORT_8	88
#define SCIF_NETDEV_PORT_9	89

#define SCIF_RAS_PORT_0		100
#define SCIF_RAS_PORT_1		101
#define SCIF_RAS_PORT_2		102
#define SCIF_RAS_PORT_3		103
#define SCIF_RAS_PORT_4		104
#define SCIF_RAS_PORT_5		105
#define SCIF_RAS_PORT_6		106
#define SCIF_RAS_PORT_7		107
#define SCIF_RAS_PORT_8		108
#define SCIF_RAS_PORT_9		109

#define SCIF_PM_PORT_0		120
#define SCIF_PM_PORT_1		121
#define SCIF_PM_PORT_2		122
#define SCIF_PM_PORT_3		123
#define SCIF_PM_PORT_4		124
#define SCIF_PM_PORT_5		125
#define SCIF_PM_PORT_6		126
#define SCIF_PM_PORT_7		127
#define SCIF_PM_PORT_8		128
#define SCIF_PM_PORT_9		129

#define SCIF_BT_PORT_0		130
#define SCIF_BT_PORT_1		131
#define SCIF_BT_PORT_2		132
#define SCIF_BT_PORT_3		133
#define SCIF_BT_PORT_4		134
#define SCIF_BT_PORT_5		135
#define SCIF_BT_PORT_6		136
#define SCIF_BT_PORT_7		137
#define SCIF_BT_PORT_8		138
#define SCIF_BT_PORT_9		139

#define MPSSD_MONRECV		160
#define MIC_NOTIFY		161
#define MPSSD_CRED		162
#define MPSSD_MONSEND		163
#define MPSSD_MICCTRL		164
#define MPSSD_RESV5		165
#define MPSSD_RESV6		166
#define MPSSD_RESV7		167
#define MPSSD_RESV8		168
#define MPSSD_RESV9		169

#define SCIF_COSM_LISTEN_PORT	201

/* Ports below this one can be bound only with CAP_SYS_ADMIN. */
#define SCIF_ADMIN_PORT_END	1024

#define SCIF_MYO_PORT_0		1025
#define SCIF_MYO_PORT_1		1026
#define SCIF_MYO_PORT_2		1027
#define SCIF_MYO_PORT_3		1028
#define SCIF_MYO_PORT_4		1029
#define SCIF_MYO_PORT_5		1030
#define SCIF_MYO_PORT_6		1031
#define SCIF_MYO_PORT_7		1032
#define SCIF_MYO_PORT_8		1033
#define SCIF_MYO_PORT_9		1034

#define SCIF_ST_PORT_0		1044
#define SCIF_ST_PORT_1		1045
#define SCIF_ST_PORT_2		1046
#define SCIF_ST_PORT_3		1047
#define SCIF_ST_PORT_4		1048
#define SCIF_ST_PORT_5		1049
#define SCIF_ST_PORT_6		1050
#define SCIF_ST_PORT_7		1051
#define SCIF_ST_PORT_8		1052
#define SCIF_ST_PORT_9		1053

/* End of the reserved ports: scif_bind(epd, 0) assigns ports from here up. */
#define SCIF_PORT_RSVD		1088

/* An endpoint descriptor is a file descriptor: poll(2), select(2), epoll(7), fcntl(2) work on it. */
typedef int scif_epd_t;

struct scif_pollepd {
	scif_epd_t epd;		/* endpoint descriptor */
	short events;		/* requested events */
	short revents;		/* returned events */
};

#define SCIF_OPEN_FAILED	((scif_epd_t)-1)
#define SCIF_REGISTER_FAILED	((off_t)-1)
#define SCIF_MMAP_FAILED	((void *)-1)

/* A port of a node: the address of an endpoint. */
struct scif_portID {
	uint16_t node;		/* the node the port is on */
	uint16_t port;		/* the port number on that node */
};

/* The names of the first SCIF releases (COI still uses portID_t). */
#define portID scif_portID
typedef struct portID portID_t;

/* Endpoints: create, bind to a port, listen, connect, accept, close. */
scif_epd_t scif_open(void);
int scif_close(scif_epd_t epd);
int scif_bind(scif_epd_t epd, uint16_t pn);
int scif_listen(scif_epd_t epd, int backlog);
int scif_connect(scif_epd_t epd, struct scif_portID *dst);
int scif_accept(scif_epd_t epd, struct scif_portID *peer, scif_epd_t *newepd, int flags);

/* Messaging: a byte stream between the two endpoints of a connection. */
int scif_send(scif_epd_t epd, void *msg, int len, int flags);
int scif_recv(scif_epd_t epd, void *msg, int len, int flags);

/* Registered windows in the endpoint's registered address space, and RMA between windows. */
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset, int prot_flags,
		    int map_flags);
int scif_unregister(scif_epd_t epd, off_t offset, size_t len);
int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset, int rma_flags);
int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset, int rma_flags);
int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t offset, int rma_flags);
int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t offset, int rma_flags);

/* Ordering of RMAs. */
int scif_fence_mark(scif_epd_t epd, int flags, int *mark);
int scif_fence_wait(scif_epd_t epd, int mark);
int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval, off_t roff, uint64_t rval,
		      int flags);

/* The peer's registered pages mapped for loads and stores. */
void *scif_mmap(void *addr, size_t len, int prot_flags, int map_flags, scif_epd_t epd,
		off_t offset);
int scif_munmap(void *addr, size_t len);

/* Nodes, readiness, descriptors. */
int scif_get_nodeIDs(uint16_t *nodes, int len, uint16_t *self);
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout);
int scif_get_fd(scif_epd_t epd);

#ifdef __cplusplus
}
#endif

#endif /* __SCIF_H__ */
