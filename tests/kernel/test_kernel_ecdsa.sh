#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What Debian 12's kernel cannot check, on a kernel built with ECDSA (Debian 13's 6.12):
# IMA signatures and EVM portable signatures made with ECDSA P-256 and P-384 keys, P-384
# over SHA-256 (what the big vendors use) and over SHA-384, and a vendor's P-384 file
# signatures carried by a package signed with `imastream sign-package`, passed through
# into security.ima by stock rpm with imastream.so and by `imastream install`.
#
# One boot per ECDSA kernel judges every tree (appraise-tree.sh --need CONFIG_CRYPTO_ECDSA);
# the checks are those of tests/kernel/README.md: programs run, tampered, unlabelled and
# (with EVM) unsigned-metadata copies are refused with the kernel's audit cause, files
# signed by a key the kernel lacks are refused. Skips (77) where no kernel has ECDSA.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
: "${top_builddir:?run through make check}"
kdir=$srcdir/tests/kernel
. "$srcdir/tests/integration/pkgsig-lib.sh"

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
pkgsig_setup
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
busybox=$(static_busybox) || { echo "SKIP: no static busybox to use as the test program"; exit 77; }

# eckey NAME CURVE: NAME.key, NAME.pem and NAME.der; the SKID by hash gives the key id.
eckey() {
	(umask 077; openssl req -x509 -newkey ec -pkeyopt "ec_paramgen_curve:$2" -nodes \
		-days 30 -subj "/CN=imastream ecdsa kernel $1" -addext subjectKeyIdentifier=hash \
		-keyout "$T/$1.key" -out "$T/$1.pem" >"$T/openssl.log" 2>&1) ||
		{ cat "$T/openssl.log"; exit 99; }
	openssl x509 -in "$T/$1.pem" -outform DER -out "$T/$1.der" || exit 99
}
eckey p256 P-256
eckey p384 P-384
eckey foreign P-256
eckey vendor P-384
eckey local P-256

# sign_tree ROOT EVM: imastream sign with each key and digest, one program per pair.
trees=()
for evm in none portable; do
	root=$T/sign-$evm
	while read -r rel key algo; do
		install_program "$root" "$rel"
		"$IMASTREAM" sign --evm "$evm" -a "$algo" --key "$T/$key.key" --cert "$T/$key.pem" \
			"$root/$rel" >"$T/sign.log" 2>&1 || { cat "$T/sign.log"; exit 99; }
	done <<'SIGNED'
usr/bin/busybox        p256    sha256
opt/p384/busybox       p384    sha256
opt/p384-sha384/busybox p384   sha384
opt/foreign/busybox    foreign sha256
SIGNED
	mode=imasig cause=invalid-signature
	[ $evm = none ] || mode=evm cause=invalid-fail-immutable
	trees+=(--root "$root" --mode $mode --tag "sign-$mode" --exec 'usr/bin/busybox true'
		--exec 'opt/p384/busybox true' --exec 'opt/p384-sha384/busybox true'
		--deny 'opt/foreign/busybox true' --cause $cause)
done

# A vendor package: P-384 file signatures over rpm's SHA-256 file digests, OpenPGP-signed
# header; installed with only the vendor's certificate as trust.
pkgsig_gpg_setup
pkv=$(pkgsig_build pkv) || exit 99
pkgsig_sign "$pkv" vendor
pkgsig_addsign "$pkv"
sig=$(pkg_sigs "$pkv" | awk '$1 ~ /\/busybox$/ { print $4 }')
[ -n "$sig" ] || fail "sign-package left no signature on busybox"
mkdir -p "$T/trust" && cp "$T/vendor.pem" "$T/local.pem" "$T/trust/" || exit 99

# rpm_tree NAME [rpm defines...]: rpm -i of pkv into a new root, checked on the host.
rpm_tree() {
	local root=$T/$1
	shift
	new_root "$root"
	rpm --root "$root" --import "$T/gpg.asc" 2>/dev/null || fail "rpm --root --import"
	irpm "$root" --define "_imastream_trust $T/trust" "$@" -i "$pkv" ||
		{ cat "$T/rpm.stderr"; fail "rpm -i $* failed"; }
	[ "$(xattr_of "$root/opt/pkv/busybox" security.ima)" = "$sig" ] ||
		fail "$root: busybox does not carry the vendor's signature"
	# The rpm database and the scriptlet shell are not what is judged.
	rm -rf "$root/bin" "$root/var"
}
rpm_tree rpm-vendor
rpm_tree rpm-vendor-evm --define "_imastream_key $T/local.key" \
	--define "_imastream_cert $T/local.pem" --define "_imastream_evm portable"
trees+=(--root "$T/rpm-vendor" --mode imasig --tag rpm-vendor --exec 'opt/pkv/busybox true'
	--root "$T/rpm-vendor-evm" --mode evm --tag rpm-vendor-evm --exec 'opt/pkv/busybox true')

# The same package through the streaming installer.
if "$IMASTREAM" install --help >/dev/null 2>&1; then
	root=$T/install-vendor
	mkdir -p "$root" || exit 99
	"$IMASTREAM" install --root "$root" --pgp-key "$T/gpg.asc" --quiet --trust "$T/trust" \
		--key "$T/local.key" --cert "$T/local.pem" --evm portable "$pkv" >"$T/install.log" 2>&1 ||
		{ cat "$T/install.log"; fail "imastream install failed"; }
	[ "$(xattr_of "$root/opt/pkv/busybox" security.ima)" = "$sig" ] ||
		fail "imastream install: busybox does not carry the vendor's signature"
	rm -rf "$root/var"
	trees+=(--root "$root" --mode evm --tag install-vendor-evm --exec 'opt/pkv/busybox true')
fi

"$kdir/appraise-tree.sh" --need CONFIG_CRYPTO_ECDSA --name test_kernel_ecdsa \
	--ima-cert "$T/p256.der" --ima-cert "$T/p384.der" --ima-cert "$T/vendor.der" \
	--evm-cert "$T/p256.der" --evm-cert "$T/p384.der" --evm-cert "$T/local.der" "${trees[@]}"
