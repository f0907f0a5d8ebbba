#!/usr/bin/env bash
# kforge optimize against the strict API stand-in (tests/llm_server.py), the way a new user meets the APIs:
# a bad key and an unknown model end the run within 3 requests (the pre-flight check), exit 4 with the API's
# message; a quota error, a 429 storm and a refusal streak stop it too, counted in --json, the reports and
# `kb list calls`; reasoning effort and thinking budgets reach the request bodies; a Responses-only model
# goes to /v1/responses; prices are right (claude-opus-4-6 at $5/$25) and an unknown one refuses
# --budget-usd; prompts carry the target's facts and, after a few calls, the lineage's earlier attempts; a
# reply whose edits do not apply is not evaluated.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }
command -v jq >/dev/null || { skip "jq not installed"; finish; exit; }
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
unset OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL KFORGE_MODEL
export NO_PROXY='*' no_proxy='*'

# vadd_f32, timed (cpu: the largest public shape) where a 2x win clears the A/A noise band
TASK=$TOP/tests/data/optimize/task/task.json
DATA=$TOP/tests/data/optimize
echo '{"replies": []}' >"$TMP/empty.json"
python3 "$TOP/tests/llm_server.py" --port 0 --port-file "$TMP/port" --script "$TMP/empty.json" \
	--log "$TMP/log.jsonl" >"$TMP/server.out" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 600); do [ -s "$TMP/port" ] && break; kill -0 $srv 2>/dev/null || break; sleep 0.1; done
port=$(cat "$TMP/port" 2>/dev/null)
[ -n "$port" ] || { bad "server did not start: $(cat "$TMP/server.out")"; finish; exit; }
base="http://127.0.0.1:$port"
STRATS='{"text": "1. Vectorized: float4 loads and stores with a scalar tail\n2. Grid-stride: a grid-stride loop over fewer blocks\n3. Wide blocks: 1024 threads per block, one element each\n4. Unrolled: four elements per thread, unrolled, coalesced", "tokens_in": 500, "tokens_out": 100}'
# script ENTRY...: the server's script (make_script.py entries), a fresh log; EXTRA (JSON object) is merged in
script() {
	python3 "$DATA/make_script.py" "$TMP/script.json" "$@"
	[ -n "${EXTRA:-}" ] && jq -c ". + $EXTRA" "$TMP/script.json" >"$TMP/s2.json" && mv "$TMP/s2.json" "$TMP/script.json"
	curl -s -o /dev/null -X POST "$base/_control/script" -H 'Content-Type: application/json' --data @"$TMP/script.json"
}
requests() { sleep 0.3; wc -l <"$TMP/log.jsonl"; }
posts() { sleep 0.3; jq -s '[.[] | select(.method == "POST")]' "$TMP/log.jsonl"; }
sql() { if command -v sqlite3 >/dev/null; then sqlite3 -batch "$1" "$2"; return; fi; python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print("|".join("" if v is None else str(v) for v in r)) for r in c.execute(sys.argv[2])]' "$1" "$2"; }
oa() { env OPENAI_API_KEY=${KEY:-sk-test} "$KFORGE" optimize "$TASK" --base-url "$base/v1" --backend cpu --fitness cpu --seed 5 \
	--concurrency 1 "$@"; }
an() { env ANTHROPIC_API_KEY=sk-ant-test "$KFORGE" optimize "$TASK" --base-url "$base" --backend cpu --fitness cpu --seed 5 \
	--concurrency 1 "$@"; }

# ---- 1. loud, early failure ---------------------------------------------------------------------------
EXTRA='{"require_key": "sk-right"}' script fast fast
KEY=sk-wrong expect_exit 4 "bad key: exit 4" -- oa --model gpt-4o-mini --db "$TMP/k.db" --out "$TMP/out-k"
grep -q "Incorrect API key" <<<"$ERR_TXT" && ok "bad key: the API's message on stderr" || bad "bad key: stderr $ERR_TXT"
n=$(requests)
[ "$n" -le 3 ] && ok "bad key: the run ended within 3 requests ($n)" || bad "bad key: $n requests"
[ ! -e "$TMP/k.db" ] || [ "$(sql "$TMP/k.db" "select count(*) from runs")" = 0 ] && ok "bad key: no run was started" ||
	bad "bad key: a run was recorded"

EXTRA='{"models": ["gpt-4o-mini"]}' script fast fast
expect_exit 4 "unknown model: exit 4" -- oa --model gpt-nope --db "$TMP/m.db" --out "$TMP/out-m"
grep -q "does not serve model 'gpt-nope'" <<<"$ERR_TXT" && grep -q "does not exist" <<<"$ERR_TXT" &&
	ok "unknown model: named on stderr with the API's message" || bad "unknown model: stderr $ERR_TXT"
