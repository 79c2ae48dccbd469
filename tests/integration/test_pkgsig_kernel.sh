#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A kernel appraising in enforce mode runs a program whose security.ima is the signature
# its package carried, passed through by stock rpm + imastream.so after verification, and
# refuses one (trusted at install) signed by a key the kernel lacks; then the same with
# EVM on, security.evm made by a local key over the vendor's security.ima.
set -u
. "$top_srcdir/tests/integration/pkgsig-lib.sh"
kdir="$top_srcdir/tests/kernel"
"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
pkgsig_setup
ldd /bin/busybox >/dev/null 2>&1 || [ ! -x /bin/busybox ] &&
	{ echo "SKIP: no static /bin/busybox to package as the test program"; exit 77; }

root="$T/root"
mkkey vendor
mkkey foreign
mkkey local
pkgsig_gpg_setup

# pkv: signed by the vendor, whose certificate the kernel gets; pkf: by a key it never sees.
pkv=$(pkgsig_build pkv) || exit 99
pkgsig_sign "$pkv" vendor
pkgsig_addsign "$pkv"
pkf=$(pkgsig_build pkf) || exit 99
pkgsig_sign "$pkf" foreign
pkgsig_addsign "$pkf"

new_root "$root"
rpm --root "$root" --import "$T/gpg.asc" 2>/dev/null || fail "rpm --root --import"
# The install trusts both keys: the kernel, given only the vendor's, must tell them apart.
mkdir "$T/trust"
cp "$T/vendor.pem" "$T/foreign.pem" "$T/trust/"
irpm "$root" --define "_imastream_trust $T/trust" -i "$pkv" "$pkf" || fail "rpm -i failed"
for p in pkv pkf; do
	sig=$(pkg_sigs "$T/top/RPMS/noarch/$p-1.0-1.noarch.rpm" | awk '$1 ~ /\/busybox$/ { print $4 }')
	[ -n "$sig" ] && [ "$(xattr_of "$root/opt/$p/busybox" security.ima)" = "$sig" ] ||
		fail "$p: busybox does not carry its package signature"
done
# The rpm database and the scriptlet shell are not what is judged: a smaller disk image.
rm -rf "$root/bin" "$root/var"

# EVM mode: the vendor's signature in security.ima, a portable EVM signature by the
# device's own key over it (the store holds both certificates: the local key must verify).
cp "$T/local.pem" "$T/trust/"
evmroot="$T/root-evm"
new_root "$evmroot"
rpm --root "$evmroot" --import "$T/gpg.asc" 2>/dev/null || fail "rpm --root --import"
irpm "$evmroot" --define "_imastream_trust $T/trust" --define "_imastream_key $T/local.key" \
	--define "_imastream_cert $T/local.pem" --define "_imastream_evm portable" -i "$pkv" ||
	fail "rpm -i with evm portable failed"
sig=$(pkg_sigs "$pkv" | awk '$1 ~ /\/busybox$/ { print $4 }')
[ "$(xattr_of "$evmroot/opt/pkv/busybox" security.ima)" = "$sig" ] ||
	fail "with EVM, busybox does not carry its package signature"
rm -rf "$evmroot/bin" "$evmroot/var"

# One boot per kernel judges both trees: the imasig one with EVM off, then the evm one.
"$kdir/appraise-tree.sh" --ima-cert "$T/vendor.der" --evm-cert "$T/local.der" \
	--name test_pkgsig_kernel \
	--root "$root" --mode imasig --exec 'opt/pkv/busybox true' \
	--deny 'opt/pkf/busybox true' --cause invalid-signature \
	--root "$evmroot" --mode evm --exec 'opt/pkv/busybox true'
