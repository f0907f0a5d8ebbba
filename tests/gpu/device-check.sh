#!/usr/bin/env bash
# The GPU checks of kforge in one run, for a machine with an NVIDIA GPU (CI has none; see README.md):
# smoke (compile, load, launch, read back); `verify --backend cuda` on every example and suite task's
# reference, the unusual, hack, real-kernel and sanitizer corpora (in parallel), each verdict compared with
# the cpu backend's; a sticky fault followed by a good kernel; `profile` on the examples; the A/A test
# (a reference against itself, 10 runs: at most 1 significant), the timing CV of the >= 100 us shapes and
# CUPTI against CUDA events on the same kernel; hardware counters through the range profiler
# (kforge-worker --metrics-selftest); kforge regress (a 10% slowdown fails, noise never does);
# compute-sanitizer (memcheck, racecheck, initcheck, synccheck) against the cpu sanitizer's verdicts; the
# cost model's predictions (made on the build machine) against profiled GPU times: Spearman's rank
# correlation and the direction of each tests/data/costmodel pair; the library baselines (cuBLAS,
# cuBLASLt, cuDNN verified on the GPU, cuBLAS timed against the matmul references).
# Writes device-check.json (the summary), device-check.log, aa.json (every A/A run's numbers),
# costmodel.json and sanitizer.log to OUTDIR; exits 0 when all held, 1 on any mismatch, 3 when kforge cannot be built or run
# there, 4 when there is no usable GPU. A step that fails is recorded and the next one runs. No new check
# starts after DEVICE_CHECK_BUDGET_S (300 s), the library baselines after that plus
# DEVICE_CHECK_BASELINES_S (120 s).
#
#   tests/gpu/device-check.sh [OUTDIR]      run the checks (OUTDIR: $OUT if set, else build/device-check)
#   tests/gpu/device-check.sh --bundle DIR  on the build machine: copy build/kforge, build/kforge-worker and
#                                           the shared libraries a GPU machine may lack (cJSON, PCRE2,
#                                           SQLite, libcurl and theirs) into DIR/bin and DIR/lib, to carry
#   tests/gpu/device-check.sh --cpu-verdicts FILE
#                                           on the build machine: the cpu backend's verdict on every kernel
#                                           the run compares (TASK KERNEL STATUS lines), to carry, so the GPU
#                                           machine needs no host compiler or clang sanitizer for them
#   tests/gpu/device-check.sh --model-predictions FILE
#                                           on the build machine: the cost model's prediction (h200) for
#                                           every kernel the costmodel step times (TASK KERNEL PREDICTED_NS
#                                           BOUND VERSION TARGET DIMS NOTE, tab-separated; NA and why when
#                                           none), to carry: the model needs clang-14's instrumented build.
#                                           DEVICE_CHECK_MODEL_TASKS (folder patterns) keeps some tasks,
#                                           DEVICE_CHECK_JOBS (nproc) at a time, 120 s each
#                                           (DEVICE_CHECK_MODEL_KERNEL_S)
#
# What to carry to the GPU machine: build/device-bundle (--bundle), build/device-check-cpu.txt
# (--cpu-verdicts; DEVICE_CHECK_CPU_VERDICTS) and build/device-check-model.txt (--model-predictions;
# DEVICE_CHECK_MODEL_PREDICTIONS): all three are git-ignored, so name them in the run's carry list.
#
# Binaries, first found: $KFORGE_BUNDLE (a --bundle folder), build/device-bundle, $KFORGE_BUILD (default
# build/, when all their libraries resolve), else `make` there (needs the -dev packages). --bundle copies
# from $KFORGE_BUILD too. DEVICE_CHECK_JOBS (8) verifications run at a time; DEVICE_CHECK_PAIRS_MAX
# keeps the first N kernels of the list (a quick look at the script itself), DEVICE_CHECK_GROUPS some
# groups of it; DEVICE_CHECK_ONLY runs some steps alone (see want()).
#
# What it costs on an H200 (measured 2026-12-04, docs/gpu-proof.md): a cuda worker starts in ~340 ms and
# a verification starts two or three per shape, so one `verify` takes ~23 s alone and >90 s with 8 at a
# time; a `profile` of matmul_f32 ~48 s. The whole list (155 kernels) and ten A/A runs do not fit one
# 15-minute lease: split them across calls with DEVICE_CHECK_ONLY and DEVICE_CHECK_GROUPS.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

