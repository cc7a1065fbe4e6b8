// SPDX-License-Identifier: MIT
/*
 * Bind to libibverbs' private provider ABI at load time. The providers are not linked against
 * IBVERBS_PRIVATE_34 so that one binary can report a clear error on a libibverbs that lacks
 * it instead of failing to load silently. libibverbs is already loaded (it is dlopen()ing us);
 * RTLD_NOLOAD finds it even when the application loaded it with local scope.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "bv_provider.h"

verbs_init_and_alloc_context_fn bv_verbs_init_and_alloc_context;
verbs_uninit_context_fn bv_verbs_uninit_context;
verbs_set_ops_fn bv_verbs_set_ops;

static void *lookup(void *lib, const char *name)
{
	void *p = dlvsym(lib, name, BV_IBVERBS_PRIVATE);

	if (!p)
		fprintf(stderr,
			"bridgeverbs: this libibverbs lacks %s@%s; the bridgeverbs providers need "
			"rdma-core 36..56 (provider ABI %d)\n",
			name, BV_IBVERBS_PRIVATE, BV_IBVERBS_PABI);
	return p;
}

void bv_register_provider(const struct verbs_device_ops *ops)
{
	void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	verbs_register_driver_fn reg;

	if (!lib) {
		fprintf(stderr, "bridgeverbs: %s loaded without libibverbs.so.1\n", ops->name);
		return;
	}
	reg = (verbs_register_driver_fn)lookup(lib, "verbs_register_driver_34");
	bv_verbs_init_and_alloc_context =
		(verbs_init_and_alloc_context_fn)lookup(lib, "_verbs_init_and_alloc_context");
	bv_verbs_uninit_context = (verbs_uninit_context_fn)lookup(lib, "verbs_uninit_context");
	bv_verbs_set_ops = (verbs_set_ops_fn)lookup(lib, "verbs_set_ops");
	/* Our handle only pins what the application already holds. */
	dlclose(lib);
	if (reg && bv_verbs_init_and_alloc_context && bv_verbs_uninit_context && bv_verbs_set_ops)
		reg(ops);
}
