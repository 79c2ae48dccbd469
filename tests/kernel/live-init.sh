#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the initramfs that boots the test system of test_kernel_live.sh, doing what
# Debian's initramfs-tools does for it: load the disk's modules, mount the root at /root,
# run the root's local-bottom scripts (ima-rollout's hook: keys, EVM, IMA policy), and
# switch_root to its /sbin/init. The initramfs is a ramfs, never measured or appraised.
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /root
/bin/busybox --install -s
export PATH=/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r mod; do
	[ -z "$mod" ] || insmod "/lib/modules/$mod" 2>/dev/null
done </modules.order
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
mount -t ext4 -o ro /dev/vda /root || { echo "init: cannot mount /dev/vda"; poweroff -f; }
export rootmnt=/root
for s in /root/etc/initramfs-tools/scripts/local-bottom/*; do
	[ -f "$s" ] || continue
	echo "init: running ${s#/root}"
	sh "$s" || echo "init: ${s#/root} failed"
done
echo "init: evm=$(cat /sys/kernel/security/evm 2>/dev/null)"
umount /proc /sys/kernel/security 2>/dev/null
umount /sys
mount --move /dev /root/dev
exec switch_root /root /sbin/init
