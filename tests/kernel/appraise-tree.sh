#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Proves that a labelled root tree appraises in a real kernel in one of three modes: its
# programs run, and altered or unlabelled copies of them do not. Later tests point this
# at trees that imastream's rpm plugin and installer produce.
#
# Usage:
#   appraise-tree.sh --root DIR --mode hash|imasig|evm [--ima-cert DER] [--evm-cert DER]
#                    --exec 'REL [ARGS...]'... [--deny 'REL [ARGS...]' [--cause CAUSE]]...
#                    [--name NAME] [--console FILE]
#
#   --mode hash      security.ima holds a hash (type 4 or 1); no keys are loaded
#   --mode imasig    security.ima holds a signature (type 3); --ima-cert goes into _ima
#   --mode evm       also security.evm holds a portable signature (type 5); the
#                    --evm-cert (default: the IMA one) goes into _evm and EVM is switched
#                    on with X.509 keys only
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
#
# The tree itself is not modified: the checks run on a copy. Before booting, the labels
# of every --exec file are checked on the host (type byte for the mode, owned by root so
# that appraise_tcb judges it at all) and reported as CHECK lines too.
# Output and exit status: those of vm-check.sh (0 pass, 1 fail, 77 skip, 99 error), plus
# a summary line.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root="" mode="" ima_cert="" evm_cert="" name="" console=""
execs=() denies=() causes=()

die() { echo "appraise-tree: $*" >&2; exit 99; }

while [ $# -gt 0 ]; do
	case "$1" in
	--root) root=${2:-}; shift 2 ;;
	--mode) mode=${2:-}; shift 2 ;;
	--ima-cert) ima_cert=${2:-}; shift 2 ;;
	--evm-cert) evm_cert=${2:-}; shift 2 ;;
	--exec) execs+=("${2:-}"); shift 2 ;;
	--deny) denies+=("${2:-}"); causes+=(""); shift 2 ;;
	--cause)
		[ ${#denies[@]} -gt 0 ] || die "--cause must follow a --deny"
		causes[${#causes[@]} - 1]=${2:-}; shift 2 ;;
	--name) name=${2:-}; shift 2 ;;
	--console) console=${2:-}; shift 2 ;;
	*) die "unknown argument '$1' (see the usage at the top of $0)" ;;
	esac
done
[ -d "$root" ] || die "--root DIR is required and must be a directory"
root=$(cd "$root" && pwd)
[ ${#execs[@]} -gt 0 ] || die "at least one --exec is required"
case "$mode" in
hash) ;;
imasig) [ -f "$ima_cert" ] || die "--mode imasig needs --ima-cert DER" ;;
evm)
	[ -f "$ima_cert" ] || die "--mode evm needs --ima-cert DER"
	evm_cert=${evm_cert:-$ima_cert} ;;
