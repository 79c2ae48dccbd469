#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream policy keylime --rpmdb against rpm -Va --root over the same installed root
# (issue 16: writing the reference values must cost at most 0.1x of verifying the root).
#
# Two roots, each of BENCH_FILES files (default 5,000) in packages of 100 files, installed
# by one rpm -i into a fresh root on /dev/shm:
#   usr     every k-th regular file of this machine's /usr, sizes as they come (a sample
#           of an installed system: here 66 KiB on average)
#   small   files of 16 KiB each (slices of those files): the worst case for the policy,
#           whose cost is per file while rpm -Va's grows with the bytes it hashes
# Both commands read the same database below the root (rpm's own %_dbpath); the policy
# takes the digests from the headers and opens no installed file, rpm -Va stats and
# hashes every one. Page cache warm for both (one untimed run each, which also checks
# their output); BENCH_ROUNDS rounds (default 5), alternating, medians compared:
#   policy   imastream policy keylime --root R --rpmdb (JSON to /dev/null)
#   rpm-Va   rpm -Va --nodeps --noscripts --root R       target: policy <= 0.1x rpm-Va
# Wall and CPU time (user + system, children included) are both printed: on a shared
# machine the CPU ratio is the steadier one. Exits 1 if the target is missed on the usr
# root (the small root is reported, not gated). Needs root (rpm -i --root).
set -euo pipefail

: "${top_builddir:?run through make bench-policy}"
bin=$top_builddir/imastream
[ -x "$bin" ] || { echo "bench-policy: build first ($bin missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-policy: needs root (rpm -i --root)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench-policy: jq not installed" >&2; exit 1; }
rounds=${BENCH_ROUNDS:-5}
nfiles=${BENCH_FILES:-5000}
case "$nfiles" in '' | *[!0-9]* | 0) echo "bench-policy: BENCH_FILES wants a count" >&2; exit 1 ;; esac

work=$(mktemp -d /dev/shm/imastream-bench-policy.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
# The program itself, not libtool's wrapper script: the wrapper's shell costs more than
# the policy of a small root.
if [ -x "$top_builddir/.libs/imastream" ]; then
	bin=$top_builddir/.libs/imastream
	export LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
"$bin" --version >/dev/null

# make_files KIND DIR: $nfiles files in DIR/pP/ (100 per P; one cp or mv per directory).
make_files() {
	local kind=$1 dir=$2 p=0 batch
	mkdir -p "$dir"
	case "$kind" in
	usr)
		find /usr -xdev -type f -readable -print0 2>/dev/null | sort -z |
			awk -v RS='\0' -v ORS='\0' -v want="$nfiles" '
				{ f[NR] = $0 }
				END {
					if (NR < want) exit 1
					for (i = 0; i < want; i++) print f[1 + int(i * NR / want)]
				}' >"$work/files.list" ||
			{ echo "bench-policy: /usr has fewer than $nfiles files" >&2; return 1; } ;;
	small)
		bench_corpus $((nfiles / 64 + 1)) || return 1
		split -b 16384 -a 6 -d "$corpus" "$work/s"
		rm -f "$corpus"
		find "$work" -maxdepth 1 -name 's[0-9]*' -print0 | sort -z | head -z -n "$nfiles" >"$work/files.list" ;;
	esac
	# usr keeps the files' paths below pP (names repeat across directories).
	while mapfile -d '' -n 100 batch && [ ${#batch[@]} -gt 0 ]; do
		mkdir -p "$dir/p$p"
		case "$kind" in
		usr) cp --parents -t "$dir/p$p" "${batch[@]}" ;;
		small) mv -t "$dir/p$p" "${batch[@]}" ;;
		esac || return 1
		p=$((p + 1))
	done <"$work/files.list"
	find "$work" -maxdepth 1 -name 's[0-9]*' -delete
}

