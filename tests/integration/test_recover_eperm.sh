#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# recover --rpmdb on a signed orphan whose labels the kernel will not let go (EPERM: under EVM a portable signature, here an immutable file): one line says what to do, the exit status is 1.
# A power cut of an rpm -U between its renames and its database commit leaves the new
# version's signed files unowned; on a live system with EVM on, recover cannot unlabel
# them (test_kernel_live.sh's power cuts found it) and used to say only "Operation not
# permitted".
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need chattr
setup_scratch
IMS="$top_builddir/imastream"
KEYS="$top_srcdir/tests/keys"
cp "$KEYS/ec-p256.pem" "$T/key.pem" && chmod 600 "$T/key.pem" || fail "cannot copy the key"
PKG=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
R=$T/root
new_root "$R"
irpm "$R" --define "_imastream_mode sign" --define "_imastream_evm portable" \
	--define "_imastream_key $T/key.pem" --define "_imastream_cert $KEYS/ec-p256.crt" -i "$PKG" ||
	{ cat "$T/rpm.stderr"; fail "rpm -i failed"; }
# A signed file no package owns, in a folder the package owns, which cannot be changed.
orphan=opt/imstest/bin/left-by-a-cut
cp "$R/opt/imstest/bin/run.sh" "$R/$orphan" &&
	"$IMS" sign --evm portable --key "$T/key.pem" --cert "$KEYS/ec-p256.crt" "$R/$orphan" >/dev/null ||
	fail "cannot sign the orphan"
chattr +i "$R/$orphan" 2>/dev/null || { echo "SKIP: chattr +i does not work here"; exit 77; }
"$IMS" recover --root "$R" --rpmdb --dbpath /var/lib/rpm >"$T/out" 2>&1
rc=$?
chattr -i "$R/$orphan"
[ $rc = 1 ] || { cat "$T/out"; fail "recover --rpmdb exit $rc with an orphan it cannot unlabel (wanted 1)"; }
grep -q "$orphan: a file no installed package owns: cannot be unlabelled: the kernel refuses .*run the transaction that left it again, or remove the file" "$T/out" ||
	{ cat "$T/out"; fail "recover does not say what to do with an orphan it cannot unlabel"; }
getfattr -n security.ima "$R/$orphan" >/dev/null 2>&1 || fail "the orphan lost its security.ima, yet recover said it could not"
echo "ok: an orphan the kernel keeps labelled is named with what to do, exit 1"
