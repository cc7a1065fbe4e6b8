/* SPDX-License-Identifier: MIT */
/*
 * The libibverbs provider ABI, private version 34 (rdma-core v36..v56; Debian 12 ships 44.0).
 *
 * Debian installs no <infiniband/driver.h>, so these are the project's own declarations of the
 * structures libibverbs and a provider exchange, in the exact member order of rdma-core v44
 * libibverbs/driver.h (see ../shared/research/rdma-core.md §1.2). The layout is the contract:
 * every structure carries static asserts on its size and on the offsets libibverbs reads.
 *
 * The private entry points are not linked: providers look them up with dlvsym() under the
 * IBVERBS_PRIVATE_34 version node when they load (providers/common/bv_pabi.c).
 */
#ifndef BV_VERBS_PROVIDER_H
#define BV_VERBS_PROVIDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <infiniband/verbs.h>

#define BV_IBVERBS_PABI		34
#define BV_IBVERBS_PRIVATE	"IBVERBS_PRIVATE_34"
#define BV_PROVIDER_SUFFIX	"-rdmav34.so"

#define IBV_SYSFS_NAME_MAX	64
#define IBV_SYSFS_PATH_MAX	256

/* ccan/list.h list_node: two pointers. */
struct bv_list_node {
	struct bv_list_node *next, *prev;
};

/* driver.h verbs_match_ent::kind */
enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

#define VERBS_MODALIAS_MATCH(_mod_str, _data)                                                      \
	{ .driver_data = (void *)(_data), .u.modalias = (_mod_str), .kind = VERBS_MATCH_MODALIAS }

/* An rdma device found in sysfs (driver.h struct verbs_sysfs_dev; num_ports since v35). */
struct verbs_sysfs_dev {
	struct bv_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device, int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device, int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device; /* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct bv_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* Object containers libibverbs reads through container_of (driver.h:111-190). */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/* driver.h verbs_get_mr(): the ibv_mr is the first member */
static inline struct verbs_mr *verbs_get_mr(struct ibv_mr *mr)
{
	return (struct verbs_mr *)mr;
}

enum { VERBS_QP_XRCD = 1 << 0, VERBS_QP_EX = 1 << 1 };

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct ibv_ece;
struct ibv_ops_wr;

/*
 * Every op a provider can supply, sorted alphabetically as in driver.h. A NULL op keeps
 * libibverbs' dummy, which fails with EOPNOTSUPP. 76 members at PABI 34 (v36..v56).
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			 struct ibv_sge *sg_list, uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context, struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context, struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel, int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context, uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context, uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context, struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context, struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters, uint64_t *counters_value,
			     uint32_t ncounters, uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
				    size_t length, unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t length,
					uint64_t iova, int fd, int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
				 int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
			size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* The private entry points (dlvsym'd under IBVERBS_PRIVATE_34). */
typedef void (*verbs_register_driver_fn)(const struct verbs_device_ops *ops);
typedef void *(*verbs_init_and_alloc_context_fn)(struct ibv_device *device, int cmd_fd,
						 size_t alloc_size,
						 struct verbs_context *context_offset,
						 uint32_t driver_id);
typedef void (*verbs_uninit_context_fn)(struct verbs_context *context);
typedef void (*verbs_set_ops_fn)(struct verbs_context *vctx, const struct verbs_context_ops *ops);

/* include/rdma/ib_user_verbs.h: what ibv_get_cq_event / ibv_get_async_event read(). */
struct bv_comp_event_desc {
	uint64_t cq_handle;
};

struct bv_async_event_desc {
	uint64_t element;
	uint32_t event_type;
	uint32_t reserved;
};

static inline struct verbs_device *bv_verbs_get_device(const struct ibv_device *dev)
{
	return (struct verbs_device *)dev;
}

/* ---- layout checks (x86_64 / LP64; values computed from driver.h v44) ---- */
#if defined(__LP64__)
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent");
_Static_assert(offsetof(struct verbs_match_ent, kind) == 20, "verbs_match_ent.kind");
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36, "sysfs_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_cdev) == 104, "sysfs_cdev");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112, "ibdev_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176, "ibdev_path");
_Static_assert(offsetof(struct verbs_sysfs_dev, modalias) == 432, "modalias");
_Static_assert(offsetof(struct verbs_sysfs_dev, node_guid) == 944, "node_guid");
_Static_assert(offsetof(struct verbs_sysfs_dev, num_ports) == 964, "num_ports");
_Static_assert(offsetof(struct verbs_sysfs_dev, time_created) == 976, "time_created");
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
_Static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56, "alloc_device");
_Static_assert(sizeof(struct ibv_device) == 664, "ibv_device");
_Static_assert(offsetof(struct verbs_device, ops) == 664, "verbs_device.ops");
_Static_assert(offsetof(struct verbs_device, sysfs) == 696, "verbs_device.sysfs");
_Static_assert(sizeof(struct verbs_device) == 712, "verbs_device");
_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *), "76 ops at PABI 34");
_Static_assert(offsetof(struct verbs_context_ops, poll_cq) == 53 * sizeof(void *), "poll_cq");
_Static_assert(offsetof(struct verbs_context_ops, query_device_ex) == 58 * sizeof(void *),
	       "query_device_ex");
_Static_assert(offsetof(struct verbs_context_ops, unimport_pd) == 75 * sizeof(void *), "last");
_Static_assert(offsetof(struct verbs_context, context) + sizeof(struct ibv_context) ==
		       sizeof(struct verbs_context),
	       "ibv_context is the last member of verbs_context");
_Static_assert(offsetof(struct verbs_mr, mr_type) == sizeof(struct ibv_mr), "verbs_mr");
_Static_assert(offsetof(struct verbs_qp, comp_mask) == sizeof(struct ibv_qp_ex), "verbs_qp");
_Static_assert(sizeof(struct bv_async_event_desc) == 16, "async event record");
_Static_assert(sizeof(struct bv_comp_event_desc) == 8, "comp event record");
#endif

#endif /* BV_VERBS_PROVIDER_H */
