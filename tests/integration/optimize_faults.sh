#!/usr/bin/env bash
# kforge optimize under trouble: injected API faults (a 429 with retry-after, a 500, a reply slower than the
# timeout) are retried and the run loses nothing; SIGINT stops a run with exit 130, recorded as interrupted
# and resumable; a run killed with kill -9 mid-request resumes from the knowledge base and finishes.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }
command -v jq >/dev/null || { skip "jq not installed"; finish; exit; }
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export NO_PROXY='*' no_proxy='*'

# vadd_f32, timed (cpu: the largest public shape) where a 2x win clears the A/A noise band
TASK=$TOP/tests/data/optimize/task/task.json
DATA=$TOP/tests/data/optimize
echo '{"replies": []}' >"$TMP/empty.json"
python3 "$TOP/tests/llm_server.py" --port 0 --port-file "$TMP/port" --script "$TMP/empty.json" \
	--log "$TMP/log.jsonl" >"$TMP/server.out" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 200); do [ -s "$TMP/port" ] && break; sleep 0.05; done
port=$(cat "$TMP/port" 2>/dev/null)
[ -n "$port" ] || { bad "server did not start: $(cat "$TMP/server.out")"; finish; exit; }
base="http://127.0.0.1:$port"
script() { # script ENTRY...: replace the server's script (and empty its log)
	python3 "$DATA/make_script.py" "$TMP/script.json" "$@"
	curl -s -o /dev/null -X POST "$base/_control/script" -H 'Content-Type: application/json' --data @"$TMP/script.json"
}
# sql DB QUERY: rows as a|b lines (the sqlite3 tool when present: it starts faster than python)
sql() { if command -v sqlite3 >/dev/null; then sqlite3 -batch "$1" "$2"; return; fi; python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print("|".join("" if v is None else str(v) for v in r)) for r in c.execute(sys.argv[2])]' "$1" "$2"; }
opt() { env OPENAI_API_KEY=sk-test "$KFORGE" optimize "$TASK" --provider openai --model gpt-4o-mini \
	--base-url "$base/v1" --backend cpu --fitness cpu --seed 11 "$@"; }
# the same as a background job whose pid is kforge's own (signals must reach kforge, not a subshell)
opt_bg() { exec env OPENAI_API_KEY=sk-test "$KFORGE" optimize "$TASK" --provider openai --model gpt-4o-mini \
	--base-url "$base/v1" --backend cpu --fitness cpu --seed 11 "$@"; }

# 1. faults: every fault is answered by a retry; four calls, four candidates, nothing lost
script '{"fault": "429", "retry_after": "1"}' compile_error '{"fault": "500"}' wrong \
	'{"fault": "slow", "sleep_s": 5}' slow fast
t0=$(date +%s)
expect_exit 0 "faults: the run completes" -- opt --concurrency 2 --timeout 2 --budget-calls 4 \
	--db "$TMP/f.db" --out "$TMP/out-f" --json
run=$(jq -r .run_id <<<"$OUT_TXT")
jq -e '.calls == 4 and .candidates == 4 and .improved' <<<"$OUT_TXT" >/dev/null &&
	ok "faults: 4 calls and 4 candidates, improved" || bad "faults: summary $OUT_TXT"
[ "$(sql "$TMP/f.db" "select count(*) from llm_calls where run_id=$run and error is null")" = 4 ] &&
	ok "faults: every call recorded without error" || bad "faults: calls $(sql "$TMP/f.db" "select seq, error from llm_calls")"
# the server logs a request when its reply goes out: the abandoned slow one only after its 5 s
for _ in $(seq 80); do [ "$(wc -l <"$TMP/log.jsonl")" -ge 7 ] && break; sleep 0.1; done
n=$(wc -l <"$TMP/log.jsonl")
[ "$n" -ge 7 ] && ok "faults: 3 retries reached the server ($n requests)" || bad "faults: $n requests"
cmp -s "$TMP/out-f/best.cu" "$DATA/fast.cu" && ok "faults: best.cu is the faster kernel" || bad "faults: best.cu differs"
# ... and its replay (two requests in flight there too) reproduces the same candidates and verdicts: replies are
# handled in request order, so the completion order of the original run does not matter
expect_exit 0 "faults: export" -- "$KFORGE" kb export --run "$run" --db "$TMP/f.db" "$TMP/f.jsonl"
expect_exit 0 "faults: replay with --concurrency 2" -- "$KFORGE" optimize "$TASK" --provider replay --replay "$TMP/f.jsonl" --budget-calls 4 \
	--backend cpu --fitness cpu --seed 11 --concurrency 2 --db "$TMP/fr.db" --out "$TMP/out-fr" --json
q="select c.source_hash, coalesce(p.source_hash,''), coalesce(e.verdict,'-') from candidates c left join candidates p on p.id=c.parent_id left join evaluations e on e.candidate_id=c.id order by c.id"
a=$(sql "$TMP/f.db" "$q") b=$(sql "$TMP/fr.db" "$q")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "faults: the replay reproduces candidates, parents and verdicts" ||
	bad "faults: replay differs: $(diff <(echo "$a") <(echo "$b") | head -4)"

