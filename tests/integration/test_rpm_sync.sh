#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# %_imastream_sync: with the plugin, every regular file rpm installs is fsync'ed once,
# under its temp name (labels written, not yet renamed), so that a power cut cannot
# leave a signed file whose content never reached the disk at its final name
# (tests/kernel/test_kernel_live.sh's power cuts found such files); "none" syncs
# nothing, %_flush_io makes rpm sync each file itself and the plugin then adds no second
# fsync, and any other value fails the transaction in one line, installing nothing.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"

need strace
setup_scratch
PKG=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec")
# The package's regular files with content of their own (the hard link's second name
# is written once): tool, run.sh, imstest.conf, empty.
want=4

# fsyncs ROOT ARGS...: rpm -i into a new ROOT under strace; prints the fsyncs of the
# package's files under their temp names, then those under their final names.
fsyncs() {
	local r=$1
	shift
	new_root "$r"
	strace -f -y -qq -e trace=fsync,fdatasync -o "$T/strace" \
		rpm --root "$r" --dbpath /var/lib/rpm --nodeps --noscripts \
		--define "__plugindir $top_builddir/.libs" --define "_imastream_config %{nil}" \
		--define "__transaction_imastream $SO" "$@" -i "$PKG" >"$T/rpm.out" 2>&1
	echo "$? $(grep -c "<$r/[^>]*;[0-9a-f]*>" "$T/strace") $(grep -Ec "<$r/(opt|etc)/[^;>]*>" "$T/strace")"
}

read -r rc temp final < <(fsyncs "$T/default")
[ "$rc" = 0 ] || { cat "$T/rpm.out"; fail "rpm -i with the plugin failed"; }
[ "$temp" = "$want" ] && [ "$final" = 0 ] ||
	fail "default: $temp fsyncs under temp names, $final under final names (wanted $want and 0)"
"$top_builddir/imastream" verify --root "$T/default" --rpmdb --dbpath /var/lib/rpm >"$T/v" 2>&1 ||
	{ cat "$T/v"; fail "the synced install does not verify"; }

read -r rc temp final < <(fsyncs "$T/none" --define "_imastream_sync none")
[ "$rc" = 0 ] && [ "$temp" = 0 ] && [ "$final" = 0 ] ||
	fail "sync none: rpm exit $rc, $temp + $final fsyncs of the package's files (wanted none)"

read -r rc temp final < <(fsyncs "$T/flush" --define "_flush_io 1")
[ "$rc" = 0 ] && [ "$temp" = "$want" ] ||
	fail "%_flush_io 1: rpm exit $rc, $temp fsyncs under temp names (wanted $want: rpm's own, none of ours on top)"

read -r rc temp final < <(fsyncs "$T/bad" --define "_imastream_sync sometimes")
[ "$rc" != 0 ] || fail "%_imastream_sync sometimes: rpm succeeded"
grep -q "macro %_imastream_sync: 'sometimes' is not file or none" "$T/rpm.out" ||
	{ cat "$T/rpm.out"; fail "%_imastream_sync sometimes: the error does not say what is wrong"; }
[ ! -e "$T/bad/opt/imstest/bin/tool" ] || fail "%_imastream_sync sometimes: files were installed"
echo "ok: $want files fsync'ed before their renames; none with sync none; once with %_flush_io"
