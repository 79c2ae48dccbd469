#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The lifecycle of an attested rpm-only system, with the verifier's verdict after every
# step: the lifecycle variant of the rpm-only Debian 13 image (rpm-image.sh ... lifecycle:
# dnf too) boots five times on each kernel, systemd as PID 1, under docs/ima-policy-measured
# (6.1 with the RSA image, 6.12 with the ECDSA P-384 one), ima_appraise=enforce but for
# the rotation's fix boot. Each stage changes the system in the guest (the jobs
# lifecycle-boot1.sh, lifecycle-boot2.sh, lifecycle-recover.sh, lifecycle-rotate.sh and
# lifecycle-rotated.sh, in turn on the same disk), then the guest writes the policy as
# docs/SETUP.md has it done on the running system (imastream policy keylime --rpmdb
# --mutable, lifecycle-lib.sh) and copies its measurement list; on the host, imastream
# attest check judges the list by that policy. The stages the verifier must pass, in order:
#   first-boot, services-running, dnf-upgrade-same-boot, dnf-erase, generated-files,
#   config-edited-reported, config-accepted, (second boot) reboot, (third boot, after a
#   power cut that ended the second: cut-lib.sh, cut-host-lib.sh) power-cut-recovered,
#   (fifth boot, after the key rotation of the fourth) key-rotated
# and those it must fail, each naming exactly its file beyond the earlier ones of its boot:
#   config-edit-not-accepted, program-modified, unsigned-program-run,
#   file-changed-outside-rpm, (second boot) rollback-after-reboot
# tests/kernel/README.md has what each step does. The upgrade's packages come from
# lifecycle-upgrade.sh. IMASTREAM_LIFECYCLE_BREAK (words) shows that a stage can fail:
# trust-rollback writes the policy of rollback-after-reboot with the signing key trusted,
# skip-recovery leaves the recovery out of the third boot, skip-relabel the relabelling
# out of the fourth; the stage they break then fails.
# Opt-in (make check-lifecycle). Output: CHECK lines, then "STAGE NAME (kernel VERSION):
# ok|FAIL: why", the seconds per kernel. Exit 0, 1, 77 or 99.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir/build/default}
kdir=$srcdir/tests/kernel
imastream=$(cd "$builddir" && pwd)/imastream
so=$builddir/.libs/imastream.so

skip() { echo "SKIP: $*"; exit 77; }
error() { echo "ERROR: $*"; exit 99; }

for b in ${IMASTREAM_LIFECYCLE_BREAK:-}; do
	case $b in
	trust-rollback | skip-recovery | skip-relabel) ;;
	*) error "IMASTREAM_LIFECYCLE_BREAK: $b: unknown (trust-rollback, skip-recovery, skip-relabel)" ;;
	esac
done
"$kdir/vm-check.sh" --probe >/dev/null || { "$kdir/vm-check.sh" --probe; exit $?; }
[ -x "$imastream" ] || error "$imastream not built"
[ -f "$so" ] || skip "this build has no imastream.so (no librpm)"
# The host's dnf cannot load a sanitizer build's plugin (see tests/integration/rpm-lib.sh).
if ldd "$so" 2>/dev/null | grep libasan >/dev/null; then
	skip "dnf cannot load a sanitizer build of imastream.so"
fi
for t in rpm rpmbuild createrepo_c gcc openssl; do
	command -v $t >/dev/null || skip "$t not found"
done
# shellcheck source=tests/kernel/kernels.sh
. "$kdir/kernels.sh"
busybox=$(static_busybox) || skip "no static busybox (package busybox-static)"
# shellcheck source=tests/kernel/tpm-quote-lib.sh
. "$kdir/tpm-quote-lib.sh"
missing=$(tpmq_missing)
[ -z "$missing" ] || skip "$missing not installed (swtpm, tpm2-tools, xxd)"
# shellcheck source=tests/kernel/cut-host-lib.sh
. "$kdir/cut-host-lib.sh"

t0=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/kernel-lifecycle.XXXXXX") || exit 99
trap '[ -n "${KEEP:-}" ] && echo "test_kernel_lifecycle: kept $tmp" || rm -rf "$tmp"' EXIT
fails=0
results=$tmp/results

# What power-cut-recovered needs in every kernel's guest: the preload that stops rpm at
# its point (cut_point.c) and the cut package's versions 0 and 1 (cut.rpmspec).
mkdir -p "$tmp/cut" && gcc -shared -fPIC -O2 -o "$tmp/cut/cut-point.so" "$kdir/cut_point.c" -ldl ||
	error "cannot build cut_point.c"
