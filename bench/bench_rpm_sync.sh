#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cost of durability before the rename: rpm's plugin (%_imastream_sync) and imastream install (--sync) against rpm with and without %_flush_io, on a disk-backed root.
#
# One package of IMASTREAM_BENCH_SMALL files of 16 KiB cut from this machine's binaries
# (bench-lib.sh; default 2000), rounds alternating the commands (IMASTREAM_BENCH_RUNS,
# default 3), each rpm -i into a fresh root below IMASTREAM_BENCH_DIR (default /var/tmp:
# tmpfs would make every fsync free). The best time of each:
#   rpm             rpm -i --noplugins
#   rpm flush_io    rpm -i --noplugins, %_flush_io 1 (rpm fsyncs every file)
#   plugin none     rpm -i, imastream.so in hash mode, %_imastream_sync none
#   plugin file     rpm -i, imastream.so in hash mode, %_imastream_sync file (the default)
#   install none    imastream install --sync none (hash mode)
#   install fs      imastream install --sync fs (the default: one syncfs before the renames)
# Prints each time and its ratios to rpm and to rpm flush_io. Needs root and rpmbuild.
set -euo pipefail
: "${top_builddir:?run through make bench-rpm-sync}"
so=$top_builddir/.libs/imastream.so
[ -f "$so" ] || { echo "bench-rpm-sync: build first ($so missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-rpm-sync: needs root (rpm --root)" >&2; exit 1; }
bin=$top_builddir/imastream
[ -x "$bin" ] || { echo "bench-rpm-sync: build first ($bin missing)" >&2; exit 1; }
n=${IMASTREAM_BENCH_SMALL:-2000}
runs=${IMASTREAM_BENCH_RUNS:-3}
work=$(mktemp -d "${IMASTREAM_BENCH_DIR:-/var/tmp}/bench-rpm-sync.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_unwrap bin
bench_corpus $((n * 16384 / 1048576 + 1))
pkg=$(bench_build_pkg benchrpmsync "$n" 16384 w3.zstdio)
rm -f "$corpus"

rpm_i() {
	rpm -i --nodeps --noscripts --notriggers --root "$fresh" --define '_dbpath /rpmdb' \
		--define "__plugindir $top_builddir/.libs" --define "__transaction_imastream $so" \
		--define '_imastream_config %{nil}' --define '_imastream_mode hash' "$@" "$pkg"
}
run_rpm() { rpm_i --noplugins; }
run_flush() { rpm_i --noplugins --define '_flush_io 1'; }
run_none() { rpm_i --define '_imastream_sync none'; }
run_file() { rpm_i --define '_imastream_sync file'; }
run_inone() { "$bin" install --root "$fresh" --allow-unsigned --quiet --sync none "$pkg"; }
run_ifs() { "$bin" install --root "$fresh" --allow-unsigned --quiet --sync fs "$pkg"; }

variants=(rpm flush none file inone ifs)
declare -A times
for v in "${variants[@]}"; do times[$v]=""; done
for _ in $(seq "$runs"); do
	for v in "${variants[@]}"; do
		t=$(bench_elapsed "run_$v") || exit 1
		times[$v]="${times[$v]} ${t%% *}"
	done
done
declare -A best
for v in "${variants[@]}"; do
	# shellcheck disable=SC2086 # the list of times
	best[$v]=$(bench_min ${times[$v]})
done
printf 'one package, %d files of 16 KiB, root on %s (best of %d):\n' "$n" \
	"$(df --output=fstype "$work" | tail -1)" "$runs"
row() {
	printf '  %-38s %8.3f s  x%s of rpm, x%s of rpm with %%_flush_io\n' "$1" "${best[$2]}" \
		"$(bench_ratio "${best[$2]}" "${best[rpm]}" 2)" "$(bench_ratio "${best[$2]}" "${best[flush]}" 2)"
}
row "rpm --noplugins" rpm
row "rpm --noplugins, %_flush_io 1" flush
row "imastream.so, %_imastream_sync none" none
row "imastream.so, %_imastream_sync file" file
row "imastream install --sync none" inone
row "imastream install --sync fs" ifs
