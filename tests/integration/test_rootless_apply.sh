#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream relabel --pending on hostile or disturbed roots: a file modified between build and apply is refused and named; entries for a path outside the root, another package's file, a wrong digest, truncated, duplicated or of a newer format are each refused in one line with nothing written on their file while the rest apply (exit 1); an apply killed after N writes (an LD_PRELOAD, no timing) and run again writes every value exactly once.
set -u
. "$top_srcdir/tests/integration/rootless-lib.sh"
rootless_setup
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler ($cc) for the LD_PRELOAD library"; exit 77; }

v1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
extra=$(build_pkg "$top_srcdir/tests/rpm/imsextra.rpmspec" 1.0)
chmod -R a+rX "$T/topdir"

# entry ROOT PATH: the pending entry of PATH.
entry() {
	grep -l "^path $2\$" "$1"/var/lib/imastream/pending/*/* | head -n 1
}

# refused N: exactly N refusal lines, and nothing else on stderr but the summary.
refused() {
	n=$(grep -c 'pending labels refused: \|pending-label entry refused: ' "$T/apply.err")
	[ "$n" = "$1" ] || fail "$n refusal lines, not $1: $(cat "$T/apply.err")"
	[ "$(grep -vc 'refused: \|relabel: [0-9]* pending entries' "$T/apply.err")" = 0 ] ||
		fail "other lines than refusals: $(cat "$T/apply.err")"
}

# --- A file modified between build and apply: refused, named, left alone.
R=$T/modified
builder_root "$R"
ns_rpm "$R" sign -i "$v1" "$extra" || fail "build failed: $(cat "$T/rpm.stderr")"
printf 'tampered\n' >>"$R/opt/imstest/bin/run.sh"
# Given away since the build: neither the header's owner nor the build's.
chown 4321:4321 "$R/etc/imsextra.conf"
apply "$R"
rc=$?
[ "$rc" = 1 ] || fail "a modified file: apply exited $rc, not 1"
refused 2
grep -q "^imastream.*: $R/etc/imsextra.conf: pending labels refused: owner 4321:4321, neither the header's 0:0 nor the build's $BUID:$BGID" \
	"$T/apply.err" || fail "the file given away is not named: $(cat "$T/apply.err")"
! has_ima "$R/etc/imsextra.conf" || fail "labels written on the file given away"
grep -q "^imastream.*: $R/opt/imstest/bin/run.sh: pending labels refused: its content changed since the build" \
	"$T/apply.err" || fail "the modified file is not named: $(cat "$T/apply.err")"
! has_ima "$R/opt/imstest/bin/run.sh" || fail "labels written on the modified file"
[ "$(stat -c %u "$R/opt/imstest/bin/run.sh")" = "$BUID" ] || fail "the modified file was chowned"
has_ima "$R/opt/imstest/bin/tool" && has_ima "$R/opt/imsextra/bin/helper" ||
	fail "the other files were not labelled"
[ -n "$(entry "$R" /opt/imstest/bin/run.sh)" ] || fail "the refused entry was removed"
[ "$(pending_count "$R")" = 2 ] || fail "$(pending_count "$R") entries left, not 2"
echo "ok: a file modified or given away after the build is refused and named, the others labelled"

# --- Bad input: one refusal line each, nothing written on their files, the rest applied.
R=$T/bad
builder_root "$R"
ns_rpm "$R" hash -i "$v1" "$extra" || fail "build failed: $(cat "$T/rpm.stderr")"
# A newer format.
e=$(entry "$R" /etc/imstest.conf)
sed -i 's/^imastream-pending 1$/imastream-pending 2/' "$e"
# Truncated: its end is missing.
e=$(entry "$R" /opt/imstest/empty)
head -n 4 "$e" >"$e.cut" && mv "$e.cut" "$e"
# Duplicated: the tool's entry twice in one transaction.
e=$(entry "$R" /opt/imstest/bin/tool)
cp "$e" "$(dirname "$e")/00000099"
# A digest that does not match (the package's and the content's is another).
e=$(entry "$R" /opt/imstest/bin/run.sh)
sed -i "s/^digest sha256 .*/digest sha256 $(printf x | sha256sum | cut -d' ' -f1)/" "$e"
# Another package's file: the helper claimed for imstest.
e=$(entry "$R" /opt/imsextra/bin/helper)
sed -i 's/^package .*/package imstest-1.0-1.noarch/' "$e"
# A path outside the root.
e=$(entry "$R" /etc/imsextra.conf)
sed -i 's|^path .*|path /../../etc/imsextra.conf|' "$e"
apply "$R"
rc=$?
[ "$rc" = 1 ] || fail "bad input: apply exited $rc, not 1"
refused 7 # the duplicate is refused in both its entries
grep -q "pending-label entry refused: written in format 2, newer than" "$T/apply.err" ||
	fail "the newer format is not said"
grep -q "pending-label entry refused: truncated" "$T/apply.err" || fail "truncation is not said"
[ "$(grep -c "$R/opt/imstest/bin/tool: pending labels refused: duplicated" "$T/apply.err")" = 2 ] ||
	fail "the duplicate is not said for both entries"
grep -q "$R/opt/imstest/bin/run.sh: pending labels refused: its recorded digest is not its package's" \
	"$T/apply.err" || fail "the wrong digest is not said"
grep -q "$R/opt/imsextra/bin/helper: pending labels refused: not a file of imstest-1.0-1.noarch" \
	"$T/apply.err" || fail "another package's file is not said"
grep -q "pending-label entry refused: a path that is not absolute and plain" "$T/apply.err" ||
	fail "the path outside the root is not said"
for f in etc/imstest.conf opt/imstest/empty opt/imstest/bin/tool opt/imstest/bin/run.sh \
	opt/imsextra/bin/helper etc/imsextra.conf; do
	! has_ima "$R/$f" || fail "security.ima written on $f despite its refusal"
	[ "$(stat -c %u "$R/$f")" = "$BUID" ] || fail "$f was chowned despite its refusal"
done
has_ima "$R/opt/imsextra/share/a" || fail "the good entry was not applied"
grep -q '1 files labelled' "$T/apply.err" || fail "summary: $(cat "$T/apply.err")"
echo "ok: each bad entry refused in one line, nothing written on its file, the rest applied"

# A directory on the way replaced by a symlink out of the root: nothing written outside.
R=$T/escape
builder_root "$R"
ns_rpm "$R" hash -i "$v1" || fail "build failed: $(cat "$T/rpm.stderr")"
mkdir "$T/outside"
cp -p "$R/opt/imstest/bin/tool" "$T/outside/tool"
mv "$R/opt/imstest/bin" "$R/opt/imstest/bin.away"
ln -s "$T/outside" "$R/opt/imstest/bin"
# A hard link from outside the root to a package's file (its package gives it one).
ln "$R/etc/imstest.conf" "$T/outside/conf-link"
apply "$R"
[ $? = 1 ] || fail "escape: apply did not exit 1"
grep -q "$R/etc/imstest.conf: pending labels refused: 2 hard links, its package gives it 1: a link from elsewhere" \
	"$T/apply.err" || fail "the hard link from outside is not said: $(cat "$T/apply.err")"
! has_ima "$T/outside/conf-link" && [ "$(stat -c %u "$T/outside/conf-link")" = "$BUID" ] ||
	fail "the file linked from outside was labelled or given away"
grep -q "$R/opt/imstest/bin/tool: pending labels refused: its directory cannot be reached below the root" \
	"$T/apply.err" || fail "the symlink on the way is not said: $(cat "$T/apply.err")"
! has_ima "$T/outside/tool" || fail "a label was written outside the root"
echo "ok: a symlink out of the root on the way, a hard link from outside: refused; nothing written outside"

# --- Killed inside a file's values, then run again: every value written exactly once.
"$cc" -shared -fPIC -O2 -o "$T/setxattr_stop.so" "$top_srcdir/tests/integration/setxattr_stop.c" -ldl ||
	{ echo "ERROR: cannot build the LD_PRELOAD library"; exit 99; }
R=$T/killed
builder_root "$R"
ns_rpm "$R" sign -i "$v1" "$extra" || fail "build failed: $(cat "$T/rpm.stderr")"
values=$(cat "$R"/var/lib/imastream/pending/*/* | grep -c '^xattr ')
# The kill comes inside the tool's values: after its owner and capability came back
# (chown(2) drops it) and its security.ima was written, before its security.evm; the
# values of the entries before it come first.
before=0
for e in "$R"/var/lib/imastream/pending/*/*; do
	grep -qx 'path /opt/imstest/bin/tool' "$e" && break
	before=$((before + $(grep -c '^xattr ' "$e")))
done
stop=$((before + 2))
SETXATTR_LOG=$T/writes SETXATTR_STOP_AFTER=$stop LD_PRELOAD=$T/setxattr_stop.so apply "$R"
rc=$?
[ "$rc" = 137 ] || fail "the stop after $stop writes did not kill the apply (exit $rc)"
[ "$(wc -l <"$T/writes")" = "$stop" ] || fail "$(wc -l <"$T/writes") writes before the kill, not $stop"
[ "$(stat -c %u "$R/opt/imstest/bin/tool")" = 0 ] &&
	getfattr -n security.capability "$R/opt/imstest/bin/tool" >/dev/null 2>&1 &&
	has_ima "$R/opt/imstest/bin/tool" &&
	! getfattr -n security.evm "$R/opt/imstest/bin/tool" >/dev/null 2>&1 ||
	fail "the kill did not fall inside the tool's values"
SETXATTR_LOG=$T/writes LD_PRELOAD=$T/setxattr_stop.so apply "$R" ||
	fail "the rerun failed: $(cat "$T/apply.err")"
[ "$(pending_count "$R")" = 0 ] || fail "entries left after the rerun"
dups=$(sort "$T/writes" | uniq -d)
[ -z "$dups" ] || fail "values written twice: $dups"
# Every entry's value once; the capability chown(2) dropped is written back once too.
labels=$(grep -vc ' security.capability$' "$T/writes")
[ "$labels" = "$values" ] || fail "$labels labels written over both runs, the entries hold $values"
[ "$(grep -c ' security.capability$' "$T/writes")" = 1 ] || fail "the capability not written back once"
verify_rpmdb "$R" || fail "after the kill and the rerun: $(cat "$T/verify.out")"
evmctl verify --portable -k "$T/keys/rsa2048.der" "$R/opt/imstest/bin/tool" >"$T/evmctl.out" 2>&1 ||
	fail "evmctl refuses tool after the rerun: $(cat "$T/evmctl.out")"
echo "ok: killed inside a file's values, the rerun completes: each of $values values written once"
echo PASS
