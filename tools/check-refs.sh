#!/bin/sh
# Fails when a file of the repository points somewhere the repository does not have: a path outside it
# (the shared folder one level up, an absolute path under the machine's work folder), a relative Markdown
# link to a missing file, or a mention of a `docs/...` path or of a `*.md` file that does not exist.
# Prints FILE:LINE: what is wrong, one line each, and exits 1 when there is any; 0 when clean; 2 on a
# usage error. Run by `make lint` and tests/integration/docs_refs.sh; it takes well under a second.
#
#   tools/check-refs.sh [ROOT]     ROOT: the tree to check (default: this repository)
#
# Files checked: in a git work tree, the tracked and the untracked-but-not-ignored ones; elsewhere (a copy)
# every file outside .git/ and build/. Binary files are skipped. Resolution:
#   - a Markdown link [text](target) in a *.md file: target relative to the file's folder (an #anchor is
#     dropped; URLs and pure anchors are not checked);
#   - `docs/...`: relative to ROOT;
#   - a name ending in .md: relative to ROOT or to the file's folder, and a bare name (no slash) also where
#     a file of that name exists anywhere in the tree.
# A path that follows `$`, `%` or `}` (a shell variable, a printf conversion) is not a repository path and
# is not checked.
# tools/check-refs.allow lists mentions that are not repository paths (output files such as
# `DIR/report.md`): one extended regular expression per line, matched against the mention; # comments.
set -u
here=$(cd "$(dirname "$0")/.." && pwd) || exit 2
root=${1:-$here}
[ $# -le 1 ] || { echo "usage: tools/check-refs.sh [ROOT]" >&2; exit 2; }
[ -d "$root" ] || { echo "check-refs: '$root' is not a folder" >&2; exit 2; }
cd "$root" || exit 2
allow=tools/check-refs.allow
[ -f "$allow" ] || allow=/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-refs.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	git ls-files -z --cached --others --exclude-standard >"$tmp/files0" || exit 2
else
	find . -path ./.git -prune -o -path ./build -prune -o -type f -print0 | sed -z 's|^\./||' >"$tmp/files0"
fi
# only files that exist (a tracked file deleted in the work tree is not checked)
xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\n" "$f"; done' sh <"$tmp/files0" >"$tmp/files"

# Mentions, as FILE:LINE:TEXT. The patterns are written so that this file matches none of them.
up='\.\.'
work='/wor[k]/'
tr '\n' '\0' <"$tmp/files" | xargs -0 -r grep -IHnoP \
	"${up}/shared[A-Za-z0-9_./-]*|(?<![A-Za-z0-9_.~-])${work}[A-Za-z0-9_./-]*|\]\([^)\s]*\)|(?<![A-Za-z0-9_./$%}-])docs/[A-Za-z0-9_./-]*|(?<![A-Za-z0-9_./:~$%}-])[A-Za-z0-9_./-]+\.md\b" \
	>"$tmp/hits" 2>"$tmp/grep-err"
[ -s "$tmp/grep-err" ] && { cat "$tmp/grep-err" >&2; exit 2; }

awk -v allowfile="$allow" -v filelist="$tmp/files" '
function norm(p,    n, a, i, out, k) {
	n = split(p, a, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (a[i] == "" || a[i] == ".") continue
		if (a[i] == "..") { if (k == 0) return "/.."; k--; continue }
		out[++k] = a[i]
	}
	p = ""
	for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
	return p
}
function dirof(f) { return f ~ /\// ? substr(f, 1, match(f, /\/[^\/]*$/) - 1) : "" }
function join(d, p) { return d == "" ? p : d "/" p }
function allowed(t,    i) { for (i = 1; i <= nallow; i++) if (t ~ allowre[i]) return 1; return 0 }
function bad(where, t, why) { printf "%s: \047%s\047 %s\n", where, t, why; nbad++ }
BEGIN {
	while ((getline line < filelist) > 0) {
		have[line] = 1
		b = line; sub(/.*\//, "", b); base[b] = 1
		d = line
		while (d ~ /\//) { sub(/\/[^\/]*$/, "", d); have[d] = 1 }
	}
	while ((getline line < allowfile) > 0) {
		if (line ~ /^[ \t]*(#|$)/) continue
		allowre[++nallow] = line
	}
}
{
	# FILE:LINE:TEXT (file names hold no colon here)
	f = $0; sub(/:.*/, "", f)
	rest = substr($0, length(f) + 2); ln = rest; sub(/:.*/, "", ln)
	t = substr(rest, length(ln) + 2)
	where = f ":" ln
	if (t ~ /^\.\.\/shared/) { bad(where, t, "points outside the repository"); next }
	if (t ~ /^\/work\//) { bad(where, t, "is an absolute path outside the repository"); next }
	if (t ~ /^\]\(/) {
		if (f !~ /\.md$/) next
		tgt = substr(t, 3, length(t) - 3); sub(/#.*/, "", tgt)
		if (tgt == "" || tgt ~ /^[A-Za-z][A-Za-z0-9+.-]*:/ || allowed(tgt)) next
		if (tgt ~ /^\//) { bad(where, tgt, "is an absolute link"); next }
		p = norm(join(dirof(f), tgt))
		if (p == "/..") { bad(where, tgt, "links outside the repository"); next }
		if (!(p in have) && p != "") bad(where, tgt, "links to a file that does not exist")
		next
	}
	sub(/[.,:;]+$/, "", t)
	if (t == "" || allowed(t)) next
	if (t ~ /^docs\//) {
		p = norm(t)
		if (!(p in have)) bad(where, t, "does not exist in the repository")
		next
	}
	# a *.md name
	u = t; sub(/^(\.\/)+/, "", u)
	p = norm(u); q = norm(join(dirof(f), u))
	if (p in have || q in have) next
	if (u !~ /\// && (u in base)) next
	if (p == "/.." || q == "/..") { bad(where, t, "points outside the repository"); next }
	bad(where, t, "names a document that does not exist in the repository")
}
END {
	if (nbad) { printf "check-refs: %d reference%s to paths the repository does not have\n", nbad, nbad == 1 ? "" : "s" > "/dev/stderr"; exit 1 }
}' "$tmp/hits"
