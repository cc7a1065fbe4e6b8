// SPDX-License-Identifier: MIT
/*
 * ntb_cable_fuzz: libFuzzer harness for the NTB model's cable (devices/ntb/model/cable.c):
 * what the other end's process says to ours over the link's rendezvous socket - its HELLO
 * with its register file and interrupts, link changes, the memory objects its IOMMU maps -
 * and what it then leaves in its register file and IOMMU table, which our end reads. A real
 * NTB cannot be made to crash its host by the host at the other end: a write to memory that is
 * not there is dropped. So must ours be.
 *
 * End 0 is an owner handle of the HAL, as ntbd holds it. A genuine end 1 (ntb_dev_open, its
 * inbound window 0 translated to a memory object, as ntbd lays it out) exists too; each input
 * is a hostile process that connects to end 0's cable in its place (end 0 takes a new
 * connection as the old peer gone) and speaks for it, with the genuine end's register file,
 * interrupts and object, or with anything else. Records: u8 type | u8 flags | u16 len | payload
 *
 *   type % 6  0  HELLO with the genuine end's identity and descriptors; flags bit 0: the
 *                payload overlays the message from its byte 8 (all but type and magic);
 *                bit 1: a 4 KiB memfd for the register file; bit 2: one descriptor less;
 *                bit 3: a zero-filled register file of the right size
 *             1  LINK (bit 0: the genuine end's link enable toggled first)
 *             2  OBJ_ADD: bit 0 the genuine object; else id, offset, size from the payload
 *                (u32, u64, u64) and a memfd of (size & 1 MiB - 1) bytes; bit 1: no
 *                descriptor, bit 2: a second one, bit 3: a pipe instead
 *             3  OBJ_DEL: bit 0 the genuine object's id, else the payload's u32
 *             4  a datagram of the payload's bytes as they are (bit 1: with a memfd)
 *             5  the genuine end's register file / IOMMU table: the u32 at (payload u16 * 4)
 *                := payload u32 (restored after the input)
 *
 * After each record end 0 takes what came and is used as ntbd uses it: the link state, peer
 * scratchpad and doorbell writes, and a store at both ends of its mapping of the peer's
 * window 0 where the HAL says memory is mapped (ntbd writes its link header there).
 * Checked: no crash (a SIGBUS from a mapping past a memory object's end is one), no
 * sanitizer report. After the input the hostile
 * process hangs up, the genuine end connects again and the link must come up within 3 s; no
 * descriptor may have leaked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cable_msg.h"
#include "fuzz_util.h"
#include "model.h"

#define OBJ_SIZE	(64u << 10)
#define RECOVER_MS	3000

static struct ntb_dev *end0, *end1;
static char rundir[64], link_name[32];
static struct ntb_cable_msg hello1;	/* what the genuine end 1 said */
static uint8_t *shm_saved;
static int obj_fd = -1;
static uint32_t obj_id;

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "ntb_cable_fuzz: %s\n", what);
	abort();
}

static int memfd(size_t size)
{
	int fd = memfd_create("ntb_cable_fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)size))
		die("memfd");
	return fd;
}

/* Take what the other side sent us (end 0's HELLO and objects): its descriptors are ours. */
static void drain(int s)
{
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * NTB_CABLE_MAX_FDS)];
			struct cmsghdr align;
		} u;
		char m[256];
		struct iovec iov = { .iov_base = m, .iov_len = sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };

		if (recvmsg(s, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0)
			return;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (int i = 0; i < n; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				close(fd);
			}
		}
	}
}

static void send_msg(int s, const void *m, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (NTB_MAX_DB_VECTORS + 4))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	/* a hang-up is end 0's answer to a bad message: the rest of the input goes nowhere */
	if (sendmsg(s, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EPIPE &&
	    errno != ECONNRESET && errno != EAGAIN && errno != ENOTCONN)
		die("sendmsg");
}

/*
 * A store where ntbd would make one: into the peer's window where the HAL says a memory
 * object of the peer is mapped writable (ntb_peer_mw_range_fd; ntbd checks its peer control
 * region so before it writes there). A hole of the window is PROT_NONE on purpose (a stray
 * store of our own faults): that is not what is tested.
 */
