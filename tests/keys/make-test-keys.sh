#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Regenerates the committed TEST keys and certificates (never use them for anything real).
# The unit tests hard-code key ids of these files; rerunning this means updating them.
set -eu
cd "$(dirname "$0")"
days=36500
cert() { # cert KEY OUT SUBJECT [EXTRA-ADDEXT...]
	key=$1 out=$2 cn=$3
	shift 3
	openssl req -x509 -new -key "$key" -out "$out" -days $days -subj "/CN=$cn" "$@"
}
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa2048.pem
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out rsa1024.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec-p256.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out ec-p384.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:secp256k1 -out ec-secp256k1.pem
openssl genpkey -algorithm ED25519 -out ed25519.pem
openssl pkey -in rsa2048.pem -aes-256-cbc -passout pass:'test passphrase' -out rsa2048-enc.pem
cert rsa2048.pem rsa2048.crt "imastream test RSA" -addext subjectKeyIdentifier=hash
cert rsa2048.pem rsa2048-forced.crt "imastream test RSA forced SKID" \
	-addext subjectKeyIdentifier=00112233445566778899aabbccddeeff12345678
cert rsa2048.pem rsa2048-noskid.crt "imastream test RSA no SKID" -addext subjectKeyIdentifier=none
cert ec-p256.pem ec-p256.crt "imastream test P-256" -addext subjectKeyIdentifier=hash
cert ec-p384.pem ec-p384.crt "imastream test P-384" -addext subjectKeyIdentifier=hash
cert ed25519.pem ed25519.crt "imastream test Ed25519" -addext subjectKeyIdentifier=hash
# A curve the kernel cannot verify with (rpm's own test packages use it).
cert ec-secp256k1.pem ec-secp256k1.crt "imastream test secp256k1" -addext subjectKeyIdentifier=hash
openssl x509 -in ec-p256.crt -outform DER -out ec-p256.der
