#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The floors of docs/ARCHITECTURE.md hold: no include runs up or sideways, no file includes
# another folder's private header, no folder's internal header declares a function another
# folder defines (the ground floor declaring what floors above it do), every folder with
# sources has a floor, and the document's table names the same folders in the same order
# as its floor block.
set -euo pipefail
: "${top_srcdir:?}"
arch=${LAYERS_DOC:-$top_srcdir/docs/ARCHITECTURE.md}
[ -r "$arch" ] || { echo "FAIL: $arch is missing"; exit 1; }

# The floor block: the fenced block after the "<!-- floors:" marker, one folder a line:
# FLOOR FOLDER/ [PUBLIC HEADER...].
declare -A floor_of owner_of
folders=()
while read -r floor folder headers; do
	case $floor in ''|'#'*) continue ;; esac
	[[ $floor =~ ^[0-9]+$ && $folder == */ ]] ||
		{ echo "FAIL: $arch: floor block line \"$floor $folder\" is not FLOOR FOLDER/"; exit 1; }
	folder=${folder%/}
	floor_of[$folder]=$floor
	folders+=("$folder")
	for h in $headers; do
		owner_of[$h]=$folder
	done
done < <(awk '/^<!-- floors:/ { marked = 1; next }
	marked && /^```/ { if (inside) exit; inside = 1; next }
	inside' "$arch")
[ "${#folders[@]}" -ge 5 ] || { echo "FAIL: $arch: no floor block after <!-- floors: -->"; exit 1; }

# The document's table lists the same folders, in the same order.
table=$(awk '/^## The layers/ { inside = 1; next } /^## / { inside = 0 }
	inside && /^\| `[^`]*\/` \|/ { split($0, f, "`"); sub(/\/$/, "", f[2]); print f[2] }' "$arch")
if [ "$table" != "$(printf '%s\n' "${folders[@]}")" ]; then
	echo "FAIL: $arch: the layer table's folders differ from the floor block's:"
	diff <(printf '%s\n' "${folders[@]}") <(printf '%s\n' "$table") || true
	exit 1
fi

# folder_of PATH: the longest floor folder PATH lies in, or "".
folder_of() {
	local best="" f
	for f in "${folders[@]}"; do
		if [[ $1 == "$f"/* && ${#f} -gt ${#best} ]]; then
			best=$f
		fi
	done
	printf '%s' "$best"
}

failures=0 files=0 includes=0
listed=$(mktemp)
trap 'rm -f "$listed"' EXIT
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# check FILE FOLDER: the quoted includes of FILE (a path below top_srcdir), in FOLDER.
check() {
	local file=$1 folder=$2 line inc target base
	while IFS= read -r line; do
		inc=${line#*\"}
		inc=${inc%%\"*}
		[[ $inc == */* ]] || continue # same folder, found beside the file
		includes=$((includes + 1))
		if [[ $inc == imastream/* ]]; then
			target=${owner_of[${inc#imastream/}]:-}
			[ -n "$target" ] ||
				{ fail "$file includes $inc, which no floor owns (add it to the floor block of docs/ARCHITECTURE.md)"; continue; }
		else
			target=$(folder_of "$inc")
			[ -n "$target" ] ||
				{ fail "$file includes $inc, which lies in no floor's folder"; continue; }
		fi
		[ "$target" = "$folder" ] && continue
		base=${inc##*/}
		if [[ $base == private.h || $base == *-private.h || $base == *_private.h ]] &&
			[ "$target" != common ]; then
			fail "$file includes $inc, the private header of $target/ (declare what it needs in a header of $target/ that says whom it serves)"
		elif [ "${floor_of[$target]}" -gt "${floor_of[$folder]}" ]; then
			fail "$file ($folder/, floor ${floor_of[$folder]}) includes $inc ($target/, floor ${floor_of[$target]}): an include runs up"
		elif [ "${floor_of[$target]}" -eq "${floor_of[$folder]}" ]; then
			fail "$file ($folder/) includes $inc ($target/): folders on one floor (${floor_of[$folder]}) do not include each other"
		fi
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$top_srcdir/$file" || true)
	files=$((files + 1))
}

# Every folder with C sources, judged by folder: a file added anywhere is checked.  Build
# trees (a config.status inside), tests/, bench/ (white-box) and the public headers
# (checked below, by owner) are not floors.
cd "$top_srcdir"
for dir in */; do
	dir=${dir%/}
	case $dir in tests | bench | include | _* | build-aux | autom4te.cache) continue ;; esac
	[ -z "$(find "$dir" -maxdepth 3 -name config.status -print -quit)" ] || continue
	while IFS= read -r file; do
		file=${file#./}
		folder=$(folder_of "$file")
		if [ -z "$folder" ]; then
			fail "$file lies in no folder of the floor block of docs/ARCHITECTURE.md"
			continue
		fi
		check "$file" "$folder"
		printf '%s\t%s\n' "$folder" "$file" >>"$listed"
	done < <(find "$dir" -type f \( -name '*.c' -o -name '*.h' \) | sort)
done
for h in include/imastream/*.h; do
	folder=${owner_of[${h##*/}]:-}
	if [ -z "$folder" ]; then
		fail "$h: no floor owns it (add it to the floor block of docs/ARCHITECTURE.md)"
		continue
	fi
	check "$h" "$folder"
