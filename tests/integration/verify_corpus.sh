#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# The verifier against the hack corpus (each exploit must be rejected with a fitting verdict) and the
# corpus of correct-but-unusual kernels (each must pass), on the cpu backend; plus seed replay.
. "$(dirname "$0")/lib.sh"
D=$TOP/tests/data
verdict() { python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null; }

while read -r kernel task accepted; do
	case "$kernel" in ''|'#'*) continue ;; esac
	"$KFORGE" verify --backend cpu --json --timeout-ms 4000 "$D/vtasks/$task/task.json" "$D/hacks/$kernel" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	got=$(verdict <"$TMP/out")
	want_rc=1; [ "${accepted%%|*}" = unsupported ] && want_rc=4
	if [[ "|$accepted|" == *"|$got|"* ]] && [ "$rc" -eq "$want_rc" ]; then
		ok "hack $kernel -> $got"
	else
		bad "hack $kernel: got '$got' exit $rc, want $accepted exit $want_rc: $(head -c 400 "$TMP/err") $(python3 -c 'import json,sys; print(json.load(sys.stdin)["reason"])' <"$TMP/out" 2>/dev/null | head -c 400)"
	fi
done <"$D/hacks/expected.txt"

while read -r kernel task; do
	case "$kernel" in ''|'#'*) continue ;; esac
	"$KFORGE" verify --backend cpu --json "$D/vtasks/$task/task.json" "$D/unusual/$kernel" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	got=$(verdict <"$TMP/out")
	if [ "$got" = pass ] && [ "$rc" -eq 0 ]; then
		ok "unusual $kernel passes"
	else
		bad "unusual $kernel: got '$got' exit $rc: $(head -c 400 "$TMP/err") $(python3 -c 'import json,sys; print(json.load(sys.stdin)["reason"])' <"$TMP/out" 2>/dev/null | head -c 600)"
	fi
done <"$D/unusual/expected.txt"

# Every reference passes against itself.
for t in "$D"/vtasks/*/task.json; do
	expect_exit 0 "reference of $(basename "$(dirname "$t")") verifies" -- "$KFORGE" verify --backend cpu "$t" "$(dirname "$t")/reference.cu"
done

# Replay: the same seed gives the same verdict and numbers.
strip() { python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("elapsed_ms",None); print(json.dumps(d,sort_keys=True))'; }
"$KFORGE" verify --backend cpu --json --seed 12345 "$D/vtasks/relu_f32/task.json" "$D/hacks/relu_as_copy.cu" | strip >"$TMP/a"
"$KFORGE" verify --backend cpu --json --seed 12345 "$D/vtasks/relu_f32/task.json" "$D/hacks/relu_as_copy.cu" | strip >"$TMP/b"
if cmp -s "$TMP/a" "$TMP/b" && grep -q '"seed": "12345"' "$TMP/a"; then ok "seed replay is exact"; else bad "seed replay differs: $(diff "$TMP/a" "$TMP/b" | head -5)"; fi

# Usage and task errors.
expect_exit 2 "missing kernel file is a usage error" -- "$KFORGE" verify --backend cpu "$D/vtasks/vadd_f32/task.json" "$TMP/nope.cu"
expect_exit 2 "missing task file" -- "$KFORGE" verify --backend cpu "$TMP/nope.json" "$D/unusual/grid_stride.cu"
expect_exit 2 "one argument only" -- "$KFORGE" verify "$D/vtasks/vadd_f32/task.json"
expect_exit 4 "--backend cuda without a GPU exits 4" -- "$KFORGE" verify --backend cuda "$D/vtasks/vadd_f32/task.json" "$D/vtasks/vadd_f32/reference.cu"
finish
