#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream hash -r and sign -r with small files hashed across files in batches: values equal to sha256sum, evmctl and the one-file-at-a-time path on every backend, and -v shows which backend hashed how many files.
set -uo pipefail

: "${top_builddir:?run through make check}"
bin="$top_builddir/imastream"
[ -x "$bin" ] || { echo "ERROR: $bin not built"; exit 99; }
command -v sha256sum >/dev/null || { echo "SKIP: sha256sum (coreutils) not installed"; exit 77; }

work=$(mktemp -d "$top_builddir/hash-batch.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Sizes at every edge: SHA-256's padding (55, 56, 64), a page, the small-file limit
# (64 KiB), the read chunk of a streamed file (256 KiB), and many random small files.
tree=$work/tree
mkdir -p "$tree/a/b" "$tree/c"
i=0
for size in 0 1 55 56 63 64 65 4095 4096 4097 65535 65536 65537 262144 300001 \
	$((RANDOM * 17)) $((RANDOM % 4096)); do
	head -c "$size" /dev/urandom >"$tree/a/f$i-$size"
	i=$((i + 1))
done
for j in $(seq 150); do head -c $((RANDOM % 9000)) /dev/urandom >"$tree/a/b/s$j"; done
for j in $(seq 40); do head -c 4096 /dev/urandom >"$tree/c/p$j"; done
ln -s a/f0-0 "$tree/link"
nfiles=$(find "$tree" -type f | wc -l)

# want ALGO PREFIX: "PREFIX<digest>  NAME" for every file, sorted by name.
want() { find "$tree" -type f -print0 | xargs -0 "${1}sum" | sed "s/^/$2/" | sort -k 2; }
want sha256 0404 >"$work/want-sha256"
want sha1 01 >"$work/want-sha1"

# run NAME [ENV=VALUE...] -- ARGS...: hash -n -v, checks the values, leaves -v's line in $work/count.
run() {
	local name=$1 rc
	shift
	env "$@" -n -v --quiet "$tree" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc != 0 ] && grep -q "lacks the backend's instructions" "$work/err"; then
		echo "SKIP $name: $(head -1 "$work/err")"
		return 1
	fi
	[ $rc = 0 ] || { fail "$name: exit $rc: $(head -3 "$work/err")"; return 1; }
	sed -n 's/.*digests of \([0-9]* files:.*\)/\1/p' "$work/err" >"$work/count"
	return 0
}

ran=0
for backend in portable shani avx2 avx512; do
	for jobs in 1 3; do
		name="$backend -j $jobs"
		run "$name" IMASTREAM_HASH_BACKEND=$backend "$bin" hash -r -j $jobs || continue
		sort -k 2 "$work/out" | cmp -s - "$work/want-sha256" ||
			fail "$name: values differ from sha256sum: $(sort -k 2 "$work/out" | diff - "$work/want-sha256" | head -4 | tr '\n' ' ')"
		# The lanes carried the small files: every batched file through the forced
		# backend, only the files over 64 KiB streamed.
		case $backend in portable) be=openssl ;; shani) be=shani-2x ;; avx2) be=avx2-8x ;; avx512) be=avx512-16x ;; esac
		streamed=$(find "$tree" -type f -size +64k | wc -l)
		grep -qx "$nfiles files: $((nfiles - streamed)) in $be batches, $streamed streamed one at a time" "$work/count" ||
			grep -qx "$nfiles files: $streamed streamed one at a time, $((nfiles - streamed)) in $be batches" "$work/count" ||
			fail "$name: -v says '$(cat "$work/count")'"
		cp "$work/out" "$work/out-$backend-$jobs"
		ran=$((ran + 1))
	done
done
[ $ran -gt 0 ] || fail "no backend ran"
echo "hash -r on $ran backend/jobs pairs: $nfiles files equal to sha256sum"

