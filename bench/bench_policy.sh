#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream policy keylime --rpmdb against rpm -Va --root over the same installed root
# (issue 16: writing the reference values must cost at most 0.1x of verifying the root).
#
# The issue's bench root (issue 15's, bench-relabel's): the bench packages of bench-lib.sh,
#   (a) 64 files of 16 MiB (BENCH_BIG_FILES)   (b) 5,000 files of 16 KiB
# installed by rpm -i --noplugins into one root on a disk (IMASTREAM_BENCH_DIR, default
# /var/tmp: on tmpfs every read is a memory copy).  Both commands read the same database
# below the root (rpm's own %_dbpath); the policy takes the digests from the headers and
# opens no installed file, rpm -Va stats and hashes every one.  One untimed run of each
# checks its output, then BENCH_ROUNDS rounds (default 3), alternating, medians compared,
# once with the page cache warm and once cold (sync and drop_caches before every timed
# run: the database, the programs and their libraries are read from the disk too):
#   policy   imastream policy keylime --root R --rpmdb (JSON to /dev/null)
#   rpm-Va   rpm -Va --nodeps --noscripts --root R       target: policy <= 0.1x rpm-Va
# Wall and CPU time (user + system, children included) are both printed: on a shared
# machine the CPU ratio is the steadier one.  Draws its plot, then exits 3 if the target is
# missed with a cold cache, in one line (the warm one is reported, not gated); 1 on
# errors.  Needs root (rpm -i --root, drop_caches).
set -euo pipefail

: "${top_builddir:?run through make bench-policy}"
bin=$top_builddir/imastream
[ -x "$bin" ] || { echo "bench-policy: build first ($bin missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-policy: needs root (rpm -i --root, drop_caches)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench-policy: jq not installed" >&2; exit 1; }
rounds=${BENCH_ROUNDS:-3}
nbig=${BENCH_BIG_FILES:-64}
payload=${IMASTREAM_BENCH_PAYLOAD:-w3.zstdio}
case "$rounds$nbig" in *[!0-9]*) echo "bench-policy: BENCH_ROUNDS and BENCH_BIG_FILES want counts" >&2; exit 1 ;; esac

work=$(mktemp -d "${IMASTREAM_BENCH_DIR:-/var/tmp}/imastream-bench-policy.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
bench_unwrap bin
"$bin" --version >/dev/null

echo "bench-policy: making a $((nbig * 16)) MiB corpus and two packages ($payload)..."
root=$work/root
bench_issue_root "$root" "$nbig" "$payload"
bytes=$(du -sb --apparent-size "$root/opt" | cut -f1)

run_policy() { "$bin" policy keylime --root "$root" --rpmdb; }
# Only the files: no dependency check, no %verifyscript (rpm's cheapest -Va).
run_rpmva() { rpm -Va --nodeps --noscripts --root "$root"; }

# Untimed runs, checked: every file in the policy with its digest, nothing differs.
run_policy >"$work/policy.json" 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
[ "$(jq '.digests | length' "$work/policy.json")" = "$nfiles" ] ||
	{ echo "bench-policy: the policy does not list $nfiles files" >&2; exit 1; }
for f in "$root/opt/big/d0/f000000" "$root/opt/small/d49/f004999"; do
	[ "$(jq -r --arg p "${f#"$root"}" '.digests[$p][0]' "$work/policy.json")" = \
		"$(sha256sum <"$f" | cut -d' ' -f1)" ] || { echo "bench-policy: wrong digest of $f" >&2; exit 1; }
done
run_rpmva >"$work/va.out" 2>&1 || { cat "$work/va.out" >&2; echo "bench-policy: rpm -Va failed" >&2; exit 1; }
[ ! -s "$work/va.out" ] || { cat "$work/va.out" >&2; echo "bench-policy: rpm -Va found differences" >&2; exit 1; }

# drop_caches: dirty pages first, so that nothing of the root stays in memory.
cold() { sync && echo 3 >/proc/sys/vm/drop_caches; }

echo "bench-policy: rpm $(rpm --version | awk '{print $3}'), $rounds rounds, medians, root on" \
	"$(df --output=fstype "$work" | tail -1) ($work), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
printf 'root: %d files (%d x 16 MiB, 5,000 x 16 KiB), %d MiB, 2 packages\n' "$nfiles" "$nbig" \
	$((bytes / 1048576))
for cache in warm cold; do
	t_policy=() t_rpmva=() c_policy=() c_rpmva=()
	for ((i = 0; i < rounds; i++)); do
		order="policy rpmva"
		[ $((i % 2)) = 0 ] || order="rpmva policy"
		for v in $order; do
			[ $cache = warm ] || cold
			t=$(bench_elapsed "run_$v") || exit 1
			case $v in
			policy) t_policy+=("${t% *}") c_policy+=("${t#* }") ;;
			rpmva) t_rpmva+=("${t% *}") c_rpmva+=("${t#* }") ;;
			esac
		done
	done
	mp=$(bench_median "${t_policy[@]}") mv=$(bench_median "${t_rpmva[@]}")
	cp=$(bench_median "${c_policy[@]}") cv=$(bench_median "${c_rpmva[@]}")
	ratio=$(bench_ratio "$mp" "$mv")
	ok=met
	awk -v r="$ratio" 'BEGIN { exit !(r <= 0.1) }' || ok=MISSED
	[ $cache = warm ] || [ $ok = met ] ||
		bench_target_missed "policy / rpm -Va <= 0.1x, cold page cache: ${ratio}x"
	printf '%s page cache:\n' "$cache"
	printf '  policy keylime --rpmdb  wall median %7.3f s, cpu %7.3f s\n' "$mp" "$cp"
	printf '  rpm -Va                 wall median %7.3f s, cpu %7.3f s\n' "$mv" "$cv"
	printf '  policy / rpm -Va %6.3fx (cpu %6.3fx)  target <= 0.1x: %s%s\n' "$ratio" \
		"$(bench_ratio "$cp" "$cv")" "$ok" "$([ $cache = warm ] && echo ' (not gated)')"
	bench_csv "page cache" "$cache" "imastream policy keylime --rpmdb" "$mp" "$nfiles" files/s
	bench_csv "page cache" "$cache" "rpm -Va --root" "$mv" "$nfiles" files/s "$mp"
done
bench_finish bench-policy
