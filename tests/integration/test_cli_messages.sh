#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The messages that used to send a user the wrong way now say what is wrong: a missing
# passphrase file by name, a private key given for a certificate (and the reverse), the
# values of every option with a fixed set, the kernel without ECDSA for a P-384 import;
# and evmctl's command names run the imastream command doing the same job.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
command -v getfattr >/dev/null || { echo "SKIP: getfattr (attr) is not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: writing security.* xattrs needs root"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/test_cli_messages.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
keys="$top_srcdir/tests/keys"
(umask 077
	cp "$keys/rsa2048.pem" key.pem
	cp "$keys/rsa2048.crt" cert600.pem
	openssl x509 -in "$keys/rsa2048.crt" -outform DER -out cert.der
	openssl pkey -in key.pem -pubout -out pub.pem 2>/dev/null)
cp "$keys/rsa2048.crt" cert.pem
cp "$keys/rsa2048.pem" key644.pem
chmod 0644 key644.pem cert.pem
echo content >f

# says WANT ARGS...: imastream ARGS fails with exactly the line WANT on stderr.
says() {
	local want=$1 rc=0; shift
	"$imastream" "$@" >out 2>err || rc=$?
	[ "$rc" != 0 ] || fail "imastream $*: exit status 0"
	[ "$(cat err)" = "$want" ] || fail "imastream $*: said '$(cat err)', want '$want'"
}

# A missing --pass-file is named as the passphrase file, not "cannot open key".
says "imastream sign: nothere.pass: no such passphrase file" sign --key key.pem --pass-file nothere.pass f
says "imastream keys id: nothere.pass: no such passphrase file" keys id --key key.pem --pass-file nothere.pass

# A private key where a certificate goes, and the reverse, whatever its mode and format.
says "imastream sign: key.pem is a private key, not a certificate" sign --key key.pem --cert key.pem f
says "imastream verify: key.pem is a private key, not a certificate" verify --trust key.pem f
says "imastream keys id: key.pem is a private key, not a certificate" keys id --cert key.pem
says "imastream sign: cert.pem is a certificate, not a private key" sign --key cert.pem f
says "imastream sign: cert600.pem is a certificate, not a private key" sign --key cert600.pem f
says "imastream sign: cert.der is a certificate, not a private key" sign --key cert.der f
says "imastream sign: pub.pem is a public key, not a private key" sign --key pub.pem f
# A wrong passphrase is said as such, without OpenSSL's error codes.
(umask 077; cp "$keys/rsa2048-enc.pem" enc.pem; echo "not the passphrase" >wrong.pass)
says "imastream sign: enc.pem: wrong passphrase for the private key" sign --key enc.pem --pass-file wrong.pass f
# ... and a real private key open to others is still refused for that.
says "imastream sign: key644.pem: private key is readable or writable by group or others (mode 0644); run chmod 600 on it" \
	sign --key key644.pem f
[ -z "$(getfattr -d -m - --absolute-names f 2>/dev/null)" ] || fail "a refused command wrote an xattr"

# Every line names its command, the failures the library reports from inside it too
# (imastream(1), MESSAGES); keys names its subcommand.
says "imastream sign-package: cert.pem is a certificate, not a private key" sign-package --key cert.pem x.rpm
says "imastream policy: key.pem: no certificate in it" policy keylime --root . --trust key.pem
says "imastream recover: nothere: No such file or directory" recover --root nothere
says "imastream relabel: nothere: No such file or directory" relabel --root nothere
says "imastream hash: nothere: No such file or directory" hash nothere
says "imastream keys list: keyring _nosuch_ring_name not found under the user keyring" keys list _nosuch_ring_name

# An output into a directory that does not exist is said so, once, before the key is
# loaded (nosuch.pem would fail) and before any work.
printf 'imastream-digests 1\npackage x-1-1.noarch %064d\nfile sha256 %064d /a\nend 1\n' 0 0 >ok.manifest
says "imastream sign-digests: nodir/sigs: directory nodir does not exist" \
	sign-digests --key nosuch.pem ok.manifest -o nodir/sigs
says "imastream sign-package: --outdir: directory nodir does not exist" \
	sign-package --key nosuch.pem --outdir nodir x.rpm y.rpm
says "imastream policy: nodir/policy.json: directory nodir does not exist" \
	policy keylime --root . --output nodir/policy.json
# A bad manifest is named with its line.
printf 'imastream-digests 1\npackage x-1-1.noarch %064d\nfile sha256 %064d /a\nend 2\n' 0 0 >bad.manifest
says "imastream sign-digests: bad.manifest, line 4: the end line's count is not the number of file lines" \
	sign-digests --key key.pem bad.manifest -o sigs
[ ! -e sigs ] || fail "a refused manifest left its output"

# Every option with a fixed set of values lists them.
says "imastream sign: --evm takes 'portable' or 'none', not 'portabel' (see imastream sign --help)" \
	sign --key key.pem --evm portabel f
says 'imastream install: --evm: invalid value "portabel" for evm (none or portable)' \
	install --root . --evm portabel x.rpm
says 'imastream install: --mode: invalid value "hashh" for mode (off, hash or sign)' \
	install --root . --mode hashh x.rpm
says 'imastream relabel: --mode: invalid value "x" for mode (off, hash or sign)' relabel --root . --mode x
says 'imastream install: -o: invalid value "maybe" for package_sigs (verify, ignore or auto)' \
	install --root . -o package_sigs=maybe x.rpm
says 'imastream install: -a: unknown hash algorithm "sha257" (md5, sha1, sha256, sha384, sha512, sha224 or sm3)' \
	install --root . -a sha257 x.rpm
says "imastream sign-package: unknown hash algorithm 'sha257' (sha1, sha224, sha256, sha384, sha512, sm3; md5 with --allow-weak) (see imastream sign-package --help)" \
	sign-package -a sha257 --key key.pem x.rpm
says "imastream verify: --format takes 'text' or 'json', not 'xml' (see imastream verify --help)" \
	verify --root . --rpmdb --format xml

# evmctl's names: ima_hash is hash, ima_sign an IMA signature alone, ima_verify checks it.
"$imastream" ima_hash f >out || fail "imastream ima_hash failed"
"$imastream" hash -n f >want || fail "imastream hash -n failed"
[ "$(getfattr --absolute-names -n security.ima -e hex f | sed -n 's/^security.ima=0x//p')" = "$(cut -d' ' -f1 want)" ] ||
	fail "ima_hash did not write what hash computes"
if command -v evmctl >/dev/null; then
	evmctl ima_hash f >/dev/null 2>&1 || fail "evmctl ima_hash failed"
	[ "$(cut -d' ' -f1 out)" = "$(getfattr --absolute-names -n security.ima -e hex f | sed -n 's/^security.ima=0x//p')" ] ||
		fail "imastream ima_hash and evmctl ima_hash disagree"
fi
"$imastream" ima_sign --key key.pem --cert cert.pem f >/dev/null || fail "imastream ima_sign failed"
[ "$(getfattr --absolute-names -n security.ima -e hex f | sed -n 's/^security.ima=0x\(..\).*/\1/p')" = 03 ] ||
	fail "ima_sign wrote no IMA signature"
! getfattr -n security.evm f >/dev/null 2>&1 || fail "ima_sign wrote security.evm (evmctl's ima_sign does not)"
[ "$("$imastream" ima_verify --trust cert.pem f 2>&1)" = "f: verification is OK" ] ||
	fail "ima_verify did not check the signature"
"$imastream" --help | grep -x '  import       imastream keys import' >/dev/null || fail "--help does not list the evmctl names"
says "imastream keys import: wants CERT [RING], or --keyring RING CERT (see imastream keys import --help)" import

# A P-384 certificate into a kernel without ECDSA P-384: the file, and what to use instead.
# Where this kernel has it, a seccomp filter makes add_key(2) fail as such a kernel does.
cp "$keys/ec-p384.crt" p384.crt
want="imastream keys import: p384.crt: this kernel cannot use ECDSA P-384 keys (it lacks CONFIG_CRYPTO_ECDSA, or module ecdsa_generic is not loaded): modprobe ecdsa_generic, or sign with an RSA key, which every IMA kernel can use"
if "$imastream" keys import --keyring @t p384.crt >out 2>err; then
	"$top_builddir/tests/integration/syscall_errno" add_key "$(python3 -c 'import errno; print(errno.ENOPKG)')" \
		"$imastream" keys import --keyring @t p384.crt >out 2>err && fail "import under the filter succeeded"
fi
grep -qE 'Permission denied|Operation not permitted' err &&
	{ echo "SKIP: add_key is refused here, the rest passed: $(cat err)"; exit 77; }
[ "$(cat err)" = "$want" ] || fail "P-384 import: said '$(cat err)', want '$want'"
echo "ok: passphrase file, key/certificate mix-ups, value lists, evmctl names, P-384 import"
