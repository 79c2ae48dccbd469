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

# bench_csv_count PARAM VALUE SERIES COUNT [OURS_COUNT]: the same for a count that does
# not depend on the load (system calls, instructions): COUNT in the throughput column,
# unit "count", and for the peer the ratio COUNT / OURS_COUNT.
bench_csv_count() {
	[ -n "${BENCH_CSV:-}" ] || return 0
	[ -s "$BENCH_CSV" ] || echo "param,value,series,throughput,unit,ratio" >"$BENCH_CSV"
	awk -v p="$1" -v v="$2" -v s="$3" -v c="$4" -v o="${5:-}" 'BEGIN {
		gsub(/,/, ";", p); gsub(/,/, ";", v); gsub(/,/, ";", s)
		r = (o == "") ? "" : sprintf("%.5g", c / o)
		printf "%s,%s,%s,%.6g,count,%s\n", p, v, s, c, r }' >>"$BENCH_CSV"
}

# Targets of a bench that gates.  bench_target_missed TEXT: one target missed, named by
# TEXT ("policy / rpm -Va <= 0.1x, cold cache: 0.230x"), said at the end.  bench_finish
# NAME ends the script: the plot of $BENCH_CSV first (when the make target asks for one:
# $BENCH_SVG, titled $BENCH_TITLE), so that a miss still leaves its figures drawn; then,
# when a target was missed, one line naming every miss and exit 3 (1 is for errors),
# else exit 0.  $BENCH_PLOT replaces bench/plot.sh (the helper's test).
bench_csv_dir=$(dirname "${BASH_SOURCE[0]}")
bench_missed=()
bench_target_missed() {
	bench_missed+=("$1")
}
bench_finish() {
	local name=$1 all
	if [ -n "${BENCH_SVG:-}" ] && [ -n "${BENCH_CSV:-}" ]; then
		if [ -n "${BENCH_PLOT:-}" ]; then
			"$BENCH_PLOT" "$BENCH_CSV" "$BENCH_SVG" "${BENCH_TITLE:-$name}"
		else
			bash "$bench_csv_dir/plot.sh" "$BENCH_CSV" "$BENCH_SVG" "${BENCH_TITLE:-$name}"
		fi || exit 1
	fi
	[ ${#bench_missed[@]} -gt 0 ] || exit 0
	all=$(printf '; %s' "${bench_missed[@]}")
	echo "$name: missed ${#bench_missed[@]} target(s): ${all#; }" >&2
	exit 3
}
