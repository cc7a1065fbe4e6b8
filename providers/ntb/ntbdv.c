// SPDX-License-Identifier: MIT
/*
 * ntbdv (ntbdv.h): the peer's registered memory for CPU loads and stores. The same window
 * range the requester's PIO path stores into (ntb_req.c), asked of ntbd with
 * NTB_OP_MAP_PEER_MR, handed to the caller to map where it wants.
 */
#include <errno.h>
#include <unistd.h>

#include "ntb.h"
#include "ntbdv.h"

__attribute__((visibility("default"))) int
ntbdv_map_peer_mr(struct ibv_context *ibctx, uint32_t rkey, uint64_t addr, uint64_t length,
		  struct ntbdv_peer_map *map)
{
	struct ntb_context *ctx;
	const struct ntb_end *end;
	struct ntb_handle_req req = { .handle = rkey, .reserved = NTB_END_PEER };
	struct ntb_map_peer_mr_rsp rsp = { 0 };
	struct ntbv_mr_ent e;
	uint32_t idx = NTBV_KEY_INDEX(rkey);
	int fd = -1;
	struct bv_call call = { .op = NTB_OP_MAP_PEER_MR, .req = &req, .req_len = sizeof(req),
				.rsp = &rsp, .rsp_max = sizeof(rsp), .rfds = &fd, .nrfds = 1 };
	uint64_t off;
	int ret;

	/* a context of this provider: its operations are ours */
	if (!ibctx || ibctx->ops.post_send != ntb_post_send || !map || !length ||
	    addr % NTBV_PAGE || length % NTBV_PAGE)
		return EINVAL;
	ctx = to_ntb_ctx(ibctx);
	ret = ntb_ensure_attached(ctx);
	if (ret)
		return ret > 0 ? ret : ENOLINK;
	end = &ctx->ends[NTB_END_PEER];	/* the other end of the link: its key table */
	if (!end->up)
		return ENOLINK;
	if (!idx || idx >= end->max_mr)
		return ENOENT;
	ntb_read_entry(&e, &end->mrs[idx], sizeof(e));
	if (e.rkey != rkey || !e.length)
		return ENOENT;
	if (addr < e.hca_va || addr + length > e.hca_va + e.length || addr + length < addr)
		return ERANGE;
	if (!(e.access & IBV_ACCESS_REMOTE_WRITE))
		return EACCES;
	if (e.win_off == NTBV_NO_WINDOW)
		return ENXIO;
	ret = bv_call(&ctx->bv, &call);
	if (ret || call.rsp_len != sizeof(rsp) || call.nrfds != 1) {
		if (fd >= 0)
			close(fd);
		/* ntbd: ENOLINK, or ENXIO for memory only its DMA reaches */
		return ret > 0 ? ret : ret < 0 ? ENOLINK : ENXIO;
	}
	off = rsp.fd_off + rsp.delta + (addr - e.hca_va);
	if (rsp.delta + (addr - e.hca_va) + length > rsp.len || off % NTBV_PAGE) {
		close(fd);
		return ENXIO;
	}
	map->fd = fd;
	map->offset = off;
	return 0;
}
