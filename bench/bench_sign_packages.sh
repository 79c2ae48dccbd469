#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sign-package over a release-like tree: -j 2 against -j 1, and against evmctl sign_hash over the same digests, in one run.
# Then, where SoftHSM2 and p11-kit are installed, the same key in a SoftHSM2 token, used
# directly and through p11-kit server on a unix socket (over the first TOKEN_PACKAGES).
# Usage: bench_sign_packages.sh [PACKAGES [FILES [TOKEN_PACKAGES]]]   (default 500 packages
# of 40 files, 50 through the token; top_builddir from the environment, default .;
# BENCH_CSV for bench/plot.sh)
set -eu
packages=${1:-500}
files=${2:-40}
token_packages=${3:-50}
IMASTREAM="${top_builddir:-.}/imastream"
for tool in rpmbuild rpm evmctl openssl; do
	command -v "$tool" >/dev/null 2>&1 || { echo "bench-sign-packages: $tool is missing" >&2; exit 1; }
done
work=$(mktemp -d /tmp/bench_sign_packages.XXXXXX)
server=
trap '[ -z "$server" ] || kill -- "-$server" 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=bench/bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
# The program itself, not libtool's wrapper script, whose shell would be timed with it.
bench_unwrap IMASTREAM

# Four distinct packages of $files files, copied under $packages names: signing reads and
# checks every copy as a package of its own, whatever its content.
mkdir -p "$work/tree/RPMS/noarch"
for k in 0 1 2 3; do
	pkg=$(bench_text_pkg "$work/top" $k "$files")
	rpm -qp --nosignature --qf '[%{FILEDIGESTS}\n]' "$pkg" | grep . >"$work/digests$k"
done
i=0
: >"$work/digests"
while [ $i -lt "$packages" ]; do
	k=$((i % 4))
	cp "$work/top/RPMS/noarch/bench$k-1-1.noarch.rpm" "$(printf '%s/tree/RPMS/noarch/p%05d-1-1.noarch.rpm' "$work" $i)"
	cat "$work/digests$k" >>"$work/digests"
	i=$((i + 1))
done
sigs=$(wc -l <"$work/digests")
pkg_bytes=$(find "$work/tree" -name '*.rpm' -exec cat {} + | wc -c)

