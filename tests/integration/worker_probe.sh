#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# kforge-worker's human-facing side: `--probe cpu|cuda` prints key=value facts and exits 0 when the
# backend is usable, 4 (with a reason) when not; bad arguments exit 2. The protocol side is covered by
# tests/unit/test_sandbox_session.c.
source "$(dirname "$0")/lib.sh"
: "${KFORGE_WORKER:=$TOP/build/kforge-worker}"

expect_exit 0 "probe cpu is available" -- "$KFORGE_WORKER" --probe cpu
case "$OUT_TXT" in
*"available=1"*"arch=host"*) ok "probe cpu prints its facts" ;;
*) bad "probe cpu output: $OUT_TXT" ;;
esac
grep -q '^max_threads_per_block=1024$' <<<"$OUT_TXT" && ok "probe cpu: max_threads_per_block" ||
	bad "probe cpu: no max_threads_per_block=1024 line"

"$KFORGE_WORKER" --probe cuda >"$TMP/cuda.out" 2>"$TMP/cuda.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	grep -q '^arch=sm_' "$TMP/cuda.out" && ok "probe cuda on a GPU names its arch" || bad "probe cuda: $(cat "$TMP/cuda.out")"
elif [ "$rc" -eq 4 ]; then
	grep -q '^available=0$' "$TMP/cuda.out" && grep -q '^reason=..........' "$TMP/cuda.out" &&
		ok "probe cuda without a GPU: unavailable with a reason" || bad "probe cuda: $(cat "$TMP/cuda.out")"
else
	bad "probe cuda exited $rc: $(cat "$TMP/cuda.out" "$TMP/cuda.err")"
fi

expect_exit 2 "probe of an unknown backend is a usage error" -- "$KFORGE_WORKER" --probe tpu
expect_exit 2 "no arguments is a usage error" -- "$KFORGE_WORKER"
expect_exit 2 "a bad --fd is a usage error" -- "$KFORGE_WORKER" --backend cpu --fd x
# A session worker whose fd is not a socket cannot send its hello: a protocol exit, not a hang.
expect_exit 3 "a session on a non-socket fd fails fast" -- timeout 20 "$KFORGE_WORKER" --backend cpu --fd 0
finish
