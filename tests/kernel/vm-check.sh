#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Boots Debian's kernel under qemu with IMA appraisal enforced and runs a checks script
# against an ext4 image of a root tree: the kernel, not evmctl, judges the labels.
#
# Usage:
#   vm-check.sh --root DIR --checks SCRIPT [--ima-cert DER]... [--evm-cert DER]...
#               [--evm-late] [--guest-bin PROGRAM]... [--name NAME] [--timeout SECONDS]
#               [--console FILE] [--policy FILE|none] [--kernel-args ARGS] [--fetch DIR]
#               [--verity] [--disk-extra MIB] [--memory MIB] [--tpm SOCKET]
#   vm-check.sh --probe      only say whether this machine can run it (exit 0 or 77)
#
#   --root DIR       tree to put on the disk (mke2fs -d keeps ownership and security.*
#                    xattrs; the harness verifies that on a sample before booting)
#   --checks SCRIPT  busybox sh script run in the guest with cwd and $ROOT = the mounted
#                    disk; it sources /guest-lib.sh and reports through its expect_*
#                    helpers (see guest-lib.sh)
#   --ima-cert DER   certificate loaded into the _ima keyring (repeatable; none = no ring)
#   --evm-cert DER   certificate loaded into _evm, then "echo 2 > .../security/evm":
#                    EVM on with X.509 keys (repeatable; none = EVM stays off)
#   --evm-late       stage the --evm-cert files but leave EVM off: the checks script
#                    switches it on with evm_on / expect_evm_on (guest-lib.sh) when its
#                    checks that need EVM off are done, so one boot serves both
#   --guest-bin PROG copy the dynamically linked program PROG into the initramfs as
#                    /usr/local/bin/NAME, with every library ldd lists for it (ldd runs
#                    in this environment: set LD_LIBRARY_PATH for build-tree libraries).
#                    The initramfs is not appraised, so the program runs unlabelled.
#   --name NAME      label for log files (default vm-check)
#   --timeout SEC    hard limit for the whole VM run (default 300; TCG boots in ~6 s)
#   --console FILE   always keep the guest console log there (for debugging)
#
#   --policy FILE    IMA policy the guest loads before it mounts the disk (default:
#                    docs/ima-policy, the policy docs/SETUP.md tells users to install);
#                    "none" loads none, so the rules the kernel booted with stay
#   --kernel-args ARGS  IMA arguments of the kernel command line (default
#                    "ima_appraise=enforce"), e.g. "ima_policy=tcb ima_template=ima-ng"
#                    with --policy none to measure instead of appraise
#   --fetch DIR      files the checks script sends with send_file (guest-lib.sh) are
#                    written to DIR/NAME, e.g. the guest's IMA measurement list
#   --verity         the disk gets ext4's verity feature (4 KiB blocks, which fs-verity
#                    on ext4 needs) and the guest /verityctl (verityctl.c: enable, measure),
#                    since only the guest's kernel can turn fs-verity on
#   --disk-extra MIB free space on the disk beyond the default (twice the tree, plus
#                    32 MiB), for checks that write much, e.g. a benchmark's installs
#   --memory MIB     guest memory (default 512)
#   --tpm SOCKET     a TPM 2.0 for the guest (tpm-tis): the control socket of a swtpm the
#                    caller started (swtpm socket --tpm2 --ctrl type=unixio,path=SOCKET)
#
# Kernel command line by default: ima_appraise=enforce; the policy file then makes every
# file owned by root on the disk appraised on every open, exec and mmap (as
# ima_policy=appraise_tcb).
#
# Output: one line per check on stdout, "CHECK name PASS|FAIL detail".
# Exit status: 0 all checks passed; 1 a check failed; 77 skipped (the reason is printed:
# not root, qemu, kernel, busybox-static, e2fsprogs, kmod or static gcc missing, or
# IMASTREAM_SKIP_KERNEL=1); 99 harness error (bad usage, boot failure, timeout).
# On 1 or 99 the tail of the guest console is printed and the whole log is kept as
# ./NAME.console.log. Environment: IMASTREAM_KERNEL=PATH/vmlinuz-VER picks a kernel
# (default: the newest /boot/vmlinuz-* with modules); its modules are those of
# PATH/../lib/modules/VER where that exists (a kernel unpacked by fetch-kernel.sh), else
# /lib/modules/VER. QEMU=path overrides the emulator.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root="" checks="" name=vm-check timeout_s=300 keep_console="" probe=0
policy=$here/../../docs/ima-policy
ima_certs=() evm_certs=() guest_bins=() evm_late=0
kernel_args="ima_appraise=enforce" fetch_dir="" verity=0 disk_extra=0 memory=512 tpm_args=()

