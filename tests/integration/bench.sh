#!/usr/bin/env bash
# kforge bench --from-dir over tests/data/bench: a faster kernel (its task's reference is slow on purpose),
# a correct but slower kernel, a wrong one, one that does not compile and a missing one; the counts and
# fast_p values are checked against hand computation. Then --collect, --shard over a list file, kforge
# report on a recorded run, usage errors, and the HTML report rendered in headless Chromium.
source "$(dirname "$0")/lib.sh"
D=$TOP/tests/data/bench
export KFORGE_DB=$TMP/unused.db

# --jobs 2: two tasks at once, each in its own process with its own database connection
expect_exit 0 "bench --from-dir over five tasks, two at a time" -- \
	"$KFORGE" bench "$D/suite" --from-dir "$D/kernels" --backend cpu --jobs 2 --db "$TMP/one.db" --out "$TMP/one" --json
echo "$OUT_TXT" >"$TMP/one.json"
for f in bench.html bench.md bench.json bench.csv; do
	[ -s "$TMP/one/$f" ] && ok "report file $f" || bad "report file $f missing"
done
cmp -s "$TMP/one.json" "$TMP/one/bench.json" && ok "--json prints bench.json" || bad "--json output differs from bench.json"

# Hand computation. Five tasks: bench_fast (correct, ~4x: its reference has redundant barriers),
# bench_slow (correct, ~0.25x: the kernel has them), bench_wrong (compiles, wrong), bench_broken (does not
# compile), bench_missing (no file). compiled = fast, slow, wrong = 3; correct = 2.
# fast_p over ALL 5 tasks: p=0 -> fast, slow = 0.4; p in {0.5, 0.8, 1, 1.5, 2} -> fast only = 0.2.
# level 1 (fast, wrong, missing): 1/3 at every p. level 2 (slow, broken): 0.5 at p=0, then 0.
python3 - "$TMP/one.json" >"$TMP/check.txt" 2>&1 <<'EOF'
import json, math, sys
r = json.load(open(sys.argv[1]))
fails = []
def eq(what, got, want, tol=1e-9):
    if not (abs(got - want) <= tol if isinstance(want, float) else got == want):
        fails.append(f"{what}: got {got!r}, want {want!r}")
o = r["overall"]
eq("tasks", o["tasks"], 5); eq("compiled", o["compiled"], 3); eq("correct", o["correct"], 2)
eq("missing", o["missing"], 1)
eq("compile_rate", o["compile_rate"], 0.6); eq("correctness_rate", o["correctness_rate"], 0.4)
want = {"0": 0.4, "0.5": 0.2, "0.8": 0.2, "1": 0.2, "1.5": 0.2, "2": 0.2}
for p, v in want.items():
    eq(f"fast_{p}", o["fast_p"][p], v)
# significance-aware: the fast kernel's interval is far above 2, the slow one's far below 0.5
for p, v in want.items():
    eq(f"significant fast_{p}", o["fast_p_significant"][p], v)
eq("clock", r["clock"], "cpu"); eq("baseline", r["baseline"], "reference")
lv = {l["level"]: l for l in r["levels"]}
eq("levels", sorted(lv), [1, 2])
for p in want:
    eq(f"level 1 fast_{p}", lv[1]["fast_p"][p], 1 / 3)
eq("level 2 fast_0", lv[2]["fast_p"]["0"], 0.5)
for p in ["0.5", "0.8", "1", "1.5", "2"]:
    eq(f"level 2 fast_{p}", lv[2]["fast_p"][p], 0.0)
t = {x["task"]: x for x in r["tasks"]}
eq("task order", [x["task"] for x in r["tasks"]], sorted(t))
eq("bench_fast", t["bench_fast"]["status"], "pass")
eq("bench_slow", t["bench_slow"]["status"], "pass")
eq("bench_wrong", t["bench_wrong"]["status"], "wrong_output")
eq("bench_broken", t["bench_broken"]["status"], "compile_error")
eq("bench_missing", t["bench_missing"]["status"], "missing")
eq("bench_wrong compiled", t["bench_wrong"]["compiled"], True)
eq("bench_broken compiled", t["bench_broken"]["compiled"], False)
f, s = t["bench_fast"], t["bench_slow"]
if not (f["ci_lo"] > 2 and f["speedup"] >= f["ci_lo"] and f["clock"] == "cpu"):
    fails.append(f"bench_fast speedup {f['speedup']} [{f['ci_lo']}, {f['ci_hi']}] should be above 2")
