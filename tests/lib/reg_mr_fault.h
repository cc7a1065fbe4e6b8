/* SPDX-License-Identifier: MIT */
/*
 * ibv_reg_mr over memory the kernel could not pin fails with EFAULT and leaves nothing
 * behind, as on Linux (ib_umem_get -> pin_user_pages_fast, FOLL_WRITE for a writable region):
 * a hole in the middle, a range running into unmapped memory, read-only memory with write
 * access. Read-only memory registers without write access. Shared by the cx4 and ntb verbs
 * tests; bv_reg_mr_fault_test() returns the number of failed checks, each reported on stderr.
 */
#ifndef BV_REG_MR_FAULT_H
#define BV_REG_MR_FAULT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define BV_RMF_WRITE (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
#define BV_RMF_REFUSALS 500

/* One registration expected to fail with EFAULT (err 0: to succeed, and be deregistered). */
static inline int bv_rmf_expect(struct ibv_pd *pd, void *p, size_t len, int access, int err,
				const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, p, len, access);
	if (err ? (mr || errno != err) : !mr) {
		fprintf(stderr, "FAIL reg_mr_fault: %s (access 0x%x): %s, errno %d (%s), want %s\n",
			what, access, mr ? "registered" : "refused", errno, strerror(errno),
			err ? strerror(err) : "success");
		if (mr)
			ibv_dereg_mr(mr);
		return 1;
	}
	if (mr && ibv_dereg_mr(mr)) {
		fprintf(stderr, "FAIL reg_mr_fault: dereg of %s: %s\n", what, strerror(errno));
		return 1;
	}
	return 0;
}

static inline int bv_reg_mr_fault_test(struct ibv_pd *pd)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct ibv_device_attr da;
	int bad = 0, max;
	char *p;

	p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || ibv_query_device(pd->context, &da)) {
		fprintf(stderr, "FAIL reg_mr_fault: mmap or query_device: %s\n", strerror(errno));
		return 1;
	}
	memset(p, 0x5a, 4 * pg);
	/* pages: 0 rw, 1 unmapped, 2 read-only, 3 unmapped */
	munmap(p + pg, pg);
	munmap(p + 3 * pg, pg);
	mprotect(p + 2 * pg, pg, PROT_READ);
	bad += bv_rmf_expect(pd, p, pg, BV_RMF_WRITE, 0, "a mapped read/write page");
	bad += bv_rmf_expect(pd, p, 3 * pg, BV_RMF_WRITE, EFAULT, "a hole in the middle");
	bad += bv_rmf_expect(pd, p, 3 * pg, 0, EFAULT, "a hole in the middle, no write");
	bad += bv_rmf_expect(pd, p + pg / 2, pg, IBV_ACCESS_LOCAL_WRITE, EFAULT,
			     "a range ending in unmapped memory");
	bad += bv_rmf_expect(pd, p + 2 * pg + 100, pg, IBV_ACCESS_REMOTE_READ, EFAULT,
			     "read-only memory running into unmapped memory");
	bad += bv_rmf_expect(pd, p + 2 * pg, pg, IBV_ACCESS_LOCAL_WRITE, EFAULT,
			     "read-only memory, local write");
	bad += bv_rmf_expect(pd, p + 2 * pg, pg, BV_RMF_WRITE, EFAULT,
			     "read-only memory, remote write");
	bad += bv_rmf_expect(pd, p + 2 * pg + 8, 64, 0, 0, "read-only memory, no write");
	bad += bv_rmf_expect(pd, p + 2 * pg, pg, IBV_ACCESS_REMOTE_READ, 0,
			     "read-only memory, remote read");
	/*
	 * Nothing is left behind: many refused registrations (BV_RMF_REFUSALS; not past the
	 * device's key limit, which would take ntb 16 s), then the good one still registers.
	 */
	max = da.max_mr > 0 && da.max_mr < BV_RMF_REFUSALS ? da.max_mr + 16 : BV_RMF_REFUSALS;
	for (int i = 0; i < max && !bad; i++)
		bad += bv_rmf_expect(pd, p, 3 * pg, BV_RMF_WRITE, EFAULT, "refused again");
	bad += bv_rmf_expect(pd, p, pg, BV_RMF_WRITE, 0, "a mapped page after the refusals");
	if (*(volatile char *)(p + 2 * pg) != 0x5a || *(volatile char *)p != 0x5a) {
		fprintf(stderr, "FAIL reg_mr_fault: the registered pages changed\n");
		bad++;
	}
	munmap(p, pg);
	munmap(p + 2 * pg, pg);
	return bad;
}

#endif /* BV_REG_MR_FAULT_H */
