#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A guest with swtpm as its TPM: the kernel measures into PCR 10, the guest quotes with tpm2-tools, the host's attest check verifies the list against the quote.
#
# One boot per kernel of kernels.sh's list, ima_policy=tcb ima_template=ima-ng, no
# appraisal. swtpm (TPM 2.0) is the guest's tpm-tis device; SeaBIOS and the kernel
# extend PCRs 0-9 and IMA extends PCR 10 as on a real machine. In the guest, tpm2-tools
# (the host's /usr/bin/tpm2 and its libraries, in the initramfs: the initramfs is
# tmpfs, which tcb does not measure, so the quote adds no entry) make an AK under the EK
# and quote PCRs 0-10 of the sha256 bank with a nonce the host chose; the guest then
# sends the quote, the AK's public key and the lists (binary, ascii, and the sha256
# bank's binary list where the kernel has one): guest-lib.sh's tpm_quote and tpm_send,
# and tpm-quote-lib.sh on the host, which test_kernel_image.sh shares. On the host,
# stages as the live test prints them:
#   quote-verified        attest check passes every list, and
#                         tpm2_checkquote passes the quote
#   log-truncated-refused the list without its last entry is refused (replay)
#   log-edited-refused    one entry's name changed is refused (template hash)
#   wrong-nonce-refused   another nonce is refused, by tpm2_checkquote too
# IMASTREAM_BREAK=quote-verified makes that stage fail (a changed nonce), to show the
# stage can fail. Output: STAGE and CHECK lines; exit 0, 1, 77 or 99.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
kdir=$srcdir/tests/kernel
imastream=$builddir/imastream

skip() { echo "SKIP: $*"; exit 77; }
error() { echo "ERROR: $*"; exit 99; }

"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
[ -x "$imastream" ] || error "$imastream not built"
for t in swtpm tpm2 tpm2_checkquote xxd; do
	command -v "$t" >/dev/null || skip "$t not installed (swtpm, tpm2-tools, xxd)"
done
tcti=$(find /usr/lib /lib -name 'libtss2-tcti-device.so.0' 2>/dev/null | head -n 1)
[ -n "$tcti" ] || skip "libtss2-tcti-device.so.0 not found (libtss2-tcti-device0)"
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
# shellcheck source=tests/kernel/tpm-quote-lib.sh
. "$kdir/tpm-quote-lib.sh"
busybox=$(static_busybox) || skip "no static busybox (package busybox-static)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernel-tpm.XXXXXX") || exit 99
cleanup() {
	tpmq_stop "$tmp/tpm"
	[ -n "${KEEP:-}" ] && echo "test_kernel_tpm: kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
# vm-check copies programs with their libraries; the TCTI is dlopen()ed, so it goes too.
cp "$tcti" "$tmp/libtss2-tcti-device.so.0" && chmod 755 "$tmp/libtss2-tcti-device.so.0" || exit 99

# The disk: busybox, run, and a data file, read: measured by tcb.
root=$tmp/root
mkdir -p "$root/usr/bin" "$root/etc" || exit 99
cp "$busybox" "$root/usr/bin/busybox" && echo "measured data" >"$root/etc/data" || exit 99
echo '{"meta":{"version":1,"generator":3},"release":0,"digests":{},"excludes":["^/"],"keyrings":{},"ima":{"ignored_keyrings":[],"log_hash_alg":"sha1","dm_policy":null},"ima-buf":{},"verification-keys":""}' \
	>"$tmp/policy.json"

fails=0
kt=""
report() {
	echo "CHECK $kt:$*"
	case "$2" in FAIL) fails=$((fails + 1)) ;; esac
}
stage() {
	echo "STAGE $1 (kernel $kt): $2"
	case "$2" in ok) ;; *) fails=$((fails + 1)) ;; esac
}

tpmq_imastream=$imastream
tpmq_policy=$tmp/policy.json

boot() {
	local k=$1 nonce out krc
	kt=$(kernel_tag "$k")
	nonce=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
	out=$tmp/out-$kt
	mkdir -p "$out"
	tpmq_start "$tmp/tpm" || error "swtpm did not start (see $tmp/tpm/swtpm.log)"
	cat >"$tmp/checks.sh" <<GUEST
. /guest-lib.sh
expect_runs busybox-runs "\$ROOT/usr/bin/busybox" true
expect_reads data-read "\$ROOT/etc/data"
export LD_LIBRARY_PATH=/usr/local/lib:/usr/local/bin
tpm_quote $nonce /tmp/q && tpm_send /tmp/q ascii binary
GUEST
	echo "test_kernel_tpm: booting $k with swtpm, ima_policy=tcb"
	IMASTREAM_KERNEL=$k "$kdir/vm-check.sh" --root "$root" --checks "$tmp/checks.sh" \
		--policy none --kernel-args "ima_policy=tcb ima_template=ima-ng ima_hash=sha256" \
		--guest-bin "$(command -v tpm2)" --guest-bin "$tmp/libtss2-tcti-device.so.0" \
		--tpm "$tmp/tpm/ctrl" --fetch "$out" --name "test_kernel_tpm-$kt" </dev/null |
		sed "s/^CHECK /CHECK $kt:/"
	krc=${PIPESTATUS[0]}
	tpmq_stop "$tmp/tpm"
	case $krc in 0 | 1) ;; *) return "$krc" ;; esac
	[ "$krc" = 0 ] || fails=$((fails + 1))
	lists="ascii"
	for l in ascii-binary ascii-binary-sha256; do
		[ ! -f "$out/$l.hex" ] || lists="$lists $l"
	done
	if ! tpmq_decode "$out" || [ ! -s "$out/ascii" ] || [ ! -s "$out/ascii-binary" ]; then
		stage quote-verified "FAIL: the guest sent no quote or no list"
		return 1
	fi
	report entries PASS "$(wc -l <"$out/ascii") measurements, the first: $(head -n 1 "$out/ascii" | cut -c1-80)"

	local n=$nonce why=""
	[ "${IMASTREAM_BREAK:-}" != quote-verified ] || n=00$nonce
	for log in $lists; do
		tpmq_check "$log" 0 "quote verified: .*boot_aggregate to its PCRs 0-9" "$n" "$out/$log" ||
			why="$why attest check of the $log list failed: $(head -c 200 "$out/$log.err");"
	done
	tpmq_checkquote "$n" || why="$why tpm2_checkquote refused the quote;"
	if [ -z "$why" ]; then
		stage quote-verified ok
	else
		stage quote-verified "FAIL:$why"
	fi
	tpmq_refusals "$nonce" "$out/ascii" stage
	return 0
}

mapfile -t kernels < <(kernel_list)
[ ${#kernels[@]} -gt 0 ] || skip "no kernel to boot"
booted=0
for k in "${kernels[@]}"; do
	start=$(date +%s)
	boot "$k"
	case $? in
	0 | 1) booted=$((booted + 1)) ;;
	77) continue ;;
	*) exit 99 ;;
	esac
	echo "test_kernel_tpm: $kt took $(($(date +%s) - start)) s"
done
[ $booted -gt 0 ] || skip "no boot ran"
echo "test_kernel_tpm: $booted boot(s), $fails failure(s)"
[ $fails = 0 ]
