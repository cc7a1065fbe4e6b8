/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-4 access registers (ACCESS_REGISTER command, register data at in/out offset 0x10):
 * register IDs and the port registers bridgeverbs needs: PAOS (admin/oper status), PTYS
 * (speed/protocol), PMTU (MTU) and HOST_ENDIANNESS.
 *
 * Sources: Linux include/linux/mlx5/driver.h enum MLX5_REG_*, [ifc] struct
 * mlx5_ifc_paos_reg_bits / ptys_reg_bits / pmtu_reg_bits (PRM "Port Registers" chapter), Linux
 * en/port.h enum mlx5e_link_mode, Linux port.h enum mlx5_port_status, rdma-core mlx5_vfio.h
 * struct mlx5_reg_host_endianness.  Register offsets are relative to the register data.
 */
#ifndef CX4_PRM_REG_H
#define CX4_PRM_REG_H

#include "cx4_prm_fld.h"

/* Register IDs (ACCESS_REG in 0x08[15:0]) */
#define CX4_REG_PCAP			0x5001	/* port capability mask */
#define CX4_REG_PMLP			0x5002	/* port module to local port */
#define CX4_REG_PMTU			0x5003
#define CX4_REG_PTYS			0x5004
#define CX4_REG_PAOS			0x5006
#define CX4_REG_PFCC			0x5007	/* flow control */
#define CX4_REG_PPCNT			0x5008	/* port counters */
#define CX4_REG_PUDE			0x5009
#define CX4_REG_PELC			0x500e
#define CX4_REG_PVLC			0x500f
#define CX4_REG_PMPE			0x5010
#define CX4_REG_PMAOS			0x5012
#define CX4_REG_PCAM			0x507f
#define CX4_REG_NODE_DESC		0x6001
#define CX4_REG_HOST_ENDIANNESS		0x7004	/* written by Linux and rdma-core at bring-up */
#define CX4_REG_MCIA			0x9014

/* ---- PAOS: port administrative and operational status, 0x10 bytes ------------------------ */
#define CX4_PAOS_SIZE			0x10
#define CX4_PAOS_SWID			CX4_FLD(0x00, 24, 8)
#define CX4_PAOS_LOCAL_PORT		CX4_FLD(0x00, 16, 8)	/* 1-based */
#define CX4_PAOS_ADMIN_STATUS		CX4_FLD(0x00, 8, 4)	/* CX4_PORT_STATUS_* */
#define CX4_PAOS_OPER_STATUS		CX4_FLD(0x00, 0, 4)	/* read-only */
#define CX4_PAOS_ASE			CX4_FLD(0x04, 31, 1)	/* admin state update enable */
#define CX4_PAOS_EE			CX4_FLD(0x04, 30, 1)	/* event update enable */
#define CX4_PAOS_E			CX4_FLD(0x04, 0, 2)	/* event generation */
#define CX4_PORT_STATUS_UP		1	/* Linux port.h MLX5_PORT_UP */
#define CX4_PORT_STATUS_DOWN		2	/* Linux port.h MLX5_PORT_DOWN */
#define CX4_PORT_STATUS_UP_ONCE		3	/* admin only (PRM; unverified here) */
#define CX4_PORT_STATUS_DOWN_BY_FAILURE	4	/* oper only (PRM; unverified here) */

