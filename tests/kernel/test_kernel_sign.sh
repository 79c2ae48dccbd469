#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel acceptance of trees labelled by imastream sign: IMA signatures, then IMA + EVM
# portable signatures, and a file signed in the VM with a private key the kernel holds.
#
# The same harness and controls as test_kernel_evmctl.sh (see tests/kernel/README.md), with
# the labels written by "imastream sign" (--evm none for the imasig tree), in one boot.
# RSA-2048 only: Debian's 6.1 kernel has no ECDSA.
#
# Kernel-held key: the guest loads the PKCS#8 form of the trusted key into a keyring
# (pkcs8_key_parser, a module on Debian 6.1), runs this build's imastream (copied into the
# initramfs with its libraries) as "imastream sign --key kernel:SERIAL" on a busybox copy
# owned by uid 1000 (so appraise_tcb leaves it alone while it is read), gives it to root
# and runs it: the signature the kernel made must appraise. Then the same with an EVM
# portable signature too: a root-owned copy, hashed on the host so that it may be read
# while EVM is off, is signed in the guest with --evm portable, and run once EVM is on.
# The host kernel here lacks
# the PKCS#8 parser, which is why tests/integration/test_keys_kernel_sign.sh skips there.
# Skips (77) where the VM cannot run.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
kdir=$srcdir/tests/kernel
imastream=$builddir/imastream

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
[ -x "$imastream" ] || { echo "ERROR: $imastream not built"; exit 99; }
# The program itself, not libtool's wrapper script, goes into the guest.
guest_bin=$builddir/.libs/imastream
[ -x "$guest_bin" ] || guest_bin=$imastream
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
busybox=$(static_busybox) || { echo "SKIP: no static busybox to use as the test program"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_kernel_sign.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

make_key "$tmp" trusted && make_key "$tmp" foreign || exit 99

# label MODE KEY FILE [ALGO]
label() {
	local evm=portable
	[ "$1" = imasig ] && evm=none
	"$imastream" sign --evm "$evm" -a "${4:-sha256}" --key "$tmp/$2.pem" \
		--cert "$tmp/$2.der" "$3" >"$tmp/sign.log" 2>&1 ||
		{ echo "imastream sign failed for $1 on $3:"; cat "$tmp/sign.log"; exit 99; }
}

trees=()
for mode in imasig evm; do
	root=$tmp/root-$mode
	install_program "$root" usr/bin/busybox
	label "$mode" trusted "$root/usr/bin/busybox"
	install_program "$root" opt/sha512/busybox
	label "$mode" trusted "$root/opt/sha512/busybox" sha512
	install_program "$root" opt/foreign/busybox
	label "$mode" foreign "$root/opt/foreign/busybox"
	trees+=(--root "$root" --mode "$mode" --exec 'usr/bin/busybox true'
		--exec 'opt/sha512/busybox true' --deny 'opt/foreign/busybox true')
	case "$mode" in
	imasig) trees+=(--cause invalid-signature) ;;
	evm) trees+=(--cause invalid-fail-immutable) ;;
	esac
done

# The kernel-held key's material, on the disk and owned by uid 1000: not appraised.
ks=$tmp/root-imasig/ksign
mkdir -p "$ks" &&
	openssl pkcs8 -topk8 -nocrypt -in "$tmp/trusted.pem" -outform DER -out "$ks/key.p8" &&
	cp "$tmp/trusted.der" "$ks/cert.der" && cp "$tmp/foreign.der" "$ks/foreign.der" &&
	cp "$busybox" "$ks/busybox" &&
	chown -R 1000:1000 "$ks" && chmod 0755 "$ks/busybox" || exit 99
install_program "$tmp/root-imasig" ksign-evm/busybox
"$imastream" hash -a sha256 "$tmp/root-imasig/ksign-evm/busybox" >"$tmp/hash.log" 2>&1 ||
	{ cat "$tmp/hash.log"; exit 99; }
cat >"$tmp/ksign.sh" <<'GUEST'
# Sign with a private key held by the kernel, then let the kernel appraise the result.
ks=./imasig/ksign
if out=$(/keyload -d imastream-kernel-sign _ksign $ks/key.p8 2>&1); then
	serial=${out##* serial }
	report ksign-load PASS "PKCS#8 key in keyring _ksign, serial $serial"
	if out=$(imastream sign --evm none -a sha256 --key "kernel:$serial" \
		--cert $ks/cert.der $ks/busybox 2>&1); then
		report ksign-sign PASS "imastream sign --key kernel:$serial"
	else
		report ksign-sign FAIL "$out"
	fi
else
	report ksign-load FAIL "the kernel took no private key: $out"
fi
# Given to root whatever happened: unsigned, the kernel would refuse it (missing-hash).
chown 0:0 $ks/busybox
expect_runs ksign-runs $ks/busybox true
# A signature, not a hash: it names the trusted key, which the foreign store lacks.
out=$(imastream verify --evm none --trust $ks/foreign.der $ks/busybox 2>&1)
case "$out" in
*"unknown key id"*) report ksign-is-signature PASS "$out" ;;
*) report ksign-is-signature FAIL "$out" ;;
esac
# IMA + EVM portable signatures from the kernel-held key; run once EVM is on (below).
if out=$(imastream sign --evm portable -a sha256 --key "kernel:$serial" \
	--cert $ks/cert.der ./imasig/ksign-evm/busybox 2>&1); then
	report ksign-evm-sign PASS "imastream sign --evm portable --key kernel:$serial"
else
	report ksign-evm-sign FAIL "$out"
fi
GUEST
cat >"$tmp/ksign-evm.sh" <<'GUEST'
# With EVM on: the kernel-made EVM signature holds, and binds the metadata.
expect_runs ksign-evm-runs ./imasig/ksign-evm/busybox true
expect_meta_denied ksign-evm-chmod %a chmod 0700 ./imasig/ksign-evm/busybox
GUEST

LD_LIBRARY_PATH=$builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	"$kdir/appraise-tree.sh" --ima-cert "$tmp/trusted.der" --name test_kernel_sign \
	--guest-checks "$tmp/ksign.sh" --guest-checks-evm "$tmp/ksign-evm.sh" --guest-bin "$guest_bin" "${trees[@]}"
