/* SPDX-License-Identifier: MIT */
/*
 * The daemon <-> provider control protocol: what a bridgeverbs daemon (cx4d, ntbd) and the
 * provider in an application say to each other over the device's Unix SOCK_SEQPACKET socket.
 * It plays the role of the uverbs write/ioctl ABI of a kernel driver.
 *
 * One request gets exactly one response, in order; descriptors travel with SCM_RIGHTS (at most
 * BV_MSG_MAX_FDS per message). Every message starts with struct bv_msg_hdr; the payload of the
 * request/response structures follows. All fields are host-endian fixed-width: both ends run on
 * the same machine. A daemon answers a request whose version it does not speak with
 * status = EPROTO and a bv_hello_rsp naming its own version, so a mismatched provider can say so.
 *
 * Ops 0x0001..0x00ff are common to every device kind; each kind owns a range above
 * (cx4: 0x0100.., ntb: 0x0200..) declared in its own header; the connection manager, which
 * every kind's daemon runs, has 0x0300.. (bv_cm_proto.h).
 */
#ifndef BV_PROTO_H
#define BV_PROTO_H

#include <stdint.h>

#define BV_PROTO_MAGIC		0x31505642u /* "BVP1" little-endian */
#define BV_PROTO_VERSION	1u
#define BV_MSG_MAX		65536	/* header + payload */
#define BV_MSG_MAX_FDS		4

struct bv_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t op;
	uint32_t seq;		/* request id, echoed in the response */
	int32_t status;		/* response: 0 or a positive errno */
	uint32_t len;		/* payload bytes after this header */
	uint32_t nfds;		/* descriptors attached with SCM_RIGHTS */
};
_Static_assert(sizeof(struct bv_msg_hdr) == 24, "bv_msg_hdr");

#define BV_MSG_PAYLOAD_MAX	(BV_MSG_MAX - sizeof(struct bv_msg_hdr))

enum bv_op {
	BV_OP_HELLO = 0x0001,		/* first request of every connection */
	BV_OP_QUERY_DEVICE = 0x0002,
	BV_OP_QUERY_PORT = 0x0003,
	BV_OP_STATUS = 0x0004,		/* bvctl status: a text report */
	BV_OP_CX4_BASE = 0x0100,
	BV_OP_NTB_BASE = 0x0200,
	BV_OP_CM_BASE = 0x0300,
};

enum bv_client_role {
	BV_ROLE_VERBS = 1,	/* a provider instance (one per ibv_context) */
	BV_ROLE_ADMIN = 2,	/* bvctl: may only query and ask for status */
	BV_ROLE_CM = 3,		/* librdmacm-plugin: the connection manager's ops (bv_cm_proto.h) */
};

#define BV_NAME_MAX	64

struct bv_hello_req {
	uint32_t role;		/* enum bv_client_role */
	uint32_t pid;
	char comm[16];		/* the client's program name, for bvctl status */
	char kind[16];		/* device kind the provider expects ("cx4", "ntb") */
};

/* Response carries one fd for BV_ROLE_VERBS: the async event socket (16-byte records). */
struct bv_hello_rsp {
	uint32_t version;	/* the daemon's protocol version */
	uint32_t client_id;
	char kind[16];
	char ibdev[BV_NAME_MAX];
	uint32_t num_comp_vectors;
	uint32_t phys_port_cnt;
};

/* ibv_device_attr in fixed-width form. */
struct bv_device_attr {
	char fw_ver[64];
	uint64_t node_guid;
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int32_t max_qp;
	int32_t max_qp_wr;
	uint32_t device_cap_flags;
	int32_t max_sge;
	int32_t max_sge_rd;
	int32_t max_cq;
	int32_t max_cqe;
	int32_t max_mr;
	int32_t max_pd;
	int32_t max_qp_rd_atom;
	int32_t max_ee_rd_atom;
	int32_t max_res_rd_atom;
	int32_t max_qp_init_rd_atom;
	int32_t max_ee_init_rd_atom;
	uint32_t atomic_cap;		/* enum ibv_atomic_cap */
	int32_t max_ee;
	int32_t max_rdd;
	int32_t max_mw;
	int32_t max_raw_ipv6_qp;
	int32_t max_raw_ethy_qp;
	int32_t max_mcast_grp;
	int32_t max_mcast_qp_attach;
	int32_t max_total_mcast_qp_attach;
	int32_t max_ah;
	int32_t max_fmr;
	int32_t max_map_per_fmr;
	int32_t max_srq;
	int32_t max_srq_wr;
	int32_t max_srq_sge;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint8_t phys_port_cnt;
	/* ibv_device_attr_ex extensions */
	uint64_t device_cap_flags_ex;
	uint64_t completion_timestamp_mask;
	uint64_t hca_core_clock;	/* kHz */
	uint32_t max_inline_data;	/* not in ibv_device_attr: what create_qp accepts */
	uint32_t reserved;
};

struct bv_query_port_req {
	uint32_t port_num;
};

/* ibv_port_attr in fixed-width form. */
struct bv_port_attr {
	uint32_t state;			/* enum ibv_port_state */
	uint32_t max_mtu;		/* enum ibv_mtu */
	uint32_t active_mtu;
	int32_t gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint16_t port_cap_flags2;
	uint16_t reserved;
};

/* Response to BV_OP_STATUS: NUL-terminated text (the payload). */

#endif /* BV_PROTO_H */
