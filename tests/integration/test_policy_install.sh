#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The policy plugins under imastream install (the streaming installer, no rpm transaction):
# trust domains from rpmsign-signed headers, conflicts between domains (from the rpm
# database, from packages of the same run, and for owners only the installer's record
# knows), Smack labels from a folder and from the package header, and the record log.
# Each denial exits 1 with one line naming the rule, the package and the file, and leaves
# nothing of the package behind: no file, no temp file, no record.  Runs in every build
# (the installer is our own binary, so the sanitizer build checks the plugins too).
set -u
pol_without_rpm_plugin=1
. "$top_srcdir/tests/integration/policy-lib.sh"
pol_setup
need getfattr
need rpm
IM="$top_builddir/imastream"
[ -x "$IM" ] || { echo "ERROR: $IM not built"; exit 99; }
"$IM" install --help >/dev/null 2>&1 || { echo "SKIP: this imastream has no install command"; exit 77; }

vendor=$(pol_key vendor)
third=$(pol_key third)
rogue=$(pol_key rogue)
pol_key partner >/dev/null
domains="vendor=100:$T/vendor.asc partner=100:$T/partner.asc thirdparty=10:$T/third.asc"
pkg() {
	n=$1 s=$2
	shift 2
	p=$(pol_build "$n" "$@")
	[ "$s" = - ] || pol_sign "$p" "$s"
	echo "$p"
}

# inst ROOT ARGS...: imastream install into ROOT with the test's keys; stderr in $T/err.
inst() {
	r=$1
	shift
	mkdir -p "$r"
	"$IM" install --root "$r" --quiet --pgp-key "$T/vendor.asc" --pgp-key "$T/third.asc" \
		--pgp-key "$T/partner.asc" \
		-o "trust_domains=$domains" "$@" 2>"$T/err"
}
# denied STATUS MESSAGE: the install exited 1 with MESSAGE on stderr.
denied() {
	[ "$1" = 1 ] || fail "exit status $1, expected 1 for: $2"
	grep -q -F -- "$2" "$T/err" || fail "expected \"$2\", got: $(cat "$T/err")"
}
# nothing_of ROOT NAME: the refused package NAME left no file, no temp file, no record.
nothing_of() {
	[ ! -e "$1/opt/poltest/$2" ] || fail "$2: files left behind: $(find "$1/opt/poltest/$2")"
	[ ! -e "$1/var/lib/imastream/packages/$2.record" ] || fail "$2: recorded though refused"
	left=$(find "$1" -name '.imastream-tmp-*' | head -n 3)
	[ -z "$left" ] || fail "$2: temp files left behind: $left"
}

# --- trust ---------------------------------------------------------------------------
vsuid=$(pkg vsuid vendor --define "psuid 1")
tsuid=$(pkg tsuid third --define "psuid 1")
tprot=$(pkg tprot third --define "pextra /boot/tprot")
tplain=$(pkg tplain third)
rplain=$(pkg rplain rogue)
uplain=$(pkg uplain -)
r="$T/trust"
inst "$r" --plugins trust -o trust_protected=/boot "$vsuid" "$tplain" ||
	fail "trust: allowed packages refused: $(cat "$T/err")"
[ -u "$r/opt/poltest/vsuid/suid" ] || fail "trust: the vendor's setuid file is missing"
[ -f "$r/opt/poltest/tplain/data" ] || fail "trust: the third party's plain package is missing"
inst "$r" --plugins trust -o trust_protected=/boot "$tsuid"
denied $? "trust: rule setuid: package tsuid-1-1.noarch (domain thirdparty, rank 10 < 50) may not install /opt/poltest/tsuid/suid (mode 104755)"
nothing_of "$r" tsuid
inst "$r" --plugins trust -o trust_protected=/boot "$tprot"
denied $? "trust: rule protected-path: package tprot-1-1.noarch (domain thirdparty, rank 10 < 50) may not install /boot/tprot (under /boot)"
nothing_of "$r" tprot
[ ! -e "$r/boot/tprot" ] || fail "trust: the protected file was written"
# The installer refuses unknown keys itself; with --allow-unsigned the trust plugin does.
inst "$r" --plugins trust --allow-unsigned "$rplain"
denied $? "trust: rule unknown-source: package rplain-1-1.noarch is in no trust domain (unknown key, key $rogue)"
nothing_of "$r" rplain
inst "$r" --plugins trust --allow-unsigned "$uplain"
denied $? "trust: rule unknown-source: package uplain-1-1.noarch is in no trust domain (unsigned)"
nothing_of "$r" uplain
inst "$r" --plugins trust --allow-unsigned -o trust_unknown=allow "$uplain" ||
	fail "trust: trust_unknown=allow refused an unsigned package: $(cat "$T/err")"
