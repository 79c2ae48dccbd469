# SPDX-License-Identifier: LGPL-2.1-or-later
# What the kernel tests share on the host (guest-lib.sh is the guest's): which kernels they
# boot, one boot per kernel with the results added up, and their RSA test keys.
# shellcheck shell=bash
#
# By default two: the host's Debian kernel (the newest /boot/vmlinuz-* with modules; 6.1
# on Debian 12) and Debian 13's (6.12), which fetch-kernel.sh brings into the cache.
# IMASTREAM_KERNEL=PATH[ PATH...] replaces the list; IMASTREAM_KERNEL_SUITES (default
# "trixie") names the suites whose kernels are added, "" for none.

# kernel_config KERNEL: the kernel's config file (config-VER beside vmlinuz-VER).
kernel_config() {
	echo "$(dirname "$1")/config-${1##*/vmlinuz-}"
}

# kernel_has KERNEL CONFIG_OPTION: 0 when the option is built in or a module.
kernel_has() {
	grep -Eq "^$2=(y|m)$" "$(kernel_config "$1")" 2>/dev/null
}

# kernel_list [CONFIG_OPTION...]: one kernel image per line, each having every option;
# why a kernel is missing goes to stderr (an unreachable archive is no failure here).
kernel_list() {
	local k kernels=() opt ok out here
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	if [ -n "${IMASTREAM_KERNEL:-}" ]; then
		read -r -a kernels <<<"$IMASTREAM_KERNEL"
	else
		for k in $(printf '%s\n' /boot/vmlinuz-* | sort -V -r); do
			[ -d "/lib/modules/${k#/boot/vmlinuz-}" ] && { kernels+=("$k"); break; }
		done
		for s in ${IMASTREAM_KERNEL_SUITES-trixie}; do
			if out=$("$here/fetch-kernel.sh" "$s"); then
				kernels+=("$out")
			else
				echo "kernels: no $s kernel: ${out#fetch-kernel: }" >&2
			fi
		done
	fi
	for k in "${kernels[@]}"; do
		ok=1
		for opt; do
			kernel_has "$k" "$opt" || { ok=0; echo "kernels: $k lacks $opt" >&2; }
		done
		[ $ok = 0 ] || echo "$k"
	done
}

# kernel_tag KERNEL: a short name for check names and logs, e.g. 6.1 or 6.12.
kernel_tag() {
	local v=${1##*/vmlinuz-}
	echo "$v" | cut -d. -f1,2
}

# boot_kernels FUNCTION KERNEL...: FUNCTION KERNEL TAG boots each kernel once and returns
# vm-check.sh's status (0 pass, 1 a check failed, 77 cannot boot, other: error). Returns 99
# if any boot had an error, else 1 if any check failed, else 0; 77 when none booted.
# Sets kernels_booted to the number of kernels that ran their checks.
boot_kernels() {
	local fn=$1 k krc rc=0
	shift
	kernels_booted=0
	for k; do
		"$fn" "$k" "$(kernel_tag "$k")"
		krc=$?
		case $krc in
		0) kernels_booted=$((kernels_booted + 1)) ;;
		77) ;;
		1) [ $rc = 99 ] || rc=1; kernels_booted=$((kernels_booted + 1)) ;;
		*) rc=99 ;;
		esac
	done
	[ $rc = 0 ] && [ $kernels_booted = 0 ] && return 77
	return $rc
}

# make_key DIR NAME: an RSA-2048 private key DIR/NAME.pem (0600) and its self-signed DER
# certificate DIR/NAME.der with a hash SKID, so that key ids agree with the kernel's.
# RSA, since Debian's 6.1 kernel has no ECDSA (CONFIG_CRYPTO_ECDSA unset). Returns 1 with
# openssl's output on failure.
make_key() {
	(umask 077; openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
		-subj "/CN=imastream kernel test $2" -addext subjectKeyIdentifier=hash \
		-keyout "$1/$2.pem" -outform DER -out "$1/$2.der" >"$1/openssl.log" 2>&1) ||
		{ cat "$1/openssl.log"; return 1; }
}

# static_busybox: prints a statically linked busybox, the tests' program (the guest runs it
# without any library), or returns 1.
static_busybox() {
	local b
	for b in /bin/busybox /usr/bin/busybox; do
		[ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1 && { echo "$b"; return 0; }
	done
	return 1
}

# install_program ROOT REL: a copy of $busybox at ROOT/REL, owned by root, mode 0755.
install_program() {
	mkdir -p "$(dirname "$1/$2")" && install -m 0755 -o 0 -g 0 "${busybox:?set by static_busybox}" "$1/$2" || exit 99
}
