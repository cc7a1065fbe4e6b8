// SPDX-License-Identifier: MIT
/*
 * SCIF sample 2: registered windows, RMA and fences. The listener registers a window and
 * tells the connector its offset; the connector writes 1 MiB into it with scif_writeto
 * (asynchronously), then asks for a signal: 8 bytes written into the listener's window once
 * the writes before them are complete. The listener waits for the signal in its own memory and
 * checks every byte; then the connector reads the window back with scif_readfrom.
 *
 *   scif_rma listen PORT
 *   scif_rma connect NODE PORT
 *
 * Build: cc scif_rma.c -lscif
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <scif.h>

#define LEN (1 << 20)
#define SIGNAL_AT LEN	/* the page after the data: where the signal lands */
#define DONE 0x5c1f5c1fu

static unsigned char *pages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int listener(uint16_t port)
{
	scif_epd_t l = scif_open(), c;
	struct scif_portID peer;
	unsigned char *win = pages(LEN + 4096);
	volatile uint64_t *flag = (volatile uint64_t *)(win + SIGNAL_AT);
	off_t off;

	if (!win || scif_bind(l, port) < 0 || scif_listen(l, 1) < 0) {
		perror("scif listen");
		return 1;
	}
	printf("listening on port %u\n", port);
	fflush(stdout);
	if (scif_accept(l, &peer, &c, SCIF_ACCEPT_SYNC) < 0) {
		perror("scif listen/accept");
		return 1;
	}
	off = scif_register(c, win, LEN + 4096, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (off == SCIF_REGISTER_FAILED || scif_send(c, &off, sizeof(off), SCIF_SEND_BLOCK) < 0) {
		perror("scif_register");
		return 1;
	}
	while (*flag != DONE)	/* the signal comes after the data it follows */
		usleep(100);
	for (int i = 0; i < LEN; i++)
		if (win[i] != (unsigned char)(i * 7)) {
			fprintf(stderr, "byte %d differs\n", i);
			return 1;
		}
	printf("1 MiB arrived, every byte checked\n");
	if (scif_send(c, &off, sizeof(off), SCIF_SEND_BLOCK) < 0)
		return 1;
	scif_recv(c, &off, 1, SCIF_RECV_BLOCK);	/* until the peer closes */
	scif_close(c);
	scif_close(l);
	return 0;
}

static int connector(uint16_t node, uint16_t port)
{
	struct scif_portID dst = { node, port };
	scif_epd_t e = scif_open();
	unsigned char *buf = pages(LEN);
	off_t roff, loff;
	int mark;

	if (!buf || scif_connect(e, &dst) < 0 ||
	    scif_recv(e, &roff, sizeof(roff), SCIF_RECV_BLOCK) != sizeof(roff)) {
		perror("scif_connect");
		return 1;
	}
	loff = scif_register(e, buf, LEN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	for (int i = 0; i < LEN; i++)
		buf[i] = (unsigned char)(i * 7);
	/* four asynchronous writes, then the signal behind them */
	for (int q = 0; q < 4; q++)
		if (scif_writeto(e, loff + q * (LEN / 4), LEN / 4, roff + q * (LEN / 4), 0) < 0) {
			perror("scif_writeto");
			return 1;
		}
	if (scif_fence_signal(e, 0, 0, roff + SIGNAL_AT, DONE,
			      SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE) < 0) {
		perror("scif_fence_signal");
		return 1;
	}
	if (scif_recv(e, &roff, sizeof(roff), SCIF_RECV_BLOCK) != sizeof(roff))
		return 1;
	/* read it back, synchronously; a fence would do too */
	memset(buf, 0, LEN);
	if (scif_readfrom(e, loff, LEN, roff, 0) < 0 ||
	    scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark) < 0 || scif_fence_wait(e, mark) < 0) {
		perror("scif_readfrom");
		return 1;
	}
	for (int i = 0; i < LEN; i++)
		if (buf[i] != (unsigned char)(i * 7)) {
			fprintf(stderr, "read back: byte %d differs\n", i);
			return 1;
		}
	printf("read back 1 MiB, every byte checked\n");
	scif_unregister(e, loff, LEN);
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
