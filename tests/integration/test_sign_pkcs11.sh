#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream sign with a key in a SoftHSM2 token: same bytes as with the key file, and evmctl verifies them.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
module=/usr/lib/softhsm/libsofthsm2.so
command -v softhsm2-util >/dev/null || { echo "SKIP: softhsm2-util is not installed (softhsm2)"; exit 77; }
[ -f "$module" ] || { echo "SKIP: $module is missing (softhsm2)"; exit 77; }
enginedir=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')
[ -f "$enginedir/pkcs11.so" ] || { echo "SKIP: no OpenSSL pkcs11 engine (libengine-pkcs11-openssl)"; exit 77; }
command -v evmctl >/dev/null || { echo "SKIP: evmctl is not installed"; exit 77; }
work=$(mktemp -d /tmp/test_sign_pkcs11.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
echo probe >probe
setfattr -n user.probe -v 1 probe 2>/dev/null || { echo "SKIP: no user xattrs on $work"; exit 77; }

export SOFTHSM2_CONF="$work/softhsm2.conf"
mkdir tokens
printf 'directories.tokendir = %s/tokens\nobjectstore.backend = file\nlog.level = ERROR\n' "$work" >"$SOFTHSM2_CONF"
softhsm2-util --init-token --free --label signtest --pin 1234 --so-pin 5678 >/dev/null
(umask 077
 openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem 2>/dev/null
 echo 1234 >pin)
softhsm2-util --import rsa.pem --token signtest --label rsakey --id 01 --pin 1234 >/dev/null
openssl req -x509 -new -key rsa.pem -out rsa.crt -days 2 -subj /CN=rsa -addext subjectKeyIdentifier=hash
openssl x509 -in rsa.crt -outform DER -out rsa.der
uri="pkcs11:token=signtest;object=rsakey;type=private"

mkdir tree
for i in 1 2 3 4 5 6; do head -c $((i * 1000)) /dev/urandom >"tree/f$i"; done
cp -a tree copy
# An engine key is not shared between threads: -j 2 signs from one, with no complaint.
"$imastream" sign -r -j 2 --quiet --no-names --xattr-user --pass-file pin --cert rsa.crt --key "$uri" tree >token.out 2>err ||
	fail "signing through the token: $(cat err)"
[ ! -s err ] || fail "signing through the token said: $(cat err)"
"$imastream" sign -r --no-names --xattr-user --key rsa.pem copy >file.out 2>/dev/null
cmp -s token.out file.out || fail "token signatures differ from the key file's"
for f in tree/*; do
	evmctl ima_verify --xattr-user --key rsa.der "$f" >/dev/null 2>&1 || fail "evmctl ima_verify $f"
	evmctl verify --xattr-user --generation=0 --key rsa.der "$f" >/dev/null 2>&1 || fail "evmctl verify $f"
done
"$imastream" verify -r --xattr-user --evm require --trust rsa.crt tree >/dev/null || fail "imastream verify"
echo "PASS: pkcs11 signing of 6 files"
