// SPDX-License-Identifier: MIT
/*
 * Data tests: every opcode of every transport moves messages of many sizes, and every byte
 * that arrives is checked, as is every byte just past it (nothing written beyond the message).
 *
 *   RC   SEND, SEND_IMM, inline SEND, RDMA WRITE, WRITE_IMM, inline WRITE, RDMA READ,
 *        compare & swap (hit and miss), fetch & add, receives from an SRQ, a chain of
 *        unsignaled sends completed by the last one, two SGEs on each side, fences (a WRITE
 *        of what a READ / a fetch & add just brought back, posted together)
 *   UC   SEND, SEND_IMM, WRITE, WRITE_IMM
 *   UD   SEND and SEND_IMM up to the path MTU, with the 40-byte GRH in front (its IPv4
 *        header checked field by field)
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "vt.h"

#define SRC_OFF	0
#define DST_OFF	(2u << 20)
#define GUARD	64

static const size_t sizes[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 63, 64, 65, 127, 255, 256, 257, 511, 1023, 1024, 1025,
	2047, 2048, 4095, 4096, 4097, 8191, 8192, 12345, 65535, 65536, 65537, 262144, 1048576,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint32_t seed = 1;

static int post_recv(struct vt_end *e, uint8_t *addr, uint32_t len, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = len ? 1 : 0 }, *bad;

	return e->srq ? ibv_post_srq_recv(e->srq, &wr, &bad) : ibv_post_recv(e->qp, &wr, &bad);
}

static int post(struct vt_end *e, enum ibv_wr_opcode op, uint8_t *laddr, uint32_t len,
		uint64_t raddr, uint32_t rkey, uint32_t imm, int flags, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len, .lkey = e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = len ? 1 : 0,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED | flags,
				  .imm_data = htobe32(imm) }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

static bool expect(struct vt_end *e, uint64_t id, enum ibv_wc_opcode op, struct ibv_wc *wc,
		   const char *what)
{
	int r = vt_poll(e->cq, wc, VT_TIMEOUT_MS);

	if (r != 1) {
		VT_FAIL("%s: %s", what, r ? "poll_cq failed" : "no completion (timeout)");
		return false;
	}
	if (wc->status != IBV_WC_SUCCESS || wc->wr_id != id || wc->opcode != op) {
		VT_FAIL("%s: completion status %s (%d), wr_id %llu (want %llu), opcode %d (want %d)",
			what, ibv_wc_status_str(wc->status), wc->status,
			(unsigned long long)wc->wr_id, (unsigned long long)id, wc->opcode, op);
		return false;
	}
	return true;
}

/* SEND / SEND_IMM (optionally inline) of n bytes from a to b. */
static void t_send(struct vt_end *a, struct vt_end *b, size_t n, bool imm, bool inl)
{
	uint8_t *dst = b->buf + DST_OFF;
	struct ibv_wc wc;
	char what[96];
	uint32_t s = seed++;

	snprintf(what, sizeof(what), "%s%s%s %zu B", b->type == IBV_QPT_RC ? "RC " : "UC ",
		 imm ? "SEND_IMM" : "SEND", inl ? " inline" : "", n);
	memset(dst, 0xee, n + GUARD);
	vt_fill(a->buf + SRC_OFF, n, s);
	if (post_recv(b, dst, (uint32_t)n + GUARD, 2) ||
	    post(a, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, a->buf + SRC_OFF, (uint32_t)n, 0, 0,
		 s, inl ? IBV_SEND_INLINE : 0, 1)) {
		VT_FAIL("%s: post failed", what);
		return;
	}
	if (!expect(a, 1, IBV_WC_SEND, &wc, what) || !expect(b, 2, IBV_WC_RECV, &wc, what))
		return;
	if (wc.byte_len != n)
		VT_FAIL("%s: byte_len %u", what, wc.byte_len);
	if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != imm || (imm && be32toh(wc.imm_data) != s))
		VT_FAIL("%s: immediate flag %d data 0x%x", what, !!(wc.wc_flags & IBV_WC_WITH_IMM),
			be32toh(wc.imm_data));
	if (wc.qp_num != b->qp->qp_num)
		VT_FAIL("%s: qp_num %u", what, wc.qp_num);
	vt_check(dst, n, s, what);
	vt_check_const(dst + n, GUARD, 0xee, what);
}

