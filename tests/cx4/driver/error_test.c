// SPDX-License-Identifier: MIT
/*
 * Error tests: what the requester (and where it is defined, the responder) must see when an
 * operation cannot be done, and that nothing hangs:
 *
 *   bad rkey, out of bounds, MR without remote access   -> IBV_WC_REM_ACCESS_ERR, and
 *                                                           neither end's memory changed
 *   wrong lkey                                           -> IBV_WC_LOC_PROT_ERR
 *   receive buffer too small                             -> responder IBV_WC_LOC_LEN_ERR,
 *                                                           requester IBV_WC_REM_INV_REQ_ERR
 *   no receive posted, rnr_retry exhausted               -> IBV_WC_RNR_RETRY_EXC_ERR
 *   peer gone, retry_cnt exhausted                       -> IBV_WC_RETRY_EXC_ERR, within the
 *                                                           time the timeout and retries allow
 *   anything posted after an error, receives of a QP put in ERR -> IBV_WC_WR_FLUSH_ERR
 *   ibv_reg_mr over unmapped memory, or read-only memory with write access -> EFAULT
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "vt.h"
#include "../../lib/reg_mr_fault.h"

static int send_wr(struct vt_end *a, enum ibv_wr_opcode op, uint64_t laddr, uint32_t len,
		   uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(a->qp, &wr, &bad);
}

static int recv_wr(struct vt_end *b, uint64_t addr, uint32_t len, uint64_t id)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(b->qp, &wr, &bad);
}

static bool expect_status(struct vt_end *e, uint64_t id, enum ibv_wc_status st, const char *what)
{
	struct ibv_wc wc;
	int r = vt_poll(e->cq, &wc, VT_TIMEOUT_MS);

	if (r != 1) {
		VT_FAIL("%s: %s", what, r ? "poll_cq failed" : "no completion (timeout)");
		return false;
	}
	if (wc.status != st || wc.wr_id != id) {
		VT_FAIL("%s: status %s (want %s), wr_id %llu (want %llu)", what,
			ibv_wc_status_str(wc.status), ibv_wc_status_str(st),
			(unsigned long long)wc.wr_id, (unsigned long long)id);
		return false;
	}
	vt_log("  %s: %s", what, ibv_wc_status_str(st));
	return true;
}

/* The async event the device must report for a QP (ibv_get_async_event, with a deadline). */
static void expect_async(struct vt_end *e, struct ibv_qp *qp, enum ibv_event_type type,
			 const char *what)
{
	struct pollfd p = { .fd = e->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	if (poll(&p, 1, VT_TIMEOUT_MS) != 1 || ibv_get_async_event(e->ctx, &ev)) {
		VT_FAIL("%s: no async event", what);
		return;
	}
	if (ev.event_type != type || ev.element.qp != qp)
		VT_FAIL("%s: async event %s for %p, want %s for %p", what,
			ibv_event_type_str(ev.event_type), (void *)ev.element.qp,
			ibv_event_type_str(type), (void *)qp);
	else
		vt_log("  %s: %s", what, ibv_event_type_str(type));
	ibv_ack_async_event(&ev);
}

static bool pair(struct vt_end *a, struct vt_end *b, struct vt_qp_params *pa,
		 struct vt_qp_params *pb)
{
	if (vt_open(a, vt_opt.dev_a, pa) || vt_open(b, vt_opt.dev_b, pb))
		return false;
	/* each side's own timers and retries */
	return !vt_connect(a, b, pa);
}

/* After a requester error the QP is in ERR: what follows is flushed, not executed. */
static void expect_flush_after(struct vt_end *a, const char *what)
{
	char w[96];

	snprintf(w, sizeof(w), "%s, then a SEND", what);
	if (send_wr(a, IBV_WR_SEND, (uintptr_t)a->buf, 8, a->mr->lkey, 0, 0, 99)) {
		VT_FAIL("%s: post after error: %s", w, strerror(errno));
		return;
	}
	expect_status(a, 99, IBV_WC_WR_FLUSH_ERR, w);
}

static void t_remote_access(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC), pb = p;
	struct vt_end a, b;
	uint64_t rbase;

	/* b's buffer: local write only, no remote access of any kind */
	pb.mr_access = IBV_ACCESS_LOCAL_WRITE;
	if (!pair(&a, &b, &p, &pb))
		goto out;
	rbase = (uintptr_t)b.buf;
	vt_fill(a.buf, 64, 0xe1);
	vt_fill(b.buf, 4096, 0xe2);
	send_wr(&a, IBV_WR_RDMA_WRITE, (uintptr_t)a.buf, 64, a.mr->lkey, rbase, b.mr->rkey, 1);
	expect_status(&a, 1, IBV_WC_REM_ACCESS_ERR, "WRITE to an MR without remote write");
	vt_check(b.buf, 4096, 0xe2, "the target of a WRITE refused for its rights, untouched");
	expect_async(&b, b.qp, IBV_EVENT_QP_ACCESS_ERR, "responder of the refused WRITE");
	expect_flush_after(&a, "WRITE without remote write");
out:
	vt_close(&a);
	vt_close(&b);

	pb.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (!pair(&a, &b, &p, &pb))
		goto out2;
	vt_fill(a.buf, 4096, 0xe3);
	vt_fill(b.buf, 64, 0xe4);
	send_wr(&a, IBV_WR_RDMA_READ, (uintptr_t)a.buf, 64, a.mr->lkey, (uintptr_t)b.buf,
		b.mr->rkey, 2);
	expect_status(&a, 2, IBV_WC_REM_ACCESS_ERR, "READ from an MR without remote read");
	vt_check(a.buf, 4096, 0xe3, "the destination of a refused READ, untouched");
	vt_check(b.buf, 64, 0xe4, "the source of a refused READ, untouched");
out2:
	vt_close(&a);
	vt_close(&b);

	if (!pair(&a, &b, &p, &pb))
		goto out3;
	vt_fill(a.buf, 64, 0xe5);
	vt_fill(b.buf, 64, 0xe6);
	send_wr(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)a.buf, 8, a.mr->lkey,
		(uintptr_t)b.buf, b.mr->rkey, 3);
	expect_status(&a, 3, IBV_WC_REM_ACCESS_ERR, "atomic on an MR without remote atomic");
	vt_check(b.buf, 64, 0xe6, "the target of a refused atomic, untouched");
	vt_check(a.buf, 64, 0xe5, "the result buffer of a refused atomic, untouched");
