#!/usr/bin/env bash
# `make tsan`: runs the ThreadSanitizer-built unit tests named on the command line from TSAN_BUILD/tests, then
# the agent's evaluation threads through TSAN_BUILD/kforge optimize (the demo's replayed transcript, two
# evaluations at once). The environment is tests/run.sh's, with the plain build's worker. Any race report
# fails the run. Usage: run.sh TSAN_BUILD PLAIN_BUILD TEST...
set -u
tsan=$1 plain=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
export KFORGE="$top/$tsan/kforge" KFORGE_WORKER="$top/$plain/kforge-worker"
export KFORGE_CACHE=${KFORGE_CACHE:-$top/build/test-cache}
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$top/tests/tsan/suppressions.txt ${TSAN_OPTIONS:-}"
logdir="$top/$tsan/test-logs"
mkdir -p "$logdir"
fail=0

check() {
	local name=$1 rc=$2 log="$logdir/$1.log" t=$3
	if [ "$rc" -ne 0 ] || grep -q 'WARNING: ThreadSanitizer' "$log"; then
		printf '%-24s FAILED (exit %d) — see %s\n' "$name" "$rc" "$log"
		grep -E -A12 'WARNING: ThreadSanitizer' "$log" | head -n 40 | sed 's/^/    /'
		grep -E 'FAIL' "$log" | head -n 10 | sed 's/^/    /'
		fail=$((fail + 1))
	else
		printf '%-24s ok (%ss) %s\n' "$name" "$t" "$(grep -E '^[0-9]+ passed' "$log" | tail -n 1)"
	fi
}

for name in "$@"; do
	t0=$(date +%s)
	"$tsan/tests/$name" >"$logdir/$name.log" 2>&1
	check "$name" $? $(($(date +%s) - t0))
done
out="$top/$tsan/optimize-out"
rm -rf "$out"
t0=$(date +%s)
"$KFORGE" optimize tasks/examples/vector_add_f32/task.json --provider replay \
	--replay tests/data/demo/vector_add_f32.jsonl --backend cpu --concurrency 2 --seed 42 --budget-calls 8 \
	--out "$out" --db "$out/kforge.db" >"$logdir/optimize.log" 2>&1
check optimize $? $(($(date +%s) - t0))
[ "$fail" -eq 0 ]
