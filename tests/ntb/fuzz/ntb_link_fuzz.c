// SPDX-License-Identifier: MIT
/*
 * ntb_link_fuzz: libFuzzer harness for the control messages between the two ntbds of a link
 * (link.c, link_mbox.c: the mailbox over scratchpads or message registers, doorbells, the
 * link's bouncing, the header the peer writes into our control region). End 0 of an emulated
 * link is ntbd's (its link half and the verbs module, on a bvd driven here); end 1 is the
 * fuzzer's: an owner handle of the HAL, so it can write end 0's registers with anything, in
 * any order, at any time - a broken, old or hostile peer daemon.
 *
 * Two links: one with scratchpads (intel-gen3: the peer translates inbound windows) and one
 * with message registers (idt: outbound translation). The first input byte picks the link.
 * Then records of 6 bytes: u8 op | u8 a | u32 b (little-endian):
 *
 *   op % 10  0  scratchpad a % count of end 0 := b
 *            1  message register a % count of end 0 := b (idt)
 *            2  ring end 0's doorbell bits b
 *            3  the link bounces (end 1 disables and re-enables it)
 *            4  a mailbox command framed as a peer daemon frames it (data, then the command
 *               word with the session's tag and the next seq): cmd a & 7, window (a >> 3) & 3,
 *               data b, or b << 12 with a bit 7 (IOVA-like values)
 *            5  the real handshake's step a % 5 (HELLO, XLAT, SIZE, CTL, READY of end 1's
 *               window), framed so
 *            6  acknowledge what end 0 last sent
 *            7  a new session (end 1's daemon restarted: a new tag, seq from 1)
 *            8  end 1 writes word a % 6 of the link header in end 0's control region := b
 *               (magic, version, epoch, heartbeat, heartbeat period, pad)
 *            9  time passes: a % 32 ms of end 0's loop (its resend and heartbeat timers)
 *
 * After each record end 0's loop runs; checked: no crash or sanitizer report, READY only with
 * the peer's control region mapped and its size within the window. After the input the peer
 * behaves: the link bounces and end 1 does the real handshake; end 0 must come back to READY
 * within 3 s (hostile messages cost the link nothing that a bring-up does not restore), and no
 * descriptor may have leaked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "link_mbox.h"
#include "ntbd.h"

#define CTL_SIZE	(64u << 10)	/* end 1's control region */
#define RECOVER_MS	3000

struct link {
	const char *profile;
	char name[32];
	struct bvd d;		/* end 0: ntbd's */
	struct ntbd n;
	struct ntb_dev *p;	/* end 1: the fuzzer's owner handle */
	bool msgs;
	int ctl_fd;		/* end 1's window 0: a control region, as ntbd lays it out */
	uint64_t win_iova, win_size;
	bool win_set;
	uint8_t tag, seq;
	uint32_t epoch;
};

static struct link links[2] = { { .profile = "intel-gen3" }, { .profile = "idt" } };
static char rundir[64];

static void die(const char *what)
{
	fprintf(stderr, "ntb_link_fuzz: %s\n", what);
	abort();
}

/* What end 0 may be in, checked after every step. */
static void check(struct link *l)
{
	const struct ntbd_link *k = &l->n.link;

	if (k->state != NTBD_LINK_DOWN && k->state != NTBD_LINK_HANDSHAKE &&
	    k->state != NTBD_LINK_READY)
		die("link state out of range");
	if (k->state == NTBD_LINK_READY &&
	    (!k->peer_ctl || k->peer_ctl_size < sizeof(struct ntbd_ctl_hdr) ||
	     k->peer_ctl_size > k->peer_win_size))
		die("READY without a usable peer control region");
}

static void pump(struct link *l, int timeout_ms)
{
	bvd_poll(&l->d, timeout_ms);
	ntb_events(l->p);	/* end 1's events: nobody waits for them, take them */
	check(l);
}

