#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs one libFuzzer target for a bounded time on a copy of its committed seed corpus.
set -eu
target=$1
name=$(basename "$target")
seconds=${IMASTREAM_FUZZ_SECONDS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seeds="$top_srcdir/tests/fuzz/corpus/$name"
[ -d "$seeds" ] && cp -r "$seeds/." "$work/"
# -timeout catches hangs; -rss_limit_mb keeps a runaway allocation from taking the box.
# -handle_xfsz=0: targets that cap file sizes with RLIMIT_FSIZE ignore SIGXFSZ, so that
# an oversized write fails with EFBIG as on a full disk; libFuzzer's own handler would
# end the run instead.
# Leaks librpm makes on its own (lsan.supp) are matched by the full stack: librpm has no
# frame pointers, so the fast unwinder would stop at its allocator.
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$top_srcdir/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
rc=0
"$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -handle_xfsz=0 \
	-print_final_stats=1 -artifact_prefix="$work/" "$work" || rc=$?
# A target that exits 77 has found something: it must not read as "skipped".
[ "$rc" = 77 ] && rc=1
exit "$rc"
