#!/usr/bin/env bash
# The GPU checks of kforge in one run, for a machine with an NVIDIA GPU (CI has none; see README.md):
# smoke (compile, load, launch, read back), `verify --backend cuda` on every example task, the hack
# corpus and the real-kernel corpus (templates by lowered name, kforge:zero), `profile` on the examples, a sticky fault followed by a good kernel, hardware counters through
# the range profiler (kforge-worker --metrics-selftest), kforge regress (a 10% slowdown fails, noise
# never does), the library baselines (cuBLAS, cuBLASLt, cuDNN verified on the GPU, cuBLAS timed against
# the matmul references), and cpu-vs-cuda verdicts.
# Writes device-check.json (the summary) and device-check.log to OUTDIR; exits 0 when all held, 1 on any
# mismatch, 3 when kforge cannot be built or run there, 4 when there is no usable GPU. Under 5 minutes,
# plus up to DEVICE_CHECK_BASELINES_S (240 s) for the library baselines at the end.
#
#   tests/gpu/device-check.sh [OUTDIR]      run the checks (OUTDIR: $OUT if set, else build/device-check)
#   tests/gpu/device-check.sh --bundle DIR  on the build machine: copy build/kforge, build/kforge-worker and
#                                           the shared libraries a GPU machine may lack (cJSON, PCRE2,
#                                           SQLite, libcurl and theirs) into DIR/bin and DIR/lib, to carry
#
# Binaries, first found: $KFORGE_BUNDLE (a --bundle folder), build/device-bundle, $KFORGE_BUILD (default
# build/, when all their libraries resolve), else `make` there (needs the -dev packages). --bundle copies
# from $KFORGE_BUILD too.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

# ---- bundle mode (runs here, without a GPU) ----------------------------------------------------------
if [ "${1:-}" = "--bundle" ]; then
	dir=${2:?usage: device-check.sh --bundle DIR}
	bdir=${KFORGE_BUILD:-build}
	[ -x "$bdir/kforge" ] && [ -x "$bdir/kforge-worker" ] || { echo "device-check: build first (make BUILD=$bdir)" >&2; exit 3; }
	mkdir -p "$dir/bin" "$dir/lib"
	cp "$bdir/kforge" "$bdir/kforge-worker" "$dir/bin/"
	# Everything ldd resolves outside glibc, the toolkit and the compiler runtime: those the GPU machine has.
	ldd "$bdir/kforge" "$bdir/kforge-worker" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
		grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libgcc_s|libstdc\+\+|libresolv)\.so' |
		grep -v '/usr/local/cuda' | while read -r lib; do cp -L "$lib" "$dir/lib/"; done
	du -sh "$dir" | awk '{print "device-check: bundle of " $1 " in " $2}'
	ls "$dir/lib"
	exit 0
fi

# ---- run mode -----------------------------------------------------------------------------------------
outdir=${1:-${OUT:-build/device-check}}
mkdir -p "$outdir"
log="$outdir/device-check.log"
: >"$log"
results="$outdir/.results.tsv"
: >"$results"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kforge-devcheck.XXXXXX")
trap 'rm -rf "$tmp" "$results"' EXIT
t_start=$(date +%s)
budget_s=${DEVICE_CHECK_BUDGET_S:-200} # no new check past this; with the per-command limits (60 s, profile 90 s) the run stays < 5 min

say() { echo "$*" | tee -a "$log"; }
# record NAME pass|fail|skip DETAIL
record() {
	printf '%s\t%s\t%s\n' "$1" "$2" "$(echo "$3" | tr '\t\n' '  ' | head -c 600)" >>"$results"
	say "$(printf '%-5s %s: %s' "$2" "$1" "$3")"
}
out_of_time() { [ $(($(date +%s) - t_start)) -ge "$budget_s" ]; }

