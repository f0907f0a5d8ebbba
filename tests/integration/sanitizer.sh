#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# The cpu sanitizer through kforge verify (tests/data/sanitizer/expected.txt): each wrong kernel is
# rejected with its verdict and the line of the kernel file (and a race with the other access's line);
# each correct kernel passes with the sanitizer run and clean; kernels only the sanitizer catches pass
# without it (the check is what rejects them); a crash is re-run under the sanitizer; the verdict says
# which checks ran (NVRTC arch, sanitizer checks, what only a GPU shows).
. "$(dirname "$0")/lib.sh"
D=$TOP/tests/data
if ! command -v "${KFORGE_SAN_CXX:-clang++-14}" >/dev/null; then
	skip "no ${KFORGE_SAN_CXX:-clang++-14} here: the sanitizer cannot be built (make deps installs clang-14)"
	finish
	exit
fi
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" 2>/dev/null; }

while read -r kernel task want line other; do
	case "$kernel" in ''|'#'*) continue ;; esac
	"$KFORGE" verify --backend cpu --json "$D/vtasks/$task/task.json" "$D/sanitizer/$kernel" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	got=$(field 'd["status"]' <"$TMP/out")
	reason=$(field 'd["reason"]' <"$TMP/out")
	name=$(basename "$kernel")
	if [ "$want" = pass ]; then
		ran=$(field 'd["checks"]["sanitizer"]["shapes"]' <"$TMP/out")
		if [ "$got" = pass ] && [ "$rc" -eq 0 ] && [ "${ran:-0}" -ge 1 ]; then
			ok "correct $name passes, sanitized at $ran shapes"
		else
			bad "correct $name: got '$got' exit $rc, sanitized at '${ran}' shapes: $(head -c 300 "$TMP/err") ${reason:0:600}"
		fi
		continue
	fi
	if [ "$got" != "$want" ] || [ "$rc" -ne 1 ]; then
		bad "$name: got '$got' exit $rc, want $want: $(head -c 300 "$TMP/err") ${reason:0:600}"
		continue
	fi
	case "$reason" in
	*"$name:$line:"*|*"$name($line)"*) ok "$name -> $want at line $line" ;;
	*) bad "$name: $want without line $line: ${reason:0:600}" ;;
	esac
	if [ -n "$other" ]; then
		case "$reason" in
		*"at $name:$other,"*) ok "$name: the other access is at line $other" ;;
		*) bad "$name: the other access is not at line $other: ${reason:0:600}" ;;
		esac
	fi
done <"$D/sanitizer/expected.txt"

# Only the sanitizer sees these: without it they pass (so the check is what rejects them).
for k in shared_plus_equals.cu oob_4352.cu dyn_smem_overrun.cu local_other_thread.cu; do
	t=rowsum_f32; [ "$k" = oob_4352.cu ] && t=relu_f32
	expect_exit 0 "$k passes without the sanitizer (only it can see this)" -- \
		"$KFORGE" verify --backend cpu --no-sanitizer "$D/vtasks/$t/task.json" "$D/sanitizer/$k"
done

# Shared memory poisoned per block (static and dynamic): without the sanitizer, a never-written or
# partly written shared array still changes the result between the two poison patterns.
for k in shared_never_written.cu dyn_shared_never_written.cu partial_init_tree.cu; do
	expect_exit 1 "$k fails without the sanitizer too (shared memory is poisoned)" -- \
		"$KFORGE" verify --backend cpu --no-sanitizer "$D/vtasks/rowsum_f32/task.json" "$D/sanitizer/$k"
	case "$OUT_TXT" in *"verdict: pass"*) bad "$k: a pass verdict without the sanitizer" ;; esac
done

# A crash gets a line: the plain run died of SIGSEGV (or AddressSanitizer's SEGV report, in a sanitized
# worker), the re-run under the sanitizer names the access.
"$KFORGE" verify --backend cpu --json "$D/vtasks/relu_f32/task.json" "$D/sanitizer/oob_crash.cu" >"$TMP/out" 2>/dev/null
reason=$(field 'd["reason"]' <"$TMP/out")
case "$reason" in
*"oob_crash.cu:10"*"plain run: runtime_error: worker "*SEGV*)
	ok "the SIGSEGV is re-run under the sanitizer and named" ;;
*) bad "crash re-run: ${reason:0:600}" ;;
esac
expect_exit 1 "without the sanitizer the same crash has no line" -- \
	"$KFORGE" verify --backend cpu --no-sanitizer --json "$D/vtasks/relu_f32/task.json" "$D/sanitizer/oob_crash.cu"
case "$OUT_TXT" in *oob_crash.cu:10*) bad "a line without the sanitizer?" ;; *runtime_error*) ok "plain verdict is runtime_error" ;; *) bad "plain verdict: ${OUT_TXT:0:300}" ;; esac

# What a cpu pass covers, in the JSON and the text.
"$KFORGE" verify --backend cpu --json "$D/vtasks/rowsum_f32/task.json" "$D/sanitizer/ok_atomics.cu" >"$TMP/out" 2>/dev/null
checks=$(field 'd["checks"]["nvrtc"] + " " + ",".join(d["checks"]["sanitizer"]["checks"]) + " " + str(d["checks"]["sanitizer"]["ran"]) + " " + str(len(d["checks"]["gpu_only"]) > 0) + " " + str(all("sanitized" in s for s in d["shapes"]))' <"$TMP/out")
if [ "$checks" = "sm_90 memcheck,initcheck,racecheck,warp_ub True True True" ]; then ok "json names the checks run"; else bad "json checks: $checks"; fi
expect_exit 0 "text verdict" -- "$KFORGE" verify --backend cpu "$D/vtasks/rowsum_f32/task.json" "$D/sanitizer/ok_atomics.cu"
case "$OUT_TXT" in *"checks: NVRTC compile for sm_90; cpu run; cpu sanitizer (memcheck, initcheck, racecheck, warp UB) at "*"only a GPU can show: timing"*) ok "text names the checks run and what only a GPU shows" ;; *) bad "text: ${OUT_TXT:0:600}" ;; esac
finish
