#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Orphans a red team made: a killed rpm -i's signed temp files in directories no package has yet, a hard link to a package's file (and to one outside the root) under a name nobody owns, a new subdirectory below a %dir, a signed file at a %ghost path, rpm's temp name where no package file is, imastream temp files recover cannot remove; verify --rpmdb names each, recover mends what it may and fails on the rest, never unlabelling a package's file.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need getfattr
need setfattr
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler ($cc) to build the LD_PRELOAD library"; exit 77; }
setup_scratch
IMS="$top_builddir/imastream"
KEYS="$top_srcdir/tests/keys"
cp "$KEYS/ec-p256.pem" "$T/key.pem"
chmod 600 "$T/key.pem"
"$cc" -shared -fPIC -O2 -o "$T/stop.so" "$top_srcdir/tests/integration/rpm_stop_at_commit.c" -ldl ||
	fail "cannot build the LD_PRELOAD library"
USR=$(build_pkg "$top_srcdir/tests/rpm/imsusr.rpmspec" 1.0)
NEW=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)

prpm() {
	r=$1
	shift
	rpm --root "$r" --nodeps --noscripts --define "__plugindir $top_builddir/.libs" \
		--define "_imastream_config %{nil}" --define "__transaction_imastream $SO" \
		--define "_imastream_mode sign" --define "_imastream_evm portable" \
		--define "_imastream_key $T/key.pem" --define "_imastream_cert $KEYS/ec-p256.crt" "$@"
}
verify() { "$IMS" verify --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" --evm require "$@"; }
# labels FILE: its security.ima and security.evm, hex (empty when it has none).
labels() { getfattr -h -e hex -m '^security\.(ima|evm)$' -d "$1" 2>/dev/null | grep '^security'; }
# sign_like SRC DST: DST gets SRC's security.ima and security.evm.
sign_like() {
	for a in security.ima security.evm; do
		v=$(getfattr -h -e hex -n $a "$1" 2>/dev/null | sed -n "s/^$a=//p")
		[ -n "$v" ] && setfattr -h -n $a -v "$v" "$2" || fail "cannot copy $a to $2"
	done
}

R=$T/root
mkdir -p "$R/usr/bin" "$R/usr/sbin" "$R/usr/lib"
for d in bin sbin lib; do ln -s "usr/$d" "$R/$d"; done
prpm "$R" -i "$USR" 2>"$T/rpm.err" || { cat "$T/rpm.err"; fail "rpm -i imsusr failed"; }

echo "== rpm -i killed before its first rename: signed temp files where no package is yet"
mkfifo "$T/stop"
(
	RPM_STOP_FIFO="$T/stop" LD_PRELOAD="$T/stop.so" prpm "$R" -i "$NEW" >/dev/null 2>"$T/rpm.err"
	echo "exited $?" 1<>"$T/stop"
) &
sub=$!
read -r what pid name <"$T/stop"
[ "$what" = stopped ] || { cat "$T/rpm.err"; fail "rpm -i ended without renaming a temp file ($what)"; }
kill -9 "$pid"
wait "$sub"
temps=$(cd "$R" && find opt etc -name '*;*' -type f | sort)
[ -n "$temps" ] || fail "the killed rpm -i left no temp file (the test proves nothing)"
signed=0
for t in $temps; do
	"$IMS" verify -t "$KEYS/ec-p256.crt" "$R/$t" >/dev/null 2>&1 && signed=$((signed + 1))
done
[ "$signed" -gt 0 ] || fail "no temp file of the killed rpm -i carries a valid signature (the test proves nothing)"

"$IMS" recover --root "$R" >"$T/out" 2>"$T/err" &&
	fail "recover without --rpmdb exited 0 in a root with rpm's signed leftovers"
grep -q "labelled files no package owns (rpm's leftovers): 'imastream recover --root $R --rpmdb' mends them" "$T/err" ||
	{ cat "$T/err"; fail "recover without --rpmdb does not say that --rpmdb mends them"; }
verify >"$T/out" 2>"$T/err" && fail "verify --rpmdb passed with the killed rpm -i's temp files"
for t in $temps; do
	grep -q "^/$t: FAIL: " "$T/out" || { cat "$T/out"; fail "verify --rpmdb does not name $t"; }
done
# Without a trust store, a temp name beside no package's file is not known to be rpm's:
# unlabelled, kept.  With one, those whose signature verifies are rpm's: removed.
cp -a "$R" "$T/root-copy"
"$IMS" recover --root "$T/root-copy" --rpmdb >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "recover --rpmdb (no --trust) failed"; }
for t in $temps; do
	[ -f "$T/root-copy/$t" ] && [ -z "$(labels "$T/root-copy/$t")" ] ||
		fail "$t: without --trust, recover --rpmdb did not keep it and take its labels"
