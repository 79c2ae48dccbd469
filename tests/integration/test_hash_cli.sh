#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream hash against evmctl ima_hash (same values, same xattr bytes) and sha*sum (same lines); one line per failure.
set -uo pipefail

: "${top_builddir:?run through make check}"
bin="$top_builddir/imastream"
command -v evmctl >/dev/null || { echo "SKIP: evmctl (ima-evm-utils) not installed"; exit 77; }
command -v getfattr >/dev/null || { echo "SKIP: getfattr (attr) not installed"; exit 77; }
[ -x "$bin" ] || { echo "ERROR: $bin not built"; exit 99; }

# Under the build tree (ext4 here): user.* and security.* xattrs both work there.
work=$(mktemp -d "$top_builddir/hash-cli.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# hexattr NAME FILE: the raw value in hex, or "-" when absent.
hexattr() {
	getfattr -h --absolute-names --only-values -n "$1" "$2" 2>/dev/null | od -An -v -tx1 | tr -d ' \n'
	[ "${PIPESTATUS[0]}" -eq 0 ] || printf -- -
}

clear_attr() { find "$1" -type f -exec setfattr -x "$2" {} + 2>/dev/null; true; }

# Random files of the sizes that matter to block-oriented hashing, in a small tree.
tree=$work/tree
mkdir -p "$tree/sub/deeper" "$tree/empty-dir"
i=0
for size in 0 1 55 56 63 64 65 127 128 129 4095 4096 4097 65535 65536 65537 \
	1048575 1048576 1048577 3000000; do
	case $((i % 3)) in 0) dir=$tree ;; 1) dir=$tree/sub ;; 2) dir=$tree/sub/deeper ;; esac
	head -c "$size" /dev/urandom >"$dir/f$size"
	i=$((i + 1))
done
# Symlinks (to a file and to a dir) a walk must skip without following, as evmctl does.
ln -s f0 "$tree/link-to-file"
ln -s sub "$tree/link-to-dir"
files=$(find "$tree" -type f | sort)
bytes=$(find "$tree" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')
# The summary's size: bytes below 1 KiB, else KiB, MiB... with one decimal.
summary_size=$(awk -v n="$bytes" 'BEGIN { if (n < 1024) { print n " bytes"; exit }
	split("KiB MiB GiB", u, " "); v = n / 1024; i = 1; while (v >= 1024 && i < 3) { v /= 1024; i++ }
	printf "%.1f %s\n", v, u[i] }')

for mode in user security; do
	if [ $mode = user ]; then opt=--xattr-user; name=user.ima; else opt=; name=security.ima; fi
	for alg in sha1 sha256 sha512; do
		# One file at a time (evmctl ima_hash takes one), then the same list in one call.
		clear_attr "$tree" $name
		: >"$work/evmctl.out"
		declare -A want=()
		for f in $files; do
			evmctl ima_hash $opt -a $alg "$f" >>"$work/evmctl.out" 2>/dev/null ||
				fail "evmctl ima_hash $opt -a $alg $f"
			want[$f]=$(hexattr $name "$f")
		done
		clear_attr "$tree" $name
		# shellcheck disable=SC2086
		"$bin" hash --no-names $opt -a $alg $files >"$work/ours.out" 2>"$work/ours.err" ||
			fail "imastream hash $opt -a $alg exited $?: $(cat "$work/ours.err")"
		cmp -s "$work/evmctl.out" "$work/ours.out" || fail "$mode $alg: stdout differs from evmctl"
		# With the names (the default): sha256sum's lines, with the xattr's header bytes.
		case $alg in sha1) head=01 ;; sha256) head=0404 ;; sha512) head=0406 ;; esac
		# shellcheck disable=SC2086
		"$bin" hash -n $opt -a $alg $files | sed "s/^$head//" >"$work/ours-named.out"
		# shellcheck disable=SC2086
		${alg}sum $files >"$work/sum.out"
		cmp -s "$work/sum.out" "$work/ours-named.out" || fail "$mode $alg: not ${alg}sum's lines"
		for f in $files; do
			got=$(hexattr $name "$f")
			[ "$got" = "${want[$f]}" ] || fail "$mode $alg $f: $name $got, evmctl ${want[$f]}"
		done
		[ ! -s "$work/ours.err" ] || fail "$mode $alg: unexpected stderr: $(cat "$work/ours.err")"

		# -r over the same tree: same order (directory order), same bytes.
		clear_attr "$tree" $name
		evmctl ima_hash -r $opt -a $alg "$tree" >"$work/evmctl-r.out" 2>/dev/null
		for f in $files; do want[$f]=$(hexattr $name "$f"); done
		clear_attr "$tree" $name
		"$bin" hash -r --no-names $opt -a $alg "$tree" >"$work/ours-r.out" 2>"$work/ours.err" ||
			fail "imastream hash -r $opt -a $alg exited $?: $(cat "$work/ours.err")"
		cmp -s "$work/evmctl-r.out" "$work/ours-r.out" ||
			fail "$mode $alg -r: stdout differs from evmctl"
		# stderr holds the summary, and nothing else.
		grep -Eqx "imastream hash: 20 files, $summary_size, 0 failures, [0-9]+\.[0-9]{2} s" \
			"$work/ours.err" || fail "$mode $alg -r: summary: $(cat "$work/ours.err")"
		: >"$work/ours.err"
		[ "$(wc -l <"$work/ours-r.out")" -eq "$(echo "$files" | wc -l)" ] ||
			fail "$mode $alg -r: not one line per regular file"
		for f in $files; do
			got=$(hexattr $name "$f")
			[ "$got" = "${want[$f]}" ] || fail "$mode $alg -r $f: $name $got, evmctl ${want[$f]}"
		done
		[ ! -s "$work/ours.err" ] || fail "$mode $alg -r: unexpected stderr: $(cat "$work/ours.err")"
		# Any number of hashing threads: still the walk order.
		for j in 1 3 17; do
			"$bin" hash -r -n -j $j --no-names --quiet $opt -a $alg "$tree" >"$work/ours-j.out" 2>&1
			cmp -s "$work/evmctl-r.out" "$work/ours-j.out" || fail "$mode $alg -r -j $j: stdout differs"
		done
		unset want
	done
