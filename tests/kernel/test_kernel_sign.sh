#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel acceptance of trees labelled by imastream sign: IMA signatures, then IMA + EVM portable signatures.
#
# The same harness and controls as test_kernel_evmctl.sh (see tests/kernel/README.md), with
# the labels written by "imastream sign" (--evm none for the imasig mode). RSA-2048 only:
# Debian's 6.1 kernel has no ECDSA. Skips (77) where the VM cannot run.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
kdir=$srcdir/tests/kernel
imastream=$builddir/imastream

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
[ -x "$imastream" ] || { echo "ERROR: $imastream not built"; exit 99; }
busybox=""
for b in /bin/busybox /usr/bin/busybox; do
	[ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1 && { busybox=$b; break; }
done
[ -n "$busybox" ] || { echo "SKIP: no static busybox to use as the test program"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_kernel_sign.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

make_key() {
	(umask 077; openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
		-subj "/CN=imastream sign kernel test $1" -addext subjectKeyIdentifier=hash \
		-keyout "$tmp/$1.pem" -outform DER -out "$tmp/$1.der" >"$tmp/openssl.log" 2>&1) ||
		{ cat "$tmp/openssl.log"; exit 99; }
}
make_key trusted
make_key foreign

install_program() {
	mkdir -p "$(dirname "$1/$2")" && install -m 0755 -o 0 -g 0 "$busybox" "$1/$2" || exit 99
}

# label MODE KEY FILE [ALGO]
label() {
	local evm=portable
	[ "$1" = imasig ] && evm=none
	"$imastream" sign --evm "$evm" -a "${4:-sha256}" --key "$tmp/$2.pem" \
		--cert "$tmp/$2.der" "$3" >"$tmp/sign.log" 2>&1 ||
		{ echo "imastream sign failed for $1 on $3:"; cat "$tmp/sign.log"; exit 99; }
}

overall=0
for mode in imasig evm; do
	root=$tmp/root-$mode
	install_program "$root" usr/bin/busybox
	label "$mode" trusted "$root/usr/bin/busybox"
	install_program "$root" opt/sha512/busybox
	label "$mode" trusted "$root/opt/sha512/busybox" sha512
	install_program "$root" opt/foreign/busybox
	label "$mode" foreign "$root/opt/foreign/busybox"
	extra=(--exec 'opt/sha512/busybox true')
	case "$mode" in
	imasig) extra+=(--deny 'opt/foreign/busybox true' --cause invalid-signature) ;;
	evm) extra+=(--deny 'opt/foreign/busybox true' --cause invalid-fail-immutable) ;;
	esac
	echo "== mode $mode"
	"$kdir/appraise-tree.sh" --root "$root" --mode "$mode" --ima-cert "$tmp/trusted.der" \
		--exec 'usr/bin/busybox true' --name "test_kernel_sign-$mode" "${extra[@]}"
	rc=$?
	case $rc in
	0) ;;
	77) exit 77 ;;
	99) overall=99 ;;
	*) [ $overall = 99 ] || overall=1 ;;
	esac
done
exit $overall
