// SPDX-License-Identifier: MIT
/*
 * Firmware pages (PRM "Pages Management"; Linux mlx5/core/pagealloc.c). The device has no
 * memory of its own for its contexts: it asks the driver for 4 KB pages, at boot (QUERY_PAGES
 * op_mod 1), before INIT_HCA (op_mod 2), after it (op_mod 3), and at any time through
 * PAGE_REQUEST events (positive: give, negative: take back). MANAGE_PAGES carries the page
 * addresses: op_mod 1 gives (PAS list in the input), op_mod 2 asks for pages back (the device
 * lists the ones it returns in the output), op_mod 0 tells the device an allocation failed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cx4d.h"

/* Linux 4.4 reclaims at most this many pages per MANAGE_PAGES (optimal_reclaimed_pages()). */
#define RECLAIM_CHUNK	((CX4D_PAGE - CX4_MANAGE_PAGES_OUT_SIZE) / 8)

static int query_pages(struct cx4d *d, uint16_t op_mod, uint16_t *func_id, int32_t *n)
{
	uint8_t in[CX4_QUERY_PAGES_IN_SIZE] = { 0 }, out[CX4_QUERY_PAGES_OUT_SIZE];
	int err;

	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_PAGES, op_mod);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	*func_id = cx4_get(out, CX4_QUERY_PAGES_OUT_FUNCTION_ID);
	*n = (int32_t)cx4_get(out, CX4_QUERY_PAGES_OUT_NUM_PAGES);
	return 0;
}

static void page_free(struct cx4d *d, struct cx4d_fw_page *p)
{
	cx4d_dma_free(d, &p->mem);
	free(p);
}

static void alloc_fail(struct cx4d *d, uint16_t func_id)
{
	uint8_t in[CX4_MANAGE_PAGES_IN_SIZE] = { 0 }, out[CX4_MANAGE_PAGES_OUT_SIZE];

	cx4d_cmd_set_header(in, CX4_CMD_OP_MANAGE_PAGES, CX4_MANAGE_PAGES_OPMOD_ALLOC_FAIL);
	cx4_set(in, CX4_MANAGE_PAGES_IN_FUNCTION_ID, func_id);
	cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

/* Linux give_pages(): all of them in one MANAGE_PAGES, as the [trace] shows (12868 pages). */
int cx4d_pages_give(struct cx4d *d, uint16_t func_id, int32_t n)
{
	size_t inlen = CX4_MANAGE_PAGES_IN_SIZE + (size_t)n * 8;
	uint8_t out[CX4_MANAGE_PAGES_OUT_SIZE];
	struct cx4d_fw_page **pg;
	uint8_t *in;
	int err = 0;
	int32_t i;

	if (n <= 0)
		return 0;
	if (n > (1 << 22))
		return EINVAL;
	in = calloc(1, inlen);
	pg = calloc(n, sizeof(*pg));
	if (!in || !pg) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		pg[i] = calloc(1, sizeof(**pg));
		if (!pg[i] || cx4d_dma_alloc(d, CX4D_PAGE, &pg[i]->mem)) {
			free(pg[i]);
			pg[i] = NULL;
			err = ENOMEM;
			break;
		}
		cx4_pas_set(in, CX4_MANAGE_PAGES_IN_PAS, i, pg[i]->mem.iova);
	}
	if (err) {
		cx4d_log(d, "cannot allocate %d firmware pages", n);
		while (i-- > 0)
			page_free(d, pg[i]);
		alloc_fail(d, func_id);
		goto out;
	}
	cx4d_cmd_set_header(in, CX4_CMD_OP_MANAGE_PAGES, CX4_MANAGE_PAGES_OPMOD_ALLOC_SUCCESS);
	cx4_set(in, CX4_MANAGE_PAGES_IN_FUNCTION_ID, func_id);
	cx4_set(in, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES, n);
	err = cx4d_cmd(d, in, inlen, out, sizeof(out));
	for (i = 0; i < n; i++) {
		if (err || cx4d_idmap_put(&d->pages, pg[i]->mem.iova >> 12, pg[i])) {
			page_free(d, pg[i]);
			continue;
		}
		pg[i]->next = d->page_list;
		d->page_list = pg[i];
		d->npages++;
	}
out:
	free(pg);
	free(in);
	return err;
}