for v in 0 1; do
	rpmbuild -bb --quiet --define "_topdir $tmp/rpmbuild-cut" --define "ver $v" --define "pkg imastream-cut" \
		"$kdir/cut.rpmspec" >"$tmp/rpmbuild-cut.log" 2>&1 || error "rpmbuild of cut.rpmspec failed: $(tail -n 2 "$tmp/rpmbuild-cut.log")"
done
cp "$tmp"/rpmbuild-cut/RPMS/noarch/imastream-cut-[01]-1.noarch.rpm "$tmp/cut/" || error "no cut packages built"

# report NAME PASS|FAIL DETAIL: a host check, in the guest's format.
report() {
	echo "CHECK $1 $2 $(printf '%s' "$3" | tr '\n' ' ' | cut -c1-300)" | tee -a "$results"
}

# The stages of each boot, in the jobs' order: NAME:pass, or NAME:PATH for a stage the
# verifier must fail naming PATH.
boot1=(first-boot:pass services-running:pass dnf-upgrade-same-boot:pass dnf-erase:pass generated-files:pass
	config-edited-reported:pass config-accepted:pass config-edit-not-accepted:/etc/issue.net
	program-modified:/usr/bin/rpmkeys unsigned-program-run:/usr/local/bin/lifecycle-unsigned
	file-changed-outside-rpm:/usr/share/common-licenses/GPL-3)
boot2=(reboot:pass rollback-after-reboot:/usr/bin/udevadm)
recover=(power-cut-recovered:pass)
rotated=(key-rotated:pass)