static void t_write(struct vt_end *a, struct vt_end *b, size_t n, bool imm, bool inl)
{
	uint8_t *dst = b->buf + DST_OFF;
	struct ibv_wc wc;
	char what[96];
	uint32_t s = seed++;

	snprintf(what, sizeof(what), "%s%s%s %zu B", b->type == IBV_QPT_RC ? "RC " : "UC ",
		 imm ? "WRITE_IMM" : "WRITE", inl ? " inline" : "", n);
	memset(dst, 0xee, n + GUARD);
	vt_fill(a->buf + SRC_OFF, n, s);
	if ((imm && post_recv(b, NULL, 0, 4)) ||
	    post(a, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE, a->buf + SRC_OFF,
		 (uint32_t)n, (uintptr_t)dst, b->mr->rkey, s, inl ? IBV_SEND_INLINE : 0, 3)) {
		VT_FAIL("%s: post failed", what);
		return;
	}
	if (!expect(a, 3, IBV_WC_RDMA_WRITE, &wc, what))
		return;
	if (imm) {
		if (!expect(b, 4, IBV_WC_RECV_RDMA_WITH_IMM, &wc, what))
			return;
		if (wc.byte_len != n || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    be32toh(wc.imm_data) != s)
			VT_FAIL("%s: byte_len %u imm 0x%x", what, wc.byte_len, be32toh(wc.imm_data));
	} else if (b->type == IBV_QPT_UC) {
		/*
		 * UC has no ACK: the sender's completion says nothing about placement. Messages
		 * of a QP arrive in order, so a SEND behind the WRITE tells when it landed.
		 */
		if (post_recv(b, NULL, 0, 4) ||
		    post(a, IBV_WR_SEND, NULL, 0, 0, 0, 0, 0, 11) ||
		    !expect(a, 11, IBV_WC_SEND, &wc, what) || !expect(b, 4, IBV_WC_RECV, &wc, what))
			return;
	}
	vt_check(dst, n, s, what);
	vt_check_const(dst + n, GUARD, 0xee, what);
}

static void t_read(struct vt_end *a, struct vt_end *b, size_t n)
{
	uint8_t *dst = a->buf + DST_OFF;
	struct ibv_wc wc;
	char what[64];
	uint32_t s = seed++;

	snprintf(what, sizeof(what), "RC READ %zu B", n);
	memset(dst, 0xee, n + GUARD);
	vt_fill(b->buf + SRC_OFF, n, s);
	if (post(a, IBV_WR_RDMA_READ, dst, (uint32_t)n, (uintptr_t)(b->buf + SRC_OFF), b->mr->rkey,
		 0, 0, 5)) {
		VT_FAIL("%s: post failed", what);
		return;
	}
	if (!expect(a, 5, IBV_WC_RDMA_READ, &wc, what))
		return;
	if (wc.byte_len != n)
		VT_FAIL("%s: byte_len %u", what, wc.byte_len);
	vt_check(dst, n, s, what);
	vt_check_const(dst + n, GUARD, 0xee, what);
}