done

mapfile -t sources < <(cut -f2 "$listed")
# An internal header declares what its own folder defines: an ims_ function (not static,
# not a typedef) declared in FOLDER's headers has its definition in FOLDER's sources.
declared=0
while IFS=$'\t' read -r folder fn header; do
	if [ "$folder" = "#declared" ]; then
		declared=$fn
		continue
	fi
	fail "$header declares $fn(), which no source of $folder/ defines (declare it in a header of the folder that does)"
done < <(awk -F'\t' '
	FNR == 1 && FILENAME != ARGV[1] { folder = of[FILENAME] }
	FILENAME == ARGV[1] { of[$2] = $1; next }
	/^(static|typedef|#|[ \t]|\/|\*)/ { next }
	{
		if (!match($0, /[ *]ims_[a-z0-9_]+\(/))
			next
		fn = substr($0, RSTART + 1, RLENGTH - 2)
		if (FILENAME ~ /\.h$/) {
			if (!((folder, fn) in decl))
				decl[folder, fn] = FILENAME
		} else if ($0 !~ /;[ \t]*$/) {
			def[folder, fn] = 1
		}
	}
	END {
		for (k in decl) {
			n++
			if (k in def)
				continue
			split(k, p, SUBSEP)
			printf "%s\t%s\t%s\n", p[1], p[2], decl[k]
		}
		printf "#declared\t%d\n", n
	}' "$listed" "${sources[@]}" | sort)

# An internal header's include guard names its folder (IMASTREAM_INSTALLED_ for installed/,
# IMASTREAM_PLUGIN_CORE_ for plugin/core/), so that a header moved between folders is seen.
guards=0
while IFS=$'\t' read -r folder file; do
	[[ $file == *.h ]] || continue
	guard=$(awk '/^#ifndef / { print $2; exit }' "$file")
	# A template included once per SIMD flavour (sha256_lanes.h) has no guard, on purpose.
	[ -n "$guard" ] || grep -q '^#include "hashers/private.h"' "$file" || fail "$file has no include guard"
	[ -n "$guard" ] || continue
	prefix=IMASTREAM_$(printf '%s' "$folder" | tr 'a-z/' 'A-Z_')_
	[[ $guard == "$prefix"* ]] || fail "$file: its include guard $guard does not start with $prefix, its folder's"
	guards=$((guards + 1))
done <"$listed"

# Two files of one name in two folders (private.h aside, a name that says whom it serves):
# the head of one of them (its first eight lines) names the other, to say how they differ.
namesakes=0
while read -r base paths; do
	read -ra group <<<"$paths"
	for ((i = 0; i < ${#group[@]}; i++)); do
		for ((j = i + 1; j < ${#group[@]}; j++)); do
			a=${group[i]} b=${group[j]}
			namesakes=$((namesakes + 1))
			[[ $(head -n 8 "$a") == *"$b"* || $(head -n 8 "$b") == *"$a"* ]] ||
				fail "$a and $b share the name $base: rename one, or say in its first lines how it differs from the other"
		done
	done
done < <(cut -f2 "$listed" | awk -F/ '$NF != "private.h" { n[$NF]++; p[$NF] = p[$NF] " " $0 }
	END { for (b in n) if (n[b] > 1) print b p[b] }')

if [ "$files" -lt 100 ] || [ "$includes" -lt 300 ] || [ "$declared" -lt 100 ]; then
	echo "FAIL: only $files files, $includes includes and $declared declarations checked (the tree moved?)"
	exit 1
fi
[ "$failures" = 0 ] || exit 1
echo "PASS: $includes includes of $files files keep to ${#folders[@]} folders' floors;" \
	"$declared internal functions are declared where they are defined; $guards include guards name their folders;" \
	"$namesakes pairs of files of one name say how they differ"