done
# Symlinks were skipped, not followed: the links themselves carry nothing.
[ "$(hexattr security.ima "$tree/link-to-file" 2>/dev/null)" = - ] ||
	fail "a symlink got security.ima"

# expect_one_error NAME EXPECTED-TEXT FILE-THAT-MUST-BE-DONE... -- COMMAND...
# The command must exit non-zero with exactly one stderr line containing the text, and
# every listed file must still have user.ima.
expect_one_error() {
	local what=$1 text=$2 rc lines
	shift 2
	local done_files=()
	while [ "$1" != -- ]; do done_files+=("$1"); shift; done
	shift
	"$@" >"$work/err.out" 2>"$work/err.err"
	rc=$?
	lines=$(wc -l <"$work/err.err")
	[ $rc -ne 0 ] || fail "$what: exit status 0"
	[ "$lines" -eq 1 ] || fail "$what: $lines stderr lines: $(cat "$work/err.err")"
	grep -q -- "$text" "$work/err.err" || fail "$what: message lacks '$text': $(cat "$work/err.err")"
	for f in "${done_files[@]}"; do
		[ "$(hexattr user.ima "$f")" != - ] || fail "$what: $f was not done"
	done
	[ "$(wc -l <"$work/err.out")" -eq ${#done_files[@]} ] ||
		fail "$what: stdout should have one line per file done"
}

ok1=$work/ok1 ok2=$work/ok2
echo one >"$ok1"
echo two >"$ok2"
mkfifo "$work/fifo"
clear_attr "$work" user.ima
expect_one_error "FIFO argument" "fifo: not a regular file (FIFO)" "$ok1" "$ok2" -- \
	timeout 20 "$bin" hash --xattr-user "$ok1" "$work/fifo" "$ok2"
clear_attr "$work" user.ima
expect_one_error "device argument" "null: not a regular file (character device)" "$ok1" "$ok2" -- \
	"$bin" hash --xattr-user "$ok1" /dev/null "$ok2"
clear_attr "$work" user.ima
expect_one_error "missing file" "missing: No such file or directory" "$ok1" "$ok2" -- \
	"$bin" hash --xattr-user "$ok1" "$work/missing" "$ok2"
clear_attr "$work" user.ima
expect_one_error "directory without -r" "is a directory" "$ok1" "$ok2" -- \
	"$bin" hash --xattr-user "$ok1" "$tree" "$ok2"
clear_attr "$work" user.ima
expect_one_error "symlink argument" "symbolic link" "$ok1" "$ok2" -- \
	"$bin" hash --xattr-user "$ok1" "$tree/link-to-file" "$ok2"

# A FIFO or a device inside a walked tree: skipped as evmctl -r skips them, exit 0, named
# with -v; the regular files done.
special=$work/special
mkdir -p "$special/d"
echo a >"$special/a"
echo b >"$special/d/b"
mkfifo "$special/d/fifo"
mknod "$special/null-dev" c 1 3
"$bin" hash -r -v --xattr-user "$special" >"$work/sp.out" 2>"$work/sp.err"
rc=$?
[ $rc -eq 0 ] || fail "walk with a FIFO and a device: exit $rc, expected 0"
grep -Eq "imastream hash: 2 files, 4 bytes, 0 failures, [0-9.]+ s" "$work/sp.err" ||
	fail "walk with specials: the summary does not count 2 files and no failure"
grep -q "d/fifo: skipped (FIFO)$" "$work/sp.err" || fail "FIFO in a walk not named with -v"
grep -q "null-dev: skipped (character device)$" "$work/sp.err" ||
	fail "device in a walk not named with -v"
for f in "$special/a" "$special/d/b"; do
	[ "$(hexattr user.ima "$f")" != - ] || fail "walk with specials: $f was not done"
done

# procfs: a readable regular file on a filesystem without any xattr support.
clear_attr "$work" user.ima
expect_one_error "procfs file" "/proc/self/stat: cannot write user.ima: the filesystem does not support it" \
	"$ok1" "$ok2" -- "$bin" hash --xattr-user "$ok1" /proc/self/stat "$ok2"

# A file that opens but cannot be read (reading our own /proc/self/mem at 0 gives EIO).
clear_attr "$work" user.ima
expect_one_error "read error" "/proc/self/mem: cannot read: Input/output error" "$ok1" "$ok2" -- \
	"$bin" hash --xattr-user "$ok1" /proc/self/mem "$ok2"

# ramfs: a writable, ordinary-looking filesystem without xattrs, inside a private mount
# namespace so that nothing stays mounted if the test dies.
if unshare -m true 2>/dev/null; then
	clear_attr "$work" user.ima
	mkdir "$work/ramfs"
	expect_one_error "ramfs file" "ramfs/x: cannot write user.ima: the filesystem does not support it" \
		"$ok1" "$ok2" -- unshare -m sh -c 'mount -t ramfs none "$1" && echo data >"$1/x" &&
			exec "$2" hash --xattr-user "$3" "$1/x" "$4"' sh "$work/ramfs" "$bin" "$ok1" "$ok2"
else
	echo "note: cannot unshare a mount namespace here; ramfs case not run"
fi

# Unreadable file: as an unprivileged user (root reads everything).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	nob=$(mktemp -d /tmp/hash-cli-nobody.XXXXXX)
	chmod 755 "$nob"
	echo a >"$nob/a"; echo b >"$nob/b"; echo c >"$nob/secret"
	chmod 000 "$nob/secret"
	chown -R nobody: "$nob" 2>/dev/null || chown -R 65534:65534 "$nob"
	"$bin" --version >/dev/null # let libtool's wrapper finish any first-run setup as root
	expect_one_error "unreadable file" "secret: cannot open: Permission denied" "$nob/a" "$nob/b" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$bin" hash --xattr-user "$nob/a" "$nob/secret" "$nob/b"
	# The same inside a walk: still one line, the rest of the tree done.
	mkdir "$nob/t"; mv "$nob/a" "$nob/b" "$nob/secret" "$nob/t/"
	setfattr -x user.ima "$nob/t/a"; setfattr -x user.ima "$nob/t/b"
	chown -R 65534:65534 "$nob/t"
	expect_one_error "unreadable file in a walk" "secret: cannot open: Permission denied" \
		"$nob/t/a" "$nob/t/b" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" hash -r --quiet --xattr-user "$nob/t"
	rm -rf "$nob"
else
	echo "note: not root or no setpriv; unreadable-file case not run"
fi

# Usage errors: exit 2, one line.
"$bin" hash -a md4x "$ok1" 2>"$work/err.err"
[ $? -eq 2 ] || fail "unknown algorithm: exit status not 2"
[ "$(wc -l <"$work/err.err")" -eq 1 ] || fail "unknown algorithm: not one line"
"$bin" hash 2>/dev/null
[ $? -eq 2 ] || fail "no PATH: exit status not 2"
"$bin" hash -j 0 "$ok1" 2>/dev/null
[ $? -eq 2 ] || fail "-j 0: exit status not 2"
"$bin" hash --help | grep -- --xattr-user >/dev/null || fail "--help does not list --xattr-user"

# -n writes nothing but prints the same.
clear_attr "$work" user.ima
[ "$("$bin" hash -n --no-names --xattr-user "$ok1")" = "$(evmctl ima_hash -n --xattr-user "$ok1" 2>/dev/null)" ] ||
	fail "-n: output differs from evmctl -n"
[ "$(hexattr user.ima "$ok1")" = - ] || fail "-n wrote an xattr"

if [ $failures -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "ok: imastream hash matches evmctl ima_hash (user.* and security.*, sha1/sha256/sha512)"
