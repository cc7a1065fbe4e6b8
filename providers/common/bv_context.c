// SPDX-License-Identifier: MIT
/* A context's connection to its daemon, and the verbs every bridgeverbs device answers alike. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bv_provider.h"

static int connect_daemon(struct bv_device *dev)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, err;

	if (strlen(dev->sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, dev->sock_path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		err = errno;
		close(s);
		return -err;
	}
	return s;
}

int bv_call(struct bv_context *ctx, struct bv_call *call)
{
	int ret;

	pthread_mutex_lock(&ctx->conn.lock);
	ret = bv_msg_call(ctx->conn.sock, &ctx->conn.seq, call);
	pthread_mutex_unlock(&ctx->conn.lock);
	if (ret < 0) {
		struct bv_device *dev = to_bv_device(ctx->vctx.context.device);

		if (ret == -EPIPE || ret == -ECONNRESET)
			fprintf(stderr, "bridgeverbs: %s: the device daemon %s has gone away\n",
				dev->ibdev, dev->daemon);
		else if (ret == -ETIMEDOUT)
			fprintf(stderr, "bridgeverbs: %s: %s did not answer in %d s\n",
				dev->ibdev, dev->daemon, BV_CALL_TIMEOUT_MS / 1000);
		return ret == -EPIPE || ret == -ECONNRESET ? ENODEV : -ret;
	}
	return ret;
}

static int hello(struct bv_context *ctx, struct bv_device *dev, int *async_fd)
{
	struct bv_hello_req req = { .role = BV_ROLE_VERBS, .pid = getpid() };
	struct bv_hello_rsp rsp = { 0 };
	int fds[1] = { -1 };
	struct bv_call call = { .op = BV_OP_HELLO, .req = &req, .req_len = sizeof(req),
				.rsp = &rsp, .rsp_max = sizeof(rsp), .rfds = fds, .nrfds = 1 };
	FILE *f = fopen("/proc/self/comm", "re");
	int ret;

	if (f) {
		if (fgets(req.comm, sizeof(req.comm), f))
			req.comm[strcspn(req.comm, "\n")] = 0;
		fclose(f);
	}
	snprintf(req.kind, sizeof(req.kind), "%s", dev->kind);
	ret = bv_msg_call(ctx->conn.sock, &ctx->conn.seq, &call);
	if (ret == EPROTO) {
		fprintf(stderr,
			"bridgeverbs: %s: %s speaks protocol version %u, this provider %u; "
			"install matching bridgeverbs providers and daemons\n",
			dev->ibdev, dev->daemon, rsp.version, BV_PROTO_VERSION);
		return EPROTO;
	}
	if (ret) {
		fprintf(stderr, "bridgeverbs: %s: %s refused the connection: %s\n", dev->ibdev,
			dev->daemon, strerror(ret < 0 ? -ret : ret));
		return ret < 0 ? -ret : ret;
	}
	if (call.nrfds != 1) {
		fprintf(stderr, "bridgeverbs: %s: %s sent no async event channel\n", dev->ibdev,
			dev->daemon);
		return EPROTO;
	}
	ctx->conn.client_id = rsp.client_id;
	ctx->vctx.context.num_comp_vectors = rsp.num_comp_vectors ? rsp.num_comp_vectors : 1;
	*async_fd = fds[0];
	return 0;
}

static int fetch_device_attr(struct bv_context *ctx)
{
	struct bv_call call = { .op = BV_OP_QUERY_DEVICE, .rsp = &ctx->attr,
				.rsp_max = sizeof(ctx->attr) };
	int ret = bv_call(ctx, &call);

	if (!ret && call.rsp_len != sizeof(ctx->attr))
		ret = EPROTO;
	return ret;
}

static const struct verbs_context_ops bv_common_ops = {
	.query_device_ex = bv_query_device_ex,
	.query_port = bv_query_port,
};

struct bv_context *bv_open_context(struct ibv_device *ibdev, int cmd_fd, size_t ctx_size)
{
	struct bv_device *dev = to_bv_device(ibdev);
	struct bv_context *ctx;
	int sock, ro_fd, async_fd = -1, err;

	/* offsetof(struct bv_context, vctx) == 0: the verbs_context sits at the start. */
	ctx = bv_verbs_init_and_alloc_context(ibdev, cmd_fd, ctx_size, NULL, 0);
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->conn.lock, NULL);
	ctx->conn.sock = -1;
	bv_chan_init(&ctx->chans);

	sock = connect_daemon(dev);
	if (sock == -EACCES) {
		fprintf(stderr,
			"bridgeverbs: cannot open %s: no permission on its daemon's socket %s "
			"(its socket_group, bridgeverbs.conf(5))\n", dev->ibdev, dev->sock_path);
		err = EACCES;
		goto fail;
	}
	if (sock < 0) {
		fprintf(stderr,
			"bridgeverbs: cannot open %s: its daemon %s is not running (%s: %s); "
			"start it with 'bvctl up'\n",
			dev->ibdev, dev->daemon, dev->sock_path, strerror(-sock));
		err = ENODEV;
		goto fail;
	}
	ctx->conn.sock = sock;
	err = hello(ctx, dev, &async_fd);
	if (err)
		goto fail;
	err = bv_async_start(ctx, async_fd);
	if (err) {
		close(async_fd);
		goto fail;
	}
	err = fetch_device_attr(ctx);
	if (err)
		goto fail;

	/*
	 * libibverbs opened /dev/infiniband/uverbsN (-> /dev/null) read-write. A read-only fd
	 * makes the kernel-ABI fallbacks fail cleanly: GID/pkey queries get ENOTTY and read sysfs,
	 * ibv_create_comp_channel's write gets EBADF instead of "succeeding" with garbage.
	 */
	ro_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ro_fd < 0) {
		err = errno;
		goto fail;
	}
	close(ctx->vctx.context.cmd_fd);
	ctx->vctx.context.cmd_fd = ro_fd;
	bv_verbs_set_ops(&ctx->vctx, &bv_common_ops);
	return ctx;

