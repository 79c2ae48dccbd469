#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cost of durability: imastream install --sync fs and --sync file against --sync none, on a disk-backed root.
#
# One package of IMASTREAM_BENCH_SMALL files of 16 KiB (default 2000), best of
# IMASTREAM_BENCH_RUNS (default 3), each into a fresh root below IMASTREAM_BENCH_DIR
# (default /var/tmp: tmpfs would make every sync free).  Prints each time and its ratio to
# --sync none.  Needs root and rpmbuild.
set -euo pipefail
top_builddir=${top_builddir:-$(pwd)}
bin=$top_builddir/imastream
[ -x "$bin" ] || { echo "bench-install-sync: build first ($bin missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-install-sync: needs root" >&2; exit 1; }
n=${IMASTREAM_BENCH_SMALL:-2000}
runs=${IMASTREAM_BENCH_RUNS:-3}
work=$(mktemp -d "${IMASTREAM_BENCH_DIR:-/var/tmp}/bench-install-sync.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat >"$work/s.spec" <<SPEC
Name: benchsync
Version: 1
Release: 1
Summary: bench
License: MIT
BuildArch: noarch
%description
bench
%install
mkdir -p %{buildroot}/opt/b
for i in \$(seq $n); do head -c 16384 /dev/urandom > %{buildroot}/opt/b/f\$i; done
%files
/opt/b
SPEC
rpmbuild -bb --quiet --define "_topdir $work/top" --define '_binary_payload w3.zstdio' \
	--define '_build_id_links none' "$work/s.spec" >/dev/null 2>&1
pkg=$work/top/RPMS/noarch/benchsync-1-1.noarch.rpm
"$bin" --version >/dev/null

best() {
	local mode=$1 b="" t0 t1 t
	for _ in $(seq "$runs"); do
		rm -rf "$work/root"; mkdir "$work/root"; sync
		t0=$(date +%s%N)
		"$bin" install --root "$work/root" --allow-unsigned --quiet --sync "$mode" "$pkg"
		t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000 ))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
none=$(best none)
fs=$(best fs)
file=$(best file)
printf 'imastream install, %d files of 16 KiB, root on %s (best of %d):\n' "$n" \
	"$(df --output=fstype "$work" | tail -1)" "$runs"
printf '  --sync none %8.3f s\n' "$(echo "$none / 1000000" | bc -l)"
printf '  --sync fs   %8.3f s  x%.2f\n' "$(echo "$fs / 1000000" | bc -l)" "$(echo "$fs / $none" | bc -l)"
printf '  --sync file %8.3f s  x%.2f\n' "$(echo "$file / 1000000" | bc -l)" "$(echo "$file / $none" | bc -l)"