# Default dispatch against the one-file-at-a-time path: same lines in the same order.
if run "default" "$bin" hash -r; then
	grep -q " batches" "$work/count" || fail "default dispatch: -v says '$(cat "$work/count")'"
	cp "$work/out" "$work/out-batch"
fi
run "one at a time" IMASTREAM_FILE_BATCH=1 "$bin" hash -r &&
	{ grep -qx "$nfiles files: $nfiles streamed one at a time" "$work/count" ||
		fail "IMASTREAM_FILE_BATCH=1: -v says '$(cat "$work/count")'"; }
cmp -s "$work/out" "$work/out-batch" || fail "batched output differs from one file at a time"

# Another algorithm goes through the batch too (OpenSSL, one message after another).
run "sha1" "$bin" hash -r -a sha1 &&
	{ sort -k 2 "$work/out" | cmp -s - "$work/want-sha1" || fail "sha1 values differ from sha1sum"; }

# evmctl's values in its own order, where it is installed.
if command -v evmctl >/dev/null; then
	evmctl ima_hash -r -n -a sha256 "$tree" 2>/dev/null >"$work/evmctl"
	"$bin" hash -r -n --no-names "$tree" >"$work/ours" 2>/dev/null
	cmp -s "$work/evmctl" "$work/ours" || fail "values differ from evmctl ima_hash -r"
else
	echo "SKIP evmctl comparison: evmctl (ima-evm-utils) not installed"
fi

# Written attributes equal the printed values (the batch path writes through the same fd).
if "$bin" hash -r --xattr-user --quiet "$tree/c" >"$work/out" 2>"$work/err"; then
	got=$(getfattr --absolute-names -n user.ima -e hex "$tree/c/p1" 2>/dev/null | sed -n 's/^user.ima=0x//p')
	[ "$got" = "$(grep "/c/p1$" "$work/out" | cut -d' ' -f1)" ] || fail "user.ima of c/p1 is '$got'"
elif grep -q "not supported" "$work/err"; then
	echo "SKIP xattr check: $(head -1 "$work/err")"
else
	fail "hash --xattr-user: $(head -2 "$work/err")"
fi

# sign -r signs the batched digests, one value per file.
if command -v openssl >/dev/null && (umask 077; openssl genpkey -algorithm EC \
	-pkeyopt ec_paramgen_curve:P-256 -out "$work/key.pem" 2>/dev/null); then
	"$bin" sign -r -n --evm none -k "$work/key.pem" -v --quiet "$tree/c" >"$work/sig" 2>"$work/err" ||
		fail "sign -r: $(head -2 "$work/err")"
	grep -q "digests of 40 files: [0-9]* in .* batches" "$work/err" &&
		! grep -q "streamed" "$work/err" || fail "sign -r -v: $(grep digests "$work/err")"
	[ "$(wc -l <"$work/sig")" = 40 ] || fail "sign -r printed $(wc -l <"$work/sig") lines"
else
	echo "SKIP sign -r: openssl cannot make a key"
fi

# A file that cannot be read among small ones: that file fails, the rest of its run is hashed.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	deny=$(mktemp -d /tmp/hash-batch-deny.XXXXXX) || exit 99
	chmod 755 "$deny"
	for j in $(seq 20); do head -c 100 /dev/urandom >"$deny/g$j"; done
	chmod 644 "$deny"/g*
	chmod 000 "$deny/g7"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$bin" hash -r -n -j 1 "$deny" \
		>"$work/out" 2>"$work/err"
	rc=$?
	[ $rc = 1 ] || fail "unreadable file: exit $rc, want 1"
	[ "$(wc -l <"$work/out")" = 19 ] || fail "unreadable file: $(wc -l <"$work/out") values, want 19"
	grep -q "g7: cannot open: Permission denied" "$work/err" || fail "unreadable file: stderr $(head -2 "$work/err")"
	rm -rf "$deny"
else
	echo "SKIP unreadable file: needs root, setpriv and the user nobody"
fi

[ $failures = 0 ] || exit 1
echo "PASS"
