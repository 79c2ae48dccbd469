#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What imastream.so costs inside stock rpm: rpm -i with the plugin against rpm -i --noplugins,
# and against rpm -i --noplugins followed by evmctl, on the same packages in one run.
#
# Two packages cut from this machine's binaries, payload IMASTREAM_BENCH_PAYLOAD (default
# w3.zstdio: zstd decompresses about as fast at any level, and level 3 builds a GiB quickly):
#   (a) big:   64 files of 16 MiB (BENCH_BIG_FILES)
#   (b) small: 5,000 files of 16 KiB
# Each round runs every command once, in turn, each into a fresh --root on /dev/shm;
# BENCH_ROUNDS rounds (default 5); the median of each command is compared (best in brackets):
#   noplugins   rpm -i --noplugins
#   hash        rpm -i, imastream.so in hash mode (sha256)            target <= 1.03x noplugins
#   sign+evm    rpm -i, sign mode + EVM portable, P-256 key (b only)  target <= 1.5x noplugins
#   evmctl      rpm -i --noplugins; evmctl ima_sign -r; evmctl sign --portable -r, same key
#                                                                     target >= 8x sign+evm
# CPU time (user + system, all threads) is printed beside wall time: on a machine busy with
# other work it shows what each command costs when wall time is noisy.
# Draws its plot, then exits 3 if a target is missed (one line names each), so it can
# gate; 1 on errors.  Needs root.
set -euo pipefail

: "${top_builddir:?run through make bench-rpm-plugin}"
so=$top_builddir/.libs/imastream.so
[ -f "$so" ] || { echo "bench-rpm-plugin: build first ($so missing)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-rpm-plugin: needs root (rpm --root)" >&2; exit 1; }
command -v evmctl >/dev/null || { echo "bench-rpm-plugin: evmctl not installed" >&2; exit 1; }
rounds=${BENCH_ROUNDS:-5}
nbig=${BENCH_BIG_FILES:-64} # fewer for a quick try; the target is for 64
payload=${IMASTREAM_BENCH_PAYLOAD:-w3.zstdio}

work=$(mktemp -d /dev/shm/imastream-bench-rpm.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"

bench_p256_cert "$work/key.pem" "$work/cert.pem" bench-rpm-plugin
openssl x509 -in "$work/cert.pem" -outform DER -out "$work/cert.der"

echo "bench-rpm-plugin: making a $((nbig * 16)) MiB corpus and two packages ($payload)..."
bench_corpus $((nbig * 16 > 80 ? nbig * 16 : 80))
big=$(bench_build_pkg big "$nbig" 16777216 "$payload")
small=$(bench_build_pkg small 5000 16384 "$payload")
rm -f "$corpus"

# Every variant runs the same rpm with the same flags; only the plugin differs.
rpm_i() {
	rpm -i --nodeps --noscripts --notriggers --root "$fresh" --define '_dbpath /rpmdb' \
		--define "__plugindir $top_builddir/.libs" --define "__transaction_imastream $so" "$@"
}
run_noplugins() { rpm_i --noplugins "$1"; }
run_hash() { rpm_i --define '_imastream_mode hash' "$1"; }
run_sign() {
	rpm_i --define '_imastream_mode sign' --define "_imastream_key $work/key.pem" \
		--define "_imastream_cert $work/cert.pem" --define '_imastream_evm portable' "$1"
}
# evmctl -r wants an absolute key path; 1.4 asks for --generation even when portable.
run_evmctl() {
	rpm_i --noplugins "$1"
	evmctl ima_sign -r --key "$work/key.pem" "$fresh/opt" >/dev/null 2>&1
	evmctl sign --portable -r --generation=0 --key "$work/key.pem" "$fresh/opt"
}

# check VARIANT PKG: one untimed run (it also warms the page cache), then what it wrote is
# checked with evmctl on a few files, so the timed runs are known to do the real work.
check() {
	local variant=$1 pkg=$2 name f want got
	name=$(rpm -qp --qf '%{NAME}' "$pkg")
	fresh=$work/check
	rm -rf "$fresh"
	mkdir -p "$fresh"
	"run_$variant" "$pkg" >/dev/null 2>"$work/stderr" ||
		{ cat "$work/stderr" >&2; echo "bench-rpm-plugin: $variant failed" >&2; exit 1; }
	# The first and the last file of the first directory.
	for f in $(find "$fresh/opt/$name/d0" -type f | sort | sed -n '1p;$p'); do
		case $variant in
		noplugins)
			;;
		hash)
			want=$(evmctl ima_hash -n "$f" 2>/dev/null)
			got=$(getfattr --absolute-names -n security.ima -e hex "$f" 2>/dev/null |
				sed -n 's/^security.ima=0x//p')
			[ -n "$want" ] && [ "$want" = "$got" ] ||
				{ echo "bench-rpm-plugin: $f: security.ima $got, evmctl $want" >&2; exit 1; }
			;;
		*)
			evmctl ima_verify --key "$work/cert.der" "$f" >/dev/null 2>&1 &&
				evmctl verify --generation=0 --key "$work/cert.der" "$f" >/dev/null 2>&1 ||
				{ echo "bench-rpm-plugin: $variant: evmctl rejects $f" >&2; exit 1; }
			;;
		esac
	done
	rm -rf "$fresh"
}

