#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# attest check against swtpm quotes: good lists pass, every tampering fails naming its check, and tpm2_checkquote agrees on each quote.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
. "$top_srcdir/tests/integration/tpm-lib.sh"
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
tpm_preconditions
command -v python3 >/dev/null || skip "python3 not installed"

work=$(mktemp -d /tmp/imastream-attest-tpm.XXXXXX)
cleanup() {
	tpm_stop "$work/tpm-a"
	tpm_stop "$work/tpm-b"
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/list" "$work/rsa" "$work/ecc" "$work/other"

# TPM A: firmware-like values in PCRs 0, 4 and 8 (boot_aggregate covers them), then the
# list's entries extended into PCR 10 of the sha1 and sha256 banks, as IMA does.
tpm_start "$work/tpm-a"
tpm_ak "$work/rsa" rsa
tpm_ak "$work/ecc" ecc
for pcr in 0 4 8; do
	tpm2_pcrextend "$pcr:sha1=$(printf '%040x' $((pcr + 1))),sha256=$(printf '%064x' $((pcr + 1)))"
done
tpm2_pcrread sha1:0,1,2,3,4,5,6,7,8,9 -o "$work/pcrs-sha1" >/dev/null
tpm2_pcrread sha256:0,1,2,3,4,5,6,7,8,9 -o "$work/pcrs-sha256" >/dev/null
gen=$top_srcdir/tests/integration/ima-list-gen.py
python3 "$gen" "$work/pcrs-sha1" "$work/pcrs-sha256" "$work/list" /usr/bin/a /usr/bin/b_c
# The same list with one entry more, never extended: longer than the quotes cover.
mkdir "$work/longer"
python3 "$gen" "$work/pcrs-sha1" "$work/pcrs-sha256" "$work/longer" /usr/bin/a /usr/bin/b_c /usr/bin/late
while read -r s1 s256; do
	tpm2_pcrextend "10:sha1=$s1,sha256=$s256"
done <"$work/list/extend"

nonce=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
other_nonce=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
all=0,1,2,3,4,5,6,7,8,9,10
tpm_quote "$work/rsa" "sha256:$all" "$nonce" "$work/q-rsa"
tpm_quote "$work/ecc" "sha1:$all+sha256:$all" "$nonce" "$work/q-ecc"
tpm_quote "$work/rsa" "sha256:$all" "$nonce" "$work/q-values" -F values
tpm_quote "$work/rsa" "sha256:0,1,2,3,4,5,6,7,8,9" "$nonce" "$work/q-no10"
tpm_quote "$work/rsa" "sha256:10" "$nonce" "$work/q-only10"
tpm_quote "$work/rsa" "sha256:$all" "$other_nonce" "$work/q-stale"

# TPM B: another machine, its own AK, the same nonce.
tpm_start "$work/tpm-b"
tpm_ak "$work/other" rsa
tpm_quote "$work/other" "sha256:$all" "$nonce" "$work/q-other"
tpm_stop "$work/tpm-b"

# A policy that allows every file of the list (boot_aggregate is the quote's to judge).
awk 'BEGIN { printf "{\"meta\":{\"version\":1,\"generator\":3},\"release\":0,\"digests\":{" }
$3 != "ima-buf" && $5 != "boot_aggregate" && $2 !~ /^0+$/ {
	d = $4; sub(/^sha256:/, "", d); printf "%s\"%s\":[\"%s\"]", n++ ? "," : "", $5, d }
$3 == "ima-buf" { sub(/^sha256:/, "", $4); buf = sprintf("\"%s\":[\"%s\"]", $5, $4) }
$2 ~ /^0+$/ { ex = $5 }
END { printf "},\"excludes\":[\"^%s$\"],\"keyrings\":{},\"ima\":{\"ignored_keyrings\":[],", ex
	printf "\"log_hash_alg\":\"sha1\",\"dm_policy\":null},\"ima-buf\":{%s},\"verification-keys\":\"\"}\n", buf }' \
	"$work/list/ascii" >"$work/policy.json"

failures=0
bad() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# check NAME WANT-RC WANT-TEXT QUOTE AK NONCE LOG [options]: attest check exits WANT-RC;
# a failure is one line on stderr holding WANT-TEXT, and nothing on stdout.
check() {
	local name=$1 want=$2 text=$3 q=$4 ak=$5 n=$6 log=$7 rc=0
	shift 7
	"$IMASTREAM" attest check --policy "$work/policy.json" --log "$log" --quote "$q.msg" \
		--quote-sig "$q.sig" --quote-pcrs "$q.pcrs" --ak "$ak" --nonce "$n" "$@" \
		>"$work/out" 2>"$work/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		bad "$name: exit $rc, not $want"
		cat "$work/err" "$work/out" >&2
		return
	fi
	if [ "$want" = 0 ]; then
		grep -q "quote verified: .*, boot_aggregate to its PCRs 0-9" "$work/err" || bad "$name: no quote verified line with boot_aggregate"
		grep -q " 0 failed" "$work/err" || bad "$name: the policy failed an entry"
		echo "ok: $name"
		return
	fi
	[ ! -s "$work/out" ] || bad "$name: wrote to stdout: $(cat "$work/out")"
	[ "$(wc -l <"$work/err")" = 1 ] || bad "$name: not one line: $(cat "$work/err")"
	grep -qF -- "$text" "$work/err" || bad "$name: '$text' not said: $(cat "$work/err")"
	echo "ok: $name: $(sed 's/^[^:]*: //' "$work/err")"
}

# checkquote NAME WANT-RC QUOTE AK NONCE [options]: what tpm2-tools says of the quote.
checkquote() {
	local name=$1 want=$2 q=$3 ak=$4 n=$5 rc=0
	shift 5
	tpm2_checkquote -u "$ak" -m "$q.msg" -s "$q.sig" -f "$q.pcrs" -g sha256 -q "$n" "$@" \
		>/dev/null 2>&1 || rc=$?
	[ "$rc" = "$want" ] || bad "tpm2_checkquote $name: exit $rc, not $want"
}

echo "== good lists: ascii and binary, sha1 and sha256 template hashes"
for log in ascii ascii-sha256 binary binary-sha256; do
	check "rsassa $log" 0 "" "$work/q-rsa" "$work/rsa/ak.pem" "$nonce" "$work/list/$log"
	check "ecdsa, two banks, $log" 0 "" "$work/q-ecc" "$work/ecc/ak.pem" "$nonce" "$work/list/$log"
done
check "-F values" 0 "" "$work/q-values" "$work/rsa/ak.pem" "$nonce" "$work/list/ascii" \
	--quote-pcrs-format values
checkquote rsassa 0 "$work/q-rsa" "$work/rsa/ak.pem" "$nonce"
checkquote "ecdsa, two banks" 0 "$work/q-ecc" "$work/ecc/ak.pem" "$nonce"
# (tpm2_checkquote 5.4 cannot read a -F values file of more than 8 PCRs: "Something wrong,
# trying to print but nothing more"; the serialized quotes are its to judge.)

echo "== tampered lists"
head -n -1 "$work/list/ascii" >"$work/truncated"
check truncated 1 "truncated" "$work/q-rsa" "$work/rsa/ak.pem" "$nonce" "$work/truncated"
sed '$s|/usr/bin/b_c$|/usr/bin/b_d|' "$work/list/ascii" >"$work/edited"
n=$(wc -l <"$work/edited")
check edited 1 "template hash: entry $n:" "$work/q-rsa" "$work/rsa/ak.pem" "$nonce" "$work/edited"
python3 - "$work/list/binary" "$work/edited.bin" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.rindex(b"/usr/bin/b_c")
b[i + len("/usr/bin/b_")] = ord("d")
open(sys.argv[2], "wb").write(b)
EOF
check "edited binary" 1 "template hash: entry $n:" "$work/q-rsa" "$work/rsa/ak.pem" "$nonce" \
	"$work/edited.bin"
# An entry removed, its neighbours' template hashes intact: only the replay can tell.
sed '3d' "$work/list/ascii" >"$work/removed"
check "entry removed" 1 "replay:" "$work/q-rsa" "$work/rsa/ak.pem" "$nonce" "$work/removed"
check "longer than the quote" 1 "longer than the quote covers" "$work/q-rsa" "$work/rsa/ak.pem" \
	"$nonce" "$work/longer/ascii"
check "longer binary" 1 "its first $(wc -l <"$work/list/ascii") entries of" "$work/q-ecc" \
	"$work/ecc/ak.pem" "$nonce" "$work/longer/binary-sha256"
# boot_aggregate of other PCRs 0-9, its template hash made to fit: only the quote can tell.
python3 - "$work/list/ascii" "$work/bad-aggregate" <<'EOF'
import hashlib, sys
lines = open(sys.argv[1]).read().splitlines()
f = lines[0].split(" ")
dig = hashlib.sha256(b"another boot").digest()
data = (len("sha256") + 2 + 32).to_bytes(4, "little") + b"sha256:\0" + dig
data += (len("boot_aggregate") + 1).to_bytes(4, "little") + b"boot_aggregate\0"
lines[0] = f"10 {hashlib.sha1(data).hexdigest()} ima-ng sha256:{dig.hex()} boot_aggregate"
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
EOF
check "boot_aggregate" 1 "boot_aggregate: entry 1:" "$work/q-rsa" "$work/rsa/ak.pem" "$nonce" \
	"$work/bad-aggregate"
check "boot_aggregate unquoted" 1 "does not hold PCRs 0-9" "$work/q-only10" "$work/rsa/ak.pem" \
	"$nonce" "$work/list/ascii"
checkquote "PCR 10 alone" 0 "$work/q-only10" "$work/rsa/ak.pem" "$nonce"
python3 - "$work/list/binary" "$work/swapped" <<'EOF'
import struct, sys
# The same list as a big-endian machine writes it: every 32-bit integer swapped.
b = open(sys.argv[1], "rb").read()
out, o = bytearray(), 0
def u32():
    global o
    v = struct.unpack_from("<I", b, o)[0]; out.extend(struct.pack(">I", v)); o += 4; return v
def raw(n):
    global o
    out.extend(b[o:o + n]); o += n
while o < len(b):
    u32()
    raw(20)
    name = b[o + 4:o + 4 + struct.unpack_from("<I", b, o)[0]]
    raw(u32())
    if name == b"ima":
        raw(20)
        raw(u32())
    else:
        end = o + 4 + struct.unpack_from("<I", b, o)[0]
        u32()
        while o < end:
            raw(u32())
open(sys.argv[2], "wb").write(out)
EOF
check "byte order" 1 "byte order" "$work/q-rsa" "$work/rsa/ak.pem" "$nonce" "$work/swapped"

echo "== a --log that is no list: refused as without a quote, one line, exit 2"
# The policy given twice and other text are said by what they are, in the same words with
# a quote and without; a binary list is read with a quote (above).
cp "$work/policy.json" "$work/notlog.json"
printf 'hello\nworld\n' >"$work/notlog.txt"
printf '10 not a list\n' >"$work/notlog.pcr"
for what in json txt pcr; do
	case $what in
	json) want="notlog.json: a JSON file (a policy?), not an IMA measurement list" ;;
	*) want="notlog.$what: not an IMA measurement list (its first line is no \"PCR TEMPLATE-HASH TEMPLATE ...\" entry)" ;;
	esac
	check "--log $what" 2 "imastream attest: $work/$want" "$work/q-rsa" "$work/rsa/ak.pem" "$nonce" \
		"$work/notlog.$what"
	mv "$work/err" "$work/err.quote"
	rc=0
	"$IMASTREAM" attest check --policy "$work/policy.json" --log "$work/notlog.$what" \
		>/dev/null 2>"$work/err" || rc=$?
	[ $rc = 2 ] && cmp -s "$work/err" "$work/err.quote" ||
		bad "--log $what: exit $rc without a quote, or other words: $(cat "$work/err" "$work/err.quote")"