# 2. SIGINT: exit 130, the run is recorded as interrupted, --resume finishes it
script compile_error wrong:30
opt_bg --concurrency 1 --budget-calls 2 --db "$TMP/i.db" --out "$TMP/out-i" --json >"$TMP/i.out" 2>"$TMP/i.err" &
pid=$!
for _ in $(seq 600); do
	[ "$(sql "$TMP/i.db" "select count(*) from evaluations" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] && ok "SIGINT: exit 130" || bad "SIGINT: exit $rc ($(head -c 300 "$TMP/i.err"))"
irun=$(sql "$TMP/i.db" "select max(id) from runs")
[ "$(sql "$TMP/i.db" "select status from runs where id=$irun")" = interrupted ] && ok "SIGINT: run recorded as interrupted" ||
	bad "SIGINT: status $(sql "$TMP/i.db" "select status from runs")"
grep -q -- "--resume $irun" "$TMP/i.err" && ok "SIGINT: says how to resume" || bad "SIGINT: stderr $(cat "$TMP/i.err")"
script fast
expect_exit 0 "SIGINT: --resume finishes the run" -- opt --concurrency 1 --budget-calls 2 --db "$TMP/i.db" \
	--out "$TMP/out-i" --resume "$irun" --json
[ "$(sql "$TMP/i.db" "select status, n_calls from runs where id=$irun")" = "budget|2" ] &&
	[ "$(sql "$TMP/i.db" "select count(*) from candidates where run_id=$irun")" = 3 ] &&
	ok "SIGINT: resumed run has both calls and candidates" || bad "SIGINT: after resume $(sql "$TMP/i.db" "select status, n_calls from runs")"

# 3. kill -9 mid-request, then --resume: the recorded steps stay, the rest is redone
script compile_error wrong:2 slow:2 fast fast
opt_bg --concurrency 1 --budget-calls 4 --db "$TMP/k.db" --out "$TMP/out-k" >"$TMP/k.out" 2>&1 &
pid=$!
for _ in $(seq 600); do
	[ "$(sql "$TMP/k.db" "select count(*) from evaluations" 2>/dev/null)" -ge 1 ] && break
	sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
krun=$(sql "$TMP/k.db" "select max(id) from runs")
before=$(sql "$TMP/k.db" "select count(*) from candidates where run_id=$krun")
[ "$(sql "$TMP/k.db" "select status from runs where id=$krun")" = running ] && [ "$before" -ge 2 ] &&
	ok "kill -9: the run was left running with $before candidates" || bad "kill -9: $(sql "$TMP/k.db" "select status from runs")"
expect_exit 0 "kill -9: --resume finishes" -- opt --concurrency 1 --budget-calls 4 --db "$TMP/k.db" --out "$TMP/out-k" \
	--resume "$krun" --json
jq -e ".run_id == $krun and .calls == 4 and .candidates == 4 and .improved" <<<"$OUT_TXT" >/dev/null &&
	ok "kill -9: resumed run reaches its budget of 4 calls" || bad "kill -9: summary $OUT_TXT"
[ "$(sql "$TMP/k.db" "select count(*) from candidates where run_id=$krun")" = 5 ] &&
	[ "$(sql "$TMP/k.db" "select group_concat(seq) from (select seq from llm_calls where run_id=$krun order by seq)")" = "0,1,2,3" ] &&
	ok "kill -9: calls 0-3 and the reference plus 4 candidates recorded once" ||
	bad "kill -9: $(sql "$TMP/k.db" "select id, run_id, seq from llm_calls")"
cmp -s "$TMP/out-k/best.cu" "$DATA/fast.cu" && ok "kill -9: best.cu is the faster kernel" || bad "kill -9: best.cu differs"
[ "$(sql "$TMP/k.db" "pragma integrity_check")" = ok ] && ok "kill -9: the knowledge base is intact" || bad "kill -9: integrity"

# 4. budgets: USD (each scripted call costs 1000 in + 200 out tokens of gpt-4o-mini = $0.00027) and the
#    early stop after max(8, 30% of 20) attempts in a row without a significant improvement (every reply here
#    is a compile error; the first call asks for strategies and gets a kernel instead: unusable, no patience
#    spent)
script compile_error compile_error compile_error compile_error
expect_exit 0 "USD budget: the run completes" -- opt --concurrency 1 --budget-usd 0.0004 --db "$TMP/u.db" --out "$TMP/out-u" --json
jq -e '.calls == 2 and .status == "budget" and .improved == false and .best_path == ""' <<<"$OUT_TXT" >/dev/null &&
	ok "USD budget: stops submitting once \$0.0004 is spent (2 calls)" || bad "USD budget: $OUT_TXT"
[ ! -e "$TMP/out-u/best.cu" ] && [ -s "$TMP/out-u/report.md" ] && ok "no improvement: no best.cu, the report is still written" ||
	bad "no improvement: outputs $(ls "$TMP/out-u")"
python3 - "$DATA" "$TMP/script.json" <<'PY'
import json, sys
src = open(sys.argv[1] + "/compile_error.cu").read()
json.dump({"rules": [{"match": ".", "text": "```cuda\n" + src + "```\n"}]}, open(sys.argv[2], "w"))
PY
curl -s -o /dev/null -X POST "$base/_control/script" -H 'Content-Type: application/json' --data @"$TMP/script.json"
expect_exit 0 "early stop: the run completes" -- opt --concurrency 1 --budget-calls 20 --db "$TMP/e.db" --out "$TMP/out-e" --json
jq -e '.calls == 9 and .status == "done" and .by_verdict.compile_error == 8 and .unusable.no_strategies == 1
	and (.stop_reason | test("no significant improvement in 8"))' <<<"$OUT_TXT" >/dev/null &&
	ok "early stop: done after 8 candidates without improvement" || bad "early stop: $OUT_TXT"
grep -q "no verified improvement" < <(opt --concurrency 1 --budget-calls 1 --db "$TMP/e2.db" --out "$TMP/out-e2") &&
	ok "text summary says there was no verified improvement" || bad "text summary"

finish
