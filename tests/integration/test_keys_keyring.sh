#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Imports certificates into real kernel keyrings and lists them; the kernel's own id search agrees.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
keys="$top_srcdir/tests/keys"
command -v keyctl >/dev/null || { echo "SKIP: keyctl is not installed (keyutils)"; exit 77; }
work=$(mktemp -d /tmp/test_keys_keyring.XXXXXX)
# A ring of our own under @u (the same code path as _ima/_evm), removed at the end.
ring="_imastream_test_$$"
cleanup() {
	id=$(keyctl search @u keyring "$ring" 2>/dev/null) && keyctl unlink "$id" @u >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
skid_tail() { openssl x509 -in "$1" -noout -ext subjectKeyIdentifier | tail -n1 | tr -d ' :\n' | tail -c8 | tr A-F a-f; }

# Is add_key allowed at all here?  Some sandboxes refuse it.
probe=$(keyctl newring "probe_$$" @u 2>probe.err) ||
	{ echo "SKIP: the kernel refuses new keyrings here: $(cat probe.err)"; exit 77; }
keyctl unlink "$probe" @u >/dev/null
if ! out=$("$imastream" keys import --keyring "$ring" "$keys/rsa2048.crt" 2>err.txt); then
	grep -qE 'Permission denied|Operation not permitted' err.txt &&
		{ echo "SKIP: add_key refused here: $(cat err.txt)"; exit 77; }
	grep -q 'no asymmetric key type' err.txt && { echo "SKIP: $(cat err.txt)"; exit 77; }
	fail "import: $(cat err.txt)"
fi
serial=$out
ring_id=$(keyctl search @u keyring "$ring") || fail "import did not create $ring under @u"
# ... and said so, where, and that the kernel would not read a ring of that name.
[ "$(cat err.txt)" = "imastream keys import: keyring $ring did not exist: created it in the user keyring (@u), serial $ring_id; IMA and EVM read _ima and _evm only" ] ||
	fail "import created $ring without saying so: '$(cat err.txt)'"
[ "$(keyctl rdescribe "$serial" | cut -d';' -f1)" = asymmetric ] || fail "key $serial is not asymmetric"

# The kernel finds it by the key id that IMA signatures carry (its "id:" partial match).
keyid=$(skid_tail "$keys/rsa2048.crt")
[ "$(keyctl search "$ring_id" asymmetric "id:$keyid")" = "$serial" ] || fail "kernel id search misses $keyid"

# A second certificate, DER this time and by numeric ring id; then the forced SKID one.
serial2=$("$imastream" keys import --keyring "$ring_id" "$keys/ec-p256.der" 2>err.txt) ||
	grep -q "ec-p256.der: this kernel cannot use ECDSA P-256 keys" err.txt || fail "DER import: $(cat err.txt)"
serial3=$("$imastream" keys import -k "$ring" "$keys/rsa2048-forced.crt" 2>err.txt) || fail "second import into $ring"
[ ! -s err.txt ] || fail "an import into an existing ring said: $(cat err.txt)"
[ "$(keyctl search "$ring_id" asymmetric id:12345678)" = "$serial3" ] || fail "forced SKID not matched"

# list: serial, type, key id, description, in the kernel's order; keyctl agrees.
"$imastream" keys list "$ring" >list.txt
grep -q "^$serial asymmetric $keyid " list.txt || fail "list lacks $serial: $(cat list.txt)"
grep -q "^$serial3 asymmetric 12345678 " list.txt || fail "list lacks $serial3: $(cat list.txt)"
[ -z "${serial2:-}" ] || grep -q "^$serial2 asymmetric 205aa15d " list.txt || fail "list lacks the EC key"
[ "$(cut -d' ' -f1 list.txt | sort)" = "$(keyctl rdescribe "$ring_id" >/dev/null; keyctl rlist "$ring_id" | tr ' ' '\n' | sort)" ] ||
	fail "list and keyctl rlist disagree"
desc=$(keyctl rdescribe "$serial" | cut -d';' -f5-)
grep -qF "$serial asymmetric $keyid $desc" list.txt || fail "description differs from keyctl's: $desc"
# evmctl's order, "import CERT RING", lands in the same ring.
serial4=$("$imastream" keys import "$keys/rsa2048-noskid.crt" "$ring") || fail "keys import CERT RING"
keyctl rlist "$ring_id" | tr ' ' '\n' | grep -x "$serial4" >/dev/null || fail "import CERT RING: $serial4 is not in $ring"

# --format json: import gives a key record with its serial and key id, list one record
# per key that keyctl agrees with, each then a summary; python3 parses them.
if command -v python3 >/dev/null; then
	"$imastream" keys import --keyring "$ring" --format json "$keys/rsa2048-forced.crt" >import.json 2>err.txt ||
		fail "import --format json: $(cat err.txt)"
	"$imastream" keys list "$ring" --format json >list.json 2>err.txt || fail "list --format json: $(cat err.txt)"
	keyctl rlist "$ring_id" | tr ' ' '\n' | sort >rlist.txt
	python3 -c '
import json, sys
ring, keyid = sys.argv[1], sys.argv[2]
imp = [json.loads(l) for l in open("import.json")]
assert [r["record"] for r in imp] == ["key", "summary"], imp
assert imp[0]["result"] == "ok" and imp[0]["keyid"] == "12345678" and imp[0]["path"].endswith("rsa2048-forced.crt"), imp
assert imp[1]["command"] == "keys import" and imp[1]["keyring"] == ring and imp[1]["keys"] == 1, imp
assert imp[1]["failed"] == 0 and isinstance(imp[1]["elapsed_s"], (int, float)), imp
lst = [json.loads(l) for l in open("list.json")]
*keys, summary = lst
assert summary["record"] == "summary" and summary["command"] == "keys list", summary
assert summary["keys"] == len(keys) and summary["failed"] == 0 and summary["keyring"] == ring, summary
assert all(k["record"] == "key" and k["type"] == "asymmetric" for k in keys), keys
assert sorted(str(k["serial"]) for k in keys) == open("rlist.txt").read().split(), (keys, "keyctl rlist")
assert imp[0]["serial"] in [k["serial"] for k in keys], "the imported key is not listed"
assert keyid in [k["keyid"] for k in keys], "no key with id " + keyid
assert None in [k["keyid"] for k in keys], "the key without subjectKeyIdentifier has a key id"
' "$ring" "$keyid" || fail "keys import/list --format json: $(cat import.json list.json)"
fi

# Errors, one line each.
expect_error() { # expect_error NEEDLE ARGS...
	local needle=$1; shift
	if "$imastream" keys "$@" >/dev/null 2>err.txt; then fail "accepted: keys $*"; fi
	[ "$(wc -l <err.txt)" = 1 ] && grep -q -- "$needle" err.txt ||
		fail "expected one line with '$needle', got: $(cat err.txt)"
}
expect_error "rsa2048.pem is a private key, not a certificate" import -k "$ring" "$keys/rsa2048.pem"
expect_error "keyring .imastream_no_such_ring not found" import -k .imastream_no_such_ring "$keys/rsa2048.crt"
expect_error "keyring _imastream_no_such_ring_$$ not found" list "_imastream_no_such_ring_$$"
expect_error "give _NAME, .NAME, @u" list "ima"
expect_error "is not a keyring" list "$serial"
# A kernel keyring that takes no keys from us says so (EACCES here, restriction elsewhere).
if keyctl search @u keyring "_imastream_no_such_ring_$$" >/dev/null 2>&1; then fail "list created a ring"; fi
if "$imastream" keys import -k .builtin_trusted_keys "$keys/rsa2048.crt" >/dev/null 2>err.txt; then
	fail "the builtin trusted keyring accepted a self-signed certificate"
fi
grep -qE "keyring .builtin_trusted_keys (refused|not found)|adding the certificate to keyring .builtin_trusted_keys failed" err.txt ||
	fail "unclear refusal: $(cat err.txt)"

# A kernel key used as a signing key: found by serial or by ring and id, and a key the
# kernel holds only the public half of is refused up front, in one line.
sign="$top_builddir/tests/keys/sign-digest"
digest=$(printf '%064d' 0)
for spec in "kernel:$serial" "kernel:$ring:id:$keyid" "kernel:$ring_id:id:$keyid"; do
	if "$sign" "$spec" sha256 "$digest" >/dev/null 2>err.txt; then fail "$spec signed with a public key"; fi
	[ "$(wc -l <err.txt)" = 1 ] && grep -q "kernel key $serial holds only a public key and cannot sign" err.txt ||
		fail "$spec: $(cat err.txt)"
done
if "$sign" "kernel:$ring:nosuchkey" sha256 "$digest" >/dev/null 2>err.txt; then fail "found nosuchkey"; fi
grep -q "no asymmetric key 'nosuchkey' in keyring $ring" err.txt || fail "$(cat err.txt)"
if "$sign" "kernel:$ring_id" sha256 "$digest" >/dev/null 2>err.txt; then fail "signed with a keyring"; fi
grep -q "kernel key $ring_id is a keyring key, not an asymmetric one" err.txt || fail "$(cat err.txt)"
echo "ok: keyring import and list, kernel key lookup"
