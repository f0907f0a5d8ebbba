#!/usr/bin/env bash
# Truthful words (docs/spec/cli.md): with --json a failure is a JSON document on stdout too; a typo'd option
# gets a "did you mean"; the user's input is checked before the environment is talked about; an optimize
# run whose best is not significantly faster writes no best.cu (unless --keep-best), does not call itself
# improved, and counts candidates without the reference.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }
command -v jq >/dev/null || { skip "jq not installed"; finish; exit; }

expect_exit 2 "verify --json, missing task: exit 2" -- "$KFORGE" verify "$TMP/nope.json" x.cu --json
jq -e '.status == "error" and .exit == 2 and (.error | test("cannot open .*nope.json"))' <<<"$OUT_TXT" >/dev/null &&
	ok "... and the error is a JSON document on stdout" || bad "stdout: '$OUT_TXT'"
grep -q "^error: cannot open" <<<"$ERR_TXT" && ! grep -q "^note:" <<<"$ERR_TXT" &&
	ok "... the error on stderr, no environment note before it" || bad "stderr: $ERR_TXT"
expect_exit 2 "profile --json, missing task: exit 2" -- "$KFORGE" profile "$TMP/nope.json" x.cu --json
jq -e '.status == "error"' <<<"$OUT_TXT" >/dev/null && ok "... a JSON document too" || bad "profile stdout: '$OUT_TXT'"
expect_exit 2 "a typo'd option" -- "$KFORGE" verify "$TOP/tasks/l1/relu_f32/task.json" x.cu --timout-ms 5
grep -q "unknown option '--timout-ms'; did you mean '--timeout-ms'?" <<<"$ERR_TXT" && ok "... did you mean '--timeout-ms'" ||
	bad "typo: $ERR_TXT"
# one timeout spelling with its unit everywhere; the older --timeout SEC still works, both at once do not
expect_exit 0 "compile --timeout-ms" -- "$KFORGE" compile "$TOP/tasks/l1/relu_f32/reference.cu" --timeout-ms 60000
expect_exit 0 "compile --timeout (seconds, the older spelling)" -- "$KFORGE" compile "$TOP/tasks/l1/relu_f32/reference.cu" --timeout 60
expect_exit 2 "compile with both" -- "$KFORGE" compile "$TOP/tasks/l1/relu_f32/reference.cu" --timeout 60 --timeout-ms 60000
grep -q "say the same: give one" <<<"$ERR_TXT" && ok "... refused, saying why" || bad "both: $ERR_TXT"
expect_exit 2 "optimize --timeout-ms out of range" -- "$KFORGE" optimize "$TOP/tasks/l1/relu_f32/task.json" --provider openai --model m --timeout-ms 5
grep -q -- "--timeout-ms needs 100..86400000 milliseconds" <<<"$ERR_TXT" && ok "... names the range and unit" || bad "range: $ERR_TXT"
expect_exit 2 "an option nothing resembles" -- "$KFORGE" verify "$TOP/tasks/l1/relu_f32/task.json" x.cu --zzzzzz
! grep -q "did you mean" <<<"$ERR_TXT" && ok "... gets no suggestion" || bad "suggestion: $ERR_TXT"
expect_exit 0 "a good verify --json" -- "$KFORGE" verify "$TOP/tasks/l1/relu_f32/task.json" "$TOP/tasks/l1/relu_f32/reference.cu" --json --backend cpu
jq -e '.status == "pass"' <<<"$OUT_TXT" >/dev/null && [ "$(jq -s length <<<"$OUT_TXT")" = 1 ] &&
	ok "... prints exactly one document" || bad "verify json: $(head -c 300 <<<"$OUT_TXT")"

# optimize, the model answering with the reference itself: correct, never significantly faster
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy OPENAI_BASE_URL ANTHROPIC_API_KEY
export NO_PROXY='*' no_proxy='*'
TASK=$TOP/tests/data/vtasks/vadd_f32/task.json
python3 - "$TOP/tests/data/vtasks/vadd_f32/reference.cu" "$TMP/script.json" <<'PY'
import json, sys
src = open(sys.argv[1]).read()
e = {"text": "Here it is.\n\n```cuda\n" + src + "```\n", "tokens_in": 100, "tokens_out": 50, "repeat": 10}
json.dump({"replies": [e]}, open(sys.argv[2], "w"))
PY
python3 "$TOP/tests/llm_server.py" --port 0 --port-file "$TMP/port" --script "$TMP/script.json" \
	--log "$TMP/log.jsonl" >"$TMP/server.out" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(cat "$TMP/port" 2>/dev/null)"
