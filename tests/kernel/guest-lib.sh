#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Check helpers for scripts that vm-check.sh runs inside the VM: each prints one line
# "CHECK name PASS|FAIL detail" to the results port (fd 3) and to the console.
#
# A checks script starts with ". /guest-lib.sh" and finds the disk under test at $ROOT
# (/mnt, also the working directory). Names must be one word. The helpers decide from
# the exit status and the strerror() text busybox prints, so they need no extra tools:
#   exec refused by IMA/EVM appraisal: status 126, "Permission denied" (EACCES)
#   metadata change refused by EVM:    status 1,   "Operation not permitted" (EPERM)

# report NAME PASS|FAIL DETAIL...
report() {
	name=$1 verdict=$2
	shift 2
	# One line, bounded, whatever the command printed.
	detail=$(printf '%s' "$*" | tr '\n\r\t' '   ' | cut -c1-200)
	echo "CHECK $name $verdict $detail" >&3
	echo "CHECK $name $verdict $detail"
}

# expect_runs NAME CMD [ARGS...]: the program executes and exits 0.
expect_runs() {
	name=$1
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		report "$name" PASS "exit 0"
	else
		report "$name" FAIL "exit $rc: $out"
	fi
}

# audit_cause PATH: the cause= of the newest integrity audit record about PATH, e.g.
# missing-hash, invalid-hash, invalid-signature, missing-HMAC, invalid-HMAC. Without
# auditd the kernel prints those records to the log, where dmesg finds them.
# kauditd prints the records asynchronously, so give it up to two seconds to catch up.
# Records name the absolute path, except those written before IMA resolved it (e.g.
# op=collect_data cause=no-verity-digest), which name only the last component: those
# count when their ino= is PATH's inode.
audit_cause() {
	abs=$(readlink -f "$1" 2>/dev/null || echo "$1")
	ino=$(stat -c %i "$abs" 2>/dev/null)
	tries=0
	while :; do
		c=$(dmesg | grep -e "name=\"$abs\"" -e "name=\"${abs##*/}\" .* ino=$ino " |
			grep -o 'cause=[^ ]*' | tail -n 1 | cut -d= -f2)
		if [ -n "$c" ] || [ $tries -ge 20 ]; then break; fi
		tries=$((tries + 1))
		sleep 0.1
	done
	echo "$c"
}

# expect_reads NAME FILE: the file opens and reads (appraisal let it through).
expect_reads() {
	if out=$(cat "$2" 2>&1 >/dev/null); then
		report "$1" PASS "read"
	else
		report "$1" FAIL "cannot read: $out (cause=$(audit_cause "$2"))"
	fi
}

# expect_read_denied NAME CAUSE FILE: opening FILE fails with EACCES, and the kernel's
# audit record gives CAUSE.
expect_read_denied() {
	name=$1 want=$2
	out=$(cat "$3" 2>&1 >/dev/null)
	rc=$?
	cause=$(audit_cause "$3")
	case "$rc:$out" in
	0:*) report "$name" FAIL "read, although appraisal must refuse it" ;;
	*"Permission denied"*)
		if [ "$cause" = "$want" ]; then
			report "$name" PASS "EACCES cause=$cause"
		else
			report "$name" FAIL "EACCES but cause=${cause:-?}, expected $want"
		fi ;;
	*) report "$name" FAIL "expected EACCES, got exit $rc: $out" ;;
	esac
}

# expect_exec_denied NAME [--cause CAUSE] CMD [ARGS...]: execve fails with EACCES
# (appraisal refused it) and, with --cause, the kernel's audit record gives that cause.
expect_exec_denied() {
	name=$1 want=""
	shift
	if [ "$1" = --cause ]; then
		want=$2
		shift 2
	fi
	out=$("$@" 2>&1)
	rc=$?
	cause=$(audit_cause "$1")
	case "$rc:$out" in
	126:*"Permission denied"*)
		if [ -z "$want" ] || [ "$cause" = "$want" ]; then
			report "$name" PASS "EACCES cause=${cause:-?}"
		else
			report "$name" FAIL "EACCES but cause=${cause:-?}, expected $want"
		fi ;;
	*) report "$name" FAIL "expected EACCES, got exit $rc: $out" ;;
	esac
}

# expect_meta_denied NAME STATFMT CMD [ARGS...]: CMD (chmod, chown, ...) on the last
# argument fails with EPERM and stat -c STATFMT of it is unchanged afterwards.
expect_meta_denied() {
	name=$1 fmt=$2
	shift 2
	for path; do :; done # the last argument
	before=$(stat -c "$fmt" "$path" 2>&1)
	out=$("$@" 2>&1)
	rc=$?
	after=$(stat -c "$fmt" "$path" 2>&1)
	case "$rc:$out" in
	0:*) report "$name" FAIL "expected EPERM, but $* succeeded ($before -> $after)" ;;
	*"Operation not permitted"*)
		if [ "$before" = "$after" ]; then
			report "$name" PASS "EPERM, still $after"
		else
			report "$name" FAIL "EPERM reported but $before -> $after"
		fi ;;
	*) report "$name" FAIL "expected EPERM, got exit $rc: $out" ;;
	esac
}

# expect_meta_allowed NAME STATFMT WANT CMD [ARGS...]: CMD on the last argument succeeds
# and stat -c STATFMT of it then prints WANT.
expect_meta_allowed() {
	name=$1 fmt=$2 want=$3
	shift 3
	for path; do :; done # the last argument
	out=$("$@" 2>&1)
	rc=$?
	after=$(stat -c "$fmt" "$path" 2>&1)
	if [ $rc -eq 0 ] && [ "$after" = "$want" ]; then
		report "$name" PASS "now $after"
	else
		report "$name" FAIL "exit $rc, now $after (wanted $want): $out"
	fi
}

