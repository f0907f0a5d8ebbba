#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# kforge regress on the cpu backend: the issue's check (a correct kernel, one made wrong, one that no longer
# compiles: exit 1 and a JUnit report naming exactly the two failures), timing reported as skipped and never
# as passed, valid --json, bad manifests (exit 2 with the field path), and --update-baselines refused
# without a GPU. The GPU half (a 10% slowdown fails, the unchanged kernel never does) is in
# tests/gpu/device-check.sh.
. "$(dirname "$0")/lib.sh"
DATA="$TOP/tests/data/regress"

# ---- the checked-by manifest: JUnit and JSON from one run ----
expect_exit 1 "correct + wrong + no longer compiling: exit 1" -- \
	"$KFORGE" regress "$DATA/checked_by.json" --backend cpu --junit "$TMP/junit.xml" --json
printf '%s' "$OUT_TXT" >"$TMP/out.json"
if python3 - "$TMP/junit.xml" <<'PY'; then ok "junit: exactly the two failures, timing skipped with a reason"; else bad "junit report"; fi
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suite = root.find("testsuite")
cases = suite.findall("testcase")
failed = sorted((c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None)
assert failed == [("broken", "compile sm_80"), ("wrong", "verify public+hidden")], failed
assert suite.get("failures") == "2" and suite.get("errors") == "0", suite.attrib
assert int(suite.get("tests")) == len(cases)
msg = {c.get("classname"): c.find("failure").get("message") for c in cases if c.find("failure") is not None}
assert msg["broken"].startswith("compile_error for sm_80: ") and "block_reduce_sum" in msg["broken"], msg
assert msg["wrong"].startswith("wrong_output"), msg
timing = [c for c in cases if c.get("name").startswith("timing")]
assert len(timing) == 3, timing
for c in timing:
    s = c.find("skipped")
    assert s is not None, "timing on cpu must be skipped: " + c.get("classname")
    assert s.get("message").startswith("no GPU: cpu times are not comparable to"), s.get("message")
good = {c.get("name"): c for c in cases if c.get("classname") == "good"}
assert set(good) == {"compile sm_80,sm_90", "verify public+hidden", "timing B=16384 N=4096"}, set(good)
assert "sm_90 baselines" in good["timing B=16384 N=4096"].find("skipped").get("message")
assert good["verify public+hidden"].find("failure") is None and good["verify public+hidden"].find("skipped") is None
broken_verify = [c for c in cases if c.get("classname") == "broken" and c.get("name").startswith("verify")]
assert broken_verify and broken_verify[0].find("skipped") is not None
PY
if python3 - "$TMP/out.json" <<'PY'; then ok "--json: one valid document with the same verdicts"; else bad "--json document"; fi
import json, sys
d = json.load(open(sys.argv[1]))
assert d["backend"] == "cpu" and d["exit_code"] == 1, d.get("exit_code")
s = d["summary"]
assert (s["kernels"], s["failed"], s["errors"], s["passed"], s["skipped"]) == (3, 2, 0, 3, 4), s
by = {k["name"]: k for k in d["kernels"]}
assert by["good"]["status"] == "pass" and by["wrong"]["status"] == "fail" and by["broken"]["status"] == "fail"
v = [c for c in by["good"]["checks"] if c["check"] == "verify"][0]
assert v["verdict"] == "pass" and v["public_shapes"] == 2 and v["hidden_shapes"] == 2, v
assert all(c["status"] == "skip" for k in d["kernels"] for c in k["checks"] if c["check"] == "timing")
assert [c for c in by["broken"]["checks"] if c["check"] == "compile"][0]["archs"] == {"sm_80": "compile_error"}
PY

# ---- text mode: one line per check and a summary ----
cat >"$TMP/broken.json" <<JSON
{"format": "kforge-manifest/1", "kernels": [
 {"task": "$TOP/tasks/l1/rmsnorm_f32/task.json", "kernel": "$DATA/rmsnorm_broken.cu",
  "baselines": {"sm_90": {"median_us": 12.5, "toolchain": "cuda-13.0"}}}]}
JSON
expect_exit 1 "a kernel that does not compile for a baseline's arch fails without a GPU" -- \
	"$KFORGE" regress "$TMP/broken.json" --backend cpu
case "$OUT_TXT" in
*"FAIL  rmsnorm_broken  compile sm_90: compile_error for sm_90: "*"SKIP  rmsnorm_broken  timing B=16384 N=4096: no GPU"*"1 failed"*)
	ok "text: a line per check naming the arch and the first error line, and a summary" ;;
