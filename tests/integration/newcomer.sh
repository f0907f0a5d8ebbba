#!/usr/bin/env bash
# The newcomer's path of tasks/examples/README.md, command for command, in a clean folder: verify the sample
# candidates, `tasks new --from` a kernel of one's own, validate (the TODO fields named), fill them in,
# validate and verify, optimize offline with the replay transcript, report, export --header (compiled by
# nvcc) and --torch (byte-compiled); then every --template: validate --strict, verify, and lint on the cpu
# backend (tasks lint on a folder); a typo'd command's suggestion; and the errors of tasks new.
source "$(dirname "$0")/lib.sh"
E=$TOP/tasks/examples
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
cd "$TMP"

# 0. the cost model: the tiled matmul predicted faster than the naive reference (clock model)
if command -v "${KFORGE_SAN_CXX:-clang++-14}" >/dev/null; then
	expect_exit 0 "profile the tiled matmul on the cpu backend" -- "$KFORGE" profile "$E/matmul_f32/task.json" "$E/matmul_f32/tiled.cu" --backend cpu
	sp=$(sed -n 's/^  predicted speedup \([0-9.]*\)x.*/\1/p' <<<"$OUT_TXT")
	grep -q "^model clock (GPU cost model v1" <<<"$OUT_TXT" && python3 -c "import sys; sys.exit(not float('${sp:-0}') > 1)" &&
		ok "the model clock predicts the tiled kernel ${sp}x faster" || bad "profile: $(head -c 600 <<<"$OUT_TXT")"
else
	skip "the cost model needs clang-14 (make deps)"
fi

# 1. a task, a reference, a candidate
expect_exit 0 "verify the sample candidate" -- "$KFORGE" verify "$E/vector_add_f32/task.json" "$E/vector_add_f32/candidate.cu" --backend cpu
grep -q "^verdict: pass" <<<"$OUT_TXT" && ok "the candidate passes" || bad "verify: $(tail -3 <<<"$OUT_TXT")"
expect_exit 1 "verify the candidate without a tail" -- "$KFORGE" verify "$E/vector_add_f32/task.json" "$E/vector_add_f32/candidate_no_tail.cu" --backend cpu
grep -q "^verdict: out_of_bounds" <<<"$OUT_TXT" && ok "rejected as out_of_bounds, as the README says" || bad "verify: $(tail -3 <<<"$OUT_TXT")"

# 2. bring your own kernel
expect_exit 0 "tasks new --from" -- "$KFORGE" tasks new scale_add --from "$E/byo/scale_add.cu" --dir my-task
grep -q "3 fields marked TODO" <<<"$OUT_TXT" && ok "three fields left to fill in" || bad "tasks new: $OUT_TXT"
grep -q "^// kforge:launch scale_add grid=(cdiv(n, 256)) block=(256) args=(a, b, out, alpha, n)$" my-task/reference.cu &&
	ok "the launch proposed from the indexing pattern" || bad "reference: $(grep kforge: my-task/reference.cu)"
expect_exit 2 "validate names the TODO fields" -- "$KFORGE" tasks validate my-task/task.json
for f in "title: TODO" "description: TODO" "params\[0\].value: TODO"; do
	grep -q "my-task/task.json: $f" <<<"$ERR_TXT" && ok "named: $f" || bad "not named: $f: $ERR_TXT"
done
python3 - <<'PY'
import json
p = "my-task/task.json"
t = json.load(open(p))
t["title"] = "Scaled vector addition, fp32"
t["description"] = "out[i] = alpha * a[i] + b[i] for i in [0, n)."
t["params"][0]["value"] = 2.5
json.dump(t, open(p, "w"), indent=2)
PY
expect_exit 0 "validate after the edit" -- "$KFORGE" tasks validate my-task/task.json
expect_exit 0 "verify the new task's reference" -- "$KFORGE" verify my-task/task.json my-task/reference.cu --backend cpu

# 3. a first optimize, offline
expect_exit 0 "optimize with the replay transcript" -- "$KFORGE" optimize my-task/task.json --provider replay \
	--replay "$E/byo/scale_add.jsonl" --backend cpu --fitness cpu --budget-calls 3 --concurrency 1 --seed 1 --out my-run --db my.db --json
