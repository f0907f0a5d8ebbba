#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# kforge tasks validate/list/show: every broken task in tests/data/bad_tasks exits 2 and names the file
# and the field path or kernel-file line on stderr (the case's `expect` file); every task under tasks/
# validates with --strict; list/show/--json produce what they promise.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1

for d in tests/data/bad_tasks/*/; do
	name=$(basename "$d")
	want=$(head -n 1 "$d/expect")
	args=$(cat "$d/args" 2>/dev/null)
	# shellcheck disable=SC2086
	expect_exit 2 "bad task '$name' exits 2" -- "$KFORGE" tasks validate $args "$d"
	if grep -qF -- "$want" <<<"$ERR_TXT" && grep -qF -- "${d}task.json" <<<"$ERR_TXT$want"; then
		ok "bad task '$name' names file and field/line"
	else
		bad "bad task '$name': stderr lacks '$want': $ERR_TXT"
	fi
	[ -z "$OUT_TXT" ] && ok "bad task '$name' prints nothing on stdout" || bad "bad task '$name' stdout: $OUT_TXT"
done

# unknown top-level fields: a warning (exit 0) without --strict
expect_exit 0 "unknown field is a warning without --strict" -- "$KFORGE" tasks validate tests/data/bad_tasks/unknown_field_strict
grep -q "warning: .*unknown field 'owner'" <<<"$ERR_TXT" && ok "warning names the field" || bad "no warning: $ERR_TXT"

# every shipped task is valid under --strict, one 'ok NAME' per task.json
n_files=$(find tasks -name task.json | wc -l)
expect_exit 0 "every task under tasks/ validates with --strict" -- "$KFORGE" tasks validate --strict tasks
n_ok=$(grep -c '^ok ' <<<"$OUT_TXT")
[ "$n_ok" -eq "$n_files" ] && ok "one 'ok' line per task file ($n_ok)" || bad "$n_ok ok lines for $n_files files"

# several paths at once: exit 2 when any is invalid, the valid ones still reported
expect_exit 2 "mixed valid and invalid paths exit 2" -- "$KFORGE" tasks validate tasks/examples tests/data/bad_tasks/bad_dtype
grep -q '^ok vector_add_f32$' <<<"$OUT_TXT" && ok "valid files still reported" || bad "missing ok line: $OUT_TXT"
expect_exit 2 "a path that does not exist exits 2" -- "$KFORGE" tasks validate tests/data/no/such/dir
grep -q "no/such/dir" <<<"$ERR_TXT" && ok "missing path named" || bad "missing path not named: $ERR_TXT"

# a duplicate task name within one validation run is an error
mkdir -p "$TMP/dup/a" "$TMP/dup/b"
cp tasks/examples/vector_add_f32/* "$TMP/dup/a/"
cp tasks/examples/vector_add_f32/* "$TMP/dup/b/"
expect_exit 2 "duplicate task names exit 2" -- "$KFORGE" tasks validate "$TMP/dup"
grep -q "duplicate task name 'vector_add_f32'" <<<"$ERR_TXT" && ok "duplicate named" || bad "no duplicate error: $ERR_TXT"

# --json: one document on stdout
expect_exit 2 "validate --json with a bad file exits 2" -- "$KFORGE" tasks validate --json tasks/examples tests/data/bad_tasks/unknown_dim
if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["valid"]==3 and d["invalid"]==1; assert any("tensors[1].shape[1]" in (r.get("error") or "") for r in d["results"])' <<<"$OUT_TXT"; then
	ok "validate --json reports counts and the error"
else
	bad "validate --json: $OUT_TXT"
fi

# list and show
expect_exit 0 "tasks list" -- "$KFORGE" tasks list tasks/examples
grep -q '^softmax_rows_f32 .*L1 .*softmax .*tasks/examples/softmax_rows_f32/task.json' <<<"$OUT_TXT" && ok "list line" || bad "list: $OUT_TXT"
expect_exit 0 "tasks list --json" -- "$KFORGE" tasks list --json tasks/examples
python3 -c 'import json,sys; d=json.load(sys.stdin); assert sorted(t["name"] for t in d["tasks"])==["matmul_f32","softmax_rows_f32","vector_add_f32"]' <<<"$OUT_TXT" && ok "list --json" || bad "list --json: $OUT_TXT"
expect_exit 0 "tasks show by path" -- "$KFORGE" tasks show tasks/examples/matmul_f32
grep -q 'hidden  *M=1 N=1 K=1' <<<"$OUT_TXT" && grep -q 'f32 *atol=0.001 rtol=0.0001 *(task)' <<<"$OUT_TXT" && ok "show lists shapes and tolerances" || bad "show: $OUT_TXT"
expect_exit 0 "tasks show --json" -- "$KFORGE" tasks show --json tasks/examples/softmax_rows_f32/task.json
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["shapes"]["timing"]==[{"B":4096,"N":4096}] and d["tolerance"]["f32"]["atol"]==1e-5 and d["reference_launches"][0]["kernel"]=="softmax_rows"' <<<"$OUT_TXT" && ok "show --json" || bad "show --json: $OUT_TXT"
expect_exit 2 "show of a broken task exits 2" -- "$KFORGE" tasks show tests/data/bad_tasks/bad_dtype
expect_exit 2 "unknown subcommand exits 2" -- "$KFORGE" tasks frobnicate
expect_exit 0 "tasks --help" -- "$KFORGE" tasks --help

finish
