#!/usr/bin/env bash
# kforge optimize end to end against the scripted LLM server (tests/llm_server.py), one run per strategy on
# the cpu backend: the replies are a compile error, a wrong kernel, a correct but slower kernel and a correct
# faster one. The run must end with the faster one as best.cu, record every attempt, show the failures'
# feedback in the next prompts (from the server's request log), never put a hidden shape into a prompt; a
# replay of the exported run must reproduce the same candidates and verdicts.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }
command -v jq >/dev/null || { skip "jq not installed"; finish; exit; }
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export NO_PROXY='*' no_proxy='*'

# vadd_f32, timed (cpu: the largest public shape) where a 2x win clears the A/A noise band
TASK=$TOP/tests/data/optimize/task/task.json
DATA=$TOP/tests/data/optimize
python3 "$DATA/make_script.py" "$TMP/script.json" compile_error wrong slow fast
python3 "$TOP/tests/llm_server.py" --port 0 --port-file "$TMP/port" --script "$TMP/script.json" \
	--log "$TMP/log.jsonl" >"$TMP/server.out" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 200); do [ -s "$TMP/port" ] && break; sleep 0.05; done
port=$(cat "$TMP/port" 2>/dev/null)
[ -n "$port" ] || { bad "server did not start: $(cat "$TMP/server.out")"; finish; exit; }
base="http://127.0.0.1:$port"

# usage errors and a missing provider come before any work
expect_exit 2 "unknown strategy is a usage error" -- "$KFORGE" optimize "$TASK" --strategy annealing --backend cpu --fitness cpu
expect_exit 4 "no provider configured: exit 4 with a message" -- \
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_API_KEY -u ANTHROPIC_BASE_URL \
	"$KFORGE" optimize "$TASK" --backend cpu --fitness cpu --db "$TMP/none.db"
grep -q "OPENAI_API_KEY" <<<"$ERR_TXT" && ok "the message names the variables" || bad "message: $ERR_TXT"
expect_exit 4 "openai without a key for the public endpoint: exit 4" -- env -u OPENAI_API_KEY -u OPENAI_BASE_URL \
	"$KFORGE" optimize "$TASK" --provider openai --model gpt-4o --backend cpu --fitness cpu --db "$TMP/none.db" --out "$TMP/none"
expect_exit 2 "a missing task file: exit 2" -- "$KFORGE" optimize "$TMP/nope.json" --provider replay \
	--replay "$TOP/tests/data/demo/vector_add_f32.jsonl" --backend cpu --fitness cpu --db "$TMP/none.db" --out "$TMP/none"
expect_exit 2 "a missing replay file: exit 2" -- "$KFORGE" optimize "$TASK" --provider replay --replay "$TMP/nope.jsonl" \
	--backend cpu --fitness cpu --db "$TMP/none.db" --out "$TMP/none"

# sql DB QUERY
# sql DB QUERY: rows as a|b lines (the sqlite3 tool when present: it starts faster than python)
sql() { if command -v sqlite3 >/dev/null; then sqlite3 -batch "$1" "$2"; return; fi; python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print("|".join("" if v is None else str(v) for v in r)) for r in c.execute(sys.argv[2])]' "$1" "$2"; }

