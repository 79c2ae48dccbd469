#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Verity mode against hash mode for `imastream install` and for rpm with imastream.so, timed inside one qemu boot of Debian 13's kernel on an ext4 -O verity disk, for hosts whose kernel has no fs-verity.
#
# The host kernel here has no CONFIG_FS_VERITY, so bench-install-verity cannot time verity
# mode on it. This one boots the kernel tests' guest (tests/kernel/vm-check.sh --verity:
# Debian 13's 6.12 from fetch-kernel.sh, this build's imastream, the host's rpm and this
# build's imastream.so), puts two packages on the disk and, in interleaved rounds, installs
# each with each tool in hash mode (security.ima digests) and in verity mode (-o verity=on,
# _imastream_verity on: a sigv3 by a P-256 key and fs-verity enabled on every file), each
# run into a fresh root on that disk. The guest's times come back with send_file.
#
# The guest is software-emulated (TCG, one vCPU), which stretches absolute times and
# taxes CPU work more than the host would; both modes pay it alike, but the Merkle tree
# the kernel builds in FS_IOC_ENABLE_VERITY is emulated SHA-256 too. So the ratio
# verity/hash is what this reports. The issue's sets (64 x 16 MiB, 5,000 x 16 KiB) take
# too long emulated; the defaults are scaled down:
#   IMASTREAM_BENCH_BIG (16) files of 16 MiB, IMASTREAM_BENCH_SMALL (1000) of 16 KiB,
#   IMASTREAM_BENCH_RUNS (3) rounds, IMASTREAM_BENCH_PAYLOAD (w19.zstdio),
#   IMASTREAM_BENCH_TIMEOUT (3600) seconds for the whole VM run, IMASTREAM_KERNEL (the
#   kernel to boot; default Debian 13's).
# Needs root, qemu and what the kernel tests need.
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$(pwd)}
kdir=$top_srcdir/tests/kernel
nbig=${IMASTREAM_BENCH_BIG:-16}
nsmall=${IMASTREAM_BENCH_SMALL:-1000}
runs=${IMASTREAM_BENCH_RUNS:-3}
payload=${IMASTREAM_BENCH_PAYLOAD:-w19.zstdio}
timeout_s=${IMASTREAM_BENCH_TIMEOUT:-3600}
memory=1024

die() { echo "bench-install-verity-guest: $*" >&2; exit 1; }
guest_bin=$top_builddir/.libs/imastream
[ -x "$guest_bin" ] || guest_bin=$top_builddir/imastream
[ -x "$guest_bin" ] || die "build first ($top_builddir/imastream missing)"
"$kdir/vm-check.sh" --verity --probe >/dev/null || die "$("$kdir/vm-check.sh" --verity --probe)"

# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
kernel=${IMASTREAM_KERNEL:-}
if [ -z "$kernel" ]; then
	kernel=$("$kdir/fetch-kernel.sh" trixie) || die "no Debian 13 kernel: $kernel"
fi
kernel_has "$kernel" CONFIG_FS_VERITY || die "$kernel has no CONFIG_FS_VERITY"

# The corpus must hold either package's files (bench_install_lib.sh makes it, $mb MiB).
mb=$((nbig * 16 > nsmall / 64 + 1 ? nbig * 16 : nsmall / 64 + 1))
# shellcheck source=bench/bench_install_lib.sh
. "$top_srcdir/bench/bench_install_lib.sh"

# The disk: both packages, the key, librpm's configuration (rpmrc) for rpm in the guest.
disk=$work/disk
mkdir -p "$disk/pkg" "$disk/keys" "$disk/rpm" "$work/fetched"
for spec in "big $nbig 16777216" "small $nsmall 16384"; do
	read -r name count size <<<"$spec"
	pkg=$(build "$name" "$count" "$size")
	describe "$name" "$pkg" >"$work/describe.$name"
	mv "$pkg" "$disk/pkg/$name.rpm"
