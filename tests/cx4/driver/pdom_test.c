// SPDX-License-Identifier: MIT
/*
 * Parent domains on a cx4 device (cx4_verbs_test xverbs; rdma-core's test_parent_domain does
 * the same through pyverbs):
 *
 *  - the queues of a parent domain with allocators live in the application's memory: the
 *    allocator is asked for each CQ (ibv_create_cq_ex with IBV_CQ_INIT_ATTR_MASK_PD), SRQ and
 *    QP with the parent domain, its context, page alignment and mlx5dv's resource types; the
 *    device writes its CQEs into those blocks and reads its WQEs from them; a CQ resize asks
 *    for a new ring; every block is given back exactly once, with its type, and nothing the
 *    allocator did not give is freed;
 *  - IBV_ALLOCATOR_USE_DEFAULT and a parent domain without allocators: the provider's own
 *    memory, nothing freed through the application;
 *  - RC SEND and RDMA WRITE and UD SEND through it, every byte checked;
 *  - a PD under a parent domain and a parent domain under a queue are busy (EBUSY); bad
 *    attributes, an allocator that fails (ENOMEM) or ignores the alignment (EINVAL, the block
 *    given back) are refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/mlx5dv.h>

#include "vt.h"

#define PAGE 4096u
#define NBLK 16
#define MSG 3000u /* RC: bytes per message (an MTU and a bit); UD: one MTU less the GRH */
#define UD_MSG 1000u

/* OWN: posix_memalign; ARENA: pieces of one mapping registered beforehand (so that the queue's
 * pages sit inside a larger moved range, at an offset of its memfd) */
enum alloc_mode { OWN, ARENA, USE_DEFAULT, FAIL_NULL, MISALIGNED };
#define ARENA_LEN (1u << 20)

struct blk {
	void *base, *p;
	size_t size;
	uint64_t type;
	unsigned int frees;
};

/* What an application allocator saw. */
struct track {
	enum alloc_mode mode;
	struct blk blk[NBLK];
	unsigned int n, calls, bad;
	uint8_t *arena;
	size_t arena_used;
	struct ibv_pd *pd; /* the pd argument of the calls */
	char why[160];
};

static void *t_alloc(struct ibv_pd *pd, void *ctx, size_t size, size_t align, uint64_t type)
{
	struct track *t = ctx;
	struct blk *b;
	void *base;

	t->calls++;
	if (t->pd && pd != t->pd)
		t->bad++, snprintf(t->why, sizeof(t->why), "alloc: pd %p, then %p", t->pd, pd);
	t->pd = pd;
	if (align != PAGE || !size || size % PAGE)
		t->bad++,
		    snprintf(t->why, sizeof(t->why), "alloc: size %zu alignment %zu", size, align);
	if (t->mode == USE_DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (t->mode == FAIL_NULL || t->n == NBLK)
		return NULL;
	if (t->mode == ARENA) {
		/* one page apart, the first one page in */
		if (t->arena_used + PAGE + size > ARENA_LEN)
			return NULL;
		t->arena_used += PAGE;
		base = t->arena + t->arena_used;
		t->arena_used += size;
		memset(base, 0xa5, size);
	} else if (posix_memalign(&base, 2 * PAGE, size + 2 * PAGE)) {
		return NULL;
	} else {
		memset(base, 0xa5, size + 2 * PAGE); /* the provider must not take it for zeroed */
	}
	b = &t->blk[t->n++];
	*b = (struct blk){.base = base,
			  .size = size,
			  .type = type,
			  .p = (uint8_t *)base + (t->mode == MISALIGNED ? 64 : 0)};
	return b->p;
}

static void t_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	struct track *t = ctx;

	if (pd != t->pd)
		t->bad++, snprintf(t->why, sizeof(t->why), "free: pd %p, not %p", pd, t->pd);
	for (unsigned int i = 0; i < t->n; i++) {
		struct blk *b = &t->blk[i];

		if (b->p != ptr)
			continue;
		if (b->frees++ || b->type != type)
			t->bad++, snprintf(t->why, sizeof(t->why),
					   "free %u of a block, type %llx/%llx", b->frees,
					   (unsigned long long)type, (unsigned long long)b->type);
		else if (t->mode != ARENA)
			free(b->base);
		return;
	}
	t->bad++;
	snprintf(t->why, sizeof(t->why), "free of %p, which the allocator never gave", ptr);
}

