#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# --format json: every command that reports writes JSON Lines that a real JSON parser
# reads, one record per item and a summary record last, with counts that match the
# items, raw byte counts and the elapsed time; names that are not UTF-8 still parse.
set -u
. "$top_srcdir/tests/integration/rpm-lib.sh"
need python3
setup_scratch
IMS="$top_builddir/imastream"
KEYS="$top_srcdir/tests/keys"
cd "$T" || exit 99
(umask 077; cp "$KEYS/ec-p256.pem" key.pem)

# check_json CMD ITEM [MIN_ITEMS]: stdin must be JSON Lines, every record an object with
# a "record"; ITEM records, at least MIN_ITEMS of them, then exactly one summary, last,
# whose "command" is CMD and whose "failed" counts the items whose result is "fail"
# (relabel counts its own statuses).
check_json() {
	python3 -c '
import json, sys
cmd, item, least = sys.argv[1], sys.argv[2], int(sys.argv[3])
recs = [json.loads(l) for l in sys.stdin.buffer.read().decode("utf-8").splitlines()]
assert recs, "no records"
assert all(isinstance(r, dict) and "record" in r for r in recs), "a line without a record kind"
*items, last = recs
assert last["record"] == "summary" and last["command"] == cmd, "last is not the summary: %r" % last
assert all(r["record"] == item for r in items), "not all %s records: %r" % (item, items)
assert len(items) >= least, "%d %s records, want at least %d" % (len(items), item, least)
assert isinstance(last["elapsed_s"], (int, float)), "no elapsed_s"
if "failed" in last and cmd != "relabel":
	fails = sum(1 for r in items if r.get("result") == "fail")
	assert last["failed"] == fails, "summary says %d failed, the records %d" % (last["failed"], fails)
' "$@" || fail "$1: --format json output does not parse as documented"
}

# hash, sign, verify over files: one with a name that is not UTF-8, one missing.
mkdir tree
echo one >tree/one
echo two >"tree/$(printf 'caf\351')"
"$IMS" hash -r --format json tree missing >hash.json 2>hash.err
check_json hash file 3 <hash.json
python3 -c '
import json, sys
recs = [json.loads(l) for l in open("hash.json", encoding="utf-8")]
s = recs[-1]
assert s["files"] == 2 and s["failed"] == 1 and s["bytes"] == 8, s
assert any(r.get("path") == "tree/caf\u00e9" and r["ima"].startswith("0404") for r in recs), "the Latin-1 name"
assert any(r.get("path") == "missing" and r["result"] == "fail" and r["error"] for r in recs), "the missing file"
' || fail "hash --format json: wrong records: $(cat hash.json)"
"$IMS" sign -r --format json --key key.pem --cert "$KEYS/ec-p256.crt" tree >sign.json 2>sign.err ||
	fail "sign --format json: $(cat sign.err)"
check_json sign file 2 <sign.json
grep -q '"evm":"05' sign.json || fail "sign --format json: no evm value"
echo changed >>tree/one
"$IMS" verify -r --format json --trust "$KEYS/ec-p256.crt" tree >verify.json 2>verify.err
check_json verify file 2 <verify.json
grep -q '"result":"fail","reason":"security.ima: ' verify.json || fail "verify --format json: no reason for the changed file"

# install into a root, verify --root, relabel and verify --rpmdb of an rpm root, recover.
pkg=$(build_pkg "$top_srcdir/tests/rpm/imstest.rpmspec" 1.0)
new_root "$T/inst"
"$IMS" install --root "$T/inst" --allow-unsigned --format json "$pkg" missing.rpm >install.json 2>install.err
check_json install package 2 <install.json
python3 -c '
import json
recs = [json.loads(l) for l in open("install.json")]
ok, bad, s = recs[0], recs[1], recs[-1]
assert ok["result"] == "ok" and bad["result"] == "fail" and bad["error"], recs
assert s["packages"] == 2 and s["failed"] == 1 and s["files"] > 0 and s["bytes"] > 0, s
' || fail "install --format json: wrong records: $(cat install.json)"
# Every package refused before the lock: still a record each and the summary.
new_root "$T/refused"
"$IMS" install --root "$T/refused" --allow-unsigned --format json missing.rpm /dev/null \
	>refused.json 2>refused.err && fail "install of no valid package succeeded"
check_json install package 2 <refused.json
python3 -c '
import json
recs = [json.loads(l) for l in open("refused.json")]
assert [r["result"] for r in recs[:-1]] == ["fail", "fail"] and all(r["error"] for r in recs[:-1]), recs
assert recs[-1]["packages"] == 2 and recs[-1]["failed"] == 2, recs[-1]
' || fail "install --format json, all refused: $(cat refused.json)"
"$IMS" verify --root "$T/inst" --format json >vroot.json 2>vroot.err || fail "verify --root: $(cat vroot.err)"
check_json verify file 5 <vroot.json
# The text form ends with the same counts and the time on stderr.
"$IMS" verify --root "$T/inst" >vroot.txt 2>vroot.err || fail "verify --root: $(cat vroot.err)"
files=$(python3 -c 'import json; print([json.loads(l) for l in open("vroot.json")][-1]["files"])')
grep -Eqx "imastream verify: $T/inst: $files files, 0 failed, [0-9.]+ s" vroot.err ||
	fail "verify --root: no summary line: $(cat vroot.err)"
