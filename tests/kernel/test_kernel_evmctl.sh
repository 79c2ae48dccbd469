#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel acceptance of evmctl-labelled trees in hash, IMA-signature and IMA+EVM modes:
# proves the harness (and the kernel's rules) before it judges imastream's own output.
#
# One VM boot for the three modes (about 15 s under TCG). Each tree holds a busybox copy at
# usr/bin/busybox, owned by root and labelled by evmctl 1.4 with a throw-away RSA-2048
# key whose certificate has subjectKeyIdentifier=hash (the kernel finds the key by the
# last four bytes of the SKID, evmctl by the same bytes of the public key's SHA-1).
# appraise-tree.sh adds the tampered, unlabelled and no-EVM controls; this test adds
# files signed by a second key that is never loaded, which the kernel must refuse.
# Skips (77) when the VM cannot run here (see vm-check.sh --probe) or evmctl or openssl
# is missing. The guest console of a failed run is kept as ./test_kernel_evmctl.console.log.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
kdir=$srcdir/tests/kernel

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
command -v evmctl >/dev/null || { echo "SKIP: evmctl not found (package ima-evm-utils)"; exit 77; }
command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
busybox=$(static_busybox) || { echo "SKIP: no static busybox to use as the test program"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_kernel_evmctl.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

make_key "$tmp" trusted && make_key "$tmp" foreign || exit 99

# label MODE KEY FILE [ALGO]: what an image builder would run for MODE.
label() {
	local out=$tmp/evmctl.log algo=${4:-sha256}
	case "$1" in
	hash) evmctl ima_hash -a "$algo" "$3" ;;
	imasig) evmctl ima_sign -a "$algo" --key "$tmp/$2.pem" "$3" ;;
	evm) evmctl sign --imasig --portable --generation=0 -a "$algo" --key "$tmp/$2.pem" "$3" ;;
	esac >"$out" 2>&1 || { echo "evmctl failed for $1 on $3:"; cat "$out"; exit 99; }
}

# The three trees share one boot: hash and imasig with EVM off, then evm with EVM on.
trees=()
for mode in hash imasig evm; do
	root=$tmp/root-$mode
	install_program "$root" usr/bin/busybox
	label "$mode" trusted "$root/usr/bin/busybox"
	# sha512 is a module on Debian 6.1 (CONFIG_CRYPTO_SHA512=m) that vm-check.sh preloads;
	# this shows the kernel follows the algorithm named in the xattr, not its default.
	install_program "$root" opt/sha512/busybox
	label "$mode" trusted "$root/opt/sha512/busybox" sha512
	trees+=(--root "$root" --mode "$mode" --exec 'usr/bin/busybox true'
		--exec 'opt/sha512/busybox true')
	case "$mode" in
	imasig)
		install_program "$root" opt/foreign/busybox
		label imasig foreign "$root/opt/foreign/busybox"
		# The key is not in _ima: integrity_digsig_verify gives ENOKEY.
		trees+=(--deny 'opt/foreign/busybox true' --cause invalid-signature) ;;
	evm)
		install_program "$root" opt/foreign/busybox
		label evm foreign "$root/opt/foreign/busybox"
		trees+=(--deny 'opt/foreign/busybox true' --cause invalid-fail-immutable)
		# A good IMA signature but security.evm from a key that is not in _evm: proves
		# that EVM, not only IMA, checks its signature against its own keyring.
		install_program "$root" opt/evm-foreign/busybox
		label imasig trusted "$root/opt/evm-foreign/busybox"
		evmctl sign --portable --generation=0 -a sha256 --key "$tmp/foreign.pem" \
			"$root/opt/evm-foreign/busybox" >"$tmp/evmctl.log" 2>&1 ||
			{ cat "$tmp/evmctl.log"; exit 99; }
		trees+=(--deny 'opt/evm-foreign/busybox true' --cause invalid-fail-immutable) ;;
	esac
done
"$kdir/appraise-tree.sh" --ima-cert "$tmp/trusted.der" --name test_kernel_evmctl "${trees[@]}"
