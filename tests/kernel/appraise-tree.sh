#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Proves that labelled root trees appraise in a real kernel, in one or more modes in a
# single boot: their programs run, and altered or unlabelled copies of them do not.
#
# Usage:
#   appraise-tree.sh [--ima-cert DER]... [--evm-cert DER]... [--name NAME] [--console FILE]
#                    [--guest-checks FILE] [--guest-checks-evm FILE] [--guest-bin PROGRAM]...
#                    TREE...
#   TREE: --root DIR --mode hash|imasig|evm [--tag WORD]
#         --exec 'REL [ARGS...]'... [--deny 'REL [ARGS...]' [--cause CAUSE]]...
#
#   --root DIR       starts a tree; the options up to the next --root belong to it
#   --mode hash      security.ima holds a hash (type 4 or 1)
#   --mode imasig    security.ima holds a signature (type 3), checked against _ima
#   --mode evm       also security.evm holds a portable signature (type 5), checked
#                    against _evm with EVM on (X.509 keys only)
#   --tag WORD       the tree's directory on the disk and the prefix of its check names
#                    (default: the mode, numbered if two trees share one)
#   --exec CMD       a program in the tree, relative to DIR, that must run and exit 0 with
#                    the given arguments (words split on spaces; no quoting). Each one also
#                    gets these controls, made from copies of it on the same disk:
#                      tampered    one byte changed, labels kept   -> refused (EACCES)
#                      unlabelled  no security.* at all            -> refused (EACCES)
#                      evm mode:   copy without security.evm       -> refused (EACCES);
#                                  chmod and chown of the file     -> refused (EPERM)
#                      other modes: chmod of a copy is allowed and it still runs (IMA
#                                  alone does not bind metadata; this keeps the contrast
#                                  with evm mode honest)
#   --deny CMD       a program in the tree that must be refused; --cause right after it
#                    names the audit cause the kernel must give (e.g. invalid-signature)
#   --ima-cert DER   loaded into _ima at boot (all trees share the keyrings; a hash tree
#                    does not care, since a type-4 label is judged without keys)
#   --evm-cert DER   loaded into _evm (default: the --ima-cert files) when EVM goes on
#   --guest-checks FILE  more checks (a guest-lib.sh script fragment, cwd = the disk) run
#                    after the trees without EVM and before EVM goes on
#   --guest-checks-evm FILE  the same, run last, with EVM on (needs an evm tree)
#   --guest-bin PROG passed to vm-check.sh: PROG and its libraries in the initramfs
#   --need CONFIG_X  boot only kernels whose config has CONFIG_X (=y or =m), e.g.
#                    CONFIG_CRYPTO_ECDSA; skip (77) when none has it
#
# Kernels: the same disk is judged by every kernel of kernels.sh's list, one boot each
# (Debian 12's 6.1 and Debian 13's 6.12 by default); check names get the kernel's short
# version in front ("6.12:runs:evm/usr/bin/busybox").
#
# Order in the VM: the hash and imasig trees are checked first with EVM off, then the
# --guest-checks, then EVM is switched on (check "evm-on"), the evm trees are checked and
# the --guest-checks-evm run.
# EVM cannot be switched off again, and with it on every root-owned file needs
# security.evm, which is why the order is fixed; a file is appraised on first use, and no
# evm-tree file is touched before EVM is on.
#
# The trees themselves are not modified: the checks run on a copy. Before booting, the
# labels of every --exec file are checked on the host (type byte for the mode, owned by
# root so that appraise_tcb judges it at all) and reported as CHECK lines too.
# Output and exit status: those of vm-check.sh (0 pass, 1 fail, 77 skip, 99 error), plus
# a summary line.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
name="" console="" guest_checks="" guest_checks_evm=""
ima_certs=() evm_certs=() guest_bins=() needs=()
# Per tree g: roots[g] modes[g] tags[g]; per program: its tree, command, (deny) cause.
roots=() modes=() tags=()
exec_tree=() exec_cmd=() deny_tree=() deny_cmd=() deny_cause=()

die() { echo "appraise-tree: $*" >&2; exit 99; }

