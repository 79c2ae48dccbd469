#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# One owner per package: imastream install refuses a package stock rpm installed, and rpm with the plugin refuses one imastream install recorded, each unless told to take it over; a take-over leaves one owner, whose view verifies.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
setup_scratch
IMS="$top_builddir/imastream"
[ -x "$IMS" ] || { echo "ERROR: $IMS not built"; exit 99; }

V1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
V2=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 2.0)
# imastream install reads rpm's database where irpm puts it (--dbpath /var/lib/rpm).
ims_install() { "$IMS" install --dbpath /var/lib/rpm --allow-unsigned --quiet "$@"; }
in_rpm() { rpm --root "$1" --dbpath /var/lib/rpm -q imstest 2>/dev/null; }
record() { echo "$1/var/lib/imastream/packages/imstest.record"; }
# snapshot ROOT: every object, mode, size, mtime (sqlite's -shm index: every reader writes it).
snapshot() {
	find "$1" -printf '%p %m %s %T@\n' | sed 's/\(rpmdb.sqlite-shm [0-9]* [0-9]*\) .*/\1/' | sort
}

echo "== rpm installed it: imastream install of a newer version is refused, nothing changes"
R=$T/rpm-owned
new_root "$R"
irpm "$R" -i "$V1" || fail "rpm -i imstest-1.0 failed"
snapshot "$R" >"$T/before"
ims_install --root "$R" "$V2" 2>"$T/err" && fail "imastream install took over rpm's imstest silently"
[ "$(wc -l <"$T/err")" = 1 ] && grep -q "refused: rpm's database in $R has imstest-1.0-1.noarch, installed by rpm" "$T/err" ||
	fail "not one line naming rpm's version: $(cat "$T/err")"
snapshot "$R" | diff "$T/before" - >"$T/diff" || fail "the refusal changed the root: $(cat "$T/diff")"
[ ! -e "$(record "$R")" ] || fail "a record was written"
[ "$(in_rpm "$R")" = imstest-1.0-1.noarch ] || fail "rpm's database changed"

echo "== --take-over: installed and recorded, rpm's entry removed; one owner, whose view verifies"
ims_install --root "$R" --take-over "$V2" 2>"$T/err" || fail "install --take-over failed: $(cat "$T/err")"
grep -q "imstest: taken over from rpm" "$T/err" || fail "the take-over was not said: $(cat "$T/err")"
in_rpm "$R" >/dev/null && fail "rpm's database still names imstest: $(in_rpm "$R")"
grep -q "imstest-2.0-1" "$(record "$R")" || fail "the record does not name imstest-2.0"
"$IMS" verify --root "$R" >"$T/out" 2>&1 || fail "verify --root after the take-over: $(grep -Ev ': OK( \(|$)' "$T/out")"
[ "$(grep -Ec ': OK( \(|$)' "$T/out")" -ge 5 ] || fail "verify --root checked too little: $(cat "$T/out")"
[ -z "$(find "$R" -name '.imastream-take-over.lock' -o -name '.imastream-tmp-*')" ] || fail "a private lock or temp file was left"

echo "== imastream installed it: rpm -U with the plugin is refused, nothing changes"
R=$T/ims-owned
new_root "$R"
ims_install --root "$R" "$V1" 2>"$T/err" || fail "imastream install imstest-1.0 failed: $(cat "$T/err")"
# (rpm makes its database first, before any plugin runs: that is left out.)
snapshot "$R" | grep -v "^$R/var/lib/rpm" >"$T/before"
irpm "$R" -U "$V2" && fail "rpm -U over imastream's imstest succeeded"
grep -q "imstest-2.0-1.noarch: refused: imstest is installed by 'imastream install' in $R/\{0,1\} (var/lib/imastream/packages/imstest.record)" "$T/rpm.stderr" ||
	fail "rpm's refusal does not name the record: $(cat "$T/rpm.stderr")"
snapshot "$R" | grep -v "^$R/var/lib/rpm" | diff "$T/before" - >"$T/diff" || fail "rpm -U changed the root: $(cat "$T/diff")"
in_rpm "$R" >/dev/null && fail "rpm's database names imstest after the refusal"
grep -q "imstest-1.0-1" "$(record "$R")" || fail "the record changed"
irpm "$R" -i "$V1" && fail "rpm -i of imastream's imstest succeeded"