/* End 1's window 0 as ntbd's setup_window() lays it out (once the hardware link is up). */
static void peer_window(struct link *l)
{
	uint64_t align, size_align, size_max;
	struct ntb_iommu_map m;

	if (l->win_set || !ntb_link_is_up(l->p, NULL, NULL) ||
	    ntb_mw_get_align(l->p, NTB_DEF_PEER_IDX, 0, &align, &size_align, &size_max))
		return;
	if (align < NTB_PAGE_SIZE)
		align = NTB_PAGE_SIZE;
	if (ntb_iova_alloc(l->p, size_max, align, &l->win_iova))
		die("peer iova");
	m = (struct ntb_iommu_map){ .iova = l->win_iova, .len = CTL_SIZE,
				    .perm = NTB_IOMMU_READ | NTB_IOMMU_WRITE, .fd = l->ctl_fd };
	if (ntb_iommu_map(l->p, &m))
		die("peer iommu");
	if (ntb_xlat_model(l->p) == NTB_XLAT_INBOUND &&
	    ntb_mw_set_trans(l->p, NTB_DEF_PEER_IDX, 0, l->win_iova, size_max))
		die("peer translation");
	l->win_size = size_max;
	l->win_set = true;
}

/*
 * Write one of end 0's registers. A message register refuses a value while it still holds
 * the last one (our outbound status bit says so, as on IDT): false then, as link_mbox.c's put().
 */
static bool put(struct link *l, int reg, uint32_t v)
{
	uint64_t out = 1ull << reg;

	if (!l->msgs)
		return !ntb_peer_spad_write(l->p, NTB_DEF_PEER_IDX, reg, v);
	ntb_peer_msg_write(l->p, NTB_DEF_PEER_IDX, reg, v);
	if (ntb_msg_read_sts(l->p) & out & ntb_msg_outbits(l->p)) {
		ntb_msg_clear_sts(l->p, out);
		return false;
	}
	return true;
}

/*
 * One command as a peer daemon frames it: data, then the command word (only if the data got
 * through), the doorbell. resend: the same (tag, seq) again. False if a register refused.
 */
static bool say(struct link *l, uint8_t cmd, uint8_t wid, uint64_t data, bool resend)
{
	uint8_t seq = resend ? l->seq : (uint8_t)(l->seq + 1) ? l->seq + 1 : 1;

	if (!put(l, 1, (uint32_t)data) || !put(l, 2, (uint32_t)(data >> 32)) ||
	    !put(l, 0, cmd | (uint32_t)wid << 8 | (uint32_t)l->tag << 16 | (uint32_t)seq << 24))
		return false;
	l->seq = seq;
	if (!l->msgs)
		ntb_peer_db_set(l->p, NTBD_DB_CTL);
	return true;
}

/* Acknowledge end 0's command in our registers; returns end 0's ACK word of ours. */
static uint32_t ack(struct link *l)
{
	uint32_t cmd = 0, theirs = 0;
	int pidx;

	if (!l->msgs) {
		cmd = ntb_spad_read(l->p, 0);
		theirs = ntb_spad_read(l->p, 3);
	} else {
		uint64_t sts = ntb_msg_read_sts(l->p);

		if (sts & (1ull << 16)) {
			cmd = ntb_msg_read(l->p, &pidx, 0);
			ntb_msg_clear_sts(l->p, 7ull << 16);
		}
		if (sts & (1ull << 19)) {
			theirs = ntb_msg_read(l->p, &pidx, 3);
			ntb_msg_clear_sts(l->p, 1ull << 19);
		}
		ntb_msg_clear_sts(l->p, sts & 0xffff);	/* our outbound "full" bits */
	}
	if ((cmd & 0xffff0000u) && put(l, 3, cmd & 0xffff0000u) && !l->msgs)
		ntb_peer_db_set(l->p, NTBD_DB_CTL);
	return theirs;
}

