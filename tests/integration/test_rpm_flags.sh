#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# rpm's own switches with imastream on: --reinstall rewrites every attribute; --nodigest
# still lets the plugin take the file digests rpm checked; --nofiledigest means rpm checked
# nothing, so the plugin hashes what was written, even when the payload lies about it.
# Every value is checked with evmctl.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need evmctl
need getfattr
need setfattr
need openssl
setup_scratch

spec="$top_srcdir/tests/rpm/imstest.rpmspec"
pkg=$(build_pkg "$spec" 1.0)
root="$T/root"
files="opt/imstest/bin/tool opt/imstest/bin/run.sh opt/imstest/bin/run-again.sh opt/imstest/empty"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 2 \
	-subj "/CN=imastream flags test" -addext subjectKeyIdentifier=hash >/dev/null 2>&1 || exit 99
openssl x509 -in "$T/cert.pem" -outform DER -out "$T/cert.der" || exit 99
chmod 600 "$T/key.pem"
sign="--define=_imastream_mode sign"
key="--define=_imastream_key $T/key.pem"
cert="--define=_imastream_cert $T/cert.pem"
evm="--define=_imastream_evm portable"

xattr_of() {
	getfattr --absolute-names -n "$2" -e hex "$1" 2>/dev/null | sed -n "s/^$2=0x//p"
}

# hash_ok FILE...: security.ima is the sha256 digest of what the file holds now.
hash_ok() {
	for f in "$@"; do
		want=$(evmctl ima_hash -n "$root/$f" 2>/dev/null)
		got=$(xattr_of "$root/$f" security.ima)
		[ -n "$got" ] && [ "$got" = "$want" ] || fail "$f: security.ima $got, evmctl says $want"
	done
}

# signed_ok FILE...: evmctl accepts the IMA signature and the EVM portable signature.
signed_ok() {
	for f in "$@"; do
		evmctl ima_verify --key "$T/cert.der" "$root/$f" >"$T/ev.log" 2>&1 ||
			{ cat "$T/ev.log"; fail "$f: evmctl ima_verify"; }
		evmctl verify --generation=0 --key "$T/cert.der" "$root/$f" >"$T/ev.log" 2>&1 ||
			{ cat "$T/ev.log"; fail "$f: evmctl verify"; }
	done
}

echo "== rpm --reinstall in sign + EVM mode rewrites every attribute"
new_root "$root"
irpm "$root" "$sign" "$key" "$cert" "$evm" -i "$pkg" || fail "rpm -i failed"
signed_ok $files
# Damage what the first install wrote: the reinstall must not keep any of it.
setfattr -n security.ima -v 0x0404deadbeef "$root/opt/imstest/bin/tool"
setfattr -n security.evm -v 0x05deadbeef "$root/opt/imstest/bin/run.sh"
ino=$(stat -c %i "$root/opt/imstest/bin/tool")
irpm "$root" "$sign" "$key" "$cert" "$evm" --reinstall "$pkg" || fail "rpm --reinstall failed"
[ "$(stat -c %i "$root/opt/imstest/bin/tool")" != "$ino" ] || fail "tool was not replaced"
signed_ok $files
[ "$(rpm --root "$root" --dbpath /var/lib/rpm -q imstest 2>/dev/null)" = imstest-1.0-1.noarch ] ||
	fail "not exactly one imstest in the database"
echo "ok: after --reinstall evmctl accepts every IMA and EVM signature again"

echo "== --nodigest: rpm still checks each file, the plugin takes those digests"
new_root "$root"
irpm "$root" -vv --nodigest -i "$pkg" >/dev/null || fail "rpm -i --nodigest failed"
grep -q 'imastream: ima: /opt/imstest/bin/tool: digest from header' "$T/rpm.stderr" ||
	fail "the checked header digest was not used"
hash_ok $files
echo "ok: --nodigest, security.ima matches evmctl ima_hash"

echo "== a payload that differs from the header's file digests"
# Uncompressed, so one file's bytes can be changed in place; the header is untouched.
bad=$(build_pkg "$spec" 1.0 w0.ufdio)
at=$(grep -obUa 'echo imstest 1.0' "$bad" | cut -d: -f1)
[ "$(echo "$at" | wc -w)" = 1 ] || { echo "cannot find run.sh in the payload once"; exit 99; }
printf 'echo IMSTEST' | dd of="$bad" bs=1 seek="$at" conv=notrunc status=none
header=$(rpm -qp --dump "$bad" 2>/dev/null | awk '$1 == "/opt/imstest/bin/run.sh" { print $4 }')
[ ${#header} = 64 ] || { echo "no sha256 header digest for run.sh"; exit 99; }

new_root "$root"
if irpm "$root" --nodigest -i "$bad"; then
	fail "rpm installed a payload that does not match its file digests"
fi
[ ! -e "$root/opt/imstest/bin/run.sh" ] || fail "the mismatched file was left at its final path"
echo "ok: without --nofiledigest rpm refuses it, nothing left"

for mode in hash sign; do
	new_root "$root"
	if [ $mode = hash ]; then
		irpm "$root" -vv --nodigest --nofiledigest -i "$bad" >/dev/null ||
			fail "rpm -i --nodigest --nofiledigest failed"
	else
		irpm "$root" -vv "$sign" "$key" "$cert" "$evm" --nodigest --nofiledigest \
			-i "$bad" >/dev/null || fail "rpm -i --nodigest --nofiledigest (sign) failed"
	fi
	grep -q IMSTEST "$root/opt/imstest/bin/run.sh" || fail "the changed bytes were not installed"
	grep -q 'imastream: ima: /opt/imstest/bin/run.sh: digest from reread' "$T/rpm.stderr" ||
		fail "$mode: run.sh was not hashed by the plugin"
	! grep -q 'digest from header' "$T/rpm.stderr" || fail "$mode: an unchecked header digest was used"
	actual=$(sha256sum "$root/opt/imstest/bin/run.sh" | cut -d' ' -f1)
	[ "$actual" != "$header" ] || { echo "the tampering did not change the digest"; exit 99; }
	if [ $mode = hash ]; then
		hash_ok $files
		[ "$(xattr_of "$root/opt/imstest/bin/run.sh" security.ima)" = "0404$actual" ] ||
			fail "security.ima is not the digest of the installed bytes"
	else
		signed_ok $files
	fi
	echo "ok: --nofiledigest, $mode mode: security.ima covers the bytes on disk, not the header"
done