if not (0 < s["speedup"] < 0.5 and s["ci_lo"] < 0.5):
    fails.append(f"bench_slow speedup {s['speedup']} [{s['ci_lo']}, {s['ci_hi']}] should be below 0.5")
eq("geomean", o["geomean_speedup"], math.sqrt(f["speedup"] * s["speedup"]), 1e-9 * o["geomean_speedup"])
eq("geomean tasks", o["geomean_tasks"], 2)
print("\n".join(fails) if fails else "all match")
print("FAST_RUN", f["run_id"])
sys.exit(1 if fails else 0)
EOF
if [ $? -eq 0 ]; then ok "counts and fast_p match hand computation"; else bad "metrics: $(cat "$TMP/check.txt")"; fi
fast_run=$(sed -n 's/^FAST_RUN //p' "$TMP/check.txt")
[ "$(wc -l <"$TMP/one/bench.csv")" -eq 6 ] && ok "csv has a header and five rows" || bad "csv rows: $(wc -l <"$TMP/one/bench.csv")"
grep -q "CPU clock" "$TMP/one/bench.md" && grep -q "| fast_p (all) | 0.400 | 0.200 | 0.200 | 0.200 | 0.200 | 0.200 |" "$TMP/one/bench.md" &&
	ok "markdown: fast_p row and CPU-clock label" || bad "markdown report lacks the fast_p row or the CPU label"

# --collect reads the same numbers back from the database, without evaluating anything
expect_exit 0 "bench --collect" -- "$KFORGE" bench "$D/suite" --collect --from-dir "$D/kernels" --db "$TMP/one.db" --out "$TMP/col" --json
python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
strip = lambda r: (r["overall"], r["levels"], r["tasks"])
sys.exit(0 if strip(a) == strip(b) else 1)' "$TMP/one.json" "$TMP/col/bench.json" &&
	ok "collect gives identical metrics and rows" || bad "collect differs from the run"

# --shard 2/3 over a list file of three tasks: sorted, they are fast, missing, wrong; index 1 is missing
printf '# a list file: relative to this file, folders or task.json paths\nsuite/bench_wrong\n\nsuite/bench_missing/task.json\nsuite/bench_fast\n' >"$TMP/list.txt"
mkdir -p "$TMP/suite" && cp -r "$D/suite/." "$TMP/suite/"
expect_exit 0 "bench over a list file, --shard 2/3" -- "$KFORGE" bench "$TMP/list.txt" --shard 2/3 --from-dir "$D/kernels" --backend cpu --db "$TMP/shard.db" --out "$TMP/sh" --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if [t["task"] for t in r["tasks"]] == ["bench_missing"] and r["shard"] == "2/3" else 1)' "$TMP/sh/bench.json" &&
	ok "shard 2/3 of the sorted list is bench_missing" || bad "shard: $(head -c 300 "$TMP/sh/bench.json")"

# kforge report on the recorded bench run of bench_fast
if [ -n "$fast_run" ]; then
	expect_exit 0 "report md" -- "$KFORGE" report "$fast_run" --db "$TMP/one.db"
	echo "$OUT_TXT" | grep -q "CPU times" && echo "$OUT_TXT" | grep -q '```cuda' &&
		ok "report md has the kernel and the CPU label" || bad "report md: $(echo "$OUT_TXT" | head -20)"
	expect_exit 0 "report html -o" -- "$KFORGE" report "$fast_run" --db "$TMP/one.db" --format html -o "$TMP/run.html"
	grep -q 'data-chart="bars"' "$TMP/run.html" && ok "report html has charts" || bad "report html has no chart"
	expect_exit 0 "report json" -- "$KFORGE" report "$fast_run" --db "$TMP/one.db" --json
	echo "$OUT_TXT" | python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if r["improved"] and r["clock"]=="cpu" else 1)' &&
		ok "report json: improved, cpu clock" || bad "report json: $(echo "$OUT_TXT" | head -c 300)"
else
	bad "no run id for bench_fast"