static void t_atomic(struct vt_end *a, struct vt_end *b, int k)
{
	uint64_t *remote = (uint64_t *)(b->buf + DST_OFF) + k;
	uint64_t *result = (uint64_t *)(a->buf + DST_OFF) + k;
	uint64_t v0 = 0x0123456789abcdefull ^ ((uint64_t)seed << 32), v1 = ~v0;
	struct ibv_sge sge = { .addr = (uintptr_t)result, .length = 8, .lkey = a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	seed++;
	/* compare & swap that matches */
	*remote = v0;
	*result = 0;
	wr.wr_id = 6;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = (uintptr_t)remote;
	wr.wr.atomic.rkey = b->mr->rkey;
	wr.wr.atomic.compare_add = v0;
	wr.wr.atomic.swap = v1;
	if (ibv_post_send(a->qp, &wr, &bad) || !expect(a, 6, IBV_WC_COMP_SWAP, &wc, "CAS hit"))
		return;
	if (*result != v0 || *remote != v1 || wc.byte_len != 8)
		VT_FAIL("CAS hit: returned 0x%llx remote 0x%llx", (unsigned long long)*result,
			(unsigned long long)*remote);
	/* compare & swap that misses: remote unchanged, current value returned */
	*result = 0;
	wr.wr_id = 7;
	wr.wr.atomic.compare_add = v0;
	wr.wr.atomic.swap = 42;
	if (ibv_post_send(a->qp, &wr, &bad) || !expect(a, 7, IBV_WC_COMP_SWAP, &wc, "CAS miss"))
		return;
	if (*result != v1 || *remote != v1)
		VT_FAIL("CAS miss: returned 0x%llx remote 0x%llx", (unsigned long long)*result,
			(unsigned long long)*remote);
	/* fetch & add, with a carry across the 32-bit halves */
	*remote = 0x00000000ffffffffull;
	*result = 0;
	wr.wr_id = 8;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 0x100000001ull;
	if (ibv_post_send(a->qp, &wr, &bad) || !expect(a, 8, IBV_WC_FETCH_ADD, &wc, "FAA"))
		return;
	if (*result != 0x00000000ffffffffull || *remote != 0x0000000200000000ull)
		VT_FAIL("FAA: returned 0x%llx remote 0x%llx", (unsigned long long)*result,
			(unsigned long long)*remote);
}

/* A chain of 32 unsignaled sends, the last signaled, two SGEs each: order and every byte. */
static void t_chain(struct vt_end *a, struct vt_end *b)
{
	enum { N = 32, SZ = 3000 };
	struct ibv_send_wr wr[N], *bad;
	struct ibv_sge sge[N][2];
	struct ibv_wc wc;
	uint32_t s = seed;

	seed += N;
	for (int i = 0; i < N; i++) {
		uint8_t *dst = b->buf + DST_OFF + (size_t)i * (SZ + GUARD);
		struct ibv_sge rs[2] = {
			{ (uintptr_t)dst, 1000, b->mr->lkey },
			{ (uintptr_t)dst + 1000, SZ - 1000 + GUARD, b->mr->lkey },
		};
		struct ibv_recv_wr rw = { .wr_id = 100 + i, .sg_list = rs, .num_sge = 2 }, *rbad;

		memset(dst, 0xee, SZ + GUARD);
		if (b->srq ? ibv_post_srq_recv(b->srq, &rw, &rbad) :
			     ibv_post_recv(b->qp, &rw, &rbad)) {
			VT_FAIL("chain: post_recv %d", i);
			return;
		}
		vt_fill(a->buf + SRC_OFF + (size_t)i * SZ, SZ, s + i);
		sge[i][0] = (struct ibv_sge){ (uintptr_t)(a->buf + SRC_OFF + (size_t)i * SZ), 17,
					      a->mr->lkey };
		sge[i][1] = (struct ibv_sge){ sge[i][0].addr + 17, SZ - 17, a->mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = 200 + i, .sg_list = sge[i], .num_sge = 2,
					      .opcode = IBV_WR_SEND,
					      .next = i + 1 < N ? &wr[i + 1] : NULL,
					      .send_flags = i + 1 == N ? IBV_SEND_SIGNALED : 0 };
	}
	if (ibv_post_send(a->qp, wr, &bad)) {
		VT_FAIL("chain: post_send");
		return;
	}
	if (!expect(a, 200 + N - 1, IBV_WC_SEND, &wc, "chain: last send"))
		return;
	for (int i = 0; i < N; i++) {
		uint8_t *dst = b->buf + DST_OFF + (size_t)i * (SZ + GUARD);

		if (!expect(b, 100 + i, IBV_WC_RECV, &wc, "chain: receive in order"))
			return;
		if (wc.byte_len != SZ)
			VT_FAIL("chain %d: byte_len %u", i, wc.byte_len);
		vt_check(dst, SZ, s + i, "chain");
		vt_check_const(dst + SZ, GUARD, 0xee, "chain guard");
	}
	if (!vt_cq_quiet(a->cq, 50))
		VT_FAIL("chain: unsignaled sends produced completions");
}

/*
 * Fences: a WRITE that sends on what a READ (or a fetch & add) posted just before it brings
 * back. Posted in one list, the WRITE carries IBV_SEND_FENCE, so it must not start before the
 * READ's (the atomic's) response has landed; the remote end then holds exactly the data.
 */
static void t_fence(struct vt_end *a, struct vt_end *b)
{
	enum { N = 256 * 1024 };
	uint8_t *mid = a->buf + DST_OFF, *dst = b->buf + DST_OFF + (1u << 20);
	uint64_t *counter = (uint64_t *)(b->buf + DST_OFF), *fetched = (uint64_t *)mid;
	uint64_t *copy = (uint64_t *)(b->buf + DST_OFF + 64);
	struct ibv_sge rs = { (uintptr_t)mid, N, a->mr->lkey }, ws = rs;
	struct ibv_send_wr rd = { .wr_id = 30, .sg_list = &rs, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr wr = { .wr_id = 31, .sg_list = &ws, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE }, *bad;
	struct ibv_wc wc;
	uint32_t s = seed++;

	memset(mid, 0xee, N);
	memset(dst, 0xee, N + GUARD);
	vt_fill(b->buf + SRC_OFF, N, s);
	rd.next = &wr;
	rd.wr.rdma.remote_addr = (uintptr_t)(b->buf + SRC_OFF);
	rd.wr.rdma.rkey = b->mr->rkey;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = b->mr->rkey;
	if (ibv_post_send(a->qp, &rd, &bad)) {
		VT_FAIL("fence READ -> WRITE: post failed");
		return;
	}
	if (!expect(a, 30, IBV_WC_RDMA_READ, &wc, "fence: the READ") ||
	    !expect(a, 31, IBV_WC_RDMA_WRITE, &wc, "fence: the fenced WRITE"))
		return;
	vt_check(dst, N, s, "fence: WRITE of the READ's data");
	vt_check_const(dst + N, GUARD, 0xee, "fence: WRITE guard");

	/* fetch & add, then a fenced WRITE of the fetched value */
	*counter = 0x1234500000000000ull + s;
	*fetched = 0;
	*copy = 0;
	rs = (struct ibv_sge){ (uintptr_t)fetched, 8, a->mr->lkey };
	ws = rs;
	rd = (struct ibv_send_wr){ .wr_id = 32, .sg_list = &rs, .num_sge = 1, .next = &wr,
				   .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				   .send_flags = IBV_SEND_SIGNALED };
	rd.wr.atomic.remote_addr = (uintptr_t)counter;
	rd.wr.atomic.rkey = b->mr->rkey;
	rd.wr.atomic.compare_add = 1;
	wr.wr_id = 33;
	wr.wr.rdma.remote_addr = (uintptr_t)copy;
	if (ibv_post_send(a->qp, &rd, &bad)) {
		VT_FAIL("fence FAA -> WRITE: post failed");
		return;
	}
	if (!expect(a, 32, IBV_WC_FETCH_ADD, &wc, "fence: the FAA") ||
	    !expect(a, 33, IBV_WC_RDMA_WRITE, &wc, "fence: the WRITE after the FAA"))
		return;
	if (*copy != 0x1234500000000000ull + s || *counter != *copy + 1)
		VT_FAIL("fence FAA -> WRITE: wrote 0x%llx, counter 0x%llx",
			(unsigned long long)*copy, (unsigned long long)*counter);
}

/*
 * The 40 bytes in front of a UD payload, RoCE v2 over IPv4 (IBTA A17.4.5.1; Linux
 * ib_get_rdma_header_version): 20 the verbs leave unspecified (zeros, as Linux rxe writes
 * them), then the IPv4 header of the packet that carried it: version 4 without options, the
 * packet's length (IPv4, UDP, BTH, DETH, immediate, payload padded to 4 bytes, ICRC), the
 * sender's hop limit as TTL (64, vt_ah: no router between), UDP, the two ends' addresses, a
 * right checksum.
 */
static void check_grh(const uint8_t *g, const struct vt_end *from, const struct vt_end *to,
		      size_t n, bool imm, const char *what)
{
	const uint8_t *ip = g + 20;
	size_t len = 20 + 8 + 12 + 8 + (imm ? 4 : 0) + ((n + 3) & ~(size_t)3) + 4;
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	if (!vt_check_const(g, 20, 0, what))
		return;
	if (ip[0] != 0x45 || (size_t)(ip[2] << 8 | ip[3]) != len || ip[8] != 64 || ip[9] != 17 ||
	    memcmp(ip + 12, from->gid.raw + 12, 4) || memcmp(ip + 16, to->gid.raw + 12, 4) ||
	    sum != 0xffff)
		VT_FAIL("%s: GRH IPv4 header %02x, length %u (want %zu), TTL %u, protocol %u, "
			"%u.%u.%u.%u -> %u.%u.%u.%u, checksum %s", what, ip[0], ip[2] << 8 | ip[3],
			len, ip[8], ip[9], ip[12], ip[13], ip[14], ip[15], ip[16], ip[17], ip[18],
			ip[19], sum == 0xffff ? "right" : "wrong");
}

static void t_ud(struct vt_end *a, struct vt_end *b, struct ibv_ah *ah, size_t n, bool imm)
{
	uint8_t *dst = b->buf + DST_OFF;
	struct ibv_sge sge = { (uintptr_t)(a->buf + SRC_OFF), (uint32_t)n, a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = n ? 1 : 0,
				  .opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	char what[64];
	uint32_t s = seed++;

	snprintf(what, sizeof(what), "UD %s %zu B", imm ? "SEND_IMM" : "SEND", n);
	memset(dst, 0xee, 40 + n + GUARD);
	vt_fill(a->buf + SRC_OFF, n, s);
	wr.imm_data = htobe32(s);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b->qp->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	if (post_recv(b, dst, (uint32_t)(40 + n + GUARD), 10) || ibv_post_send(a->qp, &wr, &bad)) {
		VT_FAIL("%s: post failed", what);
		return;
	}
	if (!expect(a, 9, IBV_WC_SEND, &wc, what) || !expect(b, 10, IBV_WC_RECV, &wc, what))
		return;
	if (wc.byte_len != 40 + n || wc.src_qp != a->qp->qp_num || !(wc.wc_flags & IBV_WC_GRH))
		VT_FAIL("%s: byte_len %u src_qp %u (want %u) flags 0x%x", what, wc.byte_len,
			wc.src_qp, a->qp->qp_num, wc.wc_flags);
	if (imm && be32toh(wc.imm_data) != s)
		VT_FAIL("%s: imm 0x%x", what, be32toh(wc.imm_data));
	check_grh(dst, a, b, n, imm, what);
	vt_check(dst + 40, n, s, what);
	vt_check_const(dst + 40 + n, GUARD, 0xee, what);
}

static void rc_suite(bool srq)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);
	struct vt_end a, b;
	uint32_t inl;

	p.use_srq = srq;
	p.max_inline = 220;
	if (vt_open(&a, vt_opt.dev_a, &p) || vt_open(&b, vt_opt.dev_b, &p) || vt_connect(&a, &b, &p))
		goto out;
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;

		if (ibv_query_qp(a.qp, &qa, IBV_QP_CAP, &qi) || qi.cap.max_inline_data < 220) {
			VT_FAIL("RC QP: max_inline_data %u < 220 asked", qi.cap.max_inline_data);
			goto out;
		}
		inl = qi.cap.max_inline_data;
	}
	vt_log("RC%s: %zu sizes x SEND/IMM/WRITE/IMM/READ", srq ? " with SRQ" : "", NSIZES);
	for (size_t i = 0; i < NSIZES && vt_failures < 20; i++) {
		size_t n = sizes[i];

		t_send(&a, &b, n, false, false);
		t_send(&a, &b, n, true, false);
		t_send(&b, &a, n, false, false);
		if (n <= inl) {
			t_send(&a, &b, n, false, true);
			t_write(&a, &b, n, false, true);
		}
		if (!srq) {
			t_write(&a, &b, n, false, false);
			t_write(&a, &b, n, true, false);
			t_read(&a, &b, n);
		}
	}
	if (!srq) {
		for (int k = 0; k < 4; k++)
			t_atomic(&a, &b, k);
		t_fence(&a, &b);
	}
	t_chain(&a, &b);
out:
	vt_close(&a);
	vt_close(&b);
}

