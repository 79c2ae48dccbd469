#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The per-boot record: rpm and imastream install keep replaced files' digests, policy keylime allows them this boot only; --base.
set -euo pipefail
. "$top_srcdir/tests/integration/install-lib.sh"
. "$top_srcdir/tests/integration/rpm-lib.sh"
install_preconditions
setup_scratch
IMASTREAM=$top_builddir/imastream
[ -x "$IMASTREAM" ] || { echo "ERROR: $IMASTREAM not built"; exit 99; }
command -v jq >/dev/null || skip "jq not installed"
command -v getfattr >/dev/null || skip "getfattr not installed"
keys=$top_srcdir/tests/keys
# Two boots, as the kernel names them; the variable stands for the running kernel's id.
boot1=0a1b2c3d-0000-4000-8000-000000000001
boot2=0a1b2c3d-0000-4000-8000-000000000002
export IMASTREAM_BOOT_ID=$boot1

cat >"$T/imsboot.spec" <<'SPEC'
Name: imsboot
Version: %{pkgversion}
Release: 1
Summary: imastream boot record test package
License: MIT
BuildArch: noarch
%description
Owns /opt/bp.
%install
mkdir -p %{buildroot}/opt/bp
echo "program %{pkgversion}" > %{buildroot}/opt/bp/prog
echo same > %{buildroot}/opt/bp/data
ln -s prog %{buildroot}/opt/bp/link
touch %{buildroot}/opt/bp/ghost
%files
/opt/bp
%ghost /opt/bp/ghost
SPEC
pkg1=$(build_pkg "$T/imsboot.spec" 1.0)
pkg2=$(build_pkg "$T/imsboot.spec" 2.0)
# brpm ROOT ARGS...: stock rpm with the plugin (hash mode) at rpm's own %_dbpath, as the
# policy reads it.
brpm() {
	r=$1
	shift
	rpm --root "$r" --nodeps --define "__plugindir $top_builddir/.libs" \
		--define "_imastream_config %{nil}" --define "__transaction_imastream $SO" "$@" \
		2>"$T/rpm.stderr"
}
root=$T/root
new_root "$root"
make_root "$root"
record=$root/var/lib/imastream/boot
zero=0000000000000000000000000000000000000000

brpm "$root" -i --noscripts "$pkg1" || { cat "$T/rpm.stderr"; fail "rpm -i failed"; }
old=$(sha256sum <"$root/opt/bp/prog" | cut -d' ' -f1)
data=$(sha256sum <"$root/opt/bp/data" | cut -d' ' -f1)
cp "$root/opt/bp/prog" "$T/old-prog"
[ ! -e "$record/$boot1" ] || fail "an install that replaced nothing wrote a boot record"

echo "== rpm -U: the record holds what the old package's header gave its files"
brpm "$root" -U --noscripts "$pkg2" || { cat "$T/rpm.stderr"; fail "rpm -U failed"; }
new=$(sha256sum <"$root/opt/bp/prog" | cut -d' ' -f1)
[ "$old" != "$new" ] || exit 99
[ "$(head -1 "$record/$boot1")" = "imastream boot record 1 $boot1" ] ||
	{ cat "$record/$boot1"; fail "the record does not start by naming its boot"; }
grep -qx "sha256:$old /opt/bp/prog" "$record/$boot1" ||
	{ cat "$record/$boot1"; fail "the record lacks the replaced program's old digest"; }
grep -qx "sha256:$data /opt/bp/data" "$record/$boot1" || fail "the record lacks the unchanged file"
[ "$(wc -l <"$record/$boot1")" = 3 ] ||
	{ cat "$record/$boot1"; fail "the record lists more than the regular files (no symlink, no %ghost)"; }
# A test transaction replaces nothing.
brpm "$root" -U --test --noscripts --replacepkgs "$pkg2" || { cat "$T/rpm.stderr"; fail "rpm -U --test failed"; }
[ "$(wc -l <"$record/$boot1")" = 3 ] || fail "rpm --test wrote to the record"

