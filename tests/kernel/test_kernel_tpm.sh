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
# bank's binary list where the kernel has one). On the host, stages as the live
# test prints them:
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
busybox=$(static_busybox) || skip "no static busybox (package busybox-static)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernel-tpm.XXXXXX") || exit 99
cleanup() {
	[ -s "$tmp/tpm/pid" ] && kill "$(cat "$tmp/tpm/pid")" 2>/dev/null
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

# check NAME WANT-RC WANT-TEXT NONCE LOG: attest check of the guest's quote.
check() {
	local rc=0 out=$tmp/out-$kt
	"$imastream" attest check --policy "$tmp/policy.json" --log "$5" --quote "$out/q.msg" \
		--quote-sig "$out/q.sig" --quote-pcrs "$out/q.pcrs" --ak "$out/ak.pem" --nonce "$4" \
		>"$tmp/check.out" 2>"$tmp/check.err" || rc=$?
	sed "s/^/  $1: /" "$tmp/check.err"
	[ "$rc" = "$2" ] && grep -q -- "$3" "$tmp/check.err"
}

boot() {
	local k=$1 nonce out krc rc
	kt=$(kernel_tag "$k")
	nonce=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
	out=$tmp/out-$kt
	mkdir -p "$out" "$tmp/tpm"
	rm -rf "$tmp/tpm/state"
	mkdir "$tmp/tpm/state"
	swtpm socket --tpm2 --tpmstate dir="$tmp/tpm/state" --ctrl type=unixio,path="$tmp/tpm/ctrl" \
		--daemon --pid file="$tmp/tpm/pid" --log file="$tmp/tpm/swtpm.log" ||
		error "swtpm did not start"
	for _ in $(seq 100); do
		[ -S "$tmp/tpm/ctrl" ] && break
		sleep 0.1
	done
	cat >"$tmp/checks.sh" <<GUEST
. /guest-lib.sh
expect_runs busybox-runs "\$ROOT/usr/bin/busybox" true
expect_reads data-read "\$ROOT/etc/data"
export LD_LIBRARY_PATH=/usr/local/lib:/usr/local/bin TPM2TOOLS_TCTI=device:/dev/tpmrm0
mkdir -p /tmp/q && cd /tmp/q
if tpm2 createek -c ek.ctx -G rsa -u ek.pub >log 2>&1 &&
	tpm2 createak -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa -u ak.pem -f pem >>log 2>&1 &&
	tpm2 quote -c ak.ctx -l sha256:0,1,2,3,4,5,6,7,8,9,10 -q $nonce -g sha256 \
		-m q.msg -s q.sig -o q.pcrs >>log 2>&1; then
	report guest-quoted PASS "tpm2 quote with the host's nonce"
else
	report guest-quoted FAIL "\$(tail -n 2 log | tr '\n' ' ')"
fi
# The binary files as hex lines: send_file sends text.
for f in q.msg q.sig q.pcrs; do
	od -An -v -tx1 \$f >\$f.hex && send_file \$f.hex /tmp/q/\$f.hex
done
send_file ak.pem /tmp/q/ak.pem
od -An -v -tx1 /sys/kernel/security/ima/binary_runtime_measurements >bin.hex
send_file bin.hex /tmp/q/bin.hex
send_file ascii /sys/kernel/security/ima/ascii_runtime_measurements
# Kernels with a list per bank (6.10 and later) write the sha256 template hashes too.
l=/sys/kernel/security/ima/binary_runtime_measurements_sha256
if [ -e \$l ]; then
	od -An -v -tx1 \$l >bin256.hex
	send_file bin256.hex /tmp/q/bin256.hex
fi
GUEST
	echo "test_kernel_tpm: booting $k with swtpm, ima_policy=tcb"
	IMASTREAM_KERNEL=$k "$kdir/vm-check.sh" --root "$root" --checks "$tmp/checks.sh" \
		--policy none --kernel-args "ima_policy=tcb ima_template=ima-ng ima_hash=sha256" \
		--guest-bin "$(command -v tpm2)" --guest-bin "$tmp/libtss2-tcti-device.so.0" \
		--tpm "$tmp/tpm/ctrl" --fetch "$out" --name "test_kernel_tpm-$kt" </dev/null |
		sed "s/^CHECK /CHECK $kt:/"
	krc=${PIPESTATUS[0]}
	[ -s "$tmp/tpm/pid" ] && kill "$(cat "$tmp/tpm/pid")" 2>/dev/null
	rm -f "$tmp/tpm/pid"
	case $krc in 0 | 1) ;; *) return "$krc" ;; esac
	[ "$krc" = 0 ] || fails=$((fails + 1))
	for f in q.msg q.sig q.pcrs bin bin256; do
		[ ! -f "$out/$f.hex" ] || xxd -r -p "$out/$f.hex" >"$out/$f"
	done
	mv "$out/bin" "$out/binary"
	lists="binary ascii"
	[ ! -s "$out/bin256" ] || { mv "$out/bin256" "$out/binary-sha256" && lists="$lists binary-sha256"; }
	if [ ! -s "$out/q.msg" ] || [ ! -s "$out/binary" ] || [ ! -s "$out/ascii" ]; then
		stage quote-verified "FAIL: the guest sent no quote or no list"
		return 1
	fi
	report entries PASS "$(wc -l <"$out/ascii") measurements, the first: $(head -n 1 "$out/ascii" | cut -c1-80)"

	local n=$nonce why=""
	[ "${IMASTREAM_BREAK:-}" != quote-verified ] || n=00$nonce
	for log in $lists; do
		check "$log" 0 "quote verified: .*boot_aggregate to its PCRs 0-9" "$n" "$out/$log" || why="$why attest check of the $log list failed;"
	done
	tpm2_checkquote -u "$out/ak.pem" -m "$out/q.msg" -s "$out/q.sig" -f "$out/q.pcrs" -g sha256 \
		-q "$n" >/dev/null 2>&1 || why="$why tpm2_checkquote refused the quote;"
	if [ -z "$why" ]; then
		stage quote-verified ok
	else
		stage quote-verified "FAIL:$why"
	fi

	head -n -1 "$out/ascii" >"$tmp/truncated"
	if check truncated 1 "replay:" "$nonce" "$tmp/truncated"; then
		stage log-truncated-refused ok
	else
		stage log-truncated-refused "FAIL: not refused by the replay"
	fi
	# The last file entry's name changed, its template hash kept.
	awk 'BEGIN { n = 0 } { l[NR] = $0; if ($5 ~ /^\//) n = NR }
	END { for (i = 1; i <= NR; i++) { if (i == n) sub(/[^\/]$/, "X", l[i]); print l[i] } }' \
		"$out/ascii" >"$tmp/edited"
	if ! cmp -s "$tmp/edited" "$out/ascii" && check edited 1 "template hash: entry" "$nonce" "$tmp/edited"; then
		stage log-edited-refused ok
	else
		stage log-edited-refused "FAIL: not refused by the template hash check"
	fi
	rc=0
	tpm2_checkquote -u "$out/ak.pem" -m "$out/q.msg" -s "$out/q.sig" -f "$out/q.pcrs" -g sha256 \
		-q "00$nonce" >/dev/null 2>&1 || rc=$?
	if ! check wrong-nonce 1 "quote nonce:" "00$nonce" "$out/binary"; then
		stage wrong-nonce-refused "FAIL: attest check did not refuse it on the nonce"
	elif [ "$rc" = 0 ]; then
		stage wrong-nonce-refused "FAIL: tpm2_checkquote accepted it"
	else
		stage wrong-nonce-refused ok
	fi
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
