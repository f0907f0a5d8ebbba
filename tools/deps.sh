#!/usr/bin/env bash
# Installs the Debian packages kforge builds and tests with, when they are missing. As root it runs
# apt-get; otherwise it prints the exact command to run.
set -eu
pkgs="build-essential g++ libcurl4-openssl-dev libcjson-dev libsqlite3-dev libpcre2-dev libseccomp-dev pkg-config"
# the cpu sanitizer's build (clang++-14: -fsanitize-coverage=trace-loads,trace-stores); its lines come
# from binutils (addr2line, readelf), which build-essential brings
pkgs="$pkgs clang-14"
# make fuzz and make tsan: libFuzzer and the sanitizer runtimes for clang-14
pkgs="$pkgs libclang-rt-14-dev"
# tools the tests drive: the LLM test server (python3), request checks (curl, jq), database checks (sqlite3)
pkgs="$pkgs python3 curl jq sqlite3"
pkgs="$pkgs ${KFORGE_EXTRA_PKGS:-}"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all Debian packages present"
else
	cmd="apt-get install -y --no-install-recommends$missing"
	if [ "$(id -u)" -eq 0 ]; then
		echo "deps: installing$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		$cmd
	else
		echo "deps: missing packages; run as root:" >&2
		echo "  apt-get update && $cmd" >&2
		exit 1
	fi
fi
if [ ! -e /usr/local/cuda/include/nvrtc.h ]; then
	echo "deps: the CUDA toolkit is not at /usr/local/cuda (NVRTC is required); set CUDA_HOME" >&2
	[ -n "${CUDA_HOME:-}" ] && [ -e "$CUDA_HOME/include/nvrtc.h" ] || exit 1
fi
