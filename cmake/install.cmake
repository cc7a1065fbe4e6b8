# Where an installed bridgeverbs puts its files (`cmake --install build`, DESTDIR honoured),
# laid out the way rdma-core installs its own providers and daemons (docs/install.md).
#
# Two kinds of directory:
#  - ours, from GNUInstallDirs (prefix /usr: /usr/bin, /usr/sbin, /usr/lib/<triplet>, /etc);
#  - those other software reads from a path compiled into it, which do not follow our prefix:
#    the system libibverbs' provider directory and /etc/libibverbs.d, systemd's unit,
#    generator, tmpfiles.d and sysusers.d directories, /etc/profile.d.
include(GNUInstallDirs)

# The directory the libibverbs we build against dlopen()s "lib<name>-rdmav34.so" from: next to
# the library itself (Debian: /usr/lib/x86_64-linux-gnu/libibverbs).
get_filename_component(BV_IBVERBS_LIBRARY_REAL ${IBVERBS_LIBRARY} REALPATH)
get_filename_component(BV_SYSTEM_PROVIDER_DIR ${BV_IBVERBS_LIBRARY_REAL} DIRECTORY)
set(BV_SYSTEM_PROVIDER_DIR ${BV_SYSTEM_PROVIDER_DIR}/libibverbs)

set(BV_IBVERBS_PROVIDER_DIR "${CMAKE_INSTALL_FULL_LIBDIR}/libibverbs" CACHE PATH
	"where the providers lib<name>-rdmav${BV_PABI}.so are installed")
set(BV_IBVERBS_CONFIG_DIR "/etc/libibverbs.d" CACHE PATH
	"the directory of *.driver files the system libibverbs reads (its IBV_CONFIG_DIR)")
set(BV_PRIVATE_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}/bridgeverbs" CACHE PATH
	"the preload shim and the librdmacm replacement: off the library search path")
set(BV_SYSCONF_DIR "${CMAKE_INSTALL_FULL_SYSCONFDIR}/bridgeverbs" CACHE PATH
	"the system configuration (devices.conf)")
set(BV_PROFILE_DIR "/etc/profile.d" CACHE PATH "login-shell snippets")
set(BV_SYSTEMD_UNITDIR "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" CACHE PATH "systemd units")
set(BV_SYSTEMD_GENERATORDIR "${CMAKE_INSTALL_PREFIX}/lib/systemd/system-generators" CACHE PATH
	"systemd generators")
set(BV_TMPFILESDIR "${CMAKE_INSTALL_PREFIX}/lib/tmpfiles.d" CACHE PATH "tmpfiles.d entries")
set(BV_SYSUSERSDIR "${CMAKE_INSTALL_PREFIX}/lib/sysusers.d" CACHE PATH "sysusers.d entries")
set(BV_DAEMON_USER "" CACHE STRING
	"the user cx4d and ntbd run as when started as root (empty: they stay root)")
option(BV_SYSTEMD "install the systemd units; an installed bvctl up/down then goes through them" ON)
option(BV_BUILD_TESTS "build the tests and benchmarks" ON)

# The system run directory, as common/bv_paths.h defines it: the units and tmpfiles.d name it.
file(STRINGS ${CMAKE_SOURCE_DIR}/common/bv_paths.h BV_SYSTEM_RUNDIR
	REGEX "^#define BV_SYSTEM_RUNDIR")
string(REGEX REPLACE ".*\"(.*)\".*" "\\1" BV_SYSTEM_RUNDIR "${BV_SYSTEM_RUNDIR}")

# A provider: the plugin into the provider directory and a .driver file naming it. The name
# alone when libibverbs looks in that directory anyway (rdma-core's own form, which also keeps
# the file the same on every architecture); the absolute path otherwise.
function(bv_install_provider name)
	if(BV_IBVERBS_PROVIDER_DIR STREQUAL BV_SYSTEM_PROVIDER_DIR)
		set(ref ${name})
	else()
		set(ref ${BV_IBVERBS_PROVIDER_DIR}/lib${name})
	endif()
	file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${name}.driver "driver ${ref}\n")
	install(TARGETS ${name} LIBRARY DESTINATION ${BV_IBVERBS_PROVIDER_DIR})
	install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${name}.driver
		DESTINATION ${BV_IBVERBS_CONFIG_DIR})
endfunction()

# A library that must not shadow a system one (the preload shim; the drop-in librdmacm.so.1):
# bvctl run / bvctl env name this directory, nothing else does. SUBDIR keeps the build tree's
# layout below lib/ (the CM library: build/lib/rdmacm, installed BV_PRIVATE_LIBDIR/rdmacm), so
# bvctl finds it at the same place relative to its library directory in both.
#   bv_install_private_library(TARGET [SUBDIR dir])
function(bv_install_private_library target)
	cmake_parse_arguments(A "" "SUBDIR" "" ${ARGN})
	set(dest ${BV_PRIVATE_LIBDIR})
	if(A_SUBDIR)
		set(dest ${dest}/${A_SUBDIR})
	endif()
	install(TARGETS ${target} LIBRARY DESTINATION ${dest} NAMELINK_SKIP)
endfunction()

# A public shared library with its headers and a pkg-config file (libscif.so.0, scif.h,
# scif.pc): the .so.N in the runtime package, the .so link, headers and .pc in the -dev one.
#   bv_install_public_library(TARGET t HEADERS h... PKGCONFIG file.pc.in)
function(bv_install_public_library)
	cmake_parse_arguments(A "" "TARGET;PKGCONFIG" "HEADERS" ${ARGN})
	install(TARGETS ${A_TARGET} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
	if(A_HEADERS)
		install(FILES ${A_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
	endif()
	if(A_PKGCONFIG)
		get_filename_component(pc ${A_PKGCONFIG} NAME_WE)
		configure_file(${A_PKGCONFIG} ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
		install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc
			DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
	endif()
endfunction()

# Man pages: docs/man/NAME.SECTION into man/manSECTION.
function(bv_install_man)
	foreach(page ${ARGN})
		string(REGEX REPLACE ".*\\.([0-9])$" "\\1" sec ${page})
		install(FILES ${CMAKE_SOURCE_DIR}/docs/man/${page}
			DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sec})
	endforeach()
endfunction()