echo "== this boot's policy allows the old digest at its path; a log spanning the upgrade passes"
"$IMASTREAM" policy keylime --root "$root" --output "$T/p1.json" 2>"$T/err" ||
	{ cat "$T/err"; fail "policy keylime failed"; }
grep -q '2 files, 2 paths, sha256; 0 hashed from disk, 0 left out; 2 replaced this boot' "$T/err" ||
	{ cat "$T/err"; fail "the summary does not count this boot's replaced files"; }
[ "$(jq -c '.digests["/opt/bp/prog"] | sort' "$T/p1.json")" = "$(jq -nc --arg a "$old" --arg b "$new" '[$a, $b] | sort')" ] ||
	{ jq .digests "$T/p1.json"; fail "/opt/bp/prog does not have its old and new digests"; }
[ "$(jq -c '.digests["/opt/bp/data"]' "$T/p1.json")" = "[\"$data\"]" ] || fail "/opt/bp/data is listed twice"
cat >"$T/span.log" <<LOG
10 $zero ima-ng sha256:$old /opt/bp/prog
10 $zero ima-ng sha256:$data /opt/bp/data
10 $zero ima-ng sha256:$new /opt/bp/prog
LOG
"$IMASTREAM" attest check --policy "$T/p1.json" --log "$T/span.log" >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; fail "a log spanning the upgrade failed this boot's policy"; }

echo "== after a reboot the old digest is gone: the old program copied back is caught"
IMASTREAM_BOOT_ID=$boot2 "$IMASTREAM" policy keylime --root "$root" --output "$T/p2.json" 2>"$T/err" ||
	{ cat "$T/err"; fail "policy keylime in the next boot failed"; }
[ "$(jq -c '.digests["/opt/bp/prog"]' "$T/p2.json")" = "[\"$new\"]" ] ||
	{ jq .digests "$T/p2.json"; fail "the next boot's policy still allows the old program"; }
printf '10 %s ima-ng sha256:%s /opt/bp/prog\n' $zero "$old" >"$T/rollback.log"
rc=0
"$IMASTREAM" attest check --policy "$T/p2.json" --log "$T/rollback.log" >"$T/out" 2>/dev/null || rc=$?
[ $rc = 1 ] && grep -qx "/opt/bp/prog: FAIL: digest not in the policy (sha256:$old)" "$T/out" ||
	{ cat "$T/out"; fail "the old program after a reboot was not caught"; }

echo "== keys: a key that signs no packaged file leaves a rollback caught; the package's key does not"
# The old program signed by the package's key (rsa2048); a local script by a local key (ec-p256).
cp "$keys/rsa2048.pem" "$T/pkg-key.pem"
cp "$keys/ec-p256.pem" "$T/local-key.pem"
chmod 600 "$T/pkg-key.pem" "$T/local-key.pem"
cp "$T/old-prog" "$T/signed-old"
echo 'local script' >"$T/local"
"$IMASTREAM" sign -k "$T/pkg-key.pem" -c "$keys/rsa2048.crt" --evm none "$T/signed-old" >/dev/null ||
	fail "imastream sign failed"
"$IMASTREAM" sign -k "$T/local-key.pem" -c "$keys/ec-p256.crt" --evm none "$T/local" >/dev/null ||
	fail "imastream sign failed"
sig_old=$(getfattr --absolute-names -n security.ima -e hex "$T/signed-old" | sed -n 's/^security.ima=0x//p')
sig_local=$(getfattr --absolute-names -n security.ima -e hex "$T/local" | sed -n 's/^security.ima=0x//p')
local_digest=$(sha256sum <"$T/local" | cut -d' ' -f1)
cat >"$T/sig.log" <<LOG
10 $zero ima-sig sha256:$old /opt/bp/prog $sig_old
10 $zero ima-sig sha256:$local_digest /usr/local/bin/local $sig_local
LOG
IMASTREAM_BOOT_ID=$boot2 "$IMASTREAM" policy keylime --root "$root" --trust "$keys/ec-p256.crt" \
	--output "$T/local-key.json" 2>/dev/null || fail "policy keylime --trust failed"
