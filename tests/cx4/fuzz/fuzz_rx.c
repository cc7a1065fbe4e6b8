// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the ConnectX-4 model's receive path: arbitrary UDP payloads arrive at
 * the modelled port's IP:4791, the way every packet reaches a card, and the model must never
 * crash, hang, or write device memory it was not given for that purpose.
 *
 * The device is driven only as a driver would (tests/cx4/model tdrv/tverbs: BAR0 and DMA
 * memory): one model, brought up once, with four QPs in RTS toward a fake peer whose address
 * this process binds (so the model accepts the packets of RC/UC connections and its own
 * packets are absorbed): RC (with READ, SEND, WRITE and atomic requests outstanding, so
 * responses find something to complete), RC with an SRQ, UC, UD. No local ACK timeout: the
 * model acts only on what arrives.
 *
 * Memory: one DMA mapping of [guard | MR rw | guard | MR ro | guard]; "rw" (local and remote
 * read/write/atomic) holds receive buffers and READ targets, "ro" allows remote read only.
 * After every input the guards and the read-only MR must be byte for byte as they were, and
 * the QPs' and the SRQ's WQE buffers as the harness last wrote them: a device write anywhere
 * else than a write-enabled MR or a CQ is a finding (abort).
 *
 * Input: records of [flags, qp, opcode, psn delta, len (2 bytes, LE), body (len)]:
 *   flags bit 0  raw: body is the whole UDP payload (BTH..ICRC); else the harness builds the
 *                packet: BTH from the other fields, extension headers the opcode carries from
 *                the body in wire order, the rest is the payload, pad and ICRC computed
 *   flags bit 1  raw: keep the body's last 4 bytes as ICRC (else the right ICRC is written)
 *   flags bit 2  any opcode (the opcode byte as is; else one valid for the QP's transport)
 *   flags bit 3  PSN = delta as a 24-bit value from the body; else the QP's expected PSN
 *                (requests) or oldest unacknowledged PSN (responses) + (int8) delta
 *   flags bit 4  aim: RETH/AtomicETH at one of the MRs (rkey/va/length folded into range)
 *   flags bit 5  keep the destination QPN from the body (else the chosen QP's)
 *   flags bit 6  keep the DETH Q_Key (else the UD QP's)
 *   flags bit 7  BTH SE/AckReq/MigReq set
 * Up to 8 records per input, each sent as one datagram; then the harness waits until the
 * device has taken them all, drains completions, and resets any QP that went to ERR.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "roce_pkt.h"
#include "tverbs.h"
#include "udp_port.h"

#define NQP 4
#define MR_LEN (64 * 1024)
#define G0 0
#define RW_OFF 4096
#define G1 (RW_OFF + MR_LEN)
#define RO_OFF (G1 + 4096)
#define G2 (RO_OFF + MR_LEN)
#define MEM_LEN (G2 + 4096)
#define RECV_OUT 8
#define PEER_QPN 0x1234
#define UD_QKEY 0x11111111u
#define MAX_REC 8

enum { Q_RC, Q_RC_SRQ, Q_UC, Q_UD };

static struct {
	bool up;
	struct tdev t;
	uint32_t pd;
	struct tcq cq[NQP];
	struct tqp qp[NQP];
	struct tsrq srq;
	struct tmem mem;
	uint8_t *shadow;	/* expected guards / ro MR */
	uint8_t *qpshadow[NQP]; /* the WQE buffers as last written */
	uint8_t *srqshadow;
	uint32_t key_rw, key_ro;
	uint64_t va_rw, va_ro;
	struct roce_udp_port peer;
	uint32_t recv_out[NQP]; /* receive WQEs posted and not completed */
	uint32_t sq_out;	/* RC requests not completed */
	uint64_t execs;
} g;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_rx: %s\n", what);
	abort();
}

/* An MTT memory key over [off, off + len) of g.mem at virtual address va (tverbs tmr_reg). */
static uint32_t mkey(size_t off, size_t len, uint64_t va, unsigned int access)
{
	size_t npages = len / 4096;
	uint32_t ilen = 0x110 + 8 * (uint32_t)((npages + 1) & ~1ul);
	uint8_t *in = calloc(1, ilen), out[16];
	uint8_t *mkc = in + 0x10;
	static uint8_t keybyte = 0x10;

	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_CREATE_MKEY);
	cx4_set(mkc, CX4_MKC_ACCESS_MODE_1_0, CX4_MKC_ACCESS_MODE_MTT);
	cx4_set(mkc, CX4_MKC_LR, !!(access & TA_LR));
	cx4_set(mkc, CX4_MKC_LW, !!(access & TA_LW));
	cx4_set(mkc, CX4_MKC_RR, !!(access & TA_RR));
	cx4_set(mkc, CX4_MKC_RW, !!(access & TA_RW));
	cx4_set(mkc, CX4_MKC_A, !!(access & TA_A));
	cx4_set(mkc, CX4_MKC_QPN, CX4_MKEY_QPN_ANY);
	cx4_set(mkc, CX4_MKC_MKEY_7_0, ++keybyte);
	cx4_set(mkc, CX4_MKC_PD, g.pd);
	cx4_set64(mkc, CX4_MKC_START_ADDR, va);
	cx4_set64(mkc, CX4_MKC_LEN, len);
	cx4_set(mkc, CX4_MKC_TRANSLATIONS_OCTWORD_SIZE, (uint32_t)((npages + 1) / 2));
	cx4_set(mkc, CX4_MKC_LOG_PAGE_SIZE, 12);
	cx4_set(in, CX4_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE,
		(uint32_t)((npages + 1) / 2));
	for (size_t i = 0; i < npages; i++)
		cx4_pas_set(in, 0x110, i,
			    (g.mem.iova + off + 4096 * i) | CX4_MTT_READ | CX4_MTT_WRITE);
	if (tdev_cmd(&g.t, in, ilen, out, 16))
		die("CREATE_MKEY");
	free(in);
	return cx4_get(out, CX4_CREATE_MKEY_OUT_MKEY_INDEX) << 8 | keybyte;
}

static size_t qp_buf_len(const struct tqp *q)
{
	return (size_t)q->rq_wqes * q->rq_stride + (size_t)q->sq_wqebbs * 64;
}

static void snap_qp(int i)
{
	memcpy(g.qpshadow[i], g.qp[i].buf.p, qp_buf_len(&g.qp[i]));
}

static void post_recvs(int i)
{
	while (g.recv_out[i] < RECV_OUT) {
		struct tsge s = {.len = 4096,
				 .lkey = g.key_rw,
				 .addr =
				     g.va_rw + 4096ull * ((unsigned int)i * 4 + g.recv_out[i] % 4)};

		if (i == Q_RC_SRQ)
			tsrq_post_recv(&g.t, &g.srq, &s, 1);
		else
			tqp_post_recv(&g.t, &g.qp[i], &s, 1);
		g.recv_out[i]++;
	}
	if (i == Q_RC_SRQ)
		memcpy(g.srqshadow, g.srq.buf.p, g.srq.buf.len);
	snap_qp(i);
}

/* RC requests for responses to complete: READ (3 PSNs), SEND (2), WRITE (2), fetch-and-add. */
static void post_requests(void)
{
	struct tqp *q = &g.qp[Q_RC];
	struct tsge rd = {.len = 3000, .lkey = g.key_rw, .addr = g.va_rw + 40000};
	struct tsge sd = {.len = 2000, .lkey = g.key_rw, .addr = g.va_rw + 50000};
	struct tsge at = {.len = 8, .lkey = g.key_rw, .addr = g.va_rw + 60000};
	struct tsend s[4] = {
	    {.opcode = MLX5_OPCODE_RDMA_READ, .sg = &rd, .nsg = 1, .raddr = 0x1000, .rkey = 7},
	    {.opcode = MLX5_OPCODE_SEND, .sg = &sd, .nsg = 1},
	    {.opcode = MLX5_OPCODE_RDMA_WRITE, .sg = &sd, .nsg = 1, .raddr = 0x2000, .rkey = 7},
	    {.opcode = MLX5_OPCODE_ATOMIC_FA,
	     .sg = &at,
	     .nsg = 1,
	     .raddr = 0x3000,
	     .rkey = 7,
	     .swap_add = 1},
	};

	for (int i = 0; i < 4; i++)
		tqp_post_send(&g.t, q, &s[i]);
	g.sq_out = 4;
	snap_qp(Q_RC);
}

static void connect_qp(int i)
{
	struct tconn c = {.rip = g.peer.addr,
			  .rqpn = PEER_QPN,
			  .mtu = CX4_QP_MTU_1024,
			  .sq_psn = 0x100,
			  .rq_psn = 0x200,
			  .retry = 7,
			  .rnr_retry = 7,
			  .min_rnr = 1,
			  .ack_timeout_set = true,
			  .qkey = UD_QKEY};

	if (tqp_connect(&g.t, &g.qp[i], &c))
		die("connect");
}

static void setup(void)
{
	static const uint8_t st[NQP] = {CX4_QP_ST_RC, CX4_QP_ST_RC, CX4_QP_ST_UC, CX4_QP_ST_UD};
	struct roce_udp_port_opts po = {.rcvbuf = 1 << 20, .sndbuf = 1 << 20};
	struct cx4_model_config cfg = {.ipv4 = tdev_addr(0)};
	uint32_t peer;

	signal(SIGPIPE, SIG_IGN);
	if (tdev_open(&g.t, &cfg) || tdev_bringup(&g.t) || tdev_roce_setup(&g.t) ||
	    tdev_alloc_pd(&g.t, &g.pd))
		die("bring-up");
	/* the fake peer: this process, at the next address of the test range */
	peer = tdev_addr(3);
	if (roce_udp_port_open(&g.peer, peer, ROCE_V2_UDP_PORT, &po))
		die("peer socket");
	if (tmem_alloc(&g.t, MEM_LEN, &g.mem))
		die("memory");
	for (size_t i = 0; i < MEM_LEN; i++)
		g.mem.p[i] = (uint8_t)(i * 7 + 3);
	g.va_rw = 0x7f0000000000ull + RW_OFF;
	g.va_ro = 0x7f0000000000ull + RO_OFF;
	g.key_rw = mkey(RW_OFF, MR_LEN, g.va_rw, TA_ALL);
	g.key_ro = mkey(RO_OFF, MR_LEN, g.va_ro, TA_LR | TA_RR);
	g.shadow = malloc(MEM_LEN);
	memcpy(g.shadow, g.mem.p, MEM_LEN);
	if (tsrq_create(&g.t, &g.srq, 6, g.pd))
		die("SRQ");
	g.srqshadow = malloc(g.srq.buf.len);
	for (int i = 0; i < NQP; i++) {
		if (tcq_create(&g.t, &g.cq[i], 9) ||
		    tqp_create(&g.t, &g.qp[i], st[i], g.pd, &g.cq[i], &g.cq[i], 6, 6,
			       i == Q_RC_SRQ ? &g.srq : NULL))
			die("CQ/QP");
		g.qpshadow[i] = malloc(qp_buf_len(&g.qp[i]));
		connect_qp(i);
		post_recvs(i);
	}
	post_requests();
	g.up = true;
}

static int query_qp(int i, uint8_t *qpc)
{
	uint8_t in[16] = {0}, out[CX4_QUERY_QP_OUT_SIZE + 8 * 64];

	cx4_set(in, CX4_CMD_IN_OPCODE, CX4_CMD_OP_QUERY_QP);
	cx4_set(in, CX4_QUERY_QP_IN_QPN, g.qp[i].qpn);
	if (tdev_cmd(&g.t, in, 16, out, sizeof(out)))
		die("QUERY_QP");
	memcpy(qpc, out + CX4_QUERY_QP_OUT_QPC, CX4_QPC_SIZE);
	return (int)cx4_get(qpc, CX4_QPC_STATE);
}

/* Take every CQE there is (without waiting): count completed receives and requests. */
static void drain_cqs(void)
{
	for (int i = 0; i < NQP; i++) {
		struct tcq *cq = &g.cq[i];

		for (;;) {
			volatile uint8_t *c =
			    cq->buf.p + (size_t)(cq->ci & ((1u << cq->log) - 1)) * 64;
			uint8_t own = c[63];

			if ((own >> 4) == MLX5_CQE_INVALID ||
			    (own & 1) != ((cq->ci >> cq->log) & 1))
				break;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if ((own >> 4) == MLX5_CQE_REQ || (own >> 4) == MLX5_CQE_REQ_ERR) {
				if (i == Q_RC && g.sq_out)
					g.sq_out--;
			} else if (g.recv_out[i]) {
				g.recv_out[i]--;
			}
			cq->ci++;
			cx4_be32_store(cq->dbr.p, cq->ci & 0xffffff);
		}
	}
}

/* A QP the input broke (ERR): back to RESET and RTS, its queues empty and refilled. */
static void reset_qp(int i)
{
	struct tqp *q = &g.qp[i];

	if (tqp_modify(&g.t, q, CX4_CMD_OP_2RST_QP, 0, NULL))
		die("2RST");
	drain_cqs();
	/* the device forgot the queues: so does the driver (rdma-core mlx5 after RESET) */
	q->sq_pi = q->rq_pi = 0;
	memset(q->dbr.p, 0, 8);
	memset(q->buf.p, 0, qp_buf_len(q));
	g.recv_out[i] = i == Q_RC_SRQ ? g.recv_out[i] : 0;
	if (i == Q_RC)
		g.sq_out = 0;
	connect_qp(i);
	post_recvs(i);
	if (i == Q_RC)
		post_requests();
	snap_qp(i);
}

static void drain_peer(void)
{
	static uint8_t buf[8][65536 + 256];
	struct roce_udp_rx rx[8];
	int n;

	do {
		for (int i = 0; i < 8; i++)
			rx[i] = (struct roce_udp_rx){.buf = buf[i], .size = sizeof(buf[i])};
		n = roce_udp_recv(&g.peer, rx, 8);
	} while (n > 0);
}

static uint64_t taken(void)
{
	struct cx4_model_stats st;

	if (cx4_model_get_stats(g.t.bus, &st))
		die("stats");
	return st.rx_pkts + st.rx_drop_icrc;
}

static void check_memory(void)
{
	static const struct {
		size_t off, len;
		const char *what;
	} keep[] = {{G0, 4096, "guard before MR rw"},
		    {G1, 4096, "guard between the MRs"},
		    {RO_OFF, MR_LEN, "remote-read-only MR"},
		    {G2, 4096, "guard after MR ro"}};

	for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
		if (memcmp(g.mem.p + keep[k].off, g.shadow + keep[k].off, keep[k].len))
			die(keep[k].what);
	for (int i = 0; i < NQP; i++) {
		size_t len = qp_buf_len(&g.qp[i]);

		for (size_t k = 0; k < len; k++)
			if (g.qp[i].buf.p[k] != g.qpshadow[i][k]) {
				fprintf(stderr, "QP %d (0x%x) byte 0x%zx: 0x%02x, was 0x%02x\n", i,
					g.qp[i].qpn, k, g.qp[i].buf.p[k], g.qpshadow[i][k]);
				die("a QP's WQE buffer changed");
			}
	}
	if (memcmp(g.srq.buf.p, g.srqshadow, g.srq.buf.len))
		die("the SRQ's WQE buffer changed");
}

/* Opcodes of each transport ([IBTA] table 38). */
static uint8_t pick_opcode(int qi, uint8_t sel)
{
	static const uint8_t uc[] = {0x20, 0x21, 0x22, 0x23, 0x24, 0x25,
				     0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b};
	static const uint8_t ud[] = {0x64, 0x65};

	if (qi == Q_UC)
		return uc[sel % sizeof(uc)];
	if (qi == Q_UD)
		return ud[sel % sizeof(ud)];
	return sel % 0x15; /* RC 0x00..0x14 */
}

static uint64_t take(const uint8_t **p, size_t *n, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++) {
		v = v << 8 | (*n ? **p : 0);
		if (*n) {
			(*p)++;
			(*n)--;
		}
	}
	return v;
}

