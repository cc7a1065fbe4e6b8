// SPDX-License-Identifier: MIT
/*
 * SCIF sample 3: the peer's window mapped with scif_mmap. The listener registers a page and
 * waits until a value appears in it; the connector maps that page and stores the value with a
 * plain store. Over an ntb link the store goes through the NTB window; to one's own node it is
 * local memory; a connection that cannot map (cx4 to another node) says EOPNOTSUPP.
 *
 *   scif_mmap listen PORT
 *   scif_mmap connect NODE PORT
 *
 * Build: cc scif_mmap.c -lscif
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <scif.h>

#define VALUE 0x1234567887654321ull

static int listener(uint16_t port)
{
	scif_epd_t l = scif_open(), c;
	struct scif_portID peer;
	volatile uint64_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char done;

	if (page == MAP_FAILED || scif_bind(l, port) < 0 || scif_listen(l, 1) < 0) {
		perror("scif listen");
		return 1;
	}
	printf("listening on port %u\n", port);
	fflush(stdout);
	if (scif_accept(l, &peer, &c, SCIF_ACCEPT_SYNC) < 0 ||
	    scif_register(c, (void *)page, 4096, 0x10000, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) != 0x10000) {
		perror("scif setup");
		return 1;
	}
	if (scif_send(c, "r", 1, SCIF_SEND_BLOCK) != 1)
		return 1;
	/* the connector says whether it could map */
	if (scif_recv(c, &done, 1, SCIF_RECV_BLOCK) != 1)
		return 1;
	if (done == 'n') {
		printf("the peer cannot map this connection's windows\n");
	} else {
		while (page[0] != VALUE)
			usleep(100);
		printf("the peer's store arrived: %llx\n", (unsigned long long)page[0]);
	}
	scif_send(c, "k", 1, SCIF_SEND_BLOCK);
	scif_recv(c, &done, 1, SCIF_RECV_BLOCK);	/* until the peer closes */
	scif_close(c);
	scif_close(l);
	return 0;
}

static int connector(uint16_t node, uint16_t port)
{
	struct scif_portID dst = { node, port };
	scif_epd_t e = scif_open();
	volatile uint64_t *m;
	char c;

	if (scif_connect(e, &dst) < 0 || scif_recv(e, &c, 1, SCIF_RECV_BLOCK) != 1) {
		perror("scif_connect");
		return 1;
	}
	m = scif_mmap(NULL, 4096, SCIF_PROT_READ | SCIF_PROT_WRITE, 0, e, 0x10000);
	if (m == SCIF_MMAP_FAILED) {
		printf("scif_mmap: %s\n", strerror(errno));
		scif_send(e, "n", 1, SCIF_SEND_BLOCK);
	} else {
		m[0] = VALUE;
		scif_send(e, "y", 1, SCIF_SEND_BLOCK);
	}
	scif_recv(e, &c, 1, SCIF_RECV_BLOCK);
	if (m != SCIF_MMAP_FAILED)
		scif_munmap((void *)m, 4096);
	scif_close(e);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "listen"))
		return listener((uint16_t)atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "connect"))
		return connector((uint16_t)atoi(argv[2]), (uint16_t)atoi(argv[3]));
	fprintf(stderr, "usage: %s listen PORT | connect NODE PORT\n", argv[0]);
	return 2;
}