# list_pairs: "TASK KERNEL GROUP" for every kernel both backends are asked about
list_pairs() {
	local D=tests/data t kernel task _
	for t in tasks/examples/*/task.json tasks/l1/*/task.json tasks/l2/*/task.json tasks/l3/*/task.json "$D"/vtasks/*/task.json; do
		[ -f "$t" ] && echo "$t $(dirname "$t")/reference.cu reference"
	done
	while read -r kernel task _; do
		case "$kernel" in '' | '#'*) continue ;; esac
		echo "$D/vtasks/$task/task.json $D/unusual/$kernel unusual"
	done <"$D/unusual/expected.txt"
	while read -r kernel task _; do
		case "$kernel" in '' | '#'*) continue ;; esac
		echo "$D/vtasks/$task/task.json $D/hacks/$kernel hack"
	done <"$D/hacks/expected.txt"
	while read -r kernel task _; do
		case "$kernel" in '' | '#'*) continue ;; esac
		echo "$D/real/$task/task.json $D/real/kernels/$kernel real"
	done <"$D/real/expected.txt"
	while read -r kernel task _; do
		case "$kernel" in '' | '#'* | ../*) continue ;; esac
		echo "$D/vtasks/$task/task.json $D/sanitizer/$kernel sanitizer"
	done <"$D/sanitizer/expected.txt"
}

# cpu_one TASK KERNEL -> "TASK KERNEL STATUS" (the cpu backend's verdict, its sanitizer included)
cpu_one() {
	local f st
	f=$(mktemp "${TMPDIR:-/tmp}/kforge-cpu.XXXXXX")
	timeout 300 "$K" verify --backend cpu --json "$1" "$2" >"$f" 2>/dev/null
	st=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("status","?"))' <"$f" 2>/dev/null)
	echo "$1 $2 ${st:-none}"
	rm -f "$f"
}

# ---- cpu-verdicts mode (runs here, without a GPU) -----------------------------------------------------
if [ "${1:-}" = "--cpu-verdicts" ]; then
	file=${2:?usage: device-check.sh --cpu-verdicts FILE}
	K=$(cd "${KFORGE_BUILD:-build}" && pwd)/kforge
	[ -x "$K" ] || { echo "device-check: build first" >&2; exit 3; }
	export K KFORGE_WORKER=${KFORGE_WORKER:-$(dirname "$K")/kforge-worker}
	export -f cpu_one
	list_pairs | xargs -P "$(nproc)" -L 1 bash -c 'cpu_one "$0" "$1"' >"$file.tmp" && mv "$file.tmp" "$file"
	awk '{print $3}' "$file" | sort | uniq -c
	exit 0
fi

# ---- model-predictions mode (runs here, without a GPU: the cost model needs clang-14) ----------------
# list_model_kernels: "TASK KERNEL" for every kernel the costmodel step compares: each tests/data/costmodel
# pair (fast.cu, then reference.cu: the step measures both sides of a pair in fast.cu's profile), then the
# references of tasks/examples, l1, l2, l3. DEVICE_CHECK_MODEL_TASKS (patterns on the task's folder, e.g.
# "tests/data/costmodel/*") keeps only some tasks.
model_task_wanted() {
	local p ps
	[ -z "${DEVICE_CHECK_MODEL_TASKS:-}" ] && return 0
	read -r -a ps <<<"$DEVICE_CHECK_MODEL_TASKS" # words, not expanded: the patterns are matched below
	for p in "${ps[@]}"; do
		p=${p%/}
		# shellcheck disable=SC2053
		[[ "$1" == $p || "$1/task.json" == $p || "$1" == $p/* ]] && return 0
	done
	return 1
}
list_model_kernels() {
	local t d
	for t in tests/data/costmodel/*/task.json; do
		d=$(dirname "$t")
		[ -f "$d/reference.cu" ] && [ -f "$d/fast.cu" ] && model_task_wanted "$d" || continue
		echo "$t $d/fast.cu"
		echo "$t $d/reference.cu"
	done
	for t in tasks/examples/*/task.json tasks/l1/*/task.json tasks/l2/*/task.json tasks/l3/*/task.json; do
		d=$(dirname "$t")
		[ -f "$d/reference.cu" ] && model_task_wanted "$d" || continue
		echo "$t $d/reference.cu"
	done
}
# model_one TASK KERNEL N -> "N<TAB>TASK<TAB>KERNEL<TAB>PREDICTED_NS<TAB>BOUND<TAB>VERSION<TAB>TARGET<TAB>DIMS<TAB>NOTE"
# (PREDICTED_NS NA and the reason in NOTE when there is no prediction)
model_one() {
	local f rc
	f=$(mktemp "${TMPDIR:-/tmp}/kforge-model.XXXXXX")
	timeout "${DEVICE_CHECK_MODEL_KERNEL_S:-120}" "$K" profile "$1" "$2" --backend cpu --json --target "${DEVICE_CHECK_MODEL_TARGET:-h200}" >"$f" 2>"$f.err"
	rc=$?
	python3 - "$1" "$2" "$3" "$rc" "$f" "$f.err" <<'PY'
import json, sys
task, kernel, n, rc, f, ferr = sys.argv[1:7]
clean = lambda x: str(x).replace("\t", " ").replace("\n", " ")
def out(*cols):
    print("\t".join([n, task, kernel] + [clean(c) for c in cols]))
try:
    d = json.load(open(f))
except Exception:
    err = [l for l in open(ferr, errors="replace").read().splitlines() if l.strip()]
    why = "timed out" if rc in ("124", "137") else (err[-1][:300] if err else "no JSON")
    out("NA", "-", "-", "-", "-", "kforge profile exit %s: %s" % (rc, why))
    sys.exit(0)
m = d.get("model") or {}
if m.get("clock") != "model" or "candidate" not in m:
    out("NA", "-", "-", "-", "-", "no prediction (status %s, exit %s): %s" %
        (d.get("status"), rc, m.get("why", "no model object")[:300]))
else:
    out("%.1f" % m["candidate"]["predicted_ns"], m["candidate"]["bound"], m["version"], m["target"],
        json.dumps(m["dims"], separators=(",", ":"), sort_keys=True),
        "status %s; %s shape" % (d.get("status"), "timing" if m.get("is_timing_shape") else "largest public"))
PY
	rm -f "$f" "$f.err"
}
if [ "${1:-}" = "--model-predictions" ]; then
	file=${2:?usage: device-check.sh --model-predictions FILE}
	K=$(cd "${KFORGE_BUILD:-build}" && pwd)/kforge
	[ -x "$K" ] || { echo "device-check: build first" >&2; exit 3; }
	export K KFORGE_WORKER=${KFORGE_WORKER:-$(dirname "$K")/kforge-worker} DEVICE_CHECK_MODEL_KERNEL_S DEVICE_CHECK_MODEL_TARGET
	export -f model_one
	t0=$(date +%s)
	list_model_kernels | awk '{print $0, NR}' >"$file.list"
	{
		printf '# kforge cost-model predictions (tests/gpu/device-check.sh --model-predictions), %s, commit %s\n' \
			"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
		printf '# task\tkernel\tpredicted_ns\tbound\tmodel_version\ttarget\tdims\tnote\n'
		xargs -P "${DEVICE_CHECK_JOBS:-$(nproc)}" -L 1 bash -c 'model_one "$0" "$1" "$2"' <"$file.list" | sort -n -k1,1 | cut -f2-
	} >"$file.tmp" && mv "$file.tmp" "$file"
	rm -f "$file.list"
	n=$(grep -vc '^#' "$file")
	na=$(awk -F'\t' '!/^#/ && $3 == "NA"' "$file" | wc -l)
	echo "device-check: $n kernels, $((n - na)) predicted, $na without a prediction, in $(($(date +%s) - t0)) s -> $file"
	awk -F'\t' '!/^#/ && $3 == "NA" {print "  NA " $2 ": " $8}' "$file"
	exit 0
fi

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
results="$outdir/results.tsv" # one line per check as it ends: what comes back even if the run is cut short
: >"$results"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kforge-devcheck.XXXXXX")
trap 'rm -rf "$tmp" ${wdir:+"$wdir"}' EXIT
t_start=$(date +%s)
budget_s=${DEVICE_CHECK_BUDGET_S:-300} # no new check past this (each command has its own limit too)

