/* SPDX-License-Identifier: MIT */
/*
 * ntbdv: what the ntb provider offers beyond the verbs, as mlx5dv does for mlx5. One call:
 * the peer's registered memory mapped for CPU loads and stores through the NTB window, which
 * an NTB has and a verbs device does not (libscif's scif_mmap, docs/scif.md).
 *
 * The provider is a plugin libibverbs loads; its ntbdv_ functions are exported from it and
 * found in the loaded module (dlsym on libntb-rdmav34.so), never linked against.
 */
#ifndef NTBDV_H
#define NTBDV_H

#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ntbdv_peer_map {
	int fd;			/* a new descriptor of the memory behind the window: close it */
	uint64_t offset;	/* where the requested first byte is in fd (page aligned) */
};

/*
 * Map [addr, addr + length) of the peer's region with remote key rkey (addr as requests name
 * it, page aligned; length a page multiple): mmap(NULL, length, prot, MAP_SHARED, map->fd,
 * map->offset) then reaches the peer's pages themselves. Returns 0 or an errno: EINVAL (not an
 * ntb context, unaligned), ENOENT (no such key at the peer), ERANGE (outside the region),
 * EACCES (the region is not remotely writable), ENXIO (the region is not in shareable memory:
 * the peer's pages can only be reached by DMA), ENOLINK (the link is down).
 */
int ntbdv_map_peer_mr(struct ibv_context *ctx, uint32_t rkey, uint64_t addr, uint64_t length,
		      struct ntbdv_peer_map *map);

#define NTBDV_MAP_PEER_MR_SYM	"ntbdv_map_peer_mr"
typedef int (*ntbdv_map_peer_mr_fn)(struct ibv_context *, uint32_t, uint64_t, uint64_t,
				    struct ntbdv_peer_map *);

#ifdef __cplusplus
}
#endif

#endif
