/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 PRM field descriptors and big-endian accessors.
 *
 * Every device structure in the ConnectX-4 Programmer's Reference Manual (PRM Rev 0.40,
 * MLNX-15-4845) is a sequence of big-endian 32-bit words; the manual's tables give each field
 * as "offset of the dword, bits [hi:lo]".  Linux (include/linux/mlx5/mlx5_ifc.h) and rdma-core
 * (providers/mlx5/mlx5_ifc.h) render the same tables as bit arrays read with MLX5_GET/MLX5_SET.
 * We describe each field datasheet-style as a small integer instead, so the same constant
 * serves the driver (cx4d), the device model and the tests, and can be checked at compile time:
 *
 *	#define CX4_QPC_STATE	CX4_FLD(0x00, 28, 4)	byte offset of the BE dword, shift, width
 *	#define CX4_QPC_DBR_ADDR CX4_FLD64(0xa0)	64-bit BE field (8 bytes at 0xa0)
 *
 *	v = cx4_get(buf, CX4_QPC_STATE);		cx4_set(buf, CX4_QPC_STATE, 3);
 *	a = cx4_get64(buf, CX4_QPC_DBR_ADDR);		cx4_set64(buf, CX4_QPC_DBR_ADDR, a);
 *
 * A context embedded in a command is addressed by re-basing the descriptor:
 *	cx4_get(in, CX4_AT(CX4_CREATE_QP_IN_QPC, CX4_QPC_ST))
 *
 * Encoding (one uint32_t):  [31:12] byte offset (< 1 MiB), [11:5] width in bits (1..32 or 64),
 * [4:0] shift of the least significant bit inside the dword.  Buffers need no alignment: all
 * loads and stores go through memcpy, so a descriptor may be applied to any byte buffer
 * (mailbox data, a BAR0 shadow, a DMA page).
 *
 * cx4_get/cx4_set are for widths 1..32, cx4_get64/cx4_set64 for width 64 only (the
 * prm_layout_test enumerates every descriptor and checks this split at compile time).
 */
#ifndef CX4_PRM_FLD_H
#define CX4_PRM_FLD_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint32_t cx4_fld_t;

#define CX4_FLD(off, shift, width) \
	((cx4_fld_t)(((uint32_t)(off) << 12) | ((uint32_t)(width) << 5) | (uint32_t)(shift)))
#define CX4_FLD32(off)		CX4_FLD(off, 0, 32)
#define CX4_FLD64(off)		CX4_FLD(off, 0, 64)

#define CX4_FLD_OFF(f)		((uint32_t)(f) >> 12)
#define CX4_FLD_WIDTH(f)	(((uint32_t)(f) >> 5) & 0x7f)
#define CX4_FLD_SHIFT(f)	((uint32_t)(f) & 0x1f)
/* First byte after the field's dword(s): a buffer must be at least this long. */
#define CX4_FLD_END(f)		(CX4_FLD_OFF(f) + (CX4_FLD_WIDTH(f) == 64 ? 8u : 4u))
/* The descriptor moved by `base` bytes (a context inside a command, an array element). */
#define CX4_AT(base, f)		((cx4_fld_t)((f) + ((uint32_t)(base) << 12)))

/* True when the descriptor is well formed; used in static asserts by the layout test. */
#define CX4_FLD_VALID(f)						\
	((CX4_FLD_OFF(f) % 4 == 0) &&					\
	 ((CX4_FLD_WIDTH(f) == 64 && CX4_FLD_SHIFT(f) == 0) ||		\
	  (CX4_FLD_WIDTH(f) >= 1 && CX4_FLD_WIDTH(f) <= 32 &&		\
	   CX4_FLD_SHIFT(f) + CX4_FLD_WIDTH(f) <= 32)))

/* Largest value a field holds (all ones in its width). */
#define CX4_FLD_MAX(f)							\
	(CX4_FLD_WIDTH(f) >= 64 ? UINT64_MAX : ((UINT64_C(1) << (CX4_FLD_WIDTH(f) & 63)) - 1))

static inline uint32_t cx4_be32_load(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline void cx4_be32_store(void *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint64_t cx4_be64_load(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void cx4_be64_store(void *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint32_t cx4_fld_mask(cx4_fld_t f)
{
	uint32_t w = CX4_FLD_WIDTH(f);

	return w >= 32 ? 0xffffffffu : (1u << w) - 1;
}

/* Read a field of width 1..32. */
static inline uint32_t cx4_get(const void *buf, cx4_fld_t f)
{
	uint32_t w = cx4_be32_load((const uint8_t *)buf + CX4_FLD_OFF(f));

	return (w >> CX4_FLD_SHIFT(f)) & cx4_fld_mask(f);
}

/*
 * Write a field of width 1..32, leaving the other bits of its dword alone.  Bits of `val`
 * above the field width are dropped, as MLX5_SET does; callers that take values from
 * outside (a client request, a command input) check them first with cx4_fits().
 */
static inline void cx4_set(void *buf, cx4_fld_t f, uint32_t val)
{
	uint8_t *p = (uint8_t *)buf + CX4_FLD_OFF(f);
	uint32_t m = cx4_fld_mask(f) << CX4_FLD_SHIFT(f);
	uint32_t w = cx4_be32_load(p);

	cx4_be32_store(p, (w & ~m) | ((val << CX4_FLD_SHIFT(f)) & m));
}

static inline bool cx4_fits(cx4_fld_t f, uint64_t val)
{
	return val <= CX4_FLD_MAX(f);
}

/* Read / write a 64-bit field (two big-endian dwords, high one first). */
static inline uint64_t cx4_get64(const void *buf, cx4_fld_t f)
{
	return cx4_be64_load((const uint8_t *)buf + CX4_FLD_OFF(f));
}

static inline void cx4_set64(void *buf, cx4_fld_t f, uint64_t val)
{
	cx4_be64_store((uint8_t *)buf + CX4_FLD_OFF(f), val);
}

/*
 * Byte arrays (GIDs, MACs split over two fields, PSID strings) are plain byte ranges in the
 * PRM; headers give them as CX4_<NAME>_OFF / CX4_<NAME>_LEN and these copy them.
 */
static inline void cx4_get_bytes(const void *buf, size_t off, void *dst, size_t len)
{
	memcpy(dst, (const uint8_t *)buf + off, len);
}

static inline void cx4_set_bytes(void *buf, size_t off, const void *src, size_t len)
{
	memcpy((uint8_t *)buf + off, src, len);
}

/*
 * Physical address entries (PAS, MTT): 64-bit big-endian addresses in an array that starts
 * at `base`, 8 bytes per entry.  The low 12 bits of a PAS are zero (4 KB pages); an MTT entry
 * keeps read/write enable in bits 0/1 (rdma-core mlx5_vfio.h MLX5_MTT_READ/WRITE).
 */
static inline uint64_t cx4_pas_get(const void *buf, size_t base, size_t i)
{
	return cx4_be64_load((const uint8_t *)buf + base + 8 * i);
}

static inline void cx4_pas_set(void *buf, size_t base, size_t i, uint64_t addr)
{
	cx4_be64_store((uint8_t *)buf + base + 8 * i, addr);
}

#endif /* CX4_PRM_FLD_H */
