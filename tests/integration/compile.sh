#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# kforge compile end to end: exit codes (0 ok, 1 compile error/timeout, 2 bad input), the --json fields,
# cache hits, the template bomb killed at --timeout, sm_90a picked for wgmma, and every task reference
# (tasks/*/*/reference.cu) compiling with NVRTC against its own task.
. "$(dirname "$0")/lib.sh"
FIX="$TOP/tests/data/kernels/compile"
# A private cache for the hit/miss checks; the task references use the run's shared cache.
SHARED_CACHE=${KFORGE_CACHE:-$TMP/shared-cache}
export KFORGE_CACHE="$TMP/cache"

# jcheck DESC EXPR: evaluates the Python expression EXPR with j = the JSON document in $OUT_TXT.
jcheck() {
	local desc=$1 expr=$2
	if printf '%s' "$OUT_TXT" | python3 -c "import json,sys; j=json.load(sys.stdin); sys.exit(0 if ($expr) else 1)" 2>"$TMP/jerr"; then
		ok "$desc"
	else
		bad "$desc: $expr on: $(printf '%s' "$OUT_TXT" | head -c 800) $(cat "$TMP/jerr")"
	fi
}

expect_exit 0 "compile --help" -- "$KFORGE" compile --help
case "$OUT_TXT" in *"--no-cache"*) ok "help lists --no-cache" ;; *) bad "help lists --no-cache" ;; esac
expect_exit 2 "no kernel file is a usage error" -- "$KFORGE" compile
expect_exit 2 "unknown backend is a usage error" -- "$KFORGE" compile "$FIX/good.cu" --backend tpu
expect_exit 2 "missing kernel file is bad input" -- "$KFORGE" compile "$TMP/no-such.cu"
printf '// kforge:launch k grid=(1 block=(32) args=(y)\nextern "C" __global__ void k(float *y) {}\n' >"$TMP/bad_directive.cu"
expect_exit 2 "bad directive is bad input" -- "$KFORGE" compile "$TMP/bad_directive.cu"
expect_exit 2 "bad directive with --json still prints JSON" -- "$KFORGE" compile "$TMP/bad_directive.cu" --json
jcheck "bad input JSON says invalid" 'j["status"] == "invalid" and "bad_directive.cu" in j["error"]'
expect_exit 2 "malformed --arch is bad input" -- "$KFORGE" compile "$FIX/good.cu" --arch hopper

expect_exit 0 "good kernel compiles" -- "$KFORGE" compile "$FIX/good.cu"
case "$OUT_TXT" in *"kernel 'scale':"*registers*) ok "text output names the kernel and registers" ;;
	*) bad "text output: $OUT_TXT" ;; esac

expect_exit 0 "good kernel --json (second time)" -- "$KFORGE" compile "$FIX/good.cu" --json
jcheck "json status ok, sm_90, cached" 'j["status"] == "ok" and j["arch"] == "sm_90" and j["cached"] is True'
jcheck "json kernel resources" 'len(j["kernels"]) == 1 and j["kernels"][0]["name"] == "scale" and j["kernels"][0]["registers"] > 0 and j["kernels"][0]["smem_static_bytes"] == 1024 and all(k in j["kernels"][0] for k in ("spill_store_bytes","spill_load_bytes","stack_bytes","cmem_bytes"))'
jcheck "json has log and compile_ms" '"ptxas info" in j["log"] and j["compile_ms"] >= 0 and j["error"] is None'
jcheck "json occupancy at the literal block size" 'j["kernels"][0]["occupancy"]["block_threads"] == 256 and 0 < j["kernels"][0]["occupancy"]["occupancy"] <= 1'
expect_exit 0 "--no-cache compiles afresh" -- "$KFORGE" compile "$FIX/good.cu" --json --no-cache
jcheck "--no-cache is not a cache hit" 'j["cached"] is False'

expect_exit 1 "syntax error exits 1" -- "$KFORGE" compile "$FIX/syntax_error.cu"
case "$OUT_TXT" in *undefined_name*) ok "compile log shown" ;; *) bad "compile log missing: $OUT_TXT" ;; esac
expect_exit 1 "syntax error --json" -- "$KFORGE" compile "$FIX/syntax_error.cu" --json
jcheck "json compile_error with NVRTC's message" 'j["status"] == "compile_error" and "undefined_name" in j["log"] and j["kernels"] == []'

start=$(date +%s)
expect_exit 1 "template bomb is stopped" -- "$KFORGE" compile "$FIX/bomb.cu" --timeout 3 --json --no-cache
jcheck "bomb reports timeout" 'j["status"] == "timeout" and "3000 ms" in j["error"]'
if [ $(( $(date +%s) - start )) -le 8 ]; then ok "bomb killed promptly"; else bad "bomb took $(( $(date +%s) - start )) s"; fi

expect_exit 0 "wgmma kernel compiles" -- "$KFORGE" compile "$FIX/wgmma.cu" --json
jcheck "wgmma gets sm_90a" 'j["arch"] == "sm_90a"'
expect_exit 0 "fp16/bf16 headers" -- "$KFORGE" compile "$FIX/fp16_bf16.cu"
expect_exit 0 "CCCL and cooperative groups headers" -- "$KFORGE" compile "$FIX/cccl.cu"

# Task references compile for sm_90 when bound to their own task: every 9th task (an even spread over
# the suite, about 8 compiles), or all of them with KFORGE_TEST_ALL_REFS=1 (a cold NVRTC compile is
# 0.3-1.5 s of CPU each).
export KFORGE_CACHE="$SHARED_CACHE"
n=0 failed=0 i=0 every=9
[ "${KFORGE_TEST_ALL_REFS:-0}" = 1 ] && every=1
for task in "$TOP"/tasks/*/*/task.json; do
	[ -f "$task" ] || continue
	i=$((i + 1))
	[ $(( (i - 1) % every )) -eq 0 ] || continue
	ref="$(dirname "$task")/reference.cu"
	[ -f "$ref" ] || continue
	n=$((n + 1))
	if "$KFORGE" compile "$ref" --task "$task" --json >"$TMP/ref.json" 2>"$TMP/ref.err" &&
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["status"] == "ok" and j["kernels"] and all(k["registers"] > 0 for k in j["kernels"]) else 1)' "$TMP/ref.json"; then
		:
	else
		failed=$((failed + 1))
		bad "reference $ref: $(head -c 600 "$TMP/ref.err") $(head -c 600 "$TMP/ref.json")"
	fi
done
if [ "$n" -eq 0 ]; then skip "no task references in tasks/"; elif [ "$failed" -eq 0 ]; then ok "$n task references compile (1 in $every)"; fi
finish