# measure PKG VARIANT...: $rounds rounds of every variant in turn (the order rotates each
# round, so none always runs first); sets med_, best_ (wall) and cpu_ (median CPU) of each.
measure() {
	local pkg=$1 r i n t v
	shift
	local variants=("$@")
	declare -gA times=() cpus=()
	for v in "${variants[@]}"; do
		check "$v" "$pkg"
		times[$v]=
		cpus[$v]=
	done
	n=${#variants[@]}
	for ((r = 0; r < rounds; r++)); do
		for ((i = 0; i < n; i++)); do
			v=${variants[$(((i + r) % n))]}
			t=$(bench_elapsed "run_$v" "$pkg") || exit 1
			times[$v]="${times[$v]} ${t% *}"
			cpus[$v]="${cpus[$v]} ${t#* }"
		done
	done
	for v in "${variants[@]}"; do
		# shellcheck disable=SC2086
		printf -v "med_$v" '%s' "$(bench_median ${times[$v]})"
		# shellcheck disable=SC2086
		printf -v "best_$v" '%s' "$(bench_min ${times[$v]})"
		# shellcheck disable=SC2086
		printf -v "cpu_$v" '%s' "$(bench_median ${cpus[$v]})"
	done
}

# verdict LABEL A B OP TARGET: prints A/B of the wall medians (best and CPU in brackets)
# and whether it meets "ratio OP target"; a miss is recorded, named with $files.
verdict() {
	local label=$1 a=$2 b=$3 op=$4 target=$5 ma mb ba bb ca cb r rb rc ok
	ma=med_$a mb=med_$b ba=best_$a bb=best_$b ca=cpu_$a cb=cpu_$b
	r=$(bench_ratio "${!ma}" "${!mb}")
	rb=$(bench_ratio "${!ba}" "${!bb}")
	rc=$(bench_ratio "${!ca}" "${!cb}")
	if awk -v r="$r" -v t="$target" -v op="$op" \
		'BEGIN { exit !((op == "<=") ? r <= t : r >= t) }'; then
		ok=met
	else
		ok=MISSED
		bench_target_missed "$label $op ${target}x on $files: ${r}x"
	fi
	printf '  %-28s %6.3fx (best %6.3fx, cpu %6.3fx)  target %s %sx: %s\n' "$label" "$r" \
		"$rb" "$rc" "$op" "$target" "$ok"
}

show() {
	local v m b c
	for v in "$@"; do
		m=med_$v b=best_$v c=cpu_$v
		printf '  %-10s wall median %7.3f s, best %7.3f s; cpu median %7.3f s\n' "$v" \
			"${!m}" "${!b}" "${!c}"
	done
}

# csv SIZE PKG: CSV rows (medians) of what measure just timed on PKG, files of SIZE bytes:
# the plugin's modes, and each peer against the mode it is compared with below.
csv() {
	local size=$1 mb
	mb=$(($(rpm -qp --qf '%{LONGSIZE}' "$2") / 1000000))
	bench_csv "file size (bytes)" "$size" "rpm -i + imastream.so (hash)" "$med_hash" "$mb" MB/s
	bench_csv "file size (bytes)" "$size" "rpm -i --noplugins (vs hash)" "$med_noplugins" \
		"$mb" MB/s "$med_hash"
	[ -n "${med_sign:-}" ] || return 0
	bench_csv "file size (bytes)" "$size" "rpm -i + imastream.so (sign + EVM)" "$med_sign" "$mb" MB/s
	bench_csv "file size (bytes)" "$size" "rpm -i + evmctl ima_sign + sign (vs sign + EVM)" \
		"$med_evmctl" "$mb" MB/s "$med_sign"
}

echo "bench-rpm-plugin: rpm $(rpm --version | awk '{print $3}'), $rounds rounds, medians," \
	"fresh roots on /dev/shm, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
echo "(a) $(rpm -qpl "$big" | wc -l) entries, $nbig files of 16 MiB," \
	"$(($(stat -c %s "$big") / 1048576)) MiB package"
files="16 MiB files"
measure "$big" noplugins hash
show noplugins hash
csv 16777216 "$big"
verdict "hash / noplugins" hash noplugins "<=" 1.03

echo "(b) $(rpm -qpl "$small" | wc -l) entries, 5,000 files of 16 KiB," \
	"$(($(stat -c %s "$small") / 1048576)) MiB package"
files="16 KiB files"
measure "$small" noplugins hash sign evmctl
show noplugins hash sign evmctl
csv 16384 "$small"
verdict "hash / noplugins" hash noplugins "<=" 1.03
verdict "sign+evm / noplugins" sign noplugins "<=" 1.5
verdict "rpm+evmctl / sign+evm" evmctl sign ">=" 8
bench_finish bench-rpm-plugin