done
rm -rf "$T/root-copy"
"$IMS" recover --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "recover --rpmdb failed"; }
for t in $temps; do
	[ ! -e "$R/$t" ] || fail "$t, signed with a trusted key, is still there after recover --rpmdb --trust"
done
verify >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "verify --rpmdb after recover"; }
# rpm's own unlabelled leftovers (a temp symlink): no label, nothing of ours; but the
# rerun, in the same second, would have rpm's same temp names (its transaction id is the
# time), and rpm fails on a name taken.
find "$R" -name '*;*' ! -type f -delete
prpm "$R" -i "$NEW" 2>"$T/rpm.err" || { cat "$T/rpm.err"; fail "rpm -i imstest after recover failed"; }
verify >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "verify --rpmdb after the install"; }

echo "== signed files a red team put where recover looked too little or too much"
PKGFILE=$R/usr/bin/imsusr-real
before=$(labels "$PKGFILE")
[ -n "$before" ] || fail "the package's file carries no labels (the test proves nothing)"
# A hard link to a package's file, under a name no package lists, in a %dir; and one of
# rpm's temp name beside it, which recover removes (a name that goes is no longer one
# that keeps the labels, nor one that lets them go).
ln "$PKGFILE" "$R/usr/lib/imsusr/hardlink"
ln "$PKGFILE" "$R/usr/bin/imsusr-real;0badf00d"
# A hard link to a signed file outside the root.
printf 'outside\n' >"$T/outside"
sign_like "$PKGFILE" "$T/outside"
outside=$(labels "$T/outside")
ln "$T/outside" "$R/usr/lib/imsusr/outside-link"
# A new subdirectory below a %dir.
mkdir -p "$R/usr/lib/imsusr/plugins/deeper"
cp "$PKGFILE" "$R/usr/lib/imsusr/plugins/deeper/old-tool"
sign_like "$PKGFILE" "$R/usr/lib/imsusr/plugins/deeper/old-tool"
# A signed regular file at a %ghost path.
cp "$PKGFILE" "$R/opt/imstest/data/post.log"
sign_like "$PKGFILE" "$R/opt/imstest/data/post.log"
# rpm's temp name beside no file of a package, with a digest and with a signature over
# other content: not rpm's to remove.
printf 'mine\n' >"$R/usr/bin/notapkg;deadbeef"
setfattr -h -n security.ima -v 0x0404$(sha256sum "$R/usr/bin/notapkg;deadbeef" | cut -c1-64) \
	"$R/usr/bin/notapkg;deadbeef" || fail "setfattr"
printf 'forged\n' >"$R/usr/bin/forged;deadbeef"
sign_like "$PKGFILE" "$R/usr/bin/forged;deadbeef"

verify >"$T/out" 2>"$T/err" && fail "verify --rpmdb passed with the red team's files"
for p in usr/lib/imsusr/hardlink usr/lib/imsusr/outside-link usr/lib/imsusr/plugins/deeper/old-tool; do
	grep -qxF "/$p: FAIL: a file no installed package owns, labelled (security.ima, security.evm)" "$T/out" ||
		{ cat "$T/out"; fail "verify --rpmdb does not name $p"; }