summary() { # summary EXIT_CODE GPU(true|false) REASON
	python3 - "$results" "$outdir/device-check.json" "$1" "$2" "$3" "$(($(date +%s) - t_start))" "${probe_txt:-}" <<'PY'
import json, sys
res, out, code, gpu, reason, elapsed, probe = sys.argv[1:8]
checks = []
for line in open(res, encoding="utf-8", errors="replace"):
    parts = line.rstrip("\n").split("\t")
    if len(parts) == 3:
        checks.append({"name": parts[0], "status": parts[1], "detail": parts[2]})
dev = dict(l.split("=", 1) for l in probe.splitlines() if "=" in l)
count = lambda s: sum(1 for c in checks if c["status"] == s)
doc = {"format": "kforge-device-check/1", "gpu": gpu == "true", "reason": reason, "device": dev,
       "passed": count("pass"), "failed": count("fail"), "skipped": count("skip"),
       "exit_code": int(code), "elapsed_s": int(elapsed), "checks": checks}
json.dump(doc, open(out, "w"), indent=1)
print(f"device-check: {doc['passed']} passed, {doc['failed']} failed, {doc['skipped']} skipped "
      f"in {elapsed} s -> {out}")
PY
}

# -- find or build the binaries --
resolves() { ! LD_LIBRARY_PATH="${2:-}" ldd "$1" 2>&1 | grep -q 'not found'; }
K="" W="" libdir=""
# From a bundle, only the libraries this machine lacks are put on the loader path: its own (newer) ones
# stay in use for everything else, python3 and nvidia-smi included.
missing_libs() { # BUNDLE_LIB_DIR -> a folder of links to the libraries ldconfig does not know
	local d="$tmp/lib" f
	mkdir -p "$d"
	for f in "$1"/*.so*; do
		[ -e "$f" ] || continue
		ldconfig -p 2>/dev/null | grep -qF "$(basename "$f") " || ln -sf "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$d/"
	done
	echo "$d"
}
for b in "${KFORGE_BUNDLE:-}" build/device-bundle; do
	if [ -n "$b" ] && [ -x "$b/bin/kforge" ] && [ -x "$b/bin/kforge-worker" ]; then
		libdir=$(missing_libs "$b/lib")
		say "device-check: from the bundle: $(ls "$libdir" | tr '\n' ' ')"
		if resolves "$b/bin/kforge" "$libdir"; then
			K=$(cd "$b/bin" && pwd)/kforge W=$(cd "$b/bin" && pwd)/kforge-worker
			break
		fi
		say "device-check: bundle $b does not resolve its libraries here: $(LD_LIBRARY_PATH=$libdir ldd "$b/bin/kforge" | grep 'not found' | tr '\n' ' ')"
	fi
done
bdir=${KFORGE_BUILD:-build}
if [ -z "$K" ] && [ -x "$bdir/kforge" ] && [ -x "$bdir/kforge-worker" ] && resolves "$bdir/kforge"; then
	K=$(cd "$bdir" && pwd)/kforge W=$(cd "$bdir" && pwd)/kforge-worker
fi
if [ -z "$K" ]; then
	say "device-check: no runnable build; trying make"
	if make -j"$(nproc)" BUILD=build/device >>"$log" 2>&1; then
		K=$top/build/device/kforge W=$top/build/device/kforge-worker
	else
		say "device-check: cannot build kforge here (see $log); bring a bundle: tests/gpu/device-check.sh --bundle build/device-bundle"
		summary 3 false "cannot build or run kforge on this machine"
		exit 3
	fi
fi
[ -n "$libdir" ] && export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KFORGE_WORKER=$W KFORGE_CACHE=$tmp/cache KFORGE_DB=$tmp/kforge.db
say "device-check: kforge $K"

# -- is there a GPU? (the worker's own probe: the code under test decides) --
# DEVICE_CHECK_DRY_BACKEND=cpu runs every step with the cpu backend in place of cuda: a check of this
# script itself on a machine without a GPU, not a device check (the summary says "dry_run").
G=${DEVICE_CHECK_DRY_BACKEND:-cuda}
if [ "$G" != cuda ]; then
	probe_txt=$(printf 'backend=%s\narch=sm_90\nname=dry run on the %s backend\ncupti=0\n' "$G" "$G")
	probe_rc=0
else
	probe_txt=$("$W" --probe cuda 2>>"$log")
	probe_rc=$?
fi
echo "$probe_txt" >>"$log"
if [ "$probe_rc" -ne 0 ]; then
	reason=$(echo "$probe_txt" | sed -n 's/^reason=//p')
	say "device-check: no GPU: ${reason:-kforge-worker --probe cuda exited $probe_rc}"
	summary 4 false "no GPU: ${reason:-probe exited $probe_rc}"
	exit 4
fi
arch=$(echo "$probe_txt" | sed -n 's/^arch=//p')
say "device-check: $(echo "$probe_txt" | sed -n 's/^name=//p') ($arch), CUPTI $(echo "$probe_txt" | sed -n 's/^cupti=//p')"

# -- the cuda worker under the sandbox layers it gets (sandbox/README.md: env, uid as root, netns, the
# deny-list after the driver's init): --probe above ran it bare; doctor starts it as every session does.
# Every check below runs under these layers too.
layers_txt=$("$K" sandbox layers 2>&1)
echo "$layers_txt" >>"$log"
if [ "$G" = cuda ]; then
	if "$K" doctor --json 2>>"$log" | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["available"] else 1)'; then
		record sandbox_gpu_worker pass "the cuda worker starts in its sandbox; active layers: $(echo "$layers_txt" | awk '$2 == "active" {print $1}' | tr '\n' ' ')"
	else
		record sandbox_gpu_worker fail "the cuda worker does not start in its sandbox (kforge doctor: see the log); layers: $(echo "$layers_txt" | tr '\n' ' ')"
	fi
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >>"$log" 2>&1

# verdict TASK KERNEL BACKEND -> prints "STATUS EXIT"; the JSON goes to the log
verdict() {
	local f="$tmp/v.$$.$RANDOM" rc st
	timeout 60 "$K" verify --backend "$3" --json --timeout-ms 10000 "$1" "$2" >"$f" 2>"$f.err"
	rc=$?
	st=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("status","?"))' <"$f" 2>/dev/null)
	{ echo "== verify --backend $3 $1 $2 -> exit $rc"; head -c 3000 "$f"; echo; head -c 2000 "$f.err"; } >>"$log"
	echo "$3|$1|$2 ${st:-none}" >>"$tmp/verdicts"
	echo "${st:-none} $rc"
	rm -f "$f" "$f.err"
}

D=tests/data
ex=tasks/examples

# 1. smoke: compile for this arch, then the whole path on the simplest task
if timeout 60 "$K" compile --arch "$arch" --json "$ex/vector_add_f32/reference.cu" >"$tmp/c.json" 2>"$tmp/c.err"; then
	record smoke-compile pass "NVRTC compile for $arch"
else
	record smoke-compile fail "compile for $arch failed: $(head -c 300 "$tmp/c.err")"
fi
cat "$tmp/c.json" "$tmp/c.err" >>"$log" 2>/dev/null
read -r st rc < <(verdict "$ex/vector_add_f32/task.json" "$ex/vector_add_f32/reference.cu" "$G")
[ "$st" = pass ] && [ "$rc" = 0 ] && record smoke-verify pass "vector_add_f32 reference on the $G backend" ||
	record smoke-verify fail "vector_add_f32 reference: $st (exit $rc)"

# 2. every example and verifier task's reference passes on the GPU
for t in "$ex"/*/task.json "$D"/vtasks/*/task.json; do
	[ -f "$t" ] || continue
	out_of_time && { record "reference $(dirname "$t")" skip "out of time"; continue; }
	read -r st rc < <(verdict "$t" "$(dirname "$t")/reference.cu" "$G")
	[ "$st" = pass ] && [ "$rc" = 0 ] && record "reference $(dirname "$t")" pass "pass on $G" ||
		record "reference $(dirname "$t")" fail "$st (exit $rc)"
done

# 3. the hack corpus on the GPU. Backend-dependent entries: inline PTX runs on a GPU (so it is judged,
#    and is a correct kernel); a divergent barrier or a missing __syncthreads is undefined behaviour whose
#    effect depends on scheduling: any rejection is right, and a pass is reported, not failed.
if [ -f "$D/hacks/expected.txt" ]; then
	while read -r kernel task accepted; do
		case "$kernel" in '' | '#'*) continue ;; esac
		name="hack $kernel"
		out_of_time && { record "$name" skip "out of time"; continue; }
		read -r st rc < <(verdict "$D/vtasks/$task/task.json" "$D/hacks/$kernel" "$G")
		case "$kernel" in
		inline_ptx.cu) accepted=pass ;;
		divergent_barrier.cu | missing_syncthreads.cu)
			if [ "$st" = pass ]; then record "$name" skip "passed on this GPU (a race the schedule hid)"; continue; fi
			accepted="$accepted|runtime_error|timeout|wrong_output|nan_mismatch|nondeterministic|out_of_bounds" ;;
		esac
		if [[ "|$accepted|" == *"|$st|"* ]]; then record "$name" pass "$st"; else record "$name" fail "got $st (exit $rc), want $accepted"; fi
	done <"$D/hacks/expected.txt"
else
	record "hack corpus" skip "tests/data/hacks/expected.txt is absent"
fi

# 3b. kernels as people write them (tests/data/real): template entry points loaded by NVRTC's lowered
#     names, two instantiations in one plan, `// kforge:zero` through the driver's memset, launch
#     expressions, vector loads under a task constraint; the verdicts are the cpu backend's
if [ -f "$D/real/expected.txt" ]; then
	while read -r kernel task accepted; do
		case "$kernel" in '' | '#'*) continue ;; esac
		name="real $kernel on $task"
		out_of_time && { record "$name" skip "out of time"; continue; }
		read -r st rc < <(verdict "$D/real/$task/task.json" "$D/real/kernels/$kernel" "$G")
		if [[ "|$accepted|" == *"|$st|"* ]]; then record "$name" pass "$st"; else record "$name" fail "got $st (exit $rc), want $accepted"; fi
	done <"$D/real/expected.txt"
else
	record "real corpus" skip "tests/data/real/expected.txt is absent"
fi

# 4. a sticky fault (illegal address: the context is dead) and then a good kernel: each verify runs
#    in fresh workers, so the fault must not leak into the next
cat >"$tmp/sticky.cu" <<'EOF'
// Writes far outside any allocation: CUDA_ERROR_ILLEGAL_ADDRESS, which breaks the context for good.
// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)
extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		c[i + (1LL << 36)] = a[i] + b[i];
}
EOF
read -r st rc < <(verdict "$ex/vector_add_f32/task.json" "$tmp/sticky.cu" "$G")
[ "$st" = runtime_error ] && [ "$rc" = 1 ] && record sticky-fault pass "runtime_error" ||
	record sticky-fault fail "got $st (exit $rc), want runtime_error"
read -r st rc < <(verdict "$ex/vector_add_f32/task.json" "$ex/vector_add_f32/reference.cu" "$G")
[ "$st" = pass ] && record sticky-then-good pass "a good kernel passes right after" ||
	record sticky-then-good fail "good kernel after the fault: $st (exit $rc)"

# 5. profile on the examples
for t in "$ex"/*/task.json; do
	name="profile $(basename "$(dirname "$t")")"
	out_of_time && { record "$name" skip "out of time"; continue; }
	timeout 90 "$K" profile --backend "$G" --json "$t" "$(dirname "$t")/reference.cu" >"$tmp/p.json" 2>"$tmp/p.err"
	rc=$?
	{ echo "== profile $t -> exit $rc"; head -c 4000 "$tmp/p.json"; head -c 2000 "$tmp/p.err"; } >>"$log"
	if [ "$rc" = 3 ] && grep -q "not available in this build" "$tmp/p.err"; then
		record "$name" skip "'kforge profile' is not in this build"
	elif [ "$rc" = 0 ] && python3 -c 'import json,sys; json.load(sys.stdin)' <"$tmp/p.json" 2>/dev/null; then
		record "$name" pass "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print({k: d[k] for k in list(d)[:6]})' <"$tmp/p.json" 2>/dev/null | head -c 300)"
	else
		record "$name" fail "exit $rc: $(head -c 300 "$tmp/p.err")"
	fi
done

# 7 (before 6, which is the longest). hardware counters through CUPTI's range profiler: a built-in
#    kernel's metrics; a machine that withholds counters (privileges, virtualization) is a skip
if [ "$G" = cuda ]; then
	timeout 120 "$W" --metrics-selftest >"$tmp/m.txt" 2>&1
	rc=$?
	{ echo "== kforge-worker --metrics-selftest -> exit $rc"; cat "$tmp/m.txt"; } >>"$log"
	case $rc in
	0) record metrics-selftest pass "$(grep -E '^(gpu__time|dram__throughput)' "$tmp/m.txt" | tr '\n' ' ')" ;;
	4) record metrics-selftest skip "$(sed -n 's/^reason=//p' "$tmp/m.txt")" ;;
	*) record metrics-selftest fail "exit $rc: $(tail -n 3 "$tmp/m.txt" | tr '\n' ' ')" ;;
	esac
	"$W" --validate-metrics GH100 gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed >"$tmp/v.txt" 2>&1 &&
		record validate-metrics pass "$(tr '\n' ' ' <"$tmp/v.txt")" ||
		record validate-metrics fail "$(tr '\n' ' ' <"$tmp/v.txt")"