static void uc_suite(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_UC);
	struct vt_end a, b;

	if (vt_open(&a, vt_opt.dev_a, &p) || vt_open(&b, vt_opt.dev_b, &p) || vt_connect(&a, &b, &p))
		goto out;
	vt_log("UC: SEND/SEND_IMM/WRITE/WRITE_IMM");
	for (size_t i = 0; i < NSIZES && vt_failures < 20; i++) {
		t_send(&a, &b, sizes[i], false, false);
		t_send(&a, &b, sizes[i], true, false);
		t_write(&a, &b, sizes[i], false, false);
		t_write(&a, &b, sizes[i], true, false);
	}
out:
	vt_close(&a);
	vt_close(&b);
}

static void ud_suite(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_UD);
	struct vt_end a, b;
	struct ibv_ah *ah = NULL;
	size_t mtu;

	if (vt_open(&a, vt_opt.dev_a, &p) || vt_open(&b, vt_opt.dev_b, &p) || vt_connect(&a, &b, &p))
		goto out;
	ah = vt_ah(&a, &b);
	if (!ah) {
		VT_FAIL("UD: create_ah");
		goto out;
	}
	mtu = 128u << a.port.active_mtu;
	vt_log("UD: SEND up to %zu B", mtu);
	for (size_t i = 0; i < NSIZES && sizes[i] <= mtu && vt_failures < 20; i++) {
		t_ud(&a, &b, ah, sizes[i], false);
		t_ud(&a, &b, ah, sizes[i], true);
	}
	t_ud(&a, &b, ah, mtu, false);
