// SPDX-License-Identifier: MIT
/*
 * mad_layout_test: every field descriptor of kernel-abi/ib_cm_mad.h against the location the
 * IBTA tables give it (vol 1 ch. 12, tables 106-120; 13.4.3 table 145 for the MAD header), in
 * the tables' own notation: Byte[Bit] from the start of the message (after the 24-byte MAD
 * header), bit 0 the most significant, and a width in bits. Each descriptor must name exactly
 * those bits, and cx4_set of all ones must set exactly those bits and nothing else.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ib_cm_mad.h"

struct loc {
	const char *name;
	cx4_fld_t f;
	int byte, bit, width;	/* IBTA: message byte, bit (0 = MSB), width in bits */
	int hdr;		/* 1: a MAD header field, byte counts from the MAD's start */
};

#define M(n, byte, bit, width) { #n, n, byte, bit, width, 0 }
#define H(n, byte, bit, width) { #n, n, byte, bit, width, 1 }

static const struct loc locs[] = {
	H(IB_MAD_BASE_VERSION, 0, 0, 8), H(IB_MAD_MGMT_CLASS, 1, 0, 8),
	H(IB_MAD_CLASS_VERSION, 2, 0, 8), H(IB_MAD_METHOD, 3, 0, 8), H(IB_MAD_STATUS, 4, 0, 16),
	H(IB_MAD_CLASS_SPECIFIC, 6, 0, 16), H(IB_MAD_TID, 8, 0, 64), H(IB_MAD_ATTR_ID, 16, 0, 16),
	H(IB_MAD_ATTR_MOD, 20, 0, 32),
	/* REQ, table 106 */
	M(IB_CM_REQ_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_REQ_VENDOR_ID, 5, 0, 24),
	M(IB_CM_REQ_SERVICE_ID, 8, 0, 64), M(IB_CM_REQ_LOCAL_CA_GUID, 16, 0, 64),
	M(IB_CM_REQ_LOCAL_Q_KEY, 28, 0, 32), M(IB_CM_REQ_LOCAL_QPN, 32, 0, 24),
	M(IB_CM_REQ_RESPONDER_RESOURCES, 35, 0, 8), M(IB_CM_REQ_LOCAL_EECN, 36, 0, 24),
	M(IB_CM_REQ_INITIATOR_DEPTH, 39, 0, 8), M(IB_CM_REQ_REMOTE_EECN, 40, 0, 24),
	M(IB_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, 43, 0, 5),
	M(IB_CM_REQ_TRANSPORT_SERVICE_TYPE, 43, 5, 2), M(IB_CM_REQ_END_TO_END_FLOW_CONTROL, 43, 7, 1),
	M(IB_CM_REQ_STARTING_PSN, 44, 0, 24), M(IB_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, 47, 0, 5),
	M(IB_CM_REQ_RETRY_COUNT, 47, 5, 3), M(IB_CM_REQ_PARTITION_KEY, 48, 0, 16),
	M(IB_CM_REQ_PATH_PACKET_PAYLOAD_MTU, 50, 0, 4), M(IB_CM_REQ_RDC_EXISTS, 50, 4, 1),
	M(IB_CM_REQ_RNR_RETRY_COUNT, 50, 5, 3), M(IB_CM_REQ_MAX_CM_RETRIES, 51, 0, 4),
	M(IB_CM_REQ_SRQ, 51, 4, 1), M(IB_CM_REQ_EXTENDED_TRANSPORT_TYPE, 51, 5, 3),
	M(IB_CM_REQ_PRIMARY_LOCAL_PORT_LID, 52, 0, 16), M(IB_CM_REQ_PRIMARY_REMOTE_PORT_LID, 54, 0, 16),
	M(IB_CM_REQ_PRIMARY_FLOW_LABEL, 88, 0, 20), M(IB_CM_REQ_PRIMARY_PACKET_RATE, 91, 2, 6),
	M(IB_CM_REQ_PRIMARY_TRAFFIC_CLASS, 92, 0, 8), M(IB_CM_REQ_PRIMARY_HOP_LIMIT, 93, 0, 8),
	M(IB_CM_REQ_PRIMARY_SL, 94, 0, 4), M(IB_CM_REQ_PRIMARY_SUBNET_LOCAL, 94, 4, 1),
	M(IB_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, 95, 0, 5),
	M(IB_CM_REQ_ALTERNATE_LOCAL_PORT_LID, 96, 0, 16),
	M(IB_CM_REQ_ALTERNATE_REMOTE_PORT_LID, 98, 0, 16),
	M(IB_CM_REQ_ALTERNATE_FLOW_LABEL, 132, 0, 20), M(IB_CM_REQ_ALTERNATE_PACKET_RATE, 135, 2, 6),
	M(IB_CM_REQ_ALTERNATE_TRAFFIC_CLASS, 136, 0, 8), M(IB_CM_REQ_ALTERNATE_HOP_LIMIT, 137, 0, 8),
	M(IB_CM_REQ_ALTERNATE_SL, 138, 0, 4), M(IB_CM_REQ_ALTERNATE_SUBNET_LOCAL, 138, 4, 1),
	M(IB_CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, 139, 0, 5), M(IB_CM_REQ_SAP_SUPPORTED, 139, 5, 1),
	/* MRA 107, REJ 108 */
	M(IB_CM_MRA_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_MRA_REMOTE_COMM_ID, 4, 0, 32),
	M(IB_CM_MRA_MESSAGE_MRAED, 8, 0, 2), M(IB_CM_MRA_SERVICE_TIMEOUT, 9, 0, 5),
	M(IB_CM_REJ_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_REJ_REMOTE_COMM_ID, 4, 0, 32),
	M(IB_CM_REJ_MESSAGE_REJECTED, 8, 0, 2), M(IB_CM_REJ_REJECTED_INFO_LENGTH, 9, 0, 7),
	M(IB_CM_REJ_REASON, 10, 0, 16),
	/* REP 110 */
	M(IB_CM_REP_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_REP_REMOTE_COMM_ID, 4, 0, 32),
	M(IB_CM_REP_LOCAL_Q_KEY, 8, 0, 32), M(IB_CM_REP_LOCAL_QPN, 12, 0, 24),
	M(IB_CM_REP_VENDOR_ID_H, 15, 0, 8), M(IB_CM_REP_LOCAL_EE_CONTEXT_NUMBER, 16, 0, 24),
	M(IB_CM_REP_VENDOR_ID_M, 19, 0, 8), M(IB_CM_REP_STARTING_PSN, 20, 0, 24),
	M(IB_CM_REP_VENDOR_ID_L, 23, 0, 8), M(IB_CM_REP_RESPONDER_RESOURCES, 24, 0, 8),
	M(IB_CM_REP_INITIATOR_DEPTH, 25, 0, 8), M(IB_CM_REP_TARGET_ACK_DELAY, 26, 0, 5),
	M(IB_CM_REP_FAILOVER_ACCEPTED, 26, 5, 2), M(IB_CM_REP_END_TO_END_FLOW_CONTROL, 26, 7, 1),
	M(IB_CM_REP_RNR_RETRY_COUNT, 27, 0, 3), M(IB_CM_REP_SRQ, 27, 3, 1),
	M(IB_CM_REP_LOCAL_CA_GUID, 28, 0, 64),
	/* RTU 111, DREQ 112, DREP 113, LAP 115, APR 116 */
	M(IB_CM_RTU_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_RTU_REMOTE_COMM_ID, 4, 0, 32),
	M(IB_CM_DREQ_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_DREQ_REMOTE_COMM_ID, 4, 0, 32),
	M(IB_CM_DREQ_REMOTE_QPN_EECN, 8, 0, 24),
	M(IB_CM_DREP_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_DREP_REMOTE_COMM_ID, 4, 0, 32),
	M(IB_CM_LAP_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_LAP_REMOTE_COMM_ID, 4, 0, 32),
	M(IB_CM_APR_LOCAL_COMM_ID, 0, 0, 32), M(IB_CM_APR_REMOTE_COMM_ID, 4, 0, 32),
	M(IB_CM_APR_INFO_LENGTH, 8, 0, 8), M(IB_CM_APR_AR_STATUS, 9, 0, 8),
	/* SIDR_REQ 119, SIDR_REP 120 */
	M(IB_CM_SIDR_REQ_REQUEST_ID, 0, 0, 32), M(IB_CM_SIDR_REQ_PARTITION_KEY, 4, 0, 16),
	M(IB_CM_SIDR_REQ_SERVICE_ID, 8, 0, 64),
	M(IB_CM_SIDR_REP_REQUEST_ID, 0, 0, 32), M(IB_CM_SIDR_REP_STATUS, 4, 0, 8),
	M(IB_CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH, 5, 0, 8),
	M(IB_CM_SIDR_REP_VENDOR_ID_H, 6, 0, 16), M(IB_CM_SIDR_REP_QPN, 8, 0, 24),
	M(IB_CM_SIDR_REP_VENDOR_ID_L, 11, 0, 8), M(IB_CM_SIDR_REP_SERVICE_ID, 12, 0, 64),
	M(IB_CM_SIDR_REP_Q_KEY, 20, 0, 32),
};

