#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A real kernel judges the bytes xattr/ and imastream hash write: hashes (types 1 and 4),
# IMA signatures (type 3) and EVM portable signatures (type 5) over our EVM digest.
#
# Same harness as tests/kernel/test_kernel_evmctl.sh (one VM boot for the three modes,
# appraisal enforced), with the labels written by imastream instead of evmctl: `imastream hash`
# for the hash mode, the xattr_label helper (xattr/ API + OpenSSL signing) for the others.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
: "${top_builddir:?run through make check}"
kdir=$srcdir/tests/kernel
label_bin=$top_builddir/tests/integration/xattr_label
bin=$top_builddir/imastream

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
busybox=""
for b in /bin/busybox /usr/bin/busybox; do
	[ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1 && { busybox=$b; break; }
done
[ -n "$busybox" ] || { echo "SKIP: no static busybox to use as the test program"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_xattr_kernel.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
make_key "$tmp" trusted && make_key "$tmp" foreign || exit 99

install_program() {
	mkdir -p "$(dirname "$1/$2")" && install -m 0755 -o 0 -g 0 "$busybox" "$1/$2" || exit 99
}

# label MODE KEY ALGO FILE
label() {
	if [ "$1" = hash ]; then
		"$bin" hash -a "$3" "$4" >"$tmp/label.log" 2>&1
	else
		"$label_bin" "$1" "$tmp/$2.pem" "$tmp/$2.der" "$3" "$4" >"$tmp/label.log" 2>&1
	fi || { echo "labelling $4 ($1, $3) failed:"; cat "$tmp/label.log"; exit 99; }
}

# One boot for the three trees: hash and imasig with EVM off, then evm with EVM on.
trees=()
for mode in hash imasig evm; do
	root=$tmp/root-$mode
	install_program "$root" usr/bin/busybox
	label $mode trusted sha256 "$root/usr/bin/busybox"
	trees+=(--root "$root" --mode $mode --exec 'usr/bin/busybox true')
	# The kernel follows the algorithm in the xattr: sha512 (type 4 / sigs), and in hash
	# mode sha1 (legacy type 1, told apart by length).
	for alg in sha512 $([ $mode = hash ] && echo sha1); do
		install_program "$root" opt/$alg/busybox
		label $mode trusted $alg "$root/opt/$alg/busybox"
		trees+=(--exec "opt/$alg/busybox true")
	done
	case $mode in
	imasig)
		install_program "$root" opt/foreign/busybox
		label imasig foreign sha256 "$root/opt/foreign/busybox"
		trees+=(--deny 'opt/foreign/busybox true' --cause invalid-signature) ;;
	evm)
		install_program "$root" opt/foreign/busybox
		label evm foreign sha256 "$root/opt/foreign/busybox"
		trees+=(--deny 'opt/foreign/busybox true' --cause invalid-fail-immutable) ;;
	esac
done
"$kdir/appraise-tree.sh" --ima-cert "$tmp/trusted.der" --name test_xattr_kernel "${trees[@]}"
