#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream sign/verify against evmctl 1.4: each verifies the other's signatures, RSA bytes are identical, tampering is caught.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
command -v evmctl >/dev/null || { echo "SKIP: evmctl is not installed"; exit 77; }
command -v getfattr >/dev/null || { echo "SKIP: getfattr (attr) is not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: writing security.* xattrs needs root"; exit 77; }
work=$(mktemp -d /tmp/test_sign_evmctl.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
checks=0
ok() { checks=$((checks + 1)); }

echo probe >probe
setfattr -n user.probe -v 1 probe 2>/dev/null || { echo "SKIP: no user xattrs on $work"; exit 77; }
setfattr -n security.ima -v 0x01 probe 2>/dev/null || { echo "SKIP: security.ima not writable here"; exit 77; }

# newkey NAME ALG...: a 0600 key and its certificate (hash SKID), PEM and DER.
newkey() {
	local name=$1; shift
	(umask 077; openssl genpkey "$@" -out "$name.pem" 2>/dev/null)
	openssl req -x509 -new -key "$name.pem" -out "$name.crt" -days 2 -subj "/CN=$name" \
		-addext subjectKeyIdentifier=hash
	openssl x509 -in "$name.crt" -outform DER -out "$name.der"
}
newkey rsa -algorithm RSA -pkeyopt rsa_keygen_bits:2048
newkey p256 -algorithm EC -pkeyopt ec_paramgen_curve:P-256
newkey p384 -algorithm EC -pkeyopt ec_paramgen_curve:P-384
newkey other -algorithm EC -pkeyopt ec_paramgen_curve:P-256

# xval FILE NAME: the hex value of one xattr ("" when absent).
xval() { getfattr --absolute-names -n "$2" -e hex "$1" 2>/dev/null | sed -n "s/^$2=0x//p"; }

# fresh NAME: a file with fixed content, owner and mode (so that two of them hash alike).
fresh() {
	rm -f "$1"
	printf 'content of a file to sign\n%s\n' "$(seq 1 200)" >"$1"
	chown 12:34 "$1"
	chmod 0750 "$1"
}

for user in "" --xattr-user; do
	ima=security.ima evm=security.evm
	[ -n "$user" ] && ima=user.ima evm=user.evm
	for key in rsa p256 p384; do
		for algo in sha1 sha256 sha512; do
			what="$key $algo ${user:-security.*}"
			fresh ours
			out=$("$imastream" sign $user -a "$algo" --key "$key.pem" ours)
			[ "$(printf '%s\n' "$out" | sed -n 1p)" = "$(xval ours $ima)  ours" ] ||
				fail "$what: first line is not the $ima value and the name"
			[ "$(printf '%s\n' "$out" | sed -n 2p)" = "$(xval ours $evm)  ours" ] ||
				fail "$what: second line is not the $evm value and the name"
			case $(xval ours $evm) in 0502*) ;; *) fail "$what: $evm is not type 5 v2";; esac
			evmctl ima_verify $user --key "$key.der" ours >/dev/null 2>&1 ||
				fail "$what: evmctl ima_verify rejects our $ima"
			evmctl verify $user --generation=0 --key "$key.der" ours >/dev/null 2>&1 ||
				fail "$what: evmctl verify rejects our $evm"
			[ "$("$imastream" verify $user --trust "$key.der" ours)" = "ours: OK (ima: signature, evm: portable signature)" ] ||
				fail "$what: imastream verify rejects its own signatures"
			ok

			# evmctl's own signatures, on a twin file.
			fresh theirs
			evmctl ima_sign $user -a "$algo" --key "$key.pem" theirs >/dev/null 2>&1 ||
				fail "$what: evmctl ima_sign failed"
			evmctl sign $user --portable --generation=0 -a "$algo" --key "$key.pem" theirs \
				>/dev/null 2>&1 || fail "$what: evmctl sign --portable failed"
			[ "$("$imastream" verify $user --trust "$key.crt" theirs)" = "theirs: OK (ima: signature, evm: portable signature)" ] ||
				fail "$what: imastream verify rejects evmctl's signatures"
			ok
			if [ "$key" = rsa ]; then
				[ "$(xval ours $ima)" = "$(xval theirs $ima)" ] ||
					fail "$what: $ima differs from evmctl ima_sign"
				[ "$(xval ours $evm)" = "$(xval theirs $evm)" ] ||
					fail "$what: $evm differs from evmctl sign --portable"
				ok
			fi
		done

		# Tampering: each change is caught by evmctl and by us, with our reason.
		what="$key ${user:-security.*}"
		changed="changed"
		[ "$key" = rsa ] || changed="changed or bad signature"
		for change in content uid gid mode label; do
			fresh f
			"$imastream" sign $user --key "$key.pem" f >/dev/null
			case $change in
			content) echo more >>f ;;
			uid) chown 13 f ;;
			gid) chgrp 35 f ;;
			mode) chmod 0755 f ;;
			label) setfattr -n security.selinux -v "system_u:object_r:bin_t:s0" f ;;
			esac
			if [ $change = content ]; then
				if evmctl ima_verify $user --key "$key.der" f >/dev/null 2>&1; then
					fail "$what: evmctl ima_verify misses a content change"
				fi
				want="f: FAIL: $ima: content $changed"
			else
				if evmctl verify $user --generation=0 --key "$key.der" f >/dev/null 2>&1; then
					fail "$what: evmctl verify misses a $change change"
				fi
				want="f: FAIL: $evm: metadata $changed"
			fi
			got=$("$imastream" verify $user --trust "$key.der" f) &&
				fail "$what: imastream verify exits 0 after a $change change"
			[ "$got" = "$want" ] || fail "$what: $change change: '$got', expected '$want'"
			ok
		done
	done
