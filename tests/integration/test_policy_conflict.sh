#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The conflict plugin under stock rpm: a file a vendor-signed package owns is not replaced
# by a third-party package, not even with --replacefiles or as an upgrade; the other way
# round is allowed, and so is a package of another domain of the same rank (the boundary:
# only a strictly higher rank protects a file); without the plugin rpm replaces it.  The
# refusal names both packages and the file, and leaves the owner's file and the database
# as they were.
set -u
. "$top_srcdir/tests/integration/policy-lib.sh"
pol_setup

pol_key vendor >/dev/null
pol_key third >/dev/null
pol_key partner >/dev/null
domains="vendor=100:$T/vendor.asc partner=100:$T/partner.asc thirdparty=10:$T/third.asc"

pkg() {
	n=$1 s=$2
	shift 2
	p=$(pol_build "$n" "$@")
	pol_sign "$p" "$s"
	echo "$p"
}
vown=$(pkg vown vendor --define "pextra /opt/shared/common.conf")
town=$(pkg town third --define "pextra /opt/shared/common.conf")
tfirst=$(pkg tfirst third --define "pextra /opt/shared/other.conf")
vlater=$(pkg vlater vendor --define "pextra /opt/shared/other.conf")
vup1=$(pkg vup vendor)
tup2=$(pkg vup third --define "pversion 2")
psame=$(pkg psame partner --define "pextra /opt/shared/common.conf")

root="$T/root"
new_root "$root"
crpm() {
	irpm "$root" --define "_imastream_plugins conflict" \
		--define "_imastream_trust_domains $domains" "$@"
}
inrpm() { rpm --root "$root" --dbpath /var/lib/rpm -q "$1" >/dev/null 2>&1; }

crpm -i "$vown" || fail "vown refused"
[ "$(cat "$root/opt/shared/common.conf")" = "vown owns /opt/shared/common.conf" ] || fail "vown content"
# A root where the plugin is off, to show that rpm alone would replace the file.
cp -a "$root" "$T/root2"

crpm -i --replacefiles "$town" && fail "a third-party package replaced a vendor file"
msg="conflict: rule higher-domain-owner: package town-1-1.noarch (domain thirdparty, rank 10) may not replace /opt/shared/common.conf owned by vown-1-1.noarch (domain vendor, rank 100)"
grep -q -F "$msg" "$T/rpm.stderr" || fail "no refusal naming both packages and the file"
echo "ok: $msg"
[ "$(cat "$root/opt/shared/common.conf")" = "vown owns /opt/shared/common.conf" ] ||
	fail "the vendor's file was changed"
[ ! -e "$root/opt/poltest/town" ] || fail "town left files"
[ -z "$(leftovers "$root")" ] || fail "temp files left: $(leftovers "$root")"
! inrpm town || fail "town is in the database"

rpm --root "$T/root2" --dbpath /var/lib/rpm --nodeps --noplugins -i --replacefiles "$town" \
	2>/dev/null || fail "rpm alone refused town"
[ "$(cat "$T/root2/opt/shared/common.conf")" = "town owns /opt/shared/common.conf" ] ||
	fail "rpm alone did not replace the file: the test shows nothing"

# The same rank is not a higher one: a partner package may replace the vendor's file, whose
# owner is ranked from the rpm database.  (Refusing it means the rank check became ">=".)
cp -a "$root" "$T/root3"
irpm "$T/root3" --define "_imastream_plugins conflict" --define "_imastream_trust_domains $domains" \
	-i --replacefiles "$psame" ||
	fail "rank boundary: a package of an equal rank (partner, 100) may not replace a vendor (100) file: $(cat "$T/rpm.stderr")"
[ "$(cat "$T/root3/opt/shared/common.conf")" = "psame owns /opt/shared/common.conf" ] ||
	fail "rank boundary: the equal-rank package did not replace the file"
rm -rf "$T/root3"

# The other way round is allowed.
crpm -i "$tfirst" || fail "tfirst refused"
crpm -i --replacefiles "$vlater" || fail "a vendor package may replace a third-party file"
[ "$(cat "$root/opt/shared/other.conf")" = "vlater owns /opt/shared/other.conf" ] ||
	fail "vlater did not replace the file"

# An upgrade from the vendor's build to a third party's is a replacement too.
crpm -i "$vup1" || fail "vup-1 refused"
crpm -U "$tup2" && fail "a third-party upgrade replaced vendor files"
grep -q -F "package vup-2-1.noarch (domain thirdparty, rank 10) may not replace /opt/poltest/vup/data owned by vup-1-1.noarch (domain vendor, rank 100)" \
	"$T/rpm.stderr" || fail "no refusal of the upgrade"
[ "$(rpm --root "$root" --dbpath /var/lib/rpm -q vup)" = vup-1-1.noarch ] || fail "vup-1 is gone"
[ "$(cat "$root/opt/poltest/vup/data")" = "vup 1" ] || fail "vup-1's file was changed"
[ -z "$(leftovers "$root")" ] || fail "temp files left: $(leftovers "$root")"

irpm "$root" --define "_imastream_plugins conflict" -i "$town" && fail "no domains accepted"
grep -q "conflict: no trust_domains configured" "$T/rpm.stderr" || fail "no init message"
echo "ok: vendor files kept, third-party and equal-rank replacements allowed, upgrade refused"
