// SPDX-License-Identifier: MIT
/*
 * Not yet implemented parts of the model (work in progress on branch cx4-model): the memory
 * key, QP and SRQ commands answer "bad operation" (they are absent from the command tables)
 * and the transport does nothing. Replaced piece by piece by mkey.c, qp.c, srq.c, req.c,
 * comp.c, resp.c.
 */
#include "model.h"

const struct mcmd_desc mcmd_mkey[] = { { 0 } };
const struct mcmd_desc mcmd_qp[] = { { 0 } };
const struct mcmd_desc mcmd_srq[] = { { 0 } };


int mkey_tables_init(struct mdev *d)
{
	return idtab_init(&d->mkeys, 2, 1u << 10);
}

int qp_tables_init(struct mdev *d)
{
	return idtab_init(&d->qps, 0x100, 1u << 10);
}

int srq_tables_init(struct mdev *d)
{
	return idtab_init(&d->srqs, 1, 1u << 10);
}

struct mqp *qp_get(struct mdev *d, uint32_t qpn)
{
	return idtab_get(&d->qps, qpn);
}

void qp_destroy_all(struct mdev *d) { (void)d; }
void srq_destroy_all(struct mdev *d) { (void)d; }
void mkey_destroy_all(struct mdev *d) { (void)d; }
void qp_to_error(struct mdev *d, struct mqp *qp, uint8_t event) { (void)d; (void)qp; (void)event; }
void qp_sq_doorbell(struct mdev *d, uint32_t uar, const uint8_t *val8) { (void)d; (void)uar; (void)val8; }
void qp_tx_fault(struct mdev *d, struct mqp *qp) { (void)d; (void)qp; }
int req_run(struct mdev *d, struct mqp *qp, unsigned int budget) { (void)d; (void)qp; (void)budget; return 0; }
int resp_read_run(struct mdev *d, struct mqp *qp, unsigned int budget) { (void)d; (void)qp; (void)budget; return 0; }
int resp_send_acks(struct mdev *d) { (void)d; return 0; }
void resp_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p) { (void)d; (void)qp; (void)p; }
void comp_rx(struct mdev *d, struct mqp *qp, const struct roce_pkt *p) { (void)d; (void)qp; (void)p; }
