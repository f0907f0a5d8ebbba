#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# Kernels written as people write them (tests/data/real: SGEMM_CUDA, llm.c and cuda-samples styles) verify
# on the cpu backend with no wrapper and no invented dim; the precondition-dependent one is rejected where
# the task does not state the precondition; lint warns where a constraint leaves no tail case.
. "$(dirname "$0")/lib.sh"
R=$TOP/tests/data/real
verdict() { python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null; }

while read -r kernel task accepted; do
	case "$kernel" in ''|'#'*) continue ;; esac
	"$KFORGE" verify --backend cpu --json "$R/$task/task.json" "$R/kernels/$kernel" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	got=$(verdict <"$TMP/out")
	want_rc=1; [ "${accepted%%|*}" = pass ] && want_rc=0
	if [[ "|$accepted|" == *"|$got|"* ]] && [ "$rc" -eq "$want_rc" ]; then
		ok "$kernel on $task -> $got"
	else
		bad "$kernel on $task: got '$got' exit $rc, want $accepted: $(head -c 400 "$TMP/err") $(python3 -c 'import json,sys; print(json.load(sys.stdin)["reason"])' <"$TMP/out" 2>/dev/null | head -c 600)"
	fi
done <"$R/expected.txt"

# No wrapper: the template kernels are launched as templates, with no extern "C" function around them.
for k in sgemm_coalesce sgemm_smem sgemm_2d_blocktiling matrixmul_sample reduce6_sample global_norm; do
	if grep -q 'extern "C"' "$R/kernels/$k.cu"; then bad "$k.cu wraps its template in an extern \"C\" function"
	elif grep -Eq '^// kforge:launch [A-Za-z_0-9]+<' "$R/kernels/$k.cu"; then ok "$k.cu launches its template directly"
	else bad "$k.cu has no template launch"; fi
done
# No invented dim: every task's dims are the operator's own (what its description names).
for t in "$R"/*/task.json; do
	dims=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["dims"]))' "$t")
	case "$dims" in "M N K"|"B T C"|"B T OC"|N) ok "$(basename "$(dirname "$t")") has the operator's dims ($dims)" ;;
	*) bad "$(basename "$(dirname "$t")") dims: $dims" ;; esac
done

# tasks show states the constraints
expect_exit 0 "tasks show of residual_f32" -- "$KFORGE" tasks show "$R/residual_f32/task.json"
grep -q "^constraint:  C multiple of 4 in 1\.\." <<<"$OUT_TXT" && ok "tasks show lists the constraint" || bad "tasks show: $OUT_TXT"
expect_exit 0 "tasks show --json of residual_f32" -- "$KFORGE" tasks show --json "$R/residual_f32/task.json"
python3 -c 'import json,sys; c=json.loads(sys.stdin.read())["constraints"]; sys.exit(0 if c["C"]["multiple_of"] == 4 and "B" not in c else 1)' <<<"$OUT_TXT" &&
	ok "tasks show --json has the constraints" || bad "tasks show --json: $OUT_TXT"

# Lint: a constraint leaving a dim one residue mod 32 is a warning (exit 0), a milder one is nothing.
expect_exit 0 "lint of matmul_aligned_f32 only warns" -- "$KFORGE" tasks lint --backend cpu "$R/matmul_aligned_f32/task.json"
for d in M N K; do
	grep -q "warning: constraint_no_tails: constraints.$d (multiple_of 32" <<<"$OUT_TXT" && ok "lint warns for $d" || bad "no warning for $d: $OUT_TXT"
done
expect_exit 0 "lint of sgemm_aligned_f32" -- "$KFORGE" tasks lint --backend cpu "$R/sgemm_aligned_f32/task.json"
grep -q "constraints.M (multiple_of 64" <<<"$OUT_TXT" && ! grep -q "constraints.K" <<<"$OUT_TXT" && ok "lint warns for M, not for K (multiple_of 8 leaves 4 residues)" || bad "sgemm_aligned lint: $OUT_TXT"
expect_exit 0 "lint of residual_f32 has nothing to say" -- "$KFORGE" tasks lint --backend cpu "$R/residual_f32/task.json"
grep -q "^ok residual_f32" <<<"$OUT_TXT" && ok "residual_f32 lints clean" || bad "residual_f32 lint: $OUT_TXT"
"$KFORGE" tasks lint --backend cpu --json "$R/matmul_aligned_f32/task.json" >"$TMP/lint.json" 2>/dev/null
python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))[0]["findings"]; sys.exit(0 if f and all(x["warning"] for x in f) else 1)' "$TMP/lint.json" \
	&& ok "lint --json marks the findings as warnings" || bad "lint --json: $(cat "$TMP/lint.json")"
finish
