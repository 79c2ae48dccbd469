#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Signs through pkcs11: URIs against a SoftHSM2 token made here; checks with openssl and the file key.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
sign="$top_builddir/tests/keys/sign-digest"
imastream="$top_builddir/imastream"
module=/usr/lib/softhsm/libsofthsm2.so
command -v softhsm2-util >/dev/null || { echo "SKIP: softhsm2-util is not installed (softhsm2)"; exit 77; }
[ -f "$module" ] || { echo "SKIP: $module is missing (softhsm2)"; exit 77; }
enginedir=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')
[ -f "$enginedir/pkcs11.so" ] || { echo "SKIP: no OpenSSL pkcs11 engine (libengine-pkcs11-openssl)"; exit 77; }
work=$(mktemp -d /tmp/test_keys_pkcs11.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

# A private SoftHSM2 configuration: the token lives in this temp dir only.
export SOFTHSM2_CONF="$work/softhsm2.conf"
mkdir tokens
printf 'directories.tokendir = %s/tokens\nobjectstore.backend = file\nlog.level = ERROR\n' "$work" >"$SOFTHSM2_CONF"
softhsm2-util --init-token --free --label imstest --pin 1234 --so-pin 5678 >/dev/null
(umask 077
 openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem 2>/dev/null
 openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.pem 2>/dev/null
 echo 1234 >pin; echo 9999 >badpin)
softhsm2-util --import rsa.pem --token imstest --label rsakey --id 01 --pin 1234 >/dev/null
softhsm2-util --import ec.pem --token imstest --label eckey --id 02 --pin 1234 >/dev/null
openssl req -x509 -new -key rsa.pem -out rsa.crt -days 2 -subj /CN=rsa -addext "subjectKeyIdentifier=$(openssl rand -hex 20)"
openssl req -x509 -new -key ec.pem -out ec.crt -days 2 -subj /CN=ec -addext subjectKeyIdentifier=hash

digest=$(echo "content $$" | openssl dgst -sha256 -r | cut -d' ' -f1)
echo "$digest" | xxd -r -p >digest.bin
checks=0
for kind in rsa ec; do
	# Through p11-kit's proxy (the engine's default) and through an explicit module-path.
	for uri in "pkcs11:token=imstest;object=${kind}key;type=private" \
		   "pkcs11:token=imstest;object=${kind}key;type=private?module-path=$module"; do
		read -r keyid sig < <("$sign" --pass-file pin "$uri" sha256 "$digest" 2>/dev/null) ||
			fail "$kind: signing through $uri failed"
		echo "$sig" | xxd -r -p >sig.bin
		openssl pkeyutl -verify -inkey "$kind.pem" -pkeyopt digest:sha256 -in digest.bin \
			-sigfile sig.bin >/dev/null || fail "$kind: openssl rejects the token's signature"
		# The key id comes from the public key the token exports: the file's bare-key id.
		[ "$keyid" = "$("$imastream" keys id --key "$kind.pem")" ] || fail "$kind: key id $keyid"
		checks=$((checks + 2))
	done
	PIN_VAR=1234 "$sign" --pass-env PIN_VAR "pkcs11:token=imstest;object=${kind}key;type=private" \
		sha256 "$digest" >/dev/null 2>&1 || fail "$kind: PIN from the environment refused"
	checks=$((checks + 1))
done

# RSA is deterministic: the token's signature is the file key's, byte for byte.
read -r _ token_sig < <("$sign" --pass-file pin "pkcs11:token=imstest;object=rsakey;type=private" sha256 "$digest" 2>/dev/null)
read -r _ file_sig < <("$sign" rsa.pem sha256 "$digest")
[ "$token_sig" = "$file_sig" ] || fail "RSA signature from the token differs from the file key's"
# A certificate gives the key id (its forced SKID) and must match the token's key.
read -r keyid _ < <("$sign" --pass-file pin --cert rsa.crt "pkcs11:token=imstest;object=rsakey;type=private" sha256 "$digest" 2>/dev/null)
skid=$(openssl x509 -in rsa.crt -noout -ext subjectKeyIdentifier | tail -n1 | tr -d ' :\n' | tail -c8 | tr A-F a-f)
[ "$keyid" = "$skid" ] || fail "key id $keyid is not the certificate's SKID tail $skid"
checks=$((checks + 2))

# Errors: one line of ours each (libp11 adds its own chatter on stderr; ours is prefixed).
expect_error() { # expect_error NEEDLE ARGS...
	local needle=$1; shift
	if "$sign" "$@" sha256 "$digest" >/dev/null 2>err.txt </dev/null; then fail "accepted: $*"; fi
	[ "$(grep -c '^sign-digest:' err.txt)" = 1 ] && grep -q "^sign-digest: .*$needle" err.txt ||
		fail "expected one line with '$needle', got: $(cat err.txt)"
	checks=$((checks + 1))
}
expect_error "wrong PIN, or no such key" --pass-file badpin "pkcs11:token=imstest;object=rsakey;type=private"
expect_error "no PIN given" "pkcs11:token=imstest;object=rsakey;type=private"
expect_error "does not match the private key" --pass-file pin --cert ec.crt "pkcs11:token=imstest;object=rsakey;type=private"
expect_error "only module-path=PATH is supported" --pass-file pin "pkcs11:token=imstest;object=rsakey?pin-value=1234"
echo "ok: $checks pkcs11 checks"
