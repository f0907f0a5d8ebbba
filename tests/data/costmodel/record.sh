#!/usr/bin/env bash
# Re-records softmax_rows.jsonl, the transcript of an offline `kforge optimize` on
# tasks/examples/softmax_rows_f32/task.json, against the test LLM server (tests/data/demo/record.sh's way):
# run it after a change to the prompts or to the search's choices. The replies are softmax_script.json's:
# a thread-per-row kernel, a warp-per-row kernel with xor shuffles and a one-pass block-per-row kernel, all
# correct, each a whole kernel (no SEARCH/REPLACE edit), so no reply depends on which kernel the CPU
# timings rank first. The budget is the script's three calls (under 8 calls there is no strategy call).
# Replay it with:
#   kforge optimize tasks/examples/softmax_rows_f32/task.json --provider replay \
#     --replay tests/data/costmodel/softmax_rows.jsonl --backend cpu --concurrency 1 --seed 42 \
#     --budget-calls 3 --out OUT --db OUT/kb.db
# Usage: record.sh BUILD_DIR
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
tmp=$(mktemp -d /tmp/kforge-costmodel-rec.XXXXXX)
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null || true; rm -rf "$tmp"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export NO_PROXY='*' no_proxy='*'
python3 tests/llm_server.py --port 0 --port-file "$tmp/port" --script tests/data/costmodel/softmax_script.json \
	--log "$tmp/log.jsonl" >"$tmp/server.out" 2>&1 &
srv=$!
for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
OPENAI_API_KEY=sk-demo "$build/kforge" optimize tasks/examples/softmax_rows_f32/task.json --provider openai \
	--model gpt-4o-mini --base-url "http://127.0.0.1:$(cat "$tmp/port")/v1" --backend cpu --concurrency 1 --seed 42 \
	--budget-calls 3 --out "$tmp/out" --db "$tmp/kforge.db" --json >"$tmp/summary.json"
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$tmp/summary.json")
"$build/kforge" kb export --run "$run" --db "$tmp/kforge.db" tests/data/costmodel/softmax_rows.jsonl
cat "$tmp/summary.json"