*) bad "text output: $OUT_TXT" ;;
esac

# ---- bad manifests: exit 2 with the file and the field path ----
bad_manifest() { # DESC EXPECTED-MESSAGE JSON
	printf '%s\n' "$3" >"$TMP/bad.json"
	expect_exit 2 "bad manifest: $1" -- "$KFORGE" regress "$TMP/bad.json" --backend cpu
	case "$ERR_TXT" in *"$2"*) ok "bad manifest message: $1" ;; *) bad "message for $1: $ERR_TXT" ;; esac
}
T="$TOP/tasks/l1/softmax_f32/task.json" K="$TOP/shipped/softmax_f32.cu"
bad_manifest "missing task" "bad.json: kernels[1].task: missing required field" \
	"{\"format\": \"kforge-manifest/1\", \"kernels\": [{\"task\": \"$T\", \"kernel\": \"$K\"}, {\"kernel\": \"$K\"}]}"
bad_manifest "task file missing" "bad.json: kernels[0].task: cannot read task" \
	"{\"format\": \"kforge-manifest/1\", \"kernels\": [{\"task\": \"nowhere/task.json\", \"kernel\": \"$K\"}]}"
bad_manifest "baseline arch" "bad.json: kernels[0].baselines.h200: 'h200' is not a GPU arch" \
	"{\"format\": \"kforge-manifest/1\", \"kernels\": [{\"task\": \"$T\", \"kernel\": \"$K\", \"baselines\": {\"h200\": {\"median_us\": 1, \"toolchain\": \"cuda-13.0\"}}}]}"
bad_manifest "baseline without toolchain" "bad.json: kernels[0].baselines.sm_90.toolchain" \
	"{\"format\": \"kforge-manifest/1\", \"kernels\": [{\"task\": \"$T\", \"kernel\": \"$K\", \"baselines\": {\"sm_90\": {\"median_us\": 1}}}]}"
bad_manifest "format" "bad.json: format: expected" '{"format": "kforge-manifest/9", "kernels": []}'
bad_manifest "not JSON" "invalid JSON" '{"format": '
expect_exit 2 "a manifest that does not exist" -- "$KFORGE" regress "$TMP/none.json" --backend cpu
expect_exit 2 "--threshold must be a percentage" -- "$KFORGE" regress "$DATA/checked_by.json" --threshold 5%

# ---- --update-baselines needs GPU times ----
cat >"$TMP/upd.json" <<JSON
{"format": "kforge-manifest/1", "kernels": [{"task": "$T", "kernel": "$K"}]}
JSON
cp "$TMP/upd.json" "$TMP/upd.orig"
expect_exit 2 "--update-baselines with --backend cpu is a usage error" -- \
	"$KFORGE" regress "$TMP/upd.json" --backend cpu --update-baselines
case "$ERR_TXT" in *"needs GPU times"*) ok "--update-baselines --backend cpu says why" ;; *) bad "message: $ERR_TXT" ;; esac
gpu=$("$KFORGE" doctor 2>/dev/null | awk '/^GPU/ { g = 1; next } g && $1 == "available" { print $2; exit }')
if [ "$gpu" = yes ]; then
	skip "--update-baselines without a GPU (this machine has one)"
	skip "--backend cuda without a GPU (this machine has one)"
else
	expect_exit 4 "--update-baselines without a GPU: exit 4" -- "$KFORGE" regress "$TMP/upd.json" --update-baselines
	if cmp -s "$TMP/upd.orig" "$TMP/upd.json"; then ok "the manifest is left untouched"; else bad "manifest changed"; fi
	expect_exit 4 "--backend cuda without a GPU: exit 4" -- "$KFORGE" regress "$TMP/upd.json" --backend cuda
fi
finish