done

# Verdicts that are not a change.
fresh f
"$imastream" sign --key rsa.pem f >/dev/null
got=$("$imastream" verify --trust other.der f) && fail "unknown key id: exit 0"
kid=$(xval f security.ima | cut -c7-14)
[ "$got" = "f: FAIL: security.ima: unknown key id $kid; security.evm: unknown key id $kid" ] ||
	fail "unknown key id: '$got'"
ok
# An RSA signature whose middle is flipped opens into garbage: a bad signature, not a change.
v=$(xval f security.ima)
setfattr -n security.ima -v "0x${v:0:100}$(printf '%s' "${v:100:2}" | tr 0-9a-f 1-9a-f0)${v:102}" f
got=$("$imastream" verify --evm none --trust rsa.der f) && fail "bad signature: exit 0"
[ "$got" = "f: FAIL: security.ima: bad signature (key id $kid)" ] || fail "bad signature: '$got'"
ok
fresh f
got=$("$imastream" verify --trust rsa.der f) && fail "missing: exit 0"
[ "$got" = "f: FAIL: missing security.ima" ] || fail "missing: '$got'"
"$imastream" sign --evm none --key rsa.pem f >/dev/null
[ -z "$(xval f security.evm)" ] || fail "--evm none wrote security.evm"
[ "$("$imastream" verify --trust rsa.der f)" = "f: OK (ima: signature, evm: missing)" ] ||
	fail "--evm auto wants security.evm"
got=$("$imastream" verify --evm require --trust rsa.der f) && fail "require: exit 0"
[ "$got" = "f: FAIL: missing security.evm" ] || fail "require: '$got'"
ok
# An HMAC cannot be checked without the device key: fine under auto, a failure under require.
setfattr -n security.evm -v 0x02$(printf '%040d' 0) f
[ "$("$imastream" verify --trust rsa.der f)" = "f: OK (ima: signature, evm: HMAC, not checked)" ] ||
	fail "HMAC under auto"
got=$("$imastream" verify --evm require --trust rsa.der f) && fail "HMAC under require: exit 0"
case $got in "f: FAIL: security.evm: cannot be verified (an EVM HMAC needs"*) ;;
	*) fail "HMAC under require: '$got'";; esac