die() { echo "vm-check: $*" >&2; exit 99; }
skip() { echo "vm-check: SKIP: $*"; exit 77; }

while [ $# -gt 0 ]; do
	case "$1" in
	--root) root=${2:-}; shift 2 ;;
	--checks) checks=${2:-}; shift 2 ;;
	--ima-cert) ima_certs+=("${2:-}"); shift 2 ;;
	--evm-cert) evm_certs+=("${2:-}"); shift 2 ;;
	--evm-late) evm_late=1; shift ;;
	--guest-bin) guest_bins+=("${2:-}"); shift 2 ;;
	--name) name=${2:-}; shift 2 ;;
	--timeout) timeout_s=${2:-}; shift 2 ;;
	--console) keep_console=${2:-}; shift 2 ;;
	--policy) policy=${2:-}; shift 2 ;;
	--kernel-args) kernel_args=${2:-}; shift 2 ;;
	--fetch) fetch_dir=${2:-}; shift 2 ;;
	--verity) verity=1; shift ;;
	--disk-extra) disk_extra=${2:-}; shift 2 ;;
	--memory) memory=${2:-}; shift 2 ;;
	--tpm) tpm_args=(-chardev "socket,id=chrtpm,path=${2:-}" -tpmdev emulator,id=tpm0,chardev=chrtpm
		-device tpm-tis,tpmdev=tpm0); shift 2 ;;
	--probe) probe=1; shift ;;
	*) die "unknown argument '$1' (see the usage at the top of $0)" ;;
	esac
done
if [ $probe = 0 ]; then
	[ -d "$root" ] || die "--root DIR is required and must be a directory"
	[ -f "$checks" ] || die "--checks SCRIPT is required and must be a file"
fi
[ "$policy" = none ] || [ -f "$policy" ] || die "IMA policy $policy not found"
[ -z "$fetch_dir" ] || [ -d "$fetch_dir" ] || die "--fetch $fetch_dir is not a directory"
case "$kernel_args" in *[!A-Za-z0-9._=,\ -]*) die "unsupported characters in --kernel-args" ;; esac
for c in "${ima_certs[@]}" "${evm_certs[@]}"; do
	[ -f "$c" ] || die "certificate $c not found"
done
for b in "${guest_bins[@]}"; do
	[ -x "$b" ] || die "--guest-bin $b is not an executable file"
done
case "$timeout_s" in '' | *[!0-9]*) die "--timeout wants whole seconds" ;; esac
case "$disk_extra$memory" in '' | *[!0-9]*) die "--disk-extra and --memory want whole MiB" ;; esac

