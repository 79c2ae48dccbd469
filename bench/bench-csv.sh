# SPDX-License-Identifier: LGPL-2.1-or-later
# The benchmarks' CSV rows, for bench/plot.sh: sourced by the shell benchmarks.
# shellcheck shell=bash

# bench_csv PARAM VALUE SERIES SECONDS AMOUNT UNIT [OURS_SECONDS]: appends one row to
# $BENCH_CSV (nothing when it is unset): the throughput AMOUNT / SECONDS in UNIT, and for a
# peer (OURS_SECONDS given) the ratio SECONDS / OURS_SECONDS, how many times faster we are.
bench_csv() {
	[ -n "${BENCH_CSV:-}" ] || return 0
	[ -s "$BENCH_CSV" ] || echo "param,value,series,throughput,unit,ratio" >"$BENCH_CSV"
	# A comma in a name would shift the columns.
	awk -v p="$1" -v v="$2" -v s="$3" -v t="$4" -v a="$5" -v u="$6" -v o="${7:-}" 'BEGIN {
		gsub(/,/, ";", p); gsub(/,/, ";", s)
		r = (o == "") ? "" : sprintf("%.4g", t / o)
		printf "%s,%s,%s,%.6g,%s,%s\n", p, v, s, a / t, u, r }' >>"$BENCH_CSV"
}
