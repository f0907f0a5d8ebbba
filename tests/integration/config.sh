#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# kforge optimize's config file (docs/config.md): --print-config shows every key with its value and source
# (no file, ./kforge.json, --config FILE, a flag over the file, the file over the environment), a bad file is
# exit 2 naming the file and the key, and a real run (the replay provider, offline) records the file's search
# parameters in its run config, which --resume keeps (and a file that differs cannot change).
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { skip "jq not installed"; finish; exit; }
unset KFORGE_MODEL KFORGE_PROMPTS OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
TASK=$TOP/tasks/examples/vector_add_f32/task.json
REPLAY=$TOP/tests/data/demo/vector_add_f32.jsonl
# sql DB QUERY: rows as a|b lines (the sqlite3 tool when present, else python)
sql() { if command -v sqlite3 >/dev/null; then sqlite3 -batch "$1" "$2"; return; fi; python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print("|".join("" if v is None else str(v) for v in r)) for r in c.execute(sys.argv[2])]' "$1" "$2"; }
# pc JQ: true when the last --print-config document satisfies JQ
pc() { jq -e "$1" <<<"$OUT_TXT" >/dev/null; }

# 1. no file: every key at its default, no API key needed, no TASK needed
mkdir -p "$TMP/empty" && cd "$TMP/empty" || exit 1
expect_exit 0 "--print-config with no file, no TASK, no API key" -- "$KFORGE" optimize --print-config
pc '.format == "kforge-config/1" and .file == null' && ok "... no file read" || bad "file: $OUT_TXT"
pc '[.optimize | .. | objects | select(has("source")) | .source] | length == 28 and all(. == "default")' &&
	ok "... all 17 keys and 11 search parameters from the defaults" || bad "sources: $OUT_TXT"
pc '.optimize.strategy.value == "schedule" and .optimize.budget_calls.value == 20 and .optimize.concurrency.value == 4
	and .optimize.backend.value == "auto" and .optimize.model.value == null and .optimize.keep_best.value == false
	and .optimize.search.islands.value == 2 and .optimize.search.patience_min.value == 8
	and .optimize.search.patience_share.value == 0.3 and .optimize.search.p_explore.value == 0.85' &&
	ok "... with the built-in values" || bad "defaults: $OUT_TXT"
[ "$(jq -s length <<<"$OUT_TXT")" = 1 ] && [ -z "$ERR_TXT" ] && ok "... one document on stdout, nothing on stderr" ||
	bad "output: $ERR_TXT"
expect_exit 0 "the environment: KFORGE_MODEL" -- env KFORGE_MODEL=env-model "$KFORGE" optimize --print-config
pc '.optimize.model == {"value": "env-model", "source": "env"}' && ok "... model from env" || bad "env: $OUT_TXT"
expect_exit 2 "--print-config with --resume is refused" -- "$KFORGE" optimize --print-config --resume 1
expect_exit 2 "without --print-config TASK is still needed" -- "$KFORGE" optimize
"$KFORGE" optimize --help | grep -q -- "--config FILE" && ok "--help documents --config" || bad "help lacks --config"

# 2. ./kforge.json in the current folder
mkdir -p "$TMP/here/prompts" && cd "$TMP/here" || exit 1
cat >kforge.json <<'JSON'
{
  "format": "kforge-config/1",
  "optimize": {
    "strategy": "evo", "provider": "openai", "model": "file-model", "budget_calls": 7, "temperature": 0.5,
    "backend": "cpu", "keep_best": true, "prompts": "prompts",
    "search": {"islands": 3, "patience_min": 5}
  }
}
JSON
expect_exit 0 "--print-config reads ./kforge.json" -- "$KFORGE" optimize --print-config
pc '.file == "kforge.json"' && ok "... named as the file" || bad "file: $OUT_TXT"
pc '.optimize.strategy == {"value": "evo", "source": "file"} and .optimize.model == {"value": "file-model", "source": "file"}
	and .optimize.budget_calls == {"value": 7, "source": "file"} and .optimize.temperature == {"value": 0.5, "source": "file"}
	and .optimize.keep_best == {"value": true, "source": "file"} and .optimize.provider == {"value": "openai", "source": "file"}
	and .optimize.search.islands == {"value": 3, "source": "file"} and .optimize.search.patience_min == {"value": 5, "source": "file"}
	and .optimize.search.migrate_every == {"value": 5, "source": "default"} and .optimize.concurrency.source == "default"' &&
	ok "... each value it sets, marked file; the rest default" || bad "file values: $OUT_TXT"
