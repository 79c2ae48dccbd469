#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Package file signatures through imastream install --trust: the same round trip as with
# stock rpm (sign-package, rpmsign, evmctl), and foreign or altered ones refused with
# nothing left, or replaced by the local hash with fallback.  The kernel in enforce mode:
# test_pkgsig_install_kernel.sh.
set -u
. "$top_srcdir/tests/integration/pkgsig-lib.sh"
"$IMASTREAM" install --help >/dev/null 2>&1 ||
	{ echo "SKIP: this build has no imastream install"; exit 77; }
pkgsig_setup noplugin

root="$T/root"
mkkey vendor
mkkey other
vendor_id=$(keyid_of vendor)
other_id=$(keyid_of other)
pkgsig_gpg_setup

pka=$(pkgsig_build pka) || exit 99
pkgsig_sign "$pka" vendor
pkgsig_addsign "$pka"
pkb=$(pkgsig_build pkb) || exit 99
pkgsig_sign "$pkb" other
pkgsig_addsign "$pkb"
pkg_sigs "$pka" >"$T/a.sigs"
pkg_sigs "$pkb" >"$T/b.sigs"

# inst ARGS...: imastream install into a fresh $root, the OpenPGP key trusted.
inst() {
	rm -rf "$root"
	mkdir -p "$root"
	"$IMASTREAM" install --root "$root" --pgp-key "$T/gpg.asc" --quiet "$@" >"$T/out" 2>"$T/err"
}

fail() {
	echo "FAIL: $*"
	sed 's/^/  install: /' "$T/err"
	exit 1
}

echo "== imastream install --trust: the package's signatures, checked, as security.ima"
inst --trust "$T/vendor.pem" "$pka" || fail "install of the trusted package failed"
n=0
while read -r path flags mode sig; do
	got=$(xattr_of "$root$path" security.ima)
	if [ $((flags & 1)) = 1 ]; then
		[ "$got" = "$(evmctl ima_hash -n "$root$path" 2>/dev/null)" ] ||
			fail "$path: %config file has '$got', not its digest"
		continue
	fi
	[ "$got" = "$sig" ] || fail "$path: security.ima '$got' is not the package's '$sig'"
	evmctl ima_verify --key "$T/vendor.der" "$root$path" >"$T/ev.log" 2>&1 ||
		{ cat "$T/ev.log"; fail "$path: evmctl ima_verify rejects it"; }
	n=$((n + 1))
done <"$T/a.sigs"
[ "$n" = 4 ] || fail "$n files verified, expected 4"
echo "ok: 4 files carry the package's signature, evmctl verifies each; %config hashed"

# refused PKG PATTERN ARGS...: exit status 1, one line matching PATTERN, no file left.
refused() {
	pkg=$1 pattern=$2
	shift 2
	inst "$@" "$pkg"
	rc=$?
	[ "$rc" = 1 ] || fail "install exited $rc for a package whose signatures must be refused"
	grep -q "ima: /\{0,1\}$pattern" "$T/err" || fail "no line matching '$pattern'"
	# The first refusal stops the package: one line, not one per file.
	[ "$(grep -c 'package signature refused' "$T/err")" = 1 ] || fail "not one refusal line"
	left=$(find "$root/opt" "$root/etc" ! -type d 2>/dev/null)
	[ -z "$left" ] || fail "left behind: $left"
}

echo "== signatures made with another key: refused, nothing left"
refused "$pkb" "opt/pkb/[a-z/]*: package signature refused (key id $other_id): no certificate" \
	--trust "$T/vendor.pem"
echo "ok: $(grep "package signature refused" "$T/err" | head -n 1)"

echo "== one altered signature byte: refused, nothing left"
alter_sig "$pka" "$T/a.sigs" /opt/pka/busybox "$T/alt.rpm"
refused "$T/alt.rpm" \
	"opt/pka/busybox: package signature refused (key id $vendor_id): it does not verify" \
	--trust "$T/vendor.pem"
echo "ok: $(grep "package signature refused" "$T/err" | head -n 1)"

echo "== fallback: the foreign package with local hashes and a warning per file"
inst --trust "$T/vendor.pem" --set package_sig_failure=fallback "$pkb" ||
	fail "install with fallback failed"
nw=0
while read -r path flags mode sig; do
	[ $((flags & 1)) = 1 ] && continue
	want=$(evmctl ima_hash -n "$root$path" 2>/dev/null)
	[ "$(xattr_of "$root$path" security.ima)" = "$want" ] || fail "$path: not the local hash"
	grep -q "ima: /\{0,1\}${path#/}: package signature not used (key id $other_id)" "$T/err" ||
		fail "$path: no warning naming the file and the key id"
	nw=$((nw + 1))
done <"$T/b.sigs"
[ "$nw" = 4 ] || fail "fallback covered $nw files, expected 4"
echo "ok: 4 files hashed locally, each with a warning"

echo "PASS"