static uint64_t step_data(struct link *l, unsigned int step, uint8_t *cmd)
{
	static const uint8_t cmds[] = { MBOX_HELLO, MBOX_XLAT, MBOX_SIZE, MBOX_CTL, MBOX_READY };

	*cmd = cmds[step % 5];
	switch (step % 5) {
	case 0: return NTBD_LINK_VERSION;
	case 1: return l->win_iova;
	case 2: return l->win_size;
	case 3: return CTL_SIZE;
	default: return l->epoch;
	}
}

static void new_session(struct link *l)
{
	l->tag = (uint8_t)(l->tag * 7 + 13);
	if (!l->tag)
		l->tag = 1;
	l->seq = 0;
	l->epoch++;
}

/* The peer behaves: a fresh session and the whole handshake, each step until acknowledged. */
static void recover(struct link *l)
{
	uint64_t end = fuzz_now_ms() + RECOVER_MS;
	unsigned int step = 0;
	uint64_t sent = 0;

	ntb_link_disable(l->p);
	for (int i = 0; i < 5; i++)
		pump(l, 1);
	ntb_link_enable(l->p, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	new_session(l);
	while (fuzz_now_ms() < end) {
		uint32_t theirs;

		pump(l, 1);
		peer_window(l);
		theirs = ack(l);
		if (!l->win_set)
			continue;
		if (step < 5 && sent && theirs == ((uint32_t)l->tag << 16 | (uint32_t)l->seq << 24)) {
			step++;
			sent = 0;
		}
		if (step < 5 && (!sent || fuzz_now_ms() - sent > NTBD_MBOX_RETRY_MS)) {
			uint8_t cmd;
			uint64_t data = step_data(l, step, &cmd);

			/* refused (a register still full): the next turn tries again */
			if (say(l, cmd, 0, data, sent != 0) || sent)
				sent = fuzz_now_ms();
		}
		if (step == 5 && ntbd_link_ready(&l->n)) {
			if (l->n.link.peer_ctl_size != CTL_SIZE)
				die("READY with another control region size than the peer said");
			return;
		}
	}
	fprintf(stderr, "ntb_link_fuzz: %s: end 0 in state %d, peer step %u\n", l->profile,
		l->n.link.state, step);
	die("the link did not come back after the input");
}

static void cleanup(void)
{
	for (int i = 0; i < 2; i++) {
		struct link *l = &links[i];

		if (!l->n.d)
			continue;
		ntbd_link_stop(&l->n);
		if (l->n.mod && l->n.mod->fini)
			l->n.mod->fini(&l->n);
		ntbd_link_fini(&l->n);
		if (l->p)
			ntb_dev_close(l->p);
	}
	fuzz_rundir_remove(rundir, "ntb_link_fuzz");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char conf[2048], err[256];
	size_t n = 0;

	if (fuzz_rundir_make(rundir, sizeof(rundir), "ntb_link_fuzz"))
		die("mkdtemp");
	setenv("BV_RUNDIR", rundir, 1);
	atexit(cleanup);
	/* a heartbeat that beats (its timer runs in op 9) but never declares the fuzzer hung */
	for (int i = 0; i < 2; i++) {
		snprintf(links[i].name, sizeof(links[i].name), "fz%d_%d", (int)getpid(), i);
		/* end 1 is opened by the fuzzer, but a link's configuration names both ends */
		n += (size_t)snprintf(conf + n, sizeof(conf) - n,
				      "[device lk_%d]\nkind = ntb\nlink = %s\nside = 0\n"
				      "profile = %s\nip = 127.0.3.%d\nheartbeat_ms = 20\n"
				      "heartbeat_misses = 100000\nctl_size = 65536\n\n"
				      "[device lk_%d_peer]\nkind = ntb\nlink = %s\nside = 1\n"
				      "profile = %s\nip = 127.0.4.%d\n\n",
				      i, links[i].name, links[i].profile, i + 1, i, links[i].name,
				      links[i].profile, i + 1);
	}
	for (int i = 0; i < 2; i++) {
		struct link *l = &links[i];
		struct ntb_dev_params p = { .link = l->name, .side = 1, .profile = l->profile };
		char dev[16];

		if (bv_config_parse(&l->d.cfg, conf, err, sizeof(err))) {
			fprintf(stderr, "ntb_link_fuzz: %s\n", err);
			abort();
		}
		snprintf(dev, sizeof(dev), "lk_%d", i);
		l->d.conf = bv_config_find(&l->d.cfg, dev);
		l->d.epfd = epoll_create1(EPOLL_CLOEXEC);
		l->d.num_comp_vectors = 1;
		if (!l->d.conf || l->d.epfd < 0)
			die("bvd");
		/* what bvd_main and ntbd.c's init do */
		l->d.ops = &ntbd_ops;
		l->n.d = &l->d;
		l->d.priv = &l->n;
		l->n.mod = &ntbd_verbs_module;
		if (ntbd_link_init(&l->n) || l->n.mod->init(&l->n))
			die("ntbd init");
		if (ntb_dev_open(&p, &l->p) || ntb_link_enable(l->p, NTB_SPEED_AUTO, NTB_WIDTH_AUTO))
			die("peer end");
		l->msgs = ntb_msg_count(l->p) >= 4;
		l->ctl_fd = memfd_create("ntb_link_fuzz", MFD_CLOEXEC);
		if (l->ctl_fd < 0 || ftruncate(l->ctl_fd, CTL_SIZE))
			die("memfd");
		recover(l);
	}
	return 0;
}

/* End 1's view of end 0's control region (its header is ours to write). */
static void write_header(struct link *l, unsigned int word, uint32_t v)
{
	void *va;
	uint64_t size;

	if (ntb_peer_mw_map(l->p, 0, &va, &size) || size < 24)
		return;
	((volatile uint32_t *)va)[word] = v;
	ntb_peer_mw_unmap(l->p, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct link *l = &links[size ? data[0] & 1 : 0];
	int before = fuzz_count_fds(), after;

	if (size) {
		data++;
		size--;
	}
	for (; size >= 6; data += 6, size -= 6) {
		uint8_t op = data[0] % 10, a = data[1];
		uint32_t b = (uint32_t)data[2] | (uint32_t)data[3] << 8 | (uint32_t)data[4] << 16 |
			     (uint32_t)data[5] << 24;

		switch (op) {
		case 0:
			if (ntb_spad_count(l->p) > 0)
				ntb_peer_spad_write(l->p, NTB_DEF_PEER_IDX,
						    a % ntb_spad_count(l->p), b);
			break;
		case 1:
			if (ntb_msg_count(l->p) > 0)
				ntb_peer_msg_write(l->p, NTB_DEF_PEER_IDX, a % ntb_msg_count(l->p),
						   b);
			break;
		case 2:
			ntb_peer_db_set(l->p, b & ntb_db_valid_mask(l->p));
			break;
		case 3:
			ntb_link_disable(l->p);
			pump(l, 0);
			ntb_link_enable(l->p, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
			break;
		case 4:
			say(l, a & 7, (a >> 3) & 3, (a & 0x80) ? (uint64_t)b << 12 : b, false);
			break;
		case 5: {
			uint8_t cmd;
			uint64_t d;

			peer_window(l);
			d = step_data(l, a, &cmd);
			say(l, cmd, 0, cmd == MBOX_READY ? b : d, false);
			break;
		}
		case 6:
			ack(l);
			break;
		case 7:
			new_session(l);
			break;
		case 8:
			write_header(l, a % 6, b);
			break;
		case 9:
			for (uint64_t end = fuzz_now_ms() + a % 32; fuzz_now_ms() < end;)
				pump(l, 1);
			break;
		}
		for (int i = 0; i < 3; i++)
			pump(l, 0);
	}
	recover(l);
	after = fuzz_count_fds();
	if (after > before) {
		fprintf(stderr, "ntb_link_fuzz: %d descriptors leaked\n", after - before);
		abort();
	}
	return 0;
}