static unsigned int count(const struct track *t, uint64_t type)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < t->n; i++)
		n += t->blk[i].type == type;
	return n;
}

static struct blk *first(struct track *t, uint64_t type)
{
	for (unsigned int i = 0; i < t->n; i++)
		if (t->blk[i].type == type && !t->blk[i].frees)
			return &t->blk[i];
	return NULL;
}

/* After the objects are gone: every block freed once, nothing else. */
static void check_all_freed(struct track *t, const char *what)
{
	for (unsigned int i = 0; i < t->n; i++)
		if (t->blk[i].frees != 1)
			VT_FAIL("%s: block %u (type %llx) freed %u times", what, i,
				(unsigned long long)t->blk[i].type, t->blk[i].frees);
	if (t->bad)
		VT_FAIL("%s: %u bad allocator calls (%s)", what, t->bad, t->why);
}

static struct ibv_parent_domain_init_attr pd_attr(struct track *t)
{
	return (struct ibv_parent_domain_init_attr){
	    .comp_mask =
		IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
	    .alloc = t_alloc,
	    .free = t_free,
	    .pd_context = t,
	};
}

static void post_recv(struct vt_end *b, uint32_t len)
{
	struct ibv_sge sg = {.addr = (uintptr_t)b->buf, .length = len, .lkey = b->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = &sg, .num_sge = 1}, *bad;
	int err = b->srq ? ibv_post_srq_recv(b->srq, &wr, &bad) : ibv_post_recv(b->qp, &wr, &bad);

	if (err)
		VT_FAIL("post_recv: %s", strerror(err));
}

static bool completes(struct vt_end *e, enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc;

	if (vt_poll(e->cq, &wc, VT_TIMEOUT_MS) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.opcode != op) {
		VT_FAIL("%s: no successful completion", what);
		return false;
	}
	return true;
}

/* a -> b: a SEND and (RC) an RDMA WRITE, every byte of b's buffer checked. */
static void traffic(struct vt_end *a, struct vt_end *b, uint32_t seed, const char *what)
{
	bool ud = a->type == IBV_QPT_UD;
	uint32_t n = ud ? UD_MSG : MSG, grh = ud ? 40 : 0;
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = n, .lkey = a->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1,
				 .sg_list = &sg,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_ah *ah = NULL;

	memset(b->buf, 0, 2 * MSG + 2 * PAGE);
	vt_fill(a->buf, n, seed);
	post_recv(b, n + grh);
	if (ud) {
		ah = vt_ah(a, b);
		if (!ah) {
			VT_FAIL("%s: create_ah: %s", what, strerror(errno));
			return;
		}
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = b->qp->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
	}
	if (ibv_post_send(a->qp, &wr, &bad)) {
		VT_FAIL("%s: post_send", what);
		goto out;
	}
	if (!completes(a, IBV_WC_SEND, what) || !completes(b, IBV_WC_RECV, what))
		goto out;
	vt_check(b->buf + grh, n, seed, what);
	vt_check_const(b->buf + grh + n, PAGE, 0, what);
	if (ud)
		goto out;
	vt_fill(a->buf, n, seed + 1);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + MSG;
	wr.wr.rdma.rkey = b->mr->rkey;
	if (ibv_post_send(a->qp, &wr, &bad)) {
		VT_FAIL("%s: post_send WRITE", what);
		goto out;
	}
	if (completes(a, IBV_WC_RDMA_WRITE, what)) {
		vt_check(b->buf + MSG, n, seed + 1, what);
		vt_check_const(b->buf + MSG + n, PAGE, 0, what);
	}
out:
	if (ah)
		ibv_destroy_ah(ah);
}