fi

# ---- 8. kforge regress (section owned by the regress command; see docs/ci.md) -------------------------
#    Record a baseline for a compute-bound kernel (tests/data/regress/spin_add.cu) with --update-baselines,
#    re-run the unchanged kernel five times (noise alone must never fail), then swap in the copy slowed by
#    10% on purpose (spin_add_slow.cu), which must fail. Writes nothing under OUTDIR but the log.
regress_run() { # NAME ARGS... -> exit code in $reg_rc, JSON in $tmp/reg/out.json
	local name=$1; shift
	timeout 150 "$K" regress "$tmp/reg/manifest.json" --backend "$G" --json "$@" >"$tmp/reg/out.json" 2>"$tmp/reg/err"
	reg_rc=$?
	{ echo "== regress ($name) $* -> exit $reg_rc"; head -c 4000 "$tmp/reg/out.json"; head -c 1000 "$tmp/reg/err"; } >>"$log"
}
regress_timing() { # -> "STATUS RESULT CHANGE_PCT CI_LO CI_HI" of the timing check
	python3 - "$tmp/reg/out.json" <<'PY' 2>/dev/null || echo "none none nan nan nan"
import json, sys
d = json.load(open(sys.argv[1]))
t = [c for c in d["kernels"][0]["checks"] if c["check"] == "timing"][0]
f = lambda k: "%.2f" % t[k] if k in t else "nan"
print(t["status"], t.get("result", "none"), f("change_pct"), f("change_lo_pct"), f("change_hi_pct"))
PY
}
mkdir -p "$tmp/reg"
cp tests/data/regress/spin_add.cu "$tmp/reg/kernel.cu"
printf '{"format": "kforge-manifest/1", "kernels": [{"name": "spin_add", "task": "%s", "kernel": "kernel.cu"}]}\n' \
	"$top/tasks/examples/vector_add_f32/task.json" >"$tmp/reg/manifest.json"
