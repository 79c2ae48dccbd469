#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream relabel and verify --rpmdb on a root stock rpm installed, against rpm -Va (which
# only verifies) and rpm -Va followed by evmctl, on the same root in one run.
#
# One root on /dev/shm with the bench packages installed by rpm --noplugins:
#   (a) 64 files of 16 MiB (BENCH_BIG_FILES)   (b) 5,000 files of 16 KiB
# Before each timed relabel (and evmctl run) the IMA/EVM xattrs are taken off, untimed, so
# each run does the whole work.  BENCH_ROUNDS rounds (default 3), medians:
#   rpmva      rpm -Va --root R
#   hash       imastream relabel --root R (hash mode)           target <= 1.0x rpmva
#   sign       imastream relabel, sign + EVM portable, P-256
#   evmctl     rpm -Va; evmctl ima_sign -r; evmctl sign --portable -r
#                                                               target >= 5x sign
#   audit      imastream verify --root R --rpmdb (after sign)   target <= 1.0x rpmva
# Exits 3 if a target is missed, after one line naming each; 1 on errors.  Needs root,
# rpm, rpmbuild, evmctl.
set -euo pipefail

: "${top_builddir:?run through make bench-relabel}"
ims=$top_builddir/imastream
[ -x "$ims" ] || { echo "bench-relabel: build first ($ims missing)" >&2; exit 1; }
# The program itself, as installed: libtool's wrapper script runs a shell and sed at every
# start (0.3 s on a loaded machine), which rpm, installed, does not pay.
if [ -x "$top_builddir/.libs/imastream" ]; then
	ims=$top_builddir/.libs/imastream
	export LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
"$ims" --version >/dev/null
[ "$(id -u)" = 0 ] || { echo "bench-relabel: needs root (rpm --root)" >&2; exit 1; }
command -v evmctl >/dev/null || { echo "bench-relabel: evmctl not installed" >&2; exit 1; }
rounds=${BENCH_ROUNDS:-3}
nbig=${BENCH_BIG_FILES:-64}
payload=${IMASTREAM_BENCH_PAYLOAD:-w3.zstdio}

work=$(mktemp -d /dev/shm/imastream-bench-relabel.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"

bench_p256_cert "$work/key.pem" "$work/cert.pem" bench-relabel

echo "bench-relabel: making a $((nbig * 16)) MiB corpus and two packages ($payload)..."
root=$work/root
# rpm's own %_dbpath below the root, which relabel and verify --rpmdb read as rpm does.
bench_issue_root "$root" "$nbig" "$payload"

strip() {
	find "$root/opt" -type f -print0 | xargs -0 setfattr -x security.evm 2>/dev/null || true
	find "$root/opt" -type f -print0 | xargs -0 setfattr -x security.ima 2>/dev/null || true
}
sign_opts=(--mode sign --evm portable -k "$work/key.pem" -c "$work/cert.pem")
run_rpmva() { rpm -Va --nodeps --noscripts --root "$root"; }
run_hash() { "$ims" relabel --root "$root" --quiet; }
run_sign() { "$ims" relabel --root "$root" --quiet "${sign_opts[@]}"; }
run_evmctl() {
	rpm -Va --nodeps --noscripts --root "$root"
	evmctl ima_sign -r --key "$work/key.pem" "$root/opt" >/dev/null 2>&1
	evmctl sign --portable -r --generation=0 --key "$work/key.pem" "$root/opt"
}
run_audit() { "$ims" verify --root "$root" --rpmdb -t "$work/cert.pem" --evm require; }

declare -A times=() cpus=()
time_one() {
	local v=$1 t
	case $v in hash | sign | evmctl) strip ;; audit) strip; run_sign >/dev/null 2>&1 ;; esac
	t=$(bench_elapsed "run_$v") || exit 1
	times[$v]="${times[$v]:-} ${t% *}"
	cpus[$v]="${cpus[$v]:-} ${t#* }"
}
variants=(rpmva hash sign evmctl audit)
for ((r = 0; r < rounds; r++)); do
	for v in "${variants[@]}"; do
		time_one "$v"
	done
done
for v in "${variants[@]}"; do
	# shellcheck disable=SC2086
	printf -v "med_$v" '%s' "$(bench_median ${times[$v]})"
	# shellcheck disable=SC2086
	printf -v "cpu_$v" '%s' "$(bench_median ${cpus[$v]})"
done
echo "bench-relabel: rpm $(rpm --version | awk '{print $3}'), $rounds rounds, medians," \
	"root on /dev/shm, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
# CPU time (user + system, every thread): on a loaded machine the wall time follows it.
for v in "${variants[@]}"; do
	m=med_$v c=cpu_$v
	printf '  %-7s %7.3f s  (cpu %7.3f s)\n' "$v" "${!m}" "${!c}"
done
# The targets are on wall time; the CPU ratio is printed beside it.
verdict() {
	local label=$1 r=$2 op=$3 target=$4 cpu=$5 ok=met
	awk -v r="$r" -v t="$target" -v op="$op" 'BEGIN { exit !((op == "<=") ? r <= t : r >= t) }' ||
		{ ok=MISSED; bench_target_missed "$label $op ${target}x: ${r}x"; }
	printf '  %-32s %6.3fx  target %s %sx: %-6s (cpu %.3fx)\n' "$label" "$r" "$op" "$target" \
		"$ok" "$cpu"
}
verdict "relabel hash / rpm -Va" "$(bench_ratio "$med_hash" "$med_rpmva")" "<=" 1.0 \
	"$(bench_ratio "$cpu_hash" "$cpu_rpmva")"
verdict "rpm -Va + evmctl / relabel sign" "$(bench_ratio "$med_evmctl" "$med_sign")" ">=" 5 \
	"$(bench_ratio "$cpu_evmctl" "$cpu_sign")"
verdict "verify --rpmdb / rpm -Va" "$(bench_ratio "$med_audit" "$med_rpmva")" "<=" 1.0 \
	"$(bench_ratio "$cpu_audit" "$cpu_rpmva")"
bench_finish bench-relabel
