/* SPDX-License-Identifier: MIT */
/*
 * InfiniBand Communication Management MADs on the wire: the common MAD header and the CM
 * messages, one constant per field, and rdma_cm's IP header at the start of their private data.
 *
 * Sources:
 *   [IBTA]  InfiniBand Architecture Specification vol 1 rel 1.4: 13.4.3 "MAD header" (table 145),
 *           ch. 12 "Communication Management": REQ table 106 (12.6.5), MRA 107, REJ 108 (reasons
 *           table 109), REP 110, RTU 111, DREQ 112, DREP 113, LAP 115, APR 116, SIDR_REQ 119,
 *           SIDR_REP 120; attribute IDs table 104 (12.6.1).
 *   [c12]   Linux include/rdma/ibta_vol1_c12.h (the same tables as CM_FIELD*_LOC descriptors,
 *           with the ECE vendor id that reuses reserved bits), drivers/infiniband/core/cm.c.
 *   [cma]   Linux drivers/infiniband/core/cma.c: struct cma_hdr, CMA_VERSION, the port spaces.
 *
 * A MAD is 256 bytes, big-endian; CM message offsets in [IBTA] count from the end of the
 * 24-byte MAD header, the descriptors here count from the start of the MAD. They use the
 * encoding of cx4_prm_fld.h (byte offset of the big-endian dword, shift, width) and its
 * accessors: a MAD, like a PRM structure, is a table of big-endian dwords.
 *
 *	v = cx4_get(mad, IB_CM_REQ_LOCAL_QPN);	cx4_set64(mad, IB_CM_REQ_SERVICE_ID, sid);
 *
 * Byte arrays (GIDs, private data, ARI) are IB_CM_<MSG>_<FIELD>_OFF / _LEN.
 */
#ifndef IB_CM_MAD_H
#define IB_CM_MAD_H

#include "cx4_prm_fld.h"

#define IB_MAD_SIZE			256

/* ---- MAD common header ([IBTA] 13.4.3 table 145; Linux struct ib_mad_hdr) ------------------ */
#define IB_MAD_BASE_VERSION		CX4_FLD(0x00, 24, 8)
#define IB_MAD_MGMT_CLASS		CX4_FLD(0x00, 16, 8)
#define IB_MAD_CLASS_VERSION		CX4_FLD(0x00, 8, 8)
#define IB_MAD_METHOD			CX4_FLD(0x00, 0, 8)	/* bit 7: response */
#define IB_MAD_STATUS			CX4_FLD(0x04, 16, 16)
#define IB_MAD_CLASS_SPECIFIC		CX4_FLD(0x04, 0, 16)
#define IB_MAD_TID			CX4_FLD64(0x08)
#define IB_MAD_ATTR_ID			CX4_FLD(0x10, 16, 16)
#define IB_MAD_RESV			CX4_FLD(0x10, 0, 16)
#define IB_MAD_ATTR_MOD			CX4_FLD32(0x14)	/* CM: the ECE options ([c12]) */
#define IB_MAD_HDR_LEN			24

#define IB_MGMT_BASE_VERSION		1
#define IB_MGMT_CLASS_CM		0x07
#define IB_CM_CLASS_VERSION		2	/* IBTA 1.2 (Linux cm_msgs.h) */
#define IB_MGMT_METHOD_SEND		0x03

/* Attribute IDs ([IBTA] table 104) */
#define IB_CM_ATTR_REQ			0x0010
#define IB_CM_ATTR_MRA			0x0011
#define IB_CM_ATTR_REJ			0x0012
#define IB_CM_ATTR_REP			0x0013
#define IB_CM_ATTR_RTU			0x0014
#define IB_CM_ATTR_DREQ			0x0015
#define IB_CM_ATTR_DREP			0x0016
#define IB_CM_ATTR_SIDR_REQ		0x0017
#define IB_CM_ATTR_SIDR_REP		0x0018
#define IB_CM_ATTR_LAP			0x0019
#define IB_CM_ATTR_APR			0x001a

/* GSI: QP1, its well-known Q_Key ([IBTA] 13.4.6.1) and the default P_Key */
#define IB_GSI_QPN			1
#define IB_GSI_QKEY			0x80010000u
#define IB_DEFAULT_PKEY			0xffff