if out_of_time; then
	record regress-gpu skip "out of time"
elif [ "$G" != cuda ]; then
	cp "$ex/vector_add_f32/reference.cu" "$tmp/reg/kernel.cu" # spin_add.cu's inline asm is GPU-only
	regress_run dry
	read -r st res _ < <(regress_timing)
	[ "$reg_rc" = 0 ] && [ "$st" = skip ] && record regress-dry pass "cpu: verified, timing skipped (not passed)" ||
		record regress-dry fail "exit $reg_rc, timing $st"
else
	regress_run record --update-baselines
	base=$(python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["kernels"][0]; print(k["baselines"][sys.argv[2]]["median_us"])' \
		"$tmp/reg/manifest.json" "$arch" 2>/dev/null)
	if [ "$reg_rc" = 0 ] && [ -n "$base" ]; then
		record regress-record pass "baseline ${base} us for $arch"
		cat "$tmp/reg/manifest.json" >>"$log"
		for i in 1 2 3 4 5; do
			out_of_time && { record "regress-unchanged-$i" skip "out of time"; continue; }
			regress_run "unchanged $i"
			read -r st res chg lo hi < <(regress_timing)
			if [ "$reg_rc" = 0 ] && [ "$st" = pass ]; then
				record "regress-unchanged-$i" pass "$res: ${chg}% (95% CI ${lo}..${hi}%)"
			else
				record "regress-unchanged-$i" fail "exit $reg_rc, timing $st $res: ${chg}% (95% CI ${lo}..${hi}%)"
			fi
		done
		cp tests/data/regress/spin_add_slow.cu "$tmp/reg/kernel.cu"
		regress_run "slowed 10%" --junit "$tmp/reg/junit.xml"
		read -r st res chg lo hi < <(regress_timing)
		nfail=$(python3 -c 'import sys, xml.etree.ElementTree as E; print(len(list(E.parse(sys.argv[1]).iter("failure"))))' \
			"$tmp/reg/junit.xml" 2>/dev/null)
		if [ "$reg_rc" = 1 ] && [ "$st" = fail ] && [ "$res" = regression ] && [ "$nfail" = 1 ]; then
			record regress-slowed-10pct pass "failed as it must: ${chg}% (95% CI ${lo}..${hi}%)"
		else
			record regress-slowed-10pct fail "exit $reg_rc, timing $st $res, $nfail JUnit failures: ${chg}% (95% CI ${lo}..${hi}%)"
		fi
	else
		record regress-record fail "exit $reg_rc: $(head -c 300 "$tmp/reg/err")"
	fi
fi

# 6. cpu and cuda verdicts agree on the same kernels (the cpu backend stands in for the GPU in CI).
#    The cpu runs go in parallel; cuda verdicts from steps 2 and 3 are reused.
pairs=$tmp/pairs
: >"$pairs"
for t in "$ex"/*/task.json "$D"/vtasks/*/task.json; do [ -f "$t" ] && echo "$t $(dirname "$t")/reference.cu" >>"$pairs"; done
if [ -f "$D/unusual/expected.txt" ]; then
	while read -r kernel task; do
		case "$kernel" in '' | '#'*) continue ;; esac
		echo "$D/vtasks/$task/task.json $D/unusual/$kernel" >>"$pairs"
	done <"$D/unusual/expected.txt"
