#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The system calls imastream.so adds to rpm -i, per file, against its floor: one fsetxattr
# per file in hash mode (security.ima), two with EVM (security.ima, security.evm).
#
# One package of 5,000 files of 16 KiB (BENCH_FILES), payload IMASTREAM_BENCH_PAYLOAD
# (default w3.zstdio); one install each way into a fresh root on /dev/shm under
# strace -f -c: rpm -i --noplugins, then with imastream.so in hash mode and in sign mode
# with EVM (P-256; the key type changes no system call).  Prints, per mode, the extra
# calls per file and every system call whose count differs from rpm's, per file.  CSV:
# the extra calls per file, the floor as the peer (floor / ours: 1 means at the floor).
# Counts, not times: the machine's load does not move them.  Needs root and strace.
set -euo pipefail

: "${top_builddir:?run through make bench-rpm-syscalls}"
so=$top_builddir/.libs/imastream.so
[ -f "$so" ] || { echo "bench-rpm-syscalls: build first ($so missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-rpm-syscalls: needs root (rpm --root, chown)" >&2; exit 1; }
command -v strace >/dev/null || { echo "bench-rpm-syscalls: strace not installed" >&2; exit 1; }
nfiles=${BENCH_FILES:-5000}
payload=${IMASTREAM_BENCH_PAYLOAD:-w3.zstdio}
case "$nfiles" in '' | *[!0-9]* | 0) echo "bench-rpm-syscalls: BENCH_FILES wants a count" >&2; exit 1 ;; esac

work=$(mktemp -d /dev/shm/imastream-bench-syscalls.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"

bench_p256_cert "$work/key.pem" "$work/cert.pem" bench-rpm-syscalls
echo "bench-rpm-syscalls: making a package of $nfiles files of 16 KiB ($payload)..."
bench_corpus 80
pkg=$(bench_build_pkg small "$nfiles" 16384 "$payload")
rm -f "$corpus"

# count NAME RPM_ARGS...: one install under strace -f -c; "CALL COUNT" lines in $work/NAME.
count() {
	local name=$1
	shift
	fresh=$work/root
	rm -rf "$fresh"
	mkdir -p "$fresh"
	strace -f -c -o "$work/strace.$name" rpm -i --nodeps --noscripts --notriggers --root "$fresh" \
		--define '_dbpath /rpmdb' --define "__plugindir $top_builddir/.libs" \
		--define "__transaction_imastream $so" "$@" "$pkg" >/dev/null 2>"$work/stderr" ||
		{ tail -5 "$work/stderr" >&2; echo "bench-rpm-syscalls: rpm $* failed" >&2; exit 1; }
	# "% time seconds usecs/call calls [errors] syscall": the calls are the 4th column.
	awk '$NF != "total" && $NF != "syscall" && $4 ~ /^[0-9]+$/ { print $NF, $4 }' \
		"$work/strace.$name" | sort >"$work/$name"
	[ -s "$work/$name" ] || { echo "bench-rpm-syscalls: strace counted nothing for $name" >&2; exit 1; }
	rm -rf "$fresh"
}
count noplugins --noplugins
# The labelling's own calls: the default %_imastream_sync file adds one fsync per labelled
# file, the durability rpm's %_flush_io gives (imastream-rpm(8), POWER LOSS), not counted here.
count hash --define '_imastream_mode hash' --define '_imastream_sync none'
count sign --define '_imastream_mode sign' --define "_imastream_key $work/key.pem" \
	--define "_imastream_cert $work/cert.pem" --define '_imastream_evm portable' \
	--define '_imastream_sync none'

echo "bench-rpm-syscalls: rpm $(rpm --version | awk '{print $3}'), $nfiles files, strace -f -c," \
	"load average $(cut -d' ' -f1 /proc/loadavg)"
# report MODE FLOOR LABEL: the extra calls per file of MODE over --noplugins, by call.
report() {
	local mode=$1 floor=$2 label=$3 extra per
	extra=$(join -a 1 -a 2 -e 0 -o 0,1.2,2.2 "$work/noplugins" "$work/$mode" |
		awk '{ d += $3 - $2 } END { print d }')
	printf '%s: %d extra system calls, %.3f per file (floor: %d, its fsetxattr)\n' "$label" \
		"$extra" "$(echo "$extra / $nfiles" | bc -l)" "$floor"
	join -a 1 -a 2 -e 0 -o 0,1.2,2.2 "$work/noplugins" "$work/$mode" |
		awk -v n="$nfiles" '$3 != $2 { printf "  %-16s %8d -> %8d  %+.3f per file\n", $1, $2, $3, ($3 - $2) / n }'
	per=$(echo "$extra / $nfiles" | bc -l)
	bench_csv_count "extra system calls per file" "$label" "rpm -i + imastream.so" "$per"
	bench_csv_count "extra system calls per file" "$label" "floor: its fsetxattr" "$floor" "$per"
}
report hash 1 "hash mode"
report sign 2 "sign + EVM"
