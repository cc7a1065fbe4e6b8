// SPDX-License-Identifier: MIT
/*
 * Test driver for the ConnectX-4 model: command queue, mailboxes, firmware pages, an EQ.
 * Follows the Linux mlx5_core bring-up order (tests/cx4/data/mlx5_core-trace-cx4lx.txt.gz)
 * through the bus only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tdrv.h"

const char *t_name = "?";

static void drain(struct tdev *t);

static void sleep_us(unsigned int us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void tdev_hexdump(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i += 16) {
		fprintf(stderr, "%04zx:", i);
		for (size_t j = i; j < i + 16 && j < len; j++)
			fprintf(stderr, " %02x", b[j]);
		fputc('\n', stderr);
	}
}

int tmem_alloc(struct tdev *t, size_t len, struct tmem *m)
{
	struct cx4_dma_map map;

	len = (len + 4095) & ~(size_t)4095;
	m->fd = memfd_create("tdrv", MFD_CLOEXEC);
	if (m->fd < 0 || ftruncate(m->fd, (off_t)len))
		return -errno;
	m->p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->p == MAP_FAILED)
		return -errno;
	m->len = len;
	m->iova = t->next_iova;
	/* a hole after each mapping: running off its end is a fault, not the next buffer */
	t->next_iova += len + 4096;
	map = (struct cx4_dma_map){
	    .iova = m->iova, .len = len, .perm = CX4_DMA_READ | CX4_DMA_WRITE, .fd = m->fd};
	return t->bus->ops->dma_map(t->bus, &map);
}

void tmem_free(struct tdev *t, struct tmem *m)
{
	if (!m->p)
		return;
	if (m->scattered)
		for (size_t off = 0; off < m->len; off += 4096)
			t->bus->ops->dma_unmap(t->bus, tmem_iova(m, off), 4096);
	else
		t->bus->ops->dma_unmap(t->bus, m->iova, m->len);
	munmap(m->p, m->len);
	close(m->fd);
	memset(m, 0, sizeof(*m));
}

uint64_t tmem_map_va(struct tdev *t, void *va, size_t len)
{
	struct cx4_dma_map map = {.iova = t->next_iova,
				  .len = len,
				  .perm = CX4_DMA_READ | CX4_DMA_WRITE,
				  .fd = -1,
				  .pid = getpid(),
				  .va = (uint64_t)(uintptr_t)va};

	if (t->bus->ops->dma_map(t->bus, &map))
		return 0;
	t->next_iova += len + 4096;
	return map.iova;
}

uint32_t tdev_addr(unsigned int k)
{
	/* 127.a.b.c from the pid and k: parallel test processes never share an address */
	uint32_t v = ((uint32_t)getpid() << 2 | (k & 3)) & 0xffffff;

	if ((v & 0xff) == 0 || (v & 0xff) == 0xff)
		v ^= 0x80;
	return htonl(0x7f000000u | v);
}

int tdev_open(struct tdev *t, const struct cx4_model_config *cfg)
{
	static unsigned int k;
	struct cx4_model_config c = {0};
	int err;

	memset(t, 0, sizeof(*t));
	if (cfg)
		c = *cfg;
	if (!c.ipv4)
		c.ipv4 = tdev_addr(k++);
	if (!c.log && getenv("CX4_MODEL_LOG"))
		c.log = stderr;
	if (!c.spin_us && getenv("CX4_MODEL_SPIN_US"))
		c.spin_us = (unsigned int)atoi(getenv("CX4_MODEL_SPIN_US"));
	if (!c.rt_priority && getenv("CX4_MODEL_RT"))
		c.rt_priority = (unsigned int)atoi(getenv("CX4_MODEL_RT"));
	err = cx4_model_open(&c, &t->bus);
	if (err)
		return err;
	t->ip = c.ipv4;
	t->bar = t->bus->bar0;
	t->next_iova = 0x10000000;
	return 0;
}

void tdev_close(struct tdev *t)
{
	if (t->bus)
		t->bus->ops->close(t->bus);
	for (int i = 0; i < 64; i++)
		if (t->pages[i].p) {
			munmap(t->pages[i].p, t->pages[i].len);
			close(t->pages[i].fd);
		}
	struct tmem *ms[] = {&t->cmdq, &t->mbox_in, &t->mbox_out, &t->eq_mem};

	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		if (ms[i]->p) {
			munmap(ms[i]->p, ms[i]->len);
			close(ms[i]->fd);
		}
	memset(t, 0, sizeof(*t));
}

