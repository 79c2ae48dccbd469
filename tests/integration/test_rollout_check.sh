#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# "ima-rollout check --root" judges what the root's IMA policy will demand: where it
# appraises by signature (docs/ima-policy-exec, appraise_type=imasig), an executable whose
# security.ima is a digest fails, though it and its (type-3) EVM signature verify, since
# the kernel will refuse it; under docs/ima-policy (digests are enough) it passes.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

# Not setup_scratch: no imastream.so is loaded here, so a sanitizer build runs this too.
need rpm
need rpmbuild
need evmctl
[ "$(id -u)" = 0 ] || { echo "SKIP: ima-rollout, security.* xattrs and rpm --root need root"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/imastream-rollout.XXXXXX")
trap 'rm -rf "$T"' EXIT
PKG=$(build_pkg "$top_srcdir/tests/rpm/imsusr.rpmspec")
IMS=$top_builddir/imastream
R=$T/root
mkdir -p "$R/usr/bin" "$R/usr/sbin" "$R/usr/lib" "$R/etc/keys/ima" "$R/etc/ima"
for d in bin sbin lib; do
	ln -s "usr/$d" "$R/$d"
done
rpm --root "$R" --nodeps --noscripts --noplugins -i "$PKG" 2>"$T/rpm.err" ||
	{ cat "$T/rpm.err"; fail "rpm -i into $R"; }

# The keys ima-rollout setup would have put there; rpm's files and one unowned program
# signed as ima-rollout label signs them.
cp "$top_srcdir/tests/keys/rsa2048.pem" "$T/key.pem"
chmod 600 "$T/key.pem"
crt=$top_srcdir/tests/keys/rsa2048.crt
openssl x509 -in "$crt" -outform DER -out "$R/etc/keys/ima/ima.der"
"$IMS" relabel --root "$R" --mode sign --evm portable -k "$T/key.pem" -c "$crt" --quiet ||
	fail "relabel --root $R"
printf '#!/bin/sh\necho signed\n' >"$R/usr/bin/signed"
chmod 0755 "$R/usr/bin/signed"
"$IMS" sign --evm portable -k "$T/key.pem" -c "$crt" "$R/usr/bin/signed" >/dev/null || fail "sign"

# An unowned program holding a digest under a type-3 EVM signature: both verify.
printf '#!/bin/sh\necho digest\n' >"$R/usr/bin/digest"
chmod 0755 "$R/usr/bin/digest"
"$IMS" hash "$R/usr/bin/digest" >/dev/null || fail "hash"
evmctl sign -u --key "$T/key.pem" "$R/usr/bin/digest" >/dev/null 2>&1 || fail "evmctl sign -u"
case $("$IMS" verify --evm require --trust "$crt" "$R/usr/bin/digest") in
*": OK (ima: digest, evm: signature)") ;;
*) echo "SKIP: this filesystem gives no inode generation: a type-3 EVM signature cannot be checked"
	exit 77 ;;
esac

rollout() { PATH="$top_builddir:$PATH" sh "$top_srcdir/scripts/ima-rollout" check --root "$R" >"$T/out" 2>&1; }

cp "$top_srcdir/docs/ima-policy" "$R/etc/ima/ima-policy"
rollout || { cat "$T/out"; fail "check under a policy that takes digests failed"; }
echo "ok: under docs/ima-policy: $(tail -n 1 "$T/out")"

cp "$top_srcdir/docs/ima-policy-exec" "$R/etc/ima/ima-policy"
rollout && { cat "$T/out"; fail "check under appraise_type=imasig passed a digest"; }
grep -qx "$R/usr/bin/digest: FAIL: security.ima: a digest, and appraise_type=imasig needs a signature (an IMA signature, or an EVM portable one over the digest)" \
	"$T/out" || { cat "$T/out"; fail "check did not name the program holding a digest"; }
[ "$(grep -c ': FAIL: ' "$T/out")" = 1 ] || { cat "$T/out"; fail "check failed other files too"; }
echo "ok: under docs/ima-policy-exec: $(grep ': FAIL: ' "$T/out")"
