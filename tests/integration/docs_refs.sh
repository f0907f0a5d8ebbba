#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# tools/check-refs.sh: the repository names no path outside itself and no missing document (the tree
# passes), and each kind of bad reference planted in a copy of the tree is found with its file and line
# (the copy fails), while mentions that are not repository paths (URLs, allow-listed report files) pass.
# Needs neither the kforge binary nor a GPU.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
CHECK=$TOP/tools/check-refs.sh

# 1. this tree
expect_exit 0 "the repository's own references resolve" -- sh "$CHECK"
[ -z "$OUT_TXT" ] && ok "nothing reported for the tree" || bad "reported for the tree: $OUT_TXT"

# A copy of the files the checker would read here (tracked and untracked-but-not-ignored), without .git,
# so the checker takes its find path as it would in an exported tree.
copy=$TMP/tree
mkdir -p "$copy"
if git rev-parse --show-toplevel >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$copy" 2>/dev/null
else
	tar -C "$TOP" --exclude=./build --exclude=./.git -cf - . | tar -C "$copy" -xf -
fi
[ -f "$copy/tools/check-refs.sh" ] && ok "tree copied" || bad "tree not copied"

# 2. the copy passes as it is, and with mentions that are not repository paths
expect_exit 0 "an unchanged copy passes" -- sh "$CHECK" "$copy"
printf 'See [the spec](https://example.org/spec/cli.md), [a section](#exit-codes), DIR/report.md.\n' \
	>>"$copy/docs/ci.md"
expect_exit 0 "URLs, anchors and allow-listed report files pass" -- sh "$CHECK" "$copy"

# 3. one planted reference of each kind; the texts are built from pieces so this file holds none of them
up=..
n=$(($(wc -l <"$copy/docs/ci.md") + 1))
printf 'contracts in %s/shared/spec/cli.md\n' "$up" >>"$copy/docs/ci.md"
printf 'see [the format](%s.%s)\n' missing-page md >>"$copy/docs/ci.md"
printf 'see [above](%s/%s/%s.%s)\n' "$up" "$up" outside md >>"$copy/docs/ci.md"
printf 'details in docs/%s.%s\n' no-such-doc md >>"$copy/docs/ci.md"
m=$(($(wc -l <"$copy/core/fs.c") + 1))
printf '/* the rules of FIELD-%s.%s and %s/main/core */\n' NOTES md "/wor""k" >>"$copy/core/fs.c"

expect_exit 1 "a copy with planted references fails" -- sh "$CHECK" "$copy"
md=md
want=(
	"docs/ci.md:$n: '$up/shared/spec/cli.$md' points outside the repository"
	"docs/ci.md:$((n + 1)): 'missing-page.$md' links to a file that does not exist"
	"docs/ci.md:$((n + 2)): '$up/$up/outside.$md' links outside the repository"
	"docs/ci.md:$((n + 3)): 'do""cs/no-such-doc.$md' does not exist in the repository"
	"core/fs.c:$m: 'FIELD-NOTES.$md' names a document that does not exist in the repository"
	"core/fs.c:$m: '/wor""k/main/core' is an absolute path outside the repository"
)
for w in "${want[@]}"; do
	grep -qF -- "$w" <<<"$OUT_TXT" && ok "found: ${w%% *}" || bad "not found: $w; got: $OUT_TXT"
done
[ "$(grep -c . <<<"$OUT_TXT")" -eq "${#want[@]}" ] && ok "nothing else reported" ||
	bad "expected ${#want[@]} findings, got: $OUT_TXT"
grep -q 'check-refs: 6 references' <<<"$ERR_TXT" && ok "the count on stderr" || bad "stderr: $ERR_TXT"

# 4. usage
expect_exit 2 "a missing ROOT is a usage error" -- sh "$CHECK" "$TMP/no-such-dir"

finish
