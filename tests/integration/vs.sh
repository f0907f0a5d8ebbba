#!/usr/bin/env bash
# Speedups against the task's baselines (docs/baselines.md) on the cpu backend, from each command:
# `profile` of a task with a tuned kernel baseline and a library one (the kernel timed, on the CPU clock;
# cuBLAS unavailable with its reason; broken baselines rejected with their verdicts), `bench --from-dir`
# over tests/data/vs (fast_p and the geomean vs the best baseline against hand computation, in every
# report format), `regress --cpu-timing` (both speedups in the text, JUnit and JSON, the timing check still
# skipped), and `optimize` (replayed) where the baselines are timed once per run and each candidate's
# speedup over them is chained through the reference: in the summary, the report and the prompt's target.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
V=tests/data/vs
B=tests/data/baselines/vadd

# ---- profile: every baseline with what became of it ----
expect_exit 0 "profile a task with a tuned kernel and a cuBLAS baseline" -- \
	"$KFORGE" profile "$B/task.json" "$B/reference.cu" --backend cpu --json
printf '%s' "$OUT_TXT" >"$TMP/profile.json"
if python3 - "$TMP/profile.json" <<'PY'; then ok "profile --json: good.cu timed on the CPU clock, cuBLAS unavailable, the broken ones rejected"; else bad "profile json: $(head -c 1500 "$TMP/profile.json")"; fi
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
by = {b["name"]: b for b in p["baselines"]}
assert [b["name"] for b in p["baselines"]] == ["good.cu", "wrong.cu", "no_tail.cu", "late.cu", "cublas.gemm"], by
assert by["good.cu"]["status"] == "timed" and by["good.cu"]["kind"] == "kernel"
g = by["cublas.gemm"]
assert g["status"] == "unavailable" and g["kind"] == "library" and "cuda backend only" in g["reason"], g
assert by["wrong.cu"]["status"] == "rejected" and by["wrong.cu"]["verdict"] == "wrong_output"
assert by["no_tail.cu"]["verdict"] == "out_of_bounds"
s = p["shapes"][0]
t = {b["name"]: b for b in s["baselines"]}
assert set(t) <= {"good.cu", "late.cu"} and "good.cu" in t, t
x = t["good.cu"]
assert x["clock"] == "cpu" and x["method"] == "interleaved" and x["median_ns"] > 0
assert x["speedup"]["lo"] <= x["speedup"]["point"] <= x["speedup"]["hi"]
assert x["speedup"]["significant"] == (x["speedup"]["lo"] > 1)
# the single-baseline fields of before stay: the first baseline timed
assert s["speedup_vs_baseline"]["point"] == x["speedup"]["point"]
PY
expect_exit 0 "profile, text" -- "$KFORGE" profile "$B/task.json" "$B/reference.cu" --backend cpu
grep -Eq '^  vs good\.cu \(kernel\) [0-9.]+x \(95% CI [0-9.]+-[0-9.]+\), (not )?significant; it takes .* \(cpu clock\)$' <<<"$OUT_TXT" &&
	ok "text: the speedup over good.cu with its interval, on the cpu clock" || bad "text: $OUT_TXT"
grep -q '^  cublas.gemm (library): unavailable: cublas.gemm is a cuBLAS call: it runs on the cuda backend only' <<<"$OUT_TXT" &&
	ok "text: cuBLAS unavailable, with the reason" || bad "text: $OUT_TXT"
grep -q '^  good.cu (kernel): timed (verified, then timed beside the candidate; CPU clock, not GPU speed)$' <<<"$OUT_TXT" &&
	grep -q '^  wrong.cu (kernel): rejected: wrong_output at ' <<<"$OUT_TXT" &&
	ok "text: every baseline's status" || bad "text: $OUT_TXT"

# ---- bench: fast_p and the geomean vs the best baseline ----
expect_exit 0 "bench --from-dir over the vs suite" -- "$KFORGE" bench "$V/suite" --from-dir "$V/kernels" --backend cpu \
	--db "$TMP/bench.db" --out "$TMP/bench" --json
