#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What signing costs rpm's wall clock: rpm -i with imastream.so in sign mode + EVM
# portable, and imastream install in the same mode, against rpm -i --noplugins, with the
# worker (%_imastream_sign_threads 1 and --sign-threads 1, the defaults) and without
# it (0), for P-256 (the target), P-384 and RSA-2048 keys.  The peer of both is the same
# rpm -i --noplugins run: it writes the same files and no attribute, so the ratio is what
# labelling costs against installing at all (imastream install in hash mode is printed
# beside it for P-256, the install's own cost without signatures).  The plugin's worker
# makes whole signatures ahead from rpm's header; the install's prepares ECDSA nonces.
#
# Two packages cut from this machine's binaries (zstd level 3): 5,000 files of 16 KiB and
# 64 files of 1 MiB.  Both run with no sync (%_imastream_sync none, --sync none), as
# rpm -i without %_flush_io; for P-256 the defaults are timed beside them
# (%_imastream_sync file: an fsync per file; --sync fs: a syncfs per package): on
# /dev/shm these cost their system calls, not a disk's flush (bench-rpm-sync does that).
# Paired runs: each round runs noplugins and every signed variant (the order turns round
# by round), each into a fresh --root on /dev/shm, and the ratio of each run to that
# round's noplugins run is kept; the median of BENCH_PAIRS rounds (default 9) is
# printed, with the median CPU ratio.  Target: P-256 with the worker <= 1.2x noplugins on
# both packages, for the plugin and for imastream install; exits 3 on a miss, 1 on
# errors.  The load average is printed before each key and at the end: the worker needs
# the second core, which another job on a shared machine takes.  Needs root.
set -euo pipefail

: "${top_builddir:?run through make bench-rpm-sign-ahead}"
so=$top_builddir/.libs/imastream.so
[ -f "$so" ] || { echo "bench-rpm-sign-ahead: build first ($so missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-rpm-sign-ahead: needs root (rpm --root)" >&2; exit 1; }
command -v evmctl >/dev/null || { echo "bench-rpm-sign-ahead: evmctl not installed" >&2; exit 1; }
bin=$top_builddir/imastream
pairs=${BENCH_PAIRS:-9}
keys=${BENCH_KEYS:-p256 p384 rsa2048}