now() { date +%s.%N; }
# sign_tree JOBS [TREE [KEY ARGS...]]: seconds for sign-package -j JOBS over a fresh copy
# of TREE (default the whole tree) with the key file, or KEY ARGS.
sign_tree() {
	jobs=$1
	src=${2:-$work/tree}
	shift $(($# < 2 ? $# : 2))
	[ $# -gt 0 ] || set -- --key "$work/k.key"
	rm -rf "$work/run"
	cp -a "$src" "$work/run"
	sync
	t0=$(now)
	"$IMASTREAM" sign-package -j "$jobs" --quiet --cert "$work/k.pem" "$@" "$work/run"
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
# One round per curve: P-256 (the fastest) and P-384 (docs/SETUP.md's choice); the
# token figures below use the P-256 key.
for curve in ${BENCH_CURVES:-P-384 P-256}; do
bench_ec_cert "$curve" "$work/k.key" "$work/k.pem" bench
j1=$(sign_tree 1)
j2=$(sign_tree 2)
t0=$(now)
rc=0
evmctl sign_hash -a sha256 --key "$work/k.key" <"$work/digests" >"$work/evmctl.out" 2>"$work/evmctl.err" || rc=$?
t1=$(now)
# A failed or partial run would make the peer look fast: every digest must be signed.
if [ "$rc" != 0 ] || [ "$(grep -c ' 03' "$work/evmctl.out")" != "$sigs" ]; then
	tail -n 5 "$work/evmctl.err" >&2
	echo "bench-sign-packages: evmctl sign_hash failed (exit $rc) or signed fewer than $sigs digests" >&2
	exit 1
fi
peer=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

awk -v p="$packages" -v f="$files" -v s="$sigs" -v j1="$j1" -v j2="$j2" -v e="$peer" -v b="$pkg_bytes" -v k="$curve" 'BEGIN {
	printf "%d packages x %d files (%d signatures, %.1f MiB), ECDSA %s, %d CPUs online, load %s\n",
		p, f, s, b / 1048576, k, '"$(nproc)"', "'"$(cut -d' ' -f1 /proc/loadavg)"'"
	printf "sign-package -j 1: %.3f s, %.0f packages/s, %.0f signatures/s\n", j1, p / j1, s / j1
	printf "sign-package -j 2: %.3f s, %.0f packages/s, %.0f signatures/s\n", j2, p / j2, s / j2
	printf "evmctl sign_hash over the same digests (one process): %.3f s, %.0f signatures/s\n", e, s / e
	printf "ratio -j 2 vs -j 1: x%.2f\n", j1 / j2
	printf "ratio sign-package -j 1 vs evmctl sign_hash: x%.2f; -j 2: x%.2f\n", e / j1, e / j2
}'
# x: the jobs; evmctl's one run is the peer of both (it has no jobs).
bench_csv "jobs" 1 "imastream sign-package ($curve)" "$j1" "$packages" packages/s
bench_csv "jobs" 2 "imastream sign-package ($curve)" "$j2" "$packages" packages/s
bench_csv "jobs" 1 "evmctl sign_hash ($curve; same signatures)" "$peer" "$packages" packages/s "$j1"
bench_csv "jobs" 2 "evmctl sign_hash ($curve; same signatures)" "$peer" "$packages" packages/s "$j2"
done
# What a signing host would receive instead of the packages: their digest manifest.
"$IMASTREAM" sign-package --export-digests "$work/manifest" "$work/tree/RPMS"
awk -v p="$packages" -v m="$(wc -c <"$work/manifest")" -v b="$pkg_bytes" 'BEGIN {
	printf "digest manifest: %.0f bytes per package, packages %.0f bytes each: %.1f%% of the bytes\n",
		m / p, b / p, 100 * m / b
}'

# --- The same P-256 key in a SoftHSM2 token: directly, and through p11-kit server.
softhsm=/usr/lib/softhsm/libsofthsm2.so
client=$(ls /usr/lib/*/pkcs11/p11-kit-client.so 2>/dev/null | head -n 1)
if ! command -v softhsm2-util >/dev/null 2>&1 || [ ! -f "$softhsm" ] || [ -z "$client" ] ||
   ! p11-kit server --help >/dev/null 2>&1; then
	echo "token figures skipped: SoftHSM2 (softhsm2) or p11-kit server and its client module (p11-kit, p11-kit-modules) missing"
	exit 0
fi
[ "$token_packages" -le "$packages" ] || token_packages=$packages
mkdir -p "$work/small/RPMS/noarch" "$work/tokens"
for f in $(ls "$work/tree/RPMS/noarch" | head -n "$token_packages"); do
	cp "$work/tree/RPMS/noarch/$f" "$work/small/RPMS/noarch/"
done
token_sigs=$((token_packages * files))
export SOFTHSM2_CONF="$work/softhsm2.conf"
printf 'directories.tokendir = %s/tokens\nobjectstore.backend = file\nlog.level = ERROR\n' "$work" >"$SOFTHSM2_CONF"
softhsm2-util --init-token --free --label bench --pin 1234 --so-pin 5678 >/dev/null
softhsm2-util --import "$work/k.key" --token bench --label ima --id 01 --pin 1234 >/dev/null
(umask 077; echo 1234 >"$work/pin")
uri="pkcs11:token=bench;object=ima;type=private"
small_local=$(sign_tree 2 "$work/small")
direct=$(sign_tree 2 "$work/small" --pass-file "$work/pin" --key "$uri?module-path=$softhsm")
setsid p11-kit server -f --provider "$softhsm" -n "$work/p11.sock" "pkcs11:token=bench" >"$work/server.out" 2>&1 &
server=$!
for _ in $(seq 100); do [ -S "$work/p11.sock" ] && break; sleep 0.1; done
export P11_KIT_SERVER_ADDRESS="unix:path=$work/p11.sock"
remote=$(sign_tree 2 "$work/small" --pass-file "$work/pin" --key "$uri?module-path=$client")
awk -v p="$token_packages" -v s="$token_sigs" -v l="$small_local" -v d="$direct" -v r="$remote" 'BEGIN {
	printf "%d packages (%d signatures), -j 2, ECDSA P-256:\n", p, s
	printf "  key file %.0f signatures/s; SoftHSM2 directly %.0f/s; p11-kit server + SoftHSM2 %.0f/s\n",
		s / l, s / d, s / r
	printf "  p11-kit server vs key file: x%.3f; vs SoftHSM2 directly: x%.2f\n", l / r, d / r
}'
bench_csv "key" 1 "key file ($token_packages packages)" "$small_local" "$token_sigs" signatures/s
bench_csv "key" 2 "SoftHSM2 directly" "$direct" "$token_sigs" signatures/s "$small_local"
bench_csv "key" 3 "p11-kit server + SoftHSM2" "$remote" "$token_sigs" signatures/s "$small_local"
