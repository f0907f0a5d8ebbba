#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# The red-team corpus (tests/redteam/README.md) against the real binaries, as an attacker would:
#  (b) every attack as host code loaded through `kforge sandbox test-module`, as an entry and from a
#      constructor, under all layers together, then under each layer alone (for the attacks that layer
#      is meant to stop on its own);
#  (a) every attack pasted into an otherwise correct kernel file, through `kforge verify` and through
#      `kforge optimize` (scripted LLM server, then a replay of the run), beside a correct and a wrong
#      kernel whose verdicts must not change; plus the compile-time attacks (includes, a huge
#      initializer, NVRTC's stringified include through `kforge compile`).
# After every run: no "REDTEAM BREACH" line, nothing written outside the run's folders, no secret or host
# file text in any output, log, prompt, knowledge-base row or cache entry, kforge ended by itself.
# Works as root (separate uid) and as an unprivileged user (user namespace, Landlock).
. "$(dirname "$0")/lib.sh"

command -v gcc >/dev/null || { skip "no C compiler for the host modules"; finish; exit; }
command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }
command -v jq >/dev/null || { skip "jq not installed"; finish; exit; }
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export NO_PROXY='*' no_proxy='*'

HOST=$TOP/tests/redteam/host
KERN=$TOP/tests/redteam/kernels
TASK=$TOP/tests/data/vtasks/vadd_f32/task.json
# A child under its own uid must be able to reach what it attacks: only the sandbox may stop it.
chmod 755 "$TMP"
RT=$TMP/rt
SECRET=$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 32)
KEY2="sk-proj-$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 40)"
MARK="RT-MARKER-$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 24)"
OUTSIDE_MARK="RT-OUTSIDE-$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 24)"
KF_REAL=$(readlink -f "$KFORGE")

setup_rt() {
	rm -rf "$RT"
	mkdir -p "$RT/outside" "$RT/home" "$RT/cache" "$RT/mods" "$RT/k" "$RT/log" "$RT/run"
	chmod 755 "$RT" "$RT/home"
	chmod 777 "$RT/outside"
	echo victim >"$RT/outside/victim"
	chmod 666 "$RT/outside/victim"
	echo "$OUTSIDE_MARK" >"$RT/outside/secret.txt"
	chmod 644 "$RT/outside/secret.txt"
	printf 'export PS1=x # %s\n' "$MARK" >"$RT/home/.bashrc"
	echo "kb rows" >"$RT/kb.db"
}

# What an attack could change outside the run: checksums and listings, compared after each part.
snapshot() {
	{
		sha256sum /etc/passwd "$KF_REAL" "$RT/home/.bashrc" "$RT/kb.db" "$RT/outside/victim" 2>&1
		ls -la --time-style=+%s "$RT/outside" "$RT/home" | grep -v '^total' | awk '{print $1, $3, $6, $NF}'
		ls "$RT" | grep -v '^run$'
		ls /dev/shm 2>/dev/null | grep -i redteam
		ls -d /tmp/kforge-redteam-tmp 2>/dev/null
	} | sort
}

# The secrets, and the light encodings an attacker would try, as fixed strings to look for.
python3 - "$SECRET" "$KEY2" "$MARK" "$OUTSIDE_MARK" >"$TMP/needles" <<'EOF'
import base64, sys
for s in sys.argv[1:]:
    b = s.encode()
    print(s)
    print(s[::-1])
    print(b.hex())
    print(base64.b64encode(b).decode().rstrip("="))
    print(s[8:24])
EOF

# no_secret DESC FILE...: none of the needles in any of the files
no_secret() {
	local desc=$1 hit
	shift
	hit=$(grep -F -o -f "$TMP/needles" "$@" 2>/dev/null | head -n 3)
	if [ -n "$hit" ]; then bad "$desc: secret or host text found: $hit"; else ok "$desc: no secret or host text"; fi
}

no_breach() {
	local desc=$1 hit
	shift
	hit=$(grep -h "REDTEAM BREACH" "$@" 2>/dev/null | head -n 3)
	if [ -n "$hit" ]; then bad "$desc: $hit"; else ok "$desc: no breach"; fi
}

