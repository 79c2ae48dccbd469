#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fifth boot's job of test_kernel_lifecycle.sh, under enforcement with only the new
# key loaded (lifecycle-rotate.sh): key-rotated, every file verified against the new
# certificate alone (ima-rollout check), the programs run, the verifier's view, then a
# program the old key signed refused.
. ./guest-lib.sh
. ./lifecycle-lib.sh
. ./params.sh

new=$(imastream keys id --cert ./new.crt)
out=$(imastream-cut 2>&1; rpm -q imastream-cut 2>&1; udevadm --version >/dev/null 2>&1 && echo udevadm)
report key-rotated:runs "$( [ "$(echo "$out" | tr '\n' ' ')" = "imastream-cut 1 imastream-cut-1-1.noarch udevadm " ] && echo PASS || echo FAIL)" "$out"
mark=$(dmesg | wc -l)
out=$(dnf --version 2>&1)
rc=$?
report key-rotated:runs-dnf "$( [ $rc = 0 ] && echo PASS || echo FAIL)" \
	"exit $rc: $(echo "$out" | tail -n 2); refused: $(dmesg | tail -n +"$((mark + 1))" | grep -o 'cause=[^ ]* comm="[^"]*" name="[^"]*"' | sort -u | head -n 3)"
sig=$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "security.ima").hex())' /usr/bin/rpm 2>&1)
report key-rotated:signed-by-new "$(case $sig in 030204"$new"*) echo PASS ;; *) echo FAIL ;; esac)" "/usr/bin/rpm security.ima $(echo "$sig" | cut -c1-16)..."
view key-rotated

# After the view: ima-rollout check, every file verifies against the new certificate
# alone but what the system changes itself (not_runtime, lifecycle-lib.sh), the
# certificates the rotation added (no package's) and retired (missing) and the test's
# own labelled copy of the old udevadm. It
# reads the new certificate in
# /etc/keys/ima, which no package holds: no policy made from rpm's database can hold
# that read (tests/kernel/README.md).
out=$(sh ./ima-rollout check 2>&1)
rc=$?
odd=$(echo "$out" | sed -n 's/: FAIL: .*//p' | grep -v -x -e /var/tmp/udevadm.old -e '/etc/keys/ima/[0-9a-f]*\.der' | not_runtime)
report key-rotated:check "$( { [ $rc = 0 ] || { [ $rc = 1 ] && echo "$out" | grep -q ': FAIL: '; }; } && [ -z "$odd" ] && echo PASS || echo FAIL)" \
	"exit $rc${odd:+, failed beyond what the system changes itself: $(echo "$odd" | tr '\n' ' ')}: $(echo "$out" | tail -n 1)"

# Only the new key is loaded (the hook's _ima is not readable from a service): after the
# view, as a refused program is measured too, a copy of the old udevadm kept at the first
# boot, labelled by the old key, is run: the kernel refuses it.
if copy_labelled /var/tmp/udevadm.old /usr/local/bin/lifecycle-old-key 2>/run/copy.err; then
	/usr/local/bin/lifecycle-old-key --version >/dev/null 2>&1
	rc=$?
	report key-rotated:old-key-refused "$( [ $rc = 126 ] && echo PASS || echo FAIL)" "exit $rc, cause $(audit_cause /usr/local/bin/lifecycle-old-key)"
else
	report key-rotated:old-key-refused FAIL "cannot copy the old udevadm with its labels: $(tail -n 1 /run/copy.err)"
fi