rc=0
"$IMASTREAM" attest check --policy "$T/local-key.json" --log "$T/sig.log" >"$T/out" 2>/dev/null || rc=$?
[ $rc = 1 ] && [ "$(cat "$T/out")" = "/opt/bp/prog: FAIL: signature not verified by any verification key, and digest not in the policy (sha256:$old)" ] ||
	{ cat "$T/out"; fail "with a local key only, the local file passes and the signed old program fails"; }
# What imastream-policy(1) warns of: keylime takes a verified signature before the digests.
IMASTREAM_BOOT_ID=$boot2 "$IMASTREAM" policy keylime --root "$root" --trust "$keys/rsa2048.crt" \
	--output "$T/pkg-key.json" 2>/dev/null || fail "policy keylime --trust failed"
"$IMASTREAM" attest check --policy "$T/pkg-key.json" --log "$T/rollback.log" >/dev/null 2>&1 &&
	fail "an unsigned old program passed a policy with keys"
printf '10 %s ima-sig sha256:%s /opt/bp/prog %s\n' $zero "$old" "$sig_old" >"$T/signed-rollback.log"
"$IMASTREAM" attest check --policy "$T/pkg-key.json" --log "$T/signed-rollback.log" >/dev/null 2>&1 ||
	fail "keylime's rule changed? a signature by a policy key no longer passes a listed path"

echo "== the next boot's first transaction drops the last boot's record and starts its own"
IMASTREAM_BOOT_ID=$boot2 brpm "$root" -e --noscripts imsboot || { cat "$T/rpm.stderr"; fail "rpm -e failed"; }
[ ! -e "$record/$boot1" ] || fail "the last boot's record was kept"
grep -qx "sha256:$new /opt/bp/prog" "$record/$boot2" ||
	{ cat "$record/$boot2"; fail "rpm -e did not record the erased program"; }
[ -z "$(find "$record" -name '.new-*')" ] || fail "a temp file was left in $record"

echo "== a record cut short by a kill: its last line skipped with a warning, dropped by the next writer"
IMASTREAM_BOOT_ID=$boot2 brpm "$root" -i --noscripts "$pkg1" || { cat "$T/rpm.stderr"; fail "rpm -i failed"; }
cut=$(printf 'cut' | sha256sum | cut -d' ' -f1)
printf 'sha256:%s /opt/bp/pr' "$cut" >>"$record/$boot2"
IMASTREAM_BOOT_ID=$boot2 "$IMASTREAM" policy keylime --root "$root" --output "$T/cut.json" 2>"$T/err" ||
	{ cat "$T/err"; fail "a cut last line made the policy fail"; }
grep -qx "imastream policy: var/lib/imastream/boot/$boot2:4: the last line is cut short (a transaction killed while writing it): skipped" "$T/err" ||
	{ cat "$T/err"; fail "the cut line was not reported in one line"; }
! grep -q "$cut" "$T/cut.json" || fail "the cut line's digest was used"
IMASTREAM_BOOT_ID=$boot2 brpm "$root" -U --noscripts "$pkg2" || { cat "$T/rpm.stderr"; fail "rpm -U failed"; }
grep -q 'cut short' "$T/rpm.stderr" || { cat "$T/rpm.stderr"; fail "the writer did not say it dropped the cut line"; }
IMASTREAM_BOOT_ID=$boot2 "$IMASTREAM" policy keylime --root "$root" --output "$T/after.json" 2>"$T/err" ||
	{ cat "$T/err"; fail "the record after the cut line is unreadable"; }
! grep -q 'cut short' "$T/err" || fail "the cut line is still there"
[ "$(jq -c '.digests["/opt/bp/prog"] | sort' "$T/after.json")" = "$(jq -nc --arg a "$old" --arg b "$new" '[$a, $b] | sort')" ] ||
	{ jq .digests "$T/after.json"; fail "the appends after the cut line were lost"; }

