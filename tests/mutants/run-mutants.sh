#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Mutation check: applies each fault of faults.txt to a scratch copy of the tree, rebuilds
# only what it touches, runs the tests that must catch it, and fails if any fault survives.
#
# Usage: run-mutants.sh BUILDDIR [NAME...]   (make check-mutants runs it)
# BUILDDIR is a configured build of this tree: the scratch build uses its configure
# arguments.  NAMEs pick faults; default every one.  KEEP=1 keeps the scratch folder.
# Output: one line per fault, "caught NAME by TEST: what it said" or "SURVIVED NAME", and a
# total.  Exit status: 0 every fault caught; 1 a fault survived, did not build or did not
# apply (the list is stale); 77 none survived but some could not be tried here (their
# tests skipped: no root, no rpm...).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] && [ -x "$1/config.status" ] ||
	{ echo "usage: $0 BUILDDIR [NAME...] (a configured build of $top)" >&2; exit 99; }
builddir=$(cd "$1" && pwd)
shift
list=$top/tests/mutants/faults.txt
jobs=$(nproc)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/imastream-mutants.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$scratch"' EXIT
src=$scratch/src build=$scratch/build
mkdir "$src" "$build"

# apply FILE OLD NEW: replaces the one occurrence of OLD (\n, \t escapes) in FILE.
apply() {
	perl -e '
		my ($f, $o, $n) = @ARGV;
		for ($o, $n) { s/\\n/\n/g; s/\\t/\t/g; }
		open(my $in, "<", $f) or die "$f: $!\n";
		my $s = do { local $/; <$in> };
		close($in);
		my $c = () = $s =~ /\Q$o\E/g;
		die "the text occurs $c times in $f, not once\n" if $c != 1;
		$s =~ s/\Q$o\E/$n/;
		open(my $out, ">", $f) or die "$f: $!\n";
		print $out $s;
		close($out) or die "$f: $!\n";
	' "$@"
}

# The faults asked for, each checked to apply to this tree before anything is built.
names=() files=() olds=() news=() testss=() programs=""
while IFS=$'\t' read -r name file old new tests; do
	case "$name" in '' | '#'*) continue ;; esac
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx -- "$name"; then
		continue
	fi
	if [ -z "$tests" ]; then
		echo "mutants: $name: fewer than five tab-separated fields in $list" >&2
		exit 1
	fi
	cp "$top/$file" "$scratch/probe"
	apply "$scratch/probe" "$old" "$new" 2>"$scratch/apply.err" ||
		{ echo "mutants: $name: does not apply to $file: $(cat "$scratch/apply.err")" >&2; exit 1; }
	names+=("$name") files+=("$file") olds+=("$old") news+=("$new") testss+=("$tests")
	for t in $tests; do
		case "$t" in *.sh) ;; *) programs="$programs $t" ;; esac
	done