# evm_on: loads /certs/evm/*.der into _evm and switches EVM on with X.509 keys only (no
# HMAC key). Returns 1 with the reason in $evm_error if either step fails.
evm_on() {
	evm_error=""
	if ! /keyload _evm /certs/evm/*.der; then
		evm_error="cannot load the EVM certificates into _evm"
		return 1
	fi
	# 2 = EVM_INIT_X509: EVM on, verifying signatures with the _evm keys.
	if ! echo 2 >/sys/kernel/security/evm; then
		evm_error="cannot enable EVM (write 2 to securityfs evm)"
		return 1
	fi
}

# expect_evm_on NAME: evm_on, reported as a check (for checks scripts that switch EVM on
# between phases).
expect_evm_on() {
	if evm_on; then
		report "$1" PASS "evm=$(cat /sys/kernel/security/evm)"
	else
		report "$1" FAIL "$evm_error"
	fi
}

# send_file NAME FILE: sends FILE, line by line, to the host, which writes it to
# DIR/NAME when vm-check.sh runs with --fetch DIR (e.g. the IMA measurement list), and
# reports a check NAME-sent saying how many lines went.
send_file() {
	case "$1" in
	'' | *[!A-Za-z0-9._-]*)
		report "send-file" FAIL "bad name '$1'"
		return ;;
	esac
	if ! mkdir -p /tmp || ! cp "$2" "/tmp/send.$1" 2>/dev/null; then
		report "$1-sent" FAIL "cannot read $2"
		return
	fi
	# A file that does not end in a newline would lose its last line to sed.
	[ -z "$(tail -c 1 "/tmp/send.$1")" ] || echo >>"/tmp/send.$1"
	sed "s/^/FILE $1 /" "/tmp/send.$1" >&3
	report "$1-sent" PASS "$(wc -l <"/tmp/send.$1") lines of $2"
	rm -f "/tmp/send.$1"
}

# tpm_quote NONCE DIR: with tpm2-tools' tpm2 (in PATH) through the kernel's resource
# manager, an attestation key (RSA, rsassa) under the TPM's endorsement key and a quote
# of PCRs 0-10 of the sha256 bank with NONCE (hex) from the host, into DIR: q.msg, q.sig,
# q.pcrs, ak.pem; and the measurement lists the quote covers, DIR/ascii, DIR/binary and,
# where the kernel has one, DIR/binary-sha256. The lists are read before the quote and
# the ascii one again after it, until the two agree: anything measured meanwhile (a
# program's first run) would leave a list longer than the quote covers. Reports
# guest-quoted.
tpm_quote() {
	q_nonce=$1 q_dir=$2 q_try=0
	q_ima=/sys/kernel/security/ima
	mkdir -p "$q_dir" || return 1
	export TPM2TOOLS_TCTI=device:/dev/tpmrm0
	if ! (cd "$q_dir" && tpm2 createek -c ek.ctx -G rsa -u ek.pub &&
		tpm2 createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pem -f pem) >"$q_dir/log" 2>&1; then
		report guest-quoted FAIL "tpm2 createek/createak: $(tail -n 2 "$q_dir/log")"
		return 1
	fi
	while :; do
		cp "$q_ima/ascii_runtime_measurements" "$q_dir/ascii" &&
			cp "$q_ima/binary_runtime_measurements" "$q_dir/binary" || return 1
		# Kernels with a list per bank (6.10 and later) have the sha256 template hashes too.
		[ ! -e "$q_ima/binary_runtime_measurements_sha256" ] ||
			cp "$q_ima/binary_runtime_measurements_sha256" "$q_dir/binary-sha256" || return 1
		if ! (cd "$q_dir" && tpm2 quote -c ak.ctx -l sha256:0,1,2,3,4,5,6,7,8,9,10 -q "$q_nonce" \
			-g sha256 -m q.msg -s q.sig -o q.pcrs) >>"$q_dir/log" 2>&1; then
			report guest-quoted FAIL "tpm2 quote: $(tail -n 2 "$q_dir/log")"
			return 1
		fi
		# (Through a pipe: GNU cmp takes regular files of different sizes for different,
		# and securityfs says 0 bytes.)
		cat "$q_ima/ascii_runtime_measurements" | cmp -s - "$q_dir/ascii" && break
		q_try=$((q_try + 1))
		if [ $q_try -ge 3 ]; then
			report guest-quoted FAIL "the list grew during each of 3 quotes"
			return 1
		fi
	done
	report guest-quoted PASS "tpm2 quote with the host's nonce, $(wc -l <"$q_dir/ascii") entries, $((q_try + 1)) quote(s)"
}

# tpm_send DIR LIST [binary]: sends tpm_quote's DIR to the host: the quote's binary files
# as hex lines (send_file sends text; tpm-quote-lib.sh turns them back), ak.pem, the
# ascii list as LIST, and with "binary" the binary lists as hex, LIST-binary.hex and
# LIST-binary-sha256.hex.
tpm_send() {
	for q_f in q.msg q.sig q.pcrs; do
		od -An -v -tx1 "$1/$q_f" >"$1/$q_f.hex" && send_file "$q_f.hex" "$1/$q_f.hex"
	done
	send_file ak.pem "$1/ak.pem"
	send_file "$2" "$1/ascii"
	[ "${3:-}" = binary ] || return 0
	for q_f in binary binary-sha256; do
		[ -e "$1/$q_f" ] || continue
		od -An -v -tx1 "$1/$q_f" >"$1/$q_f.hex" && send_file "$2-$q_f.hex" "$1/$q_f.hex"
	done
}
