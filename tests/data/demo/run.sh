#!/usr/bin/env bash
# `make demo`: kforge optimize on an example task, offline: the cpu backend and the replay provider serving a
# transcript recorded against tests/llm_server.py by record.sh (vector_add_f32.jsonl: four proposed
# strategies, a float4 kernel that writes past the end at a hidden shape, a grid-stride kernel, the float4
# kernel's repair, SEARCH/REPLACE refinements, a rewrite that does not compile). Usage: run.sh BUILD_DIR
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
out=demo-out
rm -rf "$out"
mkdir -p "$out"
"$build/kforge" optimize tasks/examples/vector_add_f32/task.json --provider replay \
	--replay tests/data/demo/vector_add_f32.jsonl --backend cpu --concurrency 1 --seed 42 --budget-calls 8 \
	--out "$out" --db "$out/kforge.db"
echo
echo "demo: the report is $out/report.md (and $out/report.html); the winning kernel is $out/best.cu"
