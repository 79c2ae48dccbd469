# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the install benchmarks: the scratch folder, its corpus and packages (bench-lib.sh), the payload alone, best-of timing.
# Reads mb, nsmall, payload and runs, bench-install's defaults for those not set before;
# sets work and corpus.  Sourced, not run.
# shellcheck shell=bash

: "${mb:=${IMASTREAM_BENCH_MB:-96}}"
: "${nsmall:=${IMASTREAM_BENCH_SMALL:-5000}}"
: "${payload:=${IMASTREAM_BENCH_PAYLOAD:-w19.zstdio}}"
: "${runs:=${IMASTREAM_BENCH_RUNS:-3}}"

work=$(mktemp -d /dev/shm/imastream-bench-install.XXXXXX)
trap 'rm -rf "$work"' EXIT

# shellcheck source=bench/bench-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_corpus "$mb" || exit 1

# build NAME FILES SIZE: a package whose files are consecutive slices of the corpus; prints its path.
build() {
	bench_build_pkg "$1" "$2" "$3" "$payload" || exit 1
}

# Both benchmarks' packages, as "NAME FILES SIZE": large files, then many small ones.
packages=("big $((mb / 4 > 0 ? mb / 4 : 1)) 4194304" "small $nsmall 16384")

# describe NAME PKG: one line on the package; sets bytes (its installed size).
describe() {
	local files
	files=$(rpm -qpl "$2" | wc -l)
	bytes=$(rpm -qp --qf '%{LONGSIZE}' "$2")
	echo "$1: $files files, $((bytes / 1048576)) MiB installed, $(($(stat -c %s "$2") / 1048576)) MiB package"
}

# build_and_describe NAME FILES SIZE: build, then describe; sets pkg, size (SIZE) and bytes.
build_and_describe() {
	pkg=$(build "$1" "$2" "$3")
	describe "$1" "$pkg"
	size=$3
}

# payload_of PKG OUT: the compressed payload bytes (after lead, signature and header).
payload_of() {
	local pkg=$1 off=96 n hs
	be32() { od -An -tu1 -j "$1" -N4 "$pkg" | awk '{ print ($1 * 16777216) + ($2 * 65536) + ($3 * 256) + $4 }'; }
	n=$(be32 $((off + 8))); hs=$(be32 $((off + 12)))
	off=$((off + 16 + 16 * n + hs)); off=$(((off + 7) / 8 * 8))
	n=$(be32 $((off + 8))); hs=$(be32 $((off + 12)))
	off=$((off + 16 + 16 * n + hs))
	tail -c +$((off + 1)) "$pkg" >"$2"
}

# best CMD...: the best wall time of $runs runs, in seconds; $fresh is a new empty root.
best() {
	local b="" t
	for _ in $(seq "$runs"); do
		t=$(bench_elapsed "$@") || { echo "bench-install: '$*' failed" >&2; exit 1; }
		t=${t%% *}
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}
