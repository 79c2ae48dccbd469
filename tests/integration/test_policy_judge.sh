#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The trust verdicts and rules outside rpm, through tests/integration/policy_judge: the
# policy code runs in our own build (the sanitizer build too, where stock rpm cannot load
# the plugin).  Covers a header whose signature does not verify (a byte changed in the
# signed region), which rpm itself would refuse before any plugin runs.
set -u
pol_without_rpm_plugin=1
. "$top_srcdir/tests/integration/policy-lib.sh"
pol_setup
need perl
judge="$top_builddir/tests/integration/policy_judge"

vendor=$(pol_key vendor)
third=$(pol_key third)
rogue=$(pol_key rogue)
pkg() {
	n=$1 s=$2
	shift 2
	p=$(pol_build "$n" "$@")
	[ "$s" = - ] || pol_sign "$p" "$s"
	echo "$p"
}
vsuid=$(pkg vsuid vendor --define "psuid 1")
tsuid=$(pkg tsuid third --define "psuid 1")
tprot=$(pkg tprot third --define "pextra /boot/tprot")
uplain=$(pkg uplain -)
rplain=$(pkg rplain rogue)
# The same header bytes but one: the summary is inside the signed (immutable) region.
tamper="$T/tampered.rpm"
perl -0777 -pe 's/imastream policy test package/imastream policy test packagf/' "$vsuid" >"$tamper"
cmp -s "$vsuid" "$tamper" && { echo "could not tamper with the header"; exit 99; }

settings="trust_domains=vendor=100:$T/vendor.asc thirdparty=10:$T/third.asc;trust_protected=/boot;record_log=$T/rec;record_syslog=none"
"$judge" "$settings" trust,record "$vsuid" "$tsuid" "$tprot" "$uplain" "$rplain" "$tamper" \
	>"$T/out" 2>&1 || { cat "$T/out"; fail "policy_judge failed"; }
expect() { grep -q -x -F "$1" "$T/out" || { cat "$T/out"; fail "expected: $1"; }; }
expect "init 0"
expect "vsuid-1-1.noarch judge 0 domain=vendor key=$vendor why=-"
expect "vsuid-1-1.noarch psm_pre 0"
expect "tsuid-1-1.noarch judge 0 domain=thirdparty key=$third why=-"
expect "log3: trust: rule setuid: package tsuid-1-1.noarch (domain thirdparty, rank 10 < 50) may not install /opt/poltest/tsuid/suid (mode 104755)"
expect "tsuid-1-1.noarch psm_pre -1"
expect "log3: trust: rule protected-path: package tprot-1-1.noarch (domain thirdparty, rank 10 < 50) may not install /boot/tprot (under /boot)"
expect "uplain-1-1.noarch judge 0 domain=- key=- why=unsigned"
expect "uplain-1-1.noarch psm_pre -1"
expect "rplain-1-1.noarch judge 0 domain=- key=$rogue why=unknown key"
expect "log3: trust: rule unknown-source: package rplain-1-1.noarch is in no trust domain (unknown key, key $rogue)"
expect "vsuid-1-1.noarch judge 0 domain=- key=$vendor why=bad signature"
expect "log3: trust: rule unknown-source: package vsuid-1-1.noarch is in no trust domain (bad signature, key $vendor)"
# The chain owns the domains: four plugins that rank packages load the keys once and
# read one verdict per package, judged at psm_pre.
"$judge" "$settings;smack_package_manifests=50" trust,record,conflict,smack "$vsuid" "$rplain" \
	>"$T/out" 2>&1 || { cat "$T/out"; fail "policy_judge failed"; }
expect "log7: trust domains loaded: 2"
expect "log7: package vsuid-1-1.noarch: header judged: vendor"
expect "log7: package rplain-1-1.noarch: header judged: unknown key"
for line in "trust domains loaded:" "package vsuid-1-1.noarch: header judged" \
	"package rplain-1-1.noarch: header judged"; do
	n=$(grep -c -F "$line" "$T/out")
	[ "$n" = 1 ] || { cat "$T/out"; fail "\"$line\" $n times, not once"; }
done
expect "vsuid-1-1.noarch psm_pre 0"
expect "log3: trust: rule unknown-source: package rplain-1-1.noarch is in no trust domain (unknown key, key $rogue)"
# A key in two domains: the higher rank wins.
"$judge" "trust_domains=low=5:$T/vendor.asc high=70:$T/vendor.asc:$T/third.asc" trust "$vsuid" "$tsuid" \
	>"$T/out" 2>&1 || { cat "$T/out"; fail "policy_judge failed"; }
expect "vsuid-1-1.noarch judge 0 domain=high key=$vendor why=-"
expect "tsuid-1-1.noarch judge 0 domain=high key=$third why=-"
expect "tsuid-1-1.noarch psm_pre 0"
# Smack manifests carried in headers: parsed, ranked and refused here too.
printf '/opt/poltest/vown/data Own exec=X\n/opt/poltest/vown/** Own\n' >"$T/own.manifest"
printf '# fine\n/opt/poltest/tbad/data Ok\n\n/x a"b\n' >"$T/bad.manifest"
vown=$(pkg vown vendor --define "psmack $T/own.manifest")
town=$(pkg town third --define "psmack $T/own.manifest")
tbad=$(pkg tbad vendor --define "psmack $T/bad.manifest")
"$judge" "trust_domains=vendor=100:$T/vendor.asc thirdparty=10:$T/third.asc;smack_package_manifests=50" \
	smack "$vown" "$town" "$tbad" "$uplain" >"$T/out" 2>&1 || true
expect "init 0"
expect "vown-1-1.noarch psm_pre 0"
expect "log3: smack: rule package-manifest: package town-1-1.noarch (domain thirdparty, rank 10 < 50) may not label its files with its own Smack manifest"
expect "town-1-1.noarch psm_pre -1"
expect "log3: smack: rule package-manifest: package tbad-1-1.noarch: its manifest, line 4: \"a\"b\" is not a Smack label"
expect "tbad-1-1.noarch psm_pre -22"
expect "uplain-1-1.noarch psm_pre 0"
echo "ok: verdicts and rules as expected, the tampered header refused as a bad signature"
