#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Checks that the benchmark table quotes the runs whose CSV files and plots are committed
# in bench/results, and that a headline table quotes that table: no benchmark is run.
#
# Usage: check-figures.sh TABLE RESULTS_DIR [HEADLINE]
# For every RESULTS_DIR/NAME.csv, the TABLE rows of `bench-NAME` (its row and the
# "same" rows after it) must quote the CSV's ratios (peer time / imastream time) as
# xN or Nx: every ratio of a peer series with one or two points, the lowest and the
# highest of a longer one. A quoted figure matches when it is the CSV's value rounded to
# the figure's own digits (either may have been rounded once). Prints one line per
# figure missing and exits 1; prints what it checked and exits 0 otherwise.
# With HEADLINE (the top README), every CSV's benchmark has a row there too, and each bold
# figure of a HEADLINE row of `bench-NAME` ("**x32.2**", "**x15 to x17**") is one of
# TABLE's figures for bench-NAME, within rounding, and one of its CSV's ratios (or their
# inverse: "0.079x of rpm -Va" is the CSV's x12.6), so that its plot shows the headline;
# a headline row needs a committed CSV, and one that names P-256 names P-384 too.
# The CSVs and plots themselves: every CSV has its SVG shown in TABLE's gallery
# ("](results/NAME.svg)"); every panel (param) has a peer row, or its ratio panel is
# empty; a series is either ours or a peer's (a line that joins both plots programs on
# the x axis and joins different peers); a CSV that names P-256 names P-384 too.
# A bold figure in TABLE's prose ("- **... 1.70x of the limit.**") is one of the table's
# figures, of the rows of the `bench-NAME` it names (it must name one).
set -euo pipefail