cur=-1
need_tree() { [ $cur -ge 0 ] || die "$1 must follow a --root"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--root) cur=${#roots[@]}; roots+=("${2:-}"); modes+=(""); tags+=(""); shift 2 ;;
	--mode) need_tree --mode; modes[cur]=${2:-}; shift 2 ;;
	--tag) need_tree --tag; tags[cur]=${2:-}; shift 2 ;;
	--exec) need_tree --exec; exec_tree+=("$cur"); exec_cmd+=("${2:-}"); shift 2 ;;
	--deny)
		need_tree --deny
		deny_tree+=("$cur"); deny_cmd+=("${2:-}"); deny_cause+=(""); shift 2 ;;
	--cause)
		[ ${#deny_cmd[@]} -gt 0 ] || die "--cause must follow a --deny"
		deny_cause[${#deny_cause[@]} - 1]=${2:-}; shift 2 ;;
	--ima-cert) ima_certs+=("${2:-}"); shift 2 ;;
	--evm-cert) evm_certs+=("${2:-}"); shift 2 ;;
	--guest-checks) guest_checks=${2:-}; shift 2 ;;
	--guest-checks-evm) guest_checks_evm=${2:-}; shift 2 ;;
	--guest-bin) guest_bins+=("${2:-}"); shift 2 ;;
	--need) needs+=("${2:-}"); shift 2 ;;
	--name) name=${2:-}; shift 2 ;;
	--console) console=${2:-}; shift 2 ;;
	*) die "unknown argument '$1' (see the usage at the top of $0)" ;;
	esac
