#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Key rotation with relabel (docs/SETUP.md, ima-rollout label): relabel with a new key
# and --trust naming only the new certificate signs again exactly the files signed by the
# old key, leaves %config digests alone, and a second run changes nothing.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need getfattr
setup_scratch
IMS="$top_builddir/imastream"
KEYS="$top_srcdir/tests/keys"
cp "$KEYS/ec-p256.pem" "$T/old.pem" && cp "$KEYS/rsa2048.pem" "$T/new.pem" && chmod 600 "$T"/*.pem ||
	fail "cannot copy the test keys"
OLD="--mode sign --evm portable -k $T/old.pem -c $KEYS/ec-p256.crt"
NEW="--mode sign --evm portable -k $T/new.pem -c $KEYS/rsa2048.crt --trust $KEYS/rsa2048.crt"
old_id=$("$IMS" keys id --cert "$KEYS/ec-p256.crt") && new_id=$("$IMS" keys id --cert "$KEYS/rsa2048.crt") ||
	fail "keys id failed"

PKG=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
R=$T/root
new_root "$R"
rpm --root "$R" -i --nodeps --noscripts --noplugins "$PKG" 2>"$T/rpm.err" || { cat "$T/rpm.err"; fail "rpm -i failed"; }
SIGNED="opt/imstest/bin/tool opt/imstest/bin/run.sh opt/imstest/bin/run-again.sh opt/imstest/empty"
CONFIG=etc/imstest.conf
ima() { getfattr -h -e hex -n security.ima "$R/$1" 2>/dev/null | sed -n 's/^security.ima=0x//p'; }
dump() { (cd "$R" && getfattr -h -d -m '^security\.' -e hex $SIGNED $CONFIG 2>/dev/null); }

"$IMS" relabel --root "$R" $OLD --quiet || fail "relabel with the old key failed"
for f in $SIGNED; do
	case $(ima "$f") in 030204"$old_id"*) ;; *) fail "$f: not signed by the old key ($old_id)" ;; esac
done
config_before=$(ima "$CONFIG")
case $config_before in 04*) ;; *) fail "$CONFIG: not a digest: $config_before" ;; esac

# Rotation: only the new certificate is trusted.
"$IMS" relabel --root "$R" $NEW >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "relabel with the new key failed"; }
grep -q " 4 files labelled" "$T/err" || { cat "$T/err"; fail "the rotation did not label exactly the 4 old-key files"; }
for f in $SIGNED; do
	case $(ima "$f") in 030204"$new_id"*) ;; *) fail "$f: not signed again by the new key ($new_id)" ;; esac
done
[ "$(ima "$CONFIG")" = "$config_before" ] || fail "$CONFIG: its digest was rewritten"
# shellcheck disable=SC2046
"$IMS" verify --evm require --trust "$KEYS/rsa2048.crt" $(printf "$R/%s " $SIGNED $CONFIG) >"$T/verify" 2>&1 ||
	{ cat "$T/verify"; fail "the rotated files do not verify with the new certificate alone"; }
"$IMS" verify --evm require --trust "$KEYS/ec-p256.crt" "$R/opt/imstest/bin/tool" >/dev/null 2>&1 &&
	fail "the old certificate still verifies a rotated file"

# A second run finds everything right and writes nothing.
before=$(dump)
"$IMS" relabel --root "$R" $NEW >"$T/out" 2>"$T/err" || { cat "$T/err"; fail "second relabel failed"; }
grep -q " 0 files labelled" "$T/err" || { cat "$T/err"; fail "the second run labelled files again"; }
[ "$(dump)" = "$before" ] || fail "the second run changed labels"
echo "ok: relabel with a new key and --trust of its certificate re-signs exactly the old key's files"
