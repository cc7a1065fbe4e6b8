// SPDX-License-Identifier: MIT
/*
 * bvd_proto_fuzz for cx4d: the daemon over a ConnectX-4 model of its own in this process
 * (cx4d_ops, the model backend). A provider opens with ALLOC_UCONTEXT; queue buffers come as a
 * memfd of buf_len bytes. Nothing left behind: the model holds as many PDs, CQs, memory keys,
 * QPs, SRQs and mappings of client memory by pid as after the daemon's own bring-up (the
 * harness looks at the model, as a test may: the daemon's accounting is what is checked).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bvd_proto_fuzz.h"
#include "cx4_proto.h"
#include "cx4d.h"
#include "model.h"

static struct bvd *dmn;
static struct {
	uint32_t pds, cqs, mkeys, qps, srqs;
	size_t maps;
} base;

const char *fuzz_kind_config(void)
{
	static char conf[256];
	/* 127.a.b.c from the pid: parallel fuzzers (and the tests) never share an address */
	uint32_t v = ((uint32_t)getpid() << 2 | 1) & 0xffffff;

	if ((v & 0xff) == 0 || (v & 0xff) == 0xff)
		v ^= 0x80;
	snprintf(conf, sizeof(conf), "[device " FUZZ_DEVICE "]\nkind = cx4\nip = 127.%u.%u.%u\n",
		 v >> 16 & 0xff, v >> 8 & 0xff, v & 0xff);
	return conf;
}

const struct bvd_kind_ops *fuzz_kind_ops(void)
{
	return &cx4d_ops;
}

static void snapshot(uint32_t *pds, uint32_t *cqs, uint32_t *mkeys, uint32_t *qps,
		     uint32_t *srqs, size_t *maps)
{
	struct mdev *m = mdev_of(cx4d_of(dmn)->bus);

	pthread_mutex_lock(&m->lock);
	*pds = m->pds.count;
	*cqs = m->cqs.count;
	*mkeys = m->mkeys.count;
	*qps = m->qps.count;
	*srqs = m->srqs.count;
	/* registered memory reached by pid (the daemon's own DMA memory is memfds, and grows in
	 * chunks as the device asks for pages: not comparable from input to input) */
	*maps = 0;
	for (size_t i = 0; i < m->iommu.n; i++)
		*maps += m->iommu.m[i].pid != 0;
	pthread_mutex_unlock(&m->lock);
}

int fuzz_kind_init(struct bvd *d)
{
	int err;

	dmn = d;
	err = d->ops->init(d);
	if (err)
		return err;
	snapshot(&base.pds, &base.cqs, &base.mkeys, &base.qps, &base.srqs, &base.maps);
	return 0;
}

void fuzz_kind_fini(void)
{
}

void fuzz_kind_pump(void)
{
}

uint16_t fuzz_kind_base(void)
{
	return BV_OP_CX4_BASE;
}

size_t fuzz_kind_buf_len(uint16_t op, const uint8_t *p, size_t len)
{
	uint64_t buf_len;

	/* CREATE_CQ/SRQ/QP: buf_len is the second u64 of each */
	if ((op != CX4_OP_CREATE_CQ && op != CX4_OP_CREATE_SRQ && op != CX4_OP_CREATE_QP) ||
	    len < 16)
		return 65536;
	memcpy(&buf_len, p + 8, sizeof(buf_len));
	return buf_len && buf_len <= (16u << 20) ? (size_t)buf_len : 65536;
}

void fuzz_kind_open(struct fclient *c)
{
	int st = fuzz_call(c, CX4_OP_ALLOC_UCONTEXT, NULL, 0, NULL, 0, NULL, 0, NULL);

	if (st)
		fuzz_die("ALLOC_UCONTEXT failed (%d)", st);
}

void fuzz_kind_canary(struct fclient *c)
{
	struct cx4_alloc_pd_rsp pd;
	struct cx4_handle_req h = { 0 };
	size_t n = 0;
	int st;

	fuzz_kind_open(c);
	st = fuzz_call(c, CX4_OP_ALLOC_PD, NULL, 0, NULL, 0, &pd, sizeof(pd), &n);
	if (st || n != sizeof(pd))
		fuzz_die("canary: ALLOC_PD failed (%d)", st);
	h.handle = pd.handle;
	st = fuzz_call(c, CX4_OP_DEALLOC_PD, &h, sizeof(h), NULL, 0, NULL, 0, NULL);
	if (st)
		fuzz_die("canary: DEALLOC_PD failed (%d)", st);
}

void fuzz_kind_check_idle(void)
{
	uint32_t pds, cqs, mkeys, qps, srqs;
	size_t maps;

	snapshot(&pds, &cqs, &mkeys, &qps, &srqs, &maps);
	if (pds != base.pds || cqs != base.cqs || mkeys != base.mkeys || qps != base.qps ||
	    srqs != base.srqs || maps != base.maps)
		fuzz_die("the clients left, the device still holds PDs %u (%u before), CQs %u (%u), "
			 "mkeys %u (%u), QPs %u (%u), SRQs %u (%u), mappings by pid %zu (%zu)",
			 pds, base.pds, cqs, base.cqs, mkeys, base.mkeys, qps, base.qps, srqs,
			 base.srqs, maps, base.maps);
	if (cx4d_of(dmn)->dead)
		fuzz_die("the device is dead after the input");
}
