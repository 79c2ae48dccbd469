#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream keys: usage errors and one-line failures (tests/integration/test_cli_docs.sh checks --help and the man page).
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
keys="$top_srcdir/tests/keys"
work=$(mktemp -d /tmp/test_keys_cli.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

# expect STATUS NEEDLE ARGS...: exit status and exactly one line on stderr.
expect() {
	local status=$1 needle=$2 rc=0; shift 2
	"$imastream" keys "$@" >out.txt 2>err.txt || rc=$?
	[ "$rc" = "$status" ] || fail "keys $*: exit $rc, expected $status ($(cat err.txt))"
	[ "$(wc -l <err.txt)" = 1 ] && grep -q -- "$needle" err.txt ||
		fail "keys $*: expected one line with '$needle', got: $(cat err.txt)"
}
(umask 077; cp "$keys/rsa2048.pem" key.pem; cp "$keys/rsa2048-enc.pem" enc.pem; echo wrong >badpass)
cp "$keys/rsa2048.pem" open.pem; chmod 644 open.pem

[ "$("$imastream" keys id --key key.pem)" = 890c1f83 ] || fail "key id of the test key"
[ "$("$imastream" keys id --cert "$keys/rsa2048-forced.crt")" = 12345678 ] || fail "forced SKID"
[ "$(PASS=test\ passphrase "$imastream" keys id --key enc.pem --pass-env PASS)" = 890c1f83 ] || fail "encrypted key"
# DER private keys: PKCS#8, traditional RSA, encrypted PKCS#8, SEC1 EC.
(umask 077
 openssl pkey -in key.pem -outform DER -out p8.der
 openssl rsa -in key.pem -outform DER -traditional -out trad.der 2>/dev/null
 openssl pkcs8 -topk8 -in key.pem -outform DER -passout pass:pw -out enc.der
 openssl ec -in "$keys/ec-p256.pem" -outform DER -out ec.der 2>/dev/null
 echo pw >pw)
for f in p8.der trad.der enc.der; do
	[ "$("$imastream" keys id --key $f --pass-file pw)" = 890c1f83 ] || fail "DER key $f"
done
[ "$("$imastream" keys id --key ec.der)" = 205aa15d ] || fail "DER EC key"
expect 1 "enc.der: wrong passphrase" id --key enc.der --pass-file badpass
expect 1 "open.pem: private key is readable or writable by group or others (mode 0644)" id --key open.pem
expect 1 "wrong passphrase" id --key enc.pem --pass-file badpass
expect 1 "private key is encrypted: give its passphrase" id --key enc.pem
expect 1 "does not match the private key key.pem" id --key key.pem --cert "$keys/ec-p256.crt"
expect 1 "ED25519 key refused" id --key "$(umask 077; cp "$keys/ed25519.pem" ed.pem; echo ed.pem)"
expect 1 "no usable private key in it" id --key "$(umask 077; echo junk >junk.pem; echo junk.pem)"
expect 1 "key.pem is a private key, not a certificate" id --cert key.pem
expect 1 "no OpenSSL provider serves the URI scheme 'tpmx'" id --key tpmx:0x81000001
expect 2 "imastream keys id: wants --cert CERT, or --key KEY with its options (see imastream keys id --help)" id
expect 2 "imastream keys: unknown keys command 'frob': import, list or id (see imastream keys --help)" frob
expect 2 "imastream keys import: wants CERT \[RING\], or --keyring RING CERT" import
expect 2 "imastream keys import: wants CERT \[RING\], or --keyring RING CERT" import --keyring _ima a.crt _ima
expect 2 "imastream keys list: wants at most one keyring" list _ima _evm
expect 2 "imastream keys import: unknown option --key (see imastream keys import --help)" import --key k.pem a.crt
expect 2 "imastream keys: no keys command given: import, list or id"
expect 2 "give one of -p, --pass-file and --pass-env" id --key enc.pem -p --pass-file badpass
# -k is --key wherever a key is taken; import and list keep it as the old --keyring.
[ "$("$imastream" keys id -k key.pem)" = 890c1f83 ] || fail "keys id -k KEY"
[ "$("$imastream" keys id -c "$keys/rsa2048-forced.crt")" = 12345678 ] || fail "keys id -c CERT"
[ "$("$imastream" keys id --key key.pem --keyid-from-cert "$keys/rsa2048.crt")" = 890c1f83 ] ||
	fail "keys id --keyid-from-cert (evmctl's spelling of --cert)"
# A certificate without SKID: printed, with a warning the kernel cannot match it.
"$imastream" keys id --cert "$keys/rsa2048-noskid.crt" >out.txt 2>err.txt
[ "$(cat out.txt)" = 890c1f83 ] && grep -q "no subjectKeyIdentifier" err.txt || fail "no-SKID cert"

echo "ok: keys CLI"
