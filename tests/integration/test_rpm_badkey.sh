#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A key that works at init and fails in the middle of the transaction: a SoftHSM2 token
# whose files live outside the --root, so once rpm has entered the root the token cannot
# reach them.  The install aborts at the first file with one line naming it, and nothing
# is left at a final path (or under a temporary name).
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
module=/usr/lib/softhsm/libsofthsm2.so
need softhsm2-util
need openssl
[ -f "$module" ] || { echo "SKIP: $module is missing (softhsm2)"; exit 77; }
enginedir=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')
[ -f "$enginedir/pkcs11.so" ] ||
	{ echo "SKIP: no OpenSSL pkcs11 engine (libengine-pkcs11-openssl)"; exit 77; }
setup_scratch

export SOFTHSM2_CONF="$T/softhsm2.conf"
mkdir "$T/tokens"
printf 'directories.tokendir = %s/tokens\nobjectstore.backend = file\nlog.level = ERROR\n' \
	"$T" >"$SOFTHSM2_CONF"
softhsm2-util --init-token --free --label rpmtest --pin 1234 --so-pin 5678 >/dev/null || exit 99
(umask 077
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/rsa.pem" 2>/dev/null
	echo 1234 >"$T/pin")
softhsm2-util --import "$T/rsa.pem" --token rpmtest --label k --id 01 --pin 1234 >/dev/null ||
	exit 99
openssl req -x509 -new -key "$T/rsa.pem" -out "$T/rsa.crt" -days 2 -subj /CN=rpmtest \
	-addext subjectKeyIdentifier=hash || exit 99

pkg=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
root="$T/root"
new_root "$root"
# The trust check at init signs once, outside the root: the key is fine there.
if irpm "$root" --define "_imastream_mode sign" \
	--define "_imastream_key pkcs11:token=rpmtest;object=k;type=private" \
	--define "_imastream_key_pass_file $T/pin" --define "_imastream_cert $T/rsa.crt" \
	--define "_imastream_trust $T/rsa.crt" --define "_imastream_evm portable" -i "$pkg"; then
	fail "rpm succeeded with a token it cannot reach"
fi
grep -q '^error: imastream: \(ima\|evm\): cannot sign /' "$T/rpm.stderr" ||
	fail "no line naming the file that could not be signed"
! grep -q 'hook init failed' "$T/rpm.stderr" || fail "failed at init, not mid-transaction"
left=$(find "$root/opt" "$root/etc" ! -type d 2>/dev/null)
[ -z "$left" ] || fail "left behind: $left"
rpm --root "$root" --dbpath /var/lib/rpm -q imstest >/dev/null 2>&1 &&
	fail "imstest is in the database"
echo "ok: $(grep '^error: imastream: \(ima\|evm\):' "$T/rpm.stderr")"
echo "ok: the install was rolled back: no file, no temporary file, no database entry"