done
rm -f "$corpus"
(umask 077; openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
	-subj "/CN=imastream bench" -addext subjectKeyIdentifier=hash -keyout "$disk/keys/p256.pem" \
	-outform DER -out "$disk/keys/p256.der" >"$work/openssl.log" 2>&1) || die "openssl: $(cat "$work/openssl.log")"

tools="install"
guest_rpm=()
so=$top_builddir/.libs/imastream.so
if command -v rpm >/dev/null && [ -x "$so" ] && [ -f /usr/lib/rpm/rpmrc ]; then
	cp -r /usr/lib/rpm/. "$disk/rpm/"
	guest_rpm=(--guest-bin "$(command -v rpm)" --guest-bin "$so")
	tools="install rpm"
else
	echo "bench-install-verity-guest: no rpm, rpmrc or imastream.so here: rpm is left out"
fi

cat >"$work/checks.sh" <<GUEST
runs=$runs
tools="$tools"
GUEST
cat >>"$work/checks.sh" <<'GUEST'
. /guest-lib.sh
mkdir -p /usr/lib/rpm && cp -r rpm/. /usr/lib/rpm/
key="--key /mnt/keys/p256.pem --cert /mnt/keys/p256.der"
# run_install|run_rpm MODE ROOT PKG: one install, as the host benches run them.
run_install() {
	case "$1" in
	hash) imastream install --root "$2" --allow-unsigned --quiet "$3" ;;
	verity) imastream install --root "$2" --allow-unsigned --quiet --mode sign $key \
		-o verity=on "$3" ;;
	esac
}
run_rpm() {
	mode=$1 root=$2 pkg=$3
	set -- --define "_imastream_mode hash"
	[ "$mode" = hash ] || set -- --define "_imastream_mode sign" --define "_imastream_verity on" \
		--define "_imastream_key /mnt/keys/p256.pem" --define "_imastream_cert /mnt/keys/p256.der"
	# /usr/local/bin/rpm: busybox has an rpm applet of its own, earlier in PATH.
	/usr/local/bin/rpm -i --nodeps --noscripts --notriggers --root "/mnt/$root" \
		--define "_dbpath /rpmdb" --define "__plugindir /usr/local/bin" \
		--define "_imastream_config %{nil}" \
		--define "__transaction_imastream /usr/local/bin/imastream.so" "$@" "$pkg"
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
# timed SET TOOL MODE ROUND: one run into a fresh root; records the uptime before, after
# the command, and after a sync (rpm leaves its writeback to the kernel; imastream
# install syncs the filesystem itself). A verity run must leave fs-verity on, a hash run off.
timed() {
	r=root-$1-$2-$3
	rm -rf "$r" && mkdir "$r" && sync
	t0=$(uptime_s)
	out=$(run_$2 "$3" "$r" "pkg/$1.rpm" 2>&1)
	rc=$?
	t1=$(uptime_s)
	sync
	t2=$(uptime_s)
	f=$(find "$r/opt" -type f | head -n 1)
	verity=hash
	[ -z "$f" ] || ! /verityctl measure "$f" >/dev/null 2>&1 || verity=verity
	if [ $rc != 0 ]; then
		report "$1:$2:$3:$4" FAIL "exit $rc: $out"
	elif [ -z "$f" ]; then
		report "$1:$2:$3:$4" FAIL "no file installed under $r/opt"
	elif [ $verity != "$3" ]; then
		report "$1:$2:$3:$4" FAIL "fs-verity is wrong on $f after a $3-mode install"
	else
		report "$1:$2:$3:$4" PASS "$t0 $t1 $t2"
	fi
	# What the kernel's own part of verity mode costs here, its Merkle tree build: the
	# same enable, timed alone on the files a hash-mode run left (clean, in page cache).
	k=0
	if [ $rc = 0 ] && [ "$3" = hash ]; then
		k0=$(uptime_s)
		find "$r/opt" -type f | xargs /verityctl enable >/tmp/enable.out 2>&1 ||
			report "$1:$2:enable:$4" FAIL "$(tail -n 3 /tmp/enable.out)"
		k=$(awk -v a="$k0" -v b="$(uptime_s)" 'BEGIN { print b - a }')
	fi
	echo "$1 $2 $3 $4 $t0 $t1 $t2 $k" >>/tmp/times
	rm -rf "$r"
	sync
}
mkdir -p /tmp && : >/tmp/times
for set in big small; do
	cat "pkg/$set.rpm" >/dev/null
	round=1
	while [ $round -le $runs ]; do
		# Alternate which mode goes first, so neither always follows the other.
		modes="hash verity"
		[ $((round % 2)) = 1 ] || modes="verity hash"
		for tool in $tools; do
			for mode in $modes; do
				timed $set $tool $mode $round
			done
		done
		round=$((round + 1))
	done
done
send_file times /tmp/times
GUEST

echo "bench-install-verity-guest: $(kernel_tag "$kernel") under qemu TCG (1 vCPU, $memory MiB), ext4 -O verity;" \
	"payload $payload, P-256, $runs interleaved rounds; host $(nproc) cores"
echo "  scaled down from the issue's 64 x 16 MiB and 5,000 x 16 KiB to $nbig x 16 MiB and $nsmall x 16 KiB"
echo "  (IMASTREAM_BENCH_BIG, IMASTREAM_BENCH_SMALL): emulation stretches absolute times, the ratio is the figure"
start=$SECONDS
# The largest install plus its Merkle tree, twice over, is room enough for one root at a time.
extra=$(((nbig * 16 > nsmall / 32 ? nbig * 16 : nsmall / 32) * 2 + 64))
LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	IMASTREAM_KERNEL=$kernel "$kdir/vm-check.sh" --verity --policy none --root "$disk" \
	--checks "$work/checks.sh" --guest-bin "$guest_bin" "${guest_rpm[@]}" \
	--disk-extra "$extra" --memory "$memory" --timeout "$timeout_s" --fetch "$work/fetched" \
	--name bench-install-verity-guest >"$work/checks.out" ||
	{ grep -v ' PASS ' "$work/checks.out" >&2; die "the guest run failed"; }
[ -s "$work/fetched/times" ] || die "no times came back from the guest"
echo "  guest run: $((SECONDS - start)) s (image, initramfs, boot, $(wc -l <"$work/fetched/times") installs)"

# Per set and tool: the best and the median of each mode, install alone and with the sync.
for set in big small; do
	cat "$work/describe.$set"
	for tool in $tools; do
		awk -v set="$set" -v tool="$tool" '
			function sort(a, n,   i, j, t) {
				for (i = 2; i <= n; i++)
					for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			}
			$1 == set && $2 == tool {
				n[$3]++; w[$3, n[$3]] = $6 - $5; s[$3, n[$3]] = $7 - $5
				if ($3 == "hash" && (k == "" || $8 < k)) k = $8
			}
			END {
				for (m in n) {
					for (i = 1; i <= n[m]; i++) { a[i] = w[m, i]; b[i] = s[m, i] }
					sort(a, n[m]); sort(b, n[m])
					best[m] = a[1]; med[m] = a[int((n[m] + 1) / 2)]; sbest[m] = b[1]
				}
				printf "  %-18s hash %7.2f s  verity %7.2f s  verity/hash x%.2f (medians x%.2f; with a sync after: x%.2f)\n",
					(tool == "rpm" ? "rpm + imastream.so" : "imastream install"),
					best["hash"], best["verity"], best["verity"] / best["hash"],
					med["verity"] / med["hash"], sbest["verity"] / sbest["hash"]
				printf "  %-18s the kernel enabling fs-verity alone: %.2f s; verity/hash without it x%.2f\n",
					"", k, (best["verity"] - k) / best["hash"]
			}' "$work/fetched/times"
	done
done
echo "  (best of $runs; target <= 1.3)"
