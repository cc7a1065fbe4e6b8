// SPDX-License-Identifier: MIT
/*
 * SOCK_STREAM rsockets: the data path (rs.h describes the messages).
 *
 * Each end has a receive ring (rbuf, registered for remote write) whose address, rkey and
 * size it gave the other end in the connection's private data, and posts rq_size receive
 * WQEs, each with a slot for a control message. The sender copies what the application
 * gives into its staging ring (or sends it inline) and RDMA-writes it WITH IMM at its write
 * offset in the peer's ring, never past the free bytes the peer returned, one message per
 * receive WQE the peer returned (a credit). The receiver learns from each completion how many
 * bytes followed in its ring; as the application reads them, and as it reposts WQEs, it
 * returns bytes and WQEs in a CREDIT control message (a SEND) once half a ring or half the
 * WQEs are owed. Data keeps one credit and one send WQE back, so a CREDIT (or the FIN) can
 * always go: neither end waits for the other to be able to speak.
 *
 * riomap opens a region of the application's memory to riowrite from the peer: an IOMAP
 * control message tells the peer its offset, address, length and rkey; riowrite is a plain
 * RDMA WRITE there (no WQE, no credit: the peer finds out by looking at its memory, or by a
 * message sent after, which RC orders after the write).
 *
 * Progress has no thread: it happens inside the calls (rsend, rrecv, rpoll...), as in
 * rdma-core; a call that must wait sleeps on the rsocket's epoll fd (CQ events armed).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "rcm.h"
#include "rs.h"

#define WR_SEND		(1ull << 63)	/* send WQE; low 32 bits: staging bytes it holds */
#define WR_CTRL		(1ull << 62)
/*
 * rclose waits for its sends as rdma-core's rshutdown does (until all are done), but gives up
 * once none has completed for this long: a peer whose process does not run at all (stopped;
 * on ntb its engine runs in that process) must not hold a close for ever. A peer that died
 * ends the wait sooner, with error completions.
 */
#define CLOSE_STALL_MS	10000

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* ---- setup ----------------------------------------------------------------------------------- */

static void *buf_alloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, (len + 4095) & ~(size_t)4095))
		return NULL;
	memset(p, 0, len);
	return p;
}

static int post_recv(struct rs *rs, uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(rs->cbuf + (size_t)slot * RS_CTRL_SIZE),
			       .length = RS_CTRL_SIZE, .lkey = rs->cmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(rs->id->qp, &wr, &bad);
}