done

echo "== tampered quotes (tpm2_checkquote judges each too)"
check "wrong nonce" 1 "quote nonce:" "$work/q-rsa" "$work/rsa/ak.pem" "$other_nonce" "$work/list/ascii"
checkquote "wrong nonce" 1 "$work/q-rsa" "$work/rsa/ak.pem" "$other_nonce"
check "stale quote" 1 "quote nonce:" "$work/q-stale" "$work/rsa/ak.pem" "$nonce" "$work/list/ascii"
checkquote "stale quote" 1 "$work/q-stale" "$work/rsa/ak.pem" "$nonce"
check "another TPM" 1 "quote signature: does not verify" "$work/q-other" "$work/rsa/ak.pem" "$nonce" \
	"$work/list/ascii"
checkquote "another TPM" 1 "$work/q-other" "$work/rsa/ak.pem" "$nonce"
checkquote "another TPM, its own AK" 0 "$work/q-other" "$work/other/ak.pem" "$nonce"
check "another TPM, its own AK" 1 "boot_aggregate: entry 1: not the sha256" "$work/q-other" "$work/other/ak.pem" "$nonce" \
	"$work/list/ascii"
cp "$work/q-rsa.msg" "$work/q-flip.msg"
cp "$work/q-rsa.sig" "$work/q-flip.sig"
cp "$work/q-rsa.pcrs" "$work/q-flip.pcrs"
# Invert one byte (writing a fixed value would change nothing where the quote holds it already).
byte=$(od -An -tu1 -j60 -N1 "$work/q-flip.msg" | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 255)))" | dd of="$work/q-flip.msg" bs=1 seek=60 conv=notrunc status=none
cmp -s "$work/q-rsa.msg" "$work/q-flip.msg" && fail "the altered quote is the quote"
check "altered quote" 1 "quote signature: does not verify" "$work/q-flip" "$work/rsa/ak.pem" "$nonce" \
	"$work/list/ascii"
