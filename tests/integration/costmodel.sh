#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: the model's predictions are deterministic counts, not times)
# The GPU cost model through kforge profile --backend cpu --json (docs/cost-model.md): each pair of
# tests/data/costmodel is predicted in the direction GPU engineers know (fast.cu against reference.cu at
# the task's timing shape), the examples' tiled matmul beats the naive one, the report says "clock":
# "model" with an A/A of 1 for a deterministic sample; the hostile kernels do not fool it (a kernel
# coalesced only in its first blocks is predicted as the strided kernel it mostly is; a kernel that tells
# clang from g++ is rejected by verification); an offline optimize on the softmax task ranks the
# warp-per-row kernel above the thread-per-row one (the CPU clock ranks them the other way round).
. "$(dirname "$0")/lib.sh"
D=$TOP/tests/data/costmodel
if ! command -v "${KFORGE_SAN_CXX:-clang++-14}" >/dev/null; then
	skip "no ${KFORGE_SAN_CXX:-clang++-14} here: no instrumented build, no model clock (make deps installs clang-14)"
	finish
	exit
fi
# model FIELD-EXPRESSION < profile.json
model() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" 2>/dev/null; }

# profile TASK KERNEL: the JSON in $TMP/p.json, exit code in $RC
profile() {
	"$KFORGE" profile "$1" "$2" --backend cpu --json >"$TMP/p.json" 2>"$TMP/p.err"
	RC=$?
}

# pair NAME MIN [FAST]: fast.cu (or FAST) predicted at least MIN times faster than reference.cu
pair() {
	local name=$1 min=$2 fast=${3:-$D/$1/fast.cu}
	profile "$D/$name/task.json" "$fast"
	local clock sp aa cb rb
	clock=$(model 'd["clock"]' <"$TMP/p.json")
	sp=$(model 'd["model"]["speedup"]' <"$TMP/p.json")
	aa=$(model 'd["model"]["aa"]' <"$TMP/p.json")
	cb=$(model 'd["model"]["candidate"]["bound"]' <"$TMP/p.json")
	rb=$(model 'd["model"]["reference"]["bound"]' <"$TMP/p.json")
	if [ "$RC" -eq 0 ] && [ "$clock" = model ] && python3 -c "import sys; sys.exit(not float('$sp') >= $min)"; then
		ok "$name: $(basename "$fast") predicted ${sp}x the reference (>= ${min}x; bound by $cb vs $rb), clock model"
	else
		bad "$name: exit $RC, clock '$clock', predicted speedup '$sp' (want >= $min): $(head -c 400 "$TMP/p.err")"
	fi
	if python3 -c "import sys; sys.exit(not abs(float('$aa') - 1) < 0.05)" 2>/dev/null; then
		ok "$name: the A/A prediction (other sampled blocks, other inputs) is ${aa}x"
	else
		bad "$name: A/A '$aa'"
	fi
}
pair copy_strided 4
pair transpose_smem 1.05
pair matmul_tiled 1.5 "$TOP/tasks/examples/matmul_f32/tiled.cu"
pair softmax_rows 2 "$TOP/tasks/examples/softmax_rows_f32/baseline.cu"
pair occupancy_latency 1

# the examples' matmul: the tiled kernel against the naive reference, with the counters shown
profile "$TOP/tasks/examples/matmul_f32/task.json" "$TOP/tasks/examples/matmul_f32/tiled.cu"
sp=$(model 'd["model"]["speedup"]' <"$TMP/p.json")
sh=$(model 'd["model"]["candidate"]["launches"][0]["counts"]["sh_requests"]' <"$TMP/p.json")
spl=$(model 'd["model"]["reference"]["launches"][0]["sectors_per_load"]' <"$TMP/p.json")
if [ "$RC" -eq 0 ] && [ "$(model 'd["clock"]' <"$TMP/p.json")" = model ] &&
	python3 -c "import sys; sys.exit(not (float('$sp') > 1 and float('$sh') > 0 and 0 < float('$spl') <= 4))"; then
	ok "matmul_f32: the tiled kernel predicted ${sp}x the naive one (its shared requests counted: $sh; the naive kernel's loads $spl sectors each)"
else
	bad "matmul_f32: exit $RC speedup '$sp' shared '$sh' sectors/load '$spl': $(head -c 400 "$TMP/p.err")"
fi
# the text form labels its numbers
"$KFORGE" profile "$TOP/tasks/examples/matmul_f32/task.json" "$TOP/tasks/examples/matmul_f32/tiled.cu" --backend cpu >"$TMP/p.txt" 2>&1
if grep -q "model clock (GPU cost model v1, NVIDIA H100 SXM; predictions from an instrumented run, not measured)" "$TMP/p.txt" &&
	grep -q "CPU times of the fiber runtime, not GPU speed" "$TMP/p.txt" && grep -q "bound by" "$TMP/p.txt"; then
	ok "profile's text shows the model's predictions and the CPU times, each labelled"
else
	bad "profile's text: $(head -c 800 "$TMP/p.txt")"