int rs_stream_setup(struct rs *rs)
{
	struct ibv_context *verbs = rs->id->verbs;
	struct ibv_pd *pd = rs->id->pd;
	struct ibv_qp_init_attr a;
	size_t clen;
	int fl, err;

	if (!verbs || !pd)
		return ENODEV;
	rs->cc = ibv_create_comp_channel(verbs);
	if (!rs->cc)
		return errno ? errno : ENOMEM;
	fl = fcntl(rs->cc->fd, F_GETFL);
	if (fl < 0 || fcntl(rs->cc->fd, F_SETFL, fl | O_NONBLOCK))
		return errno;
	err = rs_epoll_add(rs, rs->cc->fd);
	if (err)
		return err;
	rs->cq = ibv_create_cq(verbs, (int)(rs->sq_size + rs->rq_size), rs, rs->cc, 0);
	if (!rs->cq)
		return errno ? errno : ENOMEM;
	clen = (size_t)(rs->rq_size + rs->sq_size) * RS_CTRL_SIZE;
	rs->sbuf = buf_alloc(rs->sbuf_size);
	rs->rbuf = buf_alloc(rs->rbuf_size);
	rs->cbuf = buf_alloc(clen);
	if (!rs->sbuf || !rs->rbuf || !rs->cbuf)
		return ENOMEM;
	rs->smr = ibv_reg_mr(pd, rs->sbuf, rs->sbuf_size, IBV_ACCESS_LOCAL_WRITE);
	rs->rmr = ibv_reg_mr(pd, rs->rbuf, rs->rbuf_size,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	rs->cmr = ibv_reg_mr(pd, rs->cbuf, clen, IBV_ACCESS_LOCAL_WRITE);
	if (!rs->smr || !rs->rmr || !rs->cmr)
		return errno ? errno : ENOMEM;

	memset(&a, 0, sizeof(a));
	a.qp_context = rs;
	a.send_cq = a.recv_cq = rs->cq;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = rs->sq_size;
	a.cap.max_recv_wr = rs->rq_size;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = rs->inline_size;
	if (rdma_create_qp(rs->id, pd, &a)) {
		/* a device that inlines less: without inline data */
		a.cap.max_inline_data = 0;
		a.cap.max_send_wr = rs->sq_size;
		a.cap.max_recv_wr = rs->rq_size;
		a.cap.max_send_sge = 2;
		a.cap.max_recv_sge = 1;
		if (rdma_create_qp(rs->id, pd, &a))
			return errno ? errno : ENOMEM;
	}
	rs->inline_size = a.cap.max_inline_data;
	rs->sq_avail = rs->sq_size;
	for (uint32_t i = 0; i < rs->rq_size; i++)
		if ((err = post_recv(rs, i)))
			return err;
	return 0;
}

void rs_stream_teardown(struct rs *rs)
{
	if (rs->id && rs->id->qp)
		rdma_destroy_qp(rs->id);
	if (rs->cq) {
		if (rs->cq_unacked)
			ibv_ack_cq_events(rs->cq, rs->cq_unacked);
		ibv_destroy_cq(rs->cq);
		rs->cq = NULL;
	}
	if (rs->cc) {
		rs_epoll_del(rs, rs->cc->fd);
		ibv_destroy_comp_channel(rs->cc);
		rs->cc = NULL;
	}
	if (rs->smr)
		ibv_dereg_mr(rs->smr);
	if (rs->rmr)
		ibv_dereg_mr(rs->rmr);
	if (rs->cmr)
		ibv_dereg_mr(rs->cmr);
	rs->smr = rs->rmr = rs->cmr = NULL;
	free(rs->sbuf);
	free(rs->rbuf);
	free(rs->cbuf);
	rs->sbuf = rs->rbuf = rs->cbuf = NULL;
	while (rs->iomaps) {
		struct rs_iomap *m = rs->iomaps;

		rs->iomaps = m->next;
		if (m->mr)
			ibv_dereg_mr(m->mr);
		free(m);
	}
	while (rs->peer_iomaps) {
		struct rs_iomap *m = rs->peer_iomaps;

		rs->peer_iomaps = m->next;
		free(m);
	}
}

void rs_conn_data_of(struct rs *rs, struct rs_conn_data *cd)
{
	memset(cd, 0, sizeof(*cd));
	cd->version = RS_VERSION;
	cd->credits = (uint16_t)rs->rq_size;
	cd->rbuf_size = rs->rbuf_size;
	cd->rbuf_addr = (uintptr_t)rs->rbuf;
	cd->rbuf_rkey = rs->rmr->rkey;
}

void rs_stream_connected(struct rs *rs, const struct rs_conn_data *peer)
{
	rs->peer_addr = peer->rbuf_addr;
	rs->peer_rkey = peer->rbuf_rkey;
	rs->peer_size = peer->rbuf_size;
	rs->peer_space = peer->rbuf_size;
	rs->peer_tail = 0;
	rs->credits = peer->credits;
	rs->state = RS_CONNECTED;
}

/* ---- sending messages -------------------------------------------------------------------- */

static int post_send(struct rs *rs, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int err = ibv_post_send(rs->id->qp, wr, &bad);

	if (err)
		rs_set_error(rs, err);
	else
		rs->sq_avail--;
	return err;
}

/* A control message: needs one credit and one send WQE (kept back from data for it). */
static int send_ctrl(struct rs *rs, const struct rs_ctrl *c)
{
	uint32_t slot = rs->rq_size + rs->c_next++ % rs->sq_size;
	struct rs_ctrl *dst = (struct rs_ctrl *)(rs->cbuf + (size_t)slot * RS_CTRL_SIZE);
	struct ibv_sge sge = { .addr = (uintptr_t)dst, .length = RS_CTRL_SIZE,
			       .lkey = rs->cmr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_SEND | WR_CTRL, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	int err;

	if (!rs->credits || !rs->sq_avail)
		return EAGAIN;
	*dst = *c;
	if (rs->inline_size >= RS_CTRL_SIZE)
		wr.send_flags |= IBV_SEND_INLINE;
	err = post_send(rs, &wr);
	if (!err)
		rs->credits--;
	return err;
}

/* What this end owes the peer: returned credits, the FIN, new iomaps. */
static void flush_owed(struct rs *rs)
{
	if (rs->state != RS_CONNECTED || rs->disconnected)
		return;
	if (rs->credit_pending || rs->r_msgs >= rs->rq_size / 2 ||
	    rs->r_bytes >= rs->rbuf_size / 2) {
		struct rs_ctrl c = { .op = RS_CTRL_CREDIT, .msgs = rs->r_msgs,
				     .bytes = rs->r_bytes };

		if (rs->r_msgs || rs->r_bytes) {
			if (send_ctrl(rs, &c))
				return;
			rs->r_msgs = 0;
			rs->r_bytes = 0;
		}
		rs->credit_pending = false;
	}
	for (struct rs_iomap *m = rs->iomaps; m; m = m->next) {
		struct rs_ctrl c = { .op = RS_CTRL_IOMAP, .bytes = m->offset,
				     .addr = (uintptr_t)m->buf, .len = m->len,
				     .rkey = m->mr->rkey };

		if (m->announced)
			continue;
		if (send_ctrl(rs, &c))
			return;
		m->announced = true;
	}
	if (rs->fin_pending && !rs->fin_sent) {
		struct rs_ctrl c = { .op = RS_CTRL_FIN };

		if (send_ctrl(rs, &c))
			return;
		rs->fin_sent = true;
	}
}

/* ---- completions --------------------------------------------------------------------------- */

static void peer_ctrl(struct rs *rs, const struct rs_ctrl *c)
{
	switch (c->op) {
	case RS_CTRL_CREDIT:
		if (c->bytes > rs->peer_size - rs->peer_space ||
		    c->msgs > 0xffff) {
			rs_set_error(rs, EPROTO);
			return;
		}
		rs->credits += c->msgs;
		rs->peer_space += (uint32_t)c->bytes;
		break;
	case RS_CTRL_FIN:
		rs->peer_fin = true;
		break;
	case RS_CTRL_IOMAP: {
		struct rs_iomap *m = calloc(1, sizeof(*m));

		if (!m)
			return;
		m->offset = c->bytes;
		m->addr = c->addr;
		m->len = c->len;
		m->rkey = c->rkey;
		m->next = rs->peer_iomaps;
		rs->peer_iomaps = m;
		break;
	}
	case RS_CTRL_IOUNMAP:
		for (struct rs_iomap **p = &rs->peer_iomaps; *p; p = &(*p)->next)
			if ((*p)->offset == c->bytes) {
				struct rs_iomap *m = *p;

				*p = m->next;
				free(m);
				break;
			}
		break;
	default:
		rs_set_error(rs, EPROTO);
	}
}

static void completion(struct rs *rs, const struct ibv_wc *wc)
{
	if (wc->wr_id & WR_SEND) {
		rs->sq_avail++;
		rs->s_used -= (uint32_t)wc->wr_id;
		if (wc->status != IBV_WC_SUCCESS && !rs->disconnected)
			rs_set_error(rs, ECONNRESET);
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		if (!rs->disconnected && wc->status != IBV_WC_WR_FLUSH_ERR)
			rs_set_error(rs, ECONNRESET);
		return;
	}
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		uint32_t len = be32toh(wc->imm_data);

		if (len > rs->rbuf_size - rs->r_avail) {
			rs_set_error(rs, EPROTO);
			return;
		}
		rs->r_avail += len;
	} else if (wc->byte_len >= RS_CTRL_SIZE && wc->wr_id < rs->rq_size) {
		struct rs_ctrl c;

		memcpy(&c, rs->cbuf + (size_t)wc->wr_id * RS_CTRL_SIZE, sizeof(c));
		peer_ctrl(rs, &c);
	} else {
		rs_set_error(rs, EPROTO);
		return;
	}
	if (wc->wr_id < rs->rq_size && !post_recv(rs, (uint32_t)wc->wr_id))
		rs->r_msgs++;
}

int rs_poll_cq(struct rs *rs)
{
	struct ibv_wc wc[32];
	int n, total = 0;

	if (!rs->cq)
		return 0;
	while ((n = ibv_poll_cq(rs->cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++)
			completion(rs, &wc[i]);
		total += n;
	}
	return total;
}

static void debug_dump(struct rs *rs)
{
	static __thread time_t last;
	time_t now = time(NULL);

	if (now == last)
		return;
	last = now;
	fprintf(stderr, "rsocket %d: state %d credits %u sq_avail %u peer_space %u/%u tail %u "
		"s_used %u/%u s_head %u r_avail %u r_head %u r_msgs %u r_bytes %u fin %d/%d/%d "
		"disc %d\n", rs->index, rs->state, rs->credits, rs->sq_avail, rs->peer_space,
		rs->peer_size, rs->peer_tail, rs->s_used, rs->sbuf_size, rs->s_head, rs->r_avail,
		rs->r_head, rs->r_msgs, rs->r_bytes, rs->fin_pending, rs->fin_sent, rs->peer_fin,
		rs->disconnected);
}

void rs_progress(struct rs *rs)
{
	rs_cm_progress(rs);
	rs_poll_cq(rs);
	flush_owed(rs);
	if (rs_debug)
		debug_dump(rs);
}

void rs_arm(struct rs *rs)
{
	if (rs->cq && !rs->cq_armed && !ibv_req_notify_cq(rs->cq, 0))
		rs->cq_armed = true;
}

/* The CQ events that woke us, acknowledged in batches. */
void rs_take_events(struct rs *rs)
{
	struct ibv_cq *cq;
	void *ctx;

	if (!rs->cc)
		return;
	while (!ibv_get_cq_event(rs->cc, &cq, &ctx)) {
		rs->cq_armed = false;
		if (++rs->cq_unacked >= 64) {
			ibv_ack_cq_events(rs->cq, rs->cq_unacked);
			rs->cq_unacked = 0;
		}
	}
}

int rs_wait(struct rs *rs, int timeout_ms)
{
	struct pollfd p = { .fd = rs->index, .events = POLLIN };
	int n;

	rs_arm(rs);
	/* what came before the arming would never wake us */
	if (rs_poll_cq(rs)) {
		flush_owed(rs);
		return 0;
	}
	pthread_mutex_unlock(&rs->lock);
	n = poll(&p, 1, timeout_ms);
	pthread_mutex_lock(&rs->lock);
	rs_take_events(rs);
	return n < 0 ? errno : 0;
}

/* ---- readiness ----------------------------------------------------------------------------- */

static bool can_send(struct rs *rs)
{
	uint32_t sfree = rs->sbuf_size - rs->s_used;

	return rs->credits >= 2 && rs->sq_avail >= 2 && rs->peer_space && sfree;
}

short rs_stream_revents(struct rs *rs, short events)
{
	short r = 0;

	rs_progress(rs);
	switch (rs->state) {
	case RS_LISTENING:
		if (rs->reqs)
			r |= POLLIN;
		break;
	case RS_CONNECTED:
		if (rs->r_avail || rs->peer_fin || rs->disconnected || rs->rd_shut)
			r |= POLLIN;
		if (!rs->fin_pending && !rs->disconnected && can_send(rs))
			r |= POLLOUT;
		/* as TCP: a peer that closed is end of file to read (POLLIN), a hang-up only
		 * once nothing is left to read */
		if (rs->disconnected && !rs->r_avail)
			r |= POLLHUP;
		break;
	case RS_ERROR:
		r |= POLLERR | POLLHUP | POLLIN | POLLOUT;
		break;
	default:
		break;	/* connecting: nothing yet */
	}
	return r & (events | POLLERR | POLLHUP | POLLNVAL);
}

/* ---- send ---------------------------------------------------------------------------------- */

/* Gather len bytes from iov (starting *at bytes in) into dst. */
static void gather(const struct iovec *iov, int iovcnt, size_t at, uint8_t *dst, size_t len)
{
	int i = 0;

	while (i < iovcnt && at >= iov[i].iov_len)
		at -= iov[i++].iov_len;
	while (len && i < iovcnt) {
		size_t n = iov[i].iov_len - at;

		if (n > len)
			n = len;
		memcpy(dst, (const uint8_t *)iov[i].iov_base + at, n);
		dst += n;
		len -= n;
		at = 0;
		i++;
	}
}

/*
 * Room for n bytes in the staging ring, contiguous: at the head, or at the start once the
 * ring's end is too short for them (the bytes skipped are freed with this message). Returns
 * how many fit (0: none now) and sets *pad to the bytes skipped.
 */
static uint32_t stage(struct rs *rs, uint32_t n, uint32_t *pad)
{
	uint32_t free, end;

	*pad = 0;
	if (!rs->s_used)
		rs->s_head = 0;		/* empty: start over, all of it contiguous */
	free = rs->sbuf_size - rs->s_used;
	end = rs->sbuf_size - rs->s_head;
	if (end >= n || end >= free)
		return min32(n, min32(end, free));
	/* the end is shorter than what we want and the start has more: skip the end */
	if (free - end > end) {
		*pad = end;
		return min32(n, free - end);
	}
	return end;
}

/* Stage n bytes (from iov at `at`) and post them: data (imm) into the ring, or to raddr. */
static int post_data(struct rs *rs, const struct iovec *iov, int iovcnt, size_t at,
		     uint32_t n, uint32_t pad, uint64_t raddr, uint32_t rkey, bool imm)
{
	uint8_t tmp[1024];
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED };

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (imm)
		wr.imm_data = htobe32(n);
	if (n <= rs->inline_size && n <= sizeof(tmp)) {
		gather(iov, iovcnt, at, tmp, n);
		sge = (struct ibv_sge){ .addr = (uintptr_t)tmp, .length = n };
		wr.send_flags |= IBV_SEND_INLINE;
		wr.wr_id = WR_SEND;
	} else {
		if (pad) {
			rs->s_used += pad;
			rs->s_head = 0;
		}
		gather(iov, iovcnt, at, rs->sbuf + rs->s_head, n);
		sge = (struct ibv_sge){ .addr = (uintptr_t)(rs->sbuf + rs->s_head), .length = n,
					.lkey = rs->smr->lkey };
		wr.wr_id = WR_SEND | (n + pad);
		rs->s_head = (rs->s_head + n) % rs->sbuf_size;
		rs->s_used += n;
	}
	return post_send(rs, &wr);
}

static bool nonblocking(struct rs *rs, int flags)
{
	return (rs->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

static int send_state_err(struct rs *rs)
{
	if (rs->state == RS_ERROR)
		return rs->err == ENODEV ? ECONNRESET : rs->err ? rs->err : ECONNRESET;
	if (rs->state != RS_CONNECTED)
		return rs->state == RS_CONNECTING || rs->state == RS_RESOLVING_ADDR ||
		       rs->state == RS_RESOLVING_ROUTE ? EAGAIN : ENOTCONN;
	if (rs->fin_pending || rs->disconnected)
		return EPIPE;
	return 0;
}

ssize_t rs_stream_send(struct rs *rs, const struct iovec *iov, int iovcnt, int flags)
{
	size_t len = rs_iov_len(iov, iovcnt), done = 0;
	int err;

	for (;;) {
		rs_progress(rs);
		err = send_state_err(rs);
		if (err)
			break;
		while (done < len && can_send(rs)) {
			uint32_t n = min32((uint32_t)(len - done < RS_MAX_MSG ? len - done : RS_MAX_MSG),
					   min32(rs->peer_space, rs->peer_size - rs->peer_tail));

			uint32_t pad = 0;

			if (n > rs->inline_size)
				n = stage(rs, n, &pad);
			if (!n)
				break;
			if (post_data(rs, iov, iovcnt, done, n, pad, rs->peer_addr + rs->peer_tail,
				      rs->peer_rkey, true))
				break;
			rs->peer_tail = (rs->peer_tail + n) % rs->peer_size;
			rs->peer_space -= n;
			rs->credits--;
			done += n;
		}
		if (done == len || rs->state != RS_CONNECTED)
			break;
		if (nonblocking(rs, flags)) {
			err = done ? 0 : EAGAIN;
			break;
		}
		if ((err = rs_wait(rs, -1)))
			break;
	}
	if (done)
		return (ssize_t)done;
	/* EPIPE raises no SIGPIPE: rsockets' neither */
	errno = err ? err : EAGAIN;
	return -1;
}

/* ---- receive ------------------------------------------------------------------------------- */

static size_t scatter(struct rs *rs, const struct iovec *iov, int iovcnt, size_t want, bool peek)
{
	uint32_t head = rs->r_head, avail = rs->r_avail;
	size_t done = 0;

	for (int i = 0; i < iovcnt && avail && done < want; i++) {
		size_t off = 0;

		while (off < iov[i].iov_len && avail && done < want) {
			uint32_t n = min32(avail, rs->rbuf_size - head);

			if (n > iov[i].iov_len - off)
				n = (uint32_t)(iov[i].iov_len - off);
			if (n > want - done)
				n = (uint32_t)(want - done);
			memcpy((uint8_t *)iov[i].iov_base + off, rs->rbuf + head, n);
			head = (head + n) % rs->rbuf_size;
			avail -= n;
			off += n;
			done += n;
		}
	}
	if (!peek) {
		rs->r_head = head;
		rs->r_avail = avail;
		rs->r_bytes += (uint32_t)done;
	}
	return done;
}

ssize_t rs_stream_recv(struct rs *rs, const struct iovec *iov, int iovcnt, int flags)
{
	size_t len = rs_iov_len(iov, iovcnt), done = 0;
	int err = 0;

	if (!len)
		return 0;
	for (;;) {
		rs_progress(rs);
		if (rs->r_avail) {
			struct iovec rest[64];
			int n = 0;
			size_t skip = done;

			/* the part of iov not filled yet (MSG_WAITALL) */
			for (int i = 0; i < iovcnt && n < 64; i++) {
				if (skip >= iov[i].iov_len) {
					skip -= iov[i].iov_len;
					continue;
				}
				rest[n].iov_base = (uint8_t *)iov[i].iov_base + skip;
				rest[n++].iov_len = iov[i].iov_len - skip;
				skip = 0;
			}
			done += scatter(rs, rest, n, len - done, flags & MSG_PEEK);
			flush_owed(rs);
			if (done == len || !(flags & MSG_WAITALL) || (flags & MSG_PEEK))
				break;
			continue;
		}
		if (done)
			break;
		if (rs->rd_shut || rs->peer_fin || rs->disconnected)
			break;		/* end of file */
		if (rs->state == RS_ERROR) {
			err = rs->err == ENODEV ? ECONNRESET : rs->err ? rs->err : ECONNRESET;
			break;
		}
		if (rs->state != RS_CONNECTED &&
		    !(rs->state == RS_CONNECTING || rs->state == RS_RESOLVING_ADDR ||
		      rs->state == RS_RESOLVING_ROUTE)) {
			err = ENOTCONN;
			break;
		}
		if (nonblocking(rs, flags)) {
			err = EAGAIN;
			break;
		}
		if ((err = rs_wait(rs, -1)))
			break;
	}
	if (err) {
		errno = err;
		return -1;
	}
	return (ssize_t)done;
}

/* ---- shutdown, close ------------------------------------------------------------------------ */

int rs_shutdown_wr(struct rs *rs)
{
	if (rs->fin_pending)
		return 0;
	rs->fin_pending = true;
	rs->credit_pending = true;
	rs_progress(rs);
	return 0;
}

/*
 * Everything we sent has been acknowledged, and the FIN with it when a credit let it go:
 * once every send completed the peer holds all the data, so the DREQ that follows cannot
 * overtake any (a FIN still waiting for a credit would wait on the peer reading).
 */
static bool drained(struct rs *rs)
{
	return rs->state != RS_CONNECTED || rs->disconnected ||
	       (rs->sq_avail == rs->sq_size && (rs->fin_sent || !rs->credits));
}

void rs_stream_drain(struct rs *rs)
{
	int64_t stall_end = rs_now_ms() + CLOSE_STALL_MS;

	rs_shutdown_wr(rs);
	while (!drained(rs) && rs_now_ms() < stall_end) {
		uint32_t sq_avail = rs->sq_avail;

		rs_wait(rs, 50);
		rs_progress(rs);
		if (rs->sq_avail != sq_avail)
			stall_end = rs_now_ms() + CLOSE_STALL_MS;
	}
	if (rs_debug && !drained(rs))
		fprintf(stderr, "rsocket %d: rclose gave up after %d ms without a completion\n",
			rs->index, CLOSE_STALL_MS);
	if (!rs->disconnected)
		rdma_disconnect(rs->id);
}

/* ---- riomap, riounmap, riowrite ------------------------------------------------------------ */

RCM_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	struct rs *rs = rs_lookup(socket);
	struct rs_iomap *m;
	unsigned int n = 0;
	off_t end = 0;
	int err = 0;

	if (!rs)
		return -1;
	if (rs->type != SOCK_STREAM || rs->state != RS_CONNECTED) {
		err = rs->type != SOCK_STREAM ? ENOTSUP : ENOTCONN;
		goto out;
	}
	if (!buf || !len || len > UINT32_MAX || prot != PROT_WRITE || flags) {
		err = EINVAL;	/* rsockets map for remote writes only */
		goto out;
	}
	for (m = rs->iomaps; m; m = m->next, n++)
		if ((off_t)(m->offset + m->len) > end)
			end = (off_t)(m->offset + m->len);
	if (rs->iomap_size && n >= rs->iomap_size) {
		err = ENOMEM;
		goto out;
	}
	if (offset == -1)
		offset = end;
	for (m = rs->iomaps; m; m = m->next)
		if ((uint64_t)offset < m->offset + m->len && m->offset < (uint64_t)offset + len) {
			err = EADDRINUSE;
			goto out;
		}
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = ENOMEM;
		goto out;
	}
	m->mr = ibv_reg_mr(rs->id->pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!m->mr) {
		err = errno ? errno : ENOMEM;
		free(m);
		goto out;
	}
	m->offset = (uint64_t)offset;
	m->len = (uint32_t)len;
	m->buf = buf;
	m->next = rs->iomaps;
	rs->iomaps = m;
	rs_progress(rs);	/* the IOMAP goes now, or with the next progress */
out:
	rs_unlock(rs);
	if (err) {
		errno = err;
		return -1;
	}
	return offset;
}

RCM_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	struct rs *rs = rs_lookup(socket);
	int err = EINVAL;

	if (!rs)
		return -1;
	for (struct rs_iomap **p = &rs->iomaps; *p; p = &(*p)->next) {
		struct rs_iomap *m = *p;
		struct rs_ctrl c = { .op = RS_CTRL_IOUNMAP };

		if (m->buf != buf || m->len != len)
			continue;
		c.bytes = m->offset;
		*p = m->next;
		if (m->announced && rs->state == RS_CONNECTED)
			send_ctrl(rs, &c);	/* best effort: the rkey dies with the MR anyway */
		ibv_dereg_mr(m->mr);
		free(m);
		err = 0;
		break;
	}
	rs_unlock(rs);
	return err ? rcm_err(err) : 0;
}