/* ---- REQ ([IBTA] table 106) ---------------------------------------------------------------- */
#define IB_CM_REQ_LOCAL_COMM_ID		CX4_FLD32(0x18)
#define IB_CM_REQ_VENDOR_ID		CX4_FLD(0x1c, 0, 24)	/* ECE, [c12]; reserved in IBTA */
#define IB_CM_REQ_SERVICE_ID		CX4_FLD64(0x20)
#define IB_CM_REQ_LOCAL_CA_GUID		CX4_FLD64(0x28)
#define IB_CM_REQ_LOCAL_Q_KEY		CX4_FLD32(0x34)
#define IB_CM_REQ_LOCAL_QPN		CX4_FLD(0x38, 8, 24)
#define IB_CM_REQ_RESPONDER_RESOURCES	CX4_FLD(0x38, 0, 8)
#define IB_CM_REQ_LOCAL_EECN		CX4_FLD(0x3c, 8, 24)
#define IB_CM_REQ_INITIATOR_DEPTH	CX4_FLD(0x3c, 0, 8)
#define IB_CM_REQ_REMOTE_EECN		CX4_FLD(0x40, 8, 24)
#define IB_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT CX4_FLD(0x40, 3, 5)
#define IB_CM_REQ_TRANSPORT_SERVICE_TYPE CX4_FLD(0x40, 1, 2)	/* 0 RC, 1 UC, 3 XRC */
#define IB_CM_REQ_END_TO_END_FLOW_CONTROL CX4_FLD(0x40, 0, 1)
#define IB_CM_REQ_STARTING_PSN		CX4_FLD(0x44, 8, 24)
#define IB_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT CX4_FLD(0x44, 3, 5)
#define IB_CM_REQ_RETRY_COUNT		CX4_FLD(0x44, 0, 3)
#define IB_CM_REQ_PARTITION_KEY		CX4_FLD(0x48, 16, 16)
#define IB_CM_REQ_PATH_PACKET_PAYLOAD_MTU CX4_FLD(0x48, 12, 4)
#define IB_CM_REQ_RDC_EXISTS		CX4_FLD(0x48, 11, 1)
#define IB_CM_REQ_RNR_RETRY_COUNT	CX4_FLD(0x48, 8, 3)
#define IB_CM_REQ_MAX_CM_RETRIES	CX4_FLD(0x48, 4, 4)
#define IB_CM_REQ_SRQ			CX4_FLD(0x48, 3, 1)
#define IB_CM_REQ_EXTENDED_TRANSPORT_TYPE CX4_FLD(0x48, 0, 3)
#define IB_CM_REQ_PRIMARY_LOCAL_PORT_LID CX4_FLD(0x4c, 16, 16)
#define IB_CM_REQ_PRIMARY_REMOTE_PORT_LID CX4_FLD(0x4c, 0, 16)
#define IB_CM_REQ_PRIMARY_LOCAL_PORT_GID_OFF 0x50
#define IB_CM_REQ_PRIMARY_REMOTE_PORT_GID_OFF 0x60
#define IB_CM_REQ_PRIMARY_FLOW_LABEL	CX4_FLD(0x70, 12, 20)
#define IB_CM_REQ_PRIMARY_PACKET_RATE	CX4_FLD(0x70, 0, 6)
#define IB_CM_REQ_PRIMARY_TRAFFIC_CLASS	CX4_FLD(0x74, 24, 8)
#define IB_CM_REQ_PRIMARY_HOP_LIMIT	CX4_FLD(0x74, 16, 8)
#define IB_CM_REQ_PRIMARY_SL		CX4_FLD(0x74, 12, 4)
#define IB_CM_REQ_PRIMARY_SUBNET_LOCAL	CX4_FLD(0x74, 11, 1)
#define IB_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT CX4_FLD(0x74, 3, 5)
#define IB_CM_REQ_ALTERNATE_LOCAL_PORT_LID CX4_FLD(0x78, 16, 16)
#define IB_CM_REQ_ALTERNATE_REMOTE_PORT_LID CX4_FLD(0x78, 0, 16)
#define IB_CM_REQ_ALTERNATE_LOCAL_PORT_GID_OFF 0x7c
#define IB_CM_REQ_ALTERNATE_REMOTE_PORT_GID_OFF 0x8c
#define IB_CM_REQ_ALTERNATE_FLOW_LABEL	CX4_FLD(0x9c, 12, 20)
#define IB_CM_REQ_ALTERNATE_PACKET_RATE	CX4_FLD(0x9c, 0, 6)
#define IB_CM_REQ_ALTERNATE_TRAFFIC_CLASS CX4_FLD(0xa0, 24, 8)
#define IB_CM_REQ_ALTERNATE_HOP_LIMIT	CX4_FLD(0xa0, 16, 8)
#define IB_CM_REQ_ALTERNATE_SL		CX4_FLD(0xa0, 12, 4)
#define IB_CM_REQ_ALTERNATE_SUBNET_LOCAL CX4_FLD(0xa0, 11, 1)
#define IB_CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT CX4_FLD(0xa0, 3, 5)
#define IB_CM_REQ_SAP_SUPPORTED		CX4_FLD(0xa0, 2, 1)
#define IB_CM_REQ_PRIVATE_DATA_OFF	0xa4
#define IB_CM_REQ_PRIVATE_DATA_LEN	92