n=$(requests)
[ "$n" -le 3 ] && ok "unknown model: the run ended within 3 requests ($n)" || bad "unknown model: $n requests"

EXTRA='{"models": ["claude-known"]}' script fast fast
expect_exit 4 "anthropic unknown model: exit 4" -- an --model claude-nope --db "$TMP/m2.db" --out "$TMP/out-m2"
grep -q "not_found_error" <<<"$ERR_TXT" && ok "anthropic unknown model: its not_found_error on stderr" ||
	bad "anthropic: stderr $ERR_TXT"
EXTRA='{"require_key": "sk-right"}' script fast
expect_exit 4 "anthropic bad key: exit 4" -- an --model claude-known --db "$TMP/k2.db" --out "$TMP/out-k2"
grep -q "authentication_error" <<<"$ERR_TXT" && [ "$(requests)" -le 3 ] && ok "anthropic bad key: message, within 3 requests" ||
	bad "anthropic bad key: $ERR_TXT"

# a quota error mid-run: exit 4, the run recorded as failed, the failure counted everywhere
script "$STRATS" fast '{"fault": "429", "quota": true}' fast fast
expect_exit 4 "quota: exit 4" -- oa --model gpt-4o-mini --budget-calls 10 --db "$TMP/q.db" --out "$TMP/out-q" --json
grep -q "insufficient_quota" <<<"$ERR_TXT" && ok "quota: the API's code and message on stderr" || bad "quota: stderr $ERR_TXT"
jq -e '.status == "failed" and .calls == 3 and .calls_failed == 1 and .failures.quota == 1 and .candidates == 1
	and (.stop_reason | test("quota"))' <<<"$OUT_TXT" >/dev/null &&
	ok "quota: --json counts the failed call by its kind" || bad "quota: summary $OUT_TXT"
[ "$(sql "$TMP/q.db" "select status from runs")" = failed ] && ok "quota: run recorded as failed" || bad "quota: run status"
grep -q "| failed | quota | 1 |" "$TMP/out-q/report.md" && grep -q "quota" "$TMP/out-q/report.html" &&
	ok "quota: both reports list the failed call with its reason" || bad "quota: report $(grep -n quota "$TMP/out-q/report.md")"
expect_exit 0 "kb list calls" -- "$KFORGE" kb list calls --db "$TMP/q.db"
grep -E "failed +stop|failed" <<<"$OUT_TXT" | grep -q "quota: http 429" && grep -q "strategies" <<<"$OUT_TXT" &&
	ok "kb list calls: each call's purpose, outcome and reason" || bad "kb list calls: $OUT_TXT"

# a 429 storm: every attempt rate limited; 3 failed calls in a row stop the run (each after its 2 retries)
script '{"fault": "429", "retry_after_ms": "10", "repeat": 100}'
t0=$(date +%s)
expect_exit 4 "429 storm: exit 4" -- oa --model gpt-4o-mini --budget-calls 20 --db "$TMP/s.db" --out "$TMP/out-s" --json
grep -q "3 calls in a row failed" <<<"$ERR_TXT" && grep -q "rate_limit" <<<"$ERR_TXT" &&
	ok "429 storm: stops after 3 failed calls, says why" || bad "429 storm: $ERR_TXT"
[ "$(posts | jq length)" = 9 ] && ok "429 storm: 3 calls x 3 attempts, not 20 calls" || bad "429 storm: $(posts | jq length) requests"
jq -e '.calls_failed == 3 and .failures.rate_limit == 3' <<<"$OUT_TXT" >/dev/null && ok "429 storm: counted as rate_limit" ||
	bad "429 storm: $OUT_TXT"

# a refusal streak
script "$STRATS" '{"refusal": "I cannot help with that.", "repeat": 10}'
expect_exit 4 "refusals: exit 4" -- oa --model gpt-4o-mini --budget-calls 10 --db "$TMP/r.db" --out "$TMP/out-r" --json
grep -q "refused 3 times in a row" <<<"$ERR_TXT" && grep -q "I cannot help" <<<"$ERR_TXT" &&
	ok "refusals: 3 in a row stop the run with the model's words" || bad "refusals: $ERR_TXT"

# ---- 2. model-aware calls -------------------------------------------------------------------------------
script fast fast
expect_exit 0 "reasoning effort: run" -- oa --model gpt-5.4 --reasoning-effort high --budget-calls 2 --db "$TMP/e.db" \
	--out "$TMP/out-e" --json
posts | jq -e 'length == 2 and all(.body.reasoning_effort == "high" and .body.max_completion_tokens == 32768
	and (.body | has("temperature") | not))' >/dev/null &&
	ok "--reasoning-effort high in the request bodies, 32768 output tokens" || bad "effort bodies: $(posts | jq -c '.[0].body | del(.messages)')"
