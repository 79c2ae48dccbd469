#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An rpm-only Debian 13 system boots measured whole and appraised: every file of the
# image comes from an rpm package (rpm-image.sh: Debian's packages repackaged, installed
# by dnf --installroot with imastream.so signing), systemd is PID 1, and the keys, EVM
# and docs/ima-policy-measured come from ima-rollout's initramfs hook.
#
# On the host, before any boot (stage image-built): no dpkg database; every path of the
# image is owned by an rpm package (rpm's database aside); imastream verify --rpmdb
# passes every file, EVM portable signatures required; /sbin/init is systemd.
# One boot per kernel (ima_appraise=enforce ima_template=ima-sig ima_hash=sha256, EVM
# 0x80000002 from the hook), with one program changed on the disk beforehand and a
# private swtpm as the machine's TPM (tpm-quote-lib.sh). The job, run by a systemd unit
# once multi-user.target is reached, sends the measurement list, maps every executable
# and library executable (mapexec.c: the kernel appraises each as for the loader), runs
# every program of /usr/bin with --version, an unlabelled copy and the changed program
# (both must be refused), then quotes PCRs 0-10 with the image's own tpm2-tools and the
# host's nonce (guest-lib.sh's tpm_quote) and sends the quote, its attestation key and
# the list it covers. Stages:
#   boot-measured-whole  the first list against policy keylime --rpmdb of the image
#                        (digests only, no signing key trusted): zero failed entries,
#                        beyond the excludes of rpm-image-excludes.txt; it begins the
#                        quoted list, whose boot_aggregate the quote's PCRs 0-9 confirm
#   all-programs-run     nothing refused but the two controls, which are refused
#   tampered-file-named  the second list fails in exactly one entry, the changed program
#   quote-verified       attest check of the quoted list against the quote and the
#                        policy: the quote verifies, the list replays, and the policy
#                        fails the two controls alone; tpm2_checkquote agrees
#   log-truncated-refused, log-edited-refused, wrong-nonce-refused  as test_kernel_tpm.sh
# IMASTREAM_IMAGE_BREAK=unowned-read: the job writes a file no package owns and reads it
# as root before the first list is sent, so that boot-measured-whole fails naming it;
# =quote-verified: the host checks the quote with a nonce the guest did not use.
# IMASTREAM_IMAGE_KERNELS=first (the default, make check): only the first kernel of
# kernels.sh's list boots (the host's 6.1, with the RSA image); =all (make check-image):
# every one.
# Figures (not asserted): the image's, boot time to multi-user, the number of entries.
# Output: CHECK lines, then "STAGE NAME (kernel VERSION): ok|FAIL: why". Exit 0, 1, 77, 99.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir/build/default}
kdir=$srcdir/tests/kernel
imastream=$(cd "$builddir" && pwd)/imastream
so=$builddir/.libs/imastream.so

skip() { echo "SKIP: $*"; exit 77; }
error() { echo "ERROR: $*"; exit 99; }

case ${IMASTREAM_IMAGE_BREAK:-} in
'' | unowned-read | quote-verified) ;;
*) error "IMASTREAM_IMAGE_BREAK=$IMASTREAM_IMAGE_BREAK: unknown (unowned-read, quote-verified)" ;;
esac
case ${IMASTREAM_IMAGE_KERNELS:-first} in
first | all) ;;
*) error "IMASTREAM_IMAGE_KERNELS=$IMASTREAM_IMAGE_KERNELS: unknown (first or all)" ;;
esac
"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
[ -x "$imastream" ] || error "$imastream not built"
[ -f "$so" ] || skip "this build has no imastream.so (no librpm)"
# The host's dnf cannot load a sanitizer build's plugin (see tests/integration/rpm-lib.sh).
if ldd "$so" 2>/dev/null | grep libasan >/dev/null; then
	skip "dnf cannot load a sanitizer build of imastream.so"
fi
for t in debugfs gcc rpm getfattr; do
	command -v $t >/dev/null || skip "$t not found"
done
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
# shellcheck source=tests/kernel/tpm-quote-lib.sh
. "$kdir/tpm-quote-lib.sh"
missing=$(tpmq_missing)
[ -z "$missing" ] || skip "$missing not installed (swtpm, tpm2-tools, xxd)"
tpmq_imastream=$imastream
busybox=$(static_busybox) || skip "no static busybox (package busybox-static)"

