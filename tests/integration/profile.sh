#!/usr/bin/env bash
# kforge profile on the cpu backend over tests/data/eval (a task whose reference is slow on purpose):
# a correct kernel is timed (speedups labelled cpu) and, being implausibly fast, re-verified; an exploit
# only that strict re-verification catches, one only the re-check of timed outputs catches, and kernels
# rejected by verification are never timed; exit codes of docs/spec/cli.md.
. "$(dirname "$0")/lib.sh"
D="$TOP/tests/data/eval"

expect_exit 0 "a correct kernel: verified and timed" -- "$KFORGE" profile "$D/task.json" "$D/fast.cu" --backend cpu --json
if printf '%s' "$OUT_TXT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["profile"]
s = p["shapes"][0]
# the fitness is the cost model prediction where clang-14 can build the instrumented module (its own
# "model" object); the CPU times stay in the profile, clock cpu
assert d["status"] == "pass" and d["backend"] == "cpu" and p["clock"] == "cpu", d["status"]
assert (d["clock"] == "model" and d["model"]["clock"] == "model") or (d["clock"] == "cpu" and "model" not in d), d["clock"]
assert d["verification"]["status"] == "pass"
assert s["speedup"]["point"] > 10 and s["speedup"]["lo"] <= s["speedup"]["point"] <= s["speedup"]["hi"]
assert s["timed_outputs_ok"] and s["candidate"]["timing_source"] == "cpu-wall"
assert p["implausible"] and "over 10x" in p["flags"]
assert p["resources"][0]["block_threads"] == 128
'; then ok "json: pass, the CPU times on the cpu clock (the model beside), > 10x flagged implausible"; else bad "json: $(printf '%s' "$OUT_TXT" | head -c 600)"; fi

expect_exit 0 "text mode" -- "$KFORGE" profile "$D/task.json" "$D/fast.cu" --backend cpu --seed 7
case "$OUT_TXT" in
"verified: "*"cpu clock"*"speedup "*"not GPU speed"*"flag: speedup over 10x"*) ok "text: verified, timed on the cpu clock, flagged" ;;
*) bad "text: $OUT_TXT" ;;
esac

expect_exit 1 "an exploit the strict re-verification catches" -- "$KFORGE" profile "$D/task.json" "$D/strict_trap.cu" --backend cpu --json
printf '%s' "$OUT_TXT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "wrong_output" and d["verification"]["strict"], d["status"]
assert any(s["status"] == "wrong_output" and s["dims"]["M"] == 1 for s in d["verification"]["shapes"])
' && ok "strict: wrong_output at an M=1 edge shape" || bad "strict: $(printf '%s' "$OUT_TXT" | head -c 600)"

expect_exit 1 "a kernel whose timed launches go wrong" -- "$KFORGE" profile "$D/task.json" "$D/late_zero.cu" --backend cpu
case "$OUT_TXT" in
*"TIMED OUTPUTS WRONG"*"verdict: rejected: outputs of timed launches were wrong"*) ok "text: the re-check rejects it" ;;
*) bad "late_zero: $OUT_TXT" ;;
esac

expect_exit 1 "a wrong kernel is not timed" -- "$KFORGE" profile "$D/task.json" "$D/wrong_hidden.cu" --backend cpu
case "$OUT_TXT" in
*"verdict: wrong_output"*"not timed: the kernel did not pass verification"*) ok "text: rejected, not timed" ;;
*) bad "wrong_hidden: $OUT_TXT" ;;
esac
expect_exit 1 "a kernel that does not compile" -- "$KFORGE" profile "$D/task.json" "$D/broken.cu" --backend cpu --json
printf '%s' "$OUT_TXT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "compile_error" and "profile" not in d
' && ok "json: compile_error, no profile" || bad "broken: $(printf '%s' "$OUT_TXT" | head -c 400)"

expect_exit 2 "profile without a kernel" -- "$KFORGE" profile "$D/task.json"
expect_exit 2 "profile with a bad seed" -- "$KFORGE" profile "$D/task.json" "$D/fast.cu" --seed x
expect_exit 2 "profile of a missing task" -- "$KFORGE" profile "$TMP/none.json" "$D/fast.cu" --backend cpu
expect_exit 2 "profile of a missing kernel" -- "$KFORGE" profile "$D/task.json" "$TMP/none.cu" --backend cpu
finish