say() { echo "$*" | tee -a "$log"; }
# record NAME pass|fail|skip DETAIL
record() {
	printf '%s\t%s\t%s\n' "$1" "$2" "$(echo "$3" | tr '\t\n' '  ' | head -c 600)" >>"$results"
	say "$(printf '%-5s %s: %s' "$2" "$1" "$3")"
}
# want STEP: DEVICE_CHECK_ONLY (a list of step names: startup smoke corpus cpuvs sticky aa regress
# sanitizer metrics profile costmodel baselines) runs those alone; unset, every step runs
want() { [ -z "${DEVICE_CHECK_ONLY:-}" ] || [[ " $DEVICE_CHECK_ONLY " == *" $1 "* ]]; }
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
# As root each worker runs under a uid of its own, which must be able to execute the worker: a copy in a
# folder everyone may enter (the checkout may sit under a 0700 home).
if [ "$(id -u)" = 0 ]; then
	wdir=$(mktemp -d /tmp/kforge-worker.XXXXXX) && chmod 755 "$wdir" && cp "$W" "$wdir/" && chmod 755 "$wdir/kforge-worker" && W=$wdir/kforge-worker
fi
# cuDNN: the system's, else the one a Python wheel (nvidia-cudnn-cu13) put on the machine
if ! ldconfig -p 2>/dev/null | grep -q 'libcudnn.so.9 '; then
	dnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)
	if [ -n "$dnn" ] && [ -e "$dnn/libcudnn.so.9" ]; then
		export LD_LIBRARY_PATH="$dnn${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		say "device-check: cuDNN from $dnn"
	fi
fi
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

# 0. how long a cuda worker takes to start (the driver's init, the primary context, CUPTI): every
#    verification starts two or three per shape, so this is most of a verification's time on a GPU
if want startup && [ "$G" = cuda ]; then
	st_ms() { local t0 t1; t0=$(date +%s%N); env "$@" "$W" --probe cuda >/dev/null 2>&1; t1=$(date +%s%N); echo $(((t1 - t0) / 1000000)); }
	with=$(for i in 1 2 3 4 5; do st_ms; done | sort -n | sed -n 3p)
	without=$(for i in 1 2 3 4 5; do st_ms KFORGE_CUPTI=0; done | sort -n | sed -n 3p)
	detail="kforge-worker --probe cuda, median of 5: ${with} ms with CUPTI, ${without} ms without"
	[ "$with" -le 1000 ] && record worker-start pass "$detail" || record worker-start fail "$detail (over 1 s)"
fi

if want smoke; then
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
fi

if want corpus; then
# 2. every kernel of the corpora on this backend, DEVICE_CHECK_JOBS verifications at a time (one GPU
#    shared by several workers: correctness does not depend on being alone on it; timing comes later,
#    alone). Each job logs to its own file, appended to the log in list order afterwards.
list_pairs >"$tmp/pairs"
# DEVICE_CHECK_GROUPS (reference unusual hack real sanitizer) keeps those groups of the list
if [ -n "${DEVICE_CHECK_GROUPS:-}" ]; then
	awk -v g=" $DEVICE_CHECK_GROUPS " 'index(g, " " $3 " ")' "$tmp/pairs" >"$tmp/p2"
	mv "$tmp/p2" "$tmp/pairs"
fi
[ -n "${DEVICE_CHECK_PAIRS_MAX:-}" ] && { head -n "$DEVICE_CHECK_PAIRS_MAX" "$tmp/pairs" >"$tmp/p2"; mv "$tmp/p2" "$tmp/pairs"; }
mkdir -p "$tmp/vlog"
export K G tmp t_start budget_s
verdict_job() { # TASK KERNEL GROUP N -> "TASK KERNEL STATUS EXIT SECONDS"
	local f="$tmp/vlog/$4" rc st t0=$(date +%s)
	if [ $((t0 - t_start)) -ge "$budget_s" ]; then echo "$1 $2 late - 0"; return; fi
	timeout "${DEVICE_CHECK_VERIFY_S:-300}" "$K" verify --backend "$G" --json --timeout-ms 20000 "$1" "$2" >"$f.json" 2>"$f.err"
	rc=$?
	st=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("status","?"))' <"$f.json" 2>/dev/null)
	{ echo "== verify --backend $G $1 $2 -> exit $rc ($(($(date +%s) - t0)) s)"; head -c 3000 "$f.json"; echo; head -c 2000 "$f.err"; } >"$f.log"
	rm -f "$f.json" "$f.err"
	echo "$1 $2 ${st:-none} $rc $(($(date +%s) - t0))"
}
export -f verdict_job
t_corpus=$(date +%s)
awk '{print $0, NR}' "$tmp/pairs" | xargs -P "${DEVICE_CHECK_JOBS:-8}" -L 1 bash -c 'verdict_job "$0" "$1" "$2" "$3"' >"$tmp/gpu_verdicts"
for i in $(seq 1 "$(wc -l <"$tmp/pairs")"); do [ -f "$tmp/vlog/$i.log" ] && cat "$tmp/vlog/$i.log" >>"$log"; done
say "device-check: $(wc -l <"$tmp/gpu_verdicts") verifications on $G in $(($(date +%s) - t_corpus)) s, ${DEVICE_CHECK_JOBS:-8} at a time"
gpu_of() { awk -v t="$1" -v k="$2" '$1 == t && $2 == k {print $3, $4; exit}' "$tmp/gpu_verdicts"; }
accepted_of() { # GROUP KERNEL -> the verdicts the corpus accepts ("" when the group has no list)
	local base=$(basename "$2")
	case "$1" in
	reference | unusual) echo pass ;;
	hack) awk -v k="$base" '$1 == k {print $3}' "$D/hacks/expected.txt" ;;
	real) awk -v k="$base" '$1 == k {print $3}' "$D/real/expected.txt" ;;
	sanitizer) echo "" ;;
	esac
}
while read -r task kernel group; do
	name="$group $(basename "$(dirname "$task")")/$(basename "$kernel")"
	read -r st rc < <(gpu_of "$task" "$kernel")
	[ "$st" = late ] && { record "$name" skip "out of time"; continue; }
	[ "$group" = sanitizer ] && continue # judged in step 7, beside compute-sanitizer's findings
	accepted=$(accepted_of "$group" "$kernel")
	# Backend-dependent by design: inline PTX runs on a GPU (so it is judged, and is a correct kernel);
	# a divergent barrier or a missing __syncthreads is undefined behaviour whose effect depends on
	# scheduling: any rejection is right, and a pass is reported, not failed.
	case "$group/$(basename "$kernel")" in
	hack/inline_ptx.cu) accepted=pass ;;
	hack/divergent_barrier.cu | hack/missing_syncthreads.cu)
		if [ "$st" = pass ]; then record "$name" skip "passed on this GPU (a race the schedule hid)"; continue; fi
		accepted="$accepted|runtime_error|timeout|wrong_output|nan_mismatch|nondeterministic|out_of_bounds" ;;
	esac
	if [[ "|$accepted|" == *"|$st|"* ]]; then record "$name" pass "$st"; else record "$name" fail "got $st (exit $rc), want $accepted"; fi
