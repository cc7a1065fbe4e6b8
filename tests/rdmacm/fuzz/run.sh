#!/bin/sh
# run.sh BIN CORPUS smoke|campaign: cm_mad_fuzz from a corpus of the seeds (seeds.py) and the
# regression inputs (regress/). smoke: a fixed seed, 30000 inputs (ctest); campaign: 10
# minutes (CM_FUZZ_SECONDS), the corpus kept and grown. The daemon's log is silenced (libFuzzer
# and the sanitizers still report). Findings (crash-*, timeout-*, leak-*)
# stay in the current folder; replay one with: BIN FILE.
set -e
bin=$1 corpus=$2 mode=$3
here=$(dirname "$0")
if [ "$mode" = smoke ] || [ ! -d "$corpus" ]; then
	rm -rf "$corpus"
	python3 "$here/seeds.py" "$corpus"
fi
for f in "$here"/regress/*; do
	[ -f "$f" ] && cp "$f" "$corpus/"
done
case $mode in
smoke) set -- -runs=30000 -seed=1 ;;
campaign) set -- -max_total_time="${CM_FUZZ_SECONDS:-600}" ;;
*) echo "run.sh: smoke or campaign" >&2; exit 2 ;;
esac
exec "$bin" "$corpus" "$@" -max_len=4096 -timeout=30 -rss_limit_mb=4096 -close_fd_mask=3 \
	-print_final_stats=1
