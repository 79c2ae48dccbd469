# SPDX-License-Identifier: LGPL-2.1-or-later
# Which kernels the kernel tests boot: sourced by appraise-tree.sh.
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
