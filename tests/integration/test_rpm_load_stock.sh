#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The macros file of a plugin installed outside rpm's %__plugindir, read with
# "rpm --load FILE" as make install says, makes rpm load imastream.so and still its own
# plugins from its own folder (issue 36 item 3): here a copy of the distribution's
# syslog.so, seen loaded through the dynamic linker's LD_DEBUG=files lines.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need getfattr
setup_scratch

stock_so=
for d in "$(rpm --eval '%{__plugindir}')" /usr/lib64/rpm-plugins /usr/lib/*/rpm-plugins; do
	[ -f "$d/syslog.so" ] && { stock_so=$d/syslog.so; break; }
done
[ -n "$stock_so" ] || { echo "SKIP: no syslog.so of rpm's own to load beside imastream"; exit 77; }
[ -n "$(rpm --eval '%{?__transaction_syslog}')" ] ||
	{ echo "SKIP: this rpm defines no %__transaction_syslog"; exit 77; }

# rpm's folder (a scratch one holding the stock plugin) and ours (the build tree).
own="$T/rpm-plugins"
mkdir -p "$own"
cp "$stock_so" "$own/"
macros="$T/macros.transaction_imastream"
sh "$top_srcdir/plugin/rpm/make-macros.sh" "$top_srcdir/plugin/rpm/macros.transaction_imastream" \
	"$own" "$top_builddir/.libs" /nonexistent >"$macros" || fail "make-macros.sh failed"

pkg=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
root="$T/root"
new_root "$root"
LD_DEBUG=files rpm --root "$root" --dbpath /var/lib/rpm --nodeps --load "$macros" \
	--define "_imastream_config %{nil}" -i "$pkg" 2>"$T/rpm.err" ||
	{ grep -v '^ *[0-9]*:' "$T/rpm.err" >"$T/rpm.stderr"; fail "rpm --load $macros -i failed"; }
grep -v '^ *[0-9]*:' "$T/rpm.err" >"$T/rpm.stderr"
grep -q 'Failed to dlopen' "$T/rpm.stderr" && fail "rpm could not open a plugin"
loaded() { grep -q "file=$1 \[0\]; *dynamically loaded by" "$T/rpm.err"; }
loaded "$own/syslog.so" || fail "rpm did not load its own syslog plugin beside imastream"
loaded "$SO" || fail "rpm did not load $SO"
grep -qx "%__transaction_syslog $own/syslog.so" "$macros" ||
	fail "$macros does not pin syslog to $own/syslog.so: $(grep __transaction_syslog "$macros")"
getfattr --absolute-names -n security.ima "$root/opt/imstest/bin/tool" >/dev/null 2>&1 ||
	fail "imastream wrote no security.ima"
echo "ok: rpm --load of the macros file loads $own/syslog.so and imastream.so, which labelled the files"
