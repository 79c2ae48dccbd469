#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Turns a benchmark's CSV into an SVG plot with gnuplot: throughput of every series, and
# how many times faster imastream is than each peer, against file size or file count.
#
# Usage: plot.sh CSV SVG TITLE
# The CSV (written by the bench targets, see bench/README.md) has the header
#   param,value,series,throughput,unit,ratio
# param names the x axis ("file size (bytes)", "file count", "chunk (bytes)"), value is
# x (a number, or a category such as a key type: then the axis is categorical), unit is the throughput's (MB/s, files/s...; "count" for a count of system calls or
# instructions, whose ratio is peer count / imastream count), ratio is peer time / imastream time on a
# peer's row and empty on imastream's own rows. One panel pair per param.
# Without gnuplot (package gnuplot-nox) it says so and exits 0: the CSV is the result.
set -euo pipefail

csv=$1 svg=$2 title=$3
command -v gnuplot >/dev/null || { echo "plot: gnuplot not found (gnuplot-nox): $csv only"; exit 0; }
[ -s "$csv" ] || { echo "plot: $csv is empty" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-plot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# One data file per (param, series) and per (param, peer), space-separated "x y".  A param
# whose values are not all numbers (key types, "cold"/"warm", programs) is categorical: x
# is the value's position in first-seen order, labelled by the value (file "labels.P").
tail -n +2 "$csv" | awk -F, -v d="$tmp" '
	{ p = $1; if (!(p in pn)) { pn[p] = ++np; pname[np] = p; unit[np] = $5 }
	  i = pn[p]; n = ++nrow; rp[n] = i; rv[n] = $2; rs[n] = $3; rt[n] = $4; rr[n] = $6
	  if ($2 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/) cat[i] = 1 }
	END { for (n = 1; n <= nrow; n++) {
		i = rp[n]; x = rv[n]
		if (i in cat) {
			if (!((i, x) in pos)) { pos[i, x] = ncat[i]++; print pos[i, x] "\t" x > (d "/labels." i) }
			x = pos[i, x]
		}
		k = i SUBSEP rs[n]
		if (!(k in sn)) { sn[k] = ++ns[i]; sname[i, ns[i]] = rs[n] }
		print x, rt[n] > (d "/t." i "." sn[k])
		if (rr[n] != "") { has[i, sn[k]] = 1; print x, rr[n] > (d "/r." i "." sn[k]) } }
	  for (i = 1; i <= np; i++) {
		print pname[i] "\t" unit[i] > (d "/param." i)
		for (j = 1; j <= ns[i]; j++) print j "\t" sname[i, j] "\t" ((i, j) in has) > (d "/series." i) } }'

nparams=$(ls "$tmp"/param.* | wc -l)
{
	echo "set terminal svg size 960,$((420 * nparams)) dynamic font 'sans,12' background '#ffffff'"
	echo "set output '$svg'"
	echo "set termoption noenhanced"
	echo "set datafile separator ' '"
	echo "set multiplot layout $nparams,2 title \"$title\""
	echo "set grid; set key below; set style data linespoints; set yrange [0:*]"
	echo "set offsets graph 0.05, graph 0.05, graph 0.1, 0; set format x '%.0s%c'; set format y '%g'"
	for i in $(seq 1 "$nparams"); do
		IFS=$'\t' read -r pname unit <"$tmp/param.$i"
		read -r lo hi < <(cat "$tmp"/t."$i".* | awk 'NR == 1 || $1 < lo { lo = $1 }
			NR == 1 || $1 > hi { hi = $1 } END { print lo, hi }')
		if [ -f "$tmp/labels.$i" ]; then
			# Categories: one tick per value, no scale between them.  A series keeps its
			# colour in both panels (lt j), so that a peer's ratio reads against its throughput.
			tics=$(awk -F'\t' '{ printf "%s\"%s\" %s", (NR > 1 ? ", " : ""), $2, $1 }' "$tmp/labels.$i")
			n=$(wc -l <"$tmp/labels.$i")
			echo "unset logscale x; set xrange [-0.5:$n - 0.5]; set xtics ($tics)"
		elif [ "$lo" = "$hi" ]; then
			# One size or count: a single tick at it.
			echo "unset logscale x; set xrange [$lo * 0.5:$lo * 1.5]; set xtics ($lo)"
		elif awk -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo > 0 && hi / lo >= 20) }'; then
			echo "set logscale x; set xrange [*:*]; set xtics autofreq"
		else
			echo "unset logscale x; set xrange [*:*]; set xtics autofreq"
		fi
		# A count (system calls, instructions) is no rate: its panels say so.
		if [ "$unit" = count ]; then
			echo "set xlabel \"$pname\"; set ylabel 'count'; set title 'count'"
		else
			echo "set xlabel \"$pname\"; set ylabel \"throughput ($unit)\"; set title 'throughput'"
		fi
		plot=""
		while IFS=$'\t' read -r j name _; do
			plot+="${plot:+, }'$tmp/t.$i.$j' using 1:2 title \"$name\" lt $j lw 2 pt 7"
		done <"$tmp/series.$i"
		echo "plot $plot"
		if [ "$unit" = count ]; then
			echo "set ylabel 'peer count / imastream count'; set title 'the peer needs x times the calls of'"
		else
			echo "set ylabel 'peer time / imastream time'; set title 'imastream is x times faster than'"
		fi
		plot="1 title 'same speed' dt 2 lc rgb '#888888'"
		while IFS=$'\t' read -r j name has; do
			[ "$has" = 1 ] || continue
			plot+=", '$tmp/r.$i.$j' using 1:2 title \"$name\" lt $j lw 2 pt 7"
		done <"$tmp/series.$i"
		echo "plot $plot"
	done
	echo "unset multiplot"
} >"$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
echo "plot: $svg"
