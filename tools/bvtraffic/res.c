// SPDX-License-Identifier: MIT
/*
 * Verbs resources of one end: the device, one registered buffer (a slot per message of a
 * window and QP, an atomic counter per QP, guards around each), one CQ (optionally with a
 * completion channel), an optional SRQ, the QPs, and what the peer must know about them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bvtraffic.h"

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static int open_device(struct bvt *t)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int ret = -1;

	if (!list) {
		fprintf(stderr, "bvtraffic: no RDMA devices: %s\n", strerror(errno));
		return -1;
	}
	for (int i = 0; list[i]; i++)
		if (!t->loc.dev || !strcmp(ibv_get_device_name(list[i]), t->loc.dev)) {
			t->ctx = ibv_open_device(list[i]);
			if (!t->ctx)
				fprintf(stderr, "bvtraffic: cannot open %s: %s\n",
					ibv_get_device_name(list[i]), strerror(errno));
			else
				ret = 0;
			break;
		}
	if (!t->ctx && ret)
		fprintf(stderr, "bvtraffic: no device %s\n", t->loc.dev ? t->loc.dev : "at all");
	ibv_free_device_list(list);
	return t->ctx ? 0 : -1;
}

/* perftest's choice: RoCE v2 with an IPv4-mapped address, else the first valid GID. */
static int pick_gid(struct bvt *t)
{
	int best = -1;

	if (t->loc.gid_index >= 0)
		return t->loc.gid_index;
	for (int i = 0; i < t->port.gid_tbl_len; i++) {
		struct ibv_gid_entry g;

		if (ibv_query_gid_ex(t->ctx, (uint32_t)t->loc.ib_port, (uint32_t)i, &g, 0))
			continue;
		if (best < 0)
			best = i;
		if (g.gid_type == IBV_GID_TYPE_ROCE_V2 && g.gid.raw[10] == 0xff &&
		    g.gid.raw[11] == 0xff)
			return i;
	}
	return best < 0 ? 0 : best;
}