expect_exit 0 "flags override the file" -- "$KFORGE" optimize "$TASK" --print-config --budget-calls 9 --strategy mcts --model m2
pc '.optimize.budget_calls == {"value": 9, "source": "flag"} and .optimize.strategy == {"value": "mcts", "source": "flag"}
	and .optimize.model == {"value": "m2", "source": "flag"} and .optimize.temperature.source == "file"' &&
	ok "... source flag" || bad "flags: $OUT_TXT"
expect_exit 0 "the file overrides the environment" -- env KFORGE_MODEL=env-model OPENAI_BASE_URL=http://env.example/v1 \
	"$KFORGE" optimize --print-config
pc '.optimize.model == {"value": "file-model", "source": "file"} and .optimize.base_url == {"value": "http://env.example/v1", "source": "env"}' &&
	ok "... model from the file over KFORGE_MODEL; base_url from the environment it does not set" || bad "env vs file: $OUT_TXT"
expect_exit 0 "--config none ignores ./kforge.json" -- "$KFORGE" optimize --print-config --config none
pc '.file == null and .optimize.model.source == "default" and .optimize.search.islands.value == 2' && ok "... all defaults" ||
	bad "none: $OUT_TXT"

# 3. --config FILE from elsewhere; its relative prompts folder is the file's neighbour
mkdir -p "$TMP/conf/tmpl"
printf '{"format": "kforge-config/1", "optimize": {"prompts": "tmpl", "seed": 5, "search": {"uct_c": 2.5}}}\n' >"$TMP/conf/k.json"
expect_exit 0 "--config FILE" -- "$KFORGE" optimize --print-config --config "$TMP/conf/k.json"
pc ".file == \"$TMP/conf/k.json\" and .optimize.prompts == {\"value\": \"$TMP/conf/tmpl\", \"source\": \"file\"}
	and .optimize.seed == {\"value\": 5, \"source\": \"file\"} and .optimize.search.uct_c == {\"value\": 2.5, \"source\": \"file\"}
	and .optimize.model.source == \"default\"" &&
	ok "... its values (not ./kforge.json's), prompts resolved against its folder" || bad "--config: $OUT_TXT"
expect_exit 0 "--prompts over the file, KFORGE_PROMPTS under it" -- env KFORGE_PROMPTS=/nowhere \
	"$KFORGE" optimize --print-config --config "$TMP/conf/k.json" --prompts "$TMP/here/prompts"
pc ".optimize.prompts == {\"value\": \"$TMP/here/prompts\", \"source\": \"flag\"}" && ok "... source flag" || bad "prompts: $OUT_TXT"
expect_exit 0 "KFORGE_PROMPTS without a file" -- env KFORGE_PROMPTS=/nowhere "$KFORGE" optimize --print-config --config none
pc '.optimize.prompts == {"value": "/nowhere", "source": "env"}' && ok "... source env" || bad "prompts env: $OUT_TXT"

# 4. bad files: exit 2, the file and the dotted key named
bad_file() { # DESC TEXT MESSAGE
	printf '%s\n' "$2" >"$TMP/conf/bad.json"
	expect_exit 2 "$1: exit 2" -- "$KFORGE" optimize "$TASK" --config "$TMP/conf/bad.json"
	grep -qF -- "error: $TMP/conf/bad.json$3" <<<"$ERR_TXT" && ok "... $ERR_TXT" || bad "$1: $ERR_TXT"
}
bad_file "a wrong type" '{"format": "kforge-config/1", "optimize": {"search": {"islands": "x"}}}' \
	': optimize.search.islands: expected an integer 1..32, got "x"'
bad_file "out of range" '{"format": "kforge-config/1", "optimize": {"concurrency": 100}}' \
	': optimize.concurrency: expected an integer 1..64, got 100'
bad_file "an unknown key" '{"format": "kforge-config/1", "optimize": {"budget_call": 3}}' \
	": optimize: unknown key 'budget_call'; did you mean 'budget_calls'?"
bad_file "malformed JSON" $'{"format": "kforge-config/1",\n "optimize": {"model": "x",}}' ':2:'
bad_file "another format" '{"format": "kforge-config/2"}' ': format: expected "kforge-config/1", got "kforge-config/2"'
bad_file "a prompts folder that is not there" '{"format": "kforge-config/1", "optimize": {"prompts": "nope"}}' \
	": optimize.prompts: '$TMP/conf/nope' is not a folder"
expect_exit 2 "a missing --config file: exit 2" -- "$KFORGE" optimize "$TASK" --config "$TMP/conf/missing.json"
grep -q "missing.json" <<<"$ERR_TXT" && ok "... named" || bad "missing: $ERR_TXT"
printf '{"format": "kforge-config/1", "optimize": {"modle": "x"}}\n' >"$TMP/here/kforge.json"
expect_exit 2 "a bad ./kforge.json is an error too (even for --print-config)" -- "$KFORGE" optimize --print-config
grep -qF "error: kforge.json: optimize: unknown key 'modle'; did you mean 'model'?" <<<"$ERR_TXT" && ok "... named" ||
	bad "kforge.json: $ERR_TXT"
expect_exit 0 "... and --config none skips it" -- "$KFORGE" optimize --print-config --config none

# 5. a real run (replay, offline) with the file's search parameters, recorded in the run's config
mkdir -p "$TMP/run" && cd "$TMP/run" || exit 1
cat >kforge.json <<'JSON'
{"format": "kforge-config/1",
 "optimize": {"strategy": "evo", "backend": "cpu", "concurrency": 1, "seed": 42, "budget_calls": 4,
              "search": {"islands": 3, "migrate_every": 2, "patience_min": 2, "patience_share": 0.1}}}
JSON
DB=$TMP/run/c.db
expect_exit 0 "a replayed run with ./kforge.json" -- "$KFORGE" optimize "$TASK" --provider replay --replay "$REPLAY" \
	--db "$DB" --out "$TMP/run/o" --json
run=$(jq -r .run_id <<<"$OUT_TXT")
sql "$DB" "select config from runs where id=$run" >"$TMP/run/config.json"
jq -e '.search == {"islands": 3, "migrate_every": 2, "p_exploit": 0.6, "p_explore": 0.85, "uct_c": 1,
	"mcts_max_children": 4, "patience_min": 2, "patience_share": 0.1, "repair_max_depth": 2,
	"schedule_seed_share": 0.2, "schedule_repair_max_depth": 3}
	and .islands == 3 and .early_stop_after == 2 and .strategy == "evo" and .concurrency == 1' "$TMP/run/config.json" >/dev/null &&
	ok "... the run's config records every search parameter (and islands, early_stop_after)" ||
	bad "run config: $(cat "$TMP/run/config.json")"
