# SPDX-License-Identifier: LGPL-2.1-or-later
# Test helpers for a private swtpm (TPM 2.0) on a unix socket and tpm2-tools against it.

# tpm_preconditions: skips unless swtpm and the tpm2-tools the tests drive are installed.
tpm_preconditions() {
	local t
	for t in swtpm tpm2_createek tpm2_createak tpm2_pcrextend tpm2_pcrread tpm2_quote \
		tpm2_checkquote tpm2_flushcontext; do
		command -v "$t" >/dev/null || skip "$t not installed (swtpm, tpm2-tools)"
	done
}

# tpm_start DIR: a fresh TPM with its state in DIR, listening on DIR/sock (a unix socket,
# never the network); sets TPM2TOOLS_TCTI for the tools.  tpm_stop DIR ends it.
tpm_start() {
	local dir=$1 i
	mkdir -p "$dir/state"
	swtpm socket --tpm2 --tpmstate dir="$dir/state" \
		--server type=unixio,path="$dir/sock" --ctrl type=unixio,path="$dir/sock.ctrl" \
		--flags not-need-init,startup-clear --daemon --pid file="$dir/pid" \
		--log file="$dir/swtpm.log" || fail "swtpm did not start (see $dir/swtpm.log)"
	# --daemon returns once the sockets exist; wait boundedly for them anyway.
	for i in $(seq 100); do
		[ -S "$dir/sock" ] && [ -s "$dir/pid" ] && break
		sleep 0.1
	done
	[ -S "$dir/sock" ] || fail "swtpm made no socket in $dir"
	export TPM2TOOLS_TCTI="swtpm:path=$dir/sock"
}

tpm_stop() {
	local dir=$1
	[ -s "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null
	rm -f "$dir/pid"
}

# tpm_ak DIR rsa|ecc: an attestation key under the EK, its context in DIR/ak.ctx and its
# public key in DIR/ak.pem.  Without a resource manager every transient object is
# flushed after each tool, or the TPM runs out of object slots.
tpm_ak() {
	local dir=$1 alg=$2 scheme=rsassa
	[ "$alg" = ecc ] && scheme=ecdsa
	tpm2_createek -c "$dir/ek.ctx" -G "$alg" -u "$dir/ek.pub" >/dev/null &&
		tpm2_flushcontext -t &&
		tpm2_createak -C "$dir/ek.ctx" -c "$dir/ak.ctx" -G "$alg" -g sha256 -s "$scheme" \
			-u "$dir/ak.pem" -f pem -n "$dir/ak.name" -r "$dir/ak.priv" >/dev/null &&
		tpm2_flushcontext -t && tpm2_flushcontext -s || fail "tpm2_createak ($alg) failed"
}

# tpm_quote DIR PCRS NONCE OUT [tpm2_quote options]: OUT.msg, OUT.sig and OUT.pcrs.
tpm_quote() {
	local dir=$1 pcrs=$2 nonce=$3 out=$4
	shift 4
	tpm2_quote -c "$dir/ak.ctx" -l "$pcrs" -q "$nonce" -g sha256 -m "$out.msg" -s "$out.sig" \
		-o "$out.pcrs" "$@" >/dev/null && tpm2_flushcontext -t || fail "tpm2_quote $pcrs failed"
}