static int wait_init(struct tdev *t)
{
	uint64_t end = now_ms() + 2000;

	while (cx4_mmio_read32(&t->bar, 0x1fc) >> 31)
		if (now_ms() > end)
			return -ETIMEDOUT;
		else
			sleep_us(100);
	return 0;
}

int tdev_cmdif_init(struct tdev *t)
{
	uint32_t l;
	int err;

	if (cx4_mmio_read32(&t->bar, 0x004) >> 16 != CX4_CMDIF_REV)
		return -EPROTO;
	err = tmem_alloc(t, 4096, &t->cmdq);
	if (!err)
		err = tmem_alloc(t, TDEV_MBOX_BLOCKS * 1024, &t->mbox_in);
	if (!err)
		err = tmem_alloc(t, TDEV_MBOX_BLOCKS * 1024, &t->mbox_out);
	if (!err)
		err = wait_init(t);
	if (err)
		return err;
	l = cx4_mmio_read32(&t->bar, 0x14);
	if (((l >> 4) & 0xf) > 5 || ((l >> 4) & 0xf) + (l & 0xf) > 12)
		return -EPROTO;
	cx4_mmio_write32(&t->bar, 0x10, (uint32_t)(t->cmdq.iova >> 32));
	cx4_mmio_write32(&t->bar, 0x14, (uint32_t)t->cmdq.iova);
	/* the read-only size bits read back once the device took the write */
	for (uint64_t end = now_ms() + 2000; (cx4_mmio_read32(&t->bar, 0x14) & 0xff) != (l & 0xff);)
		if (now_ms() > end)
			return -ETIMEDOUT;
		else
			sleep_us(20);
	return wait_init(t);
}

static void fill_chain(struct tmem *m, const uint8_t *data, uint32_t len, uint8_t token)
{
	uint32_t n = cx4_cmd_mailbox_count(len);

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *b = m->p + (size_t)i * 1024;
		uint32_t at = 16 + i * 512, k = len - at < 512 ? len - at : 512;

		memset(b, 0, CX4_MAILBOX_SIZE);
		if (data)
			memcpy(b, data + at, k);
		cx4_set64(b, CX4_MAILBOX_NEXT_PTR, i + 1 < n ? tmem_iova(m, (i + 1) * 1024ull) : 0);
		cx4_set(b, CX4_MAILBOX_BLOCK_NUMBER, i);
		cx4_set(b, CX4_MAILBOX_TOKEN, token);
	}
}

