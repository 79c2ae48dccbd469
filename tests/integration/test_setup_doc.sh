#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# docs/SETUP.md as a user copies it: its policy block is docs/ima-policy (the file the
# kernel tests load), its key commands make a key the plugin signs with, and its rpm
# macros, in the /etc/rpm its commands create, make stock rpm write IMA and EVM portable
# signatures that evmctl and imastream verify with that key's certificate, and its
# imastream install command does the same on an unsigned package (refused without
# --allow-unsigned). Every /etc path is moved into the scratch folder.
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
# Debian has no /etc/rpm: the documented command makes it, and the macros go in there.
etc_rpm="$T/etc/rpm"
block rpm-dir | sed "s|/etc/rpm|$etc_rpm|g" >"$T/rpm-dir.sh"
grep "$etc_rpm" "$T/rpm-dir.sh" >/dev/null || fail "no rpm-dir block in SETUP.md"
(sh -e "$T/rpm-dir.sh") >"$T/rpm-dir.log" 2>&1 || { cat "$T/rpm-dir.log"; fail "the /etc/rpm command failed"; }
[ -d "$etc_rpm" ] || fail "the documented command does not create /etc/rpm"
grep -F 'put these macros into `/etc/rpm/macros.imastream`' "$doc" >/dev/null ||
	fail "SETUP.md no longer names /etc/rpm/macros.imastream"
block macros | sed "s|/etc/keys/imastream|$keys|g" >"$etc_rpm/macros.imastream"
grep -q '^%_imastream_evm portable$' "$etc_rpm/macros.imastream" || fail "no macros block in SETUP.md"

pkg=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
root="$T/root"
new_root "$root"
irpm "$root" --load "$etc_rpm/macros.imastream" -i "$pkg" || fail "rpm -i with the documented macros failed"
f="$root/opt/imstest/bin/tool"
ima=$(getfattr --absolute-names -n security.ima -e hex "$f" 2>/dev/null | sed -n 's/^security.ima=0x//p')
case $ima in 03*) ;; *) fail "security.ima of $f is not a signature: ${ima:-none}" ;; esac
evmctl ima_verify --key "$keys/ima.der" "$f" >"$T/evmctl.log" 2>&1 ||
	{ cat "$T/evmctl.log"; fail "evmctl ima_verify rejects $f"; }
evmctl verify --generation=0 --key "$keys/ima.der" "$f" >"$T/evmctl.log" 2>&1 ||
	{ cat "$T/evmctl.log"; fail "evmctl verify (EVM portable) rejects $f"; }
"$top_builddir/imastream" verify --evm require --trust "$keys/ima.crt" "$f" >"$T/verify.log" 2>&1 ||
	{ cat "$T/verify.log"; fail "imastream verify rejects $f"; }

# The streaming installer's example, its root and PKG.rpm moved to the scratch root and
# the locally built (unsigned) package.
block install | sed -e "s|/etc/keys/imastream|$keys|g" -e "s|--root / |--root $T/iroot |" \
	-e "s|PKG\.rpm|$pkg|" >"$T/install.sh"
grep -e "--root $T/iroot " "$T/install.sh" >/dev/null || { cat "$T/install.sh"; fail "no install block with --root / in SETUP.md"; }
grep -e "--allow-unsigned" "$T/install.sh" >/dev/null || fail "SETUP.md's install example lacks --allow-unsigned"
new_root "$T/iroot"
# What the sentence before it says: without --allow-unsigned, the package is refused.
sed "s| --allow-unsigned||" "$T/install.sh" >"$T/install-strict.sh"
if PATH="$top_builddir:$PATH" sh -e "$T/install-strict.sh" >"$T/install.log" 2>&1; then
	cat "$T/install.log"
	fail "imastream install took an unsigned package without --allow-unsigned"
fi
grep 'the header is not signed (--allow-unsigned accepts it)' "$T/install.log" >/dev/null ||
	{ cat "$T/install.log"; fail "the refusal does not say the header is unsigned"; }
[ ! -e "$T/iroot/opt/imstest/bin/tool" ] || fail "a refused install left files behind"
PATH="$top_builddir:$PATH" sh -e "$T/install.sh" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.sh" "$T/install.log"; fail "SETUP.md's imastream install command failed"; }
f="$T/iroot/opt/imstest/bin/tool"
evmctl ima_verify --key "$keys/ima.der" "$f" >"$T/evmctl.log" 2>&1 ||
	{ cat "$T/evmctl.log"; fail "evmctl ima_verify rejects $f (imastream install)"; }
evmctl verify --generation=0 --key "$keys/ima.der" "$f" >"$T/evmctl.log" 2>&1 ||
	{ cat "$T/evmctl.log"; fail "evmctl verify (EVM portable) rejects $f (imastream install)"; }
echo "ok: SETUP.md: policy = docs/ima-policy; its P-384 key and macros, in the /etc/rpm it creates, sign and EVM-sign what rpm and imastream install install"