python3 - "$OUT_TXT" >opt.txt 2>&1 <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert d["improved"] and d["clock"] == "cpu", d
assert d["by_verdict"].get("out_of_bounds") == 1 and d["by_verdict"].get("pass") == 2, d["by_verdict"]
PY
[ $? -eq 0 ] && ok "one rejected, two verified, improved on the CPU clock" || bad "optimize: $(cat opt.txt)"
[ -s my-run/best.cu ] && [ -s my-run/report.html ] && ok "best.cu and the report written" || bad "my-run: $(ls my-run)"
expect_exit 0 "kforge report 1" -- "$KFORGE" report 1 --db my.db
expect_exit 0 "export run:1 --header" -- "$KFORGE" export run:1 --db my.db --header -o scale_add.h
expect_exit 0 "export run:1 --torch" -- "$KFORGE" export run:1 --db my.db --torch -o scale_add_ext.py
if [ -x "$NVCC" ]; then
	printf '#define KFORGE_SCALE_ADD_IMPLEMENTATION\n#include "scale_add.h"\n' >impl.cu
	"$NVCC" -std=c++17 -arch=sm_90 -c impl.cu -o impl.o 2>nvcc.log && ok "nvcc compiles the exported header" ||
		bad "nvcc: $(head -c 600 nvcc.log)"
else
	skip "nvcc compile of the exported header ($NVCC not found)"
fi
python3 -m py_compile scale_add_ext.py test_scale_add_ext.py 2>pyc.log && ok "the torch module and its test byte-compile" ||
	bad "py_compile: $(cat pyc.log)"

# every template: a complete task
for k in elementwise reduction rowwise gemm conv scan; do
	expect_exit 0 "tasks new --template $k" -- "$KFORGE" tasks new "t_$k" --template "$k" --dir "tpl/$k"
	expect_exit 0 "$k: validate --strict" -- "$KFORGE" tasks validate --strict "tpl/$k/task.json"
	expect_exit 0 "$k: the reference verifies" -- "$KFORGE" verify "tpl/$k/task.json" "tpl/$k/reference.cu" --backend cpu
done
# tasks lint takes folders, as the docs say (tasks lint tasks/l1)
expect_exit 0 "tasks lint on the folder of templates" -- "$KFORGE" tasks lint --backend cpu tpl
[ "$(grep -c '^ok t_' <<<"$OUT_TXT")" -eq 6 ] && ok "every template lints clean" || bad "lint: $OUT_TXT $ERR_TXT"
expect_exit 2 "tasks lint on a missing folder" -- "$KFORGE" tasks lint --backend cpu "$TMP/nope"

# a typo'd command gets a suggestion
expect_exit 2 "a typo'd command" -- "$KFORGE" expot run:1
grep -q "did you mean 'export'?" <<<"$ERR_TXT" && ok "did you mean 'export'?" || bad "typo: $ERR_TXT"
expect_exit 2 "a word far from every command" -- "$KFORGE" xyzzy
! grep -q "did you mean" <<<"$ERR_TXT" && ok "no suggestion for a word far from every command" || bad "typo: $ERR_TXT"

# errors: nothing written, nothing overwritten
expect_exit 2 "tasks new without --from or --template" -- "$KFORGE" tasks new x
expect_exit 2 "tasks new with both" -- "$KFORGE" tasks new x --from "$E/byo/scale_add.cu" --template gemm
expect_exit 2 "an unknown template" -- "$KFORGE" tasks new x --template softmax
grep -q "elementwise, reduction, rowwise, gemm, conv, scan" <<<"$ERR_TXT" && ok "the templates are listed" || bad "error: $ERR_TXT"
expect_exit 2 "a bad task name" -- "$KFORGE" tasks new My-Task --template gemm
expect_exit 2 "a missing kernel file" -- "$KFORGE" tasks new x --from "$TMP/nope.cu"
[ ! -e x ] && ok "no folder left behind" || bad "folder x was created"
cp my-task/task.json saved.json
expect_exit 2 "an existing, non-empty folder" -- "$KFORGE" tasks new scale_add --from "$E/byo/scale_add.cu" --dir my-task
cmp -s saved.json my-task/task.json && ok "the existing task.json is untouched" || bad "my-task/task.json was overwritten"
printf 'int host_only(void) { return 0; }\n' >nokernel.cu
expect_exit 2 "a file with no __global__ function" -- "$KFORGE" tasks new x --from nokernel.cu
finish
