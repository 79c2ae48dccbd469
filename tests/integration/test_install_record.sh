#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The install record: verify --root round trip and tampering, file conflicts refused or allowed, upgrades.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
command -v setfattr >/dev/null || skip "setfattr not installed"

work=$(mktemp -d /tmp/imastream-install-record.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# spec NAME VERSION SHARED-CONTENT: a package with its own files, a file it shares with
# the other package (conflicting content), and an identical shared file.
spec() {
	local name=$1 version=$2 shared=$3
	cat >"$work/$name.spec" <<SPEC
Name: $name
Version: $version
Release: 1
Summary: imastream record test package
License: MIT
BuildArch: noarch
%description
Owns files under /opt/rec.
%install
mkdir -p %{buildroot}/opt/rec/$name
echo "$name $version" > %{buildroot}/opt/rec/$name/own
echo "$shared" > %{buildroot}/opt/rec/shared
echo identical > %{buildroot}/opt/rec/same
ln -s own %{buildroot}/opt/rec/$name/link
%if "$version" == "1.0"
echo old > %{buildroot}/opt/rec/$name/only-in-1.0
%endif
%files
%dir /opt/rec
/opt/rec/$name
/opt/rec/shared
/opt/rec/same
SPEC
	rpmbuild -bb --quiet --define "_topdir $work/top" --define '_build_id_links none' \
		"$work/$name.spec" >"$work/rpmbuild.log" 2>&1 || { cat "$work/rpmbuild.log" >&2; exit 99; }
	echo "$work/top/RPMS/noarch/$name-$version-1.noarch.rpm"
}
a1=$(spec imsrec-a 1.0 "from a")
a2=$(spec imsrec-a 2.0 "from a, version 2")
b1=$(spec imsrec-b 1.0 "from b")
root=$work/root
make_root "$root"
inst() {
	"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$@"
}
snapshot() {
	(cd "$root" && find . -printf '%p %y %m %s\n' | sort && cat var/lib/imastream/packages/*)
}

echo "== a record per package, and verify --root checks it"
inst "$a1" || fail "installing imsrec-a 1.0 failed"
rec=$root/var/lib/imastream/packages/imsrec-a.record
[ -f "$rec" ] || fail "no record at $rec"
grep -qx 'package imsrec-a' "$rec" || fail "the record does not name its package"
grep -qx 'nevra imsrec-a-1.0-1.noarch' "$rec" || fail "the record lacks the nevra"
grep -qx 'ima hash' "$rec" || fail "the record lacks the IMA mode"
sum=$(sha256sum <"$root/opt/rec/imsrec-a/own" | cut -d' ' -f1)
grep -qx "f 0644 0 0 13 sha256:$sum ima /opt/rec/imsrec-a/own" "$rec" ||
	{ cat "$rec"; fail "the record lacks the line of /opt/rec/imsrec-a/own"; }
grep -qx 'l 0777 0 0 0 - - /opt/rec/imsrec-a/link own' "$rec" || fail "the record lacks the symlink"
grep -qx 'd 0755 0 0 0 - - /opt/rec' "$rec" || fail "the record lacks the directory"
ls -A "$root/var/lib/imastream/packages" | grep '^\.imastream-tmp' >/dev/null && fail "a temp record was left"
"$IMASTREAM" verify --root "$root" >"$work/verify" || { cat "$work/verify"; fail "verify --root failed on a fresh install"; }
[ "$(grep -Ec ': OK( \(|$)' "$work/verify")" -eq "$(grep -c '^[fdl] ' "$rec")" ] ||
	fail "verify --root did not check every recorded object"

echo "== a conflicting file is refused, naming the file and both packages; nothing is left"
before=$(snapshot)
rc=0
inst "$b1" 2>"$work/err" || rc=$?
[ $rc = 1 ] || fail "the conflicting install exited $rc"
[ "$(wc -l <"$work/err")" = 1 ] || { cat "$work/err"; fail "expected one line"; }
grep -q 'imsrec-b-1.0-1.noarch: /opt/rec/shared: conflicts with the file of package imsrec-a$' "$work/err" ||
	fail "unexpected message: $(cat "$work/err")"
[ "$before" = "$(snapshot)" ] || fail "the refused package changed the root or the record"
no_leftovers "$root"
echo "ok: $(cat "$work/err")"

echo "== an upgrade replaces its own record (no conflict with itself)"
inst "$a2" || fail "upgrading imsrec-a failed"
[ "$(ls "$root/var/lib/imastream/packages")" = imsrec-a.record ] || fail "the upgrade left two records"
grep -qx 'nevra imsrec-a-2.0-1.noarch' "$rec" || fail "the record was not replaced"
grep -q only-in-1.0 "$rec" && fail "the upgraded record still lists a file of 1.0"
grep -q 'version 2' "$root/opt/rec/shared" || fail "the upgrade did not replace the shared file"
"$IMASTREAM" verify --root "$root" >"$work/verify" || { cat "$work/verify"; fail "verify --root after the upgrade"; }

echo "== --replace-files installs it; the file is then the new package's"
inst --replace-files "$b1" || fail "--replace-files did not install"
[ "$(cat "$root/opt/rec/shared")" = "from b" ] || fail "the shared file was not replaced"
"$IMASTREAM" verify --root "$root" >"$work/verify" || { cat "$work/verify"; fail "verify --root after --replace-files"; }
[ "$(grep -Ec '^/opt/rec/shared: OK( \(|$)' "$work/verify")" = 1 ] || fail "the shared file was not checked exactly once"

echo "== tampering is detected"
printf 'imsrec-b 1.1\n' >"$root/opt/rec/imsrec-b/own"    # same size, new content
setfattr -x security.ima "$root/opt/rec/same"
chmod 0600 "$root/opt/rec/imsrec-a/own"
ln -sf elsewhere "$root/opt/rec/imsrec-a/link"
rm "$root/opt/rec/shared"
rc=0
"$IMASTREAM" verify --root "$root" >"$work/verify" || rc=$?
[ $rc = 1 ] || fail "verify --root exited $rc on a tampered root"
grep -q '^/opt/rec/imsrec-b/own: FAIL: content changed (sha256 digest) (package imsrec-b)$' "$work/verify" ||
	{ cat "$work/verify"; fail "changed content not detected"; }
grep -q '^/opt/rec/same: FAIL: missing security.ima$' "$work/verify" || { cat "$work/verify"; fail "missing security.ima not detected"; }
grep -q '^/opt/rec/imsrec-a/own: FAIL: mode 0600, recorded 0644' "$work/verify" || fail "mode change not detected"
grep -q '^/opt/rec/imsrec-a/link: FAIL: symlink target changed' "$work/verify" || fail "symlink change not detected"
grep -q '^/opt/rec/shared: FAIL: missing (package imsrec-b)' "$work/verify" || fail "removal not detected"
[ "$(grep -c FAIL "$work/verify")" = 5 ] || { cat "$work/verify"; fail "expected exactly 5 failures"; }

echo "== the record's format is 1 without %config files; a newer one is refused by its version"
[ "$(head -1 "$rec")" = "imastream-record 1" ] || fail "the record's first line: $(head -1 "$rec")"
intact=$(cat "$rec")
for first in "imastream-record 3" "imastream-record" "imastream-record 1x" "imastream-records 1"; do
	{ echo "$first"; echo "$intact" | tail -n +2; } >"$rec"
	rc=0
	"$IMASTREAM" verify --root "$root" >/dev/null 2>"$work/err" || rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$work/err")" = 1 ] || fail "'$first': exit $rc: $(cat "$work/err")"
	case $first in
	*3) want='imsrec-a.record: format version 3, newer than this imastream reads (2): a newer imastream wrote it$' ;;
	*) want='imsrec-a.record: line 1 is not "imastream-record FORMAT"$' ;;
	esac
	grep -q "$want" "$work/err" || fail "'$first': $(cat "$work/err")"
done
echo "$intact" >"$rec"

echo "== a damaged record is one clear error"
echo "garbage" >>"$rec"
rc=0
"$IMASTREAM" verify --root "$root" >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q 'imsrec-a.record: line [0-9]* is malformed' "$work/err" || fail "a malformed record: $(cat "$work/err")"
rc=0
"$IMASTREAM" verify --root "$work" >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q 'no install record' "$work/err" || fail "a root without a record: $(cat "$work/err")"
echo "== a file rpm's database gives to another package is a conflict too"
dbroot=$work/dbroot
make_root "$dbroot"
rpm --root "$dbroot" -i --nodeps --noscripts "$a1" 2>"$work/rpm.err" || { cat "$work/rpm.err" >&2; fail "rpm -i failed"; }
before=$(cd "$dbroot" && find . -path ./root -prune -o -printf '%p %y %m %s\n' | sort)
rc=0
"$IMASTREAM" install --root "$dbroot" --allow-unsigned --quiet "$b1" 2>"$work/err" || rc=$?
[ $rc = 1 ] || fail "a file rpm's database gives to imsrec-a was overwritten (exit $rc)"
grep -qx "imastream install: imsrec-b-1.0-1.noarch: /opt/rec/shared: conflicts with the file of package imsrec-a" "$work/err" ||
	{ cat "$work/err"; fail "the conflict with rpm's database does not name the file and its owner"; }
[ "$before" = "$(cd "$dbroot" && find . -path ./root -prune -o -printf '%p %y %m %s\n' | sort)" ] ||
	fail "the refused package left something in the root"
# The package rpm owns is refused as a second owner; taken over, its own files are no conflict.
rc=0
"$IMASTREAM" install --root "$dbroot" --allow-unsigned --quiet "$a2" 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q "rpm's database in .* has imsrec-a-1.0-1.noarch" "$work/err" ||
	fail "installing imsrec-a over rpm's install of it was not refused: exit $rc: $(cat "$work/err")"
"$IMASTREAM" install --root "$dbroot" --allow-unsigned --quiet --take-over "$a2" ||
	fail "taking imsrec-a over from rpm: its own files were a conflict"
"$IMASTREAM" install --root "$dbroot" --allow-unsigned --quiet --replace-files "$b1" ||
	fail "--replace-files does not replace a file rpm's database gives to another package"
[ "$(cat "$dbroot/opt/rec/shared")" = "from b" ] || fail "the shared file was not replaced"

echo "== a package without files is recorded and verifies; an empty record is named"
cat >"$work/imsrec-empty.spec" <<'SPEC'
Name: imsrec-empty
Version: 1.0
Release: 1
Summary: imastream record test package without files
License: MIT
BuildArch: noarch
%description
Owns nothing.
%files
SPEC
rpmbuild -bb --quiet --define "_topdir $work/top" "$work/imsrec-empty.spec" >"$work/rpmbuild.log" 2>&1 ||
	{ cat "$work/rpmbuild.log" >&2; exit 99; }
eroot=$work/emptyroot
make_root "$eroot"
"$IMASTREAM" install --root "$eroot" --allow-unsigned --quiet "$work/top/RPMS/noarch/imsrec-empty-1.0-1.noarch.rpm" ||
	fail "installing a package without files failed"
"$IMASTREAM" verify --root "$eroot" >"$work/verify" 2>"$work/err" ||
	fail "verify --root of a package without files: $(cat "$work/err")"
: >"$eroot/var/lib/imastream/packages/imsrec-empty.record"
rc=0
"$IMASTREAM" verify --root "$eroot" >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q 'imsrec-empty.record is empty' "$work/err" || fail "an empty record: $(cat "$work/err")"

echo "PASS: record round trip, conflicts refused and allowed, upgrade, 5 kinds of tampering detected"