/* Build one datagram from a record; returns its length (0: nothing to send). */
static size_t build(const uint8_t *ctl, const uint8_t *body, size_t blen, uint8_t *out, size_t size,
		    const struct roce_addr *a, const uint8_t qpc[NQP][CX4_QPC_SIZE])
{
	uint8_t flags = ctl[0];
	int qi = ctl[1] % NQP;
	struct roce_tx_hdr h = {0};
	const struct roce_opcode_info *info;
	ssize_t n;

	if (flags & 1) {
		uint8_t ipudp[ROCE_IPUDP_LEN];

		if (blen > size)
			blen = size;
		memcpy(out, body, blen);
		if (!(flags & 2) && blen >= 4) {
			roce_ipv4_udp_hdr(ipudp, a, blen);
			roce_icrc_put(out + blen - 4, roce_icrc_ipv4_buf(ipudp, out, blen - 4));
		}
		return blen;
	}
	h.opcode = (flags & 4) ? ctl[2] : pick_opcode(qi, ctl[2]);
	info = &roce_opcode_table[h.opcode];
	h.pkey = ROCE_DEFAULT_PKEY;
	h.se = h.ackreq = h.mig = (flags & 0x80) != 0;
	h.dqpn = g.qp[qi].qpn;
	if (flags & 0x20)
		h.dqpn = (uint32_t)take(&body, &blen, 3);
	if (flags & 8) {
		h.psn = (uint32_t)take(&body, &blen, 3);
	} else {
		uint32_t base = (info->flags & ROCE_F_RESP)
				    ? (cx4_get(qpc[qi], CX4_QPC_LAST_ACKED_PSN) + 1)
				    : cx4_get(qpc[qi], CX4_QPC_NEXT_RCV_PSN);

		h.psn = (base + (uint32_t)(int32_t)(int8_t)ctl[3]) & IB_PSN_MASK;
	}
	/* extension headers in wire order, from the body */
	if (info->hdrs & (1u << ROCE_HDR_DETH)) {
		h.deth.qkey = (uint32_t)take(&body, &blen, 4);
		h.deth.sqpn = (uint32_t)take(&body, &blen, 4) & ROCE_QPN_MASK;
		if (!(flags & 0x40))
			h.deth.qkey = UD_QKEY;
	}
	if (info->hdrs & (1u << ROCE_HDR_RETH)) {
		h.reth.va = take(&body, &blen, 8);
		h.reth.rkey = (uint32_t)take(&body, &blen, 4);
		h.reth.len = (uint32_t)take(&body, &blen, 4);
		if (flags & 0x10) {
			bool ro = h.reth.rkey & 1;
			uint64_t off = h.reth.va % MR_LEN;

			h.reth.va = (ro ? g.va_ro : g.va_rw) + off;
			h.reth.rkey = ro ? g.key_ro : g.key_rw;
			/* in range, or a little beyond its end */
			h.reth.len %= (uint32_t)(MR_LEN - off + 64);
		}
	}
	if (info->hdrs & (1u << ROCE_HDR_ATMETH)) {
		h.atomic.va = take(&body, &blen, 8);
		h.atomic.rkey = (uint32_t)take(&body, &blen, 4);
		h.atomic.swap_add = take(&body, &blen, 8);
		h.atomic.compare = take(&body, &blen, 8);
		if (flags & 0x10) {
			bool ro = h.atomic.rkey & 1;

			h.atomic.va = (ro ? g.va_ro : g.va_rw) + (h.atomic.va % MR_LEN);
			h.atomic.rkey = ro ? g.key_ro : g.key_rw;
		}
	}
	if (info->hdrs & (1u << ROCE_HDR_AETH)) {
		h.aeth.syndrome = (uint8_t)take(&body, &blen, 1);
		h.aeth.msn = (uint32_t)take(&body, &blen, 3);
	}
	if (info->hdrs & (1u << ROCE_HDR_ATMACK))
		h.atomic_ack_orig = take(&body, &blen, 8);
	if (info->hdrs & (1u << ROCE_HDR_IMMDT))
		h.imm_raw = (uint32_t)take(&body, &blen, 4);
	if (info->hdrs & (1u << ROCE_HDR_IETH))
		h.ieth_rkey = (uint32_t)take(&body, &blen, 4);
	if (!(info->flags & ROCE_F_PAYLOAD))
		blen = 0;
	n = roce_build_udp(out, size, &h, body, blen, a);
	return n > 0 ? (size_t)n : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pkt[MAX_REC][4608];
	uint8_t qpc[NQP][CX4_QPC_SIZE];
	struct roce_udp_tx tx[MAX_REC];
	struct iovec iov[MAX_REC];
	struct roce_addr a;
	unsigned int nrec = 0;
	uint64_t before, end;
	int sent = 0;

	if (!g.up)
		setup();
	for (int i = 0; i < NQP; i++)
		query_qp(i, qpc[i]);
	a = (struct roce_addr){.saddr = g.peer.addr,
			       .daddr = g.t.ip,
			       .sport = g.peer.port,
			       .dport = ROCE_V2_UDP_PORT,
			       .ttl = 64};
	while (size >= 6 && nrec < MAX_REC) {
		size_t blen = (size_t)(data[4] | data[5] << 8);
		size_t n;

		if (blen > size - 6)
			blen = size - 6;
		n = build(data, data + 6, blen, pkt[nrec], sizeof(pkt[nrec]), &a, qpc);
		data += 6 + blen;
		size -= 6 + blen;
		if (!n)
			continue;
		iov[nrec] = (struct iovec){.iov_base = pkt[nrec], .iov_len = n};
		tx[nrec] = (struct roce_udp_tx){
		    .iov = &iov[nrec], .iovcnt = 1, .daddr = g.t.ip, .dport = ROCE_V2_UDP_PORT};
		nrec++;
	}
	if (!nrec)
		return 0;
	before = taken();
	while (sent < (int)nrec) {
		int r = roce_udp_send(&g.peer, tx + sent, nrec - (unsigned int)sent);

		if (r < 0)
			die("send");
		sent += r;
	}
	/* the device has taken a datagram once its counters show it (they change under the
	 * device lock, at the end of the engine pass that handled it) */
	end = fuzz_now_ms() + 5000;
	while (taken() < before + nrec) {
		if (fuzz_now_ms() > end)
			die("the device stopped taking packets");
		usleep(10);
	}
	drain_peer();
	drain_cqs();
	check_memory();
	for (int i = 0; i < NQP; i++) {
		int s = query_qp(i, qpc[i]);

		if (s == CX4_QP_STATE_ERR || s == CX4_QP_STATE_SQER)
			reset_qp(i);
		else if (s != CX4_QP_STATE_RTS)
			die("a QP left RTS without an error");
		post_recvs(i);
	}
	if (!g.sq_out)
		post_requests();
	check_memory();
	g.execs++;
	return 0;
}