RCM_EXPORT size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	struct rs *rs = rs_lookup(socket);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = count };
	size_t done = 0;
	int err = 0;

	if (!rs)
		return (size_t)-1;
	for (;;) {
		struct rs_iomap *m;

		rs_progress(rs);
		err = send_state_err(rs);
		if (err)
			break;
		for (m = rs->peer_iomaps; m; m = m->next)
			if ((uint64_t)offset + done >= m->offset &&
			    (uint64_t)offset + done < m->offset + m->len)
				break;
		if (!m) {
			err = done ? 0 : EINVAL;	/* nothing the peer mapped there */
			break;
		}
		while (done < count && rs->sq_avail >= 2) {
			uint64_t at = (uint64_t)offset + done - m->offset;
			uint32_t n = (uint32_t)(count - done < RS_MAX_MSG ? count - done : RS_MAX_MSG);

			uint32_t pad = 0;

			n = min32(n, (uint32_t)(m->len - at));
			if (n > rs->inline_size)
				n = stage(rs, n, &pad);
			if (!n)
				break;
			if (post_data(rs, &iov, 1, done, n, pad, m->addr + at, m->rkey, false))
				break;
			done += n;
			if (at + n == m->len)
				break;	/* on into the next region, if there is one */
		}
		if (done == count || rs->state != RS_CONNECTED)
			break;
		if ((uint64_t)offset + done < m->offset + m->len) {
			if (nonblocking(rs, flags)) {
				err = done ? 0 : EAGAIN;
				break;
			}
			if ((err = rs_wait(rs, -1)))
				break;
		}
	}
	rs_unlock(rs);
	if (done)
		return done;
	errno = err ? err : EAGAIN;
	return (size_t)-1;
}

