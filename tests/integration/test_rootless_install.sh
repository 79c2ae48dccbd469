#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A rootless image build with imastream install: an unprivileged user in unshare -r installs in hash and sign mode with EVM on, the labels go pending with one line, root applies them, and verify --root and evmctl accept every labelled file.
set -u
. "$top_srcdir/tests/integration/rootless-lib.sh"
rootless_setup

v1=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
extra=$(build_pkg "$top_srcdir/tests/rpm/imsextra.rpmspec" 1.0)
chmod -R a+rX "$T/topdir"

for mode in hash sign; do
	R=$T/root-$mode
	builder_root "$R"
	ns_install "$R" "$mode" "$v1" "$extra" || fail "$mode: the rootless install failed"
	[ "$(grep -c 'security xattrs pending' "$T/install.err")" = 1 ] &&
		grep -q "7 files have 14 security xattrs pending .*imastream relabel --pending --root $R\$" \
			"$T/install.err" || fail "$mode: not one pending line with the count and command"
	! has_ima "$R/opt/imstest/bin/tool" || fail "$mode: a namespace wrote security.ima?"
	"$IMS" verify --root "$R" -t "$T/keys/rsa2048.crt" --evm require >"$T/verify.out" 2>&1 &&
		fail "$mode: verify --root passed before the labels were applied"
	apply "$R" || fail "$mode: apply failed"
	grep -q '7 pending entries: 7 files labelled' "$T/apply.err" || fail "$mode: apply summary"
	[ "$(stat -c '%u:%g %a' "$R/opt/imsextra/bin/helper")" = "0:0 4755" ] ||
		fail "$mode: the setuid helper is $(stat -c '%u:%g %a' "$R/opt/imsextra/bin/helper")"
	# Files: every labelled one verifies (directories and symlinks keep the build's owner
	# in place; the export flow of docs/SETUP.md gives them the image's).
	"$IMS" verify --root "$R" -t "$T/keys/rsa2048.crt" --evm require >"$T/verify.out" 2>&1
	# (verify names paths with or without the root in front: either is taken.)
	grep ': FAIL' "$T/verify.out" |
		grep -vE '/opt/(imstest|imstest/bin|imstest/data|imstest/tool-link|imsextra|imsextra/bin|imsextra/share): ' &&
		fail "$mode: labelled files fail verify --root"
	for f in opt/imstest/bin/tool opt/imsextra/bin/helper opt/imsextra/share/b; do
		grep -q "/$f: OK" "$T/verify.out" || fail "$mode: $f not OK: $(cat "$T/verify.out")"
		evmctl verify --portable -k "$T/keys/rsa2048.der" "$R/$f" >"$T/evmctl.out" 2>&1 ||
			fail "$mode: evmctl refuses $f: $(cat "$T/evmctl.out")"
	done
	echo "ok: $mode: imastream install in a user namespace, labels applied by root, verified"
done

# Exported from the namespace and unpacked as root: every object, directories included.
R=$T/root-export
builder_root "$R"
ns_install "$R" sign "$v1" "$extra" || fail "export: the rootless install failed"
as_builder tar --xattrs --xattrs-include='security.*' -C "$R" -cf - . >"$T/export.tar" || fail "tar in the namespace failed"
F=$T/from-export
mkdir "$F"
tar --xattrs --xattrs-include='security.*' -C "$F" --same-owner -xpf "$T/export.tar" || fail "unpacking the export failed"
apply "$F" || fail "export: apply failed"
"$IMS" verify --root "$F" -t "$T/keys/rsa2048.crt" --evm require >"$T/verify.out" 2>&1 ||
	fail "export: verify --root: $(cat "$T/verify.out")"
echo "ok: exported from the namespace, unpacked and applied as root: verify --root accepts all"
echo PASS
