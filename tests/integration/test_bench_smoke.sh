#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The signing benches run end to end at their smallest sizes and print their ratio line,
# so a change to what the commands accept cannot leave a bench broken until someone
# measures again. No figure is judged: exit 3 (a target missed) counts as a run.
set -euo pipefail
: "${top_srcdir:?}" "${top_builddir:?}"
for tool in rpmbuild rpm evmctl openssl; do
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
[ "$fails" = 0 ] || exit 1
echo "PASS: the signing benches run at their smallest sizes"