for strat in evo mcts; do
	curl -s -o /dev/null -X POST "$base/_control/script" -H 'Content-Type: application/json' --data @"$TMP/script.json"
	db=$TMP/$strat.db out=$TMP/out-$strat
	expect_exit 0 "$strat: optimize completes" -- env OPENAI_API_KEY=sk-test-KEY "$KFORGE" optimize "$TASK" \
		--strategy $strat --provider openai --model gpt-4o-mini --base-url "$base/v1" --backend cpu --fitness cpu \
		--concurrency 1 --budget-calls 4 --seed 7 --db "$db" --out "$out" --json
	echo "$OUT_TXT" >"$TMP/$strat.json"
	jq -e '.improved == true and .clock == "cpu" and .calls == 4 and .candidates == 4 and .verified == 2
		and .by_verdict.compile_error == 1 and .by_verdict.wrong_output == 1 and .spend_usd > 0' \
		"$TMP/$strat.json" >/dev/null && ok "$strat: json summary counts every attempt" || bad "$strat: summary $OUT_TXT"
	cmp -s "$out/best.cu" "$DATA/fast.cu" && ok "$strat: best.cu is the faster kernel" || bad "$strat: best.cu differs"
	[ -s "$out/report.md" ] && [ -s "$out/report.html" ] && ok "$strat: report.md and report.html written" ||
		bad "$strat: reports missing"
	run=$(jq -r .run_id "$TMP/$strat.json")
	[ "$(sql "$db" "select count(*) from llm_calls where run_id=$run")" = 4 ] && ok "$strat: 4 llm calls recorded" ||
		bad "$strat: llm calls: $(sql "$db" "select count(*) from llm_calls")"
	verdicts=$(sql "$db" "select coalesce(e.verdict,'-') from candidates c left join evaluations e on e.candidate_id=c.id where c.run_id=$run order by c.id" | tr '\n' ' ')
	[ "$verdicts" = "- compile_error wrong_output pass pass " ] && ok "$strat: every candidate and verdict recorded in order" ||
		bad "$strat: verdicts: $verdicts"
	[ "$(sql "$db" "select edit_kind from candidates where run_id=$run order by id limit 1")" = reference ] &&
		ok "$strat: the reference is the root candidate" || bad "$strat: no reference candidate"
	[ "$(sql "$db" "select count(*) from candidates where run_id=$run and edit_kind<>'reference' and (parent_id is null or llm_call_id is null)")" = 0 ] &&
		ok "$strat: every candidate has a parent and its llm call" || bad "$strat: lineage gaps"
	[ "$(sql "$db" "select status from runs where id=$run")" = budget ] && ok "$strat: run marked budget" ||
		bad "$strat: run status $(sql "$db" "select status from runs where id=$run")"
	# the request log: the pre-flight model check, then 4 requests; prompt i+1 carries the feedback of reply i
	jq -s '[.[] | select(.method == "POST")]' "$TMP/log.jsonl" >"$TMP/posts.json"
	n=$(jq length "$TMP/posts.json")
	[ "$n" = 4 ] && ok "$strat: 4 requests reached the server" || bad "$strat: $n requests"
	jq -s -e '[.[] | select(.method == "GET")] | length == 1 and .[0].path == "/v1/models/gpt-4o-mini"' "$TMP/log.jsonl" >/dev/null &&
		ok "$strat: one pre-flight model check before them" || bad "$strat: pre-flight: $(jq -c 'select(.method=="GET")' "$TMP/log.jsonl")"
	jq -e '.[1].body.messages | tostring | test("undeclared_scale") and test("compile_error")' "$TMP/posts.json" >/dev/null &&
		ok "$strat: the compile error's log is in the next prompt" || bad "$strat: no compile feedback in prompt 2"
	jq -e '.[2].body.messages | tostring | test("wrong_output") and test("Failing check")' "$TMP/posts.json" >/dev/null &&
		ok "$strat: the wrong kernel's failing check is in the next prompt" || bad "$strat: no wrong-output feedback in prompt 3"
	# 1031 as a number of its own (a CPU time such as 0.1031 ms or a value such as 2.10315 is not a shape)
	jq -s -e 'map(.body.messages | tostring) | all(test("(^|[^0-9.])1031([^0-9.]|$)|N=77([^0-9.]|$)|\"N\": ?77") | not)' "$TMP/log.jsonl" >/dev/null &&
		ok "$strat: no hidden shape in any prompt" || bad "$strat: a hidden shape value leaked into a prompt"
	jq -s -e 'all(.headers.Authorization // "" | test("sk-test-KEY") | not)' "$TMP/log.jsonl" >/dev/null &&
		ok "$strat: the server log holds no key" || bad "$strat: key in the log"
	cp "$TMP/log.jsonl" "$TMP/log-$strat.jsonl"
done

# the anthropic messages API against the same server
python3 "$DATA/make_script.py" "$TMP/script2.json" compile_error fast
curl -s -o /dev/null -X POST "$base/_control/script" -H 'Content-Type: application/json' --data @"$TMP/script2.json"
expect_exit 0 "anthropic: optimize completes" -- env -u OPENAI_API_KEY -u OPENAI_BASE_URL ANTHROPIC_API_KEY=sk-ant-test \
	"$KFORGE" optimize "$TASK" --model claude-test --base-url "$base" --backend cpu --fitness cpu --concurrency 1 \
	--budget-calls 2 --seed 3 --db "$TMP/anth.db" --out "$TMP/out-anth" --json
jq -e '.improved and .calls == 2' <<<"$OUT_TXT" >/dev/null && ok "anthropic: provider from the environment, improved" ||
	bad "anthropic: $OUT_TXT"