t0=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/kernel-image.XXXXXX") || exit 99
trap 'tpmq_stop "$tmp/tpm"; [ -n "${KEEP:-}" ] && echo "test_kernel_image: kept $tmp" || rm -rf "$tmp"' EXIT
export HOME=$tmp/home
mkdir -p "$HOME" || exit 99
fails=0
results=$tmp/results

# report NAME PASS|FAIL DETAIL: a host check, in the guest's format.
report() {
	echo "CHECK $1 $2 $(printf '%s' "$3" | tr '\n' ' ' | cut -c1-300)" | tee -a "$results"
}

# image KEYTYPE: sets img and root to the image signed with an rsa or p384 key (made
# now, or cached), and judges it on the host (image-built), then writes its policy.
image() {
	local start out excl=() re
	start=$(date +%s)
	img=$(IMASTREAM=$imastream "$kdir/rpm-image.sh" "$so" "$1")
	case $? in
	0) ;;
	77) skip "no rpm-only image: $img" ;;
	*) error "rpm-image.sh failed: $img" ;;
	esac
	echo "test_kernel_image: image $img ready after $(($(date +%s) - start)) s"
	sed 's/^/test_kernel_image: figure: /' "$img/FIGURES"
	root=$img/root
	cp "$img/rpmmacros" "$HOME/.rpmmacros" || exit 99
	if [ -e "$root/var/lib/dpkg" ]; then
		report image-built:no-dpkg FAIL "$root/var/lib/dpkg exists"
	else
		report image-built:no-dpkg PASS "no /var/lib/dpkg"
	fi
	rpm --root "$root" -qa --qf '[%{FILENAMES}\n]' | LC_ALL=C sort -u >"$tmp/owned"
	(cd "$root" && find . -xdev -mindepth 1 | sed 's|^\.||' | grep -v '^/var/lib/rpm\(/\|$\)' | LC_ALL=C sort) >"$tmp/present"
	LC_ALL=C comm -23 "$tmp/present" "$tmp/owned" >"$tmp/unowned"
	if [ -s "$tmp/unowned" ]; then
		report image-built:all-owned FAIL "$(wc -l <"$tmp/unowned") paths no package owns: $(head -n 5 "$tmp/unowned" | tr '\n' ' ')"
	else
		report image-built:all-owned PASS "$(wc -l <"$tmp/present") paths, each owned by one of $(rpm --root "$root" -qa | wc -l) packages"
	fi
	if out=$("$imastream" verify --root "$root" --rpmdb --evm require --trust "$img/keys/ima.crt" 2>&1); then
		report image-built:verified PASS "$(echo "$out" | tail -n 1)"
	else
		report image-built:verified FAIL "$(echo "$out" | grep ': FAIL: ' | head -n 3) $(echo "$out" | tail -n 1)"
	fi
	# The second root, by imastream install: the same paths with the same modes and
	# owners (the databases aside), and verify against install's record passes.
	local meta='%P %y %m %u %g %l\n' db='^var/lib/\(rpm\|imastream\)\(/\| \)'
	if out=$(diff <(cd "$root" && find . -xdev -mindepth 1 -printf "$meta" | sed 's|^\./||' | grep -v "$db" | LC_ALL=C sort) \
		<(cd "$img/root-install" && find . -xdev -mindepth 1 -printf "$meta" | sed 's|^\./||' | grep -v "$db" | LC_ALL=C sort)); then
		report image-built:install-same PASS "imastream install's root has the same $(wc -l <"$tmp/present") paths, modes, owners"
	else
		report image-built:install-same FAIL "imastream install's root differs: $(echo "$out" | head -n 6)"
	fi
	# (verify says each file on standard output and its summary on standard error.)
	if out=$("$imastream" verify --root "$img/root-install" --evm require --trust "$img/keys/ima.crt" 2>"$tmp/verify.err"); then
		report image-built:install-verified PASS "$(tail -n 1 "$tmp/verify.err")"
	else
		report image-built:install-verified FAIL "$(echo "$out" | grep ': FAIL: ' | head -n 3) $(tail -n 1 "$tmp/verify.err")"
	fi
	case $(readlink -f "$root/sbin/init") in
	"$root"/usr/lib/systemd/systemd) report image-built:systemd-init PASS "/sbin/init is systemd" ;;
	*) report image-built:systemd-init FAIL "/sbin/init is $(readlink "$root/sbin/init")" ;;
	esac
	# The policy of this very image: digests from its rpm database, the excludes of
	# rpm-image-excludes.txt (each justified in tests/kernel/README.md).
	while read -r re; do excl+=(--exclude "$re"); done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$kdir/rpm-image-excludes.txt")
	"$imastream" policy keylime --root "$root" --rpmdb "${excl[@]}" --output "$tmp/policy.json" 2>"$tmp/policy.log" ||
		{ cat "$tmp/policy.log"; error "policy keylime --rpmdb of the image failed"; }
	tpmq_policy=$tmp/policy.json
	[ -f "$root$tampered" ] && [ ! -L "$root$tampered" ] || error "$tampered is not a regular file of the image"
}

