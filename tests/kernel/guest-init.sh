#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the kernel-test initramfs: loads modules and keys, switches EVM on, mounts the
# disk under test at /mnt and runs /checks.sh there, then powers the VM off.
#
# Runs under busybox (installed by vm-check.sh as /bin/busybox). The initramfs itself is
# tmpfs/ramfs, which appraise_tcb never appraises, so everything here runs unlabelled;
# only files on the ext4 disk (/dev/vda) are judged by IMA and EVM.
#
# Results go to the second serial port (/dev/ttyS1), which the host reads as a file:
#   HARNESS OK what          a setup step worked (informational)
#   HARNESS ERROR what       setup failed; the checks did not run (host exits 99)
#   CHECK name PASS|FAIL detail   written by /checks.sh through /guest-lib.sh
#   DONE                     the checks script returned
# Everything else (kernel messages, command output) goes to the console, ttyS0.

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /mnt
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/usr/local/bin
# Libraries of programs vm-check.sh --guest-bin copied in (the loader is at its own path).
export LD_LIBRARY_PATH=/usr/local/lib

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t securityfs securityfs /sys/kernel/security

# Without auditd the kernel prints audit records through printk_ratelimit() (10 per 5 s
# by default), and the checks read the appraisal causes from them: no rate limit here.
echo 0 >/proc/sys/kernel/printk_ratelimit

exec 3>/dev/ttyS1
# The results port is a plain 8250 UART: raw mode keeps the lines byte-exact.
stty -F /dev/ttyS1 raw -echo 2>/dev/null

# shellcheck source=tests/kernel/guest-lib.sh
. /guest-lib.sh

harness() {
	echo "HARNESS $*" >&3
	echo "HARNESS $*"
}

finish() {
	sync
	umount /mnt 2>/dev/null
	# The appraisal verdicts, for whoever reads the console log after a failure.
	echo "--- integrity messages ---"
	dmesg | grep -E 'integrity|ima|evm|audit' | tail -n 40
	poweroff -f
	# poweroff -f does not return; if it did, panic=-1 and -no-reboot end the VM.
	exit 1
}

fail() {
	harness "ERROR $*"
	finish
}

# Dependencies first: /modules.order was resolved on the host from modules.dep and
# modules.softdep (modprobe --show-depends), so plain insmod suffices.
while read -r mod; do
	[ -n "$mod" ] || continue
	out=$(insmod "/lib/modules/$mod" 2>&1) || case "$out" in
		*"File exists"*) ;;
		*) echo "init: insmod $mod: $out" ;;
	esac
done </modules.order

# The IMA policy users install (docs/ima-policy), loaded once as systemd would load
# /etc/ima/ima-policy; the kernel replaces its boot rules with it.
if [ -f /ima-policy ]; then
	cat /ima-policy >/sys/kernel/security/ima/policy ||
		fail "the kernel refused the IMA policy /ima-policy (see the console)"
	harness "OK policy $(grep -vc '^#' /ima-policy) rules"
fi

if [ -d /certs/ima ]; then
	/keyload _ima /certs/ima/*.der || fail "cannot load the IMA certificates into _ima"
	harness "OK keys _ima"
fi
# With /evm-late (vm-check.sh --evm-late) the checks script switches EVM on itself with
# evm_on, after the checks that need it off.
if [ -d /certs/evm ] && [ ! -e /evm-late ]; then
	evm_on || fail "$evm_error"
	harness "OK evm $(cat /sys/kernel/security/evm)"
fi

# virtio_blk probes asynchronously: give the disk a few seconds to appear.
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -b /dev/vda ] || fail "no /dev/vda (virtio_blk did not come up)"
mount -t ext4 /dev/vda /mnt || fail "cannot mount /dev/vda as ext4"
harness "OK mounted"

cd /mnt || fail "cannot enter /mnt"
ROOT=/mnt sh /checks.sh
echo "DONE" >&3
finish
