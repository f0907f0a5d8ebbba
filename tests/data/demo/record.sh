#!/usr/bin/env bash
# Re-records the `make demo` transcript (vector_add_f32.jsonl) against the test LLM server: run this after a
# change to the prompts or to the search's choices, with the options tests/data/demo/run.sh replays with.
# The replies are script.json's: the strategy list, a float4 kernel that writes past the end at a hidden
# shape, a grid-stride kernel, the float4 kernel's fix, two launch-shape refinements as SEARCH/REPLACE edits,
# a rewrite that does not compile and its fixed version. Every edit's SEARCH text is in every kernel
# the schedule may refine there, so the verdicts do not depend on which one the CPU timings rank first.
# Usage: record.sh BUILD_DIR
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
tmp=$(mktemp -d /tmp/kforge-demo-rec.XXXXXX)
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$tmp"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export NO_PROXY='*' no_proxy='*'
python3 tests/llm_server.py --port 0 --port-file "$tmp/port" --script tests/data/demo/script.json --log "$tmp/log.jsonl" \
	>"$tmp/server.out" 2>&1 &
srv=$!
for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
OPENAI_API_KEY=sk-demo "$build/kforge" optimize tasks/examples/vector_add_f32/task.json --provider openai \
	--model gpt-4o-mini --base-url "http://127.0.0.1:$(cat "$tmp/port")/v1" --backend cpu --concurrency 1 --seed 42 \
	--budget-calls 8 --out "$tmp/out" --db "$tmp/kforge.db" --json >"$tmp/summary.json"
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$tmp/summary.json")
"$build/kforge" kb export --run "$run" --db "$tmp/kforge.db" tests/data/demo/vector_add_f32.jsonl
cat "$tmp/summary.json"
