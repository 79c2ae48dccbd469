#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/README.md's benchmark figures quote the runs whose CSV files and plots are committed in
# bench/results (bench/check-figures.sh, no benchmark run), and the check catches a figure
# that drifts from its CSV or a benchmark row that goes missing.
set -euo pipefail
: "${top_srcdir:?run through make check}"
fail() { echo "FAIL: $*"; exit 1; }
command -v perl >/dev/null || { echo "SKIP: perl is not installed"; exit 77; }
check="$top_srcdir/bench/check-figures.sh"
results="$top_srcdir/bench/results"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_bench_figures.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

bash "$check" "$top_srcdir/bench/README.md" "$results" "$top_srcdir/README.md" >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out"; fail "README.md, bench/README.md and bench/results disagree"; }
cat "$tmp/out"

# Every figure of the sign-tree rows one higher: the check names the benchmark.
perl -pe 's/(?<![\w.])x(\d+(?:\.\d+)?)/"x" . ($1 + 1)/ge if /bench-sign-tree/' \
	"$top_srcdir/bench/README.md" >"$tmp/drift.md"
! cmp -s "$top_srcdir/bench/README.md" "$tmp/drift.md" || fail "the sign-tree row has no xN figure to change"
if bash "$check" "$tmp/drift.md" "$results" >"$tmp/out" 2>&1; then fail "a changed figure passed"; fi
grep -q '^check-figures: bench-sign-tree: .*the CSV says' "$tmp/out" || { cat "$tmp/out"; fail "no line for the changed figure"; }

# A benchmark whose row is gone.
grep -v 'bench-keys`' "$top_srcdir/bench/README.md" >"$tmp/norow.md"
if bash "$check" "$tmp/norow.md" "$results" >"$tmp/out" 2>&1; then fail "a missing row passed"; fi
grep -q '^check-figures: .*norow.md has no table row for bench-keys' "$tmp/out" || { cat "$tmp/out"; fail "no line for the missing row"; }

# A headline figure one higher: the check names the benchmark and the file.
perl -pe 's/\*\*x(\d+(?:\.\d+)?)\*\*/"**x" . ($1 + 1) . "**"/ge if /bench-sign-tree/' \
	"$top_srcdir/README.md" >"$tmp/headdrift.md"
! cmp -s "$top_srcdir/README.md" "$tmp/headdrift.md" || fail "the sign-tree headline has no bold xN figure to change"
if bash "$check" "$top_srcdir/bench/README.md" "$results" "$tmp/headdrift.md" >"$tmp/out" 2>&1; then
	fail "a changed headline figure passed"
fi
grep -q '^check-figures: bench-sign-tree: .*headdrift.md quotes x' "$tmp/out" || { cat "$tmp/out"; fail "no line for the changed headline"; }

# A benchmark whose headline row is gone.
grep -v 'bench-keys`' "$top_srcdir/README.md" >"$tmp/nohead.md"
if bash "$check" "$top_srcdir/bench/README.md" "$results" "$tmp/nohead.md" >"$tmp/out" 2>&1; then
	fail "a missing headline row passed"
fi
grep -q '^check-figures: .*nohead.md has no headline row for bench-keys' "$tmp/out" || { cat "$tmp/out"; fail "no line for the missing headline"; }
echo "ok: headline figures match bench/README.md; a drifted headline and a missing one are caught"
echo "ok: bench/README.md figures match bench/results; a drifted figure and a missing row are caught"