# One refused package of several: the others are installed, the status is 1.
r="$T/trust2"
inst "$r" --plugins trust "$tsuid" "$tplain"
denied $? "rule setuid: package tsuid-1-1.noarch"
nothing_of "$r" tsuid
[ -f "$r/opt/poltest/tplain/data" ] || fail "trust: a good package next to a refused one is missing"
echo "ok: trust allows and refuses under imastream install"

# --- conflict ------------------------------------------------------------------------
vown=$(pkg vown vendor --define "pextra /etc/shared.conf")
town=$(pkg town third --define "pextra /etc/shared.conf")
tother=$(pkg tother third --define "pextra /etc/other.conf")
vother=$(pkg vother vendor --define "pextra /etc/other.conf")
# Of the partner domain, whose rank equals the vendor's: only a strictly higher rank protects.
psame=$(pkg psame partner --define "pextra /etc/shared.conf")
want_partner() {
	[ "$(cat "$1/etc/shared.conf")" = "psame owns /etc/shared.conf" ] ||
		fail "rank boundary: the equal-rank package did not replace /etc/shared.conf"
}
want_vendor() {
	[ "$(cat "$1/etc/shared.conf")" = "vown owns /etc/shared.conf" ] ||
		fail "conflict: the vendor's /etc/shared.conf was replaced"
}
# In one run: the owner was judged earlier in the same chain.
r="$T/conflict1"
inst "$r" --plugins conflict --replace-files "$vown" "$town"
denied $? "conflict: rule higher-domain-owner: package town-1-1.noarch (domain thirdparty, rank 10) may not replace /etc/shared.conf owned by vown-1-1.noarch (domain vendor, rank 100)"
nothing_of "$r" town
want_vendor "$r"
# In a later run: only the installer's record knows the owner, and not its domain.
inst "$r" --plugins conflict --replace-files "$town"
denied $? "conflict: rule unknown-owner-domain: package town-1-1.noarch (domain thirdparty, rank 10) may not replace /etc/shared.conf owned by vown, whose domain is unknown"
nothing_of "$r" town
want_vendor "$r"
# A higher domain may replace a lower one's file, with --replace-files.  The owner, from
# an earlier run, is of unknown domain: only the top rank (100, the vendor's) may replace it.
inst "$r" --plugins conflict --replace-files "$tother" ||
	fail "conflict: an unshared file refused: $(cat "$T/err")"
inst "$r" --plugins conflict --replace-files "$vother" ||
	fail "conflict: the vendor (the top rank) may not replace a third party's file: $(cat "$T/err")"
[ "$(cat "$r/etc/other.conf")" = "vother owns /etc/other.conf" ] || fail "conflict: not replaced"
# The rank boundary, owner judged in the same run: equal ranks may replace each other.
r="$T/conflict-same"
inst "$r" --plugins conflict --replace-files "$vown" "$psame" ||
	fail "rank boundary: partner (100) may not replace a vendor (100) file judged in the same run: $(cat "$T/err")"
want_partner "$r"
# With an rpm database in the root: the owner rpm installed is ranked from it.  The
# installer looks for it at rpm's own %_dbpath (on Debian /root/.rpmdb), so rpm gets none.
r="$T/conflict2"
mkdir -p "$r"
rpm --root "$r" --nodeps -i "$vown" >"$T/rpm.log" 2>&1 ||
	fail "rpm -i of the vendor package failed: $(cat "$T/rpm.log")"
inst "$r" --plugins conflict --replace-files "$town"
denied $? "conflict: rule higher-domain-owner: package town-1-1.noarch (domain thirdparty, rank 10) may not replace /etc/shared.conf owned by vown-1-1.noarch (domain vendor, rank 100)"
nothing_of "$r" town
want_vendor "$r"
# The rank boundary, owner ranked from the rpm database.
inst "$r" --plugins conflict --replace-files "$psame" ||
	fail "rank boundary: partner (100) may not replace a vendor (100) file in the rpm database: $(cat "$T/err")"
