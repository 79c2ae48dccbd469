#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel acceptance of trees an installer wrote: installs a package with real programs
# (tests/kernel/kbox.rpmspec) through INSTALLER in each mode, then boots once to let the
# kernel judge all the trees.
#
# Usage: installed-tree.sh rpm|imastream      (run by test_kernel_rpm.sh and
#                                              test_kernel_install.sh under make check)
#   rpm        stock rpm -i --root DIR with imastream.so from the build tree, set up by
#              %_imastream_* macros (plugin/README-rpm.md)
#   imastream  imastream install --root DIR (the streaming installer)
#
# Trees (one install each; appraise-tree.sh adds the controls, see tests/kernel/README.md):
#   hash        IMA hashes, sha256               hash mode
#   imasig      IMA signatures, sha256           EVM none
#   evm         IMA + EVM portable signatures    sha256
#   evm-sha512  the same with sha512             (a module on Debian's 6.1 kernel)
#   rootless    built by nobody in unshare -r, sign + EVM portable, its pending labels
#               then written by root with imastream relabel --pending
#   relabel     (rpm only) installed by rpm --noplugins, hello.sh then modified, then
#               imastream relabel in sign + EVM portable mode: busybox runs, the
#               modified hello.sh, reported and left unlabelled, is refused
# Programs: usr/bin/busybox (static ELF) and usr/libexec/kbox/hello.sh (a script).
# Keys: RSA-2048 (Debian's 6.1 kernel has no ECDSA), certificate with SKID by hash.
# Exit: 0, 1 (a check failed), 77 (skipped, with the reason), 99 (error).
set -uo pipefail

installer=${1:-}
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
kdir=$srcdir/tests/kernel
imastream=$builddir/imastream
so=$builddir/.libs/imastream.so

skip() { echo "SKIP: $*"; exit 77; }
error() { echo "ERROR: $*"; exit 99; }

case "$installer" in
rpm | imastream) ;;
*) error "usage: installed-tree.sh rpm|imastream" ;;
esac

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
command -v openssl >/dev/null || skip "openssl not found"
command -v rpmbuild >/dev/null || skip "rpmbuild not found (package rpm)"
[ -x "$imastream" ] || error "$imastream not built"
case "$installer" in
rpm)
	command -v rpm >/dev/null || skip "rpm not found"
	[ -f "$so" ] || error "$so not built"
	# rpm cannot load a sanitizer build of the plugin (see tests/integration/rpm-lib.sh).
	! ldd "$so" 2>/dev/null | grep libasan >/dev/null || skip "rpm cannot load a sanitizer build of imastream.so"
	;;
imastream)
	"$imastream" install --help >/dev/null 2>&1 ||
		skip "this build of imastream has no 'install' command yet (issue 5)" ;;
esac
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
busybox=$(static_busybox) || skip "no static busybox to package (package busybox-static)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernel-$installer.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

make_key "$tmp" trusted || exit 99

rpmbuild -bb --quiet --nodeps --define "_topdir $tmp/topdir" --define "busybox $busybox" \
	"$kdir/kbox.rpmspec" >"$tmp/rpmbuild.log" 2>&1 || { cat "$tmp/rpmbuild.log"; exit 99; }
pkg=$(find "$tmp/topdir/RPMS" -name 'imastream-kbox-*.rpm' | head -n 1)
[ -f "$pkg" ] || error "rpmbuild made no package"

# install ROOT MODE EVM ALGO: one install of the package into the empty ROOT.
install_pkg() {
	local root=$1 mode=$2 evm=$3 algo=$4 log=$tmp/install.log
	mkdir -p "$root" || exit 99
	case "$installer" in
	rpm)
		local defs=(--define "_imastream_mode $mode" --define "_imastream_hash_algo $algo"
			--define "_imastream_evm $evm")
		[ "$mode" = hash ] || defs+=(--define "_imastream_key $tmp/trusted.pem"
			--define "_imastream_cert $tmp/trusted.der")
		# Debian's %__plugindir does not exist: point discovery at the build tree.
		rpm --root "$root" --dbpath /var/lib/rpm --nodeps \
			--define "__plugindir $builddir/.libs" \
			--define "__transaction_imastream $so" "${defs[@]}" -i "$pkg" ;;
	imastream)
		local opts=(--mode "$mode" -a "$algo" --evm "$evm")
		[ "$mode" = hash ] || opts+=(--key "$tmp/trusted.pem" --cert "$tmp/trusted.der")
		# The test package has no header signature.
		"$imastream" install --root "$root" --allow-unsigned --quiet "${opts[@]}" "$pkg" ;;
	esac >"$log" 2>&1 || {
		echo "$installer install ($mode, evm $evm, $algo) into $root failed:"
		grep -v -e 'should not be used directly' -e 'know what you are doing' "$log"
		exit 99
	}
}