# boot KERNEL TAG JOB ARGS STAGE...: one boot of $disk with the job of lifecycle-JOB.sh,
# the kernel's IMA and EVM arguments ARGS (ima_appraise=...), a fresh TPM and a fresh
# nonce for each STAGE's quote; the results disk is unpacked into $tmp/TAG-JOB/, the
# guest's checks added to $results. A power cut the guest asks for (cut-lib.sh) kills
# qemu (qemu_cuttable) and leaves cut_line set.
boot() {
	local kernel=$1 tag=$2 job=$3 args=$4 jd=$tmp/job-$3 out=$tmp/$2-$3 start rc s
	shift 4
	local stages=("$@")
	rm -rf "$jd" "$out" && mkdir -p "$jd" "$out" || exit 99
	cp "$kdir/guest-lib.sh" "$kdir/lifecycle-lib.sh" "$kdir/cut-lib.sh" "$srcdir/scripts/ima-rollout" \
		"$tmp"/cut/* "$tmp"/rotation/* "$jd/" && cp "$kdir/lifecycle-$job.sh" "$jd/job.sh" &&
		cp -r "$upgrade/repo" "$jd/repo" && cp -r "$tmp/mend" "$jd/mend" &&
		for s in "${stages[@]}"; do echo "${s%%:*} $(openssl rand -hex 20)"; done >"$jd/nonces" &&
		cp "$jd/nonces" "$tmp/$tag-$job.nonces" &&
		printf "bump=lc1\nbrk='%s'\n" "${IMASTREAM_LIFECYCLE_BREAK:-}" >"$jd/params.sh" &&
		tar -C "$jd" -cf "$tmp/job.tar" . && truncate -s 64M "$tmp/out.img" || exit 99
	dd if=/dev/zero of="$tmp/out.img" bs=64k count=1 conv=notrunc status=none
	tpmq_start "$tmp/tpm" || error "swtpm did not start (see $tmp/tpm/swtpm.log)"
	tpmq_qemu_args "$tmp/tpm"
	start=$(date +%s)
	qemu_cuttable "$tmp" "$tmp/$tag-$job.qemu" \
		timeout --kill-after=10 2400 qemu-system-x86_64 -accel tcg -cpu max -m 1536 -smp 1 \
		-nographic -nodefaults -no-reboot -monitor none \
		-serial "file:$tmp/$tag-$job.console" -serial "file:$tmp/$tag-$job.raw" \
		-kernel "$kernel" -initrd "$tmp/initrd.img" \
		-append "console=ttyS0 panic=-1 loglevel=4 $args ima_template=ima-sig ima_hash=sha256" \
		-drive "file=$disk,format=raw,if=virtio,cache=writeback" \
		-drive "file=$tmp/job.tar,format=raw,if=virtio,readonly=on" \
		-drive "file=$tmp/out.img,format=raw,if=virtio" "${tpmq_args[@]}" || exit 99
	rc=$qemu_rc
	tpmq_stop "$tmp/tpm"
	tr -d '\r' <"$tmp/$tag-$job.raw" >"$tmp/$tag-$job.results"
	grep '^CHECK ' "$tmp/$tag-$job.results" | sed "s/^CHECK /CHECK $tag:/"
	grep '^CHECK ' "$tmp/$tag-$job.results" >>"$results"
	tar -xf "$tmp/out.img" -C "$out" 2>/dev/null
	echo "test_kernel_lifecycle: $tag $job: $(($(date +%s) - start)) s, multi-user.target at $(sed -n 's/^BOOTED //p' "$tmp/$tag-$job.results") s${cut_line:+, cut at $cut_line}"
	if [ -z "$cut_line" ] && { [ "$rc" != 0 ] || ! grep -q '^DONE' "$tmp/$tag-$job.results"; }; then
		echo "test_kernel_lifecycle: $tag $job: the job did not finish (qemu exit $rc); console tail:"
		sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$tmp/$tag-$job.console" | tail -n 30
		cp "$tmp/$tag-$job.console" "./test_kernel_lifecycle-$tag-$job.console.log" 2>/dev/null
	fi
}

# judge TAG KVER JOB STAGE...: each stage's verdict, in order. A pass stage needs attest
# check to pass its list, proven by the stage's TPM quote (signature, nonce, PCR 10
# replayed, boot_aggregate); a fail stage needs the quote to hold and the policy to fail
# exactly its file beyond the files earlier stages of the boot failed. Either also needs
# the stage's checks.
judge() {
	local tag=$1 kver=$2 job=$3 s name want dir=$tmp/$1-$3 rc got new named="" why nonce q
	shift 3
	for s; do
		name=${s%%:*} want=${s#*:}
		why=""
		q=$dir/$name.quote
		nonce=$(sed -n "s/^$name //p" "$tmp/$tag-$job.nonces")
		if [ ! -f "$dir/$name.list" ] || [ ! -f "$dir/$name.policy.json" ]; then
			why="no list and policy from the guest (the job stopped before)"
		elif [ ! -s "$q/q.msg" ]; then
			why="no TPM quote of the list from the guest"
		else
			"$imastream" attest check --policy "$dir/$name.policy.json" --log "$dir/$name.list" \
				--quote "$q/q.msg" --quote-sig "$q/q.sig" --quote-pcrs "$q/q.pcrs" --ak "$q/ak.pem" \
				--nonce "$nonce" >"$dir/$name.attest" 2>"$dir/$name.attest.err"
			rc=$?
			# The quote must prove the list (attest check says so before it judges any
			# file), and tpm2_checkquote must agree.
			if ! grep -q "quote verified: .*boot_aggregate to its PCRs 0-9" "$dir/$name.attest.err"; then
				why="the quote does not prove the list: $(head -n 1 "$dir/$name.attest.err")"
			elif ! tpm2_checkquote -u "$q/ak.pem" -m "$q/q.msg" -s "$q/q.sig" -f "$q/q.pcrs" \
				-g sha256 -q "$nonce" >/dev/null 2>&1; then
				why="tpm2_checkquote refused the quote"
			fi
			got=$(grep ': FAIL: ' "$dir/$name.attest" | sed 's/: FAIL: .*//' | LC_ALL=C sort -u)
			new=$(LC_ALL=C comm -23 <(echo "$got") <(echo "$named" | LC_ALL=C sort -u) | sed '/^$/d')
			if [ -n "$why" ]; then
				:
			elif [ "$want" = pass ]; then
				[ $rc = 0 ] && [ -z "$got" ] ||
					why="attest check exit $rc, failed: $(grep ': FAIL: ' "$dir/$name.attest" | head -n 3 | tr '\n' ' ')"
			elif [ $rc != 1 ] || [ "$new" != "$want" ]; then
				why="wanted attest check to fail naming $want, got exit $rc, newly failed: $(echo "$new" | tr '\n' ' ')"
			fi
			[ "$want" = pass ] || named=$(printf '%s\n%s' "$named" "$want")
		fi
		[ -z "$why" ] && why=$(grep "^CHECK $name:[^ ]* FAIL" "$results" | head -n 1 | sed 's/^CHECK //')
		if [ -n "$why" ]; then
			echo "STAGE $name (kernel $kver): FAIL: $why"
			fails=$((fails + 1))
		elif [ "$want" = pass ]; then
			echo "STAGE $name (kernel $kver): ok: attest PASS, $(wc -l <"$dir/$name.list") entries, quoted; $(tail -n 1 "$dir/$name.attest.err")"
		else
			echo "STAGE $name (kernel $kver): ok: attest FAIL naming $(grep "^$want: FAIL: " "$dir/$name.attest" | head -n 1)"
		fi
	done
}

# measured TAG JOB STAGE PATH DIGEST CHECK: the stage's list holds PATH at DIGEST.
measured() {
	if grep -q " $5 $4\( \|$\)" "$tmp/$1-$2/$3.list" 2>/dev/null; then
		report "$3:$6" PASS "$4 measured at $5"
	else
		report "$3:$6" FAIL "$4 not measured at $5 (the new version)"
	fi
}

