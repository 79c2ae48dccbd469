#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench_finish (bench/bench-csv.sh): a bench that misses a target draws its plot first,
# then says the misses in one line and exits 3; errors and met targets are told apart.
set -euo pipefail
: "${top_srcdir:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_bench_finish.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A plot that says it ran, on stderr, so its place among the bench's lines shows.
cat >"$tmp/plot-stub" <<'STUB'
#!/bin/bash
echo "plotted $1 -> $2 ($3)" >&2
[ -z "${PLOT_FAILS:-}" ] || exit 1
STUB
chmod +x "$tmp/plot-stub"

# bench MISSES...: a bench script's end, as the gating benches have it; its status is $rc
# and its stderr $tmp/err.
bench() {
	rc=0
	(
		# shellcheck source=bench/bench-csv.sh
		. "$top_srcdir/bench/bench-csv.sh"
		bench_csv "file count" 10 ours 2 10 files/s
		bench_csv "file count" 10 peer 4 10 files/s 2
		for m in "$@"; do
			bench_target_missed "$m"
		done
		bench_finish bench-test
	) 2>"$tmp/err" || rc=$?
}

export BENCH_CSV=$tmp/t.csv BENCH_SVG=$tmp/t.svg BENCH_TITLE="a title" BENCH_PLOT=$tmp/plot-stub
bench "ours / peer <= 0.4x: 0.5x" "peer / ours >= 8x: 2x"
[ "$rc" = 3 ] || fail "two misses: exit $rc, not 3"
[ "$(wc -l <"$tmp/err")" = 2 ] || fail "two misses: not the plot's line and one more: $(cat "$tmp/err")"
[ "$(sed -n 1p "$tmp/err")" = "plotted $tmp/t.csv -> $tmp/t.svg (a title)" ] ||
	fail "the plot is not drawn first: $(cat "$tmp/err")"
[ "$(sed -n 2p "$tmp/err")" = "bench-test: missed 2 target(s): ours / peer <= 0.4x: 0.5x; peer / ours >= 8x: 2x" ] ||
	fail "the misses are not named in one line: $(sed -n 2p "$tmp/err")"
[ "$(wc -l <"$BENCH_CSV")" = 3 ] || fail "the CSV lacks its header and two rows"

rm -f "$BENCH_CSV"
bench
[ "$rc" = 0 ] || fail "targets met: exit $rc, not 0"
[ "$(cat "$tmp/err")" = "plotted $tmp/t.csv -> $tmp/t.svg (a title)" ] || fail "targets met: $(cat "$tmp/err")"

# A plot that fails is an error (1), not a miss, and no miss line follows it.
rm -f "$BENCH_CSV"
PLOT_FAILS=1 bench "x <= 1x: 2x"
[ "$rc" = 1 ] || fail "a failed plot: exit $rc, not 1"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "a failed plot: $(cat "$tmp/err")"

# Run by hand (no SVG asked for): no plot, the miss still said and gated.
rm -f "$BENCH_CSV"
BENCH_SVG='' bench "x <= 1x: 2x"
[ "$rc" = 3 ] || fail "no plot asked: exit $rc, not 3"
[ "$(cat "$tmp/err")" = "bench-test: missed 1 target(s): x <= 1x: 2x" ] || fail "no plot asked: $(cat "$tmp/err")"

# The real plot.sh, when gnuplot is here: the SVG exists although a target was missed.
if command -v gnuplot >/dev/null; then
	rm -f "$BENCH_CSV" "$BENCH_SVG"
	BENCH_PLOT='' bench "x <= 1x: 2x"
	[ "$rc" = 3 ] || fail "plot.sh: exit $rc, not 3"
	[ -s "$BENCH_SVG" ] || fail "plot.sh: no SVG drawn before the miss: $(cat "$tmp/err")"
	[ "$(tail -n 1 "$tmp/err")" = "bench-test: missed 1 target(s): x <= 1x: 2x" ] ||
		fail "plot.sh: the miss is not the last line: $(cat "$tmp/err")"
else
	echo "note: gnuplot not installed, plot.sh itself not run"
fi
[ "$failures" = 0 ] || exit 1
echo "PASS: bench_finish"
