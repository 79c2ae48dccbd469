#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream hash --verity against Debian's `fsverity digest` on a random tree, on every batch backend this CPU runs, and sign --verity -r verified; one line per failure.
set -uo pipefail

: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"
bin="$top_builddir/imastream"
command -v fsverity >/dev/null || { echo "SKIP: fsverity (Debian package fsverity) not installed"; exit 77; }
command -v getfattr >/dev/null || { echo "SKIP: getfattr (attr) not installed"; exit 77; }
[ -x "$bin" ] || { echo "ERROR: $bin not built"; exit 99; }

work=$(mktemp -d "$top_builddir/hash-verity.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Random content, sizes around every boundary of the tree: a data block (4 KiB), a
# full level-0 tree block (128 data blocks, 512 KiB), a full level-1 block (64 MiB is
# too slow for a test; the unit test has it) and a few random sizes.
tree=$work/tree
mkdir -p "$tree/sub/deeper" "$tree/with space"
i=0
for size in 0 1 4095 4096 4097 8191 8192 8193 65536 262143 262144 262145 \
	524287 524288 524289 528384 1048575 1048576 1048577 \
	$((RANDOM * 17)) $((RANDOM * 31 + 4096)) $((RANDOM % 4096)); do
	case $((i % 3)) in 0) dir=$tree ;; 1) dir=$tree/sub ;; 2) dir="$tree/with space" ;; esac
	head -c "$size" /dev/urandom >"$dir/f$i-$size"
	i=$((i + 1))
done
# Many small files: the sizes the cross-file batches of a tree walk see.
for j in $(seq 40); do head -c $((RANDOM % 20000)) /dev/urandom >"$tree/sub/deeper/s$j"; done
ln -s f0-0 "$tree/link-to-file"

# The peer's lines for every regular file, sorted by name (the walk's order is readdir's).
find "$tree" -type f -print0 | sort -z | xargs -0 fsverity digest | sort >"$work/want" ||
	fail "fsverity digest failed"
find "$tree" -type f -print0 | sort -z | xargs -0 fsverity digest --compact | sort >"$work/want-compact"
[ "$(wc -l <"$work/want")" -eq "$(find "$tree" -type f | wc -l)" ] || fail "fsverity digest printed too few lines"

# Each backend forced in turn; -v names the one that hashed.
ran=0
for backend in portable shani avx2 avx512; do
	IMASTREAM_HASH_BACKEND=$backend "$bin" hash --verity -r -v --quiet "$tree" \
		>"$work/ours" 2>"$work/err"
	rc=$?
	if [ $rc != 0 ] && grep -q "lacks the backend's instructions\|no such batch backend" "$work/err"; then
		echo "SKIP backend $backend: $(head -1 "$work/err")"
		continue
	fi
	[ $rc = 0 ] || { fail "$backend: exit $rc: $(head -3 "$work/err")"; continue; }
	used=$(sed -n 's/.*fs-verity data blocks through the \(.*\) batch backend.*/\1/p' "$work/err")
	case $backend:$used in
	portable:openssl | shani:shani-* | avx2:avx2-* | avx512:avx512-*) ;;
	*) fail "$backend forced, but -v says '$used' hashed" ;;
	esac
	sort "$work/ours" | cmp -s - "$work/want" ||
		fail "$backend ($used): output differs from fsverity digest: $(sort "$work/ours" | diff - "$work/want" | head -4 | tr '\n' ' ')"
	# The small files' trees were hashed across files, in that backend's batches.
	batched=$(sed -n 's/.*digests of [0-9]* files:.* \([0-9]*\) in \([^ ]*\) batches.*/\1 \2/p' "$work/err")
	[ "${batched#* }" = "$used" ] && [ "${batched% *}" -ge 40 ] ||
		fail "$backend ($used): small files not batched across files: $(grep 'digests of' "$work/err")"
	echo "backend $backend ($used): $(wc -l <"$work/ours") files equal to fsverity digest, ${batched% *} in cross-file batches"
	ran=$((ran + 1))
done
[ $ran -ge 1 ] || fail "no backend ran (not even portable)"

# The dispatch's own choice, serial and parallel, one file at a time too (no batches), and
# --no-names against --compact.
IMASTREAM_FILE_BATCH=1 "$bin" hash --verity -r --quiet "$tree" | sort | cmp -s - "$work/want" ||
	fail "IMASTREAM_FILE_BATCH=1: output differs from fsverity digest"
