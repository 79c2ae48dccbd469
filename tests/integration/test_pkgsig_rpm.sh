#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Package file signatures through stock rpm and imastream.so: signed with imastream
# sign-package and rpmsign, verified against the trust store before they become
# security.ima (checked by evmctl); foreign, altered and unusable ones refused or replaced.
set -u
. "$top_srcdir/tests/integration/pkgsig-lib.sh"
pkgsig_setup

root="$T/root"
mkkey vendor
mkkey other
mkkey local
vendor_id=$(keyid_of vendor)
other_id=$(keyid_of other)
pkgsig_gpg_setup

echo "== a package signed file by file (sign-package) and as a whole (rpmsign)"
pka=$(pkgsig_build pka) || exit 99
pkgsig_sign "$pka" vendor
pkgsig_addsign "$pka"
rpmkeys --dbpath "$T/db" --initdb 2>/dev/null
rpmkeys --dbpath "$T/db" --import "$T/gpg.asc" || fail "rpmkeys --import"
rpmkeys --dbpath "$T/db" -Kv "$pka" >"$T/k.txt" 2>&1 || fail "rpm -K: $(cat "$T/k.txt")"
# rpm 4: "Header V4 RSA/SHA512 Signature, key ID ...: OK"; rpm 6: "Header OpenPGP V4
# RSA/SHA512 signature, key fingerprint: ...: OK".
grep -Eq 'Header (OpenPGP )?V4 RSA/SHA[0-9]* [Ss]ignature, key (ID|fingerprint):? [0-9a-f]*: OK' "$T/k.txt" ||
	fail "rpm -K does not report a good OpenPGP signature: $(cat "$T/k.txt")"
! grep -qi 'fail\|nokey\|bad' "$T/k.txt" || fail "rpm -K is not clean: $(cat "$T/k.txt")"
pkg_sigs "$pka" >"$T/a.sigs"
# busybox, small, sub/data, empty and the %config file.
[ "$(wc -l <"$T/a.sigs")" = 5 ] || fail "expected 5 signed files: $(cat "$T/a.sigs")"
echo "ok: rpm -K clean, 5 file signatures"

# install ROOT ARGS...: a fresh root that trusts the OpenPGP key, then irpm.
install_into() {
	r=$1
	shift
	new_root "$r"
	rpm --root "$r" --import "$T/gpg.asc" 2>/dev/null || fail "rpm --root --import"
	irpm "$r" "$@"
}

# check_passthrough ROOT SIGS [config]: every signed file has the package's value as its
# security.ima and evmctl verifies it with the vendor certificate; %config files have
# their digest (config_files = hash), or the package's value too with "config".
check_passthrough() {
	n=0
	while read -r path flags mode sig; do
		f="$1$path"
		got=$(xattr_of "$f" security.ima)
		if [ $((flags & 1)) = 1 ] && [ "${3:-}" != config ]; then
			[ "$got" = "$(evmctl ima_hash -n "$f" 2>/dev/null)" ] ||
				fail "$path: %config file has '$got', not its digest"
			continue
		fi
		[ "$got" = "$sig" ] || fail "$path: security.ima '$got' is not the package's '$sig'"
		evmctl ima_verify --key "$T/vendor.der" "$f" >"$T/ev.log" 2>&1 ||
			{ cat "$T/ev.log"; fail "$path: evmctl ima_verify rejects it"; }
		n=$((n + 1))
	done <"$2"
	echo "$n"
}

echo "== install with only the trust store: the package's signatures, checked, as security.ima"
install_into "$root" -vv --define "_imastream_trust $T/vendor.pem" -i "$pka" ||
	fail "rpm -i with a trusted package failed"
n=$(check_passthrough "$root" "$T/a.sigs") || exit 1
[ "$n" = 4 ] || fail "$n files verified, expected 4"
grep -q "imastream: ima: /opt/pka/busybox: package signature (key id $vendor_id) verified over the sha256 digest from header" \
	"$T/rpm.stderr" || fail "no verification over rpm's header digest for busybox"
! grep -q 'digest from reread' "$T/rpm.stderr" || fail "a file was read again"
echo "ok: 4 files carry the package's signature, evmctl verifies each; %config hashed"

echo "== config_files yes: the %config file gets its package signature too"
install_into "$root" --define "_imastream_trust $T/vendor.pem" \
	--define "_imastream_config_files yes" -i "$pka" || fail "rpm -i (config_files yes) failed"
n=$(check_passthrough "$root" "$T/a.sigs" config) || exit 1
[ "$n" = 5 ] || fail "$n files verified with config_files yes, expected 5"
echo "ok: 5 files, the %config one included"