# ---------- the boot ----------
gcc -static -O2 -o "$tmp/mapexec" "$kdir/mapexec.c" || error "cannot build mapexec.c"
# A program no boot runs, changed on the disk (tampered-file-named): a regular file,
# not a link, so that its first block is its own.
tampered=/usr/bin/rpmkeys
# tamper_disk DISK PATH: one byte of PATH's first block changed on the stopped disk,
# content only, labels and inode untouched (byte 10 of an ELF file: e_ident padding).
tamper_disk() {
	local blk bs
	bs=$(dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Block size: *//p')
	blk=$(debugfs -R "blocks $2" "$1" 2>/dev/null | awk '{ print $1 }')
	[ -n "$bs" ] && [ -n "$blk" ] || return 1
	printf '\x5a' | dd of="$1" bs=1 seek=$((blk * bs + 10)) conv=notrunc status=none
}

mkdir -p "$tmp/job" && cp "$kdir/guest-lib.sh" "$tmp/mapexec" "$tmp/job/" || exit 99
cat >"$tmp/job/job.sh" <<JOB
tampered=$tampered
brk=${IMASTREAM_IMAGE_BREAK:-}
JOB
cat >>"$tmp/job/job.sh" <<'JOB'
. ./guest-lib.sh
nonce=$(cat ./nonce)
export PATH=/usr/sbin:/usr/bin
if [ "$brk" = unowned-read ]; then
	echo broken >/etc/imastream-break.conf && cat /etc/imastream-break.conf >/dev/null
fi
report boot:pid1 "$( [ "$(cat /proc/1/comm)" = systemd ] && echo PASS || echo FAIL)" "PID 1 is $(cat /proc/1/comm)"
# The hook wrote 0x80000002 (X.509 keys, setup complete: docs/SETUP.md); the kernel
# reads it back without the setup-complete bit.
case $(cat /sys/kernel/security/evm) in
2) report boot:evm PASS "evm 2 (X.509 keys)" ;;
*) report boot:evm FAIL "evm $(cat /sys/kernel/security/evm), not 2 (X.509 keys)" ;;
esac
report boot:degraded PASS "failed units: $(systemctl list-units --state=failed --no-legend --plain | cut -d' ' -f1 | tr '\n' ' ')"
send_file ima-boot /sys/kernel/security/ima/ascii_runtime_measurements
mark=$(dmesg | wc -l)
# Every executable and library of the root, mapped executable: each is appraised.
find / -xdev -type f \( -perm /111 -o -name '*.so' -o -name '*.so.[0-9]*' \) ! -path "$tampered" >/run/programs
out=$(./mapexec </run/programs)
report programs:mapped "$( [ $? = 0 ] && echo PASS || echo FAIL)" "$(echo "$out" | tail -n 1); $(echo "$out" | grep -v '^mapped' | head -n 5 | tr '\n' ' ')"
# Every program of /usr/bin runs (exit status 126 is the kernel's refusal); a link to
# another program of /usr/bin (tpm2-tools' hundred tpm2_* names) is that one's run.
n=0 bad=""
for p in /usr/bin/*; do
	[ -f "$p" ] && [ -x "$p" ] && [ "$p" != "$tampered" ] || continue
	[ ! -L "$p" ] || case $(readlink -f "$p") in /usr/bin/*) continue ;; esac
	n=$((n + 1))
	timeout 5 "$p" --version </dev/null >/dev/null 2>&1
	[ $? != 126 ] || bad="$bad $p"
done
report programs:run "$( [ -z "$bad" ] && echo PASS || echo FAIL)" "$n programs ran with --version; refused:$bad"
report programs:refusals "$( [ -z "$(dmesg | tail -n +"$((mark + 1))" | grep 'op=appraise_data')" ] && echo PASS || echo FAIL)" \
	"$(dmesg | tail -n +"$((mark + 1))" | grep -o 'op=appraise_data cause=[^ ]* comm="[^"]*" name="[^"]*"' | head -n 3 | tr '\n' ' ')"
# The controls: an unlabelled root-owned copy and the changed program are refused.
mkdir -p /usr/local/bin && cp /usr/bin/true /usr/local/bin/unlabelled-true
/usr/local/bin/unlabelled-true
rc=$?
report programs:unlabelled-refused "$( [ $rc = 126 ] && echo PASS || echo FAIL)" "exit $rc, cause $(audit_cause /usr/local/bin/unlabelled-true)"
rm -f /usr/local/bin/unlabelled-true
"$tampered" --version >/dev/null 2>&1
rc=$?
report programs:tampered-refused "$( [ $rc = 126 ] && [ "$(audit_cause "$tampered")" = invalid-signature ] && echo PASS || echo FAIL)" \
	"exit $rc, cause $(audit_cause "$tampered")"
# The quote, by the image's own tpm2 (an rpm of the image, measured as it runs), and the
# list it covers; without a quote, the list alone.
if tpm_quote "$nonce" /run/quote; then
	tpm_send /run/quote ima-after
else
	send_file ima-after /sys/kernel/security/ima/ascii_runtime_measurements
fi
JOB

# boot_kernel KERNEL TAG: the boot and its stages.
boot_kernel() {
	local kernel=$1 tag=$2 kver disk=$tmp/disk.img start rc entries out want brk
	kver=${kernel##*/vmlinuz-}
	: >"$results"
	# Keys: RSA where the kernel has no ECDSA (Debian's 6.1), else ECDSA P-384.
	if kernel_has "$kernel" CONFIG_CRYPTO_ECDSA; then image p384; else image rsa; fi
	"$kdir/rpm-image-initramfs.sh" "$kernel" "$busybox" "$tmp/initrd.img" || error "cannot make the initramfs for $kver"
	cp --sparse=always "$img/root.img" "$disk" && tamper_disk "$disk" "$tampered" || error "cannot prepare the disk"
	# A fresh nonce and a fresh TPM for every boot.
	nonce=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
	echo "$nonce" >"$tmp/job/nonce"
	tar -C "$tmp/job" -cf "$tmp/job.tar" . || exit 99
	rm -rf "$tmp/fetch-$tag" && mkdir -p "$tmp/fetch-$tag"
	tpmq_start "$tmp/tpm" || error "swtpm did not start (see $tmp/tpm/swtpm.log)"
	tpmq_qemu_args "$tmp/tpm"
	start=$(date +%s)
	timeout --kill-after=10 1500 qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 \
		-nographic -nodefaults -no-reboot -monitor none \
		-serial "file:$tmp/$tag.console" -serial "file:$tmp/$tag.raw" \
		-kernel "$kernel" -initrd "$tmp/initrd.img" \
		-append "console=ttyS0 panic=-1 loglevel=4 ima_appraise=enforce ima_template=ima-sig ima_hash=sha256" \
		-drive "file=$disk,format=raw,if=virtio,cache=writeback" \
		-drive "file=$tmp/job.tar,format=raw,if=virtio,readonly=on" "${tpmq_args[@]}" </dev/null >"$tmp/$tag.qemu" 2>&1
	rc=$?
	tpmq_stop "$tmp/tpm"
	tr -d '\r' <"$tmp/$tag.raw" >"$tmp/$tag.results"
	grep '^CHECK ' "$tmp/$tag.results" | sed "s/^CHECK /CHECK $tag:/"
	echo "test_kernel_image: $tag boot: $(($(date +%s) - start)) s, multi-user.target at $(sed -n 's/^BOOTED //p' "$tmp/$tag.results") s"
	if [ $rc != 0 ] || ! grep -q '^DONE' "$tmp/$tag.results"; then
		echo "test_kernel_image: $tag: the job did not finish (qemu exit $rc); console tail:"
		sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$tmp/$tag.console" | tail -n 30
		cp "$tmp/$tag.console" "./test_kernel_image-$tag.console.log" 2>/dev/null
	fi
	for f in ima-boot ima-after; do
		sed -n "s/^FILE $f //p" "$tmp/$tag.results" >"$tmp/$tag.$f"
	done
	mkdir -p "$tmp/quote-$tag" || exit 99
	for f in q.msg.hex q.sig.hex q.pcrs.hex ak.pem; do
		sed -n "s/^FILE $f //p" "$tmp/$tag.results" >"$tmp/quote-$tag/$f"
	done
	grep '^CHECK ' "$tmp/$tag.results" >>"$results"
	entries=$(wc -l <"$tmp/$tag.ima-boot")
	echo "test_kernel_image: $tag figure: $entries measurements in the first list, $(wc -l <"$tmp/$tag.ima-after") after every program"

	# boot-measured-whole: every entry passes; the list is not empty of what booted.
	"$imastream" attest check --policy "$tmp/policy.json" --log "$tmp/$tag.ima-boot" >"$tmp/$tag.boot.out" 2>"$tmp/$tag.boot.err"
	rc=$?
	if [ "$entries" -lt 100 ] || ! grep -Eq ' /usr/lib/systemd/systemd( |$)' "$tmp/$tag.ima-boot"; then
		report boot-measured-whole:list FAIL "$entries entries, systemd's among them: $(grep -Ec ' /usr/lib/systemd/systemd( |$)' "$tmp/$tag.ima-boot")"
	else
		report boot-measured-whole:list PASS "$entries entries, systemd's among them"
	fi
	if [ $rc = 0 ] && ! grep -q ': FAIL: ' "$tmp/$tag.boot.out"; then
		report boot-measured-whole:judged PASS "$(tail -n 1 "$tmp/$tag.boot.err")"
	else
		report boot-measured-whole:judged FAIL "exit $rc, $(grep -c ': FAIL: ' "$tmp/$tag.boot.out") unexplained: $(grep ': FAIL: ' "$tmp/$tag.boot.out" | head -n 4 | tr '\n' ' ')"
	fi
	grep ': FAIL: ' "$tmp/$tag.boot.out" | sed "s/^/test_kernel_image: $tag unexplained: /" | head -n 40
	# tampered-file-named: the second list fails for the changed program and the
	# unlabelled copy (a path no package has), and for nothing else.
	"$imastream" attest check --policy "$tmp/policy.json" --log "$tmp/$tag.ima-after" >"$tmp/$tag.after.out" 2>"$tmp/$tag.after.err"
	rc=$?
	out=$(grep ': FAIL: ' "$tmp/$tag.after.out" | sed 's/: FAIL: .*//' | LC_ALL=C sort -u | tr '\n' ' ')
	# (With the unowned-read switch, the file it read is in this list too: the stage
	# stays ok.)
	brk=""
	[ "${IMASTREAM_IMAGE_BREAK:-}" != unowned-read ] || brk=/etc/imastream-break.conf
	want=$(printf '%s\n' /usr/local/bin/unlabelled-true "$tampered" $brk | LC_ALL=C sort | tr '\n' ' ')
	if [ $rc = 1 ] && [ "$out" = "$want" ]; then
		report tampered-file-named:named PASS "$(grep "^$tampered: FAIL: " "$tmp/$tag.after.out" | head -n 1)"
	else
		report tampered-file-named:named FAIL "exit $rc; wanted failures for $want alone, got: $out"
	fi
	quote_stages "$tag" "$nonce" "$want"
	stage image-built "$kver"
	stage boot-measured-whole "$kver" boot:pid1 boot:evm
	stage all-programs-run "$kver" programs:
	stage tampered-file-named "$kver" programs:tampered-refused
	stage quote-verified "$kver" guest-quoted
	stage log-truncated-refused "$kver"
	stage log-edited-refused "$kver"
	stage wrong-nonce-refused "$kver"
	return 0
}

