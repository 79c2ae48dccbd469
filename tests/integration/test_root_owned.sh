#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A package that owns "/" (Fedora's filesystem package does, mode 0555): rpm sets the
# root's mode and owner; verify --rpmdb and relabel judge the root as rpm -V does, and
# imastream install sets them too, without creating, recording or removing the root.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

setup_scratch
IMS=$top_builddir/imastream
PKG=$(build_pkg "$top_srcdir/tests/rpm/imsroot.rpmspec")
R=$T/root
strip_rpm_noise() { grep -v -e 'should not be used directly' -e 'assuming you know what you are doing'; }

# Stock rpm without the plugin, then the audit and relabel of that root.
mkdir -p "$R"
rpm --root "$R" --nodeps --noscripts --noplugins -i "$PKG" 2>&1 | strip_rpm_noise
[ "$(stat -c %a "$R")" = 555 ] || fail "rpm left the root $(stat -c %a "$R"), not 555"
"$IMS" relabel --root "$R" --quiet >"$T/out" 2>&1 || { cat "$T/out"; fail "relabel failed on a root a package owns"; }
"$IMS" verify --root "$R" --rpmdb >"$T/out" 2>&1 || { cat "$T/out"; fail "verify --rpmdb failed on a root a package owns"; }
echo "ok: rpm's root passes verify --rpmdb and relabel"

# A changed mode of the root is what rpm -V says, and the same letters.
chmod 0700 "$R"
"$IMS" verify --root "$R" --rpmdb >"$T/out" 2>&1 && { cat "$T/out"; fail "verify passed a root whose mode changed"; }
grep -qx '/: FAIL: differs from its header (.M.......) (package imsroot-1.0-1.noarch)' "$T/out" ||
	{ cat "$T/out"; fail "verify did not name the root's mode"; }
rpm --root "$R" -V imsroot >"$T/rpmV" 2>&1
grep -qx '.M.......    /' "$T/rpmV" || { cat "$T/rpmV"; fail "rpm -V says otherwise: test out of date"; }
echo "ok: the root's mode named as rpm -V names it"

# With the plugin: the same package, then the audit.
R2=$T/root-plugin
mkdir -p "$R2"
irpm "$R2" -i "$PKG" || fail "rpm -i with the plugin of a package that owns /"
"$IMS" verify --root "$R2" --rpmdb --dbpath /var/lib/rpm >"$T/out" 2>&1 ||
	{ cat "$T/out"; fail "verify --rpmdb after the plugin"; }
echo "ok: rpm with the plugin"

# imastream install: the root's mode and owner set, not recorded, and an upgrade keeps it.
R3=$T/root-install
mkdir -p "$R3" && chmod 0700 "$R3"
"$IMS" install --allow-unsigned --root "$R3" "$PKG" >"$T/out" 2>&1 ||
	{ cat "$T/out"; fail "imastream install of a package that owns /"; }
[ "$(stat -c %a "$R3")" = 555 ] || fail "install left the root $(stat -c %a "$R3"), not 555"
"$IMS" verify --root "$R3" >"$T/out" 2>&1 || { cat "$T/out"; fail "verify of install's record"; }
grep -q '^/: ' "$T/out" && { cat "$T/out"; fail "install recorded the root itself"; }
PKG2=$(build_pkg "$top_srcdir/tests/rpm/imsroot.rpmspec" 2.0)
"$IMS" install --allow-unsigned --root "$R3" "$PKG2" >"$T/out" 2>&1 ||
	{ cat "$T/out"; fail "imastream install of version 2"; }
[ -d "$R3" ] && [ "$(cat "$R3/usr/share/imsroot/data")" = "imsroot 2.0" ] || fail "the upgrade"
echo "ok: imastream install sets the root's mode and keeps the root through an upgrade"