work=$(mktemp -d /dev/shm/imastream-bench-sign-ahead.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
bench_unwrap bin

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
# run_sign THREADS SYNC PKG, with $key
run_sign() {
	rpm_i --define '_imastream_mode sign' --define "_imastream_key $work/$key.key" \
		--define "_imastream_cert $work/$key.pem" --define '_imastream_evm portable' \
		--define "_imastream_sync $2" --define "_imastream_sign_threads $1" "$3"
}
run_worker() { run_sign 1 none "$1"; }
run_inline() { run_sign 0 none "$1"; }
run_worker_sync() { run_sign 1 file "$1"; }
# run_install THREADS SYNC PKG, with $key: the same package, unsigned header allowed
# (rpm -i checks only digests here too).
run_install() {
	"$bin" install --root "$fresh" --allow-unsigned --mode sign --key "$work/$key.key" \
		--cert "$work/$key.pem" --evm portable --sync "$2" --sign-threads "$1" "$3"
}
run_install_worker() { run_install 1 none "$1"; }
run_install_inline() { run_install 0 none "$1"; }
run_install_worker_sync() { run_install 1 fs "$1"; }
run_install_hash() { "$bin" install --root "$fresh" --allow-unsigned --mode hash --sync none "$1"; }

declare -A label=([worker]="rpm + imastream.so, worker" [inline]="rpm + imastream.so, no worker"
	[worker_sync]="rpm + imastream.so, worker, sync file"
	[install_worker]="imastream install, worker" [install_inline]="imastream install, no worker"
	[install_worker_sync]="imastream install, worker, sync fs"
	[install_hash]="imastream install, hash mode")

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

# measure PKG VARIANT...: $pairs rounds of noplugins and each VARIANT, the order turned
# round by round; sets ratio[V] and cpu[V] (median ratios to noplugins), t[V] (median
# wall times, noplugins too) and rounds[V] (each round's wall ratio, in order).
measure() {
	local pkg=$1 r i v n tm
	shift
	local variants=(noplugins "$@")
	local -A wall=() c=() rs=() cs=() ts=()
	n=${#variants[@]}
	for v in "$@"; do
		[ "$v" = install_hash ] || check "$v" "$pkg"
	done
	for ((r = 0; r < pairs; r++)); do
		for ((i = 0; i < n; i++)); do
			v=${variants[$(((i + r) % n))]}
			tm=$(bench_elapsed "run_$v" "$pkg") || exit 1
			wall[$v]=${tm% *}
			c[$v]=${tm#* }
		done
		ts[noplugins]+=" ${wall[noplugins]}"
		for v in "$@"; do
			rs[$v]+=" $(bench_ratio "${wall[$v]}" "${wall[noplugins]}" 4)"
			cs[$v]+=" $(bench_ratio "${c[$v]}" "${c[noplugins]}" 4)"
			ts[$v]+=" ${wall[$v]}"
		done
	done
	ratio=() cpu=() t=() rounds=()
	t[noplugins]=$(bench_median ${ts[noplugins]})
	for v in "$@"; do
		ratio[$v]=$(bench_median ${rs[$v]})
		cpu[$v]=$(bench_median ${cs[$v]})
		t[$v]=$(bench_median ${ts[$v]})
		rounds[$v]=${rs[$v]}
	done
}

# csv_row SIZE SERIES RATIO: the peer (rpm --noplugins) against ours as the other
# benches give it, peer time / ours: here the inverse of the median pair ratio.
csv_row() {
	[ -n "${BENCH_CSV:-}" ] || return 0
	[ -s "$BENCH_CSV" ] || echo "param,value,series,throughput,unit,ratio" >"$BENCH_CSV"
	awk -v v="$1" -v s="$2" -v r="$3" -v t="${t[noplugins]}" 'BEGIN {
		printf "file size (bytes),%s,%s,%.6g,runs/s,%.4g\n", v, s, 1 / t, 1 / r }' >>"$BENCH_CSV"
}

declare -A ratio cpu t rounds
echo "bench-rpm-sign-ahead: rpm $(rpm --version | awk '{print $3}'), $pairs paired rounds," \
	"medians of ratios to rpm -i --noplugins, fresh roots on /dev/shm, $(nproc) cores"
for key in $keys; do
	echo "  ${key_name[$key]}: load average $(cut -d' ' -f1-3 /proc/loadavg)"
	variants=(worker inline install_worker install_inline)
	[ "$key" != p256 ] || variants+=(worker_sync install_worker_sync install_hash)
	for pkg in small mid; do
		case $pkg in
		small) p=$small size=16384 what="5,000 x 16 KiB" ;;
		mid) p=$mid size=1048576 what="64 x 1 MiB" ;;
		esac
		measure "$p" "${variants[@]}"
		printf '    %-15s rpm -i --noplugins %6.3f s\n' "$what" "${t[noplugins]}"
		for v in "${variants[@]}"; do
			printf '      %-40s %6.3f s: %6.3fx (cpu %6.3fx)\n' "${label[$v]}" "${t[$v]}" \
				"${ratio[$v]}" "${cpu[$v]}"
		done
		echo "      the worker's rounds, in order:${rounds[worker]}"
		csv_row "$size" "rpm -i --noplugins (vs sign + EVM ${key_name[$key]}; worker)" "${ratio[worker]}"
		csv_row "$size" "rpm -i --noplugins (vs sign + EVM ${key_name[$key]}; no worker)" "${ratio[inline]}"
		csv_row "$size" "rpm -i --noplugins (vs imastream install: sign + EVM ${key_name[$key]}; worker)" \
			"${ratio[install_worker]}"
		csv_row "$size" "rpm -i --noplugins (vs imastream install: sign + EVM ${key_name[$key]}; no worker)" \
			"${ratio[install_inline]}"
		[ "$key" = p256 ] || continue
		for v in worker install_worker; do
			awk -v r="${ratio[$v]}" 'BEGIN { exit !(r <= 1.2) }' ||
				bench_target_missed "${label[$v]}, sign + EVM P-256 <= 1.2x noplugins on $what: ${ratio[$v]}x"
		done
	done
done
echo "bench-rpm-sign-ahead: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_finish bench-rpm-sign-ahead