static void store(volatile uint8_t *p, uint64_t off)
{
	uint64_t page = off & ~(uint64_t)(NTB_PAGE_SIZE - 1), fd_off;
	int fd;

	if (ntb_peer_mw_range_fd(end0, 0, page, NTB_PAGE_SIZE, &fd, &fd_off))
		return;
	close(fd);
	p[off] = (uint8_t)off;
}

/* End 0 at work, as ntbd uses it. */
static void use_end0(void)
{
	void *va;
	uint64_t size;

	for (int i = 0; i < 3; i++)
		ntb_events(end0);
	if (!ntb_link_is_up(end0, NULL, NULL))
		return;
	ntb_peer_spad_write(end0, NTB_DEF_PEER_IDX, 0, 0x1234);
	ntb_peer_db_set(end0, 1);
	if (!ntb_peer_mw_map(end0, 0, &va, &size)) {
		store(va, 0);
		store(va, (size < OBJ_SIZE ? size : OBJ_SIZE) - 1);
		ntb_peer_mw_unmap(end0, 0);
	}
}

static void hello_fds(int *fds, int *nfds)
{
	struct ntb_side *l = end1->local;

	*nfds = 0;
	fds[(*nfds)++] = dup(l->shm_fd);
	fds[(*nfds)++] = dup(l->misc_fd);
	for (int i = 0; i < l->nvec; i++)
		fds[(*nfds)++] = dup(l->vec_fd[i]);
}