# ---------- can this machine run it at all? ----------
[ "${IMASTREAM_SKIP_KERNEL:-0}" = 1 ] && skip "IMASTREAM_SKIP_KERNEL=1"
[ "$(id -u)" = 0 ] || skip "needs root (root-owned files with security.* xattrs)"
qemu=${QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || skip "$qemu not found (package qemu-system-x86)"
busybox=""
for b in /bin/busybox /usr/bin/busybox; do
	# Only a static busybox can run in an initramfs without a libc.
	if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then busybox=$b; break; fi
done
[ -n "$busybox" ] || skip "no static busybox (package busybox-static)"
command -v mke2fs >/dev/null || skip "mke2fs not found (package e2fsprogs)"
command -v debugfs >/dev/null || skip "debugfs not found (package e2fsprogs)"
modprobe=$(command -v modprobe || echo /sbin/modprobe)
[ -x "$modprobe" ] || skip "modprobe not found (package kmod)"
command -v cpio >/dev/null || skip "cpio not found (package cpio)"
command -v getfattr >/dev/null || skip "getfattr not found (package attr)"

# The running kernel is not the one we boot: take Debian's from /boot, never uname -r.
kernel=${IMASTREAM_KERNEL:-}
if [ -n "$kernel" ]; then
	[ -r "$kernel" ] || die "IMASTREAM_KERNEL=$kernel is not a readable file"
else
	for k in $(printf '%s\n' /boot/vmlinuz-* | sort -V -r); do
		if [ -d "/lib/modules/${k#/boot/vmlinuz-}" ]; then kernel=$k; break; fi
	done
fi
[ -n "$kernel" ] && [ -r "$kernel" ] || skip "no /boot/vmlinuz-* with modules (package linux-image-amd64)"
kver=${kernel##*/vmlinuz-}
# A kernel unpacked outside /boot (fetch-kernel.sh) has its modules beside it.
modbase=$(cd "$(dirname "$kernel")/.." && pwd)
[ -d "$modbase/lib/modules/$kver" ] || modbase=/
moddir=${modbase%/}/lib/modules/$kver
[ -d "$moddir" ] || skip "no $moddir for $kernel"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-check.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

cc=${CC_FOR_GUEST:-gcc}
"$cc" -static -O2 -Wall -o "$tmp/keyload" "$here/keyload.c" 2>"$tmp/cc.err" ||
	skip "cannot build a static keyload with $cc: $(head -n 3 "$tmp/cc.err" | tr '\n' ' ')"
if [ $verity = 1 ]; then
	"$cc" -static -O2 -Wall -o "$tmp/verityctl" "$here/verityctl.c" 2>"$tmp/cc.err" ||
		skip "cannot build a static verityctl with $cc: $(head -n 3 "$tmp/cc.err" | tr '\n' ' ')"
fi
if [ $probe = 1 ]; then
	echo "vm-check: ready to boot $kernel with $qemu"
	exit 0
fi

# ---------- initramfs ----------
ird=$tmp/initramfs
mkdir -p "$ird/bin" "$ird/lib/modules" || die "mkdir failed"
cp "$busybox" "$ird/bin/busybox" && cp "$tmp/keyload" "$ird/keyload" &&
	cp "$here/guest-init.sh" "$ird/init" && cp "$here/guest-lib.sh" "$ird/guest-lib.sh" &&
	cp "$checks" "$ird/checks.sh" && chmod 0755 "$ird/init" ||
	die "populating the initramfs failed"
[ "$policy" = none ] || cp "$policy" "$ird/ima-policy" || die "cannot stage the IMA policy"
[ $verity = 0 ] || cp "$tmp/verityctl" "$ird/verityctl" || die "cannot stage verityctl"

# Load order from the kernel's own modules.dep and softdeps (ext4 wants crc32c first);
# modprobe prints it without loading anything. Compressed modules are unpacked here so
# that busybox insmod needs no decompressor.
"$modprobe" -d "$modbase" -S "$kver" --show-depends -a virtio_pci virtio_blk ext4 >"$tmp/deps" 2>&1 ||
	die "modprobe cannot resolve the virtio and ext4 modules of $kver: $(head -n 3 "$tmp/deps")"
# The guest has no module tree for request_module(), so digests that are modules rather
# than built in (sha512 and sha384, sha3 on Debian 6.1) are loaded up front, where they
# exist, for signatures and hashes that use them; and the PKCS#8 parser, so that the
# checks can hand the kernel a private key (CONFIG_PKCS8_PRIVATE_KEY_PARSER=m); ECDSA
# where a kernel has it as a module (6.12 builds it in, 6.1 lacks it).
for m in sha512_generic sha3_generic pkcs8_key_parser ecdsa_generic; do
	"$modprobe" -d "$modbase" -S "$kver" --show-depends "$m" >>"$tmp/deps" 2>/dev/null || true
done
: >"$ird/modules.order"
while read -r verb path _; do
	[ "$verb" = insmod ] || continue
	base=$(basename "$path")
	case "$base" in
	*.ko.xz) out=${base%.xz}; xz -dc "$path" >"$ird/lib/modules/$out" ;;
	*.ko.zst) out=${base%.zst}; zstd -qdc "$path" >"$ird/lib/modules/$out" ;;
	*.ko.gz) out=${base%.gz}; gzip -dc "$path" >"$ird/lib/modules/$out" ;;
	*) out=$base; cp "$path" "$ird/lib/modules/$out" ;;
	esac || die "cannot copy module $path"
	grep -qx "$out" "$ird/modules.order" || echo "$out" >>"$ird/modules.order"
