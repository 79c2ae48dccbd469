#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No script that sets pipefail pipes a program into grep -q: grep exits at the first match,
# the writer may get SIGPIPE, and pipefail turns a match into a failure, now and then.
set -euo pipefail
: "${top_srcdir:?}"
command -v git >/dev/null || { echo "SKIP: git is not installed"; exit 77; }
[ -e "$top_srcdir/.git" ] || { echo "SKIP: not a git checkout (a release tarball)"; exit 77; }

# early_grep_pipes FILE: prints "line: text" for each pipe whose reader is grep -q (or
# grep -l/-m) and whose writer is not printf or echo, builtins that write in one go.
early_grep_pipes() {
	awk '
	function check(text, line,   n, parts, i, writer) {
		n = split(text, parts, /[^|]\|[ \t]*/)
		for (i = 2; i <= n; i++) {
			if (parts[i] !~ /^grep[ \t]+(-[A-Za-z]*[qlm]|--quiet|--max-count)/)
				continue
			writer = parts[i - 1]
			sub(/^.*(\|\||&&|;|\(|!|then|do|if|elif|while)[ \t]*/, "", writer)
			sub(/^[ \t]+/, "", writer)
			if (writer !~ /^(printf|echo)([ \t]|$)/)
				printf "%d: %s\n", line, text
		}
	}
	/^[ \t]*#/ { next }
	{
		if (joined == "") start = NR
		joined = joined $0
		if ($0 ~ /(\||\\)[ \t]*$/) { sub(/\\[ \t]*$/, "", joined); joined = joined " "; next }
		check(joined, start)
		joined = ""
	}' "$1"
}

# The check itself must be able to fail.
sample=$(mktemp)
trap 'rm -f "$sample"' EXIT
printf '%s\n' 'ldd "$so" | grep -q libasan && x' 'a || grep -q b file' \
	'printf "%s" "$v" | grep -qx y' 'getfattr -d f |' '	grep -q ima' >"$sample"
got=$(early_grep_pipes "$sample" | cut -d: -f1 | tr '\n' ' ')
[ "$got" = "1 4 " ] || { echo "FAIL: the checker found lines '$got' in its sample, not '1 4 '"; exit 1; }

failures=0 checked=0
while IFS= read -r f; do
	grep -q pipefail "$top_srcdir/$f" || continue
	# This script's own sample holds such pipes on purpose.
	[ "$f" != tests/unit/test_shell_pipes.sh ] || continue
	checked=$((checked + 1))
	while IFS= read -r hit; do
		echo "FAIL: $f:$hit: pipes into grep -q under pipefail (write grep ... >/dev/null)"
		failures=$((failures + 1))
	done < <(early_grep_pipes "$top_srcdir/$f")
done < <(git -C "$top_srcdir" ls-files '*.sh' 'scripts/*' '.ci/*' 'bench/*' | sort -u)
[ "$checked" -gt 0 ] || { echo "FAIL: no pipefail script found under $top_srcdir"; exit 1; }
echo "$checked pipefail scripts, $failures pipes into grep -q"
[ "$failures" = 0 ]