programs=(--exec 'usr/bin/busybox true' --exec 'usr/libexec/kbox/hello.sh')
trees=()
while read -r tag mode evm algo kmode; do
	install_pkg "$tmp/$tag" "$mode" "$evm" "$algo"
	# The control for the %config check: the same file without any label (cp keeps none).
	cp "$tmp/$tag/etc/kbox.conf" "$tmp/$tag/etc/kbox-unlabelled.conf" || exit 99
	trees+=(--root "$tmp/$tag" --mode "$kmode" --tag "$tag" "${programs[@]}")
done <<'TREES'
hash       hash none     sha256 hash
imasig     sign none     sha256 imasig
evm        sign portable sha256 evm
evm-sha512 sign portable sha512 evm
TREES

# A tree built without root (nobody in unshare -r), its pending labels written by root
# (tests/kernel/rootless-tree.sh): the kernel appraises it like the evm tree.
# shellcheck source=tests/kernel/rootless-tree.sh
. "$kdir/rootless-tree.sh"
why=$(rootless_why)
if [ -z "$why" ]; then
	rootless_tree "$tmp/rootless" || exit 99
	cp "$tmp/rootless/etc/kbox.conf" "$tmp/rootless/etc/kbox-unlabelled.conf" || exit 99
	trees+=(--root "$tmp/rootless" --mode evm --tag rootless "${programs[@]}")
	rootless_tree_tag=rootless
else
	echo "note: no rootless tree in this boot: $why"
fi

# A root stock rpm installed without the plugin, one program changed afterwards, then
# relabelled: the changed file is named (rpm -V letters), not labelled, so the kernel
# refuses it (missing-hash) while what matched its header runs. Same boot, one more tree.
evm_config_trees="evm evm-sha512${rootless_tree_tag:+ $rootless_tree_tag}"
if [ "$installer" = rpm ]; then
	root=$tmp/relabel
	mkdir -p "$root" || exit 99
	# rpm's own %_dbpath below the root, which relabel reads as rpm does.
	rpm --root "$root" --nodeps --noplugins -i "$pkg" >"$tmp/install.log" 2>&1 ||
		{ grep -v -e 'should not be used directly' -e 'know what you are doing' "$tmp/install.log"; exit 99; }
	echo "# changed after install" >>"$root/usr/libexec/kbox/hello.sh" || exit 99
	# An mtime of its own: the package's is the build's second, which a quick machine
	# shares with the edit (T or not would then depend on the machine's speed).
	touch -d @946684800 "$root/usr/libexec/kbox/hello.sh" || exit 99
	"$imastream" relabel --root "$root" --quiet --mode sign --evm portable \
		--key "$tmp/trusted.pem" --cert "$tmp/trusted.der" >"$tmp/relabel.out" 2>&1
	rc=$?
	[ "$rc" = 1 ] && grep -qx 'S\.\{6\}T\.   /usr/libexec/kbox/hello.sh' "$tmp/relabel.out" ||
		{ cat "$tmp/relabel.out"; error "relabel did not name the changed hello.sh (exit $rc)"; }
	trees+=(--root "$root" --mode evm --tag relabel --exec 'usr/bin/busybox true'
		--deny 'usr/libexec/kbox/hello.sh' --cause missing-hash)
	evm_config_trees="$evm_config_trees relabel"
fi

# The %config file (config_files = hash: a digest even in sign mode) can be read, which
# appraise_tcb checks on every open of a root-owned file; its unlabelled copy cannot.
cat >"$tmp/config.sh" <<'GUEST'
for t in hash imasig; do
	expect_reads "$t-config-read" "$t/etc/kbox.conf"
	expect_read_denied "$t-config-unlabelled" missing-hash "$t/etc/kbox-unlabelled.conf"
done
GUEST
cat >"$tmp/config-evm.sh" <<GUEST
for t in $evm_config_trees; do
	expect_reads "\$t-config-read" "\$t/etc/kbox.conf"
done
GUEST

"$kdir/appraise-tree.sh" --ima-cert "$tmp/trusted.der" --name "test_kernel_$installer" \
	--guest-checks "$tmp/config.sh" --guest-checks-evm "$tmp/config-evm.sh" "${trees[@]}"
