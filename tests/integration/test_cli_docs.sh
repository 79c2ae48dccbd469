#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every command's --help and man page list the same option spellings and arguments, every one is accepted, and imastream(1) names them all.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
man="$top_srcdir/man"
work=$(mktemp -d /tmp/test_cli_docs.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# help_entries: the option column of --help ("-k, --key KEY"), one per line, sorted.
help_entries() {
	grep -E '^(  -[A-Za-z0-9]|      --)' | sed -E 's/^ +//; s/  .*//' | sort
}

# man_entries PAGE: the tag line after each .TP of the OPTIONS section (its .SS
# subsections included), with the troff taken out, the same way.
man_entries() {
	awk '
	# The arguments of a macro line, quoted ones joined, as troff reads them.
	function args(line, a,   n, i, c, cur, inq, had) {
		n = 0; cur = ""; inq = 0; had = 0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (c == "\"") { inq = !inq; had = 1; continue }
			if (c == " " && !inq) {
				if (had || cur != "") { a[++n] = cur; cur = ""; had = 0 }
				continue
			}
			cur = cur c
		}
		if (had || cur != "") a[++n] = cur
		return n
	}
	/^\.SH OPTIONS/ { on = 1; next }
	/^\.SH / { on = 0 }
	on && /^\.T[PQ]/ { tag = 1; next }
	on && tag {
		tag = 0
		macro = $1
		n = args(substr($0, length(macro) + 2), a)
		out = ""
		# .B and .I put blanks between their arguments; .BR, .BI, ... alternate fonts
		# and join them.
		for (i = 1; i <= n; i++)
			out = out ((macro == ".B" || macro == ".I") && i > 1 ? " " : "") a[i]
		gsub(/\\f[BIRP]/, "", out)
		gsub(/\\-/, "-", out)
		print out
	}' "$1" | sort
}

commands=$("$imastream" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF && !/:$/ { print $1 }')
[ -n "$commands" ] || fail "imastream --help lists no commands"
all_help=$work/all-help.txt
: >"$all_help"
for cmd in $commands; do
	[ "$cmd" = version ] && continue
	page=$man/imastream-$cmd.1
	[ -f "$page" ] || { fail "$cmd has no man page"; continue; }
	"$imastream" "$cmd" --help >help.txt || fail "$cmd --help exits non-zero"
	help_entries <help.txt >help-opts.txt
	man_entries "$page" >man-opts.txt
	[ -s help-opts.txt ] || fail "$cmd --help lists no options"
	diff -u help-opts.txt man-opts.txt >diff.txt ||
		fail "$cmd: --help (-) and man/imastream-$cmd.1 (+) list different options: $(grep '^[-+][^-+]' diff.txt | tr '\n' ' ')"
	# No --help line wider than a terminal, but a path alone on its line, which configure
	# chose (--sysconfdir under make distcheck's prefix) and nothing can wrap.
	awk -v c="$cmd" '/^ *\/[^ ]*$/ { next } length > 80 { print "FAIL: " c " --help line " NR " has " length " columns"; bad = 1 }
		END { exit bad }' help.txt || failures=$((failures + 1))
	# Every spelling listed is one the parser takes: an unknown one would say so.
	for opt in $(grep -oE -- '(^| )-[A-Za-z0-9]\b|--[a-z][a-z-]*' help-opts.txt | tr -d ' ' | sort -u); do
		# keys: the option must be taken by one of its subcommands.
		case $cmd in keys) variants=("keys import" "keys id") ;; *) variants=("$cmd") ;; esac
		taken=no
		for words in "${variants[@]}"; do
			# shellcheck disable=SC2086
			"$imastream" $words "$opt" x </dev/null >/dev/null 2>err.txt || true
			grep -q "unknown option" err.txt || { taken=yes; break; }
		done
		[ $taken = yes ] || fail "$cmd: --help lists $opt, which the parser refuses"
	done
	cat help-opts.txt >>"$all_help"
	checks=$((checks + 1))
done
# keys: each subcommand prints the same help.
for sub in import list id; do
	"$imastream" keys "$sub" --help | cmp -s - <("$imastream" keys --help) ||
		fail "keys $sub --help is not keys --help"
done

# imastream(1): the command list of --help, and every long option any command takes.
"$imastream" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF && !/:$/ { print $1 }' | sort >cmds.txt
sed -n '/^\.SH COMMANDS/,/^\.SH /p' "$man/imastream.1" | awk '/^\.TP/ { getline; print $2 }' |
	sort >man-cmds.txt
diff -u cmds.txt man-cmds.txt || fail "imastream --help and man/imastream.1 list different commands"
grep -oE -- '--[a-z][a-z-]*' "$all_help" | sort -u >all-long.txt
sed -n '/^\.SH OPTIONS/,/^\.SH [^O]/p' "$man/imastream.1" | sed 's/\\-/-/g' |
	grep -oE -- '--[a-z][a-z-]*' | sort -u >man-long.txt
diff -u all-long.txt man-long.txt ||
	fail "the options of the commands (-) and of man/imastream.1 (+) differ"
checks=$((checks + 2))

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "PASS: $checks checks"
