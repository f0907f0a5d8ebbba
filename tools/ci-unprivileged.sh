#!/usr/bin/env bash
# CI, second pass: the sandbox tests and the red-team corpus again as an unprivileged user, who gets the
# layers a non-root user can have (user namespace with pid/net/ipc/mount namespaces, Landlock, the syscall
# allow-list) instead of root's separate uid. Runs as root: makes the user (kforge-ci) if needed, copies the
# built tree (build/asan, from `make test`) where that user can read and write it, and runs there.
# Prints "N passed, N failed, N skipped" last; exits non-zero on any failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build/asan}
user=kforge-ci
[ "$(id -u)" -eq 0 ] || { echo "ci-unprivileged: run as root (it makes the user); as a user run the tests directly" >&2; exit 2; }
[ -x "$top/$build/kforge" ] || { echo "ci-unprivileged: build first (make test builds $build)" >&2; exit 2; }
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user" || exit 3
dir=$(mktemp -d /tmp/kforge-unpriv.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# The tree without .git and the other builds; the user owns the copy.
(cd "$top" && tar --exclude=./.git --exclude=./build -cf - .) | (cd "$dir" && tar -xf -) &&
	(cd "$top" && tar --exclude="$build/obj" --exclude="$build/test-logs" -cf - "$build") | (cd "$dir" && tar -xf -) ||
	exit 3
chmod 755 "$dir"
chown -R "$user:" "$dir"
su "$user" -s /bin/bash -c "
	set -u
	cd '$dir' || exit 3
	export KFORGE=\$PWD/$build/kforge KFORGE_WORKER=\$PWD/$build/kforge-worker KFORGE_CACHE=\$PWD/build/test-cache
	export TMPDIR=\$PWD/build/tmp ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
	mkdir -p \"\$TMPDIR\"
	echo \"as \$(id -un) (uid \$(id -u)):\"
	\"\$KFORGE\" sandbox layers
	pass=0 fail=0 skip=0
	for t in $build/tests/test_sandbox_child $build/tests/test_sandbox_jail $build/tests/test_sandbox_includes \\
		$build/tests/test_sandbox_session $build/tests/test_sandbox_compile $build/tests/test_core_redact \\
		tests/integration/cpu_backend.sh tests/integration/redteam.sh; do
		case \"\$t\" in *.sh) out=\$(bash \"\$t\" 2>&1) ;; *) out=\$(\"\$t\" 2>&1) ;; esac
		rc=\$?
		line=\$(echo \"\$out\" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
		printf '%-40s %s\n' \"\$(basename \"\$t\")\" \"\${line:-BROKEN (exit \$rc)}\"
		[ -n \"\$line\" ] || { fail=\$((fail + 1)); echo \"\$out\" | tail -n 20; continue; }
		p=\$(echo \"\$line\" | sed -E 's/^([0-9]+) passed.*/\1/'); f=\$(echo \"\$line\" | sed -E 's/.* ([0-9]+) failed.*/\1/')
		s=\$(echo \"\$line\" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
		pass=\$((pass + p)); fail=\$((fail + f)); skip=\$((skip + \${s:-0}))
		[ \"\$f\" -eq 0 ] || echo \"\$out\" | grep -E 'FAIL' | head -n 20
		[ \"\$rc\" -eq 0 ] || [ \"\$f\" -gt 0 ] || fail=\$((fail + 1))
	done
	echo \"\$pass passed, \$fail failed, \$skip skipped\"
	[ \"\$fail\" -eq 0 ]
"