out3:
	vt_close(&a);
	vt_close(&b);
}

static void t_bad_keys(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);
	struct vt_end a, b;

	if (!pair(&a, &b, &p, &p))
		goto out;
	/* another key byte: the index names the MR, the key does not match */
	vt_fill(a.buf, 64, 0xe7);
	vt_fill(b.buf, 4096, 0xe8);
	send_wr(&a, IBV_WR_RDMA_WRITE, (uintptr_t)a.buf, 64, a.mr->lkey, (uintptr_t)b.buf,
		b.mr->rkey ^ 0x5a, 1);
	expect_status(&a, 1, IBV_WC_REM_ACCESS_ERR, "WRITE with a bad rkey");
	vt_check(b.buf, 4096, 0xe8, "the target of a WRITE with a bad rkey, untouched");
	expect_flush_after(&a, "bad rkey");
out:
	vt_close(&a);
	vt_close(&b);

	if (!pair(&a, &b, &p, &p))
		goto out2;
	/* 64 bytes starting 8 before the end of b's MR: not even those 8 are written */
	vt_fill(a.buf, 64, 0xe9);
	vt_fill(b.buf + VT_BUF - 4096, 4096, 0xea);
	send_wr(&a, IBV_WR_RDMA_WRITE, (uintptr_t)a.buf, 64, a.mr->lkey,
		(uintptr_t)b.buf + VT_BUF - 8, b.mr->rkey, 2);
	expect_status(&a, 2, IBV_WC_REM_ACCESS_ERR, "WRITE past the end of the MR");
	vt_check(b.buf + VT_BUF - 4096, 4096, 0xea, "the end of the MR after a WRITE past it");
out2:
	vt_close(&a);
	vt_close(&b);

	if (!pair(&a, &b, &p, &p))
		goto out3;
	vt_fill(a.buf, 8192, 0xeb);
	send_wr(&a, IBV_WR_RDMA_READ, (uintptr_t)a.buf, 4096, a.mr->lkey,
		(uintptr_t)b.buf - 4096, b.mr->rkey, 3);
	expect_status(&a, 3, IBV_WC_REM_ACCESS_ERR, "READ before the start of the MR");
	vt_check(a.buf, 8192, 0xeb, "the destination of a READ before the MR, untouched");
out3:
	vt_close(&a);
	vt_close(&b);

	if (!pair(&a, &b, &p, &p))
		goto out4;
	send_wr(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey ^ 0x5a, 0, 0, 4);
	expect_status(&a, 4, IBV_WC_LOC_PROT_ERR, "SEND with a bad lkey");
out4:
	vt_close(&a);
	vt_close(&b);
}

