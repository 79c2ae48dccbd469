#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream keys: usage errors, one-line failures, and --help and the man page naming the same options.
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
expect 1 "not an X.509 certificate" id --cert key.pem
expect 1 "no OpenSSL provider serves the URI scheme 'tpmx'" id --key tpmx:0x81000001
expect 2 "keys id takes --cert CERT" id
expect 2 "unknown keys command 'frob'" frob
expect 2 "keys import takes" import
# A certificate without SKID: printed, with a warning the kernel cannot match it.
"$imastream" keys id --cert "$keys/rsa2048-noskid.crt" >out.txt 2>err.txt
[ "$(cat out.txt)" = 890c1f83 ] && grep -q "no subjectKeyIdentifier" err.txt || fail "no-SKID cert"

# Every long option of --help is in the man page, and the other way round.
"$imastream" keys --help >help.txt
grep -o -- '--[a-z-]*' help.txt | sort -u >help-opts.txt
sed 's/\\-/-/g' "$top_srcdir/man/imastream-keys.1" | grep -o -- '--[a-z-]*' | sort -u >man-opts.txt
diff help-opts.txt man-opts.txt || fail "--help and man/imastream-keys.1 name different options"
grep -q "keys" <("$imastream" --help) || fail "keys is not in the command list"
echo "ok: keys CLI"
