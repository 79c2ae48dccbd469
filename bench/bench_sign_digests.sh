#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sign-digests on a signing host: signatures per second and per core (CPU second) with a local P-256 and P-384 key, against evmctl sign_hash and openssl speed in the same run; manifest and signatures bytes against package bytes.
# Usage: bench_sign_digests.sh [PACKAGES [FILES [REPS]]]   (default 500 packages of 40
# files, each its own; ours best of 3, evmctl once; top_builddir from the environment,
# default .; BENCH_CSV for bench/plot.sh)
# The start of bench_sign_packages.sh and bench_sign_package.sh, kept in each: every
# bench runs on its own, and bench-lib.sh needs the scratch folder before it is sourced.
set -eu
packages=${1:-500}
files=${2:-40}
reps=${3:-3}
IMASTREAM="${top_builddir:-.}/imastream"
for tool in rpmbuild rpm evmctl openssl; do
	command -v "$tool" >/dev/null 2>&1 || { echo "bench-sign-digests: $tool is missing" >&2; exit 1; }
done
work=$(mktemp -d /tmp/bench_sign_digests.XXXXXX)
trap 'rm -rf "$work"' EXIT
here=$(dirname "$0")
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$here/bench-csv.sh"

# $packages distinct packages of $files files (one manifest block each, as a release has
# one per package); copies of one package would share a header, which a manifest refuses.
bench_text_pkgs "$work/top" "$packages" "$files" >/dev/null
mv "$work/top/RPMS/noarch" "$work/tree"
pkg_bytes=$(cat "$work"/tree/*.rpm | wc -c)
"$IMASTREAM" sign-package --export-digests "$work/manifest" "$work/tree"
sigs=$(grep -c '^file ' "$work/manifest")
manifest_bytes=$(wc -c <"$work/manifest")
grep '^file ' "$work/manifest" | cut -d' ' -f3 >"$work/digests"

cpus=$(nproc)
# best CMD...: "WALL CPU" of the fastest of $reps runs (by wall time), and in $best_phase
# the best signing-phase rate that sign-digests reports (signatures per CPU second).
best() {
	local r out best_out="" w phase
	best_phase=0
	for ((r = 0; r < reps; r++)); do
		out=$(bench_elapsed "$@")
		w=${out% *}
		if [ -z "$best_out" ] || awk -v a="$w" -v b="${best_out% *}" 'BEGIN { exit !(a < b) }'; then
			best_out=$out
		fi
		phase=$(sed -n 's/.* \([0-9]*\) per CPU second$/\1/p' "$work/stderr")
		[ "${phase:-0}" -le "$best_phase" ] || best_phase=$phase
	done
	echo "$best_out"
}
# One round per curve: P-256 (the fastest) and P-384 (docs/SETUP.md's choice).
for curve in ${BENCH_CURVES:-P-256 P-384}; do
bench_ec_cert "$curve" "$work/k.key" "$work/k.pem" bench
# The same process as a release run: its start, the key, the manifest's parse and the
# signatures file's write are in the whole-run figures; the summary's rate is signing only.
best "$IMASTREAM" sign-digests -j 1 --key "$work/k.key" --cert "$work/k.pem" \
	"$work/manifest" -o "$work/sigs" >"$work/one"
one=$(cat "$work/one")
phase_one=$best_phase
best "$IMASTREAM" sign-digests -j "$cpus" --key "$work/k.key" --cert "$work/k.pem" \
	"$work/manifest" -o "$work/sigs" >"$work/all"
all=$(cat "$work/all")
phase_all=$best_phase
sigs_bytes=$(wc -c <"$work/sigs")
# evmctl loads the key for every signature: one run is long enough to measure.
reps_ours=$reps reps=1
evm=$(best sh -c 'evmctl sign_hash -a sha256 --key "$1" <"$2"' sh "$work/k.key" "$work/digests")
reps=$reps_ours
# OpenSSL's own ceiling for one core: ECDSA signs per CPU second, nothing else.
bits=${curve#P-}
ossl=$(openssl speed -seconds 2 "ecdsap$bits" 2>/dev/null | awk -v c="nistp$bits" '$0 ~ c { print $(NF - 1) }')

awk -v p="$packages" -v f="$files" -v s="$sigs" -v one="$one" -v all="$all" -v e="$evm" -v k="$curve" \
	-v o="$ossl" -v c="$cpus" -v p1="$phase_one" -v pa="$phase_all" -v pb="$pkg_bytes" -v mb="$manifest_bytes" -v sb="$sigs_bytes" '
function wall(x) { split(x, a, " "); return a[1] }
function cpu(x) { split(x, a, " "); return a[2] }
BEGIN {
	printf "%d packages x %d files: %d signatures, ECDSA %s key file, %d CPUs online, load %s\n",
		p, f, s, k, c, "'"$(cut -d' ' -f1 /proc/loadavg)"'"
	printf "sign-digests -j 1: %.3f s, %.0f signatures/s; per core: %.0f signatures per CPU second (whole run), %.0f (signing)\n",
		wall(one), s / wall(one), s / cpu(one), p1
	printf "sign-digests -j %d: %.3f s, %.0f signatures/s; per core: %.0f signatures per CPU second (whole run), %.0f (signing)\n",
		c, wall(all), s / wall(all), s / cpu(all), pa
	printf "evmctl sign_hash over the same digests: %.3f s, %.0f signatures/s; per core: %.0f signatures per CPU second\n",
		wall(e), s / wall(e), s / cpu(e)
	printf "openssl speed %s (raw signs, one core): %.0f signatures per CPU second\n", k, o
	printf "ratio sign-digests -j 1 vs evmctl sign_hash, per core (whole runs): x%.2f; -j %d vs evmctl, wall: x%.2f; signing vs openssl speed: %.0f%%\n",
		(s / cpu(one)) / (s / cpu(e)), c, wall(e) / wall(all), 100 * p1 / o
	printf "manifest %.0f bytes per package, signatures file %.0f, package %.0f: %.1f%% and %.1f%% of the package bytes\n",
		mb / p, sb / p, pb / p, 100 * mb / pb, 100 * sb / pb
}'
# Two panels, each with its peer: per core (CPU seconds) and wall time with every CPU.
bench_csv "per core (CPU time)" "$curve" "imastream sign-digests -j 1" "$(echo "$one" | cut -d' ' -f2)" "$sigs" signatures/s
bench_csv "per core (CPU time)" "$curve" "evmctl sign_hash" "$(echo "$evm" | cut -d' ' -f2)" "$sigs" signatures/s \
	"$(echo "$one" | cut -d' ' -f2)"
bench_csv "wall time ($cpus CPUs)" "$curve" "imastream sign-digests -j $cpus" "$(echo "$all" | cut -d' ' -f1)" "$sigs" signatures/s
bench_csv "wall time ($cpus CPUs)" "$curve" "evmctl sign_hash" "$(echo "$evm" | cut -d' ' -f1)" "$sigs" signatures/s \
	"$(echo "$all" | cut -d' ' -f1)"
done
