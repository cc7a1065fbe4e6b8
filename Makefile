# bridgeverbs: a thin front over CMake. The quick start is two commands:
#   make demo    installs what is missing, builds, sets up devices, runs the demo
#   make test    installs what is missing, builds, runs the whole test suite
#   make fuzz    runs every fuzz target for 10 minutes
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= 2
CMAKE_ARGS ?=

.PHONY: all deps build demo test asan interop soak soak-ntb bench fuzz fuzz-merge package-test\
	format lint clean

all: build

deps:
	@tools/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

demo: build
	$(BUILD)/bin/bvctl setup
	$(BUILD)/bin/bvctl demo

test: build
	cd $(BUILD) && ctest -j$(JOBS) --output-on-failure $(CTEST_ARGS)

# The suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer.
asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBV_SANITIZE=ON $(CMAKE_ARGS)
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ctest -j$(JOBS) --output-on-failure $(CTEST_ARGS)

# Interop with Linux soft-RoCE in an emulated VM (slow): tests/integration/cx4_interop_rxe.sh
# (verbs) and tests/rdmacm/rdmacm_interop_rxe.sh (the kernel's rdma_cm).
interop: build
	@tools/install-deps.sh interop
	BV_BUILD_DIR=$(CURDIR)/$(BUILD) BV_SOURCE_DIR=$(CURDIR) tests/integration/cx4_interop_rxe.sh
	BV_BUILD_DIR=$(CURDIR)/$(BUILD) BV_SOURCE_DIR=$(CURDIR) tests/rdmacm/rdmacm_interop_rxe.sh

# The long reliability runs (docs/reliability.md): RC through the lossy wire with 1 GiB per
# opcode (the suite's cx4_lossy moves a few MiB), then the ntb engine's reproducers looped a
# thousand times (soak-ntb, tests/integration/ntb_soak.sh). Hours on 2 cores; SOAK_BYTES and
# NTB_SOAK_LOOPS to change them.
SOAK_BYTES ?= 1G
soak: build
	BV_BUILD_DIR=$(CURDIR)/$(BUILD) BV_SOURCE_DIR=$(CURDIR) CX4_LOSSY_BYTES=$(SOAK_BYTES) BV_TMO=28800 \
		CX4_LOSSY_QPS=8 tests/integration/cx4_lossy.sh
	BV_BUILD_DIR=$(CURDIR)/$(BUILD) BV_SOURCE_DIR=$(CURDIR) tests/integration/ntb_soak.sh

soak-ntb: build
	BV_BUILD_DIR=$(CURDIR)/$(BUILD) BV_SOURCE_DIR=$(CURDIR) tests/integration/ntb_soak.sh

# Every transport against the machine's baselines, on the binaries just built (bench/bench.sh:
# report, JSON, CSV and plots in $(BUILD)/bench; docs/performance.md). BENCH_QUICK=1: ~3 min.
bench: build
	tools/install-deps.sh bench
	bench/bench.sh $(BUILD)

# Every libFuzzer target for FUZZ_TIME seconds (default 600), one at a time, at the lowest CPU
# priority; the figures end up in $(BUILD)/fuzz/summary.txt (docs/reliability.md, "Fuzzing").
# fuzz-merge then adds what the runs found (inputs with new coverage) to the checked-in corpora.
FUZZ_TIME ?= 600
fuzz: build
	BV_FUZZ_LONG=$(FUZZ_TIME) nice -n 19 cmake --build $(BUILD) --target fuzz

fuzz-merge: build
	nice -n 19 cmake --build $(BUILD) --target fuzz-merge

# The Debian packages: built, lintian-checked, installed into a fresh Debian 12 root and used
# there, then purged (tests/package/package-test.sh; the first run downloads the root).
package-test:
	@tools/install-deps.sh package
	tests/package/package-test.sh

format: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) --target format

lint: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) --target lint

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