fi
if [ -f "$D/hacks/expected.txt" ]; then
	while read -r kernel task _; do
		case "$kernel" in '' | '#'*) continue ;; esac
		echo "$D/vtasks/$task/task.json $D/hacks/$kernel" >>"$pairs"
	done <"$D/hacks/expected.txt"
fi
export K tmp t_start budget_s
cpu_one() {
	local f="$tmp/cpu.$$.$RANDOM" st
	if [ $(($(date +%s) - t_start)) -ge "$budget_s" ]; then echo "$2 none"; return; fi
	timeout 60 "$K" verify --backend cpu --json --timeout-ms 10000 "$1" "$2" >"$f" 2>/dev/null
	st=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("status","?"))' <"$f" 2>/dev/null)
	echo "$2 ${st:-none}"
	rm -f "$f"
}
export -f cpu_one
if ! out_of_time; then
	xargs -P "$(nproc)" -L 1 bash -c 'cpu_one "$0" "$1"' <"$pairs" >"$tmp/cpu_verdicts"
	while read -r task kernel; do
		name="cpu-vs-cuda $(basename "$(dirname "$task")")/$(basename "$kernel")"
		out_of_time && { record "$name" skip "out of time"; continue; }
		cpu=$(awk -v k="$kernel" '$1 == k {print $2}' "$tmp/cpu_verdicts" | head -n 1)
		# the cuda verdict from an earlier step when there is one (same task, same kernel)
		cuda=$(awk -v k="$G|$task|$kernel" '$1 == k {print $2}' "$tmp/verdicts" 2>/dev/null | head -n 1)
		[ -n "$cuda" ] || read -r cuda _ < <(verdict "$task" "$kernel" "$G")
		case "$(basename "$kernel")" in
		inline_ptx.cu | divergent_barrier.cu | missing_syncthreads.cu)
			record "$name" skip "backend-dependent by design: cpu $cpu, cuda $cuda"; continue ;;
		esac
		if [ -z "$cpu" ] || [ "$cpu" = none ] || [ -z "$cuda" ] || [ "$cuda" = none ]; then
			record "$name" fail "no verdict: cpu '${cpu:-}', cuda '${cuda:-}'"
		elif [ "$cpu" = "$cuda" ]; then
			record "$name" pass "both $cpu"
		else
			record "$name" fail "cpu $cpu, cuda $cuda"
		fi
	done <"$pairs"
