#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Stock rpm loads imastream.so and drives the chain: the trace plugin's transcript of an
# install, an upgrade and an erase of a package with every kind of entry equals the golden.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
setup_scratch

spec="$top_srcdir/tests/rpm/imstest.rpmspec"
v1=$(build_pkg "$spec" 1.0)
v2=$(build_pkg "$spec" 2.0)
root="$T/root"
new_root "$root"
tr="$T/transcript"

trace_rpm() {
	irpm "$root" --define "_imastream_plugins trace" --define "_imastream_trace $tr" "$@"
}

echo "== install" >>"$tr"
trace_rpm -i "$v1" || fail "rpm -i failed"
[ -f "$root/opt/imstest/bin/tool" ] || fail "not installed"
[ "$(cat "$root/opt/imstest/data/post.log")" = installed ] || fail "%post did not run"
echo "== upgrade" >>"$tr"
trace_rpm -U "$v2" || fail "rpm -U failed"
echo "== erase" >>"$tr"
trace_rpm -e imstest || fail "rpm -e failed"
[ ! -e "$root/opt/imstest/bin/tool" ] || fail "not erased"

# The scratch root's name changes per run. What rpm drives differs by version, so each
# has its golden: 4.20 ends an unowned directory as soon as it is made and hands over an
# fd for a %config file it only touches; 6.1 calls psm_pre/psm_post for the package's
# own operation only, not again for its transaction scriptlets and file triggers.
sed "s|$root|ROOT|g" "$tr" >"$T/transcript.norm"
rpmver=$(rpm --version | sed 's/.* //' | cut -d. -f1,2)
case $rpmver in
4.18 | 4.19) golden=rpm-install.trace ;;
*) golden=rpm-install-rpm$rpmver.trace ;;
esac
[ -f "$top_srcdir/tests/golden/$golden" ] || [ -n "${IMASTREAM_UPDATE_GOLDEN:-}" ] ||
	fail "no golden transcript for rpm $rpmver (tests/golden/$golden): review, then IMASTREAM_UPDATE_GOLDEN=1"
compare_golden "$golden" "$T/transcript.norm"

# Turned off three ways: nothing is traced, the package still installs.
for how in "--noplugins" "--define=__transaction_imastream %{nil}" "--define=_imastream_mode off"; do
	rm -f "$tr"
	trace_rpm "$how" -i "$v1" || fail "rpm -i with $how failed"
	[ ! -s "$tr" ] || fail "plugin ran despite $how"
	trace_rpm --noplugins -e imstest || fail "erase after $how failed"
done
echo "ok: transcript matches; --noplugins, %{nil} and mode off disable the plugin"
