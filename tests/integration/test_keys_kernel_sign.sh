#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Signs with a private key held by the kernel (keyctl_pkey_sign) and verifies with openssl.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
sign="$top_builddir/tests/keys/sign-digest"
keys="$top_srcdir/tests/keys"
command -v keyctl >/dev/null || { echo "SKIP: keyctl is not installed (keyutils)"; exit 77; }
work=$(mktemp -d /tmp/test_keys_kernel.XXXXXX)
ring="_imastream_ksign_$$"
cleanup() {
	id=$(keyctl search @u keyring "$ring" 2>/dev/null) && keyctl unlink "$id" @u >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

ring_id=$(keyctl newring "$ring" @u 2>err.txt) || { echo "SKIP: cannot create a keyring: $(cat err.txt)"; exit 77; }
# The kernel takes a private key only as PKCS#8 DER, and only with its PKCS#8 parser.
(umask 077; cp "$keys/rsa2048.pem" key.pem)
openssl pkcs8 -topk8 -nocrypt -in "$keys/rsa2048.pem" -outform DER -out key.p8
if ! serial=$(keyctl padd asymmetric imastream-test-key "$ring_id" <key.p8 2>err.txt); then
	echo "SKIP: the running kernel cannot hold a private key ($(cat err.txt | tr -d '\n')):" \
		"it lacks CONFIG_PKCS8_PRIVATE_KEY_PARSER or the asymmetric key type"
	exit 77
fi
digest=$(echo "kernel $$" | openssl dgst -sha256 -r | cut -d' ' -f1)
echo "$digest" | xxd -r -p >digest.bin
for spec in "kernel:$serial" "kernel:$ring:imastream-test-key"; do
	read -r keyid sig < <("$sign" --cert "$keys/rsa2048.crt" "$spec" sha256 "$digest") || fail "$spec: sign failed"
	echo "$sig" | xxd -r -p >sig.bin
	openssl pkeyutl -verify -certin -inkey "$keys/rsa2048.crt" -pkeyopt digest:sha256 -in digest.bin \
		-sigfile sig.bin >/dev/null || fail "$spec: openssl rejects the kernel's signature"
	# RSA PKCS#1 v1.5 is deterministic: the kernel's bytes are the file key's.
	read -r _ file_sig < <("$sign" key.pem sha256 "$digest")
	[ "$sig" = "$file_sig" ] || fail "$spec: differs from the file key's signature"
	[ "$keyid" = 890c1f83 ] || fail "$spec: key id $keyid"
done
echo "ok: kernel-held key signs"
