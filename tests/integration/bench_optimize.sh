#!/usr/bin/env bash
# kforge bench in its default mode (the search on each task) with no network: tests/llm_server.py on a
# loopback port answers every prompt with the plain kernel. Over two tasks (one with a deliberately slow
# reference), both become correct, the slow-reference task gets a real speedup, every run is recorded,
# the HTML report carries the search-progress chart, and kforge report renders a run.
source "$(dirname "$0")/lib.sh"
D=$TOP/tests/data/bench
export KFORGE_DB=$TMP/unused.db
unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENAI_BASE_URL ANTHROPIC_BASE_URL
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export NO_PROXY='*' no_proxy='*'
srv_pid=
trap '[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null; rm -rf "$TMP"' EXIT

python3 - "$D/kernels/bench_fast.cu" >"$TMP/script.json" <<'EOF'
import json, sys
src = open(sys.argv[1]).read()
text = "Here is a kernel that drops the redundant work.\n\n```cuda\n" + src + "```\n"
print(json.dumps({"rules": [{"match": ".", "text": text, "tokens_in": 1000, "tokens_out": 200}]}))
EOF
python3 "$TOP/tests/llm_server.py" --port 0 --port-file "$TMP/port" --script "$TMP/script.json" \
	--log "$TMP/llm.log" >"$TMP/srv.out" 2>&1 &
srv_pid=$!
for _ in $(seq 1 600); do [ -s "$TMP/port" ] && break; sleep 0.1; done
port=$(cat "$TMP/port" 2>/dev/null)
if [ -z "$port" ]; then
	bad "tests/llm_server.py did not start: $(cat "$TMP/srv.out")"
	finish
	exit $?
fi

printf 'suite/bench_fast\nsuite/bench_slow\n' >"$TMP/list.txt"
expect_exit 4 "the search without a provider: exit 4 before any work" -- "$KFORGE" bench "$D/suite" --backend cpu --db "$TMP/none.db"
expect_exit 2 "the search without a model is a usage error" -- env -u KFORGE_MODEL "$KFORGE" bench "$D/suite" --base-url "http://127.0.0.1:$port/v1" --db "$TMP/none.db"
expect_exit 2 "an unknown strategy is a usage error" -- "$KFORGE" bench "$D/suite" --strategy annealing --from-dir "$D/kernels"
mkdir -p "$TMP/suite" && cp -r "$D/suite/." "$TMP/suite/"
expect_exit 0 "bench with the search over two tasks (scripted LLM)" -- \
	env OPENAI_API_KEY=sk-test-KEY "$KFORGE" bench "$TMP/list.txt" --provider openai --model test-model --base-url "http://127.0.0.1:$port/v1" \
	--budget-calls 2 --backend cpu --jobs 2 --seed 7 --db "$TMP/opt.db" --out "$TMP/bout" --json
echo "$OUT_TXT" >"$TMP/opt.json"
python3 - "$TMP/opt.json" >"$TMP/check.txt" 2>&1 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
o, t = r["overall"], {x["task"]: x for x in r["tasks"]}
fails = []
if r["mode"] != "optimize": fails.append(f"mode {r['mode']}")
if o["tasks"] != 2 or o["correct"] != 2: fails.append(f"tasks {o['tasks']} correct {o['correct']}")
if o["fast_p"]["0"] != 1.0: fails.append(f"fast_0 {o['fast_p']['0']}")
f = t.get("bench_fast", {})
if not f.get("speedup", 0) > 2: fails.append(f"bench_fast speedup {f.get('speedup')}")
# the search ranked by the GPU cost model (the slow reference is strided: slow on a GPU too)
if r.get("clock") != "model" or f.get("clock") != "model": fails.append(f"clock {r.get('clock')} / {f.get('clock')}")
for name, x in t.items():
    if x["strategy"] not in ("evo", "mcts"): fails.append(f"{name} strategy {x['strategy']}")
    if not 1 <= x["calls"] <= 2: fails.append(f"{name} calls {x['calls']} (budget 2)")
    if x["run_id"] <= 0: fails.append(f"{name} has no run")
print("\n".join(fails) if fails else "ok")
print("RUN", f.get("run_id", 0))
sys.exit(1 if fails else 0)
EOF
if [ $? -eq 0 ]; then ok "both tasks correct, the slow-reference task predicted faster than 2x on the model clock, calls within budget"; else bad "$(cat "$TMP/check.txt")"; fi
run=$(sed -n 's/^RUN //p' "$TMP/check.txt")
grep -q "Search progress" "$TMP/bout/bench.html" && ok "bench html has the search-progress chart" || bad "no search-progress chart"
[ -s "$TMP/bout/tasks/bench_fast/best.cu" ] && ok "per-task out dir with best.cu" || bad "no $TMP/bout/tasks/bench_fast/best.cu"
[ "$(wc -l <"$TMP/llm.log")" -ge 2 ] && ok "the LLM server saw the requests" || bad "llm log: $(head -c 300 "$TMP/llm.log")"
expect_exit 0 "report of an optimize run" -- "$KFORGE" report "${run:-0}" --db "$TMP/opt.db"
echo "$OUT_TXT" | grep -q "test-model" && echo "$OUT_TXT" | grep -q "Lineage of the winner" &&
	ok "report names the model and the lineage" || bad "report: $(echo "$OUT_TXT" | head -30)"
finish
