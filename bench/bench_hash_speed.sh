#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream hash -r on 2,000 x 64 KiB files against evmctl ima_hash -r on the same tree and against two two-core SHA-256 limits, openssl speed -multi 2 and the engine's own batches on the same bytes in RAM: medians of N rounds, wall and CPU, with the load average.
set -euo pipefail

: "${top_builddir:?run through make bench-hash-speed}"
bin="$top_builddir/imastream"
peak="$top_builddir/bench/bench_hash_peak"
rounds=${BENCH_ROUNDS:-7}
count=${BENCH_COUNT:-2000}
size=${BENCH_SIZE:-65536}
# A second tree on a disk, read from a warm page cache, when this names a folder there.
disk_dir=${BENCH_DISK_DIR:-}
for tool in evmctl openssl; do
	command -v "$tool" >/dev/null || { echo "bench-hash-speed: $tool not installed" >&2; exit 1; }
done
[ -z "$disk_dir" ] || [ -d "$disk_dir" ] ||
	{ echo "bench-hash-speed: BENCH_DISK_DIR=$disk_dir is not a folder" >&2; exit 1; }

base=/dev/shm
[ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/bench-hash-speed.XXXXXX")
disk_work=
[ -z "$disk_dir" ] || disk_work=$(mktemp -d "$disk_dir/bench-hash-speed.XXXXXX")
trap 'rm -rf "$work" ${disk_work:+"$disk_work"}' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
bench_unwrap bin
bench_unwrap peak
"$bin" --version >/dev/null || { echo "bench-hash-speed: $bin does not run" >&2; exit 1; }
opt=()
[ "$(id -u)" = 0 ] || opt=(--xattr-user)

sets=tmpfs
bench_small_files "$work/tree" "$count" "$size"
if [ -n "$disk_work" ]; then
	bench_small_files "$disk_work/tree" "$count" "$size"
	sets="tmpfs disk"
fi
tree_of() { if [ "$1" = tmpfs ]; then echo "$work/tree"; else echo "$disk_work/tree"; fi; }
mib=$((count * size / 1048576))

# timed CMD...: "WALL USER SYS CPU" seconds of one run, output in $work/out; a failure is
# fatal.  With perf, CPU is its task-clock (every thread, to the microsecond; user and
# sys come from the kernel's coarser accounting), and WALL the command's own, perf's
# start excluded; else bash's time, CPU = user + sys.
perf=
perf stat -e task-clock -o /dev/null -- true 2>/dev/null && perf=perf
timed() {
	local rc=0 TIMEFORMAT='%R %U %S'
	if [ -n "$perf" ]; then
		perf stat -e task-clock -o "$work/perf" -- "$@" >"$work/out" 2>"$work/stderr" || rc=$?
	else
		{ time "$@" >"$work/out" 2>"$work/stderr" || rc=$?; } 2>"$work/time"
	fi
	if [ "$rc" != 0 ]; then
		echo "bench-hash-speed: '$*' failed ($rc):" >&2
		tail -5 "$work/stderr" >&2
		exit 1
	fi
	if [ -n "$perf" ]; then
		awk '/task-clock/ { c = $1 / 1000 } /time elapsed/ { w = $1 }
			/seconds user/ { u = $1 } /seconds sys/ { s = $1 }
			END { printf "%.6f %.6f %.6f %.6f\n", w, u, s, c }' "$work/perf"
	else
		awk '{ printf "%.6f %.6f %.6f %.6f\n", $1, $2, $3, $2 + $3 }' "$work/time"
	fi
}
evm=(evmctl ima_hash -r "${opt[@]}" -a sha256)
ours=("$bin" hash -r --quiet "${opt[@]}" -a sha256)
# The engine's peak: the same bytes as in-memory batches of 16 messages, 2 threads, each
# message its own bytes in RAM as each file's are in the page cache (hot: one batch's
# buffers over and over, from the caches); as "WALL 0 0 CPU", the seconds of its threads'
# batches alone, without the process start and the filling of the buffers.
engine() {
	timed "$peak" 2 "$count" "$size" "$@" >/dev/null
	awk '{ printf "%.6f 0 0 %.6f\n", $1, $2 }' "$work/out"
}
# openssl speed -multi 2 on messages of the files' size, one second of each process: as
# "WALL 0 0 CPU" seconds for the tree's bytes, WALL from the rate it gives in wall time
# (-elapsed, both processes summed), CPU from the bytes they hashed and the CPU time the
# run took (its own default, user time, counts whole clock ticks); each process says its
# count on stderr, the sum of their rates on stdout.
openssl_limit() {
	local t
	t=$(timed openssl speed -elapsed -multi 2 -seconds 1 -evp sha256 -bytes "$size" -mr)
	awk -v cpu="${t##* }" -v size="$size" -v b=$((count * size)) -F: '
		/^\+R:/ { done += $2 * size } /^\+F:/ { rate = $4 }
		END { if (done <= 0 || rate <= 0 || cpu <= 0) exit 1
		      printf "%.6f 0 0 %.6f\n", b / rate, b * cpu / done }' "$work/out" "$work/stderr"
}

# Every program's values equal evmctl's, in evmctl's order.
evmctl ima_hash -r -n -a sha256 "$work/tree" 2>/dev/null >"$work/evmctl.out"
"$bin" hash -r -n --no-names --quiet -a sha256 "$work/tree" >"$work/ours.out"
cmp -s "$work/evmctl.out" "$work/ours.out" || { echo "bench-hash-speed: values differ from evmctl's" >&2; exit 1; }
backend=$("$peak" 1 16 "$size" | cut -d' ' -f3)

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# A warm-up each, so that every timed run reads from the page cache; then rounds in
# which each program runs once in turn, so that the load falls on all of them alike.
for s in $sets; do
	timed "${evm[@]}" "$(tree_of "$s")" >/dev/null
	timed "${ours[@]}" "$(tree_of "$s")" >/dev/null
done
declare -A runs
for _ in $(seq "$rounds"); do
	for s in $sets; do
		t=$(tree_of "$s")
		runs[$s evm]+="$(timed "${evm[@]}" "$t")"$'\n'
		runs[$s ours]+="$(timed "${ours[@]}" "$t")"$'\n'
		runs[$s one]+="$(timed "${ours[@]}" -j 1 "$t")"$'\n'
	done
	runs[engine]+="$(engine)"$'\n'
	runs[hot]+="$(engine hot)"$'\n'
	runs[openssl]+="$(openssl_limit)"$'\n'
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# med KEY FIELD: the median of field FIELD (1 wall, 2 user, 3 sys, 4 CPU) of KEY's runs.
med() {
	# shellcheck disable=SC2046
	bench_median $(awk -v f="$2" 'NF { print $f }' <<<"${runs[$1]}")
}
ratio() { bench_ratio "$1" "$2" 2; }
engine_wall=$(med engine 1) engine_cpu=$(med engine 4) hot_cpu=$(med hot 4)
ossl_wall=$(med openssl 1) ossl_cpu=$(med openssl 4)

printf 'imastream hash -r, sha256, %s, %d x %d KiB (%d MiB) per tree; medians of %d rounds\n' \
	"${opt[*]:-security.ima}" "$count" $((size / 1024)) "$mib" "$rounds"
printf 'load average (1, 5, 15 min): %s before, %s after\n' "$load_before" "$load_after"
printf 'two-core limits for the same bytes: openssl speed -multi 2 %.3f s wall, %.3f s CPU; engine (%s, 2 threads, in RAM) %.3f s wall, %.3f s CPU (from its caches: %.3f s CPU)\n' \
	"$ossl_wall" "$ossl_cpu" "$backend" "$engine_wall" "$engine_cpu" "$hot_cpu"
x="tree (wall time; ratios: peer or limit time / imastream -j 2)"
for s in $sets; do
	w_evm=$(med "$s evm" 1) w_ours=$(med "$s ours" 1) w_one=$(med "$s one" 1)
	c_evm=$(med "$s evm" 4) c_ours=$(med "$s ours" 4)
	printf '%s tree:\n' "$s"
	printf '  %-34s %7.3f s wall %7.3f s user %7.3f s sys\n' "evmctl ima_hash -r" "$w_evm" \
		"$(med "$s evm" 2)" "$(med "$s evm" 3)"
	printf '  %-34s %7.3f s wall %7.3f s user %7.3f s sys\n' "imastream hash -r -j 2" "$w_ours" \
		"$(med "$s ours" 2)" "$(med "$s ours" 3)"
	printf '  %-34s %7.3f s wall %7.3f s user %7.3f s sys\n' "imastream hash -r -j 1" "$w_one" \
		"$(med "$s one" 2)" "$(med "$s one" 3)"
	echo "  evmctl / ours: x$(ratio "$w_evm" "$w_ours") wall (target >= 3), x$(ratio "$c_evm" "$c_ours") CPU; -j 1: x$(ratio "$w_evm" "$w_one") wall"
	echo "  ours / openssl speed -multi 2: $(ratio "$w_ours" "$ossl_wall")x wall, $(ratio "$c_ours" "$ossl_cpu")x CPU (target <= 1.3x)"
	echo "  ours / engine in RAM: $(ratio "$w_ours" "$engine_wall")x wall, $(ratio "$c_ours" "$engine_cpu")x CPU (target <= 1.3x)"
	set_name="$s: $count x $((size / 1024)) KiB"
	bench_csv "$x" "$set_name" "imastream hash -r -j 2" "$w_ours" "$mib" MiB/s
	bench_csv "$x" "$set_name" "imastream hash -r -j 1" "$w_one" "$mib" MiB/s
	bench_csv "$x" "$set_name" "evmctl ima_hash -r" "$w_evm" "$mib" MiB/s "$w_ours"
	bench_csv "$x" "$set_name" "limit: openssl speed -multi 2" "$ossl_wall" "$mib" MiB/s "$w_ours"
	bench_csv "$x" "$set_name" "limit: engine in RAM; 2 threads" "$engine_wall" "$mib" MiB/s "$w_ours"
done
# Where the CPU time goes: a profile of five runs on the tmpfs tree, by what the time
# is spent on (perf record, where this kernel lets perf sample the kernel too).
if [ -n "$perf" ] && perf record -q -e cpu-clock -F 10000 -o "$work/prof.data" -- \
	bash -c 'for _ in 1 2 3 4 5; do "$@" >/dev/null; done' prof "${ours[@]}" "$work/tree" \
	2>/dev/null; then
	perf report -i "$work/prof.data" --comm "$(basename "$bin")" --no-children --sort sym \
		--stdio -g none 2>/dev/null | awk '
		/^ *[0-9.]+%/ { p = $1 + 0; total += p
			if ($0 ~ /batch_|sha256|SHA256/) hash += p
			else if ($0 ~ /copy_to_iter|copy_user|copy_page_to_iter/) copy += p
			else if ($0 ~ /\[k\]/) kern += p
			else user += p }
		END { if (total > 0)
			printf "where the CPU time of imastream hash -r goes (perf record, tmpfs tree): SHA-256 %.0f%%, copying read(2) data %.0f%%, the rest of the kernel %.0f%% (open, fstat, fsetxattr, page cache), the rest of user space %.0f%% (start, walk, output)\n",
				hash * 100 / total, copy * 100 / total, kern * 100 / total, user * 100 / total }'
fi
# CPU seconds do not depend on what else runs: the same comparison per CPU second.
x="CPU time (task-clock; ratios: peer or limit CPU / imastream -j 2)"
set_name="tmpfs: $count x $((size / 1024)) KiB"
c_ours=$(med "tmpfs ours" 4)
bench_csv "$x" "$set_name" "imastream hash -r -j 2 (CPU)" "$c_ours" "$mib" MiB/s
bench_csv "$x" "$set_name" "evmctl ima_hash -r (CPU)" "$(med "tmpfs evm" 4)" "$mib" MiB/s "$c_ours"
bench_csv "$x" "$set_name" "limit: openssl speed (CPU)" "$ossl_cpu" "$mib" MiB/s "$c_ours"
bench_csv "$x" "$set_name" "limit: engine in RAM (CPU)" "$engine_cpu" "$mib" MiB/s "$c_ours"
