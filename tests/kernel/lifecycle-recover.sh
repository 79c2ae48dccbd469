#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The third boot's job of test_kernel_lifecycle.sh, under enforcement after the power cut
# that ended the second boot: power-cut-recovered, the recovery docs/SETUP.md gives
# (imastream recover --rpmdb, then the transaction again), rpm's database verified, the
# programs run, the verifier's view. IMASTREAM_LIFECYCLE_BREAK=skip-recovery leaves the
# recovery out: verify and attest then name what the cut left.
. ./guest-lib.sh
. ./lifecycle-lib.sh
. ./params.sh
. ./cut-lib.sh

# What the cut left, seen without reading a file (a root read is measured): the database
# names version 0, temp files wait.
temps=$(find /usr /etc -xdev -type f -name '*;*' | wc -l)
v=$(rpm -q imastream-cut)
report power-cut-recovered:cut-left "$( [ "$v" = imastream-cut-0-1.noarch ] && echo PASS || echo FAIL)" "database: $v; $temps rpm temp files"
if ! breaks skip-recovery; then
	cut_recover
	rc=$?
	report power-cut-recovered:recover "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $recover_rc: $(tail -n 2 /run/recover.out)"
	out=$(cut_rerun rpm 1 2>&1)
	rc=$?
	report power-cut-recovered:again "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: $(echo "$out" | tail -n 2)"
fi
left=$(verify_unexplained)
report power-cut-recovered:verify "$( [ -z "$left" ] && echo PASS || echo FAIL)" \
	"verify --rpmdb names nothing beyond what the system changes itself${left:+, but $(echo "$left" | tr '\n' ' ')}"
left=$(find /usr /etc -xdev -type f \( -name '*;*' -o -name '.imastream-tmp-*' \) | head -n 3)
report power-cut-recovered:no-temp-files "$( [ -z "$left" ] && echo PASS || echo FAIL)" "$left"
# Every program of the transaction and of the recovery runs under enforcement.
out=$(imastream-cut 2>&1; rpm -q imastream-cut 2>&1; udevadm --version >/dev/null 2>&1 && echo udevadm)
report power-cut-recovered:runs "$( [ "$(echo "$out" | tr '\n' ' ')" = "imastream-cut 1 imastream-cut-1-1.noarch udevadm " ] && echo PASS || echo FAIL)" "$out"
view power-cut-recovered
