#!/bin/bash
# Issue 2 acceptance: a program opens every device, creates a completion channel through the
# shim, queries device, port, GID table and pkeys, and closes cleanly, under valgrind.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
bv_up
BV_VALGRIND=${BV_VALGRIND:-1} bv_run_vg "$BV_BUILD_DIR/bin/test_open_all" 4 || bv_fail "open_all"
echo "PASS"
