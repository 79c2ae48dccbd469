#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every public header compiles alone, first in its translation unit, as C11 and as C++17.
set -euo pipefail
: "${top_srcdir:?}"
command -v gcc >/dev/null || { echo "SKIP: gcc is not installed"; exit 77; }
command -v g++ >/dev/null || { echo "SKIP: g++ is not installed (scripts/packages.txt lists it)"; exit 77; }
failures=0 checked=0
for h in "$top_srcdir"/include/imastream/*.h; do
	name=imastream/${h##*/}
	for compiler in "gcc -x c -std=c11" "g++ -x c++ -std=c++17"; do
		# shellcheck disable=SC2086
		if ! printf '#include <%s>\nint imastream_header_alone;\n' "$name" |
			$compiler -fsyntax-only -Wall -Wextra -Werror -I"$top_srcdir/include" - 2>err.$$; then
			echo "FAIL: $name does not compile alone with ${compiler%% *}:"
			cat err.$$
			failures=$((failures + 1))
		fi
		checked=$((checked + 1))
	done
done
rm -f err.$$
[ "$checked" -ge 20 ] || { echo "FAIL: only $checked header compilations (the headers moved?)"; exit 1; }
[ "$failures" = 0 ] || exit 1
echo "PASS: $checked header compilations"
