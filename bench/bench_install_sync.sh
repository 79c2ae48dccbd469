#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cost of durability: imastream install --sync fs and --sync file against --sync none, on a disk-backed root.
#
# One package of IMASTREAM_BENCH_SMALL files of 16 KiB cut from this machine's binaries
# (bench-lib.sh; default 2000), best of
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
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_unwrap bin
bench_corpus $((n * 16384 / 1048576 + 1))
pkg=$(bench_build_pkg benchsync "$n" 16384 w3.zstdio)

# install_into_fresh MODE: one install into bench_elapsed's new empty root.
install_into_fresh() {
	"$bin" install --root "$fresh" --allow-unsigned --quiet --sync "$1" "$pkg"
}

# best MODE: the best wall time of $runs installs, each into a fresh root.
best() {
	local times=() t
	for _ in $(seq "$runs"); do
		t=$(bench_elapsed install_into_fresh "$1") || exit 1
		times+=("${t%% *}")
	done
	bench_min "${times[@]}"
}
none=$(best none)
fs=$(best fs)
file=$(best file)
printf 'imastream install, %d files of 16 KiB, root on %s (best of %d):\n' "$n" \
	"$(df --output=fstype "$work" | tail -1)" "$runs"
printf '  --sync none %8.3f s\n' "$none"
printf '  --sync fs   %8.3f s  x%s\n' "$fs" "$(bench_ratio "$fs" "$none" 2)"
printf '  --sync file %8.3f s  x%s\n' "$file" "$(bench_ratio "$file" "$none" 2)"
