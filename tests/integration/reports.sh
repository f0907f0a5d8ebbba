#!/usr/bin/env bash
# The reports a user reads, from two offline runs of the demo transcript (evo and mcts, cpu backend): the run
# report's charts (log speedup axis, integer call axis, steps, a neutral reference, legends), shapes written
# B=16, N=1024, every candidate with its source and its diff against its parent, the search tree, the
# lineage's rationale, the failed and unusable calls; kforge report --compare in md, html and json; both
# pages rendered in headless Chromium and the screenshots checked for the charts' colours.
# KFORGE_SCREENSHOTS=DIR keeps the screenshots there for a person to look at.
source "$(dirname "$0")/lib.sh"
TASK=$TOP/tasks/examples/vector_add_f32/task.json
REPLAY=$TOP/tests/data/demo/vector_add_f32.jsonl
cd "$TMP"

for s in evo mcts; do
	expect_exit 0 "optimize --strategy $s (replay, cpu)" -- "$KFORGE" optimize "$TASK" --provider replay --replay "$REPLAY" \
		--backend cpu --fitness cpu --concurrency 1 --seed 42 --strategy "$s" --out "out-$s" --db r.db
done
expect_exit 0 "report 1 --format html" -- "$KFORGE" report 1 --db r.db --format html -o run1.html
expect_exit 0 "report 2 --format html" -- "$KFORGE" report 2 --db r.db --format html -o run2.html
expect_exit 0 "report 1 --json" -- "$KFORGE" report 1 --db r.db --json
echo "$OUT_TXT" >run1.json
expect_exit 0 "report 1 (markdown)" -- "$KFORGE" report 1 --db r.db
echo "$OUT_TXT" >run1.md

python3 - run1.html run2.html run1.json run1.md >checks.txt 2>&1 <<'EOF'
import json, re, sys
h1, h2, j, md = (open(p).read() for p in sys.argv[1:5])
d = json.loads(j)
fails = []
def want(what, cond):
    if not cond:
        fails.append(what)
svgs = re.findall(r'<svg[^>]*data-chart="(\w+)"[^>]*>(.*?)</svg>', h1, re.S)
kinds = [k for k, _ in svgs]
want("charts: progress line, per-shape bars, verdict bars, tree (%s)" % kinds,
     kinds.count("line") >= 1 and kinds.count("bars") >= 2 and "tree" in kinds)
prog = svgs[kinds.index("line")][1]
want("the progress chart's speedup axis is log (1x, 2x, 5x ticks)", all(">%s</text>" % t in prog for t in ("1x", "2x", "5x")))
xt = re.findall(r'text-anchor="middle" fill="#374151">([^<]*)</text>', prog)
want("the call axis has integer ticks only: %s" % xt, xt and all(re.fullmatch(r"\d+", t) for t in xt))
want("the call axis starts at call 1", "1" in xt)
want("the progress curve is a step curve", re.search(r'<polyline data-series="0"', prog))
want("the reference is a neutral dashed line with a legend entry",
     'data-ref="1"' in prog and "#475569" in prog and ">reference (1x)</text>" in prog)
want("no red reference: the reference row is neutral", re.search(r'<td class="ref">reference \(the baseline\)</td>', h1))
want("no shape written as JSON", "{&quot;" not in h1 and '{"N"' not in md)
want("shapes as N=100000", "N=100000" in h1 and "N=100000" in md)
n_cand = len(d["attempts"])
want("a collapsible block per candidate (%d)" % n_cand, len(re.findall(r'<details id="cand-\d+"', h1)) == n_cand)
want("the winner's block is open", re.search(r'<details id="cand-%d" class="cand" open>' % d["best"]["candidate_id"], h1))
want("parent-to-child diffs", '<pre class="diff">' in h1 and 'class="add"' in h1 and 'class="del"' in h1)
want("every candidate's source", h1.count('<details class="src">') == n_cand)
want("the tree has a node per candidate", len(re.findall(r'data-node="', h1)) == n_cand)
want("the tree links to the candidates", 'href="#cand-%d"' % d["best"]["candidate_id"] in h1)
ch = [c["change"] for c in d["lineage"] if c["edit_kind"] != "reference"]
want("the lineage's change column holds the model's rationale: %s" % ch, ch and all(c.strip() for c in ch))
want("failed calls and unusable replies with their reasons",
     d["calls"]["unusable"] >= 1 and "every failed call and unusable reply" in h1 and "edits_not_applied" in h1)
want("the JSON has the progress per call", d["progress"]["step"] == "llm_call" and d["progress"]["best"]
     and d["progress"]["best"][-1][1] == d["best"]["speedup"])
want("the MCTS run has an MCTS tree", "<h2>MCTS tree</h2>" in h2 and "MCTS node" in h2)
want("the evo run has a search tree", "<h2>Search tree</h2>" in h1)
want("every chart scales with the page", all('width="100%"' in m.group(0) for m in re.finditer(r"<svg[^>]*>", h1)
                                             if "wide" not in h1[max(0, m.start() - 40):m.start()]))
print("\n".join(fails) if fails else "all report checks hold")
EOF
[ "$(cat checks.txt)" = "all report checks hold" ] && ok "run report: charts, shapes, candidates, diffs, tree, lineage, calls" ||
	bad "run report: $(cat checks.txt)"

