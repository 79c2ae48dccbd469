#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hash -r where io_uring cannot be had (io_uring_setup fails, as under a seccomp filter): the walk opens each file with openat(2) and the output is the same, with any -j.
set -uo pipefail

: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
bin="$top_builddir/imastream"
[ -x "$bin" ] || { echo "ERROR: $bin not built"; exit 99; }
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler ($cc) to build the LD_PRELOAD library"; exit 77; }
command -v sha256sum >/dev/null || { echo "SKIP: sha256sum (coreutils) not installed"; exit 77; }
work=$(mktemp -d "$top_builddir/hash-no-io-uring.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$cc" -shared -fPIC -O2 -o "$work/no_io_uring.so" "$top_srcdir/tests/integration/no_io_uring.c" -ldl ||
	{ echo "ERROR: cannot build the LD_PRELOAD library"; exit 99; }
# Runs of small files (the ring is for runs of two or more), a large file, a symlink and
# a FIFO among them: each must come out as it does through io_uring.
tree=$work/tree
mkdir -p "$tree/a" "$tree/b"
for i in $(seq 50); do head -c $((i * 61)) /dev/urandom >"$tree/a/s$i"; done
head -c 300000 /dev/urandom >"$tree/b/big"
ln -s s1 "$tree/a/link"
mkfifo "$tree/b/fifo"
sha256sum_tree() { find "$tree" -type f -exec sha256sum {} + | sort -k 2; }
sha256sum_tree >"$work/want"
for j in 1 2; do
	"$bin" hash -r -v -n --quiet -j $j "$tree" >"$work/ring-$j" 2>"$work/ring-err-$j"
	rc=$?
	[ $rc -eq 0 ] || fail "-j $j: exit $rc, expected 0 (the FIFO is skipped)"
	grep -q 'b/fifo: skipped (FIFO)$' "$work/ring-err-$j" || fail "-j $j: -v does not name the FIFO"
	rm -f "$work/mark"
	# A sanitizer build refuses a preload before its runtime unless told not to check.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		NO_IO_URING_MARK=$work/mark LD_PRELOAD=$work/no_io_uring.so \
		"$bin" hash -r -v -n --quiet -j $j "$tree" >"$work/plain-$j" 2>"$work/plain-err-$j"
	rc=$?
	[ $rc -eq 0 ] || fail "-j $j without io_uring: exit $rc, expected 0 (the FIFO is skipped)"
	[ -e "$work/mark" ] || fail "-j $j: the walk never asked for io_uring"
	cmp -s "$work/ring-$j" "$work/plain-$j" || fail "-j $j: output differs without io_uring"
	# -v's count of batches may differ with the runs each thread had.
	grep -v 'digests of' "$work/ring-err-$j" >"$work/ring-err-$j.cmp"
	grep -v 'digests of' "$work/plain-err-$j" >"$work/plain-err-$j.cmp"
	cmp -s "$work/ring-err-$j.cmp" "$work/plain-err-$j.cmp" ||
		fail "-j $j: messages differ without io_uring"
	# The values are the files' SHA-256 (type 04, algorithm 04: "0404" and the digest).
	sed -E 's/^0404([0-9a-f]{64})  /\1  /' "$work/plain-$j" | sort -k 2 | cmp -s - "$work/want" ||
		fail "-j $j without io_uring: values are not the files' SHA-256"
done
[ "$failures" -eq 0 ] || exit 1
echo "PASS: the same output with and without io_uring, -j 1 and -j 2"