printf '%s' "$OUT_TXT" >"$TMP/bench.json"
if python3 - "$TMP/bench.json" <<'PY'; then ok "bench: fast_p vs baseline matches hand computation (tests/data/vs/README.md)"; else bad "bench: $(head -c 3000 "$TMP/bench.json")"; fi
import json, math, sys
r = json.load(open(sys.argv[1]))
o = r["overall"]
v = o["vs_best_baseline"]
assert v["word"] == "baseline" and v["tasks"] == 3 and v["timed"] == 2 and v["library"] == 0, v
want = {"0": 2 / 3, "0.5": 1 / 3, "0.8": 1 / 3, "1": 1 / 3, "1.5": 1 / 3, "2": 1 / 3}
for p, w in want.items():
    assert abs(v["fast_p"][p] - w) < 1e-9, (p, v["fast_p"][p])
    assert abs(v["fast_p_significant"][p] - w) < 1e-9, (p, v["fast_p_significant"][p])
t = {x["task"]: x for x in r["tasks"]}
b, l = t["vs_beats"]["best_baseline"], t["vs_loses"]["best_baseline"]
assert b["name"] == "slow.cu" and b["kind"] == "kernel" and b["ci_lo"] > 2 and b["significant"], b
assert l["name"] == "plain.cu" and l["ci_hi"] < 0.5 and not l["significant"], l
assert b["method"] == "interleaved"
assert abs(v["geomean_speedup"] - math.sqrt(b["speedup"] * l["speedup"])) < 1e-9 * v["geomean_speedup"]
assert t["vs_wrong"]["best_baseline"] is None and t["vs_wrong"]["status"] == "wrong_output"
lib = t["vs_library"]
assert lib["best_baseline"] is None and "cublas.gemm: unavailable" in lib["baseline_note"], lib
# the reference's fast_p is untouched: over all four tasks
assert o["tasks"] == 4 and "fast_p" in o
PY
grep -q '^| fast_p vs baseline (all) | 0.667 | 0.333 | 0.333 | 0.333 | 0.333 | 0.333 |$' "$TMP/bench/bench.md" &&
	grep -q '^| vs_library | - | - | - | - | - | cublas.gemm: unavailable: ' "$TMP/bench/bench.md" &&
	ok "bench.md: the fast_p vs baseline row and why cuBLAS was not compared" || bad "bench.md: $(sed -n '/## vs/,/## Tasks/p' "$TMP/bench/bench.md")"
grep -q 'best_baseline,baseline_kind,speedup_vs_baseline' "$TMP/bench/bench.csv" && grep -q ',slow.cu,kernel,' "$TMP/bench/bench.csv" &&
	grep -q '<h2>vs baseline: each task' "$TMP/bench/bench.html" && ok "bench.csv and bench.html carry the comparison" ||
	bad "csv/html: $(head -2 "$TMP/bench/bench.csv")"
grep -q '^  vs baseline (3 tasks with a baseline, 2 timed): geomean ' <<<"$(
	"$KFORGE" bench "$V/suite" --collect --from-dir "$V/kernels" --db "$TMP/bench.db" --out "$TMP/col" 2>/dev/null
)" && ok "bench --collect: the same comparison read back from the database" || bad "bench --collect text"

# ---- regress --cpu-timing: both speedups, the timing check still skipped ----
cat >"$TMP/manifest.json" <<JSON
{"format": "kforge-manifest/1", "kernels": [
 {"task": "$TOP/$V/suite/vs_beats/task.json", "kernel": "$TOP/$V/kernels/vs_beats.cu", "name": "beats"},
 {"task": "$TOP/$V/suite/vs_library/task.json", "kernel": "$TOP/$V/kernels/vs_library.cu", "name": "library"}]}
JSON
expect_exit 0 "regress --cpu-timing" -- "$KFORGE" regress "$TMP/manifest.json" --backend cpu --cpu-timing \
	--junit "$TMP/junit.xml" --json