"$IMS" recover --root "$T/inst" --format json >recover.json 2>recover.err || fail "recover: $(cat recover.err)"
check_json recover none 0 <recover.json

new_root "$T/rpm"
# At rpm's own %_dbpath below the root, where relabel reads it; no plugin.
rpm --root "$T/rpm" -i --nodeps --noscripts --noplugins "$pkg" 2>"$T/rpm.err" || fail "rpm -i: $(cat "$T/rpm.err")"
"$IMS" relabel --root "$T/rpm" --format json >relabel.json 2>relabel.err || fail "relabel: $(cat relabel.err)"
check_json relabel file 5 <relabel.json
grep -q '"status":"labelled"' relabel.json || fail "relabel --format json: nothing labelled"
"$IMS" verify --root "$T/rpm" --rpmdb --format json --labels none >rpmdb.json 2>rpmdb.err ||
	fail "verify --rpmdb: $(cat rpmdb.err)"
check_json verify file 5 <rpmdb.json

# sign-package: a record per package (a copy, and one that is no rpm), then the summary.
mkdir spk
cp "$pkg" spk/
echo "not an rpm" >spk/bogus.rpm
"$IMS" sign-package --format json --key key.pem --cert "$KEYS/ec-p256.crt" spk/*.rpm \
	>spk.json 2>spk.err && fail "sign-package signed a file that is no rpm"
check_json sign-package package 2 <spk.json
grep -q '"result":"ok","files":[1-9][0-9]*,"signed":[1-9]' spk.json || fail "sign-package --format json: $(cat spk.json)"
grep -q '"path":"spk/bogus.rpm","result":"fail","error":"' spk.json || fail "sign-package --format json: no error: $(cat spk.json)"

# keys id: one key record with the key id the text form prints, then the summary.
for c in ec-p256 rsa2048-noskid; do
	"$IMS" keys id --cert "$KEYS/$c.crt" --format json >id.json 2>id.err || fail "keys id $c: $(cat id.err)"
	check_json "keys id" key 1 <id.json
	want=$("$IMS" keys id --cert "$KEYS/$c.crt" 2>/dev/null)
	skid=true
	[ "$c" = ec-p256 ] || skid=false
	python3 -c '
import json, sys
key = json.loads(open("id.json").readline())
assert key["keyid"] == sys.argv[1] and key["cert"] == sys.argv[2] and key["key"] is None, key
assert key["result"] == "ok" and key["subject_key_identifier"] == (sys.argv[3] == "true"), key
' "$want" "$KEYS/$c.crt" "$skid" || fail "keys id $c --format json: $(cat id.json)"
done
"$IMS" keys id --key key.pem --cert "$KEYS/ec-p256.crt" --format json >id.json 2>id.err || fail "keys id --key: $(cat id.err)"
check_json "keys id" key 1 <id.json
grep -F '"key":"key.pem","cert":"'"$KEYS"'/ec-p256.crt","result":"ok","keyid":"205aa15d"}' id.json >/dev/null ||
	fail "keys id --key --format json: $(cat id.json)"
# A failure is a record too, and the summary counts it; the exit status stays 1.
"$IMS" keys id --cert nosuch.crt --format json >id.json 2>id.err && fail "keys id of a missing file succeeded"
check_json "keys id" key 1 <id.json
grep -F '{"record":"key","key":null,"cert":"nosuch.crt","result":"fail"}' id.json >/dev/null ||
	fail "keys id of a missing file: $(cat id.json)"
# keys list of a ring that is not there: the summary alone, failed.
"$IMS" keys list "_imastream_json_no_such_ring_$$" --format json >list.json 2>list.err &&
	fail "keys list of a missing ring succeeded"
python3 -c '
import json, sys
recs = [json.loads(l) for l in open("list.json")]
assert len(recs) == 1 and recs[0]["record"] == "summary" and recs[0]["command"] == "keys list", recs
assert recs[0]["failed"] == 1 and recs[0]["keys"] == 0 and recs[0]["keyring"] == sys.argv[1], recs
' "_imastream_json_no_such_ring_$$" || fail "keys list of a missing ring: $(cat list.json)"

# --format takes text or json, and says so.
"$IMS" install --root "$T/inst" --format yaml "$pkg" 2>err && fail "install --format yaml accepted"
grep -qx "imastream install: --format takes 'text' or 'json', not 'yaml' (see imastream install --help)" err ||
	fail "install --format yaml: $(cat err)"
echo "ok: hash, sign, verify (files, --root, --rpmdb), install, relabel, recover, sign-package and keys id and list write JSON Lines with a summary"
