// SPDX-License-Identifier: MIT
/*
 * The backend behind the bus interface. The driver never looks past struct cx4_bus: it gets
 * BAR0, DMA mapping, reset and interrupt eventfds from whichever backend the configuration
 * names. The ConnectX-4 model is the default; a VFIO backend plugs in the same way.
 *
 * Configuration keys of a cx4 device section used here: backend (model, vfio), profile
 * (cx4, cx4lx: which card the model presents), udp_port, port_mtu, pcap (capture file),
 * spin_us (model engine polling), rt_priority (SCHED_FIFO engine), cable (a label: two model
 * ports naming the same one are joined by a direct-attach cable, <rundir>/cable-<label>),
 * pci (VFIO).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cx4d.h"
#include "cx4d_bus.h"
#include "bv_paths.h"

#if __has_include("cx4_model.h")
#include "cx4_model.h"
#define HAVE_MODEL 1
#endif
#if __has_include("cx4_vfio.h")
#include "cx4_vfio.h"
#define HAVE_VFIO 1
#endif

size_t cx4d_bus_status(struct cx4d *d, char *buf, size_t len)
{
#ifdef HAVE_MODEL
	struct cx4_model_stats st;
	int n;

	if (!d->bus || cx4_model_get_stats(d->bus, &st))
		return 0;
	n = snprintf(buf, len,
		     "  model: tx %llu packets (cable %llu), rx %llu (cable %llu), dropped %llu "
		     "(ICRC %llu), retransmitted %llu, engine wake-ups %llu, driver wakes %llu\n",
		     (unsigned long long)st.tx_pkts, (unsigned long long)st.cable_tx_pkts,
		     (unsigned long long)st.rx_pkts, (unsigned long long)st.cable_rx_pkts,
		     (unsigned long long)(st.rx_drop_icrc + st.rx_drop_qp + st.tx_dropped),
		     (unsigned long long)st.rx_drop_icrc, (unsigned long long)st.retransmits,
		     (unsigned long long)st.wakeups, (unsigned long long)st.waiter_wakes);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
#else
	(void)d;
	(void)buf;
	(void)len;
	return 0;
#endif
}

int cx4d_bus_open(struct cx4d *d)
{
	const char *backend = bv_conf_get(d->conf, "backend", "model");

	if (!strcmp(backend, "model")) {
#ifdef HAVE_MODEL
		const char *prof = bv_conf_get(d->conf, "profile", "cx4");
		const char *cable = bv_conf_get(d->conf, "cable", NULL);
		char cable_dir[BV_PATH_MAX];
		struct cx4_model_config mc = {
		    .name = d->conf->name,
		    .profile = !strcmp(prof, "cx4lx") ? CX4_MODEL_CX4LX : CX4_MODEL_CX4,
		    .ipv4 = d->conf->ip.s_addr,
		    .netdev = d->conf->netdev,
		    .udp_port = (uint16_t)bv_conf_get_long(d->conf, "udp_port", 0),
		    .mtu = (uint32_t)bv_conf_get_long(d->conf, "port_mtu", 0),
		    .pcap_path = bv_conf_get(d->conf, "pcap", NULL),
		    .log = stderr,
		    .spin_us = (unsigned int)bv_conf_get_long(d->conf, "spin_us", 0),
		    .rt_priority = (unsigned int)bv_conf_get_long(d->conf, "rt_priority", 0),
		};
		int err;

		if (cable && (!*cable || strchr(cable, '/') || strlen(cable) > 32 ||
			      bv_run_path(cable_dir, sizeof(cable_dir), "cable-", cable) < 0)) {
			cx4d_log(d, "bad cable label '%s' (1 to 32 characters, no '/')", cable);
			return EINVAL;
		}
		mc.cable_dir = cable ? cable_dir : NULL;
		if (strcmp(prof, "cx4") && strcmp(prof, "cx4lx")) {
			cx4d_log(d, "unknown model profile '%s' (cx4, cx4lx)", prof);
			return EINVAL;
		}
		memcpy(mc.mac, d->conf->mac, 6);
		err = cx4_model_open(&mc, &d->bus);
		if (err) {
			cx4d_log(d, "cannot start the ConnectX-4 model: %s", strerror(-err));
			return -err;
		}
		return 0;
#else
		cx4d_log(d, "this cx4d was built without the ConnectX-4 model");
		return ENODEV;
#endif
	}
	if (!strcmp(backend, "vfio")) {
#ifdef HAVE_VFIO
		int err = cx4_vfio_open(bv_conf_get(d->conf, "pci", ""), &d->bus);

		if (err) {
			cx4d_log(d, "cannot open the VFIO device %s: %s",
				 bv_conf_get(d->conf, "pci", "(no pci = in the configuration)"),
				 strerror(err < 0 ? -err : err));
			return err < 0 ? -err : err;
		}
		return 0;
#else
		cx4d_log(d, "this cx4d was built without the VFIO backend");
		return ENODEV;
#endif
	}
	cx4d_log(d, "unknown backend '%s' (model, vfio)", backend);
	return EINVAL;
}

#ifdef HAVE_MODEL
/*
 * Test control of the model, from outside the PCI function (cx4_model.h: "for tests and
 * tools only"): SIGUSR1 pulls the port's cable, SIGUSR2 plugs it back. The driver sees only
 * what it would see on a card: a PORT_CHANGE event and the port state registers.
 *
 * SIGRTMIN takes the function down as a fault would: the NIC interface is set to "disabled"
 * (init segment 0x14), after which the device has forgotten every object and answers no
 * command. Nothing is told to the driver: its health sensor has to find it (health.c) and
 * the clients then get IBV_EVENT_DEVICE_FATAL, as on a card that failed under the driver.
 */
static void test_control(struct bvd *b, int fd, uint32_t events, void *arg)
{
	struct cx4d *d = cx4d_of(b);
	struct signalfd_siginfo si;

	(void)events;
	(void)arg;
	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	if ((int)si.ssi_signo == SIGRTMIN) {
		uint32_t l_sz = cx4_mmio_read32(&d->bus->bar0, 0x14);

		cx4d_log(d, "test control: function fault (NIC interface disabled)");
		cx4_mmio_write32(&d->bus->bar0, 0x14,
				 (l_sz & ~(7u << 8)) | (uint32_t)CX4_NIC_IFC_DISABLED << 8);
		return;
	}
	cx4d_log(d, "test control: cable %s", si.ssi_signo == SIGUSR1 ? "pulled" : "plugged");
	cx4_model_set_link(d->bus, si.ssi_signo == SIGUSR2);
}
#endif

static void test_signals(sigset_t *m)
{
	sigemptyset(m);
	sigaddset(m, SIGUSR1);
	sigaddset(m, SIGUSR2);
	sigaddset(m, SIGRTMIN);
}

void cx4d_bus_block_test_signals(void)
{
	sigset_t m;

	/* before any thread exists, so the model's threads inherit the mask */
	test_signals(&m);
	sigprocmask(SIG_BLOCK, &m, NULL);
}

int cx4d_bus_test_controls(struct cx4d *d)
{
#ifdef HAVE_MODEL
	sigset_t m;
	int fd;

	if (strcmp(bv_conf_get(d->conf, "backend", "model"), "model"))
		return 0;
	test_signals(&m);
	fd = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return errno;
	return -bvd_watch_fd(d->bvd, fd, test_control, NULL);
#else
	(void)d;
	return 0;
#endif
}