# quote_stages TAG NONCE WANT: the guest's quote judged (tpm-quote-lib.sh): the quoted
# list (ima-after) against the quote and the policy, which fails the entries WANT and no
# other; the first list is where the quoted one begins, so the quote's PCRs 0-9 vouch
# for its boot_aggregate (boot-measured-whole); then the refusals.
quote_stages() {
	local tag=$1 nonce=$2 want=$3 n=$2 out why=""
	local log=$tmp/$tag.ima-after
	if ! tpmq_decode "$tmp/quote-$tag"; then
		report quote-verified:quote FAIL "the guest sent no quote"
		report boot-measured-whole:boot-aggregate FAIL "no quote to check boot_aggregate against"
		return
	fi
	[ "${IMASTREAM_IMAGE_BREAK:-}" != quote-verified ] || n=00$nonce
	if tpmq_check quote-verified 1 "quote verified: .*boot_aggregate to its PCRs 0-9" "$n" "$log"; then
		out=$(grep ': FAIL: ' "$tpmq_dir/quote-verified.out" | sed 's/: FAIL: .*//' | LC_ALL=C sort -u | tr '\n' ' ')
		[ "$out" = "$want" ] || why="the policy failed $out, not $want alone;"
	else
		why="attest check: $(head -c 300 "$tpmq_dir/quote-verified.err");"
	fi
	tpmq_checkquote "$n" || why="$why tpm2_checkquote refused the quote;"
	if [ -z "$why" ]; then
		report quote-verified:quote PASS "$(grep 'quote verified' "$tpmq_dir/quote-verified.err")"
	else
		report quote-verified:quote FAIL "$why"
	fi
	# The first list begins the quoted one, boot_aggregate first (checked with the true
	# nonce, so that the break switch fails quote-verified alone).
	if [ -s "$tmp/$tag.ima-boot" ] && head -n "$(wc -l <"$tmp/$tag.ima-boot")" "$log" | cmp -s - "$tmp/$tag.ima-boot" &&
		[ "$(head -n 1 "$log" | cut -d' ' -f5)" = boot_aggregate ] &&
		tpmq_check boot-aggregate 1 "boot_aggregate to its PCRs 0-9" "$nonce" "$log"; then
		report boot-measured-whole:boot-aggregate PASS "the first list begins the quoted one; its boot_aggregate is that of the quoted PCRs 0-9"
	else
		report boot-measured-whole:boot-aggregate FAIL "the first list does not begin the quoted one, or its boot_aggregate is not the quoted PCRs'"
	fi
	tpmq_refusals "$nonce" "$log" quote_stage
}
# quote_stage STAGE ok|FAIL...: tpmq_refusals' verdict as the stage's check.
quote_stage() {
	case $2 in
	ok) report "$1:quote" PASS "refused" ;;
	*) report "$1:quote" FAIL "${2#FAIL: }" ;;
	esac
}