done <"$list"
[ ${#names[@]} -gt 0 ] || { echo "mutants: no fault of that name in $list" >&2; exit 1; }
programs=$(printf '%s\n' $programs | sort -u | tr '\n' ' ')

# The tree as it is (uncommitted changes included), without git data, and a build of it.
# A build inside the tree (build/default) is copied along, its configuration moved to the
# copy, so that each fault re-makes only what its file touches; one elsewhere is
# configured afresh.
start=$(date +%s)
rel=${builddir#"$top"/}
tar -C "$top" --exclude=./.git --exclude=./build --exclude="./$rel" -cf - . |
	tar -C "$src" -xf - || { echo "mutants: cannot copy $top" >&2; exit 1; }
if [ "$rel" != "$builddir" ]; then
	build=$src/$rel
	mkdir -p "$build"
	tar -C "$top" --exclude='*.log' --exclude='*.trs' -cf - "$rel" | tar -C "$src" -xf - ||
		{ echo "mutants: cannot copy $builddir" >&2; exit 1; }
	sed -i -e "s|$builddir|$build|g" -e "s|$top|$src|g" "$build/config.status"
	(cd "$build" && ./config.status --quiet) >"$scratch/build.log" 2>&1 ||
		{ cat "$scratch/build.log" >&2; echo "mutants: config.status failed in the copy" >&2; exit 1; }
else
	eval "set -- $("$builddir/config.status" --config)"
	(cd "$build" && "$src/configure" --quiet "$@") >"$scratch/build.log" 2>&1 ||
		{ tail -n 30 "$scratch/build.log" >&2; echo "mutants: configure failed" >&2; exit 1; }
fi
# A fault that draws a warning is still a fault: no -Werror here.
werror="IMS_WARN_CFLAGS=$(sed -n 's/^IMS_WARN_CFLAGS = //p' "$build/Makefile" | sed 's/ -Werror//')"
# 'all' first, then the test programs: together, 'all' (a recursive make) and the
# programs would link the same convenience library at once.
if ! make -C "$build" -s -j"$jobs" "$werror" all >>"$scratch/build.log" 2>&1 ||
	! make -C "$build" -s -j"$jobs" "$werror" $programs >>"$scratch/build.log" 2>&1; then
	tail -n 30 "$scratch/build.log" >&2
	echo "mutants: the unchanged tree does not build" >&2
	exit 1
fi
echo "mutants: scratch build ready in $(($(date +%s) - start)) s"

caught=0 survived=0 broken=0 skipped=0
for i in "${!names[@]}"; do
	name=${names[$i]} file=${files[$i]} tests=${testss[$i]}
	t0=$(date +%s)
	cp -p "$src/$file" "$scratch/orig"
	apply "$src/$file" "${olds[$i]}" "${news[$i]}"
	progs=""
	for t in $tests; do
		case "$t" in *.sh) ;; *) progs="$progs $t" ;; esac
		rm -f "$build/$t.log" "$build/$t.trs"
	done
	# A unit test links the library statically: re-make only it.  A script runs the
	# commands and the rpm plugin: re-make everything.
	targets=$progs
	case " $tests" in *.sh*) targets="all" ;; esac
	if ! make -C "$build" -s -j"$jobs" "$werror" $targets >"$scratch/$name.build.log" 2>&1 ||
		! make -C "$build" -s -j"$jobs" "$werror" $progs >>"$scratch/$name.build.log" 2>&1; then
		echo "BROKEN $name: $file does not build with the fault (see the list)"
		tail -n 5 "$scratch/$name.build.log"
		broken=$((broken + 1))
	else
		make -C "$build" -s check-TESTS TESTS="$tests" check_PROGRAMS="$progs" \
			>"$scratch/$name.check.log" 2>&1
		by="" ran=0
		for t in $tests; do
			result=$(sed -n 's/^:test-result: //p' "$build/$t.trs" 2>/dev/null)
			[ "$result" = SKIP ] || [ -z "$result" ] || ran=1
			if [ "$result" = FAIL ]; then
				# What the test said went wrong: its FAIL line, an assertion, or its
				# last line before the driver's own.
				log=$build/$t.log
				said=$(grep -m1 '^FAIL: ' "$log" ||
					grep -m1 -E 'assertion failed|differs|wrong|mismatch|expected' "$log" ||
					grep -v '^FAIL tests/' "$log" | tail -n 1)
				said=$(printf '%s' "$said" | head -n 1 | cut -c1-200)
				by="$t: $said"
				break
			fi
		done
		if [ -n "$by" ]; then
			echo "caught $name by $by"
			caught=$((caught + 1))
		elif [ $ran = 0 ]; then
			echo "SKIPPED $name: $tests did not run here"
			skipped=$((skipped + 1))
		else
			echo "SURVIVED $name: $tests pass with $file changed"
			survived=$((survived + 1))
		fi
	fi
	# Restored with a new time stamp, so the next make rebuilds it.
	cp "$scratch/orig" "$src/$file"
	touch "$src/$file"
	echo "   ($(($(date +%s) - t0)) s)"
done

echo "mutants: $caught caught, $survived survived, $broken broken, $skipped not run"
[ $((survived + broken)) -eq 0 ] || exit 1
[ $skipped -eq 0 ] || exit 77
