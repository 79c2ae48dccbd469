#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fails when libimastream exports any symbol without the imastream_ prefix.
set -eu
lib="$top_builddir/.libs/libimastream.so"
[ -f "$lib" ] || { echo "missing $lib"; exit 99; }
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ && $2 != "A" { print $3 }' | grep -v '^imastream_' || true)
if [ -n "$bad" ]; then
	echo "exported symbols without the imastream_ prefix:"
	echo "$bad"
	exit 1
fi
count=$(nm -D --defined-only "$lib" | grep -c ' T imastream_' || true)
[ "$count" -gt 0 ] || { echo "no imastream_ functions exported at all"; exit 1; }
echo "ok: $count exported functions, all prefixed"
