#!/usr/bin/env bash
# NVRTC and the cpu backend agree on every kernel file of the repository (spec check 0): a file NVRTC
# rejects is a compile error for `kforge compile --backend cpu` too, with NVRTC's words; a file NVRTC
# compiles either builds for the cpu backend or is `unsupported` (exit 4, the construct and its line),
# never a compile error of the host compiler.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
n_rej=0 n_ok=0
# (tasks/: every reference compiles with NVRTC and is verified on the cpu backend elsewhere)
for f in $(git ls-files 'tests/*.cu' 'shipped/*.cu' | grep -v '^tests/data/bad_tasks/'); do
	"$KFORGE" compile "$f" >"$TMP/nv" 2>&1
	nv=$?
	"$KFORGE" compile --backend cpu "$f" >"$TMP/cpu" 2>&1
	cpu=$?
	if [ "$nv" -eq 2 ]; then
		continue # not a kernel file (a directive error): nothing to compare
	elif [ "$nv" -ne 0 ]; then
		n_rej=$((n_rej + 1))
		if [ "$cpu" -eq 1 ] && grep -qiE 'nvrtc|host libraries' "$TMP/cpu"; then
			:
		else
			bad "$f: NVRTC rejects it, the cpu backend says exit $cpu: $(head -c 300 "$TMP/cpu")"
		fi
	else
		n_ok=$((n_ok + 1))
		if [ "$cpu" -ne 0 ] && [ "$cpu" -ne 4 ]; then
			bad "$f: NVRTC compiles it, the cpu backend exits $cpu: $(head -c 300 "$TMP/cpu")"
		elif [ "$cpu" -eq 4 ] && grep -q 'cpu-shim-' "$TMP/cpu"; then
			bad "$f: unsupported, quoting the shim's internals: $(head -c 300 "$TMP/cpu")"
		fi
	fi
done
[ "$n_rej" -ge 10 ] && ok "$n_rej files NVRTC rejects are compile errors on the cpu backend" || bad "only $n_rej rejected files"
[ "$n_ok" -ge 80 ] && ok "$n_ok files NVRTC compiles build for the cpu backend or are unsupported" || bad "only $n_ok files"
finish
