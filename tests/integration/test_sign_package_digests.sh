#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sign-package --export-digests: each package's NEVRA, header SHA-256 and file digests, as rpm itself reports them; packages untouched, failures one line.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
IMASTREAM="$top_builddir/imastream"
for tool in rpmbuild rpm; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
tmp=$(mktemp -d /tmp/test_sign_package_digests.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
ok() { checks=$((checks + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# shellcheck source=tests/integration/signpkg-lib.sh
. "$top_srcdir/tests/integration/signpkg-lib.sh"

spkg_build dig1 3 "$tmp/src" >/dev/null
# A name with a space, a percent sign and a non-ASCII byte: all three written %HH.
mkdir -p "$tmp/top/SPECS"
cat >"$tmp/top/SPECS/dig2.spec" <<'SPEC'
Name: dig2
Epoch: 3
Version: 2.0
Release: 7
Summary: export-digests test
License: MIT
BuildArch: noarch
%description
export-digests test
%install
mkdir -p %{buildroot}/opt/dig2
echo one > "%{buildroot}/opt/dig2/a b%%c"
echo two > "%{buildroot}/opt/dig2/caf$(printf '\303\251')"
: > %{buildroot}/opt/dig2/empty
%files
/opt/dig2
SPEC
rpmbuild -bb --quiet --define "_topdir $tmp/top" "$tmp/top/SPECS/dig2.spec" >"$tmp/rpmbuild.log" 2>&1 ||
	{ cat "$tmp/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed" >&2; exit 99; }
mv "$tmp/top/RPMS/noarch/dig2-2.0-7.noarch.rpm" "$tmp/src/"
echo "not an rpm" >"$tmp/src/bogus.rpm"
cp -a "$tmp/src" "$tmp/orig"

# What rpm says, in the manifest's form: the expected manifest, built independently.
{
	echo "imastream-digests 1"
	for p in "$tmp/src/dig1-1.0-1.noarch.rpm" "$tmp/src/dig2-2.0-7.noarch.rpm"; do
		rpm -qp --nosignature --qf 'package %{NEVRA} %{SHA256HEADER}\n' "$p"
		# Entries without a digest (directories, symlinks) have nothing to sign.
		rpm -qp --nosignature --qf '[%{FILEDIGESTS} %{FILENAMES}\n]' "$p" | grep -v '^ ' >"$tmp/files" || true
		# Every file's digest is sha256 here (rpm 4.18's default file digest algorithm).
		while read -r digest path; do
			enc=$(printf '%s' "$path" | sed 's/%/%25/g; s/ /%20/g; s/\xc3/%C3/g; s/\xa9/%A9/g')
			echo "file sha256 $digest $enc"
		done <"$tmp/files"
		echo "end $(wc -l <"$tmp/files")"
	done
} >"$tmp/expected"

rc=0
"$IMASTREAM" sign-package --export-digests "$tmp/manifest" "$tmp/src" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && ok || fail "exit status $rc with a bogus package, expected 1"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "bogus.rpm" "$tmp/err" && ok || fail "the bogus package is not one line: $(cat "$tmp/err")"
diff -u "$tmp/expected" "$tmp/manifest" >"$tmp/diff" && ok || fail "manifest differs from rpm's view: $(cat "$tmp/diff")"
grep -q '^package dig2-3:2.0-7.noarch ' "$tmp/manifest" && ok || fail "the epoch is not in the NEVRA"
grep -q ' /opt/dig2/a%20b%25c$' "$tmp/manifest" && grep -q ' /opt/dig2/caf%C3%A9$' "$tmp/manifest" && ok ||
	fail "paths are not %HH-escaped: $(grep dig2 "$tmp/manifest")"
# The empty file has a digest (of nothing) and sign-package signs it, so it is listed.
grep -q '^file sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 /opt/dig2/empty$' \
	"$tmp/manifest" && ok || fail "the empty file is not listed"
diff -r "$tmp/orig" "$tmp/src" >/dev/null && ok || fail "exporting changed a package"
[ -z "$(find "$tmp" -maxdepth 1 -name 'manifest.imastream-tmp-*')" ] && ok || fail "temp file left"

# - is standard output, the same bytes.
"$IMASTREAM" sign-package --export-digests - "$tmp/src/dig1-1.0-1.noarch.rpm" "$tmp/src/dig2-2.0-7.noarch.rpm" \
	>"$tmp/stdout" 2>"$tmp/err" && cmp -s "$tmp/stdout" "$tmp/expected" && ok ||
	fail "--export-digests - differs: $(cat "$tmp/err")"
# It signs nothing: a key is a usage error, and so is --outdir.
rc=0
"$IMASTREAM" sign-package --export-digests - --key x.key "$tmp/src" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "takes no --key" "$tmp/err" && ok || fail "--key with --export-digests: status $rc, $(cat "$tmp/err")"
# An unwritable destination: one line, nothing left.
rc=0
"$IMASTREAM" sign-package --export-digests "$tmp/nodir/m" "$tmp/src/dig1-1.0-1.noarch.rpm" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && ok || fail "unwritable FILE: status $rc, $(cat "$tmp/err")"

echo "$checks passed, $fails failed"
[ "$fails" = 0 ]
