#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /usr/libexec/imastream-image/run-job of the rpm-only test system (rpm-image.sh), run by
# systemd once multi-user.target is reached: unpacks this boot's job (a tar archive on
# the second disk, /dev/vdb) into /run/job, runs its job.sh with the results port (the
# second serial port) on fd 3, and powers off.
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
# When multi-user.target was reached, in seconds since the kernel started.
at=$(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target)
echo "BOOTED $(echo "$at" | awk '{ printf "%.2f", $1 / 1000000 }')" >&3
mkdir -p /run/job
if tar -xf /dev/vdb -C /run/job 2>/run/tar.err && [ -f /run/job/job.sh ]; then
	(cd /run/job && sh ./job.sh)
else
	echo "HARNESS ERROR no job on /dev/vdb: $(cat /run/tar.err)" >&3
fi
echo "DONE" >&3
sync
systemctl poweroff --force --force