int tdev_cmd_hook(struct tdev *t, const void *in, uint32_t ilen, void *out, uint32_t olen,
		  void (*hook)(struct tdev *t, uint8_t *entry, void *ctx), void *ctx)
{
	uint8_t *e = t->cmdq.p + t->slot * 64;
	volatile uint8_t *own = e + 0x3f;
	uint64_t end;

	if (cx4_cmd_mailbox_count(ilen) > TDEV_MBOX_BLOCKS ||
	    cx4_cmd_mailbox_count(olen) > TDEV_MBOX_BLOCKS)
		return -3;
	if (++t->token == 0)
		t->token = 1;
	memset(e, 0, 64);
	cx4_set(e, CX4_CMD_TYPE, CX4_CMD_TYPE_PCIE);
	cx4_set(e, CX4_CMD_INPUT_LENGTH, ilen);
	cx4_set(e, CX4_CMD_OUTPUT_LENGTH, olen);
	memcpy(e + CX4_CMD_INPUT_INLINE, in, ilen < 16 ? ilen : 16);
	fill_chain(&t->mbox_in, in, ilen, t->token);
	fill_chain(&t->mbox_out, NULL, olen, t->token);
	if (ilen > 16)
		cx4_set64(e, CX4_CMD_INPUT_MAILBOX_PTR, t->mbox_in.iova);
	if (olen > 16)
		cx4_set64(e, CX4_CMD_OUTPUT_MAILBOX_PTR, t->mbox_out.iova);
	cx4_set(e, CX4_CMD_TOKEN, t->token);
	cx4_set(e, CX4_CMD_OWNERSHIP, 1);
	if (hook)
		hook(t, e, ctx);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cx4_mmio_write32(&t->bar, 0x18, 1u << t->slot);
	end = now_ms() + (t->cmd_timeout_ms ? t->cmd_timeout_ms : 10000);
	while (*own & 1) {
		if (now_ms() > end)
			return -2;
		sleep_us(5);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (t->autodrain && t->eq_mem.p)
		drain(t);
	t->deliv = *own >> 1;
	if (t->deliv)
		return -1;
	if (out) {
		memset(out, 0, olen);
		memcpy(out, e + CX4_CMD_OUTPUT_INLINE, olen < 16 ? olen : 16);
		for (uint32_t i = 0, at = 16; at < olen; i++, at += 512)
			memcpy((uint8_t *)out + at, t->mbox_out.p + (size_t)i * 1024,
			       olen - at < 512 ? olen - at : 512);
		t->syndrome = cx4_get(out, CX4_CMD_OUT_SYNDROME);
		return (int)cx4_get(out, CX4_CMD_OUT_STATUS);
	}
	return (int)cx4_get(e + CX4_CMD_OUTPUT_INLINE, CX4_CMD_OUT_STATUS);
}

int tdev_cmd(struct tdev *t, const void *in, uint32_t ilen, void *out, uint32_t olen)
{
	return tdev_cmd_hook(t, in, ilen, out, olen, NULL, NULL);
}

int tdev_simple(struct tdev *t, uint16_t opcode, uint16_t op_mod, uint32_t w8, uint32_t wc,
		uint8_t *out16)
{
	uint8_t in[16] = {0}, out[16];
	int st;

	cx4_set(in, CX4_CMD_IN_OPCODE, opcode);
	cx4_set(in, CX4_CMD_IN_OP_MOD, op_mod);
	cx4_set(in, CX4_FLD32(0x08), w8);
	cx4_set(in, CX4_FLD32(0x0c), wc);
	st = tdev_cmd(t, in, 16, out, 16);
	if (out16)
		memcpy(out16, out, 16);
	return st;
}

int tdev_give_pages(struct tdev *t, uint32_t n)
{
	uint32_t ilen = 0x10 + 8 * n;
	uint8_t *in = calloc(1, ilen);
	uint8_t out[16];
	int st;

	for (uint32_t i = 0; i < n; i++, t->pages_given++) {
		uint32_t c = t->pages_given / 64, k = t->pages_given % 64;

		if (c >= 64) {
			free(in);
			return -ENOMEM;
		}
		if (!t->pages[c].p && tmem_alloc(t, 64 * 4096, &t->pages[c])) {
			free(in);
			return -ENOMEM;
		}
		cx4_pas_set(in, CX4_MANAGE_PAGES_IN_PAS, i, tmem_iova(&t->pages[c], k * 4096ull));
	}
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_MANAGE_PAGES);
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_MANAGE_PAGES_OPMOD_ALLOC_SUCCESS);
	cx4_set(in, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES, n);
	st = tdev_cmd(t, in, ilen, out, 16);
	free(in);
	return st;
}

int tdev_create_eq(struct tdev *t, struct tmem *mem, uint32_t log_size, uint32_t intr,
		   uint64_t mask, uint32_t *eqn)
{
	uint8_t in[0x110 + 8 * 16] = {0}, out[16];
	uint8_t *eqc = in + CX4_CREATE_EQ_IN_EQC;
	uint32_t npas = (uint32_t)(((64ull << log_size) + 4095) / 4096);
	int st;

	/* sizes this helper does not allocate are for tests of the device's refusal */
	if (log_size > 14)
		npas = 1;
	else if (!mem->p && tmem_alloc(t, 64ull << log_size, mem))
		return -ENOMEM;
	for (size_t i = 0; mem->p && i < (64ull << log_size) && i < mem->len; i += 64)
		mem->p[i + 63] = 1; /* owner = 1: hardware-owned on the first pass */
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_CREATE_EQ);
	cx4_set(eqc, CX4_EQC_LOG_EQ_SIZE, log_size);
	cx4_set(eqc, CX4_EQC_UAR_PAGE, t->uar);
	cx4_set(eqc, CX4_EQC_INTR, intr);
	cx4_set(eqc, CX4_EQC_LOG_PAGE_SIZE, 0);
	cx4_set64(in, CX4_CREATE_EQ_IN_EVENT_BITMASK, mask);
	for (uint32_t i = 0; i < npas && i < 16 && mem->p; i++)
		cx4_pas_set(in, CX4_CREATE_EQ_IN_PAS, i, tmem_iova(mem, 4096ull * i));
	st = tdev_cmd(t, in, 0x110 + 8 * npas, out, 16);
	if (!st)
		*eqn = cx4_get(out, CX4_CREATE_EQ_OUT_EQ_NUMBER);
	return st;
}

