#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imastream policy keylime from a real rpm database and install record, and attest check against ima-ng and ima-sig logs.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
install_preconditions
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
command -v jq >/dev/null || skip "jq not installed"
command -v getfattr >/dev/null || skip "getfattr not installed"

work=$(mktemp -d /tmp/imastream-attest.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
keys=$top_srcdir/tests/keys
cp "$keys/rsa2048.pem" "$work/key.pem"
chmod 600 "$work/key.pem"

cat >"$work/imsatt.spec" <<'SPEC'
Name: imsatt
Version: %{ver}
Release: 1
Summary: imastream attest test package
License: MIT
BuildArch: noarch
%description
Owns /opt/att.
%install
mkdir -p %{buildroot}/opt/att
echo alpha %{?alpha2} > %{buildroot}/opt/att/a
echo beta > %{buildroot}/opt/att/b
ln -s a %{buildroot}/opt/att/link
touch %{buildroot}/opt/att/ghost
%files
/opt/att
%ghost /opt/att/ghost
SPEC
# Version 2.0 changes /opt/att/a.
for ver in 1.0 2.0; do
	change=()
	[ $ver = 1.0 ] || change=(--define 'alpha2 two')
	rpmbuild -bb --quiet --define "_topdir $work/top" --define '_build_id_links none' \
		--define "ver $ver" "${change[@]}" "$work/imsatt.spec" >"$work/rpmbuild.log" 2>&1 || { cat "$work/rpmbuild.log" >&2; exit 99; }
done
pkg=$work/top/RPMS/noarch/imsatt-1.0-1.noarch.rpm
pkg2=$work/top/RPMS/noarch/imsatt-2.0-1.noarch.rpm
# A package without files.
cat >"$work/imsnone.spec" <<'SPEC'
Name: imsnone
Version: 1.0
Release: 1
Summary: imastream attest test package without files
License: MIT
BuildArch: noarch
%description
Installs nothing.
%files
SPEC
rpmbuild -bb --quiet --define "_topdir $work/top" --define '_build_id_links none' \
	"$work/imsnone.spec" >"$work/rpmbuild.log" 2>&1 || { cat "$work/rpmbuild.log" >&2; exit 99; }
pkgnone=$work/top/RPMS/noarch/imsnone-1.0-1.noarch.rpm

# rpmroot: installed by stock rpm (the policy reads its database); imsroot: by imastream
# install with IMA signatures (the policy reads its record).
rpmroot=$work/rpmroot
imsroot=$work/imsroot
make_root "$rpmroot"
make_root "$imsroot"
rpm --root "$rpmroot" -i --nodeps --noscripts "$pkg" 2>"$work/rpm.err" ||
	{ cat "$work/rpm.err" >&2; fail "rpm -i failed"; }
"$IMASTREAM" install --root "$imsroot" --allow-unsigned --quiet --mode sign \
	-k "$work/key.pem" -c "$keys/rsa2048.crt" "$pkg" || fail "imastream install failed"
sha_a=$(sha256sum <"$rpmroot/opt/att/a" | cut -d' ' -f1)
sha_b=$(sha256sum <"$rpmroot/opt/att/b" | cut -d' ' -f1)
zero=0000000000000000000000000000000000000000

echo "== the policy from rpm's database has keylime's shape and the packaged digests"
"$IMASTREAM" policy keylime --root "$rpmroot" --output "$work/rpm.json" 2>"$work/err" ||
	{ cat "$work/err"; fail "policy keylime --rpmdb failed"; }
# An --output that is a device or a pipe is written in place, never replaced by a file.
mknod "$work/null" c 1 3 && mkfifo "$work/fifo" || exit 99
# The reader gives up in the end, so that a regression fails instead of hanging.
timeout 300 cat "$work/fifo" >"$work/fifo.out" &
reader=$!
for out in null fifo; do
	"$IMASTREAM" policy keylime --root "$rpmroot" --output "$work/$out" 2>"$work/err" ||
		{ cat "$work/err"; fail "policy keylime --output $out failed"; }
done
wait $reader || fail "nothing was written into the pipe"
[ -c "$work/null" ] && [ -p "$work/fifo" ] || fail "--output replaced a device or a pipe with a file"
cmp -s "$work/fifo.out" "$work/rpm.json" || fail "--output to a pipe: not the policy"
[ -z "$(find "$work" -maxdepth 1 -name '*.imastream-tmp-*')" ] || fail "--output to a device left a temp file"
grep -q '1 package, 2 files' "$work/err" || { cat "$work/err"; fail "the summary does not count 1 package, 2 files"; }
jq -e '.meta.version == 1 and (.digests | type) == "object" and (.excludes | type) == "array"
	and (.keyrings | type) == "object" and .ima.log_hash_alg == "sha1"
	and (.ima.ignored_keyrings | type) == "array" and (."ima-buf" | type) == "object"
	and (."verification-keys" | type) == "string" and (.release | type) == "number"' \
	"$work/rpm.json" >/dev/null || { cat "$work/rpm.json"; fail "the policy lacks a field keylime requires"; }
[ "$(jq -c '.digests["/opt/att/a"]' "$work/rpm.json")" = "[\"$sha_a\"]" ] ||
	fail "/opt/att/a does not have its packaged digest"
[ "$(jq -c '.digests["/opt/att/b"]' "$work/rpm.json")" = "[\"$sha_b\"]" ] ||
	fail "/opt/att/b does not have its packaged digest"
[ "$(jq '.digests | length' "$work/rpm.json")" = 2 ] ||
	fail "the policy lists more than the two regular files (symlinks, %ghost and directories have no digest)"
# keylime reads the policy with Python's json, which refuses what jq lets pass.
if command -v python3 >/dev/null; then
	python3 -c 'import json, sys; p = json.load(open(sys.argv[1], encoding="utf-8")); assert len(p["digests"]) == 2' \
		"$work/rpm.json" || fail "Python's json does not read the policy"
fi

echo "== the record gives the same digests, and --trust the signing key"
"$IMASTREAM" policy keylime --root "$imsroot" --record --trust "$keys/rsa2048.crt" \
	--output "$work/rec.json" 2>"$work/err" || { cat "$work/err"; fail "policy keylime --record failed"; }
[ "$(jq -c .digests "$work/rpm.json")" = "$(jq -c .digests "$work/rec.json")" ] ||
	fail "the record's digests differ from rpm's"
jq -e '."verification-keys" | fromjson | .meta.version == 1 and (.keyids | length) == 1
	and (.pubkeys | length) == 1' "$work/rec.json" >/dev/null ||
	{ jq '."verification-keys"' "$work/rec.json"; fail "verification-keys is not one keylime keyring entry"; }
# The key id is the low 32 bits of the SHA-1 of the public key, as in the signatures.
keyid=$(openssl x509 -in "$keys/rsa2048.crt" -noout -pubkey | openssl pkey -pubin -outform DER |
	openssl rsa -pubin -inform DER -RSAPublicKey_out -outform DER 2>/dev/null | sha1sum | cut -c33-40)
[ "$(jq -r '."verification-keys" | fromjson | .keyids[0]' "$work/rec.json")" = "$((16#$keyid))" ] ||
	fail "the keyring's key id is not the certificate's ($keyid)"

echo "== -a sha512 of a record in sha256: every digest in sha512, the files' own"
"$IMASTREAM" policy keylime --root "$imsroot" --record -a sha512 --output "$work/rec512.json" \
	2>"$work/err" || { cat "$work/err"; fail "policy keylime --record -a sha512 failed"; }
for f in a b; do
	want=$(sha512sum <"$imsroot/opt/att/$f" | cut -d' ' -f1)
	[ "$(jq -c ".digests[\"/opt/att/$f\"]" "$work/rec512.json")" = "[\"$want\"]" ] ||
		fail "/opt/att/$f: not its sha512 digest: $(jq -c .digests "$work/rec512.json")"
done

echo "== a log of the installed files passes; boot_aggregate is left to the quote"
cat >"$work/good.log" <<LOG
10 $zero ima-ng sha1:$zero boot_aggregate
10 $zero ima-ng sha256:$sha_a /opt/att/a
10 $zero ima-ng sha256:$sha_b /opt/att/b
LOG
"$IMASTREAM" attest check --policy "$work/rpm.json" --log "$work/good.log" >"$work/out" 2>"$work/err" ||
	{ cat "$work/out" "$work/err"; fail "a log of the installed files failed"; }
[ ! -s "$work/out" ] || fail "a passing log printed failures"
grep -q '3 entries: 2 matched, 0 excluded, 1 ignored, 0 failed' "$work/err" ||
	{ cat "$work/err"; fail "wrong summary for the good log"; }
# --format json: a record per entry, passed or not, then the same counts.
"$IMASTREAM" attest check --format json --policy "$work/rpm.json" --log "$work/good.log" >"$work/out.json" 2>"$work/err" ||
	{ cat "$work/out.json" "$work/err"; fail "attest check --format json failed"; }
if command -v python3 >/dev/null; then
	python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
entries, s = recs[:-1], recs[-1]
assert [r["result"] for r in entries] == ["ignored", "ok", "ok"], entries
assert entries[1]["name"] == "/opt/att/a" and entries[1]["algo"] == "sha256", entries[1]
assert s["record"] == "summary" and s["command"] == "attest" and (s["entries"], s["matched"], s["ignored"], s["failed"]) == (3, 2, 1, 0), s
' "$work/out.json" || fail "attest check --format json: $(cat "$work/out.json")"
fi

echo "== a changed file and an unknown file are named; an exclude lets the unknown one pass"
cat >"$work/bad.log" <<LOG
10 $zero ima-ng sha256:$sha_a /opt/att/a
10 $zero ima-ng sha256:$sha_a /opt/att/b
10 $zero ima-ng sha256:$sha_a /usr/bin/evil
LOG
rc=0
"$IMASTREAM" attest check --policy "$work/rpm.json" --log "$work/bad.log" >"$work/out" 2>"$work/err" || rc=$?
[ $rc = 1 ] || fail "a log with a changed file exited $rc"
grep -qx "/opt/att/b: FAIL: digest not in the policy (sha256:$sha_a)" "$work/out" ||
	{ cat "$work/out"; fail "the changed file is not named"; }
grep -qx "/usr/bin/evil: FAIL: not in the policy (sha256:$sha_a)" "$work/out" ||
	{ cat "$work/out"; fail "the unknown file is not named"; }
[ "$(wc -l <"$work/out")" = 2 ] || { cat "$work/out"; fail "expected exactly two failures"; }
"$IMASTREAM" policy keylime --root "$rpmroot" --exclude '/usr/bin/.*' --output "$work/excl.json" 2>/dev/null ||
	fail "policy keylime --exclude failed"
[ "$(jq -r '.excludes[0]' "$work/excl.json")" = '/usr/bin/.*' ] || fail "the exclude is not written as given"
rc=0
"$IMASTREAM" attest check --policy "$work/excl.json" --log "$work/bad.log" >"$work/out" 2>/dev/null || rc=$?
[ $rc = 1 ] && [ "$(cat "$work/out")" = "/opt/att/b: FAIL: digest not in the policy (sha256:$sha_a)" ] ||
	{ cat "$work/out"; fail "with the exclude, only the changed file should fail"; }

echo "== ima-sig: the installed signature verifies with the policy's key, a wrong digest does not"
sig=$(getfattr --absolute-names -n security.ima -e hex "$imsroot/opt/att/a" | sed -n 's/^security.ima=0x//p')
[ -n "$sig" ] || fail "imastream install wrote no security.ima"
cat >"$work/sig.log" <<LOG
10 $zero ima-sig sha256:$sha_a /elsewhere/a $sig
10 $zero ima-sig sha256:$sha_b /elsewhere/b $sig
LOG
rc=0
"$IMASTREAM" attest check --policy "$work/rec.json" --log "$work/sig.log" >"$work/out" 2>/dev/null || rc=$?
[ $rc = 1 ] && [ "$(cut -d: -f1 "$work/out")" = /elsewhere/b ] ||
	{ cat "$work/out"; fail "the signed entry should pass and the forged one fail"; }
rc=0
"$IMASTREAM" attest check --policy "$work/rpm.json" --log "$work/sig.log" >"$work/out" 2>/dev/null || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$work/out")" = 2 ] || fail "without verification keys a signature proves nothing"

echo "== another template digest: files are read and hashed, paths get the prefix"
"$IMASTREAM" policy keylime --root "$rpmroot" -a sha512 --path-prefix /sysroot \
	--output "$work/512.json" 2>"$work/err" || { cat "$work/err"; fail "policy keylime -a sha512 failed"; }
grep -q '2 hashed from disk' "$work/err" || { cat "$work/err"; fail "sha512 was not hashed from disk"; }
[ "$(jq -r '.digests["/sysroot/opt/att/a"][0]' "$work/512.json")" = "$(sha512sum <"$rpmroot/opt/att/a" | cut -d' ' -f1)" ] ||
	fail "the sha512 digest of /sysroot/opt/att/a is wrong"

echo "== an upgrade lists the new digest only, an erase drops the files"
rpm --root "$rpmroot" -U --nodeps --noscripts "$pkg2" 2>"$work/rpm.err" ||
	{ cat "$work/rpm.err" >&2; fail "rpm -U failed"; }
"$IMASTREAM" policy keylime --root "$rpmroot" --output "$work/up.json" 2>/dev/null || fail "policy after -U failed"
[ "$(jq -c '.digests["/opt/att/a"]' "$work/up.json")" = "[\"$(sha256sum <"$rpmroot/opt/att/a" | cut -d' ' -f1)\"]" ] &&
	[ "$(sha256sum <"$rpmroot/opt/att/a" | cut -d' ' -f1)" != "$sha_a" ] ||
	fail "after the upgrade /opt/att/a does not list only its new digest"
rpm --root "$rpmroot" -i --nodeps --noscripts "$pkgnone" 2>"$work/rpm.err" || { cat "$work/rpm.err" >&2; fail "rpm -i failed"; }
rpm --root "$rpmroot" -e --nodeps --noscripts imsatt 2>"$work/rpm.err" || { cat "$work/rpm.err" >&2; fail "rpm -e failed"; }
"$IMASTREAM" policy keylime --root "$rpmroot" --output "$work/erased.json" 2>/dev/null || fail "policy after -e failed"
[ "$(jq '.digests | length' "$work/erased.json")" = 0 ] || fail "the erased package's files are still listed"

echo "== a package without files has a record: --record takes it, by name too"
noneroot=$work/noneroot
make_root "$noneroot"
"$IMASTREAM" install --root "$noneroot" --allow-unsigned --quiet \
	"$pkgnone" || fail "imastream install of a fileless package failed"
for names in "" imsnone; do
	# shellcheck disable=SC2086
	"$IMASTREAM" policy keylime --root "$noneroot" --record --output "$work/none.json" $names 2>"$work/err" ||
		{ cat "$work/err"; fail "policy keylime --record $names refused a record of a fileless package"; }
	grep -q '1 package, 0 files' "$work/err" || { cat "$work/err"; fail "the fileless package is not counted"; }
done
rc=0
"$IMASTREAM" policy keylime --root "$noneroot" --record imsatt >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q 'no install record of package imsatt (.*--rpmdb)' "$work/err" ||
	{ cat "$work/err"; fail "a package the record lacks is not named ($rc)"; }
rc=0
"$IMASTREAM" policy keylime --root "$rpmroot" --record >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q 'no install record of any package.*--rpmdb' "$work/err" ||
	{ cat "$work/err"; fail "policy --record on a root rpm installed does not point to --rpmdb ($rc)"; }

echo "== verify --root of a root rpm installed points to --rpmdb"
rc=0
"$IMASTREAM" verify --root "$rpmroot" >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q "no install record.*imastream verify --root $rpmroot --rpmdb" "$work/err" ||
	{ cat "$work/err"; fail "verify --root without a record does not point to --rpmdb ($rc)"; }

echo "== an empty rpm database gives no policy"
emptyroot=$work/emptyroot
make_root "$emptyroot"
rpm --root "$emptyroot" --initdb || fail "rpm --initdb failed"
rc=0
"$IMASTREAM" policy keylime --root "$emptyroot" --output "$work/empty.json" 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q 'the rpm database lists no package' "$work/err" && [ "$(wc -l <"$work/err")" = 1 ] ||
	{ cat "$work/err"; fail "a policy of an empty database was written ($rc)"; }
[ ! -e "$work/empty.json" ] || fail "the failed run left --output behind"

echo "== --help of each subcommand prints its usage and exits 0"
for cmd in "policy keylime" "attest check"; do
	# shellcheck disable=SC2086
	"$IMASTREAM" $cmd --help >"$work/out" 2>"$work/err" || { cat "$work/err"; fail "$cmd --help failed"; }
	grep -q "^Usage: imastream $cmd " "$work/out" || { cat "$work/out"; fail "$cmd --help printed no usage"; }
done

echo "== ima-buf: ignored_keyrings covers keys alone; other buffers need the ima-buf map"
# keylime's _validate_ima_buf(): a buffer that is a key (here the DER certificate the kernel
# measures for .ima) is skipped when ima.ignored_keyrings names its keyring, else must be
# in keyrings; any other buffer (kexec-cmdline, dm_*, selinux) must be in ima-buf.
hexof() { od -An -v -tx1 | tr -d ' \n'; }
cert=$(openssl x509 -in "$keys/rsa2048.crt" -outform DER | hexof)
cert_sha=$(openssl x509 -in "$keys/rsa2048.crt" -outform DER | sha256sum | cut -d' ' -f1)
ed=$(openssl x509 -in "$keys/ed25519.crt" -outform DER | hexof)
ed_sha=$(openssl x509 -in "$keys/ed25519.crt" -outform DER | sha256sum | cut -d' ' -f1)
cmdline=$(printf 'root=/dev/vda1 ro' | hexof)
cmdline_sha=$(printf 'root=/dev/vda1 ro' | sha256sum | cut -d' ' -f1)
echo "10 $zero ima-buf sha256:$cert_sha .ima $cert" >"$work/key.log"
echo "10 $zero ima-buf sha256:$cmdline_sha kexec-cmdline $cmdline" >"$work/kexec.log"
echo "10 $zero ima-buf sha256:$ed_sha .ima $ed" >"$work/ed.log"
# bufcheck NAME LOG JQ-FILTER RC [FAIL-LINE]: attest check of LOG against rpm.json changed by
# JQ-FILTER exits RC and prints FAIL-LINE (nothing when not given).
bufcheck() {
	local rc=0
	jq "$3" "$work/rpm.json" >"$work/buf.json" || exit 99
	"$IMASTREAM" attest check --policy "$work/buf.json" --log "$work/$2" >"$work/out" 2>"$work/err" || rc=$?
	[ $rc = "$4" ] && [ "$(cat "$work/out")" = "${5:-}" ] ||
		{ cat "$work/out" "$work/err"; fail "ima-buf, $1: exit $rc, not $4 ${5:+with \"$5\"}"; }
}
bufcheck "kexec-cmdline unlisted, every keyring ignored" kexec.log '.ima.ignored_keyrings = ["*"]' 1 \
	"kexec-cmdline: FAIL: buffer not in the policy (sha256:$cmdline_sha)"
bufcheck "kexec-cmdline in ignored_keyrings" kexec.log '.ima.ignored_keyrings = ["kexec-cmdline"]' 1 \
	"kexec-cmdline: FAIL: buffer not in the policy (sha256:$cmdline_sha)"
bufcheck "kexec-cmdline listed" kexec.log ".ima.ignored_keyrings = [\"*\"] | .\"ima-buf\" = {\"kexec-cmdline\": [\"$cmdline_sha\"]}" 0
bufcheck "kexec-cmdline another digest" kexec.log ".\"ima-buf\" = {\"kexec-cmdline\": [\"$sha_a\"]}" 1 \
	"kexec-cmdline: FAIL: buffer digest not in the policy (sha256:$cmdline_sha)"
bufcheck "kexec-cmdline listed in keyrings, not ima-buf" kexec.log ".keyrings = {\"kexec-cmdline\": [\"$cmdline_sha\"]}" 1 \
	"kexec-cmdline: FAIL: buffer not in the policy (sha256:$cmdline_sha)"
bufcheck "kexec-cmdline excluded" kexec.log '.excludes = ["kexec-"]' 0
grep -q '1 entries: 0 matched, 1 excluded' "$work/err" || { cat "$work/err"; fail "ima-buf: the exclude was not applied"; }
bufcheck "key of an ignored keyring" key.log '.ima.ignored_keyrings = [".ima"]' 0
grep -q '1 entries: 0 matched, 0 excluded, 1 ignored' "$work/err" || { cat "$work/err"; fail "ima-buf: the key was not ignored"; }
bufcheck "key, every keyring ignored" key.log '.ima.ignored_keyrings = ["*"]' 0
bufcheck "key of a keyring not ignored" key.log '.ima.ignored_keyrings = [".evm"]' 1 \
	".ima: FAIL: keyring not in the policy (sha256:$cert_sha)"
bufcheck "key listed in keyrings" key.log ".keyrings = {\".ima\": [\"$cert_sha\"]}" 0
bufcheck "key listed in ima-buf, not keyrings" key.log ".\"ima-buf\" = {\".ima\": [\"$cert_sha\"]}" 1 \
	".ima: FAIL: keyring not in the policy (sha256:$cert_sha)"
bufcheck "an Ed25519 key, every keyring ignored" ed.log '.ima.ignored_keyrings = ["*"]' 1 \
	".ima: FAIL: a key neither RSA nor EC (sha256:$ed_sha)"

echo "== errors: one line each, and --output keeps the old file"
echo "10 $zero ima-ng" >>"$work/good.log"
rc=0
"$IMASTREAM" attest check --policy "$work/rpm.json" --log "$work/good.log" >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q 'good.log:4: ' "$work/err" || { cat "$work/err"; fail "a malformed line is not named by number"; }
echo '{"meta":{}}' >"$work/notpolicy.json"
rc=0
"$IMASTREAM" attest check --policy "$work/notpolicy.json" --log "$work/bad.log" 2>"$work/err" || rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] || { cat "$work/err"; fail "a policy without meta.version exited $rc"; }
# A file that is no measurement list is said once, not once a line: the policy given
# twice, the kernel's binary list, any other text (exit 2, as a file that is no policy).
for what in json binary text; do
	case $what in
	json) cp "$work/rpm.json" "$work/notlog"; want="a JSON file (a policy?), not an IMA measurement list" ;;
	binary) printf '\012\000\000\000\024\000\000\000boot_aggregate\012\000\000\000\000\000' >"$work/notlog"
		want="a binary file, not the text measurement list" ;;
	text) printf 'hello\nworld\nagain\n' >"$work/notlog"; want="not an IMA measurement list (its first line is no \"PCR TEMPLATE-HASH TEMPLATE ...\" entry)" ;;
	esac
	rc=0
	"$IMASTREAM" attest check --policy "$work/rpm.json" --log "$work/notlog" >/dev/null 2>"$work/err" || rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -qF "imastream attest: $work/notlog: $want" "$work/err" ||
		{ cat "$work/err"; fail "a $what file as --log: exit $rc, not one line saying what it is"; }
done
# An empty list fails and says why.
: >"$work/empty.log"
rc=0
"$IMASTREAM" attest check --policy "$work/rpm.json" --log "$work/empty.log" >/dev/null 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -qxF "imastream attest: $work/empty.log: empty: no measurement to check" "$work/err" ||
	{ cat "$work/err"; fail "an empty --log: exit $rc without saying why"; }
cp "$work/rpm.json" "$work/keep.json"
rc=0
"$IMASTREAM" policy keylime --root "$work/nowhere" --output "$work/keep.json" 2>"$work/err" || rc=$?
[ $rc != 0 ] || fail "a root without a database gave a policy"
cmp -s "$work/rpm.json" "$work/keep.json" || fail "a failed policy run changed --output"
[ -z "$(find "$work" -maxdepth 1 -name '*.imastream-tmp-*')" ] || fail "a temp file of --output was left"
echo "PASS"