done <"$tmp/deps"

for c in "${ima_certs[@]}"; do
	mkdir -p "$ird/certs/ima" && cp "$c" "$ird/certs/ima/" || die "cannot stage $c"
done
for c in "${evm_certs[@]}"; do
	mkdir -p "$ird/certs/evm" && cp "$c" "$ird/certs/evm/" || die "cannot stage $c"
done
[ $evm_late = 0 ] || : >"$ird/evm-late" || die "cannot write $ird/evm-late"

# add_guest_bin PROG: PROG in /usr/local/bin, its libraries in /usr/local/lib (guest-init
# sets LD_LIBRARY_PATH), the ELF interpreter at the absolute path the program names.
add_guest_bin() {
	local prog=$1 lib path
	mkdir -p "$ird/usr/local/bin" "$ird/usr/local/lib" || return 1
	cp -L "$prog" "$ird/usr/local/bin/" || return 1
	ldd "$prog" >"$tmp/ldd.out" 2>&1 || { cat "$tmp/ldd.out" >&2; return 1; }
	if grep -q 'not found' "$tmp/ldd.out"; then
		grep 'not found' "$tmp/ldd.out" >&2
		return 1
	fi
	while read -r lib _ path _; do
		case "$lib" in
		linux-vdso.so.*) ;;
		/*) mkdir -p "$ird/$(dirname "$lib")" && cp -L "$lib" "$ird/$lib" || return 1 ;;
		*) cp -L "$path" "$ird/usr/local/lib/$lib" || return 1 ;;
		esac
	done <"$tmp/ldd.out"
}
for b in "${guest_bins[@]}"; do
	add_guest_bin "$b" || die "cannot copy $b and its libraries into the initramfs"
done
(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$tmp/initramfs.cpio" ||
	die "cpio failed"

# ---------- disk image ----------
kib=$(du -sk --apparent-size "$root" | cut -f1)
size=$((kib * 2 + 32768 + disk_extra * 1024))
features=()
[ $verity = 0 ] || features=(-O verity -b 4096)
mke2fs -q -F -t ext4 -I 256 "${features[@]}" -L imastream-test -d "$root" "$tmp/disk.img" "${size}k" \
	>"$tmp/mke2fs.log" 2>&1 || die "mke2fs -d $root failed: $(tail -n 3 "$tmp/mke2fs.log")"

# mke2fs -d must carry ownership and every security.* xattr over, or the kernel would be
# judging something other than the tree: compare a sample of labelled files.
verify_image() {
	local n=0 f rel attr i=0 cmds=$tmp/debugfs.cmds
	: >"$cmds"
	: >"$tmp/expect"
	while IFS= read -r -d '' f; do
		rel=${f#"$root"}
		for attr in $(getfattr -h -m '^security\.' --absolute-names "$f" 2>/dev/null |
			sed -n 's/^security\./security./p'); do
			i=$((i + 1))
			getfattr -h --only-values -n "$attr" --absolute-names "$f" >"$tmp/want.$i" ||
				return 1
			echo "ea_get -f $tmp/got.$i \"$rel\" $attr" >>"$cmds"
			# The path last: it may hold blanks.
			echo "$i $attr $rel" >>"$tmp/expect"
		done
		echo "stat \"$rel\"" >>"$cmds"
		stat -c '%u %g' "$f" >>"$tmp/owners"
		n=$((n + 1))
		[ $n -lt 32 ] || break
	done < <(find "$root" -type f -print0 | LC_ALL=C sort -z)
	debugfs -f "$cmds" "$tmp/disk.img" >"$tmp/debugfs.out" 2>&1 || return 1
	while read -r i attr rel; do
		cmp -s "$tmp/want.$i" "$tmp/got.$i" || {
			echo "vm-check: $attr of $rel differs in the image" >&2
			return 1
		}
	done <"$tmp/expect"
	# debugfs prints "User:  U   Group:  G" once per stat, in command order.
	paste -d' ' "$tmp/owners" \
		<(sed -n 's/^User: *\([0-9]*\) *Group: *\([0-9]*\).*/\1 \2/p' "$tmp/debugfs.out") |
		awk '$1 != $3 || $2 != $4 { bad = 1 } END { exit bad }' || {
		echo "vm-check: file ownership differs in the image" >&2
		return 1
	}
}
: >"$tmp/owners"
verify_image || die "the ext4 image does not match $root (xattrs or ownership lost)"