for jobs in 1 4; do
	"$bin" hash --verity -r -j $jobs --quiet "$tree" >"$work/ours" 2>"$work/err" ||
		fail "-j $jobs: exit $?: $(head -3 "$work/err")"
	sort "$work/ours" | cmp -s - "$work/want" || fail "-j $jobs: output differs from fsverity digest"
done
"$bin" hash --verity -r --no-names --quiet "$tree" | sort >"$work/ours-compact"
cmp -s "$work/ours-compact" "$work/want-compact" || fail "--no-names differs from fsverity digest --compact"
# Files named on the command line: the same lines, in the same order, as the peer's.
set -- "$tree"/f*
"$bin" hash --verity "$@" >"$work/ours" 2>"$work/err" || fail "files: exit $?: $(cat "$work/err")"
fsverity digest "$@" >"$work/want-files"
cmp -s "$work/ours" "$work/want-files" || fail "files on the command line: lines differ from fsverity digest"

# Nothing written: no ima attribute of either namespace on any file.
if getfattr -R -d -m '^(security|user)\.ima$' --absolute-names "$tree" 2>/dev/null | grep ima >/dev/null; then
	fail "--verity wrote an ima attribute"
fi

# Errors: a missing file is one line and exit 1, the others still printed.
"$bin" hash --verity "$tree/f3-4096" "$work/missing" "$tree/f6-8192" >"$work/ours" 2>"$work/err"
rc=$?
[ $rc = 1 ] || fail "missing file: exit $rc, want 1"
[ "$(wc -l <"$work/err")" = 1 ] || fail "missing file: stderr is not one line: $(cat "$work/err")"
[ "$(wc -l <"$work/ours")" = 2 ] || fail "missing file: the other files were not printed"
# Usage errors: exit 2, one line.
for args in "-a sha1" "-a sha512" "--xattr-user"; do
	# shellcheck disable=SC2086
	"$bin" hash --verity $args "$tree/f3-4096" >/dev/null 2>"$work/err"
	rc=$?
	[ $rc = 2 ] || fail "--verity $args: exit $rc, want 2"
	[ "$(wc -l <"$work/err")" = 1 ] || fail "--verity $args: stderr is not one line"
done
"$bin" hash --verity -a sha256 "$tree/f3-4096" >/dev/null || fail "--verity -a sha256 refused"
# A backend this build does not have: a clear line, exit 1.
IMASTREAM_HASH_BACKEND=sse9 "$bin" hash --verity "$tree/f3-4096" >/dev/null 2>"$work/err"
rc=$?
if [ $rc != 1 ] || ! grep -q "no such batch backend" "$work/err"; then
	fail "IMASTREAM_HASH_BACKEND=sse9: exit $rc, $(cat "$work/err")"
fi

# sign --verity -r takes the same cross-file batches: every sigv3 verifies against the
# fs-verity digest verify recomputes alone, file by file.
cp "$top_srcdir/tests/keys/rsa2048.pem" "$work/key.pem"
chmod 600 "$work/key.pem"
if setfattr -n user.probe -v 1 "$tree/f0-0" 2>/dev/null; then
	setfattr -x user.probe "$tree/f0-0"
	"$bin" sign --verity -r -v --quiet --xattr-user --evm none --key "$work/key.pem" "$tree" \
		>/dev/null 2>"$work/err" || fail "sign --verity -r: exit $?: $(head -3 "$work/err")"
	grep -q "digests of [0-9]* files:.* in [^ ]* batches" "$work/err" ||
		fail "sign --verity -r: no cross-file batches: $(grep 'digests of' "$work/err")"
	"$bin" verify -r --quiet --xattr-user --evm none --trust "$top_srcdir/tests/keys/rsa2048.crt" \
		"$tree" >"$work/verify" 2>&1 || fail "verify after sign --verity -r: exit $?: $(grep -Ev ': OK( \(|$)' "$work/verify" | head -3)"
	[ "$(grep -Ec ': OK( \(|$)' "$work/verify")" = "$(find "$tree" -type f | wc -l)" ] ||
		fail "verify after sign --verity -r: not every file OK"
else
	echo "SKIP sign --verity -r: no user xattrs on $work"
fi

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "PASS: hash --verity equals fsverity digest"
