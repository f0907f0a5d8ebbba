# Shared helpers for integration scripts (sourced). Each script calls ok/bad/skip per check and ends
# with `finish`, which prints "N passed, N failed, N skipped" and sets the exit code.
: "${KFORGE:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/kforge}"
T_PASS=0 T_FAIL=0 T_SKIP=0
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-it.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
ok()   { T_PASS=$((T_PASS + 1)); echo "ok   $*"; }
bad()  { T_FAIL=$((T_FAIL + 1)); echo "FAIL $*"; }
skip() { T_SKIP=$((T_SKIP + 1)); echo "skip $*"; }
# expect_exit CODE DESC -- CMD...: runs CMD, checks its exit code, keeps stdout in $OUT_TXT, stderr in $ERR_TXT
expect_exit() {
	local want=$1 desc=$2; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	OUT_TXT=$(cat "$TMP/out"); ERR_TXT=$(cat "$TMP/err")
	if [ "$rc" -eq "$want" ]; then ok "$desc"; else bad "$desc (exit $rc, want $want): $(head -c 600 "$TMP/err")"; fi
}
finish() { echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"; [ "$T_FAIL" -eq 0 ]; }