# lifecycle KERNEL TAG: both boots of one disk and their stages.
lifecycle() {
	local kernel=$1 tag=$2 kver start img n
	kver=${kernel##*/vmlinuz-}
	start=$(date +%s)
	: >"$results"
	# Keys: RSA where the kernel has no ECDSA (Debian's 6.1), else ECDSA P-384.
	local keytype=p384
	kernel_has "$kernel" CONFIG_CRYPTO_ECDSA || keytype=rsa
	img=$(IMASTREAM=$imastream "$kdir/rpm-image.sh" "$so" "$keytype" lifecycle)
	case $? in
	0) ;;
	77) skip "no rpm-only image: $img" ;;
	*) error "rpm-image.sh failed: $img" ;;
	esac
	echo "test_kernel_lifecycle: image $img ready after $(($(date +%s) - start)) s"
	upgrade=$tmp/upgrade-$keytype
	[ -d "$upgrade" ] || "$kdir/lifecycle-upgrade.sh" "$img" "$upgrade" || error "cannot build the upgrade of $img"
	"$kdir/rpm-image-initramfs.sh" "$kernel" "$busybox" "$tmp/initrd.img" || error "cannot make the initramfs for $kver"
	# The mending of boot 2 reinstalls the packages the failing stages changed (rpm's
	# rpmkeys, base-files' GPL-3) and libgomp1, which dnf-erase removed though dnf's rpm
	# bindings need it, from the image's repository; the rotation enrols a new key of
	# the image's type.
	rm -rf "$tmp/mend" "$tmp/rotation" && mkdir -p "$tmp/mend" "$tmp/rotation" &&
		cp "$img"/repo/rpm-[0-9]*.rpm "$img"/repo/base-files-[0-9]*.rpm "$img"/repo/libgomp1-[0-9]*.rpm "$tmp/mend/" ||
		error "no rpm, base-files or libgomp1 package in $img/repo"
	local keyopt=(-newkey ec -pkeyopt ec_paramgen_curve:P-384)
	[ $keytype = p384 ] || keyopt=(-newkey rsa:2048)
	(umask 077 && openssl req -x509 "${keyopt[@]}" -nodes -sha256 -days 3650 -subj "/CN=lifecycle $tag rotated" \
		-addext subjectKeyIdentifier=hash -keyout "$tmp/rotation/new.key" -out "$tmp/rotation/new.crt" >/dev/null 2>&1) &&
		cp "$srcdir/docs/ima-policy-measured" "$tmp/rotation/ima-policy" ||
		error "cannot make the rotation's key"
	disk=$tmp/disk.img
	cp --sparse=always "$img/root.img" "$disk" || error "cannot copy the disk"

	boot "$kernel" "$tag" boot1 ima_appraise=enforce "${boot1[@]}"
	# The new versions ran: udevadm and libblkid (udevd restarted), the plugin (mapped by
	# the erase's transaction).
	while read -r d p; do
		case $p in
		*/imastream.so) measured "$tag" boot1 dnf-erase "$p" "$d" new-plugin-mapped ;;
		*) measured "$tag" boot1 dnf-upgrade-same-boot "$p" "$d" new-version-ran ;;
		esac
	done <"$upgrade/DIGESTS"
	n=$(grep -c ' /etc/ld\.so\.cache\( \|$\)' "$tmp/$tag-boot1/generated-files.list" 2>/dev/null)
	report generated-files:two-digests "$( [ "${n:-0}" -ge 2 ] && echo PASS || echo FAIL)" "/etc/ld.so.cache measured $n times"
	judge "$tag" "$kver" boot1 "${boot1[@]}"

	boot "$kernel" "$tag" boot2 ima_appraise=enforce "${boot2[@]}"
	report power-cut-recovered:cut "$( [ -n "$cut_line" ] && echo PASS || echo FAIL)" "boot2 ${cut_line:-ended uncut}"
	judge "$tag" "$kver" boot2 "${boot2[@]}"
	boot "$kernel" "$tag" recover ima_appraise=enforce "${recover[@]}"
	judge "$tag" "$kver" recover "${recover[@]}"
	boot "$kernel" "$tag" rotate "ima_appraise=fix evm=fix"
	boot "$kernel" "$tag" rotated ima_appraise=enforce "${rotated[@]}"
	judge "$tag" "$kver" rotated "${rotated[@]}"
	rm -f "$disk"
	echo "test_kernel_lifecycle: $tag: $(($(date +%s) - start)) s"
}

mapfile -t kernels < <(kernel_list)
[ ${#kernels[@]} -gt 0 ] || skip "no kernel to boot"
for k in "${kernels[@]}"; do
	lifecycle "$k" "$(kernel_tag "$k")"
done
echo "test_kernel_lifecycle: $(($(date +%s) - t0)) s in all"
[ $fails = 0 ] || exit 1
exit 0
