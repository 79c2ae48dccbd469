#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# export-digests -> sign-digests -> import-signatures: packages as valid as signed directly (same bytes with RSA, rpm -K, evmctl, the plugin's pass-through), and every refusal one line with the package unchanged.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
IMASTREAM="$top_builddir/imastream"
for tool in rpmbuild rpm rpmkeys rpm2cpio cpio openssl evmctl setfattr; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
tmp=$(mktemp -d /tmp/test_sign_digests.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
ok() { checks=$((checks + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# shellcheck source=tests/integration/signpkg-lib.sh
. "$top_srcdir/tests/integration/signpkg-lib.sh"
spkg_need_xattrs

# mkkey NAME OPENSSL-NEWKEY-ARGS...: NAME.key (0600), NAME.pem, NAME.der, with a subjectKeyIdentifier.
mkkey() {
	local name=$1
	shift
	openssl req -x509 "$@" -nodes -keyout "$tmp/$name.key" -out "$tmp/$name.pem" \
		-subj "/CN=imastream sign-digests $name" -days 2 -addext subjectKeyIdentifier=hash >/dev/null 2>&1 ||
		{ echo "ERROR: openssl cannot make the $name key" >&2; exit 99; }
	chmod 600 "$tmp/$name.key"
	openssl x509 -in "$tmp/$name.pem" -outform DER -out "$tmp/$name.der"
}
mkkey ec -newkey ec -pkeyopt ec_paramgen_curve:P-256
mkkey rsa -newkey rsa:2048
mkkey other -newkey rsa:2048

src=$tmp/src
for n in 1 2 3; do spkg_build "dig$n" $((n + 2)) "$src" >/dev/null; done
pkgs=("$src"/dig*.rpm)

# unchanged_since DIR: every package of $src is byte for byte what DIR holds.
unchanged_since() { diff -r "$1" "$src" >/dev/null; }

echo "== RSA, deterministic: the imported packages are byte for byte the directly signed ones"
cp -a "$src" "$tmp/direct"
"$IMASTREAM" sign-package -j 2 --quiet --key "$tmp/rsa.key" --cert "$tmp/rsa.pem" "$tmp/direct"
"$IMASTREAM" sign-package --export-digests "$tmp/m" "${pkgs[@]}"
cp -a "$src" "$tmp/orig"
unchanged_since "$tmp/orig" && ok || fail "exporting changed a package"
"$IMASTREAM" sign-digests --key "$tmp/rsa.key" --cert "$tmp/rsa.pem" --quiet "$tmp/m" \
	-o "$tmp/s.rsa" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && ok || fail "sign-digests (RSA): $(cat "$tmp/err")"
head -n 1 "$tmp/s.rsa" | grep -x 'imastream-signatures 1' >/dev/null && ok || fail "no signatures magic"
# Same records as the manifest, each file line carrying its value.
[ "$(grep -c '^sig ' "$tmp/s.rsa")" = "$(grep -c '^file ' "$tmp/m")" ] && ok || fail "not one sig per file"
cp -a "$src" "$tmp/imported"
"$IMASTREAM" sign-package --import-signatures "$tmp/s.rsa" --cert "$tmp/rsa.pem" -j 2 \
	"$tmp/imported" 2>"$tmp/err" && ok || fail "import: $(cat "$tmp/err")"
grep -q '3 packages, 21 files, 12 signatures, 0 failures' "$tmp/err" && ok || fail "summary: $(cat "$tmp/err")"
for p in "$tmp"/direct/*.rpm; do
	cmp -s "$p" "$tmp/imported/${p##*/}" && ok || fail "${p##*/}: imported differs from signed directly"
done

echo "== P-256, two threads: rpm -K clean and evmctl verifies every file"
"$IMASTREAM" sign-digests -j 2 --key "$tmp/ec.key" --cert "$tmp/ec.pem" "$tmp/m" \
	--output "$tmp/s" 2>"$tmp/err" && ok || fail "sign-digests: $(cat "$tmp/err")"
grep -q '^imastream sign-digests: 3 packages, 12 signatures, ' "$tmp/err" && ok || fail "summary: $(cat "$tmp/err")"
"$IMASTREAM" sign-digests --format json --key "$tmp/ec.key" --cert "$tmp/ec.pem" "$tmp/m" \
	--output "$tmp/s.json-run" >"$tmp/sum.json" 2>"$tmp/err" && ok || fail "sign-digests --format json: $(cat "$tmp/err")"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert s["record"] == "summary" and s["command"] == "sign-digests" and (s["packages"], s["signatures"]) == (3, 12), s' \
	"$tmp/sum.json" && ok || fail "sign-digests --format json: $(cat "$tmp/sum.json")"
cp -a "$src" "$tmp/ecpkgs"
"$IMASTREAM" sign-package --import-signatures "$tmp/s" --cert "$tmp/ec.pem" -v "$tmp/ecpkgs" \
	2>"$tmp/err" && ok || fail "import (P-256): $(cat "$tmp/err")"
[ "$(grep -c 'files given their imported signatures' "$tmp/err")" = 3 ] && ok || fail "-v lines: $(cat "$tmp/err")"
total=0
for p in "$tmp"/ecpkgs/*.rpm; do
	n=$(spkg_evmctl_verify "$p" "$tmp/ec.der")
	total=$((total + n))
done
[ "$total" = 12 ] && ok || fail "evmctl verified $total files, expected 12"

# refused WHAT PATTERN ARGS...: import fails, one line matching PATTERN, packages unchanged.
refused() {
	local what=$1 pattern=$2 rc=0
	shift 2
	rm -rf "$tmp/work" && cp -a "$src" "$tmp/work"
	"$IMASTREAM" sign-package "$@" "$tmp/work/dig1-1.0-1.noarch.rpm" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] && ok || fail "$what: exit status $rc, expected 1"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "$pattern" "$tmp/err" && ok ||
		fail "$what: not one line matching '$pattern': $(cat "$tmp/err")"
	diff -r "$src" "$tmp/work" >/dev/null && ok || fail "$what: a package changed"
	[ -z "$(find "$tmp/work" -name '.*' -type f)" ] && ok || fail "$what: a temp file was left"
}
# edit_sigs SED OUT: the P-256 signatures file through sed.
edit_sigs() { sed "$1" "$tmp/s" >"$2"; }

echo "== refusals: the package is left as it was"
# Signatures for other packages only.
"$IMASTREAM" sign-package --export-digests "$tmp/m23" "$src/dig2-1.0-1.noarch.rpm" "$src/dig3-1.0-1.noarch.rpm"
"$IMASTREAM" sign-digests --quiet --key "$tmp/ec.key" --cert "$tmp/ec.pem" "$tmp/m23" -o "$tmp/s23"
refused "another package's signatures" "no signatures for dig1-1.0-1.noarch in the signatures file" \
	--import-signatures "$tmp/s23" --cert "$tmp/ec.pem"
# Another build of the same NEVRA: same name, other content, other header.
mkdir -p "$tmp/rebuild/top/SPECS"
cat >"$tmp/rebuild/top/SPECS/dig1.spec" <<'SPEC'
Name: dig1
Version: 1.0
Release: 1
Summary: another build of dig1
License: MIT
BuildArch: noarch
%description
another build of dig1
%install
mkdir -p %{buildroot}/opt/dig1
echo "another content" > %{buildroot}/opt/dig1/f0
%files
/opt/dig1
SPEC
rpmbuild -bb --quiet --define "_topdir $tmp/rebuild/top" "$tmp/rebuild/top/SPECS/dig1.spec" >"$tmp/rpmbuild.log" 2>&1 ||
	{ cat "$tmp/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed" >&2; exit 99; }
mv "$tmp/rebuild/top/RPMS/noarch/dig1-1.0-1.noarch.rpm" "$tmp/rebuild/"
"$IMASTREAM" sign-package --export-digests "$tmp/mre" "$tmp/rebuild/dig1-1.0-1.noarch.rpm"
"$IMASTREAM" sign-digests --quiet --key "$tmp/ec.key" --cert "$tmp/ec.pem" "$tmp/mre" -o "$tmp/sre"
if cmp -s "$tmp/rebuild/dig1-1.0-1.noarch.rpm" "$src/dig1-1.0-1.noarch.rpm"; then
	fail "the rebuild is the same package"
else
	refused "another build of the same NEVRA" "are for another build of it (header SHA-256 differs)" \
		--import-signatures "$tmp/sre" --cert "$tmp/ec.pem"
fi
# The wrong certificate: its key id is not the signatures'.
refused "a wrong certificate" "signed with key id [0-9a-f]*, which the certificate does not have" \
	--import-signatures "$tmp/s" --cert "$tmp/other.pem"
# The wrong key under the right key id: signed by 'other', claiming rsa's key id.
rsa_id=$(openssl x509 -in "$tmp/rsa.pem" -noout -ext subjectKeyIdentifier | tail -n 1 | tr -d ' :\n' | tail -c 8)
"$IMASTREAM" sign-digests --quiet --key "$tmp/other.key" --keyid "$rsa_id" "$tmp/m" -o "$tmp/s.forged"
refused "a wrong key under the right key id" "does not verify with the certificate" \
	--import-signatures "$tmp/s.forged" --cert "$tmp/rsa.pem"
# A tampered signature: one hex digit of dig1's first RSA signature changed (still well formed).
awk 'BEGIN { done = 0 } /^package dig1-/ { on = 1 } on && /^sig / && !done {
	v = $4; c = substr(v, 60, 1); $4 = substr(v, 1, 59) (c == "0" ? "1" : "0") substr(v, 61); done = 1 }
	{ print }' "$tmp/s.rsa" >"$tmp/s.tampered"
cmp -s "$tmp/s.rsa" "$tmp/s.tampered" && fail "the signature was not changed"
refused "a tampered signature" "does not verify with the certificate" \
	--import-signatures "$tmp/s.tampered" --cert "$tmp/rsa.pem"
# A missing file entry (its count fixed so that the file still parses).
awk '/^package dig1-/ { on = 1 } on && /^sig / && !gone { gone = 1; next }
	on && /^end / { $2 = $2 - 1; on = 0 } { print }' "$tmp/s" >"$tmp/s.missing"
refused "a missing file entry" "no signature for /opt/dig1/" \
	--import-signatures "$tmp/s.missing" --cert "$tmp/ec.pem"
# An entry more than the package has files: its last signature again, under a new path
# (its count fixed so that the file still parses).
awk '/^package dig1-/ { on = 1 } on && /^sig / { last = $0 }
	on && /^end / { n = split(last, f, " "); f[n] = "/opt/dig1/zz-extra"; extra = f[1];
		for (i = 2; i <= n; i++) extra = extra " " f[i]; print extra; $2 = $2 + 1; on = 0 }
	{ print }' "$tmp/s" >"$tmp/s.extra"
grep -q "^sig .* /opt/dig1/zz-extra$" "$tmp/s.extra" || fail "no extra entry was added"
refused "an entry the package does not have" "signs /opt/dig1/zz-extra, which the package does not have" \
	--import-signatures "$tmp/s.extra" --cert "$tmp/ec.pem"
# A digest that is not the package's: signed for another content.
awk '/^package dig1-/ { on = 1 } on && /^sig / && !done { $3 = "00" substr($3, 3); done = 1 } { print }' \
	"$tmp/s" >"$tmp/s.digest"
refused "another content's digest" "is for another content" \
	--import-signatures "$tmp/s.digest" --cert "$tmp/ec.pem"
# A malformed signatures file: refused before any package is read.
edit_sigs '3s/ sha256 / SHA256 /' "$tmp/s.bad"
refused "a malformed signatures file" "$tmp/s.bad, line 3: an unknown hash algorithm" \
	--import-signatures "$tmp/s.bad" --cert "$tmp/ec.pem"
# A manifest is not a signatures file.
refused "a manifest given as signatures" "not a signatures file" \
	--import-signatures "$tmp/m" --cert "$tmp/ec.pem"

echo "== sign-digests refuses a hostile manifest in one line and writes nothing"
# hostile NAME PATTERN: sign-digests on $tmp/hostile exits 1, one line, SIGS untouched.
hostile() {
	local rc=0
	echo "previous" >"$tmp/keep"
	"$IMASTREAM" sign-digests --key "$tmp/ec.key" "$tmp/hostile" -o "$tmp/keep" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] && ok || fail "$1: exit status $rc, expected 1"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "$2" "$tmp/err" && ok ||
		fail "$1: not one line matching '$2': $(cat "$tmp/err")"
	[ "$(cat "$tmp/keep")" = previous ] && ok || fail "$1: the output was written"
	[ -z "$(find "$tmp" -maxdepth 1 -name 'keep.imastream-tmp-*')" ] && ok || fail "$1: temp file left"
}
sed '2s/^package /package  /' "$tmp/m" >"$tmp/hostile"
hostile "a double space" "^imastream sign-digests: $tmp/hostile, line 2: "
{ head -n 2 "$tmp/m"; printf 'file sha256 %s /%s\n' "$(printf '%064d' 0)" "$(head -c 17000 /dev/zero | tr '\0' a)"; } >"$tmp/hostile"
hostile "an oversized line" "a line longer than 16384 bytes"
sed '$d' "$tmp/m" >"$tmp/hostile"
hostile "a missing end" "the last package has no end line"
printf 'imastream-digests 1\npackage x-1-1.noarch %064d\nfile sha256 %064d /a%%2Fb\nend 1\n' 0 0 >"$tmp/hostile"
hostile "a needless escape" "a %HH escape of a byte that is written as it is"
cp "$tmp/s" "$tmp/hostile"
hostile "a signatures file as manifest" "not a digest manifest"
# What --import-signatures would refuse later is refused before anything is signed.
printf 'imastream-digests 1\npackage x-1-1.noarch %064d\nfile sha256 %064d /opt/../../etc/shadow\nend 1\n' 0 0 >"$tmp/hostile"
hostile "a path leading out" "$tmp/hostile, line 3: a path with an empty, \".\" or \"..\" component"
printf 'imastream-digests 1\npackage x-1-1.noarch %064d\nfile sha256 %064d /a\nfile sha256 %064d /a\nend 2\n' 0 0 1 >"$tmp/hostile"
hostile "a path listed twice" "$tmp/hostile, line 4: a second line for the path of line 3 in this package"
{ cat "$tmp/m"; sed -n '2,/^end /p' "$tmp/m"; } >"$tmp/hostile"
hostile "two blocks for one package header" "$tmp/hostile, line $(( $(wc -l <"$tmp/m") + 1 )): a second block for the package header of line 2 "
# A manifest of md5 digests is a usage error without --allow-weak.
printf 'imastream-digests 1\npackage x-1-1.noarch %064d\nfile md5 %032d /a\nend 1\n' 0 1 >"$tmp/weak"
rc=0
"$IMASTREAM" sign-digests --key "$tmp/ec.key" "$tmp/weak" -o "$tmp/weak.sigs" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "md5 is a weak digest algorithm" "$tmp/err" && [ ! -e "$tmp/weak.sigs" ] && ok ||
	fail "md5 without --allow-weak: status $rc, $(cat "$tmp/err")"
# Standard input and output: the same signatures file as through files (RSA: same bytes).
"$IMASTREAM" sign-digests --quiet --key "$tmp/rsa.key" --cert "$tmp/rsa.pem" - -o - <"$tmp/m" >"$tmp/s.stdout" &&
	cmp -s "$tmp/s.stdout" "$tmp/s.rsa" && ok || fail "- and - differ from files"
rc=0
"$IMASTREAM" sign-digests --key "$tmp/rsa.key" "$tmp/m" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "no --output given" "$tmp/err" && ok || fail "no --output: status $rc"
rc=0
"$IMASTREAM" sign-package --import-signatures "$tmp/s" "$tmp/work" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "needs --cert" "$tmp/err" && ok || fail "import without --cert: status $rc"

echo "== the rpm plugin's pass-through takes the imported signatures as security.ima"
SO="$top_builddir/.libs/imastream.so"
if [ "$(id -u)" != 0 ]; then
	echo "note: not root: rpm --root install with the plugin not checked"
elif ldd "$SO" 2>/dev/null | grep libasan >/dev/null; then
	echo "note: a sanitizer build of imastream.so: rpm cannot load it, not checked"
else
	root=$tmp/root
	mkdir -p "$root"
	pkg=$tmp/ecpkgs/dig3-1.0-1.noarch.rpm
	rpm --root "$root" --dbpath /var/lib/rpm --nodeps --nosignature \
		--define "__plugindir $top_builddir/.libs" --define "_imastream_config %{nil}" \
		--define "__transaction_imastream $SO" --define "_imastream_trust $tmp/ec.pem" \
		-i "$pkg" 2>"$tmp/rpm.err" && ok || fail "rpm -i with the plugin: $(cat "$tmp/rpm.err")"
	n=0
	while read -r path sig; do
		[ -n "$sig" ] || continue
		got=$(getfattr --absolute-names -n security.ima -e hex "$root$path" 2>/dev/null | sed -n 's/^security.ima=0x//p')
		[ "$got" = "$sig" ] || fail "$path: security.ima '$got' is not the imported '$sig'"
		evmctl ima_verify --key "$tmp/ec.der" "$root$path" >/dev/null 2>&1 && n=$((n + 1)) ||
			fail "$path: evmctl rejects the installed security.ima"
	done < <(rpm -qp --nosignature --qf '[%{FILENAMES} %{FILESIGNATURES}\n]' "$pkg")
	[ "$n" = 5 ] && ok || fail "$n installed files verified, expected 5"
fi

echo "$checks passed, $fails failed"
[ "$fails" = 0 ]
