#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream sign -r against evmctl ima_sign -r + evmctl sign --portable -r over 5,000 small files.
set -euo pipefail

: "${top_builddir:?run through make bench-sign-tree}"
bin="$top_builddir/imastream"
rounds=${BENCH_ROUNDS:-1}
nfiles=${BENCH_FILES:-5000}
keys=${BENCH_KEYS:-"p256 p384 rsa2048"}
command -v evmctl >/dev/null || { echo "bench-sign-tree: evmctl not installed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-sign-tree.XXXXXX")
trap 'rm -rf "$work"' EXIT
opt=
[ "$(id -u)" = 0 ] || opt=--xattr-user

# The tree: 50 directories of small files, random sizes 0..16 KiB.
for ((d = 0; d < 50; d++)); do mkdir -p "$work/tree/d$d"; done
for ((i = 0; i < nfiles; i++)); do
	head -c $((RANDOM % 16385)) /dev/urandom >"$work/tree/d$((i % 50))/f$i"
done
mbytes=$(du -sm --apparent-size "$work/tree" | cut -f1)

(umask 077
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/p256.pem" 2>/dev/null
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$work/p384.pem" 2>/dev/null
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/rsa2048.pem" 2>/dev/null)
for k in p256 p384 rsa2048; do
	openssl req -x509 -new -key "$work/$k.pem" -out "$work/$k.crt" -days 2 -subj "/CN=$k" \
		-addext subjectKeyIdentifier=hash
	openssl x509 -in "$work/$k.crt" -outform DER -out "$work/$k.der"
done
"$bin" --version >/dev/null # libtool's wrapper does its first-run work outside the timing
cat "$work"/tree/*/* >/dev/null # both start from the page cache

# elapsed CMD...: wall seconds of one run; output discarded, failure fatal.
elapsed() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>"$work/stderr" || { echo "failed: $*" >&2; tail -3 "$work/stderr" >&2; exit 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", a + b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

# evmctl: IMA signatures, then EVM portable signatures over them (evmctl -r needs an
# absolute key path; --generation=0 because 1.4 asks for it even when portable).
evmctl_both() {
	evmctl ima_sign -r $opt --key "$work/$1.pem" "$work/tree" >/dev/null 2>&1 || return 1
	evmctl sign --portable -r --generation=0 $opt --key "$work/$1.pem" "$work/tree"
}

# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
printf 'tree: %d files of 0..16 KiB (%d MiB), sha256, %s, best of %d\n' "$nfiles" "$mbytes" \
	"${opt:-security.*}" "$rounds"
for k in $keys; do
	best_evmctl= best_ours= best_one=
	for _ in $(seq "$rounds"); do
		best_evmctl=$(min "$best_evmctl" "$(elapsed evmctl_both "$k")")
		best_ours=$(min "$best_ours" "$(elapsed "$bin" sign -r $opt --key "$work/$k.pem" \
			--evm portable "$work/tree")")
		best_one=$(min "$best_one" "$(elapsed "$bin" sign -r -j 1 $opt --key "$work/$k.pem" \
			--evm portable "$work/tree")")
	done
	# What the last run wrote must verify, with ours and with evmctl on a sample.
	"$bin" verify -r $opt --evm require --trust "$work/$k.der" "$work/tree" >"$work/verify.out" ||
		{ echo "verify failed: $(grep -Ev ': OK( \(|$)' "$work/verify.out" | head -3)" >&2; exit 1; }
	evmctl ima_verify $opt --key "$work/$k.der" "$work"/tree/d0/* >/dev/null 2>&1 ||
		{ echo "evmctl ima_verify rejects a file" >&2; exit 1; }
	for f in "$work"/tree/d1/f1 "$work"/tree/d7/f7; do
		evmctl verify $opt --generation=0 --key "$work/$k.der" "$f" >/dev/null 2>&1 ||
			{ echo "evmctl verify rejects $f" >&2; exit 1; }
	done
	printf '%s:\n' "$k"
	printf '  evmctl ima_sign -r + sign --portable -r   %8.3f s\n' "$best_evmctl"
	printf '  imastream sign -r -j 1                    %8.3f s   (x%s)\n' "$best_one" \
		"$(ratio "$best_evmctl" "$best_one")"
	printf '  imastream sign -r (-j %d)                  %8.3f s   (x%s)\n' "$(nproc)" \
		"$best_ours" "$(ratio "$best_evmctl" "$best_ours")"
	echo "  ratio (evmctl time / imastream time, default jobs): $(ratio "$best_evmctl" "$best_ours")"
	bench_csv "file count" "$nfiles" "imastream sign -r ($k)" "$best_ours" "$nfiles" files/s
	bench_csv "file count" "$nfiles" "evmctl ($k)" "$best_evmctl" "$nfiles" files/s "$best_ours"
done
