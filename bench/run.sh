#!/usr/bin/env bash
# make bench: runs every bench/bench_* program (and bench/*.sh script) against the optimized build.
# Each prints its own figures; ratios are measured against a baseline in the same run.
set -u
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export KFORGE="$top/$build/kforge" KFORGE_WORKER="$top/$build/kforge-worker"
export KFORGE_CACHE=${KFORGE_CACHE:-$(mktemp -d /tmp/kforge-bench-cache.XXXXXX)}
rc=0
for b in "$build"/bench/bench_* bench/*.sh; do
	[ -e "$b" ] || continue
	case "$b" in bench/run.sh | *.d | *.o) continue ;; esac
	echo "== $(basename "$b")"
	if [ -x "$b" ] && [ "${b%.sh}" = "$b" ]; then "$b" || rc=1; else bash "$b" || rc=1; fi
done
exit $rc