fi
# another target, and no model when asked for the CPU clock
profile "$TOP/tasks/examples/matmul_f32/task.json" "$TOP/tasks/examples/matmul_f32/tiled.cu"
"$KFORGE" profile "$TOP/tasks/examples/matmul_f32/task.json" "$TOP/tasks/examples/matmul_f32/tiled.cu" --backend cpu --json --target a10 >"$TMP/a10.json" 2>&1
if [ "$(model 'd["model"]["target"]' <"$TMP/a10.json")" = a10 ] &&
	python3 -c "import json; a=json.load(open('$TMP/a10.json'))['model']; h=json.load(open('$TMP/p.json'))['model']; exit(not a['candidate']['predicted_ns'] > h['candidate']['predicted_ns'])"; then
	ok "--target a10 predicts for an A10, slower than the H100"
else
	bad "--target a10: $(head -c 400 "$TMP/a10.json")"
fi
"$KFORGE" profile "$TOP/tasks/examples/matmul_f32/task.json" "$TOP/tasks/examples/matmul_f32/tiled.cu" --backend cpu --json --fitness cpu >"$TMP/c.json" 2>&1
if [ "$(model 'd["clock"]' <"$TMP/c.json")" = cpu ] && [ "$(model '"model" in d' <"$TMP/c.json")" = False ]; then
	ok "--fitness cpu: CPU times only, clock cpu"
else
	bad "--fitness cpu: $(head -c 400 "$TMP/c.json")"
fi
expect_exit 2 "--target h900 is a usage error naming the targets" -- "$KFORGE" profile "$TOP/tasks/examples/matmul_f32/task.json" "$TOP/tasks/examples/matmul_f32/tiled.cu" --backend cpu --target h900
case "$ERR_TXT" in *h100*b200*) ok "the error lists the targets" ;; *) bad "error: $ERR_TXT" ;; esac

# hostile: coalesced only in blocks 0..63 (hoping the sampler looks at the first blocks only)
profile "$D/copy_strided/task.json" "$D/hostile/front_loaded.cu"
sp=$(model 'd["model"]["speedup"]' <"$TMP/p.json")
if [ "$RC" -eq 0 ] && python3 -c "import sys; sys.exit(not float('$sp') < 1.5)"; then
	ok "front_loaded.cu (coalesced in its first 64 blocks only) is predicted ${sp}x the strided reference, not the coalesced kernel's"
else
	bad "front_loaded.cu: exit $RC, predicted ${sp}x: $(head -c 400 "$TMP/p.err")"
fi
# hostile: another result under clang (the instrumented build) than under g++ (the plain one)
expect_exit 1 "clang_feature.cu (a shortcut under #ifdef __has_feature, taken on the GPU) is rejected" -- "$KFORGE" verify "$D/copy_strided/task.json" "$D/hostile/clang_feature.cu" --backend cpu
case "$OUT_TXT" in *"verdict: wrong_output"*) ok "... as wrong_output: both cpu builds take NVRTC's side" ;; *) bad "clang_feature: $(echo "$OUT_TXT" | tail -3)" ;; esac
expect_exit 1 "clang_builtin.cu (a shortcut only clang's build takes) is rejected" -- "$KFORGE" verify "$D/copy_strided/task.json" "$D/hostile/clang_builtin.cu" --backend cpu
case "$OUT_TXT" in *"instrumented build (clang) computed other outputs"*) ok "... because its instrumented build computes other outputs" ;; *) bad "clang_builtin: $(echo "$OUT_TXT" | tail -3)" ;; esac

# an offline optimize on the softmax task: the model ranks warp per row above thread per row
out=$TMP/opt
"$KFORGE" optimize "$TOP/tasks/examples/softmax_rows_f32/task.json" --provider replay --replay "$D/softmax_rows.jsonl" \
	--backend cpu --concurrency 1 --seed 42 --budget-calls 3 --out "$out" --db "$out/kb.db" --json >"$TMP/o.json" 2>"$TMP/o.err"
rc=$?
rank=$(python3 - "$out/kb.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT c.source, e.speedup, e.arch, (SELECT group_concat(t.clock) FROM timings t WHERE t.evaluation_id = e.id) "
                  "FROM evaluations e JOIN candidates c ON c.id = e.candidate_id WHERE e.verdict = 'pass'").fetchall()
sp = {}
for src, s, arch, clocks in rows:
    name = 'warp' if 'softmax_warp' in src else 'thread' if 'softmax_thread' in src else 'other'
    sp[name] = (s, arch, clocks)
ok = 'warp' in sp and 'thread' in sp and sp['warp'][0] > sp['thread'][0] and sp['warp'][1].startswith('model-v1-') \
     and 'model' in sp['warp'][2] and 'cpu' in sp['warp'][2]
print(('ok ' if ok else 'bad ') + repr(sp))
EOF
)
if [ "$rc" -eq 0 ] && [ "$(model 'd["clock"]' <"$TMP/o.json")" = model ] && [ "${rank%% *}" = ok ]; then
	ok "optimize on the model clock ranks warp per row above thread per row: ${rank#ok }"
else
	bad "optimize: exit $rc clock '$(model 'd["clock"]' <"$TMP/o.json")': $rank $(head -c 300 "$TMP/o.err")"
fi
if grep -q "clock | model: the GPU cost model" "$out/report.md" && grep -q "| model |" "$out/report.md" && grep -q "| cpu |" "$out/report.md"; then
	ok "the run report shows predicted and CPU times side by side, labelled"
else
	bad "report.md: $(grep -n clock "$out/report.md" | head -5)"
fi
finish
