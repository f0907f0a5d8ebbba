#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# Integration tests of 'kforge kb': every subcommand on a database written by the hidden '_stress'
# helper, export/import/merge through the command line, and the kill -9 durability test (a writer killed
# at random points must leave a database that passes its checks, holds every acknowledged record, and
# resumes from its last recorded step).
. "$(dirname "$0")/lib.sh"

DB=$TMP/kb.db
expect_exit 2 "kb with no subcommand prints usage" -- "$KFORGE" kb
echo "$ERR_TXT" | grep -q "usage: kforge kb" && ok "usage names kb" || bad "usage text: $ERR_TXT"
expect_exit 0 "kb --help" -- "$KFORGE" kb --help
echo "$OUT_TXT" | grep -q "merge A.db" && ok "help lists merge" || bad "help text"
expect_exit 2 "unknown subcommand" -- "$KFORGE" kb frobnicate --db "$DB"
expect_exit 2 "stats on a missing database" -- "$KFORGE" kb stats --db "$TMP/missing.db"
[ ! -e "$TMP/missing.db" ] && ok "a reader does not create the database" || bad "missing.db was created"

expect_exit 0 "_stress records 30 steps" -- "$KFORGE" kb _stress --db "$DB" --limit 30
[ "$(grep -cE '^[0-9]+$' <<<"$OUT_TXT")" -eq 30 ] && ok "30 acknowledged ids" || bad "acks: $OUT_TXT"

expect_exit 0 "stats" -- "$KFORGE" kb stats --db "$DB"
grep -qE '^candidates +30 ' <<<"$OUT_TXT" && ok "stats counts candidates" || bad "stats: $OUT_TXT"
expect_exit 0 "stats --json" -- "$KFORGE" kb stats --db "$DB" --json
grep -qE '"candidates":[[:space:]]*30,' <<<"$OUT_TXT" && ok "stats json" || bad "stats json: $OUT_TXT"
grep -qE '"schema_version":[[:space:]]*5,' <<<"$OUT_TXT" && ok "schema version 5 (timings carry the A/A noise band)" || bad "schema: $OUT_TXT"

expect_exit 0 "list (runs)" -- "$KFORGE" kb list --db "$DB"
grep -qE '^ +1  stress .* done ' <<<"$OUT_TXT" && ok "run listed as done" || bad "list: $OUT_TXT"
expect_exit 0 "list candidates --limit 5" -- "$KFORGE" kb list candidates --db "$DB" --limit 5
[ "$(wc -l <<<"$OUT_TXT")" -eq 6 ] && ok "5 candidates and a header" || bad "list candidates: $OUT_TXT"
expect_exit 0 "list wins --json" -- "$KFORGE" kb list wins --db "$DB" --json
grep -q '"dtype":[[:space:]]*"f32"' <<<"$OUT_TXT" && ok "wins json" || bad "wins: $OUT_TXT"
expect_exit 2 "list of an unknown kind" -- "$KFORGE" kb list things --db "$DB"

expect_exit 0 "show a candidate" -- "$KFORGE" kb show 5 --db "$DB"
grep -q '^lineage    #5 <- #4' <<<"$OUT_TXT" && ok "show has the lineage" || bad "show: $OUT_TXT"
grep -q '^--- source' <<<"$OUT_TXT" && grep -q '^--- response' <<<"$OUT_TXT" && grep -q '^  eval 5' <<<"$OUT_TXT" &&
	ok "show has source, verdicts and the llm exchange" || bad "show parts: $OUT_TXT"
expect_exit 0 "show --json" -- "$KFORGE" kb show 5 --db "$DB" --json
grep -q '"lineage":[[:space:]]*\[4, 3, 2, 1\]' <<<"$OUT_TXT" && ok "json lineage" || bad "json show: $(head -c 300 <<<"$OUT_TXT")"
expect_exit 0 "show run:1" -- "$KFORGE" kb show run:1 --db "$DB"
expect_exit 2 "show an unknown candidate" -- "$KFORGE" kb show 999999 --db "$DB"
expect_exit 2 "show a non-number" -- "$KFORGE" kb show abc --db "$DB"

expect_exit 0 "search" -- "$KFORGE" kb search fast_math --db "$DB" --limit 3
[ "$(grep -c '^candidate' <<<"$OUT_TXT")" -eq 3 ] && ok "search limit" || bad "search: $OUT_TXT"
expect_exit 0 "examples" -- "$KFORGE" kb examples stress --db "$DB" --arch cpu --limit 3 --json
grep -q '"same_task":[[:space:]]*true' <<<"$OUT_TXT" && ok "examples json" || bad "examples: $OUT_TXT"

