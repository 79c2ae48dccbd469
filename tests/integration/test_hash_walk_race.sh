#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The walk's workers open the files the walker queued by name: the same output and messages with any -j, and names swapped for symlinks, FIFOs or other directories meanwhile are never followed nor blocked on.
set -uo pipefail

: "${top_builddir:?run through make check}"
bin="$top_builddir/imastream"
[ -x "$bin" ] || { echo "ERROR: $bin not built"; exit 99; }
command -v evmctl >/dev/null || { echo "SKIP: evmctl (ima-evm-utils) not installed"; exit 77; }
command -v getfattr >/dev/null || { echo "SKIP: getfattr (attr) not installed"; exit 77; }
command -v sha256sum >/dev/null || { echo "SKIP: sha256sum (coreutils) not installed"; exit 77; }

# Under the build tree: user.* xattrs work there.
work=$(mktemp -d "$top_builddir/hash-walk-race.XXXXXX") || exit 99
swapper=
trap '[ -z "$swapper" ] || kill "$swapper" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
has_ima() { getfattr --absolute-names -n user.ima "$1" >/dev/null 2>&1; }
# The summary's time differs from run to run.
no_time() { sed -E 's/, [0-9]+\.[0-9]{2} s$/, T s/' "$1"; }

# A tree with everything a walk meets: small and large files over several directories,
# FIFOs, symlinks to files and to directories (inside and outside the tree).
tree=$work/tree outside=$work/outside
mkdir -p "$tree/a/b" "$tree/c" "$tree/empty" "$outside"
echo outside >"$outside/target"
for i in $(seq 60); do head -c $((i * 97)) /dev/urandom >"$tree/a/s$i"; done
for i in $(seq 40); do head -c 4096 /dev/urandom >"$tree/a/b/p$i"; done
for size in 65536 65537 300000 1048577; do head -c $size /dev/urandom >"$tree/c/big$size"; done
mkfifo "$tree/fifo" "$tree/a/b/fifo"
ln -s s1 "$tree/a/link-to-file"
ln -s b "$tree/a/link-to-dir"
ln -s "$outside/target" "$tree/c/link-out"
ln -s "$outside" "$tree/c/link-out-dir"

# Every -j: the same stdout (evmctl's, byte for byte) and the same stderr, -v lines too.
evmctl ima_hash -r --xattr-user "$tree" >"$work/evmctl.out" 2>/dev/null
for j in 1 2 3; do
	timeout 60 "$bin" hash -r -v --xattr-user --no-names -j $j "$tree" >"$work/out-$j" 2>"$work/err-$j"
	rc=$?
	[ $rc -eq 0 ] || fail "-j $j: exit $rc, expected 0 (two FIFOs, skipped as evmctl skips them)"
	cmp -s "$work/evmctl.out" "$work/out-$j" || fail "-j $j: stdout differs from evmctl"
	# The backends' count after the summary may differ with the runs each thread had.
	grep -v 'digests of' "$work/err-$j" | no_time /dev/stdin >"$work/err-$j.cmp"
done
for j in 2 3; do
	cmp -s "$work/err-1.cmp" "$work/err-$j.cmp" ||
		fail "-j $j: stderr differs from -j 1: $(diff "$work/err-1.cmp" "$work/err-$j.cmp" | head -4 | tr '\n' ' ')"
done
[ "$(grep -c 'skipped (FIFO)$' "$work/err-1")" -eq 2 ] ||
	fail "-v does not name the two FIFOs once each: $(cat "$work/err-1")"
[ "$(grep -c 'skipped (symbolic link)' "$work/err-1")" -eq 4 ] ||
	fail "-v does not name the four symlinks: $(cat "$work/err-1")"
has_ima "$outside/target" && fail "a symlink out of the tree was followed"

# Named on the command line: files, a FIFO, a symlink, a device and a missing name mixed;
# each one that is not a regular file is one error line, in the order given, any -j.
f1=$tree/a/s1 f2=$tree/a/b/p1
for j in 1 2; do
	timeout 60 "$bin" hash --xattr-user -j $j "$f1" "$tree/fifo" "$f2" "$tree/a/link-to-file" \
		/dev/null "$work/missing" "$f1" >"$work/args-out-$j" 2>"$work/args-err-$j"
	rc=$?
	[ $rc -eq 1 ] || fail "arguments -j $j: exit $rc, expected 1"
	[ "$(wc -l <"$work/args-out-$j")" -eq 3 ] || fail "arguments -j $j: not 3 files done"
done
printf '%s\n' "imastream hash: $tree/fifo: not a regular file (FIFO)" \
	"imastream hash: $tree/a/link-to-file: not a regular file (symbolic link)" \
	"imastream hash: /dev/null: not a regular file (character device)" \
	"imastream hash: $work/missing: No such file or directory" >"$work/args-want"
for j in 1 2; do
	cmp -s "$work/args-want" "$work/args-err-$j" ||
		fail "arguments -j $j: stderr: $(cat "$work/args-err-$j")"
