#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream hash -r against evmctl ima_hash -r over the same copied tree, best of N each.
set -euo pipefail

: "${top_builddir:?run through make bench-hash-tree}"
bin="$top_builddir/imastream"
rounds=${BENCH_ROUNDS:-3}
algo=${BENCH_ALGO:-sha256}
sources=${BENCH_TREE:-"/usr/bin /usr/include"}
command -v evmctl >/dev/null || { echo "bench-hash-tree: evmctl not installed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-hash-tree.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A plain copy: symlinks stay symlinks, no xattrs come along.
for s in $sources; do
	mkdir -p "$work/tree/$(basename "$s")"
	cp -dR --no-preserve=all "$s/." "$work/tree/$(basename "$s")/"
done
nfiles=$(find "$work/tree" -type f | wc -l)
mbytes=$(du -sm --apparent-size "$work/tree" | cut -f1)
opt=
[ "$(id -u)" = 0 ] || opt=--xattr-user
"$bin" --version >/dev/null # let libtool's wrapper do its first-run work outside the timing

# elapsed CMD...: wall seconds of one run; output discarded, failure fatal.
elapsed() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>"$work/stderr" || { echo "failed: $*" >&2; cat "$work/stderr" >&2; exit 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# One warm-up each so that both runs read from the page cache, then interleaved rounds.
elapsed evmctl ima_hash -r $opt -a "$algo" "$work/tree" >/dev/null
elapsed "$bin" hash -r $opt -a "$algo" "$work/tree" >/dev/null
best_evmctl= best_ours= best_one=
for _ in $(seq "$rounds"); do
	best_evmctl=$(min "$best_evmctl" "$(elapsed evmctl ima_hash -r $opt -a "$algo" "$work/tree")")
	best_ours=$(min "$best_ours" "$(elapsed "$bin" hash -r $opt -a "$algo" "$work/tree")")
	best_one=$(min "$best_one" "$(elapsed "$bin" hash -r -j 1 $opt -a "$algo" "$work/tree")")
done
# The two must also agree on every value.
evmctl ima_hash -r -n -a "$algo" "$work/tree" 2>/dev/null >"$work/evmctl.out"
"$bin" hash -r -n --no-names -a "$algo" "$work/tree" >"$work/ours.out" 2>/dev/null
cmp -s "$work/evmctl.out" "$work/ours.out" || { echo "outputs differ!" >&2; exit 1; }

printf 'tree: %s (%d files, %d MiB), %s, %s, best of %d\n' "$sources" "$nfiles" "$mbytes" \
	"$algo" "${opt:-security.ima}" "$rounds"
printf '  evmctl ima_hash -r          %8.3f s\n' "$best_evmctl"
printf '  imastream hash -r -j 1      %8.3f s   (x%s)\n' "$best_one" "$(ratio "$best_evmctl" "$best_one")"
printf '  imastream hash -r (-j %d)    %8.3f s   (x%s)\n' "$(nproc)" "$best_ours" "$(ratio "$best_evmctl" "$best_ours")"
echo "ratio (evmctl time / imastream time, default jobs): $(ratio "$best_evmctl" "$best_ours")"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
bench_csv "file count" "$nfiles" "imastream hash -r (-j $(nproc))" "$best_ours" "$mbytes" MiB/s
bench_csv "file count" "$nfiles" "imastream hash -r -j 1" "$best_one" "$mbytes" MiB/s
bench_csv "file count" "$nfiles" "evmctl ima_hash -r" "$best_evmctl" "$mbytes" MiB/s "$best_ours"