/* ---- MRA ([IBTA] table 107) ---------------------------------------------------------------- */
#define IB_CM_MRA_LOCAL_COMM_ID		CX4_FLD32(0x18)
#define IB_CM_MRA_REMOTE_COMM_ID	CX4_FLD32(0x1c)
#define IB_CM_MRA_MESSAGE_MRAED		CX4_FLD(0x20, 30, 2)	/* enum ib_cm_msg_response */
#define IB_CM_MRA_SERVICE_TIMEOUT	CX4_FLD(0x20, 19, 5)
#define IB_CM_MRA_PRIVATE_DATA_OFF	0x22
#define IB_CM_MRA_PRIVATE_DATA_LEN	222

/* ---- REJ ([IBTA] table 108) ---------------------------------------------------------------- */
#define IB_CM_REJ_LOCAL_COMM_ID		CX4_FLD32(0x18)
#define IB_CM_REJ_REMOTE_COMM_ID	CX4_FLD32(0x1c)
#define IB_CM_REJ_MESSAGE_REJECTED	CX4_FLD(0x20, 30, 2)	/* enum ib_cm_msg_response */
#define IB_CM_REJ_REJECTED_INFO_LENGTH	CX4_FLD(0x20, 17, 7)
#define IB_CM_REJ_REASON		CX4_FLD(0x20, 0, 16)	/* enum ib_cm_rej_reason */
#define IB_CM_REJ_ARI_OFF		0x24
#define IB_CM_REJ_ARI_LEN		72
#define IB_CM_REJ_PRIVATE_DATA_OFF	0x6c
#define IB_CM_REJ_PRIVATE_DATA_LEN	148

/* ---- REP ([IBTA] table 110) ---------------------------------------------------------------- */
#define IB_CM_REP_LOCAL_COMM_ID		CX4_FLD32(0x18)
#define IB_CM_REP_REMOTE_COMM_ID	CX4_FLD32(0x1c)
#define IB_CM_REP_LOCAL_Q_KEY		CX4_FLD32(0x20)
#define IB_CM_REP_LOCAL_QPN		CX4_FLD(0x24, 8, 24)
#define IB_CM_REP_VENDOR_ID_H		CX4_FLD(0x24, 0, 8)	/* ECE, [c12] */
#define IB_CM_REP_LOCAL_EE_CONTEXT_NUMBER CX4_FLD(0x28, 8, 24)
#define IB_CM_REP_VENDOR_ID_M		CX4_FLD(0x28, 0, 8)
#define IB_CM_REP_STARTING_PSN		CX4_FLD(0x2c, 8, 24)
#define IB_CM_REP_VENDOR_ID_L		CX4_FLD(0x2c, 0, 8)
#define IB_CM_REP_RESPONDER_RESOURCES	CX4_FLD(0x30, 24, 8)
#define IB_CM_REP_INITIATOR_DEPTH	CX4_FLD(0x30, 16, 8)
#define IB_CM_REP_TARGET_ACK_DELAY	CX4_FLD(0x30, 11, 5)
#define IB_CM_REP_FAILOVER_ACCEPTED	CX4_FLD(0x30, 9, 2)
#define IB_CM_REP_END_TO_END_FLOW_CONTROL CX4_FLD(0x30, 8, 1)
#define IB_CM_REP_RNR_RETRY_COUNT	CX4_FLD(0x30, 5, 3)
#define IB_CM_REP_SRQ			CX4_FLD(0x30, 4, 1)
#define IB_CM_REP_LOCAL_CA_GUID		CX4_FLD64(0x34)
#define IB_CM_REP_PRIVATE_DATA_OFF	0x3c
#define IB_CM_REP_PRIVATE_DATA_LEN	196

