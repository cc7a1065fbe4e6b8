// SPDX-License-Identifier: MIT
/*
 * Port events end to end: the test script pulls the modelled port's cable and plugs it back
 * (bvctl model DEV cable pull / plug: the model's control outside the function, which cx4d
 * learns of only by the PORT_CHANGE event); this program must see IBV_EVENT_PORT_ERR then
 * IBV_EVENT_PORT_ACTIVE on its async fd, with ibv_query_port agreeing each time.
 *
 *   cx4_port_test DEVICE         prints "ready", then "down", then "up"; exit 0 on success
 *
 * Device fatal: with objects of every kind open, the script makes the modelled function fail
 * (bvctl model DEV fail disable); cx4d's health sensor must find it and this program must see
 * IBV_EVENT_DEVICE_FATAL. After it, creating fails with EIO and destroying still works, so an
 * application can shut down cleanly (a kernel with a dead mlx5 behaves so).
 *
 *   cx4_port_test DEVICE fatal   prints "ready", then "fatal"; exit 0 on success
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static int wait_event(struct ibv_context *ctx, enum ibv_event_type want)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int ok;

	if (poll(&p, 1, 20000) != 1 || ibv_get_async_event(ctx, &ev)) {
		fprintf(stderr, "FAIL: no async event (want %s)\n", ibv_event_type_str(want));
		return -1;
	}
	ok = ev.event_type == want && ev.element.port_num == 1;
	if (!ok)
		fprintf(stderr, "FAIL: event %s port %d, want %s port 1\n",
			ibv_event_type_str(ev.event_type), ev.element.port_num,
			ibv_event_type_str(want));
	ibv_ack_async_event(&ev);
	return ok ? 0 : -1;
}

static int port_state(struct ibv_context *ctx, enum ibv_port_state want)
{
	struct ibv_port_attr a;

	if (ibv_query_port(ctx, 1, &a) || a.state != want) {
		fprintf(stderr, "FAIL: port state %s, want %s\n", ibv_port_state_str(a.state),
			ibv_port_state_str(want));
		return -1;
	}
	return 0;
}

#define CHECK(c)                                                                           \
	do {                                                                                   \
		if (!(c)) {                                                                    \
			fprintf(stderr, "FAIL: %s (line %d, errno %d)\n", #c, __LINE__, errno); \
			return 1;                                                              \
		}                                                                              \
	} while (0)

static int fatal(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	static char buf[4096];
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ibv_mr *mr;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	CHECK(pd && cq);
	qa.send_cq = qa.recv_cq = cq;
	CHECK((qp = ibv_create_qp(pd, &qa)) != NULL);
	CHECK((srq = ibv_create_srq(pd, &sa)) != NULL);
	CHECK((mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)) != NULL);
	printf("ready\n");
	fflush(stdout);
	/* the health sensor polls every 2 s */
	CHECK(poll(&p, 1, 20000) == 1);
	CHECK(ibv_get_async_event(ctx, &ev) == 0);
	if (ev.event_type != IBV_EVENT_DEVICE_FATAL) {
		fprintf(stderr, "FAIL: event %s, want %s\n", ibv_event_type_str(ev.event_type),
			ibv_event_type_str(IBV_EVENT_DEVICE_FATAL));
		return 1;
	}
	ibv_ack_async_event(&ev);
	/* a dead device makes nothing new ... */
	errno = 0;
	CHECK(ibv_alloc_pd(ctx) == NULL && errno == EIO);
	errno = 0;
	CHECK(ibv_create_cq(ctx, 16, NULL, NULL, 0) == NULL && errno == EIO);
	/* ... but lets everything go */
	CHECK(ibv_destroy_qp(qp) == 0);
	CHECK(ibv_destroy_srq(srq) == 0);
	CHECK(ibv_dereg_mr(mr) == 0);
	CHECK(ibv_destroy_cq(cq) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_close_device(ctx) == 0);
	printf("fatal\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; (argc == 2 || argc == 3) && list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "usage: cx4_port_test DEVICE [fatal] (a device that opens)\n");
		return 2;
	}
	if (argc == 3) {
		int rc = strcmp(argv[2], "fatal") ? 2 : fatal(ctx);

		ibv_free_device_list(list);
		return rc;
	}
	if (port_state(ctx, IBV_PORT_ACTIVE))
		return 1;
	printf("ready\n");
	fflush(stdout);
	if (wait_event(ctx, IBV_EVENT_PORT_ERR) || port_state(ctx, IBV_PORT_DOWN))
		return 1;
	printf("down\n");
	fflush(stdout);
	if (wait_event(ctx, IBV_EVENT_PORT_ACTIVE) || port_state(ctx, IBV_PORT_ACTIVE))
		return 1;
	printf("up\n");
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
