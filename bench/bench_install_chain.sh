#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream install with hash, IMA signature and EVM portable signature against the two-pass peers and the physical limit.
#
# On bench_install.sh's packages (big: IMASTREAM_BENCH_MB MiB in 4 MiB files; small:
# IMASTREAM_BENCH_SMALL files of 16 KiB; payload IMASTREAM_BENCH_PAYLOAD, w19.zstdio by
# default), best of IMASTREAM_BENCH_RUNS, each into a fresh root on /dev/shm:
#   ours        imastream install --mode sign --evm portable (P-256, and P-384 beside it:
#               BENCH_CURVES, default "P-256 P-384"): one pass, attributes
#               on every file before its rename
#   cpio+evmctl rpm2cpio PKG | cpio -idm, then evmctl ima_sign -r and evmctl sign
#               --portable -r with the same key (target: ours at least 2x faster)
#   rpm -i      rpm -i --noplugins --nodeps --noscripts: no attributes at all (target: ours
#               not slower)
#   zstd+sha    zstd -dc PAYLOAD | openssl sha256: decompression and one SHA-256 pass on
#               two cores, the physical limit (target: ours within 1.3x); also against
#               ours-hash, imastream install --mode hash (no signatures), which does
#               exactly that work plus writing the files
# Prints each time and its ratio to ours.  Needs root, evmctl and zstd.
set -euo pipefail
top_builddir=${top_builddir:-$(pwd)}
bin=$top_builddir/imastream
[ -x "$bin" ] || { echo "bench-install-chain: build first ($bin missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-install-chain: needs root" >&2; exit 1; }
for t in evmctl zstd rpm2cpio cpio; do
	command -v $t >/dev/null || { echo "bench-install-chain: $t not installed" >&2; exit 1; }
done

# shellcheck source=bench/bench_install_lib.sh
. "$(dirname "$0")/bench_install_lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"

curves=${BENCH_CURVES:-P-256 P-384}
for curve in $curves; do
	k=${curve,,} k=${k//-/}
	(umask 077; openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:"$curve" -out "$work/$k.pem" 2>/dev/null)
	openssl req -x509 -new -key "$work/$k.pem" -out "$work/$k.crt" -days 2 -subj "/CN=bench $k" \
		-addext subjectKeyIdentifier=hash 2>/dev/null
	openssl x509 -in "$work/$k.crt" -outform DER -out "$work/$k.der"
done
bench_unwrap bin
"$bin" --version >/dev/null || { echo "bench-install-chain: $bin does not run" >&2; exit 1; }

# $k: the key of the round (p256, p384).
run_ours() {
	"$bin" install --root "$fresh" --allow-unsigned --quiet --mode sign --key "$work/$k.pem" \
		--cert "$work/$k.crt" --evm portable "$1"
}
run_ours_hash() { "$bin" install --root "$fresh" --allow-unsigned --quiet "$1"; }
run_peer() {
	(cd "$fresh" && rpm2cpio "$1" | cpio -idm --quiet) &&
		evmctl ima_sign -r --key "$work/$k.pem" "$fresh" >/dev/null 2>&1 &&
		evmctl sign --portable -r --generation=0 --key "$work/$k.pem" "$fresh" >/dev/null 2>&1
}
run_rpm() { rpm -i --noplugins --nodeps --noscripts --notriggers --root "$fresh" --define '_dbpath /rpmdb' "$1"; }
run_limit() { zstd -dc "$1" | openssl dgst -sha256 >/dev/null; }

# ratio LABEL TIME OURS TARGET: the peer's time, how many times ours it is, and the target.
ratio() {
	printf '  %-12s %8.3f s  peer/ours x%.2f  (%s)\n' "$1" "$2" "$(echo "$2 / $3" | bc -l)" "$4"
	bench_csv "file size (bytes)" "$size" "$1" "$2" "$((bytes / 1000000))" MB/s "$3"
}

echo "bench-install-chain: payload $payload, best of $runs, roots on /dev/shm, $(nproc) cores, $curves, load average $(cut -d' ' -f1 /proc/loadavg)"
for spec in "${packages[@]}"; do
	build_and_describe $spec
	for curve in $curves; do
		k=${curve,,} k=${k//-/}
		# What ours writes verifies, or the timing means nothing.
		fresh=$work/check
		mkdir -p "$fresh"
		run_ours "$pkg"
		f=$(find "$fresh/opt" -type f -print -quit)
		evmctl ima_verify --key "$work/$k.der" "$f" >/dev/null 2>&1 &&
			evmctl verify --generation=0 --key "$work/$k.der" "$f" >/dev/null 2>&1 ||
			{ echo "bench-install-chain: evmctl does not accept $f" >&2; exit 1; }
		rm -rf "$fresh"
		t=$(best run_ours "$pkg")
		printf '  %-12s %8.3f s  (%.0f MB/s)\n' "ours $curve" "$t" "$(echo "$bytes / $t / 1000000" | bc -l)"
		bench_csv "file size (bytes)" "$size" "imastream install ($curve)" "$t" "$((bytes / 1000000))" MB/s
		ratio "cpio+evmctl ($curve)" "$(best run_peer "$pkg")" "$t" "target >= 2"
		# The first curve (P-256) is the one the other peers are measured against.
		[ -n "${t_ours:-}" ] || t_ours=$t
	done
	ratio "rpm -i (vs P-256)" "$(best run_rpm "$pkg")" "$t_ours" "target >= 1"
	if [ "$(rpm -qp --qf '%{PAYLOADCOMPRESSOR}' "$pkg")" = zstd ]; then
		payload_of "$pkg" "$work/payload.zst"
		t=$(best run_limit "$work/payload.zst")
		t_hash=$(best run_ours_hash "$pkg")
		printf '  %-12s %8.3f s  ours/limit x%.2f  (target <= 1.3)\n' zstd+sha "$t" "$(echo "$t_ours / $t" | bc -l)"
		bench_csv "file size (bytes)" "$size" "limit: zstd -dc + sha256 (vs P-256)" "$t" "$((bytes / 1000000))" MB/s "$t_ours"
		printf '  %-12s %8.3f s  ours-hash/limit x%.2f\n' ours-hash "$t_hash" "$(echo "$t_hash / $t" | bc -l)"
		bench_csv "file size (bytes)" "$size" "imastream install (hash mode)" "$t_hash" "$((bytes / 1000000))" MB/s
		bench_csv "file size (bytes)" "$size" "limit: zstd -dc + sha256 (vs hash mode)" "$t" "$((bytes / 1000000))" MB/s "$t_hash"
	fi
	t_ours=
done
