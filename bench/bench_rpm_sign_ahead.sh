#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What signing costs rpm's wall clock: rpm -i with imastream.so in sign mode + EVM
# portable against rpm -i --noplugins, with the nonce worker (%_imastream_sign_threads 1,
# the default) and without it (0), for P-256 (the target), P-384 and RSA-2048 keys.
#
# Two packages cut from this machine's binaries (zstd level 3): 5,000 files of 16 KiB and
# 64 files of 1 MiB.  The plugin runs with %_imastream_sync none: an fsync per file is
# durability, measured by bench-rpm-sync, not signing.  Paired runs: each round runs
# noplugins, worker, no worker (the order turns round by round), each into a fresh --root
# on /dev/shm, and the ratio of each signed run to that round's noplugins run is kept;
# the median of BENCH_PAIRS rounds (default 9) is printed, with the median CPU ratio.
# Target: P-256 with the worker <= 1.2x noplugins on both packages; exits 3 on a miss,
# 1 on errors.  The load average is printed before and after: the worker needs the second
# core, which another job on a shared machine takes.  Needs root.
set -euo pipefail

: "${top_builddir:?run through make bench-rpm-sign-ahead}"
so=$top_builddir/.libs/imastream.so
[ -f "$so" ] || { echo "bench-rpm-sign-ahead: build first ($so missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-rpm-sign-ahead: needs root (rpm --root)" >&2; exit 1; }
command -v evmctl >/dev/null || { echo "bench-rpm-sign-ahead: evmctl not installed" >&2; exit 1; }
pairs=${BENCH_PAIRS:-9}
keys=${BENCH_KEYS:-p256 p384 rsa2048}