printf '%s' "$OUT_TXT" >"$TMP/regress.json"
if python3 - "$TMP/regress.json" "$TMP/junit.xml" <<'PY'; then ok "regress: speedups vs the reference and vs slow.cu in JSON and JUnit; cuBLAS unavailable"; else bad "regress: $(head -c 2000 "$TMP/regress.json")"; fi
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
by = {k["name"]: k for k in d["kernels"]}
tb = [c for c in by["beats"]["checks"] if c["check"] == "timing"][0]
assert tb["status"] == "skip" and tb["clock"] == "cpu", tb
assert tb["speedup_vs_reference_lo"] <= tb["speedup_vs_reference"] <= tb["speedup_vs_reference_hi"]
b = tb["task_baselines"][0]
assert b["name"] == "slow.cu" and b["status"] == "timed" and b["speedup_lo"] > 2 and b["significant"], b
tl = [c for c in by["library"]["checks"] if c["check"] == "timing"][0]
g = tl["task_baselines"][0]
assert g["name"] == "cublas.gemm" and g["status"] == "unavailable" and "cuda backend only" in g["reason"], g
cases = {(c.get("classname"), c.get("name").split()[0]): c for c in ET.parse(sys.argv[2]).getroot().iter("testcase")}
m = cases[("beats", "timing")].find("skipped").get("message")
assert m.startswith("no GPU: cpu times are not comparable to"), m
assert "cpu clock: " in m and "the reference (95% CI" in m and "; vs slow.cu " in m and ", significant)" in m, m
assert "cublas.gemm unavailable: " in cases[("library", "timing")].find("skipped").get("message")
PY
expect_exit 0 "regress without --cpu-timing times nothing on the cpu backend" -- "$KFORGE" regress "$TMP/manifest.json" --backend cpu
grep -q 'vs slow.cu' <<<"$OUT_TXT" && bad "timed without --cpu-timing: $OUT_TXT" || ok "no speedups without --cpu-timing"

# ---- optimize: the baselines timed once, chained through the reference ----
expect_exit 0 "optimize (replayed) a task with a tuned baseline" -- "$KFORGE" optimize tasks/examples/vector_add_f32/task.json \
	--provider replay --replay tests/data/demo/vector_add_f32.jsonl --backend cpu --fitness cpu --concurrency 1 --seed 42 \
	--budget-calls 3 --out "$TMP/opt" --db "$TMP/opt.db" --json
printf '%s' "$OUT_TXT" >"$TMP/opt.json"
if python3 - "$TMP/opt.json" <<'PY'; then ok "optimize --json: the best candidate vs baseline.cu, chained"; else bad "optimize: $(head -c 1500 "$TMP/opt.json")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
b = d["baselines"][0]
assert d["best_baseline"] == "baseline.cu" and b["status"] == "timed" and b["method"] == "chained", d["baselines"]
assert b["speedup_lo"] <= b["speedup"] <= b["speedup_hi"] and d["clock"] == "cpu"
PY
grep -q '^## Against the task.s baselines' "$TMP/opt/report.md" && grep -q 'chained through the reference' "$TMP/opt/report.md" &&
	grep -q '^\*\*Best kernel vs baseline (baseline.cu): ' "$TMP/opt/report.md" &&
	ok "report.md: vs baseline, chained" || bad "report.md: $(head -c 1500 "$TMP/opt/report.md")"
n=$(python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("select count(*) from timing_baselines where method = ? and status = ?", ("chained", "timed")).fetchone()[0],
      db.execute("select count(*) from timings").fetchone()[0],
      sum(1 for (p,) in db.execute("select prompt from llm_calls") if "took" in p and "on the CPU clock" in p
          and "(a tuned kernel shipped with the task)" in p))' "$TMP/opt.db")
set -- $n
[ "$1" -ge 1 ] && [ "$1" = "$2" ] && ok "kb: every timing of the run has its chained baseline row ($1)" || bad "kb rows: $n"
[ "$3" -ge 1 ] && ok "prompts: the baseline's CPU-clock ratio in the target, said to be one" || bad "prompts: $n"
finish
