#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# docs/SETUP.md as a user copies it: its policy block is docs/ima-policy (the file the
# kernel tests load), its key commands make a key the plugin signs with, and its rpm
# macros, loaded as /etc/rpm/macros.imastream would be, make stock rpm write IMA and EVM
# portable signatures that evmctl and imastream verify with that key's certificate.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need openssl
need evmctl
need getfattr
setup_scratch
doc="$top_srcdir/docs/SETUP.md"

# block MARKER: the fenced block right after the line "<!-- MARKER -->".
block() {
	awk -v m="<!-- $1 -->" '$0 == m { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$doc"
}

block docs/ima-policy >"$T/policy"
cmp -s "$T/policy" "$top_srcdir/docs/ima-policy" ||
	{ diff -u "$top_srcdir/docs/ima-policy" "$T/policy"; fail "SETUP.md's policy is not docs/ima-policy"; }

# The documented paths, moved into the scratch folder.
keys="$T/keys"
block keygen | sed "s|/etc/keys/imastream|$keys|g" >"$T/keygen.sh"
[ -s "$T/keygen.sh" ] || fail "no keygen block in SETUP.md"
(sh -e "$T/keygen.sh") >"$T/keygen.log" 2>&1 || { cat "$T/keygen.log"; fail "the key commands failed"; }
[ "$(stat -c %a "$keys/ima.key")" = 600 ] || fail "the documented key is readable by others"
block macros | sed "s|/etc/keys/imastream|$keys|g" >"$T/macros.imastream"
grep -q '^%_imastream_evm portable$' "$T/macros.imastream" || fail "no macros block in SETUP.md"

pkg=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
root="$T/root"
new_root "$root"
irpm "$root" --load "$T/macros.imastream" -i "$pkg" || fail "rpm -i with the documented macros failed"
f="$root/opt/imstest/bin/tool"
ima=$(getfattr --absolute-names -n security.ima -e hex "$f" 2>/dev/null | sed -n 's/^security.ima=0x//p')
case $ima in 03*) ;; *) fail "security.ima of $f is not a signature: ${ima:-none}" ;; esac
evmctl ima_verify --key "$keys/ima.der" "$f" >"$T/evmctl.log" 2>&1 ||
	{ cat "$T/evmctl.log"; fail "evmctl ima_verify rejects $f"; }
evmctl verify --generation=0 --key "$keys/ima.der" "$f" >"$T/evmctl.log" 2>&1 ||
	{ cat "$T/evmctl.log"; fail "evmctl verify (EVM portable) rejects $f"; }
"$top_builddir/imastream" verify --evm require --trust "$keys/ima.crt" "$f" >"$T/verify.log" 2>&1 ||
	{ cat "$T/verify.log"; fail "imastream verify rejects $f"; }
echo "ok: SETUP.md: policy = docs/ima-policy; its P-384 key and macros sign and EVM-sign what rpm installs"
