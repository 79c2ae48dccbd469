#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Signed orphans: rpm killed in an upgrade with the plugin leaves its temp files (NAME;XXXXXXXX) signed beside their final names; verify --rpmdb reports them and an unowned labelled file, recover --rpmdb -n names them, recover --rpmdb removes or unlabels them, and the upgrade then runs again.
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
PKG1=$(build_pkg "$top_srcdir/tests/rpm/imsusr.rpmspec" 1.0)
PKG2=$(build_pkg "$top_srcdir/tests/rpm/imsusr.rpmspec" 2.0)

# prpm ROOT ARGS...: stock rpm with the plugin signing (IMA and EVM portable, P-256), at
# rpm's own %_dbpath (as verify --rpmdb reads it).
prpm() {
	r=$1
	shift
	rpm --root "$r" --nodeps --noscripts --define "__plugindir $top_builddir/.libs" \
		--define "_imastream_config %{nil}" --define "__transaction_imastream $SO" \
		--define "_imastream_mode sign" --define "_imastream_evm portable" \
		--define "_imastream_key $T/key.pem" --define "_imastream_cert $KEYS/ec-p256.crt" "$@"
}

# A merged-/usr root with imsusr 1.0.
R=$T/root
mkdir -p "$R/usr/bin" "$R/usr/sbin" "$R/usr/lib"
for d in bin sbin lib; do ln -s "usr/$d" "$R/$d"; done
prpm "$R" -i "$PKG1" 2>"$T/rpm.err" || { cat "$T/rpm.err"; fail "rpm -i 1.0 failed"; }
"$IMS" verify --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" --evm require >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "verify --rpmdb fails after a clean install"; }

# The upgrade to 2.0, stopped at its first rename into place and killed there: every file
# of 2.0 is written and signed under rpm's temp name, none has its final name.  The FIFO
# makes this deterministic: rpm says where it stopped, then waits for the kill.
mkfifo "$T/stop"
(
	RPM_STOP_FIFO="$T/stop" LD_PRELOAD="$T/stop.so" prpm "$R" -U "$PKG2" >/dev/null 2>"$T/rpm.err"
	# rpm that never reached a rename tells the reader below, instead of leaving it blocked.
	echo "exited $?" 1<>"$T/stop"
) &
sub=$!
read -r what pid name <"$T/stop"
[ "$what" = stopped ] || { cat "$T/rpm.err"; fail "rpm -U ended without renaming a temp file ($what)"; }
kill -9 "$pid"
wait "$sub"
temps=$(cd "$R" && find usr -name '*;*' -type f | sort)
[ "$(echo "$temps" | wc -l)" = 4 ] || fail "not 4 rpm temp files after the kill: $temps"
# They are what the issue is about: validly signed files nobody owns.
for t in $temps; do
	"$IMS" verify -t "$KEYS/ec-p256.crt" --evm require "$R/$t" >/dev/null 2>&1 ||
		fail "$t: the killed rpm's temp file does not carry a valid signature (the test proves nothing)"
done
# And one more orphan of another kind: a signed program copied under a name nobody owns,
# in a directory the package owns (%dir /lib/imsusr). The same copy in /usr/bin, where
# the package only has files (a directory it may share with dpkg or a local rule that
# signs what it installs), is not one.
for copy in usr/lib/imsusr/old-tool usr/bin/shared-tool; do
	cp -p "$R/usr/bin/imsusr-real" "$R/$copy"
	for a in security.ima security.evm; do
		v=$(getfattr -h -e hex -n $a "$R/usr/bin/imsusr-real" 2>/dev/null | sed -n "s/^$a=//p")
		[ -n "$v" ] && setfattr -h -n $a -v "$v" "$R/$copy" || fail "cannot copy $a"
	done
done
echo unlabelled >"$R/usr/bin/plain"
# An rpm temp file as the plugin leaves it in hash mode (a digest, no signature), named as
# rpm names them: still an orphan.  A file with only a digest under another name is what
# a kernel that appraises by digest writes on every file it creates: not an orphan.
digest=0x0404$(sha256sum "$R/usr/bin/imsusr-real" | cut -c1-64)
for f in 'imsusr-real;0badf00d' kernel-made; do
	cp -p "$R/usr/bin/imsusr-real" "$R/usr/bin/$f"
	setfattr -h -n security.ima -v "$digest" "$R/usr/bin/$f" || fail "setfattr on $f"
done
# And a copy of a %config file as rpm names one (it would carry the old file's labels).
cp -p "$R/usr/lib/imsusr/old-tool" "$R/usr/bin/imsusr.rpmsave"
for a in security.ima security.evm; do
	setfattr -h -n $a -v "$(getfattr -h -e hex -n $a "$R/usr/lib/imsusr/old-tool" | sed -n "s/^$a=//p")" \
		"$R/usr/bin/imsusr.rpmsave" || fail "cannot copy $a"
