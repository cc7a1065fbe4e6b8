// SPDX-License-Identifier: MIT
/*
 * bvtraffic [options]            the server: waits for one client, takes its configuration
 * bvtraffic [options] SERVER     the client: says what to run, and both run it
 *
 * Exit status: 0 every byte right; 1 a data error; 2 bad usage or setup; 3 an error
 * completion, a fatal async event or the peer gone; 4 no progress for the stall limit.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bvtraffic.h"

static struct bvt bvt = {
    .cfg = {.type = IBV_QPT_RC,
	    .nqp = 2,
	    .min_size = 0,
	    .max_size = 65536,
	    .depth = 32,
	    .iters = 256,
	    .dirs = 3,
	    .timeout = 14,
	    .retry_cnt = 7,
	    .rnr_retry = 7},
    .loc = {.ib_port = 1, .gid_index = -1, .port = "18515", .stall_s = 30, .wait_s = 120},
    .sock = -1,
};

/* What each transport can do (IBTA 9.7 / 9.8, table 2). */
static uint32_t valid_ops(enum ibv_qp_type type)
{
	if (type == IBV_QPT_UD)
		return 1u << BVT_SEND | 1u << BVT_SEND_IMM;
	if (type == IBV_QPT_UC)
		return 1u << BVT_SEND | 1u << BVT_SEND_IMM | 1u << BVT_WRITE | 1u << BVT_WRITE_IMM;
	return (1u << BVT_NOPS) - 1;
}

uint64_t bvt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void bvt_log(struct bvt *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->loc.verbose)
		return;
	va_start(ap, fmt);
	fputs("bvtraffic: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

_Noreturn void bvt_die(struct bvt *t, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr,
		"bvtraffic: FAIL (exit %d) after %" PRIu64 " messages, %" PRIu64
		" bytes checked (seed %u): %s\n",
		status, t->total_msgs, t->total_bytes, t->cfg.seed, msg);
	/* tell the peer, once, without waiting on it */
	if (!t->dying && !t->sock_dead && t->sock >= 0) {
		char line[1100];
		int n = snprintf(line, sizeof(line), "ABORT %s\n", msg);

		t->dying = true;
		if (send(t->sock, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1),
			 MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* the peer may be gone: nothing more to tell */
		}
	}
	exit(status);
}

/* At most once a second: how much has been checked (tests watch it move). */
void bvt_progress(struct bvt *t)
{
	uint64_t now = bvt_now_ms();

	if (now - t->last_report_ms < 1000)
		return;
	t->last_report_ms = now;
	printf("bvtraffic: progress: %" PRIu64 " messages, %" PRIu64 " bytes checked\n",
	       t->total_msgs, t->total_bytes);
	fflush(stdout);
}

_Noreturn static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: bvtraffic [options] [SERVER]   (no SERVER: be the server)\n"
	    "  -d DEV      device (default: the first)     -i PORT   its port (1)\n"
	    "  -g INDEX    GID index (default: RoCE v2 IPv4-mapped, as perftest picks)\n"
	    "  -p PORT     TCP port of the control connection (18515)\n"
	    "  -t TYPE     rc, uc or ud (rc)\n"
	    "  -o OPS      comma list of send,send_imm,write,write_imm,read,fetch_add,cmp_swap\n"
	    "              or all (default: all the transport can do)\n"
	    "  -s SIZE     message size, or MIN-MAX for sizes in between (0-65536; UD: to the "
	    "MTU)\n"
	    "  -n N        messages per QP, per opcode and direction (256)\n"
	    "  -B BYTES    instead: bytes per opcode and direction, K/M/G suffixes (atomics: a\n"
	    "              page per operation)\n"
	    "  -D SECONDS  instead: cycle through the opcodes for this long\n"
	    "  -q N        QPs (2)   -w N  messages per QP and window (32)   -S  an SRQ\n"
	    "  -x DIR      c2s (the client requests), s2c or both (both)\n"
	    "  -e          sleep on a completion channel (default: poll)\n"
	    "  -I SEED     pattern seed   -m MTU  path MTU in bytes (default: the ports')\n"
	    "  -T N -r N -R N   RC ack timeout exponent (14), retry count (7), RNR retry (7)\n"
	    "  -W SECONDS  stall limit: no progress this long is a hang (30)\n"
	    "  -L SECONDS  the server waits this long for its client (120)\n"
	    "  -v          verbose (twice: the control messages)\n"
	    "exit: 0 ok, 1 data error, 2 usage/setup, 3 error completion/event/peer gone, "
	    "4 stall\n");
	exit(BVT_EXIT_USAGE);
}

static uint64_t parse_bytes(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k':
	case 'K':
		return v << 10;
	case 'm':
	case 'M':
		return v << 20;
	case 'g':
	case 'G':
		return v << 30;
	case 0:
		return v;
	default:
		usage();
	}
}

static uint32_t parse_ops(const char *s)
{
	char *copy = strdup(s), *save = NULL;
	uint32_t ops = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i;

		if (!strcmp(tok, "all")) {
			ops = (1u << BVT_NOPS) - 1;
			continue;
		}
		for (i = 0; i < BVT_NOPS && strcmp(tok, bvt_op_name((enum bvt_op)i)); i++)
			;
		if (i == BVT_NOPS) {
			fprintf(stderr, "bvtraffic: no opcode '%s'\n", tok);
			usage();
		}
		ops |= 1u << i;
	}
	free(copy);
	return ops;
}