# kf OUT-PREFIX ARGS...: kforge with the run's environment (keys set, the paths an attacker wants);
# it must end by itself (the timeout is only a backstop: 124/137 is a failure).
kf() {
	local pre=$1
	shift
	env HOME="$RT/home" KFORGE_CACHE="$RT/cache" KFORGE_DB="$RT/kb.db" KFORGE_REDTEAM_API_KEY="$SECRET" \
		OPENAI_API_KEY="$KEY2" timeout -s KILL 300 "$KFORGE" "$@" >"$pre.out" 2>"$pre.err"
	KF_RC=$?
	if [ "$KF_RC" -eq 137 ] || [ "$KF_RC" -eq 124 ]; then
		bad "kforge $1 did not finish by itself (killed by the test's backstop)"
		pkill -CONT -x kforge 2>/dev/null
	fi
}

# A listener on the loopback for the network attack (reaching it is the breach).
python3 -c 'import socket,sys,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(16); open(sys.argv[1],"w").write(str(s.getsockname()[1]))
time.sleep(3600)' "$TMP/port" &
listener=$!
trap 'kill $listener $srv 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
PORT=$(cat "$TMP/port" 2>/dev/null || echo 9)

setup_rt
BEFORE=$(snapshot)

# ---- the layers this machine gives --------------------------------------------------------------
"$KFORGE" sandbox layers --json >"$TMP/layers.json" 2>/dev/null
ACTIVE=$(jq -r '.sandbox.layers | to_entries[] | select(.value.active) | .key' "$TMP/layers.json" | tr '\n' ' ')
echo "active layers: $ACTIVE (uid $(id -u))"
jq -e '.sandbox.cpu_allowed == true' "$TMP/layers.json" >/dev/null && ok "the cpu backend has its sandbox here" ||
	bad "the cpu backend would refuse: $(cat "$TMP/layers.json")"
