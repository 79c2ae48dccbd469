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
exec "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/" "$work"
