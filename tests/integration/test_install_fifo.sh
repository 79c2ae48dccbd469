#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A FIFO (or a symlink) wherever imastream reads or keeps state in a root is refused in one line naming it, never waited on.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }

work=$(mktemp -d /tmp/imastream-install-fifo.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
pkg=$(build_pkg "$work" imsfifo w2.xzdio)
root=$work/root
state=$root/var/lib/imastream
dbpath=$(rpm --eval '%{_dbpath}')

# refused WHAT PATTERN CMD...: CMD fails (under a timeout: a regression hangs, it must
# not hang the suite) with one line matching PATTERN.
refused() {
	local what=$1 pattern=$2 rc=0
	shift 2
	timeout 60 "$@" >"$work/out" 2>"$work/err" </dev/null || rc=$?
	[ $rc != 124 ] || fail "$what: still blocked after 60 s"
	[ $rc != 0 ] || fail "$what: exit 0"
	[ "$(wc -l <"$work/err")" = 1 ] && grep -q -- "$pattern" "$work/err" ||
		fail "$what: exit $rc, said: $(cat "$work/err")"
	echo "ok: $what: $(cat "$work/err")"
}
fresh_root() {
	rm -rf "$root"
	make_root "$root"
}
# (An array, not a function: timeout runs commands only.)
inst=("$IMASTREAM" install --root "$root" --allow-unsigned --quiet)

echo "== the running marker"
fresh_root
mkdir -p "$state"
mkfifo "$state/running"
refused "install, a FIFO marker" "$state/running: cannot create the marker of an install under way: not a regular file" \
	"${inst[@]}" "$pkg"
[ -p "$state/running" ] || fail "the refused install removed the FIFO"
no_leftovers "$root"
refused "verify --root, a FIFO marker" "verify: $state/running: not a regular file (refused)" \
	"$IMASTREAM" verify --root "$root"
rm "$state/running"
ln -s /etc/passwd "$state/running"
refused "install, a symlink marker" "$state/running: cannot create the marker .*: a symlink (never followed)" \
	"${inst[@]}" "$pkg"
rm "$state/running"

echo "== the intent journal"
mkfifo "$state/journal"
refused "install, a FIFO journal" "$state/journal: cannot open the intent journal: not a regular file" "${inst[@]}" "$pkg"
refused "verify --root, a FIFO journal" "verify: $state/journal: not a regular file (refused)" \
	"$IMASTREAM" verify --root "$root"
rm "$state/journal"

echo "== a package record"
"${inst[@]}" "$pkg" || fail "the install into a clean root failed"
mkfifo "$state/packages/other.record"
refused "install, a FIFO record" "record var/lib/imastream/packages/other.record: not a regular file" "${inst[@]}" "$pkg"
refused "verify --root, a FIFO record" "record var/lib/imastream/packages/other.record: not a regular file" \
	"$IMASTREAM" verify --root "$root"
refused "policy keylime --record, a FIFO record" "record var/lib/imastream/packages/other.record: not a regular file" \
	"$IMASTREAM" policy keylime --root "$root" --record --output "$work/policy.json"
[ ! -e "$work/policy.json" ] || fail "policy keylime wrote a policy from a refused record"
rm "$state/packages/other.record"
ln -s imsfifo.record "$state/packages/other.record"
refused "verify --root, a symlink record" "record var/lib/imastream/packages/other.record: a symlink (never followed)" \
	"$IMASTREAM" verify --root "$root"
rm "$state/packages/other.record"

echo "== the root's etc/passwd and etc/group"
fresh_root
rm "$root/etc/passwd"
mkfifo "$root/etc/passwd"
refused "install, a FIFO etc/passwd" "etc/passwd of the root: not a regular file" "${inst[@]}" "$pkg"
no_leftovers "$root"
[ ! -e "$root/opt/imsfifo" ] || fail "the refused install left files"
fresh_root
rm "$root/etc/group"
mkfifo "$root/etc/group"
refused "install, a FIFO etc/group" "etc/group of the root: not a regular file" "${inst[@]}" "$pkg"

echo "== rpm's database, which librpm would open blocking"
fresh_root
rpm --root "$root" --initdb
db=$(cd "$root$dbpath" && ls | grep -v '^\.' | head -1)
[ -n "$db" ] || fail "rpm --initdb made no database file in $root$dbpath"
mv "$root$dbpath/$db" "$work/db.saved"
mkfifo "$root$dbpath/$db"
refused "install, a FIFO in the rpm database" "$root$dbpath/$db: not a regular file (refused); rpm's database is not read" \
	"${inst[@]}" "$pkg"
refused "verify --rpmdb, a FIFO in the rpm database" "$root$dbpath/$db: not a regular file" \
	"$IMASTREAM" verify --rpmdb --root "$root"
rm "$root$dbpath/$db"
mv "$work/db.saved" "$root$dbpath/$db"

echo "== files named by the user: configuration, key, certificate, record log"
mkfifo "$work/conf.fifo" "$work/key.fifo"
refused "install --config FIFO" "cannot open config file $work/conf.fifo: not a regular file" \
	"${inst[@]}" --config "$work/conf.fifo" "$pkg"
refused "install --mode sign --key FIFO" "$work/key.fifo: cannot open key: not a regular file" \
	"${inst[@]}" --mode sign --key "$work/key.fifo" "$pkg"
refused "install --trust FIFO" "cannot load the trust store $work/key.fifo: not a regular file" \
	"${inst[@]}" --trust "$work/key.fifo" "$pkg"
refused "install, record_log a FIFO" "record: cannot open $work/key.fifo: not a regular file" \
	"${inst[@]}" --plugins ima,record -o record_log="$work/key.fifo" "$pkg"
echo "PASS"