echo "== EVM after the package's signature: it covers the final security.ima"
mkdir "$T/trustdir"
cp "$T/vendor.pem" "$T/local.pem" "$T/trustdir/"
install_into "$root" --define "_imastream_trust $T/trustdir" --define "_imastream_key $T/local.key" \
	--define "_imastream_cert $T/local.pem" --define "_imastream_evm portable" -i "$pka" ||
	fail "rpm -i with evm portable failed"
n=$(check_passthrough "$root" "$T/a.sigs") || exit 1
[ "$n" = 4 ] || fail "$n files verified with evm, expected 4"
for f in opt/pka/busybox opt/pka/small opt/pka/sub/data opt/pka/empty; do
	[ "$(xattr_of "$root/$f" security.evm | cut -c1-2)" = 05 ] || fail "$f: no portable EVM signature"
	evmctl verify --generation=0 --key "$T/local.der" "$root/$f" >"$T/ev.log" 2>&1 ||
		{ cat "$T/ev.log"; fail "$f: evmctl verify rejects security.evm"; }
done
echo "ok: security.evm (local key) verifies over the vendor's security.ima"

# refused ROOT PKG PATTERN ARGS...: rpm fails with one imastream error line matching
# PATTERN, and leaves no file of the package at a final path.
refused() {
	r=$1 pkg=$2 pattern=$3
	shift 3
	if install_into "$r" "$@" -i "$pkg"; then
		fail "rpm installed $pkg although its signatures must be refused"
	fi
	[ "$(grep -c '^error: imastream:' "$T/rpm.stderr")" = 1 ] ||
		fail "not one imastream error line"
	grep -q "^error: imastream: ima: $pattern" "$T/rpm.stderr" ||
		fail "no line matching '$pattern'"
	left=$(find "$r/opt" "$r/etc" ! -type d 2>/dev/null)
	[ -z "$left" ] || fail "left behind: $left"
}

echo "== signatures made with another key: refused, nothing left"
pkb=$(pkgsig_build pkb) || exit 99
pkgsig_sign "$pkb" other
pkgsig_addsign "$pkb"
refused "$root" "$pkb" \
	"/opt/pkb/[a-z/]*: package signature refused (key id $other_id): no certificate in $T/vendor.pem has this key id" \
	--define "_imastream_trust $T/vendor.pem"
# The line names the package as well as the file (issue 12 item 14).
grep -q "package signature refused (key id $other_id): .* (package pkb-[^ ]*)$" "$T/rpm.stderr" ||
	fail "the refusal does not name the package: $(cat "$T/rpm.stderr")"
echo "ok: $(grep '^error: imastream' "$T/rpm.stderr" | sed 's/.*ima: //')"

echo "== one altered signature byte: rpm -K does not notice, imastream refuses"
# Signature hex strings live in the signature header, outside what rpm's digests cover:
# one digit of busybox's signature changes (the first one in the file list is the %config's).
alter_sig "$pka" "$T/a.sigs" /opt/pka/busybox "$T/alt.rpm"
rpmkeys --dbpath "$T/db" -K "$T/alt.rpm" >"$T/k.txt" 2>&1 && note="rpm -K still says OK" ||
	note="rpm -K notices"
refused "$root" "$T/alt.rpm" \
	"/opt/pka/busybox: package signature refused (key id $vendor_id): it does not verify over the file's sha256 digest" \
	--define "_imastream_trust $T/vendor.pem"
echo "ok: refused ($note)"

echo "== no trust store, package_sigs verify: nothing could check them, so refused at init"
new_root "$root"
if irpm "$root" --define "_imastream_package_sigs verify" -i "$pka"; then
	fail "rpm installed with package_sigs verify and no trust store"
fi
[ "$(grep -c '^error: imastream:' "$T/rpm.stderr")" = 1 ] &&
	grep -q "^error: imastream: package_sigs = verify needs trust" "$T/rpm.stderr" ||
	fail "package_sigs verify without trust: $(cat "$T/rpm.stderr")"
left=$(find "$root/opt" "$root/etc" ! -type d 2>/dev/null)
[ -z "$left" ] || fail "left behind: $left"
echo "ok: refused at init without a trust store"

echo "== no trust store, the default (auto): local digests, and one notice saying why"
# rpm prints notices on stdout.
install_into "$root" -i "$pka" >"$T/rpm.out" || fail "rpm -i without a trust store failed"
[ "$(cat "$T/rpm.out" "$T/rpm.stderr" | grep -c 'carries file signatures, but no trust store is set')" = 1 ] ||
	fail "no single notice about the unused signatures"