static uint32_t mtu_enum(unsigned long bytes)
{
	for (uint32_t m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if (128ul << m == bytes)
			return m;
	usage();
}

static void options(struct bvt *t, int argc, char **argv)
{
	struct bvt_cfg *c = &t->cfg;
	const char *ops = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "d:i:g:p:t:o:s:n:B:D:q:w:Sx:eI:m:T:r:R:W:L:v")) != -1) {
		switch (opt) {
		case 'd':
			t->loc.dev = optarg;
			break;
		case 'i':
			t->loc.ib_port = atoi(optarg);
			break;
		case 'g':
			t->loc.gid_index = atoi(optarg);
			break;
		case 'p':
			t->loc.port = optarg;
			break;
		case 't':
			c->type = !strcmp(optarg, "rc")	  ? IBV_QPT_RC
				  : !strcmp(optarg, "uc") ? IBV_QPT_UC
				  : !strcmp(optarg, "ud") ? IBV_QPT_UD
							  : (usage(), 0);
			break;
		case 'o':
			ops = optarg;
			break;
		case 's':
			if (sscanf(optarg, "%u-%u", &c->min_size, &c->max_size) != 2) {
				c->min_size = c->max_size = (uint32_t)parse_bytes(optarg);
			}
			break;
		case 'n':
			c->iters = strtoull(optarg, NULL, 0);
			break;
		case 'B':
			c->bytes = parse_bytes(optarg);
			break;
		case 'D':
			c->duration_s = (uint32_t)atoi(optarg);
			break;
		case 'q':
			c->nqp = (uint32_t)atoi(optarg);
			break;
		case 'w':
			c->depth = (uint32_t)atoi(optarg);
			break;
		case 'S':
			c->srq = true;
			break;
		case 'x':
			c->dirs = !strcmp(optarg, "c2s")    ? 1
				  : !strcmp(optarg, "s2c")  ? 2
				  : !strcmp(optarg, "both") ? 3
							    : (usage(), 0);
			break;
		case 'e':
			t->loc.events = true;
			break;
		case 'I':
			c->seed = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			c->mtu = mtu_enum(strtoul(optarg, NULL, 0));
			break;
		case 'T':
			c->timeout = (uint8_t)atoi(optarg);
			break;
		case 'r':
			c->retry_cnt = (uint8_t)atoi(optarg);
			break;
		case 'R':
			c->rnr_retry = (uint8_t)atoi(optarg);
			break;
		case 'W':
			t->loc.stall_s = (unsigned int)atoi(optarg);
			break;
		case 'L':
			t->loc.wait_s = (unsigned int)atoi(optarg);
			break;
		case 'v':
			t->loc.verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind < argc)
		t->loc.host = argv[optind++];
	if (optind < argc)
		usage();
	c->ops = ops ? parse_ops(ops) : valid_ops(c->type);
	if (c->ops & ~valid_ops(c->type)) {
		fprintf(stderr, "bvtraffic: opcodes the transport does not have\n");
		usage();
	}
	if (!c->nqp || c->nqp > BVT_MAX_QP || !c->depth || c->depth > 4096 || !t->loc.stall_s ||
	    c->min_size > c->max_size || c->max_size > (1u << 30))
		usage();
	if (!c->seed)
		c->seed = (uint32_t)time(NULL);
}

static void handshake(struct bvt *t)
{
	char line[BVT_LINE];
	int to = 60000;

	if (t->is_server) {
		bvt_ctl_recv(t, line, to);
		if (bvt_cfg_parse(&t->cfg, line))
			bvt_die(t, BVT_EXIT_USAGE, "a configuration this server cannot run: %s",
				line);
	} else {
		bvt_cfg_format(&t->cfg, line, sizeof(line));
		bvt_ctl_send(t, "%s", line);
	}
	if (bvt_open(t))
		bvt_die(t, BVT_EXIT_USAGE, "cannot set up the verbs resources");
	/* the server speaks first: a client without resources stops here */
	if (t->is_server) {
		bvt_info_format(t, line, sizeof(line));
		bvt_ctl_send(t, "%s", line);
		bvt_ctl_recv(t, line, to);
	} else {
		bvt_ctl_recv(t, line, to);
		if (bvt_info_parse(t, line))
			bvt_die(t, BVT_EXIT_ERROR, "a bad INFO from the server: %s", line);
		bvt_info_format(t, line, sizeof(line));
		bvt_ctl_send(t, "%s", line);
	}
	if (t->is_server && bvt_info_parse(t, line))
		bvt_die(t, BVT_EXIT_ERROR, "a bad INFO from the client: %s", line);
	if (bvt_connect_qps(t))
		bvt_die(t, BVT_EXIT_ERROR, "cannot connect the QPs");
	t->qps_up = true;
	/* neither sends before both QPs are ready to receive */
	bvt_ctl_send(t, "RTS");
	bvt_ctl_recv(t, line, to);
	if (strcmp(line, "RTS"))
		bvt_die(t, BVT_EXIT_ERROR, "expected RTS, got: %s", line);
	bvt_log(t, "%s: %s, %u QPs, GID index %d, sizes %u-%u, seed %u",
		t->is_server ? "server" : "client", ibv_get_device_name(t->ctx->device), t->cfg.nqp,
		t->gid_index, t->cfg.min_size, t->cfg.max_size, t->cfg.seed);
}

int main(int argc, char **argv)
{
	struct bvt *t = &bvt;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	options(t, argc, argv);
	t->is_server = !t->loc.host;
	if (t->is_server) {
		int l = bvt_ctl_listen(t->loc.port);

		if (l < 0)
			return BVT_EXIT_USAGE;
		t->sock = bvt_ctl_accept(l, t->loc.wait_s);
		close(l);
	} else {
		t->sock = bvt_ctl_connect(t->loc.host, t->loc.port, 30);
	}
	if (t->sock < 0)
		return BVT_EXIT_USAGE;
	handshake(t);
	rc = bvt_run(t);
	bvt_close(t);
	close(t->sock);
	return rc;
}
