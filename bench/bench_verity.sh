#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream hash --verity against `fsverity digest` (fsverity-utils) on one large file and on many 16 KiB files in tmpfs, best of N each.
set -euo pipefail

: "${top_builddir:?run through make bench-verity}"
bin="$top_builddir/imastream"
rounds=${BENCH_ROUNDS:-3}
big_mib=${BENCH_BIG_MIB:-256}
small_count=${BENCH_SMALL_COUNT:-20000}
small_size=${BENCH_SMALL_SIZE:-16384}
command -v fsverity >/dev/null || { echo "bench-verity: fsverity not installed" >&2; exit 1; }

# tmpfs, so that the disk is out of the measure (both read from the page cache anyway).
base=${BENCH_TMP:-/dev/shm}
[ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/bench-verity.XXXXXX")
trap 'rm -rf "$work"' EXIT
head -c $((big_mib * 1048576)) /dev/urandom >"$work/big"
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_small_files "$work/small" "$small_count" "$small_size"
# The program itself, not libtool's wrapper script: the wrapper costs about 0.1 s of CPU
# per run here, a quarter of what fsverity needs for 256 MiB.
bench_unwrap bin
"$bin" --version >/dev/null || { echo "bench-verity: $bin does not run" >&2; exit 1; }

ratio() { bench_ratio "$1" "$2" 2; }
row() { bench_row 38 "$@"; }
peer_small() { find "$work/small" -type f -print0 | xargs -0 fsverity digest; }
portable() { IMASTREAM_HASH_BACKEND=portable "$@"; }

# Same values first, on both inputs.
fsverity digest "$work/big" >"$work/want"
"$bin" hash --verity "$work/big" >"$work/ours"
peer_small | sort >>"$work/want"
"$bin" hash --verity -r --quiet "$work/small" | sort >>"$work/ours"
cmp -s "$work/want" "$work/ours" || { echo "bench-verity: outputs differ!" >&2; exit 1; }
backend=$("$bin" hash --verity -v "$work/big" 2>&1 >/dev/null |
	sed -n 's/.*through the \(.*\) batch backend.*/\1/p')

# One warm-up each, then interleaved rounds.
bench_elapsed fsverity digest "$work/big" >/dev/null
bench_elapsed "$bin" hash --verity "$work/big" >/dev/null
big_peer='' big_ours='' big_portable='' small_peer='' small_ours='' small_one=''
for _ in $(seq "$rounds"); do
	big_peer=$(bench_pair_min "$big_peer" "$(bench_elapsed fsverity digest "$work/big")")
	big_ours=$(bench_pair_min "$big_ours" "$(bench_elapsed "$bin" hash --verity "$work/big")")
	big_portable=$(bench_pair_min "$big_portable" "$(bench_elapsed portable "$bin" hash --verity "$work/big")")
	small_peer=$(bench_pair_min "$small_peer" "$(bench_elapsed peer_small)")
	small_ours=$(bench_pair_min "$small_ours" "$(bench_elapsed "$bin" hash --verity -r --quiet "$work/small")")
	small_one=$(bench_pair_min "$small_one" "$(bench_elapsed "$bin" hash --verity -r -j 1 --quiet "$work/small")")
done

small_mib=$((small_count * small_size / 1048576))
printf 'fs-verity digests (SHA-256, 4 KiB blocks), tmpfs, best of %d; data blocks through %s\n' \
	"$rounds" "$backend"
printf 'one %d MiB file:\n' "$big_mib"
row "fsverity digest" "" "$big_peer"
row "imastream hash --verity" "$big_peer" "$big_ours"
row "the same, backend forced to portable" "$big_peer" "$big_portable"
printf '%d files of %d bytes (%d MiB):\n' "$small_count" "$small_size" "$small_mib"
row "find | xargs fsverity digest" "" "$small_peer"
row "imastream hash --verity -r -j 1" "$small_peer" "$small_one"
row "imastream hash --verity -r (-j $(nproc))" "$small_peer" "$small_ours"
echo "ratio (fsverity time / imastream time), wall: large file $(ratio "$(bench_wall "$big_peer")" "$(bench_wall "$big_ours")"), small files $(ratio "$(bench_wall "$small_peer")" "$(bench_wall "$small_ours")")"
echo "ratio (fsverity time / imastream time), CPU: large file $(ratio "$(bench_cpu "$big_peer")" "$(bench_cpu "$big_ours")"), small files $(ratio "$(bench_cpu "$small_peer")" "$(bench_cpu "$small_ours")")"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
# Wall-clock rows, as the other benchmarks write them.
big=$((big_mib * 1048576))
bench_csv "file size" "$big" "imastream hash --verity" "$(bench_wall "$big_ours")" "$big_mib" MiB/s
bench_csv "file size" "$big" "imastream, portable backend" "$(bench_wall "$big_portable")" "$big_mib" MiB/s "$(bench_wall "$big_ours")"
bench_csv "file size" "$big" "fsverity digest" "$(bench_wall "$big_peer")" "$big_mib" MiB/s "$(bench_wall "$big_ours")"
bench_csv "file size" "$small_size" "imastream hash --verity" "$(bench_wall "$small_ours")" "$small_mib" MiB/s
bench_csv "file size" "$small_size" "imastream hash --verity -j 1" "$(bench_wall "$small_one")" "$small_mib" MiB/s "$(bench_wall "$small_ours")"
bench_csv "file size" "$small_size" "fsverity digest" "$(bench_wall "$small_peer")" "$small_mib" MiB/s "$(bench_wall "$small_ours")"