echo "== %_imastream_take_over 1: rpm takes it over, the stale record goes"
irpm "$R" -U --define '_imastream_take_over 1' "$V2" || fail "rpm -U with the take-over failed"
grep -q "taken over from imastream: its record var/lib/imastream/packages/imstest.record is removed" "$T/rpm.stderr" ||
	fail "the take-over was not said: $(cat "$T/rpm.stderr")"
[ ! -e "$(record "$R")" ] || fail "the record stayed"
[ "$(in_rpm "$R")" = imstest-2.0-1.noarch ] || fail "rpm's database does not name imstest-2.0"
"$IMS" verify --root "$R" --dbpath /var/lib/rpm --rpmdb >"$T/out" 2>"$T/err" ||
	fail "verify --rpmdb after rpm's take-over: $(cat "$T/out" "$T/err")"

echo "== two versions side by side in rpm's database: --take-over is refused, nothing changes"
R=$T/side-by-side
new_root "$R"
irpm "$R" -i "$V1" || fail "rpm -i imstest-1.0 failed"
irpm "$R" -i --replacefiles "$V2" || fail "rpm -i --replacefiles imstest-2.0 failed: $(cat "$T/rpm.stderr")"
[ "$(in_rpm "$R" | sort | tr '\n' ' ')" = "imstest-1.0-1.noarch imstest-2.0-1.noarch " ] ||
	fail "not two versions side by side (the test proves nothing): $(in_rpm "$R")"
snapshot "$R" >"$T/before"
ims_install --root "$R" --take-over "$V2" 2>"$T/err" && fail "--take-over replaced two versions of rpm's at once"
[ "$(wc -l <"$T/err")" = 1 ] &&
	grep -q "refused: rpm's database in $R has 2 packages named imstest (imstest-[12].0-1.noarch, imstest-[12].0-1.noarch): --take-over replaces one, of the same name and architecture" "$T/err" ||
	fail "not one line naming both versions: $(cat "$T/err")"
snapshot "$R" | diff "$T/before" - >"$T/diff" || fail "the refusal changed the root: $(cat "$T/diff")"
[ "$(in_rpm "$R" | wc -l)" = 2 ] || fail "rpm's entries changed: $(in_rpm "$R")"

echo "== an install-only package (installonlypkg(), as kernels): --take-over is refused"
sed 's/^Name:.*/&\nProvides: installonlypkg(imstest)/' "$top_srcdir/tests/rpm/imstest.rpmspec" >"$T/only.spec"
O1=$(build_pkg "$T/only.spec" 1.0)
O2=$(build_pkg "$T/only.spec" 2.0)
R=$T/install-only
new_root "$R"
irpm "$R" -i "$O1" || fail "rpm -i of the install-only imstest-1.0 failed"
snapshot "$R" >"$T/before"
ims_install --root "$R" --take-over "$O2" 2>"$T/err" && fail "--take-over replaced an install-only package"
grep -q "refused: imstest is installed side by side in versions (an install-only package, as kernels are), rpm's database in $R has imstest-1.0-1.noarch: --take-over replaces none of them" "$T/err" ||
	fail "the refusal does not say why: $(cat "$T/err")"
snapshot "$R" | diff "$T/before" - >"$T/diff" || fail "the refusal changed the root: $(cat "$T/diff")"
[ "$(in_rpm "$R")" = imstest-1.0-1.noarch ] || fail "rpm's entry changed"

echo "== claimed by both (rpm --noplugins cannot see the record): rpm -e is refused, then taken over"
R=$T/both
new_root "$R"
ims_install --root "$R" "$V1" 2>"$T/err" || fail "imastream install failed: $(cat "$T/err")"
irpm "$R" -i --noplugins "$V1" || fail "rpm -i --noplugins failed"
irpm "$R" -e imstest && fail "rpm -e of a package imastream recorded succeeded"
grep -q "refused: imstest is installed by 'imastream install'" "$T/rpm.stderr" ||
	fail "rpm -e's refusal: $(cat "$T/rpm.stderr")"
[ -e "$R/opt/imstest/bin/tool" ] || fail "the refused rpm -e removed files"
irpm "$R" -e --define '_imastream_take_over 1' imstest || fail "rpm -e with the take-over failed"
[ ! -e "$(record "$R")" ] && ! in_rpm "$R" >/dev/null || fail "imstest is still claimed after rpm -e"
echo "PASS"
