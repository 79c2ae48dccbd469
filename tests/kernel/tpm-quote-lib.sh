# SPDX-License-Identifier: LGPL-2.1-or-later
# Host side of a guest's TPM quote, for any test that boots a guest with a TPM: a private swtpm for qemu, the quote the guest sent (guest-lib.sh's tpm_quote and tpm_send), and the checks attest check and tpm2_checkquote make of it.
# shellcheck shell=bash
#
# A test sources it, sets tpmq_imastream (the imastream program) and tpmq_policy (a
# keylime policy), and per boot:
#   tpmq_start DIR                swtpm with a fresh state in DIR
#   tpmq_qemu_args DIR            sets the array tpmq_args: qemu's TPM 2.0 (tpm-tis)
#                                 (or vm-check.sh --tpm DIR/ctrl)
#   ... the boot; in the guest: tpm_quote NONCE QDIR; tpm_send QDIR LIST [binary] ...
#   tpmq_stop DIR
#   tpmq_decode FETCHED           q.msg, q.sig, q.pcrs from the hex lines the guest sent
#   tpmq_check NAME RC TEXT NONCE LOG     attest check of LOG against FETCHED's quote
#   tpmq_checkquote NONCE         tpm2_checkquote of that quote
#   tpmq_refusals NONCE LOG CALLBACK      the refusal stages, each given to CALLBACK
# tpmq_dir is FETCHED, the folder the guest's files went to (vm-check.sh --fetch).

# tpmq_missing: prints the first host tool these need that is not installed.
tpmq_missing() {
	local t
	for t in swtpm tpm2_checkquote xxd; do
		command -v "$t" >/dev/null || { echo "$t"; return 0; }
	done
}

# tpmq_start DIR: a fresh TPM 2.0, its state in DIR/state, qemu's control socket DIR/ctrl
# (a unix socket, never the network). Returns 1 when swtpm does not come up.
tpmq_start() {
	local dir=$1
	tpmq_stop "$dir"
	rm -rf "$dir/state" && mkdir -p "$dir/state" || return 1
	swtpm socket --tpm2 --tpmstate dir="$dir/state" --ctrl type=unixio,path="$dir/ctrl" \
		--daemon --pid file="$dir/pid" --log file="$dir/swtpm.log" || return 1
	# --daemon returns once the socket exists; wait boundedly for it anyway.
	for _ in $(seq 100); do
		[ -S "$dir/ctrl" ] && return 0
		sleep 0.1
	done
	return 1
}

# tpmq_stop DIR: ends tpmq_start's swtpm (qemu's exit usually has).
tpmq_stop() {
	[ ! -s "$1/pid" ] || kill "$(cat "$1/pid")" 2>/dev/null
	rm -f "$1/pid"
}

# tpmq_qemu_args DIR: the array tpmq_args, qemu's options for tpmq_start's TPM.
tpmq_qemu_args() {
	tpmq_args=(-chardev "socket,id=chrtpm,path=$1/ctrl" -tpmdev emulator,id=tpm0,chardev=chrtpm
		-device tpm-tis,tpmdev=tpm0)
}

# tpmq_decode DIR: the quote's binary files, and any binary list (NAME-binary*.hex),
# from the hex lines tpm_send sent; sets tpmq_dir. Returns 1 when the quote is missing.
tpmq_decode() {
	local f
	tpmq_dir=$1
	for f in "$1"/*.hex; do
		[ -f "$f" ] || continue
		xxd -r -p "$f" >"${f%.hex}" || return 1
	done
	[ -s "$1/q.msg" ] && [ -s "$1/q.sig" ] && [ -s "$1/q.pcrs" ] && [ -s "$1/ak.pem" ]
}

# tpmq_check NAME WANT-RC WANT-TEXT NONCE LOG: attest check of LOG with tpmq_dir's quote
# and NONCE, against tpmq_policy; 0 when it exits WANT-RC and its standard error holds
# WANT-TEXT (a grep pattern). Its output is kept as tpmq_dir/NAME.out and NAME.err.
tpmq_check() {
	local rc=0 d=$tpmq_dir
	"$tpmq_imastream" attest check --policy "$tpmq_policy" --log "$5" --quote "$d/q.msg" \
		--quote-sig "$d/q.sig" --quote-pcrs "$d/q.pcrs" --ak "$d/ak.pem" --nonce "$4" \
		>"$d/$1.out" 2>"$d/$1.err" || rc=$?
	[ "$rc" = "$2" ] && grep -q -- "$3" "$d/$1.err"
}

# tpmq_checkquote NONCE: tpm2_checkquote's verdict on tpmq_dir's quote with NONCE.
tpmq_checkquote() {
	tpm2_checkquote -u "$tpmq_dir/ak.pem" -m "$tpmq_dir/q.msg" -s "$tpmq_dir/q.sig" \
		-f "$tpmq_dir/q.pcrs" -g sha256 -q "$1" >/dev/null 2>&1
}

# tpmq_refusals NONCE LOG CALLBACK: the quoted ascii LOG tampered with, and the quote
# checked with another nonce; each stage is given to CALLBACK as "STAGE ok" or "STAGE
# FAIL: why":
#   log-truncated-refused  LOG without its last entry fails the replay
#   log-edited-refused     the last file entry's name changed fails its template hash,
#                          the entry named
#   wrong-nonce-refused    another nonce fails, in attest check and tpm2_checkquote
tpmq_refusals() {
	local nonce=$1 log=$2 cb=$3 d=$tpmq_dir
	head -n -1 "$log" >"$d/truncated"
	if tpmq_check truncated 1 "replay:" "$nonce" "$d/truncated"; then
		"$cb" log-truncated-refused ok
	else
		"$cb" log-truncated-refused "FAIL: not refused by the replay: $(head -c 200 "$d/truncated.err")"
	fi
	# The last file entry's name (field 5; the kernel writes no blank in it) with its
	# last character changed, everything else kept.
	awk '$5 ~ /^\// { n = NR; at = length($1 $2 $3 $4 $5) + 4 } { l[NR] = $0 }
	END { for (i = 1; i <= NR; i++) {
		if (i == n) { c = substr(l[i], at, 1); l[i] = substr(l[i], 1, at - 1) (c == "X" ? "Y" : "X") substr(l[i], at + 1) }
		print l[i] } }' "$log" >"$d/edited"
	if ! cmp -s "$d/edited" "$log" && tpmq_check edited 1 "template hash: entry" "$nonce" "$d/edited"; then
		"$cb" log-edited-refused ok
	else
		"$cb" log-edited-refused "FAIL: not refused by the template hash check: $(head -c 200 "$d/edited.err")"
	fi
	if ! tpmq_check wrong-nonce 1 "quote nonce:" "00$nonce" "$log"; then
		"$cb" wrong-nonce-refused "FAIL: attest check did not refuse it on the nonce: $(head -c 200 "$d/wrong-nonce.err")"
	elif tpmq_checkquote "00$nonce"; then
		"$cb" wrong-nonce-refused "FAIL: tpm2_checkquote accepted it"
	else
		"$cb" wrong-nonce-refused ok
	fi
}
