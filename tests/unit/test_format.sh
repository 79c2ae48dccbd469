#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The C lines changed since the house style was set (the commit that added .clang-format)
# are in that style (.clang-format); older lines are left as they are.  Every commit after
# that one is judged, whichever commit is last and however it landed (a merge included), so
# what CI checks does not depend on the shape of the last step.  IMASTREAM_FORMAT_BASE=REV
# judges everything since REV instead.  Renamed files count only for the lines they
# change, and a hunk of string literals only (help text) not at all.  Fix what it reports
# with:
#   git diff -M -U0 BASE -- '*.c' '*.h' | clang-format-diff -p1 -i
set -euo pipefail
: "${top_srcdir:?}"
cd "$top_srcdir"
[ -e .git ] || { echo "SKIP: not a git checkout (a release tarball): no change to check"; exit 77; }
command -v git >/dev/null || { echo "SKIP: git is not installed"; exit 77; }
fmt_diff=$(command -v clang-format-diff || command -v clang-format-diff-14 || true)
if [ -z "$fmt_diff" ] || ! command -v clang-format >/dev/null; then
	echo "SKIP: clang-format is not installed (scripts/packages.txt lists it)"
	exit 77
fi
[ -f .clang-format ] || { echo "FAIL: .clang-format is missing"; exit 1; }

base=${IMASTREAM_FORMAT_BASE:-}
if [ -z "$base" ]; then
	base=$(git log --diff-filter=A --format=%H -- .clang-format | tail -n 1)
	[ -n "$base" ] ||
		{ echo "SKIP: no commit here adds .clang-format (a shallow clone?): nothing to compare with"; exit 77; }
fi
git rev-parse -q --verify "$base^{commit}" >/dev/null || { echo "FAIL: no commit $base"; exit 1; }

# A hunk that only adds lines of string literals (help and message text) is text, not
# layout: the house writes an initializer's continued strings one tab in, which
# clang-format 14 cannot express, and would reindent the whole initializer around it.
text_only_hunks_dropped() {
	awk '
		function flush() { if (hunk != "" && code) printf "%s", hunk; hunk = ""; code = 0 }
		/^@@/ { flush(); hunk = $0 "\n"; next }
		/^(diff |index |--- |\+\+\+ |similarity |rename |new file|deleted file)/ {
			flush(); print; next }
		{ hunk = hunk $0 "\n"; if ($0 ~ /^\+/ && $0 !~ /^\+[ \t]*"/) code = 1 }
		END { flush() }'
}
changed=$(git diff -M -U0 --no-color --diff-filter=AMR "$base" -- '*.c' '*.h' | text_only_hunks_dropped)
if ! printf '%s\n' "$changed" | grep '^@@' >/dev/null; then
	echo "PASS: no C line changed since $(git rev-parse --short "$base")"
	exit 0
fi
out=$(printf '%s\n' "$changed" | "$fmt_diff" -p1)
if [ -n "$out" ]; then
	printf '%s\n' "$out"
	echo "FAIL: C lines changed since $(git rev-parse --short "$base") are not in the house style (.clang-format);"
	echo "      fix: git diff -M -U0 $base -- '*.c' '*.h' | clang-format-diff -p1 -i"
	exit 1
fi
echo "PASS: $(printf '%s\n' "$changed" | grep -c '^+[^+]' || true) C lines changed since $(git rev-parse --short "$base") are in the house style"