echo "== bad records: another boot's, a broken line, a bad boot id: one line, no policy written"
refused() { # WHAT EXPECTED-LINE BOOT-ID [OPTION...]
	what=$1 want=$2 id=$3
	shift 3
	echo '{"old": true}' >"$T/keep.json"
	rc=0
	IMASTREAM_BOOT_ID=$id "$IMASTREAM" policy keylime --root "$root" "$@" --output "$T/keep.json" \
		2>"$T/err" || rc=$?
	[ $rc = 1 ] || { cat "$T/err"; fail "$what: exit $rc, not 1"; }
	[ "$(cat "$T/err")" = "$want" ] || { cat "$T/err"; fail "$what: not the one line expected: $want"; }
	[ "$(cat "$T/keep.json")" = '{"old": true}' ] || fail "$what: the output was written"
}
cp "$record/$boot2" "$T/good-record"
boot3=0a1b2c3d-0000-4000-8000-000000000003
cp "$record/$boot2" "$record/$boot3"
refused "another boot's record" \
	"imastream policy: var/lib/imastream/boot/$boot3: a record of boot $boot2, not of this boot: refused" \
	$boot3
rm "$record/$boot3"
sed -i '2s/^sha256:/sha256:zz/' "$record/$boot2"
refused "a broken line" "imastream policy: var/lib/imastream/boot/$boot2:2: not 'ALGO:HEX PATH': refused" \
	$boot2
printf 'imastream boot rec' >"$record/$boot2"
refused "a cut first line" \
	"imastream policy: var/lib/imastream/boot/$boot2:1: not a boot record (its first line is not 'imastream boot record 1 BOOTID')" \
	$boot2
cp "$T/good-record" "$record/$boot2"
refused "a bad boot id" "imastream policy: IMASTREAM_BOOT_ID: 'nonsense' is not a boot id (8-4-4-4-12 hex digits)" \
	nonsense
# rpm refuses the transaction too, before a file is touched.
before=$(sha256sum <"$root/opt/bp/prog")
IMASTREAM_BOOT_ID=nonsense brpm "$root" -U --noscripts --replacepkgs "$pkg2" &&
	fail "rpm ran with a bad boot id"
grep -q "IMASTREAM_BOOT_ID: 'nonsense' is not a boot id" "$T/rpm.stderr" || { cat "$T/rpm.stderr"; fail "rpm did not say why"; }
[ "$before" = "$(sha256sum <"$root/opt/bp/prog")" ] || fail "the refused transaction touched a file"

echo "== --base: another policy merged as keylime's generator merges it"
export IMASTREAM_BOOT_ID=$boot2
other=$(printf 'other' | sha256sum | cut -d' ' -f1)
keyring=$(printf 'k' | sha256sum | cut -d' ' -f1)
"$IMASTREAM" policy keylime --root "$root" --trust "$keys/ec-p256.crt" --output "$T/keyed.json" 2>/dev/null ||
	fail "policy keylime --trust failed"
jq --arg o "$other" --arg n "$new" --arg k "$keyring" \
	'.digests["/usr/bin/other"] = [$o] | .digests["/opt/bp/prog"] = [$n] | .excludes = ["/tmp/.*"]
	 | .keyrings[".ima"] = [$k] | .ima.ignored_keyrings = ["_evm"] | .ima.log_hash_alg = "sha256"' \
	"$T/keyed.json" >"$T/base.json"
"$IMASTREAM" policy keylime --root "$root" --base "$T/base.json" --output "$T/merged.json" 2>"$T/err" ||
	{ cat "$T/err"; fail "policy keylime --base failed"; }
jq -e --arg o "$other" --arg k "$keyring" '.digests["/usr/bin/other"] == [$o] and .excludes == ["/tmp/.*"]
	and .keyrings[".ima"] == [$k] and .ima.ignored_keyrings == ["_evm"] and .ima.log_hash_alg == "sha256"
	and (."verification-keys" | fromjson | .pubkeys | length) == 1' "$T/merged.json" >/dev/null ||
	{ cat "$T/merged.json"; fail "the base's digests, excludes, keyrings and keys were not merged"; }
[ "$(jq -c '.digests["/opt/bp/prog"] | sort' "$T/merged.json")" = "$(jq -nc --arg a "$old" --arg b "$new" '[$a, $b] | sort')" ] ||
	{ jq -c '.digests["/opt/bp/prog"]' "$T/merged.json"; fail "a digest both list is not listed once"; }