else
	record cpu-vs-cuda skip "out of time"
fi

# ---- 9. library baselines (section owned by the baselines work; core/baseline.h, sandbox/cuda/library.c) --
#    a. cuBLAS, cuBLASLt and cuDNN load in the worker and their host-side descriptors build;
#    b. every library baseline of the suite passes the verification protocol on this GPU (a cuDNN that
#       is not installed is a skip; a library that refuses a suite problem is a failure, with its words);
#    c. cuBLAS timed against each matmul task's reference: the reference profiled as the candidate, so
#       "vs reference" is ~1x and "vs baseline" is how much faster cuBLAS is than the naive reference.
#    Last, with its own time on top of the budget (DEVICE_CHECK_BASELINES_S, default 240 s), so the
#    checks above keep theirs.
budget_s=$((budget_s + ${DEVICE_CHECK_BASELINES_S:-240}))
lib_tasks=$(grep -l '"library"' tasks/*/*/task.json 2>/dev/null | sort)
if [ "$G" = cuda ]; then
	timeout 60 "$W" --library-check >"$tmp/lib.txt" 2>&1
	rc=$?
	{ echo "== kforge-worker --library-check -> exit $rc"; cat "$tmp/lib.txt"; } >>"$log"
	case $rc in
	0) record library-check pass "$(grep -E '_version=' "$tmp/lib.txt" | tr '\n' ' ')" ;;
	4) record library-check skip "$(grep -v '=ok$' "$tmp/lib.txt" | tr '\n' ' ' | head -c 400)" ;;
	*) record library-check fail "exit $rc: $(grep -v '=ok$' "$tmp/lib.txt" | tr '\n' ' ' | head -c 400)" ;;
	esac
