#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# False positives and tampering caught, step by step, of keylime's own runtime policy (keylime-policy create runtime --rootfs) against ours (policy keylime --rpmdb), on the same measurement lists.
#
# Usage: bench_policy_peer.sh [DATA]   (DATA: default bench/data/policy-peer)
# DATA/steps names the steps, one a line: STEP SET LIST ENTRIES TAMPERED
#   SET       a folder of DATA holding the policies (policy-peer-set.sh), xz-compressed:
#             keylime.json.xz (keylime's --rootfs), imastream.json.xz (ours, --rpmdb),
#             and where the set has one, keylime-key.json.xz (keylime's --rootfs with
#             the system's signing certificate)
#   LIST      an ascii measurement list of DATA, xz-compressed
#   ENTRIES   how many first entries of LIST the step is (a list taken earlier in the
#             same boot is the start of a later one), or "all"
#   TAMPERED  the paths changed on purpose, comma-separated, or "-"
# Each list is judged by imastream attest check with each policy. Per step and policy:
#   entries          the list's entries
#   false positives  entries refused whose path is not a TAMPERED one
#   caught / missed  TAMPERED paths with at least one entry refused / with none
# With KEYLIME_SRC=DIR (a checkout of keylime's public source, not part of this
# repository; KEYLIME_PYTHON, default python3, must import its dependencies), every list
# is judged by keylime's own verifier code too (keylime-judge.py), with every policy, and
# each entry's verdict must be the one attest check gave: a difference is named and the
# script exits 1 (a violation entry, zero digests, which keylime passes unjudged, apart). Prints one line per step and policy, "STEP SERIES ENTRIES FP CAUGHT
# MISSED" (what tests/integration/test_policy_peer.sh compares), then a table; writes
# $BENCH_CSV when set: the untampered entries passed and the tampered files caught of
# each, keylime's count over ours as the ratio.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../build/default}"
bin=$top_builddir/imastream
data=${1:-$here/data/policy-peer}
[ -x "$bin" ] || { echo "bench-policy-peer: build first ($bin missing)" >&2; exit 1; }
[ -r "$data/steps" ] || { echo "bench-policy-peer: $data/steps: cannot read it" >&2; exit 1; }
for t in jq xz; do
	command -v $t >/dev/null || { echo "bench-policy-peer: $t not installed" >&2; exit 1; }
done
# shellcheck source=bench/bench-csv.sh
. "$here/bench-csv.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/imastream-bench-policy-peer.XXXXXX")
trap 'rm -rf "$work"' EXIT

declare -A series=([keylime]="keylime-policy --rootfs"
	[keylime-key]="keylime-policy --rootfs + signing key"
	[imastream]="imastream policy keylime --rpmdb")

# verdicts_ours POLICY LIST OUT: "N PASS|FAIL PATH" per entry, from attest check.
verdicts_ours() {
	local rc=0
	"$bin" attest check --policy "$1" --log "$2" --format json >"$work/json" 2>"$work/err" || rc=$?
	[ $rc -le 1 ] || { echo "bench-policy-peer: attest check of $2 with $1: $(tail -n 1 "$work/err")" >&2; exit 1; }
	jq -r 'select(.record == "entry") | "\(.line) \(if .result == "fail" then "FAIL" else "PASS" end) \(.name)"' \
		"$work/json" >"$3"
}

# verdicts_keylime POLICY LIST OUT: the same from keylime's verifier code.
# The verifier as keylime ships its configuration: without a file, ignore_tomtou_errors
# falls back to the opposite of its shipped default, and every entry of a file read while
# open for writing (a violation: zero digests) would fail whatever its policy says.
printf '[verifier]\nignore_tomtou_errors = False\n' >"$work/verifier.conf"
violations=0
verdicts_keylime() {
	KEYLIME_VERIFIER_CONFIG=$work/verifier.conf PYTHONPATH="$KEYLIME_SRC${PYTHONPATH:+:$PYTHONPATH}" "${KEYLIME_PYTHON:-python3}" \
		"$here/keylime-judge.py" "$1" "$2" >"$3" 2>"$work/keylime.err" ||
		{ echo "bench-policy-peer: keylime's judge failed on $2: $(grep -v '^WARNING\|^ERROR:keylime' "$work/keylime.err" | tail -n 1)" >&2; exit 1; }
}

# counts VERDICTS TAMPERED: "ENTRIES FP CAUGHT MISSED PASSED", PASSED the entries passed
# whose path is not a TAMPERED one.
counts() {
	awk -v tampered="$2" 'BEGIN { n = split(tampered == "-" ? "" : tampered, t, ","); for (i = 1; i <= n; i++) bad[t[i]] = 1 }
		{ entries++ }
		$2 == "FAIL" && !($3 in bad) { fp++ }
		$2 == "PASS" && !($3 in bad) { passed++ }
		$2 == "FAIL" && ($3 in bad) { caught[$3] = 1 }
		END { c = 0; for (p in caught) c++
			printf "%d %d %d %d %d\n", entries, fp, c, n - c, passed }' "$1"
}

