#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fetches Debian 13's evmctl (ima-evm-utils 1.5, the first with sigv3) and fsverity into a cache outside the repository, for tests that run them in the cached trixie chroot.
#
# Usage: fetch-trixie-tools.sh
# Prints the folder the packages were unpacked into (usr/bin/evmctl, usr/bin/fsverity and
# their libraries under usr/lib/x86_64-linux-gnu; run them with LD_LIBRARY_PATH set in a
# trixie root, whose libc and OpenSSL they need) and exits 0; or prints the reason and
# exits 77 (archive unreachable and nothing cached, not root, no tools).
#
# As tests/kernel/fetch-kernel.sh: apt-get download with its own sources list, lists and
# cache in a temporary folder, so the host's apt state is untouched; dpkg-deb -x, never
# dpkg -i. A cached copy is used as it is while younger than IMASTREAM_TOOLS_MAX_DAYS
# (default 7), and while the archive cannot be reached.
# Environment: IMASTREAM_CACHE (default /var/cache/imastream).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/debian-lib.sh
. "$here/../../scripts/debian-lib.sh"
cache=${IMASTREAM_CACHE:-/var/cache/imastream}/tools-trixie
packages=(ima-evm-utils libimaevm4 fsverity libfsverity0)

skip() { echo "fetch-trixie-tools: SKIP: $*"; exit 77; }

cached() {
	[ -f "$cache/current/.complete" ] && [ -x "$cache/current/usr/bin/evmctl" ] &&
		readlink -f "$cache/current"
}

[ "$(id -u)" = 0 ] || skip "needs root (the cache in ${cache%/*})"
for t in apt-get dpkg-deb; do
	command -v $t >/dev/null || skip "$t not found"
done
mkdir -p "$cache" || skip "cannot create $cache"
exec 9>"$cache/.lock"
flock 9

d=$(cached) && [ -z "$(find "$d/.complete" -mtime "+${IMASTREAM_TOOLS_MAX_DAYS:-7}")" ] &&
	{ echo "$d"; exit 0; }
mirror=$(debian_mirror)
if [ -z "$mirror" ] || ! debian_reachable "$mirror" trixie; then
	d=$(cached) && { echo "$d"; exit 0; }
	skip "the Debian archive (trixie) cannot be reached and no trixie evmctl is cached"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-trixie-tools.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/archives/partial" "$tmp/parts" "$tmp/prefs" "$tmp/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
	>"$tmp/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
	-o "Dir::Etc::Preferences=$tmp/prefs/none" -o "Dir::Etc::PreferencesParts=$tmp/prefs"
	-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp" -o "Dir::Cache::archives=$tmp/archives"
	-o "Dir::State::status=/dev/null" -o "APT::Architecture=amd64" -o "Debug::NoLocking=1"
	-o "Acquire::Check-Valid-Until=false")
if ! apt-get -qq "${apt_opts[@]}" update >"$tmp/update.log" 2>&1 ||
	! (cd "$tmp/debs" && apt-get -qq "${apt_opts[@]}" download "${packages[@]}") \
		>"$tmp/download.log" 2>&1; then
	d=$(cached) && { echo "$d"; exit 0; }
	skip "apt-get for trixie failed: $(tail -n 2 "$tmp"/*.log | tr '\n' ' ')"
fi
# The folder is named after the package versions, so a new upload gets a new one.
name=$(cd "$tmp/debs" && ls *.deb | sed 's/_amd64\.deb$//' | sort | paste -sd+ - | tr -c 'A-Za-z0-9.+_\n-' _)
dest=$cache/$name
if [ ! -f "$dest/.complete" ]; then
	rm -rf "$dest" && mkdir -p "$dest" || exit 99
	for deb in "$tmp"/debs/*.deb; do
		dpkg-deb -x "$deb" "$dest" || { rm -rf "$dest"; exit 99; }
	done
	touch "$dest/.complete"
fi
touch "$dest/.complete"
ln -sfn "$name" "$cache/current"
# Older unpacked versions go.
find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name "$name" -exec rm -rf {} +
echo "$dest"
