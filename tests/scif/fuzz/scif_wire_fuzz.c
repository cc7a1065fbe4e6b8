// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness of what libscif takes from a peer (scif-compat/wire.c, window.c, ring.h):
 * an input is a stream of what a hostile peer can send - private data of a connection request,
 * control messages, producer and consumer counts - applied the way the library applies them
 * (REGISTER / UNREGISTER to the mirror of the peer's windows, counts to the ring positions).
 * Checked: nothing is accepted that breaks the invariants the data path relies on (windows
 * sorted, page-granular and disjoint; accepted counts within the ring), every rejection is
 * counted, and nothing reads or writes out of bounds (ASan, UBSan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "scif.h"
#include "window.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_table(const struct scif_wintab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct scif_win *w = &t->w[i];

		if (!w->len || w->off % SCIF_PAGE_SIZE || w->len % SCIF_PAGE_SIZE ||
		    w->off + w->len > SCIF_AUTO_END || w->off + w->len < w->off)
			abort();
		if (i && t->w[i - 1].off + t->w[i - 1].len > w->off)
			abort();
	}
}

static unsigned long rejects(void)
{
	unsigned long n = 0;

	for (int i = 0; i < SCIF_REJ_MAX; i++)
		n += scif_wire_stats[i];
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scif_wintab rwin;
	struct scif_ring_pos rx = { .size = 65536 }, tx = { .size = 65536 };
	struct scif_cm_pdata pd;
	struct scif_span spans[8];

	scif_wintab_init(&rwin);
	/* a first byte chooses how long the private data is (the CM may pad it) */
	if (size) {
		size_t plen = data[0] % 200;
		unsigned long before = rejects();

		if (plen > size - 1)
			plen = size - 1;
		if (!scif_pdata_parse(data + 1, plen, SCIF_PDATA_CONNECT, &pd)) {
			if (!scif_ring_size_ok(pd.ring_size) || !pd.src_port || !pd.dst_port)
				abort();
			tx.size = pd.ring_size;
		} else if (rejects() != before + 1) {
			abort();	/* a rejection is counted once */
		}
		data += 1 + plen;
		size -= 1 + plen;
	}
	while (size >= 1) {
		uint8_t kind = data[0];
		struct scif_wire_msg m;
		uint64_t v;

		data++;
		size--;
		if (kind & 1) {
			/* a count the peer wrote into our memory */
			if (size < 8)
				break;
			memcpy(&v, data, 8);
			data += 8;
			size -= 8;
			if (kind & 2) {
				if (scif_ring_prod_ok(&rx, v)) {
					rx.prod = v;
					/* we consume what it says is there, never more than the ring */
					if (scif_ring_used(&rx) > rx.size)
						abort();
					rx.cons += scif_ring_used(&rx) / 2;
				}
			} else {
				tx.prod += kind >> 4;	/* we produce a little */
				if (scif_ring_space(&tx) > tx.size)
					abort();
				if (scif_ring_cons_ok(&tx, v)) {
					tx.cons = v;
					if (tx.cons > tx.prod)
						abort();
				}
			}
			continue;
		}
		/* a control message, of a length the peer chose */
		{
			size_t len = kind >> 1 < 70 ? kind >> 1 : SCIF_WIRE_MSG_LEN;

			if (len > size)
				len = size;
			if (scif_wire_parse(data, len, &m)) {
				data += len;
				size -= len;
				continue;
			}
			data += len;
			size -= len;
		}
		switch (m.op) {
		case SCIF_OP_REGISTER: {
			struct scif_win w = { .off = m.arg[0], .len = m.arg[1], .addr = m.arg[2],
					      .key = (uint32_t)m.arg[3], .prot = (uint32_t)m.arg[4] };

			scif_wintab_insert(&rwin, &w);
			break;
		}
		case SCIF_OP_UNREGISTER: {
			size_t first, count;

			if (!scif_wintab_whole(&rwin, m.arg[0], m.arg[1], &first, &count))
				scif_wintab_remove(&rwin, first, count);
			break;
		}
		case SCIF_OP_SIGNAL:
			/* the lookups a signal makes */
			if (m.arg[4] & SCIF_SIGNAL_REMOTE)
				scif_wintab_resolve(&rwin, m.arg[2], 8, SCIF_PROT_WRITE, spans, 8);
			break;
		case SCIF_OP_MAP:
		case SCIF_OP_UNMAP:
			scif_wintab_resolve(&rwin, m.arg[0], m.arg[1], SCIF_PROT_READ, spans, 8);
			break;
		default:
			break;
		}
		check_table(&rwin);
	}
	scif_wintab_free(&rwin);
	return 0;
}
