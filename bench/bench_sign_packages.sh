#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# sign-package over a release-like tree: -j 2 against -j 1, and against evmctl sign_hash over the same digests, in one run.
# Usage: bench_sign_packages.sh [PACKAGES [FILES]]   (default 500 packages of 40 files;
# top_builddir from the environment, default .; BENCH_CSV for bench/plot.sh)
set -eu
packages=${1:-500}
files=${2:-40}
IMASTREAM="${top_builddir:-.}/imastream"
for tool in rpmbuild rpm evmctl openssl; do
	command -v "$tool" >/dev/null 2>&1 || { echo "bench-sign-packages: $tool is missing" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/bench_sign_packages.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"

# Four distinct packages of $files files, copied under $packages names: signing reads and
# checks every copy as a package of its own, whatever its content.
mkdir -p "$tmp/top/SPECS" "$tmp/tree/RPMS/noarch"
for k in 0 1 2 3; do
	cat >"$tmp/top/SPECS/b$k.spec" <<SPEC
Name: bench$k
Version: 1
Release: 1
Summary: b
License: MIT
BuildArch: noarch
%description
b
%install
mkdir -p %{buildroot}/b$k
i=0; while [ \$i -lt $files ]; do echo "package $k file \$i" > %{buildroot}/b$k/f\$i; i=\$((i + 1)); done
%files
/b$k
SPEC
	rpmbuild -bb --quiet --define "_topdir $tmp/top" "$tmp/top/SPECS/b$k.spec" >/dev/null 2>&1
	rpm -qp --nosignature --qf '[%{FILEDIGESTS}\n]' "$tmp/top/RPMS/noarch/bench$k-1-1.noarch.rpm" |
		grep . >"$tmp/digests$k"
done
i=0
: >"$tmp/digests"
while [ $i -lt "$packages" ]; do
	k=$((i % 4))
	cp "$tmp/top/RPMS/noarch/bench$k-1-1.noarch.rpm" "$(printf '%s/tree/RPMS/noarch/p%05d-1-1.noarch.rpm' "$tmp" $i)"
	cat "$tmp/digests$k" >>"$tmp/digests"
	i=$((i + 1))
done
sigs=$(wc -l <"$tmp/digests")
pkg_bytes=$(du -sb "$tmp/tree" | cut -f1)

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/k.key" \
	-out "$tmp/k.pem" -subj /CN=bench -days 1 -addext subjectKeyIdentifier=hash >/dev/null 2>&1
chmod 600 "$tmp/k.key"

now() { date +%s.%N; }
# sign_tree JOBS: seconds for sign-package -j JOBS over a fresh copy of the tree.
sign_tree() {
	rm -rf "$tmp/run"
	cp -a "$tmp/tree" "$tmp/run"
	sync
	t0=$(now)
	"$IMASTREAM" sign-package -j "$1" --quiet --key "$tmp/k.key" --cert "$tmp/k.pem" "$tmp/run/RPMS"
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
j1=$(sign_tree 1)
j2=$(sign_tree 2)
t0=$(now)
evmctl sign_hash -a sha256 --key "$tmp/k.key" <"$tmp/digests" >/dev/null 2>&1
t1=$(now)
peer=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

awk -v p="$packages" -v f="$files" -v s="$sigs" -v j1="$j1" -v j2="$j2" -v e="$peer" -v b="$pkg_bytes" 'BEGIN {
	printf "%d packages x %d files (%d signatures, %.1f MiB), ECDSA P-256, %d CPUs online\n",
		p, f, s, b / 1048576, '"$(nproc)"'
	printf "sign-package -j 1: %.3f s, %.0f packages/s, %.0f signatures/s\n", j1, p / j1, s / j1
	printf "sign-package -j 2: %.3f s, %.0f packages/s, %.0f signatures/s\n", j2, p / j2, s / j2
	printf "evmctl sign_hash over the same digests (one process): %.3f s, %.0f signatures/s\n", e, s / e
	printf "ratio -j 2 vs -j 1: x%.2f\n", j1 / j2
	printf "ratio sign-package -j 1 vs evmctl sign_hash: x%.2f; -j 2: x%.2f\n", e / j1, e / j2
}'
bench_csv "jobs" 1 "imastream sign-package" "$j1" "$packages" packages/s
bench_csv "jobs" 2 "imastream sign-package" "$j2" "$packages" packages/s
bench_csv "jobs" 1 "evmctl sign_hash (same signatures)" "$peer" "$packages" packages/s "$j1"
