// SPDX-License-Identifier: MIT
/* Message framing: round trips with descriptors, and every malformed message is refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bv_expect.h"
#include "bv_msg.h"

int main(void)
{
	struct bv_msg_hdr h = { .magic = BV_PROTO_MAGIC, .version = BV_PROTO_VERSION, .op = 7,
				.seq = 9, .len = 5, .nfds = 1 };
	struct bv_msg_hdr r;
	char buf[64];
	int sv[2], p[2], fds[4];
	unsigned int nfds = 4;

	EXPECT(!socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	EXPECT(!pipe(p));
	EXPECT(!bv_msg_send(sv[0], &h, "hello", &p[1], 1));
	EXPECT(!bv_msg_recv(sv[1], &r, buf, sizeof(buf), fds, &nfds));
	EXPECT(nfds == 1 && r.op == 7 && r.seq == 9 && r.len == 5 && !memcmp(buf, "hello", 5));
	/* the descriptor works: what we write into it comes out of the pipe */
	EXPECT(write(fds[0], "x", 1) == 1);
	EXPECT(read(p[0], buf, 1) == 1 && buf[0] == 'x');
	EXPECT(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	close(fds[0]);

	/* a header whose nfds lies */
	h.nfds = 0;
	EXPECT(bv_msg_send(sv[0], &h, "hello", &p[1], 1) == -EINVAL);
	/* garbage that is not a bv message */
	EXPECT(send(sv[0], "garbage-garbage-garbage-garbage", 31, 0) == 31);
	nfds = 4;
	EXPECT(bv_msg_recv(sv[1], &r, buf, sizeof(buf), fds, &nfds) == -EPROTO && nfds == 0);
	/* a payload too large for the receiver's buffer */
	h.nfds = 0;
	h.len = 40;
	EXPECT(!bv_msg_send(sv[0], &h, "0123456789012345678901234567890123456789", NULL, 0));
	EXPECT(bv_msg_recv(sv[1], &r, buf, 8, NULL, NULL) == -EMSGSIZE);
	/* descriptors the receiver did not ask for are closed and refused */
	h.len = 0;
	h.nfds = 1;
	EXPECT(!bv_msg_send(sv[0], &h, NULL, &p[1], 1));
	EXPECT(bv_msg_recv(sv[1], &r, buf, sizeof(buf), NULL, NULL) == -EPROTO);
	/* end of stream */
	close(sv[0]);
	EXPECT(bv_msg_recv(sv[1], &r, buf, sizeof(buf), NULL, NULL) == -EPIPE);
	if (!failures)
		printf("msg_test OK\n");
	return failures ? 1 : 0;
}
