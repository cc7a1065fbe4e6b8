// SPDX-License-Identifier: MIT
/*
 * test_cq_event_wait DEVICE [-p]: arm a CQ on a completion channel, print "waiting", and sleep
 * in ibv_get_cq_event (with -p: first in poll(2) on the channel's fd) while nothing can
 * complete. The test kills the device's daemon then: as when a device goes away under the
 * kernel (ib_uverbs_free_hw_resources closes every channel's event queue), the sleeper must
 * wake and ibv_get_cq_event fail with EIO (ib_uverbs_event_read), the async fd must hold
 * IBV_EVENT_DEVICE_FATAL, and nothing may hang. Exit 0 then; 1 on anything else.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	return ctx;
}

int main(int argc, char **argv)
{
	int use_poll = argc > 2 && !strcmp(argv[2], "-p");
	struct ibv_async_event ae;
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_cq *cq, *ev_cq;
	void *ev_ctx;
	int ret, err;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE [-p]\n", argv[0]);
		return 2;
	}
	ctx = open_dev(argv[1]);
	ch = ctx ? ibv_create_comp_channel(ctx) : NULL;
	cq = ch ? ibv_create_cq(ctx, 16, NULL, ch, 0) : NULL;
	if (!cq || ibv_req_notify_cq(cq, 0)) {
		fprintf(stderr, "%s: setup failed: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("waiting\n");
	fflush(stdout);
	if (use_poll) {
		struct pollfd p = {.fd = ch->fd, .events = POLLIN};

		ret = poll(&p, 1, -1);
		printf("poll: %d, revents 0x%x\n", ret, p.revents);
		if (ret != 1)
			return 1;
	}
	errno = 0;
	ret = ibv_get_cq_event(ch, &ev_cq, &ev_ctx);
	err = errno;
	printf("ibv_get_cq_event: %d, errno %d (%s)\n", ret, err, strerror(err));
	if (ret != -1 || err != EIO)
		return 1;
	/* the async fd says why: the device is gone */
	if (ibv_get_async_event(ctx, &ae)) {
		printf("ibv_get_async_event: %s\n", strerror(errno));
		return 1;
	}
	printf("async event: %s\n", ibv_event_type_str(ae.event_type));
	ret = ae.event_type == IBV_EVENT_DEVICE_FATAL ? 0 : 1;
	ibv_ack_async_event(&ae);
	printf("%s\n", ret ? "FAIL" : "PASS");
	return ret;
}
