#!/usr/bin/env bash
# Feedback without hidden values: an offline optimize run (replay provider) whose candidates fail only at a
# hidden shape, then only at verifier-derived edge shapes (a residue the public shapes lack), then pass.
# No prompt may contain a value of a failing hidden or edge shape (nor its last index) that the prompts
# could not have shown before any feedback, and the feedback still says which dims and what kind of shape.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }

TASK=$TOP/tests/data/vtasks/vadd_f32/task.json
D=$TOP/tests/data/optimize
python3 - "$TMP/replay.jsonl" "$D/hidden/vec8_notail.cu" "$D/hidden/float4_rem2.cu" "$D/fast.cu" <<'PY'
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
expect_exit 0 "optimize with the replay provider completes" -- "$KFORGE" optimize "$TASK" --provider replay \
	--replay "$TMP/replay.jsonl" --backend cpu --budget-calls 3 --concurrency 1 --seed 11 --db "$TMP/kb.db" \
	--out "$TMP/out" --json

python3 - "$TMP/kb.db" "$TASK" "$TMP/replay.jsonl" >"$TMP/check.txt" 2>&1 <<'PY'
import json, re, sqlite3, sys
db, task_path, replay = sys.argv[1:]
task = json.load(open(task_path))
shown = set()
for s in task["shapes"]["public"] + task["shapes"].get("timing", []):
    shown.update(s.values())
c = sqlite3.connect(db)
prompts = [p for (p,) in c.execute("select prompt from llm_calls order by seq")]
texts = [" ".join(m["content"] for m in json.loads(p)) for p in prompts]
responses = " ".join(json.loads(l).get("response", "") for l in open(replay) if '"llm_call"' in l)
verdicts = [v for (v,) in c.execute("select e.verdict from evaluations e join candidates k on k.id = e.candidate_id "
                                    "where k.edit_kind <> 'reference' order by k.id")]
print("verdicts", verdicts)
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
        for w in (v, v - 1):                      # the value, and the last index of a dim of that size
            if w in shown or w < 16 or str(w) in baseline:
                continue
            for i, t in enumerate(texts):
                if re.search(r"(?<![\d^])%d(?!\d)" % w, t):
                    leaks.append((i, name, w))
        for i, t in enumerate(texts):
            if re.search(r"\b%s\s*[=:]\s*%d\b" % (name, v), t) and v not in shown:
                leaks.append((i, name + "=", v))
print("leaks", leaks)
ok_fail = len(failing) >= 2 and verdicts[:2] != ["pass", "pass"]
print("RESULT", "ok" if ok_fail and not leaks else "bad")
PY
grep -q "^RESULT ok" "$TMP/check.txt" && ok "no prompt holds a failing hidden or edge shape's values" ||
	bad "hidden values in prompts (or the run did not fail where it should): $(cat "$TMP/check.txt")"
grep -q "verdicts \['wrong_output', 'nan_mismatch', 'pass'\]\|verdicts \['nan_mismatch', 'nan_mismatch', 'pass'\]" "$TMP/check.txt" &&
	ok "the first two candidates fail (at a hidden, then an edge shape), the third passes" || bad "verdicts: $(head -1 "$TMP/check.txt")"
finish
