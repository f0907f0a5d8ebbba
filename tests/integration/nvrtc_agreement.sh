#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# NVRTC and the cpu backend agree on every kernel file of the repository (spec check 0): a file NVRTC
# rejects is a compile error for `kforge compile --backend cpu` too, with NVRTC's words; a file NVRTC
# compiles either builds for the cpu backend or is `unsupported` (exit 4, the construct and its line),
# never a compile error of the host compiler.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
# one_file FILE -> "rej|ok|skip FILE" and, when the backends disagree, "bad FILE: why" (files run
# nproc at a time: each is two compiles in separate processes, independent of the others)
one_file() {
	local f=$1 t nv cpu
	t=$(mktemp -d "${TMPDIR:-/tmp}/kf-nvagree.XXXXXX")
	"$KFORGE" compile "$f" >"$t/nv" 2>&1
	nv=$?
	"$KFORGE" compile --backend cpu "$f" >"$t/cpu" 2>&1
	cpu=$?
	if [ "$nv" -eq 2 ]; then
		echo "skip $f" # not a kernel file (a directive error): nothing to compare
	elif [ "$nv" -ne 0 ]; then
		echo "rej $f"
		if ! { [ "$cpu" -eq 1 ] && grep -qiE 'nvrtc|host libraries' "$t/cpu"; }; then
			echo "bad $f: NVRTC rejects it, the cpu backend says exit $cpu: $(head -c 300 "$t/cpu" | tr '\n' ' ')"
		fi
	else
		echo "ok $f"
		if [ "$cpu" -ne 0 ] && [ "$cpu" -ne 4 ]; then
			echo "bad $f: NVRTC compiles it, the cpu backend exits $cpu: $(head -c 300 "$t/cpu" | tr '\n' ' ')"
		elif [ "$cpu" -eq 4 ] && grep -q 'cpu-shim-' "$t/cpu"; then
			echo "bad $f: unsupported, quoting the shim's internals: $(head -c 300 "$t/cpu" | tr '\n' ' ')"
		fi
	fi
	rm -rf "$t"
}
export -f one_file
export KFORGE
# (tasks/: every reference compiles with NVRTC and is verified on the cpu backend elsewhere)
git ls-files 'tests/*.cu' 'shipped/*.cu' | grep -v '^tests/data/bad_tasks/' |
	xargs -P "$(nproc)" -n 1 bash -c 'one_file "$0"' >"$TMP/results"
n_rej=$(grep -c '^rej ' "$TMP/results")
n_ok=$(grep -c '^ok ' "$TMP/results")
while read -r _ why; do bad "$why"; done < <(grep '^bad ' "$TMP/results")
[ "$n_rej" -ge 10 ] && ok "$n_rej files NVRTC rejects are compile errors on the cpu backend" || bad "only $n_rej rejected files"
[ "$n_ok" -ge 80 ] && ok "$n_ok files NVRTC compiles build for the cpu backend or are unsupported" || bad "only $n_ok files"
finish
