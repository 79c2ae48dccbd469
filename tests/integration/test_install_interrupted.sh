#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An install killed before its renames (fresh and upgrade): verify --root fails, says so and names imastream recover.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }

work=$(mktemp -d /tmp/imastream-install-interrupted.XXXXXX)
pid=
cleanup() {
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
	exec 7>&- 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# pkg VERSION: a package whose first file is large enough that a payload cut in half
# leaves the install inside it.
pkg() {
	local v=$1 spec=$work/imsint-$1.spec
	cat >"$spec" <<SPEC
Name: imsint
Version: $v
Release: 1
Summary: imastream interrupted install test package
License: MIT
BuildArch: noarch
%description
One large file, then small ones.
%install
mkdir -p %{buildroot}/opt/imsint
head -c 4194304 /dev/urandom > %{buildroot}/opt/imsint/a-big
for f in 1 2 3; do echo "$v \$f" > %{buildroot}/opt/imsint/small-\$f; done
%files
/opt/imsint
SPEC
	rpmbuild -bb --quiet --define "_topdir $work/top" --define '_binary_payload w2.xzdio' \
		--define '_build_id_links none' "$spec" >"$work/rpmbuild.log" 2>&1 ||
		{ cat "$work/rpmbuild.log" >&2; echo "ERROR: rpmbuild failed"; exit 99; }
	echo "$work/top/RPMS/noarch/imsint-$v-1.noarch.rpm"
}
v1=$(pkg 1.0)
v2=$(pkg 2.0)
root=$work/root

# kill_before_renames PACKAGE: installs PACKAGE read from a FIFO fed half of it, waits
# until the install has a temp file in the root (it then waits for the rest of its input,
# for as long as it takes: no window to miss), and kills it with SIGKILL.
kill_before_renames() {
	local half i
	rm -f "$work/pkg-fifo"
	mkfifo "$work/pkg-fifo"
	"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$work/pkg-fifo" 2>"$work/killed.err" &
	pid=$!
	exec 7>"$work/pkg-fifo"
	half=$(( $(stat -c %s "$1") / 2 ))
	head -c "$half" "$1" >&7
	for i in $(seq 600); do
		[ -n "$(find "$root/opt" -name '.imastream-tmp-*' 2>/dev/null)" ] && break
		kill -0 "$pid" 2>/dev/null || fail "the install ended before it was killed: $(cat "$work/killed.err")"
		sleep 0.1
	done
	[ -n "$(find "$root/opt" -name '.imastream-tmp-*')" ] || fail "no temp file after 60 s: $(cat "$work/killed.err")"
	[ -f "$root/var/lib/imastream/running" ] || fail "no running marker while installing"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	exec 7>&-
}

# interrupted_said CASE: verify --root fails with the one line that names imastream recover.
interrupted_said() {
	local rc=0
	"$IMASTREAM" verify --root "$root" >"$work/verify.out" 2>&1 || rc=$?
	[ $rc != 0 ] || fail "$1: verify --root passed: $(cat "$work/verify.out")"
	[ "$(wc -l <"$work/verify.out")" = 1 ] &&
		grep -q "verify: $root: an install was interrupted before its files were renamed into place (its temp files are left): run imastream recover --root $root\$" "$work/verify.out" ||
		fail "$1: verify --root (exit $rc) said: $(cat "$work/verify.out")"
	echo "ok: $1: $(cat "$work/verify.out")"
}

echo "== a fresh install killed before its renames"
make_root "$root"
kill_before_renames "$v1"
[ ! -e "$root/var/lib/imastream/packages/imsint.record" ] || fail "fresh: a record was written"
interrupted_said "fresh install"
"$IMASTREAM" recover --root "$root" 2>"$work/recover.err" || fail "recover: $(cat "$work/recover.err")"
no_leftovers "$root" "fresh install, recovered"
[ ! -e "$root/var/lib/imastream/running" ] || fail "recover left the marker"
rc=0
"$IMASTREAM" verify --root "$root" >"$work/verify.out" 2>&1 || rc=$?
[ $rc != 0 ] && grep -q "no install record" "$work/verify.out" ||
	fail "after recovering a fresh install: exit $rc: $(cat "$work/verify.out")"

echo "== an upgrade killed before its renames"
"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$v1" || fail "installing 1.0 failed"
"$IMASTREAM" verify --root "$root" >/dev/null || fail "1.0 does not verify"
kill_before_renames "$v2"
grep -qx "nevra imsint-1.0-1.noarch" "$root/var/lib/imastream/packages/imsint.record" ||
	fail "upgrade: the record changed before any rename"
interrupted_said "upgrade"
# The next install finds the marker and cleans up first; then all verifies.
"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$v2" 2>"$work/rerun.err" ||
	fail "the install after the kill failed: $(cat "$work/rerun.err")"
grep -q "temp files an interrupted install left" "$work/rerun.err" ||
	fail "the install after the kill did not say it cleaned up: $(cat "$work/rerun.err")"
no_leftovers "$root" "upgrade, reinstalled"
"$IMASTREAM" verify --root "$root" >"$work/verify.out" 2>&1 || fail "2.0 does not verify: $(cat "$work/verify.out")"
echo "PASS"