fi
expect_exit 2 "report of an unknown run" -- "$KFORGE" report 99999 --db "$TMP/one.db"
expect_exit 2 "report with a bad format" -- "$KFORGE" report 1 --db "$TMP/one.db" --format pdf
expect_exit 2 "report without a database" -- "$KFORGE" report 1 --db "$TMP/none.db"

# usage errors
expect_exit 2 "bench without a suite" -- "$KFORGE" bench
expect_exit 2 "bench with a bad shard" -- "$KFORGE" bench "$D/suite" --shard 5/4 --collect
expect_exit 2 "bench with a bad --p" -- "$KFORGE" bench "$D/suite" --p 1,x --collect
expect_exit 2 "bench over a missing suite" -- "$KFORGE" bench "$TMP/nope" --collect
expect_exit 2 "bench --from-dir that is not a folder" -- "$KFORGE" bench "$D/suite" --from-dir "$TMP/nope"
expect_exit 4 "bench --slurm without sbatch" -- env KFORGE_SBATCH="$TMP/no-sbatch" "$KFORGE" bench "$D/suite" --from-dir "$D/kernels" --slurm --db "$TMP/s.db" --out "$TMP/nosb"
grep -q -- "--array=1-4" "$TMP/nosb/bench.sbatch" && ok "the job script is written even when sbatch is missing" || bad "no job script"

# The HTML report in headless Chromium: the DOM holds the charts and the screenshot shows them
# (saturated chart colours cover a large area; text and tables are grey and black).
# KFORGE_TEST_INSTALL=1 lets it install chromium first (about two minutes here, so CI does not by default).
if ! command -v chromium >/dev/null 2>&1 && [ "${KFORGE_TEST_INSTALL:-0}" = 1 ] && [ "$(id -u)" -eq 0 ]; then
	DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y --no-install-recommends chromium >"$TMP/apt.log" 2>&1
fi
if ! command -v chromium >/dev/null 2>&1; then
	skip "chromium rendering (chromium not installed: apt-get install -y chromium, or KFORGE_TEST_INSTALL=1)"
else
	chrome() {
		DBUS_SESSION_BUS_ADDRESS=disabled: timeout 120 chromium --headless --no-sandbox --disable-gpu \
			--disable-background-networking --disable-component-update --disable-sync --no-first-run \
			--user-data-dir="$(mktemp -d "$TMP/chrome.XXXXXX")" "$@" 2>/dev/null
	}
	chrome --dump-dom "file://$TMP/one/bench.html" >"$TMP/dom.html"
	n_svg=$(grep -o '<svg[^>]*data-chart=' "$TMP/dom.html" | wc -l)
	[ "$n_svg" -ge 3 ] && ok "chromium DOM has $n_svg charts" || bad "chromium DOM has $n_svg charts (want 3)"
	chrome --screenshot="$TMP/shot.png" --window-size=1200,2000 "file://$TMP/one/bench.html" >/dev/null
	if [ ! -s "$TMP/shot.png" ]; then
		bad "chromium wrote no screenshot"
	else
		python3 - "$TMP/shot.png" >"$TMP/png.txt" 2>&1 <<'EOF'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(d):
    n, typ = struct.unpack(">I4s", d[pos:pos + 8]); body = d[pos + 8:pos + 8 + n]; pos += 12 + n
    if typ == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif typ == b"IDAT":
        idat += body
assert depth == 8 and ctype in (2, 6), "unexpected PNG format"
bpp = 3 if ctype == 2 else 4
raw, stride, prev, i = zlib.decompress(idat), w * bpp, bytearray(w * bpp), 0
nonwhite = sat = 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + ((a + b) >> 1)) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        nonwhite += r < 240 or g < 240 or bl < 240
        sat += max(r, g, bl) - min(r, g, bl) > 80
print(w, h, nonwhite, sat)
EOF
		read -r pw ph nonwhite sat <"$TMP/png.txt"
		if [ "${pw:-0}" = 1200 ] && [ "${nonwhite:-0}" -gt 50000 ] && [ "${sat:-0}" -gt 20000 ]; then
			ok "screenshot shows the charts ($sat coloured of $nonwhite non-white pixels)"
		else
			bad "screenshot looks empty: $(cat "$TMP/png.txt")"
		fi
	fi
fi
finish
