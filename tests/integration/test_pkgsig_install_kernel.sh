#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A kernel in enforce mode runs a program whose security.ima imastream install --trust took
# from its package, and refuses one (trusted at install) signed by a key the kernel lacks.
# Split from test_pkgsig_install.sh so that a machine without the VM reports SKIP, not PASS.
set -u
. "$top_srcdir/tests/integration/pkgsig-lib.sh"
kdir="$top_srcdir/tests/kernel"
"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
"$IMASTREAM" install --help >/dev/null 2>&1 ||
	{ echo "SKIP: this build has no imastream install"; exit 77; }
pkgsig_setup noplugin

root="$T/root"
mkkey vendor
mkkey other
pkgsig_gpg_setup
pka=$(pkgsig_build pka) || exit 99
pkgsig_sign "$pka" vendor
pkgsig_addsign "$pka"
pkb=$(pkgsig_build pkb) || exit 99
pkgsig_sign "$pkb" other
pkgsig_addsign "$pkb"

mkdir "$T/trust"
cp "$T/vendor.pem" "$T/other.pem" "$T/trust/"
mkdir -p "$root"
"$IMASTREAM" install --root "$root" --pgp-key "$T/gpg.asc" --quiet --trust "$T/trust" \
	"$pka" "$pkb" >"$T/out" 2>"$T/err" || { cat "$T/err"; fail "install of both packages failed"; }
"$kdir/appraise-tree.sh" --root "$root" --mode imasig --ima-cert "$T/vendor.der" \
	--exec 'opt/pka/busybox true' --deny 'opt/pkb/busybox true' \
	--cause invalid-signature --name test_pkgsig_install_kernel-imasig || exit $?
echo "PASS"
