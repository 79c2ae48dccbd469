#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The first boot's job of test_kernel_lifecycle.sh, run by the rpm-only system's job unit
# once multi-user.target is reached: each stage changes the system as an administrator
# would, then leaves the verifier's view (view, lifecycle-lib.sh). The stages the
# verifier must pass come first: a failing entry stays in the list until the reboot.
. ./guest-lib.sh
. ./lifecycle-lib.sh
. ./params.sh

# first-boot: the system as installed. hostname (erased later) runs, and a copy of
# udevadm with its labels is kept for rollback-after-reboot (/var/tmp: state).
report first-boot:pid1 "$( [ "$(cat /proc/1/comm)" = systemd ] && echo PASS || echo FAIL)" "PID 1 is $(cat /proc/1/comm)"
hostname >/dev/null
copy_labelled /usr/bin/udevadm /var/tmp/udevadm.old
report first-boot:rollback-kept "$(python3 -c 'import os, sys; os.getxattr(sys.argv[1], "security.evm")' /var/tmp/udevadm.old 2>/dev/null && echo PASS || echo FAIL)" \
	"a copy of udevadm $(rpm -q udev) with its security.evm"
view first-boot

# services-running: every start job of the boot done (but this one's: the system counts
# as starting until it ends), udevd and journald restarted, udev replays its rules.
i=0
while [ -n "$(systemctl list-jobs --no-legend | grep -v imastream-image-job)" ] && [ $i -lt 120 ]; do
	sleep 1
	i=$((i + 1))
done
systemctl restart systemd-udevd systemd-journald
udevadm trigger --settle >/dev/null 2>&1
failed=$(systemctl list-units --state=failed --no-legend --plain | cut -d' ' -f1 | tr '\n' ' ')
report services-running:settled "$( [ -z "$(systemctl list-jobs --no-legend | grep -v imastream-image-job)" ] && echo PASS || echo FAIL)" \
	"no start job left after $i s; failed units: $failed"
report services-running:udevd "$(systemctl is-active -q systemd-udevd && systemctl is-active -q systemd-journald && echo PASS || echo FAIL)" \
	"systemd-udevd $(systemctl is-active systemd-udevd), systemd-journald $(systemctl is-active systemd-journald)"
view services-running

# dnf-upgrade-same-boot: udev (udevadm, the running udevd's program), libblkid1 (a
# library udevd has mapped) and imastream (the plugin doing the labelling) upgraded.
pid=$(systemctl show -P MainPID systemd-udevd)
dnf -y -q --setopt=reposdir=/dev/null --repofrompath=lifecycle,file:///run/job/repo --repo=lifecycle \
	--nogpgcheck upgrade udev libblkid1 imastream >/run/out/dnf-upgrade.log 2>&1
rc=$?
out=$(grep -i -e error -e fail /run/out/dnf-upgrade.log)
report dnf-upgrade-same-boot:dnf "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: $(echo "$out" | tail -n 3)"
vers=$(rpm -q udev libblkid1 imastream | tr '\n' ' ')
report dnf-upgrade-same-boot:versions "$( [ "$(echo "$vers" | grep -o "$bump" | wc -l)" = 3 ] && echo PASS || echo FAIL)" "$vers"
exe=$(readlink "/proc/$pid/exe")
maps=$(grep -c 'libblkid\.so\.1\.1\.0 (deleted)' "/proc/$pid/maps")
report dnf-upgrade-same-boot:in-use "$(case $exe in *' (deleted)') [ "$maps" -gt 0 ] && echo PASS || echo FAIL ;; *) echo FAIL ;; esac)" \
	"udevd $pid kept running: $exe, $maps mappings of the replaced libblkid"
systemctl restart systemd-udevd
udevadm --version >/dev/null
rc=$?
report dnf-upgrade-same-boot:new-runs "$( [ $rc = 0 ] && systemctl is-active -q systemd-udevd && echo PASS || echo FAIL)" \
	"udevadm --version exit $rc; systemd-udevd $(systemctl is-active systemd-udevd) as $(systemctl show -P MainPID systemd-udevd)"
view dnf-upgrade-same-boot