/* Byte arrays: message offset in [IBTA] and the descriptor's absolute offset. */
struct arr {
	const char *name;
	unsigned int off, ibta;
};

#define A(n, ibta) { #n, n, ibta }

static const struct arr arrs[] = {
	A(IB_CM_REQ_PRIMARY_LOCAL_PORT_GID_OFF, 56), A(IB_CM_REQ_PRIMARY_REMOTE_PORT_GID_OFF, 72),
	A(IB_CM_REQ_ALTERNATE_LOCAL_PORT_GID_OFF, 100),
	A(IB_CM_REQ_ALTERNATE_REMOTE_PORT_GID_OFF, 116), A(IB_CM_REQ_PRIVATE_DATA_OFF, 140),
	A(IB_CM_MRA_PRIVATE_DATA_OFF, 10), A(IB_CM_REJ_ARI_OFF, 12), A(IB_CM_REJ_PRIVATE_DATA_OFF, 84),
	A(IB_CM_REP_PRIVATE_DATA_OFF, 36), A(IB_CM_RTU_PRIVATE_DATA_OFF, 8),
	A(IB_CM_DREQ_PRIVATE_DATA_OFF, 12), A(IB_CM_DREP_PRIVATE_DATA_OFF, 8),
	A(IB_CM_APR_PRIVATE_DATA_OFF, 84), A(IB_CM_SIDR_REQ_PRIVATE_DATA_OFF, 16),
	A(IB_CM_SIDR_REP_ADDITIONAL_INFORMATION_OFF, 24), A(IB_CM_SIDR_REP_PRIVATE_DATA_OFF, 96),
};

