# libFuzzer targets (docs/reliability.md, "Fuzzing").
#
# libFuzzer comes with clang (-fsanitize=fuzzer) and the project may be configured with gcc, so
# the fuzz targets are built here with clang by custom commands: the code under test is compiled
# again, instrumented for coverage and with AddressSanitizer and UndefinedBehaviorSanitizer,
# into archives of its own (one per library, shared by every target that needs it).
#
#   bv_fuzz_library(NAME <name> TARGET <cmake target> [EXCLUDE <file>...])
#       an instrumented archive of <target>'s sources (minus EXCLUDE: e.g. the file with main()),
#       compiled with that target's include directories and definitions (its dependencies'
#       usage requirements included)
#
#   bv_fuzz_target(NAME <name> HARNESS <file.c> LIBS <bv_fuzz_library name>...
#                  [INCLUDES <dir>...] [SOURCES <file.c>...] CORPUS <dir> REGRESS <dir>
#                  [LINK <linker argument>...] [ARGS <libFuzzer option>...])
#       build/bin/<name>, and two tests:
#         <name>_regress  every input of CORPUS and REGRESS once (no mutation): the checked-in
#                         corpus and every crash reproducer must pass, always
#         <name>          a short campaign (BV_FUZZ_TIME seconds, default 30) from CORPUS with a
#                         seed that changes from run to run and is printed (BV_FUZZ_SEED=N
#                         replays it), new inputs in the build tree, findings in
#                         build/fuzz/<name>/findings
#       and a step of `make fuzz` (the `fuzz` target): the same for BV_FUZZ_LONG seconds.
#       LINK: system libraries the code under test needs (e.g. -lnl-route-3), not instrumented.
#       ARGS go to libFuzzer (e.g. -max_len=4096); tests/fuzz/run_fuzz.sh runs all of it.
#
# A crash reproducer goes into REGRESS (named after what it found), so that <name>_regress runs
# it from then on; what a campaign added to the corpus goes into CORPUS with run_fuzz.sh
# --merge (minimised: only inputs that add coverage).
#
# BV_FUZZ is ON by default: without a clang that links -fsanitize=fuzzer the configuration stops
# with a message (tools/install-deps.sh installs clang and libclang-rt-14-dev); -DBV_FUZZ=OFF
# builds without the fuzz targets, on purpose.
option(BV_FUZZ "Build the libFuzzer targets (needs clang with libFuzzer)" ON)

set(BV_FUZZ_TIME 30 CACHE STRING "Seconds each fuzz target runs in ctest")
set(BV_FUZZ_LONG 600 CACHE STRING "Seconds each fuzz target runs in `make fuzz`")
set(BV_FUZZ_RUN ${CMAKE_SOURCE_DIR}/tests/fuzz/run_fuzz.sh)
set_property(GLOBAL PROPERTY BV_FUZZ_TARGETS "")

if(BV_FUZZ)
	find_program(BV_FUZZ_CLANG NAMES clang clang-16 clang-15 clang-14)
	if(NOT BV_FUZZ_CLANG)
		message(FATAL_ERROR "BV_FUZZ is ON (the default) but there is no clang: install "
			"clang and libclang-rt-14-dev (tools/install-deps.sh does), or configure "
			"with -DBV_FUZZ=OFF to build without the fuzz targets")
	endif()
	set(probe ${CMAKE_BINARY_DIR}/fuzz_probe.c)
	file(WRITE ${probe} "#include <stddef.h>\n#include <stdint.h>\n"
		"int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n"
		"int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n ? 0 : 0; }\n")
	execute_process(COMMAND ${BV_FUZZ_CLANG} -fsanitize=fuzzer,address,undefined ${probe}
		-o ${CMAKE_BINARY_DIR}/fuzz_probe RESULT_VARIABLE probe_rc
		ERROR_VARIABLE probe_err OUTPUT_QUIET)
	if(NOT probe_rc EQUAL 0)
		message(FATAL_ERROR "BV_FUZZ is ON but ${BV_FUZZ_CLANG} cannot link "
			"-fsanitize=fuzzer,address,undefined (install libclang-rt-14-dev; "
			"tools/install-deps.sh does), or configure with -DBV_FUZZ=OFF:\n${probe_err}")
	endif()
	message(STATUS "fuzz targets: built with ${BV_FUZZ_CLANG}")
endif()

set(BV_FUZZ_CFLAGS -std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
	-Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wmissing-prototypes
	-Wstrict-prototypes -fno-strict-aliasing
	# the GNU idiom of VFIO users (struct vfio_irq_set followed by its data), which gcc takes
	-Wno-gnu-variable-sized-type-not-at-end)

