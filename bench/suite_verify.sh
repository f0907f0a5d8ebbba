#!/usr/bin/env bash
# make bench: the task suite's cpu-backend correctness pass — every task's reference verified as a
# candidate on every public, hidden and edge shape (issue 9: under 10 minutes on a 2-core machine). The
# baseline in the same run is `kforge tasks validate` over the same tasks (load, bind and plan only).
set -u
KFORGE=${KFORGE:-build/kforge}
tasks=$(ls tasks/l1/*/task.json tasks/l2/*/task.json tasks/l3/*/task.json)
n=$(echo "$tasks" | wc -l)
t0=$(date +%s.%N)
"$KFORGE" tasks validate $tasks >/dev/null 2>&1
t1=$(date +%s.%N)
fail=0
for t in $tasks; do
	"$KFORGE" verify --backend cpu --seed 7 "$t" "$(dirname "$t")/reference.cu" >/dev/null 2>&1 || {
		echo "  reference of $t did not pass"
		fail=$((fail + 1))
	}
done
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$n" -v f="$fail" 'BEGIN {
	printf "suite correctness pass (cpu backend): %d tasks in %.1f s (%.2f s per task), %d failed\n", n, c - b, (c - b) / n, f
	printf "  = %.0fx the time of validating the same tasks (%.2f s); target: under 600 s\n", (c - b) / (b - a), b - a
}'
[ "$fail" -eq 0 ]
