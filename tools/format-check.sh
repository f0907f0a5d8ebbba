#!/bin/sh
# Lists the C/C++ files whose formatting differs from .clang-format (what `make format` would change),
# without changing anything. Informational: exits 1 when some file differs, 0 when the tree is clean.
# With arguments, checks only those files.
set -u
cd "$(dirname "$0")/.." || exit 2
command -v clang-format >/dev/null || { echo "format-check: 'clang-format' not found" >&2; exit 2; }
if [ $# -gt 0 ]; then
	files=$*
else
	files=$(git ls-files '*.c' '*.h' '*.cpp')
fi
n=0
bad=0
for f in $files; do
	n=$((n + 1))
	if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "$f"
		bad=$((bad + 1))
	fi
done
echo "format-check: $bad of $n files differ from .clang-format" >&2
[ "$bad" = 0 ]
