#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# verify says what appraisal will find (a digest or a signature, in text and JSON, IMA
# and EVM apart), and --appraise-type imasig fails what a policy rule with
# appraise_type=imasig refuses: a digest alone; an IMA signature passes, and so does a
# digest under an EVM portable signature (made here by evmctl), as the kernel takes it.
set -euo pipefail
: "${top_builddir:?}" "${top_srcdir:?}"
imastream="$top_builddir/imastream"
command -v evmctl >/dev/null || { echo "SKIP: evmctl is not installed"; exit 77; }
command -v getfattr >/dev/null || { echo "SKIP: getfattr (attr) is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 reads the JSON"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: writing security.* xattrs needs root"; exit 77; }
work=$(mktemp -d /tmp/test_verify_appraise.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
echo probe >probe
setfattr -n security.ima -v 0x01 probe 2>/dev/null || { echo "SKIP: security.ima not writable here"; exit 77; }

(umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out key.pem 2>/dev/null)
openssl req -x509 -new -key key.pem -out cert.pem -days 2 -subj /CN=appraise \
	-addext subjectKeyIdentifier=hash
openssl x509 -in cert.pem -outform DER -out cert.der

# sig: IMA and EVM portable signatures; digest: a digest alone; digest-evm: a digest under
# an EVM portable signature (evmctl sign reads the digest the file holds).
for f in sig digest digest-evm; do
	echo "$f" >"$f"
done
"$imastream" sign --key key.pem sig >/dev/null || fail "sign"
"$imastream" hash digest digest-evm >/dev/null || fail "hash"
evmctl sign --portable --generation=0 --key key.pem digest-evm >/dev/null 2>&1 ||
	fail "evmctl sign --portable of a file holding a digest"
case $(getfattr --absolute-names -n security.evm -e hex digest-evm | sed -n 's/^security.evm=0x//p') in
05*) ;; *) fail "evmctl wrote no portable signature" ;; esac

# Every OK says what each attribute holds.
"$imastream" verify --trust cert.der sig digest digest-evm >out || fail "verify: $(cat out)"
printf '%s\n' "sig: OK (ima: signature, evm: portable signature)" "digest: OK (ima: digest, evm: missing)" \
	"digest-evm: OK (ima: digest, evm: portable signature)" | diff - out ||
	fail "verify's lines do not say digest or signature"
"$imastream" verify --evm none --trust cert.der digest >out || fail "verify --evm none"
[ "$(cat out)" = "digest: OK (ima: digest)" ] || fail "--evm none: $(cat out)"
echo "ok: each OK says what security.ima and security.evm hold"

# --appraise-type imasig: the digest alone fails, the other two pass, exit 1.
"$imastream" verify --appraise-type imasig --trust cert.der sig digest digest-evm >out &&
	fail "--appraise-type imasig passed a digest alone"
printf '%s\n' "sig: OK (ima: signature, evm: portable signature)" \
	"digest: FAIL: security.ima: a digest, and appraise_type=imasig needs a signature (an IMA signature, or an EVM portable one over the digest)" \
	"digest-evm: OK (ima: digest, evm: portable signature)" | diff - out ||
	fail "--appraise-type imasig judged otherwise"
# Without EVM looked at, the digest under a portable signature cannot pass either.
"$imastream" verify --appraise-type imasig --evm none --trust cert.der digest-evm >out &&
	fail "--evm none --appraise-type imasig passed a digest"
grep -q '^digest-evm: FAIL: security.ima: a digest, and appraise_type=imasig' out || fail "$(cat out)"
"$imastream" verify --appraise-type imasig,modsig --trust cert.der sig >out 2>err &&
	fail "an appraise type other than imasig was taken"
grep -q "appraise-type takes 'imasig', not 'imasig,modsig'" err || fail "bad type: $(cat err)"
echo "ok: --appraise-type imasig fails a digest alone, passes a signature and a digest under EVM portable"

# JSON: IMA and EVM apart, with what each holds, as --rpmdb gives them.
"$imastream" verify --format json --appraise-type imasig --trust cert.der sig digest digest-evm >out &&
	fail "json: exit 0"
python3 - out <<'PY' || fail "JSON records: $(cat out)"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
files = {r["path"]: r for r in recs if r["record"] == "file"}
want = {
    "sig": ("ok", "ok", "signature", "ok", "portable signature"),
    "digest": ("fail", "a digest, and appraise_type=imasig needs a signature (an IMA signature, or an EVM portable one over the digest)", "digest", "missing", None),
    "digest-evm": ("ok", "ok", "digest", "ok", "portable signature"),
}
for path, (result, ima, ima_type, evm, evm_type) in want.items():
    r = files[path]
    got = (r["result"], r["ima"], r["ima_type"], r["evm"], r["evm_type"])
    assert got == (result, ima, ima_type, evm, evm_type), (path, got)
assert files["digest"]["reason"].startswith("security.ima: a digest"), files["digest"]
assert recs[-1]["record"] == "summary" and recs[-1]["failed"] == 1, recs[-1]
PY
echo "ok: verify --format json gives ima and evm apart, each with its type"