static int bit_is_set(const uint8_t *m, int pos)
{
	return (m[pos / 8] >> (7 - pos % 8)) & 1;
}

int main(void)
{
	int bad = 0, n = 0;

	for (size_t i = 0; i < sizeof(locs) / sizeof(locs[0]); i++) {
		const struct loc *l = &locs[i];
		int start = (l->hdr ? 0 : IB_MAD_HDR_LEN * 8) + l->byte * 8 + l->bit;
		int w = (int)CX4_FLD_WIDTH(l->f), ours;
		uint8_t m[IB_MAD_SIZE] = { 0 };

		ours = (int)CX4_FLD_OFF(l->f) * 8 +
		       (w == 64 ? 0 : 32 - (int)CX4_FLD_SHIFT(l->f) - w);
		if (!CX4_FLD_VALID(l->f) || w != l->width || ours != start) {
			printf("FAIL %s: bits %d+%d, IBTA says %d+%d\n", l->name, ours, w, start,
			       l->width);
			bad++;
			continue;
		}
		if (w == 64)
			cx4_set64(m, l->f, UINT64_MAX);
		else
			cx4_set(m, l->f, (uint32_t)CX4_FLD_MAX(l->f));
		for (int b = 0; b < IB_MAD_SIZE * 8; b++)
			if (bit_is_set(m, b) != (b >= start && b < start + l->width)) {
				printf("FAIL %s: setting it touches bit %d\n", l->name, b);
				bad++;
				break;
			}
		n++;
	}
	for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++) {
		if (arrs[i].off != IB_MAD_HDR_LEN + arrs[i].ibta) {
			printf("FAIL %s: offset %u, IBTA says %u\n", arrs[i].name, arrs[i].off,
			       IB_MAD_HDR_LEN + arrs[i].ibta);
			bad++;
		}
		n++;
	}
	/* private data runs to the end of the MAD */
	if (IB_CM_REQ_PRIVATE_DATA_OFF + IB_CM_REQ_PRIVATE_DATA_LEN != IB_MAD_SIZE ||
	    IB_CM_REP_PRIVATE_DATA_OFF + IB_CM_REP_PRIVATE_DATA_LEN != IB_MAD_SIZE ||
	    IB_CM_REJ_PRIVATE_DATA_OFF + IB_CM_REJ_PRIVATE_DATA_LEN != IB_MAD_SIZE ||
	    IB_CM_MRA_PRIVATE_DATA_OFF + IB_CM_MRA_PRIVATE_DATA_LEN != IB_MAD_SIZE ||
	    IB_CM_RTU_PRIVATE_DATA_OFF + IB_CM_RTU_PRIVATE_DATA_LEN != IB_MAD_SIZE ||
	    IB_CM_DREQ_PRIVATE_DATA_OFF + IB_CM_DREQ_PRIVATE_DATA_LEN != IB_MAD_SIZE ||
	    IB_CM_DREP_PRIVATE_DATA_OFF + IB_CM_DREP_PRIVATE_DATA_LEN != IB_MAD_SIZE ||
	    IB_CM_SIDR_REQ_PRIVATE_DATA_OFF + IB_CM_SIDR_REQ_PRIVATE_DATA_LEN != IB_MAD_SIZE ||
	    IB_CM_SIDR_REP_PRIVATE_DATA_OFF + IB_CM_SIDR_REP_PRIVATE_DATA_LEN != IB_MAD_SIZE) {
		printf("FAIL: a private data area does not end with the MAD\n");
		bad++;
	}
	printf("%s: %d fields and offsets checked, %d wrong\n", bad ? "FAIL" : "PASS", n, bad);
	return bad ? 1 : 0;
}
