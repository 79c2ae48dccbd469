#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A rootless image build with stock rpm + imastream.so: an unprivileged user in unshare -r installs in hash and sign mode with EVM on, the labels go pending with one line, verify --rpmdb says pending (exit 3), root applies them, verify --rpmdb and evmctl accept the files, and a tar with security.* xattrs carries them into a fresh root; userns_xattrs error and skip, and an EPERM outside a user namespace, stay what they say.
set -u
. "$top_srcdir/tests/integration/rootless-lib.sh"
rootless_setup

v1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
extra=$(build_pkg "$top_srcdir/tests/rpm/imsextra.rpmspec" 1.0)
chmod -R a+rX "$T/topdir"

for mode in hash sign; do
	R=$T/root-$mode
	builder_root "$R"
	ns_rpm "$R" "$mode" -i "$v1" "$extra" || fail "$mode: the rootless rpm transaction failed"
	[ -f "$R/opt/imstest/bin/tool" ] && [ -f "$R/opt/imsextra/bin/helper" ] ||
		fail "$mode: not installed"
	# One line for the transaction: how many, and the command that applies them.
	n=$(grep -c 'security xattrs pending' "$T/rpm.stderr")
	[ "$n" = 1 ] || fail "$mode: $n lines about pending labels, not 1"
	grep -q "^warning: imastream.*: 7 files have 14 security xattrs pending .*imastream relabel --pending --root $R\$" \
		"$T/rpm.stderr" || fail "$mode: the pending line lacks the count or the command"
	! grep -q 'cannot set' "$T/rpm.stderr" || fail "$mode: a refused write was said"
	! has_ima "$R/opt/imstest/bin/tool" || fail "$mode: a namespace wrote security.ima?"
	[ "$(pending_count "$R")" = 7 ] || fail "$mode: $(pending_count "$R") entries, not 7"
	# The owner recorded is the header's (root), the build's mapped one beside it.
	e=$(grep -l '^path /opt/imsextra/bin/helper$' "$R"/var/lib/imastream/pending/*/*)
	grep -qx 'owner 0 0' "$e" && grep -qx "built-owner $BUID $BGID" "$e" &&
		grep -qx 'mode 0104755' "$e" || fail "$mode: the helper's entry has the wrong owner or mode"
	echo "ok: $mode: installed rootless, 7 files' labels pending, said in one line"

	verify_rpmdb "$R"
	rc=$?
	[ "$rc" = 3 ] || fail "$mode: verify --rpmdb exited $rc before the labels were applied, not 3: $(cat "$T/verify.out" "$T/verify.err")"
	[ "$(grep -c ': PENDING: ' "$T/verify.out")" = 10 ] ||
		fail "$mode: not every file reported pending: $(cat "$T/verify.out")"
	echo "ok: $mode: verify --rpmdb reports them pending (exit 3)"

	apply "$R" || fail "$mode: apply failed: $(cat "$T/apply.err")"
	grep -q 'relabel: 7 pending entries: 7 files labelled (1[0-9] values written), 0 refused' \
		"$T/apply.err" || fail "$mode: apply summary: $(cat "$T/apply.err")"
	[ "$(pending_count "$R")" = 0 ] || fail "$mode: entries left after apply"
	[ "$(stat -c '%u:%g %a' "$R/opt/imsextra/bin/helper")" = "0:0 4755" ] ||
		fail "$mode: the setuid helper is $(stat -c '%u:%g %a' "$R/opt/imsextra/bin/helper")"
	verify_rpmdb "$R" || fail "$mode: verify --rpmdb after apply: $(cat "$T/verify.out" "$T/verify.err")"
	evmctl verify --portable -k "$T/keys/rsa2048.der" "$R/opt/imstest/bin/tool" >"$T/evmctl.out" 2>&1 ||
		fail "$mode: evmctl refuses the EVM signature of tool: $(cat "$T/evmctl.out")"
	evmctl verify --portable -k "$T/keys/rsa2048.der" "$R/opt/imsextra/bin/helper" >"$T/evmctl.out" 2>&1 ||
		fail "$mode: evmctl refuses the EVM signature of the setuid helper: $(cat "$T/evmctl.out")"
	if [ "$mode" = sign ]; then
		evmctl ima_verify -k "$T/keys/rsa2048.der" "$R/opt/imstest/bin/tool" >"$T/evmctl.out" 2>&1 ||
			fail "sign: evmctl refuses the IMA signature of tool: $(cat "$T/evmctl.out")"
	fi
	# A second run finds nothing to do.
	apply "$R" && grep -q '0 pending entries' "$T/apply.err" || fail "$mode: rerun: $(cat "$T/apply.err")"
	echo "ok: $mode: root applied them; verify --rpmdb and evmctl accept every file"
done

# Images ship as tar layers with security.* xattrs: the applied root round-trips.
R=$T/root-sign
F=$T/fresh
tar --xattrs --xattrs-include='security.*' -C "$R" -cf "$T/image.tar" . || fail "tar -c failed"
mkdir "$F"
tar --xattrs --xattrs-include='security.*' -C "$F" -xpf "$T/image.tar" || fail "tar -x failed"
verify_rpmdb "$F" || fail "the unpacked image fails verify --rpmdb: $(cat "$T/verify.out")"
evmctl verify --portable -k "$T/keys/rsa2048.der" "$F/opt/imstest/bin/tool" >"$T/evmctl.out" 2>&1 &&
	evmctl ima_verify -k "$T/keys/rsa2048.der" "$F/opt/imstest/bin/tool" >>"$T/evmctl.out" 2>&1 ||
	fail "evmctl refuses the unpacked image's tool: $(cat "$T/evmctl.out")"
echo "ok: a tar --xattrs of the applied root unpacks into a root verify --rpmdb and evmctl accept"

# Exported from the namespace (as podman export does: owners as the image has them),
# unpacked as root, then applied there: every object's owner is the header's.
R=$T/root-export
builder_root "$R"
ns_rpm "$R" sign -i "$v1" "$extra" || fail "export: the rootless build failed"
as_builder tar --xattrs --xattrs-include='security.*' -C "$R" -cf - . >"$T/export.tar" || fail "tar in the namespace failed"
F=$T/from-export
mkdir "$F"
tar --xattrs --xattrs-include='security.*' -C "$F" --same-owner -xpf "$T/export.tar" || fail "unpacking the export failed"
[ "$(stat -c %u "$F/opt/imstest")" = 0 ] || fail "the export does not carry the image's owners"
apply "$F" || fail "export: apply failed: $(cat "$T/apply.err")"
verify_rpmdb "$F" || fail "export: verify --rpmdb: $(cat "$T/verify.out")"
echo "ok: exported from the namespace, unpacked and applied as root: verify --rpmdb accepts it"

# userns_xattrs = error: the first refusal fails the transaction, as outside a namespace.
R=$T/root-error
builder_root "$R"
ns_rpm "$R" hash --define '_imastream_userns_xattrs error' -i "$v1" &&
	fail "userns_xattrs error installed"
grep -q 'cannot set security.ima: Operation not permitted' "$T/rpm.stderr" ||
	fail "userns_xattrs error: no refusal line"
[ ! -e "$R/var/lib/imastream/pending" ] || fail "userns_xattrs error kept labels pending"
echo "ok: userns_xattrs error fails the transaction"

# userns_xattrs = skip: rpm's own behaviour, with one warning for the transaction.
R=$T/root-skip
builder_root "$R"
ns_rpm "$R" hash --define '_imastream_userns_xattrs skip' -i "$v1" "$extra" ||
	fail "userns_xattrs skip failed"
[ "$(grep -c 'userns_xattrs = skip' "$T/rpm.stderr")" = 1 ] ||
	fail "userns_xattrs skip: not one warning: $(cat "$T/rpm.stderr")"
[ ! -e "$R/var/lib/imastream/pending" ] || fail "userns_xattrs skip kept labels pending"
! has_ima "$R/opt/imstest/bin/tool" || fail "skip wrote security.ima?"
echo "ok: userns_xattrs skip installs without labels, one warning"

# Outside a user namespace an EPERM stays an error: root without CAP_SYS_ADMIN.
R=$T/root-nocap
new_root "$R"
setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin \
	rpm --root "$R" --dbpath /var/lib/rpm --nodeps --noscripts \
	--define "__plugindir $top_builddir/.libs" --define "_imastream_config %{nil}" \
	--define "__transaction_imastream $SO" -i "$v1" >"$T/rpm.out" 2>"$T/rpm.err" &&
	fail "an EPERM outside a user namespace was not an error"
grep -q 'cannot set security.ima: Operation not permitted' "$T/rpm.err" ||
	fail "no refusal line outside a user namespace: $(cat "$T/rpm.err")"
[ ! -e "$R/var/lib/imastream/pending" ] || fail "labels kept pending outside a user namespace"
echo "ok: outside a user namespace an EPERM fails the transaction"
echo PASS
