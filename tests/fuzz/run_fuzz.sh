#!/bin/sh
# Run one libFuzzer target of cmake/bv_fuzz.cmake (docs/reliability.md, "Fuzzing").
#
#   run_fuzz.sh --bin B --corpus C --regress R --work W MODE [--summary F] [-- LIBFUZZER ARGS]
#
# MODE
#   --replay      every input of C (the checked-in corpus) and R (crash reproducers) once, in
#                 name order, no mutation: any crash, sanitizer report or harness abort fails
#   --time T      fuzz for T seconds from W/corpus (what earlier runs found, kept in the build
#                 tree), C and R. The seed is $BV_FUZZ_SEED, else a new one; it is printed, so
#                 that BV_FUZZ_SEED=N replays the run. Findings go to W/findings/ and fail the
#                 run; with --summary a line of figures (executions, seconds, corpus, findings)
#                 is appended to F
#   --merge       add to C what W/corpus has that C does not cover (libFuzzer -merge=1): how a
#                 campaign's inputs get checked in
set -u
bin= corpus= regress= work= mode= time= summary=
while [ $# -gt 0 ]; do
	case "$1" in
	--bin) bin=$2; shift 2 ;;
	--corpus) corpus=$2; shift 2 ;;
	--regress) regress=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--replay) mode=replay; shift ;;
	--merge) mode=merge; shift ;;
	--time) mode=time; time=$2; shift 2 ;;
	--summary) summary=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "run_fuzz.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -z "$bin" ] || [ -z "$corpus" ] || [ -z "$regress" ] || [ -z "$work" ] || [ -z "$mode" ]; then
	sed -n '2,20p' "$0" >&2
	exit 2
fi
name=$(basename "$bin")
[ -x "$bin" ] || { echo "$name: $bin is not built" >&2; exit 1; }
mkdir -p "$work/corpus" "$work/findings" "$corpus" "$regress"
# leaks are the daemons' business at exit, not per input (the harnesses check descriptors)
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}:abort_on_error=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
common="-timeout=30 -rss_limit_mb=4096"

case $mode in
replay)
	files=$(find "$corpus" "$regress" -type f ! -name '.*' | sort)
	n=$(echo "$files" | grep -c .)
	echo "$name: replaying $n inputs of $corpus and $regress"
	[ "$n" -gt 0 ] || { echo "$name: no inputs to replay" >&2; exit 1; }
	# shellcheck disable=SC2086
	"$bin" $common -runs=1 "$@" $files >"$work/replay.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		tail -n 60 "$work/replay.log"
		echo "$name: an input failed (exit $rc); log: $work/replay.log" >&2
		exit 1
	fi
	ran=$(grep -c '^Executed ' "$work/replay.log")
	echo "$name: $ran of $n inputs ran, no finding"
	[ "$ran" -eq "$n" ] || { tail -n 20 "$work/replay.log"; exit 1; }
	;;
time)
	seed=${BV_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
	seed=$((seed % 4294967295 + 1))
	before=$(ls "$work/findings" | wc -l)
	echo "$name: seed $seed, $time s (replay: BV_FUZZ_SEED=$seed), corpus $corpus + $work/corpus"
	start=$(date +%s)
	# shellcheck disable=SC2086
	"$bin" $common -seed="$seed" -max_total_time="$time" -print_final_stats=1 \
		-artifact_prefix="$work/findings/" "$@" "$work/corpus" "$corpus" "$regress" \
		>"$work/last.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/last.log" | tail -n1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/last.log" | tail -n1)
	cov=$(grep -o 'cov: [0-9]*' "$work/last.log" | tail -n1 | cut -d' ' -f2)
	ncorpus=$(($(ls "$corpus" | wc -l) + $(ls "$work/corpus" | wc -l)))
	found=$(($(ls "$work/findings" | wc -l) - before))
	line=$(printf '%-20s seed %-10s %6s s %10s execs %7s/s cov %6s corpus %5s findings %s' \
		"$name" "$seed" "$secs" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$ncorpus" "$found")
	echo "$line"
	[ -n "$summary" ] && echo "$line" >>"$summary"
	if [ $rc -ne 0 ] || [ "$found" -ne 0 ]; then
		grep -B2 -A40 -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|UndefinedBehavior)|runtime error|^[a-z_]+: .*' \
			"$work/last.log" | head -n 80
		echo "$name: FINDING (exit $rc): $work/findings/ (replay: $bin FILE;" \
			"keep it as $regress/<what-it-found>); log $work/last.log" >&2
		exit 1
	fi
	;;
merge)
	# shellcheck disable=SC2086
	"$bin" $common -merge=1 "$@" "$corpus" "$work/corpus" >"$work/merge.log" 2>&1 ||
		{ tail -n 30 "$work/merge.log"; exit 1; }
	grep -E 'MERGE-OUTER: [0-9]+ new files' "$work/merge.log"
	;;
esac
