// SPDX-License-Identifier: MIT
/*
 * SCIF sample 1: connect, accept and messages. The listener echoes what it receives, in
 * upper case; the connector sends a line and prints the answer.
 *
 *   scif_hello listen PORT               (on one node)
 *   scif_hello connect NODE PORT TEXT    (on another node, or the same)
 *
 * Build: cc scif_hello.c -lscif
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <scif.h>

static int listener(uint16_t port)
{
	scif_epd_t l = scif_open(), c;
	struct scif_portID peer;
	char buf[256];
	int len, n;

	if (l == SCIF_OPEN_FAILED || scif_bind(l, port) < 0 || scif_listen(l, 4) < 0) {
		perror("scif listen");
		return 1;
	}
	printf("listening on port %u\n", port);
	fflush(stdout);
	if (scif_accept(l, &peer, &c, SCIF_ACCEPT_SYNC) < 0) {
		perror("scif_accept");
		return 1;
	}
	printf("connection from node %u port %u\n", peer.node, peer.port);
	/* a length, then the bytes: SCIF is a byte stream without message boundaries */
	if (scif_recv(c, &len, sizeof(len), SCIF_RECV_BLOCK) != sizeof(len) || len < 0 ||
	    len > (int)sizeof(buf) || scif_recv(c, buf, len, SCIF_RECV_BLOCK) != len) {
		perror("scif_recv");
		return 1;
	}
	for (n = 0; n < len; n++)
		buf[n] = (char)toupper((unsigned char)buf[n]);
	if (scif_send(c, buf, len, SCIF_SEND_BLOCK) != len) {
		perror("scif_send");
		return 1;
	}
	/* wait for the peer to close: then recv reports ECONNRESET */
	if (scif_recv(c, buf, 1, SCIF_RECV_BLOCK) != -1 || errno != ECONNRESET)
		fprintf(stderr, "unexpected end\n");
	scif_close(c);
	scif_close(l);
	return 0;
}

static int connector(uint16_t node, uint16_t port, const char *text)
{
	struct scif_portID dst = { node, port };
	scif_epd_t e = scif_open();
	int len = (int)strlen(text);
	char buf[256];
	uint16_t self;

	if (len > (int)sizeof(buf))
		len = sizeof(buf);
	scif_get_nodeIDs(NULL, 0, &self);
	if (e == SCIF_OPEN_FAILED || scif_connect(e, &dst) < 0) {
		perror("scif_connect");
		return 1;
	}
	if (scif_send(e, &len, sizeof(len), SCIF_SEND_BLOCK) != sizeof(len) ||
	    scif_send(e, (void *)text, len, SCIF_SEND_BLOCK) != len ||
	    scif_recv(e, buf, len, SCIF_RECV_BLOCK) != len) {
		perror("scif messages");
		return 1;
	}
	printf("node %u got: %.*s\n", self, len, buf);
	scif_close(e);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "listen"))
		return listener((uint16_t)atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "connect"))
		return connector((uint16_t)atoi(argv[2]), (uint16_t)atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: %s listen PORT | connect NODE PORT TEXT\n", argv[0]);
	return 2;
}
