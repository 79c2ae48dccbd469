#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Makes (or reuses) the cached ext4 disk image of a whole Debian 13 root with this
# checkout's imastream installed in it, the system test_kernel_live.sh boots.
#
# Usage: live-image.sh
# Prints the path of the image, CACHE/live-trixie-KEY/root.img (beside it imastream.so
# as built and plugin-path, where it is installed), and exits 0; or prints
# the reason and exits 77 (not root, no mmdebstrap, archive unreachable and nothing
# cached) or 99 (a build step failed; its log is named).
#
# The root: mmdebstrap --variant=apt of trixie with live-packages.txt (rpm 4.20, dnf,
# createrepo-c, ima-evm-utils, keyutils, busybox as the init). imastream is built inside
# scripts/matrix's trixie chroot against trixie's librpm and installed into the root with
# "make install DESTDIR=ROOT" (prefix /usr, sysconfdir /etc): the way a user installs a
# checkout on a system whose rpm has no package of it, and the plugin then lands in
# trixie's own %__plugindir. KEY hashes the package list, this script, live-rc.sh and
# the source (uncommitted changes included), so any change to imastream makes a new
# image; older images go. Environment: IMASTREAM_CACHE.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${IMASTREAM_CACHE:-/var/cache/imastream}
skip() { echo "live-image: SKIP: $*"; exit 77; }
die() { echo "live-image: $*" >&2; exit 99; }

[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap, chroot, root-owned files)"
command -v mmdebstrap >/dev/null || skip "mmdebstrap not found (package mmdebstrap)"
command -v mke2fs >/dev/null || skip "mke2fs not found (package e2fsprogs)"

packages=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/live-packages.txt" | paste -sd, -)
# The source of what is built and installed, as it is now: git's tracked and untracked
# (not ignored) files, or without git every file but build/ (a release tarball), leaving
# out the tests, benchmarks and docs and what autoreconf and configure generate.
srcfiles() {
	if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$top" ls-files -z -co --exclude-standard
	else
		find . \( -path ./build -o -name autom4te.cache \) -prune -o -type f -print0
	fi | grep -zEv '^(\./)?(tests|bench|docs)/|\.md$'
}
srchash=$(cd "$top" && srcfiles | LC_ALL=C sort -z | xargs -0 sha256sum 2>/dev/null | sha256sum | cut -c1-16)
key=$(printf '%s\n%s\n%s\n' "$packages" "$srchash" "$(cat "$0" "$here/live-rc.sh" | sha256sum)" |
	sha256sum | cut -c1-12)
dir=$cache/live-trixie-$key
img=$dir/root.img

mkdir -p "$cache" || skip "cannot create $cache"
exec 9>"$cache/live-trixie.lock"
flock 9
[ -f "$dir/.complete" ] && { echo "$img"; exit 0; }

# shellcheck source=scripts/debian-lib.sh
. "$top/scripts/debian-lib.sh"
mirror=$(debian_mirror)
[ -n "$mirror" ] || skip "the host's apt sources name no Debian archive"
debian_reachable "$mirror" trixie || skip "the Debian archive (trixie) cannot be reached and no image is cached"

# The trixie build chroot of scripts/matrix: a cached one, or one it makes now.
chroot=""
for d in "$cache"/chroot-trixie-*/; do
	[ -f "$d.imastream-complete" ] && chroot=${d%/} && break
done
if [ -z "$chroot" ]; then
	[ -w "$top" ] || skip "no trixie chroot in $cache and $top is read-only (scripts/matrix --prepare trixie)"
	out=$("$top/scripts/matrix" --prepare trixie 2>&1)
	case $? in
	0) ;;
	77) skip "no trixie chroot: $(echo "$out" | tail -n 1)" ;;
	*) die "scripts/matrix --prepare trixie failed: $(echo "$out" | tail -n 3)" ;;
	esac
	chroot=$(echo "$out" | sed -n 's/^matrix trixie: chroot [a-z]*: //p' | tail -n 1)
	[ -d "$chroot" ] || die "scripts/matrix named no trixie chroot: $out"
