#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A root filesystem without xattr support (ramfs) under stock rpm + imastream: refused
# with one line before any file is written, or installed with a notice when
# _imastream_no_xattr_support is skip.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
setup_scratch

ram="$T/ramroot"
mkdir -p "$ram"
# setup_scratch skipped unless root; root that cannot mount (a locked-down container) is
# not the environment this suite runs in (CI's chroots need mounts too): a failure.
command -v mount >/dev/null 2>&1 || { echo "SKIP: no mount command here (a minimal chroot)"; exit 77; }
mount -t ramfs imastream-test "$ram" 2>"$T/mount.err" ||
	fail "cannot mount a ramfs as root, so the no-xattr case cannot run: $(cat "$T/mount.err")"
trap 'umount "$ram" 2>/dev/null; rm -rf "$T"' EXIT
v1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
new_root "$ram"
# ramfs reports no free space: rpm's own size check is not what is tested here.
irpm "$ram" --ignoresize -i "$v1" && fail "rpm installed onto a filesystem without xattrs"
[ "$(grep -c '^error: imastream:' "$T/rpm.stderr")" = 1 ] &&
	grep -q "^error: imastream: $ram/* has no xattr support" "$T/rpm.stderr" ||
	fail "no single line about the missing xattr support"
[ ! -e "$ram/opt" ] || fail "files were installed before the refusal"
echo "ok: refused with one line, nothing installed"

# The notice goes to rpm's stdout; rpm itself cannot set file capabilities there.
irpm "$ram" --ignoresize --nocaps --define "_imastream_no_xattr_support skip" -i "$v1" \
	>"$T/rpm.out" || fail "no_xattr_support skip did not install"
[ -f "$ram/opt/imstest/bin/tool" ] || fail "skip mode did not install tool"
grep -q 'imastream:.*no xattr support' "$T/rpm.out" "$T/rpm.stderr" || fail "skip mode said nothing"
echo "ok: installed with a notice under no_xattr_support skip"
echo "PASS"