setfattr -n security.ima -v 0x0302 f
got=$("$imastream" verify --evm none --trust rsa.der f) && fail "malformed: exit 0"
case $got in "f: FAIL: security.ima: malformed ("*) ;; *) fail "malformed: '$got'";; esac
ok
# Digests (type 4) are compared with the content.
fresh f
"$imastream" hash f >/dev/null
[ "$("$imastream" verify --evm none --trust rsa.der f)" = "f: OK (ima: digest)" ] || fail "type-4 digest"
echo more >>f
[ "$("$imastream" verify --evm none --trust rsa.der f)" = "f: FAIL: security.ima: content changed" ] ||
	fail "type-4 digest after a change"
ok

# A non-portable (type 3) EVM signature from evmctl, where the filesystem has generations.
fresh f
evmctl ima_sign --key rsa.pem f >/dev/null 2>&1
if evmctl sign -u --key rsa.pem f >/dev/null 2>&1; then
	case $(xval f security.evm) in 0302*) ;; *) fail "evmctl sign did not write type 3";; esac
	[ "$("$imastream" verify --evm require --trust rsa.der f)" = "f: OK (ima: signature, evm: signature)" ] ||
		fail "type-3 EVM signature from evmctl"
	chmod 0700 f
	[ "$("$imastream" verify --trust rsa.der f)" = "f: FAIL: security.evm: metadata changed" ] ||
		fail "type-3 EVM signature after chmod"
	ok
else
	echo "note: no inode generation on $work: type-3 EVM check skipped"
fi

# A tree, in parallel: every file signed, evmctl agrees, output is two lines per file.
mkdir -p tree/a/b
for i in $(seq 1 40); do head -c $((i * 97)) /dev/urandom >"tree/a/f$i"; cp "tree/a/f$i" "tree/a/b/g$i"; done
ln -s f1 tree/a/link
out=$("$imastream" sign -r -j 2 --key p256.pem tree) || fail "sign -r: exit status $?"
[ "$(printf '%s\n' "$out" | wc -l)" = 160 ] || fail "sign -r: not two lines for each of 80 files"
evmctl ima_verify --key "$work/p256.der" $(find tree -type f) >/dev/null 2>&1 ||
	fail "sign -r: evmctl ima_verify rejects a file"
for f in $(find tree -type f); do
	evmctl verify --generation=0 --key "$work/p256.der" "$f" >/dev/null 2>&1 ||
		fail "sign -r: evmctl verify rejects $f"
done
# The symlink is skipped, not followed: not named, and nothing set on the link itself
# (xval would follow it to f1, which is signed).
printf '%s\n' "$out" | grep -q ' tree/a/link$' && fail "sign -r: followed the symlink tree/a/link"
[ -z "$(getfattr --absolute-names -h -n security.ima tree/a/link 2>/dev/null)" ] ||
	fail "sign -r: security.ima set on the symlink tree/a/link"
"$imastream" verify -r -j 2 --trust p256.crt tree >verify.out || fail "verify -r fails: $(grep -v OK verify.out)"
[ "$(grep -Ec ': OK( \(|$)' verify.out)" = 80 ] || fail "verify -r: not 80 OK lines"
# Half of the tree signed with sha512 instead: one verifying thread (-j 1) meets both
# algorithms with one key, through its kept verification contexts.
"$imastream" sign -r -a sha512 --key p256.pem tree/a/b >/dev/null || fail "sign -r -a sha512: exit status $?"
[ "$(getfattr --absolute-names -e hex -n security.ima tree/a/b/g1 | sed -n 's/^security.ima=0x\(......\).*/\1/p')" = 030206 ] ||
	fail "sign -a sha512: tree/a/b/g1 has no sha512 signature"
"$imastream" verify -r -j 1 --trust p256.crt tree >verify.out ||
	fail "verify -r -j 1 of sha256 and sha512 signatures fails: $(grep -v OK verify.out | head -3)"
[ "$(grep -Ec ': OK( \(|$)' verify.out)" = 80 ] || fail "verify -r -j 1: not 80 OK lines"
echo x >>tree/a/f7
"$imastream" verify -r --trust p256.crt tree >verify.out && fail "verify -r: exit 0 with a changed file"
[ "$(grep -Ev ': OK( \(|$)' verify.out)" = "tree/a/f7: FAIL: security.ima: content changed or bad signature" ] ||
	fail "verify -r: $(grep -Ev ': OK( \(|$)' verify.out)"
ok

echo "PASS: $checks checks"
