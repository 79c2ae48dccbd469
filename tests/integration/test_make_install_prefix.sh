#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# "./configure --prefix=DIR && make install" keeps everything inside DIR, prints where the
# plugin, the macros and the configuration file went, and the one command it prints
# ("rpm --load DIR/.../macros.transaction_imastream") makes stock rpm run that plugin,
# configured by DIR/etc/imastream.conf; make uninstall leaves no file in DIR.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need getfattr
setup_scratch

pfx="$T/pfx"
build="$T/build"
mkdir -p "$build"
# The outer make's flags and jobserver must not reach this independent build.
unset MAKEFLAGS MFLAGS MAKELEVEL
(cd "$build" && "$top_srcdir/configure" -q --prefix="$pfx") >"$T/configure.log" 2>&1 ||
	{ cat "$T/configure.log"; fail "configure --prefix=$pfx failed"; }
make -s -C "$build" -j2 >"$T/build.log" 2>&1 || { tail -20 "$T/build.log"; fail "make failed"; }
make -s -C "$build" install >"$T/install.log" 2>&1 || { cat "$T/install.log"; fail "make install failed"; }

# Nothing outside the prefix: every file below it, and the summary names them.
so="$pfx/lib/rpm-plugins/imastream.so"
macros="$pfx/lib/rpm/macros.d/macros.transaction_imastream"
conf="$pfx/etc/imastream.conf"
for f in "$pfx/bin/imastream" "$so" "$macros" "$conf"; do
	[ -f "$f" ] || fail "make install did not put $f into the prefix"
	grep -q -- " $f" "$T/install.log" || fail "make install did not say where $f went"
done
grep -E 'libtool: install: .* /' "$T/install.log" | grep -v -- " $pfx/" &&
	fail "make install wrote outside the prefix"

# The macros file names this plugin, not whatever rpm's %__plugindir holds, and keeps
# rpm's own folder beside the prefix's (rpm's own plugins still load).
grep -qx "%__transaction_imastream $so" "$macros" || fail "$macros does not name $so"
own=$(rpm --eval '%{__plugindir}')
grep -qx "%__plugindir /{${own#/},${pfx#/}/lib/rpm-plugins}" "$macros" ||
	fail "$macros does not join $own and the prefix's folder: $(grep '^%__plugindir' "$macros")"

# The command make install printed, word for word, with the package and a scratch root.
cmd=$(sed -n 's/^  \(rpm --load .*\) -i PACKAGE\.rpm$/\1/p' "$T/install.log")
[ "$cmd" = "rpm --load $macros" ] || fail "make install printed '$cmd', not how to load $macros"
# The prefix's configuration file is the one the plugin reads: sha512 shows that it did.
sed -i "s/^hash_algo = .*/hash_algo = sha512/" "$conf"
grep -qx "hash_algo = sha512" "$conf" || fail "no hash_algo line in $conf"
pkg=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
root="$T/root"
new_root "$root"
$cmd --root "$root" --dbpath /var/lib/rpm --nodeps -i "$pkg" 2>"$T/rpm.stderr" ||
	{ cat "$T/rpm.stderr"; fail "rpm --load $macros -i failed"; }
ima=$(getfattr --absolute-names -n security.ima -e hex "$root/opt/imstest/bin/tool" 2>/dev/null |
	sed -n 's/^security.ima=0x//p')
want=0406$(sha512sum "$root/opt/imstest/bin/tool" | cut -d' ' -f1)
[ "$ima" = "$want" ] || fail "security.ima of bin/tool is '$ima', want $want (sha512, from $conf)"

make -s -C "$build" uninstall >"$T/uninstall.log" 2>&1 || { cat "$T/uninstall.log"; fail "make uninstall failed"; }
left=$(find "$pfx" ! -type d ! -name imastream.conf)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "ok: configure --prefix: plugin, macros and configuration inside the prefix; rpm --load of its macros runs that plugin (sha512 from its imastream.conf); uninstalled"