static int make_cq(struct bvt *t)
{
	int cqe = (int)(t->cfg.nqp * (2 * t->cfg.depth + 6));

	if (t->loc.events) {
		t->ch = ibv_create_comp_channel(t->ctx);
		if (!t->ch) {
			fprintf(stderr, "bvtraffic: create_comp_channel: %s\n", strerror(errno));
			return -1;
		}
	}
	t->cq = ibv_create_cq(t->ctx, cqe, NULL, t->ch, 0);
	if (!t->cq) {
		fprintf(stderr, "bvtraffic: create_cq(%d): %s\n", cqe, strerror(errno));
		return -1;
	}
	if (t->ch && ibv_req_notify_cq(t->cq, 0)) {
		fprintf(stderr, "bvtraffic: req_notify_cq: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int make_qps(struct bvt *t)
{
	const struct bvt_cfg *c = &t->cfg;

	if (c->srq) {
		struct ibv_srq_init_attr sa = {
		    .attr = {.max_wr = c->nqp * (c->depth + 2), .max_sge = 1}};

		t->srq = ibv_create_srq(t->pd, &sa);
		if (!t->srq) {
			fprintf(stderr, "bvtraffic: create_srq(%u): %s\n", sa.attr.max_wr,
				strerror(errno));
			return -1;
		}
	}
	for (uint32_t i = 0; i < c->nqp; i++) {
		struct ibv_qp_init_attr ia = {
		    .send_cq = t->cq,
		    .recv_cq = t->cq,
		    .srq = t->srq,
		    .qp_type = c->type,
		    .cap = {.max_send_wr = c->depth + 2,
			    .max_recv_wr = c->depth + 2,
			    .max_send_sge = 1,
			    .max_recv_sge = 1},
		};

		t->qp[i] = ibv_create_qp(t->pd, &ia);
		if (!t->qp[i]) {
			fprintf(stderr, "bvtraffic: create_qp %u: %s\n", i, strerror(errno));
			return -1;
		}
		t->psn[i] = (uint32_t)bvt_mix(c->seed ^ ((uint64_t)getpid() << 20) ^ i) & 0xffffff;
	}
	return 0;
}

int bvt_open(struct bvt *t)
{
	const struct bvt_cfg *c = &t->cfg;
	struct ibv_device_attr da;
	int access = IBV_ACCESS_LOCAL_WRITE;

	if (open_device(t))
		return -1;
	if (ibv_query_device(t->ctx, &da) ||
	    ibv_query_port(t->ctx, (uint8_t)t->loc.ib_port, &t->port)) {
		fprintf(stderr, "bvtraffic: query device/port: %s\n", strerror(errno));
		return -1;
	}
	t->gid_index = pick_gid(t);
	if (ibv_query_gid(t->ctx, (uint8_t)t->loc.ib_port, t->gid_index, &t->gid)) {
		fprintf(stderr, "bvtraffic: query_gid %d: %s\n", t->gid_index, strerror(errno));
		return -1;
	}
	t->rd_atom = (uint32_t)(da.max_qp_rd_atom < 16 ? da.max_qp_rd_atom : 16);
	if (da.max_qp_init_rd_atom < (int)t->rd_atom)
		t->rd_atom = (uint32_t)da.max_qp_init_rd_atom;
	t->pd = ibv_alloc_pd(t->ctx);
	if (!t->pd) {
		fprintf(stderr, "bvtraffic: alloc_pd: %s\n", strerror(errno));
		return -1;
	}
	/* a slot holds the largest message (and a UD receive its GRH); 64-byte aligned */
	t->slot_bytes = align_up(c->max_size + (c->type == IBV_QPT_UD ? BVT_GRH : 0), 8);
	t->slot_stride = align_up(BVT_GUARD + t->slot_bytes + BVT_GUARD, 64);
	t->atom_off = t->slot_stride * c->nqp * c->depth;
	t->buf_len = align_up(t->atom_off + (size_t)c->nqp * 3 * BVT_GUARD, 4096);
	t->buf = aligned_alloc(4096, t->buf_len);
	if (!t->buf) {
		fprintf(stderr, "bvtraffic: cannot allocate %zu bytes\n", t->buf_len);
		return -1;
	}
	memset(t->buf, BVT_FILL, t->buf_len);
	if (c->type != IBV_QPT_UD)
		access |= IBV_ACCESS_REMOTE_WRITE;
	if (c->type == IBV_QPT_RC)
		access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	t->mr = ibv_reg_mr(t->pd, t->buf, t->buf_len, access);
	if (!t->mr) {
		fprintf(stderr, "bvtraffic: reg_mr(%zu): %s\n", t->buf_len, strerror(errno));
		return -1;
	}
	return make_cq(t) || make_qps(t) ? -1 : 0;
}

void bvt_info_format(struct bvt *t, char *buf, size_t len)
{
	char gid[33];
	size_t n;

	for (int i = 0; i < 16; i++)
		snprintf(gid + 2 * i, 3, "%02x", t->gid.raw[i]);
	n = (size_t)snprintf(buf, len,
			     "INFO lid=%u gid=%s mtu=%u addr=%" PRIx64 " len=%zx rkey=%x "
			     "rdatom=%u qpn=",
			     t->port.lid, gid, t->port.active_mtu, (uint64_t)(uintptr_t)t->buf,
			     t->buf_len, t->mr->rkey, t->rd_atom);
	for (uint32_t i = 0; i < t->cfg.nqp && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%x", i ? "," : "", t->qp[i]->qp_num);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, " psn=");
	for (uint32_t i = 0; i < t->cfg.nqp && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%x", i ? "," : "", t->psn[i]);
}

static int parse_list(const char *s, const char *tag, uint32_t *v, uint32_t n)
{
	const char *p = strstr(s, tag);
	char *end;

	if (!p)
		return -1;
	p += strlen(tag);
	for (uint32_t i = 0; i < n; i++) {
		v[i] = (uint32_t)strtoul(p, &end, 16);
		if (end == p || (i + 1 < n && *end != ','))
			return -1;
		p = end + 1;
	}
	return 0;
}

int bvt_info_parse(struct bvt *t, const char *line)
{
	struct bvt_peer *p = &t->peer;
	char gid[33];
	unsigned int lid;

	if (sscanf(line,
		   "INFO lid=%u gid=%32s mtu=%u addr=%" SCNx64 " len=%" SCNx64 " rkey=%x rdatom=%u",
		   &lid, gid, &p->mtu, &p->addr, &p->len, &p->rkey, &p->rd_atom) != 7 ||
	    strlen(gid) != 32)
		return -1;
	p->lid = (uint16_t)lid;
	for (int i = 0; i < 16; i++) {
		unsigned int b;

		if (sscanf(gid + 2 * i, "%2x", &b) != 1)
			return -1;
		p->gid.raw[i] = (uint8_t)b;
	}
	return parse_list(line, " qpn=", p->qpn, t->cfg.nqp) ||
		       parse_list(line, " psn=", p->psn, t->cfg.nqp)
		   ? -1
		   : 0;
}

static void fill_ah(struct bvt *t, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->port_num = (uint8_t)t->loc.ib_port;
	ah->dlid = t->peer.lid;
	ah->is_global =
	    t->port.link_layer == IBV_LINK_LAYER_ETHERNET || t->peer.gid.global.interface_id != 0;
	ah->grh.dgid = t->peer.gid;
	ah->grh.sgid_index = (uint8_t)t->gid_index;
	ah->grh.hop_limit = 64;
}

static int to_rts(struct bvt *t, uint32_t i)
{
	const struct bvt_cfg *c = &t->cfg;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = (uint8_t)t->loc.ib_port};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	uint32_t mtu = c->mtu				  ? c->mtu
		       : t->port.active_mtu < t->peer.mtu ? t->port.active_mtu
							  : t->peer.mtu;

	if (c->type == IBV_QPT_UD) {
		a.qkey = BVT_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (c->type == IBV_QPT_RC)
			a.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(t->qp[i], &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (c->type != IBV_QPT_UD) {
		a.path_mtu = (enum ibv_mtu)mtu;
		a.dest_qp_num = t->peer.qpn[i];
		a.rq_psn = t->peer.psn[i];
		fill_ah(t, &a.ah_attr);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (c->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = (uint8_t)t->rd_atom;
			a.min_rnr_timer = 12;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(t->qp[i], &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = t->psn[i];
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (c->type == IBV_QPT_RC) {
		a.timeout = c->timeout;
		a.retry_cnt = c->retry_cnt;
		a.rnr_retry = c->rnr_retry;
		a.max_rd_atomic =
		    (uint8_t)(t->rd_atom < t->peer.rd_atom ? t->rd_atom : t->peer.rd_atom);
		mask |=
		    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(t->qp[i], &a, mask);
}

int bvt_connect_qps(struct bvt *t)
{
	for (uint32_t i = 0; i < t->cfg.nqp; i++)
		if (to_rts(t, i)) {
			fprintf(stderr, "bvtraffic: QP %u (0x%x) to RTS: %s\n", i, t->qp[i]->qp_num,
				strerror(errno));
			return -1;
		}
	if (t->cfg.type == IBV_QPT_UD) {
		struct ibv_ah_attr ah;

		fill_ah(t, &ah);
		t->ah = ibv_create_ah(t->pd, &ah);
		if (!t->ah) {
			fprintf(stderr, "bvtraffic: create_ah: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

void bvt_close(struct bvt *t)
{
	if (t->ah)
		ibv_destroy_ah(t->ah);
	for (uint32_t i = 0; i < BVT_MAX_QP; i++)
		if (t->qp[i] && ibv_destroy_qp(t->qp[i]))
			fprintf(stderr, "bvtraffic: destroy_qp: %s\n", strerror(errno));
	if (t->srq)
		ibv_destroy_srq(t->srq);
	if (t->mr)
		ibv_dereg_mr(t->mr);
	if (t->cq)
		ibv_destroy_cq(t->cq);
	if (t->ch)
		ibv_destroy_comp_channel(t->ch);
	if (t->pd)
		ibv_dealloc_pd(t->pd);
	if (t->ctx)
		ibv_close_device(t->ctx);
	free(t->buf);
}
