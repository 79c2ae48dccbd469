#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# keylime's --rootfs policy against ours on the committed measurement lists: the false positives and tampering caught of every step, recomputed by attest check, must be the committed counts.
set -euo pipefail
: "${top_srcdir:?}" "${top_builddir:?}"
skip() { echo "SKIP: $*"; exit 77; }
for t in jq xz; do
	command -v $t >/dev/null || skip "$t not installed"
done
data=${POLICY_PEER_DATA:-$top_srcdir/bench/data/policy-peer}
T=$(mktemp -d "${TMPDIR:-/tmp}/test_policy_peer.XXXXXX")
trap 'rm -rf "$T"' EXIT

# Only attest check here: keylime's own code judged the same lists when the counts
# were committed (bench/README.md), and agreed entry by entry.
out=$(KEYLIME_SRC='' BENCH_CSV='' top_builddir=$top_builddir bash "$top_srcdir/bench/bench_policy_peer.sh" "$data") ||
	{ echo "FAIL: bench_policy_peer.sh failed: $out"; exit 1; }
echo "$out" | grep -E '^[^ ]+ (keylime|keylime-key|imastream) [0-9]+ [0-9]+ [0-9]+ [0-9]+$' >"$T/counts" || true
grep -v '^#' "$data/counts" >"$T/want"
if ! diff -u "$T/want" "$T/counts"; then
	echo "FAIL: the counts (STEP POLICY ENTRIES FP CAUGHT MISSED) differ from $data/counts"
	exit 1
fi
# The comparison is not empty: keylime's policy refuses something ours passes, and
# ours catches every tampered file (keylime's with the certificate misses a rollback to
# an older version signed with the same key: the counts hold that).
awk '$2 == "keylime" { k += $4 } $2 == "imastream" { o += $4 } $2 == "imastream" && $6 > 0 { missed++ }
	END { exit !(k > o && missed == 0) }' "$T/counts" ||
	{ echo "FAIL: no step shows keylime's --rootfs policy refusing more, or ours missed a tampered file"; exit 1; }
# Bad data: one line naming the step and the file, exit 1, no table.
bad() {
	local want=$1 out rc=0
	out=$(top_builddir=$top_builddir bash "$top_srcdir/bench/bench_policy_peer.sh" "$T/bad" 2>&1) || rc=$?
	if [ $rc != 1 ] || [ "$(echo "$out" | wc -l)" != 1 ] || [[ $out != *"$want"* ]]; then
		echo "FAIL: bad data ($want): exit $rc, said: $out"
		exit 1
	fi
}
mkdir -p "$T/bad/image" && cp "$data/image/"*.xz "$T/bad/image/" && cp "$data/image.list.xz" "$T/bad/"
echo "first image missing.list.xz all -" >"$T/bad/steps"
bad "step first: $T/bad/missing.list.xz: cannot read it"
echo "first image image.list.xz ten -" >"$T/bad/steps"
bad "step first: not STEP SET LIST ENTRIES TAMPERED"
echo "first image image.list.xz 10" >"$T/bad/steps"
bad "step first: not STEP SET LIST ENTRIES TAMPERED"
echo "first image image.list.xz 99999 -" >"$T/bad/steps"
bad "step first: image.list.xz has fewer than 99999 entries"
rm "$T/bad/image/imastream.json.xz" && echo "first image image.list.xz all -" >"$T/bad/steps"
bad "step first: $T/bad/image/imastream.json.xz: no such file"
echo "PASS: $(wc -l <"$T/counts") step/policy counts as committed; bad data named"
