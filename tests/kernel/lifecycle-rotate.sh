#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fourth boot's job of test_kernel_lifecycle.sh (ima_appraise=fix evm=fix): the key
# rotation of docs/SETUP.md with scripts/ima-rollout, a new key enrolled beside the first,
# everything the new certificate does not verify signed again, the old certificate
# retired from the next boot's keyrings. No verdict in this boot: key-rotated is judged in
# the next, with only the new key loaded. IMASTREAM_LIFECYCLE_BREAK=skip-relabel leaves
# ima-rollout label out.
. ./guest-lib.sh
. ./lifecycle-lib.sh
. ./params.sh

# step NAME CMD...: CMD run, one check named key-rotated:NAME.
step() {
	n=$1
	shift
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | tail -n 20
	report "key-rotated:$n" "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: $(echo "$out" | tail -n 2)"
}
# setup (the first call) writes the new certificate over ima.crt: the old one kept to retire.
cp /etc/keys/imastream/ima.crt /run/old.crt
step enrol sh ./ima-rollout setup --key ./new.key --cert ./new.crt --policy ./ima-policy
n=$(ls /etc/keys/ima/*.der | wc -l)
report key-rotated:both-enrolled "$( [ "$n" = 2 ] && echo PASS || echo FAIL)" "$n certificates in /etc/keys/ima"
# label exits 1 on a running system: relabel names, as rpm -V does, the files that differ
# from their packages, here what the running system changed (not_runtime) and the key
# files setup replaced (the image's package holds the first ones); anything else named,
# or a failed signing, fails the step.
if ! breaks skip-relabel; then
	out=$(sh ./ima-rollout label --trust ./new.crt 2>&1)
	rc=$?
	echo "$out" | tail -n 20
	odd=$(echo "$out" | awk 'length($1) == 9 && $1 ~ /^[.SM5DLUGTP]+$/ { print $NF }' | grep -v -x '/etc/keys/imastream/ima\.\(crt\|key\)' | not_runtime)
	ok=FAIL
	case $rc in
	0) ok=PASS ;;
	1) echo "$out" | grep -q 'ima-rollout: labelled; ' && ! echo "$out" | grep -q 'sign failed' && [ -z "$odd" ] && ok=PASS ;;
	esac
	report key-rotated:label $ok "exit $rc${odd:+, named beyond what the system changes itself: $(echo "$odd" | tr '\n' ' ')}: $(echo "$out" | tail -n 1)"
fi
step retire sh ./ima-rollout setup --key ./new.key --cert ./new.crt --policy ./ima-policy --retire /run/old.crt
left=$(ls /etc/keys/ima)
report key-rotated:old-retired "$( [ "$left" = "$(imastream keys id --cert ./new.crt).der" ] && echo PASS || echo FAIL)" "left: $left"
# The image's package holds as %config files what setup rewrote (the key files, the
# policy, the initramfs hook): the administrator accepts each file verify names that a
# package holds (as config-accepted), so that a read of the new key is one the verifier's
# policy holds. The new certificate in /etc/keys/ima belongs to no package; the retired
# one, the image's, is gone.
accept=$(verify_unexplained | while read -r p; do
	[ -e "$p" ] && rpm -qf "$p" >/dev/null 2>&1 && printf ' --accept-config %s' "$p"
done)
# relabel exits 1 when its package holds files the system changed itself (as label).
# shellcheck disable=SC2086 # $accept is options
out=$(imastream relabel --root / --mode sign -k /etc/keys/imastream/ima.key -c /etc/keys/imastream/ima.crt \
	--evm portable -o config_files=yes -o config_evm=portable $accept 2>&1)
rc=$?
echo "$out" | tail -n 20
odd=$(echo "$out" | awk 'length($1) == 9 && $1 ~ /^[.SM5DLUGTP]+$/ { print $NF }' | not_runtime)
ok=FAIL
case $rc in
0) ok=PASS ;;
1) echo "$out" | grep -q ' 0 failed;' && [ -z "$odd" ] && ok=PASS ;;
esac
report key-rotated:accept-config $ok "exit $rc${odd:+, named beyond what the system changes itself: $(echo "$odd" | tr '\n' ' ')}: $(echo "$out" | tail -n 1)"