/* ---- RTU, DREQ, DREP ([IBTA] tables 111-113) ---------------------------------------------- */
#define IB_CM_RTU_LOCAL_COMM_ID		CX4_FLD32(0x18)
#define IB_CM_RTU_REMOTE_COMM_ID	CX4_FLD32(0x1c)
#define IB_CM_RTU_PRIVATE_DATA_OFF	0x20
#define IB_CM_RTU_PRIVATE_DATA_LEN	224

#define IB_CM_DREQ_LOCAL_COMM_ID	CX4_FLD32(0x18)
#define IB_CM_DREQ_REMOTE_COMM_ID	CX4_FLD32(0x1c)
#define IB_CM_DREQ_REMOTE_QPN_EECN	CX4_FLD(0x20, 8, 24)
#define IB_CM_DREQ_PRIVATE_DATA_OFF	0x24
#define IB_CM_DREQ_PRIVATE_DATA_LEN	220

#define IB_CM_DREP_LOCAL_COMM_ID	CX4_FLD32(0x18)
#define IB_CM_DREP_REMOTE_COMM_ID	CX4_FLD32(0x1c)
#define IB_CM_DREP_PRIVATE_DATA_OFF	0x20
#define IB_CM_DREP_PRIVATE_DATA_LEN	224

/* ---- LAP, APR ([IBTA] tables 115, 116): only their ids are read, to reject them ---------- */
#define IB_CM_LAP_LOCAL_COMM_ID		CX4_FLD32(0x18)
#define IB_CM_LAP_REMOTE_COMM_ID	CX4_FLD32(0x1c)
#define IB_CM_APR_LOCAL_COMM_ID		CX4_FLD32(0x18)
#define IB_CM_APR_REMOTE_COMM_ID	CX4_FLD32(0x1c)
#define IB_CM_APR_INFO_LENGTH		CX4_FLD(0x20, 24, 8)
#define IB_CM_APR_AR_STATUS		CX4_FLD(0x20, 16, 8)	/* enum ib_cm_apr_status */
#define IB_CM_APR_PRIVATE_DATA_OFF	0x6c
#define IB_CM_APR_PRIVATE_DATA_LEN	148
#define IB_CM_APR_UNSUPPORTED		2	/* [IBTA] table 117: "unsupported request" */

/* ---- SIDR_REQ, SIDR_REP ([IBTA] tables 119, 120) ------------------------------------------- */
#define IB_CM_SIDR_REQ_REQUEST_ID	CX4_FLD32(0x18)
#define IB_CM_SIDR_REQ_PARTITION_KEY	CX4_FLD(0x1c, 16, 16)
#define IB_CM_SIDR_REQ_SERVICE_ID	CX4_FLD64(0x20)
#define IB_CM_SIDR_REQ_PRIVATE_DATA_OFF	0x28
#define IB_CM_SIDR_REQ_PRIVATE_DATA_LEN	216

#define IB_CM_SIDR_REP_REQUEST_ID	CX4_FLD32(0x18)
#define IB_CM_SIDR_REP_STATUS		CX4_FLD(0x1c, 24, 8)	/* enum ib_cm_sidr_status */
#define IB_CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH CX4_FLD(0x1c, 16, 8)
#define IB_CM_SIDR_REP_VENDOR_ID_H	CX4_FLD(0x1c, 0, 16)	/* ECE, [c12] */
#define IB_CM_SIDR_REP_QPN		CX4_FLD(0x20, 8, 24)
#define IB_CM_SIDR_REP_VENDOR_ID_L	CX4_FLD(0x20, 0, 8)
#define IB_CM_SIDR_REP_SERVICE_ID	CX4_FLD64(0x24)
#define IB_CM_SIDR_REP_Q_KEY		CX4_FLD32(0x2c)
#define IB_CM_SIDR_REP_ADDITIONAL_INFORMATION_OFF 0x30
#define IB_CM_SIDR_REP_ADDITIONAL_INFORMATION_LEN 72
#define IB_CM_SIDR_REP_PRIVATE_DATA_OFF	0x78
#define IB_CM_SIDR_REP_PRIVATE_DATA_LEN	136

