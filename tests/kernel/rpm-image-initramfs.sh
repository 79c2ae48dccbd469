#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes the initramfs that boots the rpm-only system (rpm-image.sh): static busybox,
# live-init.sh as /init (what initramfs-tools does: the disk's modules, the root's
# local-bottom scripts, switch_root), the virtio and ext4 modules of KERNEL in the order
# modprobe --show-depends gives.
#
# Usage: rpm-image-initramfs.sh KERNEL BUSYBOX OUT
#   KERNEL   /boot/vmlinuz-VERSION, or one unpacked by fetch-kernel.sh (its modules beside)
#   BUSYBOX  a static busybox
# Exits 0, or 1 with one line naming the step that failed.
set -uo pipefail

[ $# = 3 ] || { echo "usage: rpm-image-initramfs.sh KERNEL BUSYBOX OUT" >&2; exit 2; }
kernel=$1 busybox=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "rpm-image-initramfs: $*" >&2; exit 1; }
kver=${kernel##*/vmlinuz-}
modbase=$(cd "$(dirname "$kernel")/.." && pwd)
[ -d "$modbase/lib/modules/$kver" ] || modbase=/
ird=$(mktemp -d) || exit 1
trap 'rm -rf "$ird"' EXIT
mkdir -p "$ird/bin" "$ird/lib/modules" && cp "$busybox" "$ird/bin/busybox" &&
	install -m 0755 "$here/live-init.sh" "$ird/init" || die "cannot lay out the initramfs"
modprobe -d "$modbase" -S "$kver" --show-depends -a virtio_pci virtio_blk ext4 >"$ird/deps" ||
	die "modprobe cannot resolve the disk's modules of $kver"
: >"$ird/modules.order"
while read -r verb path _; do
	[ "$verb" = insmod ] || continue
	base=$(basename "$path")
	case "$base" in
	*.ko.xz) o=${base%.xz}; xz -dc "$path" >"$ird/lib/modules/$o" ;;
	*.ko.zst) o=${base%.zst}; zstd -qdc "$path" >"$ird/lib/modules/$o" ;;
	*) o=$base; cp "$path" "$ird/lib/modules/$o" ;;
	esac || die "cannot copy $path"
	grep -qx "$o" "$ird/modules.order" || echo "$o" >>"$ird/modules.order"
done <"$ird/deps"
rm -f "$ird/deps"
(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$out" || die "cpio failed"
