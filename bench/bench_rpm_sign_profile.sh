#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Where sign + EVM's cost goes under rpm, thread by thread: rpm -i of 5,000 files of 16 KiB
# with imastream.so in hash mode, IMA signature alone, sign + EVM without and with the
# signing worker, and with %_imastream_sync file, against rpm -i --noplugins.
#
# First the CPU time of each (perf stat task-clock, median of BENCH_ROUNDS interleaved
# rounds, default 5) and its ratio to --noplugins: what each step adds.  Then one perf
# record of --noplugins and of sign + EVM with and without the worker, its samples split
# by thread (rpm's own, the worker) and by library: rpm's libraries (decompression,
# rpm's digests, its database), libcrypto, libc, the kernel, imastream.so.  rpm's thread
# is the critical path: with a free second core, its CPU time over --noplugins' is the
# floor of the wall ratio.  Then how many files took the worker's signatures (rpm -vv,
# its own run).  Roots on /dev/shm (an fsync costs its system call there, not a flush).
# Counts and CPU times, no target.  Needs root and perf.
set -euo pipefail

: "${top_builddir:?run through make bench-rpm-sign-profile}"
so=$top_builddir/.libs/imastream.so
[ -f "$so" ] || { echo "bench-rpm-sign-profile: build first ($so missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-rpm-sign-profile: needs root (rpm --root)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench-rpm-sign-profile: perf not installed" >&2; exit 1; }
rounds=${BENCH_ROUNDS:-5}
files=${BENCH_FILES:-5000}

work=$(mktemp -d /dev/shm/imastream-bench-sign-profile.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

bench_ec_cert P-256 "$work/p256.key" "$work/p256.pem" bench-rpm-sign-profile
echo "bench-rpm-sign-profile: making a package of $files x 16 KiB (w3.zstdio)..."
bench_corpus $((files / 64 + 2))
pkg=$(bench_build_pkg small "$files" 16384 w3.zstdio)
rm -f "$corpus"

# cmd_of VARIANT: the rpm command line of VARIANT into cmd (perf runs programs, not
# shell functions); the package is appended by the caller.
cmd_of() {
	cmd=(rpm -i --nodeps --noscripts --notriggers --root "$fresh" --define '_dbpath /rpmdb'
		--define "__plugindir $top_builddir/.libs" --define "__transaction_imastream $so")
	local sign=(--define '_imastream_mode sign' --define "_imastream_key $work/p256.key"
		--define "_imastream_cert $work/p256.pem")
	case $1 in
	noplugins) cmd+=(--noplugins) ;;
	hash) cmd+=(--define '_imastream_mode hash' --define '_imastream_sync none') ;;
	ima) cmd+=("${sign[@]}" --define '_imastream_evm none' --define '_imastream_sync none'
		--define '_imastream_sign_threads 0') ;;
	sign) cmd+=("${sign[@]}" --define '_imastream_evm portable' --define '_imastream_sync none'
		--define '_imastream_sign_threads 0') ;;
	worker) cmd+=("${sign[@]}" --define '_imastream_evm portable' --define '_imastream_sync none'
		--define '_imastream_sign_threads 1') ;;
	worker_sync) cmd+=("${sign[@]}" --define '_imastream_evm portable'
		--define '_imastream_sync file' --define '_imastream_sign_threads 1') ;;
	esac
}
declare -A label=([noplugins]="rpm -i --noplugins" [hash]="hash mode"
	[ima]="IMA signature alone, no worker" [sign]="sign + EVM, no worker"
	[worker]="sign + EVM, worker" [worker_sync]="sign + EVM, worker, sync file")
variants=(noplugins hash ima sign worker worker_sync)

# task_clock VARIANT: the CPU milliseconds of one run, every thread.
task_clock() {
	fresh=$work/root
	rm -rf "$fresh"
	mkdir -p "$fresh"
	sync
	cmd_of "$1"
	perf stat -x, -e task-clock -o "$work/stat" -- "${cmd[@]}" "$pkg" >/dev/null 2>"$work/stderr" ||
		{ tail -5 "$work/stderr" >&2; echo "bench-rpm-sign-profile: $1 failed" >&2; exit 1; }
	awk -F, '/task-clock/ { printf "%.1f\n", $1 }' "$work/stat"
}

echo "bench-rpm-sign-profile: rpm $(rpm --version | awk '{print $3}'), $files x 16 KiB, P-256," \
	"fresh roots on /dev/shm, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A ms
for ((r = 0; r < rounds; r++)); do
	for ((i = 0; i < ${#variants[@]}; i++)); do
		v=${variants[$(((i + r) % ${#variants[@]}))]}
		ms[$v]+=" $(task_clock "$v")"
	done
done
echo "  CPU time, every thread (median of $rounds):"
for v in "${variants[@]}"; do
	m=$(bench_median ${ms[$v]})
	[ "$v" != noplugins ] || base=$m
	printf '    %-32s %7.1f ms  %6.3fx  %6.1f us a file\n' "${label[$v]}" "$m" \
		"$(bench_ratio "$m" "$base" 4)" "$(awk -v m="$m" -v n="$files" 'BEGIN { print m * 1000 / n }')"
done

# profile VARIANT: one perf record; prints rpm's thread and the others, ms by library.
profile() {
	fresh=$work/root
	rm -rf "$fresh"
	mkdir -p "$fresh"
	cmd_of "$1"
	perf record -q -F 4000 -o "$work/perf.data" -- "${cmd[@]}" "$pkg" >/dev/null 2>"$work/stderr" ||
		{ tail -5 "$work/stderr" >&2; echo "bench-rpm-sign-profile: perf record $1 failed" >&2; exit 1; }
	perf script -i "$work/perf.data" -F comm,pid,tid,ip,dso 2>/dev/null | awk -v hz=4000 -v what="${label[$1]}" '
		$1 != "rpm" { next }
		{
			split($2, id, "/")
			t = (id[1] == id[2]) ? "rpm" : "other"
			d = $NF; gsub(/[()]/, "", d); sub(/.*\//, "", d)
			if (d ~ /^libcrypto/) g = "libcrypto"
			else if (d ~ /^libc\.so/) g = "libc"
			else if (d ~ /kernel/) g = "kernel"
			else if (d ~ /^imastream/) g = "imastream.so"
			else g = "rpm+libs"
			n[t, g]++; tot[t]++
		}
		END {
			split("rpm+libs libcrypto libc kernel imastream.so", gs, " ")
			printf "    %-32s rpm thread %6.1f ms (", what, tot["rpm"] * 1000 / hz
			for (i = 1; i <= 5; i++)
				printf "%s%s %.1f", (i > 1 ? ", " : ""), gs[i], n["rpm", gs[i]] * 1000 / hz
			printf "); other threads %.1f ms\n", tot["other"] * 1000 / hz
		}'
}
echo "  perf record, one run each, ms of samples by thread and library:"
for v in noplugins sign worker; do
	profile "$v"
done

fresh=$work/root
rm -rf "$fresh"
mkdir -p "$fresh"
cmd_of worker
"${cmd[@]}" -vv "$pkg" 2>&1 >/dev/null | sed -n 's/^D: imastream: signing worker: /  signing worker, one run: /p'
echo "bench-rpm-sign-profile: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
