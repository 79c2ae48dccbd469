#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The benches that need no fs-verity, qemu or token run end to end at their smallest sizes
# and print their ratio line, so a change to what the commands accept cannot leave a bench
# broken until someone measures again. No figure is judged: exit 3 (a target missed)
# counts as a run.
set -euo pipefail
: "${top_srcdir:?}" "${top_builddir:?}"
[ "$(id -u)" = 0 ] || { echo "SKIP: the install benches need root"; exit 77; }
# One build is enough to show a bench runs; the default build does it.
if ldd "$top_builddir/.libs/imastream.so" 2>/dev/null | grep libasan >/dev/null; then
	echo "SKIP: a sanitizer build; the default build runs the benches"
	exit 77
fi
for tool in rpmbuild rpm rpm2cpio cpio evmctl openssl jq; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
export top_builddir
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0

# run NAME PATTERN ARGS...: bench/NAME ARGS exits 0 or 3 and prints a line matching PATTERN.
run() {
	local name=$1 pattern=$2 rc=0
	shift 2
	bash "$top_srcdir/bench/$name" "$@" >"$out" 2>&1 || rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
		echo "FAIL: bench/$name $*: exit $rc"
		tail -n 5 "$out"
		fails=$((fails + 1))
	elif ! grep -E "$pattern" "$out" >/dev/null; then
		echo "FAIL: bench/$name $*: no line matching /$pattern/"
		tail -n 5 "$out"
		fails=$((fails + 1))
	else
		echo "ok: bench/$name $*: $(grep -E "$pattern" "$out" | head -n 1)"
	fi
}

run bench_sign_digests.sh '^ratio sign-digests -j 1 vs evmctl sign_hash' 5 2 1
run bench_sign_package.sh '^P-256, 5 files: .*ratio x' 5
run bench_sign_packages.sh 'p11-kit server vs key file: x|key file [0-9]+ signatures/s' 3 2 1
BENCH_COUNT=40 BENCH_ROUNDS=1 run bench_hash_speed.sh '^  evmctl / ours: x[0-9.]+ wall'
BENCH_FILES=20 run bench_sign_tree.sh '^  ratio \(evmctl time / imastream time'
BENCH_FILES=20 run bench_rpm_syscalls.sh '^sign \+ EVM: [0-9]+ extra system calls'
# The installs: 4 MiB in big files, 50 small ones, one run each.
export IMASTREAM_BENCH_MB=4 IMASTREAM_BENCH_SMALL=50 IMASTREAM_BENCH_RUNS=1
run bench_install.sh ' x[0-9.]+ of ours$'
run bench_install_chain.sh 'ours/limit x[0-9.]+'
run bench_install_sync.sh '^ +--sync file +[0-9.]+ s +x[0-9.]+'
run bench_rpm_sync.sh '^ +imastream.so, %_imastream_sync file +[0-9.]+ s +x[0-9.]+ of rpm'
# An installed root of one big file and rpm's 5,000 small ones, one round.
export BENCH_BIG_FILES=1 BENCH_ROUNDS=1
run bench_relabel.sh 'verify --rpmdb / rpm -Va +[0-9.]+x'
run bench_policy.sh 'policy / rpm -Va +[0-9.]+x'
# perf splits signing's cost by thread: where it is installed.
if command -v perf >/dev/null; then
	BENCH_FILES=20 run bench_rpm_sign_profile.sh 'sign \+ EVM, worker +rpm thread +[0-9.]+ ms'
fi
[ "$fails" = 0 ] || exit 1
echo "PASS: the benches run at their smallest sizes"
