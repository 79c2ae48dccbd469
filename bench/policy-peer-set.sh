#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes one policy set of bench_policy_peer.sh from an installed tree: keylime's runtime policy made by its own generator with --rootfs, and ours with policy keylime --rpmdb, both cut down to the paths the given lists name.
#
# Usage: policy-peer-set.sh TREE OUT EXCLUDES LIST...
#   TREE      the installed root, as it is before its first boot (where keylime's docs
#             have a user run its generator) with its rpm database
#   OUT       the set's folder: keylime.json.xz, imastream.json.xz (and with
#             POLICY_PEER_CERT keylime-key.json.xz), origin (what was cut)
#   EXCLUDES  one regular expression a line (# comments), given to both generators:
#             keylime-policy -e FILE, policy keylime --exclude RE
#   LIST      measurement lists (ascii, or xz-compressed) taken on systems of TREE
# POLICY_PEER_CERT=FILE: a third policy, keylime's --rootfs with the same digests and
# --add-ima-signature-verification-key FILE (files that key signed pass).
# POLICY_PEER_OURS=FILE: ours is FILE, made elsewhere (on the running system when the
# list was taken), not policy keylime --rpmdb of TREE.
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
[ -d "${KEYLIME_SRC:-}/keylime" ] || die "KEYLIME_SRC must name a keylime checkout"
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
whos="keylime imastream"
if [ -n "${POLICY_PEER_CERT:-}" ]; then
	PYTHONPATH="$KEYLIME_SRC${PYTHONPATH:+:$PYTHONPATH}" "${KEYLIME_PYTHON:-python3}" -m keylime.cmd.keylime_policy \
		create runtime --rootfs "$tree" --algo sha256 -e "$work/excludes" \
		--add-ima-signature-verification-key "$POLICY_PEER_CERT" -o "$work/keylime-key.json" >"$work/keylime.log" 2>&1 ||
		die "keylime-policy create runtime with $POLICY_PEER_CERT failed: $(tail -n 1 "$work/keylime.log")"
	whos="keylime keylime-key imastream"
fi
if [ -n "${POLICY_PEER_OURS:-}" ]; then
	jq -e .digests "$POLICY_PEER_OURS" >/dev/null || die "$POLICY_PEER_OURS: not a policy"
	cp "$POLICY_PEER_OURS" "$work/imastream.json"
else
	# The tree's database is where the tree's own rpm keeps it, whatever this host's says.
	mkdir -p "$work/home" && echo '%_dbpath /var/lib/rpm' >"$work/home/.rpmmacros"
	HOME=$work/home "$bin" policy keylime --root "$tree" --rpmdb "${excl[@]}" --output "$work/imastream.json" 2>"$work/ours.log" ||
		die "policy keylime --rpmdb failed: $(tail -n 1 "$work/ours.log")"
fi

mkdir -p "$out"
echo "# SPDX-License-Identifier: LGPL-2.1-or-later" >"$work/origin"
for who in $whos; do
	# (The generator's timestamp would change the file at every run.)
	jq -S -c --slurpfile names "$work/names.json" \
		'.digests |= with_entries(select($names[0][.key])) | del(.meta.timestamp)' \
		"$work/$who.json" | xz -9 >"$out/$who.json.xz"
	echo "$who.json: $(xz -dc "$out/$who.json.xz" | jq '.digests | length') of $(jq '.digests | length' "$work/$who.json") paths kept" >>"$work/origin"
done
mv "$work/origin" "$out/origin"
cat "$out/origin"
