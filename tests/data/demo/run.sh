#!/usr/bin/env bash
# `make demo`: kforge optimize on an example task, offline: the cpu backend and the replay provider serving a
# transcript recorded against tests/llm_server.py by record.sh (vector_add_f32.jsonl: four proposed
# strategies, a float4 kernel that writes past the end at a hidden shape, a grid-stride kernel, the float4
# kernel's repair, SEARCH/REPLACE refinements, a rewrite that does not compile), ranked on the GPU cost
# model's clock. Usage: run.sh BUILD_DIR
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
# the fitness is the GPU cost model's predicted speedup (clock "model": docs/cost-model.md) when clang-14
# can make the instrumented build, else the CPU clock; the report shows both, labelled
clock=$(sed -n 's/^| clock | \(.*\) |$/\1/p' "$out/report.md" | head -1)
echo "demo: ranked on: ${clock:-?}"
if [ -f "$out/best.cu" ]; then
	echo "demo: the report is $out/report.md (and $out/report.html); the winning kernel is $out/best.cu"
else
	echo "demo: the report is $out/report.md (and $out/report.html); no candidate was significantly faster, so"
	echo "      there is no best.cu (a memory-bound vector add leaves little to win on a GPU; the CPU clock's"
	echo "      speedups in the report are CPU times, not GPU speed)"
fi
