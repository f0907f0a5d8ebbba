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

# run_one NAME CMD...: runs CMD with its output in the log and leaves the runner's line in NAME.summary:
# "N passed, N failed, N skipped" with the time, BROKEN when the runner printed no summary, and a failure
# counted when it exited non-zero with none reported. Safe to run several at once.
run_one() {
	local name=$1; shift
	local log="$logdir/$name.log" sum="$logdir/$name.summary" t0 t1 line f rc
	t0=$(date +%s.%N)
	"$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	{
		if [ -z "$line" ]; then
			printf 'BROKEN %-34s BROKEN (exit %d, no summary) — see %s\n' "$name" "$rc" "$log"
			tail -n 20 "$log" | sed 's/^/    /'
		else
			f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
			printf 'LINE %s\t%s\t%d\t%.1f\n' "$name" "$line" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
			[ "$f" -gt 0 ] && grep -E 'FAIL|ERROR|error:' "$log" | head -n 20 | sed 's/^/    /'
		fi
	} >"$sum"
}

# report NAME: prints NAME's summary and adds it to the totals
report() {
	local sum="$logdir/$1.summary" name line rc secs p f s
	if [ ! -f "$sum" ]; then
		printf '%-34s BROKEN (no summary file)\n' "$1"
		broken=$((broken + 1)) fail=$((fail + 1))
		return
	fi
	if head -n 1 "$sum" | grep -q '^BROKEN '; then
		sed '1s/^BROKEN //' "$sum"
		broken=$((broken + 1)) fail=$((fail + 1))
		return
	fi
	IFS=$'\t' read -r name line rc secs < <(head -n 1 "$sum" | sed 's/^LINE //')
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
	s=${s:-0}
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		printf '%-34s exit %d with 0 failures reported — counted as a failure\n' "$name" "$rc"
		fail=$((fail + 1))
	fi
	printf '%-34s %s  (%ss)\n' "$name" "$line" "$secs"
	tail -n +2 "$sum"
}

for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
	report "$(basename "$t")"
done

# Integration scripts. Those whose header says "# kforge-test: parallel" (no timing, no time limits they
# could miss on a loaded machine) run KFORGE_TEST_JOBS (default nproc) at a time, first; the others alone,
# one after the other, as the timing checks need a quiet machine.
par=() ser=()
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	[ "$(basename "$t")" = lib.sh ] && continue
	if head -n 12 "$t" | grep -q '^# kforge-test: parallel'; then par+=("$t"); else ser+=("$t"); fi
done
jobs_max=${KFORGE_TEST_JOBS:-$(nproc)}
running=0
for t in "${par[@]}"; do
	if [ "$running" -ge "$jobs_max" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_one "$(basename "$t" .sh)" bash "$t" &
	running=$((running + 1))
done
wait
for t in "${par[@]}"; do report "$(basename "$t" .sh)"; done
for t in "${ser[@]}"; do
	run_one "$(basename "$t" .sh)" bash "$t"
	report "$(basename "$t" .sh)"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
