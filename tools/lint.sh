#!/bin/sh
# `make lint`: tools/check-refs.sh (no file points outside the repository or at a missing document),
# then cppcheck and clang-tidy (checks in .clang-tidy) over every project C file, with the Makefile's
# include paths and defines. Prints each finding; exits 1 when there is any, 2 when a tool is missing.
# Tests, task kernels and the cpu shim headers (C++ with CUDA syntax) are not linted.
set -u
cd "$(dirname "$0")/.." || exit 2

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
JOBS=$(nproc 2>/dev/null || echo 2)
# Same as the Makefile's CPPFLAGS (less -MMD -MP) and -std.
FLAGS="-std=c11 -I. -Icore -I$CUDA_HOME/include -D_GNU_SOURCE"

for t in cppcheck clang-tidy; do
	command -v "$t" >/dev/null || { echo "lint: '$t' not found" >&2; exit 2; }
done

FILES=$(git ls-files 'core/*.c' 'sandbox/*.c' 'verifier/*.c' 'profiler/*.c' 'kb/*.c' 'eval/*.c' 'agent/*.c' \
	'reports/*.c' 'runner/*.c' 'regress/*.c' 'export/*.c' 'scaffold/*.c' 'cli/*.c' | grep -v '^sandbox/cpu/shim/')
[ -n "$FILES" ] || { echo "lint: no files" >&2; exit 2; }
n=$(echo "$FILES" | wc -l)
fail=0
start=$(date +%s)

# References first: well under a second, and independent of the C tools.
echo "lint: check-refs"
sh tools/check-refs.sh || fail=1

# cppcheck. The CUDA headers refuse an unknown compiler (#error in crt/host_defines.h) and cppcheck
# defines none of gcc's macros, so say which compiler these files are built with; giving -D also makes
# cppcheck check that one configuration instead of every #ifdef combination.
echo "lint: cppcheck on $n files"
# shellcheck disable=SC2086
cppcheck --enable=warning,performance,portability --error-exitcode=1 --inline-suppr --quiet \
	--std=c11 -I. -Icore -I"$CUDA_HOME/include" -D_GNU_SOURCE -D__GNUC__=12 -D__GNUC_MINOR__=2 \
	-D__x86_64__ -D__linux__ --suppressions-list=tools/cppcheck.supp -j "$JOBS" $FILES || fail=1

# clang-tidy, a few files per process on every core. Flags follow `--`, so no compile_commands.json.
echo "lint: clang-tidy on $n files"
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
echo "$FILES" | xargs -P "$JOBS" -n 4 sh -c 'clang-tidy --quiet "$@" -- '"$FLAGS" lint >"$out" 2>&1 || fail=1
# clang-tidy prints "N warnings generated." for suppressed system-header warnings; keep the findings.
grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter' \
	"$out" | grep -v '^$'
grep -q -E ': (warning|error): ' "$out" && fail=1

echo "lint: $( [ $fail = 0 ] && echo clean || echo FINDINGS ) ($(($(date +%s) - start)) s)"
exit $fail
