# bridgeverbs: a thin front over CMake. The quick start is two commands:
#   make demo    installs what is missing, builds, sets up devices, runs the demo
#   make test    installs what is missing, builds, runs the whole test suite
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= 2
CMAKE_ARGS ?=

.PHONY: all deps build demo test asan interop bench format lint clean

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
	BV_BUILD_DIR=$(CURDIR)/$(BUILD) BV_SOURCE_DIR=$(CURDIR) tests/integration/cx4_interop_rxe.sh
	BV_BUILD_DIR=$(CURDIR)/$(BUILD) BV_SOURCE_DIR=$(CURDIR) tests/rdmacm/rdmacm_interop_rxe.sh

# The performance targets of the cx4 issue, on the binaries just built (bench/cx4_bench.sh).
bench: build
	bench/cx4_bench.sh $(BUILD)

format: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) --target format

lint: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) --target lint

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