expect_exit 2 "a temperature for a reasoning model is refused before any request" -- oa --model gpt-5.4 --temperature 0.5 \
	--budget-calls 2 --db "$TMP/e2.db" --out "$TMP/out-e2"
grep -q "does not take a temperature" <<<"$ERR_TXT" && ok "... saying why" || bad "temperature: $ERR_TXT"

EXTRA='{"models": ["claude-opus-4-6"]}' script fast fast
expect_exit 0 "thinking budget: run" -- an --model claude-opus-4-6 --thinking-budget 4000 --budget-calls 2 --db "$TMP/t.db" \
	--out "$TMP/out-t" --json
posts | jq -e 'length == 2 and all(.path == "/v1/messages" and .body.thinking.type == "enabled" and .body.thinking.budget_tokens == 4000
	and .body.max_tokens > 4000)' >/dev/null && ok "--thinking-budget 4000 in the request bodies" || bad "thinking bodies"
# 2 calls x (1000 in, 200 out) at $5/$25 per 1M: 2 x (0.005 + 0.005)
jq -e '(.spend_usd - 0.02 | fabs) < 1e-9' <<<"$OUT_TXT" >/dev/null && ok "claude-opus-4-6 costs \$5/\$25 per million tokens" ||
	bad "opus cost: $(jq .spend_usd <<<"$OUT_TXT")"
[ "$(sql "$TMP/t.db" "select printf('%.6f', sum(cost_usd)) from llm_calls")" = 0.020000 ] && ok "... and so do its recorded calls" ||
	bad "opus recorded cost"

script fast fast
expect_exit 0 "a Responses-only model: run" -- oa --model gpt-5-pro --budget-calls 2 --db "$TMP/p.db" --out "$TMP/out-p" --json
posts | jq -e 'length == 2 and all(.path == "/v1/responses" and .body.max_output_tokens == 32768 and (.body.input | length) == 1)' >/dev/null &&
	jq -e '.improved' <<<"$OUT_TXT" >/dev/null && ok "gpt-5-pro goes to /v1/responses and the run completes" ||
	bad "responses: $(posts | jq -c '.[] | .path')"

# both keys set: the model name picks the provider
script fast
expect_exit 0 "both keys: run" -- env OPENAI_API_KEY=sk-o ANTHROPIC_API_KEY=sk-a OPENAI_BASE_URL="$base/v1" ANTHROPIC_BASE_URL="$base" \
	"$KFORGE" optimize "$TASK" --model claude-sonnet-4-5 --backend cpu --fitness cpu --budget-calls 1 --db "$TMP/b.db" --out "$TMP/out-b"
posts | jq -e 'length == 1 and .[0].path == "/v1/messages"' >/dev/null && ok "both keys: claude-sonnet-4-5 goes to Anthropic" ||
	bad "both keys: $(posts | jq -c '.[] | .path')"

# ---- 3. prices --------------------------------------------------------------------------------------------
script fast
expect_exit 2 "unknown price with --budget-usd: refused" -- oa --model local-model --budget-usd 1 --db "$TMP/u.db" --out "$TMP/out-u"
grep -q "has no price" <<<"$ERR_TXT" && grep -q -- "--price-in" <<<"$ERR_TXT" && ok "... naming --price-in/--price-out" ||
	bad "unknown price: $ERR_TXT"
script fast
expect_exit 0 "unknown price without a budget: a warning" -- oa --model local-model --budget-calls 1 --db "$TMP/u2.db" --out "$TMP/out-u2"
grep -q "warning: model 'local-model' has no price" <<<"$ERR_TXT" && ok "... on stderr" || bad "warning: $ERR_TXT"
script fast
expect_exit 0 "--price-in/--price-out price it" -- oa --model local-model --price-in 2 --price-out 4 --budget-usd 1 --budget-calls 1 \
	--db "$TMP/u3.db" --out "$TMP/out-u3" --json
jq -e '(.spend_usd - (1000 * 2 + 200 * 4) / 1e6 | fabs) < 1e-12' <<<"$OUT_TXT" >/dev/null && ok "... at the given rates" ||
	bad "price-in: $OUT_TXT"

# ---- 4/5/6. what the prompts carry --------------------------------------------------------------------------
script "$STRATS" compile_error wrong fast fast fast fast fast
expect_exit 0 "memory: run" -- oa --model gpt-4o-mini --budget-calls 8 --db "$TMP/h.db" --out "$TMP/out-h" --json
posts >"$TMP/h.json"
jq -e '.[0].body.messages[1].content | test("propose 4 distinct strategies")' "$TMP/h.json" >/dev/null &&
	ok "the first call asks for 4 strategies" || bad "no strategy call"