# stage NAME KVER [PREFIX...]: the stage's line from the checks NAME:... and PREFIX...
stage() {
	local name=$1 kver=$2 f pat
	shift 2
	pat="^CHECK \\($name:"
	for p; do pat="$pat\\|$p"; done
	pat="$pat\\)"
	f=$(grep "${pat}[^ ]* FAIL" "$results" | head -n 1)
	if ! grep -q "$pat" "$results"; then
		echo "STAGE $name (kernel $kver): FAIL: no check ran (the boot failed)"
		fails=$((fails + 1))
	elif [ -n "$f" ]; then
		echo "STAGE $name (kernel $kver): FAIL: ${f#CHECK }"
		fails=$((fails + 1))
	else
		echo "STAGE $name (kernel $kver): ok"
	fi
}

mapfile -t kernels < <(kernel_list)
[ ${#kernels[@]} -gt 0 ] || skip "no kernel to boot"
# make check boots the first kernel alone (one image to make; the RSA image on 6.1 takes
# about half the P-384 one's time on 6.12), make check-image every one: the figures are
# in tests/kernel/README.md.
[ "${IMASTREAM_IMAGE_KERNELS:-first}" = all ] || kernels=("${kernels[0]}")
for k in "${kernels[@]}"; do
	boot_kernel "$k" "$(kernel_tag "$k")"
done
echo "test_kernel_image: $(($(date +%s) - t0)) s in all"
[ $fails = 0 ] || exit 1
exit 0