done
[ ${#roots[@]} -gt 0 ] || die "at least one --root DIR is required"
[ -z "$guest_checks" ] || [ -f "$guest_checks" ] || die "--guest-checks $guest_checks not found"
has_evm=0
for g in "${!roots[@]}"; do
	[ -d "${roots[g]}" ] || die "--root ${roots[g]} is not a directory"
	roots[g]=$(cd "${roots[g]}" && pwd)
	case "${modes[g]}" in
	hash) ;;
	imasig) [ ${#ima_certs[@]} -gt 0 ] || die "--mode imasig needs --ima-cert DER" ;;
	evm)
		[ ${#ima_certs[@]} -gt 0 ] || die "--mode evm needs --ima-cert DER"
		has_evm=1 ;;
	*) die "--mode of ${roots[g]} must be hash, imasig or evm" ;;
	esac
	if [ -z "${tags[g]}" ]; then
		tags[g]=${modes[g]}
		n=1
		for ((h = 0; h < g; h++)); do
			[ "${modes[h]}" != "${modes[g]}" ] || n=$((n + 1))
		done
		[ $n = 1 ] || tags[g]=${modes[g]}$n
	fi
	case "${tags[g]}" in
	'' | *[!A-Za-z0-9._-]* | imastream-kernel-controls) die "bad --tag '${tags[g]}'" ;;
	esac
	for ((h = 0; h < g; h++)); do
		[ "${tags[h]}" != "${tags[g]}" ] || die "two trees tagged '${tags[g]}'"
	done
done
[ ${#exec_cmd[@]} -gt 0 ] || die "at least one --exec is required"
if [ -n "$guest_checks_evm" ]; then
	[ -f "$guest_checks_evm" ] || die "--guest-checks-evm $guest_checks_evm not found"
	[ $has_evm = 1 ] || die "--guest-checks-evm needs a --mode evm tree (EVM stays off without one)"
fi
[ $has_evm = 0 ] || [ ${#evm_certs[@]} -gt 0 ] || evm_certs=("${ima_certs[@]}")
if [ -z "$name" ]; then
	name=kernel
	for g in "${!roots[@]}"; do name=$name-${tags[g]}; done
fi
check_cmd() { # check_cmd TREE CMD
	# The command lands in a generated shell script: allow only plain words.
	case "$2" in
	'' | *[!A-Za-z0-9._/+@=:,\ -]*) die "unsupported characters in command '$2'" ;;
	/* | ../* | */../*) die "commands are relative to the root: '$2'" ;;
	esac
	[ -f "${roots[$1]}/${2%% *}" ] || die "no file ${2%% *} in ${roots[$1]}"
}
for i in "${!exec_cmd[@]}"; do check_cmd "${exec_tree[i]}" "${exec_cmd[i]}"; done
for i in "${!deny_cmd[@]}"; do check_cmd "${deny_tree[i]}" "${deny_cmd[i]}"; done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/appraise-tree.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
host_checks=$tmp/host-checks
: >"$host_checks"

report() { echo "CHECK $*" | tee -a "$host_checks"; }

# xattr_type FILE NAME: the first byte of the xattr in hex (04, 03, 05...), or "none".
xattr_type() {
	local v
	# --only-values would print raw bytes whatever -e says: parse the NAME=0x... line.
	v=$(getfattr -h -e hex -n "$2" --absolute-names "$1" 2>/dev/null |
		sed -n "s/^$2=0x//p")
	[ -n "$v" ] && echo "${v:0:2}" || echo none
}

# copy_labelled SRC DST: a copy with the same mode, owner and every security.* xattr.
# cp -a would drop security.evm (/etc/xattr.conf tells libattr to skip it).
copy_labelled() {
	local src=$1 dst=$2 attr value
	mkdir -p "$(dirname "$dst")" && cp -p "$src" "$dst" || return 1
	while IFS='=' read -r attr value; do
		setfattr -h -n "$attr" -v "$value" "$dst" || return 1
	done < <(getfattr -h -d -m '^security\.' -e hex --absolute-names "$src" 2>/dev/null |
		grep '^security\.')
}

# flip_byte FILE: changes the byte in the middle of FILE.
flip_byte() {
	local f=$1 size off b
	size=$(stat -c %s "$f")
	[ "$size" -gt 0 ] || return 1
	off=$((size / 2))
	b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
	# shellcheck disable=SC2059
	printf "\\$(printf %03o $(((b + 1) % 256)))" |
		dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# ---------- host side: is each tree labelled for its mode at all? ----------
for i in "${!exec_cmd[@]}"; do
	g=${exec_tree[i]} cmd=${exec_cmd[i]}
	rel=${cmd%% *} f=${roots[g]}/${cmd%% *} mode=${modes[g]}
	ima=$(xattr_type "$f" security.ima) evm=$(xattr_type "$f" security.evm)
	owner=$(stat -c %u "$f")
	case "$mode" in
	hash) want_ima="04|01" ;;
	*) want_ima="03" ;;
	esac
	what=label:${tags[g]}/$rel
	if [ "$owner" != 0 ]; then
		report "$what FAIL owned by uid $owner: appraise_tcb would not appraise it"
	elif ! [[ "$ima" =~ ^($want_ima)$ ]]; then
		report "$what FAIL security.ima type $ima, mode $mode wants $want_ima"
	elif [ "$mode" = evm ] && [ "$evm" != 05 ]; then
		report "$what FAIL security.evm type $evm, mode evm wants 05 (portable signature)"
	else
		report "$what PASS ima=$ima evm=$evm uid=0"
	fi
done

# ---------- a scratch disk: each tree under its tag, with the controls added ----------
stage=$tmp/disk
mkdir -p "$stage" || die "mkdir failed"
for g in "${!roots[@]}"; do
	mkdir -p "$stage/${tags[g]}" || die "mkdir failed"
	# tar keeps every xattr namespace with --xattrs-include='*', security.evm included.
	tar -C "${roots[g]}" --xattrs --xattrs-include='*' -cpf - . |
		tar -C "$stage/${tags[g]}" --xattrs --xattrs-include='*' -xpf - ||
		die "cannot copy ${roots[g]} with its xattrs"
done

# tree_checks G: the guest checks of tree G, on stdout.
tree_checks() {
	local g=$1 i t rel args base ctl cmd cause mode=${modes[$1]} tampered_cause
	t=${tags[g]}
	case "$mode" in
	hash) tampered_cause=invalid-hash ;;
	*) tampered_cause=invalid-signature ;;
	esac
	for i in "${!exec_cmd[@]}"; do
		[ "${exec_tree[i]}" = "$g" ] || continue
		cmd=${exec_cmd[i]} rel=${exec_cmd[i]%% *} args="" base=$(basename "$rel")
		[ "$cmd" = "$rel" ] || args=" ${cmd#* }"
		ctl=imastream-kernel-controls/$t/$i
		copy_labelled "${roots[g]}/$rel" "$stage/$ctl/tampered/$base" &&
			flip_byte "$stage/$ctl/tampered/$base" &&
			! cmp -s "${roots[g]}/$rel" "$stage/$ctl/tampered/$base" ||
			die "cannot make a tampered copy of $rel"
		mkdir -p "$stage/$ctl/unlabelled" &&
			cp -p "${roots[g]}/$rel" "$stage/$ctl/unlabelled/$base" ||
			die "cannot make an unlabelled copy of $rel"
		echo "expect_runs runs:$t/$rel ./$t/$rel$args"
		echo "expect_exec_denied tampered:$t/$rel --cause $tampered_cause ./$ctl/tampered/$base$args"
		echo "expect_exec_denied unlabelled:$t/$rel --cause missing-hash ./$ctl/unlabelled/$base$args"
		if [ "$mode" = evm ]; then
			copy_labelled "${roots[g]}/$rel" "$stage/$ctl/noevm/$base" &&
				setfattr -h -x security.evm "$stage/$ctl/noevm/$base" ||
				die "cannot make a copy of $rel without security.evm"
			echo "expect_exec_denied noevm:$t/$rel --cause missing-HMAC ./$ctl/noevm/$base$args"
			echo "expect_meta_denied chmod:$t/$rel %a chmod 0700 ./$t/$rel"
			echo "expect_meta_denied chown:$t/$rel %u:%g chown 1:1 ./$t/$rel"
			echo "expect_runs runs-after-refusals:$t/$rel ./$t/$rel$args"
		else
			copy_labelled "${roots[g]}/$rel" "$stage/$ctl/meta/$base" ||
				die "cannot make a labelled copy of $rel"
			echo "expect_meta_allowed chmod-without-evm:$t/$rel %a 700 chmod 0700 ./$ctl/meta/$base"
			echo "expect_runs runs-after-chmod:$t/$rel ./$ctl/meta/$base$args"
		fi
	done
	for i in "${!deny_cmd[@]}"; do
		[ "${deny_tree[i]}" = "$g" ] || continue
		cmd=${deny_cmd[i]} cause=${deny_cause[i]}
		echo "expect_exec_denied denied:$t/${cmd%% *}${cause:+ --cause $cause} ./$t/$cmd"
	done
}

script=$tmp/checks.sh
{
	echo "# Generated by appraise-tree.sh."
	echo ". /guest-lib.sh"
	for g in "${!roots[@]}"; do
		[ "${modes[g]}" = evm ] || tree_checks "$g" || exit 99
	done
	if [ -n "$guest_checks" ]; then
		echo "# --- from $guest_checks"
		cat "$guest_checks"
		echo
	fi
	if [ $has_evm = 1 ]; then
		echo "expect_evm_on evm-on"
		for g in "${!roots[@]}"; do
			[ "${modes[g]}" != evm ] || tree_checks "$g" || exit 99
		done
		if [ -n "$guest_checks_evm" ]; then
			echo "# --- from $guest_checks_evm"
			cat "$guest_checks_evm"
			echo
		fi
	fi
} >"$script" || exit 99

# ---------- boot, once per kernel ----------
# shellcheck source=tests/kernel/kernels.sh
. "$here/kernels.sh"
mapfile -t kernels < <(kernel_list "${needs[@]}")
[ ${#kernels[@]} -gt 0 ] || { echo "SKIP: no kernel to boot${needs[*]:+ with ${needs[*]}}"; exit 77; }
vm_args=(--root "$stage" --checks "$script")
for c in "${ima_certs[@]}"; do vm_args+=(--ima-cert "$c"); done
if [ $has_evm = 1 ]; then
	for c in "${evm_certs[@]}"; do vm_args+=(--evm-cert "$c"); done
	vm_args+=(--evm-late)
fi
for b in "${guest_bins[@]}"; do vm_args+=(--guest-bin "$b"); done
: >"$tmp/guest-checks"
# boot_one KERNEL TAG: one boot with the checks; vm-check.sh's status.
# shellcheck disable=SC2317 # called through boot_kernels
boot_one() {
	echo "appraise-tree: booting $1"
	IMASTREAM_KERNEL=$1 "$here/vm-check.sh" "${vm_args[@]}" --name "$name-$2" \
		${console:+--console "$console.$2"} | sed "s/^CHECK /CHECK $2:/" | tee -a "$tmp/guest-checks"
	return "${PIPESTATUS[0]}"
}
boot_kernels boot_one "${kernels[@]}"
rc=$?
[ $rc = 77 ] && exit 77

cat "$host_checks" "$tmp/guest-checks" >"$tmp/all"
pass=$(grep -c '^CHECK [^ ]* PASS' "$tmp/all")
fail=$(grep -c '^CHECK [^ ]* FAIL' "$tmp/all")
modes_seen=$(printf '%s\n' "${tags[@]}" | paste -sd, -)
echo "appraise-tree: trees $modes_seen on $kernels_booted kernel(s): $pass passed, $fail failed"
[ "$rc" -ne 0 ] && exit "$rc"
[ "$fail" -eq 0 ] || exit 1
exit 0