jq -e '.[1].body.messages | tostring | test("DRAM bandwidth [0-9.]+ TB/s") and test("TFLOP/s") and test("shared memory")
	and test("roofline floor") and test("Playbook")' "$TMP/h.json" >/dev/null &&
	ok "the seed prompt carries bandwidth, FLOP/s, smem facts, the floor and a playbook" || bad "no target facts"
jq -e '.[1].body.messages | tostring | test("Your line of attack") and test("Vectorized: float4")' "$TMP/h.json" >/dev/null &&
	jq -e '.[2].body.messages | tostring | test("Grid-stride: a grid-stride")' "$TMP/h.json" >/dev/null &&
	ok "the seeds follow different proposed strategies" || bad "strategies not in seed prompts"
jq -e '[.[3:][] | .body.messages | tostring | test("Earlier attempts on this lineage") and test("-> (compile_error|wrong_output)")] | any' \
	"$TMP/h.json" >/dev/null && ok "later prompts carry earlier attempts with their verdicts" || bad "no history in later prompts"
jq -e '[.[] | .body.messages | tostring] | (unique | length) == length' "$TMP/h.json" >/dev/null &&
	ok "no two prompts are the same" || bad "identical prompts"
[ "$(sql "$TMP/h.db" "select count(*) from candidates where change <> '' and edit_kind <> 'reference'")" -ge 1 ] &&
	ok "the model's one-line rationale is stored in candidates.change" || bad "no rationale stored"
[ "$(sql "$TMP/h.db" "select count(*) from lessons")" -ge 2 ] && ok "lessons of the failures are stored" || bad "no lessons"

# a second run on the same knowledge base: the first run's lessons and (CPU-clock, labelled so) wins
script fast fast
expect_exit 0 "memory: a second run" -- oa --model gpt-4o-mini --budget-calls 2 --db "$TMP/h.db" --out "$TMP/out-h2"
posts >"$TMP/h2.json"
jq -e '.[0].body.messages[1].content | test("Lessons from earlier runs") and test("-> (compile_error|wrong_output)")' "$TMP/h2.json" >/dev/null &&
	ok "a later run's prompt carries the lessons of an earlier one" || bad "no lessons in the second run"
jq -e '.[0].body.messages[1].content | test("Fast kernels from the knowledge base") and test("CPU-clock ratios")' "$TMP/h2.json" >/dev/null &&
	ok "... and its CPU-clock wins, said to be CPU-clock" || bad "no labelled examples in the second run"

# two identical prompts in flight (two seeds, no strategies, concurrency 2): the second says it is another attempt
script fast fast
expect_exit 0 "dedupe: run" -- env OPENAI_API_KEY=sk-test "$KFORGE" optimize "$TASK" --base-url "$base/v1" --backend cpu --fitness cpu --seed 5 \
	--model gpt-4o-mini --concurrency 2 --budget-calls 2 --db "$TMP/dd.db" --out "$TMP/out-dd"
posts >"$TMP/dd.json"
jq -e 'length == 2 and (.[0].body.messages != .[1].body.messages) and (map(.body.messages[1].content | test("Attempt 2 of several")) | any)' \
	"$TMP/dd.json" >/dev/null && ok "no two identical prompts in flight" || bad "identical prompts in flight"

# ---- 7. a reply whose edits do not all apply is not evaluated ------------------------------------------------
DIFF='{"text": "Change: nothing real.\n\n<<<<<<< SEARCH\nthis line is not in the parent\n=======\nx\n>>>>>>> REPLACE\n"}'
# (two seeds, then the failed seed is repaired: the replies to it are edits that match nothing)
script fast compile_error "$DIFF" "$DIFF" fast
expect_exit 0 "edits: run" -- oa --model gpt-4o-mini --budget-calls 5 --db "$TMP/d.db" --out "$TMP/out-d" --json
jq -e '.candidates == 3 and .replies_unusable == 2 and .unusable.edits_not_applied == 2' <<<"$OUT_TXT" >/dev/null &&
	ok "edits that do not apply: not evaluated, counted as unusable" || bad "edits: $OUT_TXT"
posts >"$TMP/d.json"
jq -e '.[3].body.messages | tostring | test("a reply to #3: .*did not match the parent")' "$TMP/d.json" >/dev/null &&
	ok "... and the failure is fed back in the next prompt about that kernel" || bad "edit failure not fed back"
jq -e '(.[2].body.messages[1].content | test("SEARCH/REPLACE blocks")) and (.[4].body.messages[1].content | test("complete new kernel file"))' \
	"$TMP/d.json" >/dev/null && ok "... and after two such replies whole files are asked for" || bad "no fallback to whole files"

finish