# ---------- boot ----------
# cryptomgr.notests=1: the kernel's own crypto self-tests off. Under TCG on a loaded host
# they can outlast the crypto manager's 60 s wait; the algorithm is then left unusable
# ("Problem loading in-kernel X.509 certificate (-110)", "Unexpected test result for
# ecdsa-nist-p384-generic"), the IMA key cannot be added (ELIBBAD) and init is refused:
# a failure of the emulator's speed, not of what is tested. Appraisal itself still
# verifies every signature with those algorithms.
console=$tmp/console.log results=$tmp/results
: >"$results"
timeout --kill-after=10 "$timeout_s" "$qemu" -accel tcg -cpu max -m "$memory" -smp 1 \
	-nographic -nodefaults -no-reboot -monitor none \
	-serial "file:$console" -serial "file:$results" \
	-kernel "$kernel" -initrd "$tmp/initramfs.cpio" \
	-append "console=ttyS0 cryptomgr.notests=1 $kernel_args panic=-1 loglevel=4" \
	-drive "file=$tmp/disk.img,format=raw,if=virtio" "${tpm_args[@]}" </dev/null >"$tmp/qemu.out" 2>&1
qrc=$?
[ -z "$keep_console" ] || cp "$console" "$keep_console" || die "cannot write $keep_console"

tr -d '\r' <"$results" >"$tmp/results.txt"
grep '^CHECK ' "$tmp/results.txt"
# send_file lines: "FILE NAME LINE", NAME a plain word (guest-lib.sh checks it too).
if [ -n "$fetch_dir" ]; then
	awk -v dir="$fetch_dir" '
		$1 == "FILE" && $2 ~ /^[A-Za-z0-9._-]+$/ {
			line = $0
			sub(/^FILE [^ ]+ /, "", line)
			# awk truncates a ">" file on its first use only.
			print line > (dir "/" $2)
		}' "$tmp/results.txt" || die "cannot write the fetched files into $fetch_dir"
fi
status=0
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	echo "vm-check: the VM did not finish within ${timeout_s}s" >&2
	status=99
elif grep -q '^HARNESS ERROR' "$tmp/results.txt"; then
	sed -n 's/^HARNESS ERROR /vm-check: guest setup failed: /p' "$tmp/results.txt" >&2
	status=99
elif ! grep -q '^DONE' "$tmp/results.txt"; then
	echo "vm-check: the checks did not complete (qemu exit $qrc: $(head -c 300 "$tmp/qemu.out"))" >&2
	status=99
elif ! grep -q '^CHECK ' "$tmp/results.txt"; then
	echo "vm-check: the checks script reported no checks" >&2
	status=99
elif grep -q '^CHECK [^ ]* FAIL' "$tmp/results.txt"; then
	status=1
fi
if [ $status -ne 0 ]; then
	cp "$console" "./$name.console.log" 2>/dev/null &&
		echo "vm-check: guest console kept in $(pwd)/$name.console.log; its tail:" >&2
	# SeaBIOS paints the screen with escape sequences: keep the tail readable.
	tr -d '\r' <"$console" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' | tail -n 30 >&2
fi
exit $status