int tdev_create_cq(struct tdev *t, struct tmem *mem, struct tmem *dbr, uint32_t log_size,
		   uint32_t eqn, uint32_t *cqn)
{
	return tdev_create_cq_ex(t, mem, dbr, log_size, eqn, 0, 0, cqn);
}

int tdev_create_cq_ex(struct tdev *t, struct tmem *mem, struct tmem *dbr, uint32_t log_size,
		      uint32_t eqn, uint32_t cqe_sz, uint32_t cc, uint32_t *cqn)
{
	uint8_t in[0x110 + 8 * 64] = {0}, out[16];
	uint8_t *cqc = in + CX4_CREATE_CQ_IN_CQC;
	uint64_t stride = cqe_sz ? 128 : 64, bytes = stride << log_size;
	uint32_t npas = (uint32_t)((bytes + 4095) / 4096);
	int st;

	if (npas > 64)
		npas = 1; /* a size for a refusal test: not allocated */
	else if (!mem->p && tmem_alloc(t, bytes, mem))
		return -ENOMEM;
	if (!dbr->p && tmem_alloc(t, 4096, dbr))
		return -ENOMEM;
	/* opcode invalid, owner 1, in the CQE64 (the second half of a 128-byte CQE) */
	for (size_t i = 0; mem->p && i < bytes && i < mem->len; i += stride)
		mem->p[i + stride - 1] = 0xf1;
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_CREATE_CQ);
	cx4_set(cqc, CX4_CQC_LOG_CQ_SIZE, log_size);
	cx4_set(cqc, CX4_CQC_CQE_SZ, cqe_sz);
	cx4_set(cqc, CX4_CQC_CC, cc);
	cx4_set(cqc, CX4_CQC_UAR_PAGE, t->uar);
	cx4_set(cqc, CX4_CQC_C_EQN, eqn);
	cx4_set64(cqc, CX4_CQC_DBR_ADDR, dbr->iova);
	for (uint32_t i = 0; i < npas && mem->p; i++)
		cx4_pas_set(in, CX4_CREATE_CQ_IN_PAS, i, tmem_iova(mem, 4096ull * i));
	st = tdev_cmd(t, in, 0x110 + 8 * npas, out, 16);
	if (!st)
		*cqn = cx4_get(out, CX4_CREATE_CQ_OUT_CQN);
	return st;
}

#define TEQ_LOG 7

static int eq_poll_hw(struct tdev *t, uint8_t *eqe64)
{
	uint8_t *e = t->eq_mem.p + (size_t)(t->eq_ci & ((1u << TEQ_LOG) - 1)) * 64;
	int type;

	if ((((volatile uint8_t *)e)[63] & 1) != ((t->eq_ci >> TEQ_LOG) & 1))
		return -1;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (eqe64)
		memcpy(eqe64, e, 64);
	type = e[1];
	t->eq_ci++;
	cx4_mmio_write32(&t->bar, t->uar * 4096u + 0x40, t->eqn << 24 | (t->eq_ci & 0xffffff));
	return type;
}

int tdev_eq_poll(struct tdev *t, uint8_t *eqe64)
{
	if (t->evq_head != t->evq_tail) {
		uint8_t *e = t->evq[t->evq_head++ % 64];

		if (eqe64)
			memcpy(eqe64, e, 64);
		return e[1];
	}
	return eq_poll_hw(t, eqe64);
}