done <"$tmp/pairs"
fi

if want cpuvs; then
# 3. cpu and cuda verdicts agree on the same kernels (the cpu backend stands in for the GPU in CI). The cpu
#    verdicts come from DEVICE_CHECK_CPU_VERDICTS (build/device-check-cpu.txt: `--cpu-verdicts FILE`
#    on the build machine, the clang sanitizer there) when it lists the kernel, else from a cpu run here.
cpu_file=${DEVICE_CHECK_CPU_VERDICTS:-build/device-check-cpu.txt}
: >"$tmp/cpu_verdicts"
[ -f "$cpu_file" ] && cp "$cpu_file" "$tmp/cpu_verdicts" && say "device-check: cpu verdicts from $cpu_file ($(wc -l <"$cpu_file") kernels, computed on the build machine)"
awk 'NR == FNR {seen[$1 " " $2] = 1; next} !(($1 " " $2) in seen)' "$tmp/cpu_verdicts" "$tmp/pairs" >"$tmp/cpu_todo"
if [ -s "$tmp/cpu_todo" ] && ! out_of_time; then
	export -f cpu_one
	xargs -P "$(nproc)" -L 1 bash -c 'cpu_one "$0" "$1"' <"$tmp/cpu_todo" >>"$tmp/cpu_verdicts"
fi
while read -r task kernel group; do
	[ "$group" = sanitizer ] && continue
	name="cpu-vs-cuda $(basename "$(dirname "$task")")/$(basename "$kernel")"
	cpu=$(awk -v t="$task" -v k="$kernel" '$1 == t && $2 == k {print $3; exit}' "$tmp/cpu_verdicts")
	read -r cuda _ < <(gpu_of "$task" "$kernel")
	[ "$cuda" = late ] && { record "$name" skip "out of time"; continue; }
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
done <"$tmp/pairs"
fi

if want sticky; then
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
fi

if want aa; then
# 5. the A/A test: a task's reference profiled against itself, DEVICE_CHECK_AA_RUNS (10) times in fresh
#    workers; kforge may call at most one of them significant (docs/spec/verification.md: the noise band
#     comes from an A/A twin inside each run, so a kernel against itself must stay inside it). The same
#     runs give the timing CV (stddev/mean of the samples, rse * sqrt(n)) of every shape >= 100 us.
#     Then the same kernel with CUPTI off (KFORGE_CUPTI=0, which needs the env layer off to reach the
#     worker): CUDA events against CUPTI's kernel durations. Every run's numbers go to aa.json.
profile_json() { # OUTFILE TASK KERNEL [ENV...] -> exit code
	local o=$1 t=$2 k=$3 rc
	shift 3
	env "$@" timeout 120 "$K" profile --backend "$G" --json "$t" "$k" >"$o" 2>"$o.err"
	rc=$?
	{ echo "== $* profile $t $k -> exit $rc"; head -c 6000 "$o"; echo; head -c 2000 "$o.err"; } >>"$log"
	return $rc
}
aa_tasks=${DEVICE_CHECK_AA_TASKS:-tasks/examples/matmul_f32}
mkdir -p "$tmp/aa"
for at in $aa_tasks; do
	an=$(basename "$at")
	# the events run first: on 2026-12-04 ten A/A runs of ~48 s each left no time for it
	out_of_time || profile_json "$tmp/aa/$an.events.json" "$at/task.json" "$at/reference.cu" KFORGE_SANDBOX_LAYERS=all,-env KFORGE_CUPTI=0 || true
	for i in $(seq 1 "${DEVICE_CHECK_AA_RUNS:-10}"); do
		out_of_time && break
		profile_json "$tmp/aa/$an.$i.json" "$at/task.json" "$at/reference.cu" || true
	done
done
python3 - "$tmp/aa" "$outdir/aa.json" "$results" "$G" $aa_tasks <<'PY' 2>&1 | tee -a "$log"
import glob, json, math, os, sys
d, out, results, backend, tasks = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
doc = {"format": "kforge-device-aa/1", "tasks": {}}
rows = []
def rec(name, st, detail):
    rows.append((name, st, detail))
def shape_rows(p):
    for s in p["profile"]["shapes"]:
        r, c, sp = s["reference"], s["candidate"], s["speedup"]
        yield {"dims": s["dims"], "ref_median_ns": r["median_ns"], "cand_median_ns": c["median_ns"],
               "ref_cv": r["rse"] * math.sqrt(r["samples"]), "cand_cv": c["rse"] * math.sqrt(c["samples"]),
               "samples": r["samples"], "source": r["timing_source"], "point": sp["point"], "lo": sp["lo"],
               "hi": sp["hi"], "significant": sp["significant"], "noise_band": s.get("noise_band"),
               "aa_point": (s.get("aa") or {}).get("point"), "stop": s.get("stop")}