done

echo "== verify --rpmdb reports them"
"$IMS" verify --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" >"$T/out" 2>"$T/err" &&
	fail "verify --rpmdb passed a root with signed orphans"
for t in $temps; do
	grep -qxF "/$t: FAIL: an rpm temp file of a transaction that did not end, labelled (security.ima, security.evm)" "$T/out" ||
		{ cat "$T/out"; fail "verify --rpmdb: no line for $t"; }
done
grep -qxF "/usr/bin/imsusr-real;0badf00d: FAIL: an rpm temp file of a transaction that did not end, labelled (security.ima)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb: no line for the digest-only rpm temp file"; }
grep -qxF "/usr/lib/imsusr/old-tool: FAIL: a file no installed package owns, labelled (security.ima, security.evm)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb: no line for the unowned signed file"; }
grep -qxF "/usr/bin/imsusr.rpmsave: FAIL: an rpm copy of a %config file that no package owns, labelled (security.ima, security.evm)" "$T/out" ||
	{ cat "$T/out"; fail "verify --rpmdb: no line for the .rpmsave copy"; }
[ "$(wc -l <"$T/out")" = 7 ] || { cat "$T/out"; fail "verify --rpmdb: not exactly the 7 orphans (kernel-made and shared-tool are none)"; }
# 4 files and the 2 directories the package lists.
grep -qF "verify: $R: 6 files, 0 failed; 7 labelled files no package owns" "$T/err" || { cat "$T/err"; fail "verify total"; }
"$IMS" verify --root "$R" --rpmdb --format json >"$T/json" 2>/dev/null && fail "json: exit 0 with orphans"
[ "$(grep -c '"orphan":"rpm-temp","ima":true,"evm":true}$' "$T/json")" = 4 ] || { cat "$T/json"; fail "json: rpm-temp records"; }

echo "== recover --rpmdb -n names them and changes nothing"
(cd "$R" && getfattr -R -h -d -m - -e hex . 2>/dev/null; find . | sort) >"$T/before"
"$IMS" recover --root "$R" --rpmdb -n >"$T/out" 2>"$T/err" && fail "recover -n exited 0 with orphans"
[ "$(grep -c ': an rpm temp file of a transaction that did not end: would be removed$' "$T/out")" = 5 ] &&
	grep -qxF "/usr/lib/imsusr/old-tool: a file no installed package owns: would be unlabelled" "$T/out" ||
	{ cat "$T/out"; fail "recover -n: the orphans are not named"; }
(cd "$R" && getfattr -R -h -d -m - -e hex . 2>/dev/null; find . | sort) >"$T/after"
cmp -s "$T/before" "$T/after" || fail "recover -n changed the root"

echo "== recover --rpmdb removes the temp files and unlabels the rest"
"$IMS" recover --root "$R" --rpmdb >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "recover --rpmdb failed"; }
grep -q "5 rpm temp files removed, 2 unowned files unlabelled" "$T/err" || { cat "$T/err"; fail "recover summary"; }
[ "$(getfattr -h -e hex -n security.ima "$R/usr/bin/kernel-made" 2>/dev/null | sed -n 's/^security.ima=//p')" = "$digest" ] ||
	fail "recover took the digest off a file the kernel would have labelled itself"
[ -z "$(cd "$R" && find . -name '*;*')" ] || fail "rpm temp files are left"
[ -f "$R/usr/lib/imsusr/old-tool" ] || fail "the unowned file was removed (only its labels should go)"
[ -z "$(getfattr -h -d -m '^security\.(ima|evm)$' "$R/usr/lib/imsusr/old-tool" "$R/usr/bin/imsusr.rpmsave" 2>/dev/null)" ] ||
	fail "an unowned file kept its security.ima or security.evm"
[ -n "$(getfattr -h -d -m '^security\.evm$' "$R/usr/bin/shared-tool" 2>/dev/null)" ] ||
	fail "recover unlabelled a file in a directory the packages do not own"
[ "$(cat "$R/usr/bin/plain")" = unlabelled ] || fail "an unlabelled unowned file was touched"
"$IMS" verify --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" --evm require >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "verify --rpmdb after recover"; }
"$IMS" recover --root "$R" --rpmdb >"$T/out" 2>"$T/err" || fail "a second recover failed"
grep -q "0 rpm temp files removed, 0 unowned files unlabelled" "$T/err" || { cat "$T/err"; fail "second recover"; }

echo "== the upgrade runs again"
prpm "$R" -U "$PKG2" 2>"$T/rpm.err" || { cat "$T/rpm.err"; fail "rpm -U 2.0 after recover failed"; }
grep -q "imsusr 2.0" "$R/usr/bin/imsusr" || fail "2.0 is not installed"
"$IMS" verify --root "$R" --rpmdb -t "$KEYS/ec-p256.crt" --evm require >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "verify --rpmdb after the upgrade"; }
echo PASS
