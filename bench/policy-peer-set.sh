#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes one policy set of bench_policy_peer.sh from an installed tree: keylime's runtime policy made by its own generator with --rootfs, and ours with policy keylime --rpmdb, both cut down to the paths the given lists name.
#
# Usage: policy-peer-set.sh TREE OUT EXCLUDES LIST...
#   TREE      the installed root, as it is before its first boot (where keylime's docs
#             have a user run its generator) with its rpm database
#   OUT       the set's folder: keylime.json, imastream.json, origin (what was cut)
#   EXCLUDES  one regular expression a line (# comments), given to both generators:
#             keylime-policy -e FILE, policy keylime --exclude RE
#   LIST      measurement lists (ascii, or xz-compressed) taken on systems of TREE
# Needs KEYLIME_SRC (a checkout of keylime's public source; KEYLIME_PYTHON imports its
# dependencies) and top_builddir (default build/default). A path no list names can
# change no verdict of those lists (a policy is looked up by path), so both policies
# keep only the digests of paths the lists name; excludes and the rest are kept whole.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../build/default}"
bin=$top_builddir/imastream
die() { echo "policy-peer-set: $*" >&2; exit 1; }
[ $# -ge 4 ] || die "usage: policy-peer-set.sh TREE OUT EXCLUDES LIST..."
tree=$1 out=$2 excludes=$3
shift 3
[ -d "$tree/var/lib/rpm" ] || die "$tree: no rpm database under it"
[ -r "$excludes" ] || die "$excludes: cannot read it"
[ -n "${KEYLIME_SRC:-}" ] && [ -d "$KEYLIME_SRC/keylime" ] || die "KEYLIME_SRC must name a keylime checkout"
[ -x "$bin" ] || die "build first ($bin missing)"
work=$(mktemp -d "${TMPDIR:-/tmp}/imastream-policy-peer-set.XXXXXX")
trap 'rm -rf "$work"' EXIT

sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$excludes" >"$work/excludes"
excl=()
while read -r re; do excl+=(--exclude "$re"); done <"$work/excludes"
for l; do
	case $l in *.xz) xz -dc "$l" ;; *) cat "$l" ;; esac || die "$l: cannot read it"
done | awk '{ print $5 }' | LC_ALL=C sort -u | jq -R -n '[inputs | {(.): true}] | add' >"$work/names.json"

PYTHONPATH="$KEYLIME_SRC${PYTHONPATH:+:$PYTHONPATH}" "${KEYLIME_PYTHON:-python3}" -m keylime.cmd.keylime_policy \
	create runtime --rootfs "$tree" --algo sha256 -e "$work/excludes" -o "$work/keylime.json" >"$work/keylime.log" 2>&1 ||
	die "keylime-policy create runtime failed: $(tail -n 1 "$work/keylime.log")"
# The tree's database is where the tree's own rpm keeps it, whatever this host's says.
mkdir -p "$work/home" && echo '%_dbpath /var/lib/rpm' >"$work/home/.rpmmacros"
HOME=$work/home "$bin" policy keylime --root "$tree" --rpmdb "${excl[@]}" --output "$work/imastream.json" 2>"$work/ours.log" ||
	die "policy keylime --rpmdb failed: $(tail -n 1 "$work/ours.log")"

mkdir -p "$out"
: >"$work/origin"
for who in keylime imastream; do
	# (The generator's timestamp would change the file at every run.)
	jq -S --slurpfile names "$work/names.json" \
		'.digests |= with_entries(select($names[0][.key])) | del(.meta.timestamp)' \
		"$work/$who.json" >"$out/$who.json"
	echo "$who.json: $(jq '.digests | length' "$out/$who.json") of $(jq '.digests | length' "$work/$who.json") paths kept" >>"$work/origin"
done
mv "$work/origin" "$out/origin"
cat "$out/origin"
