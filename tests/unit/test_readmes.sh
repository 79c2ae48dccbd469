#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every folder of the floor block in docs/ARCHITECTURE.md says what it is in a README.md of
# the same shape, kept true by this test: its title, its floor and what it may include as
# the block says, what it must not, one line per source file; and every function the
# architecture document names in `name()` form exists in the sources.
# shellcheck disable=SC2016 # backquotes in patterns are Markdown's, not the shell's
set -euo pipefail
: "${top_srcdir:?}"
arch=${LAYERS_DOC:-$top_srcdir/docs/ARCHITECTURE.md}
[ -r "$arch" ] || { echo "FAIL: $arch is missing"; exit 1; }
arch=$(realpath "$arch") # (read again after the cd below)
cd "$top_srcdir"

# The floor block, read as tests/unit/test_layers.sh reads it: FLOOR FOLDER/ [HEADER...].
declare -A floor_of
folders=()
while read -r floor folder _; do
	case $floor in ''|'#'*) continue ;; esac
	[[ $floor =~ ^[0-9]+$ && $folder == */ ]] ||
		{ echo "FAIL: $arch: floor block line \"$floor $folder\" is not FLOOR FOLDER/"; exit 1; }
	folder=${folder%/}
	floor_of[$folder]=$floor
	folders+=("$folder")
done < <(awk '/^<!-- floors:/ { marked = 1; next }
	marked && /^```/ { if (inside) exit; inside = 1; next }
	inside' "$arch")
[ "${#folders[@]}" -ge 5 ] || { echo "FAIL: $arch: no floor block after <!-- floors: -->"; exit 1; }

failures=0 checked_files=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# paragraph README START: the paragraph of README whose first line starts with START, as one
# line ("" when there is none).
paragraph() {
	awk -v start="$2" 'found && /^[[:space:]]*$/ { exit }
		found { printf " %s", $0; next }
		index($0, start) == 1 { found = 1; printf "%s", $0 }
		END { if (found) print "" }' "$1"
}

# sorted_words WORD...: one a line, sorted, no duplicates.
sorted_words() {
	[ $# -eq 0 ] || printf '%s\n' "$@" | sort -u
}

for folder in "${folders[@]}"; do
	readme=$folder/README.md
	if [ ! -r "$readme" ]; then
		fail "$readme is missing (every folder of the floor block has one: see tests/unit/test_readmes.sh)"
		continue
	fi
	floor=${floor_of[$folder]}
	below=() beside=()
	for f in "${folders[@]}"; do
		if [ "${floor_of[$f]}" -lt "$floor" ]; then
			below+=("$f/")
		elif [ "${floor_of[$f]}" -eq "$floor" ] && [ "$f" != "$folder" ]; then
			beside+=("$f/")
		fi
	done

	[ "$(head -n1 "$readme")" = "<!-- SPDX-License-Identifier: LGPL-2.1-or-later -->" ] ||
		fail "$readme: the first line is not the SPDX comment"
	grep -q "^# $folder/ " "$readme" || fail "$readme: no title \"# $folder/ — what it is\""

	# The paragraph "May include (floor N): ..." names, in backquotes, exactly the folders
	# of the lower floors (the folder itself and include/imastream/ may be named too).
	line=$(paragraph "$readme" "May include (floor ")
	if [[ ! $line =~ ^May\ include\ \(floor\ [0-9]+\): ]]; then
		fail "$readme: no paragraph \"May include (floor $floor): ...\""
	else
		[[ $line == "May include (floor $floor):"* ]] ||
			fail "$readme: \"${line%%:*}\", but the floor block puts $folder/ on floor $floor"
		named=$(grep -o '`[a-z/]*/`' <<<"$line" | tr -d '`' |
			grep -vx -e "$folder/" -e 'include/imastream/' | sort -u || true)
		want=$(sorted_words "${below[@]}")
		if [ "$named" != "$want" ]; then
			fail "$readme: its May include paragraph and the floor block disagree (< the block's lower floors, > the paragraph's):"
			diff <(echo "$want") <(echo "$named") | grep '^[<>]' || true
		fi
	fi

	# The paragraph "Must not: ..." names every other folder of the same floor.
	line=$(paragraph "$readme" "Must not:")
	if [ -z "$line" ]; then
		fail "$readme: no paragraph \"Must not: ...\""
	else
		for f in "${beside[@]}"; do
			grep -qF "\`$f\`" <<<"$line" ||
				fail "$readme: its Must not paragraph does not name \`$f\`, on the same floor ($floor)"
		done
	fi

	# "## Files": one "- `NAME` — ..." line per .c and .h file below the folder (not in
	# a deeper folder of the block), NAME relative to the folder; each listed file exists.
	listed=$(awk '/^## Files[[:space:]]*$/ { inside = 1; next } /^## / { inside = 0 }
		inside && /^- `[^`]+`/ { split($0, f, "`"); print f[2] }' "$readme")
	if [ -z "$listed" ]; then
		fail "$readme: no \"## Files\" section of \"- \`NAME\` — what it does\" lines"
		continue
	fi
	dups=$(sort <<<"$listed" | uniq -d)
	[ -z "$dups" ] || fail "$readme: listed more than once: $(tr '\n' ' ' <<<"$dups")"
	while IFS= read -r name; do
		[ -e "$folder/$name" ] || fail "$readme lists \`$name\`, which is not in $folder/"
	done <<<"$listed"
	while IFS= read -r file; do
		deeper=""
		for f in "${folders[@]}"; do
			if [[ ${#f} -gt ${#folder} && $f == "$folder"/* && $file == "$f"/* ]]; then
				deeper=$f
			fi
		done
		[ -z "$deeper" ] || continue
		checked_files=$((checked_files + 1))
		name=${file#"$folder"/}
		grep -qxF -- "$name" <<<"$listed" ||
			fail "$readme has no line for $name: add \"- \`$name\` — what it does.\" under ## Files"
	done < <(find "$folder" -type f \( -name '*.c' -o -name '*.h' \) | sort)
done

# Every function docs/ARCHITECTURE.md names as `name()` is defined, declared or a macro in
# the sources (a static one counts: the drivers' table names them), so that a rename that
# forgets the document fails here.
mapfile -t cited < <(grep -o '`[a-z][a-z0-9_]*()`' "$arch" | tr -d '`()' | sort -u)
[ "${#cited[@]}" -ge 20 ] || fail "$arch: only ${#cited[@]} function names found (the pattern broke?)"
defined=$(find "${folders[@]}" include -type f \( -name '*.c' -o -name '*.h' \) -print0 |
	xargs -0 grep -hoE '^([A-Za-z_][^=;]*[ *]|#[[:space:]]*define[[:space:]]+)[a-z_][a-z0-9_]*\(' |
	grep -oE '[a-z_][a-z0-9_]*\($' | tr -d '(' | sort -u)
for fn in "${cited[@]}"; do
	grep -qxF -- "$fn" <<<"$defined" || fail "$arch names $fn(), which no source defines"
done

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "ok: ${#folders[@]} folder READMEs match the floor block and list their $checked_files source files; ${#cited[@]} functions of $(basename "$arch") exist"