fi

rm -rf "$dir.new" && mkdir -p "$dir.new" || die "cannot create $dir.new"
start=$(date +%s)
echo "live-image: building imastream against trixie's librpm" >&2
work=$dir.new/work
mkdir -p "$work/src" || die "mkdir failed"
tar -C "$top" --exclude=./build --exclude=./.git --exclude=./autom4te.cache -cf - . |
	tar -C "$work/src" -xf - || die "cannot copy the source"
cat >"$work/build.sh" <<'BUILD'
set -eu
cd /work/src && autoreconf -fi >/work/build.log 2>&1
mkdir -p /work/build && cd /work/build
../src/configure --quiet --prefix=/usr --sysconfdir=/etc --localstatedir=/var >>/work/build.log 2>&1
make -j"$(nproc)" >>/work/build.log 2>&1
make install DESTDIR=/work/dest >>/work/build.log 2>&1
BUILD
# shellcheck source=scripts/chroot-lib.sh
. "$top/scripts/chroot-lib.sh"
chroot_run "$chroot" "$work" build.sh >"$dir.new/build.out" 2>&1 ||
	die "the build in $chroot failed; see $work/build.log"

echo "live-image: mmdebstrap trixie ($(echo "$packages" | tr ',' '\n' | wc -l) packages)" >&2
root=$dir.new/root
mmdebstrap --variant=apt --components=main --include="$packages" \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--customize-hook='chroot "$1" apt-get clean' \
	trixie "$root" "${mirror%/}" >"$dir.new/mmdebstrap.log" 2>&1 ||
	die "mmdebstrap failed; see $dir.new/mmdebstrap.log"
tar -C "$work/dest" -cf - . | tar -C "$root" -xf - --keep-directory-symlink ||
	die "cannot install imastream into the root"
chroot "$root" ldconfig || die "ldconfig in the root failed"
# The plugin as built, for the test's package that carries it (an upgrade of itself).
so=$(cd "$work/dest" && find . -name imastream.so -path '*rpm-plugins*' | head -n 1)
[ -n "$so" ] && cp "$work/dest/$so" "$dir.new/imastream.so" && echo "${so#.}" >"$dir.new/plugin-path" ||
	die "make install put no imastream.so into an rpm-plugins folder"
chroot "$root" imastream --version >"$dir.new/version" 2>&1 ||
	die "imastream does not run in the root: $(cat "$dir.new/version")"

# A real init: busybox's, with an inittab that runs the system's rc script and powers
# off when it returns (the test system has one job per boot).
ln -sf ../bin/busybox "$root/usr/sbin/init" || die "cannot make /sbin/init"
cat >"$root/etc/inittab" <<'TAB'
::sysinit:/bin/sh /etc/init.d/rc.live
::shutdown:/bin/sync
TAB
install -D -m 0755 "$here/live-rc.sh" "$root/etc/init.d/rc.live" || die "cannot install rc.live"
echo live >"$root/etc/hostname"
printf '/dev/vda / ext4 rw 0 1\n' >"$root/etc/fstab"

kib=$(du -sk --apparent-size "$root" | cut -f1)
mke2fs -q -F -t ext4 -I 256 -L imastream-live -d "$root" "$dir.new/root.img" \
	"$((kib + kib / 2 + 262144))k" >"$dir.new/mke2fs.log" 2>&1 ||
	die "mke2fs failed: $(tail -n 3 "$dir.new/mke2fs.log")"
rm -rf "$work" "$root"
find "$cache" -mindepth 1 -maxdepth 1 -name 'live-trixie-*' ! -name "$(basename "$dir.new")" \
	-exec rm -rf {} + && mv "$dir.new" "$dir" && touch "$dir/.complete" || die "cannot finish $dir"
echo "live-image: made in $(($(date +%s) - start)) s: $img" >&2
echo "$img"