fi
if out_of_time; then
	record "library baselines" skip "out of time"
elif [ -n "$lib_tasks" ]; then
	# shellcheck disable=SC2086
	timeout 150 "$K" tasks baselines --backend "$G" --json $lib_tasks >"$tmp/bl.json" 2>"$tmp/bl.err"
	rc=$?
	{ echo "== tasks baselines --backend $G (library tasks) -> exit $rc"; head -c 20000 "$tmp/bl.json"; head -c 3000 "$tmp/bl.err"; } >>"$log"
	python3 - "$tmp/bl.json" "$G" <<'PY' >"$tmp/bl.tsv" 2>>"$log" || record "library baselines" fail "exit $rc, no JSON: $(head -c 300 "$tmp/bl.err")"
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["baselines"]:
    if b["kind"] != "library":
        continue
    name = "baseline %s %s" % (b["task"], b["baseline"])
    if sys.argv[2] != "cuda":  # dry run: the cpu backend must say unavailable, never pass or reject
        st = "pass" if b["status"] == "unavailable" else "fail"
    elif b["status"] == "pass":
        st = "pass"
    elif b["status"] == "unavailable" and "not installed" in b["reason"]:
        st = "skip"
    else:
        st = "fail"
    print("%s\t%s\t%s: %s" % (name, st, b["status"], b["reason"][:400]))
PY
	while IFS=$'\t' read -r name st detail; do record "$name" "$st" "$detail"; done <"$tmp/bl.tsv"
fi
for t in tasks/l1/matmul_square_f32 tasks/l1/matmul_square_f16 tasks/l1/matmul_square_bf16 tasks/examples/matmul_f32 \
	tasks/l1/matmul_batched_f32 tasks/l1/matmul_tall_skinny_f32 tasks/l1/matmul_transposed_a_f32 \
	tasks/l1/matmul_transposed_b_f32 tasks/l1/matvec_f32; do
	[ -f "$t/task.json" ] && grep -q '"cublas.gemm"' "$t/task.json" || continue
	name="cublas-vs-reference $(basename "$t")"
	out_of_time && { record "$name" skip "out of time"; continue; }
	timeout 90 "$K" profile --backend "$G" --json "$t/task.json" "$t/reference.cu" >"$tmp/pb.json" 2>"$tmp/pb.err"
	rc=$?
	{ echo "== profile (cuBLAS baseline) $t -> exit $rc"; head -c 4000 "$tmp/pb.json"; head -c 2000 "$tmp/pb.err"; } >>"$log"
	detail=$(python3 - "$tmp/pb.json" <<'PY' 2>&1
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
s = p["shapes"][0]
lib = [b for b in s.get("baselines", []) if b["kind"] == "library"]
if not lib:
    why = [b["status"] + ": " + b["reason"][:80] for b in p.get("baselines", []) if b["kind"] == "library"]
    print("no baseline timed" + ("" if p["clock"] == "cpu" else " (%s)" % "; ".join(why)))
    sys.exit(0)
b = lib[0]
ref, base = s["reference"]["median_ns"] / 1e3, b["median_ns"] / 1e3
v = b["speedup"]
# the reports' words: "vs library" with the interval and the significance decision kforge made
print("%s clock: reference %.1f us, %s %.1f us (cuBLAS %.1fx faster); the reference as candidate: %.3fx vs "
      "reference, vs library %.4fx (95%% CI %.4f-%.4f, %s)" % (p["clock"], ref, b["name"], base, ref / base,
      s["speedup"]["point"], v["point"], v["lo"], v["hi"], "significant" if v["significant"] else "not significant"))
PY
)
	if [ "$G" != cuda ]; then
		# dry run: the profile works and times no cuBLAS (unavailable on the cpu backend)
		[ "$rc" = 0 ] && [ "$detail" = "no baseline timed" ] && record "$name" pass "cpu: no cuBLAS baseline timed (unavailable)" ||
			record "$name" fail "exit $rc, detail '$detail'"
	elif [ "$rc" = 0 ] && [[ "$detail" == *"cuBLAS"*"faster"* ]]; then
		record "$name" pass "$detail"
	else
		record "$name" fail "exit $rc: $(head -c 300 "$tmp/pb.err") $(head -c 200 "$tmp/pb.json")"
	fi