[ "$(sql "$DB" "select strategy || ' ' || seed || ' ' || budget_calls || ' ' || backend from runs where id=$run")" = "evo 42 4 cpu" ] &&
	ok "... and the file's strategy, seed, budget and backend" || bad "run row: $(sql "$DB" "select * from runs")"
grep -q "in 2 attempts" <<<"$(jq -r .stop_reason <<<"$OUT_TXT")" && ok "... it stopped on the file's patience (2)" ||
	bad "stop: $OUT_TXT"

# --resume keeps them: with no file at all it still stops after 2 attempts (the default would be 8)
printf '{"format": "kforge-config/1", "optimize": {"search": {"islands": 4}}}\n' >"$TMP/run/other.json"
expect_exit 2 "--resume with a file whose search parameters differ is refused" -- "$KFORGE" optimize --resume "$run" \
	--db "$DB" --provider replay --replay "$REPLAY" --config "$TMP/run/other.json"
grep -qF "the run searched with search.islands 3; $TMP/run/other.json's 4 cannot continue it" <<<"$ERR_TXT" &&
	ok "... saying why" || bad "conflict: $ERR_TXT"
printf '{"format": "kforge-config/1", "optimize": {"strategy": "mcts"}}\n' >"$TMP/run/strat.json"
expect_exit 2 "--resume with a file's other strategy is refused" -- "$KFORGE" optimize --resume "$run" \
	--db "$DB" --provider replay --replay "$REPLAY" --config "$TMP/run/strat.json"
grep -qF "strat.json's strategy mcts cannot continue it" <<<"$ERR_TXT" && ok "... saying why" || bad "strategy: $ERR_TXT"
printf '{"format": "kforge-config/1", "optimize": {"budget_calls": 8}}\n' >"$TMP/run/more.json"
expect_exit 0 "--resume with a file that raises the budget" -- "$KFORGE" optimize --resume "$run" --db "$DB" \
	--provider replay --replay "$REPLAY" --config "$TMP/run/more.json" --json
grep -qF "overridden: budget_calls 8 from $TMP/run/more.json (the run had 4)" <<<"$ERR_TXT" &&
	ok "... the file's value said as an override" || bad "resume note: $ERR_TXT"
jq -e ".run_id == $run and .calls < 8 and (.stop_reason | test(\"in 2 attempts\"))" <<<"$OUT_TXT" >/dev/null &&
	ok "... the resumed run searched with the recorded patience (2), not the default" || bad "resumed: $OUT_TXT"
finish
