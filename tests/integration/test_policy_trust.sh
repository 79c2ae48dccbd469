#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The trust plugin under stock rpm: packages signed (rpmsign, gpg keys made here) by a
# domain key install; a lower domain may not install setuid, capabilities or protected
# paths; unsigned and unknown-key packages are refused even when rpm's own keyring
# trusts the key.  Every refusal names rule, package and file and leaves nothing behind.
set -u
. "$top_srcdir/tests/integration/policy-lib.sh"
pol_setup

vendor=$(pol_key vendor)
third=$(pol_key third)
rogue=$(pol_key rogue)
domains="vendor=100:$T/vendor.asc thirdparty=10:$T/third.asc"

# name signer [rpmbuild args]: a package signed by signer ("-" for unsigned).
pkg() {
	n=$1 s=$2
	shift 2
	p=$(pol_build "$n" "$@")
	[ "$s" = - ] || pol_sign "$p" "$s"
	echo "$p"
}
v_all=$(pkg vall vendor --define "psuid 1" --define "pcaps 1" --define "pextra /etc/security/vall.conf")
t_plain=$(pkg tplain third)
t_suid=$(pkg tsuid third --define "psuid 1")
t_caps=$(pkg tcaps third --define "pcaps 1")
t_prot=$(pkg tprot third --define "pextra /etc/security/tprot.conf")
u_plain=$(pkg uplain -)
u_suid=$(pkg usuid - --define "psuid 1")
r_plain=$(pkg rplain rogue)

root="$T/root"
new_root "$root"
trpm() {
	irpm "$root" -v --define "_imastream_plugins trust" \
		--define "_imastream_trust_domains $domains" \
		--define "_imastream_trust_protected /boot,/etc/security" "$@" >"$T/out"
}

# must_install PKG NAME DOMAIN
must_install() {
	trpm -i "$1" || fail "$2 was refused"
	grep -q "trust: package $2-1-1.noarch: domain $3 " "$T/out" ||
		fail "$2: no domain $3 in: $(cat "$T/out")"
	[ -f "$root/opt/poltest/$2/data" ] || fail "$2 not installed"
}

# must_refuse PKG NAME MESSAGE [rpm options...]
must_refuse() {
	pkgfile=$1 name=$2 msg=$3
	shift 3
	trpm "$@" -i "$pkgfile" && fail "$name was installed"
	grep -q -F "$msg" "$T/rpm.stderr" || fail "$name: expected \"$msg\""
	[ ! -e "$root/opt/poltest/$name" ] || fail "$name left $root/opt/poltest/$name"
	[ -z "$(leftovers "$root")" ] || fail "$name left temp files: $(leftovers "$root")"
	! rpm --root "$root" --dbpath /var/lib/rpm -q "$name" >/dev/null 2>&1 ||
		fail "$name is in the rpm database"
	echo "ok: refused $name: $(grep -F "$msg" "$T/rpm.stderr" | head -n 1)"
}

must_install "$v_all" vall vendor
[ -u "$root/opt/poltest/vall/suid" ] || fail "the vendor's setuid bit is missing"
must_install "$t_plain" tplain thirdparty

must_refuse "$t_suid" tsuid \
	"trust: rule setuid: package tsuid-1-1.noarch (domain thirdparty, rank 10 < 50) may not install /opt/poltest/tsuid/suid"
must_refuse "$t_caps" tcaps \
	"trust: rule file-capabilities: package tcaps-1-1.noarch (domain thirdparty, rank 10 < 50) may not install /opt/poltest/tcaps/capped"
must_refuse "$t_prot" tprot \
	"trust: rule protected-path: package tprot-1-1.noarch (domain thirdparty, rank 10 < 50) may not install /etc/security/tprot.conf (under /etc/security)"
[ ! -e "$root/etc/security/tprot.conf" ] || fail "protected file left behind"
must_refuse "$u_plain" uplain \
	"trust: rule unknown-source: package uplain-1-1.noarch is in no trust domain (unsigned)"

# rpm's keyring trusting the rogue key changes nothing: we check against our domains.
rpm --root "$root" --dbpath /var/lib/rpm --import "$T/rogue.asc" || fail "rpm --import failed"
rpm --root "$root" --dbpath /var/lib/rpm -K "$r_plain" >"$T/k" 2>&1
grep -q "signatures OK" "$T/k" || fail "rpm does not trust the rogue key: $(cat "$T/k")"
must_refuse "$r_plain" rplain \
	"trust: rule unknown-source: package rplain-1-1.noarch is in no trust domain (unknown key, key $rogue)"

# In a transaction of several packages, only the refused one is left out.
trpm -i "$u_suid" "$r_plain" 2>/dev/null
[ ! -e "$root/opt/poltest/usuid" ] && [ ! -e "$root/opt/poltest/rplain" ] || fail "mixed transaction"

# trust_unknown allow: an unsigned package installs at rank 0, but not a setuid file.
trpm --define "_imastream_trust_unknown allow" -i "$u_plain" || fail "allow: uplain refused"
grep -q "trust: package uplain-1-1.noarch is in no trust domain (unsigned): allowed at rank 0" \
	"$T/rpm.stderr" "$T/out" || fail "allow: no notice"
must_refuse "$u_suid" usuid \
	"trust: rule setuid: package usuid-1-1.noarch (domain -, rank 0 < 50) may not install /opt/poltest/usuid/suid" \
	--define "_imastream_trust_unknown allow"
# The privileged rank is configurable: at 10 the third party may install setuid files.
trpm --define "_imastream_trust_privileged_rank 10" -i "$t_suid" || fail "rank 10: tsuid refused"

# Bad settings fail at initialisation with one line.
bad() {
	irpm "$root" --define "_imastream_plugins trust" "$@" -i "$t_caps" && fail "accepted: $*"
	echo "ok: refused at init: $(grep imastream: "$T/rpm.stderr" | head -n 1)"
}
bad
grep -q "no trust_domains configured" "$T/rpm.stderr" || fail "no message for missing domains"
bad --define "_imastream_trust_domains vendor=100:$T/nosuch.asc"
grep -q "nosuch.asc is not an armored OpenPGP public key" "$T/rpm.stderr" || fail "missing key file"
bad --define "_imastream_trust_domains $domains" --define "_imastream_trust_unknown maybe"
# Checked where it is set: the message names the macro.
grep -q 'macro %_imastream_trust_unknown: trust_unknown "maybe" is not refuse or allow' "$T/rpm.stderr" ||
	fail "bad trust_unknown"
echo "ok: trust domains vendor=$vendor thirdparty=$third"
