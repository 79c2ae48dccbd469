#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No function outside tests/ runs over 100 lines and no C file over 600, but those listed
# below; a listed one that shrank under its limit must leave the list, so that it only shrinks.
set -euo pipefail
: "${top_srcdir:?}"
cd "$top_srcdir"

# Functions over 100 lines still waiting to be broken up, FILE:FUNCTION: none is left.
long_functions=""
# C files over 600 lines, at most three: each stays whole and says why in a comment at its
# top ("It stays whole").
long_files="
installed/relabel.c
plugin/core/chain.c
plugin/rpm/adapter.c
"

failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

mapfile -t sources < <(git ls-files '*.c' 2>/dev/null | grep -v '^tests/' ||
	find . -name '*.c' ! -path './tests/*' ! -path './build*' | sed 's|^\./||' | sort)
[ "${#sources[@]}" -ge 100 ] || { echo "FAIL: only ${#sources[@]} C files found (the tree moved?)"; exit 1; }

# A function's body runs from a "{" in column 0 to the next "}" in column 0 (the house
# style); its name is the last word before "(" on the line that opens its definition.
found_functions=$(awk '
	/^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0 }
	/^\{/ { start = FNR; name = sig; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name) }
	/^\}/ && start { if (FNR - start + 1 > 100) printf "%s:%s %d\n", FILENAME, name, FNR - start + 1; start = 0 }
	' "${sources[@]}")
found_files=$(wc -l "${sources[@]}" | awk '$2 != "total" && $1 > 600 { print $2, $1 }')

# check WHAT FOUND LISTED: each found one is listed, each listed one is found.
check() {
	local what=$1 found=$2 listed=$3 item size
	while read -r item size; do
		[ -n "$item" ] || continue
		grep -qxF "$item" <<<"$listed" || fail "$item has $size lines, over the limit for a $what (split it)"
	done <<<"$found"
	while read -r item; do
		[ -n "$item" ] || continue
		grep -q "^$item " <<<"$found" ||
			fail "$item is no longer a $what over the limit: take it off the list in $0"
	done <<<"$listed"
}
check function "$found_functions" "$long_functions"
check "C file" "$found_files" "$long_files"
[ "$(grep -c . <<<"$long_files")" -le 3 ] || fail "more than three C files over 600 lines are listed"
while read -r item; do
	[ -z "$item" ] || head -n 30 "$item" | grep "It stays whole" >/dev/null ||
		fail "$item: no comment at its top says why it stays whole (\"It stays whole\")"
done <<<"$long_files"

[ "$failures" = 0 ] || exit 1
echo "PASS: $(grep -c . <<<"$long_functions") functions over 100 lines and $(grep -c . <<<"$long_files") C files over 600 are the listed ones, of ${#sources[@]} files"