disagree=0
declare -A fp caught passed
printf '%-22s %-40s %7s %6s %6s %6s\n' step policy entries FP caught missed >"$work/table"
while read -r step set list entries tampered; do
	case $step in '' | '#'*) continue ;; esac
	[[ $entries =~ ^(all|[0-9]+)$ ]] && [ -n "$tampered" ] || { echo "bench-policy-peer: $data/steps: step $step: not STEP SET LIST ENTRIES TAMPERED (ENTRIES a count or all)" >&2; exit 1; }
	whos=()
	for who in keylime keylime-key imastream; do
		f=$data/$set/$who.json.xz
		[ -e "$f" ] || [ $who = keylime-key ] || { echo "bench-policy-peer: step $step: $f: no such file" >&2; exit 1; }
		[ -e "$f" ] || continue
		xz -dc "$f" >"$work/$who.json" || { echo "bench-policy-peer: step $step: $f: not xz" >&2; exit 1; }
		whos+=("$who")
	done
	[ -r "$data/$list" ] || { echo "bench-policy-peer: step $step: $data/$list: cannot read it" >&2; exit 1; }
	xz -dc "$data/$list" >"$work/list" || { echo "bench-policy-peer: step $step: $list: not xz" >&2; exit 1; }
	if [ "$entries" != all ]; then
		head -n "$entries" "$work/list" >"$work/part" && mv "$work/part" "$work/list"
		[ "$(wc -l <"$work/list")" = "$entries" ] || { echo "bench-policy-peer: step $step: $list has fewer than $entries entries" >&2; exit 1; }
	fi
	for who in "${whos[@]}"; do
		verdicts_ours "$work/$who.json" "$work/list" "$work/$who.ours"
		read -r n fp["$who"] caught["$who"] missed passed["$who"] < <(counts "$work/$who.ours" "$tampered")
		echo "$step $who $n ${fp[$who]} ${caught[$who]} $missed"
		printf '%-22s %-40s %7d %6d %6d %6d\n' "$step" "${series[$who]}" "$n" "${fp[$who]}" "${caught[$who]}" "$missed" >>"$work/table"
		if [ -n "${KEYLIME_SRC:-}" ]; then
			verdicts_keylime "$work/$who.json" "$work/list" "$work/$who.keylime"
			# A violation (a file read while open for writing: zero digests) keylime
			# passes unjudged with its shipped configuration, where attest check judges
			# it by its path: passed when excluded, refused otherwise. Compared apart.
			awk '$2 ~ /^0+$/ { print NR }' "$work/list" >"$work/violations"
			awk 'NR == FNR { v[$1] = 1; next } !($1 in v)' "$work/violations" "$work/$who.ours" >"$work/ours.cmp"
			awk 'NR == FNR { v[$1] = 1; next } !($1 in v)' "$work/violations" "$work/$who.keylime" >"$work/keylime.cmp"
			[ "$who" != imastream ] || violations=$((violations + $(wc -l <"$work/violations")))
			if awk 'NR == FNR { v[$1] = 1; next } ($1 in v) && $2 != "PASS"' "$work/violations" "$work/$who.keylime" | grep . >/dev/null; then
				echo "bench-policy-peer: step $step, policy $who.json: keylime refused a violation entry (its configuration?)" >&2
				disagree=1
			fi
			if ! diff "$work/ours.cmp" "$work/keylime.cmp" >"$work/diff"; then
				echo "bench-policy-peer: step $step, policy $who.json: keylime's verdicts differ from attest check's:" >&2
				head -n 10 "$work/diff" >&2
				disagree=1
			fi
		fi
	done
	# The CSV: counts, and each keylime policy's over ours (ours is never zero in these
	# panels; the false positives are the untampered entries not passed).
	bench_csv_count "untampered entries passed" "$step" "${series[imastream]}" "${passed[imastream]}"
	for who in "${whos[@]}"; do
		[ "$who" = imastream ] ||
			bench_csv_count "untampered entries passed" "$step" "${series[$who]}" "${passed[$who]}" "${passed[imastream]}"
	done
	if [ "$tampered" != - ] && [ "${caught[imastream]}" -gt 0 ]; then
		bench_csv_count "tampered files caught" "$step" "${series[imastream]}" "${caught[imastream]}"
		for who in "${whos[@]}"; do
			[ "$who" = imastream ] ||
				bench_csv_count "tampered files caught" "$step" "${series[$who]}" "${caught[$who]}" "${caught[imastream]}"
		done
	fi
done <"$data/steps"
echo
cat "$work/table"
if [ -n "${KEYLIME_SRC:-}" ]; then
	[ $disagree = 0 ] || exit 1
	echo "keylime's own verifier code gave every entry of every step the verdict attest check gave, with every policy," \
		"but the $violations violation entries (zero digests), which keylime passed unjudged"
else
	echo "(KEYLIME_SRC unset: judged by attest check alone; with it, keylime's verifier code judges the same lists)"
fi
