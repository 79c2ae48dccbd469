#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# "make install" puts imastream.so where rpm globs for plugins (%__plugindir, even where
# Debian's does not exist yet) and a macros.d file that names it; rpm then loads it with no
# --define of ours; "make uninstall" removes both.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
setup_scratch

var() { sed -n "s/^$1 = //p" "$top_builddir/Makefile"; }
dest="$T/dest"
make -s -C "$top_builddir" install DESTDIR="$dest" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; exit 99; }
# Expand ${libdir}-style values the way make would.
# Under an outer "make -C", MAKEFLAGS makes the inner make announce its directory
# whatever its own flags say: keep only the line the rule prints.
plugindir=$(MAKEFLAGS= make -s -C "$top_builddir" --no-print-directory -f - print-plugindir <<EOM | grep -v '^make'
include Makefile
print-plugindir:
	@echo \$(rpmplugindir) \$(rpmmacrosdir)
EOM
)
macrosdir=${plugindir#* }
plugindir=${plugindir% *}
[ "$plugindir" = "$(rpm --eval '%{__plugindir}')" ] ||
	echo "note: plugindir $plugindir is not rpm's %__plugindir (configured explicitly?)"
so="$dest$plugindir/imastream.so"
macros="$dest$macrosdir/macros.transaction_imastream"
[ -f "$so" ] || fail "no $so"
[ ! -e "$dest$plugindir/imastream.la" ] || fail "libtool archive left in the plugin dir"
[ -f "$macros" ] || fail "no $macros"
[ "$(nm -D --defined-only "$so" | awk '{print $3}')" = imastream_hooks ] ||
	fail "imastream.so exports more than imastream_hooks"

# rpm as installed: the plugin dir and macros file are those of the DESTDIR tree, as if
# DESTDIR were /: no __transaction_imastream definition of ours where the macros name
# the plugin by rpm's folder.  Outside it (a --prefix of its own, as make distcheck
# configures) they name it by the path it has without DESTDIR, pointed into it here.
pkg=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
root="$T/root"
new_root "$root"
named=()
grep -q '^%__transaction_imastream %{__plugindir}/imastream.so$' "$macros" ||
	named=(--define "__transaction_imastream $dest$plugindir/imastream.so")
rpm --root "$root" --dbpath /var/lib/rpm --nodeps --load "$macros" "${named[@]}" \
	--define "__plugindir $dest$plugindir" --define "_imastream_plugins trace" \
	--define "_imastream_trace $T/tr" -i "$pkg" 2>"$T/rpm.stderr" || fail "rpm -i failed"
grep -q '^trace: file_closed path=/opt/imstest/bin/tool;TMP' "$T/tr" ||
	fail "rpm did not load the installed plugin"

make -s -C "$top_builddir" uninstall DESTDIR="$dest" >"$T/uninstall.log" 2>&1 ||
	{ cat "$T/uninstall.log"; exit 99; }
[ ! -e "$so" ] && [ ! -e "$macros" ] || fail "make uninstall left the plugin behind"
echo "ok: installed to $plugindir and $macrosdir, loaded by rpm, uninstalled"
