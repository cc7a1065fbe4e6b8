/* SPDX-License-Identifier: MIT */
/*
 * bvtraffic: a client/server verbs traffic program that checks every byte it moves.
 *
 * Two processes (like ibv_rc_pingpong) exchange their QP numbers, GIDs and buffer keys over
 * TCP, then move windows of messages: per window the requester announces what it will do
 * (PREP), the responder gets its memory ready (receives posted, targets filled, READ sources
 * and atomic counters set) and says READY, the requester runs the window and checks what it
 * can see (completions, READ data, atomic results), then says DONE and the responder checks
 * what it can see (receives, immediates, WRITE targets, atomic counters) and answers OK or BAD.
 * Every message has its own size and contents, derived from the seed, the opcode, the
 * direction, the QP and the message's sequence number, so a message that lands in the wrong
 * place, on the wrong QP, twice or from an earlier window is caught, as is a byte written
 * next to it (guard bytes on both sides of every target). docs/reliability.md describes it.
 */
#ifndef BVTRAFFIC_H
#define BVTRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define BVT_GUARD 64  /* guard bytes before and after every target */
#define BVT_FILL 0xa5 /* what no message may leave in a guard */
#define BVT_GRH 40    /* UD receive buffers start with the GRH */
#define BVT_LINE 8192 /* longest control message */
#define BVT_MAX_QP 64
#define BVT_QKEY 0x11111111u

/* Exit status: what kind of failure ended the run. */
enum {
	BVT_EXIT_OK = 0,
	BVT_EXIT_DATA = 1,  /* a wrong byte, immediate, length or atomic result */
	BVT_EXIT_USAGE = 2, /* bad options, no device, cannot connect */
	BVT_EXIT_ERROR = 3, /* an error completion, a fatal event, the peer gone */
	BVT_EXIT_STALL = 4, /* no progress for the stall limit: a hang */
};

enum bvt_op {
	BVT_SEND,
	BVT_SEND_IMM,
	BVT_WRITE,
	BVT_WRITE_IMM,
	BVT_READ,
	BVT_FADD,
	BVT_CSWAP,
	BVT_NOPS
};

/* What both ends must agree on: the client sends it, the server takes it. */
struct bvt_cfg {
	enum ibv_qp_type type;
	uint32_t ops; /* 1 << enum bvt_op */
	uint32_t nqp;
	uint32_t min_size, max_size;
	uint32_t depth;	     /* messages per QP per window */
	uint64_t iters;	     /* messages per QP, per opcode and direction */
	uint64_t bytes;	     /* or: bytes per opcode and direction (all QPs) */
	uint32_t duration_s; /* or: cycle through the opcodes for this long */
	uint32_t seed;
	bool srq;
	unsigned int dirs; /* 1: client requests, 2: server requests, 3: both */
	uint8_t timeout, retry_cnt, rnr_retry;
	uint32_t mtu; /* enum ibv_mtu; 0: the smaller active MTU */
};

/* Options of this end only. */
struct bvt_local {
	const char *dev;
	int ib_port;
	int gid_index;	  /* -1: RoCE v2 IPv4-mapped if there is one */
	const char *host; /* client: the server's address */
	const char *port;
	bool events;	      /* sleep on a completion channel instead of polling */
	unsigned int stall_s; /* no progress for this long: a hang */
	unsigned int wait_s;  /* the server waits this long for its client */
	int verbose;
};

/* A peer's resources as it announced them. */
struct bvt_peer {
	union ibv_gid gid;
	uint16_t lid;
	uint32_t mtu;
	uint64_t addr, len;
	uint32_t rkey;
	uint32_t rd_atom; /* the responder depth it accepts */
	uint32_t qpn[BVT_MAX_QP], psn[BVT_MAX_QP];
};

struct bvt_stats {
	uint64_t msgs[BVT_NOPS], bytes[BVT_NOPS];
};

struct bvt {
	struct bvt_cfg cfg;
	struct bvt_local loc;
	int sock; /* the TCP control connection */
	bool is_server;

	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp[BVT_MAX_QP];
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	size_t slot_bytes, slot_stride; /* a slot: GUARD, slot_bytes, GUARD */
	size_t atom_off;		/* per QP: GUARD, 8-byte counter, GUARD */
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	uint32_t psn[BVT_MAX_QP];
	uint32_t rd_atom;
	struct bvt_peer peer;

	bool armed;  /* the CQ is armed for a completion event */
	bool qps_up; /* connected: errors can be asked of the QPs */
	bool sock_dead, probing, dying;
	uint64_t progress_at_ms, gap_ms, last_report_ms, async_checked_ms;
	uint64_t total_msgs, total_bytes;
	struct bvt_stats st[2]; /* [0]: as requester, [1]: as responder */
};

/* main.c */
void bvt_log(struct bvt *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void bvt_die(struct bvt *t, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t bvt_now_ms(void);
void bvt_progress(struct bvt *t);

/* ctl.c: the TCP control connection, one text line per message */
int bvt_ctl_listen(const char *port);
int bvt_ctl_accept(int lsock, unsigned int timeout_s);
int bvt_ctl_connect(const char *host, const char *port, unsigned int timeout_s);
void bvt_ctl_send(struct bvt *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next line (without its newline), waiting at most timeout_ms; dies on EOF or timeout. */
void bvt_ctl_recv(struct bvt *t, char *line, int timeout_ms);
/* A line is waiting (or the peer closed): non-blocking. */
bool bvt_ctl_pending(struct bvt *t);
void bvt_cfg_format(const struct bvt_cfg *c, char *buf, size_t len);
int bvt_cfg_parse(struct bvt_cfg *c, const char *line);

/* res.c: verbs resources */
int bvt_open(struct bvt *t);
void bvt_info_format(struct bvt *t, char *buf, size_t len);
int bvt_info_parse(struct bvt *t, const char *line);
int bvt_connect_qps(struct bvt *t);
void bvt_close(struct bvt *t);

/* pattern.c: sizes, contents, immediates and atomic operands of every message */
const char *bvt_op_name(enum bvt_op op);
uint64_t bvt_key(const struct bvt_cfg *c, enum bvt_op op, int dir, uint32_t qp, uint64_t seq);
uint32_t bvt_size(const struct bvt_cfg *c, enum bvt_op op, uint64_t key, uint32_t max);
uint32_t bvt_imm(uint64_t key);
void bvt_fill(uint8_t *p, size_t n, uint64_t key);
uint8_t bvt_pattern_byte(uint64_t key, size_t i);
/* First byte of p[0..n) that is not the pattern of key, or n. */
size_t bvt_check(const uint8_t *p, size_t n, uint64_t key);
/* First byte of p[0..n) that is not BVT_FILL, or n. */
size_t bvt_check_fill(const uint8_t *p, size_t n);
uint64_t bvt_mix(uint64_t x);

/* wait.c: the control connection died; ask the QPs what happened, then exit */
_Noreturn void bvt_peer_gone(struct bvt *t, const char *why);

/* run.c: the windows of each direction */
int bvt_run(struct bvt *t);

#endif
