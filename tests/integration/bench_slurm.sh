#!/usr/bin/env bash
# kforge bench --slurm against a real single-node Slurm (Debian's slurm-wlm and munge, started here on
# localhost with 2 CPUs and private ports, sockets and state): four shards as a job array, each with its
# own database, merged with 'kforge kb merge' and reported with --collect, must give the same metrics as
# one unsharded run over the same kernels. Skips (never passes) when Slurm is not installed or its
# daemons do not start; KFORGE_TEST_INSTALL=1 lets it apt-get the packages first (about a minute).
source "$(dirname "$0")/lib.sh"
D=$TOP/tests/data/bench
export KFORGE_DB=$TMP/unused.db
SL=$TMP/slurm
pids_kill() {
	for f in "$SL/slurmd.pid" "$SL/slurmctld.pid" "$SL/munge/pid"; do
		[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	sleep 0.5
	for f in "$SL/slurmd.pid" "$SL/slurmctld.pid" "$SL/munge/pid"; do
		[ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
}
trap 'pids_kill; rm -rf "$TMP"' EXIT

have_slurm() { command -v munged && command -v slurmctld && command -v slurmd && command -v sbatch && command -v squeue; } >/dev/null 2>&1
if ! have_slurm && [ "${KFORGE_TEST_INSTALL:-0}" = 1 ] && [ "$(id -u)" -eq 0 ]; then
	DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y --no-install-recommends slurm-wlm munge >"$TMP/apt.log" 2>&1
fi
if ! have_slurm; then
	skip "slurm (not installed: apt-get install -y slurm-wlm munge, or KFORGE_TEST_INSTALL=1)"
	finish
	exit $?
fi
if [ "$(id -u)" -ne 0 ]; then
	skip "slurm (the test runs slurmd as root; not root here)"
	finish
	exit $?
fi

# A private munge (own key, socket, pid) and a private Slurm cluster on random high ports.
mkdir -p "$SL/munge" "$SL/state" "$SL/spool"
chmod 755 "$SL" "$SL/munge"
head -c 1024 /dev/urandom >"$SL/munge/munge.key" && chmod 400 "$SL/munge/munge.key"
munged --force --socket="$SL/munge/sock" --key-file="$SL/munge/munge.key" --log-file="$SL/munge/log" \
	--pid-file="$SL/munge/pid" --seed-file="$SL/munge/seed" >/dev/null 2>&1
port=$((20000 + RANDOM % 20000))
host=$(hostname -s)
cat >"$SL/slurm.conf" <<EOF
ClusterName=kforgetest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SL/munge/sock
StateSaveLocation=$SL/state
SlurmdSpoolDir=$SL/spool
SlurmctldPidFile=$SL/slurmctld.pid
SlurmdPidFile=$SL/slurmd.pid
SlurmctldLogFile=$SL/slurmctld.log
SlurmdLogFile=$SL/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=kforge Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$SL/slurm.conf
slurmctld -i >/dev/null 2>&1 && slurmd >/dev/null 2>&1
up=0
for _ in $(seq 1 40); do
	if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then up=1; break; fi
	sleep 0.5
done
if [ "$up" -ne 1 ]; then
	skip "slurm (the daemons did not start: $(tail -n 3 "$SL/slurmctld.log" "$SL/slurmd.log" 2>/dev/null | tr '\n' ' ' | head -c 400))"
	finish
	exit $?
fi
ok "single-node slurm is up (port $port)"

# Four shards through the job array.
expect_exit 0 "bench --slurm submits a job array" -- \
	"$KFORGE" bench "$D/suite" --from-dir "$D/kernels" --backend cpu --slurm --shards 4 --db "$TMP/b.db" --out "$TMP/sl"
job=$OUT_TXT
[[ "$job" =~ ^[0-9]+$ ]] && ok "job id $job" || bad "job id '$job'"
grep -q -- '--array=1-4' "$TMP/sl/bench.sbatch" && grep -q -- '--shard "$I/4"' "$TMP/sl/bench.sbatch" &&
	ok "sbatch script: array 1-4, one shard each" || bad "sbatch script: $(cat "$TMP/sl/bench.sbatch")"
done_=0
for _ in $(seq 1 600); do
	if [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; then done_=1; break; fi
	sleep 1
done
[ "$done_" -eq 1 ] && ok "job array finished" || bad "job array still queued or running after 600 s"
shards_ok=1
for i in 1 2 3 4; do
	if [ ! -s "$TMP/b.shard-$i.db" ] || [ ! -s "$TMP/sl/shard-$i/bench.json" ]; then
		shards_ok=0
		bad "shard $i left no database or report: $(cat "$TMP"/sl/slurm-*_"$i".log 2>/dev/null | tail -n 5)"
	fi
done
[ "$shards_ok" -eq 1 ] && ok "four shard databases and reports"

expect_exit 0 "kb merge of the shards" -- "$KFORGE" kb merge "$TMP"/b.shard-{1,2,3,4}.db -o "$TMP/merged.db"
expect_exit 0 "bench --collect over the merged database" -- \
	"$KFORGE" bench "$D/suite" --collect --from-dir "$D/kernels" --db "$TMP/merged.db" --out "$TMP/col" --json
expect_exit 0 "one unsharded run" -- \
	"$KFORGE" bench "$D/suite" --from-dir "$D/kernels" --backend cpu --db "$TMP/one.db" --out "$TMP/one" --json

python3 - "$TMP/col/bench.json" "$TMP/one/bench.json" "$TMP"/sl/shard-{1,2,3,4}/bench.json >"$TMP/cmp.txt" 2>&1 <<'EOF'
import json, sys
merged, one = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
shards = [json.load(open(p)) for p in sys.argv[3:]]
fails = []
keys = ["tasks", "compiled", "correct", "missing", "compile_rate", "correctness_rate", "fast_p",
        "geomean_tasks", "clock"]
def same(what, a, b):
    for k in keys:
        if a[k] != b[k]:
            fails.append(f"{what} {k}: merged {a[k]!r} vs unsharded {b[k]!r}")
    # significant fast_p: the same up to p = 1; above it, a task counts when its lower bound clears
    # p x (1 + the A/A band of its own timing), and the two runs are separate timings with their own bands
    # (docs/spec/verification.md), so there it may only be at most fast_p in each
    for p, v in a["fast_p_significant"].items():
        if float(p) <= 1 and v != b["fast_p_significant"][p]:
            fails.append(f"{what} fast_p_significant[{p}]: merged {v!r} vs unsharded {b['fast_p_significant'][p]!r}")
        for r, x in (("merged", a), ("unsharded", b)):
            if x["fast_p_significant"][p] > x["fast_p"][p]:
                fails.append(f"{what} {r}: fast_p_significant[{p}] above fast_p")
same("overall", merged["overall"], one["overall"])
if len(merged["levels"]) != len(one["levels"]):
    fails.append("different levels")
for a, b in zip(merged["levels"], one["levels"]):
    same(f"level {a['level']}", a, b)
st = lambda r: [(t["task"], t["status"], t["compiled"], t["correct"]) for t in r["tasks"]]
if st(merged) != st(one):
    fails.append(f"tasks differ: {st(merged)} vs {st(one)}")
# the shards split the five sorted tasks 2/1/1/1, and the merge keeps every shard's numbers exactly
names = [[t["task"] for t in s["tasks"]] for s in shards]
if names != [["bench_broken", "bench_wrong"], ["bench_fast"], ["bench_missing"], ["bench_slow"]]:
    fails.append(f"shard slices {names}")
per_shard = {t["task"]: (t["status"], t["speedup"], t["ci_lo"], t["ci_hi"]) for s in shards for t in s["tasks"]}
per_merged = {t["task"]: (t["status"], t["speedup"], t["ci_lo"], t["ci_hi"]) for t in merged["tasks"]}
if per_shard != per_merged:
    fails.append(f"merged rows differ from the shards': {per_merged} vs {per_shard}")
print("\n".join(fails) if fails else "identical")
sys.exit(1 if fails else 0)
EOF
if [ $? -eq 0 ]; then ok "4 shards merged = unsharded (counts, rates, fast_p, per-task verdicts)"; else bad "$(cat "$TMP/cmp.txt")"; fi
finish
