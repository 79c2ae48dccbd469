#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream install with verity = on (sigv3 + fs-verity, P-256) against hash mode, on 64 x 16 MiB and 5,000 x 16 KiB (target: at most 1.3x).
#
# Roots go on IMASTREAM_BENCH_VERITY_DIR, which must be on a filesystem whose kernel can
# enable fs-verity (ext4 made with -O verity, CONFIG_FS_VERITY); without one the script
# makes a 3 GiB ext4 -O verity image on /dev/shm and loop-mounts it, and says so if this
# kernel then refuses verity.  Best of IMASTREAM_BENCH_RUNS (3); payload
# IMASTREAM_BENCH_PAYLOAD (w19.zstdio).  Needs root.
set -euo pipefail
top_builddir=${top_builddir:-$(pwd)}
bin=$top_builddir/imastream
[ -x "$bin" ] || { echo "bench-install-verity: build first ($bin missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-install-verity: needs root" >&2; exit 1; }
mb=1024

# shellcheck source=bench/bench_install_lib.sh
. "$(dirname "$0")/bench_install_lib.sh"

dir=${IMASTREAM_BENCH_VERITY_DIR:-}
if [ -z "$dir" ]; then
	dir=$work/mnt
	mkdir -p "$dir"
	truncate -s 3G "$work/ext4.img"
	mkfs.ext4 -q -O verity "$work/ext4.img"
	mount -o loop "$work/ext4.img" "$dir"
	trap 'umount "$dir" 2>/dev/null; rm -rf "$work"' EXIT
fi
(umask 077; openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/p256.pem" 2>/dev/null)
bench_unwrap bin
"$bin" --version >/dev/null || { echo "bench-install-verity: $bin does not run" >&2; exit 1; }

root=$dir/bench-root
run_hash() { "$bin" install --root "$root" --allow-unsigned --quiet "$1"; }
run_verity() {
	"$bin" install --root "$root" --allow-unsigned --quiet --mode sign \
		--key "$work/p256.pem" -o verity=on "$1"
}

# best FUNC PKG: the best wall time of $runs runs, each into an empty root.
best() {
	local b="" t
	for _ in $(seq "$runs"); do
		rm -rf "$root"
		mkdir -p "$root"
		sync
		t=$(bench_elapsed "$1" "$2") || { echo "bench-install-verity: $1 failed" >&2; exit 1; }
		t=${t%% *}
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}

mkdir -p "$root"
# The installer probes the root first: a filesystem that cannot enable fs-verity says so.
if "$bin" install --root "$root" --mode sign --key "$work/p256.pem" -o verity=on \
	"$work/none.rpm" 2>&1 | grep "has no fs-verity support" >&2; then
	exit 1
fi
echo "bench-install-verity: payload $payload, best of $runs, roots on $dir, $(nproc) cores, P-256"
for spec in "big 64 16777216" "small $nsmall 16384"; do
	build_and_describe $spec
	t_hash=$(best run_hash "$pkg")
	t_verity=$(best run_verity "$pkg")
	printf '  %-8s %8.3f s\n  %-8s %8.3f s  verity/hash x%.2f  (target <= 1.3)\n' hash "$t_hash" \
		verity "$t_verity" "$(echo "$t_verity / $t_hash" | bc -l)"
done
