#!/usr/bin/env bash
# Feedback without hidden values: an offline optimize run (replay provider) whose candidates fail only at a
# hidden shape, then only at verifier-derived edge shapes (a residue the public shapes lack); the run is
# resumed for a third call, whose prompt is built from the recorded reasons. No prompt may contain a value
# of a failing hidden or edge shape (nor its last index) that the prompts could not have shown before any
# feedback, and the feedback still says which dims and what kind of shape failed.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }

TASK=$TOP/tests/data/vtasks/vadd_f32/task.json
D=$TOP/tests/data/optimize
python3 - "$TMP/replay.jsonl" "$D/hidden/vec8_notail.cu" "$D/hidden/float4_rem2.cu" <<'PY'
import json, sys
out, *kernels = sys.argv[1:]
with open(out, "w") as f:
    f.write(json.dumps({"type": "kforge-export", "version": 1}) + "\n")
    for seq, k in enumerate(kernels):
        src = open(k).read()
        f.write(json.dumps({"type": "llm_call", "run_id": 1, "seq": seq, "model": "replayed",
                            "response": "Here is the kernel.\n\n```cuda\n" + src + "```\n",
                            "tokens_in": 1000, "tokens_out": 200}) + "\n")
PY
# Two calls, then a resumed run for the third (the replay serves its first reply again there).
expect_exit 0 "optimize with the replay provider runs two calls" -- "$KFORGE" optimize "$TASK" --provider replay \
	--replay "$TMP/replay.jsonl" --backend cpu --budget-calls 2 --concurrency 1 --seed 11 --db "$TMP/kb.db" \
	--out "$TMP/out" --json
run=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["run_id"])' <<<"$OUT_TXT")
expect_exit 0 "the resumed run makes the third call" -- "$KFORGE" optimize "$TASK" --provider replay \
	--replay "$TMP/replay.jsonl" --backend cpu --budget-calls 3 --concurrency 1 --db "$TMP/kb.db" --out "$TMP/out" \
	--resume "$run" --json

python3 - "$TMP/kb.db" "$TASK" "$TMP/replay.jsonl" >"$TMP/check.txt" 2>&1 <<'PY'
import json, re, sqlite3, sys
db, task_path, replay = sys.argv[1:]
task = json.load(open(task_path))
shown = set()
for s in task["shapes"]["public"] + task["shapes"].get("timing", []):
    shown.update(s.values())
c = sqlite3.connect(db)
texts = [" ".join(m["content"] for m in json.loads(p)) for (p,) in c.execute("select prompt from llm_calls order by seq")]
responses = " ".join(json.loads(l).get("response", "") for l in open(replay) if '"llm_call"' in l)
verdicts = [v for (v,) in c.execute("select e.verdict from evaluations e join candidates k on k.id = e.candidate_id "
                                    "where k.edit_kind <> 'reference' order by k.id")]
print("verdicts", verdicts)
print("prompts", len(texts))
failing = []
for dims, status in c.execute("select dims, status from eval_shapes where status <> 'pass'"):
    d = json.loads(dims)
    if d not in task["shapes"]["public"]:
        failing.append(d)
print("failing non-public shapes", failing)
# numbers the first prompt (before any feedback) or a candidate's own source already holds are no leak
baseline = set(re.findall(r"(?<![\d^])\d+(?!\d)", texts[0] + " " + responses))
leaks = []
for d in failing:
    for name, v in d.items():
        for w in (v, v - 1):  # the value, and the last index of a dim of that size
            if w in shown or w < 16 or str(w) in baseline:
                continue
            for i, t in enumerate(texts):
                if re.search(r"(?<![\d^])%d(?!\d)" % w, t):
                    leaks.append((i, name, w))
        for i, t in enumerate(texts):
            if v not in shown and re.search(r"\b%s\s*[=:]\s*%d\b" % (name, v), t):
                leaks.append((i, name + "=", v))
print("leaks", leaks)
print("LEAKS", "none" if failing and not leaks and len(texts) == 3 else "found or not checked")
hidden = any("a hidden shape of the task" in t for t in texts[1:])
edge = any("an edge shape the verifier derives" in t and "N % 32 ==" in t for t in texts[1:])
print("DESCRIBED", "ok" if hidden and edge else "bad (hidden %s, edge %s)" % (hidden, edge))
PY
grep -q "^LEAKS none" "$TMP/check.txt" && ok "no prompt holds a failing hidden or edge shape's values" ||
	bad "hidden values in prompts (or nothing failed where it should): $(cat "$TMP/check.txt")"
grep -q "^DESCRIBED ok" "$TMP/check.txt" && ok "the feedback says which dims and what kind of shape failed" ||
	bad "no description of the failing shapes: $(cat "$TMP/check.txt")"
grep -q "^verdicts \['nan_mismatch', 'nan_mismatch'" "$TMP/check.txt" &&
	ok "the first two candidates fail (at a hidden, then an edge shape)" || bad "verdicts: $(head -1 "$TMP/check.txt")"
finish