/* ---- PTYS: port type and speed, 0x40 bytes ------------------------------------------------ */
#define CX4_PTYS_SIZE			0x40
#define CX4_PTYS_AN_DISABLE_ADMIN	CX4_FLD(0x00, 30, 1)
#define CX4_PTYS_AN_DISABLE_CAP		CX4_FLD(0x00, 29, 1)
#define CX4_PTYS_LOCAL_PORT		CX4_FLD(0x00, 16, 8)
#define CX4_PTYS_PROTO_MASK		CX4_FLD(0x00, 0, 3)	/* CX4_PTYS_PROTO_* */
#define CX4_PTYS_AN_STATUS		CX4_FLD(0x04, 28, 4)
#define CX4_PTYS_ETH_PROTO_CAPABILITY	CX4_FLD32(0x0c)		/* CX4_LINK_MODE_* bits */
#define CX4_PTYS_IB_LINK_WIDTH_CAPABILITY CX4_FLD(0x10, 16, 16)
#define CX4_PTYS_IB_PROTO_CAPABILITY	CX4_FLD(0x10, 0, 16)
#define CX4_PTYS_ETH_PROTO_ADMIN	CX4_FLD32(0x18)
#define CX4_PTYS_IB_LINK_WIDTH_ADMIN	CX4_FLD(0x1c, 16, 16)
#define CX4_PTYS_IB_PROTO_ADMIN		CX4_FLD(0x1c, 0, 16)
#define CX4_PTYS_ETH_PROTO_OPER		CX4_FLD32(0x24)
#define CX4_PTYS_IB_LINK_WIDTH_OPER	CX4_FLD(0x28, 16, 16)
#define CX4_PTYS_IB_PROTO_OPER		CX4_FLD(0x28, 0, 16)
#define CX4_PTYS_CONNECTOR_TYPE		CX4_FLD(0x2c, 0, 4)
#define CX4_PTYS_ETH_PROTO_LP_ADVERTISE	CX4_FLD32(0x30)
#define CX4_PTYS_PROTO_IB		(1u << 0)	/* Linux MLX5_PTYS_IB */
#define CX4_PTYS_PROTO_EN		(1u << 2)	/* Linux MLX5_PTYS_EN (Ethernet) */

/* Ethernet protocol bit numbers in eth_proto_* (Linux enum mlx5e_link_mode) */
#define CX4_LINK_MODE_1000BASE_CX_SGMII	0
#define CX4_LINK_MODE_1000BASE_KX	1
#define CX4_LINK_MODE_10GBASE_CX4	2
#define CX4_LINK_MODE_10GBASE_KX4	3
#define CX4_LINK_MODE_10GBASE_KR	4
#define CX4_LINK_MODE_20GBASE_KR2	5
#define CX4_LINK_MODE_40GBASE_CR4	6
#define CX4_LINK_MODE_40GBASE_KR4	7
#define CX4_LINK_MODE_56GBASE_R4	8
#define CX4_LINK_MODE_10GBASE_CR	12
#define CX4_LINK_MODE_10GBASE_SR	13
#define CX4_LINK_MODE_10GBASE_ER	14
#define CX4_LINK_MODE_40GBASE_SR4	15
#define CX4_LINK_MODE_40GBASE_LR4	16
#define CX4_LINK_MODE_50GBASE_SR2	18
#define CX4_LINK_MODE_100GBASE_CR4	20
#define CX4_LINK_MODE_100GBASE_SR4	21
#define CX4_LINK_MODE_100GBASE_KR4	22
#define CX4_LINK_MODE_100GBASE_LR4	23
#define CX4_LINK_MODE_100BASE_TX	24
#define CX4_LINK_MODE_1000BASE_T	25
#define CX4_LINK_MODE_10GBASE_T		26
#define CX4_LINK_MODE_25GBASE_CR	27
#define CX4_LINK_MODE_25GBASE_KR	28
#define CX4_LINK_MODE_25GBASE_SR	29
#define CX4_LINK_MODE_50GBASE_CR2	30
#define CX4_LINK_MODE_50GBASE_KR2	31

/* ---- PMTU: port MTU, 0x10 bytes ----------------------------------------------------------- */
/* MTU values are frame bytes incl. L2 header + FCS (Linux mlx5e: hw = sw_mtu + 22). */
#define CX4_PMTU_SIZE			0x10
#define CX4_PMTU_LOCAL_PORT		CX4_FLD(0x00, 16, 8)
#define CX4_PMTU_MAX_MTU		CX4_FLD(0x04, 16, 16)	/* read-only */
#define CX4_PMTU_ADMIN_MTU		CX4_FLD(0x08, 16, 16)
#define CX4_PMTU_OPER_MTU		CX4_FLD(0x0c, 16, 16)	/* read-only */

/* ---- HOST_ENDIANNESS, 0x10 bytes (rdma-core struct mlx5_reg_host_endianness) ------------- */
#define CX4_HOST_ENDIANNESS_SIZE	0x10
#define CX4_HOST_ENDIANNESS_HE		CX4_FLD(0x00, 24, 8)	/* byte 0: 0 LE, 0x80 BE host */
#define CX4_HOST_ENDIANNESS_LE		0x00
#define CX4_HOST_ENDIANNESS_BE		0x80

#endif /* CX4_PRM_REG_H */
