#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# Feedback without hidden values. Offline optimize runs (replay provider) whose candidates fail only at
# verifier-derived edge shapes (a residue the public shapes lack) or only at a hidden shape, in both
# orders; each run is resumed for a third call (whose prompt is built from the recorded reasons), and a
# second run on the same knowledge base shows the first run's lessons. No prompt may contain a value of a
# failing hidden or edge shape (nor its last index) that the prompts could not have shown before any
# feedback, and the feedback still says which dims and what kind of shape failed.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }

TASK=$TOP/tests/data/vtasks/vadd_f32/task.json
D=$TOP/tests/data/optimize

scenario() { # NAME KERNEL1 KERNEL2
	local name=$1 db=$TMP/$1.db run
	python3 - "$TMP/$name.jsonl" "$2" "$3" <<'PY'
import json, sys
out, *kernels = sys.argv[1:]
with open(out, "w") as f:
    f.write(json.dumps({"type": "kforge-export", "version": 1}) + "\n")
    for seq, k in enumerate(kernels):
        f.write(json.dumps({"type": "llm_call", "run_id": 1, "seq": seq, "model": "replayed",
                            "response": "Here is the kernel.\n\n```cuda\n" + open(k).read() + "```\n",
                            "tokens_in": 1000, "tokens_out": 200}) + "\n")
PY
	opt() { "$KFORGE" optimize "$TASK" --provider replay --replay "$TMP/$name.jsonl" --backend cpu --concurrency 1 \
		--db "$db" "$@" --json; }
	expect_exit 0 "$name: two calls" -- opt --budget-calls 2 --seed 11 --out "$TMP/$name-out"
	run=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["run_id"])' <<<"$OUT_TXT")
	expect_exit 0 "$name: the resumed run makes the third call" -- opt --budget-calls 3 --out "$TMP/$name-out" --resume "$run"
	expect_exit 0 "$name: a second run on the same knowledge base" -- opt --budget-calls 1 --seed 12 --out "$TMP/$name-out2"
	python3 - "$db" "$TASK" "$TMP/$name.jsonl" >"$TMP/$name.txt" 2>&1 <<'PY'
import json, re, sqlite3, sys
db, task_path, replay = sys.argv[1:]
task = json.load(open(task_path))
shown = set()
for s in task["shapes"]["public"] + task["shapes"].get("timing", []):
    shown.update(s.values())
c = sqlite3.connect(db)
texts = [" ".join(m["content"] for m in json.loads(p))
         for (p,) in c.execute("select prompt from llm_calls order by run_id, seq")]
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
print("LEAKS", "none" if failing and not leaks and len(texts) == 4 else "found or not checked (%d prompts)" % len(texts))
print("LESSONS", "shown" if any("Lessons from earlier runs" in t for t in texts[3:]) else "none")
# (which failures a prompt shows depends on the parent the search picks)
described = any(("a hidden shape of the task" in t or "an edge shape the verifier derives" in t) and "N" in t
                for t in texts[1:])
print("DESCRIBED", "ok" if described else "bad")
PY
	grep -q "^LEAKS none" "$TMP/$name.txt" && ok "$name: no prompt holds a failing hidden or edge shape's values" ||
		bad "$name: hidden values in prompts (or nothing failed where it should): $(cat "$TMP/$name.txt")"
	grep -q "^DESCRIBED ok" "$TMP/$name.txt" && ok "$name: the feedback says which dims and what kind of shape failed" ||
		bad "$name: no description of the failing shapes: $(cat "$TMP/$name.txt")"
	grep -q "^LESSONS shown" "$TMP/$name.txt" && ok "$name: the second run's prompt carries the first run's lessons" ||
		bad "$name: no lessons in the second run's prompt: $(cat "$TMP/$name.txt")"
	grep -q "^verdicts \['nan_mismatch', 'nan_mismatch'" "$TMP/$name.txt" && ok "$name: the first two candidates fail" ||
		bad "$name: verdicts: $(head -1 "$TMP/$name.txt")"
}
scenario edge-first "$D/hidden/float4_rem2.cu" "$D/hidden/vec8_notail.cu"
scenario hidden-first "$D/hidden/vec8_notail.cu" "$D/hidden/float4_rem2.cu"
finish