done

# d. the bench's "vs library": the matmul tasks' references as the kernels of a --from-dir bench, so
#    fast_p and the geomean against each task's best baseline (cuBLAS) are what the bench report shows.
if out_of_time; then
	record bench-vs-library skip "out of time"
else
	mkdir -p "$tmp/vs-suite" "$tmp/vs-kernels"
	for t in tasks/l1/matmul_square_f32 tasks/l1/matmul_square_f16 tasks/l1/matmul_transposed_b_f32; do
		[ -f "$t/task.json" ] || continue
		echo "$PWD/$t" >>"$tmp/vs-suite/list.txt"
		cp "$t/reference.cu" "$tmp/vs-kernels/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$t/task.json").cu"
	done
	timeout 240 "$K" bench "$tmp/vs-suite/list.txt" --from-dir "$tmp/vs-kernels" --backend "$G" --db "$tmp/vs.db" \
		--out "$tmp/vs-out" --json >"$tmp/vs.json" 2>"$tmp/vs.err"
	rc=$?
	{ echo "== bench --from-dir (matmul references) -> exit $rc"; head -c 3000 "$tmp/vs-out/bench.md"; head -c 2000 "$tmp/vs.err"; } >>"$log"
	detail=$(python3 - "$tmp/vs.json" "$G" <<'PY' 2>&1
import json, sys
o = json.load(open(sys.argv[1]))["overall"]
v = o["vs_best_baseline"]
if sys.argv[2] != "cuda":
    # dry run: cuBLAS is unavailable on the cpu backend, so no task can be compared with it
    print("ok" if v["tasks"] == 0 and v["timed"] == 0 else "cpu: %r" % v)
    sys.exit(0)
ok = v["word"] == "library" and v["timed"] == o["tasks"] and v["geomean_speedup"] > 0
print("%s: fast_1 vs library %.3f, fast_0 vs library %.3f, geomean vs library %.4fx over %d tasks (vs reference: "
      "geomean %.3fx)" % ("ok" if ok else "WRONG", v["fast_p"]["1"], v["fast_p"]["0"], v["geomean_speedup"],
                          v["timed"], o["geomean_speedup"]))
PY
)
	if [ "$rc" = 0 ] && [[ "$detail" == ok* ]]; then
		record bench-vs-library pass "$detail"
	else
		record bench-vs-library fail "exit $rc: $detail $(head -c 200 "$tmp/vs.err")"
	fi
fi

failed=$(awk -F'\t' '$2 == "fail"' "$results" | wc -l)
code=0
[ "$failed" -gt 0 ] && code=1
reason=$([ "$code" = 0 ] && echo "all checks held" || echo "$failed checks failed")
late=$(awk -F'\t' '$2 == "skip" && $3 ~ /^out of time/' "$results" | wc -l)
[ "$late" -gt 0 ] && reason="$reason; $late not run for lack of time (DEVICE_CHECK_BUDGET_S=$budget_s)"
[ "$G" != cuda ] && reason="dry_run on the $G backend: $reason"
summary "$code" "$([ "$G" = cuda ] && echo true || echo false)" "$reason"
exit "$code"