# dnf-erase: hostname (which ran) and libgomp1 (which only librpmbuild links) erased,
# by a transaction that maps the upgraded plugin.
out=$(dnf -y -q --setopt=reposdir=/dev/null remove hostname libgomp1 2>&1)
rc=$?
report dnf-erase:dnf "$( [ $rc = 0 ] && ! rpm -q hostname >/dev/null 2>&1 && [ ! -e /usr/bin/hostname ] && echo PASS || echo FAIL)" \
	"exit $rc: $(echo "$out" | tail -n 2); $(rpm -q hostname libgomp1 | tr '\n' ' ')"
view dnf-erase

# generated-files: ldconfig writes /etc/ld.so.cache anew (libgomp went), and the loader
# of the next program reads it.
sum=$(sha256sum /etc/ld.so.cache | cut -d' ' -f1)
ldconfig
true
report generated-files:changed "$( [ "$(sha256sum /etc/ld.so.cache | cut -d' ' -f1)" != "$sum" ] && echo PASS || echo FAIL)" \
	"/etc/ld.so.cache $sum before ldconfig"
view generated-files

# config-edited-reported: root edits a %config file nothing reads at boot; the
# verifier's view comes first (no one has read it yet), then verify --rpmdb names it as
# edited, with rpm -V's letters, and nothing else. Under this policy no kernel keeps the
# digest of an edited file (reads are measured, not appraised), so its signature no
# longer verifies: a FAIL line, exit 1, not the CONFIG line (exit 4) of an appraised one.
cfg=/etc/magic
pkg=$(rpm -qf --qf '%{NAME}\n' "$cfg")
printf '# edited by the administrator\n' >>"$cfg"
view config-edited-reported
out=$(imastream verify --root / --rpmdb --trust /etc/keys/imastream/ima.crt "$pkg" 2>&1)
rc=$?
named=$(echo "$out" | grep -e ': FAIL: ' -e ': CONFIG: ')
report config-edited-reported:verify "$(case $rc in 1 | 4) [ "$(echo "$named" | wc -l)" = 1 ] &&
	echo "$named" | grep -q "^$cfg: [A-Z]*: edited (S\.5\.\.\.\.T\. c)" && echo PASS || echo FAIL ;; *) echo FAIL ;; esac)" \
	"exit $rc: $named"

# config-accepted: relabel --accept-config, with the labelling the image's rpm does
# (/etc/rpm/macros.imastream*), makes the edit part of the system; it is read.
out=$(imastream relabel --root / --mode sign -k /etc/keys/imastream/ima.key -c /etc/keys/imastream/ima.crt \
	--evm portable -o config_files=yes -o config_evm=none --accept-config "$cfg" 2>&1)
rc=$?
report config-accepted:relabel "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: $(echo "$out" | tail -n 2)"
cat "$cfg" >/dev/null
out=$(imastream verify --root / --rpmdb --trust /etc/keys/imastream/ima.crt "$pkg" 2>&1)
rc=$?
report config-accepted:verify "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: $(echo "$out" | grep -e CONFIG -e FAIL | head -n 2)"
view config-accepted

# Then what the verifier must fail, each naming its file.
# config-edit-not-accepted: another %config file edited and read, not accepted.
printf '# edited, not accepted\n' >>/etc/issue.net
cat /etc/issue.net >/dev/null
view config-edit-not-accepted

# program-modified: a packaged program (a regular file, not a link) changed in place,
# then run: the kernel refuses it.
printf 'x' >>/usr/bin/rpmkeys
/usr/bin/rpmkeys --version >/dev/null 2>&1
rc=$?
report program-modified:refused "$( [ $rc = 126 ] && echo PASS || echo FAIL)" "exit $rc, cause $(audit_cause /usr/bin/rpmkeys)"
view program-modified

# unsigned-program-run: a root-owned copy without labels, run: refused, and measured.
mkdir -p /usr/local/bin && cp /usr/bin/true /usr/local/bin/lifecycle-unsigned
/usr/local/bin/lifecycle-unsigned
rc=$?
report unsigned-program-run:refused "$( [ $rc = 126 ] && echo PASS || echo FAIL)" "exit $rc, cause $(audit_cause /usr/local/bin/lifecycle-unsigned)"
view unsigned-program-run

# file-changed-outside-rpm: a packaged data file rewritten in place and read.
printf 'changed\n' >>/usr/share/common-licenses/GPL-3
cat /usr/share/common-licenses/GPL-3 >/dev/null
view file-changed-outside-rpm
