// SPDX-License-Identifier: MIT
/*
 * ucx_sockaddr: a UCX client/server over a socket address, the way UCX applications connect
 * (ucp_listener_create / ucp_ep_create with a sockaddr: UCX's connection manager, which for
 * RDMA devices is librdmacm, ours under bvctl run). The client sends COUNT messages of SIZE
 * bytes on a UCP stream, the server checks each byte and echoes them back, the client checks
 * the echo. Prints "transport ..." (what UCX used) and "PASS".
 *
 *   ucx_sockaddr server IP PORT
 *   ucx_sockaddr client IP PORT [COUNT [SIZE]]
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>

static ucp_context_h ctx;
static ucp_worker_h worker;
static ucp_ep_h ep;
static volatile bool closed;

static void die(const char *what, ucs_status_t st)
{
	fprintf(stderr, "ucx_sockaddr: %s: %s\n", what, ucs_status_string(st));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Progress until the request completes (60 s at most). */
static void wait_req(void *req, const char *what)
{
	double end = now() + 60;
	ucs_status_t st;

	if (!req)
		return;
	if (UCS_PTR_IS_ERR(req))
		die(what, UCS_PTR_STATUS(req));
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
		ucp_worker_progress(worker);
		if (now() > end)
			die(what, UCS_ERR_TIMED_OUT);
	}
	ucp_request_free(req);
	if (st != UCS_OK)
		die(what, st);
}

static void err_cb(void *arg, ucp_ep_h e, ucs_status_t st)
{
	(void)arg;
	(void)e;
	(void)st;
	closed = true;	/* the peer went: expected at the end */
}

static void conn_cb(ucp_conn_request_h req, void *arg)
{
	ucp_ep_params_t p = { .field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST |
					    UCP_EP_PARAM_FIELD_ERR_HANDLER,
			      .conn_request = req, .err_handler = { .cb = err_cb } };
	ucs_status_t st;

	(void)arg;
	if (ep) {
		ucp_listener_reject(*(ucp_listener_h *)arg, req);
		return;
	}
	st = ucp_ep_create(worker, &p, &ep);
	if (st != UCS_OK)
		die("ucp_ep_create (server)", st);
}

static void stream_recv(void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ucp_request_param_t rp = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
					   .flags = UCP_STREAM_RECV_FLAG_WAITALL };
		size_t n = 0;
		void *req = ucp_stream_recv_nbx(ep, (char *)buf + got, len - got, &n, &rp);

		if (!req) {
			got += n;
			continue;
		}
		wait_req(req, "ucp_stream_recv_nbx");
		got = len;	/* WAITALL: all of it */
	}
}

static void stream_send(const void *buf, size_t len)
{
	ucp_request_param_t rp = { .op_attr_mask = 0 };

	wait_req(ucp_stream_send_nbx(ep, buf, len, &rp), "ucp_stream_send_nbx");
}

static void print_transport(void)
{
	ucp_ep_print_info(ep, stdout);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	ucp_params_t up = { .field_mask = UCP_PARAM_FIELD_FEATURES,
			    .features = UCP_FEATURE_STREAM };
	ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				   .thread_mode = UCS_THREAD_MODE_SINGLE };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	bool server;
	int count = argc > 4 ? atoi(argv[4]) : 100, size = argc > 5 ? atoi(argv[5]) : 4096;
	uint8_t *buf, *echo;
	ucs_status_t st;

	if (argc < 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")) ||
	    inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1 || count < 1 || size < 1) {
		fprintf(stderr, "usage: ucx_sockaddr server|client IP PORT [COUNT [SIZE]]\n");
		return 2;
	}
	server = !strcmp(argv[1], "server");
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	st = ucp_init(&up, NULL, &ctx);
	if (st != UCS_OK)
		die("ucp_init", st);
	st = ucp_worker_create(ctx, &wp, &worker);
	if (st != UCS_OK)
		die("ucp_worker_create", st);
	buf = malloc((size_t)size);
	echo = malloc((size_t)size);
	if (!buf || !echo)
		return 1;

	if (server) {
		static ucp_listener_h listener;
		ucp_listener_params_t lp = { .field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR |
							   UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
					     .sockaddr = { .addr = (struct sockaddr *)&sa,
							   .addrlen = sizeof(sa) },
					     .conn_handler = { .cb = conn_cb, .arg = &listener } };

		st = ucp_listener_create(worker, &lp, &listener);
		if (st != UCS_OK)
			die("ucp_listener_create", st);
		printf("listening\n");
		while (!ep)
			ucp_worker_progress(worker);
		for (int i = 0; i < count; i++) {
			stream_recv(buf, (size_t)size);
			for (int j = 0; j < size; j++)
				if (buf[j] != (uint8_t)(i * 7 + j)) {
					fprintf(stderr, "message %d byte %d: 0x%x\n", i, j, buf[j]);
					return 1;
				}
			stream_send(buf, (size_t)size);
		}
		print_transport();
		/* the client closes; wait for it */
		for (double end = now() + 10; !closed && now() < end;)
			ucp_worker_progress(worker);
		ucp_listener_destroy(listener);
	} else {
		ucp_ep_params_t p = { .field_mask = UCP_EP_PARAM_FIELD_FLAGS |
						    UCP_EP_PARAM_FIELD_SOCK_ADDR |
						    UCP_EP_PARAM_FIELD_ERR_HANDLER,
				      .flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER,
				      .sockaddr = { .addr = (struct sockaddr *)&sa,
						    .addrlen = sizeof(sa) },
				      .err_handler = { .cb = err_cb } };
		double t0;

		st = ucp_ep_create(worker, &p, &ep);
		if (st != UCS_OK)
			die("ucp_ep_create (client)", st);
		t0 = now();
		for (int i = 0; i < count; i++) {
			for (int j = 0; j < size; j++)
				buf[j] = (uint8_t)(i * 7 + j);
			stream_send(buf, (size_t)size);
			stream_recv(echo, (size_t)size);
			if (memcmp(buf, echo, (size_t)size)) {
				fprintf(stderr, "echo %d differs\n", i);
				return 1;
			}
		}
		printf("%d messages of %d bytes echoed in %.3f s\n", count, size, now() - t0);
		print_transport();
		{
			/* a flushed close: the server sees its peer go */
			ucp_request_param_t rp = { .op_attr_mask = 0 };

			wait_req(ucp_ep_close_nbx(ep, &rp), "ucp_ep_close_nbx");
		}
	}
	ucp_worker_destroy(worker);
	ucp_cleanup(ctx);
	printf("PASS\n");
	return 0;
}