opt() { OPENAI_API_KEY=sk-test "$KFORGE" optimize "$TASK" --base-url "$base/v1" --model gpt-4o-mini --backend cpu \
	--concurrency 1 --budget-calls 2 --seed 3 "$@"; }
expect_exit 0 "optimize, the reference as the only answer" -- opt --db "$TMP/o.db" --out "$TMP/o" --json
jq -e '.candidates == 2 and .verified == 2' <<<"$OUT_TXT" >/dev/null &&
	ok "... 2 candidates (the reference not counted), 2 verified" || bad "summary: $OUT_TXT"
jq -e '(.best_candidate_id == null) or (.noise_band >= 0.03)' <<<"$OUT_TXT" >/dev/null &&
	ok "... a best, if any, comes with its noise band" || bad "band: $OUT_TXT"
# improved means significant, and best.cu is written exactly then (a copy of the reference is a
# significant win only as an A/A false positive: rare, and then consistent too)
imp=$(jq -r '.improved' <<<"$OUT_TXT")
jq -e '.improved == .significant' <<<"$OUT_TXT" >/dev/null && ok "... improved only when significant ($imp)" ||
	bad "improved vs significant: $OUT_TXT"
{ [ "$imp" = true ] && [ -s "$TMP/o/best.cu" ]; } || { [ "$imp" = false ] && [ ! -e "$TMP/o/best.cu" ]; } &&
	[ -s "$TMP/o/report.md" ] && ok "... best.cu written exactly for a significant win, the report always" ||
	bad "best.cu ($imp): $(ls "$TMP/o")"
grep -q "| candidates | 2 (2 verified; the reference not counted) |" "$TMP/o/report.md" &&
	ok "... the report counts the same candidates" || bad "report: $(grep -n candidates "$TMP/o/report.md")"
expect_exit 0 "optimize --keep-best, text summary" -- opt --db "$TMP/k.db" --out "$TMP/k" --keep-best
if grep -q "^improved: " <<<"$OUT_TXT"; then
	[ -s "$TMP/k/best.cu" ] && ok "--keep-best: (an A/A false positive) written as a win" || bad "keep-best: $OUT_TXT"
elif grep -q "^no significant improvement" <<<"$OUT_TXT"; then
	[ -s "$TMP/k/best.cu" ] && grep -q "best.cu written (--keep-best)" <<<"$OUT_TXT" &&
		ok "--keep-best: a faster but not significant best is written, and said so" || bad "keep-best: $OUT_TXT"
else
	grep -q "^no verified improvement: 2 of 2 candidates passed verification, none faster" <<<"$OUT_TXT" &&
		ok "--keep-best: both slower than the reference, said so (not 'no candidate passed')" || bad "keep-best: $OUT_TXT"
fi
grep -q "candidates (the reference not counted)" <<<"$OUT_TXT" && ok "... the summary says what it counts" ||
	bad "summary line: $OUT_TXT"

# --resume RUN alone: the task, provider, model, base URL, strategy and budgets come from the run
expect_exit 0 "an evo run of 2 calls" -- opt --db "$TMP/r.db" --out "$TMP/r" --strategy evo --json
run=$(jq -r '.run_id' <<<"$OUT_TXT")
expect_exit 2 "--resume with another strategy is refused" -- env OPENAI_API_KEY=sk-test "$KFORGE" optimize \
	--resume "$run" --db "$TMP/r.db" --strategy mcts
grep -q "searched with --strategy evo; --strategy mcts cannot continue it" <<<"$ERR_TXT" && ok "... saying why" ||
	bad "strategy: $ERR_TXT"
expect_exit 0 "--resume RUN with only the run id (and a larger budget)" -- env OPENAI_API_KEY=sk-test \
	"$KFORGE" optimize --resume "$run" --db "$TMP/r.db" --budget-calls 3 --json
grep -q "resuming run $run: task $TASK, openai gpt-4o-mini, strategy evo, backend cpu, budget 3 calls; overridden: --budget-calls 3 (the run had 2)" <<<"$ERR_TXT" &&
	ok "... says what it continues with and what the command line overrides" || bad "resume note: $ERR_TXT"
jq -e ".run_id == $run and .calls == 3 and .candidates == 3" <<<"$OUT_TXT" >/dev/null &&
	ok "... the same run, one call more" || bad "resume: $OUT_TXT"
[ -s "$TMP/r/report.md" ] && ok "... into the run's own out folder" || bad "resume out: $(ls "$TMP/r")"
expect_exit 2 "--resume of a run that does not exist" -- env OPENAI_API_KEY=sk-test "$KFORGE" optimize --resume 99 --db "$TMP/r.db"
grep -q -- "--resume 99: no run 99" <<<"$ERR_TXT" && ok "... named" || bad "no run: $ERR_TXT"
finish
