#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/README.md's benchmark figures quote the runs whose CSV files and plots are committed in
# bench/results (bench/check-figures.sh, no benchmark run), and the check catches a figure
# that drifts from its CSV or a benchmark row that goes missing, a prose figure its table
# does not hold, a headline without a committed run, P-256 without P-384, a plot missing
# from the gallery, an empty ratio panel, a line joining different programs, and a
# headline figure the plot does not show.
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
# expect_fail WHAT PATTERN TABLE RESULTS HEADLINE: the check fails, with a line matching PATTERN.
expect_fail() {
	if bash "$check" "$3" "$4" "$5" >"$tmp/out" 2>&1; then cat "$tmp/out"; fail "$1 passed"; fi
	grep -qE "$2" "$tmp/out" || { cat "$tmp/out"; fail "no line for $1"; }
}
readme=$top_srcdir/bench/README.md head=$top_srcdir/README.md

# A bold figure in the prose (the targets not met) that the rows of its benchmark do not
# hold: the sign-mode and hash-mode limit figures swapped.
perl -0777 -pe 's/(\n- \*\*[^*]*bench-install-chain[^*]*?)(\d+\.\d+)x/$1 . sprintf("%.2f", $2 * 1.5) . "x"/e' \
	"$readme" >"$tmp/swap.md"
! cmp -s "$readme" "$tmp/swap.md" || fail "no bold bench-install-chain figure in the prose to change"
expect_fail "a prose figure the table does not hold" 'swap.md: .* quotes x.*which the rows of bench-install-chain do not' \
	"$tmp/swap.md" "$results" "$head"

# A headline whose benchmark has no committed CSV.
sed 's/^| `imastream policy keylime/| a claim without a run | `make -C build\/default bench-nosuch` | **x9.9** |\n&/' \
	"$head" | perl -pe 's/\\n/\n/' >"$tmp/norun.md"
expect_fail "a headline without a committed run" 'norun.md: the headline of bench-nosuch has no committed run' \
	"$readme" "$results" "$tmp/norun.md"

# A signing headline with P-256 only.
perl -pe 's/P-384[^|]*//g if /bench-sign-tree/' "$head" >"$tmp/p256only.md"
! cmp -s "$head" "$tmp/p256only.md" || fail "the sign-tree headline names no P-384 to drop"
expect_fail "a P-256 headline without P-384" 'p256only.md: the headline of bench-sign-tree gives P-256 without P-384' \
	"$readme" "$results" "$tmp/p256only.md"

# Broken results, one copy each: a CSV with P-256 only, a plot missing from the gallery, a
# panel without a peer, a series of ours and a peer's, a headline figure not plotted.
broken() {
	rm -rf "$tmp/res"
	cp -r "$results" "$tmp/res"
}
broken
grep -v -i 'p-\?384' "$results/sign-tree.csv" >"$tmp/res/sign-tree.csv"
expect_fail "a CSV with P-256 only" 'sign-tree.csv: P-256 without P-384' "$readme" "$tmp/res" "$head"
broken
grep -v 'results/sign-digests.svg' "$readme" >"$tmp/nogallery.md"
expect_fail "a plot missing from the gallery" 'nogallery.md does not show results/sign-digests.svg' \
	"$tmp/nogallery.md" "$results" "$head"
broken
awk -F, '!($1 ~ /^wall/ && $6 != "")' "$results/sign-digests.csv" >"$tmp/res/sign-digests.csv"
expect_fail "an empty ratio panel" 'sign-digests.csv: the panel "wall[^"]*" has no peer row' "$readme" "$tmp/res" "$head"
broken
awk -F, -v OFS=, 'NR > 1 { $3 = $2; $2 = "x" } 1' "$results/hash-tree.csv" >"$tmp/res/hash-tree.csv"
expect_fail "a line joining different programs" 'hash-tree.csv: the series .* has rows of ours and of peers' \
	"$readme" "$tmp/res" "$head"
broken
awk -F, -v OFS=, 'NR > 1 && $6 != "" { $6 = 0.955 } 1' "$results/install-record.csv" >"$tmp/res/install-record.csv"
expect_fail "a headline figure the plot does not show" 'bench-install-record: .* which its plot .* does not show' \
	"$readme" "$tmp/res" "$head"
echo "ok: swapped prose figures, runless headlines, P-256 alone, a plot outside the gallery, an empty panel, a line across programs and an unplotted headline are caught"

echo "ok: bench/README.md figures match bench/results; a drifted figure and a missing row are caught"
