#!/usr/bin/env bash
# Runs every libFuzzer target in DIR (built by `make fuzz`) for SECONDS each over its seed corpus
# (tests/fuzz/corpus/NAME, read only) and a working corpus under DIR/corpus/NAME that keeps what it finds
# between runs. A crash, leak, UB report or timeout leaves its input under DIR/artifacts and fails the run.
set -u
dir=${1:-build/fuzz}
secs=${2:-30}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# max_len per target, in bytes: about twice the largest real input of its kind
declare -A max_len=([task]=8192 [kfile]=8192 [reply]=16384 [llm_wire]=8192 [proto]=32768)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Seeds that are files of the tree itself (read from where they live, not copied into the corpus)
declare -A tree_seeds=([kfile]="tasks/l1/cross_entropy_f32/reference.cu tasks/l1/mse_loss_f32/reference.cu
	tasks/l3/transformer_layer_f32/reference.cu tasks/examples/vector_add_f32/baseline.cu tests/data/llm/parent.cu")
# fuzz_one BIN: one target for SECONDS; its line (ok or FAILED, with the reason) goes to DIR/NAME.status
fuzz_one() {
	local bin=$1 name work art seeds log t0 rc runs cov f
	name=$(basename "$bin" | sed 's/^fuzz_//')
	work="$dir/corpus/$name" art="$dir/artifacts/$name"
	seeds="$dir/seeds/$name"
	mkdir -p "$work" "$art" "$seeds"
	for f in ${tree_seeds[$name]:-}; do cp "$f" "$seeds/$(echo "$f" | tr / _)"; done
	log="$dir/$name.log"
	t0=$(date +%s)
	"$bin" -max_total_time="$secs" -max_len="${max_len[$name]:-4096}" -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="$art/" "$work" "tests/fuzz/corpus/$name" "$seeds" >"$log" 2>&1
	rc=$?
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log")
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)
	if [ "$rc" -ne 0 ]; then
		{ printf 'fuzz_%-10s FAILED (exit %d) after %ss — see %s\n' "$name" "$rc" "$(($(date +%s) - t0))" "$log"
		  grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 10 | sed 's/^/    /'; } >"$dir/$name.status"
		return 1
	fi
	printf 'fuzz_%-10s ok: %s runs, %s (%ss)\n' "$name" "${runs:-?}" "${cov:-cov: ?}" "$(($(date +%s) - t0))" >"$dir/$name.status"
}
# the targets nproc at a time (each is one single-threaded process)
rm -f "$dir"/*.status
jobs_max=$(nproc)
running=0
for bin in "$dir"/fuzz_*; do
	[ -x "$bin" ] || continue
	if [ "$running" -ge "$jobs_max" ]; then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "$bin" &
	running=$((running + 1))
done
wait
fail=0
for bin in "$dir"/fuzz_*; do
	[ -x "$bin" ] || continue
	st="$dir/$(basename "$bin" | sed 's/^fuzz_//').status"
	if [ -f "$st" ]; then cat "$st"; else echo "$(basename "$bin"): no status"; fail=$((fail + 1)); fi
	grep -q FAILED "$st" 2>/dev/null && fail=$((fail + 1))
done
[ "$fail" -eq 0 ]