for t in tasks:
    n = os.path.basename(t)
    runs, errors = [], []
    for i in range(1, 100):
        f = os.path.join(d, "%s.%d.json" % (n, i))
        if not os.path.exists(f):
            break
        try:
            p = json.load(open(f))
            runs.append(list(shape_rows(p)))
        except Exception as e:
            errors.append("run %d: %s: %s" % (i, type(e).__name__, open(f + ".err", errors="replace").read()[-200:]))
    ev = None
    try:
        ev = list(shape_rows(json.load(open(os.path.join(d, n + ".events.json")))))
    except Exception as e:
        errors.append("events run: %s" % e)
    doc["tasks"][n] = {"runs": runs, "events_run": ev, "errors": errors}
    if not runs:
        rec("aa %s" % n, "fail", "no A/A run gave a profile: %s" % "; ".join(errors)[:400])
        continue
    sig = sum(1 for r in runs if any(s["significant"] for s in r))
    pts = ["%.3f" % s["point"] for r in runs for s in r]
    bands = ["%.1f%%" % (100 * s["noise_band"]) for r in runs for s in r if s["noise_band"] is not None]
    rec("aa %s" % n, "pass" if sig <= 1 and not errors else "fail",
        "%d of %d runs significant (at most 1); points %s; noise bands %s; source %s%s" %
        (sig, len(runs), " ".join(pts), " ".join(bands), runs[0][0]["source"],
         ("; errors: " + "; ".join(errors)) if errors else ""))
    long = [s for r in runs for s in r if s["ref_median_ns"] >= 100e3]
    if long:
        cvs = [max(s["ref_cv"], s["cand_cv"]) for s in long]
        med = [s["ref_median_ns"] / 1e3 for s in long]
        rec("timing-cv %s" % n, "pass" if max(cvs) <= 0.05 else "fail",
            "CV (stddev/mean of the samples) over %d timed shapes of %.0f-%.0f us: median %.2f%%, max %.2f%% "
            "(at most 5%%)" % (len(long), min(med), max(med), 100 * sorted(cvs)[len(cvs) // 2], 100 * max(cvs)))
    if ev:
        pairs = []
        for s in ev:
            cup = [x["ref_median_ns"] for r in runs for x in r if x["dims"] == s["dims"]]
            if cup:
                cup.sort()
                pairs.append((s, cup[len(cup) // 2]))
        srcs = {s["source"] for s, _ in pairs}
        txt = "; ".join("%s: events %.1f us vs cupti %.1f us (%.3fx)" % (
            ",".join("%s=%s" % kv for kv in s["dims"].items()), s["ref_median_ns"] / 1e3, c / 1e3,
            s["ref_median_ns"] / c) for s, c in pairs)
        # CUDA events bracket the launch on the stream, so they read the kernel's duration plus a few
        # microseconds: at >= 100 us the two clocks must agree within 10%, and events never read less.
        okp = [s["ref_median_ns"] / c for s, c in pairs if c >= 100e3]
        good = srcs == {"events"} and runs[0][0]["source"] == "cupti" and all(0.97 <= r <= 1.10 for r in okp)
        rec("cupti-vs-events %s" % n, ("pass" if good else "fail") if backend == "cuda" else "skip",
            "sources %s/%s; %s" % (runs[0][0]["source"], ",".join(sorted(srcs)), txt))
json.dump(doc, open(out, "w"), indent=1)
with open(results, "a") as f:
    for name, st, detail in rows:
        f.write("%s\t%s\t%s\n" % (name, st, detail.replace("\t", " ").replace("\n", " ")[:600]))
        print("%-5s %s: %s" % (st, name, detail[:300]))
PY
fi

if want regress; then
# ---- 6. kforge regress (section owned by the regress command; see docs/ci.md) -------------------------
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
		for i in $(seq 1 "${DEVICE_CHECK_REGRESS_RUNS:-5}"); do
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
fi

if want sanitizer; then
# 7. compute-sanitizer against the cpu sanitizer, kernel by kernel, on the sanitizer corpus
#     (tests/data/sanitizer/expected.txt: the cpu sanitizer's verdicts). The verification runs unconfined
#     (KFORGE_SANDBOX_LAYERS=none: the tool's injection library and its channel to the front end must
#     reach the worker; these are our own corpus kernels) with the tool the cpu finding names: memcheck
#     for out_of_bounds, racecheck for race, initcheck for uninitialized_read, synccheck for
#     undefined_behavior; a "pass" kernel gets memcheck and racecheck. Agreement: the tool reports >= 1
#     error where the cpu sanitizer found one, and none where it found none. compute-sanitizer's
#     racecheck sees shared memory only, so a race in global memory it cannot see is reported, not failed.
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
san_log="$outdir/sanitizer.log"
if [ "$G" != cuda ]; then
	record compute-sanitizer skip "dry run: no GPU"
elif [ -z "$cs" ]; then
	record compute-sanitizer skip "compute-sanitizer is not on this machine"
else
	: >"$san_log"
	tool_for() { case "$1" in out_of_bounds) echo memcheck ;; race) echo racecheck ;; uninitialized_read) echo initcheck ;; undefined_behavior) echo synccheck ;; pass) echo "memcheck racecheck" ;; esac; }
	san_errors() { # TOOL TASK KERNEL -> "ERRORS EXIT VERDICT"
		local f="$tmp/san.$1.txt" rc
		KFORGE_SANDBOX_LAYERS=none timeout 120 "$cs" --tool "$1" --target-processes all --print-limit 3 \
			"$K" verify --backend cuda --json --no-sanitizer --timeout-ms 60000 "$2" "$3" >"$f" 2>&1
		rc=$?
		{ echo "== compute-sanitizer --tool $1 verify $2 $3 -> exit $rc"; head -c 5000 "$f"; echo; } >>"$san_log"
		local n=$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$f" | awk '{s += $3} END {print s + 0}')
		local st=$(grep -oE '"status": *"[a-z_]+"' "$f" | head -n 1 | sed 's/.*"\([a-z_]*\)"$/\1/')
		echo "$n $rc ${st:-none}"
	}
	# the tool on the bare worker first (no kforge around it): does it start, and how long does it take
	t0=$(date +%s%N)
	timeout 120 "$cs" --tool memcheck "$W" --probe cuda >"$tmp/san.bare.txt" 2>&1
	rc=$?
	say "device-check: compute-sanitizer on kforge-worker --probe cuda: exit $rc in $((($(date +%s%N) - t0) / 1000000)) ms: $(grep -E 'ERROR SUMMARY|rror' "$tmp/san.bare.txt" | head -n 3 | tr '\n' ' ')"
	cat "$tmp/san.bare.txt" >>"$san_log"
	# the sanitizer probe: a tool that refuses the device (gVisor: "Device not supported") is a skip
	read -r n rc st < <(san_errors memcheck "$ex/vector_add_f32/task.json" "$ex/vector_add_f32/reference.cu")
	if ! grep -q 'ERROR SUMMARY' "$tmp/san.memcheck.txt" || grep -qi 'not supported' "$tmp/san.memcheck.txt"; then
		record compute-sanitizer skip "compute-sanitizer does not run here: $(grep -iE 'error|not supported' "$tmp/san.memcheck.txt" | head -n 2 | tr '\n' ' ' | head -c 300)"
	else
		record compute-sanitizer-clean pass "memcheck on vector_add_f32's reference: $n errors, verdict $st"
		[ "$n" = 0 ] && [ "$st" = pass ] || sed -i '$ s/^\(compute-sanitizer-clean\)\tpass/\1\tfail/' "$results"
		# the corpus kernels DEVICE_CHECK_SANITIZER_KERNELS names (default: two of each finding, three clean),
		# each (tool, kernel) a job, DEVICE_CHECK_JOBS at a time
		sk=${DEVICE_CHECK_SANITIZER_KERNELS:-oob_4352.cu oob_64k.cu dyn_smem_overrun.cu shared_never_written.cu dyn_shared_never_written.cu shared_plus_equals.cu warp_race_nosync.cu shfl_mask.cu ok_atomics.cu ok_shared_reuse.cu ok_barrier_loop.cu}
		: >"$tmp/san_jobs"
		for kernel in $sk; do
			read -r task verdict < <(awk -v k="$kernel" '$1 == k {print $2, $3; exit}' "$D/sanitizer/expected.txt")
			[ -n "${verdict:-}" ] || { record "sanitizer $kernel" fail "not in tests/data/sanitizer/expected.txt"; continue; }
			for tool in $(tool_for "$verdict"); do echo "$tool $D/vtasks/$task/task.json $D/sanitizer/$kernel $verdict" >>"$tmp/san_jobs"; done
		done
		export cs tmp K
		san_job() { # TOOL TASK KERNEL VERDICT -> "KERNEL TOOL VERDICT ERRORS EXIT STATUS"
			local f="$tmp/san.$1.$(basename "$3").txt" rc n st
			KFORGE_SANDBOX_LAYERS=none timeout 100 "$cs" --tool "$1" --target-processes all --print-limit 3 \
				"$K" verify --backend cuda --json --no-sanitizer --timeout-ms 60000 "$2" "$3" >"$f" 2>&1
			rc=$?
			n=$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$f" | awk '{s += $3} END {print s + 0}')
			st=$(grep -oE '"status": *"[a-z_]+"' "$f" | head -n 1 | sed 's/.*"\([a-z_]*\)"$/\1/')
			echo "$3 $1 $4 $n $rc ${st:-none}"
		}
		export -f san_job
		t_san=$(date +%s)
		xargs -P "${DEVICE_CHECK_JOBS:-8}" -L 1 bash -c 'san_job "$0" "$1" "$2" "$3"' <"$tmp/san_jobs" >"$tmp/san_results"
		for f in "$tmp"/san.*.txt; do { echo "== $f"; head -c 4000 "$f"; echo; } >>"$san_log"; done
		say "device-check: $(wc -l <"$tmp/san_results") compute-sanitizer runs in $(($(date +%s) - t_san)) s"
		for kernel in $sk; do
			k="$D/sanitizer/$kernel"
			grep -q "^$k " "$tmp/san_results" || continue
			read -r task verdict < <(awk -v k="$kernel" '$1 == k {print $2, $3; exit}' "$D/sanitizer/expected.txt")
			read -r cst _ < <(gpu_of "$D/vtasks/$task/task.json" "$k")
			found="" ok=1
			while read -r _ tool v n rc st; do
				found="$found $tool $n errors (exit $rc, verdict $st);"
				if [ "$verdict" = pass ]; then [ "$n" = 0 ] || ok=0; else [ "$n" -gt 0 ] || ok=0; fi
				[ "$st" = none ] && ok=0
			done < <(grep "^$k " "$tmp/san_results")
			detail="cpu sanitizer: $verdict; compute-sanitizer:$found cuda verdict without it: ${cst:-?}"
			if [ $ok = 1 ]; then
				record "sanitizer $kernel" pass "$detail"
			elif [ "$verdict" = race ] && ! grep -q __shared__ "$k"; then
				record "sanitizer $kernel" skip "a race in global memory, which racecheck does not track: $detail"
			else
				record "sanitizer $kernel" fail "$detail"
			fi
		done
	fi
fi
fi

if want metrics; then
# 8. hardware counters through CUPTI's range profiler: a built-in
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
fi

if want profile; then
# 9. profile on the examples
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
fi

if want costmodel; then
# 10. the cost model's predictions against measured times. The predictions come from the build machine
#     (DEVICE_CHECK_MODEL_PREDICTIONS, default build/device-check-model.txt: `--model-predictions FILE`
#     there, the model needs clang-14's instrumented build): each kernel's model.candidate.predicted_ns on
#     an h200 at the task's timing shape. Here each kernel with a prediction is profiled on the GPU, one
#     at a time (timings must not overlap), within DEVICE_CHECK_COSTMODEL_S (180 s) of its own, each
#     profile DEVICE_CHECK_COSTMODEL_KERNEL_S (120 s) at most; the measured time is the candidate's median
#     at the shape whose dims are the prediction's (profile.shapes[].candidate.median_ns). A pair's
#     reference.cu is measured as the reference side of fast.cu's profile (same run, interleaved), so it
#     costs no profile of its own. Spearman's rank correlation over the kernels with both numbers, and per
#     tests/data/costmodel pair whether the measured direction (fast.cu faster) is the predicted one:
#     costmodel.json in OUTDIR. A low correlation is a measurement, not a failure.
model_file=${DEVICE_CHECK_MODEL_PREDICTIONS:-build/device-check-model.txt}
if [ ! -f "$model_file" ]; then
	record cost-model-spearman skip "no predictions: $model_file is absent (make it on the build machine with tests/gpu/device-check.sh --model-predictions $model_file and carry it)"
else
	cm_budget=${DEVICE_CHECK_COSTMODEL_S:-180}
	cm_kernel_s=${DEVICE_CHECK_COSTMODEL_KERNEL_S:-120}
	t_cm=$(date +%s)
	mkdir -p "$tmp/cm"
	: >"$tmp/cm/measured.tsv"
	: >"$tmp/cm/late.tsv"
	say "device-check: costmodel: predictions from $model_file ($(grep -vc '^#' "$model_file") kernels: $(head -n 1 "$model_file" | sed 's/^# //'))"
	cm_note=""
	if [ "$G" != cuda ]; then
		cm_note="dry run on the $G backend: the 'measured' times are CPU times of the fiber runtime at its largest public shape, not GPU times at the predicted shape; this proves the plumbing only"
		say "device-check: costmodel: $cm_note"
	fi
	cm_extra=()
	[ "$G" != cuda ] && cm_extra=(--fitness cpu) # the dry run needs the CPU times only
	i=0
	while IFS=$'\t' read -r task kernel pred _ _ _ dims _; do
		case "$task" in '' | '#'*) continue ;; esac
		[ "$pred" = NA ] && continue
		i=$((i + 1))
		# measured already: the reference side of its pair's fast.cu profile
		awk -F'\t' -v t="$task" -v k="$kernel" '$1 == t && $2 == k && $3 != "NA" {f = 1} END {exit !f}' "$tmp/cm/measured.tsv" && continue
		left=$((t_cm + cm_budget - $(date +%s)))
		if [ "$left" -lt 10 ]; then
			printf '%s\t%s\n' "$task" "$kernel" >>"$tmp/cm/late.tsv"
			continue
		fi
		lim=$((left < cm_kernel_s ? left : cm_kernel_s))
		pj=$tmp/cm/p.$i.json
		t0=$(date +%s)
		timeout "$lim" "$K" profile "$task" "$kernel" --backend "$G" --json "${cm_extra[@]}" >"$pj" 2>"$pj.err" </dev/null
		rc=$?
		{ echo "== costmodel: profile --backend $G $task $kernel -> exit $rc ($(($(date +%s) - t0)) s)"; head -c 4000 "$pj"; echo; head -c 2000 "$pj.err"; } >>"$log"
		# -> measured.tsv: TASK KERNEL MEDIAN_NS|NA MEASURED_IN DIMS_MATCH DIMS SOURCE SPEEDUP NOTE
		python3 - "$task" "$kernel" "$dims" "$rc" "$pj" "$lim" <<'PY' >>"$tmp/cm/measured.tsv" 2>>"$log"