/* The device wrote the CQE of a received message of len bytes into the block. */
static bool block_has_recv_cqe(const struct blk *b, uint32_t len)
{
	for (size_t off = 0; off + 64 <= b->size; off += 64) {
		const struct mlx5_cqe64 *c = (const void *)((const uint8_t *)b->p + off);

		if ((c->op_own >> 4) == MLX5_CQE_RESP_SEND && be32toh(c->byte_cnt) == len)
			return true;
	}
	return false;
}

/* The provider wrote a send WQE: a control segment with the SEND opcode (mlx5dv.h layout). */
static bool block_has_send_wqe(const struct blk *b)
{
	for (size_t off = 0; off + 64 <= b->size; off += 64) {
		const struct mlx5_wqe_ctrl_seg *c = (const void *)((const uint8_t *)b->p + off);

		if ((be32toh(c->opmod_idx_opcode) & 0xff) == MLX5_OPCODE_SEND &&
		    (be32toh(c->qpn_ds) >> 8) != 0)
			return true;
	}
	return false;
}

static struct ibv_context *open_dev(void);

/*
 * The arena both ends' allocators carve from, registered (and so moved into one memfd,
 * providers/common/bv_shadow.c) before any queue is made in it.
 */
static bool arena_open(struct track *ta, struct track *tb, struct ibv_context **ctx,
		       struct ibv_pd **pd, struct ibv_mr **mr, const char *what)
{
	uint8_t *m =
	    mmap(NULL, 2 * ARENA_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		VT_FAIL("%s: mmap", what);
		return false;
	}
	memset(m, 0x5a, 2 * ARENA_LEN);
	ta->arena = m;
	tb->arena = m + ARENA_LEN;
	*ctx = open_dev();
	*pd = *ctx ? ibv_alloc_pd(*ctx) : NULL;
	*mr = *pd ? ibv_reg_mr(*pd, m, 2 * ARENA_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!*mr) {
		VT_FAIL("%s: registering the arena: %s", what, strerror(errno));
		if (*pd)
			ibv_dealloc_pd(*pd);
		if (*ctx)
			ibv_close_device(*ctx);
		munmap(m, 2 * ARENA_LEN);
		return false;
	}
	return true;
}