want_partner "$r"
echo "ok: conflict refuses lower domains replacing higher ones, allows equal ones, under imastream install"

# --- smack ---------------------------------------------------------------------------
mkdir "$T/smack"
printf '/opt/poltest/sfold/data Folder exec=FolderExec\n/opt/poltest/sfold Folder transmute\n' \
	>"$T/smack/sfold.manifest"
printf '/opt/poltest/sown/data Own mmap=OwnMap\n' >"$T/own.manifest"
printf '/opt/poltest/sthird/data Third\n' >"$T/third.manifest"
sfold=$(pkg sfold -)
sown=$(pkg sown vendor --define "psmack $T/own.manifest")
sthird=$(pkg sthird third --define "psmack $T/third.manifest")
r="$T/smackroot"
label() {
	getfattr --absolute-names -h -n "security.$2" --only-values "$r$1" 2>/dev/null || printf none
}
check() {
	got=$(label "$1" "$2")
	[ "$got" = "$3" ] || fail "smack: $1: security.$2 is \"$got\", expected \"$3\""
}
inst "$r" --allow-unsigned --plugins smack,record -o "smack_manifests=$T/smack" \
	-o smack_package_manifests=50 -o "record_log=$T/smack.rec" -o record_syslog=none \
	"$sfold" "$sown" || fail "smack: install failed: $(cat "$T/err")"
check /opt/poltest/sfold/data SMACK64 Folder
check /opt/poltest/sfold/data SMACK64EXEC FolderExec
check /opt/poltest/sfold SMACK64TRANSMUTE TRUE
check /opt/poltest/sown/data SMACK64 Own
check /opt/poltest/sown/data SMACK64MMAP OwnMap
grep -q -x "/opt/poltest/sown/data sown-1-1.noarch sha256:[0-9a-f]* $vendor vendor SMACK64=Own,SMACK64MMAP=OwnMap" \
	"$T/smack.rec" || fail "smack: the record does not list the labels: $(cat "$T/smack.rec")"
inst "$r" --plugins smack -o smack_package_manifests=50 "$sthird"
denied $? "smack: rule package-manifest: package sthird-1-1.noarch (domain thirdparty, rank 10 < 50) may not label its files with its own Smack manifest"
nothing_of "$r" sthird
echo "ok: smack labels from folder and header manifests under imastream install"

# --- record --------------------------------------------------------------------------
r="$T/recroot"
rec="$T/install.rec"
inst "$r" --plugins trust,record -o "record_log=$rec" -o record_syslog=none -o trust_protected=/boot \
	"$vsuid" "$tplain" "$tprot"
denied $? "trust: rule protected-path: package tprot-1-1.noarch"
nothing_of "$r" tprot
awk 'NF != 6 { print "bad line " NR ": " $0; bad = 1 } END { exit bad }' "$rec" ||
	fail "record: malformed lines"
# One line per installed object, as the installer's own record lists them.
# /opt and /opt/poltest belong to no package: unowned directories are not recorded.
find "$r/opt/poltest" -mindepth 1 | sed "s|^$r||" | sort >"$T/want"
cut -d' ' -f1 "$rec" | sort >"$T/got"
diff -u "$T/want" "$T/got" || fail "record: paths differ from what was installed"
grep -q ' tprot-1-1.noarch ' "$rec" && fail "record: the refused package was recorded"
for f in /opt/poltest/vsuid/suid /opt/poltest/tplain/data; do
	want="sha256:$(sha256sum "$r$f" | cut -d' ' -f1)"
	got=$(awk -v p="$f" '$1 == p { print $3 }' "$rec")
	[ "$got" = "$want" ] || fail "record: $f: digest $got, the file has $want"
done
grep -q -x "/opt/poltest/vsuid/suid vsuid-1-1.noarch sha256:[0-9a-f]* $vendor vendor -" "$rec" ||
	fail "record: the vendor package's signer or domain"
grep -q -x "/opt/poltest/tplain/data tplain-1-1.noarch sha256:[0-9a-f]* $third thirdparty -" "$rec" ||
	fail "record: the third party's signer or domain"
echo "ok: record lists what imastream install installed, and nothing it refused"