# Export, import into an empty database, export again: the same bytes.
expect_exit 0 "export" -- "$KFORGE" kb export --db "$DB" "$TMP/a.jsonl"
head -n 1 "$TMP/a.jsonl" | grep -q '"type":"kforge-export","version":1' && ok "export header" || bad "header"
expect_exit 0 "import into an empty database" -- "$KFORGE" kb import --db "$TMP/b.db" "$TMP/a.jsonl"
expect_exit 0 "export again" -- "$KFORGE" kb export --db "$TMP/b.db" "$TMP/b.jsonl"
cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl" && ok "import + export gives the same records" || bad "exports differ"
expect_exit 0 "export --run to stdout" -- "$KFORGE" kb export --db "$DB" --run 1 -
[ "$(grep -c '"type":"llm_call"' <<<"$OUT_TXT")" -eq 30 ] && ok "30 llm calls on stdout" || bad "stdout export"
printf 'not json\n' >"$TMP/bad.jsonl"
expect_exit 2 "import of a bad file" -- "$KFORGE" kb import --db "$TMP/b.db" "$TMP/bad.jsonl"

# Merge: a second database with its own run, then both into a new file.
expect_exit 0 "_stress into a second database" -- "$KFORGE" kb _stress --db "$TMP/c.db" --limit 10
expect_exit 0 "merge" -- "$KFORGE" kb merge "$DB" "$TMP/c.db" -o "$TMP/m.db"
expect_exit 0 "merged stats" -- "$KFORGE" kb stats --db "$TMP/m.db" --json
grep -qE '"runs":[[:space:]]*2,' <<<"$OUT_TXT" && grep -qE '"candidates":[[:space:]]*40,' <<<"$OUT_TXT" &&
	ok "merge keeps both runs" || bad "merged: $OUT_TXT"
expect_exit 2 "merge refuses an existing output" -- "$KFORGE" kb merge "$DB" -o "$TMP/m.db"
expect_exit 0 "merge --force" -- "$KFORGE" kb merge "$DB" "$TMP/m.db" -o "$TMP/m.db.2" --force
grep -q "already present: 1 tasks, 1 runs, 30 candidates" <<<"$OUT_TXT" && ok "merge dedupes" || bad "dedupe: $OUT_TXT"
expect_exit 2 "merge without -o" -- "$KFORGE" kb merge "$DB"

# kill -9 at random points while a writer records in a loop.
KDB=$TMP/kill.db
: >"$TMP/acked"
run=""
for round in 1 2 3 4 5; do
	if [ -n "$run" ]; then
		"$KFORGE" kb _stress --db "$KDB" --run "$run" >"$TMP/out.$round" 2>"$TMP/err.$round" &
	else
		"$KFORGE" kb _stress --db "$KDB" >"$TMP/out.$round" 2>"$TMP/err.$round" &
	fi
	pid=$!
	# Wait until the writer is recording (a sanitized build starts slowly), then kill it at a random point.
	for _ in $(seq 100); do
		grep -qE '^[0-9]+$' "$TMP/out.$round" 2>/dev/null && break
		sleep 0.1
	done
	sleep "0.$((RANDOM % 5))$((RANDOM % 10))"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ -z "$run" ] && run=$(sed -nE 's/^run ([0-9]+)$/\1/p' "$TMP/out.$round")
	grep -E '^[0-9]+$' "$TMP/out.$round" >>"$TMP/acked"
	if "$KFORGE" kb _check --db "$KDB" "$TMP/acked" >"$TMP/check" 2>&1; then
		ok "kill -9 round $round: integrity holds, every acknowledged record is there"
	else
		bad "kill -9 round $round: $(cat "$TMP/check")"
	fi
done
n_acked=$(sort -u "$TMP/acked" | wc -l)
[ "$n_acked" -gt 5 ] && ok "$n_acked records acknowledged across 5 kills" || bad "too few acknowledged records ($n_acked)"
# The resumed writer continued the lineage from the last recorded candidate of the run.
grep -q "^run $run resumed after candidate [1-9]" "$TMP/out.5" && ok "resume found the last step" ||
	bad "resume: $(head -n 2 "$TMP/out.5")"
"$KFORGE" kb show "run:$run" --db "$KDB" --json >"$TMP/run.json"
n_rec=$(sed -nE 's/^[[:space:]]*"n_candidates":[[:space:]]*([0-9]+),?$/\1/p' "$TMP/run.json" | head -n 1)
# A commit can land between the write and its acknowledgement: at most one extra record per kill.
if [ -n "$n_rec" ] && [ "$n_rec" -ge "$n_acked" ] && [ "$n_rec" -le $((n_acked + 5)) ]; then
	ok "run holds $n_rec candidates for $n_acked acknowledged"
else
	bad "run holds '$n_rec' candidates for $n_acked acknowledged"
fi
grep -q '"status":[[:space:]]*"running"' "$TMP/run.json" && ok "a killed run stays 'running' for a resume" ||
	bad "status after kill"
finish