out:
	if (ah && ibv_destroy_ah(ah))
		VT_FAIL("destroy_ah");
	vt_close(&a);
	vt_close(&b);
}

/* ibv_create_cq_ex: the same completions read field by field (start/next/end_poll). */
static void cq_ex_suite(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);
	struct ibv_poll_cq_attr pa = { 0 };
	struct vt_end a, b;
	struct ibv_cq_ex *x;
	uint32_t s = seed++;
	int n = 0, err;

	p.cq_ex = true;
	if (vt_open(&a, vt_opt.dev_a, &p) || vt_open(&b, vt_opt.dev_b, &p) || vt_connect(&a, &b, &p))
		goto out;
	vt_log("cq_ex: 4 SEND_IMM, read with start/next/end_poll");
	vt_fill(a.buf, 4000, s);
	for (int i = 0; i < 4; i++)
		if (post_recv(&b, b.buf + DST_OFF + 4096u * i, 4096, 50 + i) ||
		    post(&a, IBV_WR_SEND_WITH_IMM, a.buf, 1000u * (i + 1), 0, 0, s + i, 0, 60 + i)) {
			VT_FAIL("cq_ex: post");
			goto out;
		}
	x = b.cqx;
	for (uint64_t end = vt_now_ms() + VT_TIMEOUT_MS; n < 4;) {
		/* the clock before the poll: a poller descheduled past its deadline looks once more */
		bool late = vt_now_ms() >= end;

		err = ibv_start_poll(x, &pa);
		if (err == ENOENT) {
			if (late)
				break;
			continue;
		}
		if (err) {
			VT_FAIL("cq_ex: start_poll %d", err);
			goto out;
		}
		do {
			if (x->status != IBV_WC_SUCCESS || x->wr_id != 50u + n ||
			    ibv_wc_read_opcode(x) != IBV_WC_RECV ||
			    ibv_wc_read_byte_len(x) != 1000u * (n + 1) ||
			    be32toh(ibv_wc_read_imm_data(x)) != s + n ||
			    !(ibv_wc_read_wc_flags(x) & IBV_WC_WITH_IMM) ||
			    ibv_wc_read_qp_num(x) != b.qp->qp_num)
				VT_FAIL("cq_ex completion %d: status %d wr_id %llu len %u imm 0x%x", n,
					x->status, (unsigned long long)x->wr_id,
					ibv_wc_read_byte_len(x), be32toh(ibv_wc_read_imm_data(x)));
			vt_check(b.buf + DST_OFF + 4096u * n, 1000u * (n + 1), s, "cq_ex data");
			n++;
		} while (n < 4 && !ibv_next_poll(x));
		ibv_end_poll(x);
	}
	if (n != 4)
		VT_FAIL("cq_ex: %d of 4 completions", n);
out:
	vt_close(&a);
	vt_close(&b);
}

void vt_data_tests(void)
{
	cq_ex_suite();
	rc_suite(false);
	rc_suite(true);
	uc_suite();
	ud_suite();
}
