#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# sign-package against the peer's per-file path: evmctl sign_hash over the same digests, as rpmsign --signfiles does.
# Usage: bench_sign_package.sh [FILES]   (top_builddir from the environment, default .)
set -eu
files=${1:-2000}
IMASTREAM="${top_builddir:-.}/imastream"
for tool in rpmbuild rpm evmctl openssl; do
	command -v "$tool" >/dev/null 2>&1 || { echo "bench-sign-package: $tool is missing" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/bench_sign_package.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/top/SPECS" "$tmp/out"
cat >"$tmp/top/SPECS/b.spec" <<SPEC
Name: bench
Version: 1
Release: 1
Summary: b
License: MIT
BuildArch: noarch
%description
b
%install
mkdir -p %{buildroot}/b
i=0; while [ \$i -lt $files ]; do echo "file \$i" > %{buildroot}/b/f\$i; i=\$((i + 1)); done
%files
/b
SPEC
rpmbuild -bb --quiet --define "_topdir $tmp/top" "$tmp/top/SPECS/b.spec" >/dev/null 2>&1
pkg="$tmp/top/RPMS/noarch/bench-1-1.noarch.rpm"
rpm -qp --nosignature --qf '[%{FILEDIGESTS} %{FILENAMES}\n]' "$pkg" | grep -v '^ ' >"$tmp/digests"

now() { date +%s.%N; }
for key in rsa:2048 ec; do
	case $key in
	ec) openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/k.key" \
		-out "$tmp/k.pem" -subj /CN=bench -days 1 >/dev/null 2>&1; name=P-256 ;;
	*) openssl req -x509 -newkey "$key" -nodes -keyout "$tmp/k.key" -out "$tmp/k.pem" \
		-subj /CN=bench -days 1 >/dev/null 2>&1; name=RSA-2048 ;;
	esac
	chmod 600 "$tmp/k.key"
	t0=$(now)
	"$IMASTREAM" sign-package --key "$tmp/k.key" --cert "$tmp/k.pem" --outdir "$tmp/out" "$pkg"
	t1=$(now)
	evmctl sign_hash -a sha256 --key "$tmp/k.key" <"$tmp/digests" >/dev/null 2>&1
	t2=$(now)
	awk -v n="$name" -v f="$files" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
		printf "%s, %d files: imastream sign-package %.3f s, evmctl sign_hash %.3f s, ratio x%.1f\n",
			n, f, b - a, c - b, (c - b) / (b - a) }'
done