static void unlink_page(struct cx4d *d, struct cx4d_fw_page *p)
{
	for (struct cx4d_fw_page **pp = &d->page_list; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			return;
		}
}

/* Linux reclaim_pages(): ask for n pages back; free the ones the device lists. */
int cx4d_pages_reclaim(struct cx4d *d, uint16_t func_id, int32_t n)
{
	uint8_t in[CX4_MANAGE_PAGES_IN_SIZE] = { 0 };
	size_t outlen;
	uint8_t *out;
	uint32_t got;
	int err;

	if (n <= 0)
		return 0;
	outlen = CX4_MANAGE_PAGES_OUT_SIZE + (size_t)n * 8;
	out = calloc(1, outlen);
	if (!out)
		return ENOMEM;
	cx4d_cmd_set_header(in, CX4_CMD_OP_MANAGE_PAGES, CX4_MANAGE_PAGES_OPMOD_HCA_RETURN_PAGES);
	cx4_set(in, CX4_MANAGE_PAGES_IN_FUNCTION_ID, func_id);
	cx4_set(in, CX4_MANAGE_PAGES_IN_INPUT_NUM_ENTRIES, n);
	err = cx4d_cmd(d, in, sizeof(in), out, outlen);
	if (err)
		goto out;
	got = cx4_get(out, CX4_MANAGE_PAGES_OUT_OUTPUT_NUM_ENTRIES);
	if (got > (uint32_t)n) {
		cx4d_log(d, "device returned %u pages, %d asked", got, n);
		got = n;
	}
	for (uint32_t i = 0; i < got; i++) {
		uint64_t iova = cx4_pas_get(out, CX4_MANAGE_PAGES_OUT_PAS, i);
		struct cx4d_fw_page *p = cx4d_idmap_get(&d->pages, iova >> 12);

		if (!p) {
			cx4d_log(d, "device returned page 0x%llx it was never given",
				 (unsigned long long)iova);
			continue;
		}
		cx4d_idmap_del(&d->pages, iova >> 12);
		unlink_page(d, p);
		page_free(d, p);
		d->npages--;
	}
	err = got ? 0 : EAGAIN;
out:
	free(out);
	return err;
}

/* Linux mlx5_reclaim_startup_pages(): after TEARDOWN_HCA the device gives everything back. */
int cx4d_pages_reclaim_all(struct cx4d *d)
{
	while (d->npages) {
		size_t n = d->npages < RECLAIM_CHUNK ? d->npages : RECLAIM_CHUNK;

		if (cx4d_pages_reclaim(d, 0, (int32_t)n)) {
			cx4d_log(d, "device kept %zu pages at teardown", d->npages);
			return EIO;
		}
	}
	return 0;
}

void cx4d_pages_free_all(struct cx4d *d)
{
	while (d->page_list) {
		struct cx4d_fw_page *p = d->page_list;

		d->page_list = p->next;
		cx4d_idmap_del(&d->pages, p->mem.iova >> 12);
		page_free(d, p);
	}
	d->npages = 0;
}

/* Linux mlx5_satisfy_startup_pages(); a count <= 0 needs nothing (Snabb, for CX7's < 0). */
int cx4d_pages_satisfy(struct cx4d *d, uint16_t op_mod)
{
	uint16_t func_id;
	int32_t n;
	int err = query_pages(d, op_mod, &func_id, &n);

	if (err)
		return err;
	return n > 0 ? cx4d_pages_give(d, func_id, n) : 0;
}
