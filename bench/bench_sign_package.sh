#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sign-package against the peer's per-file path: evmctl sign_hash over the same digests, as rpmsign --signfiles does.
# Usage: bench_sign_package.sh [FILES...]   (packages of FILES files each, default 500 2000;
# top_builddir from the environment, default .; BENCH_CSV for bench/plot.sh)
set -eu
counts=${*:-500 2000}
IMASTREAM="${top_builddir:-.}/imastream"
for tool in rpmbuild rpm evmctl openssl; do
	command -v "$tool" >/dev/null 2>&1 || { echo "bench-sign-package: $tool is missing" >&2; exit 1; }
done
work=$(mktemp -d /tmp/bench_sign_package.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"

# build_pkg FILES: a package of FILES small files as $pkg, its digests in $work/digests.
build_pkg() {
	rm -rf "$work/top" "$work/out"
	mkdir -p "$work/out"
	pkg=$(bench_text_pkg "$work/top" "" "$1")
	rpm -qp --nosignature --qf '[%{FILEDIGESTS} %{FILENAMES}\n]' "$pkg" | grep -v '^ ' >"$work/digests"
}

now() { date +%s.%N; }
for files in $counts; do
	build_pkg "$files"
	for key in rsa:2048 ec ec384; do
		case $key in
		ec) bench_p256_cert "$work/k.key" "$work/k.pem" bench; name=P-256 ;;
		ec384) bench_ec_cert P-384 "$work/k.key" "$work/k.pem" bench; name=P-384 ;;
		*) openssl req -x509 -newkey "$key" -nodes -keyout "$work/k.key" -out "$work/k.pem" \
			-subj /CN=bench -days 1 >/dev/null 2>&1; name=RSA-2048 ;;
		esac
		chmod 600 "$work/k.key"
		t0=$(now)
		"$IMASTREAM" sign-package --key "$work/k.key" --cert "$work/k.pem" --outdir "$work/out" "$pkg"
		t1=$(now)
		evmctl sign_hash -a sha256 --key "$work/k.key" <"$work/digests" >/dev/null 2>&1
		t2=$(now)
		awk -v n="$name" -v f="$files" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
			printf "%s, %d files: imastream sign-package %.3f s, evmctl sign_hash %.3f s, ratio x%.1f\n",
				n, f, b - a, c - b, (c - b) / (b - a) }'
		ours=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		peer=$(awk -v b="$t1" -v c="$t2" 'BEGIN { print c - b }')
		bench_csv "file count" "$files" "imastream sign-package ($name)" "$ours" "$files" files/s
		bench_csv "file count" "$files" "evmctl sign_hash ($name)" "$peer" "$files" files/s "$ours"
	done
done