work=$(mktemp -d /dev/shm/imastream-bench-sign-ahead.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"

bench_ec_cert P-256 "$work/p256.key" "$work/p256.pem" bench-rpm-sign-ahead
bench_ec_cert P-384 "$work/p384.key" "$work/p384.pem" bench-rpm-sign-ahead
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench-rpm-sign-ahead \
	-addext subjectKeyIdentifier=hash -keyout "$work/rsa2048.key" -out "$work/rsa2048.pem" \
	>/dev/null 2>&1
chmod 600 "$work/rsa2048.key"
declare -A key_name=([p256]=P-256 [p384]=P-384 [rsa2048]=RSA-2048)

echo "bench-rpm-sign-ahead: making two packages (w3.zstdio)..."
bench_corpus 80
small=$(bench_build_pkg small 5000 16384 w3.zstdio)
mid=$(bench_build_pkg mid 64 1048576 w3.zstdio)
rm -f "$corpus"

rpm_i() {
	rpm -i --nodeps --noscripts --notriggers --root "$fresh" --define '_dbpath /rpmdb' \
		--define "__plugindir $top_builddir/.libs" --define "__transaction_imastream $so" "$@"
}
run_noplugins() { rpm_i --noplugins "$1"; }
# run_sign THREADS PKG, with $key
run_sign() {
	rpm_i --define '_imastream_mode sign' --define "_imastream_key $work/$key.key" \
		--define "_imastream_cert $work/$key.pem" --define '_imastream_evm portable' \
		--define '_imastream_sync none' --define "_imastream_sign_threads $1" "$2"
}
run_worker() { run_sign 1 "$1"; }
run_inline() { run_sign 0 "$1"; }

# check VARIANT PKG: one untimed run; evmctl verifies the first and last file it wrote.
check() {
	local variant=$1 pkg=$2 name f
	name=$(rpm -qp --qf '%{NAME}' "$pkg")
	fresh=$work/check
	rm -rf "$fresh"
	mkdir -p "$fresh"
	"run_$variant" "$pkg" >/dev/null 2>"$work/stderr" ||
		{ cat "$work/stderr" >&2; echo "bench-rpm-sign-ahead: $variant failed" >&2; exit 1; }
	openssl x509 -in "$work/$key.pem" -outform DER -out "$work/$key.der"
	for f in $(find "$fresh/opt/$name/d0" -type f | sort | sed -n '1p;$p'); do
		evmctl ima_verify --key "$work/$key.der" "$f" >/dev/null 2>&1 &&
			evmctl verify --generation=0 --key "$work/$key.der" "$f" >/dev/null 2>&1 ||
			{ echo "bench-rpm-sign-ahead: $variant ($key): evmctl rejects $f" >&2; exit 1; }
	done
	rm -rf "$fresh"
}

# measure PKG: $pairs rounds of noplugins, worker, inline; sets r_worker, r_inline (median
# wall ratios to noplugins), c_worker, c_inline (CPU), and t_* (median wall times).
measure() {
	local pkg=$1 r i v t
	local -A wall=() cpu=()
	local variants=(noplugins worker inline)
	local rw=() ri=() cw=() ci=() tn=() tw=() ti=()
	check worker "$pkg"
	check inline "$pkg"
	for ((r = 0; r < pairs; r++)); do
		for ((i = 0; i < 3; i++)); do
			v=${variants[$(((i + r) % 3))]}
			t=$(bench_elapsed "run_$v" "$pkg") || exit 1
			wall[$v]=${t% *}
			cpu[$v]=${t#* }
		done
		rw+=("$(bench_ratio "${wall[worker]}" "${wall[noplugins]}" 4)")
		ri+=("$(bench_ratio "${wall[inline]}" "${wall[noplugins]}" 4)")
		cw+=("$(bench_ratio "${cpu[worker]}" "${cpu[noplugins]}" 4)")
		ci+=("$(bench_ratio "${cpu[inline]}" "${cpu[noplugins]}" 4)")
		tn+=("${wall[noplugins]}")
		tw+=("${wall[worker]}")
		ti+=("${wall[inline]}")
	done
	r_worker=$(bench_median "${rw[@]}")
	r_inline=$(bench_median "${ri[@]}")
	c_worker=$(bench_median "${cw[@]}")
	c_inline=$(bench_median "${ci[@]}")
	t_noplugins=$(bench_median "${tn[@]}")
	t_worker=$(bench_median "${tw[@]}")
	t_inline=$(bench_median "${ti[@]}")
}

# csv_row SIZE SERIES RATIO: the peer (rpm --noplugins) against ours as the other
# benches give it, peer time / ours: here the inverse of the median pair ratio.
csv_row() {
	[ -n "${BENCH_CSV:-}" ] || return 0
	[ -s "$BENCH_CSV" ] || echo "param,value,series,throughput,unit,ratio" >"$BENCH_CSV"
	awk -v v="$1" -v s="$2" -v r="$3" -v t="$t_noplugins" 'BEGIN {
		printf "file size (bytes),%s,%s,%.6g,runs/s,%.4g\n", v, s, 1 / t, 1 / r }' >>"$BENCH_CSV"
}

echo "bench-rpm-sign-ahead: rpm $(rpm --version | awk '{print $3}'), $pairs paired rounds," \
	"medians of ratios, %_imastream_sync none, fresh roots on /dev/shm, $(nproc) cores," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
for key in $keys; do
	for pkg in small mid; do
		case $pkg in
		small) p=$small size=16384 what="5,000 x 16 KiB" ;;
		mid) p=$mid size=1048576 what="64 x 1 MiB" ;;
		esac
		measure "$p"
		printf '  %-8s %-15s noplugins %6.3f s; worker %6.3f s: %6.3fx (cpu %6.3fx); no worker %6.3f s: %6.3fx (cpu %6.3fx)\n' \
			"${key_name[$key]}" "$what" "$t_noplugins" "$t_worker" "$r_worker" "$c_worker" \
			"$t_inline" "$r_inline" "$c_inline"
		csv_row "$size" "rpm -i --noplugins (vs sign + EVM ${key_name[$key]}; worker)" "$r_worker"
		csv_row "$size" "rpm -i --noplugins (vs sign + EVM ${key_name[$key]}; no worker)" "$r_inline"
		if [ "$key" = p256 ] && ! awk -v r="$r_worker" 'BEGIN { exit !(r <= 1.2) }'; then
			bench_target_missed "sign + EVM P-256 <= 1.2x noplugins on $what: ${r_worker}x"
		fi
	done
done
echo "bench-rpm-sign-ahead: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_finish bench-rpm-sign-ahead