while read -r path flags mode sig; do
	[ "$(xattr_of "$root$path" security.ima)" = "$(evmctl ima_hash -n "$root$path" 2>/dev/null)" ] ||
		fail "$path: not its local digest"
done <"$T/a.sigs"
echo "ok: installed with local digests and one notice"

echo "== fallback: the foreign package installed with local values and a warning"
install_into "$root" --define "_imastream_trust $T/vendor.pem" \
	--define "_imastream_package_sig_failure fallback" -i "$pkb" ||
	fail "rpm -i with fallback failed"
pkg_sigs "$pkb" >"$T/b.sigs"
nw=0
while read -r path flags mode sig; do
	[ $((flags & 1)) = 1 ] && continue
	want=$(evmctl ima_hash -n "$root$path" 2>/dev/null)
	got=$(xattr_of "$root$path" security.ima)
	[ -n "$got" ] && [ "$got" = "$want" ] || fail "$path: security.ima $got, evmctl ima_hash says $want"
	grep -q "^warning: imastream: ima: $path: package signature not used (key id $other_id): .*; writing the local hash instead" \
		"$T/rpm.stderr" || fail "$path: no warning naming the file and the key id"
	nw=$((nw + 1))
done <"$T/b.sigs"
[ "$nw" = 4 ] || fail "fallback covered $nw files, expected 4"
echo "ok: 4 files hashed locally, each with a warning"

install_into "$root" --define "_imastream_trust $T/trustdir" --define "_imastream_mode sign" \
	--define "_imastream_key $T/local.key" --define "_imastream_cert $T/local.pem" \
	--define "_imastream_package_sig_failure fallback" -i "$pkb" ||
	fail "rpm -i with fallback in sign mode failed"
evmctl ima_verify --key "$T/local.der" "$root/opt/pkb/busybox" >"$T/ev.log" 2>&1 ||
	{ cat "$T/ev.log"; fail "fallback in sign mode: evmctl rejects the local signature"; }
grep -q "writing the local signature instead" "$T/rpm.stderr" || fail "no sign-mode warning"
echo "ok: in sign mode the fallback is a local signature"

echo "== package_sigs ignore: the package's signatures are not looked at"
install_into "$root" --define "_imastream_package_sigs ignore" -i "$pka" ||
	fail "rpm -i with package_sigs ignore failed"
[ "$(xattr_of "$root/opt/pka/busybox" security.ima)" = "$(evmctl ima_hash -n "$root/opt/pka/busybox" 2>/dev/null)" ] ||
	fail "package_sigs ignore did not write the local hash"
echo "ok: local hash written"

echo "== a signature over sha512: checked only when package_sig_algos lists it"
pkc=$(pkgsig_build pkc) || exit 99
"$IMASTREAM" sign-package --key "$T/vendor.key" --cert "$T/vendor.pem" -a sha512 "$pkc" \
	>"$T/sign.log" 2>&1 || { cat "$T/sign.log"; fail "sign-package -a sha512"; }
refused "$root" "$pkc" "/opt/pkc/[a-z/]*: package signature refused (key id $vendor_id): it signs a sha512 digest, which package_sig_algos does not list" \
	--define "_imastream_trust $T/vendor.pem"
install_into "$root" -vv --define "_imastream_trust $T/vendor.pem" \
	--define "_imastream_package_sig_algos sha256,sha512" -i "$pkc" ||
	fail "rpm -i with package_sig_algos sha256,sha512 failed"
pkg_sigs "$pkc" >"$T/c.sigs"
n=$(check_passthrough "$root" "$T/c.sigs") || exit 1
[ "$n" = 4 ] || fail "$n sha512 signatures verified, expected 4"
grep -q "imastream: ima: /opt/pkc/busybox: package signature (key id $vendor_id) verified over the sha512 digest from reread" \
	"$T/rpm.stderr" || fail "sha512 was not computed by one re-read"
echo "ok: 4 sha512 signatures written after one re-read each"

echo "== a bad configuration value is one line at init"
new_root "$root"
if irpm "$root" --define "_imastream_package_sigs maybe" -i "$pka"; then
	fail "rpm accepted package_sigs maybe"
fi
grep -q 'invalid value "maybe" for package_sigs' "$T/rpm.stderr" || fail "no line for package_sigs maybe"
new_root "$root"
if irpm "$root" --define "_imastream_trust $T/nonexistent.pem" -i "$pka"; then
	fail "rpm accepted a missing trust store"
fi
grep -q "ima: cannot load the trust store $T/nonexistent.pem" "$T/rpm.stderr" ||
	fail "no line for the missing trust store"
echo "ok: refused at init"
echo "PASS"
