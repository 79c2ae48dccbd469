#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fails when libimastream exports any symbol without the imastream_ prefix, a function no
# public header declares, or one libimastream(3) names no outside user for (by its header
# or by its name).
set -eu
lib="$top_builddir/.libs/libimastream.so"
man="$top_srcdir/man/libimastream.3"
[ -f "$lib" ] || { echo "missing $lib"; exit 99; }
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ && $2 != "A" { print $3 }' | grep -v '^imastream_' || true)
if [ -n "$bad" ]; then
	echo "exported symbols without the imastream_ prefix:"
	echo "$bad"
	exit 1
fi
count=$(nm -D --defined-only "$lib" | grep -c ' T imastream_' || true)
[ "$count" -gt 0 ] || { echo "no imastream_ functions exported at all"; exit 1; }
# The "Who uses it" section of the man page: the headers (and single functions of other
# headers) it gives an outside user.
section=$(sed -n '/^\.SS Who uses it/,/^\.SH/p' "$man")
used=$(printf '%s\n' "$section" | grep -o '[a-z_]*\.h' | sort -u)
[ -n "$used" ] || { echo "FAIL: $man has no \"Who uses it\" section naming headers"; exit 1; }
failures=0
for fn in $(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }'); do
	header=$(grep -l "IMASTREAM_API.*[ *]$fn(\|^[ \t]*$fn(" "$top_srcdir"/include/imastream/*.h | head -n 1)
	if [ -z "$header" ]; then
		echo "FAIL: $fn is exported but no public header declares it"
		failures=$((failures + 1))
	elif ! printf '%s\n' "$used" | grep -qx "${header##*/}" &&
		! printf '%s\n' "$section" | grep -qw "$fn"; then
		echo "FAIL: $fn is exported from ${header##*/}, but libimastream(3) names no outside user for either"
		failures=$((failures + 1))
	fi
done
[ "$failures" = 0 ] || exit 1
echo "ok: $count exported functions, all prefixed, each in a header libimastream(3) names a user for"