/* ---- the exported data calls ---------------------------------------------------------------- */

static ssize_t do_send(int socket, const struct iovec *iov, int iovcnt, int flags,
		       const struct sockaddr *to, socklen_t tolen)
{
	struct rs *rs = rs_lookup(socket);
	ssize_t ret;

	if (!rs)
		return -1;
	if (rs->type == SOCK_DGRAM)
		ret = rs_dgram_send(rs, iov, iovcnt, flags, to, tolen);
	else
		ret = rs_stream_send(rs, iov, iovcnt, flags);
	rs_unlock(rs);
	return ret;
}

static ssize_t do_recv(int socket, const struct iovec *iov, int iovcnt, int flags,
		       struct sockaddr *from, socklen_t *fromlen)
{
	struct rs *rs = rs_lookup(socket);
	ssize_t ret;

	if (!rs)
		return -1;
	if (rs->type == SOCK_DGRAM) {
		ret = rs_dgram_recv(rs, iov, iovcnt, flags, from, fromlen);
	} else {
		ret = rs_stream_recv(rs, iov, iovcnt, flags);
		if (ret >= 0 && from && fromlen) {
			int e = errno;

			rs_unlock(rs);
			if (rgetpeername(socket, from, fromlen))
				*fromlen = 0;
			errno = e;
			return ret;
		}
	}
	rs_unlock(rs);
	return ret;
}

RCM_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return do_send(socket, &iov, 1, flags, NULL, 0);
}

RCM_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
			   const struct sockaddr *dest_addr, socklen_t addrlen)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return do_send(socket, &iov, 1, flags, dest_addr, addrlen);
}

RCM_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	if (!msg)
		return rcm_err(EINVAL);
	if (msg->msg_controllen)
		return rcm_err(ENOTSUP);
	return do_send(socket, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
		       msg->msg_namelen);
}

RCM_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

RCM_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return do_send(socket, iov, iovcnt, 0, NULL, 0);
}

RCM_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return do_recv(socket, &iov, 1, flags, NULL, NULL);
}

RCM_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
			     struct sockaddr *src_addr, socklen_t *addrlen)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return do_recv(socket, &iov, 1, flags, src_addr, addrlen);
}

RCM_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	ssize_t ret;

	if (!msg)
		return rcm_err(EINVAL);
	ret = do_recv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
		      msg->msg_name ? &msg->msg_namelen : NULL);
	msg->msg_controllen = 0;
	msg->msg_flags = 0;
	return ret;
}

RCM_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

RCM_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return do_recv(socket, iov, iovcnt, 0, NULL, NULL);
}
