#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/kernel/repackage-deb.sh on a small made-up root: a dpkg-style list becomes a
# subpackage with the Debian version, each path where it really is (a listed /bin/x at
# /usr/bin/x), modes, owner names, file capabilities, conffiles as %config; every path
# no list names goes to image-local, %ghost where asked; and a file whose owner has no
# name stops it with one line naming the file.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need rpmbuild
need setcap
need getcap
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (file owners, capabilities)"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/imastream-repack.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
repack=$top_srcdir/tests/kernel/repackage-deb.sh
fail() { echo "FAIL: $*"; exit 1; }

r=$T/root
mkdir -p "$r/etc" "$r/usr/bin" "$r/usr/sbin" "$r/var/cache/x" "$T/lists" || exit 99
ln -s usr/bin "$r/bin"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
printf 'root:x:0:\nshadow:x:42:\n' >"$r/etc/group"
printf 'root:*:1::::::\n' >"$r/etc/shadow" && chgrp 42 "$r/etc/shadow" && chmod 0640 "$r/etc/shadow"
printf '#!/bin/sh\necho prog\n' >"$r/usr/bin/prog" && chmod 0755 "$r/usr/bin/prog"
cp "$r/usr/bin/prog" "$r/usr/bin/[" && cp "$r/usr/bin/prog" "$r/usr/sbin/capprog" || exit 99
setcap cap_net_raw=ep "$r/usr/sbin/capprog" || { echo "SKIP: setcap cannot label $T"; exit 77; }
echo 'answer = 42' >"$r/etc/prog.conf"
echo 'written by a maintainer script' >"$r/etc/generated.conf"
echo cache >"$r/var/cache/x/aux"
printf '%s\n' /etc/passwd /etc/group >"$T/lists/image-accounts.list"
echo 1 >"$T/lists/image-accounts.version"
printf '%s\n' /. /usr /usr/bin /bin/prog '/usr/bin/[' /usr/sbin /usr/sbin/capprog /etc /etc/prog.conf \
	/etc/gone.conf >"$T/lists/prog.list"
echo '1:2.0-rc1-3+b1' >"$T/lists/prog.version"
echo '/etc/prog.conf 0123456789abcdef' >"$T/lists/prog.conffiles"
: >"$T/lists/image-local.list"
echo 1 >"$T/lists/image-local.version"
echo /var/cache/x/aux >"$T/lists/image-local.ghost"

"$repack" "$r" "$T/lists" "$T/root.spec" >"$T/repack.log" 2>&1 || { cat "$T/repack.log"; fail "repackage-deb.sh failed"; }
cp -a "$r" "$T/buildroot" || exit 99
rpmbuild -bb --quiet --define "_topdir $T/topdir" --buildroot "$T/buildroot" "$T/root.spec" >"$T/rpmbuild.log" 2>&1 ||
	{ cat "$T/rpmbuild.log"; fail "rpmbuild of the generated spec failed (a path left out, or a bad line)"; }
pkg() { find "$T/topdir/RPMS" -name "$1-[0-9]*.rpm" | head -n 1; }
prog=$(pkg prog) local=$(pkg image-local)
[ -f "$prog" ] && [ -f "$local" ] && [ -f "$(pkg image-accounts)" ] || fail "packages missing: $(ls "$T"/topdir/RPMS/*/)"

q() { rpm -qp --qf "$2" "$1" 2>/dev/null; }
[ "$(q "$prog" '%{EPOCH}:%{VERSION}-%{RELEASE}')" = "1:2.0_rc1-3+b1" ] ||
	fail "prog's version is $(q "$prog" '%{EPOCH}:%{VERSION}-%{RELEASE}'), want 1:2.0_rc1-3+b1"
files=$(q "$prog" '[%{FILENAMES} %{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags} %{FILECAPS}\n]')
echo "$files" | grep -qx '/usr/bin/prog -rwxr-xr-x root:root  ' || fail "/bin/prog is not /usr/bin/prog, 0755: $files"
echo "$files" | grep -q '^/bin/prog' && fail "the listed name /bin/prog was kept: $files"
echo "$files" | grep -q '^/usr/bin/\[ ' || fail "/usr/bin/[ is missing: $files"
echo "$files" | grep -qx '/etc/prog.conf -rw-r--r-- root:root cn ' || fail "/etc/prog.conf is not %config(noreplace): $files"
echo "$files" | grep -q '^/usr/sbin/capprog .* cap_net_raw=ep$' || fail "capprog lost its capability: $files"
echo "$files" | grep -q '^/etc/gone.conf' && fail "a listed path the root lacks was packaged: $files"
rpm -qp --requires "$prog" 2>/dev/null | grep -q '^image-accounts' || fail "prog does not require image-accounts"
files=$(q "$local" '[%{FILENAMES} %{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags}\n]')
echo "$files" | grep -qx '/etc/shadow -rw-r----- root:shadow cn' || fail "/etc/shadow not in image-local with group shadow: $files"
echo "$files" | grep -qx '/etc/generated.conf -rw-r--r-- root:root cn' || fail "/etc/generated.conf not %config in image-local: $files"
echo "$files" | grep -q '^/var/cache/x/aux .* g$' || fail "/var/cache/x/aux is not %ghost: $files"
echo "$files" | grep -q '^/usr/bin/prog ' && fail "image-local took a listed file: $files"

# An owner with no name in the root: one line naming the file, no spec written.
chown 4242 "$r/usr/bin/prog"
rm -f "$T/bad.spec"
out=$("$repack" "$r" "$T/lists" "$T/bad.spec" 2>&1) && fail "an unnamed owner was accepted: $out"
[ -e "$T/bad.spec" ] && fail "a spec was written all the same"
[ "$(echo "$out" | grep -c .)" = 1 ] && echo "$out" | grep -q '^repackage-deb: /usr/bin/prog: owner uid 4242 has no name' ||
	fail "want one line naming /usr/bin/prog and uid 4242, got: $out"
echo "ok: a Debian-style root repackaged: version, real paths, modes, owners, capabilities, %config, %ghost, the rest in image-local"
