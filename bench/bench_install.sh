#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Extraction speed of the installer library against rpm2cpio|cpio, rpm -i and bare decompression.
#
# Builds two packages from this machine's binaries (so they compress like real ones):
#   big:   IMASTREAM_BENCH_MB MiB (default 96) in files of 4 MiB or less
#   small: IMASTREAM_BENCH_SMALL files (default 5000) of 16 KiB
# with IMASTREAM_BENCH_PAYLOAD (default w19.zstdio, Fedora's), then times, best of
# IMASTREAM_BENCH_RUNS (default 3), each into a fresh root on /dev/shm:
#   ours       installer/examples/install-rpm ROOT PKG (no hook chain yet): decompression
#              on a reader thread, SHA-256 check and writes on the caller's
#   ours-1t    the same with --one-thread: the stages in turn
#   cpio       rpm2cpio PKG | cpio -idm
#   rpm        rpm -i --noplugins --nodeps --noscripts --root ROOT
#   decomp     rpm2cpio PKG >/dev/null             (rpmio decompression alone)
#   zstd       zstd -dc PAYLOAD >/dev/null          (the raw payload; zstd payloads only)
#   zstd+sha   zstd -dc PAYLOAD | openssl sha256   (the physical limit of issue 5, 2 cores)
# and prints each time with its ratio to ours (above 1: ours is faster).  Needs root.
# The machine is shared: a busy second core hides what the reader thread buys.
set -euo pipefail
top_builddir=${top_builddir:-$(pwd)}
ours=$top_builddir/installer/examples/install-rpm
[ -x "$ours" ] || { echo "bench-install: build first ($ours missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-install: needs root" >&2; exit 1; }

# shellcheck source=bench/bench_install_lib.sh
. "$(dirname "$0")/bench_install_lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
bench_unwrap ours

run_ours() { "$ours" "$fresh" "$1"; }
run_ours1() { "$ours" --one-thread "$fresh" "$1"; }
run_cpio() { (cd "$fresh" && rpm2cpio "$1" | cpio -idm --quiet); }
run_rpm() { rpm -i --noplugins --nodeps --noscripts --notriggers --root "$fresh" --define '_dbpath /rpmdb' "$1"; }
run_decomp() { rpm2cpio "$1" >/dev/null; }
run_zstd() { zstd -dc "$1" >/dev/null; }
run_zstd_sha() { zstd -dc "$1" | openssl dgst -sha256 >/dev/null; }

report() {
	local label=$1 t=$2 base=$3
	printf '  %-10s %8.3f s  x%.2f of ours\n' "$label" "$t" "$(echo "$t / $base" | bc -l)"
	bench_csv "file size (bytes)" "$size" "$label" "$t" "$((bytes / 1000000))" MB/s "$base"
}

echo "bench-install: payload $payload, best of $runs, roots on /dev/shm, $(nproc) cores"
for spec in "${packages[@]}"; do
	build_and_describe $spec
	t_ours=$(best run_ours "$pkg")
	printf '  %-10s %8.3f s  (%.0f MB/s)\n' ours "$t_ours" "$(echo "$bytes / $t_ours / 1000000" | bc -l)"
	bench_csv "file size (bytes)" "$size" "imastream installer library" "$t_ours" "$((bytes / 1000000))" MB/s
	report ours-1t "$(best run_ours1 "$pkg")" "$t_ours"
	report cpio "$(best run_cpio "$pkg")" "$t_ours"
	report "rpm -i" "$(best run_rpm "$pkg")" "$t_ours"
	report decomp "$(best run_decomp "$pkg")" "$t_ours"
	if [ "$(rpm -qp --qf '%{PAYLOADCOMPRESSOR}' "$pkg")" = zstd ]; then
		payload_of "$pkg" "$work/payload.zst"
		report zstd "$(best run_zstd "$work/payload.zst")" "$t_ours"
		report zstd+sha "$(best run_zstd_sha "$work/payload.zst")" "$t_ours"
	fi
done
