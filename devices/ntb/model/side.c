// SPDX-License-Identifier: MIT
/* One side of the link: its register file + IOMMU table (a memfd) and its interrupt eventfds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

static struct ntb_side *side_alloc(void)
{
	struct ntb_side *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->refs = 1;
	s->shm_fd = -1;
	s->misc_fd = -1;
	for (int i = 0; i < NTB_MAX_DB_VECTORS; i++)
		s->vec_fd[i] = -1;
	return s;
}

static int side_map(struct ntb_side *s)
{
	struct stat st;

	/* a short file would SIGBUS us on access */
	if (fstat(s->shm_fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < NTB_SHM_SIZE)
		return -EPROTO;
	s->shm = mmap(NULL, NTB_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, s->shm_fd, 0);
	if (s->shm == MAP_FAILED) {
		s->shm = NULL;
		return -errno;
	}
	s->regs = (struct ntb_regs *)((char *)s->shm + NTB_SHM_REGS_OFF);
	s->iommu = (struct ntb_iommu_tbl *)((char *)s->shm + NTB_SHM_IOMMU_OFF);
	return 0;
}

struct ntb_side *ntb_side_new_local(int prof_idx, int side, uint64_t mw_size)
{
	const struct ntb_profile *p = &ntb_profiles[prof_idx];
	struct ntb_side *s = side_alloc();

	if (!s)
		return NULL;
	s->pid = getpid();
	s->shm_fd = memfd_create("ntb-regs", MFD_CLOEXEC);
	if (s->shm_fd < 0 || ftruncate(s->shm_fd, NTB_SHM_SIZE) || side_map(s))
		goto fail;
	s->nvec = p->db_vectors;
	for (int i = 0; i < s->nvec; i++)
		if ((s->vec_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
			goto fail;
	if ((s->misc_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		goto fail;
	s->regs->version = NTB_REGS_VERSION;
	s->regs->profile = prof_idx;
	s->regs->side = side;
	s->regs->mw_size = mw_size;
	s->regs->owner_pid = getpid();
	s->regs->speed = p->speed;
	s->regs->width = p->width;
	/* doorbells and messages start unmasked: db_mask = msg_mask = 0 */
	reg_store(&s->regs->magic, NTB_REGS_MAGIC);
	return s;
fail:
	ntb_side_put(s);
	return NULL;
}

/* Takes ownership of the descriptors, also on failure. */
struct ntb_side *ntb_side_import(int shm_fd, int nvec, const int *vec_fd, int misc_fd, pid_t pid)
{
	struct ntb_side *s = side_alloc();

	if (!s) {
		close(shm_fd);
		for (int i = 0; i < nvec; i++)
			if (vec_fd[i] >= 0)
				close(vec_fd[i]);
		if (misc_fd >= 0)
			close(misc_fd);
		return NULL;
	}
	s->pid = pid;
	s->shm_fd = shm_fd;
	s->nvec = nvec;
	for (int i = 0; i < nvec && i < NTB_MAX_DB_VECTORS; i++)
		s->vec_fd[i] = vec_fd[i];
	s->misc_fd = misc_fd;
	if (nvec > NTB_MAX_DB_VECTORS || side_map(s) ||
	    reg_load(&s->regs->magic) != NTB_REGS_MAGIC ||
	    s->regs->version != NTB_REGS_VERSION) {
		ntb_side_put(s);
		return NULL;
	}
	return s;
}

void ntb_side_get(struct ntb_side *s)
{
	__atomic_fetch_add(&s->refs, 1, __ATOMIC_RELAXED);
}

void ntb_side_put(struct ntb_side *s)
{
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (s->shm)
		munmap(s->shm, NTB_SHM_SIZE);
	if (s->shm_fd >= 0)
		close(s->shm_fd);
	for (int i = 0; i < NTB_MAX_DB_VECTORS; i++)
		if (s->vec_fd[i] >= 0)
			close(s->vec_fd[i]);
	if (s->misc_fd >= 0)
		close(s->misc_fd);
	free(s);
}
