#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /etc/init.d/rc.live of the test system (live-image.sh): busybox init runs it at boot.
# It mounts the pseudo filesystems, unpacks the job of this boot (a tar archive on the
# second disk, /dev/vdb) into /run/job, runs its job.sh with the results port (the second
# serial port, /dev/ttyS1) on fd 3, and powers off: one job per boot.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -o remount,rw /
busybox hostname -F /etc/hostname
echo 0 >/proc/sys/kernel/printk_ratelimit
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
mkdir -p /run/job
if tar -xf /dev/vdb -C /run/job 2>/run/tar.err && [ -f /run/job/job.sh ]; then
	echo "BOOTED $(cut -d' ' -f1 /proc/uptime)" >&3
	(cd /run/job && sh ./job.sh)
else
	echo "HARNESS ERROR no job on /dev/vdb: $(cat /run/tar.err)" >&3
fi
echo "DONE" >&3
# A job that simulates a power cut has already stopped the machine.
sync
busybox poweroff -f
