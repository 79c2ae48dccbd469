#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The second boot's job of test_kernel_lifecycle.sh, on the disk the first boot left:
# reboot (the new boot's list against the policy of the system as it now is), then
# rollback-after-reboot (the copy of the old, validly signed udevadm put back and run);
# then what power-cut-recovered starts from: the damage of both boots mended, the cut
# package's version 0 installed, its upgrade cut (cut-lib.sh: the host kills the machine).
. ./guest-lib.sh
. ./lifecycle-lib.sh
. ./params.sh
. ./cut-lib.sh

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
if breaks trust-rollback; then
	view rollback-after-reboot --trust /etc/keys/imastream/ima.crt
else
	view rollback-after-reboot
fi

# The administrator mends what the failing stages broke: the changed packages reinstalled
# (udev at its upgraded release, rpm and base-files as installed), libgomp1 installed
# again (dnf-erase took it, and python3-rpm's module needs it: dnf failed), the edited
# /etc/issue.net accepted (%config(noreplace): a reinstall keeps it), the unsigned copy
# removed; then rpm's database verifies (but for the files the system writes itself), and
# the next boots start from a clean system.
out=$(rpm -U --replacepkgs /run/job/repo/udev-[0-9]*.rpm /run/job/mend/*.rpm 2>&1)
rc=$?
report power-cut-recovered:mend-reinstall "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: $(echo "$out" | tail -n 2)"
out=$(imastream relabel --root / --mode sign -k /etc/keys/imastream/ima.key -c /etc/keys/imastream/ima.crt \
	--evm portable -o config_files=yes -o config_evm=none --accept-config /etc/issue.net 2>&1)
rc=$?
report power-cut-recovered:mend-accept "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: $(echo "$out" | tail -n 2)"
rm -f /usr/local/bin/lifecycle-unsigned
left=$(verify_unexplained)
report power-cut-recovered:mended "$( [ -z "$left" ] && echo PASS || echo FAIL)" \
	"verify --rpmdb names nothing beyond what the system changes itself${left:+, but $(echo "$left" | tr '\n' ' ')}"

# The cut: imastream-cut 0 installed by rpm with the plugin and run, then rpm -U of
# version 1 stopped at its 30th write into a temp file (of about 118: the 1 MiB file
# streaming; the database names version 0, signed temp files wait beside version 0's
# files) while the host kills qemu. This boot ends there. (A cut in the renames leaves
# the temp file of the path new in version 1 beside no package's file: recover --trust
# reads it to check its signature, the kernel measures that read, and no policy holds
# its temp name, so that boot cannot attest; tests/kernel/README.md.)
out=$(rpm -U /run/job/imastream-cut-0-1.noarch.rpm 2>&1 && imastream-cut)
rc=$?
report power-cut-recovered:installed-0 "$( [ "$out" = "imastream-cut 0" ] && echo PASS || echo FAIL)" "exit $rc: $out"
cut_start rpm 1 write:30
