#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# The cpu backend end to end through the real worker (kforge verify --backend cpu): the example tasks'
# references pass; a correct tiled candidate passes; a race, a divergent barrier, an endless loop and
# inline PTX give their verdicts (tests/cpu/candidates).
. "$(dirname "$0")/lib.sh"
ex="$TOP/tasks/examples"
cand="$TOP/tests/cpu/candidates"
# (the matmul reference is the ground truth of the candidates below; each reference is also checked
# against host C in tests/unit/test_cpu_conformance.c)
for t in vector_add_f32 softmax_rows_f32; do
	expect_exit 0 "reference of $t passes on the cpu backend" -- \
		"$KFORGE" verify "$ex/$t/task.json" "$ex/$t/reference.cu" --backend cpu --json
done
mm="$ex/matmul_f32/task.json"
expect_exit 0 "a correct tiled matmul passes" -- "$KFORGE" verify "$mm" "$cand/matmul_tiled_ok.cu" --backend cpu --json
expect_exit 1 "a missing __syncthreads is caught" -- "$KFORGE" verify "$mm" "$cand/matmul_race.cu" --backend cpu --json
case "$OUT_TXT" in *'"status": "pass"'*|*'"status":"pass"'*) bad "race verdict is pass" ;; *) ok "race verdict is not pass" ;; esac
expect_exit 1 "an early return before the barriers that skips tile loads fails" -- "$KFORGE" verify "$mm" "$cand/matmul_divergent.cu" --backend cpu --json
case "$OUT_TXT" in *'"status": "pass"'*) bad "early-return matmul verdict is pass" ;; *) ok "early-return matmul is rejected" ;; esac
expect_exit 1 "an endless loop is stopped" -- timeout 300 "$KFORGE" verify "$mm" "$cand/matmul_spin.cu" --backend cpu --timeout-ms 3000 --json
case "$OUT_TXT" in *timeout*) ok "endless loop verdict is timeout" ;; *) bad "endless loop verdict: $(echo "$OUT_TXT" | head -c 400)" ;; esac
expect_exit 4 "inline PTX is unsupported on the cpu backend" -- "$KFORGE" verify "$mm" "$cand/matmul_asm.cu" --backend cpu --json
case "$OUT_TXT$ERR_TXT" in *matmul_asm.cu:7*) ok "unsupported names the file and line" ;; *) bad "unsupported message: $(echo "$OUT_TXT$ERR_TXT" | head -c 400)" ;; esac
finish
