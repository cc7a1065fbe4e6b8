// SPDX-License-Identifier: MIT
/*
 * cx4d isolation and robustness at the protocol level (kernel-abi/cx4_proto.h), below the
 * provider: two clients of one daemon, each speaking the protocol directly.
 *
 *  - a client cannot name another client's objects (its handles index its own table);
 *  - a client's objects keep working while another client frees its own with the same
 *    handle number;
 *  - malformed requests (wrong sizes, unknown ops, out-of-range values, missing or wrong
 *    descriptors) get an errno, never a crash, and the daemon keeps serving.
 *
 *   cx4_isolation_test DEVICE      (socket: $BV_RUNDIR/DEVICE.sock)
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bv_msg.h"
#include "bv_paths.h"
#include "cx4_proto.h"

static int failures;

#define CHECK(cond, ...)                                             \
	do {                                                         \
		if (!(cond)) {                                       \
			fprintf(stderr, "FAIL line %d: ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);                \
			fputc('\n', stderr);                         \
			failures++;                                  \
		}                                                    \
	} while (0)

struct client {
	int sock;
	uint32_t seq;
	int async_fd;
};

static int call(struct client *c, uint16_t op, const void *req, size_t len, const int *fds,
		unsigned int nfds, void *rsp, size_t rsp_max, size_t *rsp_len)
{
	int rfds[4] = {-1, -1, -1, -1};
	struct bv_call k = {.op = op,
			    .req = req,
			    .req_len = len,
			    .fds = fds,
			    .nfds = nfds,
			    .rsp = rsp,
			    .rsp_max = rsp_max,
			    .rfds = rfds,
			    .nrfds = 4};
	int ret = bv_msg_call(c->sock, &c->seq, &k);

	for (unsigned int i = 0; i < k.nrfds; i++)
		close(rfds[i]);
	if (rsp_len)
		*rsp_len = k.rsp_len;
	return ret;
}

static int open_client(const char *dev, struct client *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct bv_hello_req h = {
	    .role = BV_ROLE_VERBS, .pid = (uint32_t)getpid(), .comm = "isolation", .kind = "cx4"};
	struct bv_hello_rsp r;
	char path[BV_PATH_MAX];
	int rfds[1] = {-1};
	struct bv_call k = {.op = BV_OP_HELLO,
			    .req = &h,
			    .req_len = sizeof(h),
			    .rsp = &r,
			    .rsp_max = sizeof(r),
			    .rfds = rfds,
			    .nrfds = 1};

	if (bv_run_path(path, sizeof(path), dev, ".sock") || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	c->seq = 0;
	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0 || connect(c->sock, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	if (bv_msg_call(c->sock, &c->seq, &k) || k.nrfds != 1)
		return -1;
	c->async_fd = rfds[0];
	return 0;
}

static void close_client(struct client *c)
{
	close(c->sock);
	close(c->async_fd);
}

/* A queue buffer as the provider makes one (providers/cx4/buf.c): sealed against shrinking. */
static int memfd_sealed(size_t len, bool seal)
{
	int fd = memfd_create("isolation", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd >= 0 && (ftruncate(fd, (off_t)len) ||
			(seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK)))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int memfd(size_t len)
{
	return memfd_sealed(len, true);
}

int main(int argc, char **argv)
{
	struct client a, b;
	struct cx4_alloc_ucontext_rsp uc;
	struct cx4_alloc_pd_rsp pda, pdb;
	struct cx4_handle_req hr;
	struct cx4_reg_mr_rsp mr;
	struct cx4_create_cq_rsp cq;
	struct cx4_destroy_rsp dr;
	static uint8_t buf[1 << 16] __attribute__((aligned(4096)));
	size_t n;
	int ret, fd;

	if (argc != 2) {
		fprintf(stderr, "usage: cx4_isolation_test DEVICE\n");
		return 2;
	}
	if (open_client(argv[1], &a) || open_client(argv[1], &b)) {
		fprintf(stderr, "FAIL: cannot connect to the daemon of %s\n", argv[1]);
		return 1;
	}
	CHECK(!call(&a, CX4_OP_ALLOC_UCONTEXT, NULL, 0, NULL, 0, &uc, sizeof(uc), &n) &&
		  n == sizeof(uc),
	      "A: ALLOC_UCONTEXT");
	CHECK(!call(&b, CX4_OP_ALLOC_UCONTEXT, NULL, 0, NULL, 0, &uc, sizeof(uc), &n),
	      "B: ALLOC_UCONTEXT");
	CHECK(call(&b, CX4_OP_ALLOC_UCONTEXT, NULL, 0, NULL, 0, &uc, sizeof(uc), &n) == EEXIST,
	      "B: a second ALLOC_UCONTEXT must fail with EEXIST");

	/* A's PD: B cannot free it, use it, or see it */
	CHECK(!call(&a, CX4_OP_ALLOC_PD, NULL, 0, NULL, 0, &pda, sizeof(pda), NULL), "A: PD");
	hr = (struct cx4_handle_req){.handle = pda.handle};
	CHECK(call(&b, CX4_OP_DEALLOC_PD, &hr, sizeof(hr), NULL, 0, NULL, 0, NULL) == EINVAL,
	      "B freed A's PD");
	{
		struct cx4_reg_mr_req r = {.pd_handle = pda.handle,
					   .access = 1,
					   .addr = (uintptr_t)buf,
					   .length = sizeof(buf),
					   .hca_va = (uintptr_t)buf};

		CHECK(call(&b, CX4_OP_REG_MR, &r, sizeof(r), NULL, 0, &mr, sizeof(mr), NULL) ==
			  EINVAL,
		      "B registered memory in A's PD");
	}
	/* B gets its own PD with the same handle number; freeing it leaves A's alone */
	CHECK(!call(&b, CX4_OP_ALLOC_PD, NULL, 0, NULL, 0, &pdb, sizeof(pdb), NULL), "B: PD");
	CHECK(pdb.handle == pda.handle && pdb.pdn != pda.pdn,
	      "handles are per client (A %u/pdn %u, B %u/pdn %u)", pda.handle, pda.pdn, pdb.handle,
	      pdb.pdn);
	hr.handle = pdb.handle;
	CHECK(!call(&b, CX4_OP_DEALLOC_PD, &hr, sizeof(hr), NULL, 0, NULL, 0, NULL), "B: free PD");
	{
		struct cx4_reg_mr_req r = {.pd_handle = pda.handle,
					   .access = IBV_ACCESS_LOCAL_WRITE,
					   .addr = (uintptr_t)buf,
					   .length = sizeof(buf),
					   .hca_va = (uintptr_t)buf};

		CHECK(!call(&a, CX4_OP_REG_MR, &r, sizeof(r), NULL, 0, &mr, sizeof(mr), NULL),
		      "A: REG_MR in its PD after B freed its own");
		/* rules of ib_reg_mr: remote write needs local write; no length; VA/IOVA skew */
		r.access = IBV_ACCESS_REMOTE_WRITE;
		CHECK(call(&a, CX4_OP_REG_MR, &r, sizeof(r), NULL, 0, &mr, sizeof(mr), NULL) ==
			  EINVAL,
		      "REG_MR: remote write without local write accepted");
		r.access = IBV_ACCESS_LOCAL_WRITE;
		r.length = 0;
		CHECK(call(&a, CX4_OP_REG_MR, &r, sizeof(r), NULL, 0, &mr, sizeof(mr), NULL) ==
			  EINVAL,
		      "REG_MR of 0 bytes accepted");
		r.length = sizeof(buf);
		r.hca_va = (uintptr_t)buf + 8;
		CHECK(call(&a, CX4_OP_REG_MR, &r, sizeof(r), NULL, 0, &mr, sizeof(mr), NULL) ==
			  EINVAL,
		      "REG_MR with VA and IOVA in different page offsets accepted");
		r.hca_va = (uintptr_t)buf;
		/*
		 * A region's pages as a memfd (what the provider's bv_shadow.c hands over): it must
		 * be a regular file sealed against shrinking and hold the pages, else cx4d could be
		 * made to touch a page past its end (SIGBUS).
		 */
		{
			int mfd = memfd_create("isolation-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
			int small = memfd_create("isolation-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
			int p[2];

			CHECK(mfd >= 0 && small >= 0 && !pipe(p), "memfd/pipe");
			CHECK(!ftruncate(mfd, 2 * (off_t)sizeof(buf)) && !ftruncate(small, 4096),
			      "ftruncate");
			CHECK(call(&a, CX4_OP_REG_MR, &r, sizeof(r), &mfd, 1, &mr, sizeof(mr),
				   NULL) == EINVAL,
			      "REG_MR with a memfd that may shrink accepted");
			CHECK(!fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK) &&
				  !fcntl(small, F_ADD_SEALS, F_SEAL_SHRINK),
			      "seals");
			CHECK(call(&a, CX4_OP_REG_MR, &r, sizeof(r), &small, 1, &mr, sizeof(mr),
				   NULL) == EINVAL,
			      "REG_MR with a memfd smaller than the region accepted");
			CHECK(call(&a, CX4_OP_REG_MR, &r, sizeof(r), &p[0], 1, &mr, sizeof(mr),
				   NULL) == EINVAL,
			      "REG_MR with a pipe for memory accepted");
			r.fd_off = 100;
			CHECK(call(&a, CX4_OP_REG_MR, &r, sizeof(r), &mfd, 1, &mr, sizeof(mr),
				   NULL) == EINVAL,
			      "REG_MR with an unaligned memfd offset accepted");
			r.fd_off = sizeof(buf) + 4096;
			CHECK(call(&a, CX4_OP_REG_MR, &r, sizeof(r), &mfd, 1, &mr, sizeof(mr),
				   NULL) == EINVAL,
			      "REG_MR with the region past the memfd's end accepted");
			r.fd_off = sizeof(buf);
			CHECK(
			    !call(&a, CX4_OP_REG_MR, &r, sizeof(r), &mfd, 1, &mr, sizeof(mr), NULL),
			    "REG_MR of a sealed memfd refused");
			hr.handle = mr.handle;
			CHECK(!call(&a, CX4_OP_DEREG_MR, &hr, sizeof(hr), NULL, 0, NULL, 0, NULL),
			      "DEREG_MR of the memfd region");
			r.fd_off = 0;
			close(mfd);
			close(small);
			close(p[0]);
			close(p[1]);
		}
	}
	/* A's PD is in use by its MR: busy */
	hr.handle = pda.handle;
	CHECK(call(&a, CX4_OP_DEALLOC_PD, &hr, sizeof(hr), NULL, 0, NULL, 0, NULL) == EBUSY,
	      "PD with an MR freed");

	/* CQ: A's; B cannot destroy it; bad geometry and missing fds are refused */
	fd = memfd(2 * 4096);
	{
		struct cx4_create_cq_req r = {.user_handle = 1,
					      .buf_len = 2 * 4096,
					      .dbr_offset = 4096,
					      .log_cq_size = 6,
					      .cqe_size = 64};

		CHECK(call(&a, CX4_OP_CREATE_CQ, &r, sizeof(r), NULL, 0, &cq, sizeof(cq), NULL) ==
			  EINVAL,
		      "CREATE_CQ without its buffer fd accepted");
		r.dbr_offset = 8; /* inside the CQE ring */
		CHECK(call(&a, CX4_OP_CREATE_CQ, &r, sizeof(r), &fd, 1, &cq, sizeof(cq), NULL) ==
			  EINVAL,
		      "CREATE_CQ with the doorbell record in the ring accepted");
		r.dbr_offset = 4096;
		r.log_cq_size = 40;
		CHECK(call(&a, CX4_OP_CREATE_CQ, &r, sizeof(r), &fd, 1, &cq, sizeof(cq), NULL) ==
			  EINVAL,
		      "CREATE_CQ of 2^40 entries accepted");
		r.log_cq_size = 6;
		r.comp_vector = 1000;
		CHECK(call(&a, CX4_OP_CREATE_CQ, &r, sizeof(r), &fd, 1, &cq, sizeof(cq), NULL) ==
			  EINVAL,
		      "CREATE_CQ on vector 1000 accepted");
		r.comp_vector = 0;
		/*
		 * A buffer the client could shrink under the device, or one smaller than it says,
		 * would kill cx4d with SIGBUS at the next completion: refused.
		 */
		{
			int loose = memfd_sealed(2 * 4096, false), small = memfd_sealed(4096, true);

			CHECK(loose >= 0 && small >= 0, "memfds");
			CHECK(call(&a, CX4_OP_CREATE_CQ, &r, sizeof(r), &loose, 1, &cq, sizeof(cq),
				   NULL) == EINVAL,
			      "CREATE_CQ with a buffer that may shrink accepted");
			CHECK(call(&a, CX4_OP_CREATE_CQ, &r, sizeof(r), &small, 1, &cq, sizeof(cq),
				   NULL) == EINVAL,
			      "CREATE_CQ with a buffer smaller than buf_len accepted");
			close(loose);
			close(small);
		}
		ret = call(&a, CX4_OP_CREATE_CQ, &r, sizeof(r), &fd, 1, &cq, sizeof(cq), NULL);
		CHECK(!ret, "A: CREATE_CQ: %d", ret);
	}
	close(fd);
	hr.handle = cq.handle;
	CHECK(call(&b, CX4_OP_DESTROY_CQ, &hr, sizeof(hr), NULL, 0, &dr, sizeof(dr), NULL) ==
		  EINVAL,
	      "B destroyed A's CQ");
	/* QP in B naming A's CQ and PD handles: B has none of those */
	fd = memfd(4 * 4096);
	{
		struct cx4_create_qp_req r = {.user_handle = 2,
					      .buf_len = 4 * 4096,
					      .dbr_offset = 3 * 4096,
					      .qp_type = IBV_QPT_RC,
					      .pd_handle = pda.handle,
					      .send_cq_handle = cq.handle,
					      .recv_cq_handle = cq.handle,
					      .srq_handle = CX4_INVALID_HANDLE,
					      .log_sq_size = 4,
					      .log_rq_size = 4,
					      .log_rq_stride = 1};
		struct cx4_create_qp_rsp qr;

		CHECK(call(&b, CX4_OP_CREATE_QP, &r, sizeof(r), &fd, 1, &qr, sizeof(qr), NULL) ==
			  EINVAL,
		      "B created a QP on A's PD and CQ");
		r.qp_type = IBV_QPT_RAW_PACKET;
		CHECK(call(&a, CX4_OP_CREATE_QP, &r, sizeof(r), &fd, 1, &qr, sizeof(qr), NULL) ==
			  EOPNOTSUPP,
		      "raw packet QP accepted");
		r.qp_type = IBV_QPT_RC;
		CHECK(!call(&a, CX4_OP_CREATE_QP, &r, sizeof(r), &fd, 1, &qr, sizeof(qr), NULL),
		      "A: CREATE_QP on its own PD and CQ");
		hr.handle = qr.handle;
		CHECK(call(&b, CX4_OP_DESTROY_QP, &hr, sizeof(hr), NULL, 0, &dr, sizeof(dr),
			   NULL) == EINVAL,
		      "B destroyed A's QP");
		/* the CQ is in use by the QP */
		hr.handle = cq.handle;
		CHECK(call(&a, CX4_OP_DESTROY_CQ, &hr, sizeof(hr), NULL, 0, &dr, sizeof(dr),
			   NULL) == EBUSY,
		      "CQ in use destroyed");
	}
	close(fd);

	/* garbage */
	CHECK(call(&a, CX4_OP_ALLOC_PD, buf, 7, NULL, 0, &pdb, sizeof(pdb), NULL) == EINVAL,
	      "ALLOC_PD with a payload accepted");
	CHECK(call(&a, CX4_OP_MAX + 3, NULL, 0, NULL, 0, NULL, 0, NULL) == EOPNOTSUPP,
	      "unknown op accepted");
	CHECK(call(&a, CX4_OP_MODIFY_QP, buf, 3, NULL, 0, NULL, 0, NULL) == EINVAL,
	      "MODIFY_QP of 3 bytes accepted");
	hr.handle = 0xfffffff0;
	CHECK(call(&a, CX4_OP_DEREG_MR, &hr, sizeof(hr), NULL, 0, NULL, 0, NULL) == EINVAL,
	      "DEREG_MR of a wild handle accepted");

	/* A leaves without cleaning up: the daemon destroys its QP, CQ, MR and PD */
	close_client(&a);
	CHECK(!call(&b, CX4_OP_ALLOC_PD, NULL, 0, NULL, 0, &pdb, sizeof(pdb), NULL),
	      "the daemon serves B after A left");
	close_client(&b);
	printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures,
	       failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