# --compare
expect_exit 0 "report --compare 1 2 (markdown)" -- "$KFORGE" report --compare 1 2 --db r.db
grep -q "^| 1 | evo |" <<<"$OUT_TXT" && grep -q "^| 2 | mcts |" <<<"$OUT_TXT" && grep -q "^| 8 |" <<<"$OUT_TXT" &&
	ok "compare md: one row per run, progress per call" || bad "compare md: $(head -20 <<<"$OUT_TXT")"
expect_exit 0 "report --compare 1 2 --json" -- "$KFORGE" report --compare 1 2 --db r.db --json
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
r = d["runs"]
assert d["task"] == "vector_add_f32" and len(r) == 2, d
assert [x["strategy"] for x in r] == ["evo", "mcts"], r
assert all(x["progress"] and x["best"]["speedup"] > 1 for x in r), r
assert d["best_run"] in (1, 2) and d["cpu_clock"] and d["comparable_clocks"]
' "$OUT_TXT" 2>cj.txt && ok "compare json: both runs, their progress and best" || bad "compare json: $(cat cj.txt)"
expect_exit 0 "report --compare 1 2 --format html" -- "$KFORGE" report --compare 1 2 --db r.db --format html -o cmp.html
grep -q 'data-series="1"' cmp.html && [ "$(grep -o 'data-chart="bars"' cmp.html | wc -l)" -ge 2 ] &&
	ok "compare html: a curve per run, best-speedup and cost bars" || bad "compare html lacks its charts"
expect_exit 2 "report --compare with one run" -- "$KFORGE" report --compare 1 --db r.db
expect_exit 2 "report --compare with an unknown run" -- "$KFORGE" report --compare 1 99 --db r.db
expect_exit 2 "report --compare with a run twice" -- "$KFORGE" report --compare 1 1 --db r.db
expect_exit 2 "report with two runs and no --compare" -- "$KFORGE" report 1 2 --db r.db

# headless Chromium: the pages render, and the screenshots show the charts
if ! command -v chromium >/dev/null 2>&1; then
	skip "chromium rendering (chromium not installed: apt-get install -y chromium)"
else
	chrome() {
		DBUS_SESSION_BUS_ADDRESS=disabled: timeout 120 chromium --headless --no-sandbox --disable-gpu \
			--disable-background-networking --disable-component-update --disable-sync --no-first-run \
			--user-data-dir="$(mktemp -d "$TMP/chrome.XXXXXX")" "$@" 2>/dev/null
	}
	chrome --dump-dom "file://$TMP/run1.html" >dom1.html
	[ "$(grep -o '<svg[^>]*data-chart=' dom1.html | wc -l)" -ge 4 ] && ok "chromium DOM of the run report has its charts" ||
		bad "chromium DOM: $(grep -o '<svg[^>]*data-chart=' dom1.html | wc -l) charts"
	chrome --screenshot="$TMP/run1.png" --window-size=1400,3200 "file://$TMP/run1.html" >/dev/null
	chrome --screenshot="$TMP/cmp.png" --window-size=1400,2000 "file://$TMP/cmp.html" >/dev/null
	if [ -n "${KFORGE_SCREENSHOTS:-}" ]; then
		mkdir -p "$KFORGE_SCREENSHOTS" && cp run1.png cmp.png "$KFORGE_SCREENSHOTS/"
	fi
	python3 - run1.png cmp.png >png.txt 2>&1 <<'EOF'
import struct, sys, zlib
def pixels(path):
    d = open(path, "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(d):
        n, typ = struct.unpack(">I4s", d[pos:pos + 8]); body = d[pos + 8:pos + 8 + n]; pos += 12 + n
        if typ == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif typ == b"IDAT":
            idat += body
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, i, counts = zlib.decompress(idat), w * bpp, bytearray(w * bpp), 0, {}
    for y in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            k = bytes(line[x:x + 3])
            counts[k] = counts.get(k, 0) + 1
        prev = line
    return w, counts
def near(counts, rgb, tol=12):
    return sum(n for k, n in counts.items() if all(abs(k[i] - rgb[i]) <= tol for i in range(3)))
fails = []
w, run = pixels(sys.argv[1])
_, cmp = pixels(sys.argv[2])
# the page is 1400 px wide and the charts fill its column: green bars of passing verdicts and a faster
# shape cover a large area, the progress curve is blue, the reference line slate
if near(run, (22, 163, 74)) < 20000: fails.append("run report: little green (bars): %d px" % near(run, (22, 163, 74)))
if near(run, (37, 99, 235)) < 300: fails.append("run report: no blue progress curve")
if near(run, (71, 85, 105), 20) < 200: fails.append("run report: no slate reference line")
if near(cmp, (234, 88, 12)) < 300: fails.append("compare: no second run's curve (orange)")
if near(cmp, (37, 99, 235)) < 300: fails.append("compare: no first run's curve (blue)")
if near(cmp, (22, 163, 74)) < 20000: fails.append("compare: little green (best-speedup bars)")
print("\n".join(fails) if fails else "screenshots ok (%d px wide)" % w)
EOF
	grep -q "^screenshots ok" png.txt && ok "$(cat png.txt)" || bad "screenshots: $(cat png.txt)"
fi
finish
