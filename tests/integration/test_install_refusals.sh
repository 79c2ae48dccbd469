#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A refused install, recover or relabel leaves the root exactly as it found it, and a directory that is not a root is refused as such.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }

work=$(mktemp -d /tmp/imastream-install-refusals.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

pkg=$(build_pkg "$work" imsref w2.xzdio)
other=$(build_pkg "$work" imsref-rpm w2.xzdio)
echo "not a package" >"$work/junk.rpm"
mkdir "$work/pkgdir"
# A header whose digest no longer matches: one byte of its file list changed.
cp "$pkg" "$work/bad-header.rpm"
off=$(grep -abo "imsref" "$pkg" | sed -n 3p | cut -d: -f1)
[ -n "$off" ] || fail "no name in the header to change"
printf 'X' | dd of="$work/bad-header.rpm" bs=1 seek="$off" conv=notrunc status=none

# snapshot ROOT: every object with its mode, size and mtime.  sqlite's shared-memory
# index (rpmdb.sqlite-shm) is rewritten by every reader of the database, rpm -q's too:
# its mtime is left out.
snapshot() {
	find "$1" -printf '%p %m %s %T@\n' | sed 's/\(rpmdb.sqlite-shm [0-9]* [0-9]*\) .*/\1/' | sort
}
# refused ROOT WHAT EXPECTED-LINE ARGS...: the command fails in one line (one per package:
# $lines) and changes nothing.
refused() {
	local root=$1 what=$2 expect=$3 rc=0
	shift 3
	snapshot "$root" >"$work/before"
	"$IMASTREAM" "$@" 2>"$work/err" >/dev/null || rc=$?
	[ $rc = 1 ] || fail "$what: exit $rc, not 1: $(cat "$work/err")"
	grep -q -- "$expect" "$work/err" || fail "$what: no '$expect' in: $(cat "$work/err")"
	[ "$(wc -l <"$work/err")" = "${lines:-1}" ] || fail "$what: not ${lines:-1} line(s): $(cat "$work/err")"
	snapshot "$root" | diff "$work/before" - >"$work/diff" ||
		fail "$what left the root changed: $(cat "$work/diff")"
}

check_refusals() {
	local root=$1
	refused "$root" "not a package" "not an rpm package" \
		install --root "$root" --allow-unsigned "$work/junk.rpm"
	refused "$root" "a bad header digest" "digest: BAD" \
		install --root "$root" --allow-unsigned "$work/bad-header.rpm"
	refused "$root" "an unsigned header" "the header is not signed" \
		install --root "$root" "$pkg"
	refused "$root" "a missing key" "cannot open key" \
		install --root "$root" --allow-unsigned --mode sign --key "$work/no-such-key.pem" "$pkg"
	refused "$root" "an unknown plugin" 'unknown plugin "nosuch"' \
		install --root "$root" --allow-unsigned --plugins nosuch "$pkg"
	lines=2 refused "$root" "two refused packages" "not an rpm package" \
		install --root "$root" --quiet "$work/junk.rpm" "$pkg"
	# A directory given as a package: said as such, first, not as a read error.
	refused "$root" "a directory as a package" "^imastream install: $work/pkgdir: is a directory, not an rpm package (give the .rpm files in it)$" \
		install --root "$root" --allow-unsigned "$work/pkgdir"
}

echo "== a plain directory: every refusal leaves it as it was"
plain=$work/plain
make_root "$plain"
check_refusals "$plain"
echo "== a plain directory is not a root: recover and relabel say so and create nothing"
refused "$plain" "recover of a plain directory" "not an installed root" recover --root "$plain"
refused "$plain" "relabel of a plain directory" "not an installed root" relabel --root "$plain" --quiet
refused "$plain" "recover --dbpath of a plain directory" "not an installed root: no rpm database (/db)" \
	recover --root "$plain" --dbpath /db

echo "== a root with an rpm database and an install record: the same"
root=$work/root
make_root "$root"
rpm -i --root "$root" --nodeps --noscripts --notriggers "$other" </dev/null >/dev/null 2>&1 ||
	fail "rpm -i of $other failed"
check_refusals "$root"
"$IMASTREAM" install --root "$root" --allow-unsigned --quiet "$pkg" 2>"$work/err" ||
	fail "the install after the refusals failed: $(cat "$work/err")"
check_refusals "$root"
"$IMASTREAM" recover --root "$root" --quiet || fail "recover of a root failed"
no_leftovers "$root"

# A root that does not exist: rpm -i --root would make it; install says it does not.
"$IMASTREAM" install --root "$work/no-such-root" --allow-unsigned "$pkg" 2>"$work/err" &&
	fail "install into a missing root succeeded"
[ ! -e "$work/no-such-root" ] || fail "install into a missing root created it"
[ "$(wc -l <"$work/err")" = 1 ] &&
	grep -q "$work/no-such-root: no such directory: imastream install does not create the root (rpm -i --root does): mkdir it first" "$work/err" ||
	fail "install into a missing root: not one line saying so: $(cat "$work/err")"
echo "PASS"