fail:
	bv_close_context(ctx);
	errno = err;
	return NULL;
}

void bv_set_ops(struct bv_context *ctx, const struct verbs_context_ops *ops)
{
	bv_verbs_set_ops(&ctx->vctx, ops);
}

void bv_close_context(struct bv_context *ctx)
{
	bv_async_stop(ctx);
	if (ctx->conn.sock >= 0)
		close(ctx->conn.sock);	/* the daemon destroys what we left behind */
	pthread_mutex_destroy(&ctx->conn.lock);
	bv_chan_fini(&ctx->chans);
	bv_verbs_uninit_context(&ctx->vctx);	/* closes cmd_fd and async_fd */
	free(ctx);
}

int bv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
		       struct ibv_device_attr_ex *attr, size_t attr_size)
{
	const struct bv_device_attr *a = &to_bv_context(context)->attr;
	struct ibv_device_attr_ex ex = { 0 };
	struct ibv_device_attr *o = &ex.orig_attr;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(ex.orig_attr))
		return EINVAL;
	snprintf(o->fw_ver, sizeof(o->fw_ver), "%s", a->fw_ver);
	o->node_guid = htobe64(a->node_guid);
	o->sys_image_guid = htobe64(a->sys_image_guid);
	o->max_mr_size = a->max_mr_size;
	o->page_size_cap = a->page_size_cap;
	o->vendor_id = a->vendor_id;
	o->vendor_part_id = a->vendor_part_id;
	o->hw_ver = a->hw_ver;
	o->max_qp = a->max_qp;
	o->max_qp_wr = a->max_qp_wr;
	o->device_cap_flags = a->device_cap_flags;
	o->max_sge = a->max_sge;
	o->max_sge_rd = a->max_sge_rd;
	o->max_cq = a->max_cq;
	o->max_cqe = a->max_cqe;
	o->max_mr = a->max_mr;
	o->max_pd = a->max_pd;
	o->max_qp_rd_atom = a->max_qp_rd_atom;
	o->max_ee_rd_atom = a->max_ee_rd_atom;
	o->max_res_rd_atom = a->max_res_rd_atom;
	o->max_qp_init_rd_atom = a->max_qp_init_rd_atom;
	o->max_ee_init_rd_atom = a->max_ee_init_rd_atom;
	o->atomic_cap = a->atomic_cap;
	o->max_ee = a->max_ee;
	o->max_rdd = a->max_rdd;
	o->max_mw = a->max_mw;
	o->max_raw_ipv6_qp = a->max_raw_ipv6_qp;
	o->max_raw_ethy_qp = a->max_raw_ethy_qp;
	o->max_mcast_grp = a->max_mcast_grp;
	o->max_mcast_qp_attach = a->max_mcast_qp_attach;
	o->max_total_mcast_qp_attach = a->max_total_mcast_qp_attach;
	o->max_ah = a->max_ah;
	o->max_fmr = a->max_fmr;
	o->max_map_per_fmr = a->max_map_per_fmr;
	o->max_srq = a->max_srq;
	o->max_srq_wr = a->max_srq_wr;
	o->max_srq_sge = a->max_srq_sge;
	o->max_pkeys = a->max_pkeys;
	o->local_ca_ack_delay = a->local_ca_ack_delay;
	o->phys_port_cnt = a->phys_port_cnt;
	ex.completion_timestamp_mask = a->completion_timestamp_mask;
	ex.hca_core_clock = a->hca_core_clock;
	ex.device_cap_flags_ex = a->device_cap_flags_ex ? a->device_cap_flags_ex :
							  a->device_cap_flags;
	ex.phys_port_cnt_ex = a->phys_port_cnt;
	/* Older applications pass a shorter struct: write exactly what they asked for. */
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

int bv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr)
{
	struct bv_query_port_req req = { .port_num = port_num };
	struct bv_port_attr a;
	struct bv_call call = { .op = BV_OP_QUERY_PORT, .req = &req, .req_len = sizeof(req),
				.rsp = &a, .rsp_max = sizeof(a) };
	int ret = bv_call(to_bv_context(context), &call);

	if (ret)
		return ret;
	if (call.rsp_len != sizeof(a))
		return EPROTO;
	memset(attr, 0, sizeof(*attr));
	attr->state = a.state;
	attr->max_mtu = a.max_mtu;
	attr->active_mtu = a.active_mtu;
	attr->gid_tbl_len = a.gid_tbl_len;
	attr->port_cap_flags = a.port_cap_flags;
	attr->max_msg_sz = a.max_msg_sz;
	attr->bad_pkey_cntr = a.bad_pkey_cntr;
	attr->qkey_viol_cntr = a.qkey_viol_cntr;
	attr->pkey_tbl_len = a.pkey_tbl_len;
	attr->lid = a.lid;
	attr->sm_lid = a.sm_lid;
	attr->lmc = a.lmc;
	attr->max_vl_num = a.max_vl_num;
	attr->sm_sl = a.sm_sl;
	attr->subnet_timeout = a.subnet_timeout;
	attr->init_type_reply = a.init_type_reply;
	attr->active_width = a.active_width;
	attr->active_speed = a.active_speed;
	attr->phys_state = a.phys_state;
	attr->link_layer = a.link_layer;
	attr->flags = a.flags;
	attr->port_cap_flags2 = a.port_cap_flags2;
	return 0;
}