static void pdom_traffic(enum ibv_qp_type type, bool srq, bool cq_ex, enum alloc_mode mode,
			 bool allocators)
{
	struct track ta = {.mode = mode}, tb = {.mode = mode};
	struct ibv_parent_domain_init_attr aa = pd_attr(&ta), ab = pd_attr(&tb);
	struct vt_qp_params pa = vt_default_params(type), pb;
	struct vt_end a, b;
	bool own = mode == OWN || mode == ARENA;
	struct ibv_context *actx = NULL;
	struct ibv_pd *apd = NULL;
	struct ibv_mr *amr = NULL;
	char what[96];
	unsigned int want_cq = cq_ex ? 1 : 0;
	uint32_t rlen = type == IBV_QPT_UD ? UD_MSG + 40 : MSG; /* what a RECV completes with */

	snprintf(what, sizeof(what), "parent domain %s%s%s %s", type == IBV_QPT_UD ? "UD" : "RC",
		 srq ? " SRQ" : "", cq_ex ? " cq_ex" : "",
		 !allocators	 ? "no allocators"
		 : mode == OWN	 ? "own allocator"
		 : mode == ARENA ? "arena allocator"
				 : "USE_DEFAULT");
	if (mode == ARENA && !arena_open(&ta, &tb, &actx, &apd, &amr, what))
		return;
	if (!allocators)
		aa.comp_mask = ab.comp_mask = 0;
	pa.use_srq = srq;
	pa.cq_ex = cq_ex;
	pb = pa;
	pa.pdom = &aa;
	pb.pdom = &ab;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (vt_open(&a, vt_opt.dev_a, &pa) || vt_open(&b, vt_opt.dev_b, &pb) ||
	    vt_connect(&a, &b, &pa))
		goto out;
	if (!allocators) {
		if (ta.calls || tb.calls)
			VT_FAIL("%s: the allocator was called", what);
	} else if (ta.calls != want_cq + 1 + srq || ta.pd != a.pdom) {
		VT_FAIL("%s: %u allocator calls with pd %p, expected %u with %p", what, ta.calls,
			(void *)ta.pd, want_cq + 1 + srq, (void *)a.pdom);
	} else if (own && (count(&ta, MLX5DV_RES_TYPE_CQ) != want_cq ||
			   count(&ta, MLX5DV_RES_TYPE_QP) != 1 ||
			   count(&ta, MLX5DV_RES_TYPE_SRQ) != srq)) {
		VT_FAIL("%s: blocks CQ %u QP %u SRQ %u", what, count(&ta, MLX5DV_RES_TYPE_CQ),
			count(&ta, MLX5DV_RES_TYPE_QP), count(&ta, MLX5DV_RES_TYPE_SRQ));
	}
	/* busy while in use */
	if (ibv_dealloc_pd(a.pd) != EBUSY || ibv_dealloc_pd(a.pdom) != EBUSY)
		VT_FAIL("%s: a PD under a parent domain, or a parent domain under a QP, freed",
			what);

	traffic(&a, &b, 0x7d01, what);
	traffic(&b, &a, 0x7d02, what);
	if (own && allocators) {
		struct blk *qb = first(&ta, MLX5DV_RES_TYPE_QP),
			   *cb = first(&ta, MLX5DV_RES_TYPE_CQ);

		if (!qb || !block_has_send_wqe(qb))
			VT_FAIL("%s: no send WQE in the allocator's QP block", what);
		if (cq_ex && (!cb || !block_has_recv_cqe(cb, rlen)))
			VT_FAIL("%s: the device wrote no CQE into the allocator's CQ block", what);
	}
	if (cq_ex) {
		/* a resize takes a new ring from the allocator; a second one frees the first's */
		if (ibv_resize_cq(a.cq, 1000) || ibv_resize_cq(a.cq, 100)) {
			VT_FAIL("%s: resize_cq: %s", what, strerror(errno));
			goto out;
		}
		if (allocators && ta.calls != want_cq + 1 + srq + 2)
			VT_FAIL("%s: %u allocator calls after two resizes", what, ta.calls);
		if (own && allocators &&
		    (count(&ta, MLX5DV_RES_TYPE_CQ) != 3 || ta.blk[ta.n - 2].frees != 1))
			VT_FAIL("%s: the resized rings: %u CQ blocks", what,
				count(&ta, MLX5DV_RES_TYPE_CQ));
		traffic(&b, &a, 0x7d03, what);
		if (own && allocators && !block_has_recv_cqe(&ta.blk[ta.n - 1], rlen))
			VT_FAIL("%s: the device wrote no CQE into the resized ring", what);
	}
out:
	vt_close(&a);
	vt_close(&b);
	if (amr && ibv_dereg_mr(amr))
		VT_FAIL("%s: dereg_mr of the arena", what);
	if (apd)
		ibv_dealloc_pd(apd);
	if (actx)
		ibv_close_device(actx);
	if (ta.arena)
		munmap(ta.arena, 2 * ARENA_LEN);
	if (own || !allocators) {
		check_all_freed(&ta, what);
		check_all_freed(&tb, what);
	} else {
		/* IBV_ALLOCATOR_USE_DEFAULT: the provider's memory, never given to free */
		if (ta.n || tb.n || ta.bad || tb.bad)
			VT_FAIL("%s: %u/%u blocks, %u/%u bad calls (%s%s)", what, ta.n, tb.n,
				ta.bad, tb.bad, ta.why, tb.why);
	}
	vt_log("%s: done", what);
}

static struct ibv_context *open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), vt_opt.dev_a))
			ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	return ctx;
}

/* Whether CALL, which makes an object, made none and set errno to ERR. */
#define REFUSED(CALL, ERR) (errno = 0, !(CALL) && errno == (ERR))

