#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# attest check's replay of a long measurement list against a swtpm quote, and keylime's replay of the same list when given a keylime checkout.
#
# A list of BENCH_ENTRIES ima-ng entries (default 100,000; sha1 template hashes, as
# ascii_runtime_measurements) and a quote of PCR 10 (sha256 bank) made by a private swtpm.
# PCR 10 holds one value no first part of the list replays to, so both verifiers walk
# the whole list, check each template hash, replay it and refuse it at the end: what is
# timed is the replay, not a policy (keylime runs without one, attest check stops
# before its policy).  BENCH_ROUNDS runs each (default 3), medians:
#   ours     imastream attest check --quote ... (the quote verified, then the replay)
#   keylime  tpm_util.checkquote() then ima.process_measurement_list() of keylime's
#            source, in one Python process, timed inside it (its start-up excluded)
# keylime runs only with KEYLIME_SRC=DIR, a checkout of keylime's public source
# (keylime/keylime; its code is not part of this repository; its Python dependencies must
# import: add what is missing to PYTHONPATH); without it, our figure alone is printed and why.
set -euo pipefail

: "${top_builddir:?run through make bench-attest}"
bin=$top_builddir/imastream
[ -x "$bin" ] || { echo "bench-attest: build first ($bin missing)" >&2; exit 1; }
for t in swtpm tpm2_createek tpm2_createak tpm2_pcrextend tpm2_quote tpm2_flushcontext python3; do
	command -v "$t" >/dev/null || { echo "bench-attest: $t not installed" >&2; exit 1; }
done
entries=${BENCH_ENTRIES:-100000}
rounds=${BENCH_ROUNDS:-3}
case "$entries$rounds" in *[!0-9]*) echo "bench-attest: BENCH_ENTRIES and BENCH_ROUNDS want counts" >&2; exit 1 ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/imastream-bench-attest.XXXXXX")
skip() { echo "bench-attest: $*" >&2; exit 1; }
fail() { skip "$@"; }
# shellcheck source=tests/integration/tpm-lib.sh
. "$(dirname "$0")/../tests/integration/tpm-lib.sh"
trap 'tpm_stop "$work/tpm"; rm -rf "$work"' EXIT
# shellcheck source=bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_unwrap bin

python3 - "$entries" "$work/list" <<'EOF'
import hashlib, struct, sys
n, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    for i in range(n):
        name = f"/usr/lib/bench/file{i}"
        dig = hashlib.sha256(name.encode()).digest()
        data = struct.pack("<I", 8 + 32) + b"sha256:\0" + dig
        data += struct.pack("<I", len(name) + 1) + name.encode() + b"\0"
        f.write(f"10 {hashlib.sha1(data).hexdigest()} ima-ng sha256:{dig.hex()} {name}\n")
EOF
echo '{"meta":{"version":1,"generator":3},"release":0,"digests":{},"excludes":[],"keyrings":{},"ima":{"ignored_keyrings":[],"log_hash_alg":"sha1","dm_policy":null},"ima-buf":{},"verification-keys":""}' >"$work/policy.json"
tpm_start "$work/tpm"
tpm_ak "$work" rsa
tpm2_pcrextend "10:sha256=$(printf '%064x' 1)"
nonce=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
tpm_quote "$work" sha256:10 "$nonce" "$work/q"
tpm_stop "$work/tpm"

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# Wall and CPU (user + system) time of each run: on a shared machine the CPU is steadier.
TIMEFORMAT='%R %U %S'
for _ in $(seq "$rounds"); do
	rc=0
	{ time "$bin" attest check --policy "$work/policy.json" --log "$work/list" \
		--quote "$work/q.msg" --quote-sig "$work/q.sig" --quote-pcrs "$work/q.pcrs" \
		--ak "$work/ak.pem" --nonce "$nonce" 2>"$work/err" || rc=$?; } 2>>"$work/times"
	[ "$rc" = 1 ] && grep -q "replay: the $entries entries" "$work/err" ||
		fail "attest check did not walk the whole list: $(cat "$work/err")"
done
ours=$(awk '{ print $1 }' "$work/times" | median)
ours_cpu=$(awk '{ print $2 + $3 }' "$work/times" | median)
printf 'bench-attest: %d entries, %d rounds, medians\n' "$entries" "$rounds"
printf '  attest check   %8.3f s wall, %8.3f s CPU  (%.2f us CPU per entry)\n' "$ours" "$ours_cpu" \
	"$(echo "$ours_cpu * 1000000 / $entries" | bc -l)"

if [ -z "${KEYLIME_SRC:-}" ]; then
	echo "  keylime        not run: set KEYLIME_SRC to a keylime checkout (its code is not in this repository)"
	exit 0
fi
PYTHONPATH="$KEYLIME_SRC${PYTHONPATH:+:$PYTHONPATH}" python3 - "$work" "$nonce" "$rounds" <<'EOF' >"$work/keylime" 2>"$work/keylime.err" ||
import statistics, sys, time, logging
logging.disable(logging.CRITICAL)
from keylime.tpm import tpm_util
from keylime.ima import ima
from keylime.common.algorithms import Hash
work, nonce, rounds = sys.argv[1], bytes.fromhex(sys.argv[2]), int(sys.argv[3])
rd = lambda f: open(f"{work}/{f}", "rb").read()
times, cpus = [], []
for _ in range(rounds):
    t, c = time.perf_counter(), time.process_time()
    pcrs = tpm_util.checkquote(rd("ak.pem"), nonce, rd("q.sig"), rd("q.msg"), rd("q.pcrs"), "sha256")
    lines = open(f"{work}/list").read().split("\n")
    _, failure = ima.process_measurement_list(None, lines, None, pcrval=pcrs[10], hash_alg=Hash.SHA256)
    times.append(time.perf_counter() - t)
    cpus.append(time.process_time() - c)
    assert failure, "keylime accepted a list that does not replay"
print(statistics.median(times), statistics.median(cpus))
EOF
	{ echo "  keylime        not run: its code did not import or failed: $(tail -1 "$work/keylime.err")"; exit 0; }
read -r theirs theirs_cpu <"$work/keylime"
printf '  keylime        %8.3f s wall, %8.3f s CPU  (%.2f us CPU per entry)\n' "$theirs" "$theirs_cpu" \
	"$(echo "$theirs_cpu * 1000000 / $entries" | bc -l)"
printf '  ratio          x%.3f wall, x%.3f CPU (attest check / keylime)\n' \
	"$(echo "$ours / $theirs" | bc -l)" "$(echo "$ours_cpu / $theirs_cpu" | bc -l)"
