#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream sign --verity against Debian 13's evmctl 1.5 (in the cached trixie chroot): RSA values byte-identical to sign_hash --veritysig, ours verify in evmctl, evmctl's in ours.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
top=$(cd "$top_srcdir" && pwd)
cache=${IMASTREAM_CACHE:-/var/cache/imastream}
[ "$(id -u)" = 0 ] || { echo "SKIP: the trixie chroot needs root"; exit 77; }
for t in unshare chroot getfattr setfattr perl openssl; do
	command -v $t >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done
root=
for d in $(ls -d "$cache"/chroot-trixie-*/ 2>/dev/null); do
	[ -f "$d.imastream-complete" ] && root=${d%/} && break
done
[ -n "$root" ] || { echo "SKIP: no trixie chroot cached in $cache (scripts/matrix --prepare trixie makes one)"; exit 77; }
tools=$("$top/tests/integration/fetch-trixie-tools.sh") || { echo "SKIP: ${tools#*SKIP: }"; exit 77; }
# shellcheck source=scripts/chroot-lib.sh
. "$top/scripts/chroot-lib.sh"

work=$(mktemp -d /tmp/test_sigv3_evmctl.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
mkdir files
printf 'probe' >files/probe
setfattr -n user.probe -v 1 files/probe 2>/dev/null || { echo "SKIP: no user xattrs on $work"; exit 77; }
rm files/probe
cp -a "$tools" evmctl

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
newkey other -algorithm RSA -pkeyopt rsa_keygen_bits:2048

# Sizes around the 4 KiB block and the 128 hashes of one tree block, and random ones.
sizes="0 1 4095 4096 4097 524288 524289 $((RANDOM * 7)) $((RANDOM * 31))"
n=0
for s in $sizes; do
	head -c "$s" /dev/urandom >"files/f$n"
	n=$((n + 1))
done

# Ours: user.ima values, RSA (kept) and P-256 (printed only), and the fs-verity digests.
"$imastream" sign --verity --evm none --xattr-user --key rsa.pem files/* >ours-rsa.txt
"$imastream" sign --verity --evm none --xattr-user -n --key p256.pem files/* >ours-p256.txt
"$imastream" hash --verity files/* >digests.txt

# In trixie: evmctl's values for the same digests, and its fsverity's digests.
cat >run.sh <<'EOF'
set -e
export LD_LIBRARY_PATH=/work/evmctl/usr/lib/x86_64-linux-gnu
cd /work
/work/evmctl/usr/bin/evmctl --version >evmctl-version.txt
/work/evmctl/usr/bin/fsverity digest files/* >fsverity.txt
/work/evmctl/usr/bin/evmctl sign_hash --veritysig --key rsa.pem <fsverity.txt >evmctl-rsa.txt
/work/evmctl/usr/bin/evmctl sign_hash --veritysig --key p256.pem <fsverity.txt >evmctl-p256.txt
EOF
chroot_run "$root" "$work" run.sh >run.log 2>&1 || { cat run.log; fail "evmctl in the trixie chroot"; }
grep -q '^evmctl 1\.[5-9]' evmctl-version.txt || fail "not evmctl 1.5 or later: $(cat evmctl-version.txt)"
cmp -s digests.txt fsverity.txt || fail "imastream hash --verity differs from trixie's fsverity digest"

# evmctl prints "sha256:HEX NAME VALUE"; ours "VALUE  NAME": RSA values are identical.
awk '{ print $3 "  " $2 }' evmctl-rsa.txt >evmctl-rsa-values.txt
cmp -s ours-rsa.txt evmctl-rsa-values.txt ||
	{ diff ours-rsa.txt evmctl-rsa-values.txt | head -4 | cut -c1-120; fail "RSA sigv3 values differ from evmctl 1.5's"; }
case $(head -n 1 ours-rsa.txt) in 0603*) ;; *) fail "not a type-6 version-3 value";; esac

# evmctl's (ECDSA: fresh) values verify with ours, and fail once the content changes.
n=0
while read -r digest name value; do
	setfattr -n user.ima -v "0x$value" "$name"
	n=$((n + 1))
done <evmctl-p256.txt
out=$("$imastream" verify --xattr-user --evm none --trust p256.crt files/*) ||
	fail "evmctl's P-256 sigv3 values do not verify with ours: $out"
[ "$(printf '%s\n' "$out" | grep -c ': OK (ima: fs-verity signature')" = "$n" ] || fail "not $n files OK: $out"
printf 'x' >>files/f3
out=$("$imastream" verify --xattr-user --evm none --trust p256.crt files/f3) &&
	fail "a changed file still verifies: $out"
printf '%s\n' "$out" | grep -q 'content changed' || fail "changed file: $out"
"$imastream" verify --xattr-user --evm none --trust other.crt files/f1 >/dev/null &&
	fail "a value verifies with another key"

# Ours verify in evmctl. 1.5 checks a sigv3 value only against the fs-verity digest an IMA
# measurement list records, so each one goes into an ima-sigv2 entry of a binary list
# (PCR 10, SHA-1 template hash, d-ngv2 "verity:sha256:" digest, name, signature); a copy
# of one signed over another digest must fail.
mklist() {
	perl -e '
		use Digest::SHA qw(sha1);
		sub field { pack("V", length($_[0])) . $_[0] }
		while (<STDIN>) {
			my ($digest, $name, $value) = split;
			$digest =~ s/^sha256://;
			my $t = field("verity:sha256:\0" . pack("H*", $digest)) .
				field("$name\0") . field(pack("H*", $value));
			print pack("V", 10), sha1($t), pack("V", 9), "ima-sigv2",
				pack("V", length($t)), $t;
		}'
}
paste -d' ' fsverity.txt <(awk '{ print $1 }' ours-rsa.txt) | awk '{ print $1, $2, $3 }' >list-rsa.txt
paste -d' ' fsverity.txt <(awk '{ print $1 }' ours-p256.txt) | awk '{ print $1, $2, $3 }' >list-p256.txt
{
	cat list-rsa.txt list-p256.txt
	# f1's RSA value under f2's digest and name "swapped".
	echo "$(sed -n 3p fsverity.txt | awk '{ print $1 }') swapped $(sed -n 2p ours-rsa.txt | awk '{ print $1 }')"
} | mklist >list.bin
cat >verify.sh <<'EOF'
export LD_LIBRARY_PATH=/work/evmctl/usr/lib/x86_64-linux-gnu
cd /work
/work/evmctl/usr/bin/evmctl -v ima_measurement --verify-sig --key rsa.der,p256.der list.bin \
	>measurement.txt 2>&1
exit 0
EOF
chroot_run "$root" "$work" verify.sh >verify.log 2>&1 || { cat verify.log; fail "evmctl ima_measurement"; }
want=$(( $(wc -l <list-rsa.txt) + $(wc -l <list-p256.txt) ))
got=$(grep -c 'files/f[0-9]*: verification is OK' measurement.txt || true)
[ "$got" = "$want" ] || { grep -i verif measurement.txt | head; fail "evmctl verified $got of our $want values"; }
grep -q 'swapped: verification is OK' measurement.txt && fail "evmctl accepts a value over another digest"
grep -q 'swapped: verification failed' measurement.txt || fail "evmctl did not check the swapped value"
echo "ok: $n files; RSA sigv3 identical to $(cat evmctl-version.txt)'s, $want of ours verified by it, its P-256 values by ours"
