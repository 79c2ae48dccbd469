# SPDX-License-Identifier: LGPL-2.1-or-later
# Cached Debian chroots for scripts/matrix and scripts/package-check: made once with
# mmdebstrap from the host's Debian archive, used without ever being written to.
# shellcheck shell=bash
#
# The caller sets: top (the checkout), cache (e.g. /var/cache/imastream), mirror
# (debian_mirror), max_days (age after which a chroot is made again).

# chroot_dir NAME SUITE PACKAGES: the path of the chroot NAME-SUITE for PACKAGES (comma-
# separated); the key changes with the suite, the archive and the package list.
chroot_dir() {
	local key
	key=$(printf '%s\n%s\n%s\n' "$2" "$mirror" "$3" | sha256sum | cut -c1-12)
	echo "$cache/chroot-$1-$key"
}

# chroot_fresh DIR: 0 when the chroot exists, is complete and young enough.
chroot_fresh() {
	[ -f "$1/.imastream-complete" ] &&
		[ -z "$(find "$1/.imastream-complete" -mtime "+$max_days")" ]
}

# chroot_make DIR SUITE PACKAGES LOG: (re)creates the chroot DIR; older chroots of the same
# name prefix go. A suite caught in the middle of a transition (sid, now and then) can
# have a package that cannot be installed with the others, such as a -dev package whose
# library moved on under a new -dev name: it is named in the failure, left out, and
# reported; the build then shows whether what it provided came in some other way.
chroot_make() {
	local dir=$1 suite=$2 include=$3 log=$4 tmpdir=$1.new start dropped="" bad try
	start=$(date +%s)
	echo "chroot: making $(basename "$dir") ($suite, $(echo "$include" | tr ',' '\n' | wc -l) packages)"
	for try in 1 2 3; do
		rm -rf "$tmpdir"
		# The archive's signatures are checked; its Valid-Until is not, since the
		# archive this machine reaches may be a frozen copy whose sid Release expired.
		mmdebstrap --variant=apt --components=main --include="$include" \
			--aptopt='Acquire::Check-Valid-Until "false"' \
			"$suite" "$tmpdir" "${mirror%/}" >"$log" 2>&1 && break
		bad=$(sed -n 's/^ \([a-z0-9][a-z0-9.+-]*\) : Depends:.*/\1/p' "$log" | sort -u)
		if [ -z "$bad" ] || [ $try = 3 ]; then
			rm -rf "$tmpdir"
			echo "chroot: mmdebstrap $suite failed:" >&2
			tail -n 20 "$log" >&2
			return 1
		fi
		echo "chroot: $suite cannot install now: $(echo $bad); left out"
		dropped="$dropped $bad"
		include=$(echo "$include" | tr ',' '\n' | grep -vxF -f <(printf '%s\n' $dropped) | paste -sd, -)
	done
	find "$cache" -mindepth 1 -maxdepth 1 -name "$(basename "${dir%-*}")-*" \
		! -name "$(basename "$tmpdir")" -exec rm -rf {} + &&
		mv "$tmpdir" "$dir" && touch "$dir/.imastream-complete" || return 1
	[ -z "$dropped" ] || echo "$dropped" >"$dir/.imastream-left-out"
	echo "chroot: made in $(($(date +%s) - start)) s: $dir"
}

# chroot_run DIR WORK SCRIPT [NAME=VALUE...]: runs /bin/sh /work/SCRIPT in the chroot DIR
# with WORK mounted at /work and WORK/tmp at /tmp, /proc and /dev, in a private mount
# namespace (the mounts vanish with it, whatever happens to the caller), with a clean
# environment plus the NAME=VALUE words.
chroot_run() {
	local dir=$1 work=$2 script=$3
	shift 3
	mkdir -p "$work/tmp" && chmod 1777 "$work/tmp" || return 1
	unshare --mount --propagation private -- /bin/sh -ec '
		d=$1 w=$2 s=$3
		shift 3
		[ -d "$d/work" ] || mkdir "$d/work"
		mount --bind "$w" "$d/work"
		mount --bind "$w/tmp" "$d/tmp"
		mount -t proc proc "$d/proc"
		mount --rbind /dev "$d/dev"
		exec chroot "$d" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LANG=C.UTF-8 TMPDIR=/tmp "$@" /bin/sh "/work/$s"' sh "$dir" "$work" "$script" "$@"
}