/* Keep the EQ from overrunning: command completions are dropped, other events saved. */
static void drain(struct tdev *t)
{
	uint8_t e[64];
	int type;

	while ((type = eq_poll_hw(t, e)) >= 0) {
		if (type == CX4_EVENT_TYPE_CMD)
			continue;
		if (t->evq_tail - t->evq_head < 64)
			memcpy(t->evq[t->evq_tail++ % 64], e, 64);
	}
}

bool tdev_wait_irq(struct tdev *t, unsigned int v, int ms)
{
	struct pollfd p = {.fd = t->bus->irq_fd[v], .events = POLLIN};
	uint64_t cnt;

	if (poll(&p, 1, ms) != 1)
		return false;
	return read(p.fd, &cnt, sizeof(cnt)) == sizeof(cnt);
}

#define CHECK(x)                                                                                \
	do {                                                                                    \
		int _st = (x);                                                                  \
		if (_st) {                                                                      \
			if (!t->quiet)                                                          \
				fprintf(stderr,                                                 \
					"bring-up: %s -> %d (syndrome 0x%x, deliv 0x%x)\n", #x, \
					_st, t->syndrome, t->deliv);                            \
			return _st;                                                             \
		}                                                                               \
	} while (0)

int tdev_bringup(struct tdev *t)
{
	uint8_t out[0x1010], in[0x1010];
	uint8_t o16[16];
	int32_t n;

	CHECK(tdev_cmdif_init(t));
	CHECK(tdev_simple(t, CX4_CMD_OP_ENABLE_HCA, 0, 0, 0, NULL));
	memset(in, 0, 16);
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_QUERY_ISSI);
	CHECK(tdev_cmd(t, in, 16, out, CX4_QUERY_ISSI_OUT_SIZE));
	if (!(cx4_get(out, CX4_QUERY_ISSI_OUT_SUPPORTED_ISSI_DW0) & 2))
		return -EPROTO;
	CHECK(tdev_simple(t, CX4_CMD_OP_SET_ISSI, 0, 1, 0, NULL));
	CHECK(tdev_simple(t, CX4_CMD_OP_QUERY_PAGES, CX4_QUERY_PAGES_OPMOD_BOOT, 0, 0, o16));
	n = (int32_t)cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES);
	if (n > 0)
		CHECK(tdev_give_pages(t, (uint32_t)n));
	/* ACCESS_REG HOST_ENDIANNESS write, as Linux does ([trace] command 5) */
	memset(in, 0, 0x20);
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_ACCESS_REG);
	cx4_set(in, CX4_ACCESS_REG_IN_REGISTER_ID, CX4_REG_HOST_ENDIANNESS);
	CHECK(tdev_cmd(t, in, 0x20, out, 0x20));
	memset(in, 0, 16);
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_QUERY_HCA_CAP);
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_HCA_CAP_OPMOD(CX4_CAP_GENERAL, 1));
	CHECK(tdev_cmd(t, in, 16, out, 0x1010));
	/* SET_HCA_CAP: the current page with log_max_qp = 0x11 (Linux 4.4 handle_hca_cap) */
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_SET_HCA_CAP);
	cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_SET_HCA_CAP_OPMOD(CX4_CAP_GENERAL));
	memcpy(in + 0x10, out + 0x10, 0x1000);
	cx4_set(in + 0x10, CX4_CAP_GEN_LOG_MAX_QP, 0x11);
	CHECK(tdev_cmd(t, in, 0x1010, out, 16));
	if (t->atomic_mode1) {
		/* the atomic capabilities with 8-byte responses in host order */
		memset(in, 0, 16);
		cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_QUERY_HCA_CAP);
		cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_HCA_CAP_OPMOD(CX4_CAP_ATOMIC, 1));
		CHECK(tdev_cmd(t, in, 16, out, 0x1010));
		memset(in, 0, sizeof(in));
		cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_SET_HCA_CAP);
		cx4_set(in, CX4_CMD_IN_OP_MOD, CX4_SET_HCA_CAP_OPMOD(CX4_CAP_ATOMIC));
		memcpy(in + 0x10, out + 0x10, 0x1000);
		cx4_set(in + 0x10, CX4_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE, 1);
		CHECK(tdev_cmd(t, in, 0x1010, out, 16));
	}
	CHECK(tdev_simple(t, CX4_CMD_OP_QUERY_PAGES, CX4_QUERY_PAGES_OPMOD_INIT, 0, 0, o16));
	n = (int32_t)cx4_get(o16, CX4_QUERY_PAGES_OUT_NUM_PAGES);
	if (n > 0)
		CHECK(tdev_give_pages(t, (uint32_t)n));
	CHECK(tdev_simple(t, CX4_CMD_OP_INIT_HCA, 0, 0, 0, NULL));
	CHECK(tdev_simple(t, CX4_CMD_OP_ALLOC_UAR, 0, 0, 0, o16));
	t->uar = cx4_get(o16, CX4_ALLOC_UAR_OUT_UAR);
	CHECK(tdev_create_eq(t, &t->eq_mem, TEQ_LOG, 0,
			     1ull << CX4_EVENT_TYPE_CMD | 1ull << CX4_EVENT_TYPE_PAGE_REQUEST |
				 1ull << CX4_EVENT_TYPE_PORT_CHANGE |
				 1ull << CX4_EVENT_TYPE_CQ_ERROR | CX4_ASYNC_EVENT_MASK_LINUX44,
			     &t->eqn));
	t->eq_ci = 0;
	cx4_mmio_write32(&t->bar, t->uar * 4096u + 0x40, t->eqn << 24);
	t->autodrain = true;
	return 0;
}

