#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A kernel appraising in enforce mode runs a program whose security.ima is the signature
# its package carried, passed through by stock rpm + imastream.so after verification, and
# refuses one passed through (with fallback off, trusted at install) under a key it lacks.
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

"$kdir/appraise-tree.sh" --root "$root" --mode imasig --ima-cert "$T/vendor.der" \
	--exec 'opt/pkv/busybox true' --deny 'opt/pkf/busybox true' --cause invalid-signature \
	--name test_pkgsig_kernel