static void record(int s, uint8_t type, uint8_t flags, const uint8_t *p, size_t len)
{
	struct ntb_cable_msg m = { .magic = NTB_CABLE_MAGIC };
	int fds[NTB_MAX_DB_VECTORS + 4], nfds = 0;

	switch (type % 6) {
	case 0:
		m = hello1;
		if (flags & 1)
			memcpy((uint8_t *)&m + 8, p, len < sizeof(m) - 8 ? len : sizeof(m) - 8);
		hello_fds(fds, &nfds);
		if (flags & 2) {
			close(fds[0]);
			fds[0] = memfd(4096);
		} else if (flags & 8) {
			close(fds[0]);
			fds[0] = memfd(NTB_SHM_SIZE);
		}
		if ((flags & 4) && nfds)
			close(fds[--nfds]);
		break;
	case 1:
		m.type = NTB_CABLE_LINK;
		if (flags & 1)
			reg_store(&end1->local->regs->enabled,
				  !reg_load(&end1->local->regs->enabled));
		break;
	case 2:
		m.type = NTB_CABLE_OBJ_ADD;
		if (flags & 1) {
			m.obj = obj_id;
			m.obj_size = OBJ_SIZE;
			fds[nfds++] = dup(obj_fd);
		} else {
			memcpy(&m.obj, p, len < 4 ? len : 4);
			if (len > 4)
				memcpy(&m.obj_off, p + 4, len - 4 < 8 ? len - 4 : 8);
			if (len > 12)
				memcpy(&m.obj_size, p + 12, len - 12 < 8 ? len - 12 : 8);
			if (flags & 8) {
				int pp[2];

				if (pipe2(pp, O_CLOEXEC))
					die("pipe");
				close(pp[1]);
				fds[nfds++] = pp[0];
			} else if (!(flags & 2)) {
				fds[nfds++] = memfd(((m.obj_size & ((1u << 20) - 1)) + 4095) & ~4095ul);
			}
		}
		if (flags & 4)
			fds[nfds++] = memfd(4096);
		break;
	case 3:
		m.type = NTB_CABLE_OBJ_DEL;
		if (flags & 1)
			m.obj = obj_id;
		else
			memcpy(&m.obj, p, len < 4 ? len : 4);
		break;
	case 4:
		if (flags & 2)
			fds[nfds++] = memfd(4096);
		send_msg(s, p, len, fds, nfds);
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return;
	case 5: {
		uint32_t off = 0, v = 0;

		memcpy(&off, p, len < 2 ? len : 2);
		if (len > 2)
			memcpy(&v, p + 2, len - 2 < 4 ? len - 2 : 4);
		off = (off * 4) % (uint32_t)NTB_SHM_SIZE;
		memcpy((uint8_t *)end1->local->shm + off, &v, 4);
		return;
	}
	}
	send_msg(s, &m, sizeof(m), fds, nfds);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

/* The genuine end 1 connects again and the link comes up. */
static void recover(void)
{
	uint64_t end = fuzz_now_ms() + RECOVER_MS;

	memcpy(end1->local->shm, shm_saved, NTB_SHM_SIZE);
	while (fuzz_now_ms() < end) {
		ntb_events(end1);
		ntb_events(end0);
		if (ntb_link_is_up(end0, NULL, NULL) && ntb_link_is_up(end1, NULL, NULL) &&
		    end0->peer && end0->peer->shm_fd >= 0 && end0->peer->pid == getpid() &&
		    ntb_obj_find(end0->peer_objs, obj_id))
			return;
		usleep(1000);
	}
	die("the genuine peer did not get the link back after the input");
}

static void cleanup(void)
{
	if (end0)
		ntb_dev_close(end0);
	if (end1)
		ntb_dev_close(end1);
	fuzz_rundir_remove(rundir, "ntb_cable_fuzz");
}

/* What the genuine end 1 says in its HELLO: its identity, as cable.c builds it. */
static void learn_hello(void)
{
	hello1 = (struct ntb_cable_msg){ .type = NTB_CABLE_HELLO, .magic = NTB_CABLE_MAGIC,
					 .version = NTB_CABLE_VERSION, .side = 1,
					 .profile = (uint32_t)end1->prof_idx,
					 .nvec = (uint32_t)end1->local->nvec,
					 .mw_size = end1->mw_size, .pid = getpid() };
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ntb_dev_params p = { .profile = "intel-gen3" };
	uint64_t align, size_align, size_max, iova;
	struct ntb_iommu_map m;

	if (fuzz_rundir_make(rundir, sizeof(rundir), "ntb_cable_fuzz"))
		die("mkdtemp");
	atexit(cleanup);
	snprintf(link_name, sizeof(link_name), "cf%d", (int)getpid());
	p.link = link_name;
	p.rundir = rundir;
	p.side = 0;
	if (ntb_dev_open(&p, &end0))
		die("end 0");
	p.side = 1;
	if (ntb_dev_open(&p, &end1))
		die("end 1");
	if (ntb_link_enable(end0, NTB_SPEED_AUTO, NTB_WIDTH_AUTO) ||
	    ntb_link_enable(end1, NTB_SPEED_AUTO, NTB_WIDTH_AUTO))
		die("link enable");
	for (int t = 0; t < 2000 && !(ntb_link_is_up(end0, NULL, NULL) &&
				       ntb_link_is_up(end1, NULL, NULL)); t++) {
		ntb_events(end0);
		ntb_events(end1);
		usleep(1000);
	}
	/* end 1's window 0 as ntbd lays it out: translated to a memory object */
	obj_fd = memfd(OBJ_SIZE);
	if (ntb_mw_get_align(end1, NTB_DEF_PEER_IDX, 0, &align, &size_align, &size_max) ||
	    ntb_iova_alloc(end1, size_max, align < NTB_PAGE_SIZE ? NTB_PAGE_SIZE : align, &iova))
		die("end 1 window");
	m = (struct ntb_iommu_map){ .iova = iova, .len = OBJ_SIZE,
				    .perm = NTB_IOMMU_READ | NTB_IOMMU_WRITE, .fd = obj_fd };
	if (ntb_iommu_map(end1, &m) || ntb_mw_set_trans(end1, NTB_DEF_PEER_IDX, 0, iova, size_max))
		die("end 1 mapping");
	obj_id = end1->objs->id;
	learn_hello();
	shm_saved = malloc(NTB_SHM_SIZE);
	if (!shm_saved)
		die("malloc");
	memcpy(shm_saved, end1->local->shm, NTB_SHM_SIZE);
	recover();
	use_end0();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int before = fuzz_count_fds(), s;

	/* the hostile process takes end 1's place on the cable */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", end0->cable_path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect to end 0's cable");
	for (int i = 0; i < 3; i++)
		ntb_events(end0);
	drain(s);
	while (size >= 4) {
		uint8_t type = data[0], flags = data[1];
		size_t len = (size_t)(data[2] | data[3] << 8);

		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		record(s, type, flags, data, len);
		data += len;
		size -= len;
		use_end0();
		drain(s);
	}
	close(s);
	use_end0();
	recover();
	use_end0();
	if (fuzz_count_fds() > before) {
		fprintf(stderr, "ntb_cable_fuzz: %d descriptors leaked\n",
			fuzz_count_fds() - before);
		abort();
	}
	return 0;
}