static void pdom_errors(void)
{
	struct ibv_context *ctx = open_dev();
	struct track t = {.mode = FAIL_NULL};
	struct ibv_parent_domain_init_attr pa = pd_attr(&t);
	struct ibv_pd *pd, *pdom;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD};
	struct ibv_qp_init_attr ia = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};

	if (!ctx) {
		VT_FAIL("parent domain errors: cannot open %s", vt_opt.dev_a);
		return;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq) {
		VT_FAIL("parent domain errors: pd/cq");
		goto out;
	}
	/* bad attributes */
	pa.pd = NULL;
	if (!REFUSED(ibv_alloc_parent_domain(ctx, &pa), EINVAL))
		VT_FAIL("parent domain without a PD: %s", strerror(errno));
	pa.pd = pd;
	pa.comp_mask |= 1u << 7;
	if (!REFUSED(ibv_alloc_parent_domain(ctx, &pa), EINVAL))
		VT_FAIL("parent domain with an unknown comp_mask bit: %s", strerror(errno));
	pa = pd_attr(&t);
	pa.pd = pd;
	pa.free = NULL;
	if (!REFUSED(ibv_alloc_parent_domain(ctx, &pa), EINVAL))
		VT_FAIL("parent domain with alloc and no free: %s", strerror(errno));
	pa.free = t_free;
	pdom = ibv_alloc_parent_domain(ctx, &pa);
	if (!pdom) {
		VT_FAIL("alloc_parent_domain: %s", strerror(errno));
		goto out;
	}
	pa.pd = pdom;
	if (!REFUSED(ibv_alloc_parent_domain(ctx, &pa), EINVAL))
		VT_FAIL("a parent domain over a parent domain: %s", strerror(errno));
	/* a CQ's PD must be a parent domain */
	ca.parent_domain = pd;
	if (!REFUSED(ibv_create_cq_ex(ctx, &ca), EINVAL))
		VT_FAIL("create_cq_ex on a plain PD: %s", strerror(errno));
	/* an allocator that fails: ENOMEM, nothing made */
	ca.parent_domain = pdom;
	if (!REFUSED(ibv_create_cq_ex(ctx, &ca), ENOMEM))
		VT_FAIL("create_cq_ex, allocator NULL: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = cq;
	if (!REFUSED(ibv_create_qp(pdom, &ia), ENOMEM))
		VT_FAIL("create_qp, allocator NULL: %s", strerror(errno));
	/* an allocator that ignores the alignment: EINVAL, and its block comes back */
	t.mode = MISALIGNED;
	errno = 0;
	qp = ibv_create_qp(pdom, &ia);
	if (qp || errno != EINVAL || t.n != 1 || t.blk[0].frees != 1)
		VT_FAIL("create_qp, misaligned block: %s, %u blocks", strerror(errno), t.n);
	if (qp)
		ibv_destroy_qp(qp);
	if (ibv_dealloc_pd(pdom))
		VT_FAIL("dealloc_pd of the parent domain");
	check_all_freed(&t, "parent domain errors");
out:
	if (cq)
		ibv_destroy_cq(cq);
	if (pd && ibv_dealloc_pd(pd))
		VT_FAIL("dealloc_pd");
	ibv_close_device(ctx);
	vt_log("parent domain errors: done");
}

void vt_pdom_tests(void)
{
	pdom_traffic(IBV_QPT_RC, false, false, OWN, true);
	pdom_traffic(IBV_QPT_RC, true, true, OWN, true);
	pdom_traffic(IBV_QPT_UD, false, true, OWN, true);
	pdom_traffic(IBV_QPT_RC, true, true, ARENA, true);
	pdom_traffic(IBV_QPT_UD, false, true, ARENA, true);
	pdom_traffic(IBV_QPT_RC, false, true, USE_DEFAULT, true);
	pdom_traffic(IBV_QPT_RC, false, false, OWN, false);
	pdom_errors();
}
