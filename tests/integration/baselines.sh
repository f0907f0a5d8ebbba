#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# Baselines (core/baseline.h, `kforge tasks baselines`): a good kernel baseline passes, broken ones are
# rejected with their verdict (never used), a library call is unavailable on the cpu backend with the
# reason; every suite task's tuned baseline kernel verifies on the cpu backend and every library
# baseline is reported unavailable there; `--backend cuda` without a GPU reports each one unavailable
# cleanly (exit 4); neither binary links cuBLAS or cuDNN.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
D=tests/data/baselines

# -- the fixture: one of each outcome --
expect_exit 1 "a rejected baseline makes tasks baselines exit 1" -- "$KFORGE" tasks baselines --backend cpu "$D"
grep -q '^pass  *vadd_baselines good.cu: ' <<<"$OUT_TXT" && ok "good.cu passes" || bad "good.cu: $OUT_TXT"
grep -q '^rejected  *vadd_baselines wrong.cu: wrong_output at ' <<<"$OUT_TXT" && ok "wrong.cu is rejected as wrong_output" ||
	bad "wrong.cu: $OUT_TXT"
grep -q '^rejected  *vadd_baselines no_tail.cu: out_of_bounds at ' <<<"$OUT_TXT" &&
	ok "no_tail.cu (float4 without a tail) is rejected as out_of_bounds" || bad "no_tail.cu: $OUT_TXT"
# late.cu turns wrong only after 48 launches: verification passes it; the profile's re-check of timed
# outputs rejects it (tests/unit/test_profiler_baselines.c)
grep -q '^pass  *vadd_baselines late.cu: ' <<<"$OUT_TXT" && ok "late.cu passes verification alone" || bad "late.cu: $OUT_TXT"
grep -q "^unavailable vadd_baselines cublas.gemm: cublas.gemm is a cuBLAS call: it runs on the cuda backend only" <<<"$OUT_TXT" &&
	ok "a library call is unavailable on the cpu backend, with the reason" || bad "cublas.gemm: $OUT_TXT"
tail -n 1 <<<"$OUT_TXT" | grep -qx '2 passed, 2 rejected, 1 unavailable' && ok "summary line" || bad "summary: $OUT_TXT"

expect_exit 1 "tasks baselines --json" -- "$KFORGE" tasks baselines --backend cpu --json "$D"
if python3 - "$TMP/out" <<'PY'; then ok "the JSON names each baseline, its kind, status and verdict"; else bad "JSON: $OUT_TXT"; fi
import json, sys
d = json.load(open(sys.argv[1]))
assert d["backend"] == "cpu" and (d["passed"], d["rejected"], d["unavailable"]) == (2, 2, 1), d
by = {b["baseline"]: b for b in d["baselines"]}
assert by["good.cu"]["status"] == "pass" and by["good.cu"]["kind"] == "kernel"
assert by["wrong.cu"]["status"] == "rejected" and by["wrong.cu"]["verdict"] == "wrong_output"
assert by["no_tail.cu"]["verdict"] == "out_of_bounds"
g = by["cublas.gemm"]
assert g["status"] == "unavailable" and g["kind"] == "library" and g["call"].startswith("cublas.gemm(A=a, B=b"), g
PY

# -- the same fixture on the cuda backend: no GPU here is "unavailable" per baseline, exit 4 --
if "$KFORGE_WORKER" --probe cuda >/dev/null 2>&1; then
	skip "--backend cuda without a GPU (this machine has one)"
else
	expect_exit 4 "--backend cuda with no GPU exits 4" -- "$KFORGE" tasks baselines --backend cuda "$D"
	n=$(grep -c '^unavailable  *vadd_baselines .*: cuda backend unavailable: ' <<<"$OUT_TXT")
	[ "$n" -eq 5 ] && ok "each of the 5 baselines is unavailable, with the driver's reason" || bad "cuda: $OUT_TXT"
fi

# -- the suite: tuned kernels verify on the cpu backend, library calls are unavailable there --
t0=$(date +%s)
expect_exit 0 "every suite baseline passes or is unavailable on the cpu backend" -- \
	"$KFORGE" tasks baselines --backend cpu --json tasks
t1=$(date +%s)
echo "  (suite baselines on the cpu backend: $((t1 - t0)) s)"
if python3 - "$TMP/out" <<'PY'; then ok "suite: kernels pass, library calls unavailable (none rejected)"; else bad "suite: $(head -c 2000 "$TMP/out")"; fi
import glob, json, sys
d = json.load(open(sys.argv[1]))
want = {}
for p in glob.glob("tasks/*/*/task.json"):
    t = json.load(open(p))
    for b in t.get("baselines", []):
        want[(t["name"], b.get("kernel") or b["library"])] = "kernel" if "kernel" in b else "library"
got = {(b["task"], b["baseline"]): b for b in d["baselines"]}
assert set(got) == set(want), (set(want) ^ set(got))
for k, kind in want.items():
    b = got[k]
    if kind == "kernel":
        assert b["status"] == "pass", b
    else:
        assert b["status"] == "unavailable" and "cuda backend only" in b["reason"], b
assert d["rejected"] == 0
assert sum(1 for k in want.values() if k == "kernel") >= 25 and sum(1 for k in want.values() if k == "library") >= 18
PY

# -- no GPU library is linked: they are loaded with dlopen by the worker --
if ldd "$KFORGE" "$KFORGE_WORKER" | grep -E 'libcuda\.so|libcupti|libcublas|libcudnn'; then
	bad "a binary links a GPU library"
else
	ok "ldd shows no libcuda, CUPTI, cuBLAS or cuDNN"
fi
finish