jq -s -e 'map(select(.method == "POST")) | length == 2 and all(.path == "/v1/messages" and (.body.max_tokens | type) == "number"
	and .body.system[0].cache_control.type == "ephemeral" and .body.messages[0].content[0].cache_control.type == "ephemeral"
	and (.body.messages[0].content[1].text | test("Your job")))' \
	"$TMP/log.jsonl" >/dev/null && ok "anthropic: messages requests with max_tokens, the static prefix marked for the prompt cache" ||
	bad "anthropic: requests $(head -c 600 "$TMP/log.jsonl")"

# replay: export the evo run, replay it with the same seed and concurrency into a fresh database
run=$(jq -r .run_id "$TMP/evo.json")
expect_exit 0 "kb export of the evo run" -- "$KFORGE" kb export --run "$run" --db "$TMP/evo.db" "$TMP/evo.jsonl"
expect_exit 0 "replay of the exported run completes" -- "$KFORGE" optimize "$TASK" --provider replay --strategy evo --budget-calls 4 \
	--replay "$TMP/evo.jsonl" --backend cpu --fitness cpu --concurrency 1 --seed 7 --db "$TMP/replay.db" --out "$TMP/out-replay" --json
rrun=$(jq -r .run_id <<<"$OUT_TXT")
q="select c.source_hash, coalesce(p.source_hash,''), c.edit_kind, coalesce(e.verdict,'-') from candidates c left join candidates p on p.id=c.parent_id left join evaluations e on e.candidate_id=c.id where c.run_id=RUN order by c.id"
a=$(sql "$TMP/evo.db" "${q/RUN/$run}") b=$(sql "$TMP/replay.db" "${q/RUN/$rrun}")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "replay reproduces the same candidates, parents and verdicts" ||
	bad "replay differs: $(diff <(echo "$a") <(echo "$b") | head -5)"
cmp -s "$TMP/out-replay/best.cu" "$DATA/fast.cu" && ok "replay: same best.cu" || bad "replay: best.cu differs"

# the README's main job (make demo) replays the committed transcript offline
expect_exit 0 "demo: the committed transcript replays" -- "$KFORGE" optimize "$TOP/tasks/examples/vector_add_f32/task.json" \
	--provider replay --replay "$TOP/tests/data/demo/vector_add_f32.jsonl" --backend cpu --concurrency 1 --seed 42 \
	--budget-calls 8 --out "$TMP/demo" --db "$TMP/demo/kforge.db"
# ranked by the cost model (clang-14 is here whenever the sanitizer is): a memory-bound vector add's
# rewrites are no GPU win, and the run says which clock it ranked on
if command -v "${KFORGE_SAN_CXX:-clang++-14}" >/dev/null; then
	grep -q "^clock: model (the GPU cost model" <<<"$OUT_TXT" && grep -q "report: $TMP/demo/report.md" <<<"$OUT_TXT" &&
		[ "$(sql "$TMP/demo/kforge.db" "select count(*) from timings where clock = 'model'")" -ge 5 ] &&
		[ "$(sql "$TMP/demo/kforge.db" "select count(*) from evaluations where verdict = 'pass' and arch <> 'model-v1-h100'")" = 0 ] &&
		ok "demo: ranked on the model clock, says so and where the report is; every pass has its model row" || bad "demo: $OUT_TXT"
else
	grep -q "^clock: cpu" <<<"$OUT_TXT" && ok "demo without clang-14: the CPU clock, said" || bad "demo: $OUT_TXT"
fi
[ "$(sql "$TMP/demo/kforge.db" "select group_concat(v, ' ') from (select coalesce(e.verdict,'-') v from candidates c left join evaluations e on e.candidate_id=c.id order by c.id)")" = "- out_of_bounds pass pass pass pass compile_error pass" ] &&
	ok "demo: out_of_bounds at a hidden shape, its repair, refinements, a compile error and its fix" ||
	bad "demo: verdicts $(sql "$TMP/demo/kforge.db" "select group_concat(v, ' ') from (select coalesce(e.verdict,'-') v from candidates c left join evaluations e on e.candidate_id=c.id order by c.id)")"
[ "$(sql "$TMP/demo/kforge.db" "select purpose || '/' || outcome from llm_calls where seq = 0")" = strategies/strategies ] &&
	[ "$(sql "$TMP/demo/kforge.db" "select count(distinct strategy_no) from candidates where edit_kind = 'seed'")" = 2 ] &&
	ok "demo: the first call proposes strategies; the two seeds implement different ones" || bad "demo: strategies"

finish