has_layer() { case " $ACTIVE " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- the host modules --------------------------------------------------------------------------
defs=(-DRT_DIR="\"$RT\"" -DRT_KFORGE="\"$KF_REAL\"" -DRT_SECRET="\"$SECRET\"" -DRT_PORT="$PORT")
built=0
for f in "$HOST"/*.c; do
	n=$(basename "$f" .c)
	# "real": SIGSTOP to kforge and a real memory bomb (under all layers); "probe": harmless probes
	gcc -D_GNU_SOURCE -O1 -w -shared -fPIC "${defs[@]}" -DRT_REAL_SIGNALS -DRT_REAL_BOMB \
		-o "$RT/mods/$n.so" "$f" -lpthread &&
		gcc -D_GNU_SOURCE -O1 -w -shared -fPIC "${defs[@]}" -DRT_REAL_SIGNALS -DRT_REAL_BOMB -DRT_CTOR \
			-o "$RT/mods/$n-ctor.so" "$f" -lpthread &&
		gcc -D_GNU_SOURCE -O1 -w -shared -fPIC "${defs[@]}" -o "$RT/mods/$n-probe.so" "$f" -lpthread &&
		built=$((built + 1))
done
[ "$built" -ge 16 ] && ok "$built host attack modules built" || bad "only $built host modules built"

# tm NAME LAYERS MODULE: one test-module run; its JSON report in $RT/log/NAME.json
tm() {
	local name=$1 layers=$2 mod=$3
	if [ "$layers" = all ]; then
		KFORGE_SANDBOX_LAYERS=all kf "$RT/log/$name" sandbox test-module "$mod" --timeout-ms 4000 --json
	else
		KFORGE_SANDBOX_LAYERS=$layers KFORGE_UNSANDBOXED_CPU_BACKEND_I_ACCEPT_THE_RISK=1 \
			kf "$RT/log/$name" sandbox test-module "$mod" --timeout-ms 4000 --json
	fi
	cp "$RT/log/$name.out" "$RT/log/$name.json"
	[ "$KF_RC" -eq 0 ] || [ "$KF_RC" -eq 1 ] || bad "$name: test-module exit $KF_RC: $(head -c 300 "$RT/log/$name.err")"
}

# (b) all layers together: every attack, from its entry and from a constructor
for v in "" -ctor; do
	for f in "$HOST"/*.c; do
		n=$(basename "$f" .c)$v
		tm "all-$n" all "$RT/mods/$n.so"
	done
done
no_breach "all layers, 32 host attacks" "$RT"/log/all-*.json
no_secret "all layers, test-module reports" "$RT"/log/all-*
jq -e '.refused | length > 0' "$RT/log/all-exec.json" >/dev/null && ok "exec: the sandbox reports what it refused" ||
	bad "exec: nothing reported refused: $(jq -c '{status,message,refused}' "$RT/log/all-exec.json")"
jq -e '.loaded == false or .entry_ran == false' "$RT/log/all-exec-ctor.json" >/dev/null &&
	ok "exec from a constructor: stopped while the module loaded" || bad "exec-ctor: $(jq -c . "$RT/log/all-exec-ctor.json" | head -c 300)"
jq -e '.message | test("secret")' "$RT/log/all-leak_key.json" >/dev/null &&
	ok "a key in the worker's output rejects the candidate" || bad "leak_key: $(jq -c '{status,message}' "$RT/log/all-leak_key.json")"
jq -e '.status == "timeout"' "$RT/log/all-stop_self.json" >/dev/null && ok "a worker that stops itself is a timeout" ||
	bad "stop_self: $(jq -c '{status,message}' "$RT/log/all-stop_self.json")"
jq -e '.status == "crash" and (.message | test("protocol"))' "$RT/log/all-protocol.json" >/dev/null &&
	ok "a forged datagram is a crash verdict" || bad "protocol: $(jq -c '{status,message}' "$RT/log/all-protocol.json")"
[ "$(snapshot)" = "$BEFORE" ] && ok "all layers: nothing changed outside the run" ||
	bad "all layers: outside changed: $(diff <(echo "$BEFORE") <(snapshot) | head -5)"

# The minimum: without the allow-list (or without Landlock and a separate uid) the cpu backend refuses.
KFORGE_SANDBOX_LAYERS=env,landlock,uid kf "$RT/log/refuse" sandbox test-module "$RT/mods/exec-probe.so"
[ "$KF_RC" -eq 4 ] && grep -q KFORGE_UNSANDBOXED_CPU_BACKEND_I_ACCEPT_THE_RISK "$RT/log/refuse.err" &&
	ok "without the syscall allow-list the cpu backend refuses, naming the opt-out" ||
	bad "refusal: exit $KF_RC: $(head -c 300 "$RT/log/refuse.err")"

# (b) each layer alone, against the attacks it is meant to stop by itself
declare -A cover=(
	[exec]="seccomp" [write_files]="seccomp landlock" [metadata]="seccomp uid" [read_files]="landlock" [own_env]="env"
	[parent_mem]="seccomp landlock uid" [signal_parent]="seccomp uid pidns" [cache_forge]="seccomp landlock"
	[kb_rows]="seccomp landlock uid" [network]="seccomp netns" [memory_bomb]="seccomp"
	[big_write]="seccomp" [escape]="seccomp"
)
lands=$(jq -r '.sandbox.landlock_abi // 0' "$TMP/layers.json")
[ "$lands" -ge 6 ] && cover[signal_parent]+=" landlock"
for L in seccomp landlock uid pidns netns env; do
	if ! has_layer "$L"; then
		skip "layer $L alone: not available here"
		continue
	fi
	# without root a namespace comes only inside a user namespace: that is the layer's own enabler
	spec=$L
	case "$L" in pidns | netns) [ "$(id -u)" -ne 0 ] && spec="userns,$L" ;; esac
	n_run=0
	for m in "${!cover[@]}"; do
		case " ${cover[$m]} " in *" $L "*) ;; *) continue ;; esac
		tm "$L-$m" "$spec" "$RT/mods/$m-probe.so"
		n_run=$((n_run + 1))
	done
	no_breach "layer $L alone ($n_run attacks)" "$RT"/log/"$L"-*.json
	[ "$(snapshot)" = "$BEFORE" ] && ok "layer $L alone: nothing changed outside" ||
		bad "layer $L alone: outside changed: $(diff <(echo "$BEFORE") <(snapshot) | head -5)"
done

# ---- (a) kernel files: the same attacks in otherwise correct kernels --------------------------------
# mk_kernel NAME: the attack NAME pasted (as host code run by a constructor when the module loads) into a
# correct vadd. No macro tells the cpu build from NVRTC (the shim defines NVRTC's own: __CUDACC_RTC__,
# __CUDA_ARCH__ 900; tests/data/hacks/host_macro_switch.cu tries the others), so the host code is there
# for both, and the first gate must stop it: NVRTC compiles every candidate first (spec check 0) and host
# code is a compile error there. A verdict other than compile_error means the host code got past that
# gate, and then a breach turns the output into 42s (wrong_output) while a pass means it ran unnoticed:
# both fail this check. The sandbox under such code is tried by the test modules above.
mk_kernel() {
	local n=$1 out=$RT/k/$1.cu
	{
		echo "// Red team: $n.c from tests/redteam/host as host code in an otherwise correct kernel."
		echo "// kforge:launch vadd grid=(cdiv(N, 256)) block=(256) args=(x, y, z, N)"
		printf '#define RT_DIR "%s"\n#define RT_KFORGE "%s"\n#define RT_SECRET "%s"\n#define RT_PORT %s\n' \
			"$RT" "$KF_REAL" "$SECRET" "$PORT"
		echo "#define RT_CTOR 1"
		echo "#define RT_IN_KERNEL 1"
		echo "#define RT_REAL_SIGNALS 1"
		cat "$HOST/redteam.h"
		grep -v '#include "redteam.h"' "$HOST/$n.c"
		cat <<'CU'
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = rt_breaches ? 42.0f : x[i] + y[i];
}
CU
	} >"$out"
}
attacks="exec write_files metadata read_files own_env parent_mem signal_parent cache_forge kb_rows network escape leak_key"
for n in $attacks; do mk_kernel "$n"; done

for n in $attacks; do
	kf "$RT/log/verify-$n" verify "$TASK" "$RT/k/$n.cu" --backend cpu --json --deadline-s 120
	v=$(jq -r '.status // .verdict // empty' "$RT/log/verify-$n.out" 2>/dev/null)
	if [ "$KF_RC" -eq 1 ] && [ "$v" = compile_error ] && grep -qi "nvrtc" "$RT/log/verify-$n.out"; then
		ok "verify $n: compile_error at NVRTC's gate"
	else
		bad "verify $n: exit $KF_RC, verdict '$v' (want compile_error from NVRTC): $(head -c 300 "$RT/log/verify-$n.out") $(head -c 300 "$RT/log/verify-$n.err")"
	fi
done
no_secret "verify of the attack kernels" "$RT"/log/verify-*
for f in include_passwd include_dev_zero include_spliced include_stringified; do
	kf "$RT/log/verify-$f" verify "$TASK" "$KERN/$f.cu" --backend cpu --json
	jq -e '.status == "compile_error"' "$RT/log/verify-$f.out" >/dev/null &&
		grep -q "include rules" "$RT/log/verify-$f.out" "$RT/log/verify-$f.err" &&
		ok "$f: compile_error naming the include rules" || bad "$f: $(head -c 400 "$RT/log/verify-$f.out")"
done
# NVRTC (kforge compile): the stringified include of /proc/self/environ, and nothing of it cached
kf "$RT/log/compile-stringified" compile "$KERN/include_stringified.cu" --json
[ "$KF_RC" -eq 1 ] && grep -q "computed" "$RT/log/compile-stringified.out" && ok "kforge compile refuses the stringified include" ||
	bad "compile of the stringified include: exit $KF_RC: $(head -c 300 "$RT/log/compile-stringified.out")"
no_secret "kforge compile of the stringified include: output and cache" "$RT"/log/compile-stringified.* \
	$(find "$RT/cache" -type f ! -name .mac-key)
t0=$(date +%s)
kf "$RT/log/verify-huge" verify "$TASK" "$KERN/huge_initializer.cu" --backend cpu --json
v=$(jq -r '.status' "$RT/log/verify-huge.out" 2>/dev/null)
{ [ "$v" = compile_error ] || [ "$v" = timeout ]; } && ok "huge initializer: '$v' in $(($(date +%s) - t0)) s, within its bounds" ||
	bad "huge initializer: exit $KF_RC, '$v'"
# the other kernels of the run keep their verdicts
kf "$RT/log/verify-good" verify "$TASK" "$KERN/good.cu" --backend cpu --json
jq -e '.status == "pass"' "$RT/log/verify-good.out" >/dev/null && ok "the correct kernel still passes" ||
	bad "good: $(head -c 300 "$RT/log/verify-good.out")"
kf "$RT/log/verify-wrong" verify "$TASK" "$KERN/wrong_42.cu" --backend cpu --json
jq -e '.status == "wrong_output"' "$RT/log/verify-wrong.out" >/dev/null && ok "the wrong kernel is still wrong_output" ||
	bad "wrong: $(head -c 300 "$RT/log/verify-wrong.out")"
[ "$(snapshot)" = "$BEFORE" ] && ok "verify: nothing changed outside the run" ||
	bad "verify: outside changed: $(diff <(echo "$BEFORE") <(snapshot) | head -5)"

# ---- (a) optimize: the attack kernels proposed by the LLM, beside a correct and a wrong one ------------
# Two runs of six attacks each, then the correct kernel and the wrong one (the search stops after eight
# candidates that do not improve, so each run holds no more than that before the correct one).
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print("|".join("" if v is None else str(v) for v in r)) for r in c.execute(sys.argv[2])]' "$1" "$2"; }
dump() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print(l) for l in c.iterdump()]' "$1"; }
verdicts_of() { sql "$1" "select coalesce(e.verdict,'-') from candidates c left join evaluations e on e.candidate_id=c.id order by c.id" | tr '\n' ' '; }
set -- $attacks
runs=("${*:1:6}" "${*:7}")
for r in 0 1; do
	python3 - "$TMP/script$r.json" "$RT/k" "$KERN" ${runs[$r]} <<'EOF'
import json, os, sys
out, kdir, cdir = sys.argv[1:4]
replies = []
for n in sys.argv[4:] + ["good", "wrong_42"]:
    p = os.path.join(kdir if os.path.exists(os.path.join(kdir, n + ".cu")) else cdir, n + ".cu")
    replies.append({"text": "Here is the kernel.\n\n```cuda\n" + open(p).read() + "```\n",
                    "tokens_in": 1000, "tokens_out": 200})
json.dump({"replies": replies}, open(out, "w"))
EOF
	n_replies=$(($(echo ${runs[$r]} | wc -w) + 2))
	python3 "$TOP/tests/llm_server.py" --port 0 --port-file "$TMP/lport$r" --script "$TMP/script$r.json" \
		--log "$TMP/llm$r.jsonl" >"$TMP/server$r.out" 2>&1 &
	srv=$!
	for _ in $(seq 200); do [ -s "$TMP/lport$r" ] && break; sleep 0.05; done
	lport=$(cat "$TMP/lport$r" 2>/dev/null)
	kf "$RT/log/optimize$r" optimize "$TASK" --strategy evo --provider openai --model gpt-4o-mini \
		--base-url "http://127.0.0.1:$lport/v1" --backend cpu --concurrency 1 --budget-calls "$n_replies" \
		--seed 3 --db "$RT/run/opt$r.db" --out "$RT/run/out$r" --json
	kill $srv 2>/dev/null
	wait $srv 2>/dev/null
	[ "$KF_RC" -eq 0 ] && ok "optimize run $r (${runs[$r]}) finishes by itself" ||
		bad "optimize run $r: exit $KF_RC: $(tail -c 400 "$RT/log/optimize$r.err")"
	v=$(verdicts_of "$RT/run/opt$r.db")
	echo "optimize run $r verdicts: $v"
	[ "$(echo "$v" | awk '{print $(NF-1), $NF}')" = "pass wrong_output" ] &&
		ok "optimize run $r: the correct kernel passes and the wrong one fails after the attacks" ||
		bad "optimize run $r: verdicts $v"
	case "$(echo "$v" | awk '{$NF=""; print}')" in *wrong_output*) bad "optimize run $r: an attack kernel wrote 42s (a breach)" ;;
	*) ok "optimize run $r: no attack got through" ;; esac
	dump "$RT/run/opt$r.db" >"$TMP/kb-dump$r.sql"
	no_secret "optimize run $r: knowledge base, prompts, reports, outputs" "$TMP/kb-dump$r.sql" "$TMP/llm$r.jsonl" \
		"$RT/log/optimize$r.out" "$RT/log/optimize$r.err" $(find "$RT/run/out$r" -type f 2>/dev/null)
done
# the replay of the first run: the same kernels, no network, the same verdicts
kf "$RT/log/export" kb export --db "$RT/run/opt0.db" "$TMP/run.jsonl"
kf "$RT/log/replay" optimize "$TASK" --provider replay --replay "$TMP/run.jsonl" --backend cpu --seed 3 \
	--budget-calls 8 --db "$RT/run/replay.db" --out "$RT/run/out-replay" --json
rv=$(verdicts_of "$RT/run/replay.db" 2>/dev/null)
[ "$KF_RC" -eq 0 ] && [ "$rv" = "$(verdicts_of "$RT/run/opt0.db")" ] &&
	ok "optimize --provider replay of the first run: the same verdicts" || bad "replay: exit $KF_RC, verdicts '$rv'"
dump "$RT/run/replay.db" >"$TMP/kb-replay.sql" 2>/dev/null
no_secret "replay: knowledge base and outputs" "$TMP/kb-replay.sql" "$RT/log/replay.out" "$RT/log/replay.err"
no_secret "the caches" $(find "$RT/cache" -type f ! -name .mac-key 2>/dev/null) /dev/null
[ "$(snapshot)" = "$BEFORE" ] && ok "optimize: nothing changed outside the run" ||
	bad "optimize: outside changed: $(diff <(echo "$BEFORE") <(snapshot) | head -5)"
finish