checkquote "altered quote" 1 "$work/q-flip" "$work/rsa/ak.pem" "$nonce"
cp "$work/q-rsa.msg" "$work/q-pcrs.msg"
cp "$work/q-rsa.sig" "$work/q-pcrs.sig"
cp "$work/q-stale.pcrs" "$work/q-pcrs.pcrs"
cp "$work/q-ecc.pcrs" "$work/q-mix.pcrs"
cp "$work/q-rsa.msg" "$work/q-mix.msg"
cp "$work/q-rsa.sig" "$work/q-mix.sig"
check "PCR values of another quote" 1 "PCR values: the file selects other banks" "$work/q-mix" \
	"$work/rsa/ak.pem" "$nonce" "$work/list/ascii"
checkquote "PCR values of another quote" 1 "$work/q-mix" "$work/rsa/ak.pem" "$nonce"
# PCR values that are not the quoted ones: PCR 10 given as the value before the last extend.
python3 - "$work/q-rsa.pcrs" "$work/q-pcrs.pcrs" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
# the 11th value (PCR 10) is the 3rd of the second TPML_DIGEST: 136 + 532 + 4 + 2*66 + 2
off = 136 + 532 + 4 + 2 * 66 + 2
b[off] ^= 1
open(sys.argv[2], "wb").write(b)
EOF
check "PCR values altered" 1 "PCR digest:" "$work/q-pcrs" "$work/rsa/ak.pem" "$nonce" "$work/list/ascii"
checkquote "PCR values altered" 1 "$work/q-pcrs" "$work/rsa/ak.pem" "$nonce"
# A genuine quote of PCRs 0-9: tpm2_checkquote accepts it, but it cannot vouch for a list.
check "no PCR 10" 1 "PCR selection:" "$work/q-no10" "$work/rsa/ak.pem" "$nonce" "$work/list/ascii"
checkquote "no PCR 10" 0 "$work/q-no10" "$work/rsa/ak.pem" "$nonce"
openssl genpkey -algorithm ed25519 -out "$work/ed25519.key" 2>/dev/null
openssl pkey -in "$work/ed25519.key" -pubout -out "$work/ed25519.pem"
check "ed25519 key" 1 "attestation key:" "$work/q-rsa" "$work/ed25519.pem" "$nonce" "$work/list/ascii"
check "EC key, RSA quote" 1 "but the attestation key is EC" "$work/q-rsa" "$work/ecc/ak.pem" "$nonce" \
	"$work/list/ascii"
checkquote "EC key, RSA quote" 1 "$work/q-rsa" "$work/ecc/ak.pem" "$nonce"
check "not a key" 1 "attestation key: not a PEM public key" "$work/q-rsa" "$work/q-rsa.sig" "$nonce" \
	"$work/list/ascii"

echo "== options"
rc=0
"$IMASTREAM" attest check --policy "$work/policy.json" --log "$work/list/ascii" \
	--quote "$work/q-rsa.msg" --nonce "$nonce" 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q "all of --quote" "$work/err" || bad "a partial quote is not a usage error"
rc=0
"$IMASTREAM" attest check --policy "$work/policy.json" --log "$work/list/ascii" \
	--quote "$work/q-rsa.msg" --quote-sig "$work/q-rsa.sig" --quote-pcrs "$work/q-rsa.pcrs" \
	--ak "$work/rsa/ak.pem" --nonce xyz 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q "nonce" "$work/err" || bad "a nonce that is not hex is not a usage error"

[ "$failures" = 0 ] || fail "$failures checks failed"
echo "PASS"
