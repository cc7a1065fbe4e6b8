# The system rdma-core: libibverbs headers and library, and the private provider ABI the
# providers bind to at load time (Debian installs no driver.h; kernel-abi/verbs_provider.h
# declares what we need).
find_path(IBVERBS_INCLUDE_DIR infiniband/verbs.h)
find_library(IBVERBS_LIBRARY NAMES ibverbs)
if(NOT IBVERBS_INCLUDE_DIR OR NOT IBVERBS_LIBRARY)
	message(FATAL_ERROR "libibverbs development files not found: apt-get install libibverbs-dev")
endif()

set(BV_PABI 34)
set(BV_PRIVATE_NODE IBVERBS_PRIVATE_${BV_PABI})

# The providers resolve the private symbols with dlvsym() at load time, so the build does not
# link them; check here that this libibverbs exports the node, with a clear message otherwise.
file(WRITE ${CMAKE_BINARY_DIR}/pabi_check.c "
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *h = dlopen(\"libibverbs.so.1\", RTLD_NOW | RTLD_GLOBAL);
	const char *syms[] = { \"verbs_register_driver_${BV_PABI}\", \"_verbs_init_and_alloc_context\",
			       \"verbs_set_ops\", \"verbs_uninit_context\" };
	if (!h)
		return 2;
	for (unsigned i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!dlvsym(h, syms[i], \"${BV_PRIVATE_NODE}\")) {
			printf(\"%s\", syms[i]);
			return 1;
		}
	return 0;
}
")
try_run(BV_PABI_RUN BV_PABI_COMPILE ${CMAKE_BINARY_DIR} ${CMAKE_BINARY_DIR}/pabi_check.c
	LINK_LIBRARIES dl RUN_OUTPUT_VARIABLE BV_PABI_MISSING)
if(NOT BV_PABI_COMPILE OR NOT BV_PABI_RUN EQUAL 0)
	message(FATAL_ERROR "The system libibverbs (${IBVERBS_LIBRARY}) does not export "
		"${BV_PRIVATE_NODE} (missing: '${BV_PABI_MISSING}'). bridgeverbs providers are "
		"built for the rdma-core 36..56 provider ABI ${BV_PABI} (Debian 12 ships 44.0).")
endif()
message(STATUS "libibverbs exports ${BV_PRIVATE_NODE}: providers will be lib<name>-rdmav${BV_PABI}.so")