function(bv_fuzz_library)
	cmake_parse_arguments(L "" "NAME;TARGET" "EXCLUDE" ${ARGN})
	if(NOT BV_FUZZ OR TARGET bv_fuzzlib_${L_NAME})
		return()
	endif()
	get_target_property(srcs ${L_TARGET} SOURCES)
	get_target_property(dir ${L_TARGET} SOURCE_DIR)
	set(inc "$<TARGET_PROPERTY:${L_TARGET},INCLUDE_DIRECTORIES>")
	set(def "$<TARGET_PROPERTY:${L_TARGET},COMPILE_DEFINITIONS>")
	set(out ${CMAKE_BINARY_DIR}/fuzz/lib/${L_NAME})
	set(objs)
	set(headers)
	foreach(s ${srcs})
		if(NOT IS_ABSOLUTE ${s})
			set(s ${dir}/${s})
		endif()
		get_filename_component(base ${s} NAME)
		if(NOT base MATCHES "\\.c$" OR base IN_LIST L_EXCLUDE)
			continue()
		endif()
		get_filename_component(sdir ${s} DIRECTORY)
		file(GLOB h ${sdir}/*.h)
		list(APPEND headers ${h})
	endforeach()
	file(GLOB abi_headers ${CMAKE_SOURCE_DIR}/kernel-abi/*.h ${CMAKE_SOURCE_DIR}/common/*.h
		${CMAKE_SOURCE_DIR}/devices/*/*/*.h ${CMAKE_SOURCE_DIR}/devices/common/*.h)
	list(APPEND headers ${abi_headers})
	list(REMOVE_DUPLICATES headers)
	foreach(s ${srcs})
		if(NOT IS_ABSOLUTE ${s})
			set(s ${dir}/${s})
		endif()
		get_filename_component(base ${s} NAME)
		if(NOT base MATCHES "\\.c$" OR base IN_LIST L_EXCLUDE)
			continue()
		endif()
		set(o ${out}/${base}.o)
		add_custom_command(OUTPUT ${o}
			COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
			COMMAND ${BV_FUZZ_CLANG} ${BV_FUZZ_CFLAGS} -fsanitize=fuzzer-no-link
				"$<$<BOOL:${def}>:-D$<JOIN:${def},;-D>>"
				"-I$<JOIN:${inc},;-I>" -c ${s} -o ${o}
			DEPENDS ${s} ${headers} COMMAND_EXPAND_LISTS VERBATIM
			COMMENT "fuzz: ${L_NAME}/${base} (clang, instrumented)")
		list(APPEND objs ${o})
	endforeach()
	# The archive is made by the library's own target, not by a custom command that the
	# targets linking it list as a dependency: with the Makefile generator such a command is
	# copied into every target of the folder that depends on its output, and two of them ran
	# ar on the same archive at once under -j2 (a "Bus error" in a clean build). The archive
	# is written afresh each build and replaces the old one only when its bytes differ
	# (deterministic ar), so the targets relink only when an object changed.
	set(lib ${out}.a)
	add_custom_target(bv_fuzzlib_${L_NAME}
		COMMAND ${CMAKE_COMMAND} -E rm -f ${lib}.new
		COMMAND ${CMAKE_AR} qcD ${lib}.new ${objs}
		COMMAND ${CMAKE_RANLIB} -D ${lib}.new
		COMMAND ${CMAKE_COMMAND} -E copy_if_different ${lib}.new ${lib}
		DEPENDS ${objs} BYPRODUCTS ${lib} VERBATIM COMMENT "fuzz: ${L_NAME}.a")
	# a harness sees what the library's users see, and the library's own folder (its headers)
	set_target_properties(bv_fuzzlib_${L_NAME} PROPERTIES BV_FUZZ_ARCHIVE ${lib}
		BV_FUZZ_INCLUDES "${inc}" BV_FUZZ_DIR ${dir})
endfunction()

function(bv_fuzz_target)
	cmake_parse_arguments(T "" "NAME;HARNESS;CORPUS;REGRESS"
		"LIBS;INCLUDES;SOURCES;LINK;ARGS" ${ARGN})
	if(NOT BV_FUZZ)
		return()
	endif()
	set(bin ${CMAKE_BINARY_DIR}/bin/${T_NAME})
	set(archives)
	set(incs)
	set(deps)
	foreach(l ${T_LIBS})
		get_target_property(a bv_fuzzlib_${l} BV_FUZZ_ARCHIVE)
		get_target_property(i bv_fuzzlib_${l} BV_FUZZ_INCLUDES)
		get_target_property(d bv_fuzzlib_${l} BV_FUZZ_DIR)
		list(APPEND incs -I${d})
		list(APPEND archives ${a})
		# $<SEMICOLON>: a list once evaluated (COMMAND_EXPAND_LISTS), one element here
		list(APPEND incs "-I$<JOIN:${i},$<SEMICOLON>-I>")
		list(APPEND deps bv_fuzzlib_${l} ${a})
	endforeach()
	foreach(i ${T_INCLUDES})
		list(APPEND incs -I${i})
	endforeach()
	file(GLOB hdrs ${CMAKE_SOURCE_DIR}/kernel-abi/*.h ${CMAKE_SOURCE_DIR}/common/*.h
		${CMAKE_SOURCE_DIR}/devices/*/*/*.h ${CMAKE_SOURCE_DIR}/devices/common/*.h
		${CMAKE_CURRENT_SOURCE_DIR}/*.h)
	foreach(i ${T_INCLUDES})
		file(GLOB h ${i}/*.h)
		list(APPEND hdrs ${h})
	endforeach()
	add_custom_command(OUTPUT ${bin}
		COMMAND ${BV_FUZZ_CLANG} ${BV_FUZZ_CFLAGS} -fsanitize=fuzzer ${incs}
			${T_HARNESS} ${T_SOURCES} -Wl,--start-group ${archives} -Wl,--end-group
			${T_LINK} -lpthread -o ${bin}
		DEPENDS ${T_HARNESS} ${T_SOURCES} ${deps} ${hdrs} COMMAND_EXPAND_LISTS VERBATIM
		COMMENT "fuzz: ${T_NAME} (libFuzzer, ASan, UBSan)")
	add_custom_target(${T_NAME} ALL DEPENDS ${bin})

	set(run ${BV_FUZZ_RUN} --bin ${bin} --corpus ${T_CORPUS} --regress ${T_REGRESS}
		--work ${CMAKE_BINARY_DIR}/fuzz/${T_NAME})
	add_test(NAME ${T_NAME}_regress COMMAND ${run} --replay -- ${T_ARGS})
	set_tests_properties(${T_NAME}_regress PROPERTIES TIMEOUT 600)
	add_test(NAME ${T_NAME} COMMAND ${run} --time ${BV_FUZZ_TIME} -- ${T_ARGS})
	set_tests_properties(${T_NAME} PROPERTIES TIMEOUT 900)
	set_property(GLOBAL APPEND PROPERTY BV_FUZZ_TARGETS ${T_NAME})
	string(REPLACE ";" " " run "${run}")
	string(REPLACE ";" " " args "${T_ARGS}")
	set_property(GLOBAL APPEND_STRING PROPERTY BV_FUZZ_CAMPAIGN
		"${run} $mode --summary ${CMAKE_BINARY_DIR}/fuzz/summary.txt -- ${args} || status=1\n")
endfunction()

# `make fuzz` (cmake --build build --target fuzz): every target for BV_FUZZ_LONG seconds
# ($BV_FUZZ_LONG overrides it), one after the other, then the summary (executions, time, corpus,
# findings per target); `fuzz-merge`: what those runs found that adds coverage goes into the
# checked-in corpora. Call once, after every bv_fuzz_target() (the end of the top CMakeLists).
function(bv_fuzz_campaign)
	if(NOT BV_FUZZ)
		return()
	endif()
	get_property(targets GLOBAL PROPERTY BV_FUZZ_TARGETS)
	get_property(lines GLOBAL PROPERTY BV_FUZZ_CAMPAIGN)
	set(script ${CMAKE_BINARY_DIR}/fuzz/campaign.sh)
	set(summary ${CMAKE_BINARY_DIR}/fuzz/summary.txt)
	file(WRITE ${script} "#!/bin/sh\n# generated by cmake/bv_fuzz.cmake: campaign.sh [merge]\n"
		"status=0\nmode=\"--time \${BV_FUZZ_LONG:-${BV_FUZZ_LONG}}\"\n"
		"[ \"\${1:-}\" = merge ] && mode=--merge\n"
		"mkdir -p ${CMAKE_BINARY_DIR}/fuzz\n"
		"[ \"$mode\" = --merge ] || echo \"# make fuzz, $(date -u +%F) (seconds per target: \${BV_FUZZ_LONG:-${BV_FUZZ_LONG}})\" >${summary}\n"
		"${lines}"
		"[ \"$mode\" = --merge ] || cat ${summary}\nexit $status\n")
	add_custom_target(fuzz COMMAND sh ${script} DEPENDS ${targets} USES_TERMINAL VERBATIM
		COMMENT "fuzz: each target for ${BV_FUZZ_LONG} s")
	add_custom_target(fuzz-merge COMMAND sh ${script} merge DEPENDS ${targets} USES_TERMINAL
		VERBATIM COMMENT "fuzz: campaign inputs into the checked-in corpora")
endfunction()
