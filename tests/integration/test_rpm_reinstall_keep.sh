#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rpm --reinstall with the plugin in sign + EVM portable mode (ECDSA): a %config file rpm
# leaves in place keeps the signatures it holds when they verify with our certificate.
# An enforcing kernel with EVM on refuses to replace a valid portable signature by
# another value (EPERM), and ECDSA never signs twice alike, so re-signing it would fail
# the whole transaction (found by tests/kernel/test_kernel_live.sh on Debian's 6.12).
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need getfattr
skip() { echo "SKIP: $*"; exit 77; }
setup_scratch
KEYS="$top_srcdir/tests/keys"
cp "$KEYS/ec-p256.pem" "$T/key.pem" && chmod 600 "$T/key.pem" || fail "cannot copy the key"
SIGN=(--define "_imastream_mode sign" --define "_imastream_key $T/key.pem"
	--define "_imastream_cert $KEYS/ec-p256.crt" --define "_imastream_evm portable")
PKG=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
R=$T/root
new_root "$R"
irpm "$R" "${SIGN[@]}" -i "$PKG" || { cat "$T/rpm.stderr"; fail "rpm -i failed"; }
labels() { getfattr -h -e hex -n "$1" "$R/$2" 2>/dev/null | sed -n "s/^$1=//p"; }
ino() { stat -c %i "$R/$1"; }
conf=etc/imstest.conf tool=opt/imstest/bin/tool
evm_before=$(labels security.evm $conf) ino_before=$(ino $conf)
[ -n "$evm_before" ] || fail "$conf has no security.evm after the install"

irpm "$R" "${SIGN[@]}" -U --replacepkgs "$PKG" || { cat "$T/rpm.stderr"; fail "rpm --replacepkgs failed"; }
[ "$(ino $conf)" = "$ino_before" ] || skip "this rpm rewrites $conf on a reinstall: nothing to keep"
[ "$(labels security.evm $conf)" = "$evm_before" ] ||
	fail "$conf, left in place by rpm, was signed again: its valid security.evm was replaced"
"$top_builddir/imastream" verify --evm require --trust "$KEYS/ec-p256.crt" "$R/$conf" "$R/$tool" >"$T/v" 2>&1 ||
	{ cat "$T/v"; fail "the reinstalled files do not verify"; }
echo "ok: a %config file rpm leaves in place keeps its valid signatures"