int tdev_set_gid(struct tdev *t, uint32_t idx, const uint8_t gid[16], uint32_t version,
		 uint32_t l3_type, const uint8_t *mac)
{
	uint8_t in[CX4_SET_ROCE_ADDRESS_IN_SIZE] = {0}, out[16];
	uint8_t *a = in + CX4_SET_ROCE_ADDRESS_IN_ADDR;

	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_SET_ROCE_ADDRESS);
	cx4_set(in, CX4_SET_ROCE_ADDRESS_IN_INDEX, idx);
	cx4_set(in, CX4_SET_ROCE_ADDRESS_IN_VHCA_PORT_NUM, 1);
	cx4_set_bytes(a, CX4_ROCE_ADDR_SOURCE_L3_OFF, gid, 16);
	if (mac) {
		cx4_set(a, CX4_ROCE_ADDR_SOURCE_MAC_47_32, (uint32_t)mac[0] << 8 | mac[1]);
		cx4_set(a, CX4_ROCE_ADDR_SOURCE_MAC_31_0, cx4_be32_load(mac + 2));
	}
	cx4_set(a, CX4_ROCE_ADDR_ROCE_VERSION, version);
	cx4_set(a, CX4_ROCE_ADDR_ROCE_L3_TYPE, l3_type);
	return tdev_cmd(t, in, sizeof(in), out, sizeof(out));
}

int tdev_roce_setup(struct tdev *t)
{
	uint8_t in[0x200] = {0}, out[16];
	uint8_t *a = in + CX4_SET_ROCE_ADDRESS_IN_ADDR;
	uint32_t ip = 0;

	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_MODIFY_NIC_VPORT_CONTEXT);
	cx4_set(in, CX4_MODIFY_NIC_VPORT_CONTEXT_IN_FIELD_SELECT, CX4_NIC_VPORT_SEL_ROCE_EN);
	cx4_set(in + CX4_MODIFY_NIC_VPORT_CONTEXT_IN_CTX, CX4_NIC_VPORT_ROCE_EN, 1);
	CHECK(tdev_cmd(t, in, 0x200, out, 16));
	memset(in, 0, sizeof(in));
	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_SET_ROCE_ADDRESS);
	cx4_set(in, CX4_SET_ROCE_ADDRESS_IN_INDEX, 0);
	a[10] = a[11] = 0xff;
	ip = t->ip;
	memcpy(a + 12, &ip, 4);
	cx4_set(a, CX4_ROCE_ADDR_ROCE_VERSION, CX4_ROCE_VERSION_2);
	cx4_set(a, CX4_ROCE_ADDR_ROCE_L3_TYPE, CX4_ROCE_L3_TYPE_IPV4);
	CHECK(tdev_cmd(t, in, CX4_SET_ROCE_ADDRESS_IN_SIZE, out, 16));
	return 0;
}