*) die "--mode must be hash, imasig or evm" ;;
esac
name=${name:-kernel-$mode}
for cmd in "${execs[@]}" "${denies[@]}"; do
	# The command lands in a generated shell script: allow only plain words.
	case "$cmd" in
	'' | *[!A-Za-z0-9._/+@=:,\ -]*) die "unsupported characters in command '$cmd'" ;;
	/* | ../* | */../*) die "commands are relative to the root: '$cmd'" ;;
	esac
	[ -f "$root/${cmd%% *}" ] || die "no file ${cmd%% *} in $root"
done

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

# ---------- host side: is the tree labelled for this mode at all? ----------
for cmd in "${execs[@]}"; do
	rel=${cmd%% *} f=$root/${cmd%% *}
	ima=$(xattr_type "$f" security.ima) evm=$(xattr_type "$f" security.evm)
	owner=$(stat -c %u "$f")
	case "$mode" in
	hash) want_ima="04|01" ;;
	*) want_ima="03" ;;
	esac
	if [ "$owner" != 0 ]; then
		report "label:$rel FAIL owned by uid $owner: appraise_tcb would not appraise it"
	elif ! [[ "$ima" =~ ^($want_ima)$ ]]; then
		report "label:$rel FAIL security.ima type $ima, mode $mode wants $want_ima"
	elif [ "$mode" = evm ] && [ "$evm" != 05 ]; then
		report "label:$rel FAIL security.evm type $evm, mode evm wants 05 (portable signature)"
	else
		report "label:$rel PASS ima=$ima evm=$evm uid=0"
	fi
done

# ---------- a scratch copy with the controls added ----------
stage=$tmp/root
mkdir -p "$stage" || die "mkdir failed"
# tar keeps every xattr namespace with --xattrs-include='*', security.evm included.
tar -C "$root" --xattrs --xattrs-include='*' -cpf - . |
	tar -C "$stage" --xattrs --xattrs-include='*' -xpf - ||
	die "cannot copy $root with its xattrs"

case "$mode" in
hash) tampered_cause=invalid-hash ;;
*) tampered_cause=invalid-signature ;;
esac
script=$tmp/checks.sh
{
	echo "# Generated by appraise-tree.sh, mode $mode."
	echo ". /guest-lib.sh"
} >"$script"
i=0
for cmd in "${execs[@]}"; do
	i=$((i + 1))
	rel=${cmd%% *} args="" base=$(basename "${cmd%% *}")
	[ "$cmd" = "$rel" ] || args=" ${cmd#* }"
	ctl=imastream-kernel-controls/$i
	copy_labelled "$root/$rel" "$stage/$ctl/tampered/$base" &&
		flip_byte "$stage/$ctl/tampered/$base" &&
		! cmp -s "$root/$rel" "$stage/$ctl/tampered/$base" ||
		die "cannot make a tampered copy of $rel"
	mkdir -p "$stage/$ctl/unlabelled" && cp -p "$root/$rel" "$stage/$ctl/unlabelled/$base" ||
		die "cannot make an unlabelled copy of $rel"
	{
		echo "expect_runs runs:$rel ./$rel$args"
		echo "expect_exec_denied tampered:$rel --cause $tampered_cause ./$ctl/tampered/$base$args"
		echo "expect_exec_denied unlabelled:$rel --cause missing-hash ./$ctl/unlabelled/$base$args"
	} >>"$script"
	if [ "$mode" = evm ]; then
		copy_labelled "$root/$rel" "$stage/$ctl/noevm/$base" &&
			setfattr -h -x security.evm "$stage/$ctl/noevm/$base" ||
			die "cannot make a copy of $rel without security.evm"
		{
			echo "expect_exec_denied noevm:$rel --cause missing-HMAC ./$ctl/noevm/$base$args"
			echo "expect_meta_denied chmod:$rel %a chmod 0700 ./$rel"
			echo "expect_meta_denied chown:$rel %u:%g chown 1:1 ./$rel"
			echo "expect_runs runs-after-refusals:$rel ./$rel$args"
		} >>"$script"
	else
		copy_labelled "$root/$rel" "$stage/$ctl/meta/$base" ||
			die "cannot make a labelled copy of $rel"
		{
			echo "expect_meta_allowed chmod-without-evm:$rel %a 700 chmod 0700 ./$ctl/meta/$base"
			echo "expect_runs runs-after-chmod:$rel ./$ctl/meta/$base$args"
		} >>"$script"
	fi
done
i=0
for cmd in "${denies[@]}"; do
	cause=${causes[$i]}
	i=$((i + 1))
	echo "expect_exec_denied denied:${cmd%% *}${cause:+ --cause $cause} ./$cmd" >>"$script"
done

# ---------- boot ----------
vm_args=(--root "$stage" --checks "$script" --name "$name")
[ -z "$console" ] || vm_args+=(--console "$console")
case "$mode" in
imasig) vm_args+=(--ima-cert "$ima_cert") ;;
evm) vm_args+=(--ima-cert "$ima_cert" --evm-cert "$evm_cert") ;;
esac
"$here/vm-check.sh" "${vm_args[@]}" | tee "$tmp/guest-checks"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 77 ] && exit 77

cat "$host_checks" "$tmp/guest-checks" >"$tmp/all"
pass=$(grep -c '^CHECK [^ ]* PASS' "$tmp/all")
fail=$(grep -c '^CHECK [^ ]* FAIL' "$tmp/all")
echo "appraise-tree: mode $mode: $pass passed, $fail failed"
[ "$rc" -ne 0 ] && exit "$rc"
[ "$fail" -eq 0 ] || exit 1
exit 0
