#!/usr/bin/env bash
# Ctrl-C and SIGTERM, in the middle of what takes long (core/cancel.h): a compile in `verify`, a kernel
# that never returns in `verify`, an LLM request in `optimize`. Each ends within a second with exit 130,
# every child (compiler, worker) gone, and nothing half-written (an optimize run recorded as interrupted,
# resumable).
. "$(dirname "$0")/lib.sh"

TASK=$TOP/tasks/l1/relu_f32/task.json
DATA=$TOP/tests/data/cancel
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# the descendants of pid $1, one per line
descendants() {
	local todo=$1 p kids
	while [ -n "$todo" ]; do
		set -- $todo
		p=$1
		shift
		todo="$*"
		kids=$(ps -o pid= --ppid "$p" 2>/dev/null | tr -d ' ')
		[ -n "$kids" ] && { echo "$kids"; todo="$todo $kids"; }
	done
}
# has_descendant PID PATTERN: some descendant's command line matches PATTERN
has_descendant() {
	local d
	for d in $(descendants "$1"); do
		{ tr "\0" " " <"/proc/$d/cmdline"; } 2>/dev/null | grep -q -- "$2" && return 0
	done
	return 1
}
# interrupt DESC SIGNAL WAIT_FOR TIMEOUT_S SETTLE_S -- CMD...: starts CMD, waits until a descendant
# matching WAIT_FOR runs (at most TIMEOUT_S), then SETTLE_S more, sends SIGNAL to kforge alone and checks:
# exit 130 within a second, the children gone. Leaves stderr in $ERR_TXT.
interrupt() {
	local desc=$1 sig=$2 pat=$3 tmo=$4 settle=$5 pid kids t0 t1 rc i left=""
	shift 6
	"$@" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	for i in $(seq $((tmo * 10))); do has_descendant "$pid" "$pat" && break; sleep 0.1; done
	if ! has_descendant "$pid" "$pat"; then
		bad "$desc: no '$pat' under kforge after ${tmo}s: $(head -c 400 "$TMP/err")"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return
	fi
	sleep "$settle"
	kids=$(descendants "$pid")
	t0=$(now_ms)
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	t1=$(now_ms)
	ERR_TXT=$(cat "$TMP/err")
	[ "$rc" -eq 130 ] && ok "$desc: exit 130" || bad "$desc: exit $rc, want 130: $(head -c 600 "$TMP/err")"
	[ $((t1 - t0)) -lt 1000 ] && ok "$desc: ended $((t1 - t0)) ms after SIG$sig" ||
		bad "$desc: took $((t1 - t0)) ms after SIG$sig"
	sleep 0.2
	for i in $kids; do [ -e "/proc/$i" ] && ! grep -q '^State:.*Z' "/proc/$i/status" 2>/dev/null && left="$left $i"; done
	[ -z "$left" ] && ok "$desc: no child left ($(echo $kids | wc -w) were running)" ||
		bad "$desc: still running:$left ($(for i in $left; do tr '\0' ' ' <"/proc/$i/cmdline"; echo; done))"
}

# a compile that takes minutes (the compile child, a fork of kforge, runs NVRTC first)
interrupt "verify, mid-compile, SIGINT" INT "kforge verify" 20 1 -- "$KFORGE" verify "$TASK" "$DATA/slow_compile.cu"
grep -q "interrupted" <<<"$ERR_TXT" && ok "... says it was interrupted" || bad "... stderr: $ERR_TXT"
interrupt "verify, mid-compile, SIGTERM" TERM "kforge verify" 20 1 -- "$KFORGE" verify "$TASK" "$DATA/slow_compile.cu"

# a kernel that spins for ever in the worker (its step limit is far away): 4 s after the first worker
# started, the reference's steps (milliseconds) and the candidate's compile (about a second) are over
interrupt "verify, kernel running, SIGINT" INT "kforge-worker" 60 4 -- "$KFORGE" verify "$TASK" "$DATA/spin.cu" \
	--timeout-ms 120000

# a correct kernel, SIGTERM while its verification starts and stops workers (a GPU verification starts
# ~100): the killed workers must not read as the kernel's runtime error; no verdict comes out at all
MM=$TOP/tasks/examples/matmul_f32
for settle in 0.4 0.9 1.6; do
	"$KFORGE" verify --json "$MM/task.json" "$MM/reference.cu" >"$TMP/vout" 2>"$TMP/verr" &
	pid=$!
	sleep "$settle"
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	st=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' <"$TMP/vout" 2>/dev/null)
	[ "$rc" = 130 ] && [ "$st" = interrupted ] &&
		ok "verify --json, correct kernel, SIGTERM after ${settle}s: exit 130, status interrupted, no verdict" ||
		bad "verify --json, correct kernel, SIGTERM after ${settle}s: exit $rc, status '$st': $(head -c 300 "$TMP/vout") $(head -c 300 "$TMP/verr")"
done

# optimize, while the model is "thinking" (the server holds the reply for 60 s): the request is dropped,
# the run is recorded as interrupted, and --resume continues it
if command -v python3 >/dev/null; then
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy OPENAI_BASE_URL ANTHROPIC_API_KEY
	export NO_PROXY='*' no_proxy='*'
	echo '{"replies": [{"fault": "slow", "sleep_s": 60}]}' >"$TMP/script.json"
	python3 "$TOP/tests/llm_server.py" --port 0 --port-file "$TMP/port" --script "$TMP/script.json" \
		--log "$TMP/log.jsonl" >"$TMP/server.out" 2>&1 &
	srv=$!
	trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$TMP"' EXIT
	for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.1; done
	base="http://127.0.0.1:$(cat "$TMP/port" 2>/dev/null)"
	# the pre-flight GET is answered at once; then the POST waits
	( for _ in $(seq 200); do grep -q '"POST"' "$TMP/log.jsonl" 2>/dev/null && break; sleep 0.1; done
	  touch "$TMP/posted" ) &
	OPENAI_API_KEY=sk-test "$KFORGE" optimize "$TOP/tests/data/vtasks/vadd_f32/task.json" --base-url "$base/v1" \
		--model gpt-4o-mini --backend cpu --concurrency 1 --budget-calls 3 --db "$TMP/o.db" --out "$TMP/o" \
		>"$TMP/oout" 2>"$TMP/oerr" &
	opid=$!
	for _ in $(seq 200); do [ -e "$TMP/posted" ] && break; sleep 0.1; done
	sleep 0.5
	t0=$(now_ms)
	kill -INT "$opid"
	wait "$opid"
	rc=$?
	t1=$(now_ms)
	[ -e "$TMP/posted" ] && ok "optimize: the LLM request was in flight" || bad "optimize: no request reached the server"
	[ "$rc" -eq 130 ] && ok "optimize, LLM request in flight, SIGINT: exit 130" ||
		bad "optimize: exit $rc, want 130: $(head -c 600 "$TMP/oerr")"
	[ $((t1 - t0)) -lt 1000 ] && ok "optimize: ended $((t1 - t0)) ms after SIGINT" ||
		bad "optimize: took $((t1 - t0)) ms after SIGINT"
	grep -q -- "--resume" "$TMP/oerr" && ok "optimize: says how to resume" || bad "optimize: stderr $(cat "$TMP/oerr")"
	st=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select status from runs").fetchone()[0])' "$TMP/o.db" 2>&1)
	[ "$st" = interrupted ] && ok "optimize: the run is recorded as interrupted" || bad "optimize: run status '$st'"
	[ -s "$TMP/o/report.md" ] && ok "optimize: its report is written" || bad "optimize: no report.md"
else
	skip "python3 not installed: optimize case"
fi
finish
