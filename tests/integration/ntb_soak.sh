#!/bin/bash
# make soak: tests/integration/ntb_stress.sh with every case run NTB_SOAK_LOOPS times (1000),
# the reproducer of the "retry exceeded" flake looped a thousand times. Long (an hour or more
# on two loaded cores); not part of make test.
export NTB_STRESS_LOOPS=${NTB_SOAK_LOOPS:-1000} NTB_STRESS_PERFTEST=${NTB_SOAK_LOOPS:-1000}
export BV_TMO=${BV_TMO:-36000}
exec "$(dirname "$0")/ntb_stress.sh" "$@"