import json, os, sys
task, kernel, dims, rc, f, lim = sys.argv[1:7]
clean = lambda x: str(x).replace("\t", " ").replace("\n", " ")
out = lambda *c: print("\t".join(clean(x) for x in c))
norm = lambda d: {k: int(v) if float(v).is_integer() else v for k, v in d.items()}
try:
    d = json.load(open(f))
    shapes = d["profile"]["shapes"]
except Exception:
    err = [l for l in open(f + ".err", errors="replace").read().splitlines() if l.strip()]
    why = "timed out after %s s" % lim if rc in ("124", "137") else (err[-1][:200] if err else "no JSON")
    out(task, kernel, "NA", kernel, "-", "-", "-", "-", "profile exit %s: %s" % (rc, why))
    sys.exit(0)
if d.get("status") != "pass" or not shapes:
    out(task, kernel, "NA", kernel, "-", "-", "-", "-", "status %s (exit %s), %d shapes" % (d.get("status"), rc, len(shapes)))
    sys.exit(0)
want = norm(json.loads(dims)) if dims.startswith("{") else None
pick = next((s for s in shapes if want is not None and norm(s["dims"]) == want), None)
match = pick is not None
if pick is None:
    pick = next((s for s in shapes if s.get("shape_kind") == "timing"), shapes[0])