static void t_length(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);
	struct vt_end a, b;

	if (!pair(&a, &b, &p, &p))
		goto out;
	recv_wr(&b, (uintptr_t)b.buf, 100, 5);
	send_wr(&a, IBV_WR_SEND, (uintptr_t)a.buf, 1000, a.mr->lkey, 0, 0, 6);
	expect_status(&b, 5, IBV_WC_LOC_LEN_ERR, "receive buffer too small (responder)");
	expect_status(&a, 6, IBV_WC_REM_INV_REQ_ERR, "receive buffer too small (requester)");
	expect_async(&b, b.qp, IBV_EVENT_QP_REQ_ERR, "responder of the too long SEND");
out:
	vt_close(&a);
	vt_close(&b);
}

static void t_rnr(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);
	struct vt_end a, b;
	uint64_t t0;

	p.rnr_retry = 1;
	p.min_rnr_timer = 1;	/* 0.01 ms */
	if (!pair(&a, &b, &p, &p))
		goto out;
	t0 = vt_now_ms();
	send_wr(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0, 7);
	if (expect_status(&a, 7, IBV_WC_RNR_RETRY_EXC_ERR, "SEND with no receive posted"))
		vt_log("  RNR retries exhausted after %llu ms", (unsigned long long)(vt_now_ms() - t0));
	expect_flush_after(&a, "RNR retry exceeded");
out:
	vt_close(&a);
	vt_close(&b);
}

static void t_peer_gone(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);
	struct vt_end a, b;
	uint64_t t0, dt;
	/* 4.096 us << 12 = 16.8 ms per try, 1 + 3 tries: about 67 ms */
	p.timeout = 12;
	p.retry_cnt = 3;
	if (!pair(&a, &b, &p, &p))
		goto out;
	/* the peer QP disappears: nothing will ever answer */
	if (ibv_destroy_qp(b.qp)) {
		VT_FAIL("destroy_qp: %s", strerror(errno));
		goto out;
	}
	b.qp = NULL;
	t0 = vt_now_ms();
	send_wr(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0, 8);
	if (expect_status(&a, 8, IBV_WC_RETRY_EXC_ERR, "SEND to a QP that is gone")) {
		dt = vt_now_ms() - t0;
		vt_log("  transport retries exhausted after %llu ms", (unsigned long long)dt);
		/* IBTA: the ack timeout bounds each try; allow a generous scheduling margin */
		if (dt < 50)
			VT_FAIL("retry exceeded after %llu ms, before 4 x 16.8 ms of timeouts",
				(unsigned long long)dt);
	}
	expect_flush_after(&a, "retry exceeded");
out:
	vt_close(&a);
	vt_close(&b);
}

static void t_flush_recv(void)
{
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct vt_end a, b;

	if (!pair(&a, &b, &p, &p))
		goto out;
	for (int i = 0; i < 3; i++)
		recv_wr(&b, (uintptr_t)b.buf + 4096u * i, 4096, 10 + i);
	if (ibv_modify_qp(b.qp, &qa, IBV_QP_STATE)) {
		VT_FAIL("modify to ERR: %s", strerror(errno));
		goto out;
	}
	for (int i = 0; i < 3; i++)
		expect_status(&b, 10 + i, IBV_WC_WR_FLUSH_ERR, "receive of a QP put in ERR");
	recv_wr(&b, (uintptr_t)b.buf, 4096, 20);
	expect_status(&b, 20, IBV_WC_WR_FLUSH_ERR, "receive posted to a QP in ERR");
out:
	vt_close(&a);
	vt_close(&b);
}

/* registrations the kernel could not pin (tests/lib/reg_mr_fault.h), on both devices */
static void t_reg_fault(void)
{
	const char *devs[] = {vt_opt.dev_a, vt_opt.dev_b};
	struct vt_qp_params p = vt_default_params(IBV_QPT_RC);

	for (int i = 0; i < 2; i++) {
		struct vt_end e;
		int bad;

		if (vt_open(&e, devs[i], &p)) {
			VT_FAIL("open %s", devs[i]);
			continue;
		}
		bad = bv_reg_mr_fault_test(e.pd);
		if (bad)
			VT_FAIL("%s: %d registration checks failed", devs[i], bad);
		vt_close(&e);
	}
}

void vt_error_tests(void)
{
	vt_log("errors: registrations over unmapped or read-only memory");
	t_reg_fault();
	vt_log("errors: remote access");
	t_remote_access();
	vt_log("errors: keys and bounds");
	t_bad_keys();
	vt_log("errors: length");
	t_length();
	vt_log("errors: RNR");
	t_rnr();
	vt_log("errors: peer gone");
	t_peer_gone();
	vt_log("errors: flush");
	t_flush_recv();
}
