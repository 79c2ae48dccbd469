#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream hash -r against evmctl ima_hash -r and against its own single-stream path, on a copied tree and on 20,000 x 4 KiB files, best of N each.
set -euo pipefail

: "${top_builddir:?run through make bench-hash-tree}"
bin="$top_builddir/imastream"
rounds=${BENCH_ROUNDS:-3}
algo=${BENCH_ALGO:-sha256}
sources=${BENCH_TREE:-"/usr/bin /usr/include"}
small_count=${BENCH_SMALL_COUNT:-20000}
small_size=${BENCH_SMALL_SIZE:-4096}
command -v evmctl >/dev/null || { echo "bench-hash-tree: evmctl not installed" >&2; exit 1; }

# tmpfs when it is there, so that the disk is out of the measure (every run reads from
# the page cache anyway; root can write security.ima there).
base=${BENCH_TMP:-/dev/shm}
[ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/bench-hash-tree.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A plain copy: symlinks stay symlinks, no xattrs come along.
for s in $sources; do
	mkdir -p "$work/tree/$(basename "$s")"
	cp -dR --no-preserve=all "$s/." "$work/tree/$(basename "$s")/"
done
opt=
[ "$(id -u)" = 0 ] || opt=--xattr-user
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_small_files "$work/small" "$small_count" "$small_size"
# The program itself, not libtool's wrapper script (a shell that costs more than hashing
# a few thousand small files).
bench_unwrap bin
"$bin" --version >/dev/null || { echo "bench-hash-tree: $bin does not run" >&2; exit 1; }

ratio() { bench_ratio "$1" "$2" 2; }
row() { bench_row 44 "$@"; }
evm() { evmctl ima_hash -r $opt -a "$algo" "$1"; }
ours() { "$bin" hash -r --quiet $opt -a "$algo" "$@"; }
# The single-stream path: the same binary with IMASTREAM_FILE_BATCH=1, one file at a time,
# every file streamed (read until read(2) returns 0) and closed on its own: the path before
# batches.  It shares the walk with the batched path (the workers open the files, the
# main thread sleeps until half the ring is done), so what the walk gains, both gain;
# the ratio is what runs of files add: one read per small file, the SIMD lanes across
# files, one io_uring_enter(2) for a run's opens and one close_range(2) for its closes.
single() { IMASTREAM_FILE_BATCH=1 ours "$@"; }

# The two must agree on every value, on both trees.
for t in tree small; do
	evmctl ima_hash -r -n -a "$algo" "$work/$t" 2>/dev/null >"$work/evmctl.out"
	"$bin" hash -r -n --no-names --quiet -a "$algo" "$work/$t" >"$work/ours.out"
	cmp -s "$work/evmctl.out" "$work/ours.out" || { echo "bench-hash-tree: outputs differ on $t!" >&2; exit 1; }
done
backends=$("$bin" hash -r -n -v --quiet -a "$algo" "$work/small" 2>&1 >/dev/null |
	sed -n 's/.*digests of [0-9]* files: //p')

# One warm-up each so that every run reads from the page cache, then interleaved rounds.
for t in tree small; do
	bench_elapsed evm "$work/$t" >/dev/null
	bench_elapsed ours "$work/$t" >/dev/null
done
tree_evm='' tree_ours='' tree_one='' small_evm='' small_single='' small_ours=''
small_single_one='' small_one=''
for _ in $(seq "$rounds"); do
	tree_evm=$(bench_pair_min "$tree_evm" "$(bench_elapsed evm "$work/tree")")
	tree_ours=$(bench_pair_min "$tree_ours" "$(bench_elapsed ours "$work/tree")")
	tree_one=$(bench_pair_min "$tree_one" "$(bench_elapsed ours -j 1 "$work/tree")")
	small_evm=$(bench_pair_min "$small_evm" "$(bench_elapsed evm "$work/small")")
	small_single=$(bench_pair_min "$small_single" "$(bench_elapsed single "$work/small")")
	small_ours=$(bench_pair_min "$small_ours" "$(bench_elapsed ours "$work/small")")
	small_single_one=$(bench_pair_min "$small_single_one" "$(bench_elapsed single -j 1 "$work/small")")
	small_one=$(bench_pair_min "$small_one" "$(bench_elapsed ours -j 1 "$work/small")")
done

nfiles=$(find "$work/tree" -type f | wc -l)
mbytes=$(du -sm --apparent-size "$work/tree" | cut -f1)
small_mib=$((small_count * small_size / 1048576))
jobs=$(nproc)
printf 'imastream hash -r, %s, %s, best of %d (times of the program itself, not libtool'"'"'s wrapper)\n' \
	"$algo" "${opt:-security.ima}" "$rounds"
printf 'tree: %s (%d files, %d MiB):\n' "$sources" "$nfiles" "$mbytes"
row "evmctl ima_hash -r" "" "$tree_evm"
row "imastream hash -r -j 1" "$tree_evm" "$tree_one"
row "imastream hash -r (-j $jobs)" "$tree_evm" "$tree_ours"
printf '%d files of %d bytes (%d MiB), %s:\n' "$small_count" "$small_size" "$small_mib" "$backends"
row "evmctl ima_hash -r" "" "$small_evm"
row "single-stream path (IMASTREAM_FILE_BATCH=1)" "" "$small_single"
row "imastream hash -r (-j $jobs)" "$small_evm" "$small_ours"
row "the same, vs the single-stream path" "$small_single" "$small_ours"
row "single-stream path, -j 1" "" "$small_single_one"
row "imastream hash -r -j 1, vs the single stream" "$small_single_one" "$small_one"
echo "ratio (evmctl time / imastream time, default jobs), wall: tree $(ratio "$(bench_wall "$tree_evm")" "$(bench_wall "$tree_ours")"), small files $(ratio "$(bench_wall "$small_evm")" "$(bench_wall "$small_ours")")"
echo "ratio (single-stream time / batched time, small files), wall: $(ratio "$(bench_wall "$small_single")" "$(bench_wall "$small_ours")") (-j $jobs), $(ratio "$(bench_wall "$small_single_one")" "$(bench_wall "$small_one")") (-j 1); CPU: $(ratio "$(bench_cpu "$small_single")" "$(bench_cpu "$small_ours")") (-j $jobs), $(ratio "$(bench_cpu "$small_single_one")" "$(bench_cpu "$small_one")") (-j 1)"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
# Wall-clock rows: x is the data set, one series (one line) per program, so that a ratio
# line joins one peer's points only; the small files first, for the order of the x axis.
tree_set="tree: $nfiles files ($mbytes MiB)" small_set="$small_count x $((small_size / 1024)) KiB files"
x="data set (wall time; ratios against -j $jobs)"
ours="imastream hash -r -j $jobs" one="imastream hash -r -j 1"
evm="evmctl ima_hash -r" single="single stream (IMASTREAM_FILE_BATCH=1)"
bench_csv "$x" "$small_set" "$ours" "$(bench_wall "$small_ours")" "$small_mib" MiB/s
bench_csv "$x" "$small_set" "$one" "$(bench_wall "$small_one")" "$small_mib" MiB/s
bench_csv "$x" "$small_set" "$evm" "$(bench_wall "$small_evm")" "$small_mib" MiB/s "$(bench_wall "$small_ours")"
bench_csv "$x" "$small_set" "$single" "$(bench_wall "$small_single")" "$small_mib" MiB/s "$(bench_wall "$small_ours")"
bench_csv "$x" "$tree_set" "$ours" "$(bench_wall "$tree_ours")" "$mbytes" MiB/s
bench_csv "$x" "$tree_set" "$one" "$(bench_wall "$tree_one")" "$mbytes" MiB/s
bench_csv "$x" "$tree_set" "$evm" "$(bench_wall "$tree_evm")" "$mbytes" MiB/s "$(bench_wall "$tree_ours")"