# build_pkgs DIR: one rpmbuild, a subpackage bP per DIR/pP. Prints the packages' paths.
build_pkgs() {
	local dir=$1 p n
	n=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | wc -l)
	rm -rf "$work/top"
	{
		printf 'Name: b\nVersion: 1\nRelease: 1\nSummary: bench\nLicense: MIT\nBuildArch: noarch\nAutoReqProv: no\n'
		printf '%%description\nbench\n'
		for ((p = 0; p < n; p++)); do
			printf '%%package -n b%d\nSummary: bench\nAutoReqProv: no\n%%description -n b%d\nbench\n' $p $p
		done
		printf '%%install\nmkdir -p %%{buildroot}/opt && cp -a %s/. %%{buildroot}/opt/\n' "$dir"
		for ((p = 0; p < n; p++)); do
			printf '%%files -n b%d\n/opt/p%d\n' $p $p
		done
	} >"$work/b.spec"
	rpmbuild -bb --quiet --define "_topdir $work/top" --define '_binary_payload w3.zstdio' \
		--define '_build_id_links none' --define '__os_install_post %{nil}' \
		--define '_binaries_in_noarch_packages_terminate_build 0' \
		"$work/b.spec" >"$work/rpmbuild.log" 2>&1 || { cat "$work/rpmbuild.log" >&2; return 1; }
	find "$work/top/RPMS" -name 'b*.rpm'
}

run_policy() { "$bin" policy keylime --root "$root" --rpmdb; }
# Only the files: no dependency check, no %verifyscript (rpm's cheapest -Va).
run_rpmva() { rpm -Va --nodeps --noscripts --root "$root"; }

missed=0
echo "bench-policy: rpm $(rpm --version | awk '{print $3}'), $rounds rounds, medians," \
	"roots on /dev/shm, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
for kind in usr small; do
	rm -rf "$work/files"
	make_files "$kind" "$work/files" || exit 1
	mapfile -t pkgs < <(build_pkgs "$work/files")
	[ ${#pkgs[@]} -gt 0 ] || { echo "bench-policy: rpmbuild made no package" >&2; exit 1; }
	root=$work/root-$kind
	mkdir -p "$root"
	rpm -i --nodeps --noscripts --root "$root" "${pkgs[@]}" 2>"$work/stderr" ||
		{ cat "$work/stderr" >&2; exit 1; }
	rm -rf "$work/top" "$work/files"
	mb=$(du -sm --apparent-size "$root/opt" | cut -f1)
	# Untimed runs, checked: every file in the policy with its digest, nothing differs.
	run_policy >"$work/policy.json" 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
	[ "$(jq '.digests | length' "$work/policy.json")" = "$nfiles" ] ||
		{ echo "bench-policy: the policy does not list $nfiles files" >&2; exit 1; }
	f=$(find "$root/opt" -type f -print -quit)
	[ "$(jq -r --arg p "${f#"$root"}" '.digests[$p][0]' "$work/policy.json")" = \
		"$(sha256sum <"$f" | cut -d' ' -f1)" ] || { echo "bench-policy: wrong digest of $f" >&2; exit 1; }
	run_rpmva >"$work/va.out" 2>&1 || { cat "$work/va.out" >&2; echo "bench-policy: rpm -Va failed" >&2; exit 1; }
	[ ! -s "$work/va.out" ] || { cat "$work/va.out" >&2; echo "bench-policy: rpm -Va found differences" >&2; exit 1; }

	t_policy=() t_rpmva=() c_policy=() c_rpmva=()
	for ((i = 0; i < rounds; i++)); do
		order="policy rpmva"
		[ $((i % 2)) = 0 ] || order="rpmva policy"
		for v in $order; do
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
	[ "$kind" = small ] || [ $ok = met ] || missed=1
	printf '%s: %d packages, %d files, %d MiB:\n' "$kind" ${#pkgs[@]} "$nfiles" "$mb"
	printf '  policy keylime --rpmdb  wall median %7.3f s, cpu %7.3f s\n' "$mp" "$cp"
	printf '  rpm -Va                 wall median %7.3f s, cpu %7.3f s\n' "$mv" "$cv"
	printf '  policy / rpm -Va %6.3fx (cpu %6.3fx)  target <= 0.1x: %s%s\n' "$ratio" \
		"$(bench_ratio "$cp" "$cv")" "$ok" "$([ "$kind" = small ] && echo ' (not gated)')"
	mean=$(($(du -sb --apparent-size "$root/opt" | cut -f1) / nfiles))
	bench_csv "mean file size (bytes)" "$mean" "imastream policy keylime --rpmdb" "$mp" "$nfiles" files/s
	bench_csv "mean file size (bytes)" "$mean" "rpm -Va --root" "$mv" "$nfiles" files/s "$mp"
	rm -rf "$root"
done
exit $missed
