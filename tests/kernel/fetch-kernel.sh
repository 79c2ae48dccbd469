#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fetches Debian's kernel of another suite (default trixie: 6.12) into a cache outside the
# repository, with its modules, for the kernel tests to boot; never installs it on the host.
#
# Usage: fetch-kernel.sh [SUITE]
# Prints the path of the kernel image, CACHE/kernel-SUITE/PACKAGE/boot/vmlinuz-VER (its
# config-VER beside it, its modules in PACKAGE/lib/modules/VER), and exits 0; or prints
# the reason and exits 77 (archive unreachable and nothing cached, not root, no tools).
#
# apt-get download runs with its own sources list, lists and cache (in a temporary
# folder), so the host's apt state is untouched. The package is the one the suite's
# linux-image-amd64 depends on, e.g. linux-image-6.12.43+deb13-amd64; it is unpacked with
# dpkg-deb -x and depmod -b writes its modules.dep. A cached kernel younger than
# IMASTREAM_KERNEL_MAX_DAYS (default 7) is used as it is; an older one is used while the
# suite's archive cannot be reached, and replaced when the suite has a newer one.
# Environment: IMASTREAM_CACHE (default /var/cache/imastream).
set -uo pipefail

suite=${1:-trixie}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/debian-lib.sh
. "$here/../../scripts/debian-lib.sh"
cache=${IMASTREAM_CACHE:-/var/cache/imastream}/kernel-$suite

skip() { echo "fetch-kernel: SKIP: $*"; exit 77; }

# cached: the newest complete kernel in the cache, or nothing.
cached() {
	local d
	for d in $(ls -d "$cache"/*/ 2>/dev/null | sort -V -r); do
		[ -f "$d.complete" ] || continue
		ls "$d"boot/vmlinuz-* 2>/dev/null | head -n 1
		return 0
	done
	return 1
}

[ "$(id -u)" = 0 ] || skip "needs root (depmod, the cache in ${cache%/*})"
for t in apt-get dpkg-deb depmod; do
	command -v $t >/dev/null || skip "$t not found"
done
mkdir -p "$cache" || skip "cannot create $cache"
exec 9>"$cache/.lock"
flock 9

k=$(cached) &&
	[ -z "$(find "$(dirname "$k")/../.complete" -mtime "+${IMASTREAM_KERNEL_MAX_DAYS:-7}")" ] &&
	{ echo "$k"; exit 0; }
mirror=$(debian_mirror)
if [ -z "$mirror" ] || ! debian_reachable "$mirror" "$suite"; then
	k=$(cached) && { echo "$k"; exit 0; }
	skip "the Debian archive ($suite) cannot be reached and no $suite kernel is cached"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-kernel.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/archives/partial" "$tmp/parts" "$tmp/prefs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
	>"$tmp/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
	-o "Dir::Etc::Preferences=$tmp/prefs/none" -o "Dir::Etc::PreferencesParts=$tmp/prefs"
	-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp" -o "Dir::Cache::archives=$tmp/archives"
	-o "Dir::State::status=/dev/null" -o "APT::Architecture=amd64" -o "Debug::NoLocking=1"
	-o "Acquire::Check-Valid-Until=false")
apt-get -qq "${apt_opts[@]}" update >"$tmp/update.log" 2>&1 || {
	k=$(cached) && { echo "$k"; exit 0; }
	skip "apt-get update for $suite failed: $(tail -n 2 "$tmp/update.log" | tr '\n' ' ')"
}
# The metapackage names the suite's current kernel package.
pkg=$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
[ -n "$pkg" ] || skip "no linux-image-*-amd64 package behind $suite's linux-image-amd64"
dest=$cache/$pkg
if [ -f "$dest/.complete" ]; then
	touch "$dest/.complete" # still the suite's kernel: good for another while
	ls "$dest"/boot/vmlinuz-* | head -n 1
	exit 0
fi
(cd "$tmp" && apt-get -qq "${apt_opts[@]}" download "$pkg") >"$tmp/download.log" 2>&1 ||
	skip "apt-get download $pkg failed: $(tail -n 2 "$tmp/download.log" | tr '\n' ' ')"
deb=$(ls "$tmp"/"$pkg"_*.deb 2>/dev/null | head -n 1)
[ -f "$deb" ] || skip "apt-get download $pkg left no .deb"
rm -rf "$dest.new" && mkdir -p "$dest.new" && dpkg-deb -x "$deb" "$dest.new" || exit 99
# Trixie ships its modules under usr/lib/modules; the host's kmod looks in BASE/lib/modules.
[ -e "$dest.new/lib" ] || ln -s usr/lib "$dest.new/lib" || exit 99
kver=$(ls "$dest.new/lib/modules" 2>/dev/null | head -n 1)
[ -n "$kver" ] && [ -f "$dest.new/boot/vmlinuz-$kver" ] || {
	echo "fetch-kernel: $pkg has no boot/vmlinuz-VER and lib/modules/VER" >&2
	exit 99
}
depmod -b "$dest.new" "$kver" || exit 99
# Older kernels of the suite go: the cache keeps one.
find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name "$pkg.new" -exec rm -rf {} +
mv "$dest.new" "$dest" && touch "$dest/.complete" || exit 99
echo "$dest/boot/vmlinuz-$kver"