readme=$1 results=$2 headline=${3:-}
[ -r "$readme" ] || { echo "check-figures: cannot read $readme" >&2; exit 2; }
[ -z "$headline" ] || [ -r "$headline" ] || { echo "check-figures: cannot read $headline" >&2; exit 2; }
shopt -s nullglob
csvs=("$results"/*.csv)
[ ${#csvs[@]} -gt 0 ] || { echo "check-figures: no CSV in $results" >&2; exit 2; }

# A table's rows by target: a row whose command cell names `bench-NAME`, and the rows
# after it whose command cell is "same ...". $2: the file (TABLE by default).
rows_of() {
	awk -v t="bench-$1" '
		/^\|/ {
			# An escaped pipe inside a cell does not end it.
			line = $0; gsub(/\\\|/, " ", line)
			if (split(line, cell, "|") < 4) { cur = 0; next }
			cmd = cell[3]
			if (cmd ~ /^ *same/) { if (cur) print; next }
			cur = 0
			s = cmd
			while ((i = index(s, t)) > 0) {
				c = substr(s, i + length(t), 1)
				if (c !~ /[-a-z0-9]/) { cur = 1; break }
				s = substr(s, i + length(t))
			}
			if (cur) print
			next }
		{ cur = 0 }' "${2:-$readme}"
}

# Whether figure $1 is one of the figures (one a line) in $2, within rounding.
matches() {
	awk -v r="$1" -v figs="$2" 'function digits(s) { return index(s, ".") ? length(s) - index(s, ".") : 0 }
		BEGIN { n = split(figs, f, "\n")
			for (i = 1; i <= n; i++) {
				tol = 0.5 * 10 ^ -digits(f[i]) + 0.5 * 10 ^ -digits(r) + 1e-9
				d = f[i] - r; if (d < 0) d = -d
				if (f[i] != "" && d <= tol) exit 0 }
			exit 1 }'
}

missing=0 checked=0
for csv in "${csvs[@]}"; do
	name=$(basename "$csv" .csv)
	rows=$(rows_of "$name")
	if [ -z "$rows" ]; then
		echo "check-figures: $readme has no table row for bench-$name ($csv)"
		missing=$((missing + 1))
		continue
	fi
	# The figures the rows quote: "x2.82", "2.82x", "**x19.0**".
	figures=$(grep -oE '(x[0-9]+(\.[0-9]+)?|[0-9]+(\.[0-9]+)?x)' <<<"$rows" | tr -d x | sort -u)
	# The ratios to find: param, value, series, ratio of each peer row to quote.
	wanted=$(tail -n +2 "$csv" | awk -F, '$6 != "" {
			k = $1 SUBSEP $3; n[k]++; r[k, n[k]] = $6; v[k, n[k]] = $2; keys[k] = 1 }
		END { for (k in keys) {
			split(k, ps, SUBSEP)
			if (n[k] <= 2) { for (i = 1; i <= n[k]; i++) print ps[2] " at " v[k, i] "\t" r[k, i]; continue }
			lo = hi = 1
			for (i = 2; i <= n[k]; i++) { if (r[k, i] + 0 < r[k, lo] + 0) lo = i; if (r[k, i] + 0 > r[k, hi] + 0) hi = i }
			print ps[2] " lowest (" v[k, lo] ")\t" r[k, lo]
			print ps[2] " highest (" v[k, hi] ")\t" r[k, hi] } }')
	while IFS=$'\t' read -r what ratio; do
		[ -n "$ratio" ] || continue
		checked=$((checked + 1))
		if ! matches "$ratio" "$figures"; then
			echo "check-figures: bench-$name: $what: the CSV says x$ratio, the rows of $readme do not ($csv)"
			missing=$((missing + 1))
		fi
	done <<<"$wanted"
done
# The CSVs and their plots.
for csv in "${csvs[@]}"; do
	name=$(basename "$csv" .csv)
	[ -e "$results/$name.svg" ] || { echo "check-figures: $csv has no plot $results/$name.svg"; missing=$((missing + 1)); }
	grep -qF "](results/$name.svg)" "$readme" ||
		{ echo "check-figures: $readme does not show results/$name.svg in its gallery"; missing=$((missing + 1)); }
	bad=$(tail -n +2 "$csv" | awk -F, -v f="$csv" '
		{ seen[$1] = 1; if ($6 != "") { peer[$1] = 1; p[$1 SUBSEP $3] = 1 } else o[$1 SUBSEP $3] = 1
		  k = tolower($2 $3); if (k ~ /p-?256/) e256 = 1; if (k ~ /p-?384/) e384 = 1 }
		END {
			for (k in seen) if (!(k in peer)) print "check-figures: " f ": the panel \"" k "\" has no peer row: its ratio plot is empty"
			for (k in p) if (k in o) { split(k, a, SUBSEP)
				print "check-figures: " f ": the series \"" a[2] "\" of \"" a[1] "\" has rows of ours and of peers: one line joins different programs (the x axis should be a condition, the programs series)" }
			if (e256 && !e384) print "check-figures: " f ": P-256 without P-384 (docs/SETUP.md recommends P-384)" }')
	if [ -n "$bad" ]; then
		echo "$bad"
		missing=$((missing + $(wc -l <<<"$bad")))
	fi
done

# Bold figures in TABLE's prose: outside the tables, each is a figure of the table (a
# bold span may run over several lines: the prose is read as one line).
while IFS= read -r span; do
	[ -n "$span" ] || continue
	grep -qE '(x[0-9]+(\.[0-9]+)?|[0-9]+(\.[0-9]+)?x)' <<<"$span" || continue
	bench=$(grep -oE 'bench-[a-z0-9-]+' <<<"$span" | head -n 1 || true)
	if [ -z "$bench" ]; then
		echo "check-figures: $readme: \"$span\" names no \`bench-NAME\` whose rows hold its figures"
		missing=$((missing + 1))
		continue
	fi
	# Targets ("target ≥2x") are no measurement a figure may quote.
	figs=$(rows_of "${bench#bench-}" | sed -E 's/(≥|≤|<=|>=) *x?[0-9.]+x?//g')
	figs=$(grep -oE '(x[0-9]+(\.[0-9]+)?|[0-9]+(\.[0-9]+)?x)' <<<"$figs" | tr -d x | sort -u || true)
	for figure in $(grep -oE '(x[0-9]+(\.[0-9]+)?|[0-9]+(\.[0-9]+)?x)' <<<"$span" | tr -d x); do
		checked=$((checked + 1))
		matches "$figure" "$figs" && continue
		echo "check-figures: $readme: \"$span\" quotes x$figure, which the rows of $bench do not"
		missing=$((missing + 1))
	done
done < <(grep -vE '^\|' "$readme" | tr '\n' ' ' | grep -oE '\*\*[^*]+\*\*' || true)

headlines=0
if [ -n "$headline" ]; then
	# The targets the headline rows name, and every CSV's.
	names=$( (grep -E '^\|' "$headline" | grep -oE 'bench-[a-z0-9-]+' | sed 's/^bench-//'
		for csv in "${csvs[@]}"; do basename "$csv" .csv; done) | sort -u)
	for name in $names; do
		rows=$(rows_of "$name" "$headline")
		if [ -z "$rows" ]; then
			[ -e "$results/$name.csv" ] || continue
			echo "check-figures: $headline has no headline row for bench-$name"
			missing=$((missing + 1))
			continue
		fi
		if [ ! -e "$results/$name.csv" ]; then
			echo "check-figures: $headline: the headline of bench-$name has no committed run ($results/$name.csv): commit it or drop the claim"
			missing=$((missing + 1))
			continue
		fi
		if grep -q 'P-256' <<<"$rows" && ! grep -q 'P-384' <<<"$rows"; then
			echo "check-figures: $headline: the headline of bench-$name gives P-256 without P-384 (docs/SETUP.md recommends P-384)"
			missing=$((missing + 1))
		fi
		bold=$(grep -oE '\*\*[^*]+\*\*' <<<"$rows" |
			grep -oE '(x[0-9]+(\.[0-9]+)?|[0-9]+(\.[0-9]+)?x)' | tr -d x | sort -u || true)
		if [ -z "$bold" ]; then
			echo "check-figures: $headline: the row of bench-$name has no bold figure"
			missing=$((missing + 1))
			continue
		fi
		# The CSV's ratios and their inverses: what its plot shows.
		plotted=$(tail -n +2 "$results/$name.csv" | awk -F, '$6 != "" { print $6; printf "%.6g\n", 1 / $6 }')
		figures=$(rows_of "$name" | grep -oE '(x[0-9]+(\.[0-9]+)?|[0-9]+(\.[0-9]+)?x)' | tr -d x | sort -u)
		for figure in $bold; do
			headlines=$((headlines + 1))
			if ! matches "$figure" "$figures"; then
				echo "check-figures: bench-$name: $headline quotes x$figure, the rows of $readme do not"
				missing=$((missing + 1))
			fi
			if ! matches "$figure" "$plotted"; then
				echo "check-figures: bench-$name: $headline quotes x$figure, which its plot ($results/$name.csv) does not show"
				missing=$((missing + 1))
			fi
		done
	done
fi
[ "$missing" = 0 ] || exit 1
echo "check-figures: $checked figures of ${#csvs[@]} CSV files quoted in $readme"
[ -z "$headline" ] || echo "check-figures: $headlines headline figures of $headline quoted in $readme"
