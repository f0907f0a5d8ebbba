#!/usr/bin/env bash
# Runs every unit test binary in BUILD/tests and every integration script in tests/integration against
# the binaries in BUILD; sums their "N passed, N failed[, N skipped]" lines. The last line printed is the
# total; the exit code is non-zero when anything failed or a runner did not report.
set -u
build=${1:-build/asan}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export KFORGE="$top/$build/kforge" KFORGE_WORKER="$top/$build/kforge-worker"
export KFORGE_CACHE=${KFORGE_CACHE:-$top/build/test-cache}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logdir="$top/$build/test-logs"
mkdir -p "$logdir"
pass=0 fail=0 skip=0 broken=0

run_one() {
	local name=$1; shift
	local log="$logdir/$name.log" t0 t1 line p f s rc
	t0=$(date +%s.%N)
	"$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		printf '%-34s BROKEN (exit %d, no summary) — see %s\n' "$name" "$rc" "$log"
		tail -n 20 "$log" | sed 's/^/    /'
		broken=$((broken + 1))
		fail=$((fail + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
	s=${s:-0}
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		printf '%-34s exit %d with 0 failures reported — counted as a failure\n' "$name" "$rc"
		fail=$((fail + 1))
	fi
	printf '%-34s %s  (%.1fs)\n' "$name" "$line" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
	if [ "$f" -gt 0 ]; then
		grep -E 'FAIL|ERROR|error:' "$log" | head -n 20 | sed 's/^/    /'
	fi
}

for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	[ "$(basename "$t")" = lib.sh ] && continue
	run_one "$(basename "$t" .sh)" bash "$t"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
