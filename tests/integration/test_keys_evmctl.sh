#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Cross-checks key ids and signatures against evmctl 1.4: same key ids, RSA bytes identical, ours verify.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
sign="$top_builddir/tests/keys/sign-digest"
command -v evmctl >/dev/null || { echo "SKIP: evmctl is not installed"; exit 77; }
command -v setfattr >/dev/null || { echo "SKIP: setfattr (attr) is not installed"; exit 77; }
work=$(mktemp -d /tmp/test_keys_evmctl.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

echo "some file content $$" >file
setfattr -n user.probe -v 1 file 2>/dev/null || { echo "SKIP: no user xattrs on $work"; exit 77; }

# newkey NAME ALG...: a 0600 key and certificates with a hash SKID and a forced one.
newkey() {
	local name=$1; shift
	(umask 077; openssl genpkey "$@" -out "$name.pem" 2>/dev/null)
	openssl req -x509 -new -key "$name.pem" -out "$name.crt" -days 2 -subj "/CN=$name" \
		-addext subjectKeyIdentifier=hash
	openssl req -x509 -new -key "$name.pem" -out "$name-forced.crt" -days 2 -subj "/CN=$name forced" \
		-addext "subjectKeyIdentifier=$(openssl rand -hex 20)"
	openssl x509 -in "$name.crt" -outform DER -out "$name.der"
	(umask 077; cat "$name.pem" "$name-forced.crt" >"$name-with-cert.pem")
}

# The key id evmctl puts in a signature: bytes 3..6 of "03 02 algo keyid(4) size(2) sig".
evmctl_keyid() { evmctl ima_sign -n --key "$1" file 2>/dev/null | cut -c7-14; }
skid_tail() { openssl x509 -in "$1" -noout -ext subjectKeyIdentifier | tail -n1 | tr -d ' :\n' | tail -c8 | tr A-F a-f; }

checks=0
for kind in rsa2048 rsa3072 rsa4096 p256 p384; do
	case $kind in
	rsa*) newkey "$kind" -algorithm RSA -pkeyopt "rsa_keygen_bits:${kind#rsa}" ;;
	p256) newkey "$kind" -algorithm EC -pkeyopt ec_paramgen_curve:P-256 ;;
	p384) newkey "$kind" -algorithm EC -pkeyopt ec_paramgen_curve:P-384 ;;
	esac

	# Bare key: evmctl's rule, and the hash-SKID certificate agrees with it.
	ev=$(evmctl_keyid "$kind.pem")
	ours=$("$imastream" keys id --key "$kind.pem")
	[ "$ours" = "$ev" ] || fail "$kind: bare key id $ours, evmctl says $ev"
	ours=$("$imastream" keys id --cert "$kind.crt")
	[ "$ours" = "$ev" ] || fail "$kind: hash-SKID cert key id $ours, evmctl says $ev"
	ours=$("$imastream" keys id --cert "$kind.der")
	[ "$ours" = "$ev" ] || fail "$kind: DER cert key id $ours, evmctl says $ev"

	# Certificate appended to the key (forced SKID): evmctl takes the SKID, so do we.
	ev=$(evmctl_keyid "$kind-with-cert.pem")
	ours=$("$imastream" keys id --key "$kind-with-cert.pem")
	[ "$ours" = "$ev" ] || fail "$kind: key+cert id $ours, evmctl says $ev"
	[ "$ours" = "$(skid_tail "$kind-forced.crt")" ] || fail "$kind: key id $ours is not the SKID tail"
	ours=$("$imastream" keys id --key "$kind.pem" --cert "$kind-forced.crt")
	[ "$ours" = "$ev" ] || fail "$kind: --cert key id $ours, evmctl says $ev"
	checks=$((checks + 5))

	for algo in sha1 sha256 sha384 sha512; do
		ev_out=$(evmctl ima_sign -n -a "$algo" --key "$kind.pem" file 2>ev.err)
		digest=$(sed -n "s/^hash($algo): //p" ev.err)
		[ -n "$digest" ] || fail "$kind/$algo: evmctl printed no digest"
		read -r keyid sig < <("$sign" "$kind.pem" "$algo" "$digest")
		[ "$keyid" = "${ev_out:6:8}" ] || fail "$kind/$algo: key id $keyid vs evmctl ${ev_out:6:8}"
		size=$(printf '%04x' $(( ${#sig} / 2 )))
		if [ "${kind#rsa}" != "$kind" ]; then
			# PKCS#1 v1.5 is deterministic: the whole xattr must be evmctl's, byte for byte.
			[ "${ev_out:18}" = "$sig" ] || fail "$kind/$algo: RSA signature differs from evmctl's"
			[ "${ev_out:14:4}" = "$size" ] || fail "$kind/$algo: size field ${ev_out:14:4} vs $size"
		fi
		# Our bytes, wrapped in the v2 header, verify with evmctl (which reads DER certs).
		algo_id=$(case $algo in sha1) echo 02;; sha256) echo 04;; sha384) echo 05;; sha512) echo 06;; esac)
		setfattr -n user.ima -v "0x0302${algo_id}${keyid}${size}${sig}" file
		evmctl ima_verify --xattr-user -a "$algo" --key "$kind.der" file >/dev/null 2>&1 ||
			fail "$kind/$algo: evmctl ima_verify rejects our signature"
		# And openssl agrees on the raw signature over the digest.
		echo "$sig" | xxd -r -p >sig.bin
		echo "$digest" | xxd -r -p >digest.bin
		openssl pkeyutl -verify -certin -inkey "$kind.crt" -pkeyopt "digest:$algo" \
			-in digest.bin -sigfile sig.bin >/dev/null || fail "$kind/$algo: openssl rejects it"
		checks=$((checks + 3))
	done
done
echo "ok: $checks checks against evmctl and openssl"