/* MRAed / REJected message ([IBTA] 12.6.6 / 12.6.7; Linux enum cm_msg_response) */
enum ib_cm_msg_response {
	IB_CM_MSG_RESPONSE_REQ = 0,
	IB_CM_MSG_RESPONSE_REP = 1,
	IB_CM_MSG_RESPONSE_OTHER = 2,
};

/* REJ reasons ([IBTA] table 109; Linux enum ib_cm_rej_reason) */
enum ib_cm_rej_reason {
	IB_CM_REJ_NO_QP = 1,
	IB_CM_REJ_NO_EEC = 2,
	IB_CM_REJ_NO_RESOURCES = 3,
	IB_CM_REJ_TIMEOUT = 4,
	IB_CM_REJ_UNSUPPORTED = 5,
	IB_CM_REJ_INVALID_COMM_ID = 6,
	IB_CM_REJ_INVALID_COMM_INSTANCE = 7,
	IB_CM_REJ_INVALID_SERVICE_ID = 8,
	IB_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	IB_CM_REJ_STALE_CONN = 10,
	IB_CM_REJ_RDC_NOT_EXIST = 11,
	IB_CM_REJ_INVALID_GID = 12,
	IB_CM_REJ_INVALID_LID = 13,
	IB_CM_REJ_INVALID_SL = 14,
	IB_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	IB_CM_REJ_INVALID_HOP_LIMIT = 16,
	IB_CM_REJ_INVALID_PACKET_RATE = 17,
	IB_CM_REJ_INVALID_ALT_GID = 18,
	IB_CM_REJ_INVALID_ALT_LID = 19,
	IB_CM_REJ_INVALID_ALT_SL = 20,
	IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	IB_CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	IB_CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	IB_CM_REJ_PORT_CM_REDIRECT = 24,
	IB_CM_REJ_PORT_REDIRECT = 25,
	IB_CM_REJ_INVALID_MTU = 26,
	IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	IB_CM_REJ_CONSUMER_DEFINED = 28,
	IB_CM_REJ_INVALID_RNR_RETRY = 29,
	IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	IB_CM_REJ_INVALID_CLASS_VERSION = 31,
	IB_CM_REJ_INVALID_FLOW_LABEL = 32,
	IB_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/* SIDR_REP status ([IBTA] table 121; Linux enum ib_cm_sidr_status) */
enum ib_cm_sidr_status {
	IB_SIDR_SUCCESS = 0,
	IB_SIDR_UNSUPPORTED = 1,
	IB_SIDR_REJECT = 2,
	IB_SIDR_NO_QP = 3,
	IB_SIDR_REDIRECT = 4,
	IB_SIDR_UNSUPPORTED_VERSION = 5,
};

/*
 * rdma_cm's IP header: the first 36 bytes of REQ and SIDR_REQ private data for the IP port
 * spaces ([cma] struct cma_hdr, CMA_VERSION 0x00). Offsets from the start of the private data.
 * IPv4 addresses sit in the last 4 bytes of their 16 (union cma_ip_addr).
 */
#define IB_CMA_HDR_CMA_VERSION		CX4_FLD(0x00, 24, 8)
#define IB_CMA_HDR_IP_VERSION		CX4_FLD(0x00, 20, 4)	/* 4 or 6 */
#define IB_CMA_HDR_PORT			CX4_FLD(0x00, 0, 16)	/* the active side's port */
#define IB_CMA_HDR_SRC_ADDR_OFF		0x04
#define IB_CMA_HDR_DST_ADDR_OFF		0x14
#define IB_CMA_HDR_ADDR_LEN		16
#define IB_CMA_HDR_LEN			36
#define IB_CMA_VERSION			0x00

/*
 * rdma_cm port spaces: a service ID is ps << 16 | port ([cma] rdma_get_service_id();
 * <rdma/rdma_cma.h> RDMA_IB_IP_PS_*), AF_IB ids give theirs whole.
 */
#define IB_CMA_PS_MASK			0xffffffffffff0000ull
#define IB_CMA_SERVICE_ID(ps, port)	(((uint64_t)(ps) << 16) | (uint16_t)(port))

#endif /* IB_CM_MAD_H */
