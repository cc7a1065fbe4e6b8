// SPDX-License-Identifier: MIT
/*
 * Port events end to end: the test script pulls the modelled port's cable (SIGUSR1 to cx4d)
 * and plugs it back (SIGUSR2); this program must see IBV_EVENT_PORT_ERR then
 * IBV_EVENT_PORT_ACTIVE on its async fd, with ibv_query_port agreeing each time.
 *
 *   cx4_port_test DEVICE     prints "ready", then "down", then "up"; exit 0 on success
 */
#include <poll.h>
#include <stdio.h>
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

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; argc == 2 && list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "usage: cx4_port_test DEVICE (a device that opens)\n");
		return 2;
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