done
grep -qxF "/opt/imstest/data/post.log: FAIL: a file at a %ghost path, where rpm installs no content, labelled (security.ima, security.evm)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb does not name the signed file at the %ghost path"; }
grep -qxF "/usr/bin/notapkg;deadbeef: FAIL: a file of rpm's temp name beside no file of a package, labelled (security.ima)" "$T/out" &&
	grep -qxF "/usr/bin/forged;deadbeef: FAIL: a file of rpm's temp name beside no file of a package, labelled (security.ima, security.evm)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb does not name the temp names beside no package file"; }
grep -qxF "/usr/bin/imsusr-real;0badf00d: FAIL: an rpm temp file of a transaction that did not end, labelled (security.ima, security.evm)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb does not name the temp name beside a package file"; }
[ "$(wc -l <"$T/out")" = 7 ] || { cat "$T/out"; fail "verify --rpmdb: not exactly the 7 orphans"; }

"$IMS" recover --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" &&
	{ cat "$T/out" "$T/err"; fail "recover --rpmdb exited 0 with hard links it must leave labelled"; }
[ "$(labels "$PKGFILE")" = "$before" ] || fail "recover took the labels off a package's file through a hard link"
[ "$(labels "$T/outside")" = "$outside" ] || fail "recover took the labels off a file outside the root"
for p in hardlink outside-link; do
	grep -qxF "/usr/lib/imsusr/$p: a file no installed package owns: left labelled: its inode has 1 other names that are no orphans (a package's file, one outside the root): remove this name if it is not wanted" "$T/out" ||
		{ cat "$T/out"; fail "recover does not say why $p keeps its labels"; }
done
grep -q "1 rpm temp files removed, 4 unowned files unlabelled, 2 left (named above)" "$T/err" ||
	{ cat "$T/err"; fail "recover summary"; }
[ ! -e "$R/usr/bin/imsusr-real;0badf00d" ] || fail "recover left the rpm temp name beside a package file"
for p in usr/lib/imsusr/plugins/deeper/old-tool opt/imstest/data/post.log 'usr/bin/notapkg;deadbeef' \
	'usr/bin/forged;deadbeef'; do
	[ -f "$R/$p" ] || fail "recover removed $p (only its labels were to go)"
	[ -z "$(labels "$R/$p")" ] || fail "$p is still labelled after recover --rpmdb"
done
rm "$R/usr/lib/imsusr/hardlink" "$R/usr/lib/imsusr/outside-link"
"$IMS" recover --root "$R" --rpmdb >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "recover --rpmdb once the links are gone"; }
verify >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "verify --rpmdb after recover"; }

echo "== imastream temp files recover cannot remove: named, and recover fails"
live=$(printf '%x' $$)
: >"$R/usr/bin/.imastream-tmp-$live-0"
: >"$R/usr/bin/.imastream-tmp-not-ours"
"$IMS" recover --root "$R" >"$T/out" 2>"$T/err" && { cat "$T/err"; fail "recover exited 0 with temp files it kept"; }
grep -q "/usr/bin/.imastream-tmp-$live-0: kept: its writer, pid $$, is running" "$T/err" &&
	grep -q "/usr/bin/.imastream-tmp-not-ours: kept: not a temp name imastream writes" "$T/err" ||
	{ cat "$T/err"; fail "recover does not name the temp files it kept"; }
[ -e "$R/usr/bin/.imastream-tmp-$live-0" ] && [ -e "$R/usr/bin/.imastream-tmp-not-ours" ] ||
	fail "recover removed a temp file of a live writer or of a name not imastream's"
rm "$R/usr/bin/.imastream-tmp-$live-0" "$R/usr/bin/.imastream-tmp-not-ours"
"$IMS" recover --root "$R" >"$T/out" 2>"$T/err" || { cat "$T/err"; fail "recover once they are gone"; }
echo PASS
