#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The second boot's job of test_kernel_lifecycle.sh, on the disk the first boot left:
# reboot (the new boot's list against the policy of the system as it now is), then
# rollback-after-reboot (the copy of the old, validly signed udevadm put back and run).
. ./guest-lib.sh
. ./lifecycle-lib.sh
. ./params.sh

report reboot:upgraded "$(rpm -q udev | grep -q "$bump" && echo PASS || echo FAIL)" "$(rpm -q udev libblkid1 imastream | tr '\n' ' ')"
report reboot:udevd "$(systemctl is-active -q systemd-udevd && echo PASS || echo FAIL)" "systemd-udevd $(systemctl is-active systemd-udevd)"
view reboot

# rollback-after-reboot: the old version, labels and all, copied beside and renamed over
# the package's path, runs (its signature is valid), and the verifier sees its digest.
# IMASTREAM_LIFECYCLE_BREAK=trust-rollback writes that policy with the signing key
# trusted, which lets every version it signed pass.
copy_labelled /var/tmp/udevadm.old /usr/bin/.udevadm.rollback && mv /usr/bin/.udevadm.rollback /usr/bin/udevadm
/usr/bin/udevadm --version >/dev/null
rc=$?
report rollback-after-reboot:runs "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: the old udevadm runs"
if [ "$brk" = trust-rollback ]; then
	view rollback-after-reboot --trust /etc/keys/imastream/ima.crt
else
	view rollback-after-reboot
fi