done
cmp -s "$work/args-out-1" "$work/args-out-2" || fail "arguments: -j 2 output differs from -j 1"

# An unreadable file inside a walk, as an unprivileged user (root reads everything): one
# line in walk order, whatever the number of threads.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# Out of the build tree, which nobody may not be able to enter.
	nob=$(mktemp -d /tmp/hash-walk-nobody.XXXXXX) || exit 99
	mkdir -p "$nob/t"
	for i in $(seq 30); do echo "$i" >"$nob/t/f$i"; done
	chmod 000 "$nob/t/f7" "$nob/t/f21"
	chown -R 65534:65534 "$nob"
	"$bin" --version >/dev/null # let libtool's wrapper finish any first-run setup as root
	for j in 1 2; do
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$bin" hash -r -n --no-names -j $j "$nob/t" >"$work/nob-out-$j" 2>"$work/nob-err-$j"
		[ $? -eq 1 ] || fail "unreadable files -j $j: exit status not 1"
		no_time "$work/nob-err-$j" >"$work/nob-err-$j.cmp"
	done
	[ "$(grep -c 'cannot open: Permission denied' "$work/nob-err-1")" -eq 2 ] ||
		fail "unreadable files: $(cat "$work/nob-err-1")"
	cmp -s "$work/nob-err-1.cmp" "$work/nob-err-2.cmp" || fail "unreadable files: stderr differs with -j 2"
	cmp -s "$work/nob-out-1" "$work/nob-out-2" || fail "unreadable files: stdout differs with -j 2"
	[ "$(wc -l <"$work/nob-out-2")" -eq 28 ] || fail "unreadable files: not 28 files done"
	rm -rf "$nob"
else
	echo "note: not root or no setpriv; unreadable-file case not run"
fi

# The race: while hash -r -j 2 runs, names it has read as files become symlinks (out of
# the tree) or FIFOs and back, and a directory becomes a symlink to one outside.  A worker
# must skip what is no longer a regular file: no hang on a FIFO (timeout), nothing written
# outside, only the files' own digests printed, and no message but the walk's.
race=$work/race swap=$work/swap # the swapper's names stay out of the walked tree
mkdir -p "$race/dir" "$outside/dir" "$swap"
echo outside >"$outside/dir/file"
for i in $(seq 20); do echo "regular $i" >"$race/n$i"; done
for i in $(seq 200); do echo "filler $i" >"$race/dir/m$i"; done
: >"$work/want-lines"
for i in $(seq 20); do
	printf '0404%s  %s\n' "$(echo "regular $i" | sha256sum | cut -d' ' -f1)" "$race/n$i" >>"$work/want-lines"
done
for i in $(seq 200); do
	printf '0404%s  %s\n' "$(echo "filler $i" | sha256sum | cut -d' ' -f1)" "$race/dir/m$i" >>"$work/want-lines"
done
(
	k=0
	while :; do
		i=$((k % 20 + 1))
		case $((k % 3)) in
		0) ln -sfn "$outside/target" "$swap/tmp" ;;
		1) rm -f "$swap/tmp" && mkfifo "$swap/tmp" ;;
		2) echo "regular $i" >"$swap/tmp" ;;
		esac
		mv -T "$swap/tmp" "$race/n$i"
		# The directory: a symlink out of the tree, then back.
		mv -T "$race/dir" "$swap/dir" && ln -sfn "$outside/dir" "$race/dir"
		rm -f "$race/dir" && mv -T "$swap/dir" "$race/dir"
		k=$((k + 1))
	done
) 2>/dev/null &
swapper=$!
for round in $(seq 40); do
	timeout 20 "$bin" hash -r -n --xattr-user -j 2 "$race" >"$work/race-out" 2>"$work/race-err"
	rc=$?
	[ $rc -ne 124 ] || { fail "round $round: hung (a FIFO opened without O_NONBLOCK?)"; break; }
	[ $rc -le 1 ] || fail "round $round: exit $rc"
	grep -Fxv -f "$work/want-lines" "$work/race-out" >"$work/race-bad" &&
		fail "round $round: lines that are not a file's own digest: $(head -2 "$work/race-bad")"
	# The directory may be away just when the walk enters it: the test's race, not the walk's.
	grep -Ev '^imastream hash: [0-9]+ files, |race/dir: cannot open directory: No such file or directory$' \
		"$work/race-err" >"$work/race-bad" &&
		fail "round $round: unexpected stderr: $(head -2 "$work/race-bad")"
done
kill "$swapper" 2>/dev/null
wait "$swapper" 2>/dev/null
swapper=
has_ima "$outside/target" && fail "race: a symlink to a file out of the tree was followed"
has_ima "$outside/dir/file" && fail "race: a symlink to a directory out of the tree was followed"

[ $failures -eq 0 ] || exit 1
echo "walk: same output with -j 1, 2, 3; nothing followed or blocked on in 40 racing rounds"
