#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Guest helpers of test_kernel_lifecycle.sh's boot jobs (sourced after guest-lib.sh):
# the verifier's view after a stage, the policy and the measurement list, left on the
# results disk (/dev/vdc, a tar archive written again after each stage) for the host.
mkdir -p /run/out
export PATH=/usr/sbin:/usr/bin

# view STAGE [OPTIONS...]: the policy as docs/SETUP.md has it written on the running
# system after each transaction, digests only (no signing key: a signed old version is
# then caught, imastream-policy(1), ROLLBACKS), with the shipped mutable-files list and
# the temp files of systemd-update-done (random names no list can hold), and OPTIONS;
# then the measurement list, read after the policy so that its own reads are in it, and
# the TPM's quote of it with the host's nonce for the stage (./nonces: "STAGE HEX" lines;
# guest-lib.sh's tpm_quote): the list sent is the one the quote covers.
view() {
	st=$1
	shift
	imastream policy keylime --root / --rpmdb --mutable /usr/share/imastream/mutable-files.conf \
		--exclude '^/(etc|var)/\.#\.updated' "$@" --output "/run/out/$st.policy.json" 2>"/run/out/$st.policy.err"
	rc=$?
	report "$st:policy" "$( [ $rc = 0 ] && echo PASS || echo FAIL)" "exit $rc: $(tail -n 2 "/run/out/$st.policy.err")"
	nonce=$(sed -n "s/^$st //p" ./nonces)
	if [ -n "$nonce" ] && tpm_quote "$nonce" "/run/q-$st"; then
		mkdir -p "/run/out/$st.quote" && cp "/run/q-$st/q.msg" "/run/q-$st/q.sig" "/run/q-$st/q.pcrs" \
			"/run/q-$st/ak.pem" "/run/out/$st.quote/" && cp "/run/q-$st/ascii" "/run/out/$st.list"
	else
		cat /sys/kernel/security/ima/ascii_runtime_measurements >"/run/out/$st.list"
	fi
	save
}

# not_runtime: the paths of stdin, one a line, but what a booted system changes itself:
# the files the shipped mutable-files list names (ld.so.cache, machine-id, rpm's
# database, imastream-mutable-files(5)), which differ from their packages as the
# verifier's policy expects, and the mount points /proc and /sys (the mode of the
# filesystem mounted there, not the packaged directory's).
not_runtime() {
	awk 'NR == FNR { if ($1 !~ /^#/ && NF >= 2) m[++n] = $2; next }
		$0 == "/proc" || $0 == "/sys" { next }
		{
			for (i = 1; i <= n; i++)
				if ($0 == m[i] || (m[i] ~ /\/$/ && index($0, m[i]) == 1)) next
			print
		}' /usr/share/imastream/mutable-files.conf -
}

# verify_unexplained: imastream verify --rpmdb of the whole system (its output in
# /run/verify.out), then each path it names (FAIL or CONFIG) beyond what the system changes itself:
# nothing when the system verifies; a line when verify could not check.
verify_unexplained() {
	imastream verify --root / --rpmdb --trust /etc/keys/imastream/ima.crt >/run/verify.out 2>&1
	v_rc=$?
	# 1 failures, 4 edited %config files; anything else is verify not having checked.
	case $v_rc in 0 | 1 | 4) ;; *) echo "(verify exit $v_rc: $(tail -n 1 /run/verify.out))" ;; esac
	sed -n 's/: \(FAIL\|CONFIG\): .*//p' /run/verify.out | not_runtime
}

# breaks WORD: IMASTREAM_LIFECYCLE_BREAK (params.sh's brk) names WORD.
breaks() {
	case " $brk " in *" $1 "*) return 0 ;; esac
	return 1
}

# copy_labelled SRC DST: a copy of SRC with its mode, security.ima and then security.evm
# (cp -a leaves security.evm out: libattr's /etc/xattr.conf says skip).
copy_labelled() {
	python3 -c 'import os, shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])
shutil.copymode(sys.argv[1], sys.argv[2])
for x in ("security.ima", "security.evm"):
	os.setxattr(sys.argv[2], x, os.getxattr(sys.argv[1], x))' "$1" "$2"
}

# save: every file of /run/out to the results disk, whole.
save() {
	tar -cf /run/out.tar -C /run/out . && dd if=/run/out.tar of=/dev/vdc bs=1M conv=fsync status=none
}
