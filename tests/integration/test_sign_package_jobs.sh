#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sign-package -j N over a directory of packages: same bytes and messages as -j 1, failures one line each and untouched, evmctl verifies.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
IMASTREAM="$top_builddir/imastream"
for tool in rpmbuild rpm rpmkeys rpm2cpio cpio openssl evmctl setfattr; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
tmp=$(mktemp -d /tmp/test_sign_package_jobs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
ok() { checks=$((checks + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# shellcheck source=tests/integration/signpkg-lib.sh
. "$top_srcdir/tests/integration/signpkg-lib.sh"
spkg_need_xattrs

# RSA (PKCS#1 v1.5) is deterministic: the packages of two runs can be compared byte for byte.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/rsa.key" -out "$tmp/rsa.pem" \
	-subj "/CN=imastream jobs test" -days 2 -addext subjectKeyIdentifier=hash >/dev/null 2>&1
chmod 600 "$tmp/rsa.key"
openssl x509 -in "$tmp/rsa.pem" -outform DER -out "$tmp/rsa.der"

# The release tree: packages in two arch folders, a source package name, a hidden temp
# name and a README that are not packages, a symlink to a package, and two bad packages.
src=$tmp/src
for n in 1 2 3 4; do spkg_build "jobs$n" $((n + 2)) "$src/RPMS/noarch" >/dev/null; done
spkg_build jobs5 3 "$src/RPMS/x86_64" >/dev/null
cp "$src/RPMS/noarch/jobs1-1.0-1.noarch.rpm" "$src/RPMS/noarch/jobs1-1.0-1.src.rpm"
cp "$src/RPMS/noarch/jobs1-1.0-1.noarch.rpm" "$src/RPMS/noarch/.jobs1.rpm.tmp.rpm"
echo "not a package" >"$src/RPMS/README"
ln -s noarch/jobs2-1.0-1.noarch.rpm "$src/RPMS/x86_64/link.rpm"
head -c 3000 "$src/RPMS/noarch/jobs3-1.0-1.noarch.rpm" >"$src/RPMS/noarch/broken-1.0-1.noarch.rpm"
echo "not an rpm" >"$src/RPMS/x86_64/bogus.rpm"

for j in 1 3; do
	cp -a "$src" "$tmp/j$j"
	rc=0
	"$IMASTREAM" sign-package -j "$j" --key "$tmp/rsa.key" --cert "$tmp/rsa.pem" -v \
		"$tmp/j$j/RPMS" >"$tmp/out$j" 2>"$tmp/err$j" || rc=$?
	[ "$rc" = 1 ] && ok || fail "-j $j: exit status $rc, expected 1 (two bad packages)"
	# Paths differ by the folder name only; the rest must be the same text.
	# and the summary's seconds, the one thing that may differ.
	sed -i "s|$tmp/j$j/|DIR/|g; s/failures, [0-9.]* s\$/failures, T s/" "$tmp/err$j"
done
[ ! -s "$tmp/out1" ] && [ ! -s "$tmp/out3" ] && ok || fail "sign-package printed on stdout"
cmp -s "$tmp/err1" "$tmp/err3" && ok || fail "-j 3 said other things than -j 1: $(diff "$tmp/err1" "$tmp/err3")"
# One line per bad package, a -v line per good one, in list order, then the summary
# (files: entries with the directories and symlinks; signatures: regular files).
[ "$(grep -c 'broken-1.0-1.noarch.rpm: truncated' "$tmp/err1")" = 1 ] && ok ||
	fail "the truncated package is not one line: $(cat "$tmp/err1")"
[ "$(grep -c 'bogus.rpm' "$tmp/err1")" = 1 ] && ok || fail "bogus.rpm is not one line: $(cat "$tmp/err1")"
[ "$(grep -c 'files signed' "$tmp/err1")" = 5 ] && ok || fail "expected 5 signed packages: $(cat "$tmp/err1")"
grep -q 'src.rpm\|README\|link.rpm\|\.jobs1' "$tmp/err1" && fail "a non-package was taken: $(cat "$tmp/err1")" || ok
order=$(grep -o '[a-z0-9]*-1.0-1.noarch.rpm: [a-z0-9]*\|bogus.rpm' "$tmp/err1" | cut -d- -f1 | tr '\n' ' ')
[ "$order" = "broken jobs1 jobs2 jobs3 jobs4 bogus.rpm jobs5 " ] && ok || fail "not in name order: $order"
tail -n 1 "$tmp/err1" | grep '^imastream sign-package: 7 packages, 36 files, 21 signatures, 2 failures, T s$' >/dev/null && ok ||
	fail "summary: $(tail -n 1 "$tmp/err1")"

for f in $(cd "$src" && find . -type f -name '*.rpm'); do
	cmp -s "$tmp/j1/$f" "$tmp/j3/$f" && ok || fail "$f differs between -j 1 and -j 3"
done
# The bad ones untouched, with no temp file left beside them.
for f in RPMS/noarch/broken-1.0-1.noarch.rpm RPMS/x86_64/bogus.rpm RPMS/noarch/jobs1-1.0-1.src.rpm; do
	cmp -s "$src/$f" "$tmp/j3/$f" && ok || fail "$f was changed"
done
[ -z "$(find "$tmp/j3" -name '.*.rpm.*' ! -name '.jobs1.rpm.tmp.rpm')" ] && ok || fail "temp files left behind"
# The good ones: rpm -K clean and every file's signature verified by evmctl.
for n in 1 2 3 4; do
	got=$(spkg_evmctl_verify "$tmp/j3/RPMS/noarch/jobs$n-1.0-1.noarch.rpm" "$tmp/rsa.der")
	[ "$got" = $((n + 2)) ] && ok || fail "jobs$n: $got signatures verified by evmctl, expected $((n + 2))"
done

# --outdir: two packages of one name would overwrite each other; the later is refused.
mkdir "$tmp/out" "$tmp/other"
cp "$src/RPMS/noarch/jobs1-1.0-1.noarch.rpm" "$tmp/other/"
rc=0
"$IMASTREAM" sign-package -j 2 --quiet --key "$tmp/rsa.key" --outdir "$tmp/out" \
	"$src/RPMS/noarch/jobs1-1.0-1.noarch.rpm" "$tmp/other/jobs1-1.0-1.noarch.rpm" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "other/jobs1-1.0-1.noarch.rpm: same file name as" "$tmp/err" &&
	ok || fail "--outdir name clash: status $rc, $(cat "$tmp/err")"
# An empty folder is a failure, not a silent success.
mkdir "$tmp/empty"
rc=0
"$IMASTREAM" sign-package --key "$tmp/rsa.key" "$tmp/empty" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q "no binary rpm package" "$tmp/err" && ok || fail "empty folder: status $rc, $(cat "$tmp/err")"
# A bad key: nothing is read, one line.
rc=0
"$IMASTREAM" sign-package -j 2 --key "$tmp/missing.key" "$src/RPMS" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && ok || fail "missing key: status $rc, $(cat "$tmp/err")"

# --progress: how far, as packages done of those found and their percentage.
cp -a "$src" "$tmp/prog"
"$IMASTREAM" sign-package -j 2 --progress --key "$tmp/rsa.key" --cert "$tmp/rsa.pem" \
	"$tmp/prog/RPMS" >/dev/null 2>"$tmp/err" || true
tr '\r' '\n' <"$tmp/err" | grep 'sign-package: 7/7 packages (100%), ' >/dev/null && ok ||
	fail "no progress line with the percentage: $(tr '\r' '\n' <"$tmp/err" | tail -n 3)"

echo "$checks passed, $fails failed"
[ "$fails" = 0 ]