if command -v python3 >/dev/null && python3 -c 'import jsonschema' 2>/dev/null; then
	python3 "$top_srcdir/tests/integration/keylime-policy-check.py" \
		"$top_srcdir/tests/integration/keylime-policy.schema.json" "$T/merged.json" >/dev/null ||
		fail "the merged policy breaks keylime's schema"
fi
# Merging twice adds nothing.
"$IMASTREAM" policy keylime --root "$root" --base "$T/merged.json" --output "$T/merged2.json" 2>/dev/null ||
	fail "policy keylime --base of a merged policy failed"
cmp -s "$T/merged.json" "$T/merged2.json" || { diff "$T/merged.json" "$T/merged2.json"; fail "a second merge changed the policy"; }

echo "== --base keylime would refuse: one line, no policy written"
jq 'del(.meta.generator)' "$T/base.json" >"$T/nogen.json"
refused "a base without meta.generator" \
	"imastream policy: $T/nogen.json: meta.generator is missing or not an integer from 0 to 3, which keylime requires" \
	$boot2 --base "$T/nogen.json"
jq '.digests["/usr/bin/other"] = ["ABCDEF0123456789ABCDEF0123456789ABCDEF01"]' "$T/base.json" >"$T/upper.json"
refused "a base with an uppercase digest" \
	"imastream policy: $T/upper.json: digests of /usr/bin/other: \"ABCDEF0123456789ABCDEF0123456789ABCDEF01\" is not 40 to 128 lowercase hex digits" \
	$boot2 --base "$T/upper.json"
jq --arg s "$zero" '.digests["/usr/bin/other"] = [$s]' "$T/base.json" >"$T/sha1.json"
refused "a base in sha1 for a sha256 policy" \
	"imastream policy: $T/sha1.json: /usr/bin/other has a digest of 40 hex digits, not sha256's 64: give -a with the base policy's algorithm" \
	$boot2 --base "$T/sha1.json"
refused "a base whose template hash differs from -L" \
	"imastream policy: $T/base.json: ima.log_hash_alg is sha256, not the sha1 given" \
	$boot2 --base "$T/base.json" --log-hash-algo sha1
echo '{"meta": {"version": 1, "generator": 3}' >"$T/broken.json"
refused "a base that is not JSON" \
	"imastream policy: $T/broken.json: not JSON (unexpected end of data, at byte 40)" $boot2 --base "$T/broken.json"

echo "== imastream install: an upgrade records what the old version's record gave its files"
iroot=$T/iroot
make_root "$iroot"
"$IMASTREAM" install --root "$iroot" --allow-unsigned --quiet "$pkg1" || fail "imastream install 1.0 failed"
[ ! -e "$iroot/var/lib/imastream/boot/$boot2" ] || fail "a first install wrote a boot record"
"$IMASTREAM" install --root "$iroot" --allow-unsigned --quiet "$pkg2" || fail "imastream install 2.0 failed"
grep -qx "sha256:$old /opt/bp/prog" "$iroot/var/lib/imastream/boot/$boot2" ||
	{ cat "$iroot/var/lib/imastream/boot/$boot2"; fail "the install's record lacks the old program"; }
"$IMASTREAM" policy keylime --root "$iroot" --record --output "$T/irec.json" 2>"$T/err" ||
	{ cat "$T/err"; fail "policy keylime --record failed"; }
[ "$(jq -c '.digests["/opt/bp/prog"] | sort' "$T/irec.json")" = "$(jq -nc --arg a "$old" --arg b "$new" '[$a, $b] | sort')" ] ||
	{ jq .digests "$T/irec.json"; fail "the record's policy lacks the old program this boot"; }
IMASTREAM_BOOT_ID=$boot1 "$IMASTREAM" policy keylime --root "$iroot" --record --output "$T/irec1.json" 2>/dev/null ||
	fail "policy keylime --record in another boot failed"
[ "$(jq -c '.digests["/opt/bp/prog"]' "$T/irec1.json")" = "[\"$new\"]" ] || fail "another boot's policy allows the old program"
echo PASS