sd = json.dumps(norm(pick["dims"]), separators=(",", ":"), sort_keys=True)
c, r, sp = pick["candidate"], pick["reference"], pick["speedup"]
clock = d["profile"].get("clock", "?")
out(task, kernel, c["median_ns"], kernel, int(match), sd, "%s/%s" % (clock, c.get("timing_source", "?")),
    "%.4f,%.4f,%.4f,%.4f" % (sp["point"], sp["lo"], sp["hi"], sp.get("noise_band", 0)), "status pass")
ref = os.path.join(os.path.dirname(task), "reference.cu")
if os.path.normpath(kernel) != os.path.normpath(ref):
    # the same run timed the task's reference, interleaved with the candidate
    out(task, ref, r["median_ns"], kernel, int(match), sd, "%s/%s" % (clock, r.get("timing_source", "?")), "-",
        "the reference side of %s's profile" % os.path.basename(kernel))
PY
	done <"$model_file"
	cm_s=$(($(date +%s) - t_cm))
	cm_res=$(python3 - "$model_file" "$tmp/cm/measured.tsv" "$tmp/cm/late.tsv" "$outdir/costmodel.json" "$G" "$cm_s" "$cm_budget" "$cm_note" <<'PY' 2>>"$log"
import json, math, os, sys
pred_f, meas_f, late_f, out, backend, secs, budget, note = sys.argv[1:9]
def rows_of(f):
    return [l.rstrip("\n").split("\t") for l in open(f, encoding="utf-8", errors="replace") if l.strip() and not l.startswith("#")]
preds = rows_of(pred_f)
meas = {}
for m in rows_of(meas_f):
    key = (m[0], m[1])
    if key not in meas or meas[key][2] == "NA":
        meas[key] = m
late = {(l[0], l[1]) for l in rows_of(late_f)}
num = lambda x: None if x in ("NA", "-", "") else float(x)
rows = []
for p in preds:
    p += [""] * (8 - len(p))
    task, kernel, pns, bound, ver, target, dims, pnote = p[:8]
    m = meas.get((task, kernel))
    row = {"task": task, "kernel": kernel, "predicted_ns": num(pns), "bound": bound, "model_version": ver,
           "target": target, "predicted_dims": json.loads(dims) if dims.startswith("{") else None,
           "measured_ns": None}
    if row["predicted_ns"] is None:
        row["status"] = "no prediction"
        row["note"] = pnote
    elif m and m[2] != "NA":
        row.update(status="measured", measured_ns=float(m[2]), measured_in=m[3], dims_match=m[4] == "1",
                   measured_dims=json.loads(m[5]), clock=m[6], note=m[8])
        if m[7] != "-":
            pt, lo, hi, band = (float(x) for x in m[7].split(","))
            # decided: the 95% CI clears the noise band on one side (kforge's significance rule, both ways)
            row["speedup_vs_reference"] = {"point": pt, "lo": lo, "hi": hi, "noise_band": band,
                                           "decided": lo > 1 + band or hi < 1 - band}
    elif (task, kernel) in late:
        row["status"] = "out of time"
    else:
        row["status"] = "failed"
        row["note"] = m[8] if m else "not profiled"
    rows.append(row)

def ranks(xs):  # average ranks (1-based) for ties
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r

def pearson(a, b):
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    sa = math.sqrt(sum((x - ma) ** 2 for x in a))
    sb = math.sqrt(sum((y - mb) ** 2 for y in b))
    if sa == 0 or sb == 0:
        return None
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / (sa * sb)

both = [r for r in rows if r["status"] == "measured"]
n = len(both)
rho = pearson(ranks([r["predicted_ns"] for r in both]), ranks([r["measured_ns"] for r in both])) if n >= 2 else None
ratios = sorted(r["measured_ns"] / r["predicted_ns"] for r in both if r["predicted_ns"] > 0)
pairs = []
by = {(r["task"], os.path.basename(r["kernel"])): r for r in rows}
for task in dict.fromkeys(r["task"] for r in rows):
    f, s = by.get((task, "fast.cu")), by.get((task, "reference.cu"))
    if not f or not s:
        continue
    pr = {"task": task, "predicted_fast_ns": f["predicted_ns"], "predicted_reference_ns": s["predicted_ns"],
          "measured_fast_ns": f["measured_ns"], "measured_reference_ns": s["measured_ns"]}
    if f["predicted_ns"] and s["predicted_ns"]:
        pr["predicted_speedup"] = s["predicted_ns"] / f["predicted_ns"]
    if f["measured_ns"] and s["measured_ns"]:
        pr["measured_speedup"] = s["measured_ns"] / f["measured_ns"]
        pr["measured_in_one_run"] = s.get("measured_in") == f["kernel"]
        if "speedup_vs_reference" in f and pr["measured_in_one_run"]:
            pr["measured_speedup_ci"] = f["speedup_vs_reference"]
            pr["measured_decided"] = f["speedup_vs_reference"]["decided"]
    if "predicted_speedup" in pr and "measured_speedup" in pr:
        pr["predicted_direction"] = "fast faster" if pr["predicted_speedup"] > 1 else "fast not faster"
        pr["measured_direction"] = "fast faster" if pr["measured_speedup"] > 1 else "fast not faster"
        pr["agree"] = pr["predicted_direction"] == pr["measured_direction"]
    else:
        pr["agree"] = None
    pairs.append(pr)
agreed = [p for p in pairs if p["agree"] is not None]
doc = {"format": "kforge-device-costmodel/1", "backend": backend, "dry_run": backend != "cuda",
       "note": note or None, "predictions": os.path.abspath(pred_f),
       "predictions_header": open(pred_f, errors="replace").readline().strip("# \n"),
       "n": n, "spearman": rho, "median_measured_over_predicted": ratios[len(ratios) // 2] if ratios else None,
       "dims_mismatched": sum(1 for r in both if not r["dims_match"]),
       "kernels": len(rows), "predicted": sum(1 for r in rows if r["predicted_ns"] is not None),
       "failed": sum(1 for r in rows if r["status"] == "failed"),
       "out_of_time": sum(1 for r in rows if r["status"] == "out of time"),
       "pairs_agreeing": sum(1 for p in agreed if p["agree"]), "pairs_compared": len(agreed),
       "seconds": int(secs), "budget_s": int(budget), "rows": rows, "pairs": pairs}
json.dump(doc, open(out, "w"), indent=1)
st = "pass" if n >= 5 else ("skip" if doc["out_of_time"] and not doc["failed"] else "fail")
msg = "Spearman %s over n=%d kernels (predicted on %s, model v%s; measured on %s)" % (
    "%.3f" % rho if rho is not None else "undefined", n, rows[0]["target"] if rows else "?",
    rows[0]["model_version"] if rows else "?", backend)
if doc["median_measured_over_predicted"]:
    msg += "; median measured/predicted %.3g" % doc["median_measured_over_predicted"]
msg += "; pairs in the predicted direction: %d of %d (%s)" % (doc["pairs_agreeing"], len(agreed), ", ".join(
    "%s %s%s" % (os.path.basename(os.path.dirname(p["task"])), "yes" if p["agree"] else "NO",
                 " (within the noise)" if p.get("measured_decided") is False else "") for p in agreed))
msg += "; %d failed, %d out of time, %d s of %d" % (doc["failed"], doc["out_of_time"], int(secs), int(budget))
if doc["dims_mismatched"]:
    msg += "; %d measured at other dims than predicted" % doc["dims_mismatched"]
if n < 5:
    msg = "fewer than 5 kernels measured: " + msg
if note:
    msg = note + ": " + msg
print(st + "\t" + msg)
PY
)
	if [ -n "$cm_res" ]; then
		record cost-model-spearman "${cm_res%%$'\t'*}" "${cm_res#*$'\t'}"
	else
		record cost-model-spearman fail "the correlation script failed (see $log)"
	fi
fi
fi

if want baselines; then
# ---- 11. library baselines (section owned by the baselines work; core/baseline.h, sandbox/cuda/library.c) --
#    a. cuBLAS, cuBLASLt and cuDNN load in the worker and their host-side descriptors build;
#    b. every library baseline of the suite passes the verification protocol on this GPU (a cuDNN that
#       is not installed is a skip; a library that refuses a suite problem is a failure, with its words);
#    c. cuBLAS timed against each matmul task's reference: the reference profiled as the candidate, so
#       "vs reference" is ~1x and "vs baseline" is how much faster cuBLAS is than the naive reference.
#    Last, with its own time on top of the budget (DEVICE_CHECK_BASELINES_S, default 240 s), so the
#    checks above keep theirs.
budget_s=$((budget_s + ${DEVICE_CHECK_BASELINES_S:-120}))
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
